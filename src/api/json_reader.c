/* json_reader.c: StgJsonProtocol's read calls, hardened: every read goes
 * through next_byte()/peek_byte(), so the end of input is always an error,
 * never a wait; container sizes are checked against what the transport
 * still holds; nesting is limited; strings must be valid UTF-8 without NUL.
 * Calls Thrift's transport and json_context.c. Any thread; one owner at a
 * time.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "api/json_protocol_private.h"

/* ---- reading: bytes and syntax ---------------------------------------------- */

static gboolean
next_byte (StgJsonProtocol *self, guchar *c, GError **error)
{
  if (self->peeked >= 0)
    {
      *c = (guchar) self->peeked;
      self->peeked = -1;
    }
  else if (thrift_transport_read_all (THRIFT_PROTOCOL (self)->transport, c, 1, error) != 1)
    return stg_json_fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA, "JSON message ends early");
  self->nread++;
  return TRUE;
}

static gboolean
peek_byte (StgJsonProtocol *self, guchar *c, GError **error)
{
  if (self->peeked < 0)
    {
      guchar b;
      if (thrift_transport_read_all (THRIFT_PROTOCOL (self)->transport, &b, 1, error) != 1)
        return stg_json_fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA, "JSON message ends early");
      self->peeked = b;
    }
  *c = (guchar) self->peeked;
  return TRUE;
}

static gboolean
expect (StgJsonProtocol *self, guchar want, GError **error)
{
  guchar c;

  if (!next_byte (self, &c, error))
    return FALSE;
  if (c != want && g_ascii_isprint (c))
    return stg_json_fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA,
                 "expected '%c' at byte %" G_GINT64_FORMAT " of the JSON message, found '%c'",
                 want, self->nread, c);
  if (c != want)
    return stg_json_fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA,
                 "expected '%c' at byte %" G_GINT64_FORMAT " of the JSON message, found byte 0x%02x",
                 want, self->nread, c);
  return TRUE;
}

static gboolean
in_sep (StgJsonProtocol *self, GError **error)
{
  gchar sep = stg_json_ctx_next (stg_json_ctx_top (self->rctx));

  return sep == 0 || expect (self, (guchar) sep, error);
}

/* Checks that @count elements of at least @min_bytes each can still be in
 * the message, before anything is allocated for them. */
static gboolean
available (StgJsonProtocol *self, gint64 count, gint64 min_bytes, GError **error)
{
  ThriftTransport *t = THRIFT_PROTOCOL (self)->transport;
  gint64 need = count * min_bytes - (self->peeked >= 0 ? 1 : 0);

  if (need <= 0)
    return TRUE;
  if (need > G_MAXLONG || !THRIFT_TRANSPORT_GET_CLASS (t)->checkReadBytesAvailable (t, (glong) need, NULL))
    return stg_json_fail (error, THRIFT_PROTOCOL_ERROR_SIZE_LIMIT,
                 "a container of %" G_GINT64_FORMAT " elements cannot fit in the message", count);
  return TRUE;
}

static gboolean
enter (StgJsonProtocol *self, GError **error)
{
  if (++self->depth > STG_JSON_MAX_DEPTH)
    return stg_json_fail (error, THRIFT_PROTOCOL_ERROR_DEPTH_LIMIT, "nesting deeper than %d",
                 STG_JSON_MAX_DEPTH);
  return TRUE;
}

static void
leave (StgJsonProtocol *self)
{
  if (self->depth > 0)
    self->depth--;
}

static gboolean
read_open (StgJsonProtocol *self, guchar bracket, CtxKind kind, GError **error)
{
  if (!in_sep (self, error) || !expect (self, bracket, error))
    return FALSE;
  stg_json_ctx_push (self->rctx, kind);
  return TRUE;
}

static gboolean
read_close (StgJsonProtocol *self, guchar bracket, GError **error)
{
  if (!expect (self, bracket, error))
    return FALSE;
  stg_json_ctx_pop (self->rctx);
  return TRUE;
}

static gint
hex_value (guchar c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

static gboolean
read_hex4 (StgJsonProtocol *self, guint32 *unit, GError **error)
{
  *unit = 0;
  for (int i = 0; i < 4; i++)
    {
      guchar c;
      if (!next_byte (self, &c, error))
        return FALSE;
      gint v = hex_value (c);
      if (v < 0)
        return stg_json_fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA, "bad \\u escape in a JSON string");
      *unit = (*unit << 4) | (guint32) v;
    }
  return TRUE;
}

