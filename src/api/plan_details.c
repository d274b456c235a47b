/* plan_details.c: a rollout plan as getRolloutPlanDetails and the web UI's
 * plan page show it, built from the store's rows (store/plans.c): each
 * stage's state, and the versions of its job from the job's configuration
 * history (what most instances should run now, what the stage's update
 * moves to, what the plan found). Reads only; calls the store.
 * Main-loop thread only. */
#include "config.h"

#include "api/plan_details.h"

ApiRolloutPlanSummary *
stg_plan_summary_new (const StgPlanRow *row)
{
  return g_object_new (API_TYPE_ROLLOUT_PLAN_SUMMARY, "id", row->uid, "name", row->name, "status",
                       row->status, "sinceMs", row->since_ms, "reason", row->reason, "user",
                       row->user, "createdTimestampMs", row->created_ms, "stageCount",
                       row->stage_count, "stagesDone", row->stages_done, "rollbackOnFailure",
                       row->rollback_on_failure, NULL);
}

const gchar *
stg_plan_stage_role (const ApiRolloutStage *stage)
{
  return stage != NULL && stage->request != NULL && stage->request->taskConfig != NULL &&
                 stage->request->taskConfig->job != NULL
             ? stage->request->taskConfig->job->role
             : NULL;
}

/* The version most of @job's instances should run now (0: none). */
static gint
current_version (StgStore *store, const ApiJobKey *job)
{
  g_autoptr (StgJobRow) row = stg_store_get_job (store, job, NULL);
  if (row == NULL)
    return 0;
  gint64 best = 0;
  if (!stg_store_main_config (store, row->id, &best, NULL))
    return 0;
  return best ? stg_store_config_version (store, best) : 0;
}

static ApiRolloutStageState *
stage_state (StgStore *store, const ApiRolloutStage *spec, const StgStageRow *row)
{
  const ApiJobKey *job = spec->request->taskConfig->job;
  gint desired = 0;
  GPtrArray *batch = spec->request->settings && spec->request->settings->__isset_batchGates
                         ? spec->request->settings->batchGates
                         : NULL;

  if (row->update_uid != NULL)
    {
      g_autoptr (StgUpdateRow) u = stg_store_get_update (store, row->update_uid, NULL);
      if (u != NULL && u->desired_config_id > 0)
        desired = stg_store_config_version (store, u->desired_config_id);
    }
  g_autoptr (GPtrArray) none = g_ptr_array_new ();
  ApiRolloutStageState *st =
      g_object_new (API_TYPE_ROLLOUT_STAGE_STATE, "name", row->name, "job", job, "status",
                    row->status, "sinceMs", row->since_ms, "reason", row->reason, "dependsOn",
                    spec->dependsOn ? spec->dependsOn : none, "requireApproval",
                    spec->requireApproval, "currentVersion", current_version (store, job),
                    "desiredVersion", desired, "previousVersion",
                    row->prior_known && row->prior_config_id > 0
                        ? stg_store_config_version (store, row->prior_config_id)
                        : 0,
                    "before", spec->before ? spec->before : none, "after",
                    spec->after ? spec->after : none, "batchGates", batch ? batch : none,
                    "gatesPassed", row->gates_passed, NULL);
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
  ApiRolloutPlanDetails *d = g_object_new (API_TYPE_ROLLOUT_PLAN_DETAILS, "summary", summary,
                                           "plan", row->plan, NULL);
  for (guint i = 0; i < row->stages->len; i++)
    g_ptr_array_add (d->stages, stage_state (store, row->plan->stages->pdata[i],
                                             &g_array_index (row->stages, StgStageRow, i)));
  for (guint i = 0; i < events->len; i++)
    g_ptr_array_add (d->events, g_object_ref (events->pdata[i]));
  for (guint i = 0; i < gates->len; i++)
    g_ptr_array_add (d->gateResults, g_object_ref (gates->pdata[i]));
  return d;
}
