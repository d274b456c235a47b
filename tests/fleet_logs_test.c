/* fleet_logs_test.c: getTaskLogs (what `stagger task logs` asks) on the
 * fleet runtime: a container's standard output and error as its engine
 * keeps them, whole, from an offset and the last bytes; an instance the
 * job lacks and a process of a task that has none refused, each saying
 * why. And an AuroraExecutor task of two processes run by stagger-thermos
 * in its container: each process's own stdout and stderr read from the
 * sandbox inside the container, its newest run or a given one, through
 * the API and the CLI; an unknown process named with the known ones, a
 * run that never was, and a container removed behind staggerd's back.
 * staggerd --runtime=fleet on one real podman host. Host ports come from
 * 19400-19449 and 19650-19699 (no other suite uses them). Test process,
 * main thread.
 */
#include "config.h"

#include <check.h>
#include <string.h>

#include "fleet_fixture.h"
#include "rollout.h"

#define PORTS "--port-range=19400-19449"
#define THERMOS_PORTS "--port-range=19650-19699"

/* Three lines out, one line err, then busybox httpd on port http. */
#define DATA \
  "{\"argv\": [\"sh\", \"-c\", \"echo line 1; echo line 2; echo line 3; echo oops >&2; " \
  "exec httpd -f -p {{ports[http]}} -h /www\"]," \
  " \"stop_timeout_secs\": 2," \
  " \"health_check\": {\"http\": {\"endpoint\": \"/health\"}, \"timeout_secs\": 5," \
  " \"initial_interval_secs\": 10, \"interval_secs\": 0.5}}"

/* An AuroraExecutor task (as Aurora's client sends it) of two processes,
 * each writing a line to stdout and one to stderr: "setup" makes the
 * health file and ends, then "serve" serves it with busybox httpd on port
 * http (its health check's, through the alias health). */
#define THERMOS_DATA \
  "{\"name\": \"chatty\", \"role\": \"www\", \"environment\": \"prod\"," \
  " \"cluster\": \"local\", \"service\": true," \
  " \"task\": {\"name\": \"chatty\", \"processes\": [" \
  "{\"name\": \"setup\", \"cmdline\": \"mkdir -p www && echo ok > www/health" \
  " && echo setup says hello && echo setup complains >&2\"}," \
  "{\"name\": \"serve\", \"cmdline\": \"echo serve starts; echo serve warns >&2;" \
  " exec httpd -f -p {{thermos.ports[http]}} -h www\"}]," \
  " \"constraints\": [{\"order\": [\"setup\", \"serve\"]}]," \
  " \"resources\": {\"cpu\": 0.25, \"ram\": 16777216, \"disk\": 16777216}," \
  " \"finalization_wait\": 1}," \
  " \"announce\": {\"primary_port\": \"http\", \"portmap\": {\"health\": \"http\"}}," \
  " \"health_check_config\": {\"health_checker\": {\"http\": {\"endpoint\": \"/health\"}}," \
  " \"initial_interval_secs\": 5, \"interval_secs\": 0.5, \"timeout_secs\": 5}}"

typedef struct
{
  StgTestDaemon *d;
  const gchar *job;
} Running;

static gboolean
runs (gpointer data)
{
  Running *r = data;
  GArray *a = stg_rollout_instances (r->d, r->job);
  gboolean ok = a->len == 1 &&
                g_str_equal (g_array_index (a, StgRolloutInstance, 0).status, "RUNNING");

  stg_rollout_instances_free (a);
  if (!ok)
    g_usleep (100 * 1000);
  return ok;
}

/* getTaskLogs of www/prod/@name/@instance (@process's run @run); the
 * response. */
static ApiResponse *
read_job_logs (StgTestClient *c, const gchar *name, gint32 instance, gboolean err, gint64 offset,
               const gchar *process, gint32 run)
{
  g_autoptr (ApiJobKey) job = g_object_new (API_TYPE_JOB_KEY, "role", "www", "environment", "prod",
                                            "name", name, NULL);
  g_autoptr (ApiInstanceKey) key = g_object_new (API_TYPE_INSTANCE_KEY, "jobKey", job, "instanceId",
                                                 instance, NULL);
  ApiResponse *r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (GError) error = NULL;

  ck_assert_msg (api_stagger_scheduler_if_get_task_logs (c->client, &r, key, err, offset, 65536,
                                                         process, run, &error),
                 "getTaskLogs: %s", error ? error->message : "");
  return r;
}

