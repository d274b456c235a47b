/* store.h: Stagger's persistence: SQLite behind a small API.
 *
 * StgStore owns one SQLite connection (WAL, synchronous=FULL, foreign keys,
 * busy timeout) and the migrations in schema/. No SQL lives outside
 * src/store/. Calls outside a transaction commit on their own; a caller that
 * needs several writes to land together brackets them with
 * stg_store_begin()/stg_store_commit() (nestable: inner levels are
 * savepoints, and only the outermost commit reaches the disk).
 * Main-loop thread only.
 */
#pragma once

#include <glib.h>

#include "common/ranges.h"
#include "common/thrift_glue.h"

G_BEGIN_DECLS

#define STG_STORE_ERROR (stg_store_error_quark ())
GQuark stg_store_error_quark (void);

typedef enum
{
  STG_STORE_ERROR_FAILED, /* SQLite said no */
  STG_STORE_ERROR_NEWER,  /* database written by a newer Stagger */
  STG_STORE_ERROR_EXISTS, /* unique row already there */
  STG_STORE_ERROR_NOT_FOUND,
  STG_STORE_ERROR_CORRUPT,     /* a stored blob does not decode */
  STG_STORE_ERROR_INJECTED,    /* a fault injected by a test */
  STG_STORE_ERROR_FENCED,      /* another replica leads now: this one may not write */
  STG_STORE_ERROR_UNSUPPORTED, /* not on this database (backups on PostgreSQL) */
  STG_STORE_ERROR_INVALID,     /* a request the store refuses (the message says why) */
} StgStoreError;

typedef struct _StgStore StgStore;

/* ---- opening, transactions -------------------------------------------- */

/* Opens (creating if needed) the database at @path (":memory:" works) and
 * applies pending migrations, each in its own transaction. @path may also
 * be a PostgreSQL URL (postgresql://...) or libpq conninfo (host=...). */
StgStore *stg_store_open (const gchar *path, GError **error);

/* As stg_store_open for a store that replicas share: a PostgreSQL database
 * is not migrated here, nor refused when its schema is newer; the replica
 * that wins the lead migrates it (stg_store_try_lead). SQLite (one
 * process, always the leader) is migrated at once. */
StgStore *stg_store_open_shared (const gchar *path, GError **error);

/* As stg_store_open, migrating only up to schema @version: a store as an
 * older release left it (tests of the migrations: tests/store_at). */
StgStore *stg_store_open_at (const gchar *path, gint version, GError **error);

/* SQLite only: commits stop waiting for the disk (synchronous=NORMAL in
 * WAL mode): a commit survives the daemon's crash but may be lost, never
 * half-written, when the machine loses power. The default waits (FULL). */
gboolean stg_store_sqlite_relax_sync (StgStore *store, GError **error);

/* ---- leadership (replicas on one PostgreSQL database) ------------------ */

/* Who leads, as the stagger_leader row says. */
typedef struct
{
  gint64 epoch;             /* 0: nobody ever led */
  gchar *holder;            /* the leader's name (host:pid) */
  gchar *url;               /* its advertised URL */
  gint64 since_ms;          /* when it took over */
} StgLeaderInfo;
void stg_leader_info_clear (StgLeaderInfo *info);

/* Tries once to become the leader: on PostgreSQL, takes the session
 * advisory lock without waiting; on SQLite (one process) always succeeds.
 * Taking it increments the epoch and records @holder and @url; from then on
 * every transaction checks the epoch (STG_STORE_ERROR_FENCED when another
 * replica has taken over). On PostgreSQL the server ends this session
 * when it stays idle for @lease_ms (a paused replica), which frees the
 * lock for another: the leader pings more often. With the lock, and before
 * the epoch moves, it applies the pending migrations; a schema newer than
 * this build knows frees the lock again and fails with
 * STG_STORE_ERROR_NEWER, having written nothing. Returns FALSE without
 * @error when another replica holds the lock, FALSE with @error when the
 * database failed or the schema is newer. */
gboolean stg_store_try_lead (StgStore *store, const gchar *holder, const gchar *url,
                             guint lease_ms, gint64 now_ms, gint64 *epoch, GError **error);

/* The epoch this store leads under, or 0. */
gint64 stg_store_epoch (StgStore *store);

