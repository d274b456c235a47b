/* http_server.c: StgHttpServer, libmicrohttpd driven by the GLib main loop.
 *
 * libmicrohttpd runs in "external event loop" mode with epoll: one
 * descriptor tells when it has work. A GLib fd source on it and a timer for
 * its own timeouts call MHD_run(); after every run the timer is set again
 * from MHD_get_timeout(). A request's body is collected into a GByteArray
 * (up to max_body) before its route's handler runs.
 *
 * Streams: a stream's body comes from a content-reader callback. When its
 * queue is empty the reader suspends the connection and returns 0 (MHD's way
 * of saying "no data yet"); stg_http_stream_send() resumes it. Suspended
 * connections must be resumed before MHD stops, so the server keeps a list.
 * Main-loop thread only.
 */
#include "config.h"

#include <glib-unix.h>
#include <microhttpd.h>
#include <string.h>

#include "api/body_buffer.h"
#include "api/http_guard.h"
#include "api/http_private.h"
#include "api/http_server.h"

#define HTTP_TOO_LARGE 413

/* GnuTLS's defaults, but TLS 1.2 and 1.3 only, and no CBC or SHA-1 MACs
 * (nothing a current client needs). */
#define STG_HTTP_TLS_PRIORITIES \
  "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:+AES-256-GCM:+AES-128-GCM:" \
  "+CHACHA20-POLY1305:-MAC-ALL:+AEAD:%SERVER_PRECEDENCE"

typedef struct
{
  gchar *path;
  gboolean prefix;
  StgHttpHandler handler;
  gpointer data;
} Route;

struct _StgHttpServer
{
  struct MHD_Daemon *daemon;
  StgHttpOptions options;
  guint16 port;
  guint fd_source;
  guint timer;
  GPtrArray *routes;         /* Route* */
  gchar *tls_cert_pem;
  gchar *tls_key_pem;
  GHashTable *streams;       /* StgHttpStream* set */
  StgHttpGate gate;
  GDestroyNotify gate_release;
  gpointer gate_data;
  GHashTable *waiting;       /* StgHttpRequest* set: parked by the hold, or the gate (gated) */
  StgHttpHold hold;          /* (nullable) */
  gpointer hold_data;
  StgBodyBudget own_budget;
  StgBodyBudget *budget;     /* what unfinished bodies hold: own_budget or a shared one */
};

struct _StgHttpStream
{
  StgHttpServer *server;
  struct MHD_Connection *conn;
  GByteArray *queue;
  gboolean suspended;
  gboolean closed;           /* too slow: the next read ends the stream */
  gboolean finished;         /* the body is complete once the queue drains */
  void (*on_close) (StgHttpStream *stream, gpointer data);
  gpointer data;
};

void
stg_http_options_init (StgHttpOptions *options)
{
  memset (options, 0, sizeof *options);
  options->max_body = 16 * 1024 * 1024;
  options->max_buffered = 48 * 1024 * 1024;
  options->idle_timeout_s = 60;
  options->request_timeout_s = 60;
  options->max_connections = 4096;
  options->max_per_address = 1024;
}

/* ---- driving MHD from the main loop -------------------------------------- */

static void schedule (StgHttpServer *server);

static void
run (StgHttpServer *server)
{
  MHD_run (server->daemon);
  schedule (server);
}

static gboolean
on_timer (gpointer user_data)
{
  StgHttpServer *server = user_data;

  server->timer = 0;
  run (server);
  return G_SOURCE_REMOVE;
}

/* Lets MHD see resumed connections on the next iteration. */
static void
run_soon (StgHttpServer *server)
{
  g_clear_handle_id (&server->timer, g_source_remove);
  server->timer = g_idle_add (on_timer, server);
}

static gboolean
on_fd (gint fd, GIOCondition condition, gpointer user_data)
{
  (void) fd;
  (void) condition;
  run (user_data);
  return G_SOURCE_CONTINUE;
}

