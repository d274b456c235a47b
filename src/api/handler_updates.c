/* handler_updates.c: StgHandler's job-update methods: start, pause, resume,
 * abort, roll back, pulse, and the update queries (summaries, details with
 * their conditions (conditions.c), diff), answered from the engine and the
 * store. Main-loop thread only. */
#include "config.h"

#include "api/conditions.h"
#include "api/handler_private.h"

/* ---- updates -------------------------------------------------------------- */

static gboolean
handler_get_job_update_summaries (ApiReadOnlySchedulerIf *iface, ApiResponse **_return,
                                  const ApiJobUpdateQuery *query, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "getJobUpdateSummaries", NULL, FALSE))
    return TRUE;

  g_autoptr (GPtrArray) summaries = stg_store_query_update_summaries (self->ctx.store, query, &error);
  if (summaries == NULL)
    return stg_handler_answer_error (self, *_return, "getJobUpdateSummaries", error);

  g_autoptr (ApiGetJobUpdateSummariesResult) sr =
    g_object_new (API_TYPE_GET_JOB_UPDATE_SUMMARIES_RESULT, "updateSummaries", summaries, NULL);
  return stg_handler_answer_ok (self, *_return, "getJobUpdateSummariesResult", sr);
}

static gboolean
handler_get_job_update_details (ApiReadOnlySchedulerIf *iface, ApiResponse **_return,
                                const ApiJobUpdateKey *key, const ApiJobUpdateQuery *query,
                                GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiJobUpdateQuery) q = NULL;
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "getJobUpdateDetails", NULL, FALSE))
    return TRUE;

  /* The older form names one update by key; the newer takes a query. */
  if (!stg_store_update_query_is_empty (query))
    q = stg_thrift_copy ((gpointer) query);
  else if (key != NULL && key->__isset_id && key->id != NULL)
    q = g_object_new (API_TYPE_JOB_UPDATE_QUERY, "key", key, NULL);
  else
    {
      stg_response_fail (*_return, self->ctx.cluster, API_RESPONSE_CODE_INVALID_REQUEST,
                         "give key or query");
      return TRUE;
    }
  g_autoptr (GPtrArray) list = stg_store_query_update_details (self->ctx.store, q, &error);
  if (list == NULL)
    return stg_handler_answer_error (self, *_return, "getJobUpdateDetails", error);
  for (guint i = 0; i < list->len; i++)
    {
      ApiJobUpdateDetails *d = list->pdata[i];
      g_autoptr (GArray) changes = stg_conditions_update_changes (d->updateEvents);
      g_autoptr (GPtrArray) conditions = stg_conditions_build (STG_CONDITIONS_UPDATE,
                                                               (StgStatusChange *) changes->data,
                                                               changes->len);
      g_object_set (d, "conditions", conditions, NULL);
    }

  g_autoptr (ApiGetJobUpdateDetailsResult) dr =
    g_object_new (API_TYPE_GET_JOB_UPDATE_DETAILS_RESULT, "detailsList", list, NULL);
  if (list->len > 0)
    g_object_set (dr, "details", list->pdata[0], NULL);
  else if (q->__isset_key)
    {
      stg_response_fail (*_return, self->ctx.cluster, API_RESPONSE_CODE_INVALID_REQUEST,
                         "no update with id %s", q->key->id ? q->key->id : "");
      return TRUE;
    }
  return stg_handler_answer_ok (self, *_return, "getJobUpdateDetailsResult", dr);
}

static gboolean
handler_get_job_update_diff (ApiReadOnlySchedulerIf *iface, ApiResponse **_return,
                             const ApiJobUpdateRequest *request, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "getJobUpdateDiff", NULL, FALSE))
    return TRUE;

  g_autoptr (ApiGetJobUpdateDiffResult) diff = stg_engine_diff (self->ctx.engine, request, TRUE,
                                                                &error);
  if (diff == NULL)
    return stg_handler_answer_error (self, *_return, "getJobUpdateDiff", error);
  return stg_handler_answer_ok (self, *_return, "getJobUpdateDiffResult", diff);
}