/* How long this replica may still act on the outside world, in ms: on
 * SQLite, always (G_MAXINT64); on PostgreSQL, while it leads, until half
 * a lease after the last query that found its epoch was sent (taking the
 * lock, a transaction's fencing check, stg_store_leader); the server's
 * idle timeout (the whole lease) keeps its lock at least that long. 0
 * when that time is over or it does not lead. */
gint64 stg_store_lead_left_ms (StgStore *store);
/* How long one proof lasts: half the lease (G_MAXINT64 on SQLite; 0 on
 * PostgreSQL before this replica first led). */
gint64 stg_store_lead_acting_ms (StgStore *store);

/* Reads the stagger_leader row (finding our epoch there proves the lead). */
gboolean stg_store_leader (StgStore *store, StgLeaderInfo *info, GError **error);

/* A round trip to the database, so a lost connection is noticed (and, on
 * PostgreSQL, so the server's idle timeout does not end a live session). */
gboolean stg_store_ping (StgStore *store, GError **error);

/* Connects again after the connection failed (PostgreSQL restarted, the
 * network came back); any leadership is gone. Only outside transactions. */
gboolean stg_store_reconnect (StgStore *store, GError **error);

/* One replica on this database, as it last said it was alive. */
typedef struct
{
  gchar *holder; /* host:pid */
  gchar *url;    /* advertised URL */
  gint64 lease_ms;
  gint64 started_ms;
  gint64 seen_ms;
} StgReplicaRow;
void stg_replica_row_free (StgReplicaRow *row);

/* Records that @holder (at @url, with @lease_ms, started at @started_ms)
 * is alive at @now_ms. Only outside transactions; moves no commit count. */
gboolean stg_store_replica_seen (StgStore *store, const gchar *holder, const gchar *url,
                                 gint64 lease_ms, gint64 started_ms, gint64 now_ms, GError **error);

/* The replicas, by name (element-type StgReplicaRow). */
GPtrArray *stg_store_list_replicas (StgStore *store, GError **error);

/* Forgets the replicas last seen before @before_ms; those it forgot
 * (element-type StgReplicaRow), or NULL with @error. Only outside
 * transactions; moves no commit count. */
GPtrArray *stg_store_forget_replicas (StgStore *store, gint64 before_ms, GError **error);

/* What the store is, for people: "PostgreSQL 15.9, database D on H port
 * P" or "SQLite 3.40.1, /path/stagger.db". Never a password. */
gchar *stg_store_describe (StgStore *store, GError **error);

/* TRUE when @location names a PostgreSQL database, not a SQLite file. */
gboolean stg_store_is_postgresql (const gchar *location);

/* Where the newest timeline of each PostgreSQL database system used is
 * kept (a file of "SYSTEM TIMELINE" lines), so that a restarted staggerd
 * still refuses an old primary that came back (db_pg.c); call before
 * opening a store. NULL: in memory only. */
void stg_store_remember_timelines (const gchar *path);
void stg_store_close (StgStore *store);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgStore, stg_store_close)

/* The schema version the database is at, and the newest this build knows. */
gint stg_store_schema_version (StgStore *store);
gint stg_store_latest_schema_version (void);

gboolean stg_store_begin (StgStore *store, GError **error);
gboolean stg_store_commit (StgStore *store, GError **error);
/* Undoes everything since the matching begin. Never fails. */
void stg_store_rollback (StgStore *store);
gboolean stg_store_in_transaction (StgStore *store);

/* Outermost commits so far (each is one durable write). */
guint64 stg_store_commit_count (StgStore *store);

/* Seconds spent in those commits. */
gdouble stg_store_commit_seconds (StgStore *store);

/* Rows of "updates" or "instances" (@table) by their status column:
 * status (GINT_TO_POINTER) -> count (GINT_TO_POINTER); NULL with @error. */
GHashTable *stg_store_count_by_status (StgStore *store, const gchar *table, GError **error);

/* Tests: the @n-th outermost commit from now fails (and rolls back) with
 * STG_STORE_ERROR_INJECTED; 0 turns injection off. */
void stg_store_fail_commit (StgStore *store, guint n);

/* ---- task configurations ---------------------------------------------- */

typedef struct
{
  gint64 id;
  gint version;      /* per job key: 1, 2, ... */
  gchar *hash;
} StgConfigRef;

/* Stores @config once (by canonical hash) and returns its id and version.
 * Storing an equal config again returns the same id. */
gboolean stg_store_put_config (StgStore *store, ApiTaskConfig *config,
                               gint64 *id, gint *version, GError **error);

