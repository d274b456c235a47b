/* update.c: the update state machine, its pump, and its batch gates.
 * One instance's work is work.c's.
 *
 * An update's status (JobUpdateStatus, Aurora's table) moves only through
 * stg_update_transition, and only along these arrows; each names the
 * function that takes it [file when not this one]:
 *
 *   (start) --[stg_update_start, control.c]--> ROLLING_FORWARD, or
 *           ROLL_FORWARD_AWAITING_PULSE when coordinated, or ROLLED_FORWARD
 *           at once when nothing changes
 *
 *   ROLLING_FORWARD --[stg_engine_pause_update; batch_done: autopause]--> ROLL_FORWARD_PAUSED
 *   ROLLING_FORWARD --[stg_update_pump: pulse expired]--> ROLL_FORWARD_AWAITING_PULSE
 *   ROLLING_FORWARD --[finish: work done, surge instances gone]--> ROLLED_FORWARD
 *   ROLLING_FORWARD --[fail_or_roll_back (check_failures, past_deadline, a failed batch
 *                     gate): no rollback]--> FAILED
 *   ROLLING_FORWARD --[fail_or_roll_back; stg_engine_rollback_update]
 *                     (stg_update_start_rollback)--> ROLLING_BACK
 *   ROLL_FORWARD_PAUSED --[stg_engine_resume_update]--> ROLLING_FORWARD
 *                                                  or ROLL_FORWARD_AWAITING_PULSE
 *   ROLL_FORWARD_AWAITING_PULSE --[stg_engine_pulse_update]--> ROLLING_FORWARD
 *   ROLL_FORWARD_AWAITING_PULSE --[stg_engine_pause_update]--> ROLL_FORWARD_PAUSED
 *   ROLL_FORWARD_PAUSED, ROLL_FORWARD_AWAITING_PULSE
 *                     --[stg_engine_rollback_update]--> ROLLING_BACK
 *   ROLLING_BACK --[stg_engine_pause_update]--> ROLL_BACK_PAUSED
 *   ROLLING_BACK --[stg_update_pump: pulse expired]--> ROLL_BACK_AWAITING_PULSE
 *   ROLLING_BACK --[finish: work done, surge instances gone]--> ROLLED_BACK
 *   ROLLING_BACK --[check_failures]--> FAILED
 *   ROLL_BACK_PAUSED --[stg_engine_resume_update]--> ROLLING_BACK or ROLL_BACK_AWAITING_PULSE
 *   ROLL_BACK_AWAITING_PULSE --[stg_engine_pulse_update]--> ROLLING_BACK
 *   ROLL_BACK_AWAITING_PULSE --[stg_engine_pause_update]--> ROLL_BACK_PAUSED
 *   any active status --[stg_engine_abort_update]--> ABORTED
 *   (a damaged record) --[give_up, recover.c]--> ERROR
 * Any move to a terminal status removes the update's surge instances
 * (surge.c); FAILED and ABORTED leave them to the engine as leftovers.
 *
 * What holds in each status (stg_engine_check_invariants checks 1-4):
 *  1. Active statuses: the update is in engine->updates and by_job maps its
 *     job to it (one active update per job). Terminal statuses (ROLLED_*,
 *     ABORTED, FAILED, ERROR): it is in neither; the store has it.
 *  2. active holds exactly the work items in UPDATING (forward) or
 *     ROLLING_BACK (back); in a batch strategy they all lie in
 *     order[batch_start..batch_end).
 *  3. order[0..cursor) have been started in this direction; none of
 *     order[cursor..] has.
 *  4. n_done + n_failed + |active| == cursor.
 *  5. ROLLING_FORWARD, ROLLING_BACK: the only statuses that start or finish
 *     work; back is FALSE in the first and TRUE in the second.
 *  6. *_PAUSED, *_AWAITING_PULSE: nothing starts or finishes; news about
 *     in-flight instances is ignored until stg_update_evaluate_all looks
 *     at them all again on resume or pulse; back tells which direction
 *     they return to. AWAITING_PULSE: blockIfNoPulsesAfterMs is set and
 *     the last pulse is older than it.
 *
 * Steps (step.c) bracket every change here. Main-loop thread only.
 */
