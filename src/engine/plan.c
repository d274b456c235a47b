/* plan.c: rollout plans: several job updates in an order, with gates;
 * the pump that moves a plan on, gate results, reloading and recovery.
 *
 * A plan is a DAG of stages (each names only earlier stages in dependsOn),
 * each stage one job update. Its stored state (store/plans.c) is the whole
 * truth; an active plan is also held in memory as a StgPlan, and moved on
 * by its pump, which runs from a timer (never inside another step) whenever
 * something it waits on changed: one of its jobs or updates (an engine
 * watcher), a gate's result, or a call.
 *
 * A stage, and the function behind each arrow (stg_stage_* are
 * plan_stage.c's, stg_engine_* plan_calls.c's, the others this file's):
 *
 *   PENDING --[stg_stage_advance: dependencies DONE; nothing would change]--> DONE
 *   PENDING --[stg_stage_advance]--> AWAITING_APPROVAL (requireApproval, not
 *             approved yet) | WAITING_FOR_GATE (before gates) | stg_stage_start
 *   AWAITING_APPROVAL --[stg_engine_approve_stage, stg_stage_advance]-->
 *             WAITING_FOR_GATE | stg_stage_start
 *   WAITING_FOR_GATE (before) --[on_gate: all passed, stg_stage_advance]--> stg_stage_start
 *   WAITING_FOR_GATE (before) --[on_gate: one failed]--> FAILED (nothing changed)
 *   stg_stage_start --[nothing would change]--> DONE
 *   stg_stage_start --[the update is started]--> ROLLING_FORWARD
 *   stg_stage_start --[its update cannot start: start_refused]--> FAILED
 *   ROLLING_FORWARD --[stg_stage_watch: ROLLED_FORWARD]--> WAITING_FOR_GATE (after) | DONE
 *   ROLLING_FORWARD --[stg_stage_watch: any other end]--> FAILED
 *   WAITING_FOR_GATE (after) --[on_gate: all passed]--> DONE
 *   WAITING_FOR_GATE (after) --[on_gate: one failed]--> FAILED, roll_back set
 *   DONE, FAILED, ABORTED with an update --[stg_stage_start_back]--> ROLLING_BACK
 *             | ROLLED_BACK (nothing to undo)
 *   DONE, FAILED, ABORTED --[start_refused: it cannot go back]--> FAILED
 *   ROLLING_BACK --[stg_stage_watch: the rollback update ROLLED_FORWARD; the
 *             job removed]--> ROLLED_BACK, else FAILED
 *   PENDING, AWAITING_APPROVAL, WAITING_FOR_GATE (before)
 *             --[look_at: the plan stops; stg_engine_abort_plan]--> ABORTED
 *   ROLLING_FORWARD, ROLLING_BACK, WAITING_FOR_GATE (after)
 *             --[stg_engine_abort_plan]--> ABORTED
 *
 * The plan, and the function behind each arrow:
 *
 *   PENDING, WAITING_FOR_GATE, AWAITING_APPROVAL, ROLLING_FORWARD (forward)
 *             --[decide: what its stages do]--> another forward status
 *   forward --[decide: every stage DONE]--> DONE
 *   forward --[plan_finish: it stopped, nothing goes back]--> FAILED
 *   forward, PAUSED --[plan_stop (plan_state.c): a stage failed, rollbackOnFailure;
 *             stg_engine_rollback_plan]--> ROLLING_BACK
 *   forward, ROLLING_BACK --[stg_engine_pause_plan]--> PAUSED
 *   PAUSED --[stg_engine_resume_plan]--> forward, or ROLLING_BACK
 *   ROLLING_BACK --[plan_finish: nothing left to take back]--> ROLLED_BACK,
 *             or FAILED when a stage did not go back
 *   any but DONE, FAILED, ROLLED_BACK, ABORTED --[stg_engine_abort_plan]--> ABORTED
 *   DONE, FAILED, ABORTED --[stg_engine_rollback_plan]--> ROLLING_BACK
 *
 * stg_plan_set and stg_stage_set (plan_state.c) refuse any other arrow:
 * the tables there hold these two drawings.
 *
 * What holds of a plan in memory (stg_plans_check_invariants):
 *  1. It is in engine->plans under its uid.
 *  2. A stage ROLLING_FORWARD names its update; one ROLLING_BACK names
 *     the update that takes it back ("" when it removes its job).
 *  3. A stage WAITING_FOR_GATE has passed at most the gates its phase has
 *     (all of them: the pump moves it on next).
 *
 * While it moves forward the plan's status says what its stages do
 * (ROLLING_FORWARD while a stage's update runs, else WAITING_FOR_GATE or
 * AWAITING_APPROVAL); DONE when every stage is. A failed stage makes it
 * stop (stopping: no stage starts; those waiting to start are ABORTED) and,
 * with rollbackOnFailure, go back (ROLLING_BACK). Once nothing runs, the
 * stages that changed their jobs (and, always, one whose after-gate failed)
 * go back to their jobs' configurations from before the plan, each only
 * after every stage that depends on it, each with an update of its own.
 * Then ROLLED_BACK, or FAILED when it did not go back or a rollback
 * failed. PAUSED holds everything (the stages' updates paused, no gate
 * tried); ABORTED stops at once and undoes nothing; a plan rolled back by
 * hand goes back as after a failure, also after it ended.
 *
 * Gates are tried by gate.c; a passed gate is stored at once (gates_passed),
 * so a restarted staggerd never tries it again. The plan's records and
 * their writes are plan_state.c's, what a stage does to its job
 * plan_stage.c's, the calls plan_calls.c's. Calls those, gate.c and
 * step.c. Main-loop thread only.
 */
