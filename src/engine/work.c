/* work.c: one instance's work in an update: starting it, and looking at
 * it against what the runtime sees (done once healthy for the watch time,
 * a failure counted, the runtime asked again, a deadline or watch timer
 * armed), with the instance events each move records, and the verdicts of
 * its instance gates (work_gates.c runs them). The states and what holds
 * in each are drawn in work_state.h; update.c decides when work
 * starts and what a finished or failed instance means for the update.
 * Calls step.c, work_gates.c and the store. Main-loop thread only.
 */
#include "config.h"

#include "engine/engine_private.h"
#include "engine/step_private.h"
#include "engine/update_private.h"
#include "engine/work_state.h"

/* ---- one instance -------------------------------------------------------------------- */

static void
instance_event (StgUpdate *u, StgWork *w, gint action, const gchar *message)
{
  StgEngine *e = u->engine;
  GError *error = NULL;

  if (!stg_engine_step_ok (e))
    return;
  e->transitions++;
  stg_engine_step_check (e,
                         stg_store_add_instance_event (e->store, u->id, w->instance,
                                                       stg_clock_now_ms (e->clock), action,
                                                       w->batch >= 0 ? w->batch
                                                                     : (gint) u->batch_index,
                                                       message, &error),
                         &error);
}

static gint64
target_of (StgUpdate *u, StgWork *w)
{
  return u->back ? w->from_config : w->to_config;
}

/* A work item's watch or deadline timer; @data is the StgWork (work arrays
 * never move once built). Timers due together are handled in one step. */
static void
fire_work_timer (gpointer data)
{
  StgWork *w = data;
  StgUpdate *u = w->owner;

  w->timer = 0;
  stg_engine_note (u->engine, u->job_id, w->instance);
}

static void
arm_work_timer (StgUpdate *u, StgWork *w, gint64 at)
{
  StgClock *clock = u->engine->clock;

  stg_clock_cancel_timer (clock, w->timer);
  w->owner = u;
  w->timer = stg_clock_add_timer (clock, at - stg_clock_now_ms (clock), fire_work_timer, w);
}

static const gchar *const WORK_STATE_NAMES[] = {
  "PENDING",          "UPDATING",     "UPDATED",     "UPDATE_FAILED",
  "ROLLBACK_PENDING", "ROLLING_BACK", "ROLLED_BACK", "ROLLBACK_FAILED",
};

gboolean
stg_work_transition_allowed (gint from, gint to)
{
#define W(x) STG_WORK_##x
  switch (from)
    {
    case W (PENDING):
      return to == W (UPDATING);
    case W (UPDATING): /* PENDING: a rollback while its before gates held it */
      return to == W (UPDATED) || to == W (UPDATE_FAILED) || to == W (ROLLBACK_PENDING) ||
             to == W (PENDING);
    case W (UPDATED):
    case W (UPDATE_FAILED):
      return to == W (ROLLBACK_PENDING);
    case W (ROLLBACK_PENDING):
      return to == W (ROLLING_BACK);
    case W (ROLLING_BACK):
      return to == W (ROLLED_BACK) || to == W (ROLLBACK_FAILED);
    default:
      return FALSE; /* ROLLED_BACK and ROLLBACK_FAILED are final */
    }
#undef W
}

void
stg_work_set_state (StgUpdate *u, StgWork *w, gint to)
{
  g_assert (w->state >= 0 && w->state < (gint) G_N_ELEMENTS (WORK_STATE_NAMES));
  g_assert (to >= 0 && to < (gint) G_N_ELEMENTS (WORK_STATE_NAMES));
  g_autofree gchar *id = g_strdup_printf ("%s instance %d", u->uid, w->instance);
  if (stg_engine_transition_ok (stg_work_transition_allowed (w->state, to), "work of update", id,
                                WORK_STATE_NAMES[w->state], WORK_STATE_NAMES[to]))
    w->state = to;
}

