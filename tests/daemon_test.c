/* daemon_test.c: integration tests against a real staggerd on free ports:
 * Thrift over framed TCP (many clients, oversize and malformed frames),
 * HTTP /health, persistence across restarts, settings and shutdown. */
#include "config.h"

#include <check.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>

#include "common/binary_protocol.h"
#include "common/jobkey.h"
#include "store/store.h"
#include "daemon_fixture.h"
#include "rollout.h"

static ApiResponse *
create_job (StgTestClient *c, const gchar *name, gint32 instances)
{
  g_autoptr (ApiJobConfiguration) job = stg_test_job ("www", "prod", name, instances, "sleep 60");
  g_autoptr (GError) error = NULL;
  ApiResponse *response = g_object_new (API_TYPE_RESPONSE, NULL);

  ck_assert_msg (api_aurora_scheduler_manager_if_create_job (API_AURORA_SCHEDULER_MANAGER_IF (c->client),
                                                             &response, job, &error),
                 "createJob: %s", error ? error->message : "");
  return response;
}

static ApiResponse *
get_jobs (StgTestClient *c, const gchar *role)
{
  g_autoptr (GError) error = NULL;
  ApiResponse *response = g_object_new (API_TYPE_RESPONSE, NULL);

  ck_assert_msg (api_read_only_scheduler_if_get_jobs (API_READ_ONLY_SCHEDULER_IF (c->client),
                                                      &response, role, &error),
                 "getJobs: %s", error ? error->message : "");
  return response;
}

START_TEST (health_and_clean_shutdown)
{
  StgTestDaemon *d = dfx_start (NULL);
  g_autofree gchar *body = NULL;

  ck_assert_uint_eq (stg_test_http_get (d->http_port, "/health", &body), 200);
  ck_assert_str_eq (body, "ok\n");
  g_free (g_steal_pointer (&body));
  ck_assert_uint_eq (stg_test_http_get (d->http_port, "/no/such/page", &body), 404);
  dfx_stop (d);
}
END_TEST

START_TEST (create_and_read_jobs)
{
  StgTestDaemon *d = dfx_start ("--cluster=devcluster", NULL);
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);

  g_autoptr (ApiResponse) r1 = create_job (c, "hello", 3);
  ck_assert_int_eq (r1->responseCode, API_RESPONSE_CODE_OK);
  ck_assert_str_eq (r1->serverInfo->clusterName, "devcluster");

  /* A second create of the same key is refused, naming it and an instance
   * that has not ended. */
  g_autoptr (ApiResponse) r2 = create_job (c, "hello", 3);
  ck_assert_int_eq (r2->responseCode, API_RESPONSE_CODE_INVALID_REQUEST);
  ck_assert_uint_eq (r2->details->len, 1);
  const gchar *exists = ((ApiResponseDetail *) r2->details->pdata[0])->message;
  ck_assert_msg (g_str_has_prefix (exists, "job www/prod/hello already exists: instance 0 is "),
                 "%s", exists);

  /* Bad input names the field. */
  g_autoptr (ApiResponse) r3 = create_job (c, "bad name", 3);
  ck_assert_int_eq (r3->responseCode, API_RESPONSE_CODE_INVALID_REQUEST);
  ck_assert_ptr_nonnull (strstr (((ApiResponseDetail *) r3->details->pdata[0])->message,
                                 "description.key.name"));
  g_autoptr (ApiResponse) r4 = create_job (c, "zero", 0);
  ck_assert_int_eq (r4->responseCode, API_RESPONSE_CODE_INVALID_REQUEST);
  ck_assert_ptr_nonnull (strstr (((ApiResponseDetail *) r4->details->pdata[0])->message,
                                 "instanceCount"));

  g_autoptr (ApiResponse) jobs = get_jobs (c, "www");
  ck_assert_int_eq (jobs->responseCode, API_RESPONSE_CODE_OK);
  ck_assert (jobs->__isset_result);
  ck_assert_uint_eq (g_hash_table_size (jobs->result->getJobsResult->configs), 1);
  g_autoptr (GList) configs = g_hash_table_get_keys (jobs->result->getJobsResult->configs);
  ApiJobConfiguration *jc = configs->data;
  ck_assert_str_eq (jc->key->name, "hello");
  ck_assert_int_eq (jc->instanceCount, 3);
  ck_assert_str_eq (jc->taskConfig->job->name, "hello");
  ck_assert_str_eq (jc->taskConfig->executorConfig->name, "stagger");

  g_autoptr (ApiResponse) none = get_jobs (c, "nobody");
  ck_assert_uint_eq (g_hash_table_size (none->result->getJobsResult->configs), 0);

  g_autoptr (GError) error = NULL;
  g_autoptr (ApiResponse) summary = g_object_new (API_TYPE_RESPONSE, NULL);
  ck_assert (api_read_only_scheduler_if_get_job_summary (API_READ_ONLY_SCHEDULER_IF (c->client),
                                                         &summary, "www", &error));
  ck_assert_int_eq (summary->responseCode, API_RESPONSE_CODE_OK);
  g_autoptr (GList) sums = g_hash_table_get_keys (summary->result->jobSummaryResult->summaries);
  ck_assert_uint_eq (g_list_length (sums), 1);
  ApiJobSummary *js = sums->data;
  ck_assert_int_eq (js->stats->pendingTaskCount + js->stats->activeTaskCount, 3);

  g_autoptr (ApiResponse) updates = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (ApiJobUpdateQuery) q = g_object_new (API_TYPE_JOB_UPDATE_QUERY, "role", "www", NULL);
  ck_assert (api_read_only_scheduler_if_get_job_update_summaries (API_READ_ONLY_SCHEDULER_IF (c->client),
                                                                  &updates, q, &error));
  ck_assert_int_eq (updates->responseCode, API_RESPONSE_CODE_OK);
  ck_assert_uint_eq (updates->result->getJobUpdateSummariesResult->updateSummaries->len, 0);

  stg_test_client_free (g_steal_pointer (&c));
  dfx_stop (d);
}
END_TEST