#include "config.h"

#include "common/enums.h"
#include "common/jobkey.h"
#include "engine/gate_private.h"
#include "engine/plan_private.h"
#include "store/plans.h"

static gboolean plan_reload (StgEngine *e, const gchar *uid);

/* Ends the plan's step; a step that was not stored puts the plan back to
 * what the store has (and @p is gone). Returns FALSE then. */
gboolean
stg_plan_end_step (StgPlan *p)
{
  if (stg_plan_commit (p))
    return TRUE;
  g_autofree gchar *uid = g_strdup (p->row.uid);
  plan_reload (p->engine, uid);
  return FALSE;
}

static void
on_gate (gpointer data, guint attempt, gboolean passed, gboolean last, const gchar *message)
{
  StgStage *s = data;
  StgPlan *p = s->plan;
  GPtrArray *gates = stg_stage_gates (s);
  const ApiRolloutGate *g = gates->pdata[s->row.gates_passed];
  g_autofree gchar *gate = g_strdup (g->name);

  stg_plan_step (p);
  if (last)
    g_clear_pointer (&s->gate_run, stg_gate_run_free);
  stg_stage_gate_result (s, gate, attempt, passed, message);
  if (last && passed)
    {
      s->row.gates_passed++;
      if ((guint) s->row.gates_passed < gates->len)
        {
          g_autofree gchar *why = stg_stage_waiting_reason (s);
          stg_stage_set (s, S (WAITING_FOR_GATE), NULL, NULL, why);
        }
      else if (s->row.update_uid != NULL)
        stg_stage_set (s, S (DONE), NULL, NULL, "its update and its gates passed");
      else
        stg_stage_save (s); /* the pump starts its update */
    }
  else if (last)
    {
      g_autofree gchar *why = g_strdup_printf ("gate '%s' failed: %s", gate, message);
      if (s->row.update_uid != NULL)
        s->row.roll_back = TRUE; /* its job changed: it goes back in any case */
      stg_stage_failed (s, STG_REASON_GATE_FAILED, why);
    }
  if (stg_plan_end_step (p))
    stg_plan_kick (p);
}

