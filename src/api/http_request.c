/* http_request.c: a handler's view of StgHttpRequest (method, path, headers,
 * cookies, query, body, peer) and StgHttpResponse (status, type, body,
 * headers). The server fills them in (http_server.c). Main-loop thread only.
 */
#include "config.h"

#include <string.h>

#include "api/http_private.h"
#include "api/http_server.h"

const gchar *
stg_http_request_method (StgHttpRequest *request)
{
  return request->method;
}

const gchar *
stg_http_request_path (StgHttpRequest *request)
{
  return request->path;
}

const gchar *
stg_http_request_header (StgHttpRequest *request, const gchar *name)
{
  return MHD_lookup_connection_value (request->conn, MHD_HEADER_KIND, name);
}

const gchar *
stg_http_request_cookie (StgHttpRequest *request, const gchar *name)
{
  return MHD_lookup_connection_value (request->conn, MHD_COOKIE_KIND, name);
}

const gchar *
stg_http_request_query (StgHttpRequest *request, const gchar *name)
{
  return MHD_lookup_connection_value (request->conn, MHD_GET_ARGUMENT_KIND, name);
}

static enum MHD_Result
add_argument (void *data, enum MHD_ValueKind kind G_GNUC_UNUSED, const char *key, const char *value)
{
  GString *s = data;
  g_autofree gchar *k = g_uri_escape_string (key, NULL, FALSE);
  g_autofree gchar *v = value ? g_uri_escape_string (value, NULL, FALSE) : NULL;

  g_string_append_printf (s, "%s%s%s%s", s->len ? "&" : "", k, v ? "=" : "", v ? v : "");
  return MHD_YES;
}

gchar *
stg_http_request_query_string (StgHttpRequest *request)
{
  GString *s = g_string_new (NULL);

  MHD_get_connection_values (request->conn, MHD_GET_ARGUMENT_KIND, add_argument, s);
  return g_string_free (s, FALSE);
}

GBytes *
stg_http_request_body (StgHttpRequest *request)
{
  return g_bytes_new (request->body.data, request->body.len);
}

const gchar *
stg_http_request_peer (StgHttpRequest *request)
{
  return request->peer;
}

void
stg_http_response_set (StgHttpResponse *response, guint status, const gchar *content_type,
                       GBytes *body)
{
  response->status = status;
  g_free (response->content_type);
  response->content_type = g_strdup (content_type);
  g_clear_pointer (&response->body, g_bytes_unref);
  response->body = body;
}

void
stg_http_response_text (StgHttpResponse *response, guint status, const gchar *text)
{
  stg_http_response_set (response, status, "text/plain; charset=utf-8",
                         g_bytes_new (text, strlen (text)));
}

void
stg_http_response_header (StgHttpResponse *response, const gchar *name, const gchar *value)
{
  g_ptr_array_add (response->headers, g_strdup (name));
  g_ptr_array_add (response->headers, g_strdup (value));
}