/* The id of the stored config with canonical hash @hash, or 0. */
gint64 stg_store_find_config (StgStore *store, const gchar *hash, GError **error);

/* The config with @id (a new reference; do not modify it). */
ApiTaskConfig *stg_store_get_config (StgStore *store, gint64 id, GError **error);

/* The version number of config @id within its job (0 if unknown). */
gint stg_store_config_version (StgStore *store, gint64 id);

/* One configuration a job has had. */
typedef struct
{
  gint64 config_id;
  gint version;
  gint64 created_ms;
  ApiTaskConfig *config; /* (owned) */
  gchar *update_uid;     /* (nullable) the first update that moved the job to it */
  gchar *user;           /* (nullable) who started that update */
  gint instances_now;    /* the job's instances that should run it now */
} StgConfigVersionRow;

/* The configurations of the job @job (by key, so they outlive a killed
 * job), oldest first: a GPtrArray of StgConfigVersionRow; NULL with
 * @error. */
GPtrArray *stg_store_job_config_history (StgStore *store, const ApiJobKey *job, GError **error);

/* ---- jobs and instances ----------------------------------------------- */

typedef struct
{
  gint64 id;
  ApiJobKey *key;
  gchar *owner;
  gint64 created_ms;
  gint32 instance_count;   /* rows in instances */
} StgJobRow;

void stg_job_row_free (StgJobRow *row);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgJobRow, stg_job_row_free)

/* Creates the job with instances 0..@instance_count-1 running @config_id.
 * STG_STORE_ERROR_EXISTS when a job with that key exists. */
gboolean stg_store_create_job (StgStore *store, const ApiJobKey *key, const gchar *owner,
                               gint64 config_id, gint32 instance_count, gint64 now_ms,
                               gint64 *job_id, GError **error);

/* The job with @key, or NULL with STG_STORE_ERROR_NOT_FOUND. */
StgJobRow *stg_store_get_job (StgStore *store, const ApiJobKey *key, GError **error);

/* The job with row id @id, or NULL with STG_STORE_ERROR_NOT_FOUND. */
StgJobRow *stg_store_get_job_by_id (StgStore *store, gint64 id, GError **error);

/* Jobs, all or those of @role (nullable), sorted by key. */
GPtrArray *stg_store_list_jobs (StgStore *store, const gchar *role, GError **error);

/* Removes the job and its instance rows (update history stays). */
gboolean stg_store_delete_job (StgStore *store, gint64 job_id, GError **error);

typedef struct
{
  gint32 instance_id;
  gint64 config_id;       /* what the slot should run */
  gint64 run_config_id;   /* what actually runs (0: nothing) */
  gint32 status;          /* ScheduleStatus */
  gint64 run_id;
  gint64 pid;             /* 0: none */
  gint64 pid_start;
  gint32 failure_count;
  gint64 status_ms;
  gint64 next_run_id;     /* hot upgrade: the run starting beside run_id (0: none) */
  gint64 next_config_id;
  gint64 next_pid;
  gint64 next_pid_start;
  gint32 stop_reason;     /* why the runtime asked the run to stop (0: it did not) */
} StgInstanceRow;

typedef struct
{
  gint64 key;     /* a config id, or a ScheduleStatus */
  gint64 count;
} StgCount;

/* How many of the job's instances should run each config (GArray of
 * StgCount, by config id). */
GArray *stg_store_count_configs (StgStore *store, gint64 job_id, GError **error);

/* The config most of the job's instances should run (ties: the lower id),
 * in *@config_id; 0 when the job has no instance. */
gboolean stg_store_main_config (StgStore *store, gint64 job_id, gint64 *config_id, GError **error);

/* How many of the job's instances are in each ScheduleStatus (GArray of
 * StgCount, by status). */
GArray *stg_store_count_statuses (StgStore *store, gint64 job_id, GError **error);

/* Instance rows of a job in instance-id order (GArray of StgInstanceRow). */
GArray *stg_store_list_instances (StgStore *store, gint64 job_id, GError **error);

/* One instance row; FALSE with STG_STORE_ERROR_NOT_FOUND if absent. */
gboolean stg_store_get_instance (StgStore *store, gint64 job_id, gint32 instance_id,
                                 StgInstanceRow *row, GError **error);

/* Sets what slot @instance_id should run, creating the slot if absent. */
gboolean stg_store_set_instance_config (StgStore *store, gint64 job_id, gint32 instance_id,
                                        gint64 config_id, GError **error);