#include "config.h"

#include <json-glib/json-glib.h>

#include "common/enums.h"
#include "engine/engine_private.h"
#include "engine/gate_private.h"
#include "engine/notice_private.h"
#include "engine/settings_private.h"
#include "engine/sla_private.h"
#include "engine/step_private.h"
#include "engine/surge_private.h"
#include "engine/update_private.h"
#include "engine/work_state.h"

#define PULSE_TIMEOUT_MESSAGE "Pulses from the coordinator have timed out"

/* ---- the transition table --------------------------------------------------- */

gboolean
stg_update_transition_allowed (gint from, gint to)
{
#define S(x) API_JOB_UPDATE_STATUS_##x
  switch (from)
    {
    case S (ROLLING_FORWARD):
      return to == S (ROLLING_BACK) || to == S (ROLL_FORWARD_PAUSED) ||
             to == S (ROLL_FORWARD_AWAITING_PULSE) || to == S (ROLLED_FORWARD) ||
             to == S (ABORTED) || to == S (FAILED) || to == S (ERROR);
    case S (ROLLING_BACK):
      return to == S (ROLL_BACK_PAUSED) || to == S (ROLL_BACK_AWAITING_PULSE) ||
             to == S (ROLLED_BACK) || to == S (ABORTED) || to == S (ERROR) || to == S (FAILED);
    case S (ROLL_FORWARD_PAUSED):
      return to == S (ROLLING_BACK) || to == S (ROLLING_FORWARD) ||
             to == S (ROLL_FORWARD_AWAITING_PULSE) || to == S (ABORTED) || to == S (ERROR);
    case S (ROLL_BACK_PAUSED):
      return to == S (ROLLING_BACK) || to == S (ROLL_BACK_AWAITING_PULSE) || to == S (ABORTED) ||
             to == S (ERROR);
    case S (ROLL_FORWARD_AWAITING_PULSE):
      return to == S (ROLLING_BACK) || to == S (ROLLING_FORWARD) ||
             to == S (ROLL_FORWARD_PAUSED) || to == S (ABORTED) || to == S (ERROR);
    case S (ROLL_BACK_AWAITING_PULSE):
      return to == S (ROLLING_BACK) || to == S (ROLL_BACK_PAUSED) || to == S (ABORTED) ||
             to == S (ERROR);
    default:
      return FALSE;
    }
#undef S
}

static gboolean
running (StgUpdate *u)
{
  return u->status == API_JOB_UPDATE_STATUS_ROLLING_FORWARD ||
         u->status == API_JOB_UPDATE_STATUS_ROLLING_BACK;
}

/* ---- update objects ------------------------------------------------------------ */

StgUpdate *
stg_update_new (StgEngine *engine)
{
  StgUpdate *u = g_new0 (StgUpdate, 1);

  u->engine = engine;
  u->work = g_array_new (FALSE, TRUE, sizeof (StgWork));
  u->position = g_hash_table_new (NULL, NULL);
  u->order = g_array_new (FALSE, FALSE, sizeof (guint));
  u->active = g_hash_table_new (NULL, NULL);
  u->dirty_work = g_hash_table_new (NULL, NULL);
  u->surge.list = g_array_new (FALSE, TRUE, sizeof (StgSurge));
  u->predicted_ms = -1;
  return u;
}

