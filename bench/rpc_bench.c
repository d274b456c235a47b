/* rpc_bench.c: RPC throughput and latency of a real staggerd, side by side
 * with the no-op server (bench/noop_server: the same servers and
 * dispatcher, a handler that does nothing), which is the limit of the
 * stack itself.
 *
 *   rpc_bench [--quick] [--seconds S] [--json FILE] [--postgresql URL]
 *
 * For pulseJobUpdate and getJobUpdateSummaries (100 updates stored), over
 * framed binary TCP, HTTP binary and HTTP JSON, with 1, 8 and 64 clients
 * (a thread and a connection each): requests per second, p50, p99 and max
 * latency, and the ratio to the no-op server. Each cell runs for a fixed
 * time (default 2 s) after a warm-up. Then each target is printed beside
 * its figure, met or missed. With --postgresql, a third server, staggerd
 * on that PostgreSQL database (emptied first), gets the same calls: its
 * rows ("postgresql") follow the SQLite ones; the targets are SQLite's.
 */
#include "config.h"

#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

#include "api/json_protocol.h"
#include "common/binary_protocol.h"
#include "common/mem_transport.h"
#include "../tests/framed_client.h"
#include "cli/http_client_transport.h"
#include "common/jobkey.h"

#include "pg_reset.h"

typedef struct
{
  GSubprocess *process;
  guint16 http_port, thrift_port;
  gchar *dir;
  ApiJobUpdateKey *key; /* the active update its pulses are for */
} Server;

static Server *
server_start (const gchar *const *argv_head, const gchar *dir)
{
  Server *s = g_new0 (Server, 1);
  g_autoptr (GError) error = NULL;
  g_autofree gchar *ready = g_build_filename (dir, "ready.json", NULL);
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();

  s->dir = g_strdup (dir);
  for (guint i = 0; argv_head[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) argv_head[i]);
  g_autofree gchar *ready_arg = g_strconcat ("--ready-file=", ready, NULL);
  if (g_str_has_suffix (argv_head[0], "noop_server"))
    {
      g_ptr_array_add (argv, (gpointer) "--ready-file");
      g_ptr_array_add (argv, ready);
    }
  else
    g_ptr_array_add (argv, ready_arg);
  g_ptr_array_add (argv, NULL);
  s->process = g_subprocess_newv ((const gchar *const *) argv->pdata, G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error);
  if (s->process == NULL)
    g_error ("rpc_bench: %s", error->message);
  for (gint i = 0; i < 300 && !g_file_test (ready, G_FILE_TEST_EXISTS); i++)
    g_usleep (100000);
  g_autoptr (JsonParser) p = json_parser_new ();
  if (!json_parser_load_from_file (p, ready, &error))
    g_error ("rpc_bench: %s did not start: %s", argv_head[0], error->message);
  JsonObject *o = json_node_get_object (json_parser_get_root (p));
  s->http_port = (guint16) json_object_get_int_member (o, "http_port");
  s->thrift_port = (guint16) json_object_get_int_member (o, "thrift_port");
  return s;
}

static void
server_stop (Server *s)
{
  g_subprocess_send_signal (s->process, SIGTERM);
  g_subprocess_wait (s->process, NULL, NULL);
  g_object_unref (s->process);
  g_clear_object (&s->key);
  g_free (s->dir);
  g_free (s);
}

typedef enum { T_TCP, T_HTTP_BINARY, T_HTTP_JSON } Transport;
static const gchar *const transport_names[] = { "tcp binary", "http binary", "http json" };

typedef struct
{
  ThriftTransport *transport;
  ThriftProtocol *protocol;
  ApiStaggerSchedulerIf *client;
  ApiJobUpdateKey *key; /* borrowed from the server */
} Client;

static Client *
client_new (Server *s, Transport t)
{
  Client *c = g_new0 (Client, 1);
  g_autoptr (GError) error = NULL;

  c->key = s->key;
  if (t == T_TCP)
    c->transport = THRIFT_TRANSPORT (stg_framed_client_new ("127.0.0.1", s->thrift_port, 60, 64 << 20));
  else
    {
      StgHttpClientOptions o;
      stg_http_client_options_init (&o);
      o.content_type = t == T_HTTP_JSON ? "application/vnd.apache.thrift.json" : NULL;
      g_autofree gchar *url = g_strdup_printf ("http://127.0.0.1:%u/api", s->http_port);
      c->transport = THRIFT_TRANSPORT (stg_http_client_transport_new (url, &o, &error));
    }
  c->protocol = t == T_HTTP_JSON ? stg_json_protocol_new (c->transport) : stg_binary_protocol_new (c->transport);
  c->client = g_object_new (API_TYPE_STAGGER_SCHEDULER_CLIENT, "input_protocol", c->protocol,
                            "output_protocol", c->protocol, NULL);
  if (!thrift_transport_open (c->transport, &error))
    g_error ("rpc_bench: cannot connect: %s", error->message);
  return c;
}