static void
schedule (StgHttpServer *server)
{
  MHD_UNSIGNED_LONG_LONG ms = 0;

  g_clear_handle_id (&server->timer, g_source_remove);
  if (MHD_get_timeout (server->daemon, &ms) == MHD_YES)
    server->timer = g_timeout_add ((guint) MIN (ms, (MHD_UNSIGNED_LONG_LONG) G_MAXUINT),
                                   on_timer, server);
}

/* ---- requests -------------------------------------------------------------- */

/* The request stops waiting for the gate. */
static void
request_unpark (StgHttpRequest *request)
{
  StgHttpServer *server = request->server;

  g_hash_table_remove (server->waiting, request);
  if (request->pending != NULL)
    server->gate_release (g_steal_pointer (&request->pending));
}

static void
request_free (StgHttpRequest *request)
{
  if (request == NULL)
    return;
  request_unpark (request);
  g_free (request->method);
  g_free (request->path);
  g_free (request->refused);
  stg_body_buffer_clear (&request->body);
  g_free (request);
}

static void
on_completed (void *cls, struct MHD_Connection *connection, void **con_cls,
              enum MHD_RequestTerminationCode toe)
{
  (void) cls;
  (void) connection;
  (void) toe;
  request_free (*con_cls);
  *con_cls = NULL;
}

static Route *
find_route (StgHttpServer *server, const gchar *path)
{
  Route *best = NULL;
  gsize best_len = 0;

  for (guint i = 0; i < server->routes->len; i++)
    {
      Route *r = server->routes->pdata[i];
      gsize n = strlen (r->path);
      gboolean match = r->prefix ? g_str_has_prefix (path, r->path) : strcmp (path, r->path) == 0;
      if (match && n >= best_len)
        {
          best = r;
          best_len = n;
        }
    }
  return best;
}

/* ---- streams ---------------------------------------------------------------- */

static ssize_t
stream_read (void *cls, uint64_t pos, char *buf, size_t max)
{
  StgHttpStream *st = cls;
  (void) pos;

  if (st->closed)
    return MHD_CONTENT_READER_END_WITH_ERROR;
  if (st->queue->len == 0 && st->finished)
    return MHD_CONTENT_READER_END_OF_STREAM;
  if (st->queue->len == 0)
    {
      /* Nothing to send: park the connection until there is. */
      MHD_suspend_connection (st->conn);
      st->suspended = TRUE;
      return 0;
    }
  gsize n = MIN (max, (gsize) st->queue->len);
  memcpy (buf, st->queue->data, n);
  g_byte_array_remove_range (st->queue, 0, (guint) n);
  return (ssize_t) n;
}

static void
stream_free (void *cls)
{
  StgHttpStream *st = cls;

  g_hash_table_remove (st->server->streams, st);
  if (st->on_close != NULL)
    st->on_close (st, st->data);
  g_byte_array_unref (st->queue);
  g_free (st);
}

static void
stream_wake (StgHttpStream *st)
{
  if (!st->suspended)
    return;
  st->suspended = FALSE;
  MHD_resume_connection (st->conn);
  run_soon (st->server);
}

StgHttpStream *
stg_http_response_stream (StgHttpResponse *response, const gchar *content_type,
                          void (*on_close) (StgHttpStream *stream, gpointer data), gpointer data)
{
  StgHttpStream *st;

  g_return_val_if_fail (response->stream == NULL, NULL);
  st = g_new0 (StgHttpStream, 1);
  st->server = response->server;
  st->conn = response->conn;
  st->queue = g_byte_array_new ();
  st->on_close = on_close;
  st->data = data;
  response->stream = st;
  response->status = 200;
  g_free (response->content_type);
  response->content_type = g_strdup (content_type);
  g_hash_table_add (st->server->streams, st);
  return st;
}

