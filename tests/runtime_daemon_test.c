/* runtime_daemon_test.c: a real staggerd with the local runtime: real
 * instance processes (stagger-example-server) behind HTTP health checks,
 * adopted across a crash of the daemon, and rolling updates driven over
 * Thrift through to ROLLED_FORWARD and ROLLED_BACK. */
#include "config.h"

#include <check.h>
#include <signal.h>

#include "common/enums.h"
#include "testutil.h"

#define PORT_RANGE "--port-range=31000-31999"

static gchar *dir;

static void
setup (void)
{
  dir = stg_test_tmpdir ();
}

static void
teardown (void)
{
  stg_test_rmtree (dir);         /* kills the instances too */
  g_clear_pointer (&dir, g_free);
}

/* Executor data for the example server: @args are more argv entries (JSON,
 * each with its leading comma), @extra more members of the object. */
static gchar *
server_data (const gchar *args, const gchar *extra)
{
  g_autofree gchar *bin = stg_test_program ("stagger-example-server");
  return g_strdup_printf ("{\"argv\": [\"%s\", \"--port\", \"{{ports[http]}}\"%s],"
                          " \"health_check\": {\"http\": {\"endpoint\": \"/health\"},"
                          " \"initial_interval_secs\": 1, \"interval_secs\": 0.1}%s}",
                          bin, args ? args : "", extra ? extra : "");
}

static void
create_job (StgTestDaemon *d, const gchar *name, gint32 instances, const gchar *data)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiJobConfiguration) job = stg_test_job_full ("www", "prod", name, instances, data, "http");
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (GError) error = NULL;

  ck_assert_msg (api_aurora_scheduler_manager_if_create_job (API_AURORA_SCHEDULER_MANAGER_IF (c->client),
                                                             &r, job, &error),
                 "createJob: %s", error ? error->message : "");
  ck_assert_int_eq (r->responseCode, API_RESPONSE_CODE_OK);
}

/* What the web UI's JSON says of one instance. */
typedef struct
{
  gchar *status;
  gint pid;
  gint port;
  gint version;
  gint failures;
} Instance;

static GArray *
instances (StgTestDaemon *d, const gchar *name)
{
  g_autofree gchar *path = g_strdup_printf ("/ui/api/job?role=www&environment=prod&name=%s", name);
  g_autofree gchar *body = NULL;
  GArray *out = g_array_new (FALSE, TRUE, sizeof (Instance));

  ck_assert_uint_eq (stg_test_http_get (d->http_port, path, &body), 200);
  g_autoptr (JsonNode) root = stg_test_parse_json (body);
  JsonArray *list = json_object_get_array_member (json_node_get_object (root), "instances");
  for (guint i = 0; i < json_array_get_length (list); i++)
    {
      JsonObject *o = json_array_get_object_element (list, i);
      Instance in = {
        .status = g_strdup (json_object_get_string_member (o, "status")),
        .pid = json_object_get_null_member (o, "pid") ? 0 : (gint) json_object_get_int_member (o, "pid"),
        .port = json_object_get_null_member (o, "port") ? 0 : (gint) json_object_get_int_member (o, "port"),
        .version = (gint) json_object_get_int_member (o, "version"),
        .failures = (gint) json_object_get_int_member (o, "failures"),
      };
      g_array_append_val (out, in);
    }
  return out;
}

static void
instances_free (GArray *a)
{
  for (guint i = 0; i < a->len; i++)
    g_free (g_array_index (a, Instance, i).status);
  g_array_unref (a);
}

typedef struct
{
  StgTestDaemon *d;
  const gchar *name;
  gint count;
  gint version;
} Want;

static gboolean
all_running (gpointer data)
{
  Want *w = data;
  GArray *a = instances (w->d, w->name);
  gboolean ok = (gint) a->len == w->count;

  for (guint i = 0; ok && i < a->len; i++)
    {
      Instance *in = &g_array_index (a, Instance, i);
      ok = g_str_equal (in->status, "RUNNING") && in->pid > 0 && in->port > 0 &&
           (w->version == 0 || in->version == w->version);
    }
  instances_free (a);
  if (!ok)
    g_usleep (50000);
  return ok;
}

static void
wait_running (StgTestDaemon *d, const gchar *name, gint count, gint version)
{
  Want w = { d, name, count, version };
  ck_assert_msg (stg_test_wait (all_running, &w, 30000),
                 "the %d instances of %s never all ran version %d", count, name, version);
}

/* ---- adoption ---------------------------------------------------------------------- */