static gboolean
deps_done (StgStage *s)
{
  for (guint i = 0; i < s->deps->len; i++)
    if (stg_plan_stage (s->plan, g_array_index (s->deps, guint, i))->row.status != S (DONE))
      return FALSE;
  return TRUE;
}

/* Changed its job in the plan and is to go back now. */
static gboolean
to_roll_back (StgStage *s)
{
  gint st = s->row.status;

  return s->row.update_uid != NULL && !s->row.rolled &&
         (st == S (DONE) || st == S (FAILED) || st == S (ABORTED)) &&
         (s->plan->row.back || s->row.roll_back);
}

/* TRUE when a stage that depends on @s, directly or not, still has to go
 * back or is going back. */
static gboolean
dependents_pending (StgStage *s)
{
  StgPlan *p = s->plan;

  for (guint i = s->idx + 1; i < p->stages->len; i++)
    {
      StgStage *d = stg_plan_stage (p, i);
      gboolean depends = FALSE;
      for (guint k = 0; k < d->deps->len && !depends; k++)
        depends = g_array_index (d->deps, guint, k) == s->idx;
      if (!depends)
        continue;
      if (to_roll_back (d) || d->want_back || d->row.status == S (ROLLING_BACK) ||
          dependents_pending (d))
        return TRUE;
    }
  return FALSE;
}

/* Something of the stage's still runs: its update, or its after gates. */
static gboolean
running (StgStage *s)
{
  return s->row.status == S (ROLLING_FORWARD) || s->row.status == S (ROLLING_BACK) ||
         s->want_start || (s->row.status == S (WAITING_FOR_GATE) && s->row.update_uid != NULL);
}

/* The plan's status while it moves forward, and why. */
gint
stg_plan_forward_status (StgPlan *p, gchar **why)
{
  StgStage *gate = NULL, *approval = NULL;

  for (guint i = 0; i < p->stages->len; i++)
    {
      StgStage *s = stg_plan_stage (p, i);
      if (s->row.status == S (ROLLING_FORWARD) || s->want_start)
        {
          *why = g_strdup_printf ("stage '%s' is updating its job", s->row.name);
          return S (ROLLING_FORWARD);
        }
      if (s->row.status == S (WAITING_FOR_GATE) && gate == NULL)
        gate = s;
      if (s->row.status == S (AWAITING_APPROVAL) && approval == NULL)
        approval = s;
    }
  if (gate != NULL)
    {
      *why = g_strdup_printf ("stage '%s' waits for %s", gate->row.name, gate->row.reason);
      return S (WAITING_FOR_GATE);
    }
  if (approval != NULL)
    {
      *why = g_strdup_printf ("stage '%s' waits for an approval", approval->row.name);
      return S (AWAITING_APPROVAL);
    }
  *why = NULL;
  return S (ROLLING_FORWARD);
}

/* The end, once nothing runs and nothing is left to take back. */
static void
plan_finish (StgPlan *p)
{
  StgStage *failed_back = NULL;

  for (guint i = 0; i < p->stages->len; i++)
    {
      StgStage *s = stg_plan_stage (p, i);
      if (s->row.status == S (FAILED) && s->row.rolled && failed_back == NULL)
        failed_back = s;
    }
  if (failed_back != NULL)
    {
      g_autofree gchar *why = g_strdup_printf ("%s; stage '%s' did not go back: %s", p->row.reason,
                                               failed_back->row.name, failed_back->row.reason);
      stg_plan_set (p, S (FAILED), STG_REASON_ROLLBACK_FAILED, NULL, why);
    }
  else if (p->row.back)
    stg_plan_set (p, S (ROLLED_BACK), NULL, NULL, p->row.reason);
  else
    stg_plan_set (p, S (FAILED), STG_REASON_STAGE_FAILED, NULL, p->row.reason);
}