/* getTaskLogs of www/prod/talker/@instance; the response. */
static ApiResponse *
read_logs (StgTestClient *c, gint32 instance, gboolean err, gint64 offset, const gchar *process)
{
  return read_job_logs (c, "talker", instance, err, offset, process, -1);
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
  Running running = { d, "talker" };
  ck_assert_msg (stg_test_wait (runs, &running, 300000), "the job never ran");
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
  ck_assert_msg (strstr (message (process), "instance 0 does not run an AuroraExecutor task: it "
                                            "has no process 'web'"),
                 "%s", message (process));

  g_clear_pointer (&c, stg_test_client_free);
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
  stg_fleet_env_free (e);
}
END_TEST

/* The text of an OK answer of getTaskLogs of www/prod/chatty/0's
 * @process (@run; -1: its newest), whose processRun must be @expect_run. */
static gchar *
process_text (StgTestClient *c, const gchar *process, gboolean err, gint64 offset, gint32 run,
              gint32 expect_run)
{
  g_autoptr (ApiResponse) r = read_job_logs (c, "chatty", 0, err, offset, process, run);
  gchar *got = text (r);
  ApiGetTaskLogsResult *result = r->result->getTaskLogsResult;

  ck_assert_msg (result->__isset_processRun && result->processRun == expect_run, "%s: run %d read",
                 process, result->processRun);
  ck_assert_msg (result->__isset_processes && result->processes->len == 2 &&
                     g_str_equal (result->processes->pdata[0], "setup") &&
                     g_str_equal (result->processes->pdata[1], "serve"),
                 "%s: the task's processes", process);
  return got;
}

/* What `stagger task logs local/www/prod/chatty/0 @args...` printed;
 * asserts it exits 0. */
static gchar *
cli_logs (StgTestDaemon *d, const gchar *a1, const gchar *a2, const gchar *a3)
{
  g_autofree gchar *prog = stg_test_program ("stagger");
  g_autofree gchar *url = g_strdup_printf ("http://127.0.0.1:%u", d->http_port);
  const gchar *key = "local/www/prod/chatty/0";
  const gchar *argv[] = { prog, "--url", url, "task", "logs", key, a1, a2, a3, NULL };
  g_autofree gchar *err = NULL;
  gchar *out = NULL;
  gint status = 0;

  ck_assert (g_spawn_sync (NULL, (gchar **) argv, NULL, 0, NULL, NULL, &out, &err, &status, NULL));
  ck_assert_msg (g_spawn_check_wait_status (status, NULL), "stagger task logs %s: %s", a1, err);
  return out;
}

/* The ids of the containers of @e's host0, one a line. */
static gchar *
containers (StgFleetEnv *e)
{
  return stg_test_podman_cli (e->fleet, e->fleet->hosts->pdata[0], "ps", "-a", "-q", "--no-trunc",
                              NULL);
}

