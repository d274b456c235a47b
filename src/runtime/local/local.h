/* local.h: the local process runtime, Stagger's embedded default.
 *
 * StgLocalRuntime runs each instance as a process on this host (see
 * runtime.h for the contract it keeps): its own session and process group, a
 * sandbox folder with its output, stable named ports, health checks, hooks
 * around updates, restarts with back-off, hot upgrades that hand listening
 * sockets from the old version to the new, and adoption of instances that
 * outlived a previous staggerd. This machine is its one host: an instance
 * whose constraints it does not meet waits PENDING, saying why in Aurora's
 * words. Main-loop thread only.
 */
#pragma once

#include "common/clock.h"
#include "runtime/health.h"
#include "spawn/identity.h"
#include "runtime/runtime.h"
#include "store/store.h"

G_BEGIN_DECLS

typedef struct _StgLocalRuntime StgLocalRuntime;

typedef struct
{
  gchar *data_dir;           /* sandboxes go under data_dir/sandboxes */
  gchar *cluster;            /* for {{cluster}} */
  gchar *bind;               /* address for health checks and hot-upgrade sockets */
  gint port_min;             /* named ports come from port_min..port_max */
  gint port_max;
  gint max_ports_per_role;   /* ports one role's jobs may keep; 0: half the range */
  guint max_concurrent_starts; /* runs starting (not yet healthy) at once; 0: the default, 100 */
  guint keep_runs;           /* sandbox folders kept per instance */
  gsize log_limit;           /* bytes kept per output file */
  GHashTable *role_users;    /* (nullable) role -> StgIdentity*: who runs its instances */
  StgIdentity *default_user; /* (nullable) for the other roles; NULL: staggerd's own user */
  StgHealthCounts *health_counts; /* (nullable) borrowed: where health checks are counted */
  gchar *thermos_runner;          /* stagger-thermos, which runs AuroraExecutor tasks */
  gchar **announcer_args;         /* (nullable) stagger-thermos's --announcer-* flags: a task
                                   * with an announce section is told by SIGUSR1 once healthy */
  gboolean zk_allow_custom;       /* announce.zk_path honoured (the runners are told so in
                                   * @announcer_args); else a task naming one is refused */
  GHashTable *attributes;         /* (nullable) name -> value: this host's attributes, which
                                   * constraints are judged against ("host" is its name) */
  guint disk_interval_ms;         /* how often the sandboxes of tasks that reserve disk are
                                   * measured; 0: STG_LOCAL_DISK_INTERVAL_MS */
  gchar *cgroup_parent;           /* (nullable) the control group runs' groups go in; NULL:
                                   * "stagger" in staggerd's own (local_limits.c) */
  gboolean cpu_share;             /* numCpus as a CPU weight rather than a quota */
  gint64 max_pids;                /* processes and threads per run; 0: not limited */
} StgLocalOptions;

/* Thermos's disk collection interval: 60 s. */
#define STG_LOCAL_DISK_INTERVAL_MS 60000

void stg_local_options_init (StgLocalOptions *options);
void stg_local_options_clear (StgLocalOptions *options);

/* A local runtime over @store and @clock (borrowed). */
StgRuntime *stg_local_runtime_new (StgStore *store, StgClock *clock, const StgLocalOptions *options,
                                   GError **error);

/* Takes over the instances the store knows: adopts processes that are
 * still running (by pid and start time), reports those that died while no
 * daemon watched, and starts those that should run but do not. Call once,
 * before the engine recovers. */
gboolean stg_local_runtime_adopt (StgRuntime *rt, GError **error);

/* The pid of a slot's serving process, or 0 (for tests and displays). */
GPid stg_local_runtime_pid (StgRuntime *rt, gint64 job_id, gint32 instance);

G_END_DECLS