START_TEST (instances_outlive_a_crash_and_are_adopted)
{
  StgTestDaemon *d = stg_test_daemon_start (dir, PORT_RANGE, NULL);
  g_autofree gchar *data = server_data (NULL, NULL);
  create_job (d, "web", 3, data);
  wait_running (d, "web", 3, 1);
  GArray *before = instances (d, "web");

  /* The daemon dies hard; its instances keep serving; one of them dies
   * while nobody watches. */
  stg_test_daemon_kill9 (d);
  stg_test_daemon_free (d);
  for (guint i = 0; i < before->len; i++)
    ck_assert (stg_test_process_alive (g_array_index (before, Instance, i).pid));
  gint lost = g_array_index (before, Instance, 1).pid;
  kill (-lost, SIGKILL);
  for (gint i = 0; i < 500 && stg_test_process_alive (lost); i++)
    g_usleep (10000);
  ck_assert (!stg_test_process_alive (lost));

  d = stg_test_daemon_start (dir, PORT_RANGE, NULL);
  wait_running (d, "web", 3, 1);
  GArray *after = instances (d, "web");
  for (guint i = 0; i < 3; i++)
    {
      Instance *b = &g_array_index (before, Instance, i);
      Instance *a = &g_array_index (after, Instance, i);
      ck_assert_int_eq (a->port, b->port);
      if (i == 1)
        {
          ck_assert_int_ne (a->pid, b->pid);
          ck_assert_int_ge (a->failures, 1);
        }
      else
        {
          ck_assert_int_eq (a->pid, b->pid);
          ck_assert_int_eq (a->failures, 0);
        }
    }
  /* A clean stop leaves the instances running too. */
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
  for (guint i = 0; i < after->len; i++)
    ck_assert (stg_test_process_alive (g_array_index (after, Instance, i).pid));
  instances_free (before);
  instances_free (after);
}
END_TEST

/* ---- rolling updates over Thrift ------------------------------------------------- */

static ApiJobUpdateKey *
start_update (StgTestDaemon *d, const gchar *name, gint32 count, const gchar *data, gint32 group)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiJobConfiguration) job = stg_test_job_full ("www", "prod", name, count, data, "http");
  /* Batches: each one waits for the one before it to be done. */
  g_autoptr (ApiBatchJobUpdateStrategy) batch = g_object_new (API_TYPE_BATCH_JOB_UPDATE_STRATEGY,
                                                              "groupSize", group, NULL);
  g_autoptr (ApiJobUpdateStrategy) strategy = g_object_new (API_TYPE_JOB_UPDATE_STRATEGY,
                                                            "batchStrategy", batch, NULL);
  g_autoptr (ApiJobUpdateSettings) settings = g_object_new (API_TYPE_JOB_UPDATE_SETTINGS,
      "updateGroupSize", group, "minWaitInInstanceRunningMs", 500, "rollbackOnFailure", TRUE,
      "maxPerInstanceFailures", 0, "maxFailedInstances", 0, "updateStrategy", strategy, NULL);
  g_autoptr (ApiJobUpdateRequest) request = g_object_new (API_TYPE_JOB_UPDATE_REQUEST,
      "taskConfig", job->taskConfig, "instanceCount", count, "settings", settings, NULL);
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (GError) error = NULL;

  ck_assert_msg (api_aurora_scheduler_manager_if_start_job_update (
                   API_AURORA_SCHEDULER_MANAGER_IF (c->client), &r, request, "test", &error),
                 "startJobUpdate: %s", error ? error->message : "");
  ck_assert_int_eq (r->responseCode, API_RESPONSE_CODE_OK);
  return g_object_ref (r->result->startJobUpdateResult->key);
}

static ApiJobUpdateDetails *
details (StgTestDaemon *d, ApiJobUpdateKey *key)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (ApiJobUpdateQuery) q = g_object_new (API_TYPE_JOB_UPDATE_QUERY, "key", key, NULL);
  g_autoptr (ApiJobUpdateKey) none = g_object_new (API_TYPE_JOB_UPDATE_KEY, NULL);

  ck_assert (api_read_only_scheduler_if_get_job_update_details (API_READ_ONLY_SCHEDULER_IF (c->client),
                                                                &r, none, q, &error));
  ck_assert_int_eq (r->responseCode, API_RESPONSE_CODE_OK);
  ck_assert_uint_eq (r->result->getJobUpdateDetailsResult->detailsList->len, 1);
  return g_object_ref (r->result->getJobUpdateDetailsResult->detailsList->pdata[0]);
}

typedef struct
{
  StgTestDaemon *d;
  ApiJobUpdateKey *key;
  gint status;
} Terminal;

static gboolean
is_terminal (gpointer data)
{
  Terminal *t = data;
  g_autoptr (ApiJobUpdateDetails) det = details (t->d, t->key);

  t->status = det->update->summary->state->status;
  if (stg_update_status_is_active (t->status))
    {
      g_usleep (100000);
      return FALSE;
    }
  return TRUE;
}

static gint
wait_terminal (StgTestDaemon *d, ApiJobUpdateKey *key)
{
  Terminal t = { d, key, 0 };
  ck_assert_msg (stg_test_wait (is_terminal, &t, 90000), "the update is still %s",
                 stg_update_status_name (t.status));
  return t.status;
}

