/* plan_calls.c: the engine's rollout plan calls: starting a plan (every
 * stage checked as startJobUpdate checks its request, names, dependencies,
 * one stage a job and one active plan a job, gates), and pause, resume,
 * abort, rollback and approve, each stored before the stages' updates are
 * told; and startJobUpdate, which refuses a job an active plan has yet to
 * update. Calls plan.c, plan_state.c and control.c. Main-loop thread only.
 */
#include "config.h"

#include <string.h>

#include "common/enums.h"
#include "common/error.h"
#include "common/jobkey.h"
#include "engine/gate_private.h"
#include "engine/notice_private.h"
#include "engine/plan_private.h"
#include "engine/step_private.h"
#include "engine/update_private.h"
#include "store/plans.h"

#define fail(error, code, ...) stg_fail (error, STG_ENGINE_ERROR, code, __VA_ARGS__)

#define MAX_STAGES 100
#define MAX_GATES 100
#define MAX_VARIABLES 100

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
        if (stg_job_key_equal (stg_plan_stage (p, i)->job, job))
          return p;
    }
  return NULL;
}

/* The stage of an active plan, still going forward, that has yet to start
 * @job's update (pending, awaiting approval or its before gates), or NULL. */
static StgStage *
stage_ahead (StgEngine *e, const ApiJobKey *job)
{
  StgPlan *p = plan_of_job (e, job);

  if (p == NULL || p->row.stopping || p->row.back)
    return NULL;
  for (guint i = 0; i < p->stages->len; i++)
    {
      StgStage *s = stg_plan_stage (p, i);
      gint status = s->row.status;
      if (stg_job_key_equal (s->job, job) &&
          (status == S (PENDING) || status == S (AWAITING_APPROVAL) ||
           (status == S (WAITING_FOR_GATE) && s->row.update_uid == NULL)))
        return s;
    }
  return NULL;
}

/* startJobUpdate: refused for a job an active plan has yet to update,
 * unless the request overrides the plan. */
ApiJobUpdateKey *
stg_engine_start_update (StgEngine *e, const ApiJobUpdateRequest *request, const gchar *user,
                         const gchar *message, ApiJobUpdateSummary **active_out, GError **error)
{
  const ApiJobKey *job = request != NULL && request->taskConfig != NULL ? request->taskConfig->job
                                                                        : NULL;
  gboolean override = request != NULL && request->__isset_overridePlan && request->overridePlan;
  StgStage *s = job != NULL && !override ? stage_ahead (e, job) : NULL;

  if (s != NULL)
    {
      g_autofree gchar *name = stg_job_key_to_string (job);
      fail (error, STG_ENGINE_ERROR_UPDATING,
            "job %s: rollout plan %s (%s) has not reached it yet (its stage '%s' is %s): wait "
            "for the plan or abort it, or override the plan (overridePlan; stagger update start "
            "--force)",
            name, s->plan->row.name, s->plan->row.uid, s->spec->name,
            stg_rollout_status_name (s->row.status));
      return NULL;
    }
  return stg_update_start (e, request, user, message, NULL, NULL, active_out, error);
}

/* Checks stage @i of @plan as starting it would (@starting: also that no
 * active plan has its job). */
