/* handler_plans.c: StgHandler's rollout plan methods (StaggerScheduler):
 * startRolloutPlan and the calls that change a plan go to the engine, after
 * checking that the caller may change every job the plan updates; the reads
 * (getRolloutPlans, getRolloutPlanDetails) come from the store, the
 * details through plan_details.c, which the web UI shares; the dry run
 * (getRolloutPlanDiff) is the engine's, a read.
 * Main-loop thread only. */
#include "config.h"

#include "api/handler_private.h"
#include "api/plan_details.h"
#include "store/plans.h"

#define PLAN_LIST_MAX 1000

/* Whether the caller may change every job of @plan (answering AUTH_FAILED
 * when not). */
static gboolean
allowed_plan (StgHandler *self, ApiResponse *response, const gchar *method,
              const ApiRolloutPlan *plan)
{
  if (plan == NULL || plan->stages == NULL || plan->stages->len == 0)
    return stg_handler_allowed (self, response, method, NULL, TRUE);
  for (guint i = 0; i < plan->stages->len; i++)
    {
      const gchar *role = stg_plan_stage_role (plan->stages->pdata[i]);
      if (!stg_handler_allowed (self, response, method, role, TRUE))
        return FALSE;
    }
  return TRUE;
}

static gboolean
handler_start_rollout_plan (ApiStaggerSchedulerIf *iface, ApiResponse **_return,
                            const ApiRolloutPlan *plan, const gchar *message, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  (void) unused;

  if (!allowed_plan (self, *_return, "startRolloutPlan", plan))
    return TRUE;
  g_autofree gchar *id = stg_engine_start_plan (self->ctx.engine, plan, self->user, message,
                                                &error);
  if (id == NULL)
    return stg_handler_answer_error (self, *_return, "startRolloutPlan", error);
  g_autoptr (ApiStartRolloutPlanResult) r = g_object_new (API_TYPE_START_ROLLOUT_PLAN_RESULT, "id",
                                                          id, NULL);
  return stg_handler_answer_ok (self, *_return, "startRolloutPlanResult", r);
}

/* A dry run: a read, which the read-only port serves too. */
static gboolean
handler_get_rollout_plan_diff (ApiStaggerSchedulerIf *iface, ApiResponse **_return,
                               const ApiRolloutPlan *plan, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "getRolloutPlanDiff", NULL, FALSE))
    return TRUE;
  g_autoptr (ApiGetRolloutPlanDiffResult) r = stg_engine_plan_diff (self->ctx.engine, plan, &error);
  if (r == NULL)
    return stg_handler_answer_error (self, *_return, "getRolloutPlanDiff", error);
  return stg_handler_answer_ok (self, *_return, "getRolloutPlanDiffResult", r);
}

static gboolean
handler_get_rollout_plans (ApiStaggerSchedulerIf *iface, ApiResponse **_return,
                           const ApiRolloutPlanQuery *query, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "getRolloutPlans", NULL, FALSE))
    return TRUE;
  const gchar *name = query && query->__isset_name && query->name && query->name[0] ? query->name
                                                                                    : NULL;
  gboolean active = query && query->__isset_activeOnly && query->activeOnly;
  gint32 offset = query ? query->offset : 0, limit = query ? query->limit : 0;
  if (offset < 0 || limit < 0 || limit > PLAN_LIST_MAX)
    {
      stg_response_fail (*_return, self->ctx.cluster, API_RESPONSE_CODE_INVALID_REQUEST,
                         "getRolloutPlans: offset must be >= 0 and limit between 0 and %d",
                         PLAN_LIST_MAX);
      return TRUE;
    }
  g_autoptr (GPtrArray) rows = stg_store_list_plans (self->ctx.store, name, active, (guint) offset,
                                                     (guint) limit, &error);
  if (rows == NULL)
    return stg_handler_answer_error (self, *_return, "getRolloutPlans", error);
  g_autoptr (ApiGetRolloutPlansResult) r = g_object_new (API_TYPE_GET_ROLLOUT_PLANS_RESULT, NULL);
  for (guint i = 0; i < rows->len; i++)
    {
      g_ptr_array_add (r->plans, stg_plan_summary_new (rows->pdata[i]));
    }
  return stg_handler_answer_ok (self, *_return, "getRolloutPlansResult", r);
}

static gboolean
handler_get_rollout_plan_details (ApiStaggerSchedulerIf *iface, ApiResponse **_return,
                                  const gchar *id, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "getRolloutPlanDetails", NULL, FALSE))
    return TRUE;
  if (id == NULL || id[0] == '\0')
    {
      stg_response_fail (*_return, self->ctx.cluster, API_RESPONSE_CODE_INVALID_REQUEST,
                         "getRolloutPlanDetails: give the plan's id");
      return TRUE;
    }
  g_autoptr (ApiRolloutPlanDetails) d = stg_plan_details_read (self->ctx.store, id, &error);
  if (d == NULL)
    return stg_handler_answer_error (self, *_return, "getRolloutPlanDetails", error);
  g_autoptr (ApiGetRolloutPlanDetailsResult) r =
      g_object_new (API_TYPE_GET_ROLLOUT_PLAN_DETAILS_RESULT, "details", d, NULL);
  return stg_handler_answer_ok (self, *_return, "getRolloutPlanDetailsResult", r);
}