typedef struct
{
  guint16 port;
  gint index;
  gboolean ok;
  gchar *why;
} Worker;

static gpointer
worker_run (gpointer data)
{
  Worker *w = data;
  g_autoptr (GError) error = NULL;
  g_autofree gchar *name = g_strdup_printf ("job%02d", w->index);
  g_autoptr (ThriftTransport) framed =
    THRIFT_TRANSPORT (stg_framed_client_new ("127.0.0.1", w->port, 60, 64 << 20));
  g_autoptr (ThriftProtocol) proto = stg_binary_protocol_new (framed);
  g_autoptr (ApiStaggerSchedulerClient) client =
    g_object_new (API_TYPE_STAGGER_SCHEDULER_CLIENT, "input_protocol", proto,
                  "output_protocol", proto, NULL);
  g_autoptr (ApiJobConfiguration) job = stg_test_job ("many", "prod", name, 2, "sleep 60");
  g_autoptr (ApiResponse) created = g_object_new (API_TYPE_RESPONSE, NULL);

  if (!thrift_transport_open (framed, &error))
    {
      w->why = g_strdup_printf ("connect: %s", error ? error->message : "failed");
      return NULL;
    }
  if (!api_aurora_scheduler_manager_if_create_job (API_AURORA_SCHEDULER_MANAGER_IF (client),
                                                   &created, job, &error))
    {
      w->why = g_strdup_printf ("createJob: %s", error ? error->message : "failed");
      return NULL;
    }
  if (created->responseCode != API_RESPONSE_CODE_OK)
    {
      w->why = g_strdup_printf ("createJob answered %d", created->responseCode);
      return NULL;
    }
  /* Several reads on the same connection. */
  for (int i = 0; i < 5; i++)
    {
      g_autoptr (ApiResponse) jobs = g_object_new (API_TYPE_RESPONSE, NULL);
      if (!api_read_only_scheduler_if_get_jobs (API_READ_ONLY_SCHEDULER_IF (client), &jobs, "many",
                                                &error) ||
          jobs->responseCode != API_RESPONSE_CODE_OK)
        {
          w->why = g_strdup_printf ("getJobs: %s", error ? error->message : "not OK");
          return NULL;
        }
    }
  thrift_transport_close (framed, NULL);
  w->ok = TRUE;
  return NULL;
}

START_TEST (fifty_clients_at_once)
{
  StgTestDaemon *d = dfx_start (NULL);
  Worker workers[50];
  GThread *threads[50];

  /* The generated get_type() functions are not thread-safe: register every
   * type the workers use from this thread first, with one round trip. */
  {
    g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
    g_autoptr (ApiResponse) warm = get_jobs (c, "many");
    g_autoptr (ApiJobConfiguration) job = stg_test_job ("warm", "prod", "up", 1, "true");
    (void) warm;
    (void) job;
    g_type_ensure (API_TYPE_STAGGER_SCHEDULER_CLIENT);
    g_type_ensure (API_TYPE_AURORA_SCHEDULER_MANAGER_CREATE_JOB_ARGS);
    g_type_ensure (API_TYPE_AURORA_SCHEDULER_MANAGER_CREATE_JOB_RESULT);
    g_type_ensure (API_TYPE_READ_ONLY_SCHEDULER_GET_JOBS_ARGS);
    g_type_ensure (API_TYPE_READ_ONLY_SCHEDULER_GET_JOBS_RESULT);
  }

  for (gint i = 0; i < 50; i++)
    {
      workers[i] = (Worker) { d->thrift_port, i, FALSE, NULL };
      threads[i] = g_thread_new ("client", worker_run, &workers[i]);
    }
  for (gint i = 0; i < 50; i++)
    {
      g_thread_join (threads[i]);
      ck_assert_msg (workers[i].ok, "client %d failed: %s", i, workers[i].why);
    }
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiResponse) jobs = get_jobs (c, "many");
  ck_assert_uint_eq (g_hash_table_size (jobs->result->getJobsResult->configs), 50);
  stg_test_client_free (g_steal_pointer (&c));
  dfx_stop (d);
}
END_TEST

/* Opens a plain socket to @port. */
static GSocketConnection *
raw_connect (guint16 port)
{
  g_autoptr (GSocketClient) client = g_socket_client_new ();
  g_autoptr (GError) error = NULL;
  GSocketConnection *conn = g_socket_client_connect_to_host (client, "127.0.0.1", port, NULL, &error);

  ck_assert_msg (conn != NULL, "connect: %s", error ? error->message : "");
  return conn;
}

/* TRUE when the server closed @conn (a read sees end of stream). */
static gboolean
closed_by_server (GSocketConnection *conn)
{
  guint8 buf[64];
  g_autoptr (GError) error = NULL;
  GSocket *sock = g_socket_connection_get_socket (conn);

  g_socket_set_timeout (sock, 10);
  gssize n = g_socket_receive (sock, (gchar *) buf, sizeof buf, NULL, &error);
  return n == 0 || (n < 0 && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT));
}

