/* mem_transport.c: StgMemTransport, a Thrift transport over memory.
 *
 * Owns its output array and a reference to its input bytes. Reads past the
 * end of input fail with THRIFT_TRANSPORT_ERROR_RECEIVE, so a truncated
 * message is an error, never a hang. Any thread; one owner at a time.
 */
#include "config.h"

#include <string.h>

#include "common/mem_transport.h"

struct _StgMemTransport
{
  ThriftTransport parent;

  GBytes *input;        /* (owned) (nullable) */
  const guint8 *data;   /* into input */
  gsize len;
  gsize pos;
  GByteArray *output;   /* (owned) */
  gsize max_output;     /* 0: unbounded */
};

G_DEFINE_TYPE (StgMemTransport, stg_mem_transport, THRIFT_TYPE_TRANSPORT)

static gboolean
mem_is_open (ThriftTransport *transport)
{
  (void) transport;
  return TRUE;
}

static gboolean
mem_ok (ThriftTransport *transport, GError **error)
{
  (void) transport;
  (void) error;
  return TRUE;
}

static gint32
mem_read (ThriftTransport *transport, gpointer buf, guint32 len, GError **error)
{
  StgMemTransport *self = STG_MEM_TRANSPORT (transport);
  gsize left = self->len - self->pos;

  if (len == 0)
    return 0;
  if (left == 0)
    {
      g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_RECEIVE,
                   "message ends early");
      return -1;
    }
  gsize give = MIN ((gsize) len, left);
  memcpy (buf, self->data + self->pos, give);
  self->pos += give;
  transport->remainingMessageSize_ = (glong) (self->len - self->pos);
  return (gint32) give;
}

static gint32
mem_read_all (ThriftTransport *transport, gpointer buf, guint32 len, GError **error)
{
  StgMemTransport *self = STG_MEM_TRANSPORT (transport);

  if ((gsize) len > self->len - self->pos)
    {
      g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_RECEIVE,
                   "message ends early: %u bytes wanted, %" G_GSIZE_FORMAT " left",
                   len, self->len - self->pos);
      return -1;
    }
  return len == 0 ? 0 : mem_read (transport, buf, len, error);
}

static gboolean
mem_write (ThriftTransport *transport, const gpointer buf, const guint32 len, GError **error)
{
  StgMemTransport *self = STG_MEM_TRANSPORT (transport);

  if (self->max_output != 0 && self->output->len + (gsize) len > self->max_output)
    {
      g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_SEND,
                   "message larger than %" G_GSIZE_FORMAT " bytes", self->max_output);
      return FALSE;
    }
  g_byte_array_append (self->output, buf, len);
  return TRUE;
}

static gboolean
mem_check_available (ThriftTransport *transport, glong bytes, GError **error)
{
  StgMemTransport *self = STG_MEM_TRANSPORT (transport);

  if (bytes < 0 || (gsize) bytes > self->len - self->pos)
    {
      g_set_error (error, THRIFT_TRANSPORT_ERROR,
                   THRIFT_TRANSPORT_ERROR_MAX_MESSAGE_SIZE_REACHED,
                   "message claims more data than it holds");
      return FALSE;
    }
  return TRUE;
}

static void
stg_mem_transport_finalize (GObject *object)
{
  StgMemTransport *self = STG_MEM_TRANSPORT (object);

  g_clear_pointer (&self->input, g_bytes_unref);
  g_clear_pointer (&self->output, g_byte_array_unref);
  G_OBJECT_CLASS (stg_mem_transport_parent_class)->finalize (object);
}

static void
stg_mem_transport_class_init (StgMemTransportClass *klass)
{
  ThriftTransportClass *ttc = THRIFT_TRANSPORT_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = stg_mem_transport_finalize;
  ttc->is_open = mem_is_open;
  ttc->peek = mem_ok;
  ttc->open = mem_ok;
  ttc->close = mem_ok;
  ttc->read = mem_read;
  ttc->read_all = mem_read_all;
  ttc->read_end = mem_ok;
  ttc->write = mem_write;
  ttc->write_end = mem_ok;
  ttc->flush = mem_ok;
  ttc->checkReadBytesAvailable = mem_check_available;
}

static void
stg_mem_transport_init (StgMemTransport *self)
{
  self->output = g_byte_array_new ();
}

StgMemTransport *
stg_mem_transport_new (GBytes *input, gsize max_output)
{
  StgMemTransport *self = g_object_new (STG_TYPE_MEM_TRANSPORT, NULL);

  if (input != NULL)
    {
      self->input = g_bytes_ref (input);
      self->data = g_bytes_get_data (input, &self->len);
    }
  self->max_output = max_output;
  THRIFT_TRANSPORT (self)->remainingMessageSize_ = (glong) self->len;
  THRIFT_TRANSPORT (self)->knowMessageSize_ = (glong) self->len;
  return self;
}

gsize
stg_mem_transport_remaining (StgMemTransport *self)
{
  g_return_val_if_fail (STG_IS_MEM_TRANSPORT (self), 0);
  return self->len - self->pos;
}

const guint8 *
stg_mem_transport_output (StgMemTransport *self, gsize *len)
{
  g_return_val_if_fail (STG_IS_MEM_TRANSPORT (self), NULL);
  *len = self->output->len;
  return self->output->data;
}

GBytes *
stg_mem_transport_steal_output (StgMemTransport *self)
{
  g_return_val_if_fail (STG_IS_MEM_TRANSPORT (self), NULL);
  GBytes *out = g_byte_array_free_to_bytes (self->output);
  self->output = g_byte_array_new ();
  return out;
}
