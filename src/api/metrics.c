/* metrics.c: StgMetrics, what /metrics reports in Prometheus's text
 * exposition format (version 0.0.4).
 *
 * Counted here as calls happen: Thrift calls by method, with a latency
 * histogram (the dispatcher reports each). Read when scraped: updates and
 * instances by status (store), store commits and their time (store),
 * engine steps and instance transitions (engine), health checks by outcome
 * (the runtime counts them in a StgHealthCounts the daemon owns), and
 * what each job's instances use and reserve (the runtime measures them:
 * stg_engine_instance_usage), for jobs it measures at all. Only
 * known method names become label values, so clients cannot grow the
 * tables. Main-loop thread only.
 */
#include "config.h"

#include "api/metrics.h"
#include "common/enums.h"
#include "common/jobkey.h"

static const gdouble BUCKETS[] = { 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                   0.05,   0.1,   0.25,   0.5,   1 };
#define N_BUCKETS G_N_ELEMENTS (BUCKETS)

typedef struct
{
  guint64 count;
  gdouble sum;
  guint64 le[N_BUCKETS]; /* calls at or under each bucket's bound */
} Method;

struct _StgMetrics
{
  GHashTable *methods; /* name -> Method* */
};

StgMetrics *
stg_metrics_new (void)
{
  StgMetrics *m = g_new0 (StgMetrics, 1);

  m->methods = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  return m;
}

void
stg_metrics_free (StgMetrics *m)
{
  if (m == NULL)
    return;
  g_hash_table_unref (m->methods);
  g_free (m);
}

void
stg_metrics_rpc (StgMetrics *m, const gchar *method, gdouble seconds)
{
  Method *c = g_hash_table_lookup (m->methods, method);

  if (c == NULL)
    {
      c = g_new0 (Method, 1);
      g_hash_table_insert (m->methods, g_strdup (method), c);
    }
  c->count++;
  c->sum += seconds;
  for (guint i = 0; i < N_BUCKETS; i++)
    if (seconds <= BUCKETS[i])
      c->le[i]++;
}

static void
rpc_lines (StgMetrics *m, GString *out)
{
  g_autoptr (GList) names = g_list_sort (g_hash_table_get_keys (m->methods),
                                         (GCompareFunc) g_strcmp0);

  g_string_append (out, "# HELP stagger_rpc_duration_seconds Thrift calls by method, and how long "
                        "they took to answer.\n# TYPE stagger_rpc_duration_seconds histogram\n");
  for (GList *l = names; l != NULL; l = l->next)
    {
      Method *c = g_hash_table_lookup (m->methods, l->data);
      for (guint i = 0; i < N_BUCKETS; i++)
        g_string_append_printf (
            out,
            "stagger_rpc_duration_seconds_bucket{method=\"%s\",le=\"%g\"} %" G_GUINT64_FORMAT "\n",
            (gchar *) l->data, BUCKETS[i], c->le[i]);
      g_string_append_printf (
          out,
          "stagger_rpc_duration_seconds_bucket{method=\"%s\",le=\"+Inf\"} %" G_GUINT64_FORMAT "\n",
          (gchar *) l->data, c->count);
      g_string_append_printf (out, "stagger_rpc_duration_seconds_sum{method=\"%s\"} %.6f\n",
                              (gchar *) l->data, c->sum);
      g_string_append_printf (out,
                              "stagger_rpc_duration_seconds_count{method=\"%s\"} %" G_GUINT64_FORMAT
                              "\n",
                              (gchar *) l->data, c->count);
    }
}

static gint
compare_ints (gconstpointer a, gconstpointer b)
{
  return GPOINTER_TO_INT (a) - GPOINTER_TO_INT (b);
}

