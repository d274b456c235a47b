/* local.c: StgLocalRuntime: slots, what they report, restarts with
 * back-off, the runtime operations and pre_update hooks (adoption is in
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

#include "runtime/local_private.h"
#include "runtime/process.h"

#define BACKOFF_FIRST_MS 1000
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
}

void
stg_local_options_clear (StgLocalOptions *o)
{
  g_clear_pointer (&o->data_dir, g_free);
  g_clear_pointer (&o->cluster, g_free);
  g_clear_pointer (&o->bind, g_free);
  g_clear_pointer (&o->role_users, g_hash_table_unref);
  g_clear_pointer (&o->default_user, stg_identity_free);
}

/* ---- slots ------------------------------------------------------------------- */

static void
slot_free (gpointer data)
{
  Slot *slot = data;

  g_clear_handle_id (&slot->restart_timer, g_source_remove);
  g_clear_handle_id (&slot->pre_hook_timer, g_source_remove);
  g_cancellable_cancel (slot->cancel);
  g_clear_object (&slot->cancel);
  g_clear_pointer (&slot->pre_hook, stg_child_free);
  if (slot->queued != 0)
    g_queue_remove (&slot->rt->waiting, slot);
  /* Runs are forgotten, not killed: their processes outlive us. */
  stg_run_free (slot->run);
  stg_run_free (slot->next);
  stg_local_close_sockets (slot);
  g_clear_object (&slot->job);
  g_free (slot->cause);
  g_free (slot);
}

Slot *
stg_local_slot (StgLocalRuntime *rt, gint64 job_id, gint32 instance, gboolean create)
{
  StgSlotKey key = { .job_id = job_id, .instance = instance };
  Slot *slot = g_hash_table_lookup (rt->slots, &key);

  if (slot != NULL || !create)
    return slot;
  g_autoptr (StgJobRow) job = stg_store_get_job_by_id (rt->store, job_id, NULL);
  if (job == NULL)
    return NULL;
  slot = g_new0 (Slot, 1);
  slot->rt = rt;
  slot->key = key;
  slot->job = g_object_ref (job->key);
  slot->phase = STG_TASK_ABSENT;
  slot->status = API_SCHEDULE_STATUS_PENDING;
  slot->cancel = g_cancellable_new ();
  StgInstanceRow row;
  if (stg_store_get_instance (rt->store, job_id, instance, &row, NULL))
    {
      slot->failures = (guint32) row.failure_count;
      slot->run_seq = row.run_id;
      slot->want = row.config_id;
    }
  /* Run numbers never repeat for a slot, across a kill and a re-add too. */
  slot->run_seq = MAX (slot->run_seq, stg_local_last_run (slot));
  g_hash_table_insert (rt->slots, &slot->key, slot);
  return slot;
}

/* The slot's facts as the store keeps them: its runs (the one beside it
 * too), their pids once known, and why the current one is stopping. */
static gboolean
save_facts (Slot *slot, GError **error)
{
  Run *r = slot->run, *n = slot->next;
  StgInstanceRow facts = {
    .instance_id = slot->key.instance,
    .status = slot->status,
    .run_id = r ? r->id : slot->run_seq,
    .pid = r ? r->pid : 0,
    .pid_start = r ? r->pid_start : 0,
    .failure_count = (gint32) slot->failures,
    .status_ms = slot->phase_since_ms,
    .run_config_id = r ? r->config_id : 0,
    .next_run_id = n ? n->id : 0,
    .next_config_id = n ? n->config_id : 0,
    .next_pid = n ? n->pid : 0,
    .next_pid_start = n ? n->pid_start : 0,
    .stop_reason = r ? (gint32) r->stopping : 0,
  };
  return stg_store_set_instance_facts (slot->rt->store, slot->key.job_id, &facts, error);
}

void
stg_local_save (Slot *slot)
{
  g_autoptr (GError) error = NULL;

  if (!save_facts (slot, &error))
    g_warning ("runtime: cannot record instance %d of %s/%s/%s: %s", slot->key.instance,
               slot->job->role, slot->job->environment, slot->job->name, error->message);
}