static void
finish_work (StgUpdate *u, guint idx, gboolean ok, const gchar *message)
{
  StgWork *w = &g_array_index (u->work, StgWork, idx);

  g_debug ("engine: update %s: instance %d %s", u->uid, w->instance,
           ok ? (u->back ? "rolled back" : "updated") : "failed");
  stg_clock_cancel_timer (u->engine->clock, w->timer);
  w->timer = 0;
  stg_work_gates_stop (w);
  g_hash_table_remove (u->active, GUINT_TO_POINTER (idx));
  if (ok)
    {
      stg_work_set_state (u, w, u->back ? STG_WORK_ROLLED_BACK : STG_WORK_UPDATED);
      u->n_done++;
      instance_event (u, w,
                      u->back ? API_JOB_UPDATE_ACTION_INSTANCE_ROLLED_BACK
                              : API_JOB_UPDATE_ACTION_INSTANCE_UPDATED,
                      NULL);
    }
  else
    {
      stg_work_set_state (u, w, u->back ? STG_WORK_ROLLBACK_FAILED : STG_WORK_UPDATE_FAILED);
      u->n_failed++;
      g_clear_pointer (&u->gate_cause, g_free); /* set again when a gate failed it */
      u->batch_failed = TRUE;
      g_free (u->last_failure);
      u->last_failure = g_strdup_printf ("instance %d: %s", w->instance, message);
      instance_event (u, w,
                      u->back ? API_JOB_UPDATE_ACTION_INSTANCE_ROLLBACK_FAILED
                              : API_JOB_UPDATE_ACTION_INSTANCE_UPDATE_FAILED,
                      message);
    }
  u->queue_done++;
  stg_update_touch_work (u, idx);
  stg_engine_announce (u->engine, u->job, u->uid);
}

/* TRUE for a rolling restart's work item going forward: the instance keeps
 * its config and is restarted. */
static gboolean
restarting (StgUpdate *u, StgWork *w)
{
  return !u->back && w->from_config != 0 && w->from_config == w->to_config;
}

/* Asks the runtime to move @w to its target (after the commit). */
static void
ask (StgUpdate *u, StgWork *w, gint64 target)
{
  StgEngine *e = u->engine;
  GError *error = NULL;

  w->asked = TRUE;
  if (target == 0)
    {
      stg_engine_queue (e, STG_ACT_KILL, u->job_id, w->instance, 0, u->uid);
      return;
    }
  if (restarting (u, w))
    {
      stg_engine_queue (e, STG_ACT_RESTART, u->job_id, w->instance, target, u->uid);
      return;
    }
  /* The intent is stored with the step, before the runtime hears of it. */
  if (stg_engine_step_ok (e))
    stg_engine_step_check (e,
                           stg_store_set_instance_config (e->store, u->job_id, w->instance, target,
                                                          &error),
                           &error);
  stg_engine_queue (e, STG_ACT_APPLY, u->job_id, w->instance, target, u->uid);
}

/* @what happened, with the runtime's cause (StgTaskObservation.cause: the
 * health check's answer, the exit status, the start error, the last lines
 * of stderr) when it gave one. */
static gchar *
with_cause (const gchar *what, const gchar *cause)
{
  if (cause == NULL || cause[0] == '\0')
    return g_strdup (what);
  return g_strdup_printf ("%s: %s", what, cause);
}

/* Counts a failure of @w; returns TRUE if the instance is now failed. */
static gboolean
count_failure (StgUpdate *u, guint idx, gint n, const gchar *why)
{
  StgWork *w = &g_array_index (u->work, StgWork, idx);

  w->failures += n;
  stg_update_touch_work (u, idx);
  g_debug ("engine: update %s: instance %d failed (%s), %d of %d tolerated", u->uid, w->instance,
           why, w->failures, u->s.max_per_instance_failures);
  if (w->failures > u->s.max_per_instance_failures)
    {
      g_autofree gchar *message = g_strdup_printf ("failed %d time%s; last: %s", w->failures,
                                                   w->failures == 1 ? "" : "s", why);
      finish_work (u, idx, FALSE, message);
      return TRUE;
    }
  return FALSE;
}

/* Arms @w's deadline timer, or counts the missed deadline. Returns TRUE if
 * the instance failed for good. */
