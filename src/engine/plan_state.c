/* plan_state.c: a rollout plan's records: the plan and its stages in
 * memory as the store has them (StgPlan, StgStage), and their writes
 * inside a step: a status change is an event, and only along an arrow of
 * the machines drawn in plan.c (the transition tables here); a changed
 * plan is announced to the engine's watchers and, once committed, its
 * notifier, each with its reason code (reasons.c's when the caller names
 * none). Also what a stage's state says: the gates of the phase it waits
 * in, why it waits, and what its shell gates get; an ended stage or
 * plan records where each stage ended (plan_view.c). Calls step.c,
 * notice.c, reasons.c, gate.c, errors.c, plan_view.c and the store.
 * Main-loop thread only.
 */
#include "config.h"

#include <string.h>

#include "common/enums.h"
#include "engine/gate_private.h"
#include "engine/notice_private.h"
#include "engine/plan_private.h"
#include "engine/step_private.h"
#include "store/plans.h"

static const gchar *stage_phase (StgStage *s);

static void
stage_free (gpointer data)
{
  StgStage *s = data;

  stg_gate_run_free (s->gate_run);
  g_array_unref (s->deps);
  stg_stage_row_clear (&s->row);
  g_free (s);
}

void
stg_plan_free (StgPlan *p)
{
  if (p == NULL)
    return;
  stg_clock_cancel_timer (p->engine->clock, p->kick);
  g_ptr_array_unref (p->stages);
  g_clear_object (&p->spec);
  g_free (p->row.uid);
  g_free (p->row.name);
  g_free (p->row.user);
  g_free (p->row.reason);
  g_free (p->row.reason_code);
  g_free (p);
}

gint
stg_plan_stage_index (const ApiRolloutPlan *plan, const gchar *name, guint before)
{
  for (guint i = 0; i < before && i < plan->stages->len; i++)
    if (g_strcmp0 (((ApiRolloutStage *) plan->stages->pdata[i])->name, name) == 0)
      return (gint) i;
  return -1;
}

/* A plan in memory from its stored row (taken: plan and stages). */
StgPlan *
stg_plan_new (StgEngine *e, StgPlanRow *row)
{
  StgPlan *p = g_new0 (StgPlan, 1);

  p->engine = e;
  p->row = *row;
  p->row.uid = g_strdup (row->uid);
  p->row.name = g_strdup (row->name);
  p->row.user = g_strdup (row->user);
  p->row.reason = g_strdup (row->reason);
  p->row.reason_code = g_strdup (row->reason_code);
  p->row.plan = NULL;
  p->row.stages = NULL;
  p->spec = g_object_ref (row->plan);
  p->stages = g_ptr_array_new_with_free_func (stage_free);
  for (guint i = 0; i < p->spec->stages->len; i++)
    {
      ApiRolloutStage *spec = p->spec->stages->pdata[i];
      StgStage *s = g_new0 (StgStage, 1);
      s->plan = p;
      s->idx = i;
      s->spec = spec;
      s->job = spec->request->taskConfig->job;
      s->deps = g_array_new (FALSE, FALSE, sizeof (guint));
      for (guint d = 0; spec->dependsOn != NULL && d < spec->dependsOn->len; d++)
        {
          gint dep = stg_plan_stage_index (p->spec, spec->dependsOn->pdata[d], i);
          if (dep >= 0)
            g_array_append_val (s->deps, dep);
        }
      s->row = g_array_index (row->stages, StgStageRow, i);
      memset (&g_array_index (row->stages, StgStageRow, i), 0, sizeof (StgStageRow));
      g_ptr_array_add (p->stages, s);
    }
  return p;
}

/* Begins the pump's step if it has not yet. */
void
stg_plan_step (StgPlan *p)
{
  if (p->in_step || p->engine->step_depth > 0)
    return;
  stg_engine_step_begin (p->engine);
  p->in_step = TRUE;
}

/* Writes (inside the plan's step): the plan's row, an event of the plan
 * (@stage NULL) or of a stage, a new status and reason (a new status is
 * an event), a stage's row, a stage's new status and reason. */
