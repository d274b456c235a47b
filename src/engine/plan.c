/* plan.c: rollout plans: several job updates in an order, with gates.
 *
 * A plan is a DAG of stages (each names only earlier stages in dependsOn),
 * each stage one job update. Its stored state (store/plans.c) is the whole
 * truth; an active plan is also held in memory as a StgPlan, and moved on
 * by its pump, which runs from a timer (never inside another step) whenever
 * something it waits on changed: one of its jobs or updates (an engine
 * watcher), a gate's result, or a call.
 *
 * A stage, and the function behind each arrow:
 *
 *   PENDING --[advance: dependencies DONE]--> AWAITING_APPROVAL (requireApproval,
 *             not approved yet) | WAITING_FOR_GATE (before gates) | start_stage
 *   AWAITING_APPROVAL --[stg_engine_approve_stage, advance]--> WAITING_FOR_GATE | start_stage
 *   WAITING_FOR_GATE (before) --[on_gate: all passed, advance]--> start_stage
 *   WAITING_FOR_GATE (before) --[on_gate: one failed]--> FAILED (nothing changed)
 *   start_stage --[nothing would change]--> DONE
 *   start_stage --[the update is started]--> ROLLING_FORWARD
 *   ROLLING_FORWARD --[watch_update: ROLLED_FORWARD]--> WAITING_FOR_GATE (after) | DONE
 *   ROLLING_FORWARD --[watch_update: any other end]--> FAILED
 *   WAITING_FOR_GATE (after) --[on_gate: all passed]--> DONE
 *   WAITING_FOR_GATE (after) --[on_gate: one failed]--> FAILED, roll_back set
 *   DONE, FAILED, ABORTED with an update --[start_rollback]--> ROLLING_BACK
 *             | ROLLED_BACK (nothing to undo)
 *   ROLLING_BACK --[watch_update: the rollback update ROLLED_FORWARD; the
 *             job removed]--> ROLLED_BACK, else FAILED
 *   PENDING, AWAITING_APPROVAL, WAITING_FOR_GATE (before)
 *             --[the plan stops; stg_engine_abort_plan]--> ABORTED
 *
 * The plan: while it moves forward its status says what its stages do
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
 * so a restarted staggerd never tries it again. Calls control.c, gate.c,
 * the store and the runtime through them; main-loop thread only.
 */
#include "config.h"

#include <string.h>

#include "common/enums.h"
#include "common/error.h"
#include "common/jobkey.h"
#include "engine/engine_private.h"

#define fail(error, code, ...) stg_fail (error, STG_ENGINE_ERROR, code, __VA_ARGS__)
#define S(x) API_ROLLOUT_STATUS_##x

#define MAX_STAGES 100
#define MAX_GATES 100

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
  gboolean in_step;  /* the pump has begun a step */
  gboolean moved;    /* a status changed since the pump began */
};

static void kick (StgPlan *p);
static void plan_retire (StgPlan *p);

/* ---- plans in memory ------------------------------------------------------------- */

static void
stage_free (gpointer data)
{
  StgStage *s = data;

  stg_gate_run_free (s->gate_run);
  g_array_unref (s->deps);
  stg_stage_row_clear (&s->row);
  g_free (s);
}

static void
plan_free (StgPlan *p)
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
  g_free (p);
}

static gint
stage_index (const ApiRolloutPlan *plan, const gchar *name, guint before)
{
  for (guint i = 0; i < before && i < plan->stages->len; i++)
    if (g_strcmp0 (((ApiRolloutStage *) plan->stages->pdata[i])->name, name) == 0)
      return (gint) i;
  return -1;
}

/* A plan in memory from its stored row (taken: plan and stages). */
static StgPlan *
plan_new (StgEngine *e, StgPlanRow *row)
{
  StgPlan *p = g_new0 (StgPlan, 1);

  p->engine = e;
  p->row = *row;
  p->row.uid = g_strdup (row->uid);
  p->row.name = g_strdup (row->name);
  p->row.user = g_strdup (row->user);
  p->row.reason = g_strdup (row->reason);
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
          gint dep = stage_index (p->spec, spec->dependsOn->pdata[d], i);
          if (dep >= 0)
            g_array_append_val (s->deps, dep);
        }
      s->row = g_array_index (row->stages, StgStageRow, i);
      memset (&g_array_index (row->stages, StgStageRow, i), 0, sizeof (StgStageRow));
      g_ptr_array_add (p->stages, s);
    }
  return p;
}

static StgStage *
stage_at (StgPlan *p, guint i)
{
  return p->stages->pdata[i];
}

/* ---- writing (inside a step) ----------------------------------------------------- */

static void
check_store (StgEngine *e, gboolean ok, GError *error)
{
  if (!ok)
    {
      stg_engine_step_fail (e, error);
      g_error_free (error);
    }
}

/* Begins the pump's step if it has not yet. */
static void
step (StgPlan *p)
{
  if (p->in_step || p->engine->step_depth > 0)
    return;
  stg_engine_step_begin (p->engine);
  p->in_step = TRUE;
}

static void
save_plan (StgPlan *p)
{
  StgEngine *e = p->engine;
  GError *error = NULL;

  step (p);
  if (!e->step_failed)
    check_store (e, stg_store_set_plan (e->store, &p->row, &error), error);
  stg_engine_announce_plan (e, p->row.uid);
}

static void
plan_event (StgPlan *p, const gchar *stage, gint status, const gchar *user, const gchar *message)
{
  StgEngine *e = p->engine;
  GError *error = NULL;

  step (p);
  if (!e->step_failed)
    check_store (e,
                 stg_store_add_plan_event (e->store, p->row.id, stage, stg_clock_now_ms (e->clock),
                                           status, user, message, &error),
                 error);
}

/* Sets the plan's status and reason; a new status is an event. */
static void
plan_set (StgPlan *p, gint status, const gchar *user, const gchar *reason)
{
  gboolean moved = p->row.status != status;

  if (!moved && g_strcmp0 (p->row.reason, reason ? reason : "") == 0)
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
  save_plan (p);
  if (moved)
    plan_event (p, NULL, status, user, p->row.reason);
}

