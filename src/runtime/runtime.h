/* runtime.h: the runtime seam: what the engine asks of whatever runs tasks.
 *
 * A runtime keeps each instance slot (job id, instance id) running the
 * configuration the store says it should (instances.config_id), and reports
 * what it sees. It is deliberately narrow and free of local-process
 * assumptions, so another runtime (a bridge to a cluster manager) fits the
 * same interface. Implementations: the local process runtime (local.c), and
 * scripted/bench runtimes in tests and bench/.
 *
 * Contract:
 *  - apply(): make the slot run @config_id: start it if nothing runs, replace
 *    what runs if it is another config, start it again now if it runs
 *    @config_id but has exited or failed. Nothing if it already runs
 *    @config_id and is live. The caller has already stored the intent.
 *  - kill(): stop the slot's task; once it is gone, the runtime removes the
 *    slot's instance row and reports the slot ABSENT.
 *  - restart(): stop the slot's task and start the same config again.
 *  - observe(): what the slot looks like now; never blocks.
 *  - Every change a caller could observe is announced through the listener,
 *    on the main loop, never from inside apply/kill/restart.
 *  - failures counts failed runs of the slot: a service's exit of any status,
 *    another task's non-zero exit, a failed health check, a failed hook,
 *    a process that could not start. It only grows while the slot exists.
 * Main-loop thread only.
 */
#pragma once

#include <glib.h>

#include "common/thrift_glue.h"

G_BEGIN_DECLS

#define STG_RUNTIME_ERROR (stg_runtime_error_quark ())
GQuark stg_runtime_error_quark (void);
typedef enum
{
  STG_RUNTIME_ERROR_FAILED,
  STG_RUNTIME_ERROR_INVALID,     /* the config cannot run here */
  STG_RUNTIME_ERROR_NOT_FOUND,   /* no such slot */
} StgRuntimeError;

typedef enum
{
  STG_TASK_ABSENT,     /* nothing in the slot */
  STG_TASK_PENDING,    /* wanted, not started yet (e.g. waiting out a back-off) */
  STG_TASK_STARTING,   /* started, not yet healthy */
  STG_TASK_RUNNING,    /* running and healthy */
  STG_TASK_KILLING,    /* being stopped */
  STG_TASK_FAILED,     /* exited or unhealthy; waits to be started again */
  STG_TASK_FINISHED,   /* exited with status 0 and will not be restarted */
} StgTaskPhase;

/* One instance slot: (job row id, instance id). The one key type for
 * slots everywhere (hash tables, queues, news); hash and compare it with
 * stg_slot_key_hash/stg_slot_key_equal. */
typedef struct
{
  gint64 job_id;
  gint32 instance;
} StgSlotKey;

/* GHashFunc/GEqualFunc for StgSlotKey pointers. */
guint stg_slot_key_hash (gconstpointer key);
gboolean stg_slot_key_equal (gconstpointer a, gconstpointer b);
/* A newly allocated copy of (job_id, instance), freed with g_free. */
StgSlotKey *stg_slot_key_new (gint64 job_id, gint32 instance);

typedef struct
{
  StgTaskPhase phase;
  gint64 config_id;          /* the config of what runs or starts; 0 when ABSENT */
  gint64 healthy_since_ms;   /* RUNNING: when it last became healthy */
  gint64 phase_since_ms;     /* when the phase last changed */
  guint32 failures;          /* failed runs of this slot so far */
  gint32 status;             /* ScheduleStatus, for display */
  /* Why the slot's last run failed, in words (a health check's answer, an
   * exit status, a start error, the last lines of stderr), or NULL.
   * Owned by the runtime; valid until the next call into it. */
  const gchar *cause;
  gint64 cause_ms; /* when the cause was given; 0 without one */
} StgTaskObservation;

/* What an instance's current run uses and what its task reserves, as
 * Aurora's observer shows them. A figure not measured is -1; a resource
 * not reserved is 0. */
typedef struct
{
  gdouble cpus_used;    /* cores, over the last second or more (since the run began at first) */
  gint64 memory;        /* bytes of memory in use, page cache included (what the limit counts) */
  gint64 rss;           /* bytes of anonymous memory */
  gint64 disk;          /* bytes in its sandbox when last sampled */
  gint64 throttled_ms;  /* time its CPU quota has held it back */
  gint64 oom_kills;     /* its processes the memory limit killed */
  gdouble cpus;         /* reserved: cores */
  gint64 ram;           /* reserved: bytes of RAM */
  gint64 disk_reserved; /* reserved: bytes of disk */
} StgInstanceUsage;

