/* handler.c: StgHandler, Aurora's scheduler calls answered from the engine
 * and the store.
 *
 * Each method fills the Response the generated processor passes in and
 * returns TRUE: a failure is a Response code with a message, never a Thrift
 * exception. Reads go to the store; changes go through the engine.
 * Main-loop thread only.
 */
#include "config.h"

#include "api/handler_private.h"
#include "common/jobkey.h"

G_DEFINE_TYPE (StgHandler, stg_handler, API_TYPE_STAGGER_SCHEDULER_HANDLER)

/* ---- answering ------------------------------------------------------------ */

gboolean
stg_handler_answer_error (StgHandler *self, ApiResponse *response, const gchar *method, GError *error)
{
  ApiResponseCode code = API_RESPONSE_CODE_ERROR;

  if (error->domain == STG_ENGINE_ERROR)
    switch ((StgEngineError) error->code)
      {
      case STG_ENGINE_ERROR_INVALID:
      case STG_ENGINE_ERROR_NOT_FOUND:
      case STG_ENGINE_ERROR_ACTIVE_UPDATE:
      case STG_ENGINE_ERROR_STATE:
        code = API_RESPONSE_CODE_INVALID_REQUEST;
        break;
      case STG_ENGINE_ERROR_UPDATING:
        code = API_RESPONSE_CODE_JOB_UPDATING_ERROR;
        break;
      case STG_ENGINE_ERROR_UNAVAILABLE:
      case STG_ENGINE_ERROR_FAILED:
      default:
        break;
      }
  if (error->domain == STG_JOB_KEY_ERROR ||
      g_error_matches (error, STG_STORE_ERROR, STG_STORE_ERROR_NOT_FOUND))
    code = API_RESPONSE_CODE_INVALID_REQUEST;
  if (code == API_RESPONSE_CODE_ERROR)
    g_warning ("api: %s failed: %s", method, error->message);
  stg_response_fail (response, self->ctx.cluster, code, "%s", error->message);
  return TRUE;
}

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
  return g_object_new (API_TYPE_JOB_CONFIGURATION,
                       "key", job->key,
                       "owner", owner,
                       "cronCollisionPolicy", API_CRON_COLLISION_POLICY_KILL_EXISTING,
                       "taskConfig", task,
                       "instanceCount", job->instance_count,
                       NULL);
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

  g_autoptr (GPtrArray) jobs = stg_store_list_jobs (self->ctx.store,
                                                    role && role[0] ? role : NULL, &error);
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

  ApiResult *result = stg_result_of (*_return);
  g_object_set (result, "getJobsResult", jr, NULL);
  stg_response_ok (*_return, self->ctx.cluster, result);
  return TRUE;
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
  return g_object_new (API_TYPE_JOB_STATS,
                       "activeTaskCount", active, "finishedTaskCount", finished,
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

  g_autoptr (GPtrArray) jobs = stg_store_list_jobs (self->ctx.store,
                                                    role && role[0] ? role : NULL, &error);
  if (jobs == NULL)
    return stg_handler_answer_error (self, *_return, "getJobSummary", error);

  g_autoptr (ApiJobSummaryResult) sr = g_object_new (API_TYPE_JOB_SUMMARY_RESULT, NULL);
  for (guint i = 0; i < jobs->len; i++)
    {
      g_autoptr (ApiJobConfiguration) jc = job_configuration (self, jobs->pdata[i], &error);
      g_autoptr (ApiJobStats) stats = jc ? job_stats (self, jobs->pdata[i], &error) : NULL;
      if (stats == NULL)
        return stg_handler_answer_error (self, *_return, "getJobSummary", error);
      g_hash_table_add (sr->summaries, g_object_new (API_TYPE_JOB_SUMMARY,
                                                     "job", jc, "stats", stats, NULL));
    }
  sr->__isset_summaries = TRUE;

  ApiResult *result = stg_result_of (*_return);
  g_object_set (result, "jobSummaryResult", sr, NULL);
  stg_response_ok (*_return, self->ctx.cluster, result);
  return TRUE;
}

