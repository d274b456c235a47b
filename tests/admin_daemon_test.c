/* admin_daemon_test.c: AuroraAdmin's operator calls and SLA policies
 * against real staggerd daemons running real instances
 * (stagger-example-server): a backup taken during an update and restored
 * into a fresh staggerd through the recovery calls, from which the update
 * finishes; reconciliation (a stray process with this staggerd's mark
 * stopped) and pruneTasks; an SLA-aware update and an SLA drain whose
 * coordinator (a small HTTP server that records what it is asked) refuses,
 * then allows. Instances' ports: 25600-25799. */
#include "config.h"

#include <check.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "rollout.h"

#define PORT_RANGE "--port-range=25600-25799"

static gchar *dir;

static void
setup (void)
{
  dir = stg_test_tmpdir ();
}

static void
teardown (void)
{
  stg_test_rmtree (dir); /* kills the instances too */
  g_clear_pointer (&dir, g_free);
}

/* The first detail of @r, or "". */
static const gchar *
detail (ApiResponse *r)
{
  return r->details != NULL && r->details->len > 0
             ? ((ApiResponseDetail *) r->details->pdata[0])->message
             : "";
}

static void
assert_ok (ApiResponse *r, const gchar *what)
{
  ck_assert_msg (r->responseCode == API_RESPONSE_CODE_OK, "%s: %d %s", what, r->responseCode,
                 detail (r));
}

/* ---- backups and recovery ----------------------------------------------------------- */

/* The id of a backup written by performBackup, from its answer. */
static gchar *
perform_backup (StgTestDaemon *d)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (GError) error = NULL;

  ck_assert (api_aurora_admin_if_perform_backup (API_AURORA_ADMIN_IF (c->client), &r, &error));
  assert_ok (r, "performBackup");
  /* "backup ID written to DIR" */
  g_auto (GStrv) words = g_strsplit (detail (r), " ", 3);
  ck_assert_str_eq (words[0], "backup");
  return g_strdup (words[1]);
}

typedef struct
{
  StgTestDaemon *d;
  ApiJobUpdateKey *key;
} Moving;

/* The update has finished its first instance and goes on. */
static gboolean
first_instance_updated (gpointer data)
{
  Moving *m = data;
  g_autoptr (ApiJobUpdateDetails) det = stg_rollout_details (m->d, m->key);
  gint64 first, last;

  ck_assert_int_eq (det->update->summary->state->status, API_JOB_UPDATE_STATUS_ROLLING_FORWARD);
  stg_rollout_action_times (det, 0, API_JOB_UPDATE_ACTION_INSTANCE_UPDATED, &first, &last);
  if (first < 0)
    g_usleep (50000);
  return first >= 0;
}

static gint
compare_strings (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(const gchar *const *) a, *(const gchar *const *) b);
}

/* A ScheduledTask set's job names, sorted and joined. */
static gchar *
task_jobs (GHashTable *tasks)
{
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  GHashTableIter it;
  gpointer t;

  g_hash_table_iter_init (&it, tasks);
  while (g_hash_table_iter_next (&it, &t, NULL))
    {
      ApiAssignedTask *a = ((ApiScheduledTask *) t)->assignedTask;
      g_ptr_array_add (names, g_strdup_printf ("%s/%d", a->task->job->name, a->instanceId));
    }
  g_ptr_array_sort (names, compare_strings);
  g_ptr_array_add (names, NULL);
  return g_strjoinv (" ", (gchar **) names->pdata);
}