/* Reads a JSON string into bytes (escapes decoded; not yet validated). */
static GString *
read_json_string (StgJsonProtocol *self, gboolean skip_context, GError **error)
{
  g_autoptr (GString) s = g_string_new (NULL);
  guint32 high = 0;   /* a high surrogate waiting for its low half */
  guchar c;

  if ((!skip_context && !in_sep (self, error)) || !expect (self, '"', error))
    return NULL;
  for (;;)
    {
      if (!next_byte (self, &c, error))
        return NULL;
      if (c == '"')
        break;
      if (c == '\\')
        {
          if (!next_byte (self, &c, error))
            return NULL;
          if (c == 'u')
            {
              guint32 unit;
              if (!read_hex4 (self, &unit, error))
                return NULL;
              if (unit >= 0xd800 && unit <= 0xdbff)
                {
                  if (high != 0)
                    goto unpaired;
                  high = unit;
                }
              else if (unit >= 0xdc00 && unit <= 0xdfff)
                {
                  if (high == 0)
                    goto unpaired;
                  g_string_append_unichar (s, 0x10000 + ((high & 0x3ff) << 10) + (unit & 0x3ff));
                  high = 0;
                }
              else
                {
                  if (high != 0)
                    goto unpaired;
                  g_string_append_unichar (s, unit);
                }
              continue;
            }
          switch (c)
            {
            case '"': case '\\': case '/': break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'n': c = '\n'; break;
            case 'r': c = '\r'; break;
            case 't': c = '\t'; break;
            default:
              stg_json_fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA, "bad escape '\\%c' in a JSON string",
                    g_ascii_isprint (c) ? c : '?');
              return NULL;
            }
        }
      if (high != 0)
        goto unpaired;
      g_string_append_c (s, (gchar) c);
    }
  if (high != 0)
    goto unpaired;
  return g_steal_pointer (&s);

unpaired:
  stg_json_fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA, "unpaired UTF-16 surrogate in a JSON string");
  return NULL;
}

/* A string that must be text: valid UTF-8 without NUL. */
static gchar *
read_text (StgJsonProtocol *self, GError **error)
{
  g_autoptr (GString) s = read_json_string (self, FALSE, error);

  if (s == NULL)
    return NULL;
  if (memchr (s->str, '\0', s->len) != NULL)
    {
      stg_json_fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA, "a string holds a NUL character");
      return NULL;
    }
  if (!g_utf8_validate (s->str, (gssize) s->len, NULL))
    {
      stg_json_fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA, "a string is not valid UTF-8");
      return NULL;
    }
  return g_string_free (g_steal_pointer (&s), FALSE);
}

#define MAX_NUMBER_CHARS 64

/* Reads the characters of a number into @buf (NUL-terminated). */
static gboolean
read_numeric_chars (StgJsonProtocol *self, gchar buf[MAX_NUMBER_CHARS], GError **error)
{
  gsize n = 0;
  guchar c = 0;

  for (;;)
    {
      if (!peek_byte (self, &c, error))
        return FALSE;
      if (c == '\0' || strchr ("+-.0123456789Ee", c) == NULL)
        break;
      if (n + 1 >= MAX_NUMBER_CHARS)
        return stg_json_fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA, "a JSON number is too long");
      buf[n++] = (gchar) c;
      self->peeked = -1;
      self->nread++;
    }
  buf[n] = '\0';
  if (n == 0)
    return stg_json_fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA,
                 "expected a number at byte %" G_GINT64_FORMAT " of the JSON message",
                 self->nread + 1);
  return TRUE;
}

static gboolean
read_json_integer (StgJsonProtocol *self, gint64 min, gint64 max, gint64 *value, GError **error)
{
  gchar buf[MAX_NUMBER_CHARS];
  guint64 parsed;

  if (!in_sep (self, error))
    return FALSE;
  gboolean quoted = stg_json_ctx_quotes_numbers (self->rctx);
  if ((quoted && !expect (self, '"', error)) || !read_numeric_chars (self, buf, error))
    return FALSE;
  const gchar *digits = buf[0] == '-' ? buf + 1 : buf;
  if (!g_ascii_string_to_unsigned (digits, 10, 0, G_MAXUINT64, &parsed, NULL) ||
      (buf[0] == '-' ? parsed > (guint64) G_MAXINT64 + 1 : parsed > (guint64) G_MAXINT64))
    return stg_json_fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA, "expected an integer, found \"%s\"", buf);
  gint64 v = buf[0] == '-' ? (gint64) (0 - parsed) : (gint64) parsed;
  if (v < min || v > max)
    return stg_json_fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA,
                 "integer %s is out of range (%" G_GINT64_FORMAT " to %" G_GINT64_FORMAT ")",
                 buf, min, max);
  if (quoted && !expect (self, '"', error))
    return FALSE;
  *value = v;
  return TRUE;
}

