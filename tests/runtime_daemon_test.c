/* runtime_daemon_test.c: a real staggerd with the local runtime: real
 * instance processes (stagger-example-server) behind HTTP health checks,
 * adopted across a crash of the daemon, and rolling updates driven over
 * Thrift through to ROLLED_FORWARD and ROLLED_BACK. */
#include "config.h"

#include <check.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "common/enums.h"
#include "rollout.h"

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

/* ---- adoption ---------------------------------------------------------------------- */

START_TEST (instances_outlive_a_crash_and_are_adopted)
{
  StgTestDaemon *d = stg_test_daemon_start (dir, PORT_RANGE, NULL);
  g_autofree gchar *data = stg_rollout_server_data (NULL, NULL);
  stg_rollout_create_job (d, "web", 3, data);
  stg_rollout_wait_running (d, "web", 3, 1);
  GArray *before = stg_rollout_instances (d, "web");

  /* The daemon dies hard; its instances keep serving; one of them dies
   * while nobody watches. */
  stg_test_daemon_kill9 (d);
  stg_test_daemon_free (d);
  for (guint i = 0; i < before->len; i++)
    ck_assert (stg_test_process_alive (g_array_index (before, StgRolloutInstance, i).pid));
  gint lost = g_array_index (before, StgRolloutInstance, 1).pid;
  kill (-lost, SIGKILL);
  for (gint i = 0; i < 500 && stg_test_process_alive (lost); i++)
    g_usleep (10000);
  ck_assert (!stg_test_process_alive (lost));

  d = stg_test_daemon_start (dir, PORT_RANGE, NULL);
  stg_rollout_wait_running (d, "web", 3, 1);
  GArray *after = stg_rollout_instances (d, "web");
  for (guint i = 0; i < 3; i++)
    {
      StgRolloutInstance *b = &g_array_index (before, StgRolloutInstance, i);
      StgRolloutInstance *a = &g_array_index (after, StgRolloutInstance, i);
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
          /* Up since it became healthy, not since it was adopted (#31). */
          ck_assert_msg (b->started_ms > 0 && a->started_ms == b->started_ms,
                         "instance %u: up since %" G_GINT64_FORMAT ", then %" G_GINT64_FORMAT, i,
                         b->started_ms, a->started_ms);
        }
    }
  /* A clean stop leaves the instances running too. */
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
  for (guint i = 0; i < after->len; i++)
    ck_assert (stg_test_process_alive (g_array_index (after, StgRolloutInstance, i).pid));
  stg_rollout_instances_free (before);
  stg_rollout_instances_free (after);
}
END_TEST

/* ---- rolling updates over Thrift ------------------------------------------------- */

START_TEST (rolling_update_goes_batch_by_batch)
{
  StgTestDaemon *d = stg_test_daemon_start (dir, PORT_RANGE, NULL);
  g_autofree gchar *v1 = stg_rollout_server_data (NULL, NULL);
  stg_rollout_create_job (d, "web", 5, v1);
  stg_rollout_wait_running (d, "web", 5, 1);
  GArray *before = stg_rollout_instances (d, "web");

  g_autofree gchar *v2 = stg_rollout_server_data (NULL, ", \"env\": {\"GREETING\": \"v2\"}");
  g_autoptr (ApiJobUpdateKey) key = stg_rollout_start_update (d, "web", 5, v2, 2, 500);
  ck_assert_int_eq (stg_rollout_wait_terminal (d, key), API_JOB_UPDATE_STATUS_ROLLED_FORWARD);

  /* Batches of two: nothing of a batch starts before the one before it is
   * done, and every instance was updated once. */
  g_autoptr (ApiJobUpdateDetails) det = stg_rollout_details (d, key);
  gint64 done_before = -1;
  for (gint batch = 0; batch < 3; batch++)
    {
      gint64 batch_done = -1;
      for (gint i = batch * 2; i < MIN (batch * 2 + 2, 5); i++)
        {
          gint64 first, last, done_first, done_last;
          stg_rollout_action_times (det, i, API_JOB_UPDATE_ACTION_INSTANCE_UPDATING, &first, &last);
          stg_rollout_action_times (det, i, API_JOB_UPDATE_ACTION_INSTANCE_UPDATED, &done_first, &done_last);
          ck_assert_msg (first >= 0 && done_first >= first, "instance %d was not updated", i);
          ck_assert_msg (first >= done_before, "instance %d started before the batch before it ended", i);
          batch_done = MAX (batch_done, done_last);
        }
      done_before = batch_done;
    }

  /* Every instance is a new process running the new config, on its old port. */
  stg_rollout_wait_running (d, "web", 5, 2);
  GArray *after = stg_rollout_instances (d, "web");
  for (guint i = 0; i < 5; i++)
    {
      StgRolloutInstance *a = &g_array_index (after, StgRolloutInstance, i);
      ck_assert_int_ne (a->pid, g_array_index (before, StgRolloutInstance, i).pid);
      ck_assert_int_eq (a->port, g_array_index (before, StgRolloutInstance, i).port);
      g_autofree gchar *greeting = stg_test_process_env (a->pid, "GREETING");
      g_autofree gchar *version = stg_test_process_env (a->pid, "STAGGER_VERSION");
      ck_assert_str_eq (greeting, "v2");
      ck_assert_str_eq (version, "2");
    }
  stg_rollout_instances_free (before);
  stg_rollout_instances_free (after);
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
}
END_TEST