static void
cancel_timers (StgUpdate *u)
{
  StgClock *clock = u->engine->clock;

  for (guint i = 0; i < u->work->len; i++)
    {
      StgWork *w = &g_array_index (u->work, StgWork, i);
      stg_clock_cancel_timer (clock, w->timer);
      w->timer = 0;
      stg_work_gates_stop (w);
    }
  stg_clock_cancel_timer (clock, u->pulse_timer);
  stg_clock_cancel_timer (clock, u->gate_timer);
  stg_clock_cancel_timer (clock, u->surge.timer);
  stg_clock_cancel_timer (clock, u->deadline_timer);
  u->pulse_timer = u->gate_timer = u->surge.timer = u->deadline_timer = 0;
  g_clear_pointer (&u->gate_run, stg_gate_run_free);
  stg_update_sla_clear (u);
}

void
stg_update_free (StgUpdate *u)
{
  if (u == NULL)
    return;
  cancel_timers (u);
  g_free (u->uid);
  g_clear_object (&u->job);
  g_free (u->user);
  g_free (u->last_failure);
  g_free (u->rollback_cause);
  g_free (u->gate_cause);
  g_clear_pointer (&u->gated, g_array_unref);
  g_clear_pointer (&u->unchanged, g_array_unref);
  stg_settings_clear (&u->s);
  g_array_unref (u->work);
  g_hash_table_unref (u->position);
  g_array_unref (u->order);
  g_hash_table_unref (u->active);
  g_hash_table_unref (u->dirty_work);
  g_array_unref (u->surge.list);
  g_clear_pointer (&u->healthy, g_hash_table_unref);
  g_free (u);
}

void
stg_engine_add_update (StgEngine *engine, StgUpdate *u)
{
  g_hash_table_insert (engine->updates, u->uid, u);
  g_hash_table_insert (engine->by_job, g_memdup2 (&u->job_id, sizeof u->job_id), u);
}

StgUpdate *
stg_engine_update_for_job (StgEngine *engine, gint64 job_id)
{
  return g_hash_table_lookup (engine->by_job, &job_id);
}

/* Removes a terminal update from memory; its rows stay in the store. */
static void
retire (StgUpdate *u)
{
  StgEngine *e = u->engine;

  cancel_timers (u);
  g_hash_table_remove (e->by_job, &u->job_id);
  g_hash_table_remove (e->updates, u->uid);
  /* The step writes touched updates by looking them up: write this one's
   * final rows now, inside the step's transaction. */
  GError *error = NULL;
  if (e->step_depth > 0 && stg_engine_step_ok (e))
    stg_engine_step_check (e, stg_update_write (u, &error), &error);
  stg_update_free (u);
}

/* ---- events ------------------------------------------------------------------------ */

void
stg_update_transition (StgUpdate *u, gint to, const gchar *user, const gchar *message)
{
  StgEngine *e = u->engine;
  GError *error = NULL;
  gint64 now = stg_clock_now_ms (e->clock);
  gint from = u->status;

  if (!stg_engine_transition_ok (stg_update_transition_allowed (u->status, to), "update", u->uid,
                                 stg_update_status_name (u->status), stg_update_status_name (to)))
    return;
  g_debug ("engine: update %s: %s -> %s (%s)", u->uid, stg_update_status_name (u->status),
           stg_update_status_name (to), message ? message : "");
  u->status = to;
  stg_update_touch (u);
  if (stg_engine_step_ok (e))
    stg_engine_step_check (e,
                           stg_store_set_update_status (e->store, u->id, to, now, &error) &&
                               stg_store_add_update_event (e->store, u->id, to, now, user, message,
                                                           &error),
                           &error);
  stg_engine_announce (e, u->job, u->uid);
  stg_engine_notice_update (e, u->uid, u->job, to, from, user, message);
  if (!running (u))
    {
      g_clear_pointer (&u->gate_run, stg_gate_run_free); /* tried again when it runs again */
      stg_update_sla_clear (u);                          /* checked again too */
    }
  if (!stg_update_status_is_active (to))
    {
      stg_surge_release (u);
      retire (u);
    }
}

/* ---- pulses -------------------------------------------------------------------- */

gboolean
stg_update_pulse_expired (StgUpdate *u)
{
  if (u->s.pulse_ms <= 0)
    return FALSE;
  if (u->last_pulse_ms <= 0)
    return TRUE;
  return stg_clock_now_ms (u->engine->clock) >= u->last_pulse_ms + u->s.pulse_ms;
}

