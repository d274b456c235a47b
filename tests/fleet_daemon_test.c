/* fleet_daemon_test.c: staggerd with --runtime=fleet against three real
 * podman services (tests/podman_hosts.c): rolling updates across the hosts
 * under a host limit, a rollback in reverse order, adoption after kill -9,
 * and Aurora's jobs (AuroraExecutor) run by stagger-thermos's bundle in
 * containers, and a tightened host limit moving instances. Host ports
 * come from 16100-16999 (the tightened limit's from 19600-19649). Test
 * process, main thread.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "common/enums.h"
#include "fleet_fixture.h"
#include "podman_hosts.h"
#include "rollout.h"

#define IMAGE_V1 "localhost/stagger-test:1"
#define IMAGE_V2 "localhost/stagger-test:2"

typedef struct
{
  StgTestPodman *fleet;
  gchar *data_dir;
  gchar *conf;
} Env;

/* Three podman hosts with both images, and a config file naming them,
 * each [host] group with @host_conf's lines too. */
static Env *
env_with (const gchar *fleet_conf, const gchar *host_conf)
{
  Env *e = g_new0 (Env, 1);
  g_autoptr (GString) conf = g_string_new ("[fleet]\npoll_interval_ms = 200\ncall_timeout_secs = 120\n");
  g_autoptr (GError) error = NULL;

  g_string_append (conf, fleet_conf);
  e->fleet = stg_test_podman_start (3);
  stg_test_podman_import (e->fleet, IMAGE_V1, "1");
  stg_test_podman_import (e->fleet, IMAGE_V2, "2");
  for (guint i = 0; i < e->fleet->hosts->len; i++)
    {
      StgTestPodmanHost *h = e->fleet->hosts->pdata[i];
      g_string_append_printf (
          conf, "[host %s]\nendpoint = %s\naddress = 127.0.0.1\nattributes = zone=z%u\n%s", h->name,
          h->endpoint, i % 2, host_conf);
    }
  e->data_dir = stg_test_tmpdir ();
  e->conf = g_build_filename (e->data_dir, "staggerd.conf", NULL);
  ck_assert (g_file_set_contents (e->conf, conf->str, -1, &error));
  return e;
}

static Env *
env_new (const gchar *fleet_conf)
{
  return env_with (fleet_conf, "");
}

static void
env_free (Env *e)
{
  stg_test_podman_stop (e->fleet);
  stg_test_rmtree (e->data_dir);
  g_free (e->data_dir);
  g_free (e->conf);
  g_free (e);
}

static StgTestDaemon *
daemon_start (Env *e, const gchar *ports)
{
  g_autofree gchar *config = g_strconcat ("--config=", e->conf, NULL);
  g_autofree gchar *range = g_strconcat ("--port-range=", ports, NULL);

  g_autofree gchar *bundle = g_strconcat ("--thermos-bundle=", STG_BUILDDIR, "/thermos-bundle",
                                          NULL);

  return stg_test_daemon_start (e->data_dir, "--runtime=fleet", config, range, bundle, NULL);
}

/* Executor data: busybox httpd on the "http" port; @endpoint is what the
 * health check asks for (a missing file makes a failing version). */
static gchar *
web_data (const gchar *endpoint)
{
  return g_strdup_printf ("{\"argv\": [\"httpd\", \"-f\", \"-p\", \"{{ports[http]}}\", \"-h\", \"/www\"],"
                          " \"stop_timeout_secs\": 2,"
                          " \"health_check\": {\"http\": {\"endpoint\": \"%s\"}, \"timeout_secs\": 5,"
                          " \"initial_interval_secs\": 10, \"interval_secs\": 0.5}}", endpoint);
}

/* The same with a shell health check run inside the container. */
static gchar *
shell_data (const gchar *command)
{
  return g_strdup_printf ("{\"argv\": [\"httpd\", \"-f\", \"-p\", \"{{ports[http]}}\", \"-h\", \"/www\"],"
                          " \"stop_timeout_secs\": 2,"
                          " \"health_check\": {\"shell\": {\"shell_command\": \"%s\"}, \"timeout_secs\": 10,"
                          " \"initial_interval_secs\": 10, \"interval_secs\": 1}}", command);
}

/* The job www/prod/@name: @count instances of @image running executor
 * @executor with @data on its named port http, at most @per_host per host,
 * on the host's network. */
static ApiJobConfiguration *
container_job (const gchar *name, gint32 count, const gchar *image, const gchar *executor,
               const gchar *data, gint32 per_host)
{
  ApiJobConfiguration *job = stg_test_job_full ("www", "prod", name, count, data, "http");
  ApiTaskConfig *task = job->taskConfig;
  g_autoptr (ApiDockerParameter) net = g_object_new (API_TYPE_DOCKER_PARAMETER, "name", "network", "value", "host", NULL);
  g_autoptr (ApiDockerContainer) docker = g_object_new (API_TYPE_DOCKER_CONTAINER, "image", image, NULL);
  g_ptr_array_add (docker->parameters, g_object_ref (net));
  docker->__isset_parameters = TRUE;
  g_autoptr (ApiContainer) box = g_object_new (API_TYPE_CONTAINER, "docker", docker, NULL);
  g_object_set (task, "container", box, NULL);
  g_autoptr (ApiLimitConstraint) limit = g_object_new (API_TYPE_LIMIT_CONSTRAINT, "limit", per_host, NULL);
  g_autoptr (ApiTaskConstraint) tc = g_object_new (API_TYPE_TASK_CONSTRAINT, "limit", limit, NULL);
  g_hash_table_add (task->constraints, g_object_new (API_TYPE_CONSTRAINT, "name", "host", "constraint", tc, NULL));
  task->__isset_constraints = TRUE;
  g_object_set (task->executorConfig, "name", executor, NULL);
  return job;
}

/* The job www/prod/@name: @count instances of @image, at most @per_host
 * per host; @endpoint is an HTTP check's, or "sh:COMMAND" for a shell
 * check. */
static ApiJobConfiguration *
web_job (const gchar *name, gint32 count, const gchar *image, const gchar *endpoint,
         gint32 per_host)
{
  g_autofree gchar *data = g_str_has_prefix (endpoint, "sh:") ? shell_data (endpoint + 3)
                                                              : web_data (endpoint);
  return container_job (name, count, image, "stagger", data, per_host);
}

/* An Aurora job as the aurora client sends it (AuroraExecutor): a
 * SequentialTask that writes www/version (@version) and www/health, then
 * serves them with busybox httpd on port http; its health check asks
 * @endpoint on the port named health, an alias of http. */
static ApiJobConfiguration *
aurora_job (gint32 count, const gchar *image, const gchar *version, const gchar *endpoint)
{
  g_autofree gchar *data = g_strdup_printf (
      "{\"name\": \"aurora\", \"role\": \"www\", \"environment\": \"prod\","
      " \"cluster\": \"local\", \"service\": true,"
      " \"task\": {\"name\": \"aurora\", \"processes\": ["
      "{\"name\": \"setup\", \"cmdline\": \"mkdir -p www && echo ok > www/health"
      " && printf %%s %s > www/version\"},"
      "{\"name\": \"serve\", \"cmdline\": \"exec httpd -f -p {{thermos.ports[http]}} -h www\"}],"
      " \"constraints\": [{\"order\": [\"setup\", \"serve\"]}],"
      " \"resources\": {\"cpu\": 0.25, \"ram\": 16777216, \"disk\": 16777216},"
      " \"finalization_wait\": 5},"
      " \"announce\": {\"primary_port\": \"http\", \"portmap\": {\"health\": \"http\"}},"
      " \"health_check_config\": {\"health_checker\": {\"http\": {\"endpoint\": \"%s\"}},"
      " \"initial_interval_secs\": 5, \"interval_secs\": 0.5, \"timeout_secs\": 5}}",
      version, endpoint);
  return container_job ("aurora", count, image, "AuroraExecutor", data, 1);
}

static void
create_job (StgTestDaemon *d, ApiJobConfiguration *job)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (GError) error = NULL;

  ck_assert (api_aurora_scheduler_manager_if_create_job (API_AURORA_SCHEDULER_MANAGER_IF (c->client), &r, job,
                                                         &error));
  ck_assert_msg (r->responseCode == API_RESPONSE_CODE_OK, "createJob: %s",
                 r->details && r->details->len ? ((ApiResponseDetail *) r->details->pdata[0])->message : "");
}

/* Starts an update of @job, @batch at a time, @watch_ms of watch, each
 * instance allowed @per_instance failures, none failed in all. */