static gboolean
parse_double (const gchar *text, gdouble *value, GError **error)
{
  gchar *end = NULL;

  /* Only JSON's number characters: no "inf", "nan" or hex forms. */
  if (text[0] == '\0' || text[strspn (text, "+-.0123456789Ee")] != '\0')
    return stg_json_fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA, "expected a number, found \"%.32s\"", text);
  *value = g_ascii_strtod (text, &end);
  if (end == NULL || *end != '\0')
    return stg_json_fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA, "expected a number, found \"%.32s\"", text);
  return TRUE;
}

static gboolean
read_json_double (StgJsonProtocol *self, gdouble *value, GError **error)
{
  gchar buf[MAX_NUMBER_CHARS];
  guchar c;

  if (!in_sep (self, error) || !peek_byte (self, &c, error))
    return FALSE;
  if (c == '"')
    {
      g_autoptr (GString) s = read_json_string (self, TRUE, error);
      if (s == NULL)
        return FALSE;
      if (strcmp (s->str, "NaN") == 0)
        *value = NAN;
      else if (strcmp (s->str, "Infinity") == 0)
        *value = INFINITY;
      else if (strcmp (s->str, "-Infinity") == 0)
        *value = -INFINITY;
      else if (!stg_json_ctx_quotes_numbers (self->rctx))
        return stg_json_fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA, "a number is unexpectedly quoted");
      else if (s->len >= MAX_NUMBER_CHARS || memchr (s->str, '\0', s->len) != NULL)
        return stg_json_fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA, "expected a number");
      else
        return parse_double (s->str, value, error);
      return TRUE;
    }
  if (stg_json_ctx_quotes_numbers (self->rctx))
    return expect (self, '"', error);   /* fails: a key must be quoted */
  return read_numeric_chars (self, buf, error) && parse_double (buf, value, error);
}

static ThriftType
read_type_name (StgJsonProtocol *self, GError **error)
{
  g_autoptr (GString) s = read_json_string (self, FALSE, error);

  if (s == NULL)
    return T_STOP;
  for (guint i = 0; i < G_N_ELEMENTS (stg_json_type_names); i++)
    if (strcmp (s->str, stg_json_type_names[i].name) == 0 && s->len == strlen (stg_json_type_names[i].name))
      return stg_json_type_names[i].type;
  stg_json_fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA, "unknown JSON type name \"%.16s\"",
        g_utf8_validate (s->str, -1, NULL) ? s->str : "?");
  return T_STOP;
}

static gboolean
read_size (StgJsonProtocol *self, guint32 *size, GError **error)
{
  gint64 v;

  if (!read_json_integer (self, G_MININT64, G_MAXINT64, &v, error))
    return FALSE;
  if (v < 0)
    return stg_json_fail (error, THRIFT_PROTOCOL_ERROR_NEGATIVE_SIZE,
                 "negative container size %" G_GINT64_FORMAT, v);
  if (v > G_MAXINT32)
    return stg_json_fail (error, THRIFT_PROTOCOL_ERROR_SIZE_LIMIT,
                 "container size %" G_GINT64_FORMAT " is too large", v);
  *size = (guint32) v;
  return TRUE;
}

/* ---- reading: the protocol's calls ------------------------------------------ */

#define CONSUMED(self, start, ok) ((ok) ? (gint32) ((self)->nread - (start)) : -1)

static gint32
json_read_message_begin (ThriftProtocol *protocol, gchar **name, ThriftMessageType *type,
                         gint32 *seqid, GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nread, version = 0, t = 0, id = 0;
  g_autofree gchar *text = NULL;

  *name = NULL;
  *type = 0;
  *seqid = 0;
  stg_json_ctx_reset (self->rctx);
  self->depth = 0;
  if (!read_open (self, '[', CTX_LIST, error) ||
      !read_json_integer (self, G_MININT64, G_MAXINT64, &version, error))
    return -1;
  if (version != 1)
    {
      stg_json_fail (error, THRIFT_PROTOCOL_ERROR_BAD_VERSION,
            "JSON message version %" G_GINT64_FORMAT " (only 1 is known)", version);
      return -1;
    }
  if ((text = read_text (self, error)) == NULL ||
      !read_json_integer (self, T_CALL, T_ONEWAY, &t, error) ||
      !read_json_integer (self, G_MININT32, G_MAXINT32, &id, error))
    return -1;
  *name = g_steal_pointer (&text);
  *type = (ThriftMessageType) t;
  *seqid = (gint32) id;
  return CONSUMED (self, start, TRUE);
}

