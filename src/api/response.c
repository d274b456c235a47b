/* response.c: filling Responses (code, serverInfo, details, result).
 * Main-loop thread only. */
#include "config.h"

#include "api/response.h"

/* Sets code and serverInfo; clears result and details. */
static void
response_init (ApiResponse *response, ApiResponseCode code, const gchar *cluster)
{
  g_autoptr (ApiServerInfo) info = g_object_new (API_TYPE_SERVER_INFO,
                                                 "clusterName", cluster,
                                                 "statsUrlPrefix", "", NULL);
  g_autoptr (GPtrArray) details = g_ptr_array_new_with_free_func (g_object_unref);

  g_object_set (response, "responseCode", code, "serverInfo", info, "details", details, NULL);
  /* The generated struct always holds a result object; unset, it is not sent. */
  response->__isset_result = FALSE;
}

void
stg_response_add_detail (ApiResponse *response, const gchar *format, ...)
{
  va_list ap;
  g_autofree gchar *text = NULL;

  va_start (ap, format);
  text = g_strdup_vprintf (format, ap);
  va_end (ap);
  if (!g_utf8_validate (text, -1, NULL))
    {
      gchar *valid = g_utf8_make_valid (text, -1);
      g_free (text);
      text = valid;
    }
  g_ptr_array_add (response->details,
                   g_object_new (API_TYPE_RESPONSE_DETAIL, "message", text, NULL));
  response->__isset_details = TRUE;
}

void
stg_response_ok (ApiResponse *response, const gchar *cluster, ApiResult *result)
{
  response_init (response, API_RESPONSE_CODE_OK, cluster);
  if (result != NULL)
    {
      g_object_set (response, "result", result, NULL);
      g_object_unref (result);
    }
}

void
stg_response_fail (ApiResponse *response, const gchar *cluster, ApiResponseCode code,
                   const gchar *format, ...)
{
  va_list ap;
  g_autofree gchar *text = NULL;

  va_start (ap, format);
  text = g_strdup_vprintf (format, ap);
  va_end (ap);
  response_init (response, code, cluster);
  stg_response_add_detail (response, "%s", text);
}

ApiResult *
stg_result_of (ApiResponse *response)
{
  /* The generated Response made a Result (with every member of the union
   * allocated) when it was made: fill that one rather than paying for a
   * second. */
  return g_object_ref (response->result);
}