static ApiJobUpdateKey *
start_update_allowing (StgTestDaemon *d, ApiJobConfiguration *job, gint32 batch, gint32 watch_ms,
                       gint32 per_instance)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiBatchJobUpdateStrategy) bs = g_object_new (API_TYPE_BATCH_JOB_UPDATE_STRATEGY, "groupSize", batch, NULL);
  g_autoptr (ApiJobUpdateStrategy) strategy = g_object_new (API_TYPE_JOB_UPDATE_STRATEGY, "batchStrategy", bs, NULL);
  g_autoptr (ApiJobUpdateSettings) settings = g_object_new (API_TYPE_JOB_UPDATE_SETTINGS,
                                                            "updateGroupSize", batch,
                                                            "minWaitInInstanceRunningMs", watch_ms,
                                                            "rollbackOnFailure", TRUE,
                                                            "maxPerInstanceFailures", per_instance,
                                                            "maxFailedInstances", 0,
                                                            "updateStrategy", strategy, NULL);
  g_autoptr (ApiJobUpdateRequest) request = g_object_new (API_TYPE_JOB_UPDATE_REQUEST,
      "taskConfig", job->taskConfig, "instanceCount", job->instanceCount, "settings", settings, NULL);
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (GError) error = NULL;

  ck_assert (api_aurora_scheduler_manager_if_start_job_update (API_AURORA_SCHEDULER_MANAGER_IF (c->client), &r,
                                                               request, "test", &error));
  ck_assert_msg (r->responseCode == API_RESPONSE_CODE_OK, "startJobUpdate: %s",
                 r->details && r->details->len ? ((ApiResponseDetail *) r->details->pdata[0])->message : "");
  return g_object_ref (r->result->startJobUpdateResult->key);
}

static ApiJobUpdateKey *
start_update (StgTestDaemon *d, ApiJobConfiguration *job, gint32 batch, gint32 watch_ms)
{
  return start_update_allowing (d, job, batch, watch_ms, 0);
}

/* The running containers of every host (of job www/prod/@job, or of any),
 * one line each: "HOST ID INSTANCE IMAGE". */
static GPtrArray *
containers_of (Env *e, const gchar *job)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);
  g_autofree gchar *label = job ? g_strdup_printf ("label=org.stagger.job=www/prod/%s", job)
                                : g_strdup ("label=org.stagger.job");

  for (guint i = 0; i < e->fleet->hosts->len; i++)
    {
      StgTestPodmanHost *h = e->fleet->hosts->pdata[i];
      g_autofree gchar *ps =
          stg_test_podman_cli (e->fleet, h, "ps", "--all", "--filter", label, "--format",
                               "{{.ID}} {{index .Labels \"org.stagger.instance\"}} {{.Image}}",
                               "--filter", "status=running", NULL);
      g_auto (GStrv) lines = g_strsplit (ps, "\n", -1);
      for (guint j = 0; lines[j] != NULL; j++)
        if (lines[j][0] != '\0')
          g_ptr_array_add (out, g_strdup_printf ("%s %s", h->name, lines[j]));
    }
  return out;
}

static GPtrArray *
containers (Env *e)
{
  return containers_of (e, NULL);
}

static gchar *
joined (GPtrArray *list)
{
  g_ptr_array_add (list, NULL);
  gchar *text = g_strjoinv ("\n", (gchar **) list->pdata);
  g_ptr_array_remove_index (list, list->len - 1);
  return text;
}

static guint
count_on (GPtrArray *list, const gchar *host, const gchar *image)
{
  guint n = 0;

  for (guint i = 0; i < list->len; i++)
    {
      g_auto (GStrv) f = g_strsplit (list->pdata[i], " ", 5);
      n += (host == NULL || g_str_equal (f[0], host)) && (image == NULL || g_str_equal (f[3], image));
    }
  return n;
}

/* Every instance's port serves /version @version. */
static void
assert_versions (StgTestDaemon *d, const gchar *name, gint count, const gchar *version)
{
  GArray *a = stg_rollout_instances (d, name);

  ck_assert_int_eq ((gint) a->len, count);
  for (guint i = 0; i < a->len; i++)
    {
      StgRolloutInstance *in = &g_array_index (a, StgRolloutInstance, i);
      ck_assert_msg (in->port >= 16100 && in->port <= 16999, "instance %u has port %d", i, in->port);
      g_autofree gchar *body = NULL;
      ck_assert_uint_eq (stg_test_http_get ((guint16) in->port, "/version", &body), 200);
      ck_assert_msg (g_str_equal (body, version), "instance %u serves version %s, not %s", i, body, version);
    }
  stg_rollout_instances_free (a);
}

/* Waits (10 min at most: podman is slow on a busy machine) for the update
 * to end as @status; otherwise fails with its messages. */
static void
expect_terminal (StgTestDaemon *d, ApiJobUpdateKey *key, gint status)
{
  gint got = stg_rollout_wait_terminal_for (d, key, 600000);
  g_autoptr (ApiJobUpdateDetails) det = stg_rollout_details (d, key);
  g_autoptr (GString) why = g_string_new (NULL);

  for (guint i = 0; i < det->updateEvents->len; i++)
    {
      ApiJobUpdateEvent *ev = det->updateEvents->pdata[i];
      g_string_append_printf (why, "\n  %s: %s", stg_update_status_name (ev->status), ev->message ? ev->message : "");
    }
  for (guint i = 0; i < det->instanceEvents->len; i++)
    {
      ApiJobInstanceUpdateEvent *ev = det->instanceEvents->pdata[i];
      if (ev->message != NULL)
        g_string_append_printf (why, "\n  instance %d: %s", ev->instanceId, ev->message);
    }
  if (got != status)
    {
      g_autofree gchar *tasks = stg_fleet_task_messages (d, key->job->name);
      ck_assert_msg (FALSE, "the update ended %s, not %s:%s\n tasks:\n%s",
                     stg_update_status_name (got), stg_update_status_name (status), why->str,
                     tasks);
    }
}

typedef struct
{
  StgTestDaemon *d;
  const gchar *name;
  gint count; /* 0: any, at least one */
  const gchar *status;
} Want;

/* Whether @w->name has its instances (@w->count of them), all @w->status. */
static gboolean
all_in (gpointer data)
{
  Want *w = data;
  GArray *a = stg_rollout_instances (w->d, w->name);
  gboolean ok = w->count > 0 ? (gint) a->len == w->count : a->len > 0;

  for (guint i = 0; ok && i < a->len; i++)
    ok = g_str_equal (g_array_index (a, StgRolloutInstance, i).status, w->status);
  stg_rollout_instances_free (a);
  if (!ok)
    g_usleep (100000);
  return ok;
}

static void
wait_running (StgTestDaemon *d, const gchar *name, gint count)
{
  Want w = { d, name, count, "RUNNING" };
  ck_assert_msg (stg_test_wait (all_in, &w, 400000), "the %d instances of %s never all ran", count,
                 name);
}

/* #15 "Done means" 1 and 2: 30 instances over 3 hosts, at most 10 per
 * host, roll to a new image in batches of 5; a failing version then rolls
 * back in reverse order, and the old containers' config runs afterwards. */
