/* fleet_logs_test.c: getTaskLogs (what `stagger task logs` asks) on the
 * fleet runtime: a container's standard output and error as its engine
 * keeps them, whole, from an offset and the last bytes; an instance the
 * job lacks and a process's own output refused, each saying why.
 * staggerd --runtime=fleet on one real podman host. Host ports come from
 * 19400-19449 (no other suite uses them). Test process, main thread.
 */
#include "config.h"

#include <check.h>
#include <string.h>

#include "fleet_fixture.h"
#include "rollout.h"

#define PORTS "--port-range=19400-19449"

/* Three lines out, one line err, then busybox httpd on port http. */
#define DATA \
  "{\"argv\": [\"sh\", \"-c\", \"echo line 1; echo line 2; echo line 3; echo oops >&2; " \
  "exec httpd -f -p {{ports[http]}} -h /www\"]," \
  " \"stop_timeout_secs\": 2," \
  " \"health_check\": {\"http\": {\"endpoint\": \"/health\"}, \"timeout_secs\": 5," \
  " \"initial_interval_secs\": 10, \"interval_secs\": 0.5}}"

static gboolean
runs (gpointer data)
{
  StgTestDaemon *d = data;
  GArray *a = stg_rollout_instances (d, "talker");
  gboolean ok = a->len == 1 &&
                g_str_equal (g_array_index (a, StgRolloutInstance, 0).status, "RUNNING");

  stg_rollout_instances_free (a);
  if (!ok)
    g_usleep (100 * 1000);
  return ok;
}

/* getTaskLogs of www/prod/talker/@instance; the response. */
static ApiResponse *
read_logs (StgTestClient *c, gint32 instance, gboolean err, gint64 offset, const gchar *process)
{
  g_autoptr (ApiJobKey) job = g_object_new (API_TYPE_JOB_KEY, "role", "www", "environment", "prod",
                                            "name", "talker", NULL);
  g_autoptr (ApiInstanceKey) key = g_object_new (API_TYPE_INSTANCE_KEY, "jobKey", job, "instanceId",
                                                 instance, NULL);
  ApiResponse *r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (GError) error = NULL;

  ck_assert_msg (api_stagger_scheduler_if_get_task_logs (c->client, &r, key, err, offset, 65536,
                                                         process, -1, &error),
                 "getTaskLogs: %s", error ? error->message : "");
  return r;
}

static const gchar *
message (ApiResponse *r)
{
  return r->details && r->details->len ? ((ApiResponseDetail *) r->details->pdata[0])->message : "";
}

/* The bytes of an OK answer, as a string. */
static gchar *
text (ApiResponse *r)
{
  ck_assert_msg (r->responseCode == API_RESPONSE_CODE_OK, "getTaskLogs: %s", message (r));
  GByteArray *data = r->result->getTaskLogsResult->data;
  return g_strndup (data ? (const gchar *) data->data : "", data ? data->len : 0);
}

START_TEST (fleet_logs_are_the_containers)
{
  StgFleetEnv *e = stg_fleet_env_new (1, NULL);
  g_autofree gchar *config = g_strconcat ("--config=", e->conf, NULL);
  g_autoptr (ApiJobConfiguration) job = stg_fleet_job ("talker", 1, STG_FLEET_IMAGE_V1, DATA,
                                                       "http", NULL);

  StgTestDaemon *d = stg_test_daemon_start (e->data_dir, "--runtime=fleet", config, PORTS, NULL);
  stg_fleet_create_job (d, job);
  ck_assert_msg (stg_test_wait (runs, d, 300000), "the job never ran");
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);

  g_autoptr (ApiResponse) out = read_logs (c, 0, FALSE, 0, NULL);
  g_autofree gchar *all = text (out);
  ck_assert_str_eq (all, "line 1\nline 2\nline 3\n");
  ck_assert_int_eq (out->result->getTaskLogsResult->size, 21);
  ck_assert_int_eq (out->result->getTaskLogsResult->nextOffset, 21);
  g_autoptr (ApiResponse) err = read_logs (c, 0, TRUE, 0, NULL);
  g_autofree gchar *oops = text (err);
  ck_assert_str_eq (oops, "oops\n");
  g_autoptr (ApiResponse) later = read_logs (c, 0, FALSE, 7, NULL);
  g_autofree gchar *from = text (later);
  ck_assert_str_eq (from, "line 2\nline 3\n");
  g_autoptr (ApiResponse) last = read_logs (c, 0, FALSE, -7, NULL);
  g_autofree gchar *tail = text (last);
  ck_assert_str_eq (tail, "line 3\n");

  g_autoptr (ApiResponse) none = read_logs (c, 4, FALSE, 0, NULL);
  ck_assert_int_eq (none->responseCode, API_RESPONSE_CODE_INVALID_REQUEST);
  ck_assert_msg (strstr (message (none), "has no instance 4") != NULL, "%s", message (none));
  g_autoptr (ApiResponse) process = read_logs (c, 0, FALSE, 0, "web");
  ck_assert_int_eq (process->responseCode, API_RESPONSE_CODE_INVALID_REQUEST);
  ck_assert_msg (strstr (message (process),
                         "process web stays in the sandbox inside its container"),
                 "%s", message (process));

  g_clear_pointer (&c, stg_test_client_free);
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
  stg_fleet_env_free (e);
}
END_TEST

static Suite *
fleet_logs_suite (void)
{
  Suite *s = suite_create ("fleet_logs");
  TCase *tc = tcase_create ("logs");

  tcase_set_timeout (tc, 1200);
  tcase_add_test (tc, fleet_logs_are_the_containers);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return stg_test_podman_main (fleet_logs_suite ());
}
