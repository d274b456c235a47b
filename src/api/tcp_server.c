/* tcp_server.c: StgTcpServer, framed Thrift over TCP on the main loop.
 *
 * Each connection is a small state machine driven by GIO async calls, one
 * outstanding at a time:
 *
 *   read header (4 bytes) --> read body (n bytes) --> dispatch --> write reply
 *        ^                                                           |
 *        +-----------------------------------------------------------+
 *
 * conn_close() marks a connection closing and cancels its pending call; the
 * connection is freed by that call's callback, or at once when nothing is
 * pending. Invariant: a connection is in server->conns exactly until it is
 * freed. Main-loop thread only.
 */
#include "config.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>

#include "api/tcp_server.h"

struct _StgTcpServer
{
  GSocketService *service;   /* (owned) */
  StgDispatch *dispatch;     /* borrowed */
  StgTcpOptions options;
  guint16 port;
  GHashTable *conns;         /* Conn* set */
};

typedef struct
{
  StgTcpServer *server;
  GSocketConnection *conn;   /* (owned) */
  GCancellable *cancel;      /* (owned) */
  gchar *peer;               /* (owned) for logs */
  guint8 header[4];
  guint8 *body;              /* (owned) (nullable) */
  gsize body_len;
  GBytes *reply;             /* (owned) (nullable) the frame being written */
  guint idle_id;
  gboolean pending;          /* an async call is outstanding */
  gboolean closing;
} Conn;

void
stg_tcp_options_init (StgTcpOptions *options)
{
  options->max_frame = 16 * 1024 * 1024;
  options->idle_timeout_s = 300;
  options->caller = (StgCaller) { .access = STG_ACCESS_WRITE };
}

static void read_header (Conn *c);

static void
conn_free (Conn *c)
{
  g_hash_table_remove (c->server->conns, c);
  g_clear_handle_id (&c->idle_id, g_source_remove);
  (void) g_io_stream_close (G_IO_STREAM (c->conn), NULL, NULL);
  g_clear_object (&c->conn);
  g_clear_object (&c->cancel);
  g_clear_pointer (&c->reply, g_bytes_unref);
  g_free (c->body);
  g_free (c->peer);
  g_free (c);
}

/* Closes @c for @reason (NULL: quietly, e.g. the peer hung up). */
static void
conn_close (Conn *c, GLogLevelFlags level, const gchar *reason)
{
  if (c->closing)
    return;
  c->closing = TRUE;
  if (reason != NULL)
    g_log_structured (G_LOG_DOMAIN, level, "MESSAGE", "thrift: closing connection from %s: %s",
                      c->peer, reason);
  g_cancellable_cancel (c->cancel);
  if (!c->pending)
    conn_free (c);
}

/* Returns TRUE when the callback should go on; frees @c otherwise. */
static gboolean
conn_resume (Conn *c)
{
  c->pending = FALSE;
  if (c->closing)
    {
      conn_free (c);
      return FALSE;
    }
  return TRUE;
}

static gboolean
on_idle (gpointer user_data)
{
  Conn *c = user_data;

  c->idle_id = 0;
  conn_close (c, G_LOG_LEVEL_INFO, "idle for too long");
  return G_SOURCE_REMOVE;
}

static void
on_written (GObject *source, GAsyncResult *res, gpointer user_data)
{
  Conn *c = user_data;
  g_autoptr (GError) error = NULL;
  gboolean ok = g_output_stream_write_all_finish (G_OUTPUT_STREAM (source), res, NULL, &error);

  if (!conn_resume (c))
    return;
  g_clear_pointer (&c->reply, g_bytes_unref);
  if (!ok)
    {
      conn_close (c, G_LOG_LEVEL_DEBUG, error->message);
      return;
    }
  read_header (c);
}

static void
on_body (GObject *source, GAsyncResult *res, gpointer user_data)
{
  Conn *c = user_data;
  g_autoptr (GError) error = NULL;
  gsize got = 0;
  gboolean ok = g_input_stream_read_all_finish (G_INPUT_STREAM (source), res, &got, &error);

  if (!conn_resume (c))
    return;
  if (!ok || got != c->body_len)
    {
      conn_close (c, G_LOG_LEVEL_INFO, ok ? "frame cut short" : error->message);
      return;
    }

  g_autoptr (GBytes) request = g_bytes_new_take (g_steal_pointer (&c->body), c->body_len);
  g_autoptr (GBytes) reply = stg_dispatch_process (c->server->dispatch, stg_protocol_binary,
                                                   request, &c->server->options.caller, &error);
  if (reply == NULL)
    {
      conn_close (c, G_LOG_LEVEL_WARNING, error->message);
      return;
    }
  if (g_bytes_get_size (reply) == 0)
    {
      read_header (c);
      return;
    }

  gsize n = g_bytes_get_size (reply);
  guint8 *frame = g_malloc (n + 4);
  guint32 be = GUINT32_TO_BE ((guint32) n);
  memcpy (frame, &be, 4);
  memcpy (frame + 4, g_bytes_get_data (reply, NULL), n);
  c->reply = g_bytes_new_take (frame, n + 4);
  c->pending = TRUE;
  g_output_stream_write_all_async (g_io_stream_get_output_stream (G_IO_STREAM (c->conn)),
                                   frame, n + 4, G_PRIORITY_DEFAULT, c->cancel, on_written, c);
}