static gint32
json_read_message_end (ThriftProtocol *protocol, GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nread;

  return CONSUMED (self, start, read_close (self, ']', error));
}

static gint32
json_read_struct_begin (ThriftProtocol *protocol, gchar **name, GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nread;

  *name = NULL;
  return CONSUMED (self, start, enter (self, error) && read_open (self, '{', CTX_PAIR, error));
}

static gint32
json_read_struct_end (ThriftProtocol *protocol, GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nread;
  gboolean ok = read_close (self, '}', error);

  leave (self);
  return CONSUMED (self, start, ok);
}

static gint32
json_read_field_begin (ThriftProtocol *protocol, gchar **name, ThriftType *type, gint16 *id,
                       GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nread, v = 0;
  guchar c;

  *name = NULL;
  *type = T_STOP;
  *id = 0;
  if (!peek_byte (self, &c, error))
    return -1;
  if (c == '}')
    return 0;
  if (!read_json_integer (self, G_MININT16, G_MAXINT16, &v, error) ||
      !read_open (self, '{', CTX_PAIR, error))
    return -1;
  ThriftType t = read_type_name (self, error);
  if (t == T_STOP)
    return -1;
  *type = t;
  *id = (gint16) v;
  return CONSUMED (self, start, TRUE);
}

static gint32
json_read_field_end (ThriftProtocol *protocol, GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nread;

  return CONSUMED (self, start, read_close (self, '}', error));
}

static gint32
json_read_map_begin (ThriftProtocol *protocol, ThriftType *key_type, ThriftType *value_type,
                     guint32 *size, GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nread;

  *size = 0;
  if (!enter (self, error) || !read_open (self, '[', CTX_LIST, error) ||
      (*key_type = read_type_name (self, error)) == T_STOP ||
      (*value_type = read_type_name (self, error)) == T_STOP ||
      !read_size (self, size, error) || !read_open (self, '{', CTX_PAIR, error))
    return -1;
  /* The smallest entry is "":0 plus a comma. */
  if (!available (self, *size, 4, error))
    {
      *size = 0;
      return -1;
    }
  return CONSUMED (self, start, TRUE);
}

static gint32
json_read_map_end (ThriftProtocol *protocol, GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nread;
  gboolean ok = read_close (self, '}', error) && read_close (self, ']', error);

  leave (self);
  return CONSUMED (self, start, ok);
}

static gint32
json_read_collection_begin (ThriftProtocol *protocol, ThriftType *element_type, guint32 *size,
                            GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nread;

  *size = 0;
  if (!enter (self, error) || !read_open (self, '[', CTX_LIST, error) ||
      (*element_type = read_type_name (self, error)) == T_STOP || !read_size (self, size, error))
    return -1;
  if (!available (self, *size, 1, error))
    {
      *size = 0;
      return -1;
    }
  return CONSUMED (self, start, TRUE);
}

static gint32
json_read_collection_end (ThriftProtocol *protocol, GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nread;
  gboolean ok = read_close (self, ']', error);

  leave (self);
  return CONSUMED (self, start, ok);
}

static gint32
json_read_bool (ThriftProtocol *protocol, gboolean *value, GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nread, v = 0;
  gboolean ok = read_json_integer (self, G_MININT64, G_MAXINT64, &v, error);

  *value = v != 0;
  return CONSUMED (self, start, ok);
}

static gint32
json_read_byte (ThriftProtocol *protocol, gint8 *value, GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nread, v = 0;
  gboolean ok = read_json_integer (self, G_MININT8, G_MAXINT8, &v, error);

  *value = (gint8) v;
  return CONSUMED (self, start, ok);
}

static gint32
json_read_i16 (ThriftProtocol *protocol, gint16 *value, GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nread, v = 0;
  gboolean ok = read_json_integer (self, G_MININT16, G_MAXINT16, &v, error);

  *value = (gint16) v;
  return CONSUMED (self, start, ok);
}

