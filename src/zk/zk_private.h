/* zk_private.h: what zk.c gives serverset.c: a session opened with the
 * auth file's credentials, the ACL new nodes get. Not for other folders. */
#pragma once

#define THREADED 1 /* the synchronous calls of libzookeeper_mt */
#include <zookeeper/zookeeper.h>

#include "zk/zk.h"

G_BEGIN_DECLS

/* A session with @ensemble (checked), its credentials sent; ZooKeeper's own
 * logging silenced (what matters is said by the caller). NULL and @error
 * when the client refuses (a host name that does not resolve). */
zhandle_t *stg_zk_open (const gchar *ensemble, const StgZkAuth *auth, gint timeout_ms,
                        watcher_fn watcher, gpointer context, GError **error);

/* The ACL of new nodes: the auth file's, else anyone may do anything
 * (ZooKeeper's open ACL, Aurora's default). */
struct ACL_vector *stg_zk_auth_acl (const StgZkAuth *auth);

StgZkAuth *stg_zk_auth_copy (const StgZkAuth *auth);

G_END_DECLS
