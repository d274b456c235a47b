/* browser_test.c: the web UI end to end, in Debian's headless Chromium.
 *
 * A real staggerd rolls real instances while tests/browser/watch_update.mjs
 * (playwright-core from npm, pinned by tests/browser/package-lock.json)
 * keeps an update's page open and watches it move, without a reload, to its
 * end: ROLLED_FORWARD with every instance updated and its timeline grown
 * to every instance, drawn as /ui/api/timeline gives it, or ROLLED_BACK; and
 * tests/browser/watch_plan.mjs works a rollout plan's page: approves a
 * stage, then rolls the plan back, following each stage's status live. The
 * screenshots land in tests/browser-shots/ of the build tree.
 * tests/browser/visit_pages.mjs then opens every page a user reaches
 * (jobs, the job, updates, the update, plans, the plan, hosts, sidecars)
 * and finds no console error on any. */
#include "config.h"

#include <check.h>
#include <glib/gstdio.h>
#include <string.h>

#include "common/jobkey.h"
#include "browser_env.h"
#include "daemon_fixture.h"
#include "rollout.h"

#define PORT_RANGE "--port-range=32000-32699"

static gchar *env_dir;          /* node_modules and the script, in the build tree */

/* Node, Chromium and playwright-core, once per run of the suite. */
static void
prepare_browser (void)
{
  static const gchar *const scripts[] = { "watch_update.mjs", "watch_plan.mjs", "visit_pages.mjs",
                                          NULL };

  env_dir = stg_browser_env_prepare ("browser-env", scripts);
}

typedef struct
{
  gint exit_status;
  gchar *output;                /* what the script printed */
  JsonNode *result;             /* its last line */
} Watch;

/* Starts watching the update's page; finish with watch_end(). */
static GSubprocess *
watch_start (StgTestDaemon *d, ApiJobUpdateKey *key, const gchar *expected, const gchar *shots)
{
  g_autofree gchar *url = g_strdup_printf ("http://127.0.0.1:%u/#/update/www/prod/%s/%s", d->http_port,
                                           key->job->name, key->id);
  g_autofree gchar *out = g_build_filename (STG_BUILDDIR, "tests", "browser-shots", shots, NULL);

  return stg_browser_env_start (env_dir, "watch_update.mjs", url, expected, out, NULL);
}

static Watch
watch_end (GSubprocess *p)
{
  g_autofree gchar *last = NULL;
  Watch w = { 0 };

  w.exit_status = stg_browser_env_finish (p, &last, &w.output);
  w.result = stg_test_parse_json (last);
  return w;
}

/* Pauses the update, or resumes it (@resume), over Thrift. */
static void
hold (StgTestDaemon *d, ApiJobUpdateKey *key, gboolean resume)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (GError) error = NULL;
  ApiAuroraSchedulerManagerIf *m = API_AURORA_SCHEDULER_MANAGER_IF (c->client);
  gboolean ok = resume ? api_aurora_scheduler_manager_if_resume_job_update (m, &r, key, "test", &error)
                       : api_aurora_scheduler_manager_if_pause_job_update (m, &r, key, "test", &error);

  ck_assert_msg (ok && r->responseCode == API_RESPONSE_CODE_OK, "%s update: %s",
                 resume ? "resume" : "pause", error ? error->message : "not OK");
}

static gboolean
file_exists (gpointer path)
{
  return g_file_test (path, G_FILE_TEST_EXISTS);
}

/* TRUE when the JSON array @name of @o holds a string containing @text. */
static gboolean
has_text (JsonObject *o, const gchar *name, const gchar *text)
{
  JsonArray *a = json_object_get_array_member (o, name);
  for (guint i = 0; i < json_array_get_length (a); i++)
    if (strstr (json_array_get_string_element (a, i), text) != NULL)
      return TRUE;
  return FALSE;
}

/* TRUE when @seen (a JSON array of statuses) holds @status. */
static gboolean
saw (JsonObject *o, const gchar *status)
{
  JsonArray *seen = json_object_get_array_member (o, "seen");
  for (guint i = 0; i < json_array_get_length (seen); i++)
    if (g_str_equal (json_array_get_string_element (seen, i), status))
      return TRUE;
  return FALSE;
}

/* Every page a user reaches from the navigation and from a rollout (jobs,
 * the job, updates, the update with its timeline, plans, hosts, sidecars)
 * shows its heading in Chromium with no console error, no page error and
 * no failed request; a screenshot of each is kept in
 * tests/browser-shots/pages of the build tree. */
