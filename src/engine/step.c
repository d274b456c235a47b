/* step.c: steps, the runtime actions they queue, and the news they handle.
 *
 * Owns the step in progress: which updates it touched, the runtime actions
 * and watcher announcements waiting for its commit, and the slots noted for
 * the next news step. Calls the store, progress.c and notice.c only; what needs the
 * state machine (a refused runtime action, a slot's news, reloading after a
 * failed commit) goes up through engine->up, set by engine.c. Main-loop
 * thread only.
 */
#include "config.h"

#include "common/jobkey.h"
#include "engine/engine_private.h"
#include "engine/notice_private.h"
#include "engine/step_private.h"
#include "engine/surge_private.h"
#include "engine/update_private.h"
#include "engine/work_state.h"

/* ---- steps --------------------------------------------------------------------- */

static void
act_free (gpointer p)
{
  StgAct *a = p;
  g_free (a->uid);
  g_free (a);
}

static void
change_free (gpointer p)
{
  StgEngineChange *c = p;
  g_clear_object (&c->job);
  g_free (c->update_uid);
  g_free (c->plan_uid);
  g_free (c);
}

void
stg_engine_step_begin (StgEngine *engine)
{
  if (engine->step_depth++ > 0)
    return;
  engine->acts = g_ptr_array_new_with_free_func (act_free);
  engine->touched = g_ptr_array_new_with_free_func (g_free); /* uids */
  engine->announce = g_ptr_array_new_with_free_func (change_free);
  engine->step_failed = FALSE;
  GError *error = NULL;
  if (!stg_store_begin (engine->store, &error))
    {
      g_warning ("engine: cannot begin a step: %s", error->message);
      engine->step_failed = TRUE;
      g_error_free (error);
    }
}

void
stg_engine_step_fail (StgEngine *engine, const GError *error)
{
  /* A NULL error is a refusal: the step is dropped, nothing went wrong. */
  if (!engine->step_failed && error != NULL)
    g_warning ("engine: a step failed: %s", error->message);
  engine->step_failed = TRUE;
}

gboolean
stg_engine_step_ok (StgEngine *engine)
{
  return !engine->step_failed;
}

gboolean
stg_engine_step_check (StgEngine *engine, gboolean ok, GError **error)
{
  if (!ok)
    {
      stg_engine_step_fail (engine, *error);
      g_clear_error (error);
    }
  return ok;
}

void
stg_engine_queue (StgEngine *engine, StgActKind kind, gint64 job_id, gint32 instance, gint64 config,
                  const gchar *uid)
{
  StgAct *a = g_new0 (StgAct, 1);

  g_return_if_fail (engine->step_depth > 0);
  a->kind = kind;
  a->job_id = job_id;
  a->instance = instance;
  a->config = config;
  a->uid = g_strdup (uid);
  g_ptr_array_add (engine->acts, a);
}

static void
tell_watchers (StgEngine *engine, const StgEngineChange *change)
{
  for (guint i = 0; i < engine->watchers->len; i++)
    {
      StgWatcher *w = &g_array_index (engine->watchers, StgWatcher, i);
      w->func (w->data, change);
    }
}

void
stg_engine_announce (StgEngine *engine, const ApiJobKey *job, const gchar *uid)
{
  if (engine->watchers->len == 0)
    return;
  if (engine->step_depth == 0)
    {
      StgEngineChange now = { (ApiJobKey *) job, (gchar *) uid, NULL };
      tell_watchers (engine, &now);
      return;
    }
  for (guint i = 0; i < engine->announce->len; i++)
    {
      StgEngineChange *c = engine->announce->pdata[i];
      if (c->job != NULL && stg_job_key_equal (c->job, job) && g_strcmp0 (c->update_uid, uid) == 0)
        return;
    }
  StgEngineChange *c = g_new0 (StgEngineChange, 1);
  c->job = stg_thrift_copy ((gpointer) job);
  c->update_uid = g_strdup (uid);
  g_ptr_array_add (engine->announce, c);
}

