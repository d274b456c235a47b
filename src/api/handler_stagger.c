/* handler_stagger.c: StgHandler's methods of Stagger's own service
 * (StaggerScheduler, beside Aurora's): getJobConfigHistory. Answered from
 * the store. Main-loop thread only. */
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
  ApiResult *result = stg_result_of (*_return);
  g_object_set (result, "getJobConfigHistoryResult", hr, NULL);
  stg_response_ok (*_return, self->ctx.cluster, result);
  return TRUE;
}

void
stg_handler_install_stagger_methods (ApiStaggerSchedulerHandlerClass *sc)
{
  sc->get_job_config_history = handler_get_job_config_history;
}