START_TEST (backup_during_an_update_restores_and_the_update_finishes)
{
  g_autofree gchar *a_dir = g_build_filename (dir, "a", NULL);
  g_autofree gchar *b_dir = g_build_filename (dir, "b", NULL);
  StgTestDaemon *a = stg_test_daemon_start (a_dir, PORT_RANGE, NULL);
  g_autofree gchar *v1 = stg_rollout_server_data (NULL, NULL);
  g_autofree gchar *v2 = stg_rollout_server_data (", \"--start-delay\", \"0\"", NULL);
  stg_rollout_create_job (a, "web", 3, v1);
  stg_rollout_create_job (a, "junk", 1, v1);
  stg_rollout_wait_running (a, "web", 3, 1);

  /* One instance at a time, each watched for 3 s: the backup is taken
   * between the first instance and the last. The instance being updated
   * when the backup was taken is lost with the first machine: one failure
   * of it is allowed. */
  g_autoptr (ApiJobUpdateSettings) settings = stg_rollout_batch_settings (1, 3000);
  g_object_set (settings, "maxPerInstanceFailures", 1, NULL);
  g_autoptr (ApiJobUpdateKey) key = stg_rollout_try_start_update_with (a, "web", 3, v2, settings,
                                                                       NULL);
  ck_assert (key != NULL);
  Moving m = { a, key };
  ck_assert (stg_test_wait (first_instance_updated, &m, 60000));
  g_autofree gchar *id = perform_backup (a);
  ck_assert (g_str_has_prefix (id, "scheduler-backup-"));
  ck_assert_int_eq (stg_test_daemon_stop (a), 0);
  stg_test_daemon_free (a);
  stg_test_kill_instances (a_dir);

  /* A fresh staggerd, with the backup in its backup folder. */
  StgTestDaemon *b = stg_test_daemon_start (b_dir, PORT_RANGE, NULL);
  g_autofree gchar *from = g_build_filename (a_dir, "backups", id, NULL);
  g_autofree gchar *to_dir = g_build_filename (b_dir, "backups", NULL);
  g_autofree gchar *to = g_build_filename (to_dir, id, NULL);
  g_autofree gchar *bytes = NULL;
  gsize len = 0;
  ck_assert (g_file_get_contents (from, &bytes, &len, NULL));
  ck_assert_int_eq (g_mkdir_with_parents (to_dir, 0700), 0);
  ck_assert (g_file_set_contents (to, bytes, (gssize) len, NULL));

  g_autoptr (StgTestClient) c = stg_test_client_new (b->thrift_port);
  ApiAuroraAdminIf *admin = API_AURORA_ADMIN_IF (c->client);
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiTaskQuery) all = g_object_new (API_TYPE_TASK_QUERY, NULL);
  {
    /* Nothing staged yet: queryRecovery says so. */
    g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
    ck_assert (api_aurora_admin_if_query_recovery (admin, &r, all, &error));
    ck_assert_int_eq (r->responseCode, API_RESPONSE_CODE_INVALID_REQUEST);
    ck_assert_str_eq (detail (r), "no backup is staged (stageRecovery loads one)");
  }
  {
    g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
    ck_assert (api_aurora_admin_if_list_backups (admin, &r, &error));
    assert_ok (r, "listBackups");
    ck_assert (g_hash_table_contains (r->result->listBackupsResult->backups, id));
  }
  {
    g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
    ck_assert (api_aurora_admin_if_stage_recovery (admin, &r, "../stagger.db", &error));
    ck_assert_int_eq (r->responseCode, API_RESPONSE_CODE_INVALID_REQUEST);
  }
  {
    g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
    ck_assert (api_aurora_admin_if_stage_recovery (admin, &r, id, &error));
    assert_ok (r, "stageRecovery");
  }
  {
    g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
    ck_assert (api_aurora_admin_if_query_recovery (admin, &r, all, &error));
    assert_ok (r, "queryRecovery");
    g_autofree gchar *jobs = task_jobs (r->result->queryRecoveryResult->tasks);
    ck_assert_str_eq (jobs, "junk/0 web/0 web/1 web/2");
  }
  {
    /* The job with the update keeps its tasks; the other one goes. */
    g_autoptr (ApiTaskQuery) web = g_object_new (API_TYPE_TASK_QUERY, "jobName", "web", NULL);
    g_autoptr (ApiTaskQuery) junk = g_object_new (API_TYPE_TASK_QUERY, "jobName", "junk", NULL);
    g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
    ck_assert (api_aurora_admin_if_delete_recovery_tasks (admin, &r, web, &error));
    ck_assert_int_eq (r->responseCode, API_RESPONSE_CODE_INVALID_REQUEST);
    g_clear_object (&r);
    r = g_object_new (API_TYPE_RESPONSE, NULL);
    ck_assert (api_aurora_admin_if_delete_recovery_tasks (admin, &r, junk, &error));
    assert_ok (r, "deleteRecoveryTasks");
    g_clear_object (&r);
    r = g_object_new (API_TYPE_RESPONSE, NULL);
    ck_assert (api_aurora_admin_if_query_recovery (admin, &r, all, &error));
    g_autofree gchar *jobs = task_jobs (r->result->queryRecoveryResult->tasks);
    ck_assert_str_eq (jobs, "web/0 web/1 web/2");
  }
  {
    /* staggerd restarts in place once it has answered, and writes its
     * ready file again. */
    g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
    g_unlink (b->ready_file);
    ck_assert (api_aurora_admin_if_commit_recovery (admin, &r, &error));
    assert_ok (r, "commitRecovery");
  }
  g_clear_pointer (&c, stg_test_client_free);
  stg_test_daemon_wait_ready (b);

  /* The update goes on from the backup, to its end. */
  ck_assert_int_eq (stg_rollout_wait_terminal (b, key), API_JOB_UPDATE_STATUS_ROLLED_FORWARD);
  stg_rollout_wait_running (b, "web", 3, 2);
  g_autofree gchar *body = NULL;
  ck_assert_uint_eq (stg_test_http_get (b->http_port,
                                        "/ui/api/job?role=www&environment=prod&name=junk", &body),
                     404);
  ck_assert_int_eq (stg_test_daemon_stop (b), 0);
  stg_test_daemon_free (b);
}
END_TEST