static void
every_page_loads (StgTestDaemon *d, ApiJobUpdateKey *key)
{
  g_autofree gchar *base = g_strdup_printf ("http://127.0.0.1:%u", d->http_port);
  g_autofree gchar *shots = g_build_filename (STG_BUILDDIR, "tests", "browser-shots", "pages",
                                              NULL);
  g_autofree gchar *job = g_strdup_printf ("#/job/www/prod/%s", key->job->name);
  g_autofree gchar *update = g_strdup_printf ("#/update/www/prod/%s/%s", key->job->name, key->id);
  g_autofree gchar *last = NULL, *output = NULL;
  gint status = stg_browser_env_run (env_dir, &last, &output, "visit_pages.mjs", base, shots, "#/",
                                     job, "#/updates", update, "#/plans", "#/hosts", "#/sidecars",
                                     NULL);

  ck_assert_msg (status == 0, "a page failed: %s", output);
  g_autoptr (JsonNode) r = stg_test_parse_json (last);
  JsonArray *pages = json_object_get_array_member (json_node_get_object (r), "pages");
  ck_assert_uint_eq (json_array_get_length (pages), 7);
  JsonObject *on_job = json_array_get_object_element (pages, 1);
  ck_assert_msg (strstr (json_object_get_string_member (on_job, "heading"), "web") != NULL,
                 "the job page's heading: %s", output);
}

START_TEST (rollout_is_followed_live_to_the_end)
{
  StgTestDaemon *d = dfx_start (PORT_RANGE, NULL);
  g_autofree gchar *v1 = stg_rollout_server_data (NULL, NULL);
  stg_rollout_create_job (d, "web", 6, v1);
  stg_rollout_wait_running (d, "web", 6, 1);

  /* Batches of two with a watch time, so the page has something to follow;
   * held until the page is up, as Chromium can be slow to start. */
  g_autofree gchar *v2 = stg_rollout_server_data (NULL, ", \"env\": {\"GREETING\": \"v2\"}");
  g_autofree gchar *loaded = g_build_filename (STG_BUILDDIR, "tests", "browser-shots", "rollout", "loaded",
                                               NULL);
  g_remove (loaded);
  g_autoptr (ApiJobUpdateKey) key = stg_rollout_start_update (d, "web", 6, v2, 2, 1500);
  hold (d, key, FALSE);
  GSubprocess *p = watch_start (d, key, "ROLLED_FORWARD", "rollout");
  ck_assert_msg (stg_test_wait (file_exists, loaded, 120000), "the page did not load");
  hold (d, key, TRUE);
  ck_assert_int_eq (stg_rollout_wait_terminal (d, key), API_JOB_UPDATE_STATUS_ROLLED_FORWARD);
  Watch w = watch_end (p);
  g_autoptr (JsonNode) result = w.result;
  g_autofree gchar *output = w.output;
  JsonObject *o = json_node_get_object (result);

  ck_assert_msg (w.exit_status == 0, "the page did not follow the update: %s", output);
  ck_assert_msg (saw (o, "ROLLING_FORWARD"), "%s", output);
  ck_assert (saw (o, "ROLLED_FORWARD"));
  ck_assert (!json_object_get_boolean_member (o, "reloaded"));
  /* Every instance is drawn as updated. */
  ck_assert_str_eq (json_object_get_string_member (o, "states"), "UUUUUU");
  /* ...and the bar is full: its widths are applied, not refused by the
   * content policy as style attributes are. */
  JsonObject *bar = json_object_get_object_member (o, "bar");
  ck_assert_msg (json_object_get_double_member (bar, "fraction") > 0.99, "bar: %s", output);
  /* No request fails (the favicon included), no frame around the page on
   * load though <main> has the focus, batches of two shown as ranges. */
  ck_assert_msg (json_array_get_length (json_object_get_array_member (o, "failed_requests")) == 0,
                 "requests failed: %s", output);
  ck_assert_str_eq (json_object_get_string_member (o, "main_outline"), "focused none");
  ck_assert_msg (has_text (o, "batches", "instances 2-3") || has_text (o, "batches", "instances 4-5"),
                 "batches: %s", output);
  ck_assert_msg (!has_text (o, "batches", ", "), "batches listed one by one: %s", output);
  /* The update's own events stand apart from the instances' events. */
  ck_assert_msg (has_text (o, "update_events", "rolled forward") && !has_text (o, "update_events", "instance "),
                 "update events: %s", output);
  /* The timeline grew while the page watched, to a work for each of the
   * six instances, and the page drew the same phases and times as
   * /ui/api/timeline gives, with a row per batch. */
  JsonArray *works = json_object_get_array_member (o, "timeline_works");
  guint seen_works = json_array_get_length (works);
  ck_assert_msg (seen_works >= 2 && json_array_get_int_element (works, seen_works - 1) == 6,
                 "timeline works seen: %s", output);
  const gchar *drawn = json_object_get_string_member (o, "timeline_page");
  ck_assert_msg (strstr (drawn, "healthy@") != NULL && strstr (drawn, "5:") != NULL, "drawn: %s",
                 output);
  ck_assert_str_eq (drawn, json_object_get_string_member (o, "timeline_api"));
  /* The prediction it started with, as the page says it and /ui/api has it. */
  ck_assert_str_eq (json_object_get_string_member (o, "predicted_page"),
                    json_object_get_string_member (o, "predicted_api"));
  ck_assert_int_eq (json_object_get_int_member (o, "timeline_batches"), 3);
  ck_assert_uint_ge (json_array_get_length (json_object_get_array_member (o, "screenshots")), 3);
  every_page_loads (d, key);
  dfx_stop (d);
}
END_TEST