START_TEST (unhealthy_update_rolls_back)
{
  StgTestDaemon *d = stg_test_daemon_start (dir, PORT_RANGE, NULL);
  g_autofree gchar *v1 = stg_rollout_server_data (NULL, NULL);
  stg_rollout_create_job (d, "web", 3, v1);
  stg_rollout_wait_running (d, "web", 3, 1);

  g_autofree gchar *bad = stg_rollout_server_data (", \"--unhealthy\"", NULL);
  g_autoptr (ApiJobUpdateKey) key = stg_rollout_start_update (d, "web", 3, bad, 1, 500);
  ck_assert_int_eq (stg_rollout_wait_terminal (d, key), API_JOB_UPDATE_STATUS_ROLLED_BACK);

  /* The first instance failed and went back; the others were never touched. */
  g_autoptr (ApiJobUpdateDetails) det = stg_rollout_details (d, key);
  gint64 first, last;
  stg_rollout_action_times (det, 0, API_JOB_UPDATE_ACTION_INSTANCE_ROLLED_BACK, &first, &last);
  ck_assert_int_ge (first, 0);
  stg_rollout_action_times (det, 2, API_JOB_UPDATE_ACTION_INSTANCE_UPDATING, &first, &last);
  ck_assert_int_lt (first, 0);
  stg_rollout_wait_running (d, "web", 3, 1);
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
}
END_TEST

static gchar *task_messages (StgTestDaemon *d, const gchar *role);

/* An update to a version that runs @prefix before the server, reserving
 * @mb MiB of @resource, fails and rolls back (staggerd's settings:
 * @conf_text); the failed task's events say @said. */
static void
hog_update_rolls_back (const gchar *conf_text, const gchar *resource, gint64 mb,
                       const gchar *prefix, const gchar *said)
{
  g_autofree gchar *conf = g_build_filename (dir, "staggerd.conf", NULL);
  ck_assert (g_file_set_contents (conf, conf_text, -1, NULL));
  g_autofree gchar *conf_arg = g_strconcat ("--config=", conf, NULL);
  StgTestDaemon *d = stg_test_daemon_start (dir, conf_arg, PORT_RANGE, NULL);
  g_autofree gchar *v1 = stg_rollout_server_data (NULL, NULL);
  stg_rollout_create_job (d, "web", 2, v1);
  stg_rollout_wait_running (d, "web", 2, 1);

  g_autofree gchar *bin = stg_test_program ("stagger-example-server");
  g_autofree gchar *hog = g_strdup_printf (
      "{\"command\": \"%s && exec %s --port "
      "{{ports[http]}}\", \"health_check\": {\"http\": {\"endpoint\": \"/health\"},"
      " \"initial_interval_secs\": 1, \"interval_secs\": 0.1}}",
      prefix, bin);
  g_autoptr (ApiJobConfiguration) job = stg_test_job_full ("www", "prod", "web", 2, hog, "http");
  g_hash_table_add (job->taskConfig->resources,
                    g_object_new (API_TYPE_RESOURCE, resource, mb, NULL));
  g_autoptr (ApiJobUpdateSettings) settings = stg_rollout_batch_settings (1, 4000);
  g_autoptr (ApiJobUpdateRequest) request = g_object_new (API_TYPE_JOB_UPDATE_REQUEST, "taskConfig",
                                                          job->taskConfig, "instanceCount", 2,
                                                          "settings", settings, NULL);
  g_autoptr (ApiJobUpdateKey) key = stg_rollout_try_start_request (d, request, NULL);
  ck_assert_ptr_nonnull (key);
  ck_assert_int_eq (stg_rollout_wait_terminal (d, key), API_JOB_UPDATE_STATUS_ROLLED_BACK);
  stg_rollout_wait_running (d, "web", 2, 1);
  g_autofree gchar *messages = task_messages (d, "www");
  ck_assert_msg (strstr (messages, said) != NULL, "%s", messages);
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
}