/* ---- reconciliation and pruning ----------------------------------------------------- */

static void
become_session_leader (gpointer data)
{
  (void) data;
  setsid ();
}

/* Calls a no-argument AuroraAdmin method through @call and returns the
 * answer's first detail, asserting OK. */
static gchar *
admin_detail (StgTestDaemon *d, gboolean (*call) (ApiAuroraAdminIf *, ApiResponse **, GError **),
              const gchar *what)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (GError) error = NULL;

  ck_assert_msg (call (API_AURORA_ADMIN_IF (c->client), &r, &error), "%s: %s", what,
                 error ? error->message : "");
  assert_ok (r, what);
  return g_strdup (detail (r));
}

static gboolean
explicit_reconciliation (ApiAuroraAdminIf *admin, ApiResponse **r, GError **error)
{
  g_autoptr (ApiExplicitReconciliationSettings) s =
      g_object_new (API_TYPE_EXPLICIT_RECONCILIATION_SETTINGS, "batchSize", 1, NULL);
  return api_aurora_admin_if_trigger_explicit_task_reconciliation (admin, r, s, error);
}

START_TEST (reconciliation_stops_strays_and_finds_every_instance)
{
  StgTestDaemon *d = stg_test_daemon_start (dir, PORT_RANGE, NULL);
  g_autofree gchar *data = stg_rollout_server_data (NULL, NULL);
  stg_rollout_create_job (d, "web", 2, data);
  stg_rollout_wait_running (d, "web", 2, 1);

  /* A process with this staggerd's mark that no instance expects, as one
   * left behind would be. */
  g_autofree gchar *canonical = g_canonicalize_filename (dir, NULL);
  g_autofree gchar *mark = g_strdup_printf ("9999:0:1:%s", canonical);
  g_autoptr (GSubprocessLauncher) l = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_NONE);
  g_subprocess_launcher_setenv (l, "STAGGER_RUN_MARK", mark, TRUE);
  g_subprocess_launcher_set_child_setup (l, become_session_leader, NULL, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (GSubprocess) stray = g_subprocess_launcher_spawn (l, &error, "sleep", "300", NULL);
  ck_assert_msg (stray != NULL, "%s", error ? error->message : "");

  g_autofree gchar *expl = admin_detail (d, explicit_reconciliation, "explicit");
  ck_assert_str_eq (expl, "2 tasks in 2 batches of at most 1, 5 s apart; the first: local: 1 "
                          "instance process looked for in /proc; 0 gone (ended now)");
  ck_assert (g_subprocess_get_identifier (stray) != NULL); /* explicit leaves strays */
  g_autofree gchar *impl = admin_detail (d,
                                         api_aurora_admin_if_trigger_implicit_task_reconciliation,
                                         "implicit");
  ck_assert_str_eq (impl, "local: 3 processes with this staggerd's mark in /proc; 1 that no "
                          "instance expects stopped");
  ck_assert (g_subprocess_wait (stray, NULL, NULL));
  ck_assert (!g_subprocess_get_successful (stray));
  stg_rollout_wait_running (d, "web", 2, 1);
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
}
END_TEST

/* The tasks of www/prod/@name (their count), FINISHED ones in *@finished. */
static guint
tasks_of (StgTestDaemon *d, const gchar *name, guint *finished)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (ApiTaskQuery) q = g_object_new (API_TYPE_TASK_QUERY, "jobName", name, NULL);
  g_autoptr (GError) error = NULL;

  ck_assert (api_read_only_scheduler_if_get_tasks_status (API_READ_ONLY_SCHEDULER_IF (c->client),
                                                          &r, q, &error));
  assert_ok (r, "getTasksStatus");
  GPtrArray *tasks = r->result->scheduleStatusResult->tasks;
  *finished = 0;
  for (guint i = 0; i < tasks->len; i++)
    *finished += ((ApiScheduledTask *) tasks->pdata[i])->status == API_SCHEDULE_STATUS_FINISHED;
  return tasks->len;
}

