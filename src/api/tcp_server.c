/* tcp_server.c: StgTcpServer, framed Thrift over TCP on the main loop.
 *
 * Each connection is a small state machine driven by GIO async calls, one
 * outstanding at a time (c->pending). It moves only along these arrows;
 * each names the function that takes it:
 *
 *   (accepted) --[on_incoming: read_header]--> HEADER, or CLOSING when
 *              there are too many connections
 *   HEADER --[on_header: read_piece]--> BODY
 *   BODY --[on_piece: read_piece]--> BODY, while the frame is incomplete
 *   BODY --[on_piece: dispatch_frame]--> REPLY, or HEADER when there is
 *          nothing to answer (a oneway call)
 *   REPLY --[on_written: read_header]--> HEADER
 *   any state --[conn_close]--> CLOSING: a read or write that failed or
 *          came up short, a bad or oversized frame header, a body over the
 *          server's StgBodyBudget, the dispatcher's refusal, on_idle (no
 *          header for idle_timeout_s), on_frame_timeout (a body not
 *          complete frame_timeout_s after its header), the server freed
 *   CLOSING --[conn_free, at once or from the cancelled call's callback
 *          (conn_resume)]--> (freed)
 *
 * What holds in each state:
 *  1. Every state but CLOSING has exactly one call pending: HEADER a read
 *     of the 4 header bytes, BODY a read of a piece (at most PIECE bytes)
 *     into c->body, which grows within the server's StgBodyBudget
 *     (body_buffer.h), REPLY the write of c->reply.
 *  2. HEADER has the idle timer (idle_id, when idle_timeout_s is set);
 *     BODY has the frame timer in idle_id instead; REPLY has none.
 *  3. A connection is in server->conns exactly until it is freed.
 *
 * Main-loop thread only.
 */
#include "config.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>

#include "api/body_buffer.h"
#include "api/tcp_server.h"

#define PIECE (64 * 1024)

struct _StgTcpServer
{
  GSocketService *service;   /* (owned) */
  StgDispatch *dispatch;     /* borrowed */
  StgTcpOptions options;
  guint16 port;
  GHashTable *conns;         /* Conn* set */
  GHashTable *per_address;   /* address -> open connections (GUINT_TO_POINTER) */
  StgBodyBudget own_budget;
  StgBodyBudget *budget;     /* own_budget or a shared one */
};

typedef struct
{
  StgTcpServer *server;
  GSocketConnection *conn;   /* (owned) */
  GCancellable *cancel;      /* (owned) */
  gchar *peer;               /* (owned) for logs */
  gchar *address;            /* (owned) the peer's IP, for the per-address count */
  guint8 header[4];
  StgBodyBuffer body;
  gsize body_len;            /* the frame's announced size */
  GBytes *reply;             /* (owned) (nullable) the frame being written */
  guint idle_id;
  gboolean pending;          /* an async call is outstanding */
  gboolean closing;
} Conn;

