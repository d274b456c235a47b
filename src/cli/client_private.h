/* client_private.h: what client.c lends the files of the CLI's calls
 * beside it (client_sidecar.c): the generated client and the checks every
 * answer goes through. Not for use outside src/cli/client*.c. One thread:
 * the process's main thread.
 */
#pragma once

#include "cli/client.h"

G_BEGIN_DECLS

/* The connection's generated client. */
ApiStaggerSchedulerIf *stg_cli_client_if (StgCliClient *c);

/* The last step of every call of @method: @ok and @local are what the
 * generated client said, @response (taken) its answer; the answer when it
 * is OK (or a warning, said on stderr), else NULL with @error. */
ApiResponse *stg_cli_client_finish (StgCliClient *c, const gchar *method, gboolean ok,
                                    ApiResponse *response, GError *local, GError **error);

/* Declares the response and the error every call uses. */
#define CALL_BEGIN \
  ApiResponse *r = g_object_new (API_TYPE_RESPONSE, NULL); \
  g_autoptr (GError) local = NULL; \
  gboolean ok

G_END_DECLS