static void
client_free (Client *c)
{
  thrift_transport_close (c->transport, NULL);
  g_object_unref (c->client);
  g_object_unref (c->protocol);
  g_object_unref (c->transport);
  g_free (c);
}

static ApiJobUpdateQuery *bench_query; /* the job's updates */

static gboolean
call (Client *c, gboolean pulse)
{
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (GError) error = NULL;
  gboolean ok =
      pulse ? api_aurora_scheduler_manager_if_pulse_job_update (API_AURORA_SCHEDULER_MANAGER_IF (
                                                                    c->client),
                                                                &r, c->key, &error)
            : api_read_only_scheduler_if_get_job_update_summaries (API_READ_ONLY_SCHEDULER_IF (
                                                                       c->client),
                                                                   &r, bench_query, &error);
  return ok && r->responseCode == API_RESPONSE_CODE_OK;
}

typedef struct
{
  Server *server;
  Transport transport;
  gboolean pulse;
  gint64 until_us;
  GArray *latencies;     /* gint64 microseconds */
  guint errors;
} Worker;

static gpointer
worker_run (gpointer data)
{
  Worker *w = data;
  Client *c = client_new (w->server, w->transport);

  for (gint i = 0; i < 20; i++)   /* warm-up */
    call (c, w->pulse);
  while (g_get_monotonic_time () < w->until_us)
    {
      gint64 t0 = g_get_monotonic_time ();
      if (!call (c, w->pulse))
        w->errors++;
      gint64 dt = g_get_monotonic_time () - t0;
      g_array_append_val (w->latencies, dt);
    }
  client_free (c);
  return NULL;
}

typedef struct
{
  gdouble rps, p50_ms, p99_ms, max_ms;
  guint errors;
} Figures;

static gint
cmp64 (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;
  return x < y ? -1 : x > y;
}

static Figures
measure (Server *s, Transport t, gboolean pulse, guint clients, gdouble seconds)
{
  g_autoptr (GPtrArray) threads = g_ptr_array_new ();
  Worker *w = g_new0 (Worker, clients);
  g_autoptr (GArray) all = g_array_new (FALSE, FALSE, sizeof (gint64));
  Figures f = { 0 };

  gint64 start = g_get_monotonic_time () + 300000;   /* after connecting and warming up */
  for (guint i = 0; i < clients; i++)
    {
      w[i] = (Worker) { s, t, pulse, start + (gint64) (seconds * 1e6), g_array_new (FALSE, FALSE, sizeof (gint64)), 0 };
      g_ptr_array_add (threads, g_thread_new ("client", worker_run, &w[i]));
    }
  for (guint i = 0; i < clients; i++)
    {
      g_thread_join (threads->pdata[i]);
      g_array_append_vals (all, w[i].latencies->data, w[i].latencies->len);
      f.errors += w[i].errors;
      g_array_unref (w[i].latencies);
    }
  g_free (w);
  g_array_sort (all, cmp64);
  /* Throughput over the whole run, warm-up excluded. */
  f.rps = all->len / seconds;
  if (all->len > 0)
    {
      f.p50_ms = g_array_index (all, gint64, all->len / 2) / 1000.0;
      f.p99_ms = g_array_index (all, gint64, (guint) (all->len * 0.99)) / 1000.0;
      f.max_ms = g_array_index (all, gint64, all->len - 1) / 1000.0;
    }
  return f;
}