/* Nothing measured, nothing reserved. */
#define STG_INSTANCE_USAGE_UNKNOWN \
  ((StgInstanceUsage){ \
      .cpus_used = -1, .memory = -1, .rss = -1, .disk = -1, .throttled_ms = -1, .oom_kills = -1 })

/* An instance announced in Aurora's ServerSet by its runner (the local
 * runtime's AuroraExecutor tasks), as the runner's state file says. */
typedef struct
{
  gchar *path;     /* the ServerSet */
  gchar *member;   /* (nullable) its member node, while it is one */
  gchar *endpoint; /* (nullable) "host:port": the member's serviceEndpoint */
  gchar *problem;  /* (nullable) why it is not a member while it should be */
} StgAnnouncement;

void stg_announcement_clear (StgAnnouncement *a);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (StgAnnouncement, stg_announcement_clear)

/* Which output of an instance a read_log call reads, and how much. */
typedef struct
{
  gboolean err;         /* stderr, else stdout */
  gint64 offset;        /* from this byte; negative: that many bytes before the end */
  gsize max;            /* at most this many bytes */
  const gchar *process; /* (nullable) an AuroraExecutor task's process: its own output
                           (.logs/PROCESS/RUN/ in the run's sandbox); NULL: the instance's */
  gint run;             /* with @process: its run (Thermos's, from 0); -1: its newest */
} StgLogQuery;

/* What a read_log call tells besides the bytes. */
typedef struct
{
  gint64 next;       /* the offset after the bytes */
  gint64 size;       /* the file's size now */
  gint run;          /* with a process: the run read; else -1 */
  gchar **processes; /* (nullable) an AuroraExecutor task's processes, in its order (owned) */
} StgLogInfo;

void stg_log_info_clear (StgLogInfo *info);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (StgLogInfo, stg_log_info_clear)

/* One container slot of a sidecar in a pod. */
typedef struct
{
  gchar *name;         /* NAME, or NAME-1 and NAME-2 of a hot sidecar */
  gint version;        /* what it runs; 0: the empty image */
  gchar *container_id; /* (nullable) */
  gboolean serving;
} StgSidecarSlotInfo;

/* One sidecar of one instance's pod, as the runtime sees it. */
typedef struct
{
  gint64 job_id;
  gint32 instance;
  gchar *job;         /* role/environment/name */
  gchar *host;        /* (nullable) */
  gint version;       /* the version serving; 0: none */
  gint want;          /* the version asked for */
  StgTaskPhase phase; /* RUNNING: @want serves and is healthy; STARTING: on its way;
                               FAILED: its last start failed, tried again after a back-off */
  guint32 failures;   /* failed starts of @want */
  gchar *cause;       /* (nullable) why it is not RUNNING, or its last failure */
  StgSidecarSlotInfo slots[2];
  guint n_slots; /* 1, or 2 for a hot sidecar */
} StgSidecarObservation;

/* Frees what @o holds (a GArray's clear function). */
void stg_sidecar_observation_clear (gpointer o);

typedef struct _StgRuntime StgRuntime;

/* Called when a slot's observation may have changed. */
typedef void (*StgRuntimeListener) (gpointer user_data, gint64 job_id, gint32 instance_id);