typedef struct
{
  StgTestDaemon *d;
  const gchar *name;
} Batch;

static gboolean
all_finished (gpointer data)
{
  Batch *b = data;
  guint finished = 0;
  guint n = tasks_of (b->d, b->name, &finished);
  if (n > 0 && finished == n)
    return TRUE;
  g_usleep (50000);
  return FALSE;
}

static ApiResponse *
prune (StgTestDaemon *d, ApiTaskQuery *q)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  ApiResponse *r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (GError) error = NULL;

  ck_assert (api_aurora_admin_if_prune_tasks (API_AURORA_ADMIN_IF (c->client), &r, q, &error));
  return r;
}

START_TEST (prune_removes_ended_tasks_only)
{
  StgTestDaemon *d = stg_test_daemon_start (dir, PORT_RANGE, NULL);
  g_autofree gchar *data = stg_rollout_server_data (NULL, NULL);
  stg_rollout_create_job (d, "web", 1, data);
  {
    g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
    g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
    g_autoptr (GError) error = NULL;
    g_autoptr (ApiJobConfiguration) job = stg_test_job ("www", "prod", "batch", 2, "true");
    g_object_set (job->taskConfig, "isService", FALSE, NULL);
    ck_assert (
        api_aurora_scheduler_manager_if_create_job (API_AURORA_SCHEDULER_MANAGER_IF (c->client), &r,
                                                    job, &error));
    assert_ok (r, "createJob");
  }
  Batch b = { d, "batch" };
  ck_assert (stg_test_wait (all_finished, &b, 30000));
  stg_rollout_wait_running (d, "web", 1, 1);

  g_autoptr (GHashTable) running = g_hash_table_new (NULL, NULL);
  g_hash_table_add (running, GINT_TO_POINTER (API_SCHEDULE_STATUS_RUNNING));
  g_autoptr (ApiTaskQuery) bad = g_object_new (API_TYPE_TASK_QUERY, "statuses", running, NULL);
  g_autoptr (ApiResponse) refused = prune (d, bad);
  ck_assert_int_eq (refused->responseCode, API_RESPONSE_CODE_INVALID_REQUEST);
  ck_assert_str_eq (detail (refused), "Tasks in non-terminal state cannot be pruned.");

  /* Every job: only the ended tasks go, and their job with them. */
  g_autoptr (ApiTaskQuery) all = g_object_new (API_TYPE_TASK_QUERY, "role", "www", NULL);
  g_autoptr (ApiResponse) r = prune (d, all);
  assert_ok (r, "pruneTasks");
  ck_assert_str_eq (((ApiResponseDetail *) r->details->pdata[r->details->len - 1])->message,
                    "pruned 2 ended tasks");
  guint finished = 0;
  ck_assert_uint_eq (tasks_of (d, "batch", &finished), 0);
  ck_assert_uint_eq (tasks_of (d, "web", &finished), 1);
  stg_rollout_wait_running (d, "web", 1, 1);
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
}
END_TEST

/* ---- SLA coordinators ---------------------------------------------------------------- */

/* A coordinator: POST answers {"drain": ALLOW} a moment later and is
 * recorded (its query's task, its body, ALLOW) with the most questions it
 * had open at once; GET /allow turns ALLOW on; GET / says what it was
 * asked (JSON). It exits when its stdin closes. */
static const gchar coordinator_py[] =
    "import http.server, json, os, sys, threading, time, urllib.parse\n"
    "threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()\n"
    "state = {'allow': False, 'asked': [], 'open': 0, 'most_open': 0}\n"
    "lock = threading.Lock()\n"
    "class H(http.server.BaseHTTPRequestHandler):\n"
    "    def log_message(self, *a): pass\n"
    "    def reply(self, obj):\n"
    "        body = json.dumps(obj).encode()\n"
    "        self.send_response(200)\n"
    "        self.send_header('Content-Type', 'application/json')\n"
    "        self.send_header('Content-Length', str(len(body)))\n"
    "        self.end_headers()\n"
    "        self.wfile.write(body)\n"
    "    def do_GET(self):\n"
    "        if self.path == '/allow':\n"
    "            state['allow'] = True\n"
    "        with lock:\n"
    "            self.reply(state)\n"
    "    def do_POST(self):\n"
    "        with lock:\n"
    "            state['open'] += 1\n"
    "            state['most_open'] = max(state['most_open'], state['open'])\n"
    "        body = json.loads(self.rfile.read(int(self.headers['Content-Length'])))\n"
    "        query = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)\n"
    "        time.sleep(0.2)\n"
    "        allow = state['allow']\n"
    "        with lock:\n"
    "            state['asked'].append({'task': query['task'][0], 'body': body,\n"
    "                                   'allowed': allow})\n"
    "            state['open'] -= 1\n"
    "        self.reply({'drain': allow})\n"
    "s = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)\n"
    "print(s.server_address[1], flush=True)\n"
    "s.serve_forever()\n";