static void
on_pulse_timer (gpointer data)
{
  StgUpdate *u = data;
  StgEngine *e = u->engine;

  u->pulse_timer = 0;
  stg_engine_step_begin (e);
  stg_update_pump (u);
  stg_engine_step_end (e, NULL);
}

void
stg_update_arm_pulse (StgUpdate *u)
{
  StgClock *clock = u->engine->clock;

  stg_clock_cancel_timer (clock, u->pulse_timer);
  u->pulse_timer = 0;
  if (u->s.pulse_ms <= 0 || u->last_pulse_ms <= 0 || !running (u))
    return;
  u->pulse_timer = stg_clock_add_timer (clock, u->last_pulse_ms + u->s.pulse_ms -
                                                 stg_clock_now_ms (clock),
                                        on_pulse_timer, u);
}

/* ---- the pump ---------------------------------------------------------------------- */

static void
on_gate_timer (gpointer data)
{
  StgUpdate *u = data;
  StgEngine *e = u->engine;

  u->gate_timer = 0;
  stg_engine_step_begin (e);
  stg_update_pump (u);
  stg_engine_step_end (e, NULL);
}

/* The update cannot go on as it is: rolling forward, it rolls back when
 * its settings say so; otherwise it fails. */
static void
fail_or_roll_back (StgUpdate *u, const gchar *why)
{
  if (!u->back && u->s.rollback_on_failure)
    stg_update_start_rollback (u, NULL, why);
  else
    stg_update_transition (u, API_JOB_UPDATE_STATUS_FAILED, NULL, why);
}

/* TRUE when the failure threshold is crossed (and the update moved on).
 * Failed surge instances count as failed instances. A rollback that fails
 * also says why it began: that is what went wrong in the first place. */
static gboolean
check_failures (StgUpdate *u)
{
  guint failed = u->n_failed + u->surge.failed;

  if (failed <= (guint) u->s.max_failed_instances)
    {
      g_clear_pointer (&u->gate_cause, g_free); /* tolerated: no update's cause */
      return FALSE;
    }
  g_autofree gchar *why = g_strdup_printf ("failure threshold reached: %u instance%s failed%s%s",
                                           failed, failed == 1 ? "" : "s",
                                           u->last_failure ? "; " : "",
                                           u->last_failure ? u->last_failure : "");
  if (u->back && u->rollback_cause != NULL)
    {
      g_autofree gchar *first = g_steal_pointer (&why);
      why = g_strdup_printf ("%s; the rollback's cause: %s", first, u->rollback_cause);
    }
  fail_or_roll_back (u, why);
  return TRUE;
}

static void
on_deadline_timer (gpointer data)
{
  StgUpdate *u = data;
  StgEngine *e = u->engine;

  u->deadline_timer = 0;
  stg_engine_step_begin (e);
  stg_update_pump (u);
  stg_engine_step_end (e, NULL);
}

/* TRUE when an update rolling forward is past updateDeadlineMs (and has
 * failed, or rolls back); otherwise the timer is armed for it. The
 * deadline does not bound a rollback. */
static gboolean
past_deadline (StgUpdate *u)
{
  StgClock *clock = u->engine->clock;

  if (u->back || u->s.deadline_ms <= 0)
    return FALSE;
  gint64 now = stg_clock_now_ms (clock);
  gint64 due = u->created_ms + u->s.deadline_ms;
  if (now < due)
    {
      if (u->deadline_timer == 0)
        u->deadline_timer = stg_clock_add_timer (clock, due - now, on_deadline_timer, u);
      return FALSE;
    }
  g_autofree gchar *why =
      g_strdup_printf ("update deadline passed: not rolled forward within %" G_GINT64_FORMAT
                       " s of its start",
                       u->s.deadline_ms / 1000);
  fail_or_roll_back (u, why);
  return TRUE;
}

