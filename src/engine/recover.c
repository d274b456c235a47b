/* recover.c: bringing active updates back into memory from the store.
 *
 * At start-up every active update is loaded: its settings from the recorded
 * instructions, its per-instance work from update_instances, and its
 * position (direction, cursor, batch) from the progress JSON. Then each is
 * continued: paused stays paused, awaiting-pulse keeps waiting, a rolling
 * update re-evaluates its in-flight instances against what the runtime sees
 * now, and a coordinated one waits for its next pulse (pulses are kept in
 * memory only, as Aurora's scheduler keeps them). An update whose
 * record cannot be read goes to ERROR. The same loader rebuilds one update
 * when a step could not be stored. Main-loop thread only.
 */
#include "config.h"

#include "common/enums.h"
#include "engine/engine_private.h"
#include "engine/notice_private.h"
#include "engine/settings_private.h"
#include "engine/step_private.h"
#include "engine/surge_private.h"
#include "engine/update_private.h"
#include "engine/work_state.h"

/* Loads update @row into memory (no evaluation). */
/* The work item of @instance, or NULL. */
static StgWork *
work_of (StgUpdate *u, gint32 instance)
{
  gpointer pos = g_hash_table_lookup (u->position, GINT_TO_POINTER (instance));
  return pos != NULL ? &g_array_index (u->work, StgWork, GPOINTER_TO_UINT (pos) - 1) : NULL;
}

static StgUpdate *
update_load (StgEngine *e, StgUpdateRow *row, GError **error)
{
  g_autoptr (ApiJobUpdateInstructions) ins = stg_store_get_update_instructions (e->store, row->id, error);
  if (ins == NULL)
    return NULL;
  g_autoptr (StgJobRow) job = stg_store_get_job (e->store, row->job, error);
  if (job == NULL)
    return NULL;
  g_autoptr (GArray) rows = stg_store_list_update_instances (e->store, row->id, error);
  if (rows == NULL)
    return NULL;

  StgUpdate *u = stg_update_new (e);
  u->id = row->id;
  u->uid = g_strdup (row->uid);
  u->job = g_object_ref (row->job);
  u->job_id = job->id;
  u->user = g_strdup (row->user);
  u->status = row->status;
  u->created_ms = row->created_ms;
  /* Pulses live in memory: a restarted daemon has seen none, so a
   * coordinated update waits for the next one. */
  u->last_pulse_ms = 0;
  if (!stg_settings_parse (e, ins->settings, "settings", &u->s, error) ||
      !stg_update_progress_load (u, row->progress, error) || !stg_surge_load (u, error))
    {
      stg_update_free (u);
      return NULL;
    }
  if (u->batch_size == 0)
    u->batch_size = stg_strategy_first_size (&u->s);
  if (u->gating && (u->s.gates == NULL || u->gates_passed >= u->s.gates->len || u->back))
    u->gating = FALSE;

  for (guint i = 0; i < rows->len; i++)
    {
      StgUpdateInstanceRow *r = &g_array_index (rows, StgUpdateInstanceRow, i);
      StgWork w = {
        .instance = r->instance_id,
        .from_config = r->initial_config_id,
        .to_config = r->desired_config_id,
        .state = r->state,
        .failures = r->failures,
        .started_ms = r->started_ms,
        .seen_failures = r->baseline,
        /* The runtime may not have heard of it before the restart: ask again. */
        .asked = FALSE,
        .batch = -1,
      };
      g_array_append_val (u->work, w);
      g_hash_table_insert (u->position, GINT_TO_POINTER (r->instance_id), GUINT_TO_POINTER (i + 1));
    }
  for (guint i = 0; u->gated != NULL && i < u->gated->len; i++)
    {
      /* Its before gates had not passed: they are tried again, from the
       * first, before the runtime hears of it. */
      StgWork *w = work_of (u, g_array_index (u->gated, gint32, i));
      if (w != NULL)
        w->gates = STG_WORK_GATES_BEFORE;
    }
  for (guint i = 0; u->unchanged != NULL && i < u->unchanged->len; i++)
    {
      StgWork *w = work_of (u, g_array_index (u->unchanged, gint32, i));
      if (w != NULL)
        w->unchanged = TRUE; /* its before gates failed it: a rollback leaves it be */
    }
  g_clear_pointer (&u->gated, g_array_unref);
  g_clear_pointer (&u->unchanged, g_array_unref);
  for (guint i = 0; i < u->work->len; i++)
    {
      StgWork *w = &g_array_index (u->work, StgWork, i);
      w->owner = u;
      gint in_flight = u->back ? STG_WORK_ROLLING_BACK : STG_WORK_UPDATING;
      gint done = u->back ? STG_WORK_ROLLED_BACK : STG_WORK_UPDATED;
      gint failed = u->back ? STG_WORK_ROLLBACK_FAILED : STG_WORK_UPDATE_FAILED;
      if (w->state == in_flight)
        g_hash_table_add (u->active, GUINT_TO_POINTER (i));
      else if (w->state == done)
        u->n_done++;
      else if (w->state == failed)
        u->n_failed++;
    }
  stg_settings_resolve (&u->s, u->work->len);
  stg_update_rebuild_order (u);
  if (u->cursor > u->order->len || u->batch_end > u->order->len ||
      u->n_done + u->n_failed + g_hash_table_size (u->active) != u->cursor)
    {
      g_set_error (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_FAILED,
                   "the stored progress does not match the instances (cursor %u of %u)",
                   u->cursor, u->order->len);
      stg_update_free (u);
      return NULL;
    }
  return u;
}