/* An update to a version that writes 40 MiB into its sandbox while it
 * reserves 16 fails on the disk limit (disk_collection_interval_secs = 1,
 * measured within its watch) and rolls back; the failed task's events say
 * why in Aurora's words. */
START_TEST (disk_hog_update_rolls_back)
{
  hog_update_rolls_back ("[staggerd]\ndisk_collection_interval_secs = 1\n", "diskMb", 16,
                         "dd if=/dev/zero of=big bs=1M count=40 2>/dev/null; true",
                         "Disk limit exceeded.  Reserved 16777216 bytes vs used ");
}
END_TEST

/* As root, an update to a version that takes 100 MiB while it reserves 32
 * is killed by its memory limit, says so, and rolls back. */
START_TEST (memory_hog_update_rolls_back)
{
  hog_update_rolls_back ("[staggerd]\n", "ramMb", 32, "python3 -c 'x = bytearray(100 << 20)'",
                         "exceeded its 32 MiB of RAM (OOM kill)");
}
END_TEST

/* ---- what instances use ------------------------------------------------------------- */

/* The "usage" of instance 0 of www/prod/@name in the web UI's data, once
 * its disk and its CPU have been measured; NULL when they never are
 * (10 s). */
static JsonObject *
wait_usage (StgTestDaemon *d, const gchar *name, JsonParser *parser)
{
  g_autofree gchar *path = g_strdup_printf ("/ui/api/job?role=www&environment=prod&name=%s", name);

  for (gint tries = 0; tries < 100; tries++, g_usleep (100000))
    {
      g_autofree gchar *body = NULL;
      if (stg_test_http_get (d->http_port, path, &body) != 200 ||
          !json_parser_load_from_data (parser, body, -1, NULL))
        continue;
      JsonArray *list = json_object_get_array_member (json_node_get_object (
                                                          json_parser_get_root (parser)),
                                                      "instances");
      JsonNode *u = json_object_get_member (json_array_get_object_element (list, 0), "usage");
      if (u != NULL && JSON_NODE_HOLDS_OBJECT (u) &&
          !json_object_get_null_member (json_node_get_object (u), "disk_bytes") &&
          !json_object_get_null_member (json_node_get_object (u), "cpus_used"))
        return json_node_get_object (u);
    }
  return NULL;
}

/* As root, what each instance uses against what it reserves, read from
 * its control group and its last disk sample: in the web UI's data, in
 * `stagger job status`, and per job in /metrics. */
