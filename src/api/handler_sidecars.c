/* handler_sidecars.c: StgHandler's methods for sidecar sets (Stagger's own
 * StaggerScheduler calls): apply, the reads and the controls, through the
 * engine. A call that changes a set needs a user allowed the role its
 * selector names, or every role when that is a pattern. Main-loop thread
 * only. */
#include "config.h"

#include "api/handler_private.h"

/* Whether the caller may change set @name: a user of the role it selects,
 * or of every role when that is a pattern or no set has the name yet (one
 * being made, or a call the engine then refuses). */
static gboolean
may_change (StgHandler *self, ApiResponse *response, const gchar *method, const gchar *name)
{
  g_autofree gchar *role = NULL;

  stg_engine_sidecar_role (self->ctx.engine, name ? name : "", &role, NULL);
  return stg_handler_allowed (self, response, method, role, TRUE);
}

static gboolean
handler_apply_sidecar_set (ApiStaggerSchedulerIf *iface, ApiResponse **_return,
                           const ApiSidecarSet *set, const gchar *message, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  (void) unused;

  if (set == NULL || set->name == NULL || set->selector == NULL || set->sidecar == NULL ||
      set->settings == NULL)
    {
      stg_response_fail (*_return, self->ctx.cluster, API_RESPONSE_CODE_INVALID_REQUEST,
                         "applySidecarSet: give the set's name, selector, sidecar and settings");
      return TRUE;
    }
  if (!stg_handler_allowed (self, *_return, "applySidecarSet",
                            stg_sidecar_role_needed (set->selector->role), TRUE) ||
      !may_change (self, *_return, "applySidecarSet", set->name))
    return TRUE;
  if (!stg_engine_apply_sidecar_set (self->ctx.engine, set, self->user, message, &error))
    return stg_handler_answer_error (self, *_return, "applySidecarSet", error);
  return stg_handler_answer_ok (self, *_return, NULL, NULL);
}

static gboolean
handler_get_sidecar_sets (ApiStaggerSchedulerIf *iface, ApiResponse **_return, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "getSidecarSets", NULL, FALSE))
    return TRUE;
  g_autoptr (GPtrArray) sets = stg_engine_sidecar_sets (self->ctx.engine, &error);
  if (sets == NULL)
    return stg_handler_answer_error (self, *_return, "getSidecarSets", error);
  g_autoptr (ApiGetSidecarSetsResult) r = g_object_new (API_TYPE_GET_SIDECAR_SETS_RESULT, NULL);
  for (guint i = 0; i < sets->len; i++)
    g_ptr_array_add (r->sets, g_object_ref (sets->pdata[i]));
  return stg_handler_answer_ok (self, *_return, "getSidecarSetsResult", r);
}

static gboolean
handler_get_sidecar_set_details (ApiStaggerSchedulerIf *iface, ApiResponse **_return,
                                 const gchar *name, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "getSidecarSetDetails", NULL, FALSE))
    return TRUE;
  g_autoptr (ApiSidecarSetDetails) details = stg_engine_sidecar_set_details (self->ctx.engine,
                                                                             name ? name : "",
                                                                             &error);
  if (details == NULL)
    return stg_handler_answer_error (self, *_return, "getSidecarSetDetails", error);
  g_autoptr (ApiGetSidecarSetDetailsResult) r =
      g_object_new (API_TYPE_GET_SIDECAR_SET_DETAILS_RESULT, "details", details, NULL);
  return stg_handler_answer_ok (self, *_return, "getSidecarSetDetailsResult", r);
}

/* pause, resume, abort and rollback. */
static gboolean
control (ApiStaggerSchedulerIf *iface, ApiResponse **_return, const gchar *method,
         const gchar *name, const gchar *message, StgSidecarControl what)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;

  if (!may_change (self, *_return, method, name))
    return TRUE;
  if (!stg_engine_sidecar_control (self->ctx.engine, name ? name : "", what, self->user, message,
                                   &error))
    return stg_handler_answer_error (self, *_return, method, error);
  return stg_handler_answer_ok (self, *_return, NULL, NULL);
}

static gboolean
handler_pause_sidecar_update (ApiStaggerSchedulerIf *iface, ApiResponse **_return,
                              const gchar *name, const gchar *message, GError **unused)
{
  (void) unused;
  return control (iface, _return, "pauseSidecarUpdate", name, message, STG_SIDECAR_PAUSE);
}

static gboolean
handler_resume_sidecar_update (ApiStaggerSchedulerIf *iface, ApiResponse **_return,
                               const gchar *name, const gchar *message, GError **unused)
{
  (void) unused;
  return control (iface, _return, "resumeSidecarUpdate", name, message, STG_SIDECAR_RESUME);
}

static gboolean
handler_abort_sidecar_update (ApiStaggerSchedulerIf *iface, ApiResponse **_return,
                              const gchar *name, const gchar *message, GError **unused)
{
  (void) unused;
  return control (iface, _return, "abortSidecarUpdate", name, message, STG_SIDECAR_ABORT);
}

static gboolean
handler_rollback_sidecar_update (ApiStaggerSchedulerIf *iface, ApiResponse **_return,
                                 const gchar *name, const gchar *message, GError **unused)
{
  (void) unused;
  return control (iface, _return, "rollbackSidecarUpdate", name, message, STG_SIDECAR_ROLLBACK);
}

static gboolean
handler_set_sidecar_partition (ApiStaggerSchedulerIf *iface, ApiResponse **_return,
                               const gchar *name, const gint32 partition, const gchar *message,
                               GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  (void) unused;

  if (!may_change (self, *_return, "setSidecarPartition", name))
    return TRUE;
  if (!stg_engine_sidecar_partition (self->ctx.engine, name ? name : "", partition, self->user,
                                     message, &error))
    return stg_handler_answer_error (self, *_return, "setSidecarPartition", error);
  return stg_handler_answer_ok (self, *_return, NULL, NULL);
}

static gboolean
handler_delete_sidecar_set (ApiStaggerSchedulerIf *iface, ApiResponse **_return, const gchar *name,
                            const gchar *message, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  (void) unused;

  if (!may_change (self, *_return, "deleteSidecarSet", name))
    return TRUE;
  if (!stg_engine_delete_sidecar_set (self->ctx.engine, name ? name : "", self->user, message,
                                      &error))
    return stg_handler_answer_error (self, *_return, "deleteSidecarSet", error);
  return stg_handler_answer_ok (self, *_return, NULL, NULL);
}

const StgHandlerMethod stg_handler_sidecar_methods[] = {
  STG_STAGGER_METHOD (apply_sidecar_set, handler_apply_sidecar_set),
  STG_STAGGER_METHOD (get_sidecar_sets, handler_get_sidecar_sets),
  STG_STAGGER_METHOD (get_sidecar_set_details, handler_get_sidecar_set_details),
  STG_STAGGER_METHOD (pause_sidecar_update, handler_pause_sidecar_update),
  STG_STAGGER_METHOD (resume_sidecar_update, handler_resume_sidecar_update),
  STG_STAGGER_METHOD (abort_sidecar_update, handler_abort_sidecar_update),
  STG_STAGGER_METHOD (rollback_sidecar_update, handler_rollback_sidecar_update),
  STG_STAGGER_METHOD (set_sidecar_partition, handler_set_sidecar_partition),
  STG_STAGGER_METHOD (delete_sidecar_set, handler_delete_sidecar_set),
  { 0, NULL },
};