static void
save_stage (StgStage *s)
{
  StgEngine *e = s->plan->engine;
  GError *error = NULL;

  step (s->plan);
  if (!e->step_failed)
    check_store (e, stg_store_set_stage (e->store, s->plan->row.id, &s->row, &error), error);
  stg_engine_announce_plan (e, s->plan->row.uid);
}

/* Sets a stage's status and reason; a new status is an event. */
static void
stage_set (StgStage *s, gint status, const gchar *user, const gchar *reason)
{
  gboolean moved = s->row.status != status;

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
  save_stage (s);
  if (moved)
    plan_event (s->plan, s->row.name, status, user, s->row.reason);
}

/* Ends the pump's step; a step that was not stored puts the plan back to
 * what the store has. Returns FALSE when the plan was reloaded. */
static gboolean plan_reload (StgEngine *e, const gchar *uid);

static gboolean
end_step (StgPlan *p)
{
  if (!p->in_step)
    return TRUE;
  p->in_step = FALSE;
  if (stg_engine_step_end (p->engine, NULL))
    return TRUE;
  g_autofree gchar *uid = g_strdup (p->row.uid);
  plan_reload (p->engine, uid);
  return FALSE;
}

/* ---- stages and gates ---------------------------------------------------------- */

/* The gates of the phase @s waits in: before its update, or after it. */
static GPtrArray *
phase_gates (StgStage *s)
{
  return s->row.update_uid == NULL ? s->spec->before : s->spec->after;
}

static const gchar *
phase_name (StgStage *s)
{
  return s->row.update_uid == NULL ? "before" : "after";
}

static gboolean
has (GPtrArray *gates)
{
  return gates != NULL && gates->len > 0;
}

static gchar *
waiting_reason (StgStage *s)
{
  GPtrArray *gates = phase_gates (s);
  const ApiRolloutGate *g = gates->pdata[s->row.gates_passed];

  return g_strdup_printf ("gate '%s' (%s, %d of %u)", g->name, phase_name (s),
                          s->row.gates_passed + 1, gates->len);
}

static void plan_stop (StgPlan *p, const gchar *reason);

/* The plan stops because @s failed with @reason. */
static void
stage_failed (StgStage *s, const gchar *reason)
{
  stage_set (s, S (FAILED), NULL, reason);
  g_autofree gchar *why = g_strdup_printf ("stage '%s' failed: %s", s->row.name, reason);
  plan_stop (s->plan, why);
}

/* Moves @s on from PENDING, AWAITING_APPROVAL (approved) or its before
 * gates (all passed). */
static gint would_change (StgEngine *e, const ApiJobUpdateRequest *request, GError **error);

static void
advance (StgStage *s)
{
  gint status = s->row.status;

  /* A job that already runs what the stage asks for: done at once, with
   * neither approval nor gates (an error is the stage's start's to say). */
  if (status == S (PENDING) && would_change (s->plan->engine, s->spec->request, NULL) == 0)
    {
      stage_set (s, S (DONE), NULL, "its job already runs this configuration");
      return;
    }
  if (status == S (PENDING) && s->spec->requireApproval && s->row.approved_by == NULL)
    {
      stage_set (s, S (AWAITING_APPROVAL), NULL, "waiting for an approval (stagger plan approve)");
      return;
    }
  if ((status == S (PENDING) || status == S (AWAITING_APPROVAL)) && has (s->spec->before))
    {
      s->row.gates_passed = 0;
      g_autofree gchar *why = waiting_reason (s);
      stage_set (s, S (WAITING_FOR_GATE), NULL, why);
      return;
    }
  s->want_start = TRUE;
}

static void
on_gate (gpointer data, guint attempt, gboolean passed, gboolean last, const gchar *message)
{
  StgStage *s = data;
  StgPlan *p = s->plan;
  StgEngine *e = p->engine;
  GPtrArray *gates = phase_gates (s);
  const ApiRolloutGate *g = gates->pdata[s->row.gates_passed];
  g_autofree gchar *gate = g_strdup (g->name);
  g_autofree gchar *phase = g_strdup (phase_name (s));
  GError *error = NULL;

  step (p);
  if (last)
    g_clear_pointer (&s->gate_run, stg_gate_run_free);
  if (!e->step_failed)
    check_store (e,
                 stg_store_add_gate_result (e->store, p->row.id, s->row.name,
                                            stg_clock_now_ms (e->clock), s->row.status, gate, phase,
                                            (gint) attempt, passed, message, &error),
                 error);
  stg_engine_announce_plan (e, p->row.uid);
  if (last && passed)
    {
      s->row.gates_passed++;
      if ((guint) s->row.gates_passed < gates->len)
        {
          g_autofree gchar *why = waiting_reason (s);
          stage_set (s, S (WAITING_FOR_GATE), NULL, why);
        }
      else if (s->row.update_uid != NULL)
        stage_set (s, S (DONE), NULL, "its update and its gates passed");
      else
        save_stage (s); /* the pump starts its update */
    }
  else if (last)
    {
      g_autofree gchar *why = g_strdup_printf ("gate '%s' failed: %s", gate, message);
      if (s->row.update_uid != NULL)
        s->row.roll_back = TRUE; /* its job changed: it goes back in any case */
      stage_failed (s, why);
    }
  if (end_step (p))
    kick (p);
}

/* The update @uid's status (and its last message, nullable): from memory
 * while it is active, else from the store. -1 when it cannot be read. */
