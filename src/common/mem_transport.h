/* mem_transport.h: a Thrift transport over bytes in memory.
 *
 * StgMemTransport reads one message from a buffer it borrows (GBytes) and
 * writes into a growing GByteArray it owns. Unlike the library's
 * ThriftMemoryBuffer it fails cleanly at the end of input (no endless retry
 * on a truncated message), reads in O(1) per call, and bounds output by a
 * size given at creation. Used by every server path and by the store to turn
 * structs into bytes and back. Any thread; one owner at a time.
 */
#pragma once

#include <glib-object.h>
#include "common/thrift_glue.h"

G_BEGIN_DECLS

#define STG_TYPE_MEM_TRANSPORT (stg_mem_transport_get_type ())
G_DECLARE_FINAL_TYPE (StgMemTransport, stg_mem_transport, STG, MEM_TRANSPORT, ThriftTransport)

/* A transport that reads @input (may be NULL: nothing to read) and accepts
 * at most @max_output bytes of writes (0: no limit). */
StgMemTransport *stg_mem_transport_new (GBytes *input, gsize max_output);

/* Bytes not yet read. */
gsize stg_mem_transport_remaining (StgMemTransport *self);

/* The bytes written so far (borrowed; valid until the next write). */
const guint8 *stg_mem_transport_output (StgMemTransport *self, gsize *len);

/* Takes the bytes written so far; the output starts again empty. */
GBytes *stg_mem_transport_steal_output (StgMemTransport *self);

G_END_DECLS