typedef struct
{
  GSubprocess *process;
  guint16 port;
} Coordinator;

static void
coordinator_start (Coordinator *c)
{
  g_autoptr (GError) error = NULL;

  /* It ends when its stdin closes: with the test, even a failed one. */
  c->process = g_subprocess_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE,
                                 &error, "python3", "-c", coordinator_py, NULL);
  ck_assert_msg (c->process != NULL, "python3: %s", error ? error->message : "");
  g_autoptr (GDataInputStream) in = g_data_input_stream_new (
      g_subprocess_get_stdout_pipe (c->process));
  g_autofree gchar *port = g_data_input_stream_read_line (in, NULL, NULL, &error);
  ck_assert_msg (port != NULL, "no port from the coordinator");
  c->port = (guint16) g_ascii_strtoull (port, NULL, 10);
}

static void
coordinator_stop (Coordinator *c)
{
  g_subprocess_force_exit (c->process);
  g_subprocess_wait (c->process, NULL, NULL);
  g_clear_object (&c->process);
}

/* What the coordinator was asked: its "asked" list. */
static JsonNode *
coordinator_asked (Coordinator *c)
{
  g_autofree gchar *body = NULL;

  ck_assert_uint_eq (stg_test_http_get (c->port, "/", &body), 200);
  return stg_test_parse_json (body);
}

/* The member of @o at @path (names joined by dots); fails when absent. */
static JsonNode *
at (JsonObject *o, const gchar *path)
{
  g_auto (GStrv) names = g_strsplit (path, ".", -1);
  JsonNode *node = NULL;

  for (guint i = 0; names[i] != NULL; i++)
    {
      ck_assert_msg (o != NULL && json_object_has_member (o, names[i]), "no %s", path);
      node = json_object_get_member (o, names[i]);
      o = JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
    }
  return node;
}

typedef struct
{
  Coordinator *c;
  guint at_least;
} Asked;

static gboolean
asked_enough (gpointer data)
{
  Asked *a = data;
  g_autoptr (JsonNode) state = coordinator_asked (a->c);
  JsonArray *asked = json_object_get_array_member (json_node_get_object (state), "asked");
  if (json_array_get_length (asked) >= a->at_least)
    return TRUE;
  g_usleep (50000);
  return FALSE;
}

/* setQuota of role www: room for a few production instances. */
static void
give_quota (StgTestDaemon *d)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (ApiResourceAggregate) q = g_object_new (API_TYPE_RESOURCE_AGGREGATE, NULL);
  g_autoptr (GError) error = NULL;

  g_hash_table_add (q->resources, g_object_new (API_TYPE_RESOURCE, "numCpus", 8.0, NULL));
  g_hash_table_add (q->resources, g_object_new (API_TYPE_RESOURCE, "ramMb", (gint64) 0, NULL));
  g_hash_table_add (q->resources, g_object_new (API_TYPE_RESOURCE, "diskMb", (gint64) 0, NULL));
  ck_assert (api_aurora_admin_if_set_quota (API_AURORA_ADMIN_IF (c->client), &r, "www", q, &error));
  assert_ok (r, "setQuota");
}

/* A production task of job www/prod/@name running @data under @policy. */
static ApiTaskConfig *
prod_task (const gchar *name, gint32 count, const gchar *data, ApiSlaPolicy *policy)
{
  g_autoptr (ApiJobConfiguration) job = stg_test_job_full ("www", "prod", name, count, data,
                                                           "http");
  g_object_set (job->taskConfig, "tier", "preferred", "slaPolicy", policy, NULL);
  return g_object_ref (job->taskConfig);
}

/* This machine's maintenance status (the local runtime's one host). */
static ApiHostStatus *
maintenance_status (StgTestDaemon *d)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (ApiHosts) hosts = g_object_new (API_TYPE_HOSTS, NULL);
  g_autoptr (GError) error = NULL;

  g_hash_table_add (hosts->hostNames, g_strdup (g_get_host_name ()));
  ck_assert (
      api_aurora_admin_if_maintenance_status (API_AURORA_ADMIN_IF (c->client), &r, hosts, &error));
  assert_ok (r, "maintenanceStatus");
  g_autoptr (GList) only = g_hash_table_get_keys (r->result->maintenanceStatusResult->statuses);
  ck_assert (only != NULL);
  return g_object_ref (only->data);
}