/* Records the runtime's facts about a slot (everything but config_id). */
gboolean stg_store_set_instance_facts (StgStore *store, gint64 job_id,
                                       const StgInstanceRow *row, GError **error);

gboolean stg_store_delete_instance (StgStore *store, gint64 job_id, gint32 instance_id,
                                    GError **error);

/* ---- ended tasks (ended_tasks.c) ---- */

/* Ended tasks kept per job (Aurora's history_max_per_job_threshold). */
#define STG_STORE_ENDED_PER_JOB 100

/* Whether ScheduleStatus @status is terminal (FINISHED, FAILED, KILLED,
 * LOST). */
gboolean stg_store_status_ended (gint status);

/* Deletes the instance row, keeping its task as it ends at @now_ms
 * (KILLED unless it ended already) for the task queries, as Aurora keeps
 * terminal tasks until pruned; a task that cannot be kept is logged. */
gboolean stg_store_end_instance (StgStore *store, gint64 job_id, gint32 instance_id, gint64 now_ms,
                                 GError **error);

/* The ended tasks of role @role's jobs (nullable: all), by job and
 * instance (element-type ApiScheduledTask). */
GPtrArray *stg_store_list_ended_tasks (StgStore *store, const gchar *role, GError **error);

/* Deletes the ended tasks of job @key, of instance @instance only unless
 * it is negative; adds how many to *@deleted. */
gboolean stg_store_delete_ended_tasks (StgStore *store, const ApiJobKey *key, gint32 instance,
                                       guint *deleted, GError **error);

/* Appends a TaskEvent to a slot's history. */
gboolean stg_store_add_task_event (StgStore *store, gint64 job_id, gint32 instance_id,
                                   gint64 ts_ms, gint32 status, const gchar *message,
                                   GError **error);

/* The newest @limit TaskEvents of a slot, oldest first (ApiTaskEvent*). */
GPtrArray *stg_store_list_task_events (StgStore *store, gint64 job_id, gint32 instance_id,
                                       guint limit, GError **error);

/* Instance @row of job @job_id (@key) as Aurora's ScheduledTask: running
 * @config on @host, with its named ports and its newest @max_events task
 * events. */
ApiScheduledTask *stg_store_scheduled_task (StgStore *store, const ApiJobKey *key, gint64 job_id,
                                            const StgInstanceRow *row, ApiTaskConfig *config,
                                            const gchar *host, guint max_events, GError **error);

/* ---- runtime facts: ports, all slots ------------------------------------ */

/* The port kept for (@job, @instance, @name), or 0. */
gint stg_store_get_port (StgStore *store, const ApiJobKey *job, gint32 instance,
                         const gchar *name, GError **error);

/* Keeps @port for (@job, @instance, @name). STG_STORE_ERROR_EXISTS when
 * another slot has that port. */
gboolean stg_store_put_port (StgStore *store, const ApiJobKey *job, gint32 instance,
                             const gchar *name, gint port, GError **error);

/* How many ports the jobs of @role keep; -1 with @error. */
gint64 stg_store_count_role_ports (StgStore *store, const gchar *role, GError **error);

/* TRUE when some slot keeps @port. */
gboolean stg_store_port_used (StgStore *store, gint port, GError **error);

/* The ports of one instance: name -> port (GINT_TO_POINTER). */
GHashTable *stg_store_list_ports (StgStore *store, const ApiJobKey *job, gint32 instance,
                                  GError **error);

typedef struct
{
  gint64 job_id;
  StgInstanceRow row;
} StgSlotRow;

/* Every instance row of every job (GArray of StgSlotRow), by job and id. */
GArray *stg_store_list_all_instances (StgStore *store, GError **error);

/* ---- fleet placements (fleet_facts.c) ---------------------------------- */

typedef struct
{
  gint64 job_id;
  gint32 instance_id;
  gchar *host;
} StgPlacementRow;

/* Records that slot (@job_id, @instance_id) is placed on @host. */
gboolean stg_store_set_placement (StgStore *store, gint64 job_id, gint32 instance_id, const gchar *host,
                                  GError **error);

gboolean stg_store_delete_placement (StgStore *store, gint64 job_id, gint32 instance_id, GError **error);

/* Every placement (GArray of StgPlacementRow, host strings owned by the
 * array: freed with it). */