START_TEST (oversize_frame_rejected)
{
  StgTestDaemon *d = dfx_start ("--max-frame-size=4096", NULL);
  g_autoptr (StgTestClient) before = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiResponse) r0 = create_job (before, "first", 1);
  ck_assert_int_eq (r0->responseCode, API_RESPONSE_CODE_OK);

  /* A header announcing 100 MB: closed before any body is read. */
  g_autoptr (GSocketConnection) big = raw_connect (d->thrift_port);
  static const guint8 header[4] = { 0x05, 0xf5, 0xe1, 0x00 };
  ck_assert (g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (big)), header,
                                        4, NULL, NULL, NULL));
  ck_assert (closed_by_server (big));

  /* A real frame just over the limit is refused the same way. */
  g_autoptr (GSocketConnection) over = raw_connect (d->thrift_port);
  guint8 *frame = g_malloc0 (4 + 4097);
  guint32 be = GUINT32_TO_BE (4097);
  memcpy (frame, &be, 4);
  g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (over)), frame, 4 + 4097,
                             NULL, NULL, NULL);
  g_free (frame);
  ck_assert (closed_by_server (over));

  /* The connection opened before, and a new one, still work. */
  g_autoptr (ApiResponse) r1 = create_job (before, "second", 1);
  ck_assert_int_eq (r1->responseCode, API_RESPONSE_CODE_OK);
  g_autoptr (StgTestClient) after = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiResponse) jobs = get_jobs (after, "www");
  ck_assert_uint_eq (g_hash_table_size (jobs->result->getJobsResult->configs), 2);

  stg_test_client_free (g_steal_pointer (&before));
  stg_test_client_free (g_steal_pointer (&after));
  dfx_stop (d);
}
END_TEST

START_TEST (malformed_frames_close_only_their_connection)
{
  StgTestDaemon *d = dfx_start (NULL);
  g_autoptr (StgTestClient) good = stg_test_client_new (d->thrift_port);

  /* Garbage that is not even a message header. */
  g_autoptr (GSocketConnection) junk = raw_connect (d->thrift_port);
  static const guint8 garbage[] = { 0, 0, 0, 6, 'h', 'e', 'l', 'l', 'o', '!' };
  g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (junk)), garbage,
                             sizeof garbage, NULL, NULL, NULL);
  ck_assert (closed_by_server (junk));

  /* A frame cut short by a client that goes away. */
  g_autoptr (GSocketConnection) cut = raw_connect (d->thrift_port);
  static const guint8 partial[] = { 0, 0, 1, 0, 0x80, 0x01 };
  g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (cut)), partial,
                             sizeof partial, NULL, NULL, NULL);
  g_io_stream_close (G_IO_STREAM (cut), NULL, NULL);

  g_autoptr (ApiResponse) r = create_job (good, "still", 1);
  ck_assert_int_eq (r->responseCode, API_RESPONSE_CODE_OK);
  stg_test_client_free (g_steal_pointer (&good));
  dfx_stop (d);
}
END_TEST

START_TEST (jobs_survive_restart)
{
  StgTestDaemon *d = dfx_start (NULL);
  {
    g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
    g_autoptr (ApiResponse) r = create_job (c, "durable", 4);
    ck_assert_int_eq (r->responseCode, API_RESPONSE_CODE_OK);
  }
  dfx_stop (d);

  /* A clean restart... */
  d = dfx_start (NULL);
  {
    g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
    g_autoptr (ApiResponse) jobs = get_jobs (c, "www");
    ck_assert_uint_eq (g_hash_table_size (jobs->result->getJobsResult->configs), 1);
    g_autoptr (ApiResponse) r = create_job (c, "another", 1);
    ck_assert_int_eq (r->responseCode, API_RESPONSE_CODE_OK);
  }
  /* ...and one after kill -9. */
  stg_test_daemon_kill9 (d);
  stg_test_daemon_free (d);
  d = dfx_start (NULL);
  {
    g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
    g_autoptr (ApiResponse) jobs = get_jobs (c, "www");
    ck_assert_uint_eq (g_hash_table_size (jobs->result->getJobsResult->configs), 2);
    g_autoptr (GList) configs = g_hash_table_get_keys (jobs->result->getJobsResult->configs);
    for (GList *l = configs; l; l = l->next)
      {
        ApiJobConfiguration *jc = l->data;
        ck_assert_int_eq (jc->instanceCount, g_str_equal (jc->key->name, "durable") ? 4 : 1);
      }
  }
  dfx_stop (d);
}
END_TEST