static gboolean
gate_closed (StgUpdate *u)
{
  gint64 now = stg_clock_now_ms (u->engine->clock);

  if (u->gate_ms <= now)
    return FALSE;
  if (u->gate_timer == 0)
    u->gate_timer = stg_clock_add_timer (u->engine->clock, u->gate_ms - now, on_gate_timer, u);
  return TRUE;
}

/* One attempt of the batch gate being tried: an update event; the last
 * attempt passes the gate (the next one, or the next batch, follows) or
 * fails the update, which rolls back when its settings say so. */
static void
on_gate_result (gpointer data, guint attempt, gboolean passed, gboolean last, const gchar *message)
{
  StgUpdate *u = data;
  StgEngine *e = u->engine;
  const ApiRolloutGate *g = u->s.gates->pdata[u->gates_passed];
  guint allowed = stg_gate_attempts_allowed (g);
  g_autofree gchar *of = allowed > 0 ? g_strdup_printf (" of %u", allowed) : g_strdup ("");
  g_autofree gchar *event = g_strdup_printf ("gate '%s' after batch %u %s (attempt %u%s): %s",
                                             g->name, u->batch_index, passed ? "passed" : "failed",
                                             attempt, of, message);
  g_autofree gchar *why = g_strdup_printf ("gate '%s' failed: %s", g->name, message);

  stg_engine_step_begin (e);
  if (last)
    g_clear_pointer (&u->gate_run, stg_gate_run_free);
  stg_update_note_event (u, event);
  stg_update_touch (u);
  if (last && passed)
    {
      u->gates_passed++;
      u->gating = u->gates_passed < u->s.gates->len;
      stg_update_pump (u);
    }
  else if (last)
    {
      u->gating = FALSE;
      fail_or_roll_back (u, why);
    }
  stg_engine_step_end (e, NULL);
}

/* TRUE while the batch gates hold the next batch back; starts trying the
 * next gate when none is being tried. */
static gboolean
gates_closed (StgUpdate *u)
{
  if (!u->gating)
    return FALSE;
  if (u->gate_run == NULL)
    {
      g_auto (GStrv) env = stg_update_gates_environ (u);
      u->gate_run = stg_gate_run_start (u->engine, u->s.gates->pdata[u->gates_passed], u->job->role,
                                        (const gchar *const *) env, on_gate_result, u);
    }
  return TRUE;
}

/* A batch (or, for a queue, a group of batch_size completions) is done. */
static gboolean
batch_done (StgUpdate *u)
{
  u->batch_size = stg_strategy_next_size (&u->s, u->batch_index, u->batch_size, u->batch_failed);
  u->batch_index++;
  u->batch_failed = FALSE;
  u->queue_done = 0;
  stg_update_touch (u);
  if (u->s.pause_between_ms > 0)
    u->gate_ms = stg_clock_now_ms (u->engine->clock) + u->s.pause_between_ms;
  if (!u->back && u->s.gates != NULL && u->cursor < u->order->len)
    {
      u->gating = TRUE; /* the next batch waits for the batch gates */
      u->gates_passed = 0;
    }
  if (u->s.autopause && !u->back && u->cursor < u->order->len)
    {
      g_autofree gchar *why = g_strdup_printf ("paused after batch %u", u->batch_index);
      stg_update_transition (u, API_JOB_UPDATE_STATUS_ROLL_FORWARD_PAUSED, NULL, why);
      return FALSE;
    }
  return TRUE;
}

/* A rollback's end says what it took back and why it began. */
static void
finish (StgUpdate *u)
{
  if (u->back)
    {
      const gchar *cause = u->rollback_cause;
      g_autofree gchar *why =
          g_strdup_printf ("%s%s%s",
                           u->order->len > 0
                               ? "all changed instances have their previous configuration again"
                               : "no instance had changed",
                           cause ? "; the rollback's cause: " : "", cause ? cause : "");
      stg_update_transition (u, API_JOB_UPDATE_STATUS_ROLLED_BACK, NULL, why);
    }
  else
    stg_update_transition (u, API_JOB_UPDATE_STATUS_ROLLED_FORWARD, NULL, NULL);
}