void
stg_http_stream_send (StgHttpStream *stream, const gchar *bytes, gsize len)
{
  if (stream->closed)
    return;
  if (stream->queue->len + len > STG_HTTP_STREAM_MAX_QUEUE)
    {
      g_info ("http: closing a stream whose client does not keep up");
      stream->closed = TRUE;
      g_byte_array_set_size (stream->queue, 0);
    }
  else
    g_byte_array_append (stream->queue, (const guint8 *) bytes, (guint) len);
  stream_wake (stream);
}

void
stg_http_stream_finish (StgHttpStream *stream)
{
  stream->finished = TRUE;
  stream_wake (stream);
}

void
stg_http_stream_detach (StgHttpStream *stream)
{
  stream->on_close = NULL;
  stream->data = NULL;
}

static enum MHD_Result
send_response (struct MHD_Connection *conn, StgHttpResponse *resp)
{
  gsize n = 0;
  const void *data = resp->body ? g_bytes_get_data (resp->body, &n) : "";
  struct MHD_Response *r;
  enum MHD_Result ret;

  if (resp->stream != NULL)
    r = MHD_create_response_from_callback (MHD_SIZE_UNKNOWN, 4096, stream_read, resp->stream,
                                           stream_free);
  else
    r = MHD_create_response_from_buffer (n, (void *) data, MHD_RESPMEM_MUST_COPY);

  if (resp->content_type != NULL)
    MHD_add_response_header (r, MHD_HTTP_HEADER_CONTENT_TYPE, resp->content_type);
  MHD_add_response_header (r, "X-Content-Type-Options", "nosniff");
  MHD_add_response_header (r, "X-Frame-Options", "DENY");
  MHD_add_response_header (r, "Content-Security-Policy", STG_HTTP_GUARD_CSP);
  MHD_add_response_header (r, "Referrer-Policy", "same-origin");
  for (guint i = 0; i + 1 < resp->headers->len; i += 2)
    MHD_add_response_header (r, resp->headers->pdata[i], resp->headers->pdata[i + 1]);
  ret = MHD_queue_response (conn, resp->status, r);
  MHD_destroy_response (r);
  return ret;
}

static void
response_clear (StgHttpResponse *resp)
{
  g_free (resp->content_type);
  g_clear_pointer (&resp->body, g_bytes_unref);
  g_ptr_array_unref (resp->headers);
}

static enum MHD_Result
simple (struct MHD_Connection *conn, guint status, const gchar *text)
{
  StgHttpResponse resp = { 0 };

  resp.headers = g_ptr_array_new_with_free_func (g_free);
  stg_http_response_text (&resp, status, text);
  enum MHD_Result ret = send_response (conn, &resp);
  response_clear (&resp);
  return ret;
}

/* Keeps a piece of a request's body, or drops the connection (MHD_NO)
 * when its sender is too slow. A body the budget has no room for is read
 * to its end and dropped, and answered 503 with the reason. */
static enum MHD_Result
take_upload (StgHttpServer *server, StgHttpRequest *req, const char *data, size_t *size)
{
  gsize n = *size;

  *size = 0;
  if (server->options.request_timeout_s > 0 &&
      g_get_monotonic_time () - req->started > server->options.request_timeout_s * G_USEC_PER_SEC)
    {
      g_info ("http: dropping a request from %s: its body is too slow", req->peer);
      return MHD_NO;
    }
  if (req->too_large || req->body.len + n > server->options.max_body)
    {
      req->too_large = TRUE;
      stg_body_buffer_clear (&req->body);
      return MHD_YES;
    }
  if (req->refused != NULL)
    return MHD_YES; /* the rest is read and dropped; the answer says why */
  g_autoptr (GError) error = NULL;
  if (!stg_body_buffer_append (&req->body, (const guint8 *) data, n, &error))
    {
      g_info ("http: refusing a request from %s: %s", req->peer, error->message);
      req->refused = g_strdup_printf ("%s; try again later\n", error->message);
      stg_body_buffer_clear (&req->body);
    }
  return MHD_YES;
}