void
stg_local_crash_point (StgLocalRuntime *rt, const gchar *name)
{
  if (rt->crash_at != NULL && g_str_equal (rt->crash_at, name))
    {
      g_message ("runtime: stopping dead at %s (STAGGER_TEST_CRASH_AT)", name);
      _exit (99);
    }
}

void
stg_local_set_phase (Slot *slot, StgTaskPhase phase, gint64 config_id, gint status,
                     const gchar *message)
{
  StgLocalRuntime *rt = slot->rt;
  gint64 now = stg_clock_now_ms (rt->clock);
  g_autoptr (GError) error = NULL;

  slot->phase = phase;
  slot->config_id = config_id;
  slot->status = status;
  slot->phase_since_ms = now;
  if (!save_facts (slot, &error) ||
      !stg_store_add_task_event (rt->store, slot->key.job_id, slot->key.instance, now, status, message, &error))
    g_warning ("runtime: cannot record instance %d of %s/%s/%s: %s", slot->key.instance,
               slot->job->role, slot->job->environment, slot->job->name, error->message);
  g_debug ("runtime: %s/%s/%s/%d: %s (%s)", slot->job->role, slot->job->environment,
           slot->job->name, slot->key.instance, stg_task_phase_name (phase), message ? message : "");
  stg_runtime_notify_later (&rt->base, slot->key.job_id, slot->key.instance);
}

void
stg_local_set_cause (Slot *slot, const Run *run, const gchar *why)
{
  g_autofree gchar *tail = run != NULL ? stg_local_stderr_tail (run, 5) : NULL;

  g_free (slot->cause);
  slot->cause = tail != NULL ? g_strdup_printf ("%s; last lines of stderr:\n%s", why, tail)
                             : g_strdup (why);
}

void
stg_local_close_sockets (Slot *slot)
{
  if (slot->sockets == NULL)
    return;
  for (guint i = 0; i < slot->sockets->len; i++)
    close (g_array_index (slot->sockets, gint, i));
  g_clear_pointer (&slot->sockets, g_array_unref);
}

void
stg_local_count_failure (Slot *slot)
{
  slot->failures++;
}

void
stg_local_finish_removal (Slot *slot)
{
  StgLocalRuntime *rt = slot->rt;
  g_autoptr (GError) error = NULL;
  gint64 job_id = slot->key.job_id;
  gint32 instance = slot->key.instance;

  if (!stg_store_delete_instance (rt->store, job_id, instance, &error))
    g_warning ("runtime: cannot remove instance %d: %s", instance, error->message);
  StgSlotKey key = slot->key;
  g_hash_table_remove (rt->slots, &key);
  stg_runtime_notify_later (&rt->base, job_id, instance);
}

/* ---- paced starts --------------------------------------------------------------- */

gboolean
stg_local_start_held (Slot *slot, gint64 config_id, gboolean from_update)
{
  StgLocalRuntime *rt = slot->rt;

  if (rt->starting < rt->options.max_concurrent_starts)
    return FALSE;
  if (slot->queued == 0)
    g_queue_push_tail (&rt->waiting, slot);
  slot->queued = config_id;
  slot->queued_update = from_update;
  g_autofree gchar *m = g_strdup_printf ("waiting to start: %u instances are starting on this host "
                                         "(max_concurrent_starts)",
                                         rt->starting);
  stg_local_set_phase (slot, STG_TASK_PENDING, config_id, API_SCHEDULE_STATUS_PENDING, m);
  return TRUE;
}

void
stg_local_start_done (Run *run)
{
  StgLocalRuntime *rt = run->slot->rt;

  if (!run->counted)
    return;
  run->counted = FALSE;
  rt->starting--;
  while (rt->starting < rt->options.max_concurrent_starts && !g_queue_is_empty (&rt->waiting))
    {
      Slot *slot = g_queue_pop_head (&rt->waiting);
      gint64 config = slot->queued;
      slot->queued = 0;
      if (slot->want == config && slot->run == NULL && slot->pre_hook == NULL)
        stg_run_start_config (slot, config, FALSE, slot->queued_update);
    }
}

