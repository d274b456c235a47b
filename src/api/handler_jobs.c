/* handler_jobs.c: StgHandler's job methods: getJobs and getJobSummary
 * from the store; createJob, killTasks, addInstances and restartShards
 * through the engine. Main-loop thread only.
 */
#include "config.h"

#include "api/handler_private.h"
#include "common/jobkey.h"

/* ---- jobs ----------------------------------------------------------------- */

/* The JobConfiguration of a stored job. Its taskConfig is the newest
 * configuration any of its instances should run. */
static ApiJobConfiguration *
job_configuration (StgHandler *self, StgJobRow *job, GError **error)
{
  g_autoptr (GArray) counts = stg_store_count_configs (self->ctx.store, job->id, error);
  gint64 newest = 0;

  if (counts == NULL)
    return NULL;
  for (guint i = 0; i < counts->len; i++)
    newest = MAX (newest, g_array_index (counts, StgCount, i).key);

  g_autoptr (ApiTaskConfig) task = NULL;
  if (newest > 0)
    {
      task = stg_store_get_config (self->ctx.store, newest, error);
      if (task == NULL)
        return NULL;
    }
  else
    task = g_object_new (API_TYPE_TASK_CONFIG, "job", job->key, NULL);

  g_autoptr (ApiIdentity) owner = g_object_new (API_TYPE_IDENTITY, "user", job->owner, NULL);
  return g_object_new (API_TYPE_JOB_CONFIGURATION, "key", job->key, "owner", owner,
                       "cronCollisionPolicy", API_CRON_COLLISION_POLICY_KILL_EXISTING, "taskConfig",
                       task, "instanceCount", job->instance_count, NULL);
}

static gboolean
handler_get_jobs (ApiReadOnlySchedulerIf *iface, ApiResponse **_return, const gchar *role,
                  GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "getJobs", NULL, FALSE))
    return TRUE;

  g_autoptr (GPtrArray) jobs = stg_store_list_jobs (self->ctx.store, role && role[0] ? role : NULL,
                                                    &error);
  if (jobs == NULL)
    return stg_handler_answer_error (self, *_return, "getJobs", error);

  g_autoptr (ApiGetJobsResult) jr = g_object_new (API_TYPE_GET_JOBS_RESULT, NULL);
  for (guint i = 0; i < jobs->len; i++)
    {
      ApiJobConfiguration *jc = job_configuration (self, jobs->pdata[i], &error);
      if (jc == NULL)
        return stg_handler_answer_error (self, *_return, "getJobs", error);
      g_hash_table_add (jr->configs, jc);
    }
  jr->__isset_configs = TRUE;

  return stg_handler_answer_ok (self, *_return, "getJobsResult", jr);
}

/* Task counts of a job by kind of status, as Aurora groups them. */
static ApiJobStats *
job_stats (StgHandler *self, StgJobRow *job, GError **error)
{
  g_autoptr (GArray) counts = stg_store_count_statuses (self->ctx.store, job->id, error);
  gint32 active = 0, finished = 0, failed = 0, pending = 0;

  if (counts == NULL)
    return NULL;
  for (guint i = 0; i < counts->len; i++)
    {
      StgCount c = g_array_index (counts, StgCount, i);
      switch ((ApiScheduleStatus) c.key)
        {
        case API_SCHEDULE_STATUS_PENDING:
        case API_SCHEDULE_STATUS_THROTTLED:
        case API_SCHEDULE_STATUS_INIT:
          pending += (gint32) c.count;
          break;
        case API_SCHEDULE_STATUS_FINISHED:
          finished += (gint32) c.count;
          break;
        case API_SCHEDULE_STATUS_FAILED:
        case API_SCHEDULE_STATUS_LOST:
          failed += (gint32) c.count;
          break;
        case API_SCHEDULE_STATUS_KILLED:
          finished += (gint32) c.count;
          break;
        default:
          active += (gint32) c.count;
          break;
        }
    }
  return g_object_new (API_TYPE_JOB_STATS, "activeTaskCount", active, "finishedTaskCount", finished,
                       "failedTaskCount", failed, "pendingTaskCount", pending, NULL);
}

