/* engine.c: StgEngine: construction, the runtime's news, watchers,
 * invariants (checked by tests, and after every step where
 * STG_CHECK_INVARIANTS is defined: step.c), createJob (also of a job whose
 * instances have all ended, as Aurora allows) and populateJobConfig.
 *
 * Owns the active updates; the store, clock and runtime are borrowed from
 * the daemon. Runtime news for a slot goes to the job's active update, if
 * any; a job whose last instance is gone (and has no update) is removed.
 * Main-loop thread only.
 */
#include "config.h"

#include "common/enums.h"
#include "common/error.h"
#include "common/jobkey.h"
#include "engine/plan_private.h"
#include "engine/reconcile_private.h"
#include "engine/rehearsal_private.h"
#include "engine/settings_private.h"
#include "engine/sidecar_private.h"
#include "engine/sla_private.h"
#include "engine/step_private.h"
#include "engine/surge_private.h"
#include "engine/task_private.h"
#include "engine/update_private.h"
#include "engine/work_state.h"

void
stg_engine_limits_init (StgEngineLimits *limits)
{
  limits->max_instances = 100000;
  limits->max_watch_ms = 24 * 3600 * 1000LL;
  limits->max_pulse_ms = 7 * 24 * 3600 * 1000LL;
  limits->max_update_instance_failures = 5LL * limits->max_instances;
  stg_sla_limits_init (limits);
  limits->maintenance_poll_ms = 60 * 1000;
}

/* Tells watchers that job @job_id had news (once per job and news step). */
static void
job_news (StgEngine *e, gint64 job_id)
{
  if (e->watchers->len == 0)
    return;
  g_autoptr (StgJobRow) job = stg_store_get_job_by_id (e->store, job_id, NULL);
  if (job != NULL)
    stg_engine_announce (e, job->key, NULL);
}

/* Looks at one slot the runtime (or a timer) had news about (in a step). */
static void
look_at (StgEngine *e, gint64 job_id, gint32 instance)
{
  StgUpdate *u = stg_engine_update_for_job (e, job_id);

  stg_surge_leftover_news (e, job_id, instance);
  stg_sidecars_news (e);
  if (u != NULL)
    {
      stg_update_on_instance (u, instance);
      return;
    }
  if (e->runtime == NULL)
    return;
  /* A job whose last instance is gone has been killed: remove it. */
  StgTaskObservation obs;
  stg_runtime_observe (e->runtime, job_id, instance, &obs);
  if (obs.phase == STG_TASK_ABSENT)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (GArray) counts = stg_store_count_configs (e->store, job_id, &error);
      if (counts != NULL && counts->len == 0 && !stg_store_delete_job (e->store, job_id, &error))
        stg_engine_step_fail (e, error);
    }
}

/* The runtime's news about a slot. */
static void
on_instance (gpointer data, gint64 job_id, gint32 instance)
{
  stg_engine_note (data, job_id, instance);
}

/* An update's timer or answer: it moves on, in a step of its own. */
static void
wake (StgUpdate *u)
{
  StgEngine *e = u->engine;

  stg_engine_step_begin (e);
  stg_update_pump (u);
  stg_engine_step_end (e, NULL);
}

StgEngine *
stg_engine_new (StgStore *store, StgClock *clock, StgRuntime *runtime,
                const StgEngineLimits *limits)
{
  StgEngine *engine = g_new0 (StgEngine, 1);

  engine->store = store;
  engine->clock = clock;
  engine->runtime = runtime;
  if (limits != NULL)
    engine->limits = *limits;
  else
    stg_engine_limits_init (&engine->limits);
  engine->updates = g_hash_table_new (g_str_hash, g_str_equal);
  engine->by_job = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  engine->watchers = g_array_new (FALSE, FALSE, sizeof (StgWatcher));
  engine->news = stg_engine_news_new ();
  engine->starting = stg_engine_starts_new ();
  engine->up.reload = stg_engine_reload_update;
  engine->up.act_failed = stg_update_act_failed;
  engine->up.look_at = look_at;
  engine->up.job_news = job_news;
  engine->up.check_invariants = stg_engine_check_invariants;
  engine->up.wake = wake;
  engine->sla_busy = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  stg_maintenance_init (engine);
  engine->retries = stg_engine_retries_new ();
  engine->leftover_surge = stg_engine_news_new ();
  engine->default_tiers = stg_tiers_new_default ();
  engine->tiers = engine->default_tiers;
  stg_plans_init (engine);
  stg_engine_add_watcher (engine, stg_plans_on_change, engine);
  if (runtime != NULL)
    stg_runtime_set_listener (runtime, on_instance, engine);
  return engine;
}