START_TEST (usage_is_shown_against_reservations)
{
  g_autofree gchar *conf = g_build_filename (dir, "staggerd.conf", NULL);
  ck_assert (
      g_file_set_contents (conf, "[staggerd]\ndisk_collection_interval_secs = 1\n", -1, NULL));
  g_autofree gchar *conf_arg = g_strconcat ("--config=", conf, NULL);
  StgTestDaemon *d = stg_test_daemon_start (dir, conf_arg, PORT_RANGE, NULL);
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiJobConfiguration) job =
      stg_test_job_full ("www", "prod", "used", 2,
                         "{\"command\": \"head -c 3000000 /dev/zero > data; exec sleep 60\"}",
                         "http");
  /* stg_test_job_full's task reserves 0.25 cores. */
  g_hash_table_add (job->taskConfig->resources,
                    g_object_new (API_TYPE_RESOURCE, "ramMb", 64, NULL));
  g_hash_table_add (job->taskConfig->resources,
                    g_object_new (API_TYPE_RESOURCE, "diskMb", 32, NULL));
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  ck_assert (
      api_aurora_scheduler_manager_if_create_job (API_AURORA_SCHEDULER_MANAGER_IF (c->client), &r,
                                                  job, NULL));
  ck_assert_int_eq (r->responseCode, API_RESPONSE_CODE_OK);
  stg_rollout_wait_running (d, "used", 2, 1);

  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonObject *u = wait_usage (d, "used", parser);
  ck_assert_msg (u != NULL, "no disk sample of instance 0");
  ck_assert_double_eq_tol (json_object_get_double_member (u, "cpus"), 0.25, 1e-9);
  ck_assert_int_eq (json_object_get_int_member (u, "ram_bytes"), 64 << 20);
  ck_assert_int_eq (json_object_get_int_member (u, "disk_reserved_bytes"), 32 << 20);
  gint64 disk = json_object_get_int_member (u, "disk_bytes");
  ck_assert_msg (disk >= 3000000 && disk < (8 << 20), "disk %" G_GINT64_FORMAT, disk);
  gint64 memory = json_object_get_int_member (u, "memory_bytes");
  ck_assert_msg (memory > 0 && memory < (64 << 20), "memory %" G_GINT64_FORMAT, memory);
  /* Held to 0.25 cores, measured over 300 ms or more: never twice that. */
  gdouble cpus = json_object_get_double_member (u, "cpus_used");
  ck_assert_msg (cpus >= 0 && cpus < 0.5, "cpus %g", cpus);

  const gchar *const status[] = { "job", "status", "local/www/prod/used", NULL };
  g_autofree gchar *table = stg_test_cli (d, status);
  ck_assert_msg (strstr (table, "CPU") && strstr (table, "/0.25") && strstr (table, "/64M") &&
                     strstr (table, "3/32M"),
                 "%s", table);

  g_autofree gchar *metrics = NULL;
  ck_assert_uint_eq (stg_test_http_get (d->http_port, "/metrics", &metrics), 200);
  ck_assert_msg (strstr (metrics, "stagger_job_memory_reserved_bytes{job=\"www/prod/used\"} "
                                  "134217728\n") &&
                     strstr (metrics,
                             "stagger_job_cpu_reserved_cores{job=\"www/prod/used\"} 0.5\n") &&
                     strstr (metrics, "stagger_job_disk_bytes{job=\"www/prod/used\"} "),
                 "%s", metrics);
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
}
END_TEST

/* ---- port quota ------------------------------------------------------------------- */

static void
create_port_job (StgTestDaemon *d, const gchar *role, const gchar *name, gint32 instances)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiJobConfiguration) job = stg_test_job_full (role, "prod", name, instances,
                                                           "{\"command\": \"exec sleep 60\"}",
                                                           "http");
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (GError) error = NULL;

  ck_assert (
      api_aurora_scheduler_manager_if_create_job (API_AURORA_SCHEDULER_MANAGER_IF (c->client), &r,
                                                  job, &error));
  ck_assert_int_eq (r->responseCode, API_RESPONSE_CODE_OK);
}

