/* tcp_server.h: Thrift over TCP: framed transport, binary protocol.
 *
 * StgTcpServer accepts connections on the main loop (GSocketService) and
 * reads frames asynchronously, so any number of clients are served at once
 * with no thread. Each frame is one message, dispatched through
 * StgDispatch; the reply goes back as one frame. A frame over the size
 * limit, a malformed message, an idle connection, a frame that takes too
 * long, or one that would take the bytes all unfinished frames hold past
 * the limit closes that connection (with a logged reason) and nothing
 * else; connections over the limits (in all, from one address) are closed
 * as they come. Main-loop thread only.
 */
#pragma once

#include <gio/gio.h>

#include "api/body_buffer.h"
#include "api/dispatch.h"

G_BEGIN_DECLS

typedef struct
{
  gsize max_frame;          /* bytes; default 16 MiB */
  gsize max_buffered;       /* bytes all unfinished frames may hold; over it a connection
                             * is closed. Default 48 MiB (at least max_frame); 0: no limit */
  StgBodyBudget *budget;    /* (nullable) shared with other servers instead of
                             * max_buffered; borrowed */
  guint idle_timeout_s;     /* default 300; 0: never */
  guint frame_timeout_s;    /* a frame must be in within this once begun; default 60 */
  guint max_connections;    /* default 4096 */
  guint max_per_address;    /* connections from one address; default 1024 */
  gint backlog;             /* listen queue; default 4096, capped by net.core.somaxconn */
  StgCaller caller;         /* who every call is from (plain TCP carries no
                             * credentials); default: trusted */
} StgTcpOptions;

void stg_tcp_options_init (StgTcpOptions *options);

typedef struct _StgTcpServer StgTcpServer;

/* Listens on @address:@port (0: any free port) and serves @dispatch. */
StgTcpServer *stg_tcp_server_new (StgDispatch *dispatch, const gchar *address, guint16 port,
                                  const StgTcpOptions *options, GError **error);

/* Serves @dispatch (borrowed), to callers that are @caller, from now on:
 * every frame not yet dispatched, on connections open or to come. The
 * listener stays open (a follower that takes the lead). */
void stg_tcp_server_serve (StgTcpServer *server, StgDispatch *dispatch, const StgCaller *caller);

/* The port actually bound. */
guint16 stg_tcp_server_port (StgTcpServer *server);

/* Stops accepting, closes every connection and waits (iterating the
 * thread-default main context) until all are gone, then frees. */
void stg_tcp_server_free (StgTcpServer *server);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgTcpServer, stg_tcp_server_free)

G_END_DECLS
