/* plan_daemon_test.c: rollout plans in a real staggerd with real instances
 * (stagger-example-server), started with the real CLI: the example plan in
 * examples/pravega rolls to DONE through its bookie checks (instance
 * gates), a dry run says nothing would change and then what a new release
 * (--set version=) would, that release rolls forward and back, showing
 * where each stage ended, its broken variant takes all three stages back
 * in reverse order; a webhook receiver hears every state change of a plan
 * that rolls back, in order and signed, while a webhook staggerd may not
 * reach shows in /metrics; the conditions read through the CLI's --json;
 * and a plan goes on correctly after staggerd is killed with SIGKILL in
 * the middle of each kind of step (a stage's update, a gate before a
 * stage, an approval, a gate between batches, a gate after a stage, a
 * rollback), never trying again a gate that passed and never doubling an
 * instance. */
#include "config.h"

#include <check.h>
#include <glib/gstdio.h>

#include "common/enums.h"
#include "common/json_check.h"
#include "rollout.h"
#include "webhook_receiver.h"
#include "spawn/process.h"

#define PORT_RANGE "--port-range=28000-28499"
#define P(x) API_ROLLOUT_STATUS_##x

static gchar *dir;

static void
setup (void)
{
  dir = stg_test_tmpdir ();
  /* The instances' and gates' programs: the example server of this tree,
   * found on staggerd's PATH as a command names it. */
  g_autofree gchar *server = stg_test_program ("stagger-example-server");
  g_autofree gchar *bin = g_path_get_dirname (server);
  g_autofree gchar *path = g_strdup_printf ("%s:%s", bin, g_getenv ("PATH"));
  g_setenv ("PATH", path, TRUE);
}

static void
teardown (void)
{
  stg_test_rmtree (dir);
  g_clear_pointer (&dir, g_free);
}

