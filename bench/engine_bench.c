/* engine_bench.c: the real engine and the real SQLite store (on disk, with
 * the daemon's settings) rolling jobs of 1,000 to 100,000 instances, driven
 * by a bench runtime whose instances are healthy the moment they start (or
 * fail, past a given instance, to make an update roll back).
 *
 *   engine_bench [--quick] [--case N] [--json FILE] [--postgresql URL]
 *
 * For each case (on SQLite, then on PostgreSQL with --postgresql): wall and
 * CPU time per instance transition, commits per engine step and in all,
 * rows written (store events), peak RSS. Prints
 * one table; --json writes the figures. Timings are for comparing runs on
 * one machine, not for asserting anything.
 */
#include "config.h"


#include <sys/resource.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "common/clock.h"
#include "common/enums.h"
#include "common/jobkey.h"
#include "engine/engine.h"
#include "runtime/runtime.h"
#include "store/store.h"
#include "cpu_time.h"
#include "pg_reset.h"

/* ---- the bench runtime ----------------------------------------------------------- */

typedef struct
{
  StgRuntime base;
  StgClock *clock;
  GHashTable *slots;         /* (job << 20 | instance) -> StgTaskObservation* */
  gint64 bad_config;         /* this config fails on instances >= fail_from */
  gint32 fail_from;
} BenchRuntime;

static gint64
slot_key (gint64 job, gint32 instance)
{
  return (job << 20) | instance;
}

static StgTaskObservation *
slot (BenchRuntime *rt, gint64 job, gint32 instance)
{
  gint64 k = slot_key (job, instance);
  StgTaskObservation *o = g_hash_table_lookup (rt->slots, &k);
  if (o == NULL)
    {
      o = g_new0 (StgTaskObservation, 1);
      g_hash_table_insert (rt->slots, g_memdup2 (&k, sizeof k), o);
    }
  return o;
}

static gboolean
br_apply (StgRuntime *base, gint64 job, gint32 instance, gint64 config, GError **error)
{
  BenchRuntime *rt = (BenchRuntime *) base;
  StgTaskObservation *o = slot (rt, job, instance);
  gint64 now = stg_clock_now_ms (rt->clock);
  (void) error;

  if (o->config_id == config && o->phase == STG_TASK_RUNNING)
    return TRUE;
  o->config_id = config;
  o->phase_since_ms = now;
  if (config == rt->bad_config && instance >= rt->fail_from)
    {
      o->phase = STG_TASK_FAILED;
      o->status = API_SCHEDULE_STATUS_FAILED;
      o->failures++;
    }
  else
    {
      o->phase = STG_TASK_RUNNING;
      o->status = API_SCHEDULE_STATUS_RUNNING;
      o->healthy_since_ms = now;
    }
  stg_runtime_notify_later (base, job, instance);
  return TRUE;
}

static gboolean
br_kill (StgRuntime *base, gint64 job, gint32 instance, GError **error)
{
  BenchRuntime *rt = (BenchRuntime *) base;
  gint64 k = slot_key (job, instance);
  (void) error;
  g_hash_table_remove (rt->slots, &k);
  stg_runtime_notify_later (base, job, instance);
  return TRUE;
}

static gboolean
br_restart (StgRuntime *base, gint64 job, gint32 instance, GError **error)
{
  StgTaskObservation *o = slot ((BenchRuntime *) base, job, instance);
  return br_apply (base, job, instance, o->config_id, error);
}

static void
br_observe (StgRuntime *base, gint64 job, gint32 instance, StgTaskObservation *out)
{
  BenchRuntime *rt = (BenchRuntime *) base;
  gint64 k = slot_key (job, instance);
  StgTaskObservation *o = g_hash_table_lookup (rt->slots, &k);
  *out = o ? *o : (StgTaskObservation) { .phase = STG_TASK_ABSENT };
}

static void
br_free (StgRuntime *base)
{
  BenchRuntime *rt = (BenchRuntime *) base;
  g_hash_table_unref (rt->slots);
  g_free (rt);
}

static const StgRuntimeOps bench_ops = {
  .apply = br_apply, .kill = br_kill, .restart = br_restart, .observe = br_observe, .free = br_free,
};

static BenchRuntime *
bench_runtime_new (StgClock *clock)
{
  BenchRuntime *rt = g_new0 (BenchRuntime, 1);
  rt->base.ops = &bench_ops;
  rt->clock = clock;
  rt->slots = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  rt->fail_from = G_MAXINT32;
  return rt;
}

