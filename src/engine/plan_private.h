/* plan_private.h: what the rollout plan files share (plan_view.c, plan_state.c,
 * plan_stage.c, plan.c, plan_calls.c): a plan and its stages in memory.
 * Not for use outside src/engine/. Main-loop thread only.
 */
#pragma once

#include "engine/engine_private.h"
#include "engine/gate_private.h"
#include "store/plans.h"

/* ---- what the plans offer engine.c (plan.c, plan_state.c) ---------------- */

/* engine->plans. */
void stg_plans_init (StgEngine *engine);
void stg_plans_free (StgEngine *engine);

/* A StgEngineWatchFunc (@data: the engine): a committed change of a job
 * wakes the plans with a stage on it. */
void stg_plans_on_change (gpointer data, const StgEngineChange *change);

/* Loads every active plan and continues it. */
gboolean stg_plans_recover (StgEngine *engine, GError **error);

/* The arrows of a plan's and a stage's machines (drawn in plan.c, the
 * tables in plan_state.c): TRUE when the status may go from @from to
 * another, @to. */
gboolean stg_plan_transition_allowed (gint from, gint to);
gboolean stg_stage_transition_allowed (gint from, gint to);

/* Asserts what holds of every plan in memory (plan.c's invariants). */
void stg_plans_check_invariants (StgEngine *engine);

#define S(x) API_ROLLOUT_STATUS_##x

typedef struct
{
  StgPlan *plan;
  guint idx;
  ApiRolloutStage *spec; /* borrowed from plan->spec */
  ApiJobKey *job;        /* borrowed from spec */
  GArray *deps;          /* guint: the stages it depends on */
  StgStageRow row;       /* as stored */
  StgGateRun *gate_run;  /* (nullable) the gate being tried */
  gboolean want_start;   /* memory: start its update after this step */
  gboolean want_back;    /* memory: start its rollback after this step */
} StgStage;

struct _StgPlan
{
  StgEngine *engine;
  StgPlanRow row; /* as stored; row.plan and row.stages unused */
  ApiRolloutPlan *spec;
  GPtrArray *stages; /* StgStage* */
  guint kick;        /* the pump's timer */
  gboolean in_step;  /* the plan has begun a step */
  gboolean moved;    /* a status changed since the pump began */
};

static inline StgStage *
stg_plan_stage (StgPlan *p, guint i)
{
  return p->stages->pdata[i];
}

static inline gboolean
stg_gates_any (GPtrArray *gates)
{
  return gates != NULL && gates->len > 0;
}

/* ---- records (plan_state.c) ------------------------------------------------- */

/* A plan in memory from its stored @row (whole; its plan and stages are
 * taken). */
StgPlan *stg_plan_new (StgEngine *engine, StgPlanRow *row);
void stg_plan_free (StgPlan *p);

/* The index of stage @name among the first @before stages, or -1. */
gint stg_plan_stage_index (const ApiRolloutPlan *plan, const gchar *name, guint before);

/* Begins the plan's step unless it, or another, is under way. */
void stg_plan_step (StgPlan *p);
/* Ends the plan's step; FALSE when it was not stored. */
gboolean stg_plan_commit (StgPlan *p);

/* Writes (inside the plan's step): an event of the plan (@stage NULL) or
 * of a stage, a new status and reason (a new status is an event), a
 * stage's new status and reason, a gate's result. A new status must be one
 * the machine's table allows (stg_engine_transition_ok). */
void stg_plan_event (StgPlan *p, const gchar *stage, gint status, const gchar *code,
                     const gchar *user, const gchar *message);
/* @code (nullable: the status's own, reasons.c) is the reason code. */
void stg_plan_set (StgPlan *p, gint status, const gchar *code, const gchar *user,
                   const gchar *reason);
void stg_stage_save (StgStage *s);
void stg_stage_set (StgStage *s, gint status, const gchar *code, const gchar *user,
                    const gchar *reason);
/* One attempt of gate @gate of the phase @s waits in. */
void stg_stage_gate_result (StgStage *s, const gchar *gate, guint attempt, gboolean passed,
                            const gchar *message);

/* @s failed (reason code @code) with @reason: the plan stops. */
void stg_stage_failed (StgStage *s, const gchar *code, const gchar *reason);

/* The gates of the phase @s waits in (before its update, or after it),
 * and what it waits for in words. */
GPtrArray *stg_stage_gates (StgStage *s);
gchar *stg_stage_waiting_reason (StgStage *s);

/* What a shell gate of @s gets: STAGGER_JOB, STAGGER_FROM_VERSION (before
 * its update: what the job runs; after: what it ran before the plan),
 * STAGGER_TO_VERSION (after: what the update moved it to; before: 0, the
 * configuration is stored when the update starts), STAGGER_PLAN,
 * STAGGER_PLAN_NAME, STAGGER_STAGE, STAGGER_GATE_PHASE. */
gchar **stg_stage_gate_environ (StgStage *s);

/* The message a stage's update records ("rollout plan ..., stage ..."). */
gchar *stg_stage_message (StgStage *s, const gchar *what);

/* Records in @s's row where it ended: its job's versions and readiness
 * now, and its reason (plan_view.c; saved with the row). */
void stg_stage_note_end (StgStage *s);

/* An ended plan leaves memory (@p is freed); the store keeps it. */
void stg_plan_retire (StgPlan *p);

/* ---- a stage and its job (plan_stage.c) --------------------------------------- */

/* Moves @s on from PENDING, AWAITING_APPROVAL (approved) or its before
 * gates (all passed): to DONE, its approval, its gates, or want_start. */
void stg_stage_advance (StgStage *s);

/* A running stage's update (forward or back) has ended? */
void stg_stage_watch (StgStage *s);

/* Starts @s's update, or the one that takes it back (outside any step);
 * FALSE when the store failed (the caller reloads the plan). */
gboolean stg_stage_start (StgStage *s);
gboolean stg_stage_start_back (StgStage *s);

/* ---- the pump (plan.c) ------------------------------------------------------------ */

/* Ends the plan's step; one that was not stored reloads the plan (and @p
 * is gone): FALSE then. */
gboolean stg_plan_end_step (StgPlan *p);

/* The plan's status while it moves forward (what its stages do), and why
 * in *@why (nullable). */
gint stg_plan_forward_status (StgPlan *p, gchar **why);

/* Pumps the plan on the next iteration. */
void stg_plan_kick (StgPlan *p);
