/* binary_protocol.c: StgBinaryProtocol, the binary protocol with checked
 * reads. Sizes are compared with what the transport says it still holds
 * (checkReadBytesAvailable) before anything is allocated; depth counts open
 * structs and containers. Any thread; one owner at a time.
 */
#include "config.h"

#include "common/binary_protocol.h"

struct _StgBinaryProtocol
{
  ThriftBinaryProtocol parent;
  guint depth;
};

G_DEFINE_TYPE (StgBinaryProtocol, stg_binary_protocol, THRIFT_TYPE_BINARY_PROTOCOL)

static gboolean
available (ThriftProtocol *protocol, gint64 bytes, GError **error)
{
  ThriftTransportClass *ttc = THRIFT_TRANSPORT_GET_CLASS (protocol->transport);

  if (bytes < 0 || bytes > G_MAXLONG)
    {
      g_set_error (error, THRIFT_PROTOCOL_ERROR, THRIFT_PROTOCOL_ERROR_SIZE_LIMIT,
                   "size %" G_GINT64_FORMAT " out of range", bytes);
      return FALSE;
    }
  return ttc->checkReadBytesAvailable (protocol->transport, (glong) bytes, error);
}

static gboolean
enter (ThriftProtocol *protocol, GError **error)
{
  StgBinaryProtocol *self = STG_BINARY_PROTOCOL (protocol);

  if (++self->depth > STG_BINARY_MAX_DEPTH)
    {
      g_set_error (error, THRIFT_PROTOCOL_ERROR, THRIFT_PROTOCOL_ERROR_DEPTH_LIMIT,
                   "nesting deeper than %d", STG_BINARY_MAX_DEPTH);
      return FALSE;
    }
  return TRUE;
}

static void
leave (ThriftProtocol *protocol)
{
  StgBinaryProtocol *self = STG_BINARY_PROTOCOL (protocol);

  if (self->depth > 0)
    self->depth--;
}

static gint32
read_length (ThriftProtocol *protocol, gint32 *len, GError **error)
{
  gint32 ret = thrift_protocol_read_i32 (protocol, len, error);

  if (ret < 0)
    return -1;
  if (*len < 0)
    {
      g_set_error (error, THRIFT_PROTOCOL_ERROR, THRIFT_PROTOCOL_ERROR_NEGATIVE_SIZE,
                   "negative size %d", *len);
      return -1;
    }
  if (!available (protocol, *len, error))
    return -1;
  return ret;
}

static gint32
checked_read_string (ThriftProtocol *protocol, gchar **str, GError **error)
{
  gint32 len, ret;

  *str = NULL;
  if ((ret = read_length (protocol, &len, error)) < 0)
    return -1;
  *str = g_malloc ((gsize) len + 1);
  if (len > 0 && thrift_transport_read_all (protocol->transport, *str, (guint32) len, error) < 0)
    {
      g_clear_pointer (str, g_free);
      return -1;
    }
  (*str)[len] = '\0';
  return ret + len;
}

static gint32
checked_read_binary (ThriftProtocol *protocol, gpointer *buf, guint32 *out_len, GError **error)
{
  gint32 len, ret;

  *buf = NULL;
  *out_len = 0;
  if ((ret = read_length (protocol, &len, error)) < 0)
    return -1;
  if (len == 0)
    return ret;
  *buf = g_malloc ((gsize) len);
  if (thrift_transport_read_all (protocol->transport, *buf, (guint32) len, error) < 0)
    {
      g_clear_pointer (buf, g_free);
      return -1;
    }
  *out_len = (guint32) len;
  return ret + len;
}