/* Runs the CLI against @d; returns its exit status, its output in *@out. */
static gint
cli (StgTestDaemon *d, gchar **out, ...)
{
  g_autofree gchar *stagger = stg_test_program ("stagger");
  g_autofree gchar *url = g_strdup_printf ("--url=http://127.0.0.1:%u", d->http_port);
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  va_list ap;
  gint status = -1;
  g_autoptr (GError) error = NULL;
  g_autofree gchar *err = NULL;

  g_ptr_array_add (argv, stagger);
  g_ptr_array_add (argv, url);
  va_start (ap, out);
  for (const gchar *a = va_arg (ap, const gchar *); a != NULL; a = va_arg (ap, const gchar *))
    g_ptr_array_add (argv, (gpointer) a);
  va_end (ap);
  g_ptr_array_add (argv, NULL);
  ck_assert_msg (g_spawn_sync (NULL, (gchar **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, out,
                               &err, &status, &error),
                 "stagger: %s", error ? error->message : "");
  if (!g_spawn_check_wait_status (status, NULL))
    g_printerr ("stagger %s: %s\n", (gchar *) argv->pdata[2], err ? err : "");
  return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

static ApiRolloutPlanDetails *
details (StgTestDaemon *d, const gchar *id)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (GError) error = NULL;

  ck_assert (api_stagger_scheduler_if_get_rollout_plan_details (c->client, &r, id, &error));
  ck_assert_msg (r->responseCode == API_RESPONSE_CODE_OK, "getRolloutPlanDetails: %s",
                 r->details->len ? ((ApiResponseDetail *) r->details->pdata[0])->message : "");
  return g_object_ref (r->result->getRolloutPlanDetailsResult->details);
}

static ApiRolloutStageState *
stage_of (ApiRolloutPlanDetails *det, const gchar *name)
{
  for (guint i = 0; i < det->stages->len; i++)
    if (g_str_equal (((ApiRolloutStageState *) det->stages->pdata[i])->name, name))
      return det->stages->pdata[i];
  ck_abort_msg ("no stage %s", name);
  return NULL;
}

/* Waits (@seconds at most) until stage @stage of plan @id is @status
 * (@stage NULL: the plan), with @gate_attempts attempts of its gates
 * recorded at least; returns the details then. */
static ApiRolloutPlanDetails *
wait_for (StgTestDaemon *d, const gchar *id, const gchar *stage, gint status, guint gate_attempts,
          gint seconds)
{
  for (gint64 end = g_get_monotonic_time () + seconds * G_USEC_PER_SEC;;)
    {
      g_autoptr (ApiRolloutPlanDetails) det = details (d, id);
      gint now = stage ? stage_of (det, stage)->status : det->summary->status;
      guint attempts = 0;
      for (guint i = 0; i < det->gateResults->len; i++)
        attempts += stage == NULL ||
                    g_str_equal (((ApiRolloutGateResult *) det->gateResults->pdata[i])->stage,
                                 stage);
      if (now == status && attempts >= gate_attempts)
        return g_steal_pointer (&det);
      ck_assert_msg (g_get_monotonic_time () < end,
                     "%s of plan %s is %s (%s), not %s; the plan: %s", stage ? stage : "the plan",
                     id, stg_rollout_status_name (now),
                     stage ? stage_of (det, stage)->reason : det->summary->reason,
                     stg_rollout_status_name (status), det->summary->reason);
      g_usleep (100 * 1000);
    }
}

/* wait_for(), for the wait alone. */
static void
reach (StgTestDaemon *d, const gchar *id, const gchar *stage, gint status, guint gate_attempts,
       gint seconds)
{
  g_object_unref (wait_for (d, id, stage, status, gate_attempts, seconds));
}

/* Every instance of www/prod/@job runs config version @version. */
static void
assert_version (StgTestDaemon *d, const gchar *job, gint count, gint version)
{
  stg_rollout_wait_running (d, job, count, version);
  GArray *in = stg_rollout_instances (d, job);
  ck_assert_uint_eq (in->len, (guint) count);
  for (guint i = 0; i < in->len; i++)
    ck_assert_int_eq (g_array_index (in, StgRolloutInstance, i).version, version);
  stg_rollout_instances_free (in);
}

static gint64
created (StgTestDaemon *d, ApiJobUpdateKey *key)
{
  g_autoptr (ApiJobUpdateDetails) det = stg_rollout_details (d, key);
  return det->update->summary->state->createdTimestampMs;
}

/* The examples' files, with the gates' URLs on @d's port. */
static gchar *
copy_examples (StgTestDaemon *d)
{
  g_autofree gchar *src = g_build_filename (STG_SRCDIR, "examples", "pravega", NULL);
  gchar *to = g_build_filename (dir, "pravega", NULL);
  g_autofree gchar *port = g_strdup_printf ("127.0.0.1:%u", d->http_port);
  g_autoptr (GDir) dh = g_dir_open (src, 0, NULL);
  const gchar *name;

  ck_assert_msg (dh != NULL, "no %s", src);
  g_mkdir_with_parents (to, 0700);
  while ((name = g_dir_read_name (dh)) != NULL)
    {
      g_autofree gchar *from = g_build_filename (src, name, NULL);
      g_autofree gchar *dest = g_build_filename (to, name, NULL);
      g_autofree gchar *text = NULL;
      ck_assert (g_file_get_contents (from, &text, NULL, NULL));
      g_auto (GStrv) parts = g_strsplit (text, "127.0.0.1:8081", -1);
      g_autofree gchar *moved = g_strjoinv (port, parts);
      ck_assert (g_file_set_contents (dest, moved, -1, NULL));
    }
  return to;
}

static void
create_examples (StgTestDaemon *d, const gchar *ex)
{
  static const gchar *const jobs[] = { "bookkeeper", "controller", "segmentstore" };
  for (guint i = 0; i < G_N_ELEMENTS (jobs); i++)
    {
      g_autofree gchar *key = g_strdup_printf ("local/www/prod/%s", jobs[i]);
      g_autofree gchar *file = g_strdup_printf ("%s/%s.json", ex, jobs[i]);
      g_autofree gchar *out = NULL;
      ck_assert_int_eq (cli (d, &out, "job", "create", key, file, NULL), 0);
    }
  for (guint i = 0; i < G_N_ELEMENTS (jobs); i++)
    stg_rollout_wait_running (d, jobs[i], 3, 1);
}

/* The id "stagger plan start" printed. */
static gchar *
started_id (const gchar *out)
{
  const gchar *open = strchr (out, '(');
  const gchar *close = open ? strchr (open, ')') : NULL;
  ck_assert_msg (close != NULL, "plan start said: %s", out);
  return g_strndup (open + 1, (gsize) (close - open - 1));
}

/* The instance events of stage @stage's update that mention @what. */
static gchar *
stage_update_events (StgTestDaemon *d, ApiRolloutPlanDetails *det, const gchar *stage,
                     const gchar *what)
{
  g_autoptr (ApiJobUpdateDetails) u = stg_rollout_details (d, stage_of (det, stage)->update);
  g_autoptr (GString) s = g_string_new (NULL);
  for (guint i = 0; i < u->instanceEvents->len; i++)
    {
      ApiJobInstanceUpdateEvent *e = u->instanceEvents->pdata[i];
      if (e->__isset_message && e->message && strstr (e->message, what))
        g_string_append_printf (s, "%d: %s\n", e->instanceId, e->message);
    }
  return g_strdup (s->str);
}

/* @text (`stagger ... --json` printed it, or a webhook got it) read as
 * JSON. */
static JsonNode *
json_root (const gchar *text)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;

  ck_assert_msg (stg_json_load (parser, text, -1, &error), "not JSON (%s): %s",
                 error ? error->message : "", text);
  ck_assert (JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)));
  return json_parser_steal_root (parser);
}