START_TEST (fleet_rolls_thirty_instances_across_three_hosts)
{
  Env *e = env_new ("lost_after_secs = 600\n");
  StgTestDaemon *d = daemon_start (e, "16100-16499");
  g_autoptr (ApiJobConfiguration) v1 = web_job ("web", 30, IMAGE_V1, "/health", 10);
  g_autoptr (ApiJobConfiguration) v2 = web_job ("web", 30, IMAGE_V2, "/health", 10);
  g_autoptr (ApiJobConfiguration) broken = web_job ("web", 30, IMAGE_V1, "/no-such-file", 10);

  create_job (d, v1);
  wait_running (d, "web", 30);
  g_autoptr (GPtrArray) first = containers (e);
  g_autofree gchar *first_text = joined (first);
  ck_assert_msg (first->len == 30, "%u containers:\n%s", first->len, first_text);
  for (guint i = 0; i < 3; i++)
    ck_assert_uint_eq (count_on (first, ((StgTestPodmanHost *) e->fleet->hosts->pdata[i])->name, IMAGE_V1), 10);
  assert_versions (d, "web", 30, "1");
  /* Each container is held to the task's 0.25 cores and to max_pids
   * processes (its default, 4096). */
  g_auto (GStrv) one = g_strsplit (first->pdata[0], " ", -1);
  StgTestPodmanHost *host = NULL;
  for (guint i = 0; i < e->fleet->hosts->len; i++)
    if (g_str_equal (((StgTestPodmanHost *) e->fleet->hosts->pdata[i])->name, one[0]))
      host = e->fleet->hosts->pdata[i];
  ck_assert_ptr_nonnull (host);
  g_autofree gchar *limits =
      stg_test_podman_cli (e->fleet, host, "inspect", "--format",
                           "{{.HostConfig.PidsLimit}} {{.HostConfig.NanoCpus}}", one[1], NULL);
  ck_assert_msg (g_str_has_prefix (limits, "4096 250000000"), "limits: %s", limits);

  g_autoptr (ApiJobUpdateKey) k2 = start_update (d, v2, 5, 500);
  expect_terminal (d, k2, API_JOB_UPDATE_STATUS_ROLLED_FORWARD);
  g_autoptr (GPtrArray) second = containers (e);
  ck_assert_uint_eq (second->len, 30);
  for (guint i = 0; i < 3; i++)
    ck_assert_uint_eq (count_on (second, ((StgTestPodmanHost *) e->fleet->hosts->pdata[i])->name, IMAGE_V2), 10);
  assert_versions (d, "web", 30, "2");

  g_autoptr (ApiJobUpdateKey) k3 = start_update (d, broken, 5, 500);
  expect_terminal (d, k3, API_JOB_UPDATE_STATUS_ROLLED_BACK);
  g_autoptr (ApiJobUpdateDetails) det = stg_rollout_details (d, k3);
  gint64 first0, last0, first4, last4;
  stg_rollout_action_times (det, 0, API_JOB_UPDATE_ACTION_INSTANCE_ROLLING_BACK, &first0, &last0);
  stg_rollout_action_times (det, 4, API_JOB_UPDATE_ACTION_INSTANCE_ROLLING_BACK, &first4, &last4);
  ck_assert_msg (first0 >= 0 && first4 >= 0 && first4 <= first0, "rolled back 0 at %" G_GINT64_FORMAT
                 ", 4 at %" G_GINT64_FORMAT, first0, first4);
  wait_running (d, "web", 30);
  g_autoptr (GPtrArray) third = containers (e);
  ck_assert_uint_eq (third->len, 30);
  ck_assert_uint_eq (count_on (third, NULL, IMAGE_V2), 30);
  assert_versions (d, "web", 30, "2");
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
  env_free (e);
}
END_TEST

static gboolean
some_updated (gpointer data)
{
  Env *e = data;
  g_autoptr (GPtrArray) list = containers (e);
  guint n = count_on (list, NULL, IMAGE_V2);

  if (n < 3)
    g_usleep (100000);
  return n >= 3;
}

/* #15 "Done means" 3: kill -9 staggerd mid-update; the next one adopts
 * every container (none restarted, none doubled) and finishes the update. */
START_TEST (fleet_adopts_containers_after_kill9_mid_update)
{
  Env *e = env_new ("lost_after_secs = 600\n");
  StgTestDaemon *d = daemon_start (e, "16500-16999");
  g_autoptr (ApiJobConfiguration) v1 = web_job ("api", 12, IMAGE_V1, "/health", 4);
  g_autoptr (ApiJobConfiguration) v2 = web_job ("api", 12, IMAGE_V2, "/health", 4);

  create_job (d, v1);
  wait_running (d, "api", 12);
  GArray *up = stg_rollout_instances (d, "api");
  g_autoptr (ApiJobUpdateKey) key = start_update (d, v2, 3, 3000);
  ck_assert (stg_test_wait (some_updated, e, 60000));
  stg_test_daemon_kill9 (d);
  stg_test_daemon_free (d);
  g_autoptr (GPtrArray) before = containers (e);

  d = daemon_start (e, "16500-16999");
  /* The instances the update had not reached yet keep the time they
   * became healthy: UP does not start again at the adoption (#31). */
  GArray *adopted = stg_rollout_instances (d, "api");
  for (guint i = 9; i < 12; i++)
    {
      StgRolloutInstance *b = &g_array_index (up, StgRolloutInstance, i);
      StgRolloutInstance *a = &g_array_index (adopted, StgRolloutInstance, i);
      ck_assert_msg (a->started_ms == 0 || a->started_ms == b->started_ms,
                     "instance %u: up since %" G_GINT64_FORMAT ", then %" G_GINT64_FORMAT, i,
                     b->started_ms, a->started_ms);
    }
  stg_rollout_instances_free (up);
  stg_rollout_instances_free (adopted);
  expect_terminal (d, key, API_JOB_UPDATE_STATUS_ROLLED_FORWARD);
  g_autoptr (GPtrArray) after = containers (e);
  ck_assert_uint_eq (after->len, 12);
  ck_assert_uint_eq (count_on (after, NULL, IMAGE_V2), 12);
  for (guint i = 0; i < 3; i++)
    ck_assert_uint_eq (count_on (after, ((StgTestPodmanHost *) e->fleet->hosts->pdata[i])->name, NULL), 4);
  /* Every v2 container running at the kill is still there, the same one. */
  for (guint i = 0; i < before->len; i++)
    if (g_str_has_suffix (before->pdata[i], IMAGE_V2))
      {
        gboolean kept = FALSE;
        for (guint j = 0; j < after->len && !kept; j++)
          kept = g_str_equal (before->pdata[i], after->pdata[j]);
        ck_assert_msg (kept, "container \"%s\" was not kept", (gchar *) before->pdata[i]);
      }
  assert_versions (d, "api", 12, "2");
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
  env_free (e);
}
END_TEST

/* Shell health checks run inside the containers: a command that passes
 * there lets the job run, one that fails rolls the update back. */
START_TEST (fleet_runs_shell_checks_inside_containers)
{
  Env *e = env_new ("lost_after_secs = 600\n");
  StgTestDaemon *d = daemon_start (e, "16100-16499");
  g_autoptr (ApiJobConfiguration) good = web_job ("sh", 3, IMAGE_V1, "sh:test -f /www/health", 1);
  g_autoptr (ApiJobConfiguration) bad = web_job ("sh", 3, IMAGE_V2, "sh:test -f /www/nope", 1);

  create_job (d, good);
  wait_running (d, "sh", 3);
  g_autoptr (ApiJobUpdateKey) key = start_update (d, bad, 3, 500);
  expect_terminal (d, key, API_JOB_UPDATE_STATUS_ROLLED_BACK);
  wait_running (d, "sh", 3);
  assert_versions (d, "sh", 3, "1");
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
  env_free (e);
}
END_TEST

/* Aurora's jobs in containers: stagger-thermos's bundle, mounted
 * read-only into the image (busybox: no bash, no libraries), runs the
 * task; its health check goes to the port named health, an alias; an
 * update rolls forward and one whose check fails rolls back. */
START_TEST (fleet_runs_aurora_tasks_in_containers)
{
  Env *e = env_new ("lost_after_secs = 600\n");
  StgTestDaemon *d = daemon_start (e, "16500-16599");
  g_autoptr (ApiJobConfiguration) v1 = aurora_job (2, IMAGE_V1, "a1", "/health");
  g_autoptr (ApiJobConfiguration) v2 = aurora_job (2, IMAGE_V1, "a2", "/health");
  g_autoptr (ApiJobConfiguration) broken = aurora_job (2, IMAGE_V2, "a3", "/no-such-file");

  create_job (d, v1);
  wait_running (d, "aurora", 2);
  assert_versions (d, "aurora", 2, "a1");
  g_autoptr (GPtrArray) first = containers_of (e, "aurora");
  ck_assert_uint_eq (first->len, 2);
  g_autoptr (ApiJobUpdateKey) k2 = start_update (d, v2, 1, 500);
  expect_terminal (d, k2, API_JOB_UPDATE_STATUS_ROLLED_FORWARD);
  assert_versions (d, "aurora", 2, "a2");
  g_autoptr (ApiJobUpdateKey) k3 = start_update (d, broken, 1, 500);
  expect_terminal (d, k3, API_JOB_UPDATE_STATUS_ROLLED_BACK);
  wait_running (d, "aurora", 2);
  assert_versions (d, "aurora", 2, "a2");
  g_autoptr (GPtrArray) last = containers_of (e, "aurora");
  ck_assert_uint_eq (count_on (last, NULL, IMAGE_V1), 2);
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
  env_free (e);
}
END_TEST

typedef struct
{
  Env *e;
  StgTestDaemon *d;
} Lost;

/* Six instances run again, three on each of host0 and host1. */
static gboolean
replaced_elsewhere (gpointer data)
{
  Lost *l = data;
  Want w = { l->d, "lost", 6, "RUNNING" };
  g_autoptr (GPtrArray) list = NULL;

  if (!all_in (&w))
    return FALSE;
  list = containers (l->e);
  gboolean ok = count_on (list, "host0", NULL) == 3 && count_on (list, "host1", NULL) == 3;
  if (!ok)
    g_usleep (200000);
  return ok;
}