/* A job, 100 finished updates and one active coordinated one. */
static void
seed (Server *s)
{
  Client *c = client_new (s, T_TCP);
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiJobKey) key = stg_job_key_new ("bench", "prod", "rpc");
  g_autoptr (ApiIdentity) owner = g_object_new (API_TYPE_IDENTITY, "user", "bench", NULL);

  for (gint i = 0; i <= 101; i++)
    {
      g_autofree gchar *data = g_strdup_printf ("{\"command\": \"serve %d\"}", i);
      g_autoptr (ApiExecutorConfig) exec = g_object_new (API_TYPE_EXECUTOR_CONFIG, "name", "stagger", "data", data, NULL);
      g_autoptr (ApiTaskConfig) task = g_object_new (API_TYPE_TASK_CONFIG, "job", key, "owner", owner,
                                                     "isService", TRUE, "executorConfig", exec, NULL);
      g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
      if (i == 0)
        {
          g_autoptr (ApiJobConfiguration) job = g_object_new (API_TYPE_JOB_CONFIGURATION, "key", key, "owner", owner,
                                                              "taskConfig", task, "instanceCount", 10, NULL);
          api_aurora_scheduler_manager_if_create_job (API_AURORA_SCHEDULER_MANAGER_IF (c->client), &r, job, &error);
          continue;
        }
      g_autoptr (ApiJobUpdateSettings) st = g_object_new (API_TYPE_JOB_UPDATE_SETTINGS, "updateGroupSize", 1,
          "minWaitInInstanceRunningMs", 3600000, "blockIfNoPulsesAfterMs", 3600000, NULL);
      g_autoptr (ApiJobUpdateRequest) req = g_object_new (API_TYPE_JOB_UPDATE_REQUEST, "taskConfig", task,
                                                          "instanceCount", 10, "settings", st, NULL);
      if (!api_aurora_scheduler_manager_if_start_job_update (API_AURORA_SCHEDULER_MANAGER_IF (c->client), &r, req,
                                                             "bench", &error) || r->responseCode != API_RESPONSE_CODE_OK)
        g_error ("rpc_bench: startJobUpdate failed");
      ApiJobUpdateKey *k = r->result->startJobUpdateResult->key;
      if (i <= 100)
        {
          g_autoptr (ApiResponse) a = g_object_new (API_TYPE_RESPONSE, NULL);
          api_aurora_scheduler_manager_if_abort_job_update (API_AURORA_SCHEDULER_MANAGER_IF (c->client), &a, k, "", &error);
        }
      else
        s->key = g_object_ref (k);
    }
  bench_query = g_object_new (API_TYPE_JOB_UPDATE_QUERY, "jobKey", key, "limit", 100, NULL);
  /* Every type the client threads use is registered here, on one thread. */
  c->key = s->key;
  if (!call (c, TRUE) || !call (c, FALSE))
    g_error ("rpc_bench: the seeded daemon does not answer");
  g_type_ensure (STG_TYPE_JSON_PROTOCOL);
  g_type_ensure (STG_TYPE_HTTP_CLIENT_TRANSPORT);
  g_type_ensure (STG_TYPE_FRAMED_CLIENT);
  client_free (c);
}

/* ---- an independent load generator: wrk --------------------------------------- */

static const gchar WRK_SCRIPT[] =
    "wrk.method = \"POST\"\n"
    "wrk.headers[\"Content-Type\"] = \"application/vnd.apache.thrift.binary\"\n"
    "local f = io.open(os.getenv(\"STG_WRK_BODY\"), \"rb\")\n"
    "wrk.body = f:read(\"*a\")\n"
    "f:close()\n";

/* A pulseJobUpdate call of the active update, as Thrift binary bytes. */
static GBytes *
pulse_body (ApiJobUpdateKey *key)
{
  g_autoptr (StgMemTransport) out = stg_mem_transport_new (NULL, 0);
  g_autoptr (ThriftProtocol) p = stg_binary_protocol_new (THRIFT_TRANSPORT (out));
  g_autoptr (GObject) client = g_object_new (API_TYPE_STAGGER_SCHEDULER_CLIENT, "input_protocol", p,
                                             "output_protocol", p, NULL);

  if (!api_aurora_scheduler_manager_client_send_pulse_job_update (API_AURORA_SCHEDULER_MANAGER_IF (
                                                                      client),
                                                                  key, NULL))
    g_error ("rpc_bench: cannot encode a pulse");
  return stg_mem_transport_steal_output (out);
}

/* wrk's requests per second posting @body_file to @s's /api with
 * @connections keep-alive connections (2 threads); 0 when wrk fails. */
