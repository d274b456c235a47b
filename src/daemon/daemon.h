/* daemon.h: the wiring of staggerd's parts.
 *
 * StgDaemon owns everything the daemon runs: the store, clock, runtime,
 * engine, handler, dispatcher and the TCP and HTTP servers. main() fills
 * StgDaemonSettings (settings.h), starts a daemon and runs the main loop
 * until a signal stops it. Main-loop thread only.
 */
#pragma once

#include <glib.h>

#include "daemon/settings.h"

G_BEGIN_DECLS

/* Retention runs this often, deleting at most STG_DAEMON_PRUNE_ROWS rows of
 * each kind and handing back at most STG_DAEMON_RECLAIM_PAGES pages. */
#define STG_DAEMON_PRUNE_S 60
#define STG_DAEMON_PRUNE_ROWS 1000

/* A committed recovery restarts staggerd this long after its answer. */
#define STG_DAEMON_RECOVERY_RESTART_MS 1000
#define STG_DAEMON_RECLAIM_PAGES 1024

typedef struct _StgDaemon StgDaemon;

/* Opens the store, recovers, and starts serving. */
StgDaemon *stg_daemon_start (const StgDaemonSettings *settings, GError **error);

/* Stops accepting, closes connections, closes the store, frees. */
void stg_daemon_stop (StgDaemon *daemon);

G_END_DECLS
