/* local.c: StgLocalRuntime: what its slots add to the shared slot model
 * (slot.c: loading, phases, observation, failures), restarts with back-off,
 * paced starts, the runtime operations and pre_update hooks (adoption is in
 * adopt.c).
 *
 * Owns its slots and runs (run.c), a libsoup session for health checks, and
 * the listening sockets of hot-upgradable instances. Instance processes are
 * never killed when the runtime is freed: they outlive the daemon and are
 * adopted by the next one. Changes are announced to the listener from an
 * idle callback, never from inside an operation. Main-loop thread only.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/error.h"
#include "runtime/place.h"
#include "runtime/local/local_private.h"
#include "runtime/thermos_task.h"
#include "spawn/process.h"

#define BACKOFF_MAX_MS 60000
#define LOG_TRIM_S 30

void
stg_local_options_init (StgLocalOptions *o)
{
  memset (o, 0, sizeof *o);
  o->data_dir = g_strdup ("./var");
  o->cluster = g_strdup ("local");
  o->bind = g_strdup ("127.0.0.1");
  o->port_min = 20000;
  o->port_max = 29999;
  o->keep_runs = 3;
  o->log_limit = 10 * 1024 * 1024;
  o->thermos_runner = g_strdup (STG_THERMOS_RUNNER_DEFAULT);
}

void
stg_local_options_clear (StgLocalOptions *o)
{
  g_clear_pointer (&o->data_dir, g_free);
  g_clear_pointer (&o->cluster, g_free);
  g_clear_pointer (&o->bind, g_free);
  g_clear_pointer (&o->thermos_runner, g_free);
  g_clear_pointer (&o->announcer_args, g_strfreev);
  g_clear_pointer (&o->role_users, g_hash_table_unref);
  g_clear_pointer (&o->default_user, stg_identity_free);
  g_clear_pointer (&o->attributes, g_hash_table_unref);
  g_clear_pointer (&o->cgroup_parent, g_free);
}

/* A task that names its own ServerSet (announce.zk_path) is refused when
 * announcing is on but custom paths are not allowed: its runner would
 * refuse it at every start, as Aurora's executor does. */
static gboolean
check_zk_path (StgLocalRuntime *rt, const StgTaskSpec *spec, GError **error)
{
  if (rt->options.announcer_args == NULL || rt->options.zk_allow_custom || spec->thermos == NULL ||
      spec->thermos->zk_path == NULL)
    return TRUE;
  return stg_fail (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_INVALID,
                   "executorConfig.data: announce.zk_path '%s': custom ServerSet paths are not "
                   "allowed (staggerd's [zookeeper] allow_custom_serverset_path)",
                   spec->thermos->zk_path);
}

/* ---- slots ------------------------------------------------------------------- */

static void
slot_init (StgSlot *base)
{
  Slot *slot = (Slot *) base;

  slot->rt = (StgLocalRuntime *) stg_slots_runtime (base->table);
  /* Run numbers never repeat for a slot, across a kill and a re-add too. */
  base->run_id = MAX (base->run_id, stg_local_last_run (slot));
}

static void
slot_clear (StgSlot *base)
{
  Slot *slot = (Slot *) base;

  g_clear_handle_id (&slot->restart_timer, g_source_remove);
  g_clear_handle_id (&slot->pre_hook_timer, g_source_remove);
  g_clear_pointer (&slot->pre_hook, stg_child_free);
  if (slot->queued != 0)
    g_queue_remove (&slot->rt->waiting, slot);
  g_free (slot->held);
  /* Runs are forgotten, not killed: their processes outlive us. */
  stg_run_free (slot->run);
  stg_run_free (slot->next);
  stg_local_close_sockets (slot);
}

/* The slot's facts that are the local runtime's: its runs (the one beside
 * it too), their pids once known, and why the current one is stopping. */
static void
slot_facts (const StgSlot *base, StgInstanceRow *facts)
{
  const Slot *slot = (const Slot *) base;
  Run *r = slot->run, *n = slot->next;

  if (r != NULL)
    {
      facts->run_id = r->id;
      facts->pid = r->pid;
      facts->pid_start = r->pid_start;
      facts->run_config_id = r->config_id;
      facts->stop_reason = (gint32) r->stopping;
    }
  if (n != NULL)
    {
      facts->next_run_id = n->id;
      facts->next_config_id = n->config_id;
      facts->next_pid = n->pid;
      facts->next_pid_start = n->pid_start;
    }
}