/* Runs staggerd with @args and returns its exit status and stderr. */
static gint
run_staggerd (gchar **err, ...)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GError) error = NULL;
  va_list ap;
  const gchar *arg;
  gint status;

  g_ptr_array_add (argv, stg_test_program ("staggerd"));
  va_start (ap, err);
  while ((arg = va_arg (ap, const gchar *)) != NULL)
    g_ptr_array_add (argv, g_strdup (arg));
  va_end (ap);
  g_ptr_array_add (argv, NULL);
  ck_assert (g_spawn_sync (NULL, (gchar **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL,
                           err, &status, &error));
  return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

START_TEST (settings_from_config_file)
{
  g_autofree gchar *conf = g_build_filename (dfx.dir, "staggerd.conf", NULL);
  g_autofree gchar *data = g_build_filename (dfx.dir, "data", NULL);
  g_autofree gchar *text = g_strdup_printf ("[staggerd]\ncluster = fromfile\ndata_dir = %s\n"
                                            "[store]\nsqlite_synchronous = normal\n",
                                            data);
  g_autofree gchar *conf_arg = g_strconcat ("--config=", conf, NULL);

  ck_assert (g_file_set_contents (conf, text, -1, NULL));
  StgTestDaemon *d = stg_test_daemon_start (data, conf_arg, NULL);
  {
    g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
    g_autoptr (ApiResponse) jobs = get_jobs (c, "");
    ck_assert_str_eq (jobs->serverInfo->clusterName, "fromfile");
  }
  dfx_stop (d);

  /* The command line wins over the file. */
  d = stg_test_daemon_start (data, conf_arg, "--cluster=fromflag", NULL);
  {
    g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
    g_autoptr (ApiResponse) jobs = get_jobs (c, "");
    ck_assert_str_eq (jobs->serverInfo->clusterName, "fromflag");
  }
  dfx_stop (d);

  /* Typos and bad values are refused with a clear message. */
  ck_assert (g_file_set_contents (conf, "[staggerd]\nclustr = x\n", -1, NULL));
  g_autofree gchar *err1 = NULL;
  ck_assert_int_eq (run_staggerd (&err1, conf_arg, NULL), 2);
  ck_assert_ptr_nonnull (strstr (err1, "unknown key 'clustr'"));
  ck_assert (g_file_set_contents (conf, "[staggerd]\nhttp_port = 70000\n", -1, NULL));
  g_autofree gchar *err2 = NULL;
  ck_assert_int_eq (run_staggerd (&err2, conf_arg, NULL), 2);
  ck_assert_ptr_nonnull (strstr (err2, "http_port"));
  g_autofree gchar *err3 = NULL;
  ck_assert_int_eq (run_staggerd (&err3, "--no-such-flag", NULL), 2);
  g_autofree gchar *out4 = NULL;
  ck_assert_int_eq (run_staggerd (&out4, "--help", NULL), 0);
  g_autofree gchar *err5 = NULL;
  ck_assert_int_eq (run_staggerd (&err5, "--runtime=kubernetes", NULL), 2);
  ck_assert_ptr_nonnull (strstr (err5, "unknown runtime 'kubernetes' (known: local, simulated, fleet)"));
  ck_assert (g_file_set_contents (conf, "[staggerd]\nport_range = 900-100\n", -1, NULL));
  g_autofree gchar *err6 = NULL;
  ck_assert_int_eq (run_staggerd (&err6, conf_arg, NULL), 2);
  ck_assert_ptr_nonnull (strstr (err6, "port_range"));
  ck_assert (g_file_set_contents (conf, "[store]\nsqlite_synchronous = sometimes\n", -1, NULL));
  g_autofree gchar *err7 = NULL;
  ck_assert_int_eq (run_staggerd (&err7, conf_arg, NULL), 2);
  ck_assert_ptr_nonnull (strstr (err7, "sqlite_synchronous: say full or normal"));
  ck_assert (g_file_set_contents (conf, "[staggerd]\ncpu_limit = shares\n", -1, NULL));
  g_autofree gchar *err7b = NULL;
  ck_assert_int_eq (run_staggerd (&err7b, conf_arg, NULL), 2);
  ck_assert_ptr_nonnull (strstr (err7b, "cpu_limit: say quota or share"));
  ck_assert (g_file_set_contents (conf, "[gates]\nallowed_hosts = *.example.org, 10.0.0.0/33\n", -1,
                                  NULL));
  g_autofree gchar *err8 = NULL;
  ck_assert_int_eq (run_staggerd (&err8, conf_arg, NULL), 2);
  ck_assert_ptr_nonnull (strstr (err8, "[gates] allowed_hosts: '10.0.0.0/33' is neither a host "
                                       "name pattern"));
  ck_assert (g_file_set_contents (conf, "[staggerd]\nmax_buffered_per_address = 10\n", -1, NULL));
  g_autofree gchar *err10 = NULL;
  ck_assert_int_eq (run_staggerd (&err10, conf_arg, NULL), 2);
  ck_assert_ptr_nonnull (strstr (err10, "max_buffered_per_address: must be between 65536"));
  ck_assert (g_file_set_contents (conf, "[gates]\nallowed_host = x\n", -1, NULL));
  g_autofree gchar *err9 = NULL;
  ck_assert_int_eq (run_staggerd (&err9, conf_arg, NULL), 2);
  ck_assert_ptr_nonnull (strstr (err9, "unknown key 'allowed_host' in [gates]"));

  /* Webhooks: each mistake named. */
  static const struct
  {
    const gchar *conf;
    const gchar *says;
  } hooks[] = {
    { "[notify]\nurl = http://x/\nsecrt = k\n", "unknown key 'secrt' in [notify]" },
    { "[notify ops]\nurl = http://x/\nqueue_size = 3\n",
      "unknown key 'queue_size' in [notify ops]" },
    { "[notify]\nurl = ftp://x/\n", "[notify] url: 'ftp://x/' is not an http:// or https:// URL" },
    { "[notify ops]\nevents = plan\n", "[notify ops] url: missing" },
    { "[notify]\nurl = http://x/\nevents = plan.DONE, stage.WEIRD\n",
      "[notify] events: 'stage.WEIRD' is not an event" },
    { "[notify]\nurl = http://x/\nsecret = a\nsecret_file = /nowhere\n", "not both" },
    { "[notify]\nmax_attempts = 0\n", "[notify] max_attempts: must be a number between 1" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (hooks); i++)
    {
      ck_assert (g_file_set_contents (conf, hooks[i].conf, -1, NULL));
      g_autofree gchar *err = NULL;
      ck_assert_int_eq (run_staggerd (&err, conf_arg, NULL), 2);
      ck_assert_msg (strstr (err, hooks[i].says), "case %u: %s", i, err);
    }
}
END_TEST

/* An HTTP gate of a plan goes only where [gates] allowed_hosts lets it,
 * and its result says why not. */
START_TEST (http_gates_go_where_allowed_hosts_says)
{
  g_autofree gchar *conf = g_build_filename (dfx.dir, "staggerd.conf", NULL);
  g_autofree gchar *conf_arg = g_strconcat ("--config=", conf, NULL);
  ck_assert (g_file_set_contents (conf, "[gates]\nallowed_hosts = *.example.org\n", -1, NULL));
  StgTestDaemon *d = dfx_start (conf_arg, "--runtime=simulated", NULL);
  stg_rollout_create_plain_job (d, "www", "gated", 1);
  g_autoptr (ApiRolloutStage) stage = stg_rollout_plan_stage ("s", "www", "gated", 1, NULL);
  g_autofree gchar *url = g_strdup_printf ("http://127.0.0.1:%u/health", d->http_port);
  g_ptr_array_add (stage->before, g_object_new (API_TYPE_ROLLOUT_GATE, "name", "up", "kind",
                                                API_ROLLOUT_GATE_KIND_HTTP, "url", url, NULL));
  g_autoptr (ApiRolloutPlan) plan = g_object_new (API_TYPE_ROLLOUT_PLAN, "name", "p", NULL);
  g_ptr_array_add (plan->stages, g_object_ref (stage));
  g_autofree gchar *id = stg_rollout_start_plan (d, plan);

  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  for (gint64 end = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;;)
    {
      g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
      ck_assert (api_stagger_scheduler_if_get_rollout_plan_details (c->client, &r, id, NULL));
      GPtrArray *results = r->result->getRolloutPlanDetailsResult->details->gateResults;
      if (results->len > 0)
        {
          ApiRolloutGateResult *g = results->pdata[0];
          ck_assert (!g->passed);
          ck_assert_str_eq (g->message, "refused: 127.0.0.1 is not in [gates] allowed_hosts");
          break;
        }
      ck_assert_msg (g_get_monotonic_time () < end, "the gate was never tried");
      g_usleep (50 * 1000);
    }
  dfx_stop (d);
}
END_TEST

START_TEST (busy_port_reported)
{
  StgTestDaemon *d = dfx_start (NULL);
  g_autofree gchar *other = g_build_filename (dfx.dir, "other", NULL);
  g_autofree gchar *data_arg = g_strconcat ("--data-dir=", other, NULL);
  g_autofree gchar *port_arg = g_strdup_printf ("--thrift-port=%u", d->thrift_port);
  g_autofree gchar *err = NULL;

  ck_assert_int_eq (run_staggerd (&err, data_arg, port_arg, "--http-port=0", NULL), 1);
  ck_assert_ptr_nonnull (strstr (err, "cannot listen"));
  dfx_stop (d);
}
END_TEST

/* ---- updates over Thrift (no runtime in this build of the daemon) ---------- */

static ApiJobUpdateRequest *
update_request (const gchar *name, const gchar *command, gint32 count)
{
  g_autoptr (ApiJobConfiguration) job = stg_test_job ("www", "prod", name, count, command);
  g_autoptr (ApiJobUpdateSettings) settings = g_object_new (API_TYPE_JOB_UPDATE_SETTINGS,
      "updateGroupSize", 1, "minWaitInInstanceRunningMs", 1000, "rollbackOnFailure", TRUE, NULL);
  return g_object_new (API_TYPE_JOB_UPDATE_REQUEST, "taskConfig", job->taskConfig,
                       "instanceCount", count, "settings", settings, NULL);
}

static ApiResponse *
call_start (StgTestClient *c, ApiJobUpdateRequest *r, const gchar *message)
{
  g_autoptr (GError) error = NULL;
  ApiResponse *response = g_object_new (API_TYPE_RESPONSE, NULL);
  ck_assert_msg (api_aurora_scheduler_manager_if_start_job_update (
                   API_AURORA_SCHEDULER_MANAGER_IF (c->client), &response, r, message, &error),
                 "startJobUpdate: %s", error ? error->message : "");
  return response;
}

static gint
update_status (StgTestClient *c, ApiJobUpdateKey *key)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  /* A C GLib client sends every field, so "no key" is an empty key. */
  g_autoptr (ApiJobUpdateQuery) q = g_object_new (API_TYPE_JOB_UPDATE_QUERY, "key", key, NULL);
  g_autoptr (ApiJobUpdateKey) none = g_object_new (API_TYPE_JOB_UPDATE_KEY, NULL);
  ck_assert (api_read_only_scheduler_if_get_job_update_details (API_READ_ONLY_SCHEDULER_IF (c->client),
                                                                &r, none, q, &error));
  ck_assert_int_eq (r->responseCode, API_RESPONSE_CODE_OK);
  ck_assert_uint_eq (r->result->getJobUpdateDetailsResult->detailsList->len, 1);
  ApiJobUpdateDetails *d = r->result->getJobUpdateDetailsResult->detailsList->pdata[0];
  return d->update->summary->state->status;
}

/* Pauses, resumes (twice: the second is refused), pulses and aborts @key. */
static void
steer_update (StgTestClient *c, ApiJobUpdateKey *key)
{
  g_autoptr (GError) error = NULL;

  g_autoptr (ApiResponse) paused = g_object_new (API_TYPE_RESPONSE, NULL);
  ck_assert (api_aurora_scheduler_manager_if_pause_job_update (API_AURORA_SCHEDULER_MANAGER_IF (c->client),
                                                               &paused, key, "wait", &error));
  ck_assert_int_eq (paused->responseCode, API_RESPONSE_CODE_OK);
  ck_assert_int_eq (update_status (c, key), API_JOB_UPDATE_STATUS_ROLL_FORWARD_PAUSED);
  g_autoptr (ApiResponse) resumed = g_object_new (API_TYPE_RESPONSE, NULL);
  ck_assert (api_aurora_scheduler_manager_if_resume_job_update (API_AURORA_SCHEDULER_MANAGER_IF (c->client),
                                                                &resumed, key, NULL, &error));
  ck_assert_int_eq (resumed->responseCode, API_RESPONSE_CODE_OK);
  g_autoptr (ApiResponse) resumed2 = g_object_new (API_TYPE_RESPONSE, NULL);
  ck_assert (api_aurora_scheduler_manager_if_resume_job_update (API_AURORA_SCHEDULER_MANAGER_IF (c->client),
                                                                &resumed2, key, NULL, &error));
  ck_assert_int_eq (resumed2->responseCode, API_RESPONSE_CODE_INVALID_REQUEST);
  ck_assert_ptr_nonnull (strstr (((ApiResponseDetail *) resumed2->details->pdata[0])->message,
                                 "ROLLING_FORWARD -> ROLLING_FORWARD"));
  g_autoptr (ApiResponse) pulsed = g_object_new (API_TYPE_RESPONSE, NULL);
  ck_assert (api_aurora_scheduler_manager_if_pulse_job_update (API_AURORA_SCHEDULER_MANAGER_IF (c->client),
                                                               &pulsed, key, &error));
  ck_assert_int_eq (pulsed->result->pulseJobUpdateResult->status, API_JOB_UPDATE_PULSE_STATUS_OK);
  g_autoptr (ApiResponse) aborted = g_object_new (API_TYPE_RESPONSE, NULL);
  ck_assert (api_aurora_scheduler_manager_if_abort_job_update (API_AURORA_SCHEDULER_MANAGER_IF (c->client),
                                                               &aborted, key, "enough", &error));
  ck_assert_int_eq (aborted->responseCode, API_RESPONSE_CODE_OK);
  ck_assert_int_eq (update_status (c, key), API_JOB_UPDATE_STATUS_ABORTED);
  g_autoptr (ApiResponse) finished = g_object_new (API_TYPE_RESPONSE, NULL);
  ck_assert (api_aurora_scheduler_manager_if_pulse_job_update (API_AURORA_SCHEDULER_MANAGER_IF (c->client),
                                                               &finished, key, &error));
  ck_assert_int_eq (finished->result->pulseJobUpdateResult->status, API_JOB_UPDATE_PULSE_STATUS_FINISHED);
}

START_TEST (update_calls_over_thrift)
{
  StgTestDaemon *d = dfx_start (NULL);
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (GError) error = NULL;

  g_autoptr (ApiResponse) created = create_job (c, "svc", 3);
  ck_assert_int_eq (created->responseCode, API_RESPONSE_CODE_OK);

  /* The diff says what would change, without starting anything. */
  g_autoptr (ApiJobUpdateRequest) req = update_request ("svc", "sleep 61", 4);
  g_autoptr (ApiResponse) diff = g_object_new (API_TYPE_RESPONSE, NULL);
  ck_assert (api_read_only_scheduler_if_get_job_update_diff (API_READ_ONLY_SCHEDULER_IF (c->client),
                                                             &diff, req, &error));
  ck_assert_int_eq (diff->responseCode, API_RESPONSE_CODE_OK);
  ck_assert_uint_eq (g_hash_table_size (diff->result->getJobUpdateDiffResult->add), 1);
  ck_assert_uint_eq (g_hash_table_size (diff->result->getJobUpdateDiffResult->update), 1);

  g_autoptr (ApiResponse) started = call_start (c, req, "first rollout");
  ck_assert_int_eq (started->responseCode, API_RESPONSE_CODE_OK);
  ApiJobUpdateKey *key = started->result->startJobUpdateResult->key;
  ck_assert_str_eq (key->job->name, "svc");
  ck_assert_int_eq (update_status (c, key), API_JOB_UPDATE_STATUS_ROLLING_FORWARD);

  /* A second one is refused and points at the first. */
  g_autoptr (ApiResponse) again = call_start (c, req, NULL);
  ck_assert_int_eq (again->responseCode, API_RESPONSE_CODE_INVALID_REQUEST);
  ck_assert (again->__isset_result);
  ck_assert_str_eq (again->result->startJobUpdateResult->key->id, key->id);
  ck_assert_str_eq (again->result->startJobUpdateResult->updateSummary->key->id, key->id);

  steer_update (c, key);

  /* Unknown keys are INVALID_REQUEST. */
  g_autoptr (ApiJobKey) job = g_object_ref (key->job);
  g_autoptr (ApiJobUpdateKey) unknown = g_object_new (API_TYPE_JOB_UPDATE_KEY, "job", job,
                                                      "id", "nope", NULL);
  g_autoptr (ApiResponse) nope = g_object_new (API_TYPE_RESPONSE, NULL);
  ck_assert (api_aurora_scheduler_manager_if_pulse_job_update (API_AURORA_SCHEDULER_MANAGER_IF (c->client),
                                                               &nope, unknown, &error));
  ck_assert_int_eq (nope->responseCode, API_RESPONSE_CODE_INVALID_REQUEST);

  /* The details carry events with users and messages. */
  g_autoptr (ApiResponse) details = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (ApiJobUpdateQuery) empty = g_object_new (API_TYPE_JOB_UPDATE_QUERY, NULL);
  ck_assert (api_read_only_scheduler_if_get_job_update_details (API_READ_ONLY_SCHEDULER_IF (c->client),
                                                                &details, key, empty, &error));
  ApiJobUpdateDetails *dd = details->result->getJobUpdateDetailsResult->details;
  ck_assert_uint_eq (dd->updateEvents->len, 4);
  ApiJobUpdateEvent *first = dd->updateEvents->pdata[0];
  ck_assert_str_eq (first->message, "first rollout");
  ck_assert_uint_eq (g_hash_table_size (dd->update->instructions->initialState), 1);

  /* killTasks and addInstances work on the job once no update is active. */
  g_autoptr (GHashTable) one = g_hash_table_new_full (g_int_hash, g_int_equal, g_free, NULL);
  gint32 *id = g_new (gint32, 1);
  *id = 2;
  g_hash_table_add (one, id);
  g_autoptr (ApiResponse) killed = g_object_new (API_TYPE_RESPONSE, NULL);
  ck_assert (api_aurora_scheduler_manager_if_kill_tasks (API_AURORA_SCHEDULER_MANAGER_IF (c->client),
                                                         &killed, job, one, "bye", &error));
  ck_assert_int_eq (killed->responseCode, API_RESPONSE_CODE_OK);
  g_autoptr (ApiInstanceKey) ik = g_object_new (API_TYPE_INSTANCE_KEY, "jobKey", job, "instanceId", 0, NULL);
  g_autoptr (ApiResponse) added = g_object_new (API_TYPE_RESPONSE, NULL);
  ck_assert (api_aurora_scheduler_manager_if_add_instances (API_AURORA_SCHEDULER_MANAGER_IF (c->client),
                                                            &added, ik, 2, &error));
  ck_assert_int_eq (added->responseCode, API_RESPONSE_CODE_OK);
  g_autoptr (ApiResponse) jobs = get_jobs (c, "www");
  g_autoptr (GList) configs = g_hash_table_get_keys (jobs->result->getJobsResult->configs);
  ck_assert_int_eq (((ApiJobConfiguration *) configs->data)->instanceCount, 4);

  stg_test_client_free (g_steal_pointer (&c));
  dfx_stop (d);
}
END_TEST

/* createJob of a big job on the simulated runtime: one call that comes back
 * within a generous bound (correctness, not a benchmark: what once took
 * minutes, one statement and commit per instance and a COUNT(*) per
 * instance afterwards) while /health keeps answering, and the runtime's
 * default limit. The bound is on the CPU time staggerd spends, which a
 * machine busy with other work does not stretch, with a wall-clock deadline
 * as well. */
typedef struct
{
  guint16 port;
  gint32 instances;
  gint code;
  gint64 took_us;
  gint done; /* atomic */
} BigCreate;

static gpointer
big_create_run (gpointer data)
{
  BigCreate *b = data;
  g_autoptr (StgTestClient) c = stg_test_client_new (b->port);
  gint64 t0 = g_get_monotonic_time ();
  g_autoptr (ApiResponse) r = create_job (c, "big", b->instances);

  b->took_us = g_get_monotonic_time () - t0;
  b->code = r->responseCode;
  g_atomic_int_set (&b->done, 1);
  return NULL;
}

START_TEST (hundred_thousand_instances_in_one_call)
{
  StgTestDaemon *d = dfx_start ("--runtime=simulated", NULL);
  BigCreate b = { d->thrift_port, 100000, -1, 0, 0 };
  {
    /* Register the client's types on this thread first (see above). */
    g_autoptr (StgTestClient) warm = stg_test_client_new (d->thrift_port);
    g_autoptr (ApiResponse) none = get_jobs (warm, "www");
    (void) none;
    g_type_ensure (API_TYPE_AURORA_SCHEDULER_MANAGER_CREATE_JOB_ARGS);
    g_type_ensure (API_TYPE_AURORA_SCHEDULER_MANAGER_CREATE_JOB_RESULT);
  }
  gdouble cpu0 = stg_test_cpu_seconds (d->pid);
  GThread *t = g_thread_new ("create", big_create_run, &b);
  guint answered = 0;
  while (!g_atomic_int_get (&b.done))
    {
      g_autofree gchar *body = NULL;
      ck_assert_uint_eq (stg_test_http_get (d->http_port, "/health", &body), 200);
      answered++;
    }
  g_thread_join (t);
  gdouble cpu = stg_test_cpu_seconds (d->pid) - cpu0;
  ck_assert_int_eq (b.code, API_RESPONSE_CODE_OK);
  ck_assert_msg (cpu < 5.0, "createJob of %d instances took %.1f s of CPU", b.instances, cpu);
  ck_assert_msg (b.took_us < 60 * G_USEC_PER_SEC, "createJob of %d instances took %.1f s",
                 b.instances, b.took_us / 1e6);
  ck_assert_uint_ge (answered, 1);
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiResponse) jobs = get_jobs (c, "www");
  g_autoptr (GList) configs = g_hash_table_get_keys (jobs->result->getJobsResult->configs);
  ck_assert_int_eq (((ApiJobConfiguration *) configs->data)->instanceCount, 100000);
  /* One more is over the simulated runtime's default limit. */
  g_autoptr (ApiResponse) over = create_job (c, "over", 100001);
  ck_assert_int_eq (over->responseCode, API_RESPONSE_CODE_INVALID_REQUEST);
  stg_test_client_free (g_steal_pointer (&c));
  dfx_stop (d);
}
END_TEST