/* The first and last time of @action for @instance, or -1. */
static void
action_times (ApiJobUpdateDetails *det, gint instance, gint action, gint64 *first, gint64 *last)
{
  *first = *last = -1;
  for (guint i = 0; i < det->instanceEvents->len; i++)
    {
      ApiJobInstanceUpdateEvent *ev = det->instanceEvents->pdata[i];
      if (ev->instanceId != instance || (gint) ev->action != action)
        continue;
      if (*first < 0 || ev->timestampMs < *first)
        *first = ev->timestampMs;
      if (ev->timestampMs > *last)
        *last = ev->timestampMs;
    }
}

START_TEST (rolling_update_goes_batch_by_batch)
{
  StgTestDaemon *d = stg_test_daemon_start (dir, PORT_RANGE, NULL);
  g_autofree gchar *v1 = server_data (NULL, NULL);
  create_job (d, "web", 5, v1);
  wait_running (d, "web", 5, 1);
  GArray *before = instances (d, "web");

  g_autofree gchar *v2 = server_data (NULL, ", \"env\": {\"GREETING\": \"v2\"}");
  g_autoptr (ApiJobUpdateKey) key = start_update (d, "web", 5, v2, 2);
  ck_assert_int_eq (wait_terminal (d, key), API_JOB_UPDATE_STATUS_ROLLED_FORWARD);

  /* Batches of two: nothing of a batch starts before the one before it is
   * done, and every instance was updated once. */
  g_autoptr (ApiJobUpdateDetails) det = details (d, key);
  gint64 done_before = -1;
  for (gint batch = 0; batch < 3; batch++)
    {
      gint64 batch_done = -1;
      for (gint i = batch * 2; i < MIN (batch * 2 + 2, 5); i++)
        {
          gint64 first, last, done_first, done_last;
          action_times (det, i, API_JOB_UPDATE_ACTION_INSTANCE_UPDATING, &first, &last);
          action_times (det, i, API_JOB_UPDATE_ACTION_INSTANCE_UPDATED, &done_first, &done_last);
          ck_assert_msg (first >= 0 && done_first >= first, "instance %d was not updated", i);
          ck_assert_msg (first >= done_before, "instance %d started before the batch before it ended", i);
          batch_done = MAX (batch_done, done_last);
        }
      done_before = batch_done;
    }

  /* Every instance is a new process running the new config, on its old port. */
  wait_running (d, "web", 5, 2);
  GArray *after = instances (d, "web");
  for (guint i = 0; i < 5; i++)
    {
      Instance *a = &g_array_index (after, Instance, i);
      ck_assert_int_ne (a->pid, g_array_index (before, Instance, i).pid);
      ck_assert_int_eq (a->port, g_array_index (before, Instance, i).port);
      g_autofree gchar *greeting = stg_test_process_env (a->pid, "GREETING");
      g_autofree gchar *version = stg_test_process_env (a->pid, "STAGGER_VERSION");
      ck_assert_str_eq (greeting, "v2");
      ck_assert_str_eq (version, "2");
    }
  instances_free (before);
  instances_free (after);
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
}
END_TEST

START_TEST (unhealthy_update_rolls_back)
{
  StgTestDaemon *d = stg_test_daemon_start (dir, PORT_RANGE, NULL);
  g_autofree gchar *v1 = server_data (NULL, NULL);
  create_job (d, "web", 3, v1);
  wait_running (d, "web", 3, 1);

  g_autofree gchar *bad = server_data (", \"--unhealthy\"", NULL);
  g_autoptr (ApiJobUpdateKey) key = start_update (d, "web", 3, bad, 1);
  ck_assert_int_eq (wait_terminal (d, key), API_JOB_UPDATE_STATUS_ROLLED_BACK);

  /* The first instance failed and went back; the others were never touched. */
  g_autoptr (ApiJobUpdateDetails) det = details (d, key);
  gint64 first, last;
  action_times (det, 0, API_JOB_UPDATE_ACTION_INSTANCE_ROLLED_BACK, &first, &last);
  ck_assert_int_ge (first, 0);
  action_times (det, 2, API_JOB_UPDATE_ACTION_INSTANCE_UPDATING, &first, &last);
  ck_assert_int_lt (first, 0);
  wait_running (d, "web", 3, 1);
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
}
END_TEST

static Suite *
runtime_daemon_suite (void)
{
  Suite *s = suite_create ("runtime_daemon");
  TCase *tc = tcase_create ("adoption");

  tcase_set_timeout (tc, 120);
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, instances_outlive_a_crash_and_are_adopted);
  suite_add_tcase (s, tc);

  tc = tcase_create ("updates");
  tcase_set_timeout (tc, 180);
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, rolling_update_goes_batch_by_batch);
  tcase_add_test (tc, unhealthy_update_rolls_back);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  SRunner *sr = srunner_create (runtime_daemon_suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  return failed == 0 ? 0 : 1;
}
