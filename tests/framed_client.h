/* framed_client.h: a blocking Thrift client transport: framed, over TCP.
 *
 * StgFramedClient connects to host:port with GIO, buffers a message's
 * writes and sends them as one frame on flush, and reads replies a whole
 * frame at a time. For clients (tests, benchmarks, tools), not the daemon.
 * Any thread; one owner at a time.
 */
#pragma once

#include "common/thrift_glue.h"

G_BEGIN_DECLS

#define STG_TYPE_FRAMED_CLIENT (stg_framed_client_get_type ())
G_DECLARE_FINAL_TYPE (StgFramedClient, stg_framed_client, STG, FRAMED_CLIENT, ThriftTransport)

/* A transport to @host:@port, not yet open; @timeout_s bounds each socket
 * operation (0: none). Frames larger than @max_frame bytes are refused. */
StgFramedClient *stg_framed_client_new (const gchar *host, guint16 port, guint timeout_s,
                                        gsize max_frame);

G_END_DECLS
