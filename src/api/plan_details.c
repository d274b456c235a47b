/* plan_details.c: a rollout plan as getRolloutPlanDetails and the web UI's
 * plan page show it, built from the store's rows (store/plans.c): each
 * stage's state, its job's versions and readiness (the engine's
 * plan_view.c: as the job stands now, or, once the plan has ended, where
 * the stage ended, as it recorded), what the plan found, and the
 * conditions of the plan and of each stage (conditions.c). Reads only;
 * calls the store and the engine's views and reason codes. Main-loop
 * thread only. */
#include "config.h"

#include "api/conditions.h"
#include "api/plan_details.h"
#include "common/enums.h"
#include "engine/engine.h"
#include "store/plans.h"

/* @code as recorded, else the status's own. */
static const gchar *
code_of (const gchar *code, gboolean stage, gint status)
{
  return code != NULL && code[0] != '\0' ? code : stg_rollout_reason (stage, status);
}

ApiRolloutPlanSummary *
stg_plan_summary_new (const StgPlanRow *row)
{
  return g_object_new (API_TYPE_ROLLOUT_PLAN_SUMMARY, "id", row->uid, "name", row->name, "status",
                       row->status, "sinceMs", row->since_ms, "reason", row->reason, "user",
                       row->user, "createdTimestampMs", row->created_ms, "stageCount",
                       row->stage_count, "stagesDone", row->stages_done, "rollbackOnFailure",
                       row->rollback_on_failure, "reasonCode",
                       code_of (row->reason_code, FALSE, row->status), NULL);
}

const gchar *
stg_plan_stage_role (const ApiRolloutStage *stage)
{
  return stage != NULL && stage->request != NULL && stage->request->taskConfig != NULL &&
                 stage->request->taskConfig->job != NULL
             ? stage->request->taskConfig->job->role
             : NULL;
}

/* The conditions of stage @row from the plan's @events (a stage that has
 * not moved yet is PENDING since the plan began). */
static GPtrArray *
stage_conditions (GPtrArray *events, const StgStageRow *row, gint64 created_ms)
{
  g_autoptr (GArray) changes = stg_conditions_plan_changes (events, row->name);

  if (changes->len == 0 || g_array_index (changes, StgStatusChange, 0).status != 0)
    {
      StgStatusChange first = { .timestamp_ms = created_ms,
                                .status = API_ROLLOUT_STATUS_PENDING,
                                .reason = stg_rollout_reason (TRUE, API_ROLLOUT_STATUS_PENDING) };
      g_array_prepend_val (changes, first);
    }
  return stg_conditions_build (STG_CONDITIONS_STAGE, (StgStatusChange *) changes->data,
                               changes->len);
}

static ApiRolloutStageState *
stage_state (StgStore *store, const ApiRolloutStage *spec, const StgStageRow *row,
             GPtrArray *events, gint64 created_ms, gboolean ended)
{
  const ApiJobKey *job = spec->request->taskConfig->job;
  GPtrArray *batch = spec->request->settings && spec->request->settings->__isset_batchGates
                         ? spec->request->settings->batchGates
                         : NULL;
  g_autoptr (GPtrArray) none = g_ptr_array_new ();
  g_autoptr (GPtrArray) conditions = stage_conditions (events, row, created_ms);
  const gchar *reason = ended && row->end_ms > 0 && row->end_message ? row->end_message
                                                                     : row->reason;
  ApiRolloutStageState *st =
      g_object_new (API_TYPE_ROLLOUT_STAGE_STATE, "name", row->name, "job", job, "status",
                    row->status, "sinceMs", row->since_ms, "reason", reason, "dependsOn",
                    spec->dependsOn ? spec->dependsOn : none, "requireApproval",
                    spec->requireApproval, "previousVersion",
                    row->prior_known && row->prior_config_id > 0
                        ? stg_store_config_version (store, row->prior_config_id)
                        : 0,
                    "before", spec->before ? spec->before : none, "after",
                    spec->after ? spec->after : none, "batchGates", batch ? batch : none,
                    "gatesPassed", row->gates_passed, "conditions", conditions, "reasonCode",
                    code_of (row->reason_code, TRUE, row->status), NULL);
  stg_plan_stage_view (store, spec, row, ended, st);
  if (row->update_uid != NULL)
    {
      g_autoptr (ApiJobUpdateKey) key = g_object_new (API_TYPE_JOB_UPDATE_KEY, "job", job, "id",
                                                      row->update_uid, NULL);
      g_object_set (st, "update", key, NULL);
    }
  if (row->rollback_uid != NULL && row->rollback_uid[0] != '\0')
    {
      g_autoptr (ApiJobUpdateKey) key = g_object_new (API_TYPE_JOB_UPDATE_KEY, "job", job, "id",
                                                      row->rollback_uid, NULL);
      g_object_set (st, "rollbackUpdate", key, NULL);
    }
  if (row->approved_by != NULL)
    g_object_set (st, "approvedBy", row->approved_by, NULL);
  return st;
}

ApiRolloutPlanDetails *
stg_plan_details_read (StgStore *store, const gchar *uid, GError **error)
{
  g_autoptr (GPtrArray) events = NULL;
  g_autoptr (GPtrArray) gates = NULL;

  g_autoptr (StgPlanRow) row = stg_store_get_plan (store, uid, error);
  if (row == NULL || !stg_store_list_plan_events (store, row->id, &events, &gates, error))
    return NULL;
  g_autoptr (ApiRolloutPlanSummary) summary = stg_plan_summary_new (row);
  g_autoptr (GArray) changes = stg_conditions_plan_changes (events, NULL);
  g_autoptr (GPtrArray) conditions = stg_conditions_build (STG_CONDITIONS_PLAN,
                                                           (StgStatusChange *) changes->data,
                                                           changes->len);
  ApiRolloutPlanDetails *d = g_object_new (API_TYPE_ROLLOUT_PLAN_DETAILS, "summary", summary,
                                           "plan", row->plan, "conditions", conditions, NULL);
  gboolean ended = stg_rollout_status_is_terminal (row->status);
  for (guint i = 0; i < row->stages->len; i++)
    g_ptr_array_add (d->stages, stage_state (store, row->plan->stages->pdata[i],
                                             &g_array_index (row->stages, StgStageRow, i), events,
                                             row->created_ms, ended));
  for (guint i = 0; i < events->len; i++)
    g_ptr_array_add (d->events, g_object_ref (events->pdata[i]));
  for (guint i = 0; i < gates->len; i++)
    g_ptr_array_add (d->gateResults, g_object_ref (gates->pdata[i]));
  return d;
}