static gboolean
host2_empty (gpointer data)
{
  Env *e = data;
  g_autofree gchar *ps = stg_test_podman_cli (e->fleet, e->fleet->hosts->pdata[2], "ps", "--all", "--quiet",
                                              "--filter", "label=org.stagger.job", NULL);
  gboolean empty = g_strstrip (ps)[0] == '\0';

  if (!empty)
    g_usleep (200000);
  return empty;
}

/* #15: a host whose engine stops answering: after the grace period its
 * instances are LOST (counted as failures) and placed on the other hosts;
 * when it answers again, what it still holds of ours is removed. */
START_TEST (fleet_replaces_instances_of_a_lost_host)
{
  Env *e = env_new ("lost_after_secs = 3\n");
  StgTestDaemon *d = daemon_start (e, "16100-16499");
  g_autoptr (ApiJobConfiguration) job = web_job ("lost", 6, IMAGE_V1, "/health", 3);
  StgTestPodmanHost *h2 = e->fleet->hosts->pdata[2];

  create_job (d, job);
  wait_running (d, "lost", 6);
  g_autoptr (GPtrArray) before = containers (e);
  ck_assert_uint_eq (count_on (before, "host2", NULL), 2);
  /* The machine goes away: its engine first, then its containers. */
  stg_test_podman_host_down (h2);
  g_free (stg_test_podman_cli (e->fleet, h2, "kill", "--all", NULL));
  Lost l = { e, d };
  ck_assert_msg (stg_test_wait (replaced_elsewhere, &l, 400000), "host2's instances were not placed elsewhere");
  GArray *a = stg_rollout_instances (d, "lost");
  guint failed = 0;
  for (guint i = 0; i < a->len; i++)
    failed += g_array_index (a, StgRolloutInstance, i).failures >= 1;
  stg_rollout_instances_free (a);
  ck_assert_uint_ge (failed, 2);
  assert_versions (d, "lost", 6, "1");
  stg_test_podman_host_up (e->fleet, h2);
  ck_assert_msg (stg_test_wait (host2_empty, e, 120000), "host2 still holds the lost containers");
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
  env_free (e);
}
END_TEST

/* Of @name's instances, how many failed at least once. */
static guint
failed_once (StgTestDaemon *d, const gchar *name)
{
  GArray *a = stg_rollout_instances (d, name);
  guint n = 0;

  for (guint i = 0; i < a->len; i++)
    n += g_array_index (a, StgRolloutInstance, i).failures >= 1;
  stg_rollout_instances_free (a);
  return n;
}

/* The job's containers are @image, six of them, none on host2. */
static void
assert_moved (Env *e, const gchar *job, const gchar *image)
{
  g_autoptr (GPtrArray) list = containers_of (e, job);
  g_autofree gchar *listing = joined (list);

  ck_assert_msg (list->len == 6 && count_on (list, NULL, image) == 6 &&
                     count_on (list, "host2", NULL) == 0,
                 "%s:\n%s", job, listing);
}

/* #15: a host's engine stops in the middle of updates. After the grace
 * period its instances are LOST, which an update counts as a failure of
 * each (Aurora's rule): an update that allows none stops and rolls back
 * (or ends FAILED, when a lost instance fails again during its rollback,
 * as Aurora's updater does), one that allows one per instance retries
 * them on the other hosts and rolls forward. Every instance runs again off
 * the lost host, which, back, is emptied of what it held. */
START_TEST (fleet_updates_count_a_lost_host)
{
  Env *e = env_new ("lost_after_secs = 3\n");
  StgTestDaemon *d = daemon_start (e, "16100-16499");
  g_autoptr (ApiJobConfiguration) strict1 = web_job ("strict", 6, IMAGE_V1, "/health", 3);
  g_autoptr (ApiJobConfiguration) strict2 = web_job ("strict", 6, IMAGE_V2, "/health", 3);
  g_autoptr (ApiJobConfiguration) lenient1 = web_job ("lenient", 6, IMAGE_V1, "/health", 3);
  g_autoptr (ApiJobConfiguration) lenient2 = web_job ("lenient", 6, IMAGE_V2, "/health", 3);
  StgTestPodmanHost *h2 = e->fleet->hosts->pdata[2];

  create_job (d, strict1);
  create_job (d, lenient1);
  wait_running (d, "strict", 6);
  wait_running (d, "lenient", 6);
  g_autoptr (ApiJobUpdateKey) strict = start_update_allowing (d, strict2, 6, 3000, 0);
  g_autoptr (ApiJobUpdateKey) lenient = start_update_allowing (d, lenient2, 6, 3000, 1);
  stg_test_podman_host_down (h2);
  g_free (stg_test_podman_cli (e->fleet, h2, "kill", "--all", NULL));

  gint ended = stg_rollout_wait_terminal_for (d, strict, 600000);
  ck_assert_msg (ended == API_JOB_UPDATE_STATUS_ROLLED_BACK ||
                     ended == API_JOB_UPDATE_STATUS_FAILED,
                 "the strict update ended %s", stg_update_status_name (ended));
  expect_terminal (d, lenient, API_JOB_UPDATE_STATUS_ROLLED_FORWARD);
  if (ended == API_JOB_UPDATE_STATUS_ROLLED_BACK)
    {
      assert_moved (e, "strict", IMAGE_V1);
      assert_versions (d, "strict", 6, "1");
    }
  else
    {
      wait_running (d, "strict", 6);
      g_autoptr (GPtrArray) list = containers_of (e, "strict");
      ck_assert_uint_eq (list->len, 6);
      ck_assert_uint_eq (count_on (list, "host2", NULL), 0);
    }
  assert_moved (e, "lenient", IMAGE_V2);
  assert_versions (d, "lenient", 6, "2");
  ck_assert_uint_eq (failed_once (d, "strict"), 2);
  ck_assert_uint_eq (failed_once (d, "lenient"), 2);
  stg_test_podman_host_up (e->fleet, h2);
  ck_assert_msg (stg_test_wait (host2_empty, e, 120000), "host2 still holds the lost containers");
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
  env_free (e);
}
END_TEST

/* The job www/prod/@name: @count non-service instances of the first image
 * running sh -c @script, no health check. */
static ApiJobConfiguration *
batch_job (const gchar *name, gint32 count, const gchar *script)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "argv");
  json_builder_begin_array (b);
  json_builder_add_string_value (b, "sh");
  json_builder_add_string_value (b, "-c");
  json_builder_add_string_value (b, script);
  json_builder_end_array (b);
  json_builder_end_object (b);
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  g_autofree gchar *data = json_to_string (root, FALSE);
  ApiJobConfiguration *job = web_job (name, count, IMAGE_V1, "/health", 3);

  g_object_set (job->taskConfig->executorConfig, "data", data, NULL);
  job->taskConfig->isService = FALSE;
  return job;
}

/* The failure count of job @name's one instance, or 0. */
static gint
instance_failures (StgTestDaemon *d, const gchar *name)
{
  GArray *a = stg_rollout_instances (d, name);
  gint failures = a->len == 1 ? g_array_index (a, StgRolloutInstance, 0).failures : 0;

  stg_rollout_instances_free (a);
  return failures;
}

/* #15: a task that is not a service and whose container exits 0 has
 * FINISHED: it is not restarted and its container is removed. One that
 * exits with another status FAILED, and runs no more than maxTaskFailures
 * allows. */