static gint
update_status (StgEngine *e, const gchar *uid, gchar **message)
{
  StgUpdate *u = g_hash_table_lookup (e->updates, uid);
  g_autoptr (GError) error = NULL;

  *message = NULL;
  if (u != NULL)
    return u->status;
  g_autoptr (StgUpdateRow) row = stg_store_get_update (e->store, uid, &error);
  if (row == NULL)
    {
      *message = g_strdup (error->message);
      return -1;
    }
  /* Why it ended: the message of the turn it took last (rolling back,
   * failing, aborted), else its last message. */
  g_autoptr (GPtrArray) events = stg_store_list_update_events (e->store, row->id, NULL);
  for (guint pass = 0; pass < 2 && *message == NULL; pass++)
    for (guint i = events ? events->len : 0; i > 0; i--)
      {
        ApiJobUpdateEvent *ev = events->pdata[i - 1];
        gboolean turn = ev->status == API_JOB_UPDATE_STATUS_ROLLING_BACK ||
                        ev->status == API_JOB_UPDATE_STATUS_FAILED ||
                        ev->status == API_JOB_UPDATE_STATUS_ABORTED ||
                        ev->status == API_JOB_UPDATE_STATUS_ERROR;
        if ((pass == 1 || turn) && ev->__isset_message && ev->message != NULL &&
            ev->message[0] != '\0')
          {
            *message = g_strdup (ev->message);
            break;
          }
      }
  return row->status;
}

/* A running stage's update, forward or back, has ended? */
static void
watch_update (StgStage *s)
{
  StgEngine *e = s->plan->engine;
  gboolean back = s->row.status == S (ROLLING_BACK);
  const gchar *uid = back ? s->row.rollback_uid : s->row.update_uid;
  g_autofree gchar *message = NULL;

  if (back && (uid == NULL || uid[0] == '\0'))
    {
      /* The job did not exist before the plan: back means gone. */
      g_autoptr (GError) error = NULL;
      g_autoptr (StgJobRow) job = stg_store_get_job (e->store, s->job, &error);
      if (job == NULL && g_error_matches (error, STG_STORE_ERROR, STG_STORE_ERROR_NOT_FOUND))
        stage_set (s, S (ROLLED_BACK), NULL,
                   "its job, which did not exist before the plan, is gone");
      return;
    }
  gint status = update_status (e, uid, &message);
  if (status >= 0 && stg_update_status_is_active (status))
    return;
  if (status == API_JOB_UPDATE_STATUS_ROLLED_FORWARD)
    {
      if (back)
        {
          g_autofree gchar *why = g_strdup_printf ("update %s took it back to its configuration "
                                                   "from before the plan",
                                                   uid);
          stage_set (s, S (ROLLED_BACK), NULL, why);
        }
      else if (has (s->spec->after))
        {
          s->row.gates_passed = 0;
          g_autofree gchar *why = waiting_reason (s);
          stage_set (s, S (WAITING_FOR_GATE), NULL, why);
        }
      else
        {
          g_autofree gchar *why = g_strdup_printf ("update %s rolled forward", uid);
          stage_set (s, S (DONE), NULL, why);
        }
      return;
    }
  g_autofree gchar *why = g_strdup_printf ("update %s ended %s%s%s", uid,
                                           status >= 0 ? stg_update_status_name (status) : "unread",
                                           message ? ": " : "", message ? message : "");
  if (back)
    stage_set (s, S (FAILED), NULL, why);
  else
    stage_failed (s, why);
}

/* ---- starting a stage's update -------------------------------------------------- */

/* Whether @request would change its job: 1 yes, 0 no, -1 @error. */
static gint
would_change (StgEngine *e, const ApiJobUpdateRequest *request, GError **error)
{
  g_autoptr (ApiGetJobUpdateDiffResult) diff = stg_engine_diff (e, request, error);

  if (diff == NULL)
    return -1;
  return g_hash_table_size (diff->add) + g_hash_table_size (diff->remove) +
                     g_hash_table_size (diff->update) >
                 0
             ? 1
             : 0;
}

/* What a start hook returns: FALSE when the stage's rows were not written. */
static gboolean
hook_result (StgStage *s, GError **error)
{
  if (!s->plan->engine->step_failed)
    return TRUE;
  g_set_error_literal (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_FAILED,
                       "the stage could not be stored");
  return FALSE;
}

static gboolean
started_forward (StgEngine *e, const gchar *uid, gpointer data, GError **error)
{
  StgStage *s = data;
  (void) e;

  g_free (s->row.update_uid);
  s->row.update_uid = g_strdup (uid);
  s->row.gates_passed = 0;
  g_autofree gchar *why = g_strdup_printf ("update %s", uid);
  stage_set (s, S (ROLLING_FORWARD), NULL, why);
  return hook_result (s, error);
}

static gboolean
started_back (StgEngine *e, const gchar *uid, gpointer data, GError **error)
{
  StgStage *s = data;
  (void) e;

  g_free (s->row.rollback_uid);
  s->row.rollback_uid = g_strdup (uid);
  s->row.rolled = TRUE;
  g_autofree gchar *why = g_strdup_printf ("update %s takes it back", uid);
  stage_set (s, S (ROLLING_BACK), NULL, why);
  return hook_result (s, error);
}

/* What the job ran before the plan: the config most of its instances
 * should run, and how many it had (0 and 0 when it did not exist). */