static gint
maintenance_mode (StgTestDaemon *d)
{
  g_autoptr (ApiHostStatus) s = maintenance_status (d);
  return s->mode;
}

static gboolean
drained (gpointer data)
{
  if (maintenance_mode (data) == API_MAINTENANCE_MODE_DRAINED)
    return TRUE;
  g_usleep (200000);
  return FALSE;
}

/* The instance events of @key for @action. */
static guint
count_actions (StgTestDaemon *d, ApiJobUpdateKey *key, gint action)
{
  g_autoptr (ApiJobUpdateDetails) det = stg_rollout_details (d, key);
  guint n = 0;

  for (guint i = 0; i < det->instanceEvents->len; i++)
    n += (gint) ((ApiJobInstanceUpdateEvent *) det->instanceEvents->pdata[i])->action == action;
  return n;
}

START_TEST (a_refusing_coordinator_keeps_an_sla_aware_update_waiting)
{
  Coordinator coord = { 0 };
  coordinator_start (&coord);
  g_autofree gchar *conf = g_build_filename (dir, "staggerd.conf", NULL);
  ck_assert (
      g_file_set_contents (conf, "[sla]\nretry_min_secs = 1\nretry_max_secs = 1\n", -1, NULL));
  g_autofree gchar *conf_arg = g_strconcat ("--config=", conf, NULL);
  g_autofree gchar *data_dir = g_build_filename (dir, "data", NULL);
  StgTestDaemon *d = stg_test_daemon_start (data_dir, PORT_RANGE, conf_arg, NULL);
  give_quota (d);

  g_autofree gchar *url = g_strdup_printf ("http://127.0.0.1:%u/sla", coord.port);
  g_autoptr (ApiCoordinatorSlaPolicy) cp = g_object_new (API_TYPE_COORDINATOR_SLA_POLICY,
                                                         "coordinatorUrl", url, "statusKey",
                                                         "drain", NULL);
  g_autoptr (ApiSlaPolicy) policy = g_object_new (API_TYPE_SLA_POLICY, "coordinatorSlaPolicy", cp,
                                                  NULL);
  g_autofree gchar *v1 = stg_rollout_server_data (NULL, NULL);
  g_autofree gchar *v2 = stg_rollout_server_data (", \"--start-delay\", \"0\"", NULL);
  {
    g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
    g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
    g_autoptr (GError) error = NULL;
    g_autoptr (ApiJobConfiguration) job = stg_test_job_full ("www", "prod", "web", 2, v1, "http");
    g_autoptr (ApiTaskConfig) task = prod_task ("web", 2, v1, policy);
    g_object_set (job, "taskConfig", task, NULL);
    ck_assert (
        api_aurora_scheduler_manager_if_create_job (API_AURORA_SCHEDULER_MANAGER_IF (c->client), &r,
                                                    job, &error));
    assert_ok (r, "createJob");
  }
  stg_rollout_wait_running (d, "web", 2, 1);

  g_autoptr (ApiJobUpdateSettings) settings = stg_rollout_batch_settings (1, 500);
  g_autoptr (ApiTaskConfig) task = prod_task ("web", 2, v2, policy);
  g_object_set (settings, "slaAware", TRUE, NULL);
  g_autoptr (ApiJobUpdateRequest) req = g_object_new (API_TYPE_JOB_UPDATE_REQUEST, "taskConfig",
                                                      task, "instanceCount", 2, "settings",
                                                      settings, NULL);
  g_autoptr (ApiJobUpdateKey) key = stg_rollout_try_start_request (d, req, NULL);
  ck_assert (key != NULL);

  /* Asked three times about instance 0, and told no each time: nothing
   * was taken down, and the update says why it waits. */
  Asked three = { &coord, 3 };
  ck_assert (stg_test_wait (asked_enough, &three, 30000));
  ck_assert_uint_eq (count_actions (d, key, API_JOB_UPDATE_ACTION_INSTANCE_UPDATING), 0);
  {
    g_autoptr (ApiJobUpdateDetails) det = stg_rollout_details (d, key);
    ck_assert_int_eq (det->update->summary->state->status, API_JOB_UPDATE_STATUS_ROLLING_FORWARD);
    gboolean said = FALSE;
    for (guint i = 0; i < det->updateEvents->len; i++)
      {
        ApiJobUpdateEvent *ev = det->updateEvents->pdata[i];
        said = said ||
               (ev->message != NULL &&
                g_str_has_prefix (ev->message, "instance 0 waits for its SLA: coordinator "));
      }
    ck_assert (said);
  }
  g_autoptr (JsonNode) state = coordinator_asked (&coord);
  JsonArray *asked = json_object_get_array_member (json_node_get_object (state), "asked");
  JsonObject *first = json_array_get_object_element (asked, 0);
  JsonObject *body = json_object_get_object_member (first, "body");
  ck_assert_str_eq (json_object_get_string_member (first, "task"), "local/www/prod/web/0");
  ck_assert_str_eq (json_object_get_string_member (body, "task"), "local/www/prod/web/0");
  ck_assert_int_eq (json_node_get_int (at (body, "taskConfig.assignedTask.instanceId")), 0);

  /* Allowed: the update goes through. */
  g_autofree gchar *allowed = NULL;
  ck_assert_uint_eq (stg_test_http_get (coord.port, "/allow", &allowed), 200);
  ck_assert_int_eq (stg_rollout_wait_terminal (d, key), API_JOB_UPDATE_STATUS_ROLLED_FORWARD);
  stg_rollout_wait_running (d, "web", 2, 2);
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
  coordinator_stop (&coord);
}
END_TEST