/* Runs @sql on the database file @path, or fails the test. */
static void
sql_on (const gchar *path, const gchar *sql)
{
  sqlite3 *db = NULL;
  char *err = NULL;

  ck_assert_int_eq (sqlite3_open (path, &db), SQLITE_OK);
  ck_assert_msg (sqlite3_exec (db, sql, NULL, NULL, &err) == SQLITE_OK, "%s: %s", sql, err);
  sqlite3_close (db);
}

/* The first column of the first row of @sql on @path, as text (or NULL). */
static gchar *
text_on (const gchar *path, const gchar *sql)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  gchar *text = NULL;

  ck_assert_int_eq (sqlite3_open (path, &db), SQLITE_OK);
  if (sqlite3_prepare_v2 (db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step (st) == SQLITE_ROW)
    text = g_strdup ((const gchar *) sqlite3_column_text (st, 0));
  sqlite3_finalize (st);
  sqlite3_close (db);
  return text;
}

static gint64
count_on (const gchar *path, const gchar *sql)
{
  g_autofree gchar *text = text_on (path, sql);
  return text ? g_ascii_strtoll (text, NULL, 10) : -1;
}

START_TEST (retention_prunes_in_steps_and_reclaims)
{
  g_autofree gchar *path = g_build_filename (dfx.dir, "retention.db", NULL);
  g_autoptr (GError) error = NULL;
  StgStore *store = stg_store_open (path, &error);

  ck_assert_msg (store != NULL, "%s", error ? error->message : "");
  stg_store_close (store);
  ck_assert_int_eq (count_on (path, "PRAGMA auto_vacuum"), 2);   /* INCREMENTAL */
  /* Job a: one active update (the oldest) and five finished ones; job b:
   * three finished ones. Every update has 200 old instance events. */
  g_autoptr (GString) sql = g_string_new ("BEGIN;");
  for (gint i = 0; i < 9; i++)
    g_string_append_printf (sql,
        "INSERT INTO updates (id, uid, role, environment, name, user, status, active, created_ms, "
        "modified_ms, request, instructions) VALUES (%d, 'u%d', 'www', 'prod', '%s', 'me', 0, %d, "
        "%d, 0, x'00', x'00');"
        "WITH RECURSIVE k(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM k WHERE n < 200) "
        "INSERT INTO instance_events (update_id, instance_id, ts_ms, action, message) "
        "SELECT %d, n, 5, 0, printf ('%%.500c', 'x') FROM k;",
        i + 1, i, i < 6 ? "a" : "b", i == 0, i, i + 1);
  g_string_append (sql, "INSERT INTO task_events (job_id, instance_id, ts_ms, status) "
                        "VALUES (1, 0, 5, 0), (1, 0, 5000, 0);"
                        "COMMIT;");
  sql_on (path, sql->str);

  store = stg_store_open (path, &error);
  guint deleted = 0;
  /* A step deletes at most @limit rows of each kind. */
  ck_assert (stg_store_prune (store, 2, 1000, 1, &deleted, &error));
  ck_assert_uint_eq (deleted, 3);
  ck_assert (stg_store_prune (store, 2, 1000, 100000, &deleted, &error));
  stg_store_close (store);
  /* a keeps its active update and its two newest finished ones, b two. */
  g_autofree gchar *kept = text_on (path, "SELECT group_concat (id) FROM (SELECT id FROM updates ORDER BY id)");
  ck_assert_str_eq (kept, "1,5,6,8,9");
  /* Old events of finished updates are gone; the active update keeps its. */
  ck_assert_int_eq (count_on (path, "SELECT count(*) FROM instance_events"), 200);
  ck_assert_int_eq (count_on (path, "SELECT count(*) FROM instance_events WHERE update_id = 1"), 200);
  ck_assert_int_eq (count_on (path, "SELECT count(*) FROM task_events"), 1);

  /* The freed pages go back to the file system, a few per step. */
  store = stg_store_open (path, &error);
  gint64 free_before = stg_store_free_pages (store);
  ck_assert_int_gt (free_before, 10);
  ck_assert (stg_store_reclaim (store, 5, &error));
  ck_assert_int_eq (stg_store_free_pages (store), free_before - 5);
  ck_assert (stg_store_reclaim (store, 100000, &error));
  ck_assert_int_eq (stg_store_free_pages (store), 0);
  stg_store_close (store);
}
END_TEST

static Suite *
daemon_suite (void)
{
  Suite *s = suite_create ("daemon");
  TCase *tc = tcase_create ("staggerd");

  tcase_set_timeout (tc, 120);
  tcase_add_checked_fixture (tc, dfx_setup, dfx_teardown);
  tcase_add_test (tc, health_and_clean_shutdown);
  tcase_add_test (tc, create_and_read_jobs);
  tcase_add_test (tc, fifty_clients_at_once);
  tcase_add_test (tc, oversize_frame_rejected);
  tcase_add_test (tc, malformed_frames_close_only_their_connection);
  tcase_add_test (tc, jobs_survive_restart);
  tcase_add_test (tc, settings_from_config_file);
  tcase_add_test (tc, http_gates_go_where_allowed_hosts_says);
  tcase_add_test (tc, busy_port_reported);
  tcase_add_test (tc, update_calls_over_thrift);
  tcase_add_test (tc, hundred_thousand_instances_in_one_call);
  tcase_add_test (tc, retention_prunes_in_steps_and_reclaims);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return dfx_run (daemon_suite ());
}