/* The strings of @list joined with spaces. */
static gchar *
joined (JsonArray *list)
{
  g_autoptr (GString) s = g_string_new (NULL);
  for (guint i = 0; list != NULL && i < json_array_get_length (list); i++)
    g_string_append_printf (s, "%s%s", i ? " " : "", json_array_get_string_element (list, i));
  return g_strdup (s->str);
}

START_TEST (failing_update_shows_the_rollback)
{
  StgTestDaemon *d = dfx_start (PORT_RANGE, NULL);
  g_autofree gchar *v1 = stg_rollout_server_data (NULL, NULL);
  stg_rollout_create_job (d, "api", 3, v1);
  stg_rollout_wait_running (d, "api", 3, 1);

  g_autofree gchar *bad = stg_rollout_server_data (", \"--unhealthy\"", NULL);
  g_autoptr (ApiJobUpdateKey) key = stg_rollout_start_update (d, "api", 3, bad, 1, 1000);
  GSubprocess *p = watch_start (d, key, "ROLLED_BACK", "rollback");
  ck_assert_int_eq (stg_rollout_wait_terminal (d, key), API_JOB_UPDATE_STATUS_ROLLED_BACK);
  Watch w = watch_end (p);
  g_autoptr (JsonNode) result = w.result;
  g_autofree gchar *output = w.output;
  JsonObject *o = json_node_get_object (result);

  ck_assert_msg (w.exit_status == 0, "the page did not follow the rollback: %s", output);
  ck_assert (saw (o, "ROLLED_BACK"));
  ck_assert (!json_object_get_boolean_member (o, "reloaded"));
  /* The instance that failed is drawn as rolled back; the others never moved. */
  ck_assert_str_eq (json_object_get_string_member (o, "states"), "Bpp");
  /* A rollback's bar is not the green of success. */
  JsonObject *bar = json_object_get_object_member (o, "bar");
  ck_assert_str_eq (json_object_get_string_member (bar, "class"), "back");
  ck_assert_str_ne (json_object_get_string_member (bar, "color"), "rgb(31, 157, 85)");
  /* Clicking the instance that failed shows why, its events and its output. */
  const gchar *panel = json_object_get_string_member (o, "instance_panel");
  /* Rolled back, it is healthy: no cause now, the failure in its events. */
  ck_assert_msg (strstr (panel, "Instance 0") != NULL &&
                     strstr (panel, "failed its health check") != NULL,
                 "instance panel: %s", panel);
  ck_assert_msg (strstr (panel, "version 1, instance 0: serving") != NULL, "no output line in: %s",
                 panel);
  /* Its conditions: it failed, and rolled back. */
  g_autofree gchar *conditions = joined (json_object_get_array_member (o, "conditions"));
  ck_assert_str_eq (conditions, "Progressing=False/RolledBack Complete=False/RolledBack "
                                "Failed=True/FailureThresholdReached");
  const gchar *link = json_object_get_string_member (o, "log_link");
  ck_assert_msg (g_str_has_prefix (link, "/ui/api/instance/log?"), "log link: %s", link);
  g_autofree gchar *log = NULL;
  /* The first link is stderr's (empty here); stdout's holds the line. */
  g_autofree gchar *path = g_strdup (link);
  gchar *stream = strstr (path, "stream=stderr");
  ck_assert_ptr_nonnull (stream);
  memcpy (stream, "stream=stdout", strlen ("stream=stdout"));
  ck_assert_uint_eq (stg_test_http_get (d->http_port, path, &log), 200);
  ck_assert_msg (log != NULL && strstr (log, "version 1, instance 0: serving") != NULL, "log: %s",
                 log);
  dfx_stop (d);
}
END_TEST

