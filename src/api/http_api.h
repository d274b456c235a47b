/* http_api.h: Thrift over HTTP at /api, as Aurora's scheduler serves it.
 *
 * One POST carries one Thrift message. The request is read by its
 * Content-Type (application/vnd.apache.thrift.binary is binary;
 * application/x-thrift, application/json or application/vnd.apache.thrift.json
 * is JSON) and the reply is written by the Accept header (binary only when
 * Accept names the binary type), labelled with its type. Other methods get
 * 405, other types and none at all 415 (as Aurora's ApiModule: a browser
 * can send a body without a type, or as text/plain, from any page without
 * asking), an unreadable message 400; the body
 * limit (413) is the HTTP server's. With auth on, the Authorization header
 * (HTTP Basic or Bearer) says who calls. Main-loop thread only.
 */
#pragma once

#include "api/auth.h"
#include "api/dispatch.h"
#include "api/http_server.h"

G_BEGIN_DECLS

#define STG_HTTP_API_BINARY "application/vnd.apache.thrift.binary"
#define STG_HTTP_API_JSON "application/vnd.apache.thrift.json"

typedef struct _StgHttpApi StgHttpApi;

/* Routes /api of @server to @dispatch, with credentials checked by @auth
 * (nullable: off). All borrowed; free the result after @server. */
StgHttpApi *stg_http_api_new (StgHttpServer *server, StgDispatch *dispatch, StgAuth *auth);
void stg_http_api_free (StgHttpApi *api);

G_END_DECLS