GArray *stg_store_list_placements (StgStore *store, GError **error);

/* Records that @host is drained (or, !@drained, open again). */
gboolean stg_store_set_host_drained (StgStore *store, const gchar *host, gboolean drained,
                                     GError **error);

/* The drained hosts' names (a set of strings). */
GHashTable *stg_store_drained_hosts (StgStore *store, GError **error);

/* ---- updates ------------------------------------------------------------ */

/* One row of the updates table. */
typedef struct
{
  gint64 id;
  gchar *uid;                /* JobUpdateKey.id */
  ApiJobKey *job;
  gchar *user;
  gint status;               /* JobUpdateStatus */
  gint64 created_ms;
  gint64 modified_ms;
  gint64 desired_config_id;  /* 0: the update removes every instance it touches */
  gint64 last_pulse_ms;      /* 0: never pulsed */
  gchar *progress;           /* the engine's bookkeeping, JSON */
} StgUpdateRow;

void stg_update_row_free (StgUpdateRow *row);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgUpdateRow, stg_update_row_free)

/* Records a new update with its request and instructions. The job key,
 * metadata and settings come from them. */
gboolean stg_store_insert_update (StgStore *store, const gchar *uid, const ApiJobKey *job,
                                  const gchar *user, gint status, gint64 now_ms,
                                  ApiJobUpdateRequest *request,
                                  ApiJobUpdateInstructions *instructions,
                                  gint64 desired_config_id, gint64 *update_id, GError **error);

/* Sets an update's status (and whether it is active) and modified time. */
gboolean stg_store_set_update_status (StgStore *store, gint64 update_id, gint status,
                                      gint64 now_ms, GError **error);

/* Sets the engine's bookkeeping and the last pulse. */
gboolean stg_store_set_update_progress (StgStore *store, gint64 update_id, const gchar *progress,
                                        gint64 last_pulse_ms, GError **error);

gboolean stg_store_add_update_event (StgStore *store, gint64 update_id, gint status, gint64 ts_ms,
                                     const gchar *user, const gchar *message, GError **error);

/* @batch: the batch of the work the event is about (schema/021_batches.sql);
 * negative for none. */
gboolean stg_store_add_instance_event (StgStore *store, gint64 update_id, gint32 instance_id,
                                       gint64 ts_ms, gint action, gint batch, const gchar *message,
                                       GError **error);

/* An update's work on one instance. Config ids of 0 mean "absent". */
typedef struct
{
  gint32 instance_id;
  gint64 initial_config_id;
  gint64 desired_config_id;
  gint state;                /* the engine's per-instance state */
  gint failures;
  gint64 started_ms;
  gint64 baseline;
} StgUpdateInstanceRow;

/* Inserts @n rows (one statement, reused). */
gboolean stg_store_insert_update_instances (StgStore *store, gint64 update_id,
                                            const StgUpdateInstanceRow *rows, guint n,
                                            GError **error);

/* Saves state, failures, started_ms and baseline of one row. */
gboolean stg_store_set_update_instance (StgStore *store, gint64 update_id,
                                        const StgUpdateInstanceRow *row, GError **error);

/* Rows of an update in instance-id order (GArray of StgUpdateInstanceRow). */
GArray *stg_store_list_update_instances (StgStore *store, gint64 update_id, GError **error);

/* A surge instance: an extra instance update @update_id runs beyond its
 * job's count (schema/014_surge.sql). config_id 0: being removed. */
typedef struct
{
  gint64 update_id;
  gint64 job_id;
  gint32 instance_id;
  gint64 config_id;
  gint failures;
  gint64 baseline;
  gint64 started_ms;
} StgSurgeRow;

/* Records @row (a new one, or new facts of one the job has). */
gboolean stg_store_put_surge (StgStore *store, const StgSurgeRow *row, GError **error);

/* Forgets surge instance @instance_id of job @job_id (it is gone). */
gboolean stg_store_delete_surge (StgStore *store, gint64 job_id, gint32 instance_id,
                                 GError **error);

/* The surge instances of update @update_id, or of every update when 0
 * (GArray of StgSurgeRow, by job and instance). */
GArray *stg_store_list_surge (StgStore *store, gint64 update_id, GError **error);

/* The update with JobUpdateKey.id @uid, or NULL with STG_STORE_ERROR_NOT_FOUND. */
StgUpdateRow *stg_store_get_update (StgStore *store, const gchar *uid, GError **error);