START_TEST (fleet_batch_tasks_finish)
{
  Env *e = env_new ("");
  StgTestDaemon *d = daemon_start (e, "16100-16499");
  g_autoptr (ApiJobConfiguration) done = batch_job ("done", 2, "sleep 1; exit 0");
  g_autoptr (ApiJobConfiguration) bad = batch_job ("bad", 1, "sleep 1; exit 3");

  create_job (d, done);
  create_job (d, bad);
  Want finished = { d, "done", 2, "FINISHED" };
  ck_assert_msg (stg_test_wait (all_in, &finished, 120000), "the tasks never FINISHED");
  g_usleep (3 * G_USEC_PER_SEC); /* time enough to be restarted, were it wrong */
  ck_assert_msg (all_in (&finished), "a finished task changed state");
  if (failed_once (d, "done") != 0)
    {
      g_autofree gchar *page = NULL, *p0 = NULL, *p1 = NULL;
      stg_test_http_get (d->http_port,
                         "/ui/api/instance?role=www&environment=prod&name=done&instance=0", &p0);
      stg_test_http_get (d->http_port,
                         "/ui/api/instance?role=www&environment=prod&name=done&instance=1", &p1);
      page = g_strconcat (p0, "\n", p1, NULL);
      ck_abort_msg ("a finished task was counted as failed: %s", page);
    }
  /* Their containers are gone, not only stopped. */
  for (guint i = 0; i < e->fleet->hosts->len; i++)
    {
      g_autofree gchar *ps = stg_test_podman_cli (e->fleet, e->fleet->hosts->pdata[i], "ps",
                                                  "--all", "--filter",
                                                  "label=org.stagger.job=www/prod/done", "--format",
                                                  "{{.ID}}", NULL);
      ck_assert_msg (g_strstrip (ps)[0] == '\0', "left behind: %s", ps);
    }
  /* The failing one fails once and is not started again: maxTaskFailures
   * (unset: one run, as Aurora's default of 1) counts runs, as in Aurora's
   * scheduler. */
  gint64 deadline = g_get_monotonic_time () + 120 * G_USEC_PER_SEC;
  gint failures = 0;
  while (failures < 1 && g_get_monotonic_time () < deadline)
    {
      failures = instance_failures (d, "bad");
      g_usleep (200 * 1000);
    }
  ck_assert_int_eq (failures, 1);
  g_usleep (4 * G_USEC_PER_SEC); /* time enough to be started again, were it wrong */
  ck_assert_int_eq (instance_failures (d, "bad"), 1);
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
  env_free (e);
}
END_TEST

/* @job with hooks @pre and @post (NULL: none) in its executor data. */
static void
set_hooks (ApiJobConfiguration *job, const gchar *pre, const gchar *post)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  ck_assert (json_parser_load_from_data (parser, job->taskConfig->executorConfig->data, -1, NULL));
  JsonObject *o = json_node_get_object (json_parser_get_root (parser));
  JsonObject *hooks = json_object_new ();

  if (pre != NULL)
    json_object_set_string_member (hooks, "pre_update", pre);
  if (post != NULL)
    json_object_set_string_member (hooks, "post_update", post);
  json_object_set_object_member (o, "hooks", hooks);
  g_autofree gchar *data = json_to_string (json_parser_get_root (parser), FALSE);
  g_object_set (job->taskConfig->executorConfig, "data", data, NULL);
}