/* "Type=Status/Reason ..." of a JSON list of conditions. */
static gchar *
conditions_text (JsonArray *list)
{
  g_autoptr (GString) s = g_string_new (NULL);
  for (guint i = 0; list != NULL && i < json_array_get_length (list); i++)
    {
      JsonObject *c = json_array_get_object_element (list, i);
      g_string_append_printf (s, "%s%s=%s/%s", i ? " " : "",
                              json_object_get_string_member (c, "type"),
                              json_object_get_string_member (c, "status"),
                              json_object_get_string_member (c, "reason"));
    }
  return g_strdup (s->str);
}

/* The JSON stage @name of `plan status --json`. */
static JsonObject *
json_stage (JsonObject *details, const gchar *name)
{
  JsonArray *stages = json_object_get_array_member (details, "stages");
  for (guint i = 0; i < json_array_get_length (stages); i++)
    {
      JsonObject *s = json_array_get_object_element (stages, i);
      if (g_str_equal (json_object_get_string_member (s, "name"), name))
        return s;
    }
  ck_abort_msg ("no stage %s", name);
  return NULL;
}

/* ---- the example -------------------------------------------------------------------- */

START_TEST (example_plan_rolls_forward_then_back)
{
  StgTestDaemon *d = stg_test_daemon_start (dir, PORT_RANGE, NULL);
  g_autofree gchar *ex = copy_examples (d);
  g_autofree gchar *plan = g_build_filename (ex, "plan.json", NULL);
  g_autofree gchar *broken = g_build_filename (ex, "plan-broken.json", NULL);
  g_autofree gchar *out = NULL, *out2 = NULL, *status = NULL;

  create_examples (d, ex);
  /* The good plan: three stages to DONE, through every kind of gate. */
  ck_assert_int_eq (cli (d, &out, "plan", "start", plan, "--wait", NULL), 0);
  g_autofree gchar *id = started_id (out);
  ck_assert_ptr_nonnull (strstr (out, "gate 'bookkeeper quorum' passed"));
  ck_assert_ptr_nonnull (strstr (out, "gate 'segment stores healthy' passed"));
  ck_assert_ptr_nonnull (strstr (out, "plan DONE"));
  assert_version (d, "bookkeeper", 3, 2);
  assert_version (d, "controller", 3, 2);
  assert_version (d, "segmentstore", 3, 2);
  g_autoptr (ApiRolloutPlanDetails) done = details (d, id);
  ck_assert_int_eq (done->summary->status, P (DONE));
  ApiRolloutStageState *ss = stage_of (done, "segmentstore");
  g_autoptr (ApiJobUpdateDetails) ssu = stg_rollout_details (d, ss->update);
  gboolean between = FALSE;
  for (guint i = 0; i < ssu->updateEvents->len; i++)
    {
      ApiJobUpdateEvent *e = ssu->updateEvents->pdata[i];
      between |= e->__isset_message && strstr (e->message, "gate 'controller keeps serving'") &&
                 strstr (e->message, "passed");
    }
  ck_assert_msg (between, "the gate between the segment stores' batches left no event");
  ck_assert_int_eq (cli (d, &status, "plan", "status", "pravega-0.10", NULL), 0);
  ck_assert_ptr_nonnull (strstr (status, "bookkeeper:v2 controller:v2 segmentstore:v2"));
  ck_assert_ptr_nonnull (strstr (status, "variables: version=0.10"));
  /* The bookie check: before each bookie goes down and once the new one
   * is up, nothing under-replicated. */
  g_autofree gchar *bookies = stage_update_events (d, done, "bookkeeper", "gate '");
  for (gint i = 0; i < 3; i++)
    {
      g_autofree gchar *before = g_strdup_printf ("%d: before gate 'no ledger under-replicated' "
                                                  "passed",
                                                  i);
      g_autofree gchar *after = g_strdup_printf ("%d: after gate 'ledgers re-replicated' passed",
                                                 i);
      ck_assert_msg (strstr (bookies, before) && strstr (bookies, after), "bookie %d: %s", i,
                     bookies);
    }

  /* A dry run: the release the system runs changes nothing; the next one
   * would change every job, and says what. */
  g_autofree gchar *same = NULL, *next = NULL;
  ck_assert_int_eq (cli (d, &same, "plan", "diff", plan, NULL), 0);
  ck_assert_msg (strstr (same, "0 of 3 stages would change") &&
                     strstr (same, "stage bookkeeper (www/prod/bookkeeper, now v2): would change "
                                   "nothing"),
                 "diff: %s", same);
  ck_assert_int_eq (cli (d, &next, "plan", "diff", plan, "--set", "version=0.11", NULL), 0);
  ck_assert_msg (strstr (next, "with version=0.11: 3 of 3 stages would change") &&
                     strstr (next, "update:    0-2") && strstr (next, "\"RELEASE\":\"0.11\""),
                 "diff: %s", next);
  g_autofree gchar *missing = NULL;
  ck_assert_int_ne (cli (d, &missing, "plan", "diff", plan, "--set", "release=0.11", NULL), 0);

  /* The next release with --set, then back to the one before it: each
   * stage shows where it ended. */
  g_autofree gchar *out11 = NULL, *status11 = NULL, *json11 = NULL;
  ck_assert_int_eq (cli (d, &out11, "plan", "start", plan, "--set", "version=0.11", "--wait", NULL),
                    0);
  g_autofree gchar *id11 = started_id (out11);
  assert_version (d, "bookkeeper", 3, 3);
  assert_version (d, "segmentstore", 3, 3);
  ck_assert_int_eq (cli (d, &status11, "plan", "status", "pravega-0.11", NULL), 0);
  ck_assert_msg (strstr (status11, "variables: version=0.11") &&
                     strstr (status11, "bookkeeper:v3 controller:v3 segmentstore:v3") &&
                     strstr (status11, "Complete=True (Done)"),
                 "status: %s", status11);
  ck_assert_int_eq (cli (d, &json11, "--json", "plan", "status", id11, NULL), 0);
  g_autoptr (JsonNode) n11 = json_root (json11);
  JsonObject *j11 = json_node_get_object (n11);
  g_autofree gchar *c11 = conditions_text (json_object_get_array_member (j11, "conditions"));
  ck_assert_str_eq (c11, "Progressing=False/Done Complete=True/Done Failed=False/Done");
  JsonObject *bk11 = json_stage (j11, "bookkeeper");
  ck_assert_int_eq (json_object_get_int_member (bk11, "readyInstances"), 3);
  ck_assert_int_eq (json_object_get_int_member (bk11, "desiredInstances"), 3);
  ck_assert_int_eq (json_object_get_int_member (bk11, "targetVersion"), 3);
  ck_assert_str_eq (json_object_get_string_member (bk11, "reasonCode"), "Done");
  JsonObject *vars11 = json_object_get_object_member (json_object_get_object_member (j11, "plan"),
                                                      "variables");
  ck_assert_str_eq (json_object_get_string_member (vars11, "version"), "0.11");
  ck_assert_int_eq (cli (d, NULL, "plan", "rollback", id11, NULL), 0);
  reach (d, id11, NULL, P (ROLLED_BACK), 0, 90);
  assert_version (d, "bookkeeper", 3, 2);
  g_autofree gchar *back11 = NULL, *jback = NULL;
  ck_assert_int_eq (cli (d, &back11, "plan", "status", id11, NULL), 0);
  ck_assert_msg (strstr (back11, "v2 (back from v3)"), "status: %s", back11);
  ck_assert_int_eq (cli (d, &jback, "--json", "plan", "status", id11, NULL), 0);
  g_autoptr (JsonNode) nb = json_root (jback);
  JsonObject *jb = json_node_get_object (nb);
  JsonObject *bkb = json_stage (jb, "bookkeeper");
  ck_assert_int_eq (json_object_get_int_member (bkb, "targetVersion"), 2);
  ck_assert_int_eq (json_object_get_int_member (bkb, "desiredVersion"), 3);
  g_autofree gchar *cb = conditions_text (json_object_get_array_member (bkb, "conditions"));
  ck_assert_str_eq (cb, "Progressing=False/RolledBack Complete=False/RolledBack "
                        "Failed=False/RolledBack");
  g_autofree gchar *cp = conditions_text (json_object_get_array_member (jb, "conditions"));
  ck_assert_str_eq (cp, "Progressing=False/RolledBack Complete=False/RolledBack "
                        "Failed=False/RolledBack");

  /* Back to the first versions, then the broken plan: the third stage
   * fails and all three go back, the controller before the bookkeeper. */
  ck_assert_int_eq (cli (d, NULL, "plan", "rollback", id, NULL), 0);
  reach (d, id, NULL, P (ROLLED_BACK), 0, 90);
  assert_version (d, "bookkeeper", 3, 1);
  assert_version (d, "segmentstore", 3, 1);
  gint broke = cli (d, &out2, "plan", "start", broken, "--wait", NULL);
  g_autofree gchar *bid = started_id (out2);
  g_autoptr (ApiRolloutPlanDetails) det = details (d, bid);
  ck_assert_msg (broke == 10, "the broken plan ended with exit %d, not 10 (ROLLED_BACK):\n%s",
                 broke, out2);
  ck_assert_int_eq (det->summary->status, P (ROLLED_BACK));
  ck_assert_msg (strstr (det->summary->reason, "stage 'segmentstore' failed") &&
                     strstr (det->summary->reason, "answered 500"),
                 "reason: %s", det->summary->reason);
  ApiRolloutStageState *bk = stage_of (det, "bookkeeper"), *ctl = stage_of (det, "controller");
  ck_assert_int_eq (bk->status, P (ROLLED_BACK));
  ck_assert_int_eq (ctl->status, P (ROLLED_BACK));
  ck_assert_int_eq (stage_of (det, "segmentstore")->status, P (ROLLED_BACK));
  ck_assert (bk->__isset_rollbackUpdate && ctl->__isset_rollbackUpdate);
  ck_assert_int_lt (created (d, ctl->rollbackUpdate), created (d, bk->rollbackUpdate));
  assert_version (d, "bookkeeper", 3, 1);
  assert_version (d, "controller", 3, 1);
  assert_version (d, "segmentstore", 3, 1);
  /* Its conditions through the CLI: the plan and the stage that failed
   * are Failed, the update that failed too. */
  g_autofree gchar *jbroken = NULL, *jupdate = NULL;
  ck_assert_int_eq (cli (d, &jbroken, "--json", "plan", "status", bid, NULL), 0);
  g_autoptr (JsonNode) nbr = json_root (jbroken);
  JsonObject *jbr = json_node_get_object (nbr);
  g_autofree gchar *cbr = conditions_text (json_object_get_array_member (jbr, "conditions"));
  ck_assert_str_eq (cbr, "Progressing=False/RolledBack Complete=False/RolledBack "
                         "Failed=True/StageFailed");
  g_autofree gchar *css = conditions_text (
      json_object_get_array_member (json_stage (jbr, "segmentstore"), "conditions"));
  ck_assert_str_eq (css, "Progressing=False/RolledBack Complete=False/RolledBack "
                         "Failed=True/UpdateFailed");
  ApiJobUpdateKey *ssk = stage_of (det, "segmentstore")->update;
  g_autofree gchar *ssid = g_strdup_printf ("--id=%s", ssk->id);
  ck_assert_int_eq (cli (d, &jupdate, "--json", "update", "info", "local/www/prod/segmentstore",
                         ssid, NULL),
                    0);
  g_autoptr (JsonNode) nu = json_root (jupdate);
  g_autofree gchar *cu = conditions_text (
      json_object_get_array_member (json_node_get_object (nu), "conditions"));
  ck_assert_str_eq (cu, "Progressing=False/RolledBack Complete=False/RolledBack "
                        "Failed=True/FailureThresholdReached");
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
}
END_TEST