void
stg_engine_free (StgEngine *engine)
{
  if (engine == NULL)
    return;
  if (engine->runtime != NULL)
    stg_runtime_set_listener (engine->runtime, NULL, NULL);
  stg_clock_cancel_timer (engine->clock, engine->news_timer);
  stg_sidecars_free (engine);
  stg_plans_free (engine);
  stg_rehearsal_forget (engine);
  stg_engine_starts_free (engine);
  g_hash_table_unref (engine->news);
  g_hash_table_unref (engine->leftover_surge);
  stg_engine_cancel_retries (engine);
  g_ptr_array_unref (engine->retries);
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init (&it, engine->updates);
  while (g_hash_table_iter_next (&it, NULL, &value))
    stg_update_free (value);
  g_hash_table_unref (engine->updates);
  g_hash_table_unref (engine->by_job);
  g_array_unref (engine->watchers);
  g_clear_pointer (&engine->notices, g_ptr_array_unref);
  stg_reconcile_free (engine);
  stg_maintenance_free (engine); /* its questions first: they hold sla_busy */
  g_hash_table_unref (engine->sla_busy);
  stg_tiers_free (engine->default_tiers);
  g_free (engine);
}

gboolean
stg_engine_recover (StgEngine *engine, GError **error)
{
  /* Updates first: the plans look at their stages' updates. Sidecar sets'
   * updates go on from what the runtime sees. */
  stg_sidecars_news (engine);
  return stg_updates_recover (engine, error) && stg_plans_recover (engine, error);
}

void
stg_engine_set_gate_runner (StgEngine *engine, StgGateRunner *runner)
{
  engine->gates = runner;
}

void
stg_engine_set_notifier (StgEngine *engine, StgNotifier *notifier)
{
  engine->notifier = notifier;
}

void
stg_engine_add_watcher (StgEngine *engine, StgEngineWatchFunc func, gpointer data)
{
  StgWatcher w = { func, data };
  g_array_append_val (engine->watchers, w);
}

guint64
stg_engine_step_count (StgEngine *engine)
{
  return engine->steps;
}

guint64
stg_engine_transition_count (StgEngine *engine)
{
  return engine->transitions;
}

gboolean
stg_engine_transition_allowed (gint from, gint to)
{
  return stg_update_transition_allowed (from, to);
}

gboolean
stg_engine_plan_transition_allowed (gboolean stage, gint from, gint to)
{
  return stage ? stg_stage_transition_allowed (from, to) : stg_plan_transition_allowed (from, to);
}

gboolean
stg_engine_work_transition_allowed (gint from, gint to)
{
  return stg_work_transition_allowed (from, to);
}

guint
stg_engine_active_updates (StgEngine *engine)
{
  return g_hash_table_size (engine->updates);
}