typedef struct
{
  gboolean (*apply) (StgRuntime *rt, gint64 job_id, gint32 instance_id, gint64 config_id,
                     GError **error);
  gboolean (*kill) (StgRuntime *rt, gint64 job_id, gint32 instance_id, GError **error);
  gboolean (*restart) (StgRuntime *rt, gint64 job_id, gint32 instance_id, GError **error);
  void (*observe) (StgRuntime *rt, gint64 job_id, gint32 instance_id, StgTaskObservation *out);
  /* Checks that @config can run here (its executor, data, ports). */
  gboolean (*validate) (StgRuntime *rt, const ApiTaskConfig *config, GError **error);
  void (*free) (StgRuntime *rt);
  /* (nullable) Up to @query->max bytes of the instance's current run's
   * output @query names, from its byte @query->offset; fills @info (zeroed
   * by the caller). */
  GBytes *(*read_log) (StgRuntime *rt, gint64 job_id, gint32 instance_id, const StgLogQuery *query,
                       StgLogInfo *info, GError **error);
  /* (nullable: nothing measured) What the instance's current run uses;
   * FALSE when nothing runs or nothing of it can be measured. */
  gboolean (*usage) (StgRuntime *rt, gint64 job_id, gint32 instance_id, StgInstanceUsage *out);
  /* (nullable: nothing announced) Where the instance's current run is
   * announced; FALSE when it announces nothing. */
  gboolean (*announcement) (StgRuntime *rt, gint64 job_id, gint32 instance_id,
                            StgAnnouncement *out);
  /* (nullable) The hosts instances run on (element-type ApiFleetHostStatus),
   * for a runtime of several hosts. */
  GPtrArray *(*hosts) (StgRuntime *rt);
  /* (nullable) @drain: places nothing new on host @name, and instances
   * that start again (restarted, replaced, failed) start elsewhere (the
   * fleet runtime, which keeps it across restarts) or wait until the host
   * opens again (the local runtime, whose one host is this machine by its
   * name; the caller says it again after a restart). !@drain: places
   * there again. */
  gboolean (*drain_host) (StgRuntime *rt, const gchar *name, gboolean drain, GError **error);
  /* (nullable: no hosts to move between) Which of @instances (ascending)
   * of job @job_id an update to @config would move off their hosts
   * (element-type ApiInstanceMove): those whose host breaks @config's
   * constraints, counting the job's other instances there, judged one by
   * one in that order as the update's starts judge them. */
  GPtrArray *(*moves) (StgRuntime *rt, gint64 job_id, const ApiTaskConfig *config,
                       const GArray *instances);
  /* (nullable) Compares what runs with the store now. !@implicit: each
   * slot's process or container is looked for; one that is gone has
   * ended (its slot hears of it as of any end). @implicit: what runs with
   * this runtime's mark but no slot expects is stopped. @tasks (nullable;
   * StgSlotKey* set, !@implicit only) limits it to those slots: one batch
   * of an explicit reconciliation. *@summary says what was found or is
   * under way, in words. */
  gboolean (*reconcile) (StgRuntime *rt, gboolean implicit, GHashTable *tasks, gchar **summary,
                         GError **error);
  /* (nullable: no sidecars here) Checks that @sidecar (of the set named
   * @name) can run beside instances, and can follow @previous (nullable:
   * the set's version before it) in the pods that carry it. */
  gboolean (*sidecar_validate) (StgRuntime *rt, const gchar *name, const ApiSidecar *sidecar,
                                const ApiSidecar *previous, GError **error);
  /* The instances whose pods carry sidecar @name (element-type
   * StgSidecarObservation), by job key, then instance. */
  GArray *(*sidecars) (StgRuntime *rt, const gchar *name);
  /* Asks sidecar @name of the instance's pod to run @version (its
   * Sidecar is in the store), or, @version 0, to leave the pod; recorded
   * before anything is done. STG_RUNTIME_ERROR_NOT_FOUND when the pod does
   * not carry it. */
  gboolean (*sidecar_apply) (StgRuntime *rt, gint64 job_id, gint32 instance, const gchar *name,
                             gint version, GError **error);
} StgRuntimeOps;

/* The most one read_log call returns. */
#define STG_RUNTIME_LOG_MAX (64 * 1024)

/* Every runtime starts with this header (zeroed by the implementation). */
struct _StgRuntime
{
  const StgRuntimeOps *ops;
  StgRuntimeListener listener;
  gpointer listener_data;
  GHashTable *later;         /* slots to announce from an idle callback */
  guint later_idle;
};

static inline gboolean
stg_runtime_apply (StgRuntime *rt, gint64 job_id, gint32 instance_id, gint64 config_id,
                   GError **error)
{
  return rt->ops->apply (rt, job_id, instance_id, config_id, error);
}

static inline gboolean
stg_runtime_kill (StgRuntime *rt, gint64 job_id, gint32 instance_id, GError **error)
{
  return rt->ops->kill (rt, job_id, instance_id, error);
}