/* clang-format off */
static const StgSlotClass local_slot_class = {
  .name = "runtime", .size = sizeof (Slot),
  .init = slot_init, .clear = slot_clear, .facts = slot_facts,
};
/* clang-format on */

/* ---- paced starts --------------------------------------------------------------- */

static void
release_waiting (StgLocalRuntime *rt)
{
  /* Each waiting slot is tried once: one its constraints hold back goes
   * to the back of the queue again. */
  guint n = g_queue_get_length (&rt->waiting);

  while (n-- > 0 && !rt->drained && rt->starting < rt->options.max_concurrent_starts &&
         !g_queue_is_empty (&rt->waiting))
    {
      Slot *slot = g_queue_pop_head (&rt->waiting);
      gint64 config = slot->queued;
      slot->queued = 0;
      if (slot->base.want == config && slot->run == NULL && slot->pre_hook == NULL)
        stg_run_start_config (slot, config, FALSE, slot->queued_update);
    }
}

/* StgRuntimeOps.drain_host: this machine is the one host. */
static gboolean
local_drain_host (StgRuntime *base, const gchar *name, gboolean drain, GError **error)
{
  StgLocalRuntime *rt = (StgLocalRuntime *) base;

  if (g_strcmp0 (name, rt->host) != 0)
    {
      g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_NOT_FOUND,
                   "no host %s: the local runtime runs on %s", name, rt->host);
      return FALSE;
    }
  rt->drained = drain;
  release_waiting (rt);
  return TRUE;
}

static gboolean
on_restart (gpointer data)
{
  Slot *slot = data;

  slot->restart_timer = 0;
  if (slot->base.want != 0 && slot->run == NULL)
    stg_run_start_config (slot, slot->base.want, FALSE, slot->base.want == slot->base.post_owed);
  return G_SOURCE_REMOVE;
}

/* Whether @slot starts again after a failure, judged by the config of
 * @run, or without one (a start that failed, a run that ended while
 * staggerd was away) by the config it would start. */
static gboolean
runs_again (Slot *slot, const Run *run)
{
  if (run != NULL)
    return stg_slot_runs_again (&slot->base, run->task->config);
  g_autoptr (ApiTaskConfig) config = stg_store_get_config (slot->rt->store, slot->base.want, NULL);
  return config == NULL || stg_slot_runs_again (&slot->base, config);
}

static void
after_exit (Slot *slot, Run *run, gboolean success, const gchar *message)
{
  gboolean service = run ? run->service : TRUE;

  if (run != NULL && message != NULL)
    {
      if (!service && success)
        {
          stg_slot_set_phase (&slot->base, STG_TASK_FINISHED, run->config_id,
                              API_SCHEDULE_STATUS_FINISHED, message);
          return;
        }
      if (!run->failed)
        stg_local_count_failure (slot, run, message);
      stg_slot_set_phase (&slot->base, STG_TASK_FAILED, run->config_id, API_SCHEDULE_STATUS_FAILED,
                          message);
    }
  if (slot->base.want == 0 || slot->run != NULL || !runs_again (slot, run))
    return;
  gint wait_ms = stg_slot_backoff (&slot->base, BACKOFF_MAX_MS);
  g_clear_handle_id (&slot->restart_timer, g_source_remove);
  slot->restart_timer = g_timeout_add ((guint) wait_ms, on_restart, slot);
  /* Shown as Aurora shows a task waiting out its penalty: THROTTLED, with
   * the wait as its pending reason. The phase stays what the engine saw. */
  g_autofree gchar *m = g_strdup_printf ("restarting in %.1f s (back-off after %u failed run%s)",
                                         wait_ms / 1000.0, slot->base.failures,
                                         slot->base.failures == 1 ? "" : "s");
  stg_slot_set_phase (&slot->base, slot->base.phase, slot->base.config_id,
                      API_SCHEDULE_STATUS_THROTTLED, m);
}

/* ---- replacing: pre_update hooks, then hot or cold ----------------------------- */