void
stg_tcp_options_init (StgTcpOptions *options)
{
  options->max_frame = 16 * 1024 * 1024;
  options->max_buffered = 48 * 1024 * 1024;
  options->idle_timeout_s = 300;
  options->frame_timeout_s = 60;
  options->max_connections = 4096;
  options->max_per_address = 1024;
  options->backlog = 4096;
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
  stg_body_buffer_clear (&c->body);
  if (c->address != NULL)
    {
      guint n = GPOINTER_TO_UINT (g_hash_table_lookup (c->server->per_address, c->address));
      if (n <= 1)
        g_hash_table_remove (c->server->per_address, c->address);
      else
        g_hash_table_insert (c->server->per_address, g_strdup (c->address), GUINT_TO_POINTER (n - 1));
    }
  g_free (c->address);
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

/* The frame is in: dispatch it and write the reply. */
static void
dispatch_frame (Conn *c)
{
  g_autoptr (GError) error = NULL;

  g_clear_handle_id (&c->idle_id, g_source_remove);
  g_autoptr (GBytes) request = stg_body_buffer_steal (&c->body);
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

static void read_piece (Conn *c);

static void
on_piece (GObject *source, GAsyncResult *res, gpointer user_data)
{
  Conn *c = user_data;
  g_autoptr (GError) error = NULL;
  gssize got = g_input_stream_read_finish (G_INPUT_STREAM (source), res, &error);

  if (!conn_resume (c))
    return;
  if (got <= 0)
    {
      conn_close (c, G_LOG_LEVEL_INFO, got == 0 ? "frame cut short" : error->message);
      return;
    }
  stg_body_buffer_grew (&c->body, (gsize) got);
  if (c->body.len == c->body_len)
    dispatch_frame (c);
  else
    read_piece (c);
}

/* Reads the next piece of the body straight into its buffer, grown as
 * pieces arrive. */
static void
read_piece (Conn *c)
{
  g_autoptr (GError) error = NULL;
  gsize avail = 0;
  gsize left = c->body_len - c->body.len;
  guint8 *space = stg_body_buffer_space (&c->body, MIN ((gsize) PIECE, left), &avail, &error);

  if (space == NULL)
    {
      conn_close (c, G_LOG_LEVEL_WARNING, error->message);
      return;
    }
  c->pending = TRUE;
  g_input_stream_read_async (g_io_stream_get_input_stream (G_IO_STREAM (c->conn)), space,
                             MIN (avail, left), G_PRIORITY_DEFAULT, c->cancel, on_piece, c);
}

static gboolean
on_frame_timeout (gpointer user_data)
{
  Conn *c = user_data;

  c->idle_id = 0;
  conn_close (c, G_LOG_LEVEL_INFO, "a frame took too long to arrive");
  return G_SOURCE_REMOVE;
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
  stg_body_buffer_init (&c->body, c->server->budget, c->address, len);
  g_clear_handle_id (&c->idle_id, g_source_remove);
  if (c->server->options.frame_timeout_s > 0)
    c->idle_id = g_timeout_add_seconds (c->server->options.frame_timeout_s, on_frame_timeout, c);
  read_piece (c);
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
      c->address = g_inet_address_to_string (
          g_inet_socket_address_get_address (G_INET_SOCKET_ADDRESS (remote)));
      c->peer = g_strdup_printf ("%s:%u", c->address,
                                 g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (remote)));
    }
  else
    c->peer = g_strdup ("unknown peer");
  g_hash_table_add (server->conns, c);
  guint from = c->address ? GPOINTER_TO_UINT (g_hash_table_lookup (server->per_address, c->address)) : 0;
  if (c->address != NULL)
    g_hash_table_insert (server->per_address, g_strdup (c->address), GUINT_TO_POINTER (from + 1));
  if (g_hash_table_size (server->conns) > server->options.max_connections ||
      from >= server->options.max_per_address)
    {
      conn_close (c, G_LOG_LEVEL_INFO, "too many connections");
      return TRUE;
    }
  g_socket_set_option (g_socket_connection_get_socket (connection), IPPROTO_TCP, TCP_NODELAY, 1, NULL);
  read_header (c);
  return TRUE;
}

/* @wanted (at least 1), capped by the kernel's net.core.somaxconn. */
static gint
listen_backlog (gint wanted)
{
  g_autofree gchar *text = NULL;
  gint64 max = 0;

  if (g_file_get_contents ("/proc/sys/net/core/somaxconn", &text, NULL, NULL))
    max = g_ascii_strtoll (g_strstrip (text), NULL, 10);
  if (wanted < 1)
    wanted = 1;
  return max > 0 && wanted > max ? (gint) max : wanted;
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
  server->per_address = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  server->own_budget.max = server->options.max_buffered == 0 ? 0
                         : MAX (server->options.max_buffered, server->options.max_frame);
  server->budget = server->options.budget ? server->options.budget : &server->own_budget;
  server->service = g_socket_service_new ();
  g_socket_listener_set_backlog (G_SOCKET_LISTENER (server->service),
                                 listen_backlog (server->options.backlog));
  if (!g_socket_listener_add_address (G_SOCKET_LISTENER (server->service), want,
                                      G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, NULL,
                                      &got, error))
    {
      g_prefix_error (error, "cannot listen on %s:%u: ", address, port);
      g_object_unref (server->service);
      g_hash_table_unref (server->conns);
      g_hash_table_unref (server->per_address);
      g_free (server);
      return NULL;
    }
  server->port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (got));
  g_signal_connect (server->service, "incoming", G_CALLBACK (on_incoming), server);
  g_socket_service_start (server->service);
  return server;
}

void
stg_tcp_server_serve (StgTcpServer *server, StgDispatch *dispatch, const StgCaller *caller)
{
  server->dispatch = dispatch;
  server->options.caller = *caller;
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
  g_hash_table_unref (server->per_address);
  g_free (server);
}
