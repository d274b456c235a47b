/* handler_aurora.c: StgHandler's methods for the calls Aurora's client
 * makes around jobs: getTierConfigs (the engine's tiers), populateJobConfig
 * (a job checked as createJob would, its task config populated),
 * getPendingReason (Aurora's query rules; a PENDING task's reason is what
 * the runtime last said of it: the fleet's placement, the local start
 * queue and constraints; a THROTTLED task's, its restart back-off),
 * getRoleSummary (from the store), and the cron calls, refused: Stagger
 * runs no cron jobs. Main-loop thread only.
 */
#include "config.h"

#include "api/handler_private.h"
#include "common/jobkey.h"

#define NO_CRON "cron jobs are not supported by Stagger"

static gboolean
handler_get_tier_configs (ApiReadOnlySchedulerIf *iface, ApiResponse **_return, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "getTierConfigs", NULL, FALSE))
    return TRUE;
  const StgTiers *tiers = stg_engine_tiers (self->ctx.engine);
  g_autoptr (ApiGetTierConfigResult) tr = g_object_new (API_TYPE_GET_TIER_CONFIG_RESULT,
                                                        "defaultTierName",
                                                        stg_tiers_default_name (tiers), NULL);
  for (guint i = 0; i < stg_tiers_count (tiers); i++)
    {
      const StgTier *tier = stg_tiers_get (tiers, i);
      ApiTierConfig *tc = g_object_new (API_TYPE_TIER_CONFIG, "name", tier->name, NULL);
      g_hash_table_insert (tc->settings, g_strdup ("preemptible"),
                           g_strdup (tier->preemptible ? "true" : "false"));
      g_hash_table_insert (tc->settings, g_strdup ("revocable"),
                           g_strdup (tier->revocable ? "true" : "false"));
      g_hash_table_add (tr->tiers, tc);
    }
  tr->__isset_tiers = TRUE;
  ApiResult *result = stg_result_of (*_return);
  g_object_set (result, "getTierConfigResult", tr, NULL);
  stg_response_ok (*_return, self->ctx.cluster, result);
  return TRUE;
}

static gboolean
handler_populate_job_config (ApiReadOnlySchedulerIf *iface, ApiResponse **_return,
                             const ApiJobConfiguration *description, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "populateJobConfig", NULL, FALSE))
    return TRUE;
  if (description == NULL)
    {
      stg_response_fail (*_return, self->ctx.cluster, API_RESPONSE_CODE_INVALID_REQUEST,
                         "populateJobConfig: description is missing");
      return TRUE;
    }
  g_autoptr (ApiTaskConfig) task = stg_engine_populate_job (self->ctx.engine, description, &error);
  if (task == NULL)
    {
      g_prefix_error (&error, "Invalid configuration: ");
      return stg_handler_answer_error (self, *_return, "populateJobConfig", error);
    }
  g_autoptr (ApiPopulateJobResult) pr = g_object_new (API_TYPE_POPULATE_JOB_RESULT, "taskConfig",
                                                      task, NULL);
  ApiResult *result = stg_result_of (*_return);
  g_object_set (result, "populateJobResult", pr, NULL);
  stg_response_ok (*_return, self->ctx.cluster, result);
  return TRUE;
}

/* Why a task waiting to start (PENDING, or THROTTLED: waiting out its
 * restart back-off) has not started: the message of its newest event of
 * its status (what the runtime said when it made it wait). */
static const gchar *
pending_reason (const ApiScheduledTask *task)
{
  for (guint i = task->taskEvents->len; i > 0; i--)
    {
      const ApiTaskEvent *ev = task->taskEvents->pdata[i - 1];
      if (ev->status == task->status && ev->__isset_message && ev->message != NULL &&
          ev->message[0] != '\0')
        return ev->message;
    }
  return "waiting to be started";
}

static gboolean
handler_get_pending_reason (ApiReadOnlySchedulerIf *iface, ApiResponse **_return,
                            const ApiTaskQuery *query, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "getPendingReason", NULL, FALSE))
    return TRUE;
  g_autoptr (ApiTaskQuery) q = query ? stg_thrift_copy ((gpointer) query)
                                     : g_object_new (API_TYPE_TASK_QUERY, NULL);
  const gchar *refused = q->__isset_slaveHosts && g_hash_table_size (q->slaveHosts) > 0
                             ? "SlaveHosts are not supported in the query (query.slaveHosts)"
                         : q->__isset_statuses && g_hash_table_size (q->statuses) > 0
                             ? "Statuses is not supported in the query (query.statuses): only "
                               "PENDING and THROTTLED tasks have reasons"
                             : NULL;
  if (refused != NULL)
    {
      stg_response_fail (*_return, self->ctx.cluster, API_RESPONSE_CODE_INVALID_REQUEST,
                         "getPendingReason: %s", refused);
      return TRUE;
    }
  g_hash_table_add (q->statuses, GINT_TO_POINTER (API_SCHEDULE_STATUS_PENDING));
  g_hash_table_add (q->statuses, GINT_TO_POINTER (API_SCHEDULE_STATUS_THROTTLED));
  q->__isset_statuses = TRUE;
  g_autoptr (GPtrArray) tasks = stg_handler_query_tasks (self->ctx.store, q, FALSE, &error);
  if (tasks == NULL)
    return stg_handler_answer_error (self, *_return, "getPendingReason", error);
  g_autoptr (ApiGetPendingReasonResult) pr = g_object_new (API_TYPE_GET_PENDING_REASON_RESULT,
                                                           NULL);
  for (guint i = 0; i < tasks->len; i++)
    {
      const ApiScheduledTask *task = tasks->pdata[i];
      g_hash_table_add (pr->reasons,
                        g_object_new (API_TYPE_PENDING_REASON, "taskId", task->assignedTask->taskId,
                                      "reason", pending_reason (task), NULL));
    }
  pr->__isset_reasons = TRUE;
  ApiResult *result = stg_result_of (*_return);
  g_object_set (result, "getPendingReasonResult", pr, NULL);
  stg_response_ok (*_return, self->ctx.cluster, result);
  return TRUE;
}