/* The plan @id, for a call that changes it: the caller needs every role
 * of its jobs. NULL when the call was answered (refused, or no plan). */
static StgPlanRow *
plan_to_change (StgHandler *self, ApiResponse *response, const gchar *method, const gchar *id)
{
  g_autoptr (GError) error = NULL;

  if (id == NULL || id[0] == '\0')
    {
      if (stg_handler_allowed (self, response, method, NULL, FALSE))
        stg_response_fail (response, self->ctx.cluster, API_RESPONSE_CODE_INVALID_REQUEST,
                           "%s: give the plan's id", method);
      return NULL;
    }
  g_autoptr (StgPlanRow) row = stg_store_get_plan (self->ctx.store, id, &error);
  if (row == NULL)
    {
      if (stg_handler_allowed (self, response, method, NULL, FALSE))
        stg_handler_answer_error (self, response, method, error);
      return NULL;
    }
  if (!allowed_plan (self, response, method, row->plan))
    return NULL;
  return g_steal_pointer (&row);
}

static gboolean
answer (StgHandler *self, ApiResponse *response, const gchar *method, gboolean ok, GError *error)
{
  if (!ok)
    return stg_handler_answer_error (self, response, method, error);
  return stg_handler_answer_ok (self, response, NULL, NULL);
}

typedef gboolean (*PlanCall) (StgEngine *engine, const gchar *uid, const gchar *user,
                              const gchar *message, GError **error);

/* A call that changes plan @id and answers nothing else. */
static gboolean
plan_call (StgHandler *self, ApiResponse *response, const gchar *method, PlanCall call,
           const gchar *id, const gchar *message)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (StgPlanRow) row = plan_to_change (self, response, method, id);

  if (row == NULL)
    return TRUE;
  gboolean ok = call (self->ctx.engine, id, self->user, message, &error);
  return answer (self, response, method, ok, error);
}

static gboolean
handler_pause_rollout_plan (ApiStaggerSchedulerIf *iface, ApiResponse **_return, const gchar *id,
                            const gchar *message, GError **unused)
{
  (void) unused;
  return plan_call (HANDLER (iface), *_return, "pauseRolloutPlan", stg_engine_pause_plan, id,
                    message);
}

static gboolean
handler_resume_rollout_plan (ApiStaggerSchedulerIf *iface, ApiResponse **_return, const gchar *id,
                             const gchar *message, GError **unused)
{
  (void) unused;
  return plan_call (HANDLER (iface), *_return, "resumeRolloutPlan", stg_engine_resume_plan, id,
                    message);
}

static gboolean
handler_abort_rollout_plan (ApiStaggerSchedulerIf *iface, ApiResponse **_return, const gchar *id,
                            const gchar *message, GError **unused)
{
  (void) unused;
  return plan_call (HANDLER (iface), *_return, "abortRolloutPlan", stg_engine_abort_plan, id,
                    message);
}

static gboolean
handler_rollback_rollout_plan (ApiStaggerSchedulerIf *iface, ApiResponse **_return, const gchar *id,
                               const gchar *message, GError **unused)
{
  (void) unused;
  return plan_call (HANDLER (iface), *_return, "rollbackRolloutPlan", stg_engine_rollback_plan, id,
                    message);
}

static gboolean
handler_approve_rollout_stage (ApiStaggerSchedulerIf *iface, ApiResponse **_return, const gchar *id,
                               const gchar *stage, const gchar *message, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  g_autoptr (StgPlanRow) row = plan_to_change (self, *_return, "approveRolloutStage", id);
  (void) unused;

  if (row == NULL)
    return TRUE;
  gboolean ok = stg_engine_approve_stage (self->ctx.engine, id, stage, self->user, message, &error);
  return answer (self, *_return, "approveRolloutStage", ok, error);
}

const StgHandlerMethod stg_handler_plan_methods[] = {
  STG_STAGGER_METHOD (start_rollout_plan, handler_start_rollout_plan),
  STG_STAGGER_METHOD (get_rollout_plans, handler_get_rollout_plans),
  STG_STAGGER_METHOD (get_rollout_plan_details, handler_get_rollout_plan_details),
  STG_STAGGER_METHOD (pause_rollout_plan, handler_pause_rollout_plan),
  STG_STAGGER_METHOD (resume_rollout_plan, handler_resume_rollout_plan),
  STG_STAGGER_METHOD (abort_rollout_plan, handler_abort_rollout_plan),
  STG_STAGGER_METHOD (rollback_rollout_plan, handler_rollback_rollout_plan),
  STG_STAGGER_METHOD (approve_rollout_stage, handler_approve_rollout_stage),
  STG_STAGGER_METHOD (get_rollout_plan_diff, handler_get_rollout_plan_diff),
  { 0, NULL },
};
