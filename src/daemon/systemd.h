/* systemd.h: what staggerd takes from systemd when it runs as a service:
 * the data directory from $STATE_DIRECTORY (StateDirectory=) and readiness
 * told over $NOTIFY_SOCKET (Type=notify), both without libsystemd. Plain
 * functions; the main thread.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The data directory when none is given: the first of $STATE_DIRECTORY
 * (set by systemd for StateDirectory=), else the one configure chose
 * (STG_DATA_DIR, $localstatedir/lib/stagger), never one relative to the
 * working directory. */
gchar *stg_systemd_default_data_dir (void);

/* Sends @state (e.g. "READY=1") as one datagram to $NOTIFY_SOCKET, as
 * sd_notify(3) does; TRUE and nothing sent when the variable is not set. */
gboolean stg_systemd_notify (const gchar *state, GError **error);

G_END_DECLS