static gboolean
handler_start_job_update (ApiAuroraSchedulerManagerIf *iface, ApiResponse **_return,
                          const ApiJobUpdateRequest *request, const gchar *message, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiJobUpdateSummary) active = NULL;
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "startJobUpdate", request && request->taskConfig && request->taskConfig->job ? request->taskConfig->job->role : NULL, TRUE))
    return TRUE;

  g_autoptr (ApiJobUpdateKey) key = stg_engine_start_update (self->ctx.engine, request, self->user,
                                                             message, &active, &error);
  if (key == NULL)
    {
      stg_handler_answer_error (self, *_return, "startJobUpdate", error);
      if (active != NULL)
        {
          /* As Aurora does: the refusal carries the active update. */
          g_autoptr (ApiStartJobUpdateResult) sr = g_object_new (API_TYPE_START_JOB_UPDATE_RESULT,
                                                                 "key", active->key,
                                                                 "updateSummary", active, NULL);
          ApiResult *result = stg_result_of (*_return);
          g_object_set (result, "startJobUpdateResult", sr, NULL);
          g_object_set (*_return, "result", result, NULL);
          g_object_unref (result);
        }
      return TRUE;
    }
  g_autoptr (ApiStartJobUpdateResult) sr = g_object_new (API_TYPE_START_JOB_UPDATE_RESULT,
                                                         "key", key, NULL);
  /* As Aurora: the new update's summary too (with the client's metadata). */
  g_autoptr (StgUpdateRow) row = stg_store_get_update (self->ctx.store, key->id, NULL);
  g_autoptr (ApiJobUpdateSummary) summary = row ? stg_store_get_update_summary (self->ctx.store,
                                                                                row->id, NULL)
                                                : NULL;
  if (summary != NULL)
    g_object_set (sr, "updateSummary", summary, NULL);
  stg_handler_answer_ok (self, *_return, "startJobUpdateResult", sr);
  g_autofree gchar *warning = stg_engine_update_warning (self->ctx.engine, request);
  if (warning != NULL)
    stg_response_add_detail (*_return, "%s", warning);
  return TRUE;
}

typedef gboolean (*UpdateCall) (StgEngine *engine, const ApiJobUpdateKey *key, const gchar *user,
                                const gchar *message, GError **error);

static gboolean
simple_call (ApiAuroraSchedulerManagerIf *iface, ApiResponse **_return, const gchar *method,
             UpdateCall call, const ApiJobUpdateKey *key, const gchar *message)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;

  if (!stg_handler_allowed (self, *_return, method, key && key->job ? key->job->role : NULL, TRUE))
    return TRUE;
  if (!call (self->ctx.engine, key, self->user, message, &error))
    return stg_handler_answer_error (self, *_return, method, error);
  return stg_handler_answer_ok (self, *_return, NULL, NULL);
}

static gboolean
handler_pause_job_update (ApiAuroraSchedulerManagerIf *iface, ApiResponse **_return,
                          const ApiJobUpdateKey *key, const gchar *message, GError **unused)
{
  (void) unused;
  return simple_call (iface, _return, "pauseJobUpdate", stg_engine_pause_update, key, message);
}

static gboolean
handler_resume_job_update (ApiAuroraSchedulerManagerIf *iface, ApiResponse **_return,
                           const ApiJobUpdateKey *key, const gchar *message, GError **unused)
{
  (void) unused;
  return simple_call (iface, _return, "resumeJobUpdate", stg_engine_resume_update, key, message);
}

static gboolean
handler_abort_job_update (ApiAuroraSchedulerManagerIf *iface, ApiResponse **_return,
                          const ApiJobUpdateKey *key, const gchar *message, GError **unused)
{
  (void) unused;
  return simple_call (iface, _return, "abortJobUpdate", stg_engine_abort_update, key, message);
}

static gboolean
handler_rollback_job_update (ApiAuroraSchedulerManagerIf *iface, ApiResponse **_return,
                             const ApiJobUpdateKey *key, const gchar *message, GError **unused)
{
  (void) unused;
  return simple_call (iface, _return, "rollbackJobUpdate", stg_engine_rollback_update, key, message);
}

static gboolean
handler_pulse_job_update (ApiAuroraSchedulerManagerIf *iface, ApiResponse **_return,
                          const ApiJobUpdateKey *key, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  ApiJobUpdatePulseStatus status = API_JOB_UPDATE_PULSE_STATUS_OK;
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "pulseJobUpdate", key && key->job ? key->job->role : NULL, TRUE))
    return TRUE;

  if (!stg_engine_pulse_update (self->ctx.engine, key, &status, &error))
    return stg_handler_answer_error (self, *_return, "pulseJobUpdate", error);
  g_autoptr (ApiPulseJobUpdateResult) pr = g_object_new (API_TYPE_PULSE_JOB_UPDATE_RESULT,
                                                         "status", status, NULL);
  return stg_handler_answer_ok (self, *_return, "pulseJobUpdateResult", pr);
}

const StgHandlerMethod stg_handler_update_methods[] = {
  STG_READ_METHOD (get_job_update_summaries, handler_get_job_update_summaries),
  STG_READ_METHOD (get_job_update_details, handler_get_job_update_details),
  STG_READ_METHOD (get_job_update_diff, handler_get_job_update_diff),
  STG_MANAGE_METHOD (start_job_update, handler_start_job_update),
  STG_MANAGE_METHOD (pause_job_update, handler_pause_job_update),
  STG_MANAGE_METHOD (resume_job_update, handler_resume_job_update),
  STG_MANAGE_METHOD (abort_job_update, handler_abort_job_update),
  STG_MANAGE_METHOD (rollback_job_update, handler_rollback_job_update),
  STG_MANAGE_METHOD (pulse_job_update, handler_pulse_job_update),
  { 0, NULL },
};
