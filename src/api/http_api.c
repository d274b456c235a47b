/* http_api.c: POST /api (see http_api.h). Main-loop thread only. */
#include "config.h"

#include <string.h>

#include "api/http_api.h"

/* A media type without parameters, lower case ("" for none). */
static gchar *
media_type (const gchar *value)
{
  if (value == NULL)
    return g_strdup ("");
  g_autofree gchar *type = g_strndup (value, strcspn (value, ";"));
  return g_ascii_strdown (g_strstrip (type), -1);
}

/* Whether an Accept header names @type (parameters aside). */
static gboolean
accepts (const gchar *accept, const gchar *type)
{
  g_auto (GStrv) items = g_strsplit (accept ? accept : "", ",", -1);

  for (guint i = 0; items[i] != NULL; i++)
    {
      g_autofree gchar *t = media_type (items[i]);
      if (g_str_equal (t, type))
        return TRUE;
    }
  return FALSE;
}

typedef struct
{
  StgDispatch *dispatch;
  StgAuth *auth;
} Api;

/* Who calls, from the Authorization header: with auth off, anyone may do
 * anything; without credentials, reads only (or nothing, if reads need
 * auth); with bad ones, nothing. *@user and *@why hold the strings. */
static StgCaller
caller_for (Api *api, StgHttpRequest *request, gchar **user, gchar **why)
{
  g_autoptr (GError) error = NULL;

  if (!stg_auth_enabled (api->auth))
    return (StgCaller) { .access = STG_ACCESS_WRITE };
  *user = stg_auth_check_header (api->auth, stg_http_request_header (request, "Authorization"),
                                 stg_http_request_peer (request), &error);
  if (*user != NULL)
    return (StgCaller) { .user = *user, .access = STG_ACCESS_WRITE, .auth = api->auth };
  *why = g_strdup (error->message);
  if (g_error_matches (error, STG_AUTH_ERROR, STG_AUTH_ERROR_NO_CREDENTIALS))
    return (StgCaller) { .access = stg_auth_read_requires_auth (api->auth) ? STG_ACCESS_NONE
                                                                          : STG_ACCESS_READ,
                         .auth = api->auth, .why = *why };
  g_info ("http: /api from %s: %s", stg_http_request_peer (request), error->message);
  return (StgCaller) { .access = STG_ACCESS_NONE, .auth = api->auth, .why = *why };
}

static void
handle (StgHttpRequest *request, StgHttpResponse *response, gpointer user_data)
{
  Api *api = user_data;
  g_autoptr (GError) error = NULL;
  g_autofree gchar *user = NULL, *why = NULL;
  StgProtocolFactory reader;

  if (!g_str_equal (stg_http_request_method (request), "POST"))
    {
      stg_http_response_header (response, "Allow", "POST");
      stg_http_response_text (response, 405, "/api takes one Thrift message by POST\n");
      return;
    }
  g_autofree gchar *type = media_type (stg_http_request_header (request, "Content-Type"));
  if (g_str_equal (type, STG_HTTP_API_BINARY))
    reader = stg_protocol_binary;
  else if (g_str_equal (type, "application/x-thrift") ||
           g_str_equal (type, "application/json") || g_str_equal (type, STG_HTTP_API_JSON))
    reader = stg_protocol_json;
  else
    {
      stg_http_response_text (response, 415,
                              "/api needs a Content-Type of " STG_HTTP_API_BINARY ", application/x-thrift, "
                              "application/json or " STG_HTTP_API_JSON "\n");
      return;
    }
  gboolean binary = accepts (stg_http_request_header (request, "Accept"), STG_HTTP_API_BINARY);

  g_autoptr (GBytes) body = stg_http_request_body (request);
  if (body == NULL || g_bytes_get_size (body) == 0)
    {
      stg_http_response_text (response, 400, "empty request: POST one Thrift message\n");
      return;
    }
  StgCaller caller = caller_for (api, request, &user, &why);
  GBytes *reply = stg_dispatch_process_with (api->dispatch, reader,
                                             binary ? stg_protocol_binary : stg_protocol_json,
                                             body, &caller, &error);
  if (reply == NULL)
    {
      g_autofree gchar *text = g_strdup_printf ("bad Thrift message: %s\n", error->message);
      g_info ("http: /api from %s: %s", stg_http_request_peer (request), error->message);
      stg_http_response_text (response, 400, text);
      return;
    }
  stg_http_response_set (response, 200, binary ? STG_HTTP_API_BINARY : STG_HTTP_API_JSON, reply);
}

static void
credentials_ready (gpointer request)
{
  stg_http_request_resume (request);
}

/* The server's gate: a request whose credentials need crypt(3) waits for
 * it off the main loop (auth.h), whatever its route. */
static gpointer
gate (StgHttpRequest *request, gpointer user_data)
{
  Api *api = user_data;

  if (!stg_auth_enabled (api->auth))
    return NULL;
  return stg_auth_prepare (api->auth, stg_http_request_header (request, "Authorization"),
                           stg_http_request_peer (request), credentials_ready, request);
}

StgHttpApi *
stg_http_api_new (StgHttpServer *server, StgDispatch *dispatch, StgAuth *auth)
{
  Api *api = g_new0 (Api, 1);

  api->dispatch = dispatch;
  api->auth = auth;
  stg_http_server_route (server, "/api", handle, api);
  stg_http_server_set_gate (server, gate, (GDestroyNotify) stg_auth_check_cancel, api);
  return (StgHttpApi *) api;
}

void
stg_http_api_free (StgHttpApi *api)
{
  g_free (api);
}