static void
on_header (GObject *source, GAsyncResult *res, gpointer user_data)
{
  Conn *c = user_data;
  g_autoptr (GError) error = NULL;
  gsize got = 0;
  gboolean ok = g_input_stream_read_all_finish (G_INPUT_STREAM (source), res, &got, &error);

  if (!conn_resume (c))
    return;
  if (!ok)
    {
      conn_close (c, G_LOG_LEVEL_DEBUG, error->message);
      return;
    }
  if (got == 0)
    {
      conn_close (c, G_LOG_LEVEL_DEBUG, NULL);   /* the client hung up */
      return;
    }
  if (got < 4)
    {
      conn_close (c, G_LOG_LEVEL_INFO, "frame header cut short");
      return;
    }

  guint32 be;
  memcpy (&be, c->header, 4);
  guint32 len = GUINT32_FROM_BE (be);
  if (len == 0 || len > G_MAXINT32)
    {
      g_autofree gchar *why = g_strdup_printf ("bad frame size %u", len);
      conn_close (c, G_LOG_LEVEL_WARNING, why);
      return;
    }
  if (len > c->server->options.max_frame)
    {
      g_autofree gchar *why = g_strdup_printf (
          "frame of %u bytes is over the limit of %" G_GSIZE_FORMAT " bytes", len,
          c->server->options.max_frame);
      conn_close (c, G_LOG_LEVEL_WARNING, why);
      return;
    }
  c->body_len = len;
  c->body = g_malloc (len);
  c->pending = TRUE;
  g_input_stream_read_all_async (g_io_stream_get_input_stream (G_IO_STREAM (c->conn)),
                                 c->body, len, G_PRIORITY_DEFAULT, c->cancel, on_body, c);
}

static void
read_header (Conn *c)
{
  g_clear_handle_id (&c->idle_id, g_source_remove);
  if (c->server->options.idle_timeout_s > 0)
    c->idle_id = g_timeout_add_seconds (c->server->options.idle_timeout_s, on_idle, c);
  c->pending = TRUE;
  g_input_stream_read_all_async (g_io_stream_get_input_stream (G_IO_STREAM (c->conn)),
                                 c->header, 4, G_PRIORITY_DEFAULT, c->cancel, on_header, c);
}

static gboolean
on_incoming (GSocketService *service, GSocketConnection *connection, GObject *source,
             gpointer user_data)
{
  StgTcpServer *server = user_data;
  Conn *c = g_new0 (Conn, 1);
  g_autoptr (GSocketAddress) remote = g_socket_connection_get_remote_address (connection, NULL);
  (void) service;
  (void) source;

  c->server = server;
  c->conn = g_object_ref (connection);
  c->cancel = g_cancellable_new ();
  if (remote != NULL && G_IS_INET_SOCKET_ADDRESS (remote))
    {
      g_autofree gchar *ip = g_inet_address_to_string (
          g_inet_socket_address_get_address (G_INET_SOCKET_ADDRESS (remote)));
      c->peer = g_strdup_printf ("%s:%u", ip,
                                 g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (remote)));
    }
  else
    c->peer = g_strdup ("unknown peer");
  g_socket_set_option (g_socket_connection_get_socket (connection), IPPROTO_TCP, TCP_NODELAY, 1, NULL);
  g_hash_table_add (server->conns, c);
  read_header (c);
  return TRUE;
}

StgTcpServer *
stg_tcp_server_new (StgDispatch *dispatch, const gchar *address, guint16 port,
                    const StgTcpOptions *options, GError **error)
{
  g_autoptr (GInetAddress) inet = g_inet_address_new_from_string (address);
  g_autoptr (GSocketAddress) want = NULL;
  g_autoptr (GSocketAddress) got = NULL;
  StgTcpServer *server;

  if (inet == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "'%s' is not an IP address", address);
      return NULL;
    }
  want = g_inet_socket_address_new (inet, port);

  server = g_new0 (StgTcpServer, 1);
  server->dispatch = dispatch;
  if (options != NULL)
    server->options = *options;
  else
    stg_tcp_options_init (&server->options);
  server->conns = g_hash_table_new (NULL, NULL);
  server->service = g_socket_service_new ();
  if (!g_socket_listener_add_address (G_SOCKET_LISTENER (server->service), want,
                                      G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, NULL,
                                      &got, error))
    {
      g_prefix_error (error, "cannot listen on %s:%u: ", address, port);
      g_object_unref (server->service);
      g_hash_table_unref (server->conns);
      g_free (server);
      return NULL;
    }
  server->port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (got));
  g_signal_connect (server->service, "incoming", G_CALLBACK (on_incoming), server);
  g_socket_service_start (server->service);
  return server;
}

guint16
stg_tcp_server_port (StgTcpServer *server)
{
  return server->port;
}

void
stg_tcp_server_free (StgTcpServer *server)
{
  if (server == NULL)
    return;
  g_socket_service_stop (server->service);
  g_socket_listener_close (G_SOCKET_LISTENER (server->service));
  g_signal_handlers_disconnect_by_data (server->service, server);

  g_autoptr (GList) conns = g_hash_table_get_keys (server->conns);
  for (GList *l = conns; l != NULL; l = l->next)
    conn_close (l->data, G_LOG_LEVEL_DEBUG, NULL);
  while (g_hash_table_size (server->conns) > 0)
    g_main_context_iteration (NULL, TRUE);

  g_object_unref (server->service);
  g_hash_table_unref (server->conns);
  g_free (server);
}