static void
plan_save (StgPlan *p)
{
  StgEngine *e = p->engine;
  GError *error = NULL;

  stg_plan_step (p);
  if (stg_engine_step_ok (e))
    stg_engine_step_check (e, stg_store_set_plan (e->store, &p->row, &error), &error);
  stg_engine_announce_plan (e, p->row.uid);
}

void
stg_plan_event (StgPlan *p, const gchar *stage, gint status, const gchar *code, const gchar *user,
                const gchar *message)
{
  StgEngine *e = p->engine;
  GError *error = NULL;

  stg_plan_step (p);
  if (stg_engine_step_ok (e))
    stg_engine_step_check (e,
                           stg_store_add_plan_event (e->store, p->row.id, stage,
                                                     stg_clock_now_ms (e->clock), status, code,
                                                     user, message, &error),
                           &error);
}

/* Tells the notifier of the move of the plan (@s NULL) or of stage @s
 * from @previous. */
static void
notice (StgPlan *p, StgStage *s, gint previous, gint status, const gchar *code, const gchar *user,
        const gchar *message)
{
  StgNotice n = {
    .event = s != NULL ? "stage" : "plan",
    .status = stg_rollout_status_name (status),
    .previous = stg_rollout_status_name (previous),
    .reason = code,
    .message = message,
    .user = user,
    .timestamp_ms = stg_clock_now_ms (p->engine->clock),
    .job = s != NULL ? s->job : NULL,
    .plan_id = p->row.uid,
    .plan_name = p->row.name,
    .stage = s != NULL ? s->row.name : NULL,
  };
  stg_engine_notice (p->engine, &n);
}

/* Sets *@field to @code, or to the status's own code when @code is NULL;
 * returns it. */
static const gchar *
set_code (gchar **field, const gchar *code, gboolean stage, gint status)
{
  g_free (*field);
  *field = g_strdup (code != NULL ? code : stg_rollout_reason (stage, status));
  return *field;
}

/* ---- the transition tables ------------------------------------------------------ */

gboolean
stg_plan_transition_allowed (gint from, gint to)
{
  gboolean forward = to == S (WAITING_FOR_GATE) || to == S (AWAITING_APPROVAL) ||
                     to == S (ROLLING_FORWARD);

  switch (from)
    {
    case S (PENDING):
    case S (WAITING_FOR_GATE):
    case S (AWAITING_APPROVAL):
    case S (ROLLING_FORWARD):
      return forward || to == S (DONE) || to == S (PAUSED) || to == S (ROLLING_BACK) ||
             to == S (FAILED) || to == S (ABORTED);
    case S (PAUSED):
      return forward || to == S (ROLLING_BACK) || to == S (ABORTED);
    case S (ROLLING_BACK):
      return to == S (ROLLED_BACK) || to == S (FAILED) || to == S (PAUSED) || to == S (ABORTED);
    case S (DONE):
    case S (FAILED):
    case S (ABORTED):
      return to == S (ROLLING_BACK);
    default:
      return FALSE;
    }
}

gboolean
stg_stage_transition_allowed (gint from, gint to)
{
  gboolean on = to == S (ROLLING_FORWARD) || to == S (DONE) || to == S (FAILED) ||
                to == S (ABORTED);

  switch (from)
    {
    case S (PENDING):
      return on || to == S (AWAITING_APPROVAL) || to == S (WAITING_FOR_GATE);
    case S (AWAITING_APPROVAL):
    case S (WAITING_FOR_GATE):
    case S (ROLLING_FORWARD):
      return on || to == S (WAITING_FOR_GATE);
    case S (DONE):
    case S (FAILED):
    case S (ABORTED):
      return to == S (ROLLING_BACK) || to == S (ROLLED_BACK) || to == S (FAILED);
    case S (ROLLING_BACK):
      return to == S (ROLLED_BACK) || to == S (FAILED) || to == S (ABORTED);
    default:
      return FALSE;
    }
}

/* Sets the plan's status, reason code and reason; a new status is an
 * event. */