/* Replaces what runs by @config (@spec: its parsed spec, NULL when it
 * does not parse: the old run is stopped and the start then fails). */
static void
proceed_replace (Slot *slot, gint64 config, const StgTaskSpec *spec)
{
  StgLocalRuntime *rt = slot->rt;
  Run *r = slot->run;

  slot->base.post_owed = config;
  if (r == NULL || r->stopping)
    {
      if (r == NULL)
        stg_run_start_config (slot, config, FALSE, TRUE);
      return;
    }
  if (spec != NULL && spec->exec->hot_upgrade && r->spec->hot_upgrade && r->healthy)
    {
      /* Both versions know the protocol: start the new one beside the old. */
      stg_run_start (slot, spec, TRUE, TRUE);
      return;
    }
  /* Why it stops is stored before it is signalled: a daemon that dies in
   * between finds a replace under way, not a process that died. */
  r->stopping = STOP_REPLACE;
  g_autofree gchar *m = g_strdup_printf ("stopping version %d to start version %d", r->version,
                                         stg_store_config_version (rt->store, config));
  stg_slot_set_phase (&slot->base, STG_TASK_KILLING, r->config_id, API_SCHEDULE_STATUS_KILLING, m);
  stg_local_crash_point (rt, "replace-stopping");
  stg_run_stop (r);
  stg_local_crash_point (rt, "replace-signalled");
}

static void apply_config (Slot *slot, gint64 config);

static void
on_pre_hook (gpointer data, gint status)
{
  Slot *slot = data;

  g_clear_handle_id (&slot->pre_hook_timer, g_source_remove);
  gboolean ok = WIFEXITED (status) && WEXITSTATUS (status) == 0;
  g_autofree gchar *why = stg_run_hook_outcome ("pre_update", status);
  gint64 config = slot->pre_hook_config;
  g_clear_pointer (&slot->pre_hook, stg_child_free);
  if (slot->base.want != config)
    {
      /* Something else is wanted now: checked by its own hook, if it is
       * not what runs already. */
      apply_config (slot, slot->base.want);
      return;
    }
  if (ok)
    {
      proceed_replace (slot, config, stg_spec_cache_get (slot->rt->specs, config, NULL));
      return;
    }
  /* The instance is left as it is, and the failure is counted. */
  stg_local_count_failure (slot, NULL, why);
  g_autofree gchar *m = g_strdup_printf ("%s: version %d left running", why,
                                         slot->run ? slot->run->version : 0);
  if (slot->run != NULL)
    stg_local_show_run (slot, m);
}

static gboolean
on_pre_hook_timeout (gpointer data)
{
  Slot *slot = data;

  slot->pre_hook_timer = 0;
  if (slot->pre_hook != NULL)
    stg_child_kill (slot->pre_hook);
  return G_SOURCE_REMOVE;
}

static void
replace (Slot *slot, gint64 config)
{
  g_autoptr (GError) error = NULL;
  const StgTaskSpec *spec = stg_spec_cache_get (slot->rt->specs, config, NULL);

  if (spec == NULL || spec->exec->pre_update.command == NULL)
    {
      proceed_replace (slot, config, spec);
      return;
    }
  /* The configuration being applied says how to check before going down. */
  slot->pre_hook_config = config;
  gint64 running = slot->run != NULL ? slot->run->config_id : slot->base.config_id;
  gint from = running != 0 ? stg_store_config_version (slot->rt->store, running) : 0;
  slot->pre_hook = stg_run_hook (slot, slot->run, &spec->exec->pre_update, spec, "pre_update", from,
                                 on_pre_hook, slot, &error);
  if (slot->pre_hook == NULL)
    {
      g_autofree gchar *m = g_strdup_printf ("cannot run the pre_update hook: %s", error->message);
      stg_local_count_failure (slot, NULL, m);
      stg_slot_note (&slot->base, m);
      return;
    }
  slot->pre_hook_timer = g_timeout_add ((guint) (spec->exec->pre_update.timeout_secs * 1000),
                                        on_pre_hook_timeout, slot);
}