/* Moves stage @s on as far as it can now (inside the pump's step). */
static void
look_at (StgPlan *p, StgStage *s)
{
  switch (s->row.status)
    {
    case S (PENDING):
    case S (AWAITING_APPROVAL):
      if (p->row.stopping)
        stg_stage_set (s, S (ABORTED), STG_REASON_NOT_STARTED, NULL,
                       "not started: the plan stopped");
      else if (s->row.status == S (PENDING) ? deps_done (s) : s->row.approved_by != NULL)
        stg_stage_advance (s);
      break;
    case S (WAITING_FOR_GATE):
      if (p->row.stopping && s->row.update_uid == NULL)
        {
          g_clear_pointer (&s->gate_run, stg_gate_run_free);
          stg_stage_set (s, S (ABORTED), STG_REASON_NOT_STARTED, NULL,
                         "not started: the plan stopped");
        }
      else if ((guint) s->row.gates_passed >= stg_stage_gates (s)->len)
        {
          if (s->row.update_uid == NULL)
            stg_stage_advance (s);
          else
            stg_stage_set (s, S (DONE), NULL, NULL, "its update and its gates passed");
        }
      else if (s->gate_run == NULL)
        {
          g_auto (GStrv) env = stg_stage_gate_environ (s);
          s->gate_run = stg_gate_run_start (p->engine,
                                            stg_stage_gates (s)->pdata[s->row.gates_passed],
                                            s->job->role, (const gchar *const *) env, on_gate, s);
        }
      break;
    case S (ROLLING_FORWARD):
    case S (ROLLING_BACK):
      stg_stage_watch (s);
      break;
    default:
      break;
    }
}

/* The plan's own status: what its stages do while it moves forward; once
 * it stops and nothing runs, which stages go back now (want_back), or its
 * end when none is left. */
static void
decide (StgPlan *p)
{
  gboolean busy = FALSE, all_done = TRUE;

  for (guint i = 0; i < p->stages->len; i++)
    {
      StgStage *s = stg_plan_stage (p, i);
      busy |= running (s);
      all_done &= s->row.status == S (DONE);
    }
  if (!p->row.stopping)
    {
      g_autofree gchar *why = NULL;
      gint status = all_done ? S (DONE) : stg_plan_forward_status (p, &why);
      stg_plan_set (p, status, NULL, NULL, all_done ? "every stage is done" : why);
      return;
    }
  if (busy)
    return;
  gboolean pending = FALSE;
  for (guint i = p->stages->len; i > 0; i--)
    {
      StgStage *s = stg_plan_stage (p, i - 1);
      if (!to_roll_back (s))
        continue;
      pending = TRUE;
      if (!dependents_pending (s))
        s->want_back = TRUE;
    }
  if (!pending)
    plan_finish (p);
}

/* One look at every stage: what can move moves (in one step), then the
 * updates to start start (each in a step of its own; one that fails in
 * the store reloads the plan, and the reloaded plan is pumped again). */
static void
pump (StgPlan *p)
{
  if (p->row.status == S (PAUSED) || stg_rollout_status_is_terminal (p->row.status))
    return;
  p->moved = FALSE;
  for (guint i = 0; i < p->stages->len; i++)
    look_at (p, stg_plan_stage (p, i));
  decide (p);
  if (!stg_plan_end_step (p))
    return;
  if (stg_rollout_status_is_terminal (p->row.status))
    {
      stg_plan_retire (p);
      return;
    }
  gboolean started = FALSE;
  for (guint i = 0; i < p->stages->len; i++)
    {
      StgStage *s = stg_plan_stage (p, i);
      gboolean wanted = s->want_start || s->want_back;
      if ((s->want_start && !stg_stage_start (s)) || (s->want_back && !stg_stage_start_back (s)))
        {
          g_autofree gchar *uid = g_strdup (p->row.uid);
          plan_reload (p->engine, uid);
          return;
        }
      started |= wanted;
    }
  /* What moved may let more move (a stage now waiting for a gate tries
   * it): look again until nothing does. */
  if (started || p->moved)
    stg_plan_kick (p);
}

