/* thrift_glue.c: structs to bytes and back, and canonical encodings.
 *
 * Serialization uses the library's binary protocol over StgMemTransport. The
 * canonicalizer is a small generic reader/writer of the binary protocol: it
 * needs no knowledge of the IDL, so any struct can be hashed. Any thread.
 */
#include "config.h"

#include <string.h>

#include "common/binary_protocol.h"
#include "common/mem_transport.h"
#include "common/thrift_glue.h"

G_DEFINE_QUARK (stg-thrift-error-quark, stg_thrift_error)

#define CANON_MAX_DEPTH 64

GBytes *
stg_thrift_to_bytes (ThriftStruct *object, GError **error)
{
  g_return_val_if_fail (THRIFT_IS_STRUCT (object), NULL);

  g_autoptr (StgMemTransport) transport = stg_mem_transport_new (NULL, 0);
  g_autoptr (ThriftProtocol) protocol = stg_binary_protocol_new (THRIFT_TRANSPORT (transport));
  if (thrift_struct_write (object, protocol, error) < 0)
    return NULL;
  return stg_mem_transport_steal_output (transport);
}

gboolean
stg_thrift_from_bytes (ThriftStruct *object, GBytes *bytes, GError **error)
{
  g_return_val_if_fail (THRIFT_IS_STRUCT (object), FALSE);
  g_return_val_if_fail (bytes != NULL, FALSE);

  g_autoptr (StgMemTransport) transport = stg_mem_transport_new (bytes, 0);
  g_autoptr (ThriftProtocol) protocol = stg_binary_protocol_new (THRIFT_TRANSPORT (transport));
  if (thrift_struct_read (object, protocol, error) < 0)
    return FALSE;
  if (stg_mem_transport_remaining (transport) != 0)
    {
      g_set_error (error, STG_THRIFT_ERROR, STG_THRIFT_ERROR_TRAILING,
                   "%" G_GSIZE_FORMAT " bytes after the end of the struct",
                   stg_mem_transport_remaining (transport));
      return FALSE;
    }
  return TRUE;
}

gpointer
stg_thrift_new_from_bytes (GType type, GBytes *bytes, GError **error)
{
  g_autoptr (ThriftStruct) object = g_object_new (type, NULL);

  if (!stg_thrift_from_bytes (object, bytes, error))
    return NULL;
  return g_steal_pointer (&object);
}

gpointer
stg_thrift_copy (gpointer object)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) bytes = stg_thrift_to_bytes (THRIFT_STRUCT (object), &error);
  gpointer copy;

  /* A struct we hold always encodes and decodes: anything else is a bug. */
  g_assert_no_error (error);
  copy = stg_thrift_new_from_bytes (G_OBJECT_TYPE (object), bytes, &error);
  g_assert_no_error (error);
  return copy;
}

/* ---- canonical encoding ------------------------------------------------ */

typedef struct
{
  const guint8 *data;
  gsize len;
  gsize pos;
} Reader;

static gboolean
take (Reader *r, gsize n, const guint8 **out, GError **error)
{
  if (n > r->len - r->pos)
    {
      g_set_error (error, STG_THRIFT_ERROR, STG_THRIFT_ERROR_FAILED,
                   "encoded struct ends early at byte %" G_GSIZE_FORMAT, r->pos);
      return FALSE;
    }
  *out = r->data + r->pos;
  r->pos += n;
  return TRUE;
}

static gboolean
take_i32 (Reader *r, gint32 *value, GError **error)
{
  const guint8 *p;

  if (!take (r, 4, &p, error))
    return FALSE;
  *value = (gint32) ((guint32) p[0] << 24 | (guint32) p[1] << 16 | (guint32) p[2] << 8 | p[3]);
  return TRUE;
}

static void
put_i32 (GByteArray *out, gint32 value)
{
  guint8 b[4] = { (guint32) value >> 24, (guint32) value >> 16, (guint32) value >> 8, (guint32) value };
  g_byte_array_append (out, b, 4);
}

static gboolean canon_value (Reader *r, guint8 type, GByteArray *out, guint depth, GError **error);

static gint
compare_bytes (gconstpointer a, gconstpointer b)
{
  GBytes *const *x = a;
  GBytes *const *y = b;
  return g_bytes_compare (*x, *y);
}