/* Whether the request's Host and Origin let it in (http_guard.h). */
static gboolean
guard (StgHttpServer *server, struct MHD_Connection *conn, const gchar *method, GError **error)
{
  StgHttpGuard g = { server->options.host_names, server->options.allowed_origins,
                     server->tls_cert_pem != NULL };
  const gchar *host = MHD_lookup_connection_value (conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);

  return stg_http_guard_host (&g, host, error) &&
         stg_http_guard_origin (&g, method, host,
                                MHD_lookup_connection_value (conn, MHD_HEADER_KIND, "Origin"),
                                MHD_lookup_connection_value (conn, MHD_HEADER_KIND, "Sec-Fetch-Site"),
                                error);
}

static enum MHD_Result
on_access (void *cls, struct MHD_Connection *conn, const char *url, const char *method,
           const char *version, const char *upload_data, size_t *upload_data_size,
           void **con_cls)
{
  StgHttpServer *server = cls;
  StgHttpRequest *req = *con_cls;
  (void) version;

  if (req == NULL)
    {
      req = g_new0 (StgHttpRequest, 1);
      req->conn = conn;
      req->server = server;
      req->method = g_strdup (method);
      req->path = g_strdup (url);
      req->started = g_get_monotonic_time ();
      const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info (conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
      if (ci != NULL && ci->client_addr != NULL)
        {
          const struct sockaddr *sa = ci->client_addr;
          if (sa->sa_family == AF_INET)
            inet_ntop (AF_INET, &((const struct sockaddr_in *) sa)->sin_addr, req->peer, sizeof req->peer);
          else if (sa->sa_family == AF_INET6)
            inet_ntop (AF_INET6, &((const struct sockaddr_in6 *) sa)->sin6_addr, req->peer, sizeof req->peer);
        }
      *con_cls = req;

      /* Foreign hosts and origins are refused before the body is read. */
      g_autoptr (GError) refused = NULL;
      if (!guard (server, conn, method, &refused))
        {
          g_info ("http: %s %s from %s: %s", method, url, req->peer, refused->message);
          g_autofree gchar *text = g_strconcat (refused->message, "\n", NULL);
          return simple (conn, MHD_HTTP_FORBIDDEN, text);
        }

      /* A body announced as too large is refused before it is read. */
      const char *length = MHD_lookup_connection_value (conn, MHD_HEADER_KIND,
                                                        MHD_HTTP_HEADER_CONTENT_LENGTH);
      guint64 want = length != NULL ? g_ascii_strtoull (length, NULL, 10) : 0;
      if (want > server->options.max_body)
        return simple (conn, HTTP_TOO_LARGE, "request body too large\n");
      stg_body_buffer_init (&req->body, server->budget, req->peer, (gsize) want);
      return MHD_YES;
    }

  if (*upload_data_size > 0)
    return take_upload (server, req, upload_data, upload_data_size);

  if (req->too_large)
    return simple (conn, HTTP_TOO_LARGE, "request body too large\n");
  if (req->refused != NULL)
    return simple (conn, MHD_HTTP_SERVICE_UNAVAILABLE, req->refused);
  if (server->hold != NULL && server->hold (server->hold_data))
    {
      g_hash_table_add (server->waiting, req);
      MHD_suspend_connection (conn);
      return MHD_YES;
    }
  if (server->gate != NULL && !req->gated)
    {
      req->gated = TRUE;
      req->pending = server->gate (req, server->gate_data);
      if (req->pending != NULL)
        {
          g_hash_table_add (server->waiting, req);
          MHD_suspend_connection (conn);
          return MHD_YES;
        }
    }

  Route *route = find_route (server, req->path);
  if (route == NULL)
    return simple (conn, MHD_HTTP_NOT_FOUND, "not found\n");

  StgHttpResponse resp = { 0 };
  resp.status = MHD_HTTP_OK;
  resp.headers = g_ptr_array_new_with_free_func (g_free);
  resp.server = server;
  resp.conn = conn;
  route->handler (req, &resp, route->data);
  enum MHD_Result ret = send_response (conn, &resp);
  response_clear (&resp);
  return ret;
}

/* libmicrohttpd's messages, as printf formats with their arguments. */
static void on_log (void *cls, const char *fmt, va_list ap) G_GNUC_PRINTF (2, 0);

static void
on_log (void *cls, const char *fmt, va_list ap)
{
  g_autofree gchar *text = g_strdup_vprintf (fmt, ap);
  (void) cls;
  g_strchomp (text);
  g_info ("http: %s", text);
}

/* ---- the server ------------------------------------------------------------ */

StgHttpServer *
stg_http_server_new (const gchar *address, guint16 port, const StgHttpOptions *options,
                     GError **error)
{
  g_autoptr (GInetAddress) inet = g_inet_address_new_from_string (address);
  struct sockaddr_storage ss = { 0 };
  StgHttpServer *server;
  unsigned int flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME;

  if (inet == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "'%s' is not an IP address", address);
      return NULL;
    }
  {
    g_autoptr (GSocketAddress) sa = g_inet_socket_address_new (inet, port);
    if (!g_socket_address_to_native (sa, &ss, sizeof ss, error))
      return NULL;
  }
  if (g_inet_address_get_family (inet) == G_SOCKET_FAMILY_IPV6)
    flags |= MHD_USE_IPv6;

  server = g_new0 (StgHttpServer, 1);
  if (options != NULL)
    server->options = *options;
  else
    stg_http_options_init (&server->options);
  server->routes = g_ptr_array_new ();
  server->streams = g_hash_table_new (NULL, NULL);
  server->waiting = g_hash_table_new (NULL, NULL);
  /* One largest body always fits. */
  server->own_budget.max = server->options.max_buffered == 0 ? 0
                         : MAX (server->options.max_buffered, server->options.max_body);
  server->budget = server->options.budget ? server->options.budget : &server->own_budget;

  if (server->options.tls_cert != NULL || server->options.tls_key != NULL)
    {
      if (server->options.tls_cert == NULL || server->options.tls_key == NULL)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "TLS needs both a certificate and a key");
          goto fail;
        }
      if (!g_file_get_contents (server->options.tls_cert, &server->tls_cert_pem, NULL, error) ||
          !g_file_get_contents (server->options.tls_key, &server->tls_key_pem, NULL, error))
        goto fail;
      flags |= MHD_USE_TLS;
    }

  if (flags & MHD_USE_TLS)
    server->daemon = MHD_start_daemon (flags, port, NULL, NULL, on_access, server,
                                       MHD_OPTION_EXTERNAL_LOGGER, on_log, server,
                                       MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &ss,
                                       MHD_OPTION_NOTIFY_COMPLETED, on_completed, server,
                                       MHD_OPTION_CONNECTION_TIMEOUT, server->options.idle_timeout_s,
                                       MHD_OPTION_CONNECTION_LIMIT, server->options.max_connections,
                                       MHD_OPTION_PER_IP_CONNECTION_LIMIT, server->options.max_per_address,
                                       MHD_OPTION_HTTPS_MEM_CERT, server->tls_cert_pem,
                                       MHD_OPTION_HTTPS_MEM_KEY, server->tls_key_pem,
                                       MHD_OPTION_HTTPS_PRIORITIES, STG_HTTP_TLS_PRIORITIES,
                                       MHD_OPTION_END);
  else
    server->daemon = MHD_start_daemon (flags, port, NULL, NULL, on_access, server,
                                       MHD_OPTION_EXTERNAL_LOGGER, on_log, server,
                                       MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &ss,
                                       MHD_OPTION_NOTIFY_COMPLETED, on_completed, server,
                                       MHD_OPTION_CONNECTION_TIMEOUT, server->options.idle_timeout_s,
                                       MHD_OPTION_CONNECTION_LIMIT, server->options.max_connections,
                                       MHD_OPTION_PER_IP_CONNECTION_LIMIT, server->options.max_per_address,
                                       MHD_OPTION_END);
  if (server->daemon == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                   "cannot serve HTTP on %s:%u (address in use, or bad TLS files?)", address, port);
      goto fail;
    }

  const union MHD_DaemonInfo *info = MHD_get_daemon_info (server->daemon, MHD_DAEMON_INFO_BIND_PORT);
  server->port = info ? info->port : port;
  info = MHD_get_daemon_info (server->daemon, MHD_DAEMON_INFO_EPOLL_FD);
  server->fd_source = g_unix_fd_add (info->epoll_fd, G_IO_IN, on_fd, server);
  schedule (server);
  return server;

