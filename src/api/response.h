/* response.h: building Aurora-style Responses.
 *
 * Every call answers with a Response: a code, serverInfo naming the cluster,
 * details carrying messages, and a result only with OK. These helpers fill
 * the Response the generated processor hands to each handler method.
 * Main-loop thread only.
 */
#pragma once

#include "common/thrift_glue.h"

G_BEGIN_DECLS

/* OK with @result (taken: may be NULL for none). */
void stg_response_ok (ApiResponse *response, const gchar *cluster, ApiResult *result);

/* A failure with @code and one detail message. */
void stg_response_fail (ApiResponse *response, const gchar *cluster, ApiResponseCode code,
                        const gchar *format, ...) G_GNUC_PRINTF (4, 5);

/* Appends a detail message. */
void stg_response_add_detail (ApiResponse *response, const gchar *format, ...) G_GNUC_PRINTF (2, 3);

/* @response's own Result (a new reference), to fill and hand back to
 * stg_response_ok(): cheaper than a new one, since a generated
 * Result allocates every member of its union. */
ApiResult *stg_result_of (ApiResponse *response);

G_END_DECLS