/* ---- kill -9 at every kind of step ---------------------------------------------- */

/* A job file of two instances of the example server at release @release
 * (@broken: one that never gets healthy). Its health checks forgive a slow
 * answer or two: the machine runs every suite at once, and what this
 * suite tests is how a plan goes on after staggerd dies, not how fast an
 * instance answers. */
static void
write_job (const gchar *name, const gchar *release, gboolean broken)
{
  g_autofree gchar *path = g_strdup_printf ("%s/%s-%s.json", dir, name, release);
  g_autofree gchar *text = g_strdup_printf (
      "{\"cluster\": \"local\", \"role\": \"www\", \"environment\": \"prod\", \"name\": \"%s\",\n"
      " \"instances\": 2, \"resources\": {\"ports\": [\"http\"]},\n"
      " \"task\": {\"command\": \"stagger-example-server --port {{ports[http]}}%s\",\n"
      "          \"env\": {\"RELEASE\": \"%s\"}},\n"
      " \"health_check_config\": {\"health_checker\": {\"http\": {\"endpoint\": \"/health\"}},\n"
      "   \"initial_interval_secs\": 2, \"interval_secs\": 0.2, \"timeout_secs\": 5,\n"
      "   \"max_consecutive_failures\": 2},\n"
      " \"update_config\": {\"update_strategy\": {\"batch\": {\"batch_size\": 1}},\n"
      "   \"watch_secs\": 1, \"rollback_on_failure\": true}}\n",
      name, broken ? " --unhealthy" : "", release);
  ck_assert (g_file_set_contents (path, text, -1, NULL));
}