/* One gauge per status of @table ("updates" or "instances"). */
static gboolean
status_lines (StgStore *store, const gchar *table, GString *out, GError **error)
{
  g_autoptr (GHashTable) counts = stg_store_count_by_status (store, table, error);
  gboolean updates = g_str_equal (table, "updates");

  if (counts == NULL)
    return FALSE;
  g_string_append_printf (out, "# HELP stagger_%s %s by status.\n# TYPE stagger_%s gauge\n", table,
                          updates ? "Job updates kept" : "Instances", table);
  g_autoptr (GList) keys = g_list_sort (g_hash_table_get_keys (counts), compare_ints);
  for (GList *l = keys; l != NULL; l = l->next)
    {
      gint status = GPOINTER_TO_INT (l->data);
      const gchar *name = updates ? stg_update_status_name (status)
                                  : stg_schedule_status_name (status);
      g_string_append_printf (out, "stagger_%s{status=\"%s\"} %d\n", table, name,
                              GPOINTER_TO_INT (g_hash_table_lookup (counts, l->data)));
    }
  return TRUE;
}

static void
counter (GString *out, const gchar *name, const gchar *help, gdouble value)
{
  g_string_append_printf (out, "# HELP %s %s\n# TYPE %s counter\n%s %.17g\n", name, help, name,
                          name, value);
}

/* The webhooks' notices by outcome, and those waiting. */
static void
notify_lines (GString *out, const StgNotifyCounts *n)
{
  static const StgNotifyCounts none = { 0 };
  const struct
  {
    const gchar *outcome;
    guint64 count;
  } rows[] = { { "delivered", (n ? n : &none)->delivered },
               { "retried", (n ? n : &none)->retried },
               { "failed", (n ? n : &none)->failed },
               { "dropped", (n ? n : &none)->dropped } };

  g_string_append (out,
                   "# HELP stagger_notify_total Webhook notices by outcome (retried: "
                   "failed attempts tried again; failed: given up; dropped: the oldest "
                   "given up, the queue over its bound).\n# TYPE stagger_notify_total counter\n");
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    g_string_append_printf (out, "stagger_notify_total{outcome=\"%s\"} %" G_GUINT64_FORMAT "\n",
                            rows[i].outcome, rows[i].count);
  g_string_append_printf (
      out,
      "# HELP stagger_notify_queued Webhook notices waiting to be sent.\n"
      "# TYPE stagger_notify_queued gauge\nstagger_notify_queued %" G_GUINT64_FORMAT "\n",
      (n ? n : &none)->queued);
}

/* The per-job figures of what instances use, in the order of USAGE. */
enum
{
  U_CPU,
  U_CPU_RESERVED,
  U_MEMORY,
  U_MEMORY_RESERVED,
  U_DISK,
  U_DISK_RESERVED,
  U_THROTTLED,
  N_USAGE
};

static const struct
{
  const gchar *name, *type, *help;
} USAGE[N_USAGE] = {
  { "stagger_job_cpu_cores", "gauge", "CPU cores a job's instances use (over the last second)." },
  { "stagger_job_cpu_reserved_cores", "gauge", "CPU cores they reserve (numCpus)." },
  { "stagger_job_memory_bytes", "gauge", "Memory they use, page cache included." },
  { "stagger_job_memory_reserved_bytes", "gauge", "Memory they reserve (ramMb)." },
  { "stagger_job_disk_bytes", "gauge", "Bytes in their sandboxes when last sampled." },
  { "stagger_job_disk_reserved_bytes", "gauge", "Disk they reserve (diskMb)." },
  { "stagger_job_cpu_throttled_seconds_total", "counter",
    "Time their CPU quotas held their current runs back." },
};

/* Adds instance use @u to the totals @v of its job (a figure not measured
 * adds nothing). */
static void
add_usage (gdouble *v, const StgInstanceUsage *u)
{
  const gdouble figures[N_USAGE] = {
    u->cpus_used,
    u->cpus,
    (gdouble) u->memory,
    (gdouble) u->ram,
    (gdouble) u->disk,
    (gdouble) u->disk_reserved,
    u->throttled_ms < 0 ? -1 : (gdouble) u->throttled_ms / 1000,
  };
  for (guint i = 0; i < N_USAGE; i++)
    v[i] += MAX (figures[i], 0);
}

