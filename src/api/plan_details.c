/* plan_details.c: a rollout plan as getRolloutPlanDetails and the web UI's
 * plan page show it, built from the store's rows (store/plans.c): each
 * stage's state, and the versions of its job from the job's configuration
 * history (what most instances should run now, what the stage's update
 * moves to, what the plan found, where it moves the job now), its
 * readiness (how many instances run that configuration healthy, of how
 * many, and why each other one is not ready, from the instance rows the
 * runtime keeps and their last events), and the conditions of the plan
 * and of each stage (conditions.c). Reads only; calls the store and the
 * engine's reason codes. Main-loop thread only. */
#include "config.h"

#include "api/conditions.h"
#include "api/plan_details.h"
#include "common/enums.h"
#include "engine/engine.h"

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

/* Why instance @r of a job is not ready on @target, or NULL when it is
 * (@last: its newest event, nullable). */
static gchar *
unready_reason (StgStore *store, const StgInstanceRow *r, gint64 target, ApiTaskEvent *last)
{
  const gchar *said = last != NULL && last->__isset_message && last->message != NULL &&
                              last->message[0] != '\0'
                          ? last->message
                          : NULL;

  if (r->config_id != target)
    return g_strdup_printf ("should run version %d, not %d",
                            stg_store_config_version (store, target),
                            stg_store_config_version (store, r->config_id));
  if (r->run_config_id != target && r->run_config_id != 0)
    return g_strdup_printf ("runs version %d; version %d %s",
                            stg_store_config_version (store, r->run_config_id),
                            stg_store_config_version (store, target),
                            said ? said : "is not running yet");
  if (r->status == API_SCHEDULE_STATUS_RUNNING && r->run_config_id == target)
    return NULL;
  return g_strdup_printf ("%s%s%s", stg_schedule_status_name (r->status), said ? ": " : "",
                          said ? said : "");
}

/* How many of @job's instances 0..@desired-1 run @target healthy, and why
 * each other one does not. */
static void
readiness (StgStore *store, const ApiJobKey *job, gint64 target, gint32 desired,
           ApiRolloutStageState *st)
{
  g_autoptr (StgJobRow) row = stg_store_get_job (store, job, NULL);
  g_autoptr (GArray) rows = row ? stg_store_list_instances (store, row->id, NULL) : NULL;
  g_autoptr (GHashTable) last = row ? stg_store_job_last_task_events (store, row->id, NULL) : NULL;
  gint32 ready = 0;
  guint k = 0; /* rows are in instance order */

  for (gint32 i = 0; i < desired; i++)
    {
      while (rows != NULL && k < rows->len &&
             g_array_index (rows, StgInstanceRow, k).instance_id < i)
        k++;
      const StgInstanceRow *r = rows != NULL && k < rows->len &&
                                        g_array_index (rows, StgInstanceRow, k).instance_id == i
                                    ? &g_array_index (rows, StgInstanceRow, k)
                                    : NULL;
      ApiTaskEvent *ev = r && last ? g_hash_table_lookup (last, GINT_TO_POINTER (i)) : NULL;
      g_autofree gchar *why = r != NULL ? unready_reason (store, r, target, ev)
                                        : g_strdup ("missing: not started yet");
      if (why == NULL)
        ready++;
      else
        g_ptr_array_add (st->unready,
                         g_object_new (API_TYPE_UNREADY_INSTANCE, "instanceId", i, "status",
                                       r != NULL ? r->status : API_SCHEDULE_STATUS_PENDING,
                                       "reason", why, NULL));
    }
  g_object_set (st, "readyInstances", ready, "desiredInstances", desired, NULL);
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
             GPtrArray *events, gint64 created_ms)
{
  const ApiJobKey *job = spec->request->taskConfig->job;
  gint desired = 0;
  gint64 desired_config = 0;
  GPtrArray *batch = spec->request->settings && spec->request->settings->__isset_batchGates
                         ? spec->request->settings->batchGates
                         : NULL;

  if (row->update_uid != NULL)
    {
      g_autoptr (StgUpdateRow) u = stg_store_get_update (store, row->update_uid, NULL);
      if (u != NULL && u->desired_config_id > 0)
        {
          desired_config = u->desired_config_id;
          desired = stg_store_config_version (store, u->desired_config_id);
        }
    }
  g_autoptr (GPtrArray) none = g_ptr_array_new ();
  g_autoptr (GPtrArray) conditions = stage_conditions (events, row, created_ms);
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
                    "gatesPassed", row->gates_passed, "conditions", conditions, "reasonCode",
                    code_of (row->reason_code, TRUE, row->status), NULL);
  /* Where it moves its job now: back to what the plan found once it goes
   * back (where a rollback ended), forward to its update's configuration,
   * and, before its update, the job as it is. */
  gboolean back = row->rolled || row->status == API_ROLLOUT_STATUS_ROLLING_BACK ||
                  row->status == API_ROLLOUT_STATUS_ROLLED_BACK;
  gint64 target = 0;
  gint32 want = 0;
  if (back && row->prior_known)
    {
      target = row->prior_config_id;
      want = target != 0 ? row->prior_count : 0;
    }
  else if (desired_config != 0)
    {
      target = desired_config;
      want = spec->request->instanceCount;
    }
  else
    {
      g_autoptr (StgJobRow) j = stg_store_get_job (store, job, NULL);
      if (j != NULL && stg_store_main_config (store, j->id, &target, NULL) && target != 0)
        want = j->instance_count;
    }
  g_object_set (st, "targetVersion", target != 0 ? stg_store_config_version (store, target) : 0,
                NULL);
  readiness (store, job, target, want, st);
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
  for (guint i = 0; i < row->stages->len; i++)
    g_ptr_array_add (d->stages, stage_state (store, row->plan->stages->pdata[i],
                                             &g_array_index (row->stages, StgStageRow, i), events,
                                             row->created_ms));
  for (guint i = 0; i < events->len; i++)
    g_ptr_array_add (d->events, g_object_ref (events->pdata[i]));
  for (guint i = 0; i < gates->len; i++)
    g_ptr_array_add (d->gateResults, g_object_ref (gates->pdata[i]));
  return d;
}