static gint32
json_read_i32 (ThriftProtocol *protocol, gint32 *value, GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nread, v = 0;
  gboolean ok = read_json_integer (self, G_MININT32, G_MAXINT32, &v, error);

  *value = (gint32) v;
  return CONSUMED (self, start, ok);
}

static gint32
json_read_i64 (ThriftProtocol *protocol, gint64 *value, GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nread;

  *value = 0;
  return CONSUMED (self, start, read_json_integer (self, G_MININT64, G_MAXINT64, value, error));
}

static gint32
json_read_double (ThriftProtocol *protocol, gdouble *value, GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nread;

  *value = 0;
  return CONSUMED (self, start, read_json_double (self, value, error));
}

static gint32
json_read_string (ThriftProtocol *protocol, gchar **str, GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nread;

  *str = read_text (self, error);
  return CONSUMED (self, start, *str != NULL);
}

static gint
base64_value (guchar c)
{
  const gchar *p = c ? strchr (stg_json_base64_chars, c) : NULL;

  /* Like the other libraries, a character outside the alphabet decodes as
   * zero bits: skipping an unknown string field reads it as binary. */
  return p ? (gint) (p - stg_json_base64_chars) : 0;
}

static gint32
json_read_binary (ThriftProtocol *protocol, gpointer *buf, guint32 *len, GError **error)
{
  StgJsonProtocol *self = JSON (protocol);
  gint64 start = self->nread;
  g_autoptr (GString) s = read_json_string (self, FALSE, error);

  *buf = NULL;
  *len = 0;
  if (s == NULL)
    return -1;
  gsize n = s->len;
  for (int pad = 0; pad < 2 && n > 0 && s->str[n - 1] == '='; pad++)
    n--;
  if (n > G_MAXUINT32 / 3 * 4)
    {
      stg_json_fail (error, THRIFT_PROTOCOL_ERROR_SIZE_LIMIT, "binary value too large");
      return -1;
    }
  g_autoptr (GByteArray) bytes = g_byte_array_sized_new ((guint) (n / 4 * 3 + 3));
  for (gsize i = 0; i + 1 < n; i += 4)
    {
      gsize left = MIN (n - i, 4);
      guint32 v = 0;
      for (gsize k = 0; k < 4; k++)
        v = (v << 6) | (guint32) (k < left ? base64_value ((guchar) s->str[i + k]) : 0);
      guint8 out3[3] = { (guint8) (v >> 16), (guint8) (v >> 8), (guint8) v };
      g_byte_array_append (bytes, out3, (guint) (left - 1));
    }
  *len = bytes->len;
  *buf = bytes->len > 0 ? g_byte_array_free (g_steal_pointer (&bytes), FALSE) : NULL;
  return CONSUMED (self, start, TRUE);
}

static gint
json_min_serialized_size (ThriftProtocol *protocol, ThriftType type, GError **error)
{
  (void) protocol;
  switch (type)
    {
    case T_STOP:
    case T_VOID:
      return 0;
    case T_BOOL:
    case T_BYTE:
    case T_I16:
    case T_I32:
    case T_I64:
    case T_DOUBLE:
      return 1;
    case T_STRING:
    case T_STRUCT:
    case T_MAP:
    case T_SET:
    case T_LIST:
      return 2;
    default:
      stg_json_fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA, "unknown Thrift type %d", type);
      return -1;
    }
}

void
stg_json_reader_class_init (ThriftProtocolClass *pc)
{
  pc->read_message_begin = json_read_message_begin;
  pc->read_message_end = json_read_message_end;
  pc->read_struct_begin = json_read_struct_begin;
  pc->read_struct_end = json_read_struct_end;
  pc->read_field_begin = json_read_field_begin;
  pc->read_field_end = json_read_field_end;
  pc->read_map_begin = json_read_map_begin;
  pc->read_map_end = json_read_map_end;
  pc->read_list_begin = json_read_collection_begin;
  pc->read_list_end = json_read_collection_end;
  pc->read_set_begin = json_read_collection_begin;
  pc->read_set_end = json_read_collection_end;
  pc->read_bool = json_read_bool;
  pc->read_byte = json_read_byte;
  pc->read_i16 = json_read_i16;
  pc->read_i32 = json_read_i32;
  pc->read_i64 = json_read_i64;
  pc->read_double = json_read_double;
  pc->read_string = json_read_string;
  pc->read_binary = json_read_binary;
  pc->get_min_serialized_size = json_min_serialized_size;
}