void
stg_plan_set (StgPlan *p, gint status, const gchar *code, const gchar *user, const gchar *reason)
{
  gboolean moved = p->row.status != status;
  gint previous = p->row.status;

  if (!moved && g_strcmp0 (p->row.reason, reason ? reason : "") == 0 &&
      (code == NULL || g_strcmp0 (p->row.reason_code, code) == 0))
    return;
  if (!stg_engine_transition_ok (!moved || stg_plan_transition_allowed (p->row.status, status),
                                 "plan", p->row.uid, stg_rollout_status_name (p->row.status),
                                 stg_rollout_status_name (status)))
    return;
  g_debug ("engine: plan %s: %s -> %s (%s)", p->row.uid, stg_rollout_status_name (p->row.status),
           stg_rollout_status_name (status), reason ? reason : "");
  if (moved)
    p->row.since_ms = stg_clock_now_ms (p->engine->clock);
  p->moved |= moved;
  p->row.status = status;
  gchar *copy = g_strdup (reason ? reason : ""); /* @reason may be the old one */
  g_free (p->row.reason);
  p->row.reason = copy;
  if (moved || code != NULL)
    set_code (&p->row.reason_code, code, FALSE, status);
  plan_save (p);
  /* An ended plan shows where each stage ended: those that did not end
   * on their own end with it. */
  for (guint i = 0; moved && stg_rollout_status_is_terminal (status) && i < p->stages->len; i++)
    {
      StgStage *s = p->stages->pdata[i];
      if (!stg_rollout_status_is_terminal (s->row.status) || s->row.end_ms == 0)
        {
          stg_stage_note_end (s);
          stg_stage_save (s);
        }
    }
  if (moved)
    {
      stg_plan_event (p, NULL, status, p->row.reason_code, user, p->row.reason);
      notice (p, NULL, previous, status, p->row.reason_code, user, p->row.reason);
    }
}

void
stg_stage_save (StgStage *s)
{
  StgEngine *e = s->plan->engine;
  GError *error = NULL;

  stg_plan_step (s->plan);
  if (stg_engine_step_ok (e))
    stg_engine_step_check (e, stg_store_set_stage (e->store, s->plan->row.id, &s->row, &error),
                           &error);
  stg_engine_announce_plan (e, s->plan->row.uid);
}

/* Sets a stage's status, reason code and reason; a new status is an
 * event. */
void
stg_stage_set (StgStage *s, gint status, const gchar *code, const gchar *user, const gchar *reason)
{
  gboolean moved = s->row.status != status;
  gint previous = s->row.status;

  if (!stg_engine_transition_ok (!moved || stg_stage_transition_allowed (s->row.status, status),
                                 "stage", s->row.name, stg_rollout_status_name (s->row.status),
                                 stg_rollout_status_name (status)))
    return;
  g_debug ("engine: plan %s stage %s: %s -> %s (%s)", s->plan->row.uid, s->row.name,
           stg_rollout_status_name (s->row.status), stg_rollout_status_name (status),
           reason ? reason : "");
  if (moved)
    s->row.since_ms = stg_clock_now_ms (s->plan->engine->clock);
  s->plan->moved |= moved;
  s->row.status = status;
  gchar *copy = g_strdup (reason ? reason : "");
  g_free (s->row.reason);
  s->row.reason = copy;
  if (moved || code != NULL)
    set_code (&s->row.reason_code, code, TRUE, status);
  if (stg_rollout_status_is_terminal (status))
    stg_stage_note_end (s); /* where it ended, as an ended plan shows it */
  stg_stage_save (s);
  if (moved)
    {
      stg_plan_event (s->plan, s->row.name, status, s->row.reason_code, user, s->row.reason);
      notice (s->plan, s, previous, status, s->row.reason_code, user, s->row.reason);
    }
}

gboolean
stg_plan_commit (StgPlan *p)
{
  if (!p->in_step)
    return TRUE;
  p->in_step = FALSE;
  return stg_engine_step_end (p->engine, NULL);
}