static gboolean
record_prior (StgStage *s, GError **error)
{
  StgEngine *e = s->plan->engine;
  g_autoptr (GError) local = NULL;
  g_autoptr (StgJobRow) job = stg_store_get_job (e->store, s->job, &local);

  s->row.prior_config_id = 0;
  s->row.prior_count = 0;
  s->row.prior_known = TRUE;
  if (job == NULL)
    {
      if (g_error_matches (local, STG_STORE_ERROR, STG_STORE_ERROR_NOT_FOUND))
        return TRUE;
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  g_autoptr (GArray) counts = stg_store_count_configs (e->store, job->id, error);
  if (counts == NULL)
    return FALSE;
  gint64 best = 0, most = 0;
  for (guint i = 0; i < counts->len; i++)
    {
      StgCount c = g_array_index (counts, StgCount, i);
      if (c.count > most)
        {
          most = c.count;
          best = c.key;
        }
    }
  s->row.prior_config_id = best;
  s->row.prior_count = best != 0 ? job->instance_count : 0;
  return TRUE;
}

static gchar *
stage_message (StgStage *s, const gchar *what)
{
  return g_strdup_printf ("rollout plan %s (%s), stage %s%s", s->plan->row.name, s->plan->row.uid,
                          s->row.name, what);
}

/* After a refused or failed start: the stage fails, unless the store
 * failed, when the plan is reloaded and tried again. Returns FALSE when
 * the plan (and @s) is gone from memory. */
static gboolean
start_refused (StgStage *s, const gchar *what, GError *error)
{
  StgPlan *p = s->plan;

  if (g_error_matches (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_FAILED))
    {
      g_warning ("engine: plan %s stage %s: %s: %s", p->row.uid, s->row.name, what, error->message);
      g_autofree gchar *uid = g_strdup (p->row.uid);
      plan_reload (p->engine, uid);
      return FALSE;
    }
  g_autofree gchar *why = g_strdup_printf ("%s: %s", what, error->message);
  if (s->row.status == S (ROLLING_BACK) || s->want_back)
    {
      s->row.rolled = TRUE;
      stage_set (s, S (FAILED), NULL, why);
    }
  else
    stage_failed (s, why);
  return end_step (p);
}

/* Starts @s's update (outside any step). Returns FALSE when the plan was
 * reloaded. */
static gboolean
start_stage (StgStage *s)
{
  StgPlan *p = s->plan;
  StgEngine *e = p->engine;
  g_autoptr (GError) error = NULL;
  ApiJobUpdateRequest *request = s->spec->request;

  s->want_start = FALSE;
  gint change = would_change (e, request, &error);
  if (change < 0)
    return start_refused (s, "its update cannot start", error);
  if (change == 0)
    {
      stage_set (s, S (DONE), NULL, "its job already runs this configuration");
      return end_step (p);
    }
  if (!record_prior (s, &error))
    return start_refused (s, "its job cannot be read", error);
  g_autofree gchar *message = stage_message (s, "");
  g_autoptr (ApiJobUpdateKey) key = stg_update_start (e, request, p->row.user, message,
                                                      started_forward, s, NULL, &error);
  if (key == NULL)
    return start_refused (s, "its update cannot start", error);
  return TRUE;
}

/* Starts taking @s back to its job's configuration from before the plan
 * (outside any step). Returns FALSE when the plan was reloaded. */
static gboolean
start_rollback (StgStage *s)
{
  StgPlan *p = s->plan;
  StgEngine *e = p->engine;
  g_autoptr (GError) error = NULL;
  g_autofree gchar *message = stage_message (s, ", going back");

  s->want_back = FALSE;
  if (!s->row.prior_known || s->row.prior_config_id == 0)
    {
      /* The job did not exist before the plan: remove it. */
      s->row.rolled = TRUE;
      g_free (s->row.rollback_uid);
      s->row.rollback_uid = g_strdup ("");
      g_autofree gchar *name = stg_job_key_to_string (s->job);
      g_autofree gchar *why = g_strdup_printf ("removing job %s, which did not exist before the "
                                               "plan",
                                               name);
      stage_set (s, S (ROLLING_BACK), NULL, why);
      if (!end_step (p))
        return FALSE;
      if (!stg_engine_kill_instances (e, s->job, NULL, p->row.user, message, &error))
        return start_refused (s, "its job cannot be removed", error);
      return TRUE;
    }

  g_autoptr (ApiTaskConfig) config = stg_store_get_config (e->store, s->row.prior_config_id,
                                                           &error);
  if (config == NULL)
    {
      stg_engine_wrap_error (&error);
      return start_refused (s, "its configuration from before the plan cannot be read", error);
    }
  /* The stage's own settings, for all of the job, with no gates. */
  g_autoptr (ApiJobUpdateRequest) request = stg_thrift_copy (s->spec->request);
  g_autoptr (ApiJobUpdateSettings) settings = stg_thrift_copy (request->settings);
  settings->__isset_batchGates = FALSE;
  g_hash_table_remove_all (settings->updateOnlyTheseInstances);
  settings->__isset_restartInstances = FALSE;
  settings->restartInstances = FALSE;
  g_object_set (request, "taskConfig", config, "instanceCount", s->row.prior_count, "settings",
                settings, NULL);

  gint change = would_change (e, request, &error);
  if (change < 0)
    return start_refused (s, "it cannot go back", error);
  if (change == 0)
    {
      s->row.rolled = TRUE;
      stage_set (s, S (ROLLED_BACK), NULL,
                 "its job already runs its configuration from before the plan");
      return end_step (p);
    }
  g_autoptr (ApiJobUpdateKey) key = stg_update_start (e, request, p->row.user, message,
                                                      started_back, s, NULL, &error);
  if (key == NULL)
    return start_refused (s, "it cannot go back", error);
  return TRUE;
}

/* ---- the pump ------------------------------------------------------------------ */

static gboolean
deps_done (StgStage *s)
{
  for (guint i = 0; i < s->deps->len; i++)
    if (stage_at (s->plan, g_array_index (s->deps, guint, i))->row.status != S (DONE))
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
      StgStage *d = stage_at (p, i);
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
static gint
forward_status (StgPlan *p, gchar **why)
{
  StgStage *gate = NULL, *approval = NULL;

  for (guint i = 0; i < p->stages->len; i++)
    {
      StgStage *s = stage_at (p, i);
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

/* The plan stops starting stages (and goes back when it says so). */
static void
plan_stop (StgPlan *p, const gchar *reason)
{
  if (p->row.stopping)
    return;
  p->row.stopping = TRUE;
  p->row.back = p->spec->rollbackOnFailure;
  if (p->row.back)
    plan_set (p, S (ROLLING_BACK), NULL, reason);
  else
    {
      g_free (p->row.reason);
      p->row.reason = g_strdup (reason);
      save_plan (p);
    }
}

/* The end, once nothing runs and nothing is left to take back. */
static void
plan_finish (StgPlan *p)
{
  StgStage *failed_back = NULL;

  for (guint i = 0; i < p->stages->len; i++)
    {
      StgStage *s = stage_at (p, i);
      if (s->row.status == S (FAILED) && s->row.rolled && failed_back == NULL)
        failed_back = s;
    }
  if (failed_back != NULL)
    {
      g_autofree gchar *why = g_strdup_printf ("%s; stage '%s' did not go back: %s", p->row.reason,
                                               failed_back->row.name, failed_back->row.reason);
      plan_set (p, S (FAILED), NULL, why);
    }
  else if (p->row.back)
    plan_set (p, S (ROLLED_BACK), NULL, p->row.reason);
  else
    plan_set (p, S (FAILED), NULL, p->row.reason);
}

/* One look at every stage: what can move moves (in one step), then the
 * updates to start start (each in a step of its own). */
static void
pump (StgPlan *p)
{
  StgEngine *e = p->engine;

  if (p->row.status == S (PAUSED) || stg_rollout_status_is_terminal (p->row.status))
    return;

  p->moved = FALSE;
  for (guint i = 0; i < p->stages->len; i++)
    {
      StgStage *s = stage_at (p, i);
      switch (s->row.status)
        {
        case S (PENDING):
          if (p->row.stopping)
            stage_set (s, S (ABORTED), NULL, "not started: the plan stopped");
          else if (deps_done (s))
            advance (s);
          break;
        case S (AWAITING_APPROVAL):
          if (p->row.stopping)
            stage_set (s, S (ABORTED), NULL, "not started: the plan stopped");
          else if (s->row.approved_by != NULL)
            advance (s);
          break;
        case S (WAITING_FOR_GATE):
          if (p->row.stopping && s->row.update_uid == NULL)
            {
              g_clear_pointer (&s->gate_run, stg_gate_run_free);
              stage_set (s, S (ABORTED), NULL, "not started: the plan stopped");
            }
          else if ((guint) s->row.gates_passed >= phase_gates (s)->len)
            {
              if (s->row.update_uid == NULL)
                advance (s);
              else
                stage_set (s, S (DONE), NULL, "its update and its gates passed");
            }
          else if (s->gate_run == NULL)
            s->gate_run = stg_gate_run_start (e, phase_gates (s)->pdata[s->row.gates_passed],
                                              s->job->role, on_gate, s);
          break;
        case S (ROLLING_FORWARD):
        case S (ROLLING_BACK):
          watch_update (s);
          break;
        default:
          break;
        }
    }

  gboolean busy = FALSE, all_done = TRUE;
  for (guint i = 0; i < p->stages->len; i++)
    {
      StgStage *s = stage_at (p, i);
      busy |= running (s);
      all_done &= s->row.status == S (DONE);
    }
  if (!p->row.stopping)
    {
      if (all_done)
        plan_set (p, S (DONE), NULL, "every stage is done");
      else
        {
          g_autofree gchar *why = NULL;
          gint status = forward_status (p, &why);
          plan_set (p, status, NULL, why);
        }
    }
  else if (!busy)
    {
      gboolean pending = FALSE;
      for (guint i = p->stages->len; i > 0; i--)
        {
          StgStage *s = stage_at (p, i - 1);
          if (!to_roll_back (s))
            continue;
          pending = TRUE;
          if (!dependents_pending (s))
            s->want_back = TRUE;
        }
      if (!pending)
        plan_finish (p);
    }

  if (!end_step (p))
    return;
  if (stg_rollout_status_is_terminal (p->row.status))
    {
      plan_retire (p);
      return;
    }
  /* Starts, each a step of its own; a start that failed in the store
   * reloads the plan, and the reloaded plan is pumped again. */
  gboolean started = FALSE;
  for (guint i = 0; i < p->stages->len; i++)
    {
      StgStage *s = stage_at (p, i);
      if (s->want_start)
        {
          started = TRUE;
          if (!start_stage (s))
            return;
        }
      if (s->want_back)
        {
          started = TRUE;
          if (!start_rollback (s))
            return;
        }
    }
  /* What moved may let more move (a stage now waiting for a gate tries
   * it): look again until nothing does. */
  if (started || p->moved)
    kick (p);
}

static void
on_kick (gpointer data)
{
  StgPlan *p = data;

  p->kick = 0;
  pump (p);
}

static void
kick (StgPlan *p)
{
  if (p->kick == 0)
    p->kick = stg_clock_add_timer (p->engine->clock, 0, on_kick, p);
}

/* An ended plan leaves memory; the store keeps it. */
static void
plan_retire (StgPlan *p)
{
  g_hash_table_remove (p->engine->plans, p->row.uid);
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
        if (stg_job_key_equal (stage_at (p, i)->job, change->job))
          {
            kick (p);
            break;
          }
    }
}

/* ---- loading ---------------------------------------------------------------------- */

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
  StgPlan *p = plan_new (e, row);
  g_hash_table_insert (e->plans, p->row.uid, p);
  /* Not at once: a store that keeps failing must not make a busy loop. */
  p->kick = stg_clock_add_timer (e->clock, STG_ENGINE_RETRY_MS, on_kick, p);
  return TRUE;
}

void
stg_plans_init (StgEngine *e)
{
  e->plans = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) plan_free);
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
      StgPlan *p = plan_new (e, rows->pdata[i]);
      g_hash_table_insert (e->plans, p->row.uid, p);
      g_info ("engine: continuing plan %s (%s)", p->row.uid,
              stg_rollout_status_name (p->row.status));
      kick (p);
    }
  return TRUE;
}

