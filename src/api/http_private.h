/* http_private.h: what http_server.c and http_request.c share: a request
 * and a response as the server fills them in and handlers read them.
 */
#pragma once

#include <arpa/inet.h>
#include <microhttpd.h>

#include "api/body_buffer.h"
#include "api/http_server.h"

struct _StgHttpRequest
{
  struct MHD_Connection *conn;
  gchar *method;
  gchar *path;
  StgBodyBuffer body;
  gint64 started; /* monotonic µs */
  gboolean too_large;
  gchar *refused; /* (nullable) why its body found no room (503) */
  gchar peer[INET6_ADDRSTRLEN];
  StgHttpServer *server;
  gboolean gated;   /* the gate has seen it */
  gpointer pending; /* (nullable) the gate's handle while it waits */
};

struct _StgHttpResponse
{
  guint status;
  gchar *content_type;
  GBytes *body;
  GPtrArray *headers; /* name, value, name, value, ... */
  StgHttpServer *server;
  struct MHD_Connection *conn;
  StgHttpStream *stream; /* (nullable) set by stg_http_response_stream() */
};
