/* json_protocol.c: StgJsonProtocol, Thrift's TJSONProtocol format.
 *
 * Owns two stacks of JSON contexts (one for writing, one for reading) and a
 * one-byte lookahead. A context says what separates the next value from the
 * previous one: nothing at the top, ',' in an array, and ':' then ','
 * alternately in an object, where a key that is a number is quoted. Every
 * read goes through next_byte()/peek_byte(), so the end of input is always
 * an error, never a wait. Any thread; one owner at a time.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "api/json_protocol.h"

typedef enum { CTX_TOP, CTX_LIST, CTX_PAIR } CtxKind;

typedef struct
{
  CtxKind kind;
  gboolean first;
  gboolean colon;   /* CTX_PAIR: the next value is a key */
} Ctx;

struct _StgJsonProtocol
{
  ThriftProtocol parent;

  GArray *wctx;     /* Ctx, the write contexts; [0] is the top level */
  GArray *rctx;     /* Ctx, the read contexts */
  gint peeked;      /* the lookahead byte, or -1 */
  guint depth;      /* open structs and containers while reading */
  gint64 nread;     /* bytes consumed (lookahead excluded) */
  gint64 nwritten;
};

G_DEFINE_TYPE (StgJsonProtocol, stg_json_protocol, THRIFT_TYPE_PROTOCOL)

#define JSON(p) STG_JSON_PROTOCOL (p)

static const struct
{
  ThriftType type;
  const gchar *name;
} type_names[] = {
  { T_BOOL, "tf" },   { T_BYTE, "i8" },    { T_I16, "i16" },    { T_I32, "i32" },
  { T_I64, "i64" },   { T_DOUBLE, "dbl" }, { T_STRING, "str" }, { T_STRUCT, "rec" },
  { T_MAP, "map" },   { T_LIST, "lst" },   { T_SET, "set" },
};

static const gchar base64_chars[] =
  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static gboolean
fail (GError **error, gint code, const gchar *format, ...) G_GNUC_PRINTF (3, 4);

static gboolean
fail (GError **error, gint code, const gchar *format, ...)
{
  va_list ap;

  va_start (ap, format);
  if (error != NULL && *error == NULL)
    *error = g_error_new_valist (THRIFT_PROTOCOL_ERROR, code, format, ap);
  va_end (ap);
  return FALSE;
}

/* ---- contexts ----------------------------------------------------------- */

static void
ctx_reset (GArray *stack)
{
  Ctx top = { CTX_TOP, TRUE, FALSE };

  g_array_set_size (stack, 0);
  g_array_append_val (stack, top);
}

static void
ctx_push (GArray *stack, CtxKind kind)
{
  Ctx c = { kind, TRUE, TRUE };

  g_array_append_val (stack, c);
}

static void
ctx_pop (GArray *stack)
{
  if (stack->len > 1)
    g_array_set_size (stack, stack->len - 1);
}

static Ctx *
ctx_top (GArray *stack)
{
  return &g_array_index (stack, Ctx, stack->len - 1);
}

/* The separator a context wants before its next value (0: none), and
 * advances it. */
static gchar
ctx_next (Ctx *c)
{
  gchar sep = 0;

  switch (c->kind)
    {
    case CTX_TOP:
      break;
    case CTX_LIST:
      sep = c->first ? 0 : ',';
      c->first = FALSE;
      break;
    case CTX_PAIR:
      if (c->first)
        {
          c->first = FALSE;
          c->colon = TRUE;
        }
      else
        {
          sep = c->colon ? ':' : ',';
          c->colon = !c->colon;
        }
      break;
    }
  return sep;
}

/* Numbers are quoted where they are the key of an object member. */
static gboolean
ctx_quotes_numbers (GArray *stack)
{
  Ctx *c = ctx_top (stack);

  return c->kind == CTX_PAIR && c->colon;
}

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
  gchar sep = ctx_next (ctx_top (self->wctx));

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
  quote = quote || ctx_quotes_numbers (self->wctx);
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
      g_string_append_c (buf, base64_chars[(n >> 18) & 63]);
      g_string_append_c (buf, base64_chars[(n >> 12) & 63]);
      if (left > 1)
        g_string_append_c (buf, base64_chars[(n >> 6) & 63]);
      if (left > 2)
        g_string_append_c (buf, base64_chars[n & 63]);
    }
  g_string_append_c (buf, '"');
  return out (self, buf->str, buf->len, error);
}

static gboolean
write_open (StgJsonProtocol *self, gchar bracket, CtxKind kind, GError **error)
{
  if (!out_sep (self, error) || !out (self, &bracket, 1, error))
    return FALSE;
  ctx_push (self->wctx, kind);
  return TRUE;
}

static gboolean
write_close (StgJsonProtocol *self, gchar bracket, GError **error)
{
  ctx_pop (self->wctx);
  return out (self, &bracket, 1, error);
}

static const gchar *
type_name (ThriftType type, GError **error)
{
  for (guint i = 0; i < G_N_ELEMENTS (type_names); i++)
    if (type_names[i].type == type)
      return type_names[i].name;
  fail (error, THRIFT_PROTOCOL_ERROR_NOT_IMPLEMENTED, "no JSON name for Thrift type %d", type);
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

  ctx_reset (self->wctx);
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
    return fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA, "JSON message ends early");
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
        return fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA, "JSON message ends early");
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
    return fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA,
                 "expected '%c' at byte %" G_GINT64_FORMAT " of the JSON message, found '%c'",
                 want, self->nread, c);
  if (c != want)
    return fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA,
                 "expected '%c' at byte %" G_GINT64_FORMAT " of the JSON message, found byte 0x%02x",
                 want, self->nread, c);
  return TRUE;
}