static gboolean
check_deadline (StgUpdate *u, guint idx, gint64 target, const gchar *cause)
{
  StgEngine *e = u->engine;
  StgWork *w = &g_array_index (u->work, StgWork, idx);
  gint64 now = stg_clock_now_ms (e->clock);

  if (u->s.max_start_ms <= 0)
    return FALSE;
  gint64 due = w->started_ms + u->s.max_start_ms;
  if (now >= due)
    {
      g_autofree gchar *late = g_strdup_printf ("not healthy within %" G_GINT64_FORMAT " ms",
                                                u->s.max_start_ms);
      g_autofree gchar *why = with_cause (late, cause);
      if (count_failure (u, idx, 1, why))
        return TRUE;
      w->started_ms = now;
      stg_engine_queue (e, STG_ACT_RESTART, u->job_id, w->instance, target, u->uid);
      due = now + u->s.max_start_ms;
    }
  arm_work_timer (u, w, due);
  return FALSE;
}

/* The instance gates of @w's phase: TRUE while they hold the work item
 * (a gate is being tried, or one failed: counted, and tried again or the
 * instance restarted). Before gates that all passed let the runtime be
 * asked; after gates that all passed finish the work. */
static gboolean
gates_hold (StgUpdate *u, guint idx, const StgTaskObservation *obs)
{
  StgEngine *e = u->engine;
  StgWork *w = &g_array_index (u->work, StgWork, idx);
  gint phase = w->gates;

  if (phase != STG_WORK_GATES_BEFORE && phase != STG_WORK_GATES_AFTER)
    return FALSE;
  if (w->gate_verdict == 0)
    {
      stg_work_gates_resume (u, idx);
      return TRUE;
    }
  g_autofree gchar *message = g_strdup (w->gate_message);
  instance_event (u, w,
                  u->back ? API_JOB_UPDATE_ACTION_INSTANCE_ROLLING_BACK
                          : API_JOB_UPDATE_ACTION_INSTANCE_UPDATING,
                  message);
  stg_engine_announce (e, u->job, u->uid);
  if (w->gate_verdict > 0)
    {
      if (stg_work_gates_next (u, idx))
        return TRUE;
      stg_work_gates_stop (w);
      stg_update_touch_work (u, idx);
      if (phase == STG_WORK_GATES_AFTER)
        {
          finish_work (u, idx, TRUE, NULL);
          return TRUE;
        }
      /* Passed before: the change begins now, the runtime told the
       * target whatever it seems to run (as stg_work_start tells it). */
      w->started_ms = stg_clock_now_ms (e->clock);
      w->seen_failures = obs->phase == STG_TASK_ABSENT ? 0 : obs->failures;
      ask (u, w, target_of (u, w));
      return FALSE;
    }
  g_autofree gchar *said = g_strdup (w->gate_said);
  stg_work_gates_stop (w);
  if (count_failure (u, idx, 1, message))
    {
      /* Failed before its change began: the runtime never heard of it. */
      w->unchanged = phase == STG_WORK_GATES_BEFORE;
      g_free (u->gate_cause);
      u->gate_cause = g_steal_pointer (&said);
      stg_update_touch (u);
      return TRUE;
    }
  if (phase == STG_WORK_GATES_BEFORE)
    stg_work_gates_begin (u, idx, STG_WORK_GATES_BEFORE);
  else
    {
      /* As after a failed health check: the instance starts again. */
      w->gates = STG_WORK_GATES_RESTARTED;
      w->started_ms = stg_clock_now_ms (e->clock);
      stg_engine_queue (e, STG_ACT_RESTART, u->job_id, w->instance, target_of (u, w), u->uid);
    }
  return TRUE;
}