guint
stg_engine_active_plans (StgEngine *e)
{
  return g_hash_table_size (e->plans);
}

/* ---- starting a plan ---------------------------------------------------------------- */

static gboolean
name_ok (const gchar *name)
{
  if (name == NULL || name[0] == '\0' || strlen (name) > 100)
    return FALSE;
  for (const gchar *c = name; *c; c++)
    if (!g_ascii_isalnum (*c) && *c != '.' && *c != '_' && *c != '-')
      return FALSE;
  return TRUE;
}

static gboolean
check_gates (GPtrArray *gates, const gchar *what, GError **error)
{
  if (gates == NULL)
    return TRUE;
  if (gates->len > MAX_GATES)
    return fail (error, STG_ENGINE_ERROR_INVALID, "%s has %u gates; at most %d", what, gates->len,
                 MAX_GATES);
  for (guint i = 0; i < gates->len; i++)
    {
      g_autofree gchar *field = g_strdup_printf ("%s[%u]", what, i);
      if (!stg_gate_check (gates->pdata[i], field, error))
        return FALSE;
    }
  return TRUE;
}

/* A job that a stage of an active plan updates, or NULL. */
static StgPlan *
plan_of_job (StgEngine *e, const ApiJobKey *job)
{
  GHashTableIter it;
  gpointer value;

  g_hash_table_iter_init (&it, e->plans);
  while (g_hash_table_iter_next (&it, NULL, &value))
    {
      StgPlan *p = value;
      for (guint i = 0; i < p->stages->len; i++)
        if (stg_job_key_equal (stage_at (p, i)->job, job))
          return p;
    }
  return NULL;
}