static gboolean
handler_create_job (ApiAuroraSchedulerManagerIf *iface, ApiResponse **_return,
                    const ApiJobConfiguration *description, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "createJob", description && description->key ? description->key->role : NULL, TRUE))
    return TRUE;

  if (!stg_engine_create_job (self->ctx.engine, description, self->user, &error))
    return stg_handler_answer_error (self, *_return, "createJob", error);
  stg_response_ok (*_return, self->ctx.cluster, NULL);
  return TRUE;
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
  stg_response_ok (*_return, self->ctx.cluster, NULL);
  return TRUE;
}

static gboolean
handler_add_instances (ApiAuroraSchedulerManagerIf *iface, ApiResponse **_return,
                       const ApiInstanceKey *key, const gint32 count, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "addInstances", key && key->jobKey ? key->jobKey->role : NULL, TRUE))
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
  stg_response_ok (*_return, self->ctx.cluster, NULL);
  return TRUE;
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
  stg_response_ok (*_return, self->ctx.cluster, NULL);
  return TRUE;
}

/* ---- the object ------------------------------------------------------------- */

static void
stg_handler_finalize (GObject *object)
{
  StgHandler *self = STG_HANDLER (object);

  g_free (self->user);
  g_free (self->why);
  G_OBJECT_CLASS (stg_handler_parent_class)->finalize (object);
}

static void
stg_handler_class_init (StgHandlerClass *klass)
{
  ApiReadOnlySchedulerHandlerClass *ro = API_READ_ONLY_SCHEDULER_HANDLER_CLASS (klass);
  ApiAuroraSchedulerManagerHandlerClass *rw = API_AURORA_SCHEDULER_MANAGER_HANDLER_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = stg_handler_finalize;

  ro->get_job_summary = handler_get_job_summary;
  ro->get_jobs = handler_get_jobs;

  rw->create_job = handler_create_job;
  rw->restart_shards = handler_restart_shards;
  rw->kill_tasks = handler_kill_tasks;
  rw->add_instances = handler_add_instances;
  stg_handler_install_update_methods (ro, rw);
  stg_handler_install_task_methods (ro);
  stg_handler_install_aurora_methods (ro, rw);
  stg_handler_install_admin_methods (ro, API_AURORA_ADMIN_HANDLER_CLASS (klass));
  stg_handler_install_stagger_methods (API_STAGGER_SCHEDULER_HANDLER_CLASS (klass));
  stg_handler_install_plan_methods (API_STAGGER_SCHEDULER_HANDLER_CLASS (klass));
}

static void
stg_handler_init (StgHandler *self)
{
  self->access = STG_ACCESS_WRITE;
}

StgHandler *
stg_handler_new (const StgHandlerContext *context)
{
  StgHandler *self = g_object_new (STG_TYPE_HANDLER, NULL);

  self->ctx = *context;
  return self;
}

void
stg_handler_set_caller (StgHandler *handler, const StgCaller *caller)
{
  g_clear_pointer (&handler->user, g_free);
  g_clear_pointer (&handler->why, g_free);
  handler->access = caller ? caller->access : STG_ACCESS_WRITE;
  handler->auth = caller ? caller->auth : NULL;
  if (caller != NULL)
    {
      handler->user = g_strdup (caller->user);
      handler->why = g_strdup (caller->why);
    }
}

gboolean
stg_handler_allowed (StgHandler *self, ApiResponse *response, const gchar *method, const gchar *role,
                     gboolean write)
{
  StgAccess need = write ? STG_ACCESS_WRITE : STG_ACCESS_READ;

  if (self->access >= need &&
      (!write || self->user == NULL || stg_auth_user_may (self->auth, self->user, role)))
    return TRUE;
  if (self->access >= need && role == NULL)
    stg_response_fail (response, self->ctx.cluster, API_RESPONSE_CODE_AUTH_FAILED,
                       "%s: user %s may not: it needs a user of every role (roles = *)", method,
                       self->user);
  else if (self->access >= need)
    stg_response_fail (response, self->ctx.cluster, API_RESPONSE_CODE_AUTH_FAILED,
                       "%s: user %s may not change jobs of role %s", method, self->user, role);
  else
    stg_response_fail (response, self->ctx.cluster, API_RESPONSE_CODE_AUTH_FAILED, "%s: %s", method,
                       self->why ? self->why
                       : write ? "this connection may only read" : "authentication required");
  return FALSE;
}