static gint32
checked_read_message_begin (ThriftProtocol *protocol, gchar **name, ThriftMessageType *type,
                            gint32 *seqid, GError **error)
{
  gint32 header, ret, xfer = 0;

  *name = NULL;
  *type = 0;
  *seqid = 0;
  if ((ret = thrift_protocol_read_i32 (protocol, &header, error)) < 0)
    return -1;
  xfer += ret;
  if (header >= 0 || ((guint32) header & THRIFT_BINARY_PROTOCOL_VERSION_MASK) !=
                       (guint32) THRIFT_BINARY_PROTOCOL_VERSION_1)
    {
      g_set_error (error, THRIFT_PROTOCOL_ERROR, THRIFT_PROTOCOL_ERROR_BAD_VERSION,
                   "not a versioned binary-protocol message (header 0x%08x)", (guint32) header);
      return -1;
    }
  *type = (ThriftMessageType) (header & 0xff);
  if ((ret = checked_read_string (protocol, name, error)) < 0)
    return -1;
  xfer += ret;
  if ((ret = thrift_protocol_read_i32 (protocol, seqid, error)) < 0)
    {
      g_clear_pointer (name, g_free);
      return -1;
    }
  return xfer + ret;
}

static gint32
checked_read_struct_begin (ThriftProtocol *protocol, gchar **name, GError **error)
{
  *name = NULL;
  return enter (protocol, error) ? 0 : -1;
}

static gint32
checked_read_struct_end (ThriftProtocol *protocol, GError **error)
{
  (void) error;
  leave (protocol);
  return 0;
}

/* Reads an element type and count; every element takes at least one byte. */
static gint32
read_container (ThriftProtocol *protocol, gint64 per_element, ThriftType *element_type,
                guint32 *size, GError **error)
{
  gint32 ret, count, xfer = 0;
  gint8 t;

  if (!enter (protocol, error))
    return -1;
  if ((ret = thrift_protocol_read_byte (protocol, &t, error)) < 0)
    return -1;
  xfer += ret;
  *element_type = (ThriftType) t;
  if ((ret = thrift_protocol_read_i32 (protocol, &count, error)) < 0)
    return -1;
  xfer += ret;
  if (count < 0)
    {
      g_set_error (error, THRIFT_PROTOCOL_ERROR, THRIFT_PROTOCOL_ERROR_NEGATIVE_SIZE,
                   "negative container size %d", count);
      return -1;
    }
  if (!available (protocol, (gint64) count * per_element, error))
    return -1;
  *size = (guint32) count;
  return xfer;
}

static gint32
checked_read_list_begin (ThriftProtocol *protocol, ThriftType *element_type, guint32 *size,
                         GError **error)
{
  return read_container (protocol, 1, element_type, size, error);
}

static gint32
checked_read_set_begin (ThriftProtocol *protocol, ThriftType *element_type, guint32 *size,
                        GError **error)
{
  return read_container (protocol, 1, element_type, size, error);
}

static gint32
checked_read_map_begin (ThriftProtocol *protocol, ThriftType *key_type, ThriftType *value_type,
                        guint32 *size, GError **error)
{
  gint32 ret, xfer = 0;
  gint8 v;

  /* Read as a container of keys (2 bytes an entry at least), then the value type. */
  if ((ret = thrift_protocol_read_byte (protocol, (gint8 *) &v, error)) < 0)
    return -1;
  xfer += ret;
  *key_type = (ThriftType) v;
  if ((ret = read_container (protocol, 2, value_type, size, error)) < 0)
    return -1;
  return xfer + ret;
}

static gint32
checked_read_container_end (ThriftProtocol *protocol, GError **error)
{
  (void) error;
  leave (protocol);
  return 0;
}

static void
stg_binary_protocol_class_init (StgBinaryProtocolClass *klass)
{
  ThriftProtocolClass *pc = THRIFT_PROTOCOL_CLASS (klass);

  pc->read_message_begin = checked_read_message_begin;
  pc->read_struct_begin = checked_read_struct_begin;
  pc->read_struct_end = checked_read_struct_end;
  pc->read_string = checked_read_string;
  pc->read_binary = checked_read_binary;
  pc->read_list_begin = checked_read_list_begin;
  pc->read_list_end = checked_read_container_end;
  pc->read_set_begin = checked_read_set_begin;
  pc->read_set_end = checked_read_container_end;
  pc->read_map_begin = checked_read_map_begin;
  pc->read_map_end = checked_read_container_end;
}

static void
stg_binary_protocol_init (StgBinaryProtocol *self)
{
  (void) self;
}

ThriftProtocol *
stg_binary_protocol_new (ThriftTransport *transport)
{
  return g_object_new (STG_TYPE_BINARY_PROTOCOL, "transport", transport, NULL);
}