static gboolean
on_restart (gpointer data)
{
  Slot *slot = data;

  slot->restart_timer = 0;
  if (slot->want != 0 && slot->run == NULL)
    stg_run_start_config (slot, slot->want, FALSE, slot->want == slot->post_owed);
  return G_SOURCE_REMOVE;
}

void
stg_local_after_exit (Slot *slot, Run *run, gboolean success, const gchar *message)
{
  gboolean service = run ? run->service : TRUE;

  if (run != NULL && message != NULL)
    {
      if (!service && success)
        {
          stg_local_set_phase (slot, STG_TASK_FINISHED, run->config_id, API_SCHEDULE_STATUS_FINISHED,
                               message);
          return;
        }
      if (!run->failed)
        {
          stg_local_count_failure (slot);
          stg_local_set_cause (slot, run, message);
        }
      stg_local_set_phase (slot, STG_TASK_FAILED, run->config_id, API_SCHEDULE_STATUS_FAILED, message);
    }
  if (slot->want == 0 || slot->run != NULL)
    return;
  if (!service)
    {
      /* A task that is not a service is retried up to maxTaskFailures. */
      gint max = run->task->config->maxTaskFailures;
      if (max >= 0 && (gint) slot->failures > max)
        return;
    }
  slot->backoff_ms = slot->backoff_ms == 0 ? BACKOFF_FIRST_MS : MIN (slot->backoff_ms * 2, BACKOFF_MAX_MS);
  g_clear_handle_id (&slot->restart_timer, g_source_remove);
  slot->restart_timer = g_timeout_add ((guint) slot->backoff_ms, on_restart, slot);
}

/* ---- replacing: pre_update hooks, then hot or cold ----------------------------- */

/* Replaces what runs by @config (@spec: its parsed spec, NULL when it
 * does not parse: the old run is stopped and the start then fails). */
static void
proceed_replace (Slot *slot, gint64 config, const StgTaskSpec *spec)
{
  StgLocalRuntime *rt = slot->rt;
  Run *r = slot->run;

  slot->post_owed = config;
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
  r->stopping = STOP_REPLACE;
  stg_run_stop (r);
  g_autofree gchar *m = g_strdup_printf ("stopping version %d to start version %d", r->version,
                                         stg_store_config_version (rt->store, config));
  stg_local_set_phase (slot, STG_TASK_KILLING, r->config_id, API_SCHEDULE_STATUS_KILLING, m);
  stg_local_crash_point (rt, "replace-stopping");
}

static void
on_pre_hook (gpointer data, gint status)
{
  Slot *slot = data;

  g_clear_handle_id (&slot->pre_hook_timer, g_source_remove);
  gboolean ok = WIFEXITED (status) && WEXITSTATUS (status) == 0;
  g_autofree gchar *why = stg_run_hook_outcome ("pre_update", status);
  gint64 config = slot->pre_hook_config;
  g_clear_pointer (&slot->pre_hook, stg_child_free);
  if (slot->want != config)
    return;                            /* wanted something else meanwhile */
  if (ok)
    {
      proceed_replace (slot, config, stg_spec_cache_get (slot->rt->specs, config, NULL));
      return;
    }
  /* The instance is left as it is, and the failure is counted. */
  stg_local_count_failure (slot);
  stg_local_set_cause (slot, NULL, why);
  g_autofree gchar *m = g_strdup_printf ("%s: version %d left running", why,
                                         slot->run ? slot->run->version : 0);
  if (slot->run != NULL)
    stg_local_set_phase (slot, slot->run->healthy ? STG_TASK_RUNNING : STG_TASK_STARTING,
                         slot->run->config_id,
                         slot->run->healthy ? API_SCHEDULE_STATUS_RUNNING : API_SCHEDULE_STATUS_STARTING, m);
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
  slot->pre_hook = stg_run_hook (slot, &spec->exec->pre_update, spec, "pre_update", on_pre_hook,
                                 slot, &error);
  if (slot->pre_hook == NULL)
    {
      stg_local_count_failure (slot);
      g_autofree gchar *m = g_strdup_printf ("cannot run the pre_update hook: %s", error->message);
      stg_local_set_cause (slot, NULL, m);
      stg_local_set_phase (slot, slot->phase, slot->config_id, slot->status, m);
      return;
    }
  slot->pre_hook_timer = g_timeout_add ((guint) (spec->exec->pre_update.timeout_secs * 1000),
                                        on_pre_hook_timeout, slot);
}

