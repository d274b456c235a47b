/* json_protocol.h: Apache Thrift's JSON protocol (TJSONProtocol) for C GLib.
 *
 * StgJsonProtocol writes and reads the format of the Java, C++ and Python
 * libraries' TJSONProtocol: messages as [1,"name",type,seqid,{...}], fields
 * keyed by id with type tags, base64 binaries, numbers quoted as map keys.
 * Reads are hardened like StgBinaryProtocol: container sizes are checked
 * against what the transport still holds before anything is allocated,
 * nesting is limited, strings must be valid UTF-8 without NUL, and a
 * truncated message is an error. Any thread; one owner at a time.
 */
#pragma once

#include "common/thrift_glue.h"

G_BEGIN_DECLS

#define STG_JSON_MAX_DEPTH 64

#define STG_TYPE_JSON_PROTOCOL (stg_json_protocol_get_type ())
G_DECLARE_FINAL_TYPE (StgJsonProtocol, stg_json_protocol, STG, JSON_PROTOCOL, ThriftProtocol)

/* A protocol over @transport (referenced). */
ThriftProtocol *stg_json_protocol_new (ThriftTransport *transport);

G_END_DECLS
