/* local_limits.c: the local runtime's limits on memory, CPU and processes.
 *
 * Each run gets a control group of its own (spawn/cgroup.h) before its
 * first process starts: a hard memory limit at the task's ramMb (an
 * AuroraExecutor task's resources.ram), numCpus cores as a CFS quota (a
 * weight with cpu_share), and max_pids processes and threads. Its process,
 * what it starts, and a Thermos runner's processes are all in it, and so
 * are the hooks and shell health checks acting for it. A run
 * the memory limit killed ends saying so; once a run is gone its group is
 * emptied and removed (retried while its last processes end). The group of
 * an adopted run is the one it was started in: names are made of the data
 * folder, the job's row, the instance and the run, so a restarted staggerd
 * finds it again (and removes those of runs that ended meanwhile), and two
 * staggerds of one host never share one.
 *
 * An AuroraExecutor task's group also holds its runner, stagger-thermos,
 * Aurora's executor: as Aurora's scheduler adds the executor's overhead
 * to such a task (-thermos_executor_cpu 0.25, -thermos_executor_ram
 * 128 MiB, ExecutorModule), so are its limits raised.
 *
 * A host where no group can be made: runs start unlimited, staggerd says
 * so once, and every start says the limits are not enforced.
 */
#include "config.h"

#include "runtime/local/local_private.h"

/* How often groups whose last processes were still ending are tried again. */
#define SWEEP_MS 200

/* Aurora's executor overhead, added to an AuroraExecutor task's limits. */
#define EXECUTOR_CPUS 0.25
#define EXECUTOR_RAM (128 * 1024 * 1024)

/* The resources @run's task reserves: cores, bytes of RAM and of disk
 * (an AuroraExecutor task's resources, else its numCpus, ramMb, diskMb);
 * 0: not reserved. */
void
stg_local_reserved (const Run *run, gdouble *cpus, gint64 *ram, gint64 *disk)
{
  const ApiTaskConfig *config = run->task->config;
  const StgThermosTask *thermos = run->task->thermos ? &run->task->thermos->task : NULL;
  GHashTableIter it;
  gpointer key;
  gint64 ram_mb = 0, disk_mb = 0;

  *cpus = 0;
  if (config->__isset_resources && config->resources != NULL)
    {
      g_hash_table_iter_init (&it, config->resources);
      while (g_hash_table_iter_next (&it, &key, NULL))
        {
          const ApiResource *r = key;
          *cpus = MAX (*cpus, r->__isset_numCpus ? r->numCpus : 0);
          ram_mb = MAX (ram_mb, r->__isset_ramMb ? r->ramMb : 0);
          disk_mb = MAX (disk_mb, r->__isset_diskMb ? r->diskMb : 0);
        }
    }
  *ram = ram_mb * 1024 * 1024;
  *disk = disk_mb * 1024 * 1024;
  if (thermos != NULL && thermos->cpu > 0)
    *cpus = thermos->cpu;
  if (thermos != NULL && thermos->ram > 0)
    *ram = thermos->ram;
  if (thermos != NULL && thermos->disk > 0)
    *disk = thermos->disk;
}

void
stg_local_limits_open (StgLocalRuntime *rt)
{
  rt->cgroups = stg_cgroups_new (rt->options.cgroup_parent, NULL);
  if (stg_cgroups_version (rt->cgroups) == STG_CGROUP_NONE)
    g_warning ("runtime: %s", stg_cgroups_describe (rt->cgroups));
  else
    g_message ("runtime: instances' limits: %s", stg_cgroups_describe (rt->cgroups));
  rt->cgroup_prefix = g_compute_checksum_for_string (G_CHECKSUM_SHA256, rt->mark_dir, -1);
  rt->cgroup_prefix[8] = '\0';
  rt->cgroup_sweep = g_ptr_array_new_with_free_func (g_free);
  /* Groups of runs that ended while no staggerd watched them; those of
   * runs still alive hold processes and stay, to be adopted. */
  g_autofree gchar *mine = g_strconcat (rt->cgroup_prefix, ".", NULL);
  stg_cgroups_prune (rt->cgroups, mine);
}

void
stg_local_limits_close (StgLocalRuntime *rt)
{
  g_clear_handle_id (&rt->cgroup_sweep_timer, g_source_remove);
  g_clear_pointer (&rt->cgroup_sweep, g_ptr_array_unref);
  g_clear_pointer (&rt->cgroups, stg_cgroups_free);
  g_clear_pointer (&rt->cgroup_prefix, g_free);
}

const gchar *
stg_local_limits_unenforced (StgLocalRuntime *rt)
{
  return stg_cgroups_version (rt->cgroups) == STG_CGROUP_NONE ? stg_cgroups_describe (rt->cgroups)
                                                              : NULL;
}

gchar *
stg_local_cgroup_name (Slot *slot, gint64 run_id)
{
  return g_strdup_printf ("%s.%" G_GINT64_FORMAT ".%d.%" G_GINT64_FORMAT, slot->rt->cgroup_prefix,
                          slot->base.key.job_id, (gint) slot->base.key.instance, run_id);
}