static void
start_replacement (Slot *slot)
{
  gint64 want = slot->base.want;

  /* proceed_replace marks the config whose pre_update ran (or had none)
   * as owing its post_update; another one has not been checked yet. */
  if (want != slot->base.post_owed && want != slot->base.config_id)
    replace (slot, want);
  else
    stg_run_start_config (slot, want, FALSE, TRUE);
}

/* ---- operations ---------------------------------------------------------------- */

/* The slot an operation is about, made from the store if need be. */
static Slot *
slot_of (StgRuntime *base, gint64 job_id, gint32 instance, GError **error)
{
  return (Slot *) stg_slots_get (((StgLocalRuntime *) base)->slots, job_id, instance, error);
}

/* Makes @slot run @config. */
static void
apply_config (Slot *slot, gint64 config)
{
  slot->base.want = config;
  if (slot->pre_hook != NULL)
    return; /* on_pre_hook goes on to what is wanted then */
  if (slot->next != NULL)
    {
      if (slot->next->config_id == config)
        return;
      slot->next->stopping = STOP_ABANDON;
      stg_run_stop (slot->next);
    }
  Run *r = slot->run;
  if (r == NULL)
    {
      g_clear_handle_id (&slot->restart_timer, g_source_remove);
      /* A version that failed is replaced as a running one is: pre_update
       * first (from the failed version), then post_update. */
      if (slot->base.config_id != 0 && slot->base.config_id != config)
        replace (slot, config);
      else
        stg_run_start_config (slot, config, FALSE, config == slot->base.post_owed);
      return;
    }
  if (r->stopping)
    {
      /* Whatever it was stopped for, start what is wanted once it is gone. */
      if (r->stopping != STOP_REPLACE && r->stopping != STOP_RESTART)
        r->stopping = STOP_REPLACE;
      return;
    }
  if (r->config_id == config)
    return; /* already runs it */
  replace (slot, config);
}

static gboolean
local_apply (StgRuntime *base, gint64 job_id, gint32 instance, gint64 config, GError **error)
{
  Slot *slot = slot_of (base, job_id, instance, error);

  if (slot != NULL)
    apply_config (slot, config);
  return slot != NULL;
}

static gboolean
local_kill (StgRuntime *base, gint64 job_id, gint32 instance, GError **error)
{
  Slot *slot = slot_of (base, job_id, instance, error);

  if (slot == NULL)
    return FALSE;
  slot->base.want = 0;
  g_clear_handle_id (&slot->restart_timer, g_source_remove);
  if (slot->pre_hook != NULL)
    {
      stg_child_kill (slot->pre_hook);
      g_clear_pointer (&slot->pre_hook, stg_child_free);
      g_clear_handle_id (&slot->pre_hook_timer, g_source_remove);
    }
  /* Stored as KILLING before any signal, as a replace is. */
  if (slot->next != NULL)
    slot->next->stopping = STOP_KILL;
  if (slot->run != NULL)
    {
      slot->run->stopping = STOP_KILL;
      stg_slot_set_phase (&slot->base, STG_TASK_KILLING, slot->run->config_id,
                          API_SCHEDULE_STATUS_KILLING, "killing");
    }
  if (slot->next != NULL)
    stg_run_stop (slot->next);
  if (slot->run != NULL)
    {
      stg_run_stop (slot->run);
      return TRUE;
    }
  if (slot->next == NULL)
    stg_slot_remove (&slot->base);
  return TRUE;
}

static gboolean
local_restart (StgRuntime *base, gint64 job_id, gint32 instance, GError **error)
{
  Slot *slot = slot_of (base, job_id, instance, error);

  if (slot == NULL)
    return FALSE;
  if (slot->run != NULL && !slot->run->stopping)
    {
      slot->run->stopping = STOP_RESTART;
      stg_slot_set_phase (&slot->base, STG_TASK_KILLING, slot->run->config_id,
                          API_SCHEDULE_STATUS_RESTARTING, "restarting");
      stg_run_stop (slot->run);
      return TRUE;
    }
  if (slot->run == NULL && slot->base.want != 0)
    {
      g_clear_handle_id (&slot->restart_timer, g_source_remove);
      stg_run_start_config (slot, slot->base.want, FALSE, FALSE);
    }
  return TRUE;
}

static void
local_observe (StgRuntime *base, gint64 job_id, gint32 instance, StgTaskObservation *out)
{
  stg_slot_observe (stg_slots_find (((StgLocalRuntime *) base)->slots, job_id, instance), out);
}