void
stg_update_pump (StgUpdate *u)
{
  if (!running (u))
    return;
  if (stg_update_pulse_expired (u))
    {
      stg_update_transition (u, u->back ? API_JOB_UPDATE_STATUS_ROLL_BACK_AWAITING_PULSE
                                         : API_JOB_UPDATE_STATUS_ROLL_FORWARD_AWAITING_PULSE,
                             NULL, PULSE_TIMEOUT_MESSAGE);
      return;
    }
  if (check_failures (u) || past_deadline (u))
    return;
  stg_surge_pump (u);

  if (u->s.kind == STG_STRATEGY_QUEUE)
    {
      while (u->queue_done >= u->batch_size)
        if (!batch_done (u))
          return;
      while (u->cursor < u->order->len && g_hash_table_size (u->active) < u->batch_size &&
             !gate_closed (u))
        {
          guint idx = g_array_index (u->order, guint, u->cursor);
          if (!stg_update_may_start (u, idx))
            break;
          u->cursor++;
          stg_update_touch (u);
          stg_work_start (u, idx);
          if (!running (u) || check_failures (u))
            return;
        }
    }
  else
    {
      for (;;)
        {
          /* Start what the current batch still has to start. */
          while (u->cursor < u->batch_end)
            {
              guint idx = g_array_index (u->order, guint, u->cursor);
              if (!stg_update_may_start (u, idx))
                break;
              u->cursor++;
              stg_update_touch (u);
              stg_work_start (u, idx);
              if (!running (u) || check_failures (u))
                return;
            }
          if (u->cursor < u->batch_end || g_hash_table_size (u->active) > 0)
            break;                        /* the batch is still under way */
          if (u->batch_end > u->batch_start)
            {
              u->batch_start = u->batch_end;   /* that batch is complete */
              if (!batch_done (u))
                return;
            }
          if (u->cursor >= u->order->len || gate_closed (u) || gates_closed (u))
            break;
          u->batch_end = MIN (u->order->len, u->cursor + u->batch_size);
          stg_update_touch (u);
        }
    }

  /* Done once the direction's work is, and its surge instances are gone. */
  if (running (u) && u->cursor >= u->order->len && g_hash_table_size (u->active) == 0 &&
      stg_surge_pump (u))
    finish (u);
}

void
stg_update_evaluate_all (StgUpdate *u)
{
  g_autoptr (GList) in_flight = g_hash_table_get_keys (u->active);

  for (GList *l = in_flight; l != NULL && running (u); l = l->next)
    if (g_hash_table_contains (u->active, l->data))
      stg_work_evaluate (u, GPOINTER_TO_UINT (l->data));
  if (running (u))
    stg_surge_evaluate_all (u);
  stg_update_pump (u);
}

void
stg_update_on_instance (StgUpdate *u, gint32 instance)
{
  StgEngine *e = u->engine;

  stg_update_note_health (u, instance);
  if (!running (u))
    return;
  if (stg_surge_on_instance (u, instance))
    {
      stg_update_pump (u);
      return;
    }
  gpointer pos = g_hash_table_lookup (u->position, GINT_TO_POINTER (instance));
  if (pos != NULL && g_hash_table_contains (u->active, GUINT_TO_POINTER (GPOINTER_TO_UINT (pos) - 1)))
    stg_work_evaluate (u, GPOINTER_TO_UINT (pos) - 1);
  if (g_hash_table_lookup (e->updates, u->uid) == u)
    stg_update_pump (u);
}