void
stg_engine_check_invariants (StgEngine *engine)
{
  GHashTableIter it;
  gpointer key, value;

  g_assert_cmpuint (engine->step_depth, ==, 0);
  g_assert_cmpuint (g_hash_table_size (engine->updates), ==, g_hash_table_size (engine->by_job));
  g_hash_table_iter_init (&it, engine->updates);
  while (g_hash_table_iter_next (&it, &key, &value))
    {
      StgUpdate *u = value;
      /* 1. Active, registered under its uid and its job. */
      g_assert_true (stg_update_status_is_active (u->status));
      g_assert_cmpstr (key, ==, u->uid);
      g_assert_true (stg_engine_update_for_job (engine, u->job_id) == u);
      /* 2. In-flight items are exactly those in the direction's in-flight state. */
      gint in_flight = u->back ? STG_WORK_ROLLING_BACK : STG_WORK_UPDATING;
      guint counted = 0;
      for (guint i = 0; i < u->work->len; i++)
        {
          StgWork *w = &g_array_index (u->work, StgWork, i);
          gboolean active = g_hash_table_contains (u->active, GUINT_TO_POINTER (i));
          g_assert_true (active == (w->state == in_flight));
          counted += active;
          g_assert_true (GPOINTER_TO_UINT (g_hash_table_lookup (u->position,
                                                                GINT_TO_POINTER (w->instance))) == i + 1);
        }
      g_assert_cmpuint (counted, ==, g_hash_table_size (u->active));
      /* 3. order[0..cursor) started, order[cursor..] not. */
      g_assert_cmpuint (u->cursor, <=, u->order->len);
      for (guint p = 0; p < u->order->len; p++)
        {
          StgWork *w = &g_array_index (u->work, StgWork, g_array_index (u->order, guint, p));
          gboolean pending = w->state == (u->back ? STG_WORK_ROLLBACK_PENDING : STG_WORK_PENDING);
          g_assert_true (pending == (p >= u->cursor));
          if (u->s.kind != STG_STRATEGY_QUEUE && w->state == in_flight)
            g_assert_true (p >= u->batch_start && p < u->batch_end);
        }
      /* 4. Every started item is done, failed or in flight. */
      g_assert_cmpuint (u->n_done + u->n_failed + g_hash_table_size (u->active), ==, u->cursor);
      /* Surge instances: at most maxSurge of each direction's config (so
       * twice that while a turn is under way), each past the ids that the
       * next one takes, none without maxSurge. */
      guint live = 0;
      for (guint i = 0; i < u->surge.list->len; i++)
        {
          const StgSurge *s = &g_array_index (u->surge.list, StgSurge, i);
          live += s->config != 0;
          g_assert_cmpint (s->instance, <, u->surge.next);
        }
      g_assert_cmpuint (live, <=, 2 * (guint) MAX (u->s.max_surge, 0));
    }
  stg_plans_check_invariants (engine);
}

/* The key and the checked task config of @config, as createJob takes them
 * (cron refused, the instance count within the limits). */
static ApiTaskConfig *
check_job (StgEngine *engine, const ApiJobConfiguration *config, const ApiJobKey **key_out,
           GError **error)
{
  const ApiJobKey *key = config->__isset_key ? config->key : NULL;

  if (key == NULL && config->__isset_taskConfig && config->taskConfig->__isset_job)
    key = config->taskConfig->job;
  if (!stg_job_key_check (key, "description.key", error))
    {
      stg_engine_wrap_error (error);
      (*error)->code = STG_ENGINE_ERROR_INVALID;
      return NULL;
    }
  if (config->__isset_cronSchedule && config->cronSchedule != NULL && config->cronSchedule[0])
    {
      g_set_error (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID,
                   "description.cronSchedule: cron jobs are not supported by Stagger");
      return NULL;
    }
  if (config->instanceCount < 1 || config->instanceCount > engine->limits.max_instances)
    {
      g_set_error (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID,
                   "description.instanceCount must be between 1 and %d, not %d",
                   engine->limits.max_instances, config->instanceCount);
      return NULL;
    }
  *key_out = key;
  return stg_engine_check_task_config (engine,
                                       config->__isset_taskConfig ? config->taskConfig : NULL, key,
                                       config->instanceCount, "description.taskConfig", error);
}

ApiTaskConfig *
stg_engine_populate_job (StgEngine *engine, const ApiJobConfiguration *config, GError **error)
{
  const ApiJobKey *key = NULL;

  g_return_val_if_fail (config != NULL, NULL);
  ApiTaskConfig *task = check_job (engine, config, &key, error);
  if (task != NULL)
    stg_task_fields_populate (engine, task);
  return task;
}