static gboolean
handler_get_job_summary (ApiReadOnlySchedulerIf *iface, ApiResponse **_return, const gchar *role,
                         GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "getJobSummary", NULL, FALSE))
    return TRUE;

  g_autoptr (GPtrArray) jobs = stg_store_list_jobs (self->ctx.store, role && role[0] ? role : NULL,
                                                    &error);
  if (jobs == NULL)
    return stg_handler_answer_error (self, *_return, "getJobSummary", error);

  g_autoptr (ApiJobSummaryResult) sr = g_object_new (API_TYPE_JOB_SUMMARY_RESULT, NULL);
  for (guint i = 0; i < jobs->len; i++)
    {
      g_autoptr (ApiJobConfiguration) jc = job_configuration (self, jobs->pdata[i], &error);
      g_autoptr (ApiJobStats) stats = jc ? job_stats (self, jobs->pdata[i], &error) : NULL;
      if (stats == NULL)
        return stg_handler_answer_error (self, *_return, "getJobSummary", error);
      g_hash_table_add (sr->summaries,
                        g_object_new (API_TYPE_JOB_SUMMARY, "job", jc, "stats", stats, NULL));
    }
  sr->__isset_summaries = TRUE;

  return stg_handler_answer_ok (self, *_return, "jobSummaryResult", sr);
}

static gboolean
handler_create_job (ApiAuroraSchedulerManagerIf *iface, ApiResponse **_return,
                    const ApiJobConfiguration *description, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "createJob",
                            description && description->key ? description->key->role : NULL, TRUE))
    return TRUE;

  if (!stg_engine_create_job (self->ctx.engine, description, self->user, &error))
    return stg_handler_answer_error (self, *_return, "createJob", error);
  return stg_handler_answer_ok (self, *_return, NULL, NULL);
}

static gboolean
handler_kill_tasks (ApiAuroraSchedulerManagerIf *iface, ApiResponse **_return, const ApiJobKey *job,
                    const GHashTable *instances, const gchar *message, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "killTasks", job ? job->role : NULL, TRUE))
    return TRUE;

  if (!stg_engine_kill_instances (self->ctx.engine, job, (GHashTable *) instances, self->user,
                                  message, &error))
    return stg_handler_answer_error (self, *_return, "killTasks", error);
  return stg_handler_answer_ok (self, *_return, NULL, NULL);
}

static gboolean
handler_add_instances (ApiAuroraSchedulerManagerIf *iface, ApiResponse **_return,
                       const ApiInstanceKey *key, const gint32 count, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "addInstances",
                            key && key->jobKey ? key->jobKey->role : NULL, TRUE))
    return TRUE;

  if (key == NULL || !key->__isset_jobKey)
    {
      stg_response_fail (*_return, self->ctx.cluster, API_RESPONSE_CODE_INVALID_REQUEST,
                         "key.jobKey is missing");
      return TRUE;
    }
  if (!stg_engine_add_instances (self->ctx.engine, key->jobKey, key->instanceId, count, self->user,
                                 &error))
    return stg_handler_answer_error (self, *_return, "addInstances", error);
  return stg_handler_answer_ok (self, *_return, NULL, NULL);
}

static gboolean
handler_restart_shards (ApiAuroraSchedulerManagerIf *iface, ApiResponse **_return,
                        const ApiJobKey *job, const GHashTable *ids, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "restartShards", job ? job->role : NULL, TRUE))
    return TRUE;

  if (!stg_engine_restart_instances (self->ctx.engine, job, (GHashTable *) ids, self->user, &error))
    return stg_handler_answer_error (self, *_return, "restartShards", error);
  return stg_handler_answer_ok (self, *_return, NULL, NULL);
}

const StgHandlerMethod stg_handler_job_methods[] = {
  STG_READ_METHOD (get_job_summary, handler_get_job_summary),
  STG_READ_METHOD (get_jobs, handler_get_jobs),
  STG_MANAGE_METHOD (create_job, handler_create_job),
  STG_MANAGE_METHOD (restart_shards, handler_restart_shards),
  STG_MANAGE_METHOD (kill_tasks, handler_kill_tasks),
  STG_MANAGE_METHOD (add_instances, handler_add_instances),
  { 0, NULL },
};