static inline gboolean
stg_runtime_restart (StgRuntime *rt, gint64 job_id, gint32 instance_id, GError **error)
{
  return rt->ops->restart (rt, job_id, instance_id, error);
}

static inline void
stg_runtime_observe (StgRuntime *rt, gint64 job_id, gint32 instance_id, StgTaskObservation *out)
{
  rt->ops->observe (rt, job_id, instance_id, out);
}

/* The instance's output (see StgRuntimeOps.read_log); @query->max is
 * capped at STG_RUNTIME_LOG_MAX and @info zeroed first.
 * STG_RUNTIME_ERROR_INVALID when this runtime keeps no output. */
GBytes *stg_runtime_read_log (StgRuntime *rt, gint64 job_id, gint32 instance_id,
                              const StgLogQuery *query, StgLogInfo *info, GError **error);

/* What the instance uses now (see StgRuntimeOps.usage); FALSE, with every
 * figure -1 and nothing reserved, when this runtime measures nothing. */
gboolean stg_runtime_usage (StgRuntime *rt, gint64 job_id, gint32 instance_id,
                            StgInstanceUsage *out);

/* Where the instance is announced (see StgRuntimeOps.announcement); FALSE,
 * @out cleared, when it announces nothing. */
gboolean stg_runtime_announcement (StgRuntime *rt, gint64 job_id, gint32 instance_id,
                                   StgAnnouncement *out);

/* The runtime's hosts (element-type ApiFleetHostStatus);
 * STG_RUNTIME_ERROR_INVALID when it has none (only the fleet runtime has). */
GPtrArray *stg_runtime_hosts (StgRuntime *rt, GError **error);

/* See StgRuntimeOps.moves (@instances: gint32, ascending); an empty
 * array from a runtime without it. */
GPtrArray *stg_runtime_moves (StgRuntime *rt, gint64 job_id, const ApiTaskConfig *config,
                              const GArray *instances);

/* See StgRuntimeOps.drain_host; STG_RUNTIME_ERROR_NOT_FOUND for an
 * unknown host, _INVALID when the runtime has no hosts to drain. */
gboolean stg_runtime_drain_host (StgRuntime *rt, const gchar *name, gboolean drain, GError **error);

/* See StgRuntimeOps.sidecar_validate, .sidecars and .sidecar_apply;
 * STG_RUNTIME_ERROR_INVALID when the runtime runs no sidecars (only the
 * fleet runtime does). */
gboolean stg_runtime_sidecar_validate (StgRuntime *rt, const gchar *name, const ApiSidecar *sidecar,
                                       const ApiSidecar *previous, GError **error);
GArray *stg_runtime_sidecars (StgRuntime *rt, const gchar *name, GError **error);
gboolean stg_runtime_sidecar_apply (StgRuntime *rt, gint64 job_id, gint32 instance,
                                    const gchar *name, gint version, GError **error);

/* See StgRuntimeOps.reconcile; a runtime without it runs nothing outside
 * the store, and says so. */
gboolean stg_runtime_reconcile (StgRuntime *rt, gboolean implicit, GHashTable *tasks,
                                gchar **summary, GError **error);

static inline gboolean
stg_runtime_validate (StgRuntime *rt, const ApiTaskConfig *config, GError **error)
{
  return rt->ops->validate == NULL || rt->ops->validate (rt, config, error);
}

/* Sets the one listener (the engine). */
static inline void
stg_runtime_set_listener (StgRuntime *rt, StgRuntimeListener listener, gpointer user_data)
{
  rt->listener = listener;
  rt->listener_data = user_data;
}

/* For implementations: tell the listener about a slot. */
static inline void
stg_runtime_notify (StgRuntime *rt, gint64 job_id, gint32 instance_id)
{
  if (rt->listener != NULL)
    rt->listener (rt->listener_data, job_id, instance_id);
}

/* For implementations: tell the listener about a slot from an idle
 * callback (once, however often it changed meanwhile). */
void stg_runtime_notify_later (StgRuntime *rt, gint64 job_id, gint32 instance_id);

void stg_runtime_free (StgRuntime *rt);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgRuntime, stg_runtime_free)

/* A short name for a phase ("running", ...). */
const gchar *stg_task_phase_name (StgTaskPhase phase);

G_END_DECLS
