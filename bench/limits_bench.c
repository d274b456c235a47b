/* limits_bench.c: what control groups cost the local runtime (section 8 of
 * BENCHMARKS.md). Starts N processes (sleep) through stg_spawn, as the
 * runtime starts instances: first without groups, then each in a group of
 * its own with memory, CPU and pids limits (made, joined before the exec,
 * as local_limits.c does); then reads every group's use (memory, CPU,
 * OOM kills, pids: what a sampler of 1,000 instances reads) several
 * times; then ends them and removes the groups. Prints a table, and JSON
 * with --json FILE. Root only (exit 77 otherwise, or when no group can be
 * made here).
 *
 *   limits_bench [--instances N] [--samples N] [--json FILE]
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn/cgroup.h"
#include "spawn/spawn.h"
#include "cpu_time.h"

static gint n_instances = 1000;
static gint n_samples = 10;
static gchar *json_path;

static const gchar *const env[] = { "PATH=/usr/bin:/bin", NULL };
static const gchar *const argv[] = { "sleep", "600", NULL };

typedef struct
{
  gdouble wall;
  gdouble cpu;
} Cost;

static Cost
since (gint64 t0, gdouble c0)
{
  return (Cost){ (gdouble) (g_get_monotonic_time () - t0) / G_USEC_PER_SEC,
                 stg_bench_cpu_seconds () - c0 };
}

/* Starts n sleeps (in groups "bench-PID-I" of @cg when given). */
static Cost
start_all (StgCgroups *cg, GPid *pids)
{
  StgCgroupLimits limits = { .memory = 64 << 20, .cpus = 0.25, .pids = 64 };
  gint64 t0 = g_get_monotonic_time ();
  gdouble c0 = stg_bench_cpu_seconds ();

  for (gint i = 0; i < n_instances; i++)
    {
      g_autoptr (GError) error = NULL;
      g_autofree gchar *name = g_strdup_printf ("bench-%d-%d", (gint) getpid (), i);
      GArray *join = NULL;
      if (cg != NULL && (!stg_cgroup_make (cg, name, &limits, &error) ||
                         (join = stg_cgroup_open_procs (cg, name, &error)) == NULL))
        g_error ("%s", error->message);
      StgSpawnRequest req = { .argv = argv, .envp = env };
      if (join != NULL)
        {
          req.join = (const gint *) join->data;
          req.n_join = join->len;
        }
      StgSpawned s;
      if (!stg_spawn (&req, &s, &error))
        g_error ("%s", error->message);
      stg_cgroup_close_procs (join);
      pids[i] = s.pid;
    }
  return since (t0, c0);
}

static Cost
end_all (StgCgroups *cg, GPid *pids)
{
  gint64 t0 = g_get_monotonic_time ();
  gdouble c0 = stg_bench_cpu_seconds ();

  for (gint i = 0; i < n_instances; i++)
    kill (pids[i], SIGKILL);
  for (gint i = 0; i < n_instances; i++)
    waitpid (pids[i], NULL, 0);
  for (gint i = 0; cg != NULL && i < n_instances; i++)
    {
      g_autoptr (GError) error = NULL;
      g_autofree gchar *name = g_strdup_printf ("bench-%d-%d", (gint) getpid (), i);
      if (!stg_cgroup_remove (cg, name, &error))
        g_error ("%s", error->message);
    }
  return since (t0, c0);
}

/* Reads every group's use @n_samples times: the cost of one round. */
static Cost
sample_all (StgCgroups *cg)
{
  gint64 t0 = g_get_monotonic_time ();
  gdouble c0 = stg_bench_cpu_seconds ();
  gint64 memory = 0;

  for (gint s = 0; s < n_samples; s++)
    for (gint i = 0; i < n_instances; i++)
      {
        g_autofree gchar *name = g_strdup_printf ("bench-%d-%d", (gint) getpid (), i);
        StgCgroupUsage u;
        if (!stg_cgroup_usage (cg, name, &u, NULL))
          g_error ("no use of %s", name);
        memory += u.memory;
      }
  Cost c = since (t0, c0);
  c.wall /= n_samples;
  c.cpu /= n_samples;
  g_assert (memory > 0);
  return c;
}

int
main (int argc, char **argv_in)
{
  GOptionEntry entries[] = {
    { "instances", 0, 0, G_OPTION_ARG_INT, &n_instances, "Processes started (1000)", "N" },
    { "samples", 0, 0, G_OPTION_ARG_INT, &n_samples, "Rounds of reading every group (10)", "N" },
    { "json", 0, 0, G_OPTION_ARG_FILENAME, &json_path, "Write the figures here", "FILE" },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- what control groups cost");
  g_autoptr (GError) error = NULL;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv_in, &error) || n_instances < 1 || n_samples < 1)
    {
      g_printerr ("limits_bench: %s\n", error ? error->message : "N must be 1 or more");
      return 2;
    }
  g_autoptr (StgCgroups) cg = geteuid () == 0 ? stg_cgroups_new (NULL, NULL) : NULL;
  if (cg == NULL || stg_cgroups_version (cg) == STG_CGROUP_NONE)
    {
      g_print ("limits_bench: skipped: %s\n",
               cg ? stg_cgroups_describe (cg) : "control groups are made as root only");
      return 77;
    }
  g_autofree GPid *pids = g_new0 (GPid, n_instances);
  Cost plain = start_all (NULL, pids);
  Cost plain_end = end_all (NULL, pids);
  Cost grouped = start_all (cg, pids);
  Cost sample = sample_all (cg);
  Cost grouped_end = end_all (cg, pids);

  g_print ("%s\n\n", stg_cgroups_describe (cg));
  g_print ("| what | processes | wall s | CPU s (this process) | per process, ms wall |\n");
  g_print ("| --- | ---: | ---: | ---: | ---: |\n");
  g_print ("| start, no group | %d | %.2f | %.2f | %.3f |\n", n_instances, plain.wall, plain.cpu,
           plain.wall * 1000 / n_instances);
  g_print ("| start, a group each with limits | %d | %.2f | %.2f | %.3f |\n", n_instances,
           grouped.wall, grouped.cpu, grouped.wall * 1000 / n_instances);
  g_print ("| read every group's use, one round | %d | %.3f | %.3f | %.4f |\n", n_instances,
           sample.wall, sample.cpu, sample.wall * 1000 / n_instances);
  g_print ("| end, no group | %d | %.2f | %.2f | %.3f |\n", n_instances, plain_end.wall,
           plain_end.cpu, plain_end.wall * 1000 / n_instances);
  g_print ("| end and remove the groups | %d | %.2f | %.2f | %.3f |\n", n_instances,
           grouped_end.wall, grouped_end.cpu, grouped_end.wall * 1000 / n_instances);
  if (json_path != NULL)
    {
      g_autofree gchar *json = g_strdup_printf (
          "{\"instances\": %d, \"start_plain_s\": %.4f, \"start_grouped_s\": %.4f, "
          "\"sample_round_s\": %.4f, \"sample_round_cpu_s\": %.4f, \"end_plain_s\": %.4f, "
          "\"end_grouped_s\": %.4f}\n",
          n_instances, plain.wall, grouped.wall, sample.wall, sample.cpu, plain_end.wall,
          grouped_end.wall);
      if (!g_file_set_contents (json_path, json, -1, &error))
        {
          g_printerr ("limits_bench: %s\n", error->message);
          return 1;
        }
    }
  return 0;
}