void
stg_engine_announce_plan (StgEngine *engine, const gchar *plan_uid)
{
  if (engine->watchers->len == 0)
    return;
  if (engine->step_depth == 0)
    {
      StgEngineChange now = { NULL, NULL, (gchar *) plan_uid };
      tell_watchers (engine, &now);
      return;
    }
  for (guint i = 0; i < engine->announce->len; i++)
    {
      StgEngineChange *c = engine->announce->pdata[i];
      if (c->job == NULL && g_strcmp0 (c->plan_uid, plan_uid) == 0)
        return;
    }
  StgEngineChange *c = g_new0 (StgEngineChange, 1);
  c->plan_uid = g_strdup (plan_uid);
  g_ptr_array_add (engine->announce, c);
}

void
stg_update_touch (StgUpdate *u)
{
  StgEngine *e = u->engine;

  g_return_if_fail (e->step_depth > 0);
  u->dirty = TRUE;
  for (guint i = 0; i < e->touched->len; i++)
    if (g_str_equal (e->touched->pdata[i], u->uid))
      return;
  g_ptr_array_add (e->touched, g_strdup (u->uid));
}

void
stg_update_touch_work (StgUpdate *u, guint idx)
{
  g_hash_table_add (u->dirty_work, GUINT_TO_POINTER (idx));
  stg_update_touch (u);
}

void
stg_update_note_event (StgUpdate *u, const gchar *message)
{
  StgEngine *e = u->engine;
  GError *error = NULL;

  if (stg_engine_step_ok (e))
    stg_engine_step_check (e,
                           stg_store_add_update_event (e->store, u->id, u->status,
                                                       stg_clock_now_ms (e->clock), NULL, message,
                                                       &error),
                           &error);
  stg_engine_announce (e, u->job, u->uid);
}

gboolean
stg_update_write (StgUpdate *u, GError **error)
{
  GHashTableIter it;
  gpointer key;

  g_hash_table_iter_init (&it, u->dirty_work);
  while (g_hash_table_iter_next (&it, &key, NULL))
    {
      StgWork *w = &g_array_index (u->work, StgWork, GPOINTER_TO_UINT (key));
      StgUpdateInstanceRow row = {
        .instance_id = w->instance,
        .state = w->state,
        .failures = w->failures,
        .started_ms = w->started_ms,
        .baseline = w->seen_failures,
      };
      if (!stg_store_set_update_instance (u->engine->store, u->id, &row, error))
        return FALSE;
    }
  g_hash_table_remove_all (u->dirty_work);
  for (guint i = 0; i < u->surge.list->len; i++)
    {
      StgSurge *s = &g_array_index (u->surge.list, StgSurge, i);
      StgSurgeRow row = {
        .update_id = u->id,
        .job_id = u->job_id,
        .instance_id = s->instance,
        .config_id = s->config,
        .failures = s->failures,
        .baseline = s->seen_failures,
        .started_ms = s->started_ms,
      };
      if (s->dirty && !stg_store_put_surge (u->engine->store, &row, error))
        return FALSE;
      s->dirty = FALSE;
    }
  if (u->dirty)
    {
      g_autofree gchar *progress = stg_update_progress_json (u);
      if (!stg_store_set_update_progress (u->engine->store, u->id, progress, u->last_pulse_ms,
                                          error))
        return FALSE;
      u->dirty = FALSE;
    }
  return TRUE;
}

static void run_acts (StgEngine *engine, GPtrArray *acts);

/* Where invariants are checked (STG_CHECK_INVARIANTS: configure
 * --enable-sanitizers), after every step: committed or not, the engine's
 * memory must hold them, so every test proves them step by step. */
static void
after_step (StgEngine *engine)
{
#ifdef STG_CHECK_INVARIANTS
  if (engine->step_depth == 0)
    engine->up.check_invariants (engine);
#else
  (void) engine;
#endif
}

