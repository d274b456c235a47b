/* fuzz_json.c: libFuzzer target for the JSON protocol's reader: any bytes
 * as one Thrift message, read to the end the way the dispatcher reads one
 * (message header, then the arguments skipped as a struct). Nothing may
 * crash, leak or read past the input. */
#include "config.h"

#include "api/json_protocol.h"
#include "common/mem_transport.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput (const guint8 *data, gsize size)
{
  g_autoptr (GBytes) input = g_bytes_new (data, size);
  g_autoptr (StgMemTransport) t = stg_mem_transport_new (input, 0);
  g_autoptr (ThriftProtocol) p = stg_json_protocol_new (THRIFT_TRANSPORT (t));
  g_autofree gchar *name = NULL;
  ThriftMessageType type;
  gint32 seqid;

  if (thrift_protocol_read_message_begin (p, &name, &type, &seqid, NULL) < 0)
    return 0;
  if (thrift_protocol_skip (p, T_STRUCT, NULL) < 0)
    return 0;
  thrift_protocol_read_message_end (p, NULL);
  return 0;
}