static gboolean
in_sep (StgJsonProtocol *self, GError **error)
{
  gchar sep = ctx_next (ctx_top (self->rctx));

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
    return fail (error, THRIFT_PROTOCOL_ERROR_SIZE_LIMIT,
                 "a container of %" G_GINT64_FORMAT " elements cannot fit in the message", count);
  return TRUE;
}

static gboolean
enter (StgJsonProtocol *self, GError **error)
{
  if (++self->depth > STG_JSON_MAX_DEPTH)
    return fail (error, THRIFT_PROTOCOL_ERROR_DEPTH_LIMIT, "nesting deeper than %d",
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
  ctx_push (self->rctx, kind);
  return TRUE;
}

static gboolean
read_close (StgJsonProtocol *self, guchar bracket, GError **error)
{
  if (!expect (self, bracket, error))
    return FALSE;
  ctx_pop (self->rctx);
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
        return fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA, "bad \\u escape in a JSON string");
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
              fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA, "bad escape '\\%c' in a JSON string",
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
  fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA, "unpaired UTF-16 surrogate in a JSON string");
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
      fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA, "a string holds a NUL character");
      return NULL;
    }
  if (!g_utf8_validate (s->str, (gssize) s->len, NULL))
    {
      fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA, "a string is not valid UTF-8");
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
        return fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA, "a JSON number is too long");
      buf[n++] = (gchar) c;
      self->peeked = -1;
      self->nread++;
    }
  buf[n] = '\0';
  if (n == 0)
    return fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA,
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
  gboolean quoted = ctx_quotes_numbers (self->rctx);
  if ((quoted && !expect (self, '"', error)) || !read_numeric_chars (self, buf, error))
    return FALSE;
  const gchar *digits = buf[0] == '-' ? buf + 1 : buf;
  if (!g_ascii_string_to_unsigned (digits, 10, 0, G_MAXUINT64, &parsed, NULL) ||
      (buf[0] == '-' ? parsed > (guint64) G_MAXINT64 + 1 : parsed > (guint64) G_MAXINT64))
    return fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA, "expected an integer, found \"%s\"", buf);
  gint64 v = buf[0] == '-' ? (gint64) (0 - parsed) : (gint64) parsed;
  if (v < min || v > max)
    return fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA,
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
    return fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA, "expected a number, found \"%.32s\"", text);
  *value = g_ascii_strtod (text, &end);
  if (end == NULL || *end != '\0')
    return fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA, "expected a number, found \"%.32s\"", text);
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
      else if (!ctx_quotes_numbers (self->rctx))
        return fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA, "a number is unexpectedly quoted");
      else if (s->len >= MAX_NUMBER_CHARS || memchr (s->str, '\0', s->len) != NULL)
        return fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA, "expected a number");
      else
        return parse_double (s->str, value, error);
      return TRUE;
    }
  if (ctx_quotes_numbers (self->rctx))
    return expect (self, '"', error);   /* fails: a key must be quoted */
  return read_numeric_chars (self, buf, error) && parse_double (buf, value, error);
}

static ThriftType
read_type_name (StgJsonProtocol *self, GError **error)
{
  g_autoptr (GString) s = read_json_string (self, FALSE, error);

  if (s == NULL)
    return T_STOP;
  for (guint i = 0; i < G_N_ELEMENTS (type_names); i++)
    if (strcmp (s->str, type_names[i].name) == 0 && s->len == strlen (type_names[i].name))
      return type_names[i].type;
  fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA, "unknown JSON type name \"%.16s\"",
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
    return fail (error, THRIFT_PROTOCOL_ERROR_NEGATIVE_SIZE,
                 "negative container size %" G_GINT64_FORMAT, v);
  if (v > G_MAXINT32)
    return fail (error, THRIFT_PROTOCOL_ERROR_SIZE_LIMIT,
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
  ctx_reset (self->rctx);
  self->depth = 0;
  if (!read_open (self, '[', CTX_LIST, error) ||
      !read_json_integer (self, G_MININT64, G_MAXINT64, &version, error))
    return -1;
  if (version != 1)
    {
      fail (error, THRIFT_PROTOCOL_ERROR_BAD_VERSION,
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
  const gchar *p = c ? strchr (base64_chars, c) : NULL;

  /* Like the other libraries, a character outside the alphabet decodes as
   * zero bits: skipping an unknown string field reads it as binary. */
  return p ? (gint) (p - base64_chars) : 0;
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
      fail (error, THRIFT_PROTOCOL_ERROR_SIZE_LIMIT, "binary value too large");
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
      fail (error, THRIFT_PROTOCOL_ERROR_INVALID_DATA, "unknown Thrift type %d", type);
      return -1;
    }
}

/* ---- the object ------------------------------------------------------------- */

static void
stg_json_protocol_finalize (GObject *object)
{
  StgJsonProtocol *self = JSON (object);

  g_array_unref (self->wctx);
  g_array_unref (self->rctx);
  G_OBJECT_CLASS (stg_json_protocol_parent_class)->finalize (object);
}

static void
stg_json_protocol_class_init (StgJsonProtocolClass *klass)
{
  ThriftProtocolClass *pc = THRIFT_PROTOCOL_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = stg_json_protocol_finalize;

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

static void
stg_json_protocol_init (StgJsonProtocol *self)
{
  self->wctx = g_array_new (FALSE, FALSE, sizeof (Ctx));
  self->rctx = g_array_new (FALSE, FALSE, sizeof (Ctx));
  ctx_reset (self->wctx);
  ctx_reset (self->rctx);
  self->peeked = -1;
}

ThriftProtocol *
stg_json_protocol_new (ThriftTransport *transport)
{
  return g_object_new (STG_TYPE_JSON_PROTOCOL, "transport", transport, NULL);
}