static gdouble
wrk_rps (Server *s, const gchar *script, const gchar *body_file, guint connections, guint seconds)
{
  g_autofree gchar *url = g_strdup_printf ("http://127.0.0.1:%u/api", s->http_port);
  g_autofree gchar *c = g_strdup_printf ("-c%u", connections);
  g_autofree gchar *d = g_strdup_printf ("-d%us", seconds);
  g_autoptr (GSubprocessLauncher) l = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                                 G_SUBPROCESS_FLAGS_STDERR_MERGE);
  g_autoptr (GError) error = NULL;
  g_autofree gchar *out = NULL;

  g_subprocess_launcher_setenv (l, "STG_WRK_BODY", body_file, TRUE);
  g_autoptr (GSubprocess) p = g_subprocess_launcher_spawn (l, &error, "wrk", "-t2", c, d, "-s",
                                                           script, url, NULL);
  if (p == NULL || !g_subprocess_communicate_utf8 (p, NULL, NULL, &out, NULL, &error))
    return 0;
  const gchar *line = out ? strstr (out, "Requests/sec:") : NULL;
  const gchar *non2xx = out ? strstr (out, "Non-2xx") : NULL;
  if (line == NULL || non2xx != NULL)
    {
      g_printerr ("rpc_bench: wrk: %s\n", out ? out : error->message);
      return 0;
    }
  return g_ascii_strtod (line + strlen ("Requests/sec:"), NULL);
}

/* The same pulses from wrk against both servers, at 8 and 64 connections;
 * the 64-connection rates go to @real64 and @base64 (0: not measured). */
static void
wrk_rows (Server *real, Server *base, const gchar *dir, guint seconds, gdouble *real64,
          gdouble *base64)
{
  g_autofree gchar *wrk = g_find_program_in_path ("wrk");
  g_autofree gchar *script = g_build_filename (dir, "pulse.lua", NULL);
  g_autofree gchar *body_file = g_build_filename (dir, "pulse.bin", NULL);
  g_autoptr (GBytes) body = pulse_body (real->key);

  if (wrk == NULL)
    {
      g_print ("wrk is not installed: no independent load generator figures\n");
      return;
    }
  if (!g_file_set_contents (script, WRK_SCRIPT, -1, NULL) ||
      !g_file_set_contents (body_file, g_bytes_get_data (body, NULL),
                            (gssize) g_bytes_get_size (body), NULL))
    g_error ("rpc_bench: cannot write wrk's files in %s", dir);
  static const guint conns[] = { 8, 64 };
  for (guint k = 0; k < G_N_ELEMENTS (conns); k++)
    {
      gdouble r = wrk_rps (real, script, body_file, conns[k], seconds);
      gdouble n = wrk_rps (base, script, body_file, conns[k], seconds);
      g_print ("%-22s %-11s %7u %10.0f %8s %8s %8s %10.0f %7.2f\n", "pulseJobUpdate (wrk)",
               "http binary", conns[k], r, "-", "-", "-", n, n > 0 ? r / n : 0);
      *real64 = r;
      *base64 = n;
    }
}

static void
verdict (const gchar *what, gdouble figure, gdouble target, gboolean at_least, gboolean measured)
{
  if (!measured)
    g_print ("  %-62s not measured (--quick)\n", what);
  else
    g_print ("  %-62s %8.2f  target %s %.2f: %s\n", what, figure, at_least ? ">=" : "<", target,
             (at_least ? figure >= target : figure < target) ? "met" : "MISSED");
}

static gdouble
ratio_of (const Figures *f, const Figures *base)
{
  return base->rps > 0 ? f->rps / base->rps : 0;
}

/* Each target of the issue next to its figure ([method][transport][clients]:
 * method 0 pulse, 1 summaries; clients 1, 8, 64). */