/* Every active update, oldest first (StgUpdateRow*). */
GPtrArray *stg_store_list_active_updates (StgStore *store, GError **error);

/* The instructions recorded when the update started. */
ApiJobUpdateInstructions *stg_store_get_update_instructions (StgStore *store, gint64 update_id,
                                                             GError **error);

/* The summary of one update. */
ApiJobUpdateSummary *stg_store_get_update_summary (StgStore *store, gint64 update_id,
                                                   GError **error);

/* ---- update queries --------------------------------------------------- */

/* TRUE when @query (nullable) has no term: unset, empty strings, empty keys
 * and zero limits all count as "no term". */
gboolean stg_store_update_query_is_empty (const ApiJobUpdateQuery *query);

/* Summaries of the updates matching @query (any field may be unset),
 * newest first, as ApiJobUpdateSummary*. */
GPtrArray *stg_store_query_update_summaries (StgStore *store, const ApiJobUpdateQuery *query,
                                             GError **error);

/* Full details (summary, instructions, update and instance events, oldest
 * first) of the updates matching @query, newest first, as
 * ApiJobUpdateDetails*. */
GPtrArray *stg_store_query_update_details (StgStore *store, const ApiJobUpdateQuery *query,
                                           GError **error);

/* The newest @limit instance events of an update (0: all), oldest first, as
 * ApiJobInstanceUpdateEvent*, and the total count in *@total (nullable). */
GPtrArray *stg_store_list_instance_events (StgStore *store, gint64 update_id, guint limit,
                                           gint64 *total, GError **error);

/* The update's events, oldest first, as ApiJobUpdateEvent*. */
GPtrArray *stg_store_list_update_events (StgStore *store, gint64 update_id, GError **error);

/* ---- what an update's timeline is drawn from (timeline.c) ---------------- */

/* One event of an instance, as the timeline reads it. */
typedef struct
{
  gint32 instance;
  gint64 ts_ms;
  gint code;  /* an instance event's JobUpdateAction, a task event's ScheduleStatus */
  gint batch; /* an instance event's batch (stg_store_add_instance_event); -1: none */
} StgTimelineEvent;

/* Every instance event of update @update_id, oldest first. */
GArray *stg_store_timeline_instance_events (StgStore *store, gint64 update_id, GError **error);

/* The task events of job @job_id's instances from @from_ms to @to_ms
 * (both included), oldest first; batch is -1. */
GArray *stg_store_timeline_task_events (StgStore *store, gint64 job_id, gint64 from_ms,
                                        gint64 to_ms, GError **error);

/* ---- a whole job at once (job_lookups.c) -------------------------------- */

/* Instance id (GINT_TO_POINTER) -> the port to link to (GINT_TO_POINTER):
 * the one named "http", else the first by name. */
GHashTable *stg_store_job_link_ports (StgStore *store, const ApiJobKey *job, GError **error);

/* Instance id (GINT_TO_POINTER) -> its newest ApiTaskEvent (owned). */
GHashTable *stg_store_job_last_task_events (StgStore *store, gint64 job_id, GError **error);

/* ---- quotas and snapshots (quotas.c) ------------------------------------ */

/* The quota setQuota gave @role: a new ResourceAggregate, or NULL (and no
 * error) when the role has none. */
ApiResourceAggregate *stg_store_get_quota (StgStore *store, const gchar *role, GError **error);

/* Replaces @role's quota. */
gboolean stg_store_set_quota (StgStore *store, const gchar *role, ApiResourceAggregate *quota,
                              GError **error);

/* Makes everything committed durable in the database's own files now and
 * returns what was done, in words. SQLite: a checkpoint that writes the
 * write-ahead log into the database file and truncates it; PostgreSQL:
 * nothing to do, its commits are durable and its own backups apply. Not
 * inside a transaction. */
gchar *stg_store_snapshot (StgStore *store, GError **error);

/* ---- hosts in maintenance (maintenance.c) --------------------------------- */

/* A host's maintenance other than NONE. */
typedef struct
{
  gchar *host;
  gint mode;                          /* MaintenanceMode: SCHEDULED, DRAINING or DRAINED */
  ApiHostMaintenanceRequest *request; /* (nullable) the drain asked of it */
  gint64 since_ms;                    /* when it entered @mode */
} StgMaintenanceRow;

/* Every host in maintenance, by name (element-type StgMaintenanceRow). */
GPtrArray *stg_store_list_maintenance (StgStore *store, GError **error);