fail:
  stg_http_server_free (server);
  return NULL;
}

void
stg_http_server_free (StgHttpServer *server)
{
  if (server == NULL)
    return;
  g_clear_handle_id (&server->fd_source, g_source_remove);
  g_clear_handle_id (&server->timer, g_source_remove);
  if (server->daemon != NULL)
    {
      /* MHD cannot stop with suspended connections: end every stream. */
      GHashTableIter it;
      gpointer key;
      g_hash_table_iter_init (&it, server->streams);
      while (g_hash_table_iter_next (&it, &key, NULL))
        {
          StgHttpStream *st = key;
          st->closed = TRUE;
          if (st->suspended)
            {
              st->suspended = FALSE;
              MHD_resume_connection (st->conn);
            }
        }
      /* Nor with parked requests. */
      g_autoptr (GList) parked = g_hash_table_get_keys (server->waiting);
      for (GList *l = parked; l != NULL; l = l->next)
        {
          request_unpark (l->data);
          MHD_resume_connection (((StgHttpRequest *) l->data)->conn);
        }
      MHD_run (server->daemon);
      MHD_stop_daemon (server->daemon);
    }
  stg_http_server_clear_routes (server);
  g_ptr_array_unref (server->routes);
  g_hash_table_unref (server->streams);
  g_hash_table_unref (server->waiting);
  g_free (server->tls_cert_pem);
  g_free (server->tls_key_pem);
  g_free (server);
}