static void
print_targets (Figures all[2][3][3], Figures noop[2][3][3], gboolean quick, gdouble wrk_real,
               gdouble wrk_base)
{
  gdouble worst_ratio = G_MAXDOUBLE, worst_p99 = 0;

  for (gint t = 0; t < 3; t++)
    for (gint k = 0; k < 3; k++)
      if (!quick || k < 2)
        worst_ratio = MIN (worst_ratio, ratio_of (&all[1][t][k], &noop[1][t][k]));
  gdouble base_p99 = 0;
  for (gint t = 0; t < 3; t++)
    {
      worst_p99 = MAX (worst_p99, all[1][t][1].p99_ms);
      base_p99 = MAX (base_p99, noop[1][t][1].p99_ms);
    }
  g_print ("targets:\n");
  verdict ("pulseJobUpdate over TCP at 64 clients / no-op",
           ratio_of (&all[0][T_TCP][2], &noop[0][T_TCP][2]), 0.80, TRUE, !quick);
  verdict ("getJobUpdateSummaries / no-op, worst cell of every transport", worst_ratio, 0.50, TRUE,
           TRUE);
  verdict ("getJobUpdateSummaries p99 ms at 8 clients, worst transport", worst_p99, 5.0, FALSE,
           TRUE);
  g_print ("  %-62s %8.2f  (the clients' own decoding sets this floor)\n",
           "  the no-op server's p99 ms at 8 clients, same answer", base_p99);
  verdict ("HTTP binary no-op / TCP no-op, pulses at 64 clients (own client)",
           ratio_of (&noop[0][T_HTTP_BINARY][2], &noop[0][T_TCP][2]), 0.60, TRUE, !quick);
  verdict ("/api pulses / HTTP no-op at 64 clients (own client)",
           ratio_of (&all[0][T_HTTP_BINARY][2], &noop[0][T_HTTP_BINARY][2]), 0.80, TRUE, !quick);
  gdouble tcp_base = noop[0][T_TCP][2].rps;
  verdict ("HTTP no-op (wrk, 64 connections) / TCP no-op (64 clients)",
           tcp_base > 0 ? wrk_base / tcp_base : 0, 0.60, TRUE, !quick && wrk_base > 0);
  verdict ("/api pulses / HTTP no-op (wrk, 64 connections)", wrk_base > 0 ? wrk_real / wrk_base : 0,
           0.80, TRUE, wrk_base > 0);
}

static const guint counts[] = { 1, 8, 64 };

/* One cell of the table: a method over a transport with some clients. */
typedef struct
{
  gboolean pulse;
  Transport transport;
  guint clients;
} Cell;

/* Prints a row of @store's figures @f beside the no-op server's @nf, and
 * adds it to the JSON array @b. */
static void
row (JsonBuilder *b, const Cell *cell, const gchar *store, const Figures *f, const Figures *nf)
{
  const gchar *method = cell->pulse ? "pulseJobUpdate" : "getJobUpdateSummaries";
  gdouble ratio = nf->rps > 0 ? f->rps / nf->rps : 0;

  g_print ("%-22s %-11s %7u %-10s %10.0f %8.2f %8.2f %8.2f %10.0f %7.2f%s\n", method,
           transport_names[cell->transport], cell->clients, store, f->rps, f->p50_ms, f->p99_ms,
           f->max_ms, nf->rps, ratio, f->errors || nf->errors ? " (errors!)" : "");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "method");
  json_builder_add_string_value (b, method);
  json_builder_set_member_name (b, "transport");
  json_builder_add_string_value (b, transport_names[cell->transport]);
  json_builder_set_member_name (b, "clients");
  json_builder_add_int_value (b, cell->clients);
  json_builder_set_member_name (b, "store");
  json_builder_add_string_value (b, store);
  json_builder_set_member_name (b, "rps");
  json_builder_add_double_value (b, f->rps);
  json_builder_set_member_name (b, "p50_ms");
  json_builder_add_double_value (b, f->p50_ms);
  json_builder_set_member_name (b, "p99_ms");
  json_builder_add_double_value (b, f->p99_ms);
  json_builder_set_member_name (b, "max_ms");
  json_builder_add_double_value (b, f->max_ms);
  json_builder_set_member_name (b, "noop_rps");
  json_builder_add_double_value (b, nf->rps);
  json_builder_set_member_name (b, "ratio");
  json_builder_add_double_value (b, ratio);
  json_builder_set_member_name (b, "errors");
  json_builder_add_int_value (b, f->errors + nf->errors);
  json_builder_end_object (b);
}

/* A staggerd on the PostgreSQL database @url, emptied first. */
static Server *
pg_server (const gchar *staggerd, const gchar *url, const gchar *dir)
{
  g_autofree gchar *pg_dir = g_build_filename (dir, "pg", NULL);
  g_autofree gchar *data_arg = g_strconcat ("--data-dir=", pg_dir, "/data", NULL);
  g_autofree gchar *store_arg = g_strconcat ("--store=", url, NULL);

  stg_bench_pg_reset (url);
  g_mkdir_with_parents (pg_dir, 0700);
  const gchar *argv[] = { staggerd,        "--runtime=simulated", data_arg, store_arg,
                          "--http-port=0", "--thrift-port=0",     NULL };
  return server_start (argv, pg_dir);
}