/* Puts @host in @mode since @since_ms, with @request (nullable). */
gboolean stg_store_set_maintenance (StgStore *store, const gchar *host, gint mode,
                                    ApiHostMaintenanceRequest *request, gint64 since_ms,
                                    GError **error);

/* Puts @host back in NONE. */
gboolean stg_store_end_maintenance (StgStore *store, const gchar *host, GError **error);

/* ---- backups and recovery (backup.c) ------------------------------------ */

/* StgBackups: backups of the SQLite store @live (at @db_path) in the
 * folder @dir, and recovery from them, as Aurora's. A backup is a copy of
 * the database as one consistent snapshot (SQLite's online backup API;
 * writes wait while it runs), a file of @dir named
 * scheduler-backup-YYYY-MM-DD-HH-MM-SS (UTC), its id. A recovery stages
 * one backup (a copy of it, migrated to this build's schema, opened as a
 * store of its own), which callers read and delete tasks from, then
 * commits it (it replaces the database when the store is next opened:
 * stg_store_install_recovered) or unloads it; one is staged at a time.
 * For a PostgreSQL @live store every call fails with
 * STG_STORE_ERROR_UNSUPPORTED, saying that the database's own backups
 * apply. */
typedef struct _StgBackups StgBackups;
StgBackups *stg_backups_new (StgStore *live, const gchar *db_path, const gchar *dir);
/* Unloads what is staged. */
void stg_backups_free (StgBackups *backups);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgBackups, stg_backups_free)

const gchar *stg_backups_dir (StgBackups *backups);

/* Writes a new backup (the folder made when missing) named after @now_ms
 * ("-2" and so on added when that name is taken) and returns its id. Not
 * inside a transaction of the live store. */
gchar *stg_backups_write (StgBackups *backups, gint64 now_ms, GError **error);

/* The backups' ids, oldest first (element-type utf8); none when the folder
 * does not exist. */
GPtrArray *stg_backups_list (StgBackups *backups, GError **error);

/* Deletes the oldest backups beyond the newest @keep; *@removed counts
 * them. */
gboolean stg_backups_prune (StgBackups *backups, guint keep, guint *removed, GError **error);

/* Stages backup @id: STG_STORE_ERROR_INVALID when one is staged already or
 * @id is not a backup's name, _NOT_FOUND when there is no such backup,
 * _CORRUPT when it is not a sound database, _NEWER when a newer Stagger
 * wrote it. */
gboolean stg_backups_stage (StgBackups *backups, const gchar *id, GError **error);

/* The staged store (borrowed; *@id, when given, the backup's id), or NULL
 * with STG_STORE_ERROR_INVALID when nothing is staged. */
StgStore *stg_backups_staged (StgBackups *backups, const gchar **id, GError **error);

/* Closes the staged store and leaves it where the next opening of the
 * store puts it in place of the database; nothing is staged after. */
gboolean stg_backups_commit (StgBackups *backups, GError **error);

/* Drops what is staged (nothing when nothing is). */
gboolean stg_backups_unload (StgBackups *backups, GError **error);

/* Before the SQLite store at @db_path is opened: puts a committed
 * recovery in place of the database (its write-ahead log removed first)
 * and sets *@installed; nothing when none waits. */
gboolean stg_store_install_recovered (const gchar *db_path, gboolean *installed, GError **error);

/* ---- retention (retention.c) -------------------------------------------- */

/* In one transaction, deletes at most @limit rows of each kind: finished
 * updates beyond the newest @keep_updates of their job (0: keep all), with
 * their instances and events; task events, and instance events of finished
 * updates, older than @events_before_ms (0: keep all). *@deleted
 * (nullable) gets how many rows went. Not inside a transaction. */
/* Deletes the task events of instance @instance of job @job_id, or
 * (@instance negative) of every instance the job no longer has; adds how
 * many to *@deleted. */
gboolean stg_store_delete_task_events (StgStore *store, gint64 job_id, gint32 instance,
                                       guint *deleted, GError **error);

gboolean stg_store_prune (StgStore *store, guint keep_updates, gint64 events_before_ms,
                          guint limit, guint *deleted, GError **error);

/* Hands up to @pages free pages back to the file system (a database made
 * with auto_vacuum = INCREMENTAL; others keep their pages). */
gboolean stg_store_reclaim (StgStore *store, guint pages, GError **error);