/* Looks at in-flight instance @idx and decides: done, failed, ask, or wait. */
void
stg_work_evaluate (StgUpdate *u, guint idx)
{
  StgEngine *e = u->engine;
  StgWork *w = &g_array_index (u->work, StgWork, idx);
  gint64 target = target_of (u, w);
  gint64 now = stg_clock_now_ms (e->clock);
  StgTaskObservation obs = { 0 };

  if (e->runtime == NULL)
    return;
  stg_runtime_observe (e->runtime, u->job_id, w->instance, &obs);

  if (w->gates == STG_WORK_GATES_BEFORE && gates_hold (u, idx, &obs))
    return;

  if (target == 0)
    {
      /* Removing the instance: done once it is gone. */
      if (obs.phase == STG_TASK_ABSENT)
        finish_work (u, idx, TRUE, NULL);
      else if (!w->asked)
        ask (u, w, 0);
      return;
    }

  /* Failures of the slot since we last looked (exits, failed health checks
   * or hooks): count them, and try again unless there were too many. */
  if (obs.phase != STG_TASK_ABSENT && (gint64) obs.failures > w->seen_failures)
    {
      gint n = (gint) ((gint64) obs.failures - w->seen_failures);
      w->seen_failures = obs.failures;
      stg_work_gates_stop (w); /* after gates, if any, are tried again once healthy */
      g_autofree gchar *why = with_cause (obs.config_id == target
                                              ? "the new configuration did not stay up"
                                              : "the change did not take",
                                          obs.cause);
      if (count_failure (u, idx, n, why))
        return;
      w->started_ms = now;
      ask (u, w, target);
      check_deadline (u, idx, target, NULL);
      return;
    }

  /* A restart is done only with a run that became healthy after it began. */
  if (obs.phase == STG_TASK_RUNNING && obs.config_id == target &&
      ((!restarting (u, w) && w->gates != STG_WORK_GATES_RESTARTED) ||
       obs.healthy_since_ms >= w->started_ms))
    {
      gint64 stable_at = obs.healthy_since_ms + u->s.watch_ms;
      if (now < stable_at)
        arm_work_timer (u, w, stable_at);
      else if (w->gates == STG_WORK_GATES_AFTER)
        gates_hold (u, idx, &obs);
      else if (!stg_work_gates_begin (u, idx, STG_WORK_GATES_AFTER))
        finish_work (u, idx, TRUE, NULL);
      return;
    }

  if (!w->asked)
    ask (u, w, target);
  else if (obs.config_id == target && obs.phase == STG_TASK_FINISHED)
    {
      /* It ran and ended by itself without counting as a failed run: for
       * an update that wants it running, that is a failure all the same. */
      g_autofree gchar *why = with_cause ("exited", obs.cause);
      if (count_failure (u, idx, 1, why))
        return;
      w->started_ms = now;
      ask (u, w, target);
    }
  check_deadline (u, idx, target, obs.cause);
}

/* Begins work on work item @idx. The runtime is always told the target,
 * even when the slot seems to be there already: a rollback must override a
 * forward change the runtime may still be carrying out. */
void
stg_work_start (StgUpdate *u, guint idx)
{
  StgEngine *e = u->engine;
  StgWork *w = &g_array_index (u->work, StgWork, idx);
  StgTaskObservation obs = { 0 };

  if (e->runtime != NULL)
    stg_runtime_observe (e->runtime, u->job_id, w->instance, &obs);
  stg_work_set_state (u, w, u->back ? STG_WORK_ROLLING_BACK : STG_WORK_UPDATING);
  w->failures = 0;
  w->asked = FALSE;
  w->unchanged = FALSE;
  w->started_ms = stg_clock_now_ms (e->clock);
  w->batch = (gint) u->batch_index;
  w->seen_failures = obs.phase == STG_TASK_ABSENT ? 0 : obs.failures;
  g_hash_table_add (u->active, GUINT_TO_POINTER (idx));
  stg_update_touch_work (u, idx);
  instance_event (u, w,
                  u->back ? API_JOB_UPDATE_ACTION_INSTANCE_ROLLING_BACK
                          : API_JOB_UPDATE_ACTION_INSTANCE_UPDATING,
                  NULL);
  stg_engine_announce (e, u->job, u->uid);
  if (!stg_work_gates_begin (u, idx, STG_WORK_GATES_BEFORE))
    ask (u, w, target_of (u, w));
  stg_work_evaluate (u, idx);
}