guint16
stg_http_server_port (StgHttpServer *server)
{
  return server->port;
}

void
stg_http_server_route (StgHttpServer *server, const gchar *path, StgHttpHandler handler,
                       gpointer user_data)
{
  Route *r = g_new0 (Route, 1);

  r->path = g_strdup (path);
  r->prefix = g_str_has_suffix (path, "/");
  r->handler = handler;
  r->data = user_data;
  g_ptr_array_add (server->routes, r);
}

void
stg_http_server_clear_routes (StgHttpServer *server)
{
  for (guint i = 0; i < server->routes->len; i++)
    {
      Route *r = server->routes->pdata[i];
      g_free (r->path);
      g_free (r);
    }
  g_ptr_array_set_size (server->routes, 0);
}

void
stg_http_server_set_hold (StgHttpServer *server, StgHttpHold hold, gpointer data)
{
  server->hold = hold;
  server->hold_data = data;
}

void
stg_http_server_release_held (StgHttpServer *server)
{
  g_autoptr (GList) parked = g_hash_table_get_keys (server->waiting);
  gboolean resumed = FALSE;

  for (GList *l = parked; l != NULL; l = l->next)
    {
      StgHttpRequest *req = l->data;
      if (req->gated)
        continue; /* the gate's to let go */
      g_hash_table_remove (server->waiting, req);
      MHD_resume_connection (req->conn);
      resumed = TRUE;
    }
  if (resumed && server->daemon != NULL)
    run_soon (server);
}

void
stg_http_server_set_gate (StgHttpServer *server, StgHttpGate gate, GDestroyNotify release,
                          gpointer data)
{
  server->gate = gate;
  server->gate_release = release;
  server->gate_data = data;
}

void
stg_http_request_resume (StgHttpRequest *request)
{
  StgHttpServer *server = request->server;

  if (!g_hash_table_contains (server->waiting, request))
    return;
  request_unpark (request);
  MHD_resume_connection (request->conn);
  run_soon (server);
}