/* The image @config asks to run in, or NULL: the local runtime runs
 * processes on this host, never in an image. */
static const gchar *
image_of (const ApiTaskConfig *config)
{
  const ApiContainer *c = config->__isset_container ? config->container : NULL;

  if (c != NULL && c->__isset_docker && c->docker != NULL)
    return c->docker->image != NULL ? c->docker->image : "";
  return NULL;
}

static gboolean
local_validate (StgRuntime *base, const ApiTaskConfig *config, GError **error)
{
  StgLocalRuntime *rt = (StgLocalRuntime *) base;
  const gchar *image = image_of (config);

  if (image != NULL)
    {
      g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_INVALID,
                   "container.docker: the local runtime runs processes on this host and cannot "
                   "run image '%s'; run staggerd with --runtime=fleet to run containers",
                   image);
      return FALSE;
    }
  if (!stg_fleet_check_constraints (config->__isset_constraints ? config->constraints : NULL,
                                    error))
    return FALSE;

  g_autoptr (StgTaskSpec) spec = stg_task_spec_check ((ApiTaskConfig *) config, error);
  if (spec == NULL)
    return FALSE;
  if (spec->thermos != NULL && !g_file_test (rt->options.thermos_runner, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_INVALID,
                   "executorConfig.name: %s tasks run with stagger-thermos, which is not at %s "
                   "(name it with staggerd's --thermos-runner, or thermos_runner in its config "
                   "file)",
                   STG_THERMOS_EXECUTOR_NAME, rt->options.thermos_runner);
      return FALSE;
    }
  return check_zk_path (rt, spec, error);
}

static GBytes *
local_read_log (StgRuntime *base, gint64 job_id, gint32 instance, const StgLogQuery *query,
                StgLogInfo *info, GError **error)
{
  Slot *slot = (Slot *) stg_slots_find (((StgLocalRuntime *) base)->slots, job_id, instance);

  if (slot == NULL)
    {
      g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_NOT_FOUND, "no instance %d",
                   instance);
      return NULL;
    }
  return stg_local_read_output (slot, query, info, error);
}

static gboolean
local_usage (StgRuntime *base, gint64 job_id, gint32 instance, StgInstanceUsage *out)
{
  Slot *slot = (Slot *) stg_slots_find (((StgLocalRuntime *) base)->slots, job_id, instance);

  return slot != NULL && slot->run != NULL && stg_local_limits_usage (slot->run, out);
}

static gboolean
local_announcement (StgRuntime *base, gint64 job_id, gint32 instance, StgAnnouncement *out)
{
  Slot *slot = (Slot *) stg_slots_find (((StgLocalRuntime *) base)->slots, job_id, instance);

  return slot != NULL && slot->run != NULL && stg_local_runner_announcement (slot->run, out);
}

static void
local_free (StgRuntime *base)
{
  StgLocalRuntime *rt = (StgLocalRuntime *) base;

  g_clear_handle_id (&rt->log_timer, g_source_remove);
  stg_local_disk_stop (rt);
  g_clear_pointer (&rt->slots, stg_slots_free);
  stg_local_limits_close (rt);
  g_queue_clear (&rt->waiting);
  g_clear_pointer (&rt->specs, stg_spec_cache_free);
  g_free (rt->mark_dir);
  g_free (rt->host);
  g_hash_table_unref (rt->attributes);
  g_free (rt->crash_at);
  g_clear_object (&rt->session);
  stg_local_options_clear (&rt->options);
  g_free (rt);
}

/* clang-format off */
static const StgLocalCalls local_calls = {
  .after_exit = after_exit, .start_replacement = start_replacement,
  .release_waiting = release_waiting,
};

static const StgRuntimeOps local_ops = {
  .apply = local_apply, .kill = local_kill, .restart = local_restart, .observe = local_observe,
  .validate = local_validate, .free = local_free, .read_log = local_read_log,
  .reconcile = stg_local_reconcile, .drain_host = local_drain_host, .usage = local_usage,
  .announcement = local_announcement,
};
/* clang-format on */

