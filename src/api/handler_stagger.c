/* handler_stagger.c: StgHandler's methods of Stagger's own service
 * (StaggerScheduler, beside Aurora's): getJobConfigHistory, answered from
 * the store; getTaskLogs, getHosts and drainHost, from the runtime through
 * the engine.
 * Main-loop thread only. */
#include "config.h"

#include "api/handler_private.h"

static gboolean
handler_get_job_config_history (ApiStaggerSchedulerIf *iface, ApiResponse **_return,
                                const ApiJobKey *job, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "getJobConfigHistory", NULL, FALSE))
    return TRUE;
  if (job == NULL || job->role == NULL || job->environment == NULL || job->name == NULL)
    {
      stg_response_fail (*_return, self->ctx.cluster, API_RESPONSE_CODE_INVALID_REQUEST,
                         "getJobConfigHistory: give the job's key (role, environment, name)");
      return TRUE;
    }
  g_autoptr (GPtrArray) rows = stg_store_job_config_history (self->ctx.store, job, &error);
  if (rows == NULL)
    return stg_handler_answer_error (self, *_return, "getJobConfigHistory", error);
  g_autoptr (ApiGetJobConfigHistoryResult) hr =
      g_object_new (API_TYPE_GET_JOB_CONFIG_HISTORY_RESULT, NULL);
  for (guint i = 0; i < rows->len; i++)
    {
      StgConfigVersionRow *row = rows->pdata[i];
      ApiJobConfigVersion *v = g_object_new (API_TYPE_JOB_CONFIG_VERSION, "version", row->version,
                                             "config", row->config, "createdTimestampMs",
                                             row->created_ms, "instancesOnIt", row->instances_now,
                                             NULL);
      if (row->update_uid != NULL)
        g_object_set (v, "updateId", row->update_uid, NULL);
      if (row->user != NULL)
        g_object_set (v, "user", row->user, NULL);
      g_ptr_array_add (hr->versions, v);
    }
  return stg_handler_answer_ok (self, *_return, "getJobConfigHistoryResult", hr);
}

static gboolean
handler_get_task_logs (ApiStaggerSchedulerIf *iface, ApiResponse **_return,
                       const ApiInstanceKey *instance, const gboolean err, const gint64 offset,
                       const gint32 max_bytes, const gchar *process, const gint32 process_run,
                       GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  g_auto (StgLogInfo) info = { .run = -1 };
  StgLogQuery query = { err, offset, (gsize) MAX (max_bytes, 0),
                        process != NULL && process[0] != '\0' ? process : NULL, process_run };
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "getTaskLogs", NULL, FALSE))
    return TRUE;
  if (instance == NULL || instance->jobKey == NULL || instance->jobKey->role == NULL ||
      instance->jobKey->environment == NULL || instance->jobKey->name == NULL || max_bytes < 0 ||
      process_run < -1)
    {
      stg_response_fail (*_return, self->ctx.cluster, API_RESPONSE_CODE_INVALID_REQUEST,
                         "getTaskLogs: give the instance (jobKey, instanceId), maxBytes >= 0 "
                         "and processRun >= -1");
      return TRUE;
    }
  g_autoptr (GBytes) bytes = stg_engine_read_log (self->ctx.engine, instance->jobKey,
                                                  instance->instanceId, &query, &info, &error);
  if (bytes == NULL)
    return stg_handler_answer_error (self, *_return, "getTaskLogs", error);
  g_autoptr (GByteArray) data = g_bytes_unref_to_array (g_steal_pointer (&bytes));
  g_autoptr (ApiGetTaskLogsResult) lr = g_object_new (API_TYPE_GET_TASK_LOGS_RESULT, "data", data,
                                                      "nextOffset", info.next, "size", info.size,
                                                      NULL);
  if (info.processes != NULL)
    {
      g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
      for (guint i = 0; info.processes[i] != NULL; i++)
        g_ptr_array_add (names, g_strdup (info.processes[i]));
      g_object_set (lr, "processes", names, NULL);
    }
  if (query.process != NULL)
    g_object_set (lr, "processRun", info.run, NULL);
  return stg_handler_answer_ok (self, *_return, "getTaskLogsResult", lr);
}

static gboolean
handler_get_hosts (ApiStaggerSchedulerIf *iface, ApiResponse **_return, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "getHosts", NULL, FALSE))
    return TRUE;
  g_autoptr (GPtrArray) hosts = stg_engine_hosts (self->ctx.engine, &error);
  if (hosts == NULL)
    return stg_handler_answer_error (self, *_return, "getHosts", error);
  g_autoptr (ApiGetHostsResult) hr = g_object_new (API_TYPE_GET_HOSTS_RESULT, NULL);
  for (guint i = 0; i < hosts->len; i++)
    g_ptr_array_add (hr->hosts, g_object_ref (hosts->pdata[i]));
  return stg_handler_answer_ok (self, *_return, "getHostsResult", hr);
}

static gboolean
handler_drain_host (ApiStaggerSchedulerIf *iface, ApiResponse **_return, const gchar *host,
                    const gboolean drain, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  (void) unused;

  /* A host holds every role's instances: only a user of every role. */
  if (!stg_handler_allowed (self, *_return, "drainHost", NULL, TRUE))
    return TRUE;
  if (host == NULL || host[0] == '\0')
    {
      stg_response_fail (*_return, self->ctx.cluster, API_RESPONSE_CODE_INVALID_REQUEST,
                         "drainHost: give the host's name");
      return TRUE;
    }
  if (!stg_engine_drain_host (self->ctx.engine, host, drain, self->user, &error))
    return stg_handler_answer_error (self, *_return, "drainHost", error);
  return stg_handler_answer_ok (self, *_return, NULL, NULL);
}

const StgHandlerMethod stg_handler_stagger_methods[] = {
  STG_STAGGER_METHOD (get_job_config_history, handler_get_job_config_history),
  STG_STAGGER_METHOD (get_task_logs, handler_get_task_logs),
  STG_STAGGER_METHOD (get_hosts, handler_get_hosts),
  STG_STAGGER_METHOD (drain_host, handler_drain_host),
  { 0, NULL },
};