GArray *
stg_local_limits_join (Run *run, GError **error)
{
  StgLocalRuntime *rt = run->slot->rt;
  StgCgroupLimits limits = { .cpu_weight = rt->options.cpu_share, .pids = rt->options.max_pids };
  gint64 disk;

  if (stg_cgroups_version (rt->cgroups) == STG_CGROUP_NONE)
    return g_array_new (FALSE, FALSE, sizeof (gint));
  stg_local_reserved (run, &limits.cpus, &limits.memory, &disk);
  if (run->task->thermos != NULL && limits.cpus > 0)
    limits.cpus += EXECUTOR_CPUS;
  if (run->task->thermos != NULL && limits.memory > 0)
    limits.memory += EXECUTOR_RAM;
  g_free (run->cgroup);
  run->cgroup = stg_local_cgroup_name (run->slot, run->id);
  if (!stg_cgroup_make (rt->cgroups, run->cgroup, &limits, error))
    return NULL;
  run->cpu_seen_us = g_get_monotonic_time (); /* a new group has used nothing yet */
  run->cpu_seen_ns = 0;
  return stg_cgroup_open_procs (rt->cgroups, run->cgroup, error);
}

GArray *
stg_local_limits_join_run (Run *run, GError **error)
{
  if (run == NULL || run->cgroup == NULL)
    return g_array_new (FALSE, FALSE, sizeof (gint));
  return stg_cgroup_open_procs (run->slot->rt->cgroups, run->cgroup, error);
}

/* The window over which a run's use of CPU is measured, and the shortest
 * its first figure may come from: a few CFS periods (100 ms), since over
 * less a run held to its quota can show a burst of twice it and more. */
#define CPU_WINDOW_US G_USEC_PER_SEC
#define CPU_FIRST_US (300 * 1000)

gboolean
stg_local_limits_usage (Run *run, StgInstanceUsage *out)
{
  StgLocalRuntime *rt = run->slot->rt;
  StgCgroupUsage use;

  stg_local_reserved (run, &out->cpus, &out->ram, &out->disk_reserved);
  out->disk = run->disk_used;
  if (run->cgroup == NULL || !stg_cgroup_usage (rt->cgroups, run->cgroup, &use, NULL))
    return TRUE;
  out->memory = use.memory;
  out->rss = use.rss;
  out->throttled_ms = use.throttled_ns / 1000000;
  out->oom_kills = use.oom_kills;
  /* Cores used since the last look a second or more ago (by anyone: the
   * web UI, the CLI and /metrics share it), else that look's figure; the
   * first figure once the first look is CPU_FIRST_US old (none before). */
  gint64 now = g_get_monotonic_time ();
  gint64 since = now - run->cpu_seen_us;
  if (run->cpu_seen_us > 0 &&
      (since >= CPU_WINDOW_US || (run->cpu_rate < 0 && since >= CPU_FIRST_US)))
    run->cpu_rate = (gdouble) (use.cpu_ns - run->cpu_seen_ns) / 1000.0 / (gdouble) since;
  if (run->cpu_seen_us == 0 || now - run->cpu_seen_us >= CPU_WINDOW_US)
    {
      run->cpu_seen_us = now;
      run->cpu_seen_ns = use.cpu_ns;
    }
  out->cpus_used = run->cpu_rate;
  return TRUE;
}

/* Removes the groups whose processes were still ending. */
static gboolean
on_sweep (gpointer data)
{
  StgLocalRuntime *rt = data;

  for (guint i = rt->cgroup_sweep->len; i-- > 0;)
    {
      const gchar *name = rt->cgroup_sweep->pdata[i];
      stg_cgroup_kill (rt->cgroups, name);
      if (stg_cgroup_remove (rt->cgroups, name, NULL))
        g_ptr_array_remove_index_fast (rt->cgroup_sweep, i);
    }
  if (rt->cgroup_sweep->len > 0)
    return G_SOURCE_CONTINUE;
  rt->cgroup_sweep_timer = 0;
  return G_SOURCE_REMOVE;
}

gchar *
stg_local_limits_end (Run *run)
{
  StgLocalRuntime *rt = run->slot->rt;
  StgCgroupUsage use;
  gchar *cause = NULL;

  if (run->cgroup == NULL)
    return NULL;
  if (stg_cgroup_usage (rt->cgroups, run->cgroup, &use, NULL) && use.oom_kills > 0)
    {
      gdouble cpus;
      gint64 ram, disk;
      stg_local_reserved (run, &cpus, &ram, &disk);
      g_autofree gchar *executor = run->task->thermos != NULL
                                       ? g_strdup_printf (" and its executor's %d MiB",
                                                          EXECUTOR_RAM / (1024 * 1024))
                                       : g_strdup ("");
      cause = g_strdup_printf ("exceeded its %" G_GINT64_FORMAT " MiB of RAM%s (OOM kill)",
                               ram / (1024 * 1024), executor);
    }
  stg_cgroup_kill (rt->cgroups, run->cgroup);
  if (!stg_cgroup_remove (rt->cgroups, run->cgroup, NULL))
    {
      g_ptr_array_add (rt->cgroup_sweep, g_steal_pointer (&run->cgroup));
      if (rt->cgroup_sweep_timer == 0)
        rt->cgroup_sweep_timer = g_timeout_add (SWEEP_MS, on_sweep, rt);
    }
  g_clear_pointer (&run->cgroup, g_free);
  return cause;
}
