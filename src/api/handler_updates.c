/* handler_updates.c: StgHandler's job-update methods: start, pause, resume,
 * abort, roll back, pulse, and the update queries (summaries, details,
 * diff), answered from the engine and the store. Main-loop thread only. */
#include "config.h"

#include "api/handler_private.h"

/* ---- updates -------------------------------------------------------------- */

static gboolean
handler_get_job_update_summaries (ApiReadOnlySchedulerIf *iface, ApiResponse **_return,
                                  const ApiJobUpdateQuery *query, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  (void) unused;

  g_autoptr (GPtrArray) summaries = stg_store_query_update_summaries (self->ctx.store, query, &error);
  if (summaries == NULL)
    return stg_handler_answer_error (self, *_return, "getJobUpdateSummaries", error);

  g_autoptr (ApiGetJobUpdateSummariesResult) sr =
    g_object_new (API_TYPE_GET_JOB_UPDATE_SUMMARIES_RESULT, "updateSummaries", summaries, NULL);
  ApiResult *result = stg_result_new ();
  g_object_set (result, "getJobUpdateSummariesResult", sr, NULL);
  stg_response_ok (*_return, self->ctx.cluster, result);
  return TRUE;
}

/* ---- not yet available ------------------------------------------------------ */

UNAVAILABLE_RO (handler_get_job_update_details, "getJobUpdateDetails", G_GNUC_UNUSED const ApiJobUpdateKey *k,
                G_GNUC_UNUSED const ApiJobUpdateQuery *q)
UNAVAILABLE_RO (handler_get_job_update_diff, "getJobUpdateDiff", G_GNUC_UNUSED const ApiJobUpdateRequest *r)
UNAVAILABLE_RW (handler_start_job_update, "startJobUpdate", G_GNUC_UNUSED const ApiJobUpdateRequest *r,
                G_GNUC_UNUSED const gchar *m)
UNAVAILABLE_RW (handler_pause_job_update, "pauseJobUpdate", G_GNUC_UNUSED const ApiJobUpdateKey *k, G_GNUC_UNUSED const gchar *m)
UNAVAILABLE_RW (handler_resume_job_update, "resumeJobUpdate", G_GNUC_UNUSED const ApiJobUpdateKey *k, G_GNUC_UNUSED const gchar *m)
UNAVAILABLE_RW (handler_abort_job_update, "abortJobUpdate", G_GNUC_UNUSED const ApiJobUpdateKey *k, G_GNUC_UNUSED const gchar *m)
UNAVAILABLE_RW (handler_rollback_job_update, "rollbackJobUpdate", G_GNUC_UNUSED const ApiJobUpdateKey *k,
                G_GNUC_UNUSED const gchar *m)
UNAVAILABLE_RW (handler_pulse_job_update, "pulseJobUpdate", G_GNUC_UNUSED const ApiJobUpdateKey *k)

void
stg_handler_install_update_methods (ApiReadOnlySchedulerHandlerClass *ro,
                                    ApiAuroraSchedulerManagerHandlerClass *rw)
{
  ro->get_job_update_summaries = handler_get_job_update_summaries;
  ro->get_job_update_details = handler_get_job_update_details;
  ro->get_job_update_diff = handler_get_job_update_diff;

  rw->start_job_update = handler_start_job_update;
  rw->pause_job_update = handler_pause_job_update;
  rw->resume_job_update = handler_resume_job_update;
  rw->abort_job_update = handler_abort_job_update;
  rw->rollback_job_update = handler_rollback_job_update;
  rw->pulse_job_update = handler_pulse_job_update;
}