/* Free pages in the file (PRAGMA freelist_count), or -1. */
gint64 stg_store_free_pages (StgStore *store);

/* ---- sidecar sets and the pods' sidecars (sidecars.c) ------------------- */

/* One sidecar set (sidecar_sets). */
typedef struct
{
  gint64 id;
  gchar *name;
  gchar *role; /* the selector's patterns */
  gchar *environment;
  gchar *job;
  gint version;        /* the newest */
  gint from_version;   /* the last update moves from this one (0: none) ... */
  gint to_version;     /* ... to this one */
  gint inject_version; /* the version new pods get */
  gint status;         /* JobUpdateStatus of the last update */
  gint64 status_ms;
  gchar *reason; /* "" when there is nothing to say */
  ApiSidecarUpdateSettings *settings;
  gchar *user;
  gint64 created_ms;
} StgSidecarSetRow;

void stg_sidecar_set_row_free (StgSidecarSetRow *row);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgSidecarSetRow, stg_sidecar_set_row_free)

/* Records a new set (every field of @row but id); sets @row->id. */
gboolean stg_store_insert_sidecar_set (StgStore *store, StgSidecarSetRow *row, GError **error);

/* Saves every field of @row but its name, user and creation time. */
gboolean stg_store_set_sidecar_set (StgStore *store, const StgSidecarSetRow *row, GError **error);

/* The set named @name; NULL with STG_STORE_ERROR_NOT_FOUND. */
StgSidecarSetRow *stg_store_get_sidecar_set (StgStore *store, const gchar *name, GError **error);

/* Every set (StgSidecarSetRow*), by name. */
GPtrArray *stg_store_list_sidecar_sets (StgStore *store, GError **error);

/* Removes set @set_id with its versions and events. */
gboolean stg_store_delete_sidecar_set (StgStore *store, gint64 set_id, GError **error);

/* Records version @version of set @set_id's sidecar. */
gboolean stg_store_put_sidecar_version (StgStore *store, gint64 set_id, gint version,
                                        ApiSidecar *sidecar, const gchar *user, gint64 created_ms,
                                        GError **error);

/* Version @version of the sidecar of the set named @name; NULL with
 * STG_STORE_ERROR_NOT_FOUND when there is no such set or version. */
ApiSidecar *stg_store_get_sidecar_version (StgStore *store, const gchar *name, gint version,
                                           GError **error);

/* The newest version of set @set_id whose sidecar hashes to @hash (0: none). */
gint stg_store_find_sidecar_version (StgStore *store, gint64 set_id, const gchar *hash,
                                     GError **error);

/* Every version of set @set_id (ApiSidecarVersion*), oldest first. */
GPtrArray *stg_store_list_sidecar_versions (StgStore *store, gint64 set_id, GError **error);

/* Records an event of set @set_id: its update's @status after it, about
 * an instance (@job "role/environment/name" and @instance, or @job NULL). */
gboolean stg_store_add_sidecar_event (StgStore *store, gint64 set_id, gint64 ts_ms, gint status,
                                      const gchar *job, gint32 instance, const gchar *message,
                                      const gchar *user, GError **error);

/* The newest @limit events of set @set_id (ApiSidecarEvent*), oldest first. */
GPtrArray *stg_store_list_sidecar_events (StgStore *store, gint64 set_id, guint limit,
                                          GError **error);

/* The fleet runtime's facts of one sidecar in one pod (fleet_sidecars). */
typedef struct
{
  gint64 job_id;
  gint32 instance_id;
  gchar *sidecar;
  gint want;            /* the version asked for */
  gint serving_slot;    /* 1 or 2; 0: none serves */
  gint serving_version; /* what the serving slot runs */
  gint failures;        /* failed starts of @want */
} StgPodSidecarRow;

/* Saves @row (made or replaced). */
gboolean stg_store_put_pod_sidecar (StgStore *store, const StgPodSidecarRow *row, GError **error);

/* Forgets sidecar @sidecar of instance @instance_id of job @job_id (@sidecar
 * NULL: every sidecar of that instance). */
gboolean stg_store_delete_pod_sidecar (StgStore *store, gint64 job_id, gint32 instance_id,
                                       const gchar *sidecar, GError **error);

/* Every row (StgPodSidecarRow, strings owned by the array). */
GArray *stg_store_list_pod_sidecars (StgStore *store, GError **error);

G_END_DECLS
