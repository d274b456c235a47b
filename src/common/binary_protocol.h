/* binary_protocol.h: the Thrift binary protocol, hardened for untrusted input.
 *
 * StgBinaryProtocol writes exactly as the library's ThriftBinaryProtocol and
 * reads the same bytes, but refuses what could hurt a server: unversioned
 * message headers (the library reads those with the method name left
 * unset), strings, binaries and containers claiming more data than the
 * transport holds (checked before allocating), and nesting deeper than
 * STG_BINARY_MAX_DEPTH. Any thread; one owner at a time.
 */
#pragma once

#include "common/thrift_glue.h"

G_BEGIN_DECLS

#define STG_BINARY_MAX_DEPTH 64

#define STG_TYPE_BINARY_PROTOCOL (stg_binary_protocol_get_type ())
G_DECLARE_FINAL_TYPE (StgBinaryProtocol, stg_binary_protocol, STG, BINARY_PROTOCOL,
                      ThriftBinaryProtocol)

/* A protocol over @transport (referenced). */
ThriftProtocol *stg_binary_protocol_new (ThriftTransport *transport);

G_END_DECLS
