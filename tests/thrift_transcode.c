/* thrift_transcode.c: a test tool that rewrites one Thrift message from one
 * protocol into another, driven only by the types on the wire:
 *
 *   thrift_transcode json2bin|bin2json|json2json [--binary-strings] < in > out
 *
 * The compatibility tests (json_compat.py) feed it what Python's
 * TJSONProtocol and TBinaryProtocol write and read back what it writes.
 * With --binary-strings every string is copied as binary (base64 in JSON).
 * Exits 1 with the reason on stderr when the input does not read.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "api/json_protocol.h"
#include "common/binary_protocol.h"
#include "common/mem_transport.h"

static gboolean binary_strings;

#define TRY(call) \
  do { if ((call) < 0) return FALSE; } while (0)

static gboolean copy_value (ThriftProtocol *in, ThriftProtocol *out, ThriftType type, GError **error);

static gboolean
copy_struct (ThriftProtocol *in, ThriftProtocol *out, GError **error)
{
  g_autofree gchar *name = NULL;

  TRY (thrift_protocol_read_struct_begin (in, &name, error));
  TRY (thrift_protocol_write_struct_begin (out, "s", error));
  for (;;)
    {
      g_autofree gchar *fname = NULL;
      ThriftType type;
      gint16 id;
      TRY (thrift_protocol_read_field_begin (in, &fname, &type, &id, error));
      if (type == T_STOP)
        break;
      TRY (thrift_protocol_write_field_begin (out, "f", type, id, error));
      if (!copy_value (in, out, type, error))
        return FALSE;
      TRY (thrift_protocol_read_field_end (in, error));
      TRY (thrift_protocol_write_field_end (out, error));
    }
  TRY (thrift_protocol_write_field_stop (out, error));
  TRY (thrift_protocol_read_struct_end (in, error));
  TRY (thrift_protocol_write_struct_end (out, error));
  return TRUE;
}

/* A map's header, its entries and its end. */
static gboolean
copy_map (ThriftProtocol *in, ThriftProtocol *out, GError **error)
{
  ThriftType k, v;
  guint32 n;

  TRY (thrift_protocol_read_map_begin (in, &k, &v, &n, error));
  TRY (thrift_protocol_write_map_begin (out, k, v, n, error));
  for (guint32 i = 0; i < n; i++)
    if (!copy_value (in, out, k, error) || !copy_value (in, out, v, error))
      return FALSE;
  TRY (thrift_protocol_read_map_end (in, error));
  TRY (thrift_protocol_write_map_end (out, error));
  return TRUE;
}

/* A list's (or, with @set, a set's) header, its elements and its end. */
static gboolean
copy_list_or_set (ThriftProtocol *in, ThriftProtocol *out, gboolean set, GError **error)
{
  ThriftType e;
  guint32 n;

  if (set)
    {
      TRY (thrift_protocol_read_set_begin (in, &e, &n, error));
      TRY (thrift_protocol_write_set_begin (out, e, n, error));
    }
  else
    {
      TRY (thrift_protocol_read_list_begin (in, &e, &n, error));
      TRY (thrift_protocol_write_list_begin (out, e, n, error));
    }
  for (guint32 i = 0; i < n; i++)
    if (!copy_value (in, out, e, error))
      return FALSE;
  if (set)
    {
      TRY (thrift_protocol_read_set_end (in, error));
      TRY (thrift_protocol_write_set_end (out, error));
    }
  else
    {
      TRY (thrift_protocol_read_list_end (in, error));
      TRY (thrift_protocol_write_list_end (out, error));
    }
  return TRUE;
}