gboolean
stg_engine_step_end (StgEngine *engine, GError **error)
{
  g_autoptr (GPtrArray) acts = NULL;
  g_autoptr (GPtrArray) touched = NULL;
  g_autoptr (GPtrArray) announce = NULL;
  g_autoptr (GError) local = NULL;

  g_return_val_if_fail (engine->step_depth > 0, FALSE);
  if (--engine->step_depth > 0)
    return TRUE;
  engine->steps++;

  acts = g_steal_pointer (&engine->acts);
  touched = g_steal_pointer (&engine->touched);
  announce = g_steal_pointer (&engine->announce);

  gboolean ok = !engine->step_failed;
  for (guint i = 0; ok && i < touched->len; i++)
    {
      StgUpdate *u = g_hash_table_lookup (engine->updates, touched->pdata[i]);
      if (u != NULL && !stg_update_write (u, &local))
        ok = FALSE;
    }
  /* The notices go in the same transaction (the notifier writes them in a
   * savepoint, so they cannot fail the step): stored with the change or
   * not at all. */
  if (ok)
    stg_engine_notices_keep (engine);
  if (ok && !stg_store_commit (engine->store, &local))
    ok = FALSE;
  else if (!ok && stg_store_in_transaction (engine->store))
    stg_store_rollback (engine->store);

  if (!ok)
    {
      /* Memory ran ahead of the store: go back to what the store has. */
      if (local != NULL)
        g_warning ("engine: a step did not reach the store: %s", local->message);
      for (guint i = 0; i < touched->len; i++)
        engine->up.reload (engine, touched->pdata[i]);
      if (local != NULL)
        g_propagate_error (error, g_steal_pointer (&local));
      else
        g_set_error (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_FAILED,
                     "the change could not be stored");
      stg_engine_wrap_error (error);
      stg_engine_notices_end (engine, FALSE);
      after_step (engine);
      return FALSE;
    }

  stg_engine_notices_end (engine, TRUE);
  run_acts (engine, acts);
  for (guint i = 0; i < announce->len; i++)
    tell_watchers (engine, announce->pdata[i]);
  after_step (engine);
  return TRUE;
}

static void
run_acts (StgEngine *engine, GPtrArray *acts)
{
  if (engine->runtime == NULL)
    return;
  for (guint i = 0; i < acts->len; i++)
    {
      StgAct *a = acts->pdata[i];
      g_autoptr (GError) error = NULL;
      gboolean ok = TRUE;
      switch (a->kind)
        {
        case STG_ACT_APPLY:
          ok = stg_runtime_apply (engine->runtime, a->job_id, a->instance, a->config, &error);
          break;
        case STG_ACT_KILL:
          ok = stg_runtime_kill (engine->runtime, a->job_id, a->instance, &error);
          break;
        case STG_ACT_RESTART:
          ok = stg_runtime_restart (engine->runtime, a->job_id, a->instance, &error);
          break;
        }
      if (!ok)
        engine->up.act_failed (engine, a, error);
    }
}

/* ---- news ---------------------------------------------------------------------- */

/* Handles every slot noted since the last time, in one step: each job
 * once (watchers), then each slot. */
static void
handle_news (gpointer data)
{
  StgEngine *e = data;
  g_autoptr (GHashTable) news = g_steal_pointer (&e->news);
  GHashTableIter it;
  gpointer key;

  g_autoptr (GHashTable) jobs = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);

  e->news_timer = 0;
  e->news = stg_engine_news_new ();
  stg_engine_step_begin (e);
  g_hash_table_iter_init (&it, news);
  while (g_hash_table_iter_next (&it, &key, NULL))
    {
      const StgSlotKey *slot = key;
      if (!g_hash_table_contains (jobs, &slot->job_id))
        {
          g_hash_table_add (jobs, g_memdup2 (&slot->job_id, sizeof slot->job_id));
          e->up.job_news (e, slot->job_id);
        }
      e->up.look_at (e, slot->job_id, slot->instance);
    }
  stg_engine_step_end (e, NULL);
}

GHashTable *
stg_engine_news_new (void)
{
  return g_hash_table_new_full (stg_slot_key_hash, stg_slot_key_equal, g_free, NULL);
}

void
stg_engine_note (StgEngine *e, gint64 job_id, gint32 instance)
{
  g_hash_table_add (e->news, stg_slot_key_new (job_id, instance));
  if (e->news_timer == 0)
    e->news_timer = stg_clock_add_timer (e->clock, 0, handle_news, e);
}