/* ---- operations ---------------------------------------------------------------- */

static gboolean
local_apply (StgRuntime *base, gint64 job_id, gint32 instance, gint64 config, GError **error)
{
  StgLocalRuntime *rt = (StgLocalRuntime *) base;
  Slot *slot = stg_local_slot (rt, job_id, instance, TRUE);

  if (slot == NULL)
    {
      g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_NOT_FOUND, "no job %" G_GINT64_FORMAT, job_id);
      return FALSE;
    }
  slot->want = config;
  if (slot->pre_hook != NULL)
    {
      slot->pre_hook_config = config;   /* the hook's outcome goes on from here */
      return TRUE;
    }
  if (slot->next != NULL)
    {
      if (slot->next->config_id == config)
        return TRUE;
      slot->next->stopping = STOP_ABANDON;
      stg_run_stop (slot->next);
    }
  Run *r = slot->run;
  if (r == NULL)
    {
      g_clear_handle_id (&slot->restart_timer, g_source_remove);
      if (slot->config_id != 0 && slot->config_id != config)
        slot->post_owed = config;
      stg_run_start_config (slot, config, FALSE, config == slot->post_owed);
      return TRUE;
    }
  if (r->stopping)
    {
      /* Whatever it was stopped for, start what is wanted once it is gone. */
      if (r->stopping != STOP_REPLACE && r->stopping != STOP_RESTART)
        r->stopping = STOP_REPLACE;
      return TRUE;
    }
  if (r->config_id == config)
    return TRUE;            /* already runs it */
  replace (slot, config);
  return TRUE;
}

static gboolean
local_kill (StgRuntime *base, gint64 job_id, gint32 instance, GError **error)
{
  StgLocalRuntime *rt = (StgLocalRuntime *) base;
  Slot *slot = stg_local_slot (rt, job_id, instance, TRUE);

  if (slot == NULL)
    {
      g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_NOT_FOUND, "no job %" G_GINT64_FORMAT, job_id);
      return FALSE;
    }
  slot->want = 0;
  g_clear_handle_id (&slot->restart_timer, g_source_remove);
  if (slot->pre_hook != NULL)
    {
      stg_child_kill (slot->pre_hook);
      g_clear_pointer (&slot->pre_hook, stg_child_free);
      g_clear_handle_id (&slot->pre_hook_timer, g_source_remove);
    }
  if (slot->next != NULL)
    {
      slot->next->stopping = STOP_KILL;
      stg_run_stop (slot->next);
    }
  if (slot->run != NULL)
    {
      slot->run->stopping = STOP_KILL;
      stg_run_stop (slot->run);
      stg_local_set_phase (slot, STG_TASK_KILLING, slot->run->config_id, API_SCHEDULE_STATUS_KILLING,
                           "killing");
      return TRUE;
    }
  if (slot->next == NULL)
    stg_local_finish_removal (slot);
  return TRUE;
}

static gboolean
local_restart (StgRuntime *base, gint64 job_id, gint32 instance, GError **error)
{
  StgLocalRuntime *rt = (StgLocalRuntime *) base;
  Slot *slot = stg_local_slot (rt, job_id, instance, TRUE);

  if (slot == NULL)
    {
      g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_NOT_FOUND, "no job %" G_GINT64_FORMAT, job_id);
      return FALSE;
    }
  if (slot->run != NULL && !slot->run->stopping)
    {
      slot->run->stopping = STOP_RESTART;
      stg_run_stop (slot->run);
      stg_local_set_phase (slot, STG_TASK_KILLING, slot->run->config_id, API_SCHEDULE_STATUS_RESTARTING,
                           "restarting");
      return TRUE;
    }
  if (slot->run == NULL && slot->want != 0)
    {
      g_clear_handle_id (&slot->restart_timer, g_source_remove);
      stg_run_start_config (slot, slot->want, FALSE, FALSE);
    }
  return TRUE;
}