static gboolean
check_stage (StgEngine *e, const ApiRolloutPlan *plan, guint i, GError **error)
{
  const ApiRolloutStage *s = plan->stages->pdata[i];
  g_autofree gchar *what = g_strdup_printf ("plan.stages[%u]", i);

  if (s == NULL)
    return fail (error, STG_ENGINE_ERROR_INVALID, "%s is missing", what);
  if (!name_ok (s->name))
    return fail (error, STG_ENGINE_ERROR_INVALID,
                 "%s.name must be 1 to 100 letters, digits, '.', '_' or '-'", what);
  if (stage_index (plan, s->name, i) >= 0)
    return fail (error, STG_ENGINE_ERROR_INVALID, "%s.name: two stages are named '%s'", what,
                 s->name);
  for (guint d = 0; s->dependsOn != NULL && d < s->dependsOn->len; d++)
    {
      const gchar *dep = s->dependsOn->pdata[d];
      if (stage_index (plan, dep, i) < 0)
        return fail (error, STG_ENGINE_ERROR_INVALID,
                     "%s.dependsOn names '%s', which is not an earlier stage", what,
                     dep ? dep : "");
    }
  if (s->request == NULL || s->request->taskConfig == NULL || !s->request->__isset_taskConfig ||
      s->request->taskConfig->job == NULL)
    return fail (error, STG_ENGINE_ERROR_INVALID, "%s.request.taskConfig.job is missing", what);
  g_autoptr (ApiGetJobUpdateDiffResult) diff = stg_engine_diff (e, s->request, error);
  if (diff == NULL)
    {
      g_prefix_error (error, "%s: ", what);
      return FALSE;
    }
  const ApiJobKey *job = s->request->taskConfig->job;
  for (guint k = 0; k < i; k++)
    {
      const ApiRolloutStage *other = plan->stages->pdata[k];
      if (stg_job_key_equal (other->request->taskConfig->job, job))
        {
          g_autofree gchar *name = stg_job_key_to_string (job);
          return fail (error, STG_ENGINE_ERROR_INVALID,
                       "%s updates job %s, as stage '%s' does: one stage a job", what, name,
                       other->name);
        }
    }
  StgPlan *busy = plan_of_job (e, job);
  if (busy != NULL)
    {
      g_autofree gchar *name = stg_job_key_to_string (job);
      return fail (error, STG_ENGINE_ERROR_ACTIVE_UPDATE,
                   "%s: job %s is in active rollout plan %s (%s)", what, name, busy->row.name,
                   busy->row.uid);
    }
  g_autofree gchar *before = g_strdup_printf ("%s.before", what);
  g_autofree gchar *after = g_strdup_printf ("%s.after", what);
  return check_gates (s->before, before, error) && check_gates (s->after, after, error);
}

gchar *
stg_engine_start_plan (StgEngine *e, const ApiRolloutPlan *plan, const gchar *user,
                       const gchar *message, GError **error)
{
  if (plan == NULL)
    {
      fail (error, STG_ENGINE_ERROR_INVALID, "plan is missing");
      return NULL;
    }
  if (plan->name == NULL || !name_ok (plan->name))
    {
      fail (error, STG_ENGINE_ERROR_INVALID,
            "plan.name must be 1 to 100 letters, digits, '.', '_' or '-'");
      return NULL;
    }
  if (plan->stages == NULL || plan->stages->len == 0 || plan->stages->len > MAX_STAGES)
    {
      fail (error, STG_ENGINE_ERROR_INVALID, "plan.stages must hold 1 to %d stages, not %u",
            MAX_STAGES, plan->stages ? plan->stages->len : 0);
      return NULL;
    }
  for (guint i = 0; i < plan->stages->len; i++)
    if (!check_stage (e, plan, i, error))
      return NULL;

  gint64 now = stg_clock_now_ms (e->clock);
  g_autofree gchar *uid = g_uuid_string_random ();
  g_autoptr (StgPlanRow) row = g_new0 (StgPlanRow, 1);
  row->uid = g_strdup (uid);
  row->name = g_strdup (plan->name);
  row->user = g_strdup (user ? user : "");
  row->status = S (PENDING);
  row->since_ms = now;
  row->created_ms = now;
  row->reason = g_strdup ("");
  row->plan = stg_thrift_copy ((gpointer) plan);
  g_autoptr (GError) local = NULL;

  stg_engine_step_begin (e);
  if (!stg_store_insert_plan (e->store, row, row->plan, &local) ||
      !stg_store_add_plan_event (e->store, row->id, NULL, now, S (PENDING), user,
                                 message && message[0] ? message : "started", &local))
    {
      stg_engine_step_fail (e, local);
      stg_engine_step_end (e, NULL);
      g_propagate_error (error, g_steal_pointer (&local));
      stg_engine_wrap_error (error);
      return NULL;
    }
  stg_engine_announce_plan (e, uid);
  if (!stg_engine_step_end (e, error))
    return NULL;
  g_autoptr (StgPlanRow) stored = stg_store_get_plan (e->store, uid, error);
  if (stored == NULL)
    {
      stg_engine_wrap_error (error);
      return NULL;
    }
  StgPlan *p = plan_new (e, stored);
  g_hash_table_insert (e->plans, p->row.uid, p);
  kick (p);
  return g_steal_pointer (&uid);
}

