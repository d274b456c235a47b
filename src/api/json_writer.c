/* json_writer.c: StgJsonProtocol's write calls: values, separators from
 * the write context stack, type tags, base64 binaries. Calls Thrift's
 * transport and json_context.c. Any thread; one owner at a time.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "api/json_protocol_private.h"

/* ---- writing -------------------------------------------------------------- */

static gboolean
out (StgJsonProtocol *self, const void *data, gsize len, GError **error)
{
  if (len == 0)
    return TRUE;
  if (!thrift_transport_write (THRIFT_PROTOCOL (self)->transport, (gpointer) data, (guint32) len,
                               error))
    return FALSE;
  self->nwritten += (gint64) len;
  return TRUE;
}

static gboolean
out_sep (StgJsonProtocol *self, GError **error)
{
  gchar sep = stg_json_ctx_next (stg_json_ctx_top (self->wctx));

  return sep == 0 || out (self, &sep, 1, error);
}

static gboolean
write_json_string (StgJsonProtocol *self, const gchar *str, GError **error)
{
  g_autoptr (GString) buf = g_string_new ("\"");

  if (!out_sep (self, error))
    return FALSE;
  for (const guchar *p = (const guchar *) (str ? str : ""); *p != '\0'; p++)
    switch (*p)
      {
      case '"': g_string_append (buf, "\\\""); break;
      case '\\': g_string_append (buf, "\\\\"); break;
      case '\b': g_string_append (buf, "\\b"); break;
      case '\f': g_string_append (buf, "\\f"); break;
      case '\n': g_string_append (buf, "\\n"); break;
      case '\r': g_string_append (buf, "\\r"); break;
      case '\t': g_string_append (buf, "\\t"); break;
      default:
        if (*p < 0x20)
          g_string_append_printf (buf, "\\u%04x", *p);
        else
          g_string_append_c (buf, (gchar) *p);
      }
  g_string_append_c (buf, '"');
  return out (self, buf->str, buf->len, error);
}

/* Writes @text, a number, quoted when it is an object key (or @quote). */
static gboolean
write_json_number (StgJsonProtocol *self, const gchar *text, gboolean quote, GError **error)
{
  if (!out_sep (self, error))
    return FALSE;
  quote = quote || stg_json_ctx_quotes_numbers (self->wctx);
  return (!quote || out (self, "\"", 1, error)) && out (self, text, strlen (text), error) &&
         (!quote || out (self, "\"", 1, error));
}

static gboolean
write_json_integer (StgJsonProtocol *self, gint64 value, GError **error)
{
  gchar text[32];

  g_snprintf (text, sizeof text, "%" G_GINT64_FORMAT, value);
  return write_json_number (self, text, FALSE, error);
}

static gboolean
write_json_double (StgJsonProtocol *self, gdouble value, GError **error)
{
  gchar text[G_ASCII_DTOSTR_BUF_SIZE];

  if (isnan (value))
    return write_json_number (self, "NaN", TRUE, error);
  if (isinf (value))
    return write_json_number (self, value < 0 ? "-Infinity" : "Infinity", TRUE, error);
  g_ascii_formatd (text, sizeof text, "%.17g", value);
  return write_json_number (self, text, FALSE, error);
}

/* Base64 without padding, as the C++ and Java libraries write it. */
static gboolean
write_json_base64 (StgJsonProtocol *self, const guint8 *data, gsize len, GError **error)
{
  g_autoptr (GString) buf = g_string_sized_new (len / 3 * 4 + 6);

  if (!out_sep (self, error))
    return FALSE;
  g_string_append_c (buf, '"');
  for (gsize i = 0; i < len; i += 3)
    {
      guint32 n = (guint32) data[i] << 16;
      gsize left = len - i;
      if (left > 1)
        n |= (guint32) data[i + 1] << 8;
      if (left > 2)
        n |= data[i + 2];
      g_string_append_c (buf, stg_json_base64_chars[(n >> 18) & 63]);
      g_string_append_c (buf, stg_json_base64_chars[(n >> 12) & 63]);
      if (left > 1)
        g_string_append_c (buf, stg_json_base64_chars[(n >> 6) & 63]);
      if (left > 2)
        g_string_append_c (buf, stg_json_base64_chars[n & 63]);
    }
  g_string_append_c (buf, '"');
  return out (self, buf->str, buf->len, error);
}

static gboolean
write_open (StgJsonProtocol *self, gchar bracket, CtxKind kind, GError **error)
{
  if (!out_sep (self, error) || !out (self, &bracket, 1, error))
    return FALSE;
  stg_json_ctx_push (self->wctx, kind);
  return TRUE;
}

static gboolean
write_close (StgJsonProtocol *self, gchar bracket, GError **error)
{
  stg_json_ctx_pop (self->wctx);
  return out (self, &bracket, 1, error);
}

static const gchar *
type_name (ThriftType type, GError **error)
{
  for (guint i = 0; i < G_N_ELEMENTS (stg_json_type_names); i++)
    if (stg_json_type_names[i].type == type)
      return stg_json_type_names[i].name;
  stg_json_fail (error, THRIFT_PROTOCOL_ERROR_NOT_IMPLEMENTED, "no JSON name for Thrift type %d", type);
  return NULL;
}

/* Each write returns the bytes it wrote, or -1. */
#define WRITTEN(self, start, ok) ((ok) ? (gint32) ((self)->nwritten - (start)) : -1)