/* A shell gate that counts its attempts in DIR/NAME.count and passes once
 * DIR/NAME.ok exists. */
static gchar *
counted_gate (const gchar *name)
{
  return g_strdup_printf (
      "{\"name\": \"%s\", \"shell\": \"echo x >> %s/%s.count; test -f %s/%s.ok\","
      " \"timeout_secs\": 5, \"retries\": 1000, \"retry_interval_secs\": 1}",
      name, dir, name, dir, name);
}

static guint
attempts_of (const gchar *name)
{
  g_autofree gchar *path = g_strdup_printf ("%s/%s.count", dir, name);
  g_autofree gchar *text = NULL;
  guint n = 0;
  if (g_file_get_contents (path, &text, NULL, NULL))
    for (const gchar *c = text; *c; c++)
      n += *c == '\n';
  return n;
}

static void
let_pass (const gchar *name)
{
  g_autofree gchar *path = g_strdup_printf ("%s/%s.ok", dir, name);
  ck_assert (g_file_set_contents (path, "", 0, NULL));
}

/* How many instances have a process, each exactly one (the session
 * leaders carrying the runtime's marker for this data directory). */
static guint
one_process_each (void)
{
  g_autofree gchar *canon = g_canonicalize_filename (dir, NULL);
  g_autoptr (GPtrArray) all = stg_process_find_marked ("STAGGER_RUN_MARK");
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (guint k = 0; k < all->len; k++)
    {
      StgMarkedProcess *p = all->pdata[k];
      g_auto (GStrv) parts = g_strsplit (p->mark, ":", 4);
      if (g_strv_length (parts) != 4 || !g_str_equal (parts[3], canon))
        continue;
      g_autofree gchar *slot = g_strdup_printf ("%s:%s", parts[0], parts[1]);
      ck_assert_msg (!g_hash_table_contains (seen, slot), "instance %s has two processes", slot);
      g_hash_table_add (seen, g_steal_pointer (&slot));
    }
  return g_hash_table_size (seen);
}