/* The stage named @name in the script's result (fails the test if none). */
static JsonObject *
stage_seen (JsonObject *o, const gchar *name)
{
  JsonArray *stages = json_object_get_array_member (o, "stages");
  for (guint i = 0; i < json_array_get_length (stages); i++)
    {
      JsonObject *s = json_array_get_object_element (stages, i);
      if (g_str_equal (json_object_get_string_member (s, "name"), name))
        return s;
    }
  ck_abort_msg ("no stage %s on the page", name);
  return NULL;
}

START_TEST (plan_page_approves_and_rolls_back)
{
  /* Simulated instances: the plan's pace is the page's, not the jobs'. */
  StgTestDaemon *d = dfx_start ("--runtime=simulated", NULL);
  static const gchar *const jobs[] = { "pdb", "pweb" };
  for (guint i = 0; i < G_N_ELEMENTS (jobs); i++)
    stg_rollout_create_plain_job (d, "www", jobs[i], 2);
  /* web waits for an approval, which only the page gives. */
  g_autoptr (ApiRolloutPlan) plan = g_object_new (API_TYPE_ROLLOUT_PLAN, "name", "browser",
                                                  "rollbackOnFailure", TRUE, NULL);
  ApiRolloutStage *db = stg_rollout_plan_stage ("db", "www", "pdb", 2, NULL);
  ApiRolloutStage *web = stg_rollout_plan_stage ("web", "www", "pweb", 2, "db");
  g_autoptr (ApiJobKey) pdb = stg_job_key_new ("www", "prod", "pdb");
  g_ptr_array_add (db->before, g_object_new (API_TYPE_ROLLOUT_GATE, "name", "db-up", "kind",
                                             API_ROLLOUT_GATE_KIND_JOB_HEALTHY, "job", pdb, NULL));
  g_object_set (web, "requireApproval", TRUE, NULL);
  g_ptr_array_add (plan->stages, db);
  g_ptr_array_add (plan->stages, web);
  g_autofree gchar *id = stg_rollout_start_plan (d, plan);

  g_autofree gchar *url = g_strdup_printf ("http://127.0.0.1:%u/#/plan/%s", d->http_port, id);
  g_autofree gchar *shots = g_build_filename (STG_BUILDDIR, "tests", "browser-shots", "plan", NULL);
  Watch w = watch_end (stg_browser_env_start (env_dir, "watch_plan.mjs", url, shots, NULL));
  g_autoptr (JsonNode) result = w.result;
  g_autofree gchar *output = w.output;
  JsonObject *o = json_node_get_object (result);

  ck_assert_msg (w.exit_status == 0, "the page did not work the plan to its end: %s", output);
  ck_assert_msg (saw (o, "AWAITING_APPROVAL") && saw (o, "DONE") && saw (o, "ROLLED_BACK"), "%s",
                 output);
  ck_assert (!json_object_get_boolean_member (o, "reloaded"));
  ck_assert_msg (json_array_get_length (json_object_get_array_member (o, "failed_requests")) == 0,
                 "requests failed: %s", output);
  /* The plan's timeline drew each stage's statuses as its events give
   * them, the web stage from waiting for approval to rolled back. */
  ck_assert_str_eq (json_object_get_string_member (o, "plan_timeline_statuses"),
                    json_object_get_string_member (o, "plan_stage_events"));
  const gchar *drawn = json_object_get_string_member (o, "plan_timeline_statuses");
  ck_assert_msg (strstr (drawn, "web:") && strstr (drawn, "AWAITING_APPROVAL") &&
                     strstr (drawn, "ROLLED_BACK"),
                 "plan timeline: %s", output);
  /* The stage moved on live: waiting, approved and done, then back. */
  JsonArray *web_seen = json_object_get_array_member (json_object_get_object_member (o,
                                                                                     "stages_seen"),
                                                      "web");
  g_autoptr (GString) seen = g_string_new (NULL);
  for (guint i = 0; i < json_array_get_length (web_seen); i++)
    g_string_append_printf (seen, "%s ", json_array_get_string_element (web_seen, i));
  ck_assert_msg (strstr (seen->str, "AWAITING_APPROVAL ") && strstr (seen->str, "DONE ") &&
                     g_str_has_suffix (seen->str, "ROLLED_BACK "),
                 "web was seen %s", seen->str);
  for (guint i = 0; i < G_N_ELEMENTS (jobs); i++)
    {
      JsonObject *s = stage_seen (o, i == 0 ? "db" : "web");
      ck_assert_str_eq (json_object_get_string_member (s, "status"), "ROLLED_BACK");
      /* Rolled back is not success: the rolled-back colour, never green. */
      ck_assert_str_eq (json_object_get_string_member (s, "edge"), "rgb(180, 83, 9)");
      /* Links to the stage's update and to its rollback update. */
      JsonArray *links = json_object_get_array_member (s, "links");
      g_autofree gchar *prefix = g_strdup_printf ("#/update/www/prod/%s/", jobs[i]);
      ck_assert_uint_eq (json_array_get_length (links), 2);
      ck_assert (g_str_has_prefix (json_array_get_string_element (links, 0), prefix));
      ck_assert (g_str_has_prefix (json_array_get_string_element (links, 1), prefix));
    }
  ck_assert_msg (strstr (json_object_get_string_member (stage_seen (o, "web"), "text"),
                         "Approved by web") != NULL,
                 "%s", output);
  /* db's gate, what it checks and how its attempt went. */
  const gchar *db_text = json_object_get_string_member (stage_seen (o, "db"), "text");
  ck_assert_msg (strstr (db_text, "every instance of www/prod/pdb healthy") != NULL &&
                     strstr (db_text, "passed (attempt 1") != NULL,
                 "db: %s", db_text);
  /* The conditions the page showed: complete when DONE, then rolled
   * back by hand, which is no failure; each stage back where it was,
   * every instance ready. */
  JsonObject *cseen = json_object_get_object_member (o, "conditions_seen");
  g_autofree gchar *at_done = joined (json_object_get_array_member (cseen, "DONE"));
  ck_assert_str_eq (at_done, "Progressing=False/Done Complete=True/Done Failed=False/Done");
  g_autofree gchar *at_end = joined (json_object_get_array_member (o, "conditions"));
  ck_assert_str_eq (at_end, "Progressing=False/RolledBack Complete=False/RolledBack "
                            "Failed=False/RolledBack");
  for (guint i = 0; i < G_N_ELEMENTS (jobs); i++)
    {
      JsonObject *s = stage_seen (o, i == 0 ? "db" : "web");
      g_autofree gchar *sc = joined (json_object_get_array_member (s, "conditions"));
      ck_assert_str_eq (sc, "Progressing=False/RolledBack Complete=False/RolledBack "
                            "Failed=False/RolledBack");
      ck_assert_str_eq (json_object_get_string_member (s, "ready"), "2/2");
      ck_assert_msg (strstr (json_object_get_string_member (s, "text"), "went back to v1"), "%s",
                     json_object_get_string_member (s, "text"));
    }
  /* The Plans page lists the plan, rolled back, no stage done. */
  const gchar *row = json_object_get_string_member (o, "list");
  ck_assert_msg (g_str_has_prefix (row, "browser") && strstr (row, "rolled back") &&
                     strstr (row, "0/2"),
                 "plans: %s", row);
  /* The plan's page and the list, opened afresh once it has ended: no
   * console error either (the script above counts page errors only). */
  g_autofree gchar *base = g_strdup_printf ("http://127.0.0.1:%u", d->http_port);
  g_autofree gchar *hash = g_strdup_printf ("#/plan/%s", id);
  g_autofree gchar *pages = g_build_filename (STG_BUILDDIR, "tests", "browser-shots", "pages",
                                              NULL);
  g_autofree gchar *last = NULL, *visited = NULL;
  gint status = stg_browser_env_run (env_dir, &last, &visited, "visit_pages.mjs", base, pages, hash,
                                     "#/plans", NULL);
  ck_assert_msg (status == 0, "the plan's page failed: %s", visited);
  dfx_stop (d);
}
END_TEST

static Suite *
browser_suite (void)
{
  Suite *s = suite_create ("browser");
  TCase *tc = tcase_create ("update page");

  tcase_set_timeout (tc, 240);
  tcase_add_unchecked_fixture (tc, prepare_browser, NULL);
  tcase_add_checked_fixture (tc, dfx_setup, dfx_teardown);
  tcase_add_test (tc, rollout_is_followed_live_to_the_end);
  tcase_add_test (tc, failing_update_shows_the_rollback);
  tcase_add_test (tc, plan_page_approves_and_rolls_back);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return dfx_run (browser_suite ());
}
