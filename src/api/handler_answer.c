/* handler_answer.c: how StgHandler's methods answer: the caller's access
 * checked (AUTH_FAILED when refused), errors mapped to Aurora's response
 * codes, and results set on the Response. Calls response.c and the auth
 * roles. Main-loop thread only.
 */
#include "config.h"

#include "api/handler_private.h"
#include "common/jobkey.h"

gboolean
stg_handler_allowed (StgHandler *self, ApiResponse *response, const gchar *method,
                     const gchar *role, gboolean write)
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
                       : write   ? "this connection may only read"
                                 : "authentication required");
  return FALSE;
}

gboolean
stg_handler_answer_error (StgHandler *self, ApiResponse *response, const gchar *method,
                          GError *error)
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
      g_error_matches (error, STG_STORE_ERROR, STG_STORE_ERROR_NOT_FOUND) ||
      g_error_matches (error, STG_STORE_ERROR, STG_STORE_ERROR_UNSUPPORTED) ||
      g_error_matches (error, STG_STORE_ERROR, STG_STORE_ERROR_INVALID))
    code = API_RESPONSE_CODE_INVALID_REQUEST;
  if (code == API_RESPONSE_CODE_ERROR)
    g_warning ("api: %s failed: %s", method, error->message);
  stg_response_fail (response, self->ctx.cluster, code, "%s", error->message);
  return TRUE;
}

gboolean
stg_handler_answer_ok (StgHandler *self, ApiResponse *response, const gchar *member, gpointer value)
{
  ApiResult *result = NULL;

  if (member != NULL)
    {
      result = stg_result_of (response);
      g_object_set (result, member, value, NULL);
    }
  stg_response_ok (response, self->ctx.cluster, result);
  return TRUE;
}