/* A coordinator's question about one instance of www/prod/drained, as
 * Aurora's scheduler asks it: the task key in the query and the body, the
 * whole ScheduledTask in Thrift's simple JSON, the drain's countdown. */
static void
assert_drain_question (JsonObject *asked)
{
  JsonObject *body = json_object_get_object_member (asked, "body");
  const gchar *key = json_object_get_string_member (asked, "task");
  gint64 instance = json_node_get_int (at (body, "taskConfig.assignedTask.instanceId"));
  g_autofree gchar *want_key = g_strdup_printf ("local/www/prod/drained/%" G_GINT64_FORMAT,
                                                instance);
  g_autofree gchar *id_prefix = g_strdup_printf ("www-prod-drained-%" G_GINT64_FORMAT "-",
                                                 instance);

  ck_assert_str_eq (key, want_key);
  ck_assert_str_eq (json_node_get_string (at (body, "task")), want_key);
  ck_assert (g_str_has_prefix (json_node_get_string (at (body, "taskConfig.assignedTask.taskId")),
                               id_prefix));
  ck_assert_str_eq (json_node_get_string (at (body, "taskConfig.assignedTask.slaveHost")),
                    g_get_host_name ());
  ck_assert_int_gt (json_node_get_int (at (body, "taskConfig.assignedTask.assignedPorts.http")), 0);
  ck_assert_str_eq (json_node_get_string (at (body, "taskConfig.assignedTask.task.job.role")),
                    "www");
  /* Enums and booleans are numbers in Thrift's simple JSON. */
  ck_assert_int_eq (json_node_get_int (at (body, "taskConfig.status")),
                    API_SCHEDULE_STATUS_RUNNING);
  ck_assert (json_node_get_value_type (at (body, "taskConfig.assignedTask.task.isService")) ==
             G_TYPE_INT64);
  JsonArray *events = json_node_get_array (at (body, "taskConfig.taskEvents"));
  ck_assert_uint_gt (json_array_get_length (events), 0);
  ck_assert (json_object_has_member (json_array_get_object_element (events, 0), "timestamp"));
  ck_assert (json_node_get_value_type (at (body, "forceMaintenanceCountdownMs")) == G_TYPE_STRING);
}