/* The update's instance event messages, one per line. */
static gchar *
instance_messages (StgTestDaemon *d, ApiJobUpdateKey *key)
{
  g_autoptr (ApiJobUpdateDetails) det = stg_rollout_details (d, key);
  g_autoptr (GString) out = g_string_new (NULL);

  for (guint i = 0; i < det->instanceEvents->len; i++)
    {
      ApiJobInstanceUpdateEvent *ev = det->instanceEvents->pdata[i];
      if (ev->message != NULL)
        g_string_append_printf (out, "%d %s\n", ev->instanceId, ev->message);
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* #15: update hooks run inside the containers (exec): pre_update in the
 * one about to be replaced, post_update in the new one once healthy.
 * Passing hooks let the update through; a failing pre_update leaves the
 * old container running (the very same one) and rolls the update back; a
 * failing post_update fails the new container and rolls back too. */
START_TEST (fleet_runs_update_hooks_in_containers)
{
  Env *e = env_new ("");
  StgTestDaemon *d = daemon_start (e, "16100-16499");
  g_autoptr (ApiJobConfiguration) v1 = web_job ("hooked", 3, IMAGE_V1, "/health", 1);
  g_autoptr (ApiJobConfiguration) v2 = web_job ("hooked", 3, IMAGE_V2, "/health", 1);
  g_autoptr (ApiJobConfiguration) v3 = web_job ("hooked", 3, IMAGE_V1, "/health", 1);
  g_autoptr (ApiJobConfiguration) v4 = web_job ("hooked", 3, IMAGE_V1, "/health", 1);

  set_hooks (v2, "test -f /www/health", "test -f /www/health && test $PORT_HTTP -gt 0");
  set_hooks (v3, "exit 5", NULL);
  set_hooks (v4, NULL, "exit 7");
  create_job (d, v1);
  wait_running (d, "hooked", 3);
  g_autoptr (ApiJobUpdateKey) good = start_update (d, v2, 3, 1000);
  expect_terminal (d, good, API_JOB_UPDATE_STATUS_ROLLED_FORWARD);
  assert_versions (d, "hooked", 3, "2");

  g_autoptr (GPtrArray) before = containers_of (e, "hooked");
  g_autofree gchar *before_text = joined (before);
  g_autoptr (ApiJobUpdateKey) pre = start_update (d, v3, 1, 1000);
  expect_terminal (d, pre, API_JOB_UPDATE_STATUS_ROLLED_BACK);
  g_autofree gchar *pre_events = instance_messages (d, pre);
  ck_assert_msg (strstr (pre_events, "pre_update hook exited with status 5") != NULL, "%s",
                 pre_events);
  g_autoptr (GPtrArray) after = containers_of (e, "hooked");
  g_autofree gchar *after_text = joined (after);
  ck_assert_msg (g_str_equal (before_text, after_text), "the containers changed:\n%s\nto\n%s",
                 before_text, after_text);

  g_autoptr (ApiJobUpdateKey) post = start_update (d, v4, 1, 1000);
  expect_terminal (d, post, API_JOB_UPDATE_STATUS_ROLLED_BACK);
  g_autofree gchar *post_events = instance_messages (d, post);
  ck_assert_msg (strstr (post_events, "post_update hook exited with status 7") != NULL, "%s",
                 post_events);
  assert_versions (d, "hooked", 3, "2");
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
  env_free (e);
}
END_TEST

/* How many of @name's instances run now. */
static gint
running_now (StgTestDaemon *d, const gchar *name)
{
  GArray *a = stg_rollout_instances (d, name);
  gint n = 0;

  for (guint i = 0; i < a->len; i++)
    n += g_str_equal (g_array_index (a, StgRolloutInstance, i).status, "RUNNING");
  stg_rollout_instances_free (a);
  return n;
}

/* The same with up to three words (the first NULL ends them). */
static gchar *
cli (StgTestDaemon *d, const gchar *a1, const gchar *a2, const gchar *a3)
{
  const gchar *const args[] = { a1, a2, a3, NULL };
  return stg_test_cli (d, args);
}

/* #15: `stagger host drain` moves a host's instances off it a batch at a
 * time, never below the job's floor in service, and the host stays
 * drained (shown so by `stagger hosts`) until `host undrain`. */
START_TEST (fleet_drains_a_host)
{
  Env *e = env_new ("");
  StgTestDaemon *d = daemon_start (e, "16100-16499");
  g_autoptr (ApiJobConfiguration) job = web_job ("drain", 6, IMAGE_V1, "/health", 3);
  g_autoptr (GError) error = NULL;

  create_job (d, job);
  wait_running (d, "drain", 6);
  g_autoptr (GPtrArray) before = containers (e);
  ck_assert_uint_eq (count_on (before, "host1", NULL), 2);

  g_autofree gchar *prog = stg_test_program ("stagger");
  g_autofree gchar *url = g_strdup_printf ("http://127.0.0.1:%u", d->http_port);
  g_autoptr (GSubprocess) drain =
      g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_MERGE, &error,
                        prog, "--url", url, "host", "drain", "local/host1", "--batch-size", "1",
                        "--watch-secs", "1", "--min-in-service", "5", "--wait", NULL);
  ck_assert_msg (drain != NULL, "%s", error ? error->message : "");
  gint fewest = 6;
  gint64 deadline = g_get_monotonic_time () + 600 * G_USEC_PER_SEC;
  /* Sampled until the CLI (which follows each move) exits: the process is
   * reaped by GLib's worker thread, which clears its identifier. */
  for (; g_get_monotonic_time () < deadline; g_usleep (200 * 1000))
    {
      fewest = MIN (fewest, running_now (d, "drain"));
      if (g_subprocess_get_identifier (drain) == NULL)
        break;
    }
  g_autofree gchar *out = NULL;
  ck_assert (g_subprocess_communicate_utf8 (drain, NULL, NULL, &out, NULL, &error));
  ck_assert_msg (g_subprocess_get_if_exited (drain) && g_subprocess_get_exit_status (drain) == 0,
                 "host drain failed:\n%s", out);
  ck_assert_msg (fewest >= 5, "only %d instances ran at one point (floor 5)", fewest);

  g_autoptr (GPtrArray) after = containers (e);
  g_autofree gchar *listing = joined (after);
  ck_assert_msg (count_on (after, "host1", NULL) == 0 && after->len == 6, "after the drain:\n%s",
                 listing);
  assert_versions (d, "drain", 6, "1");
  g_autofree gchar *hosts = cli (d, "hosts", NULL, NULL);
  ck_assert_msg (strstr (hosts, "up, draining") != NULL, "%s", hosts);
  /* The web UI's hosts page reads the same. */
  g_autofree gchar *page = NULL;
  ck_assert_uint_eq (stg_test_http_get (d->http_port, "/ui/api/hosts", &page), 200);
  g_autoptr (JsonNode) root = stg_test_parse_json (page);
  JsonArray *list = json_object_get_array_member (json_node_get_object (root), "hosts");
  ck_assert_uint_eq (json_array_get_length (list), 3);
  JsonObject *h1 = json_array_get_object_element (list, 1);
  ck_assert_str_eq (json_object_get_string_member (h1, "name"), "host1");
  ck_assert (json_object_get_boolean_member (h1, "draining"));
  ck_assert_uint_eq (json_array_get_length (json_object_get_array_member (h1, "instances")), 0);
  guint placed = 0;
  for (guint i = 0; i < 3; i++)
    placed += json_array_get_length (
        json_object_get_array_member (json_array_get_object_element (list, i), "instances"));
  ck_assert_uint_eq (placed, 6);
  g_free (cli (d, "host", "undrain", "host1"));
  g_autofree gchar *json = cli (d, "hosts", "--json", NULL);
  ck_assert_ptr_null (strstr (json, "\"draining\" : true"));
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
  env_free (e);
}
END_TEST

/* The web UI's data of instance @instance of www/prod/@name (events and
 * cause), as text. */
static gchar *
instance_page (StgTestDaemon *d, const gchar *name, gint instance)
{
  g_autofree gchar *path = g_strdup_printf ("/ui/api/instance?role=www&environment=prod&name=%s"
                                            "&instance=%d",
                                            name, instance);
  gchar *body = NULL;

  ck_assert_uint_eq (stg_test_http_get (d->http_port, path, &body), 200);
  return body;
}

typedef struct
{
  StgTestDaemon *d;
  const gchar *name;
  const gchar *text;
} PageWant;

static gboolean
page_says (gpointer data)
{
  PageWant *w = data;
  g_autofree gchar *page = instance_page (w->d, w->name, 0);

  if (strstr (page, w->text) != NULL)
    return TRUE;
  g_usleep (100000);
  return FALSE;
}

/* #31: an image no host has is pulled through the Engine API from a real
 * registry (Debian's docker-registry on loopback, asking for the
 * credentials the hosts' sections give), each instance saying "pulling"
 * meanwhile; a name that cannot be pulled fails with the registry's
 * reason. */
START_TEST (fleet_pulls_missing_images)
{
  StgTestRegistry *registry = stg_test_registry_start ("puller", "s3cret");
  Env *e = env_with ("", "registry_user = puller\nregistry_password = s3cret\n");
  stg_test_podman_push (e->fleet, e->fleet->hosts->pdata[0], IMAGE_V2, "stagger/web:2",
                        "puller:s3cret");
  StgTestDaemon *d = daemon_start (e, "16100-16499");
  g_autoptr (ApiJobConfiguration) job = web_job ("pulled", 3, STG_TEST_REGISTRY "/stagger/web:2",
                                                 "/health", 1);

  create_job (d, job);
  wait_running (d, "pulled", 3);
  assert_versions (d, "pulled", 3, "2");
  for (gint i = 0; i < 3; i++)
    {
      g_autofree gchar *page = instance_page (d, "pulled", i);
      ck_assert_msg (strstr (page, "pulling " STG_TEST_REGISTRY "/stagger/web:2 on host") != NULL,
                     "instance %d never said it pulled: %s", i, page);
    }
  g_autoptr (GPtrArray) pulled = containers_of (e, "pulled");
  g_autofree gchar *pulled_text = joined (pulled);
  ck_assert_msg (count_on (pulled, "host0", NULL) == 1 && count_on (pulled, "host1", NULL) == 1 &&
                     count_on (pulled, "host2", NULL) == 1,
                 "%s", pulled_text);

  g_autoptr (ApiJobConfiguration) nope = web_job ("nope", 1, STG_TEST_REGISTRY "/stagger/nope:1",
                                                  "/health", 1);
  create_job (d, nope);
  PageWant w = { d, "nope", "cannot pull image " STG_TEST_REGISTRY "/stagger/nope:1 on host" };
  if (!stg_test_wait (page_says, &w, 120000))
    {
      g_autofree gchar *page = instance_page (d, "nope", 0);
      ck_abort_msg ("no clear cause for an image that cannot be pulled: %s", page);
    }
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
  env_free (e);
  stg_test_registry_stop (registry);
}
END_TEST

/* Runs the CLI against @d with @args (NULL-terminated); its exit status,
 * and its output and errors in @out and @err. */
static gint
cli_status (StgTestDaemon *d, gchar **out, gchar **err, ...)
{
  g_autofree gchar *prog = stg_test_program ("stagger");
  g_autofree gchar *url = g_strdup_printf ("http://127.0.0.1:%u", d->http_port);
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  gint status = 0;
  va_list ap;
  const gchar *arg;

  g_ptr_array_add (argv, prog);
  g_ptr_array_add (argv, (gpointer) "--url");
  g_ptr_array_add (argv, url);
  va_start (ap, err);
  while ((arg = va_arg (ap, const gchar *)) != NULL)
    g_ptr_array_add (argv, (gpointer) arg);
  va_end (ap);
  g_ptr_array_add (argv, NULL);
  ck_assert (
      g_spawn_sync (NULL, (gchar **) argv->pdata, NULL, 0, NULL, NULL, out, err, &status, NULL));
  return g_spawn_check_wait_status (status, NULL) ? 0 : WEXITSTATUS (status);
}

typedef struct
{
  StgTestDaemon *d;
  const gchar *text;
} HostsWant;

static gboolean
hosts_say (gpointer data)
{
  HostsWant *w = data;
  g_autofree gchar *hosts = cli (w->d, "hosts", NULL, NULL);

  if (strstr (hosts, w->text) != NULL)
    return TRUE;
  g_usleep (200000);
  return FALSE;
}

/* #31: with at most two per host, six instances fill three hosts: a drain
 * of one has nowhere to move them. It is refused before anything stops,
 * saying what is short; forced, it stops nothing and says why it waits;
 * undrained, the waiting restarts go through where they are. */
START_TEST (fleet_drain_without_room_stops_nothing)
{
  Env *e = env_new ("");
  StgTestDaemon *d = daemon_start (e, "16100-16499");
  g_autoptr (ApiJobConfiguration) job = web_job ("full", 6, IMAGE_V1, "/health", 2);

  create_job (d, job);
  wait_running (d, "full", 6);
  g_autoptr (GPtrArray) before = containers (e);
  g_autofree gchar *before_text = joined (before);
  ck_assert_msg (count_on (before, "host1", NULL) == 2, "%s", before_text);

  g_autofree gchar *out = NULL, *err = NULL;
  gint code = cli_status (d, &out, &err, "host", "drain", "local/host1", "--wait", NULL);
  ck_assert_msg (code == 1 && strstr (err, "host host1 cannot be drained now") != NULL &&
                     strstr (err, "of www/prod/full: no host fits") != NULL &&
                     strstr (err, "host1: the host being drained") != NULL &&
                     strstr (err, "Nothing was changed or stopped") != NULL,
                 "exit %d:\n%s%s", code, out, err);
  g_autofree gchar *json = cli (d, "hosts", "--json", NULL);
  ck_assert_msg (strstr (json, "\"draining\" : true") == NULL, "%s", json);
  g_autoptr (GPtrArray) refused = containers (e);
  g_autofree gchar *refused_text = joined (refused);
  ck_assert_str_eq (before_text, refused_text);

  g_autofree gchar *fout = NULL, *ferr = NULL;
  code = cli_status (d, &fout, &ferr, "host", "drain", "local/host1", "--force", "--watch-secs",
                     "0", NULL);
  ck_assert_msg (code == 0 && strstr (fout, "wait there, running") != NULL, "exit %d:\n%s%s", code,
                 fout, ferr);
  HostsWant w = { d, "host1: the drain waits, nothing stopped, for room elsewhere" };
  ck_assert_msg (stg_test_wait (hosts_say, &w, 60000), "the hosts never said why the drain waits");
  /* The instance being moved says so too, and nothing was stopped. */
  gint moving = -1;
  for (guint i = 0; i < before->len && moving < 0; i++)
    if (g_str_has_prefix (before->pdata[i], "host1 "))
      moving = atoi (strchr (strchr (before->pdata[i], ' ') + 1, ' ') + 1);
  PageWant pw = { d, "full", "waiting for room to move off draining host host1, nothing stopped" };
  g_autofree gchar *page = NULL;
  for (gint64 end = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
       g_get_monotonic_time () < end && (page == NULL || strstr (page, pw.text) == NULL);
       g_usleep (200000))
    {
      g_free (page);
      page = instance_page (d, "full", moving);
      for (gint i = 0; i < 6 && strstr (page, pw.text) == NULL; i++)
        {
          g_free (page);
          page = instance_page (d, "full", i);
        }
    }
  ck_assert_msg (strstr (page, pw.text) != NULL, "no instance says why it waits: %s", page);
  g_autoptr (GPtrArray) waiting = containers (e);
  g_autofree gchar *waiting_text = joined (waiting);
  ck_assert_str_eq (before_text, waiting_text);
  ck_assert_int_eq (running_now (d, "full"), 6);

  /* Room again (the host is open): the restarts go through, in place. */
  g_free (cli (d, "host", "undrain", "host1"));
  g_autofree gchar *info = NULL;
  for (gint64 end = g_get_monotonic_time () + 600 * G_USEC_PER_SEC; g_get_monotonic_time () < end;
       g_usleep (500000))
    {
      g_free (info);
      info = cli (d, "update", "info", "local/www/prod/full");
      if (strstr (info, "ROLLED_FORWARD") != NULL)
        break;
    }
  ck_assert_msg (strstr (info, "ROLLED_FORWARD") != NULL, "%s", info);
  wait_running (d, "full", 6);
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
  env_free (e);
}
END_TEST

/* ---- a constraint that tightens ------------------------------------------------------ */

/* `stagger job diff` of www/prod/tight with a job file at most @per_host
 * per host. */
static gchar *
tight_diff (Env *e, StgTestDaemon *d, gint per_host)
{
  g_autofree gchar *file = g_strdup_printf ("%s/tight-%d.json", e->data_dir, per_host);
  g_autofree gchar *text =
      g_strdup_printf ("{\"cluster\": \"local\", \"role\": \"www\", \"environment\": \"prod\","
                       " \"name\": \"tight\", \"instances\": 6,"
                       " \"resources\": {\"cpu\": 0.25, \"ram_mb\": 64, \"ports\": [\"http\"]},"
                       " \"container\": {\"docker\": {\"image\": \"%s\","
                       " \"parameters\": [{\"name\": \"network\", \"value\": \"host\"}]}},"
                       " \"constraints\": {\"host\": \"limit:%d\"},"
                       " \"task\": {\"command\": \"exec httpd -f -p {{ports[http]}} -h /www\"}}",
                       IMAGE_V1, per_host);
  g_autoptr (GError) error = NULL;

  ck_assert (g_file_set_contents (file, text, -1, &error));
  const gchar *const args[] = { "job", "diff", "local/www/prod/tight", file, NULL };
  return stg_test_cli (d, args);
}

/* A constraint that tightens (limit:3 to limit:2 per host) moves the
 * instances that break it: six instances, three on each of two hosts
 * while the third drains, end two per host after the update, and
 * `stagger job diff` names the two that move beforehand. Tightened past
 * what the hosts hold (limit:1), the diff says no host fits them, and an
 * instance that would break it waits PENDING with Aurora's reason instead
 * of staying. Container ports 19600-19649. */
START_TEST (fleet_moves_instances_a_tightened_limit_rules_out)
{
  Env *e = env_new ("");
  StgTestDaemon *d = daemon_start (e, "19600-19649");

  /* Host2 drains while the job starts: three on each of the others. */
  g_free (cli (d, "host", "drain", "local/host2"));
  g_autoptr (ApiJobConfiguration) v1 = web_job ("tight", 6, IMAGE_V1, "/health", 3);
  create_job (d, v1);
  wait_running (d, "tight", 6);
  g_autoptr (GPtrArray) before = containers_of (e, "tight");
  g_autofree gchar *before_text = joined (before);
  ck_assert_msg (count_on (before, "host0", NULL) == 3 && count_on (before, "host1", NULL) == 3,
                 "%s", before_text);
  g_free (cli (d, "host", "undrain", "host2"));

  g_autofree gchar *diff = tight_diff (e, d, 2);
  g_autoptr (ApiJobConfiguration) v2 = web_job ("tight", 6, IMAGE_V1, "/health", 2);
  g_autoptr (ApiJobUpdateKey) key = start_update (d, v2, 1, 1000);
  expect_terminal (d, key, API_JOB_UPDATE_STATUS_ROLLED_FORWARD);
  wait_running (d, "tight", 6);
  g_autoptr (GPtrArray) after = containers_of (e, "tight");
  g_autofree gchar *after_text = joined (after);
  for (guint i = 0; i < 3; i++)
    {
      g_autofree gchar *host = g_strdup_printf ("host%u", i);
      ck_assert_msg (count_on (after, host, NULL) == 2, "not two per host after limit:2:\n%s",
                     after_text);
    }
  ck_assert_msg (strstr (diff, "instance 0: moves off host0 (limit:host=2) to host2\n"
                               "instance 1: moves off host1 (limit:host=2) to host2\n"
                               "constraints changed") != NULL,
                 "job diff before the update:\n%s", diff);

  /* Three hosts hold three at one per host: the diff says where none fits. */
  g_autofree gchar *tighter = tight_diff (e, d, 1);
  ck_assert_msg (strstr (tighter, "unchanged: -\n"
                                  "instance 0: moves off host2 (limit:host=1); no host fits now: "
                                  "it would wait PENDING\n"
                                  "instance 2: moves off host0 (limit:host=1); no host fits now: "
                                  "it would wait PENDING\n"
                                  "instance 3: moves off host1 (limit:host=1); no host fits now: "
                                  "it would wait PENDING\n"
                                  "constraints changed") != NULL,
                 "%s", tighter);
  g_autoptr (ApiJobConfiguration) v3 = web_job ("tight", 6, IMAGE_V1, "/health", 1);
  g_object_unref (start_update (d, v3, 1, 1000)); /* left to wait: aborted below */
  PageWant w = { d, "tight", "Limit not satisfied: host (limit:host=1), moving off host2: " };
  ck_assert_msg (stg_test_wait (page_says, &w, 120000), "instance 0 never said why it waits");
  g_autoptr (GPtrArray) waiting = containers_of (e, "tight");
  g_autofree gchar *waiting_text = joined (waiting);
  for (guint i = 0; i < 3; i++)
    {
      g_autofree gchar *host = g_strdup_printf ("host%u", i);
      ck_assert_msg (count_on (waiting, host, NULL) <= 2, "%s", waiting_text);
    }
  g_free (cli (d, "update", "abort", "local/www/prod/tight"));
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
  env_free (e);
}
END_TEST

/* ---- an SLA drain ------------------------------------------------------------------- */

#define SLA_SECS 3

/* The maintenance mode of @host, as maintenanceStatus says. */
static gint
mode_of (StgTestDaemon *d, const gchar *host)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (ApiHosts) hosts = g_object_new (API_TYPE_HOSTS, NULL);
  g_autoptr (GError) error = NULL;

  g_hash_table_add (hosts->hostNames, g_strdup (host));
  ck_assert (
      api_aurora_admin_if_maintenance_status (API_AURORA_ADMIN_IF (c->client), &r, hosts, &error));
  ck_assert_int_eq (r->responseCode, API_RESPONSE_CODE_OK);
  GHashTable *set = r->result->maintenanceStatusResult->statuses;
  ck_assert_uint_eq (g_hash_table_size (set), 1);
  g_autoptr (GList) only = g_hash_table_get_keys (set);
  return ((ApiHostStatus *) only->data)->mode;
}