/* The events of @role's tasks, one message per line. */
static gchar *
task_messages (StgTestDaemon *d, const gchar *role)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiTaskQuery) q = g_object_new (API_TYPE_TASK_QUERY, "role", role, NULL);
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (GString) out = g_string_new (NULL);

  ck_assert (api_read_only_scheduler_if_get_tasks_status (API_READ_ONLY_SCHEDULER_IF (c->client),
                                                          &r, q, NULL));
  GPtrArray *tasks = r->result->scheduleStatusResult->tasks;
  for (guint i = 0; i < tasks->len; i++)
    {
      ApiScheduledTask *t = tasks->pdata[i];
      for (guint j = 0; j < t->taskEvents->len; j++)
        {
          ApiTaskEvent *e = t->taskEvents->pdata[j];
          g_string_append_printf (out, "%s\n", e->message ? e->message : "");
        }
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

START_TEST (a_role_keeps_at_most_its_port_quota)
{
  g_autofree gchar *conf = g_build_filename (dir, "staggerd.conf", NULL);
  ck_assert (g_file_set_contents (conf, "[staggerd]\nmax_ports_per_role = 3\n", -1, NULL));
  g_autofree gchar *conf_arg = g_strconcat ("--config=", conf, NULL);
  StgTestDaemon *d = stg_test_daemon_start (dir, conf_arg, "--port-range=31900-31919", NULL);

  /* www may keep 3 ports: the fourth instance cannot start, and says why. */
  create_port_job (d, "www", "quota", 4);
  gchar *seen = NULL;
  for (gint i = 0; i < 300; i++)
    {
      g_free (seen);
      seen = task_messages (d, "www");
      if (strstr (seen, "quota") != NULL)
        break;
      g_usleep (100 * 1000);
    }
  ck_assert_msg (strstr (seen, "role www already keeps 3 ports, its quota (max_ports_per_role)") !=
                     NULL,
                 "no quota refusal in:\n%s", seen);
  g_free (seen);

  /* Another role still gets ports of the range. */
  create_port_job (d, "ops", "other", 2);
  for (gint i = 0; i < 300; i++)
    {
      seen = task_messages (d, "ops");
      gboolean both = g_strstr_len (seen, -1, "started") != NULL &&
                      strstr (strstr (seen, "started") + 1, "started") != NULL;
      gboolean refused = strstr (seen, "quota") != NULL;
      g_free (seen);
      ck_assert (!refused);
      if (both)
        break;
      ck_assert_msg (i < 299, "role ops never started both instances");
      g_usleep (100 * 1000);
    }
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
}
END_TEST

/* ---- paced starts ------------------------------------------------------------------ */

/* How many of @role's tasks are STARTING, and how many RUNNING. */
static void
count_statuses (StgTestDaemon *d, const gchar *role, gint *starting, gint *running)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiTaskQuery) q = g_object_new (API_TYPE_TASK_QUERY, "role", role, NULL);
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);

  ck_assert (api_read_only_scheduler_if_get_tasks_status (API_READ_ONLY_SCHEDULER_IF (c->client),
                                                          &r, q, NULL));
  GPtrArray *tasks = r->result->scheduleStatusResult->tasks;
  *starting = *running = 0;
  for (guint i = 0; i < tasks->len; i++)
    {
      ApiScheduledTask *t = tasks->pdata[i];
      *starting += t->status == API_SCHEDULE_STATUS_STARTING;
      *running += t->status == API_SCHEDULE_STATUS_RUNNING;
    }
}

START_TEST (no_more_than_the_cap_start_at_once)
{
  g_autofree gchar *conf = g_build_filename (dir, "staggerd.conf", NULL);
  ck_assert (g_file_set_contents (conf, "[staggerd]\nmax_concurrent_starts = 2\n", -1, NULL));
  g_autofree gchar *conf_arg = g_strconcat ("--config=", conf, NULL);
  StgTestDaemon *d = stg_test_daemon_start (dir, conf_arg, PORT_RANGE, NULL);
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  /* Each instance is healthy half a second after it starts. */
  g_autoptr (ApiJobConfiguration) job = stg_test_job_full (
      "www", "prod", "paced", 6,
      "{\"command\": \"sleep 0.5; touch ready; exec sleep 60\", \"health_check\": "
      "{\"shell\": {\"shell_command\": \"test -f ready\"}, \"interval_secs\": 0.1}}",
      NULL);
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  ck_assert (
      api_aurora_scheduler_manager_if_create_job (API_AURORA_SCHEDULER_MANAGER_IF (c->client), &r,
                                                  job, NULL));
  ck_assert_int_eq (r->responseCode, API_RESPONSE_CODE_OK);

  gint most = 0, starting = 0, running = 0;
  for (gint i = 0; i < 600 && running < 6; i++)
    {
      count_statuses (d, "www", &starting, &running);
      most = MAX (most, starting);
      g_usleep (20 * 1000);
    }
  ck_assert_int_eq (running, 6);
  ck_assert_msg (most <= 2, "%d instances were starting at once (the cap is 2)", most);
  ck_assert_msg (most >= 1, "no instance was ever seen starting");
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
}
END_TEST

/* ---- capacity kept with maxSurge ----------------------------------------------------- */