static void
local_observe (StgRuntime *base, gint64 job_id, gint32 instance, StgTaskObservation *out)
{
  Slot *slot = stg_local_slot ((StgLocalRuntime *) base, job_id, instance, FALSE);

  memset (out, 0, sizeof *out);
  if (slot == NULL)
    {
      out->phase = STG_TASK_ABSENT;
      return;
    }
  out->phase = slot->phase;
  out->config_id = slot->config_id;
  out->healthy_since_ms = slot->healthy_since_ms;
  out->phase_since_ms = slot->phase_since_ms;
  out->failures = slot->failures;
  out->status = slot->status;
  out->cause = slot->cause;
}

static gboolean
local_validate (StgRuntime *base, const ApiTaskConfig *config, GError **error)
{
  (void) base;
  if (!stg_executor_check_config (config, error))
    {
      if (error && *error)
        {
          (*error)->domain = STG_RUNTIME_ERROR;
          (*error)->code = STG_RUNTIME_ERROR_INVALID;
        }
      return FALSE;
    }
  return TRUE;
}

static GBytes *
local_read_log (StgRuntime *base, gint64 job_id, gint32 instance, gboolean err, gint64 offset,
                gsize max, gint64 *next, gint64 *size, GError **error)
{
  Slot *slot = stg_local_slot ((StgLocalRuntime *) base, job_id, instance, FALSE);

  if (slot == NULL)
    {
      g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_NOT_FOUND, "no instance %d",
                   instance);
      return NULL;
    }
  return stg_local_read_output (slot, err, offset, max, next, size, error);
}

static void
local_free (StgRuntime *base)
{
  StgLocalRuntime *rt = (StgLocalRuntime *) base;

  g_clear_handle_id (&rt->log_timer, g_source_remove);
  g_hash_table_unref (rt->slots);
  g_queue_clear (&rt->waiting);
  g_clear_pointer (&rt->specs, stg_spec_cache_free);
  g_free (rt->mark_dir);
  g_free (rt->crash_at);
  g_clear_object (&rt->session);
  stg_local_options_clear (&rt->options);
  g_free (rt);
}

static const StgRuntimeOps local_ops = {
  .apply = local_apply,
  .kill = local_kill,
  .restart = local_restart,
  .observe = local_observe,
  .validate = local_validate,
  .free = local_free,
  .read_log = local_read_log,
};

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
  rt->store = store;
  rt->clock = clock;
  rt->options.data_dir = g_strdup (options->data_dir);
  rt->options.cluster = g_strdup (options->cluster);
  rt->options.bind = g_strdup (options->bind);
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
  /* Health checks go straight to this host: no proxy lookups. */
  rt->session = soup_session_new_with_options ("max-conns", 4096, "max-conns-per-host", 4,
                                               "proxy-resolver", NULL, NULL);
  rt->specs = stg_spec_cache_new (store);
  rt->mark_dir = g_canonicalize_filename (options->data_dir, NULL);
  rt->crash_at = g_strdup (g_getenv ("STAGGER_TEST_CRASH_AT"));
  rt->slots = g_hash_table_new_full (stg_slot_key_hash, stg_slot_key_equal, NULL, slot_free);
  rt->log_timer = g_timeout_add_seconds (LOG_TRIM_S, on_log_timer, rt);
  return &rt->base;
}

GPid
stg_local_runtime_pid (StgRuntime *base, gint64 job_id, gint32 instance)
{
  Slot *slot = stg_local_slot ((StgLocalRuntime *) base, job_id, instance, FALSE);
  return slot && slot->run ? slot->run->pid : 0;
}