typedef struct
{
  StgTestDaemon *d;
  const gchar *host;
  gint mode;
} Mode;

static gboolean
mode_is (gpointer data)
{
  Mode *m = data;
  if (mode_of (m->d, m->host) == m->mode)
    return TRUE;
  g_usleep (200000);
  return FALSE;
}

/* One task event: when, which instance, and whether it ran then. */
typedef struct
{
  gint64 ts;
  gint32 instance;
  gboolean running;
} Change;

static gint
by_time (gconstpointer a, gconstpointer b)
{
  const Change *x = a, *y = b;
  return (x->ts > y->ts) - (x->ts < y->ts);
}

/* The fewest instances of www/prod/@name active (RUNNING for SLA_SECS) at
 * any task event from @since_ms on, replayed from the tasks' events. */
static gint
fewest_active_since (StgTestDaemon *d, const gchar *name, gint64 since_ms)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (ApiTaskQuery) q = g_object_new (API_TYPE_TASK_QUERY, "jobName", name, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) changes = g_array_new (FALSE, FALSE, sizeof (Change));

  ck_assert (api_read_only_scheduler_if_get_tasks_status (API_READ_ONLY_SCHEDULER_IF (c->client),
                                                          &r, q, &error));
  GPtrArray *tasks = r->result->scheduleStatusResult->tasks;
  gint32 n = (gint32) tasks->len;
  for (guint i = 0; i < tasks->len; i++)
    {
      ApiScheduledTask *t = tasks->pdata[i];
      for (guint k = 0; k < t->taskEvents->len; k++)
        {
          ApiTaskEvent *ev = t->taskEvents->pdata[k];
          Change ch = { ev->timestamp, t->assignedTask->instanceId,
                        ev->status == API_SCHEDULE_STATUS_RUNNING };
          g_array_append_val (changes, ch);
        }
    }
  g_array_sort (changes, by_time);
  g_autofree gint64 *running_since = g_new0 (gint64, n);
  gint fewest = G_MAXINT;
  for (guint i = 0; i < changes->len; i++)
    {
      Change *ch = &g_array_index (changes, Change, i);
      if (ch->instance < 0 || ch->instance >= n)
        continue;
      running_since[ch->instance] = ch->running
                                        ? (running_since[ch->instance] ? running_since[ch->instance]
                                                                       : ch->ts)
                                        : 0;
      if (ch->ts < since_ms)
        continue;
      gint active = 0;
      for (gint32 j = 0; j < n; j++)
        active += running_since[j] > 0 && ch->ts - running_since[j] >= SLA_SECS * 1000;
      fewest = MIN (fewest, active);
    }
  return fewest;
}