/* createJob of a job that still has a row: as Aurora, allowed once none of
 * its instances is active (each has ended: FINISHED, FAILED, KILLED, LOST,
 * or is gone) and no update runs. */
static gboolean
check_ended (StgEngine *engine, StgJobRow *job, GArray *rows, GError **error)
{
  g_autofree gchar *name = stg_job_key_to_string (job->key);
  StgUpdate *u = stg_engine_update_for_job (engine, job->id);

  if (u != NULL)
    return stg_fail (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_UPDATING,
                     "job %s already exists and update %s of it is active", name, u->uid);
  for (guint i = 0; i < rows->len; i++)
    {
      const StgInstanceRow *row = &g_array_index (rows, StgInstanceRow, i);
      if (!stg_schedule_status_is_terminal (row->status))
        return stg_fail (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID,
                         "job %s already exists: instance %d is %s (createJob takes it over once "
                         "every instance has ended)",
                         name, row->instance_id, stg_schedule_status_name (row->status));
    }
  return TRUE;
}

/* The job keeps its row, so its history stays with it (its updates, its
 * numbered configurations, the events of the instances that had ended);
 * instances 0..@count-1 are set to @task and started, the others (@rows
 * beyond them) stopped and removed. */
static gboolean
create_again (StgEngine *engine, StgJobRow *job, GArray *rows, ApiTaskConfig *task, gint32 count,
              GError **error)
{
  gint64 config_id = 0;
  GError *local = NULL;

  stg_engine_finish_starts (engine, job->id);
  stg_engine_step_begin (engine);
  stg_store_put_config (engine->store, task, &config_id, NULL, &local);
  for (gint32 i = 0; i < count && local == NULL; i++)
    if (stg_store_set_instance_config (engine->store, job->id, i, config_id, &local))
      stg_engine_queue (engine, STG_ACT_APPLY, job->id, i, config_id, NULL);
  for (guint i = 0; i < rows->len && local == NULL; i++)
    {
      gint32 id = g_array_index (rows, StgInstanceRow, i).instance_id;
      if (id >= count)
        stg_engine_queue (engine, STG_ACT_KILL, job->id, id, 0, NULL);
    }
  if (local != NULL)
    {
      stg_engine_step_fail (engine, local);
      g_error_free (local);
    }
  stg_engine_announce (engine, job->key, NULL);
  return stg_engine_step_end (engine, error);
}

gboolean
stg_engine_create_job (StgEngine *engine, const ApiJobConfiguration *config, const gchar *user,
                       GError **error)
{
  const ApiJobKey *key = NULL;
  gint64 config_id = 0, job_id = 0;

  g_return_val_if_fail (config != NULL, FALSE);

  g_autoptr (ApiTaskConfig) task = check_job (engine, config, &key, error);
  if (task == NULL)
    return FALSE;
  g_autoptr (StgJobRow) existing = stg_store_get_job (engine->store, key, NULL);
  g_autoptr (GArray) rows = existing ? stg_store_list_instances (engine->store, existing->id, error)
                                     : NULL;
  if (existing != NULL && (rows == NULL || !check_ended (engine, existing, rows, error)))
    goto fail;
  if (!stg_quota_check_add (engine, key, task, config->instanceCount, error))
    return FALSE;
  if (existing != NULL)
    return create_again (engine, existing, rows, task, config->instanceCount, error);

  const gchar *owner = user;
  if (owner == NULL && config->__isset_owner && config->owner != NULL)
    owner = config->owner->user;

  if (!stg_store_begin (engine->store, error))
    goto fail;
  if (!stg_store_put_config (engine->store, task, &config_id, NULL, error) ||
      !stg_store_create_job (engine->store, key, owner, config_id, config->instanceCount,
                             stg_clock_now_ms (engine->clock), &job_id, error))
    {
      stg_store_rollback (engine->store);
      goto fail;
    }
  if (!stg_store_commit (engine->store, error))
    goto fail;

  stg_engine_start_instances (engine, job_id, config_id, config->instanceCount);
  return TRUE;

fail:
  stg_engine_wrap_error (error);
  return FALSE;
}