static gboolean
handler_get_role_summary (ApiReadOnlySchedulerIf *iface, ApiResponse **_return, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "getRoleSummary", NULL, FALSE))
    return TRUE;
  g_autoptr (GPtrArray) jobs = stg_store_list_jobs (self->ctx.store, NULL, &error);
  if (jobs == NULL)
    return stg_handler_answer_error (self, *_return, "getRoleSummary", error);
  g_autoptr (GHashTable) counts = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < jobs->len; i++)
    {
      const gchar *role = ((StgJobRow *) jobs->pdata[i])->key->role;
      gint n = GPOINTER_TO_INT (g_hash_table_lookup (counts, role));
      g_hash_table_insert (counts, (gpointer) role, GINT_TO_POINTER (n + 1));
    }
  g_autoptr (ApiRoleSummaryResult) rr = g_object_new (API_TYPE_ROLE_SUMMARY_RESULT, NULL);
  GHashTableIter it;
  gpointer role, n;
  g_hash_table_iter_init (&it, counts);
  while (g_hash_table_iter_next (&it, &role, &n))
    g_hash_table_add (rr->summaries, g_object_new (API_TYPE_ROLE_SUMMARY, "role", role, "jobCount",
                                                   GPOINTER_TO_INT (n), "cronJobCount", 0, NULL));
  rr->__isset_summaries = TRUE;
  ApiResult *result = stg_result_of (*_return);
  g_object_set (result, "roleSummaryResult", rr, NULL);
  stg_response_ok (*_return, self->ctx.cluster, result);
  return TRUE;
}

/* ---- cron: refused ----------------------------------------------------------- */

/* The cron calls change nothing: any caller that may read is told. */
static gboolean
refuse_cron (StgHandler *self, ApiResponse *response, const gchar *method)
{
  if (stg_handler_allowed (self, response, method, NULL, FALSE))
    stg_response_fail (response, self->ctx.cluster, API_RESPONSE_CODE_INVALID_REQUEST,
                       "%s: " NO_CRON, method);
  return TRUE;
}

static gboolean
handler_schedule_cron_job (ApiAuroraSchedulerManagerIf *iface, ApiResponse **_return,
                           const ApiJobConfiguration *description, GError **unused)
{
  (void) unused;
  (void) description;
  return refuse_cron (HANDLER (iface), *_return, "scheduleCronJob");
}

static gboolean
handler_replace_cron_template (ApiAuroraSchedulerManagerIf *iface, ApiResponse **_return,
                               const ApiJobConfiguration *config, GError **unused)
{
  (void) unused;
  (void) config;
  return refuse_cron (HANDLER (iface), *_return, "replaceCronTemplate");
}

static gboolean
handler_deschedule_cron_job (ApiAuroraSchedulerManagerIf *iface, ApiResponse **_return,
                             const ApiJobKey *job, GError **unused)
{
  (void) unused;
  (void) job;
  return refuse_cron (HANDLER (iface), *_return, "descheduleCronJob");
}

static gboolean
handler_start_cron_job (ApiAuroraSchedulerManagerIf *iface, ApiResponse **_return,
                        const ApiJobKey *job, GError **unused)
{
  (void) unused;
  (void) job;
  return refuse_cron (HANDLER (iface), *_return, "startCronJob");
}

const StgHandlerMethod stg_handler_aurora_methods[] = {
  STG_READ_METHOD (get_tier_configs, handler_get_tier_configs),
  STG_READ_METHOD (populate_job_config, handler_populate_job_config),
  STG_READ_METHOD (get_pending_reason, handler_get_pending_reason),
  STG_READ_METHOD (get_role_summary, handler_get_role_summary),
  STG_MANAGE_METHOD (schedule_cron_job, handler_schedule_cron_job),
  STG_MANAGE_METHOD (replace_cron_template, handler_replace_cron_template),
  STG_MANAGE_METHOD (deschedule_cron_job, handler_deschedule_cron_job),
  STG_MANAGE_METHOD (start_cron_job, handler_start_cron_job),
  { 0, NULL },
};