static gboolean
on_log_timer (gpointer data)
{
  stg_local_trim_logs (data);
  return G_SOURCE_CONTINUE;
}

StgRuntime *
stg_local_runtime_new (StgStore *store, StgClock *clock, const StgLocalOptions *options,
                       GError **error)
{
  StgLocalRuntime *rt = g_new0 (StgLocalRuntime, 1);
  g_autofree gchar *sandboxes = g_build_filename (options->data_dir, "sandboxes", NULL);

  if (options->port_min < 1 || options->port_max > 65535 || options->port_min > options->port_max)
    {
      g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_INVALID, "bad port range %d-%d",
                   options->port_min, options->port_max);
      g_free (rt);
      return NULL;
    }
  /* Not readable by other users: the data dir holds the database (0600)
   * and every instance's output. Instances that run as other users must
   * reach their own run folders (which only they may open): then the
   * folders above are 0711, passable but not listable. */
  gboolean others = options->role_users != NULL || options->default_user != NULL;
  gint mode = others ? 0711 : 0700;
  if (g_mkdir_with_parents (sandboxes, 0700) != 0 || g_chmod (sandboxes, mode) != 0 ||
      g_chmod (options->data_dir, mode) != 0)
    {
      g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_FAILED, "cannot create %s", sandboxes);
      g_free (rt);
      return NULL;
    }
  rt->base.ops = &local_ops;
  rt->calls = &local_calls;
  rt->store = store;
  rt->clock = clock;
  rt->options.data_dir = g_strdup (options->data_dir);
  rt->options.cluster = g_strdup (options->cluster);
  rt->options.bind = g_strdup (options->bind);
  rt->options.thermos_runner = g_strdup (options->thermos_runner);
  rt->options.announcer_args = g_strdupv (options->announcer_args);
  rt->options.zk_allow_custom = options->zk_allow_custom;
  rt->options.port_min = options->port_min;
  rt->options.port_max = options->port_max;
  rt->options.max_concurrent_starts = options->max_concurrent_starts > 0
                                          ? options->max_concurrent_starts
                                          : STG_LOCAL_DEFAULT_STARTS;
  rt->options.max_ports_per_role = options->max_ports_per_role > 0
                                       ? options->max_ports_per_role
                                       : (options->port_max - options->port_min + 2) / 2;
  rt->options.keep_runs = MAX (options->keep_runs, 1u);
  rt->options.log_limit = MAX (options->log_limit, (gsize) 4096);
  rt->options.role_users = options->role_users ? g_hash_table_ref (options->role_users) : NULL;
  rt->options.default_user = options->default_user ? stg_identity_copy (options->default_user)
                                                   : NULL;
  rt->options.health_counts = options->health_counts;
  rt->options.disk_interval_ms = options->disk_interval_ms > 0 ? options->disk_interval_ms
                                                               : STG_LOCAL_DISK_INTERVAL_MS;
  rt->options.cgroup_parent = g_strdup (options->cgroup_parent);
  rt->options.cpu_share = options->cpu_share;
  rt->options.max_pids = options->max_pids;
  /* Health checks go straight to this host: no proxy lookups. */
  rt->session = soup_session_new_with_options ("max-conns", 4096, "max-conns-per-host", 4,
                                               "proxy-resolver", NULL, NULL);
  rt->specs = stg_spec_cache_new (store);
  rt->mark_dir = g_canonicalize_filename (options->data_dir, NULL);
  rt->host = g_strdup (g_get_host_name ());
  rt->attributes = options->attributes != NULL
                       ? g_hash_table_ref (options->attributes)
                       : g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  rt->crash_at = g_strdup (g_getenv ("STAGGER_TEST_CRASH_AT"));
  rt->slots = stg_slots_new (&rt->base, store, clock, &local_slot_class);
  rt->log_timer = g_timeout_add_seconds (LOG_TRIM_S, on_log_timer, rt);
  stg_local_disk_start (rt);
  stg_local_limits_open (rt);
  return &rt->base;
}

GPid
stg_local_runtime_pid (StgRuntime *base, gint64 job_id, gint32 instance)
{
  Slot *slot = (Slot *) stg_slots_find (((StgLocalRuntime *) base)->slots, job_id, instance);
  return slot && slot->run ? slot->run->pid : 0;
}
