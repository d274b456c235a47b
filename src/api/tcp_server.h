/* tcp_server.h: Thrift over TCP: framed transport, binary protocol.
 *
 * StgTcpServer accepts connections on the main loop (GSocketService) and
 * reads frames asynchronously, so any number of clients are served at once
 * with no thread. Each frame is one message, dispatched through
 * StgDispatch; the reply goes back as one frame. A frame over the size
 * limit, a malformed message or an idle connection closes that connection
 * (with a logged reason) and nothing else. Main-loop thread only.
 */
#pragma once

#include <gio/gio.h>

#include "api/dispatch.h"

G_BEGIN_DECLS

typedef struct
{
  gsize max_frame;          /* bytes; default 16 MiB */
  guint idle_timeout_s;     /* default 300; 0: never */
  StgCaller caller;         /* who every call is from (plain TCP carries no
                             * credentials); default: trusted */
} StgTcpOptions;

void stg_tcp_options_init (StgTcpOptions *options);

typedef struct _StgTcpServer StgTcpServer;

/* Listens on @address:@port (0: any free port) and serves @dispatch. */
StgTcpServer *stg_tcp_server_new (StgDispatch *dispatch, const gchar *address, guint16 port,
                                  const StgTcpOptions *options, GError **error);

/* The port actually bound. */
guint16 stg_tcp_server_port (StgTcpServer *server);

/* Stops accepting, closes every connection and waits (iterating the
 * thread-default main context) until all are gone, then frees. */
void stg_tcp_server_free (StgTcpServer *server);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgTcpServer, stg_tcp_server_free)

G_END_DECLS