static StgTestDaemon *
kill_and_restart (StgTestDaemon *d)
{
  stg_test_daemon_kill9 (d);
  stg_test_daemon_free (d);
  return stg_test_daemon_start (dir, PORT_RANGE, NULL);
}

START_TEST (kill9_at_every_kind_of_step)
{
  g_autofree gchar *before = counted_gate ("b-ready");
  g_autofree gchar *between = counted_gate ("c-between");
  g_autofree gchar *after = counted_gate ("c-after");
  g_autofree gchar *plan_path = g_build_filename (dir, "plan.json", NULL);
  g_autofree gchar *plan = g_strdup_printf (
      "{\"name\": \"k\", \"stages\": [\n"
      " {\"name\": \"a\", \"job\": \"a-2.json\"},\n"
      " {\"name\": \"b\", \"job\": \"b-2.json\", \"depends_on\": [\"a\"], \"before\": [%s]},\n"
      " {\"name\": \"c\", \"job\": \"c-2.json\", \"depends_on\": [\"b\"],\n"
      "  \"require_approval\": true, \"between_batches\": [%s], \"after\": [%s]}]}\n",
      before, between, after);
  static const gchar *const jobs[] = { "a", "b", "c" };

  for (guint i = 0; i < G_N_ELEMENTS (jobs); i++)
    {
      write_job (jobs[i], "1", FALSE);
      write_job (jobs[i], "2", FALSE);
      write_job (jobs[i], "3", i == 2);
    }
  ck_assert (g_file_set_contents (plan_path, plan, -1, NULL));
  StgTestDaemon *d = stg_test_daemon_start (dir, PORT_RANGE, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (jobs); i++)
    {
      g_autofree gchar *key = g_strdup_printf ("local/www/prod/%s", jobs[i]);
      g_autofree gchar *file = g_strdup_printf ("%s/%s-1.json", dir, jobs[i]);
      ck_assert_int_eq (cli (d, NULL, "job", "create", key, file, NULL), 0);
      stg_rollout_wait_running (d, jobs[i], 2, 1);
    }
  g_autofree gchar *out = NULL;
  ck_assert_int_eq (cli (d, &out, "plan", "start", plan_path, NULL), 0);
  g_autofree gchar *id = started_id (out);

  /* 1. In the middle of a stage's update. */
  reach (d, id, "a", P (ROLLING_FORWARD), 0, 30);
  d = kill_and_restart (d);
  /* 2. While a gate before a stage fails and is tried again. */
  reach (d, id, "b", P (WAITING_FOR_GATE), 2, 60);
  d = kill_and_restart (d);
  let_pass ("b-ready");
  /* 3. While a stage awaits its approval. */
  reach (d, id, "c", P (AWAITING_APPROVAL), 0, 60);
  guint b_attempts = attempts_of ("b-ready");
  d = kill_and_restart (d);
  reach (d, id, "c", P (AWAITING_APPROVAL), 0, 30);
  ck_assert_int_eq (cli (d, NULL, "plan", "approve", "k", "c", "-m", "go", NULL), 0);
  /* 4. While the gate between the stage's batches is tried. */
  guint seen = 0;
  for (gint64 end = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
       (seen = attempts_of ("c-between")) < 2;)
    {
      ck_assert_msg (g_get_monotonic_time () < end, "the gate between batches was not tried");
      g_usleep (100 * 1000);
    }
  d = kill_and_restart (d);
  let_pass ("c-between");
  /* 5. While the gate after the stage is tried. */
  reach (d, id, "c", P (WAITING_FOR_GATE), 0, 60);
  for (gint64 end = g_get_monotonic_time () + 30 * G_USEC_PER_SEC; attempts_of ("c-after") < 2;)
    {
      ck_assert_msg (g_get_monotonic_time () < end, "the gate after the stage was not tried");
      g_usleep (100 * 1000);
    }
  guint between_attempts = attempts_of ("c-between");
  d = kill_and_restart (d);
  let_pass ("c-after");
  g_autoptr (ApiRolloutPlanDetails) done = wait_for (d, id, NULL, P (DONE), 0, 60);
  for (guint i = 0; i < G_N_ELEMENTS (jobs); i++)
    assert_version (d, jobs[i], 2, 2);
  /* Passed gates were not tried again after the restarts. */
  ck_assert_uint_eq (attempts_of ("b-ready"), b_attempts);
  ck_assert_uint_eq (attempts_of ("c-between"), between_attempts);
  ck_assert_str_eq (stage_of (done, "c")->approvedBy, "root (unauthenticated)");

  /* 6. In the middle of a rollback: a plan to release 3 whose last stage
   * never gets healthy goes back, and staggerd dies on the way. */
  g_autofree gchar *plan3_path = g_build_filename (dir, "plan3.json", NULL);
  ck_assert (
      g_file_set_contents (plan3_path,
                           "{\"name\": \"k3\", \"stages\": [\n"
                           " {\"name\": \"a\", \"job\": \"a-3.json\"},\n"
                           " {\"name\": \"b\", \"job\": \"b-3.json\", \"depends_on\": [\"a\"]},\n"
                           " {\"name\": \"c\", \"job\": \"c-3.json\", \"depends_on\": [\"b\"]}]}\n",
                           -1, NULL));
  g_autofree gchar *out3 = NULL;
  ck_assert_int_eq (cli (d, &out3, "plan", "start", plan3_path, NULL), 0);
  g_autofree gchar *id3 = started_id (out3);
  reach (d, id3, "b", P (ROLLING_BACK), 0, 90);
  d = kill_and_restart (d);
  g_autoptr (ApiRolloutPlanDetails) back = wait_for (d, id3, NULL, P (ROLLED_BACK), 0, 90);
  ck_assert_int_eq (stage_of (back, "a")->status, P (ROLLED_BACK));
  ck_assert_int_eq (stage_of (back, "b")->status, P (ROLLED_BACK));
  for (guint i = 0; i < G_N_ELEMENTS (jobs); i++)
    assert_version (d, jobs[i], 2, 2);
  /* One process per instance, none doubled across the five deaths. */
  ck_assert_uint_eq (one_process_each (), 6);
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
}
END_TEST