static gboolean
copy_value (ThriftProtocol *in, ThriftProtocol *out, ThriftType type, GError **error)
{
  switch (type)
    {
    case T_BOOL:
      {
        gboolean v;
        TRY (thrift_protocol_read_bool (in, &v, error));
        TRY (thrift_protocol_write_bool (out, v, error));
        return TRUE;
      }
    case T_BYTE:
      {
        gint8 v;
        TRY (thrift_protocol_read_byte (in, &v, error));
        TRY (thrift_protocol_write_byte (out, v, error));
        return TRUE;
      }
    case T_I16:
      {
        gint16 v;
        TRY (thrift_protocol_read_i16 (in, &v, error));
        TRY (thrift_protocol_write_i16 (out, v, error));
        return TRUE;
      }
    case T_I32:
      {
        gint32 v;
        TRY (thrift_protocol_read_i32 (in, &v, error));
        TRY (thrift_protocol_write_i32 (out, v, error));
        return TRUE;
      }
    case T_I64:
      {
        gint64 v;
        TRY (thrift_protocol_read_i64 (in, &v, error));
        TRY (thrift_protocol_write_i64 (out, v, error));
        return TRUE;
      }
    case T_DOUBLE:
      {
        gdouble v;
        TRY (thrift_protocol_read_double (in, &v, error));
        TRY (thrift_protocol_write_double (out, v, error));
        return TRUE;
      }
    case T_STRING:
      if (binary_strings)
        {
          g_autofree gpointer buf = NULL;
          guint32 len = 0;
          TRY (thrift_protocol_read_binary (in, &buf, &len, error));
          TRY (thrift_protocol_write_binary (out, buf, len, error));
        }
      else
        {
          g_autofree gchar *s = NULL;
          TRY (thrift_protocol_read_string (in, &s, error));
          TRY (thrift_protocol_write_string (out, s, error));
        }
      return TRUE;
    case T_STRUCT:
      return copy_struct (in, out, error);
    case T_MAP:
      return copy_map (in, out, error);
    case T_LIST:
    case T_SET:
      return copy_list_or_set (in, out, type == T_SET, error);
    default:
      g_set_error (error, THRIFT_PROTOCOL_ERROR, THRIFT_PROTOCOL_ERROR_INVALID_DATA,
                   "unknown type %d", type);
      return FALSE;
    }
}

static gboolean
copy_message (ThriftProtocol *in, ThriftProtocol *out, GError **error)
{
  g_autofree gchar *name = NULL;
  ThriftMessageType type;
  gint32 seqid;

  TRY (thrift_protocol_read_message_begin (in, &name, &type, &seqid, error));
  TRY (thrift_protocol_write_message_begin (out, name, type, seqid, error));
  if (!copy_struct (in, out, error))
    return FALSE;
  TRY (thrift_protocol_read_message_end (in, error));
  TRY (thrift_protocol_write_message_end (out, error));
  return TRUE;
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GByteArray) input = g_byte_array_new ();
  guint8 chunk[65536];
  size_t n;

  if (argc < 2 || argc > 3 || (argc == 3 && strcmp (argv[2], "--binary-strings") != 0))
    {
      fprintf (stderr, "usage: thrift_transcode json2bin|bin2json|json2json [--binary-strings]\n");
      return 2;
    }
  binary_strings = argc == 3;
  gboolean json_in = g_str_has_prefix (argv[1], "json");
  gboolean json_out = g_str_has_suffix (argv[1], "json");
  while ((n = fread (chunk, 1, sizeof chunk, stdin)) > 0)
    g_byte_array_append (input, chunk, (guint) n);

  g_autoptr (GBytes) bytes = g_byte_array_free_to_bytes (g_steal_pointer (&input));
  g_autoptr (StgMemTransport) tin = stg_mem_transport_new (bytes, 0);
  g_autoptr (StgMemTransport) tout = stg_mem_transport_new (NULL, 0);
  g_autoptr (ThriftProtocol) in = json_in ? stg_json_protocol_new (THRIFT_TRANSPORT (tin))
                                          : stg_binary_protocol_new (THRIFT_TRANSPORT (tin));
  g_autoptr (ThriftProtocol) out = json_out ? stg_json_protocol_new (THRIFT_TRANSPORT (tout))
                                            : stg_binary_protocol_new (THRIFT_TRANSPORT (tout));
  if (!copy_message (in, out, &error))
    {
      fprintf (stderr, "thrift_transcode: %s\n", error ? error->message : "failed");
      return 1;
    }
  gsize len;
  const guint8 *data = stg_mem_transport_output (tout, &len);
  if (fwrite (data, 1, len, stdout) != len)
    return 1;
  return 0;
}