/* Marks a damaged update ERROR in the store; it cannot be continued. */
static void
give_up (StgEngine *e, StgUpdateRow *row, const GError *why)
{
  g_autoptr (GError) error = NULL;
  gint64 now = stg_clock_now_ms (e->clock);
  g_autofree gchar *message = g_strdup_printf ("cannot continue: %s", why->message);

  g_warning ("engine: update %s %s", row->uid, message);
  if (!stg_store_begin (e->store, &error) ||
      !stg_store_set_update_status (e->store, row->id, API_JOB_UPDATE_STATUS_ERROR, now, &error) ||
      !stg_store_add_update_event (e->store, row->id, API_JOB_UPDATE_STATUS_ERROR, now, NULL,
                                   message, &error) ||
      !stg_store_commit (e->store, &error))
    {
      if (stg_store_in_transaction (e->store))
        stg_store_rollback (e->store);
      g_warning ("engine: cannot record the error of update %s: %s", row->uid, error->message);
      return;
    }
  stg_engine_notice_update (e, row->uid, row->job, API_JOB_UPDATE_STATUS_ERROR, row->status, NULL,
                            message);
}

/* Continues a loaded update (inside a step). */
static void
resume_loaded (StgUpdate *u)
{
  stg_update_arm_pulse (u);
  stg_update_evaluate_all (u);
}

gboolean
stg_updates_recover (StgEngine *e, GError **error)
{
  g_autoptr (GPtrArray) rows = stg_store_list_active_updates (e->store, error);
  g_autoptr (GPtrArray) loaded = g_ptr_array_new_with_free_func (g_free);

  if (rows == NULL)
    {
      stg_engine_wrap_error (error);
      return FALSE;
    }
  for (guint i = 0; i < rows->len; i++)
    {
      StgUpdateRow *row = rows->pdata[i];
      g_autoptr (GError) local = NULL;
      StgUpdate *u = update_load (e, row, &local);
      if (u == NULL)
        {
          give_up (e, row, local);
          continue;
        }
      stg_engine_add_update (e, u);
      stg_update_track_health (u);
      g_ptr_array_add (loaded, g_strdup (u->uid));
      g_info ("engine: continuing update %s (%s)", u->uid, stg_update_status_name (u->status));
    }
  for (guint i = 0; i < loaded->len; i++)
    {
      StgUpdate *u = g_hash_table_lookup (e->updates, loaded->pdata[i]);
      if (u == NULL)
        continue;
      stg_engine_step_begin (e);
      resume_loaded (u);
      stg_engine_step_end (e, NULL);
    }
  return stg_surge_recover_leftovers (e, error);
}

typedef struct
{
  StgEngine *engine;
  gchar *uid;
  guint timer;
} Later;

static void
later_free (gpointer data)
{
  Later *l = data;
  g_free (l->uid);
  g_free (l);
}

static void
reevaluate_later (gpointer data)
{
  Later *l = data;
  StgEngine *e = l->engine;
  StgUpdate *u = g_hash_table_lookup (e->updates, l->uid);

  if (u != NULL)
    {
      stg_engine_step_begin (e);
      stg_update_evaluate_all (u);
      stg_engine_step_end (e, NULL);
    }
  g_ptr_array_remove (e->retries, l);
}

void
stg_engine_cancel_retries (StgEngine *e)
{
  for (guint i = 0; i < e->retries->len; i++)
    stg_clock_cancel_timer (e->clock, ((Later *) e->retries->pdata[i])->timer);
  g_ptr_array_set_size (e->retries, 0);
}

GPtrArray *
stg_engine_retries_new (void)
{
  return g_ptr_array_new_with_free_func (later_free);
}

void
stg_engine_reload_update (StgEngine *e, const gchar *uid)
{
  g_autofree gchar *id = g_strdup (uid);
  StgUpdate *old = g_hash_table_lookup (e->updates, id);
  g_autoptr (GError) error = NULL;

  if (old != NULL)
    {
      g_hash_table_remove (e->by_job, &old->job_id);
      g_hash_table_remove (e->updates, id);
      stg_update_free (old);
    }
  g_autoptr (StgUpdateRow) row = stg_store_get_update (e->store, id, &error);
  if (row == NULL || !stg_update_status_is_active (row->status))
    return;
  StgUpdate *u = update_load (e, row, &error);
  if (u == NULL)
    {
      g_warning ("engine: cannot reload update %s: %s", id, error->message);
      return;
    }
  stg_engine_add_update (e, u);
  stg_update_track_health (u);
  /* Continue on the next iteration, outside the failed step. */
  stg_update_arm_pulse (u);
  Later *l = g_new0 (Later, 1);
  l->engine = e;
  l->uid = g_strdup (id);
  /* Not at once: a store that keeps failing must not make a busy loop. */
  l->timer = stg_clock_add_timer (e->clock, STG_ENGINE_RETRY_MS, reevaluate_later, l);
  g_ptr_array_add (e->retries, l);
}
