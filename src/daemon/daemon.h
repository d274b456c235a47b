/* daemon.h: staggerd's settings and the wiring of its parts.
 *
 * StgDaemon owns everything the daemon runs: the store, clock, runtime,
 * engine, handler, dispatcher and the TCP and HTTP servers. main() fills
 * StgDaemonSettings (defaults, then the config file, then the command line),
 * starts a daemon and runs the main loop until a signal stops it.
 * Main-loop thread only.
 */
#pragma once

#include <glib.h>

#include "runtime/fleet_hosts.h"

G_BEGIN_DECLS

/* Bytes unfinished requests may hold on both ports together (at least
 * one largest frame). */
#define STG_DAEMON_BUFFERED_MAX (48 * 1024 * 1024)

/* Retention runs this often, deleting at most STG_DAEMON_PRUNE_ROWS rows of
 * each kind and handing back at most STG_DAEMON_RECLAIM_PAGES pages. */
#define STG_DAEMON_PRUNE_S 60
#define STG_DAEMON_PRUNE_ROWS 1000
#define STG_DAEMON_RECLAIM_PAGES 1024

typedef struct
{
  gchar *data_dir;          /* default ./var */
  gchar *bind;              /* default 127.0.0.1 */
  gint http_port;           /* default 8081; 0: any free port */
  gint thrift_port;         /* default 8082; 0: any free port */
  gchar *cluster;           /* default "local" */
  gint64 max_frame;         /* bytes; default 16 MiB */
  gint idle_timeout_s;      /* TCP idle timeout; default 300 */
  gchar *ready_file;        /* (nullable) JSON with pid and ports, written once serving */
  gchar *webui_dir;         /* (nullable) serve the web UI's files from here */
  gint port_min;            /* instances' named ports come from port_min..port_max */
  gint port_max;
  gchar *runtime;           /* "local" (default), "simulated" or "fleet" */
  StgFleetOptions fleet;    /* the fleet runtime's [host NAME] groups and [fleet] */
  gchar *tls_cert;          /* (nullable) PEM files: serve HTTPS */
  gchar *tls_key;
  GHashTable *users;        /* (nullable) [users]: name -> "HASH ROLE..." */
  gboolean read_requires_auth;
  gboolean tcp_trusted;     /* with users: TCP may change jobs too */
  gint max_instances;       /* per job; 0: the runtime's default (local 1000, others 100000) */
  gchar *store;             /* (nullable) PostgreSQL URL or conninfo; NULL: SQLite in data_dir */
  gboolean sqlite_normal_sync; /* [store] sqlite_synchronous = normal */
  gchar *advertise_url;     /* (nullable) where followers send clients; default http://BIND:PORT */
  gint lease_ms;            /* PostgreSQL: a silent leader loses the lead after this; default 5000 */
  gchar **http_names;       /* (nullable) Host names served besides IPs and localhost */
  gchar **allowed_origins;  /* (nullable) web origins besides our own that may call /api */
  gint tcp_backlog;         /* TCP listen queue; default 4096 (capped by somaxconn) */
  gint max_connections;     /* per port; default 4096 */
  gint max_per_address;     /* connections per port from one address; default 1024 */
  gint keep_updates;        /* finished updates kept per job; default 100; 0: all */
  gint keep_events_days;    /* days of task and instance events kept; default 30; 0: all */
  GHashTable *role_users;   /* (nullable) [roles]: role -> the user its instances run as */
  gchar *instance_user;     /* (nullable) the other roles' user when root; default nobody */
  gboolean allow_root_instances; /* instances may run as root */
  gint max_ports_per_role;       /* local runtime: ports one role may keep; 0: half the range */
  gint max_concurrent_starts;    /* local runtime: instances starting at once; 0: 100 */
  gchar *tier_config;            /* (nullable) a tiers file as Aurora's -tier_config; NULL:
                                    Aurora's default tiers */
} StgDaemonSettings;

void stg_daemon_settings_init (StgDaemonSettings *settings);
void stg_daemon_settings_clear (StgDaemonSettings *settings);

/* Parses "MIN-MAX" into the port range of @settings. */
gboolean stg_daemon_settings_port_range (StgDaemonSettings *settings, const gchar *text,
                                         GError **error);

/* Checks and sets the runtime's name ("local", "simulated" or "fleet"). */
gboolean stg_daemon_settings_runtime (StgDaemonSettings *settings, const gchar *name,
                                      GError **error);

/* Reads [staggerd] keys of a GKeyFile into @settings (only keys present). */
gboolean stg_daemon_settings_load (StgDaemonSettings *settings, const gchar *path, GError **error);

typedef struct _StgDaemon StgDaemon;

/* Opens the store, recovers, and starts serving. */
StgDaemon *stg_daemon_start (const StgDaemonSettings *settings, GError **error);

/* Stops accepting, closes connections, closes the store, frees. */
void stg_daemon_stop (StgDaemon *daemon);

G_END_DECLS