/* ---- one case ----------------------------------------------------------------------- */

typedef struct
{
  gint32 instances;
  const gchar *strategy;      /* "queue" or "batch" */
  gint32 group;
  gdouble fail_at;            /* 0: none; 0.9: instances from 90% fail */
} Case;

typedef struct
{
  const gchar *status;
  gdouble wall_s, cpu_s;
  guint64 steps, commits;
  gint64 transitions;
  glong rss_kb;
} Result;

static ApiTaskConfig *
task (ApiJobKey *key, const gchar *version)
{
  g_autofree gchar *data = g_strdup_printf ("{\"command\": \"serve --version %s\"}", version);
  g_autoptr (ApiExecutorConfig) exec = g_object_new (API_TYPE_EXECUTOR_CONFIG, "name", "stagger",
                                                     "data", data, NULL);
  g_autoptr (ApiIdentity) owner = g_object_new (API_TYPE_IDENTITY, "user", "bench", NULL);
  return g_object_new (API_TYPE_TASK_CONFIG, "job", key, "owner", owner, "isService", TRUE,
                       "executorConfig", exec, NULL);
}

static gboolean
quit_when_done (gpointer data)
{
  gpointer *pair = data;
  if (stg_engine_active_updates (pair[0]) == 0)
    {
      g_main_loop_quit (pair[1]);
      return G_SOURCE_REMOVE;
    }
  return G_SOURCE_CONTINUE;
}

static gboolean relaxed_sync; /* SQLite with synchronous=NORMAL */