static GBytes *
canon_one (Reader *r, guint8 type, guint depth, GError **error)
{
  g_autoptr (GByteArray) out = g_byte_array_new ();

  if (!canon_value (r, type, out, depth, error))
    return NULL;
  return g_byte_array_free_to_bytes (g_steal_pointer (&out));
}

typedef struct
{
  gint16 id;
  GBytes *field;   /* type byte, id, canonical value */
} Field;

static gint
compare_fields (gconstpointer a, gconstpointer b)
{
  const Field *x = a;
  const Field *y = b;
  return (x->id > y->id) - (x->id < y->id);
}

static void
field_clear (gpointer p)
{
  Field *f = p;
  g_bytes_unref (f->field);
}

static gboolean
canon_struct (Reader *r, GByteArray *out, guint depth, GError **error)
{
  g_autoptr (GArray) fields = g_array_new (FALSE, FALSE, sizeof (Field));

  g_array_set_clear_func (fields, field_clear);
  for (;;)
    {
      const guint8 *p;
      if (!take (r, 1, &p, error))
        return FALSE;
      guint8 type = p[0];
      if (type == T_STOP)
        break;
      if (!take (r, 2, &p, error))
        return FALSE;
      gint16 id = (gint16) ((guint16) p[0] << 8 | p[1]);
      g_autoptr (GByteArray) field = g_byte_array_new ();
      guint8 head[3] = { type, p[0], p[1] };
      g_byte_array_append (field, head, 3);
      if (!canon_value (r, type, field, depth + 1, error))
        return FALSE;
      Field f = { id, g_byte_array_free_to_bytes (g_steal_pointer (&field)) };
      g_array_append_val (fields, f);
    }
  g_array_sort (fields, compare_fields);
  for (guint i = 0; i < fields->len; i++)
    {
      gsize n;
      const guint8 *d = g_bytes_get_data (g_array_index (fields, Field, i).field, &n);
      g_byte_array_append (out, d, n);
    }
  guint8 stop = T_STOP;
  g_byte_array_append (out, &stop, 1);
  return TRUE;
}

/* Reads @count elements of @type, canonical each, sorted when @sort. */
static gboolean
canon_elements (Reader *r, guint8 type, gint32 count, gboolean sort, GByteArray *out,
                guint depth, GError **error)
{
  g_autoptr (GPtrArray) items = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);

  for (gint32 i = 0; i < count; i++)
    {
      GBytes *item = canon_one (r, type, depth + 1, error);
      if (item == NULL)
        return FALSE;
      g_ptr_array_add (items, item);
    }
  if (sort)
    g_ptr_array_sort (items, compare_bytes);
  for (guint i = 0; i < items->len; i++)
    {
      gsize n;
      const guint8 *d = g_bytes_get_data (items->pdata[i], &n);
      g_byte_array_append (out, d, n);
    }
  return TRUE;
}

static gboolean
check_count (Reader *r, gint32 count, GError **error)
{
  /* Every element takes at least one byte. */
  if (count < 0 || (gsize) count > r->len - r->pos)
    {
      g_set_error (error, STG_THRIFT_ERROR, STG_THRIFT_ERROR_FAILED,
                   "bad container size %d", count);
      return FALSE;
    }
  return TRUE;
}

static gboolean
canon_map (Reader *r, GByteArray *out, guint depth, GError **error)
{
  const guint8 *p;
  gint32 count;

  if (!take (r, 2, &p, error) || !take_i32 (r, &count, error) || !check_count (r, count, error))
    return FALSE;
  guint8 ktype = p[0], vtype = p[1];
  g_autoptr (GPtrArray) entries = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  for (gint32 i = 0; i < count; i++)
    {
      /* An entry sorts by its key's encoding, which comes first in it. */
      g_autoptr (GByteArray) entry = g_byte_array_new ();
      if (!canon_value (r, ktype, entry, depth + 1, error) ||
          !canon_value (r, vtype, entry, depth + 1, error))
        return FALSE;
      g_ptr_array_add (entries, g_byte_array_free_to_bytes (g_steal_pointer (&entry)));
    }
  g_ptr_array_sort (entries, compare_bytes);
  guint8 head[2] = { ktype, vtype };
  g_byte_array_append (out, head, 2);
  put_i32 (out, count);
  for (guint i = 0; i < entries->len; i++)
    {
      gsize n;
      const guint8 *d = g_bytes_get_data (entries->pdata[i], &n);
      g_byte_array_append (out, d, n);
    }
  return TRUE;
}

