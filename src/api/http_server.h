/* http_server.h: HTTP on the main loop, with libmicrohttpd.
 *
 * StgHttpServer runs libmicrohttpd without threads of its own: its epoll
 * descriptor is watched by a GLib source and its timeouts are GLib timers,
 * so every request is handled on the main loop beside everything else.
 * Routes map a path (exact, or a prefix ending in '/') to a handler that
 * gets the whole request (body collected, size-capped) and fills in a
 * response. Requests whose Host or Origin fail http_guard.h's checks are
 * refused (403) before any route sees them, and every response carries
 * the security headers (no framing, no sniffing, a content policy).
 * Main-loop thread only.
 */
#pragma once

#include <gio/gio.h>

#include "api/body_buffer.h"

G_BEGIN_DECLS

typedef struct _StgHttpServer StgHttpServer;
typedef struct _StgHttpRequest StgHttpRequest;
typedef struct _StgHttpResponse StgHttpResponse;

typedef struct
{
  gsize max_body;            /* bytes; larger requests get 413. Default 16 MiB */
  gsize max_buffered;        /* bytes all unfinished bodies may hold; over it a request
                              * is dropped. Default 48 MiB; 0: no limit */
  StgBodyBudget *budget;     /* (nullable) shared with other servers instead of
                              * max_buffered; borrowed */
  guint idle_timeout_s;      /* default 60 */
  guint request_timeout_s;   /* a request's body must be in within this; default 60 */
  guint max_connections;     /* default 4096 */
  guint max_per_address;     /* connections from one address; default 1024 */
  const gchar *tls_cert;     /* PEM file, or NULL for plain HTTP */
  const gchar *tls_key;
  const gchar *const *host_names;      /* (nullable) Host names served besides IPs and localhost */
  const gchar *const *allowed_origins; /* (nullable) other origins that may change state */
} StgHttpOptions;

/* Fills @options with the defaults given beside each field. */
void stg_http_options_init (StgHttpOptions *options);

/* Fills @response for @request. */
typedef void (*StgHttpHandler) (StgHttpRequest *request, StgHttpResponse *response,
                                gpointer user_data);

/* Listens on @address:@port (0: any free port) with @options (nullable:
 * defaults), driven by the thread-default main loop; NULL with @error when
 * the address is bad, the port busy or the TLS files unreadable. */
StgHttpServer *stg_http_server_new (const gchar *address, guint16 port,
                                    const StgHttpOptions *options, GError **error);
/* Closes every connection (streams end, parked requests are dropped) and
 * frees; @server may be NULL. */
void stg_http_server_free (StgHttpServer *server);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgHttpServer, stg_http_server_free)

/* The port actually bound. */
guint16 stg_http_server_port (StgHttpServer *server);

/* Routes @path to @handler. A @path ending in '/' matches every path under
 * it; otherwise the match is exact. The longest match wins. */
void stg_http_server_route (StgHttpServer *server, const gchar *path, StgHttpHandler handler,
                            gpointer user_data);

/* Forgets every route (a server that goes on listening while what it
 * serves is replaced). */
void stg_http_server_clear_routes (StgHttpServer *server);

/* Asked before each request's gate and route, its body read: TRUE makes
 * the request wait (its connection parked) until
 * stg_http_server_release_held(), then it goes on as if it had just come
 * (asked again). For a switch of what the server serves: requests wait
 * instead of being refused or sent away. */
typedef gboolean (*StgHttpHold) (gpointer data);

/* Sets the hold (@hold NULL: none). */
void stg_http_server_set_hold (StgHttpServer *server, StgHttpHold hold, gpointer data);

/* Lets every request the hold parked go on. */
void stg_http_server_release_held (StgHttpServer *server);

/* Runs once before each request's route, its body read: returns NULL to
 * go on, or a pending handle to make the request wait (its connection
 * parked) until stg_http_request_resume(). The server hands the handle to
 * @release once the request stops waiting or goes away. */
typedef gpointer (*StgHttpGate) (StgHttpRequest *request, gpointer data);

/* Sets the gate (one per server; @gate NULL: none). */
void stg_http_server_set_gate (StgHttpServer *server, StgHttpGate gate, GDestroyNotify release,
                               gpointer data);

/* ---- requests ---------------------------------------------------------- */

/* Lets a request the gate parked go on to its route (main loop). */
void stg_http_request_resume (StgHttpRequest *request);

/* The request's method ("GET", "POST", ...) and path (without the query). */
const gchar *stg_http_request_method (StgHttpRequest *request);
const gchar *stg_http_request_path (StgHttpRequest *request);
/* A header's value (case-insensitive name), or NULL. */
const gchar *stg_http_request_header (StgHttpRequest *request, const gchar *name);
/* A cookie's value, or NULL. */
const gchar *stg_http_request_cookie (StgHttpRequest *request, const gchar *name);
/* A query-string argument, or NULL. */
const gchar *stg_http_request_query (StgHttpRequest *request, const gchar *name);
/* The whole query string, its arguments escaped again in their order
 * ("a=1&b=x%20y"), or "" when there is none. */
gchar *stg_http_request_query_string (StgHttpRequest *request);
/* A copy of the whole body (empty when there is none). */
GBytes *stg_http_request_body (StgHttpRequest *request);
/* The peer's address, e.g. "127.0.0.1". */
const gchar *stg_http_request_peer (StgHttpRequest *request);

/* ---- responses --------------------------------------------------------- */

/* Status, content type and body (taken). */
void stg_http_response_set (StgHttpResponse *response, guint status, const gchar *content_type,
                            GBytes *body);
/* A text/plain body. */
void stg_http_response_text (StgHttpResponse *response, guint status, const gchar *text);
/* Adds a header (both strings copied). */
void stg_http_response_header (StgHttpResponse *response, const gchar *name, const gchar *value);

/* ---- streams (Server-Sent Events and the like) -------------------------- */

typedef struct _StgHttpStream StgHttpStream;

/* Makes @response a stream with @content_type: the status and headers go out
 * now, the body as it is sent. The stream lives until the client goes away
 * or the server stops; then @on_close (nullable) is called with @data, and
 * the stream must not be used after that. */
StgHttpStream *stg_http_response_stream (StgHttpResponse *response, const gchar *content_type,
                                         void (*on_close) (StgHttpStream *stream, gpointer data),
                                         gpointer data);

/* Queues @len bytes of body. Streams whose client reads too slowly are
 * closed once STG_HTTP_STREAM_MAX_QUEUE bytes wait. */
void stg_http_stream_send (StgHttpStream *stream, const gchar *bytes, gsize len);

/* Ends the body once what was sent has gone out; then the stream closes
 * as if the client had gone (@on_close is called). No send after this. */
void stg_http_stream_finish (StgHttpStream *stream);

/* Forgets @on_close: the stream's owner is going away first. */
void stg_http_stream_detach (StgHttpStream *stream);

#define STG_HTTP_STREAM_MAX_QUEUE (1024 * 1024)

G_END_DECLS
