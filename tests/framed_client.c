/* framed_client.c: StgFramedClient, framed Thrift over a blocking GSocket.
 * Owns its connection and buffers. Any thread; one owner at a time. */
#include "config.h"

#include <gio/gio.h>
#include <string.h>

#include "framed_client.h"

struct _StgFramedClient
{
  ThriftTransport parent;

  gchar *host;
  guint16 port;
  guint timeout_s;
  gsize max_frame;
  GSocketConnection *conn;   /* (owned) (nullable) */
  GByteArray *out;           /* the message being written */
  GByteArray *in;            /* the frame being read */
  gsize in_pos;
};

G_DEFINE_TYPE (StgFramedClient, stg_framed_client, THRIFT_TYPE_TRANSPORT)

static gboolean
fc_is_open (ThriftTransport *transport)
{
  return STG_FRAMED_CLIENT (transport)->conn != NULL;
}

static gboolean
fc_open (ThriftTransport *transport, GError **error)
{
  StgFramedClient *self = STG_FRAMED_CLIENT (transport);
  g_autoptr (GSocketClient) client = g_socket_client_new ();

  if (self->conn != NULL)
    return TRUE;
  g_socket_client_set_timeout (client, self->timeout_s);
  self->conn = g_socket_client_connect_to_host (client, self->host, self->port, NULL, error);
  return self->conn != NULL;
}

static gboolean
fc_close (ThriftTransport *transport, GError **error)
{
  StgFramedClient *self = STG_FRAMED_CLIENT (transport);
  gboolean ok = TRUE;

  if (self->conn != NULL)
    ok = g_io_stream_close (G_IO_STREAM (self->conn), NULL, error);
  g_clear_object (&self->conn);
  return ok;
}

static gboolean
not_open (StgFramedClient *self, GError **error)
{
  if (self->conn != NULL)
    return FALSE;
  g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_CLOSE,
               "not connected to %s:%u", self->host, self->port);
  return TRUE;
}

static gboolean
read_frame (StgFramedClient *self, GError **error)
{
  GInputStream *in;
  guint8 header[4];
  gsize got = 0;
  guint32 len;

  if (not_open (self, error))
    return FALSE;
  in = g_io_stream_get_input_stream (G_IO_STREAM (self->conn));
  if (!g_input_stream_read_all (in, header, 4, &got, NULL, error))
    return FALSE;
  if (got < 4)
    {
      g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_RECEIVE,
                   "%s:%u closed the connection", self->host, self->port);
      return FALSE;
    }
  memcpy (&len, header, 4);
  len = GUINT32_FROM_BE (len);
  if (len > self->max_frame)
    {
      g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_RECEIVE,
                   "reply frame of %u bytes is over the limit of %" G_GSIZE_FORMAT, len,
                   self->max_frame);
      return FALSE;
    }
  g_byte_array_set_size (self->in, len);
  self->in_pos = 0;
  if (!g_input_stream_read_all (in, self->in->data, len, &got, NULL, error))
    return FALSE;
  if (got < len)
    {
      g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_RECEIVE,
                   "reply frame cut short");
      return FALSE;
    }
  THRIFT_TRANSPORT (self)->remainingMessageSize_ = (glong) len;
  return TRUE;
}

static gint32
fc_read (ThriftTransport *transport, gpointer buf, guint32 len, GError **error)
{
  StgFramedClient *self = STG_FRAMED_CLIENT (transport);

  if (len == 0)
    return 0;
  if (self->in_pos >= self->in->len && !read_frame (self, error))
    return -1;
  gsize give = MIN ((gsize) len, self->in->len - self->in_pos);
  if (give == 0)
    {
      g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_RECEIVE, "empty frame");
      return -1;
    }
  memcpy (buf, self->in->data + self->in_pos, give);
  self->in_pos += give;
  transport->remainingMessageSize_ = (glong) (self->in->len - self->in_pos);
  return (gint32) give;
}

static gboolean
fc_read_end (ThriftTransport *transport, GError **error)
{
  (void) transport;
  (void) error;
  return TRUE;
}

static gboolean
fc_write (ThriftTransport *transport, const gpointer buf, const guint32 len, GError **error)
{
  StgFramedClient *self = STG_FRAMED_CLIENT (transport);
  (void) error;

  g_byte_array_append (self->out, buf, len);
  return TRUE;
}

static gboolean
fc_flush (ThriftTransport *transport, GError **error)
{
  StgFramedClient *self = STG_FRAMED_CLIENT (transport);
  guint32 be = GUINT32_TO_BE (self->out->len);

  if (not_open (self, error))
    return FALSE;
  g_byte_array_prepend (self->out, (const guint8 *) &be, 4);
  gboolean ok = g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (self->conn)),
                                           self->out->data, self->out->len, NULL, NULL, error);
  g_byte_array_set_size (self->out, 0);
  return ok;
}

static gboolean
fc_check_available (ThriftTransport *transport, glong bytes, GError **error)
{
  StgFramedClient *self = STG_FRAMED_CLIENT (transport);

  /* A reply's sizes are checked against the frame being read. */
  if (self->in_pos >= self->in->len)
    return TRUE;
  if (bytes < 0 || (gsize) bytes > self->in->len - self->in_pos)
    {
      g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_MAX_MESSAGE_SIZE_REACHED,
                   "reply claims more data than its frame holds");
      return FALSE;
    }
  return TRUE;
}

static void
stg_framed_client_finalize (GObject *object)
{
  StgFramedClient *self = STG_FRAMED_CLIENT (object);

  if (self->conn != NULL)
    (void) g_io_stream_close (G_IO_STREAM (self->conn), NULL, NULL);
  g_clear_object (&self->conn);
  g_byte_array_unref (self->out);
  g_byte_array_unref (self->in);
  g_free (self->host);
  G_OBJECT_CLASS (stg_framed_client_parent_class)->finalize (object);
}

static void
stg_framed_client_class_init (StgFramedClientClass *klass)
{
  ThriftTransportClass *ttc = THRIFT_TRANSPORT_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = stg_framed_client_finalize;
  ttc->is_open = fc_is_open;
  ttc->open = fc_open;
  ttc->close = fc_close;
  ttc->read = fc_read;
  ttc->read_all = stg_transport_read_all;
  ttc->read_end = fc_read_end;
  ttc->write = fc_write;
  ttc->write_end = fc_read_end;
  ttc->flush = fc_flush;
  ttc->checkReadBytesAvailable = fc_check_available;
}

static void
stg_framed_client_init (StgFramedClient *self)
{
  self->out = g_byte_array_new ();
  self->in = g_byte_array_new ();
}

StgFramedClient *
stg_framed_client_new (const gchar *host, guint16 port, guint timeout_s, gsize max_frame)
{
  StgFramedClient *self = g_object_new (STG_TYPE_FRAMED_CLIENT, NULL);

  self->host = g_strdup (host);
  self->port = port;
  self->timeout_s = timeout_s;
  self->max_frame = max_frame;
  THRIFT_TRANSPORT (self)->remainingMessageSize_ = G_MAXLONG;
  return self;
}