/* ---- webhooks ---------------------------------------------------------------------- */

START_TEST (webhook_hears_every_change_of_a_plan_that_rolls_back)
{
  /* Its first POST is answered 500, so it is tried again. */
  g_autoptr (StgTestReceiver) receiver = stg_test_receiver_start (dir, "once");
  g_autofree gchar *conf = g_build_filename (dir, "staggerd.conf", NULL);
  g_autofree gchar *conf_text = g_strdup_printf (
      "[gates]\nallowed_hosts = 127.0.0.1\n"
      "[notify]\nurl = http://127.0.0.1:%u/hook\nsecret = s3cret\nevents = plan stage\n"
      "max_attempts = 2\nretry_secs = 1\n"
      "[notify metadata]\nurl = http://169.254.169.254/hook\nevents = plan.ROLLED_BACK\n",
      receiver->port);
  ck_assert (g_file_set_contents (conf, conf_text, -1, NULL));
  g_autofree gchar *config = g_strdup_printf ("--config=%s", conf);
  write_job ("a", "1", FALSE);
  write_job ("a", "2", FALSE);
  write_job ("b", "1", FALSE);
  write_job ("b", "2", TRUE);
  g_autofree gchar *plan_path = g_build_filename (dir, "hooked.json", NULL);
  ck_assert (g_file_set_contents (plan_path,
                                  "{\"name\": \"hooked\", \"stages\": [\n"
                                  " {\"name\": \"a\", \"job\": \"a-2.json\"},\n"
                                  " {\"name\": \"b\", \"job\": \"b-2.json\", "
                                  "\"depends_on\": [\"a\"]}]}\n",
                                  -1, NULL));
  StgTestDaemon *d = stg_test_daemon_start (dir, PORT_RANGE, config, NULL);
  static const gchar *const jobs[] = { "a", "b" };
  for (guint i = 0; i < G_N_ELEMENTS (jobs); i++)
    {
      g_autofree gchar *key = g_strdup_printf ("local/www/prod/%s", jobs[i]);
      g_autofree gchar *file = g_strdup_printf ("%s/%s-1.json", dir, jobs[i]);
      ck_assert_int_eq (cli (d, NULL, "job", "create", key, file, NULL), 0);
      stg_rollout_wait_running (d, jobs[i], 2, 1);
    }
  g_autofree gchar *out = NULL;
  ck_assert_int_eq (cli (d, &out, "plan", "start", plan_path, "--wait", NULL), 10);
  g_autofree gchar *id = started_id (out);
  g_autoptr (ApiRolloutPlanDetails) det = details (d, id);

  /* What the plan recorded: each status change, the plan's and its
   * stages', in order. */
  g_autoptr (GPtrArray) want = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < det->events->len; i++)
    {
      ApiRolloutEvent *e = det->events->pdata[i];
      gboolean change = TRUE;
      for (guint k = i; k > 0 && change; k--)
        {
          ApiRolloutEvent *p = det->events->pdata[k - 1];
          if (g_strcmp0 (p->__isset_stage ? p->stage : NULL, e->__isset_stage ? e->stage : NULL) ==
              0)
            {
              change = p->status != e->status;
              break;
            }
        }
      if (change)
        g_ptr_array_add (want, g_strdup_printf ("%s %s %s", e->__isset_stage ? "stage" : "plan",
                                                e->__isset_stage ? e->stage : "-",
                                                stg_rollout_status_name (e->status)));
    }
  ck_assert_uint_ge (want->len, 8);
  g_auto (GStrv) lines = stg_test_receiver_wait (receiver, want->len, 30);
  /* Each signed, in order, with its delivery id. */
  g_autoptr (GPtrArray) notices = stg_test_receiver_notices (lines, "s3cret");
  ck_assert_uint_eq (notices->len, want->len);
  for (guint i = 0; i < notices->len; i++)
    {
      JsonObject *n = json_node_get_object (notices->pdata[i]);
      g_autofree gchar *got = g_strdup_printf ("%s %s %s",
                                               json_object_get_string_member (n, "event"),
                                               json_object_has_member (n, "stage")
                                                   ? json_object_get_string_member (n, "stage")
                                                   : "-",
                                               json_object_get_string_member (n, "status"));
      ck_assert_str_eq (got, want->pdata[i]);
      ck_assert_str_eq (json_object_get_string_member (json_object_get_object_member (n, "plan"),
                                                       "id"),
                        id);
    }
  /* The first was answered 500 and sent again; the webhook staggerd may
   * not reach (a metadata address) failed, and /metrics says so. */
  ck_assert_int_ge ((gint) stg_test_notify_count (d, "retried"), 1);
  ck_assert_int_eq ((gint) stg_test_notify_count (d, "delivered"), (gint) want->len);
  for (gint64 end = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
       (gint) stg_test_notify_count (d, "failed") < 1;)
    {
      ck_assert_msg (g_get_monotonic_time () < end, "the refused webhook was not given up");
      g_usleep (100 * 1000);
    }
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
}
END_TEST

static Suite *
plan_daemon_suite (void)
{
  Suite *s = suite_create ("plan_daemon");
  TCase *tc = tcase_create ("plans");

  tcase_set_timeout (tc, 600);
  tcase_add_checked_fixture (tc, setup, teardown);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, example_plan_rolls_forward_then_back);
  tcase_add_test (tc, webhook_hears_every_change_of_a_plan_that_rolls_back);
  tcase_add_test (tc, kill9_at_every_kind_of_step);
  return s;
}

int
main (void)
{
  gchar *scope = stg_test_scope_begin ();
  SRunner *sr = srunner_create (plan_daemon_suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  stg_test_scope_end (scope);
  return failed == 0 ? 0 : 1;
}