/* A runtime call that failed counts as a failure of that instance. */
void
stg_update_act_failed (StgEngine *engine, const StgAct *a, const GError *error)
{
  StgUpdate *u = a->uid ? g_hash_table_lookup (engine->updates, a->uid) : NULL;

  g_warning ("engine: the runtime refused to act on instance %d: %s", a->instance, error->message);
  if (u == NULL)
    return;
  gpointer pos = g_hash_table_lookup (u->position, GINT_TO_POINTER (a->instance));
  if (pos == NULL)
    return;
  guint idx = GPOINTER_TO_UINT (pos) - 1;
  if (!g_hash_table_contains (u->active, GUINT_TO_POINTER (idx)))
    return;
  StgWork *w = &g_array_index (u->work, StgWork, idx);
  stg_engine_step_begin (engine);
  w->failures++;
  w->asked = FALSE;
  g_free (u->last_failure);
  u->last_failure = g_strdup_printf ("instance %d: %s", w->instance, error->message);
  stg_update_touch_work (u, idx);
  stg_work_evaluate (u, idx);
  stg_update_pump (u);
  stg_engine_step_end (engine, NULL);
}

/* ---- direction --------------------------------------------------------------------- */

static gint
compare_desc (gconstpointer a, gconstpointer b, gpointer data)
{
  GArray *work = data;
  gint32 x = g_array_index (work, StgWork, *(const guint *) a).instance;
  gint32 y = g_array_index (work, StgWork, *(const guint *) b).instance;
  return (y > x) - (y < x);
}

void
stg_update_rebuild_order (StgUpdate *u)
{
  g_array_set_size (u->order, 0);
  for (guint i = 0; i < u->work->len; i++)
    {
      StgWork *w = &g_array_index (u->work, StgWork, i);
      if (!u->back || w->state >= STG_WORK_ROLLBACK_PENDING)
        g_array_append_val (u->order, i);
    }
  if (u->back)
    g_array_sort_with_data (u->order, compare_desc, u->work);
}

void
stg_update_start_rollback (StgUpdate *u, const gchar *user, const gchar *message)
{
  for (guint i = 0; i < u->work->len; i++)
    {
      StgWork *w = &g_array_index (u->work, StgWork, i);
      gboolean gated = w->gates == STG_WORK_GATES_BEFORE; /* the runtime not asked yet */
      stg_clock_cancel_timer (u->engine->clock, w->timer);
      w->timer = 0;
      stg_work_gates_stop (w);
      if (w->state == STG_WORK_PENDING || w->unchanged)
        continue;                          /* never touched: nothing to undo */
      if (gated)
        {
          stg_work_set_state (u, w, STG_WORK_PENDING); /* as if never started */
          stg_update_touch_work (u, i);
          continue;
        }
      stg_work_set_state (u, w, STG_WORK_ROLLBACK_PENDING);
      w->failures = 0;
      w->asked = FALSE;
      stg_update_touch_work (u, i);
    }
  g_hash_table_remove_all (u->active);
  u->back = TRUE;
  stg_update_rebuild_order (u);
  u->cursor = u->batch_start = u->batch_end = 0;
  u->batch_index = 0;
  u->batch_size = stg_strategy_first_size (&u->s);
  u->queue_done = 0;
  u->batch_failed = FALSE;
  u->n_done = u->n_failed = 0;
  u->surge.failed = 0;
  u->gate_ms = 0;
  u->gating = FALSE;
  u->gates_passed = 0;
  g_clear_pointer (&u->gate_run, stg_gate_run_free);
  stg_update_sla_clear (u);
  g_free (u->rollback_cause);
  if (user == NULL && u->gate_cause != NULL)
    u->rollback_cause = g_steal_pointer (&u->gate_cause);
  else if (user == NULL)
    u->rollback_cause = g_strdup (message);
  else if (message != NULL && message[0] != '\0')
    u->rollback_cause = g_strdup_printf ("asked by %s: %s", user, message);
  else
    u->rollback_cause = g_strdup_printf ("asked by %s", user);
  stg_update_touch (u);
  stg_update_transition (u, API_JOB_UPDATE_STATUS_ROLLING_BACK, user, message);
  stg_update_arm_pulse (u);
  stg_update_pump (u);
}
