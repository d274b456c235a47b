/* zookeeper.h: staggerd's side of ZooKeeper (zookeeper.c): the leader's
 * ServerSet member, the runner's announcer flags, and what /cluster shows. */
#pragma once

#include <json-glib/json-glib.h>

#include "daemon/daemon.h"
#include "daemon/settings.h"

G_BEGIN_DECLS

/* stagger-thermos's --announcer-* flags from [zookeeper]; NULL without an
 * ensemble. */
gchar **stg_daemon_zk_runner_args (const StgDaemonSettings *settings);

/* Makes this staggerd, which leads now and serves HTTP, the one member of
 * [zookeeper] scheduler_path (nothing without one). */
gboolean stg_daemon_zk_announce_leader (StgDaemon *d, GError **error);

/* "zookeeper": {...} into the object @b is building (nothing without an
 * ensemble). */
void stg_daemon_zk_add_json (StgDaemon *d, JsonBuilder *b);

/* /metrics lines of the leader's ServerSet member (a new string; empty
 * without scheduler_path). */
gchar *stg_daemon_zk_metrics (gpointer d);

G_END_DECLS