/* ---- the calls ------------------------------------------------------------------------ */

/* The active plan @uid, or NULL with NOT_FOUND (no such plan) or STATE
 * (it has ended; @intended names what the call wanted). */
static StgPlan *
find (StgEngine *e, const gchar *uid, const gchar *intended, GError **error)
{
  if (uid == NULL || uid[0] == '\0')
    {
      fail (error, STG_ENGINE_ERROR_INVALID, "the plan's id is missing");
      return NULL;
    }
  StgPlan *p = g_hash_table_lookup (e->plans, uid);
  if (p != NULL)
    return p;
  g_autoptr (GError) local = NULL;
  g_autoptr (StgPlanRow) row = stg_store_get_plan (e->store, uid, &local);
  if (row == NULL)
    {
      if (g_error_matches (local, STG_STORE_ERROR, STG_STORE_ERROR_NOT_FOUND))
        fail (error, STG_ENGINE_ERROR_NOT_FOUND, "no rollout plan %s", uid);
      else
        {
          g_propagate_error (error, g_steal_pointer (&local));
          stg_engine_wrap_error (error);
        }
      return NULL;
    }
  fail (error, STG_ENGINE_ERROR_STATE, "cannot %s rollout plan %s: it is %s", intended, uid,
        stg_rollout_status_name (row->status));
  return NULL;
}

static gchar *
by (const gchar *what, const gchar *user, const gchar *message)
{
  return g_strdup_printf ("%s%s%s%s%s", what, user && user[0] ? " by " : "", user ? user : "",
                          message && message[0] ? ": " : "", message ? message : "");
}

/* Tells the active updates of @p's stages to @act (pause, resume, abort,
 * roll back); refusals are only logged. */
typedef gboolean (*UpdateCall) (StgEngine *, const ApiJobUpdateKey *, const gchar *, const gchar *,
                                GError **);

static void
each_update (StgPlan *p, UpdateCall call, const gchar *user, const gchar *message,
             gboolean forward_only)
{
  StgEngine *e = p->engine;

  for (guint i = 0; i < p->stages->len; i++)
    {
      StgStage *s = stage_at (p, i);
      const gchar *uid = s->row.status == S (ROLLING_FORWARD)                 ? s->row.update_uid
                         : s->row.status == S (ROLLING_BACK) && !forward_only ? s->row.rollback_uid
                                                                              : NULL;
      StgUpdate *u = uid != NULL ? g_hash_table_lookup (e->updates, uid) : NULL;
      if (u == NULL)
        continue;
      if (call == stg_engine_resume_update &&
          u->status != API_JOB_UPDATE_STATUS_ROLL_FORWARD_PAUSED &&
          u->status != API_JOB_UPDATE_STATUS_ROLL_BACK_PAUSED)
        continue;
      g_autoptr (ApiJobUpdateKey) key = g_object_new (API_TYPE_JOB_UPDATE_KEY, "job", s->job, "id",
                                                      uid, NULL);
      g_autoptr (GError) error = NULL;
      if (!call (e, key, user, message, &error))
        g_message ("engine: plan %s stage %s: update %s: %s", p->row.uid, s->row.name, uid,
                   error->message);
    }
}

static void
stop_gates (StgPlan *p)
{
  for (guint i = 0; i < p->stages->len; i++)
    g_clear_pointer (&stage_at (p, i)->gate_run, stg_gate_run_free);
}

gboolean
stg_engine_pause_plan (StgEngine *e, const gchar *uid, const gchar *user, const gchar *message,
                       GError **error)
{
  StgPlan *p = find (e, uid, "pause", error);

  if (p == NULL)
    return FALSE;
  if (p->row.status == S (PAUSED))
    return TRUE;
  stop_gates (p);
  g_autofree gchar *why = by ("paused", user, message);
  plan_set (p, S (PAUSED), user, why);
  if (!end_step (p))
    return fail (error, STG_ENGINE_ERROR_FAILED, "the pause could not be stored");
  each_update (p, stg_engine_pause_update, user, "rollout plan paused", FALSE);
  return TRUE;
}

gboolean
stg_engine_resume_plan (StgEngine *e, const gchar *uid, const gchar *user, const gchar *message,
                        GError **error)
{
  StgPlan *p = find (e, uid, "resume", error);

  if (p == NULL)
    return FALSE;
  if (p->row.status != S (PAUSED))
    return fail (error, STG_ENGINE_ERROR_STATE,
                 "cannot resume rollout plan %s: it is %s, not PAUSED", uid,
                 stg_rollout_status_name (p->row.status));
  g_autofree gchar *why = by ("resumed", user, message);
  g_autofree gchar *forward_why = NULL;
  gint status = p->row.back ? S (ROLLING_BACK) : forward_status (p, &forward_why);
  plan_set (p, status, user, p->row.stopping ? p->row.reason : why);
  if (!end_step (p))
    return fail (error, STG_ENGINE_ERROR_FAILED, "the resume could not be stored");
  each_update (p, stg_engine_resume_update, user, "rollout plan resumed", FALSE);
  kick (p);
  return TRUE;
}