static gint32
json_write_message_begin (ThriftProtocol *protocol, const gchar *name,
                          const ThriftMessageType type, const gint32 seqid, GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nwritten;

  stg_json_ctx_reset (self->wctx);
  gboolean ok = write_open (self, '[', CTX_LIST, error) && write_json_integer (self, 1, error) &&
                write_json_string (self, name, error) &&
                write_json_integer (self, type, error) && write_json_integer (self, seqid, error);
  return WRITTEN (self, start, ok);
}

static gint32
json_write_array_end (ThriftProtocol *protocol, GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nwritten;

  return WRITTEN (self, start, write_close (self, ']', error));
}

static gint32
json_write_struct_begin (ThriftProtocol *protocol, const gchar *name, GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nwritten;
  (void) name;

  return WRITTEN (self, start, write_open (self, '{', CTX_PAIR, error));
}

static gint32
json_write_object_end (ThriftProtocol *protocol, GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nwritten;

  return WRITTEN (self, start, write_close (self, '}', error));
}

static gint32
json_write_field_begin (ThriftProtocol *protocol, const gchar *name, const ThriftType type,
                        const gint16 id, GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nwritten;
  const gchar *tname = type_name (type, error);
  (void) name;

  gboolean ok = tname != NULL && write_json_integer (self, id, error) &&
                write_open (self, '{', CTX_PAIR, error) && write_json_string (self, tname, error);
  return WRITTEN (self, start, ok);
}

static gint32
json_write_field_stop (ThriftProtocol *protocol, GError **error)
{
  (void) protocol;
  (void) error;
  return 0;
}

static gint32
json_write_map_begin (ThriftProtocol *protocol, const ThriftType key_type,
                      const ThriftType value_type, const guint32 size, GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nwritten;
  const gchar *k = type_name (key_type, error);
  const gchar *v = k ? type_name (value_type, error) : NULL;

  gboolean ok = v != NULL && write_open (self, '[', CTX_LIST, error) &&
                write_json_string (self, k, error) && write_json_string (self, v, error) &&
                write_json_integer (self, size, error) && write_open (self, '{', CTX_PAIR, error);
  return WRITTEN (self, start, ok);
}

static gint32
json_write_map_end (ThriftProtocol *protocol, GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nwritten;

  return WRITTEN (self, start, write_close (self, '}', error) && write_close (self, ']', error));
}

static gint32
json_write_collection_begin (ThriftProtocol *protocol, const ThriftType element_type,
                             const guint32 size, GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nwritten;
  const gchar *e = type_name (element_type, error);

  gboolean ok = e != NULL && write_open (self, '[', CTX_LIST, error) &&
                write_json_string (self, e, error) && write_json_integer (self, size, error);
  return WRITTEN (self, start, ok);
}

static gint32
json_write_bool (ThriftProtocol *protocol, const gboolean value, GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nwritten;

  return WRITTEN (self, start, write_json_integer (self, value ? 1 : 0, error));
}

static gint32
json_write_byte (ThriftProtocol *protocol, const gint8 value, GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nwritten;

  return WRITTEN (self, start, write_json_integer (self, value, error));
}

static gint32
json_write_i16 (ThriftProtocol *protocol, const gint16 value, GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nwritten;

  return WRITTEN (self, start, write_json_integer (self, value, error));
}

static gint32
json_write_i32 (ThriftProtocol *protocol, const gint32 value, GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nwritten;

  return WRITTEN (self, start, write_json_integer (self, value, error));
}

static gint32
json_write_i64 (ThriftProtocol *protocol, const gint64 value, GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nwritten;

  return WRITTEN (self, start, write_json_integer (self, value, error));
}

static gint32
json_write_double (ThriftProtocol *protocol, const gdouble value, GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nwritten;

  return WRITTEN (self, start, write_json_double (self, value, error));
}

static gint32
json_write_string (ThriftProtocol *protocol, const gchar *str, GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nwritten;

  return WRITTEN (self, start, write_json_string (self, str, error));
}

static gint32
json_write_binary (ThriftProtocol *protocol, const gpointer buf, const guint32 len,
                   GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nwritten;

  return WRITTEN (self, start, write_json_base64 (self, buf, len, error));
}

void
stg_json_writer_class_init (ThriftProtocolClass *pc)
{
  pc->write_message_begin = json_write_message_begin;
  pc->write_message_end = json_write_array_end;
  pc->write_struct_begin = json_write_struct_begin;
  pc->write_struct_end = json_write_object_end;
  pc->write_field_begin = json_write_field_begin;
  pc->write_field_end = json_write_object_end;
  pc->write_field_stop = json_write_field_stop;
  pc->write_map_begin = json_write_map_begin;
  pc->write_map_end = json_write_map_end;
  pc->write_list_begin = json_write_collection_begin;
  pc->write_list_end = json_write_array_end;
  pc->write_set_begin = json_write_collection_begin;
  pc->write_set_end = json_write_array_end;
  pc->write_bool = json_write_bool;
  pc->write_byte = json_write_byte;
  pc->write_i16 = json_write_i16;
  pc->write_i32 = json_write_i32;
  pc->write_i64 = json_write_i64;
  pc->write_double = json_write_double;
  pc->write_string = json_write_string;
  pc->write_binary = json_write_binary;
}