/* One case, on SQLite in a temporary directory or (@pg_url) PostgreSQL. */
static Result
run_case (const Case *c, const gchar *pg_url)
{
  g_autoptr (GError) error = NULL;
  g_autofree gchar *dir = g_dir_make_tmp ("stagger-bench-XXXXXX", &error);
  g_autofree gchar *db = g_build_filename (dir, "stagger.db", NULL);
  if (pg_url != NULL)
    stg_bench_pg_reset (pg_url);
  StgStore *store = stg_store_open (pg_url != NULL ? pg_url : db, &error);
  if (store != NULL && pg_url == NULL && relaxed_sync &&
      !stg_store_sqlite_relax_sync (store, &error))
    g_error ("bench: %s", error->message);
  StgClock *clock = stg_clock_new_real ();
  BenchRuntime *rt = bench_runtime_new (clock);
  StgEngine *engine = stg_engine_new (store, clock, &rt->base, NULL);
  g_autoptr (ApiJobKey) key = stg_job_key_new ("bench", "prod", "fleet");
  g_autoptr (ApiTaskConfig) v1 = task (key, "1");
  g_autoptr (ApiTaskConfig) v2 = task (key, "2");
  g_autoptr (ApiIdentity) owner = g_object_new (API_TYPE_IDENTITY, "user", "bench", NULL);
  g_autoptr (ApiJobConfiguration) job = g_object_new (API_TYPE_JOB_CONFIGURATION, "key", key,
      "owner", owner, "taskConfig", v1, "instanceCount", c->instances, NULL);
  g_autoptr (GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  Result r = { 0 };

  if (store == NULL || !stg_engine_recover (engine, &error) ||
      !stg_engine_create_job (engine, job, "bench", &error))
    g_error ("bench: setup: %s", error->message);
  /* Let the instances come up. */
  while (g_main_context_iteration (NULL, FALSE))
    ;

  g_autoptr (ApiJobUpdateSettings) settings = g_object_new (API_TYPE_JOB_UPDATE_SETTINGS,
      "updateGroupSize", c->group, "minWaitInInstanceRunningMs", 0, "rollbackOnFailure", TRUE,
      "maxPerInstanceFailures", 0, "maxFailedInstances", 0, NULL);
  if (g_str_equal (c->strategy, "batch"))
    {
      g_autoptr (ApiBatchJobUpdateStrategy) b = g_object_new (API_TYPE_BATCH_JOB_UPDATE_STRATEGY,
                                                              "groupSize", c->group, NULL);
      g_autoptr (ApiJobUpdateStrategy) s = g_object_new (API_TYPE_JOB_UPDATE_STRATEGY, "batchStrategy", b, NULL);
      g_object_set (settings, "updateStrategy", s, NULL);
    }
  else
    {
      g_autoptr (ApiQueueJobUpdateStrategy) q = g_object_new (API_TYPE_QUEUE_JOB_UPDATE_STRATEGY,
                                                              "groupSize", c->group, NULL);
      g_autoptr (ApiJobUpdateStrategy) s = g_object_new (API_TYPE_JOB_UPDATE_STRATEGY, "queueStrategy", q, NULL);
      g_object_set (settings, "updateStrategy", s, NULL);
    }
  g_autoptr (ApiJobUpdateRequest) req = g_object_new (API_TYPE_JOB_UPDATE_REQUEST, "taskConfig", v2,
      "instanceCount", c->instances, "settings", settings, NULL);

  guint64 steps0 = stg_engine_step_count (engine), commits0 = stg_store_commit_count (store);
  gdouble cpu0 = stg_bench_cpu_seconds ();
  gint64 t0 = g_get_monotonic_time ();
  g_autoptr (ApiJobUpdateKey) ukey = stg_engine_start_update (engine, req, "bench", "bench", NULL, &error);
  if (ukey == NULL)
    g_error ("bench: start: %s", error->message);
  if (c->fail_at > 0)
    {
      g_autoptr (StgUpdateRow) row = stg_store_get_update (store, ukey->id, &error);
      rt->bad_config = row ? row->desired_config_id : 0;
      rt->fail_from = (gint32) (c->instances * c->fail_at);
    }
  gpointer pair[2] = { engine, loop };
  g_timeout_add (1, quit_when_done, pair);
  g_main_loop_run (loop);
  r.wall_s = (g_get_monotonic_time () - t0) / 1e6;
  r.cpu_s = stg_bench_cpu_seconds () - cpu0;
  r.steps = stg_engine_step_count (engine) - steps0;
  r.commits = stg_store_commit_count (store) - commits0;
  g_autoptr (StgUpdateRow) done = stg_store_get_update (store, ukey->id, &error);
  r.status = stg_update_status_name (done ? done->status : -1);
  /* Forward moves, plus the moves back when it rolled back. */
  r.transitions = c->fail_at > 0 ? (gint64) (c->instances * c->fail_at) * 2 + 1 : c->instances;
  struct rusage ru;
  getrusage (RUSAGE_SELF, &ru);
  r.rss_kb = ru.ru_maxrss;

  stg_engine_free (engine);
  stg_runtime_free (&rt->base);
  stg_store_close (store);
  stg_clock_free (clock);
  g_autofree gchar *wal = g_strconcat (db, "-wal", NULL);
  g_autofree gchar *shm = g_strconcat (db, "-shm", NULL);
  g_unlink (db);
  g_unlink (wal);
  g_unlink (shm);
  g_rmdir (dir);
  return r;
}

/* Prints one row of the table and adds it to @b; returns the CPU µs per
 * transition. @store: "sqlite", "sqlite~" (synchronous=NORMAL) or "pg". */
static gdouble
report (JsonBuilder *b, const Case *c, const gchar *store, const Result *r)
{
  gdouble per_wall = r->wall_s * 1e6 / (gdouble) r->transitions;
  gdouble per_cpu = r->cpu_s * 1e6 / (gdouble) r->transitions;

  g_print ("%-7s %-9d %-6s %6d %-9s %-15s %9.2f %11.1f %11.1f %7" G_GUINT64_FORMAT
           " %9" G_GUINT64_FORMAT " %9.1f\n",
           store, c->instances, c->strategy, c->group, c->fail_at > 0 ? "from 90%" : "none",
           r->status, r->wall_s, per_wall, per_cpu, r->steps, r->commits, r->rss_kb / 1024.0);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "store");
  json_builder_add_string_value (b, g_str_equal (store, "pg")       ? "postgresql"
                                    : g_str_equal (store, "sqlite") ? "sqlite"
                                                                    : "sqlite-normal-sync");
  json_builder_set_member_name (b, "instances");
  json_builder_add_int_value (b, c->instances);
  json_builder_set_member_name (b, "strategy");
  json_builder_add_string_value (b, c->strategy);
  json_builder_set_member_name (b, "group");
  json_builder_add_int_value (b, c->group);
  json_builder_set_member_name (b, "fail_at");
  json_builder_add_double_value (b, c->fail_at);
  json_builder_set_member_name (b, "status");
  json_builder_add_string_value (b, r->status);
  json_builder_set_member_name (b, "wall_s");
  json_builder_add_double_value (b, r->wall_s);
  json_builder_set_member_name (b, "cpu_s");
  json_builder_add_double_value (b, r->cpu_s);
  json_builder_set_member_name (b, "cpu_us_per_transition");
  json_builder_add_double_value (b, per_cpu);
  json_builder_set_member_name (b, "steps");
  json_builder_add_int_value (b, (gint64) r->steps);
  json_builder_set_member_name (b, "commits");
  json_builder_add_int_value (b, (gint64) r->commits);
  json_builder_set_member_name (b, "peak_rss_kb");
  json_builder_add_int_value (b, r->rss_kb);
  json_builder_end_object (b);
  return per_cpu;
}