static gboolean
check_stage (StgEngine *e, const ApiRolloutPlan *plan, guint i, gboolean starting, GError **error)
{
  const ApiRolloutStage *s = plan->stages->pdata[i];
  g_autofree gchar *what = g_strdup_printf ("plan.stages[%u]", i);

  if (s == NULL)
    return fail (error, STG_ENGINE_ERROR_INVALID, "%s is missing", what);
  if (!name_ok (s->name))
    return fail (error, STG_ENGINE_ERROR_INVALID,
                 "%s.name must be 1 to 100 letters, digits, '.', '_' or '-'", what);
  if (stg_plan_stage_index (plan, s->name, i) >= 0)
    return fail (error, STG_ENGINE_ERROR_INVALID, "%s.name: two stages are named '%s'", what,
                 s->name);
  for (guint d = 0; s->dependsOn != NULL && d < s->dependsOn->len; d++)
    {
      const gchar *dep = s->dependsOn->pdata[d];
      if (stg_plan_stage_index (plan, dep, i) < 0)
        return fail (error, STG_ENGINE_ERROR_INVALID,
                     "%s.dependsOn names '%s', which is not an earlier stage", what,
                     dep ? dep : "");
    }
  if (s->request == NULL || s->request->taskConfig == NULL || !s->request->__isset_taskConfig ||
      s->request->taskConfig->job == NULL)
    return fail (error, STG_ENGINE_ERROR_INVALID, "%s.request.taskConfig.job is missing", what);
  g_autoptr (ApiGetJobUpdateDiffResult) diff = stg_engine_diff (e, s->request, FALSE, error);
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
  StgPlan *busy = starting ? plan_of_job (e, job) : NULL;
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

/* The plan variables it was read with: names of letters, digits and '_'
 * (not first a digit), values of UTF-8, both bounded. */
static gboolean
check_variables (const ApiRolloutPlan *plan, GError **error)
{
  GHashTableIter it;
  gpointer key, value;

  if (!plan->__isset_variables || plan->variables == NULL)
    return TRUE;
  if (g_hash_table_size (plan->variables) > MAX_VARIABLES)
    return fail (error, STG_ENGINE_ERROR_INVALID, "plan.variables has %u variables; at most %d",
                 g_hash_table_size (plan->variables), MAX_VARIABLES);
  g_hash_table_iter_init (&it, plan->variables);
  while (g_hash_table_iter_next (&it, &key, &value))
    {
      const gchar *name = key, *text = value;
      gboolean ok = name != NULL && name[0] != '\0' && strlen (name) <= 100 &&
                    !g_ascii_isdigit (name[0]);
      for (const gchar *c = name; ok && *c; c++)
        ok = g_ascii_isalnum (*c) || *c == '_';
      if (!ok)
        return fail (error, STG_ENGINE_ERROR_INVALID,
                     "plan.variables: '%s' is not a variable name (1 to 100 letters, digits or "
                     "'_', not first a digit)",
                     name ? name : "");
      if (text == NULL || strlen (text) > 4096 || !g_utf8_validate (text, -1, NULL))
        return fail (error, STG_ENGINE_ERROR_INVALID,
                     "plan.variables: the value of '%s' must be up to 4096 bytes of UTF-8", name);
    }
  return TRUE;
}

/* Checks @plan as a whole, and each stage (@starting: as starting it). */
static gboolean
check_plan (StgEngine *e, const ApiRolloutPlan *plan, gboolean starting, GError **error)
{
  if (plan == NULL)
    return fail (error, STG_ENGINE_ERROR_INVALID, "plan is missing");
  if (plan->name == NULL || !name_ok (plan->name))
    return fail (error, STG_ENGINE_ERROR_INVALID,
                 "plan.name must be 1 to 100 letters, digits, '.', '_' or '-'");
  if (plan->stages == NULL || plan->stages->len == 0 || plan->stages->len > MAX_STAGES)
    return fail (error, STG_ENGINE_ERROR_INVALID, "plan.stages must hold 1 to %d stages, not %u",
                 MAX_STAGES, plan->stages ? plan->stages->len : 0);
  if (!check_variables (plan, error))
    return FALSE;
  for (guint i = 0; i < plan->stages->len; i++)
    if (!check_stage (e, plan, i, starting, error))
      return FALSE;
  return TRUE;
}

ApiGetRolloutPlanDiffResult *
stg_engine_plan_diff (StgEngine *e, const ApiRolloutPlan *plan, GError **error)
{
  if (!check_plan (e, plan, FALSE, error))
    return NULL;
  g_autoptr (ApiGetRolloutPlanDiffResult) r = g_object_new (API_TYPE_GET_ROLLOUT_PLAN_DIFF_RESULT,
                                                            NULL);
  for (guint i = 0; i < plan->stages->len; i++)
    {
      const ApiRolloutStage *s = plan->stages->pdata[i];
      g_autoptr (ApiGetJobUpdateDiffResult) diff = stg_engine_diff (e, s->request, TRUE, error);
      if (diff == NULL)
        {
          g_prefix_error (error, "plan.stages[%u]: ", i);
          return NULL;
        }
      gboolean changes = g_hash_table_size (diff->add) + g_hash_table_size (diff->remove) +
                             g_hash_table_size (diff->update) >
                         0;
      g_autoptr (StgJobRow) job = stg_store_get_job (e->store, s->request->taskConfig->job, NULL);
      gint64 config = 0;
      gint version = job != NULL && stg_store_main_config (e->store, job->id, &config, NULL) &&
                             config != 0
                         ? stg_store_config_version (e->store, config)
                         : 0;
      g_ptr_array_add (r->stages, g_object_new (API_TYPE_ROLLOUT_STAGE_DIFF, "name", s->name, "job",
                                                s->request->taskConfig->job, "changes", changes,
                                                "diff", diff, "currentVersion", version, NULL));
    }
  return g_steal_pointer (&r);
}

/* Records, for each stage of new plan @row, the stored config equal to
 * the one its job file makes: the version the plan will bring, shown
 * before the stage's update starts. */
static gboolean
record_planned (StgEngine *e, const StgPlanRow *row, GError **error)
{
  for (guint i = 0; i < row->plan->stages->len; i++)
    {
      const ApiRolloutStage *s = row->plan->stages->pdata[i];
      gint64 id = stg_update_stored_config (e, s->request);
      if (id != 0 && !stg_store_set_stage_planned (e->store, row->id, (gint) i, id, error))
        return FALSE;
    }
  return TRUE;
}

gchar *
stg_engine_start_plan (StgEngine *e, const ApiRolloutPlan *plan, const gchar *user,
                       const gchar *message, GError **error)
{
  if (!check_plan (e, plan, TRUE, error))
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
  row->reason_code = g_strdup (STG_REASON_STARTED);
  row->plan = stg_thrift_copy ((gpointer) plan);
  g_autoptr (GError) local = NULL;
  const gchar *said = message && message[0] ? message : "started";

  stg_engine_step_begin (e);
  if (!stg_store_insert_plan (e->store, row, row->plan, &local) ||
      !record_planned (e, row, &local) ||
      !stg_store_add_plan_event (e->store, row->id, NULL, now, S (PENDING), STG_REASON_STARTED,
                                 user, said, &local))
    {
      stg_engine_step_fail (e, local);
      stg_engine_step_end (e, NULL);
      g_propagate_error (error, g_steal_pointer (&local));
      stg_engine_wrap_error (error);
      return NULL;
    }
  stg_engine_announce_plan (e, uid);
  StgNotice n = { .event = "plan",
                  .status = stg_rollout_status_name (S (PENDING)),
                  .reason = STG_REASON_STARTED,
                  .message = said,
                  .user = user,
                  .timestamp_ms = now,
                  .plan_id = uid,
                  .plan_name = plan->name };
  stg_engine_notice (e, &n);
  if (!stg_engine_step_end (e, error))
    return NULL;
  g_autoptr (StgPlanRow) stored = stg_store_get_plan (e->store, uid, error);
  if (stored == NULL)
    {
      stg_engine_wrap_error (error);
      return NULL;
    }
  StgPlan *p = stg_plan_new (e, stored);
  g_hash_table_insert (e->plans, p->row.uid, p);
  stg_plan_kick (p);
  return g_steal_pointer (&uid);
}

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
      StgStage *s = stg_plan_stage (p, i);
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
    g_clear_pointer (&stg_plan_stage (p, i)->gate_run, stg_gate_run_free);
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
  stg_plan_set (p, S (PAUSED), NULL, user, why);
  if (!stg_plan_end_step (p))
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
  gint status = p->row.back ? S (ROLLING_BACK) : stg_plan_forward_status (p, &forward_why);
  stg_plan_set (p, status, STG_REASON_RESUMED, user, p->row.stopping ? p->row.reason : why);
  if (!stg_plan_end_step (p))
    return fail (error, STG_ENGINE_ERROR_FAILED, "the resume could not be stored");
  each_update (p, stg_engine_resume_update, user, "rollout plan resumed", FALSE);
  stg_plan_kick (p);
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
      StgStage *s = stg_plan_stage (p, i);
      gint st = s->row.status;
      const gchar *u = st == S (ROLLING_FORWARD) ? s->row.update_uid
                       : st == S (ROLLING_BACK)  ? s->row.rollback_uid
                                                 : NULL;
      if (u != NULL && u[0] != '\0')
        g_ptr_array_add (running_uids,
                         g_object_new (API_TYPE_JOB_UPDATE_KEY, "job", s->job, "id", u, NULL));
      if (!stg_rollout_status_is_terminal (st))
        stg_stage_set (s, S (ABORTED), NULL, user, why);
    }
  stg_plan_set (p, S (ABORTED), NULL, user, why);
  if (!stg_plan_end_step (p))
    return fail (error, STG_ENGINE_ERROR_FAILED, "the abort could not be stored");
  stg_plan_retire (p);
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
      p = stg_plan_new (e, row);
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
  stg_plan_set (p, S (ROLLING_BACK), STG_REASON_ROLLBACK_REQUESTED, user, why);
  if (!stg_plan_end_step (p))
    return fail (error, STG_ENGINE_ERROR_FAILED, "the rollback could not be stored");
  /* The stages' running updates go back by themselves first; a paused one
   * is resumed going back. */
  each_update (p, stg_engine_rollback_update, user, "rollout plan rolled back", TRUE);
  each_update (p, stg_engine_resume_update, user, "rollout plan rolled back", FALSE);
  stg_plan_kick (p);
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
      StgStage *s = stg_plan_stage (p, i);
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
      stg_stage_save (s);
      stg_plan_event (p, s->row.name, s->row.status, s->row.reason_code, user, why);
      approved++;
    }
  if (approved == 0)
    {
      stg_plan_end_step (p);
      if (stage != NULL && stage[0] != '\0')
        return fail (error, STG_ENGINE_ERROR_NOT_FOUND, "rollout plan %s has no stage '%s'", uid,
                     stage);
      return fail (error, STG_ENGINE_ERROR_STATE, "no stage of rollout plan %s awaits approval",
                   uid);
    }
  if (!stg_plan_end_step (p))
    return fail (error, STG_ENGINE_ERROR_FAILED, "the approval could not be stored");
  stg_plan_kick (p);
  return TRUE;
}