typedef struct
{
  StgTestDaemon *d;
  ApiJobUpdateKey *key;
  gint min_healthy; /* the fewest instances answering /health in one sample */
  guint max_listed; /* the most instances the job had in one sample */
  guint samples;
} Sampler;

/* One sample: how many of the job's instances answer their health check
 * now (asked by the test itself, on each instance's port); TRUE once the
 * update has ended. */
static gboolean
sample (gpointer data)
{
  Sampler *s = data;
  GArray *now = stg_rollout_instances (s->d, "web");
  gint healthy = 0;

  for (guint i = 0; i < now->len; i++)
    {
      gint port = g_array_index (now, StgRolloutInstance, i).port;
      if (port > 0 && stg_test_http_probe ((guint16) port, "/health") == 200)
        healthy++;
    }
  s->max_listed = MAX (s->max_listed, now->len);
  stg_rollout_instances_free (now);
  s->min_healthy = MIN (s->min_healthy, healthy);
  s->samples++;
  g_autoptr (ApiJobUpdateDetails) det = stg_rollout_details (s->d, s->key);
  return !stg_update_status_is_active (det->update->summary->state->status);
}

/* minInService equal to the instance count with maxSurge 1: a surge
 * instance (instance 3) comes up first, the job never has fewer than 3
 * healthy instances, and the surge instance is gone at the end. */
START_TEST (surge_keeps_full_capacity)
{
  StgTestDaemon *d = stg_test_daemon_start (dir, PORT_RANGE, NULL);
  g_autofree gchar *v1 = stg_rollout_server_data (NULL, NULL);
  stg_rollout_create_job (d, "web", 3, v1);
  stg_rollout_wait_running (d, "web", 3, 1);

  g_autofree gchar *v2 = stg_rollout_server_data (NULL, ", \"env\": {\"GREETING\": \"v2\"}");
  g_autoptr (ApiJobUpdateSettings) settings = stg_rollout_batch_settings (1, 300);
  g_object_set (settings, "minInService", 3, "maxSurge", 1, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiJobUpdateKey) key = stg_rollout_try_start_update_with (d, "web", 3, v2, settings,
                                                                       &error);
  ck_assert_msg (key != NULL, "startJobUpdate: %s", error ? error->message : "");

  Sampler s = { d, key, G_MAXINT, 0, 0 };
  ck_assert_msg (stg_test_wait (sample, &s, 90000), "the update did not end");
  g_autoptr (ApiJobUpdateDetails) det = stg_rollout_details (d, key);
  ck_assert_int_eq (det->update->summary->state->status, API_JOB_UPDATE_STATUS_ROLLED_FORWARD);
  ck_assert_msg (s.samples >= 10, "only %u samples", s.samples);
  ck_assert_msg (s.min_healthy >= 3, "only %d healthy instances in one of %u samples",
                 s.min_healthy, s.samples);
  ck_assert_uint_eq (s.max_listed, 4);

  /* Every instance runs the new config; the surge instance is gone. */
  stg_rollout_wait_running (d, "web", 3, 2);
  GArray *after = stg_rollout_instances (d, "web");
  ck_assert_uint_eq (after->len, 3);
  stg_rollout_instances_free (after);
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
  tcase_add_test (tc, a_role_keeps_at_most_its_port_quota);
  tcase_add_test (tc, no_more_than_the_cap_start_at_once);
  suite_add_tcase (s, tc);

  tc = tcase_create ("updates");
  tcase_set_timeout (tc, 180);
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, rolling_update_goes_batch_by_batch);
  tcase_add_test (tc, unhealthy_update_rolls_back);
  tcase_add_test (tc, disk_hog_update_rolls_back);
  if (geteuid () == 0)
    {
      tcase_add_test (tc, memory_hog_update_rolls_back);
      tcase_add_test (tc, usage_is_shown_against_reservations);
    }
  else
    g_print ("runtime_daemon_test: memory_hog_update_rolls_back and "
             "usage_is_shown_against_reservations skipped: limits need root\n");
  tcase_add_test (tc, surge_keeps_full_capacity);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  gchar *scope = stg_test_scope_begin ();
  SRunner *sr = srunner_create (runtime_daemon_suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  stg_test_scope_end (scope);
  return failed == 0 ? 0 : 1;
}