static void
on_kick (gpointer data)
{
  StgPlan *p = data;

  p->kick = 0;
  pump (p);
}

void
stg_plan_kick (StgPlan *p)
{
  if (p->kick == 0)
    p->kick = stg_clock_add_timer (p->engine->clock, 0, on_kick, p);
}

void
stg_plans_on_change (gpointer data, const StgEngineChange *change)
{
  StgEngine *e = data;
  GHashTableIter it;
  gpointer value;

  if (change->job == NULL)
    return;
  g_hash_table_iter_init (&it, e->plans);
  while (g_hash_table_iter_next (&it, NULL, &value))
    {
      StgPlan *p = value;
      for (guint i = 0; i < p->stages->len; i++)
        if (stg_job_key_equal (stg_plan_stage (p, i)->job, change->job))
          {
            stg_plan_kick (p);
            break;
          }
    }
}

/* Replaces plan @uid in memory with what the store has, pumped after
 * STG_ENGINE_RETRY_MS; FALSE when it has ended or cannot be read. */
static gboolean
plan_reload (StgEngine *e, const gchar *uid)
{
  g_autofree gchar *id = g_strdup (uid);
  g_autoptr (GError) error = NULL;

  g_hash_table_remove (e->plans, id);
  g_autoptr (StgPlanRow) row = stg_store_get_plan (e->store, id, &error);
  if (row == NULL)
    {
      g_warning ("engine: cannot reload plan %s: %s", id, error->message);
      return FALSE;
    }
  if (stg_rollout_status_is_terminal (row->status))
    return FALSE;
  StgPlan *p = stg_plan_new (e, row);
  g_hash_table_insert (e->plans, p->row.uid, p);
  /* Not at once: a store that keeps failing must not make a busy loop. */
  p->kick = stg_clock_add_timer (e->clock, STG_ENGINE_RETRY_MS, on_kick, p);
  return TRUE;
}

void
stg_plans_init (StgEngine *e)
{
  e->plans = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) stg_plan_free);
}

void
stg_plans_free (StgEngine *e)
{
  g_clear_pointer (&e->plans, g_hash_table_unref);
}

gboolean
stg_plans_recover (StgEngine *e, GError **error)
{
  g_autoptr (GPtrArray) rows = stg_store_list_active_plans (e->store, error);

  if (rows == NULL)
    {
      stg_engine_wrap_error (error);
      return FALSE;
    }
  for (guint i = 0; i < rows->len; i++)
    {
      StgPlan *p = stg_plan_new (e, rows->pdata[i]);
      g_hash_table_insert (e->plans, p->row.uid, p);
      g_info ("engine: continuing plan %s (%s)", p->row.uid,
              stg_rollout_status_name (p->row.status));
      stg_plan_kick (p);
    }
  return TRUE;
}

void
stg_plans_check_invariants (StgEngine *e)
{
  GHashTableIter it;
  gpointer key, value;

  g_hash_table_iter_init (&it, e->plans);
  while (g_hash_table_iter_next (&it, &key, &value))
    {
      StgPlan *p = value;
      g_assert_cmpstr (key, ==, p->row.uid);
      for (guint i = 0; i < p->stages->len; i++)
        {
          StgStage *s = stg_plan_stage (p, i);
          gint st = s->row.status;
          if (st == S (ROLLING_FORWARD))
            g_assert_true (s->row.update_uid != NULL && s->row.update_uid[0] != '\0');
          if (st == S (ROLLING_BACK))
            g_assert_nonnull (s->row.rollback_uid);
          if (st == S (WAITING_FOR_GATE))
            {
              GPtrArray *gates = stg_stage_gates (s);
              g_assert_true (gates != NULL && (guint) s->row.gates_passed <= gates->len);
            }
        }
    }
}

guint
stg_engine_active_plans (StgEngine *e)
{
  return g_hash_table_size (e->plans);
}