/* #28: an SLA drain of a host moves its instances off only while the job
 * keeps its count of active instances, and leaves the host DRAINED;
 * endMaintenance opens it again. */
START_TEST (fleet_sla_drain_keeps_a_count_policy)
{
  Env *e = env_new (
      "[maintenance]\npolling_interval_secs = 1\n[sla]\nmin_required_instances = 1\n");
  StgTestDaemon *d = daemon_start (e, "16500-16699");
  g_autoptr (ApiJobConfiguration) job = web_job ("sla", 4, IMAGE_V1, "/health", 2);
  g_autoptr (ApiCountSlaPolicy) count = g_object_new (API_TYPE_COUNT_SLA_POLICY, "count",
                                                      (gint64) 3, "durationSecs", (gint64) SLA_SECS,
                                                      NULL);
  g_autoptr (ApiSlaPolicy) policy = g_object_new (API_TYPE_SLA_POLICY, "countSlaPolicy", count,
                                                  NULL);
  g_autoptr (GError) error = NULL;

  g_object_set (job->taskConfig, "tier", "preferred", "slaPolicy", policy, NULL);
  const gchar *const quota[] = { "quota", "set", "www", "4", "0", "0", NULL };
  g_free (stg_test_cli (d, quota));
  create_job (d, job);
  wait_running (d, "sla", 4);
  g_autoptr (GPtrArray) before = containers_of (e, "sla");
  const gchar *host = NULL;
  for (guint i = 0; i < e->fleet->hosts->len && host == NULL; i++)
    {
      const gchar *name = ((StgTestPodmanHost *) e->fleet->hosts->pdata[i])->name;
      if (count_on (before, name, NULL) == 2)
        host = name;
    }
  ck_assert_msg (host != NULL, "no host runs two instances");

  gint64 start = g_get_real_time () / 1000;
  {
    g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
    g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
    g_autoptr (ApiHosts) hosts = g_object_new (API_TYPE_HOSTS, NULL);
    g_autoptr (ApiSlaPolicy) none = g_object_new (API_TYPE_SLA_POLICY, NULL);
    g_hash_table_add (hosts->hostNames, g_strdup (host));
    g_hash_table_add (hosts->hostNames, g_strdup ("no-such-host"));
    ck_assert (api_aurora_admin_if_sla_drain_hosts (API_AURORA_ADMIN_IF (c->client), &r, hosts,
                                                    none, 3600, &error));
    ck_assert_int_eq (r->responseCode, API_RESPONSE_CODE_OK);
    /* Unknown hosts are left out, as Aurora leaves them. */
    ck_assert_uint_eq (g_hash_table_size (r->result->drainHostsResult->statuses), 1);
  }
  Mode done = { d, host, API_MAINTENANCE_MODE_DRAINED };
  ck_assert_msg (stg_test_wait (mode_is, &done, 600000), "%s never DRAINED", host);
  wait_running (d, "sla", 4);
  g_autoptr (GPtrArray) after = containers_of (e, "sla");
  g_autofree gchar *listing = joined (after);
  ck_assert_msg (count_on (after, host, NULL) == 0 && after->len == 4, "after the drain:\n%s",
                 listing);
  gint fewest = fewest_active_since (d, "sla", start);
  ck_assert_msg (fewest >= 3, "only %d instances were active at one point (the policy: 3)", fewest);
  g_autofree gchar *hosts = cli (d, "hosts", NULL, NULL);
  g_auto (GStrv) lines = g_strsplit (hosts, "\n", -1);
  gboolean said = FALSE;
  for (guint i = 0; lines[i] != NULL; i++)
    said = said || (g_str_has_prefix (lines[i], host) && g_str_has_suffix (lines[i], "DRAINED"));
  ck_assert_msg (said, "%s", hosts);
  /* The web UI's Hosts page shows the mode too. */
  g_autofree gchar *page = NULL;
  ck_assert_uint_eq (stg_test_http_get (d->http_port, "/ui/api/hosts", &page), 200);
  g_autoptr (JsonNode) root = stg_test_parse_json (page);
  JsonArray *list = json_object_get_array_member (json_node_get_object (root), "hosts");
  guint drained = 0;
  for (guint i = 0; i < json_array_get_length (list); i++)
    {
      JsonObject *h = json_array_get_object_element (list, i);
      drained += g_str_equal (json_object_get_string_member (h, "mode"), "DRAINED") &&
                 g_str_equal (json_object_get_string_member (h, "name"), host);
    }
  ck_assert_uint_eq (drained, 1);

  const gchar *const end[] = { "host", "maintenance", "end", host, NULL };
  g_autofree gchar *ended = stg_test_cli (d, end);
  ck_assert_msg (strstr (ended, "NONE") != NULL, "%s", ended);
  ck_assert_int_eq (mode_of (d, host), API_MAINTENANCE_MODE_NONE);
  g_autofree gchar *json = cli (d, "hosts", "--json", NULL);
  ck_assert_ptr_null (strstr (json, "\"draining\" : true"));
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
  env_free (e);
}
END_TEST

static Suite *
fleet_daemon_suite (void)
{
  Suite *s = suite_create ("fleet_daemon");
  TCase *tc = tcase_create ("rollouts");

  tcase_set_timeout (tc, 1800);
  tcase_add_test (tc, fleet_rolls_thirty_instances_across_three_hosts);
  tcase_add_test (tc, fleet_adopts_containers_after_kill9_mid_update);
  suite_add_tcase (s, tc);

  tc = tcase_create ("hosts");
  tcase_set_timeout (tc, 900);
  tcase_add_test (tc, fleet_replaces_instances_of_a_lost_host);
  tcase_add_test (tc, fleet_runs_shell_checks_inside_containers);
  tcase_add_test (tc, fleet_drains_a_host);
  tcase_add_test (tc, fleet_sla_drain_keeps_a_count_policy);
  tcase_add_test (tc, fleet_batch_tasks_finish);
  tcase_add_test (tc, fleet_runs_update_hooks_in_containers);
  suite_add_tcase (s, tc);

  tc = tcase_create ("drain");
  tcase_set_timeout (tc, 900);
  tcase_add_test (tc, fleet_drain_without_room_stops_nothing);
  suite_add_tcase (s, tc);

  tc = tcase_create ("tightened constraints");
  tcase_set_timeout (tc, 900);
  tcase_add_test (tc, fleet_moves_instances_a_tightened_limit_rules_out);
  suite_add_tcase (s, tc);

  tc = tcase_create ("images");
  tcase_set_timeout (tc, 900);
  tcase_add_test (tc, fleet_pulls_missing_images);
  suite_add_tcase (s, tc);

  tc = tcase_create ("aurora");
  tcase_set_timeout (tc, 900);
  tcase_add_test (tc, fleet_runs_aurora_tasks_in_containers);
  suite_add_tcase (s, tc);

  tc = tcase_create ("lost mid-update");
  tcase_set_timeout (tc, 900);
  tcase_add_test (tc, fleet_updates_count_a_lost_host);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return stg_test_podman_main (fleet_daemon_suite ());
}