int
main (int argc, char **argv)
{
  gboolean quick = FALSE;
  gint only = -1;
  g_autofree gchar *json_path = NULL, *pg_url = NULL;
  const GOptionEntry entries[] = {
    { "postgresql", 0, 0, G_OPTION_ARG_STRING, &pg_url,
      "Run each case on PostgreSQL at URL too, after SQLite (the database is emptied)", "URL" },
    { "quick", 0, 0, G_OPTION_ARG_NONE, &quick, "Only the small cases (a minute)", NULL },
    { "case", 0, 0, G_OPTION_ARG_INT, &only, "Only case N of the table (from 1; for profiling)",
      "N" },
    { "json", 0, 0, G_OPTION_ARG_FILENAME, &json_path, "Write the figures to FILE as JSON",
      "FILE" },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- the engine and store at scale");
  g_autoptr (GError) error = NULL;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      g_printerr ("engine_bench: %s\n", error->message);
      return 2;
    }
  static const Case all[] = {
    { 1000, "queue", 1, 0 }, { 1000, "queue", 100, 0 }, { 1000, "batch", 100, 0 },
    { 1000, "batch", 1000, 0 }, { 10000, "queue", 100, 0 }, { 10000, "batch", 100, 0 },
    { 10000, "batch", 1000, 0 }, { 10000, "batch", 100, 0.9 }, { 100000, "queue", 1000, 0 },
    { 100000, "batch", 1000, 0 },
  };
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_array (b);
  g_print ("%-7s %-9s %-6s %6s %-9s %-15s %9s %11s %11s %7s %9s %9s\n", "store", "instances",
           "kind", "group", "fails", "status", "wall s", "wall us/tr", "cpu us/tr", "steps",
           "commits", "rss MiB");
  gdouble cpu10k = 0, cpu100k = 0, step_full = 0, step_normal = 0;
  for (guint k = 0; k < G_N_ELEMENTS (all) * 2; k++)
    {
      const Case *c = &all[k / 2];
      const gchar *url = k % 2 ? pg_url : NULL;
      if ((quick && c->instances > 10000) || (k % 2 && pg_url == NULL) ||
          (only > 0 && k / 2 + 1 != (guint) only))
        continue;
      Result r = run_case (c, url);
      gdouble per_cpu = report (b, c, url ? "pg" : "sqlite", &r);
      if (url == NULL && c->strategy[0] == 'b' && c->group == 1000 && c->fail_at == 0)
        {
          if (c->instances == 10000)
            cpu10k = r.cpu_s;
          if (c->instances == 100000)
            cpu100k = r.cpu_s;
        }
      if (url == NULL && c->group == 1)
        {
          step_full = per_cpu;
          relaxed_sync = TRUE;
          Result rr = run_case (c, NULL);
          relaxed_sync = FALSE;
          step_normal = report (b, c, "sqlite~", &rr);
        }
    }
  json_builder_end_array (b);
  if (cpu10k > 0 && cpu100k > 0)
    g_print ("growth of CPU time from 10,000 to 100,000 instances (batch 1000): %.1fx (target: at most 11x)\n",
             cpu100k / cpu10k);
  g_print ("targets: one commit per engine step; at most 20 us of CPU per instance transition\n");
  if (step_full > 0)
    g_print ("group of 1, CPU us per transition: %.1f (commits wait for the disk), %.1f (sqlite~: "
             "[store] sqlite_synchronous = normal); target at most 40: %s, %s\n",
             step_full, step_normal, step_full <= 40 ? "met" : "MISSED",
             step_normal <= 40 ? "met" : "MISSED");
  if (json_path != NULL)
    {
      g_autoptr (JsonGenerator) gen = json_generator_new ();
      g_autoptr (JsonNode) root = json_builder_get_root (b);
      json_generator_set_root (gen, root);
      json_generator_set_pretty (gen, TRUE);
      if (!json_generator_to_file (gen, json_path, &error))
        {
          g_printerr ("engine_bench: %s\n", error->message);
          return 1;
        }
    }
  return 0;
}