void
stg_stage_gate_result (StgStage *s, const gchar *gate, guint attempt, gboolean passed,
                       const gchar *message)
{
  StgPlan *p = s->plan;
  StgEngine *e = p->engine;
  GError *error = NULL;

  stg_plan_step (p);
  if (stg_engine_step_ok (e))
    stg_engine_step_check (e,
                           stg_store_add_gate_result (e->store, p->row.id, s->row.name,
                                                      stg_clock_now_ms (e->clock), s->row.status,
                                                      gate, stage_phase (s), (gint) attempt, passed,
                                                      message, &error),
                           &error);
  stg_engine_announce_plan (e, p->row.uid);
}

/* The gates of the phase @s waits in: before its update, or after it. */
GPtrArray *
stg_stage_gates (StgStage *s)
{
  return s->row.update_uid == NULL ? s->spec->before : s->spec->after;
}

static const gchar *
stage_phase (StgStage *s)
{
  return s->row.update_uid == NULL ? "before" : "after";
}

/* The version of the config most of @s's job's instances should run. */
static gint
job_version (StgStage *s)
{
  StgStore *store = s->plan->engine->store;
  g_autoptr (StgJobRow) job = stg_store_get_job (store, s->job, NULL);
  gint64 config = 0;

  if (job == NULL || !stg_store_main_config (store, job->id, &config, NULL) || config == 0)
    return 0;
  return stg_store_config_version (store, config);
}

gchar **
stg_stage_gate_environ (StgStage *s)
{
  StgStore *store = s->plan->engine->store;
  gint from = 0, to = 0;

  if (s->row.update_uid == NULL)
    from = job_version (s);
  else
    {
      g_autoptr (StgUpdateRow) u = stg_store_get_update (store, s->row.update_uid, NULL);
      from = s->row.prior_config_id != 0 ? stg_store_config_version (store, s->row.prior_config_id)
                                         : 0;
      to = u != NULL && u->desired_config_id != 0
               ? stg_store_config_version (store, u->desired_config_id)
               : 0;
    }
  gchar **env = stg_gate_environ (s->job, from, to);
  env = g_environ_setenv (env, "STAGGER_PLAN", s->plan->row.uid, TRUE);
  env = g_environ_setenv (env, "STAGGER_PLAN_NAME", s->plan->row.name, TRUE);
  env = g_environ_setenv (env, "STAGGER_STAGE", s->row.name, TRUE);
  env = g_environ_setenv (env, "STAGGER_GATE_PHASE", stage_phase (s), TRUE);
  return env;
}

gchar *
stg_stage_waiting_reason (StgStage *s)
{
  GPtrArray *gates = stg_stage_gates (s);
  const ApiRolloutGate *g = gates->pdata[s->row.gates_passed];

  return g_strdup_printf ("gate '%s' (%s, %d of %u)", g->name, stage_phase (s),
                          s->row.gates_passed + 1, gates->len);
}

/* The plan stops starting stages (and goes back when it says so). */
static void
plan_stop (StgPlan *p, const gchar *reason)
{
  if (p->row.stopping)
    return;
  p->row.stopping = TRUE;
  p->row.back = p->spec->rollbackOnFailure;
  if (p->row.back)
    stg_plan_set (p, S (ROLLING_BACK), STG_REASON_STAGE_FAILED, NULL, reason);
  else
    {
      g_free (p->row.reason);
      p->row.reason = g_strdup (reason);
      set_code (&p->row.reason_code, STG_REASON_STAGE_FAILED, FALSE, p->row.status);
      plan_save (p);
    }
}

/* The plan stops because @s failed (@code) with @reason. */
void
stg_stage_failed (StgStage *s, const gchar *code, const gchar *reason)
{
  stg_stage_set (s, S (FAILED), code, NULL, reason);
  g_autofree gchar *why = g_strdup_printf ("stage '%s' failed: %s", s->row.name, reason);
  plan_stop (s->plan, why);
}

gchar *
stg_stage_message (StgStage *s, const gchar *what)
{
  return g_strdup_printf ("rollout plan %s (%s), stage %s%s", s->plan->row.name, s->plan->row.uid,
                          s->row.name, what);
}

/* An ended plan leaves memory; the store keeps it. */
void
stg_plan_retire (StgPlan *p)
{
  g_hash_table_remove (p->engine->plans, p->row.uid);
}