START_TEST (fleet_logs_are_each_processes)
{
  StgFleetEnv *e = stg_fleet_env_new (1, NULL);
  g_autofree gchar *config = g_strconcat ("--config=", e->conf, NULL);
  g_autofree gchar *bundle = g_strconcat ("--thermos-bundle=", STG_BUILDDIR, "/thermos-bundle",
                                          NULL);
  g_autoptr (ApiJobConfiguration) job = stg_fleet_job ("chatty", 1, STG_FLEET_IMAGE_V1,
                                                       THERMOS_DATA, "http", NULL);
  g_autofree gchar *conf_text = NULL;
  g_autoptr (GError) error = NULL;

  g_object_set (job->taskConfig->executorConfig, "name", "AuroraExecutor", NULL);
  /* Exits are seen only once a minute: the container removed at the end
   * is still the instance's when its output is asked for. */
  ck_assert (g_file_get_contents (e->conf, &conf_text, NULL, &error));
  g_autoptr (GString) slow = g_string_new (conf_text);
  ck_assert_uint_eq (g_string_replace (slow, "poll_interval_ms = 200", "poll_interval_ms = 60000",
                                       1),
                     1);
  ck_assert (g_file_set_contents (e->conf, slow->str, -1, &error));
  StgTestDaemon *d = stg_test_daemon_start (e->data_dir, "--runtime=fleet", config, THERMOS_PORTS,
                                            bundle, NULL);
  stg_fleet_create_job (d, job);
  Running running = { d, "chatty" };
  ck_assert_msg (stg_test_wait (runs, &running, 300000), "the job never ran");
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);

  /* Each process's own streams, from its newest run (its first, 0). */
  g_autofree gchar *setup_out = process_text (c, "setup", FALSE, 0, -1, 0);
  ck_assert_str_eq (setup_out, "setup says hello\n");
  g_autofree gchar *setup_err = process_text (c, "setup", TRUE, 0, -1, 0);
  ck_assert_str_eq (setup_err, "setup complains\n");
  g_autofree gchar *serve_out = process_text (c, "serve", FALSE, 0, -1, 0);
  ck_assert_str_eq (serve_out, "serve starts\n");
  g_autofree gchar *serve_err = process_text (c, "serve", TRUE, 0, -1, 0);
  ck_assert_str_eq (serve_err, "serve warns\n");
  /* Run 0 by its number, from an offset, the last bytes. */
  g_autofree gchar *named = process_text (c, "setup", FALSE, 6, 0, 0);
  ck_assert_str_eq (named, "says hello\n");
  g_autofree gchar *tail = process_text (c, "serve", FALSE, -7, -1, 0);
  ck_assert_str_eq (tail, "starts\n");

  /* The same through the CLI. */
  g_autofree gchar *cli_out = cli_logs (d, "--process", "serve", NULL);
  ck_assert_str_eq (cli_out, "serve starts\n");
  g_autofree gchar *cli_err = cli_logs (d, "--process", "setup", "--stderr");
  ck_assert_str_eq (cli_err, "setup complains\n");

  /* An unknown process, named with the task's; a run that never was. */
  g_autoptr (ApiResponse) unknown = read_job_logs (c, "chatty", 0, FALSE, 0, "nope", -1);
  ck_assert_int_eq (unknown->responseCode, API_RESPONSE_CODE_INVALID_REQUEST);
  ck_assert_msg (strstr (message (unknown),
                         "instance 0's task has no process 'nope' (its processes: setup, serve)"),
                 "%s", message (unknown));
  g_autoptr (ApiResponse) never = read_job_logs (c, "chatty", 0, FALSE, 0, "setup", 3);
  ck_assert_int_eq (never->responseCode, API_RESPONSE_CODE_INVALID_REQUEST);
  ck_assert_msg (strstr (message (never), "instance 0's process setup has no stdout of that run"),
                 "%s", message (never));

  /* The container removed behind staggerd's back: the sandbox went with it. */
  g_autofree gchar *ids = containers (e);
  g_strstrip (ids);
  ck_assert_msg (*ids != '\0' && strchr (ids, '\n') == NULL, "containers: %s", ids);
  g_free (
      stg_test_podman_cli (e->fleet, e->fleet->hosts->pdata[0], "rm", "-f", "-t", "0", ids, NULL));
  g_autoptr (ApiResponse) gone = read_job_logs (c, "chatty", 0, FALSE, 0, "serve", -1);
  ck_assert_int_eq (gone->responseCode, API_RESPONSE_CODE_INVALID_REQUEST);
  g_autofree gchar *expect = g_strdup_printf ("instance 0's container %s is gone from host host0",
                                              ids);
  ck_assert_msg (strstr (message (gone), expect), "%s", message (gone));

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
  tcase_add_test (tc, fleet_logs_are_each_processes);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return stg_test_podman_main (fleet_logs_suite ());
}