gboolean
stg_engine_abort_plan (StgEngine *e, const gchar *uid, const gchar *user, const gchar *message,
                       GError **error)
{
  StgPlan *p = find (e, uid, "abort", error);

  if (p == NULL)
    return FALSE;
  stop_gates (p);
  g_autofree gchar *why = by ("aborted", user, message);
  /* The plan's end is stored first: a crash before the updates are
   * aborted leaves them running, never a plan that goes back. */
  g_autoptr (GPtrArray) running_uids = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < p->stages->len; i++)
    {
      StgStage *s = stage_at (p, i);
      gint st = s->row.status;
      const gchar *u = st == S (ROLLING_FORWARD) ? s->row.update_uid
                       : st == S (ROLLING_BACK)  ? s->row.rollback_uid
                                                 : NULL;
      if (u != NULL && u[0] != '\0')
        g_ptr_array_add (running_uids,
                         g_object_new (API_TYPE_JOB_UPDATE_KEY, "job", s->job, "id", u, NULL));
      if (!stg_rollout_status_is_terminal (st))
        stage_set (s, S (ABORTED), user, why);
    }
  plan_set (p, S (ABORTED), user, why);
  if (!end_step (p))
    return fail (error, STG_ENGINE_ERROR_FAILED, "the abort could not be stored");
  plan_retire (p);
  for (guint i = 0; i < running_uids->len; i++)
    {
      g_autoptr (GError) local = NULL;
      if (!stg_engine_abort_update (e, running_uids->pdata[i], user, "rollout plan aborted",
                                    &local))
        g_message ("engine: plan %s: %s", uid, local->message);
    }
  return TRUE;
}

gboolean
stg_engine_rollback_plan (StgEngine *e, const gchar *uid, const gchar *user, const gchar *message,
                          GError **error)
{
  g_autoptr (GError) local = NULL;
  StgPlan *p = find (e, uid, "roll back", &local);

  if (p == NULL && g_error_matches (local, STG_ENGINE_ERROR, STG_ENGINE_ERROR_STATE))
    {
      /* An ended plan comes back into memory to go back. */
      g_autoptr (StgPlanRow) row = stg_store_get_plan (e->store, uid, error);
      if (row == NULL)
        {
          stg_engine_wrap_error (error);
          return FALSE;
        }
      if (row->status == S (ROLLED_BACK))
        return fail (error, STG_ENGINE_ERROR_STATE,
                     "cannot roll back rollout plan %s: it is ROLLED_BACK already", uid);
      for (guint i = 0; i < row->plan->stages->len; i++)
        {
          ApiRolloutStage *stage = row->plan->stages->pdata[i];
          StgPlan *other = plan_of_job (e, stage->request->taskConfig->job);
          if (other != NULL)
            {
              g_autofree gchar *name = stg_job_key_to_string (stage->request->taskConfig->job);
              return fail (error, STG_ENGINE_ERROR_ACTIVE_UPDATE,
                           "cannot roll back rollout plan %s: job %s is in active rollout plan %s",
                           uid, name, other->row.uid);
            }
        }
      p = plan_new (e, row);
      g_hash_table_insert (e->plans, p->row.uid, p);
    }
  else if (p == NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  if (p->row.status == S (ROLLING_BACK) && p->row.back)
    return fail (error, STG_ENGINE_ERROR_STATE,
                 "cannot roll back rollout plan %s: it is ROLLING_BACK already", uid);
  g_autofree gchar *why = by ("rolled back", user, message);
  p->row.stopping = TRUE;
  p->row.back = TRUE;
  plan_set (p, S (ROLLING_BACK), user, why);
  if (!end_step (p))
    return fail (error, STG_ENGINE_ERROR_FAILED, "the rollback could not be stored");
  /* The stages' running updates go back by themselves first; a paused one
   * is resumed going back. */
  each_update (p, stg_engine_rollback_update, user, "rollout plan rolled back", TRUE);
  each_update (p, stg_engine_resume_update, user, "rollout plan rolled back", FALSE);
  kick (p);
  return TRUE;
}

gboolean
stg_engine_approve_stage (StgEngine *e, const gchar *uid, const gchar *stage, const gchar *user,
                          const gchar *message, GError **error)
{
  StgPlan *p = find (e, uid, "approve a stage of", error);

  if (p == NULL)
    return FALSE;
  g_autofree gchar *why = by ("approved", user, message);
  guint approved = 0;
  for (guint i = 0; i < p->stages->len; i++)
    {
      StgStage *s = stage_at (p, i);
      gboolean named = stage != NULL && stage[0] != '\0';
      if (named && strcmp (s->row.name, stage) != 0)
        continue;
      if (named && !s->spec->requireApproval)
        return fail (error, STG_ENGINE_ERROR_STATE,
                     "stage '%s' of rollout plan %s needs no approval", stage, uid);
      if (named && s->row.approved_by != NULL)
        return fail (error, STG_ENGINE_ERROR_STATE,
                     "stage '%s' of rollout plan %s was approved already by %s", stage, uid,
                     s->row.approved_by);
      if (named && s->row.status != S (PENDING) && s->row.status != S (AWAITING_APPROVAL))
        return fail (error, STG_ENGINE_ERROR_STATE,
                     "stage '%s' of rollout plan %s is %s: nothing to approve", stage, uid,
                     stg_rollout_status_name (s->row.status));
      if (!named && s->row.status != S (AWAITING_APPROVAL))
        continue;
      g_free (s->row.approved_by);
      s->row.approved_by = g_strdup (user && user[0] ? user : "(unknown)");
      save_stage (s);
      plan_event (p, s->row.name, s->row.status, user, why);
      approved++;
    }
  if (approved == 0)
    {
      end_step (p);
      if (stage != NULL && stage[0] != '\0')
        return fail (error, STG_ENGINE_ERROR_NOT_FOUND, "rollout plan %s has no stage '%s'", uid,
                     stage);
      return fail (error, STG_ENGINE_ERROR_STATE, "no stage of rollout plan %s awaits approval",
                   uid);
    }
  if (!end_step (p))
    return fail (error, STG_ENGINE_ERROR_FAILED, "the approval could not be stored");
  kick (p);
  return TRUE;
}