int
main (int argc, char **argv)
{
  gboolean quick = FALSE;
  gdouble seconds = 2;
  g_autofree gchar *json_path = NULL, *pg_url = NULL;
  const GOptionEntry entries[] = {
    { "quick", 0, 0, G_OPTION_ARG_NONE, &quick, "1 and 8 clients only, 1 s each", NULL },
    { "seconds", 0, 0, G_OPTION_ARG_DOUBLE, &seconds, "Seconds per cell (default 2)", "S" },
    { "json", 0, 0, G_OPTION_ARG_FILENAME, &json_path, "Write the figures to FILE as JSON",
      "FILE" },
    { "postgresql", 0, 0, G_OPTION_ARG_STRING, &pg_url,
      "Also a staggerd on this PostgreSQL database (emptied first), beside SQLite", "URL" },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- RPC throughput against the stack's limit");
  g_autoptr (GError) error = NULL;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      g_printerr ("rpc_bench: %s\n", error->message);
      return 2;
    }
  if (quick)
    seconds = 1;
  g_autofree gchar *dir = g_dir_make_tmp ("stagger-rpc-XXXXXX", &error);
  g_autofree gchar *data = g_build_filename (dir, "data", NULL);
  g_autofree gchar *data_arg = g_strconcat ("--data-dir=", data, NULL);
  g_autofree gchar *staggerd = g_build_filename (STG_BUILDDIR, "staggerd", NULL);
  g_autofree gchar *noop = g_build_filename (STG_BUILDDIR, "bench", "noop_server", NULL);
  g_autofree gchar *noop_dir = g_build_filename (dir, "noop", NULL);
  g_mkdir_with_parents (noop_dir, 0700);
  const gchar *sargv[] = { staggerd, "--runtime=simulated", data_arg, "--http-port=0", "--thrift-port=0", NULL };
  const gchar *nargv[] = { noop, NULL };
  Server *real = server_start (sargv, dir);
  Server *base = server_start (nargv, noop_dir);
  Server *pg = pg_url != NULL ? pg_server (staggerd, pg_url, dir) : NULL;
  seed (real);
  base->key = g_object_ref (real->key); /* the no-op server takes any */
  if (pg != NULL)
    seed (pg);

  Figures all[2][3][3] = { 0 }, base_figures[2][3][3] = { 0 };
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_array (b);
  g_print ("%-22s %-11s %7s %-10s %10s %8s %8s %8s %10s %7s\n", "method", "transport", "clients",
           "store", "req/s", "p50 ms", "p99 ms", "max ms", "noop req/s", "ratio");
  for (gint m = 0; m < 2; m++)
    for (gint t = 0; t < 3; t++)
      for (guint k = 0; k < G_N_ELEMENTS (counts); k++)
        {
          if (quick && counts[k] > 8)
            continue;
          Cell cell = { m == 0, (Transport) t, counts[k] };
          base_figures[m][t][k] = measure (base, cell.transport, cell.pulse, cell.clients, seconds);
          all[m][t][k] = measure (real, cell.transport, cell.pulse, cell.clients, seconds);
          row (b, &cell, "sqlite", &all[m][t][k], &base_figures[m][t][k]);
          if (pg == NULL)
            continue;
          Figures pf = measure (pg, cell.transport, cell.pulse, cell.clients, seconds);
          row (b, &cell, "postgresql", &pf, &base_figures[m][t][k]);
        }
  json_builder_end_array (b);
  gdouble wrk_real = 0, wrk_base = 0;
  wrk_rows (real, base, dir, seconds, &wrk_real, &wrk_base);
  print_targets (all, base_figures, quick, wrk_real, wrk_base);
  server_stop (real);
  server_stop (base);
  if (pg != NULL)
    server_stop (pg);
  if (json_path != NULL)
    {
      g_autoptr (JsonGenerator) gen = json_generator_new ();
      g_autoptr (JsonNode) root = json_builder_get_root (b);
      json_generator_set_root (gen, root);
      json_generator_set_pretty (gen, TRUE);
      json_generator_to_file (gen, json_path, NULL);
    }
  return 0;
}