/* Every job's instances' use, added up per job: one line per figure and
 * job the runtime measures. */
static gboolean
usage_lines (GString *out, StgStore *store, StgEngine *engine, GError **error)
{
  g_autoptr (GPtrArray) jobs = stg_store_list_jobs (store, NULL, error);
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GArray) totals = g_array_new (FALSE, TRUE, sizeof (gdouble) * N_USAGE);

  if (jobs == NULL)
    return FALSE;
  for (guint j = 0; j < jobs->len; j++)
    {
      const StgJobRow *job = jobs->pdata[j];
      gdouble v[N_USAGE] = { 0 };
      gboolean measured = FALSE;
      for (gint32 i = 0; i < job->instance_count; i++)
        {
          StgInstanceUsage u;
          if (!stg_engine_instance_usage (engine, job->id, i, &u))
            continue;
          measured = TRUE;
          add_usage (v, &u);
        }
      if (!measured)
        continue;
      g_ptr_array_add (names, stg_job_key_to_string (job->key));
      g_array_append_vals (totals, v, 1);
    }
  for (guint k = 0; k < N_USAGE && names->len > 0; k++)
    {
      g_string_append_printf (out, "# HELP %s %s\n# TYPE %s %s\n", USAGE[k].name, USAGE[k].help,
                              USAGE[k].name, USAGE[k].type);
      for (guint j = 0; j < names->len; j++)
        g_string_append_printf (out, "%s{job=\"%s\"} %.17g\n", USAGE[k].name,
                                (const gchar *) names->pdata[j],
                                ((const gdouble *) totals->data)[j * N_USAGE + k]);
    }
  return TRUE;
}

gchar *
stg_metrics_render (StgMetrics *m, StgStore *store, StgEngine *engine,
                    const StgHealthCounts *health, const StgNotifyCounts *notify, GError **error)
{
  g_autoptr (GString) out = g_string_new (NULL);
  guint64 passed = health ? health->passed : 0, failed = health ? health->failed : 0;

  g_string_append (out, "# HELP stagger_build_info This staggerd's version.\n"
                        "# TYPE stagger_build_info gauge\n"
                        "stagger_build_info{version=\"" STG_VERSION "\"} 1\n");
  rpc_lines (m, out);
  if (!status_lines (store, "updates", out, error) ||
      !status_lines (store, "instances", out, error))
    return NULL;
  counter (out, "stagger_store_commits_total", "Outermost store commits (durable writes).",
           (gdouble) stg_store_commit_count (store));
  counter (out, "stagger_store_commit_seconds_total", "Time spent in those commits.",
           stg_store_commit_seconds (store));
  if (engine != NULL)
    {
      counter (out, "stagger_engine_steps_total", "Engine steps (each one transaction).",
               (gdouble) stg_engine_step_count (engine));
      counter (out, "stagger_instance_transitions_total",
               "Instance transitions of updates (instance events).",
               (gdouble) stg_engine_transition_count (engine));
      if (!usage_lines (out, store, engine, error))
        return NULL;
    }
  g_string_append (out,
                   "# HELP stagger_health_checks_total Health checks of instances by outcome.\n"
                   "# TYPE stagger_health_checks_total counter\n");
  g_string_append_printf (out,
                          "stagger_health_checks_total{outcome=\"passed\"} %" G_GUINT64_FORMAT "\n",
                          passed);
  g_string_append_printf (out,
                          "stagger_health_checks_total{outcome=\"failed\"} %" G_GUINT64_FORMAT "\n",
                          failed);
  notify_lines (out, notify);
  return g_string_free (g_steal_pointer (&out), FALSE);
}