static gboolean
canon_value (Reader *r, guint8 type, GByteArray *out, guint depth, GError **error)
{
  const guint8 *p;
  gint32 n;

  if (depth > CANON_MAX_DEPTH)
    {
      g_set_error (error, STG_THRIFT_ERROR, STG_THRIFT_ERROR_FAILED,
                   "nesting deeper than %d", CANON_MAX_DEPTH);
      return FALSE;
    }
  switch (type)
    {
    case T_BOOL:
      if (!take (r, 1, &p, error))
        return FALSE;
      {
        guint8 b = p[0] != 0;
        g_byte_array_append (out, &b, 1);
      }
      return TRUE;
    case T_BYTE:
      if (!take (r, 1, &p, error))
        return FALSE;
      g_byte_array_append (out, p, 1);
      return TRUE;
    case T_I16:
      if (!take (r, 2, &p, error))
        return FALSE;
      g_byte_array_append (out, p, 2);
      return TRUE;
    case T_I32:
      if (!take (r, 4, &p, error))
        return FALSE;
      g_byte_array_append (out, p, 4);
      return TRUE;
    case T_I64:
    case T_DOUBLE:
      if (!take (r, 8, &p, error))
        return FALSE;
      g_byte_array_append (out, p, 8);
      return TRUE;
    case T_STRING:
      if (!take_i32 (r, &n, error) || !check_count (r, n, error) || !take (r, (gsize) n, &p, error))
        return FALSE;
      put_i32 (out, n);
      g_byte_array_append (out, p, (guint) n);
      return TRUE;
    case T_STRUCT:
      return canon_struct (r, out, depth, error);
    case T_MAP:
      return canon_map (r, out, depth, error);
    case T_SET:
    case T_LIST:
      if (!take (r, 1, &p, error) || !take_i32 (r, &n, error) || !check_count (r, n, error))
        return FALSE;
      {
        guint8 etype = p[0];
        g_byte_array_append (out, &etype, 1);
        put_i32 (out, n);
        return canon_elements (r, etype, n, type == T_SET, out, depth, error);
      }
    default:
      g_set_error (error, STG_THRIFT_ERROR, STG_THRIFT_ERROR_FAILED,
                   "unknown type %u at byte %" G_GSIZE_FORMAT, type, r->pos);
      return FALSE;
    }
}

GBytes *
stg_thrift_canonicalize (GBytes *encoded, GError **error)
{
  Reader r = { 0 };
  g_autoptr (GByteArray) out = g_byte_array_new ();

  r.data = g_bytes_get_data (encoded, &r.len);
  if (!canon_struct (&r, out, 0, error))
    return NULL;
  if (r.pos != r.len)
    {
      g_set_error (error, STG_THRIFT_ERROR, STG_THRIFT_ERROR_TRAILING,
                   "%" G_GSIZE_FORMAT " bytes after the end of the struct", r.len - r.pos);
      return NULL;
    }
  return g_byte_array_free_to_bytes (g_steal_pointer (&out));
}

gchar *
stg_thrift_hash (ThriftStruct *object, GError **error)
{
  g_autoptr (GBytes) bytes = stg_thrift_to_bytes (object, error);
  if (bytes == NULL)
    return NULL;
  g_autoptr (GBytes) canon = stg_thrift_canonicalize (bytes, error);
  if (canon == NULL)
    return NULL;
  return g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, canon);
}

gboolean
stg_thrift_equal (ThriftStruct *a, ThriftStruct *b)
{
  g_autoptr (GBytes) ea = stg_thrift_to_bytes (a, NULL);
  g_autoptr (GBytes) eb = stg_thrift_to_bytes (b, NULL);
  if (ea == NULL || eb == NULL)
    return FALSE;
  g_autoptr (GBytes) ca = stg_thrift_canonicalize (ea, NULL);
  g_autoptr (GBytes) cb = stg_thrift_canonicalize (eb, NULL);
  return ca != NULL && cb != NULL && g_bytes_equal (ca, cb);
}

gint32
stg_transport_read_all (ThriftTransport *transport, gpointer buf, guint32 len, GError **error)
{
  ThriftTransportClass *klass = THRIFT_TRANSPORT_GET_CLASS (transport);
  guint32 have = 0;

  while (have < len)
    {
      gint32 n = klass->read (transport, (guint8 *) buf + have, len - have, error);
      if (n < 0)
        return -1;
      have += (guint32) n;
    }
  return (gint32) have;
}
