/* http_api.h: Thrift over HTTP at /api, as Aurora's scheduler serves it.
 *
 * One POST carries one Thrift message. The request is read by its
 * Content-Type (application/vnd.apache.thrift.binary is binary;
 * application/x-thrift, application/json, application/vnd.apache.thrift.json
 * or none is JSON) and the reply is written by the Accept header (binary
 * only when Accept names the binary type), labelled with its type. Other
 * methods get 405, other types 415, an unreadable message 400; the body
 * limit (413) is the HTTP server's. Main-loop thread only.
 */
#pragma once

#include "api/dispatch.h"
#include "api/http_server.h"

G_BEGIN_DECLS

#define STG_HTTP_API_BINARY "application/vnd.apache.thrift.binary"
#define STG_HTTP_API_JSON "application/vnd.apache.thrift.json"

/* Routes /api of @server to @dispatch (borrowed: it must outlive @server). */
void stg_http_api_route (StgHttpServer *server, StgDispatch *dispatch);

G_END_DECLS