START_TEST (an_sla_drain_waits_for_its_coordinator)
{
  Coordinator coord = { 0 };
  coordinator_start (&coord);
  g_autofree gchar *conf = g_build_filename (dir, "staggerd.conf", NULL);
  ck_assert (g_file_set_contents (conf, "[maintenance]\npolling_interval_secs = 1\n", -1, NULL));
  g_autofree gchar *conf_arg = g_strconcat ("--config=", conf, NULL);
  g_autofree gchar *data_dir = g_build_filename (dir, "data", NULL);
  StgTestDaemon *d = stg_test_daemon_start (data_dir, PORT_RANGE, conf_arg, NULL);
  give_quota (d);

  /* The policy names no status key: "drain" is read. */
  g_autofree gchar *url = g_strdup_printf ("http://127.0.0.1:%u/sla", coord.port);
  g_autoptr (ApiCoordinatorSlaPolicy) cp = g_object_new (API_TYPE_COORDINATOR_SLA_POLICY,
                                                         "coordinatorUrl", url, NULL);
  g_autoptr (ApiSlaPolicy) policy = g_object_new (API_TYPE_SLA_POLICY, "coordinatorSlaPolicy", cp,
                                                  NULL);
  g_autofree gchar *v1 = stg_rollout_server_data (NULL, NULL);
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (GError) error = NULL;
  {
    g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
    g_autoptr (ApiJobConfiguration) job = stg_test_job_full ("www", "prod", "drained", 2, v1,
                                                             "http");
    g_autoptr (ApiTaskConfig) task = prod_task ("drained", 2, v1, policy);
    g_object_set (job, "taskConfig", task, NULL);
    ck_assert (
        api_aurora_scheduler_manager_if_create_job (API_AURORA_SCHEDULER_MANAGER_IF (c->client), &r,
                                                    job, &error));
    assert_ok (r, "createJob");
  }
  stg_rollout_wait_running (d, "drained", 2, 1);
  {
    g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
    g_autoptr (ApiHosts) hosts = g_object_new (API_TYPE_HOSTS, NULL);
    g_autoptr (ApiSlaPolicy) none = g_object_new (API_TYPE_SLA_POLICY, NULL);
    g_hash_table_add (hosts->hostNames, g_strdup (g_get_host_name ()));
    ck_assert (api_aurora_admin_if_sla_drain_hosts (API_AURORA_ADMIN_IF (c->client), &r, hosts,
                                                    none, 3600, &error));
    assert_ok (r, "slaDrainHosts");
  }

  /* Told no three times: the host stays DRAINING, every instance runs. */
  Asked three = { &coord, 3 };
  ck_assert (stg_test_wait (asked_enough, &three, 30000));
  ck_assert_int_eq (maintenance_mode (d), API_MAINTENANCE_MODE_DRAINING);
  stg_rollout_wait_running (d, "drained", 2, 1);
  {
    /* ... and says why, beside the host's mode. */
    g_autoptr (ApiHostStatus) s = maintenance_status (d);
    g_autofree gchar *why = g_strdup_printf ("of www/prod/drained waits for its SLA: its "
                                             "coordinator %s said ",
                                             url);
    ck_assert (s->__isset_slaWait);
    ck_assert_msg (strstr (s->slaWait, why) != NULL, "%s", s->slaWait);
  }
  {
    g_autoptr (JsonNode) state = coordinator_asked (&coord);
    JsonArray *asked = json_object_get_array_member (json_node_get_object (state), "asked");
    for (guint i = 0; i < json_array_get_length (asked); i++)
      assert_drain_question (json_array_get_object_element (asked, i));
  }

  /* Allowed: the instances leave and the host is DRAINED. */
  g_autofree gchar *allowed = NULL;
  ck_assert_uint_eq (stg_test_http_get (coord.port, "/allow", &allowed), 200);
  ck_assert (stg_test_wait (drained, d, 60000));
  g_autoptr (JsonNode) state = coordinator_asked (&coord);
  JsonObject *o = json_node_get_object (state);
  JsonArray *asked = json_object_get_array_member (o, "asked");
  guint yes = 0;
  for (guint i = 0; i < json_array_get_length (asked); i++)
    {
      JsonObject *one = json_array_get_object_element (asked, i);
      assert_drain_question (one);
      yes += json_object_get_boolean_member (one, "allowed");
    }
  ck_assert_uint_ge (yes, 2);
  /* One question at a time to one coordinator URL. */
  ck_assert_int_eq (json_object_get_int_member (o, "most_open"), 1);
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
  coordinator_stop (&coord);
}
END_TEST

static Suite *
admin_daemon_suite (void)
{
  Suite *s = suite_create ("admin_daemon");
  TCase *tc = tcase_create ("backups");

  tcase_set_timeout (tc, 180);
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, backup_during_an_update_restores_and_the_update_finishes);
  suite_add_tcase (s, tc);

  tc = tcase_create ("reconciliation");
  tcase_set_timeout (tc, 120);
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, reconciliation_stops_strays_and_finds_every_instance);
  tcase_add_test (tc, prune_removes_ended_tasks_only);
  suite_add_tcase (s, tc);

  tc = tcase_create ("sla");
  tcase_set_timeout (tc, 120);
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, a_refusing_coordinator_keeps_an_sla_aware_update_waiting);
  tcase_add_test (tc, an_sla_drain_waits_for_its_coordinator);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  gchar *scope = stg_test_scope_begin ();
  SRunner *sr = srunner_create (admin_daemon_suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  stg_test_scope_end (scope);
  return failed == 0 ? 0 : 1;
}
