/* settings.h: staggerd's settings: defaults, the config file, copies.
 *
 * Every key of the config file is one entry of the table in settings.c
 * (its group, key, type, default, the field it goes to, and what it
 * means); one loop reads them. main() starts from the defaults, reads the
 * --config file over them, then the command line. Main thread, at
 * start-up.
 */
#pragma once

#include <glib.h>

#include "runtime/place.h"
#include "senders/notify.h"

G_BEGIN_DECLS

/* Bytes unfinished requests may hold on both ports together (at least
 * one largest frame and the reserve), and the last of them kept for small
 * messages (see api/body_buffer.h). One client address may hold one
 * largest frame unless max_buffered_per_address says otherwise. */
#define STG_DAEMON_BUFFERED_MAX (48 * 1024 * 1024)
#define STG_DAEMON_BUFFERED_RESERVE (1024 * 1024)

typedef struct
{
  gchar *data_dir;     /* default $STATE_DIRECTORY, else STG_DATA_DIR */
  gchar *bind;         /* default 127.0.0.1 */
  gint http_port;      /* default 8081; 0: any free port */
  gint thrift_port;    /* default 8082; 0: any free port */
  gchar *cluster;      /* default "local" */
  gint64 max_frame;    /* bytes; default 16 MiB */
  gint idle_timeout_s; /* TCP idle timeout; default 300 */
  gchar *ready_file;   /* (nullable) JSON with pid and ports, written once serving */
  gchar *webui_dir;    /* (nullable) serve the web UI's files from here */
  gint port_min;       /* instances' named ports come from port_min..port_max */
  gint port_max;
  gchar *runtime;        /* "local" (default), "simulated" or "fleet" */
  StgFleetOptions fleet; /* the fleet runtime's [host NAME] groups and [fleet] */
  gchar *tls_cert;       /* (nullable) PEM files: serve HTTPS */
  gchar *tls_key;
  GHashTable *users; /* (nullable) [users]: name -> "HASH ROLE..." */
  gboolean read_requires_auth;
  gboolean tcp_trusted;        /* with users: TCP may change jobs too */
  gint max_instances;          /* per job; 0: the runtime's default (local 1000, others 100000) */
  gint64 max_update_failures;  /* Aurora's -max_update_instance_failures; 0: 5 x max_instances */
  gchar *store;                /* (nullable) PostgreSQL URL or conninfo; NULL: SQLite in data_dir */
  gboolean sqlite_normal_sync; /* [store] sqlite_synchronous = normal */
  gchar *advertise_url;    /* (nullable) where followers send clients; default http://BIND:PORT */
  gint lease_ms;           /* PostgreSQL: a silent leader loses the lead after this; default 5000 */
  gint forget_replicas_s;  /* PostgreSQL: a replica not seen this long is forgotten; default 3600 */
  gchar **http_names;      /* (nullable) Host names served besides IPs and localhost */
  gchar **allowed_origins; /* (nullable) web origins besides our own that may call /api */
  gint tcp_backlog;        /* TCP listen queue; default 4096 (capped by somaxconn) */
  gint max_connections;    /* per port; default 4096 */
  gint max_per_address;    /* connections per port from one address; default 1024 */
  gint64 max_buffered;     /* bytes unfinished requests hold, both ports; default 48 MiB */
  gint64 max_buffered_per_address; /* ... from one address; 0 (default): max_frame */
  gint64 buffered_reserve;         /* ... the last of them for small messages; default 1 MiB */
  gint keep_updates;       /* finished updates kept per job; default 100; 0: all */
  gint keep_events_days;   /* days of task and instance events kept; default 30; 0: all */
  GHashTable *role_users;  /* (nullable) [roles]: role -> the user its instances run as */
  gchar *instance_user;    /* (nullable) the other roles' user when root; default nobody */
  gboolean allow_root_instances; /* instances may run as root */
  gint max_ports_per_role;       /* local runtime: ports one role may keep; 0: half the range */
  gint max_concurrent_starts;    /* local runtime: instances starting at once; 0: 100 */
  gint disk_interval_s;          /* local runtime: how often sandboxes are measured; default 60 */
  gchar *cgroup_parent;          /* (nullable) local runtime: where instances' groups go */
  gboolean cpu_share;            /* local runtime: numCpus as a weight, not a CFS quota */
  gint64 max_pids;               /* local runtime: processes per instance; default 4096, 0: none */
  GHashTable *host_attributes;   /* (nullable) local runtime: this host's attributes, name ->
                                    value, for constraints */
  gchar **gate_hosts;            /* (nullable) [gates] allowed_hosts: where HTTP gates may go,
                                    and webhooks */
  StgNotifyOptions notify;       /* [notify] and [notify NAME]: webhooks */
  gchar *tier_config;            /* (nullable) a tiers file as Aurora's -tier_config; NULL:
                                    Aurora's default tiers */
  gchar *thermos_runner;         /* stagger-thermos */
  gchar *thermos_bundle;         /* fleet: stagger-thermos's bundle, on every host */
  gchar *anchor;                 /* fleet: stagger-anchor, the pods' anchor */
  gint backup_interval_s;        /* [backup] interval_secs: SQLite backups; 0: none; default 3600 */
  gint backup_keep;              /* [backup] keep: backups kept; default 48 */
  gint sla_min_instances;        /* [sla] min_required_instances; default 20 */
  gint64 sla_max_duration_s;     /* [sla] max_duration_secs; default 7200 */
  gboolean sla_non_production;   /* [sla] non_production */
  gint sla_coordinator_timeout_s; /* [sla] coordinator_timeout_secs; default 60 */
  gint sla_retry_min_s;           /* [sla] retry_min_secs; default 60 */
  gint sla_retry_max_s;           /* [sla] retry_max_secs; default 300 */
  gint maintenance_poll_s;        /* [maintenance] polling_interval_secs; default 60 */
  gchar *zk_ensemble;             /* [zookeeper] ensemble: NULL, nothing is announced */
  gint zk_session_timeout_ms;     /* [zookeeper] session_timeout_ms; default 10000 */
  gchar *zk_serverset_path;       /* [zookeeper] serverset_path; default /aurora */
  gboolean zk_allow_custom;       /* [zookeeper] allow_custom_serverset_path */
  gchar *zk_auth_config;          /* [zookeeper] auth_config: Aurora's ZooKeeper auth file */
  gchar *zk_scheduler_path;       /* [zookeeper] scheduler_path: the leader's ServerSet */
  gchar *zk_hostname;             /* [zookeeper] hostname: what endpoints name; default ours */
} StgDaemonSettings;

/* Fills @settings with the defaults. */
void stg_daemon_settings_init (StgDaemonSettings *settings);
void stg_daemon_settings_clear (StgDaemonSettings *settings);

/* Makes @to a deep copy of @from. */
void stg_daemon_settings_copy (StgDaemonSettings *to, const StgDaemonSettings *from);

/* Parses "MIN-MAX" into the port range of @settings. */
gboolean stg_daemon_settings_port_range (StgDaemonSettings *settings, const gchar *text,
                                         GError **error);

/* Checks and sets the runtime's name ("local", "simulated" or "fleet"). */
gboolean stg_daemon_settings_runtime (StgDaemonSettings *settings, const gchar *name,
                                      GError **error);

/* Reads the config file at @path into @settings (only keys present);
 * refuses unknown keys of [staggerd] and bad values, naming the file and
 * the key. */
gboolean stg_daemon_settings_load (StgDaemonSettings *settings, const gchar *path, GError **error);

G_END_DECLS
