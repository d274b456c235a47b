/* engine.h: the scheduler core: jobs and their rolling updates.
 *
 * StgEngine owns every job mutation (create, kill, add instances, restart)
 * and every job update, from the request to a terminal state. It is pure
 * logic behind three seams: a StgClock for time and timers, the StgStore for
 * durability (each step one transaction, written before the runtime is told
 * to act), and a StgRuntime that runs tasks and reports on them. It never
 * touches a socket, a process or SQL itself.
 *
 * Errors: STG_ENGINE_ERROR_INVALID (bad request; the message names the
 * field), _NOT_FOUND (no such job or update), _ACTIVE_UPDATE (the job
 * already has one; see @active_out of stg_engine_start_update()), _STATE
 * (the transition is not allowed; the message names both states),
 * _UPDATING (the job has an active update that the call would disturb),
 * _UNAVAILABLE (not supported by this build), _FAILED (storage or runtime
 * trouble). Main-loop thread only.
 */
#pragma once

#include "common/clock.h"
#include "common/thrift_glue.h"
#include "common/tiers.h"
#include "senders/gates.h"
#include "senders/notify.h"
#include "runtime/runtime.h"
#include "store/store.h"
#include "store/plans.h"

G_BEGIN_DECLS

#define STG_ENGINE_ERROR (stg_engine_error_quark ())
GQuark stg_engine_error_quark (void);

typedef enum
{
  STG_ENGINE_ERROR_FAILED,
  STG_ENGINE_ERROR_INVALID,
  STG_ENGINE_ERROR_NOT_FOUND,
  STG_ENGINE_ERROR_ACTIVE_UPDATE,
  STG_ENGINE_ERROR_STATE,
  STG_ENGINE_ERROR_UNAVAILABLE,
  STG_ENGINE_ERROR_UPDATING,
} StgEngineError;

typedef struct _StgEngine StgEngine;

/* Limits the engine enforces on requests. */
typedef struct
{
  gint32 max_instances;          /* per job; default 100000 */
  gint64 max_watch_ms;           /* minWaitInInstanceRunningMs bound */
  gint64 max_pulse_ms;           /* blockIfNoPulsesAfterMs bound */
  /* Aurora's -max_update_instance_failures: an update whose
   * maxPerInstanceFailures times its instance count exceeds this is
   * refused; default five times max_instances, as Aurora derives it. */
  gint64 max_update_instance_failures;
  /* SLA policies (sla.c), after Aurora's scheduler options: */
  gint32 sla_min_instances;          /* -min_required_instances_for_sla_check; default 20 */
  gint64 sla_max_duration_secs;      /* -max_sla_duration_secs; default 7200 */
  gboolean sla_non_production;       /* -sla_aware_kill_non_prod; default FALSE */
  gint64 sla_coordinator_timeout_ms; /* -sla_coordinator_timeout; default 60 s */
  gint64 sla_retry_min_ms;           /* -sla_aware_kill_retry_min_delay; default 60 s */
  gint64 sla_retry_max_ms;           /* -sla_aware_kill_retry_max_delay; default 300 s */
  const gchar *cluster;              /* (nullable) borrowed: the cluster's name, in the task keys
                                    coordinators are asked about; NULL: "local" */
  gint64 maintenance_poll_ms;        /* draining hosts looked at this often
                                        (-host_maintenance_polling_interval); default 60 s */
} StgEngineLimits;

void stg_engine_limits_init (StgEngineLimits *limits);

/* An engine over @store, @clock and @runtime (all borrowed; @runtime may be
 * NULL: jobs and updates are stored but nothing runs and no update moves).
 * Call stg_engine_recover() once before serving requests. */
StgEngine *stg_engine_new (StgStore *store, StgClock *clock, StgRuntime *runtime,
                           const StgEngineLimits *limits);
void stg_engine_free (StgEngine *engine);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgEngine, stg_engine_free)

/* HTTP and shell gates run through @runner (borrowed; NULL: they fail,
 * saying this staggerd runs none). */
void stg_engine_set_gate_runner (StgEngine *engine, StgGateRunner *runner);

/* Every state change of an update, a plan or a stage goes to @notifier
 * (borrowed; NULL: none), in order, inside the transaction that records
 * it and just before its commit; then the notifier hears whether that
 * commit happened (see runtime/notify.h). */
void stg_engine_set_notifier (StgEngine *engine, StgNotifier *notifier);

/* Reloads every active update and plan from the store and continues them. */
gboolean stg_engine_recover (StgEngine *engine, GError **error);

/* A committed change: @job changed, and so did update @update_uid when not
 * NULL; or (@job NULL) rollout plan @plan_uid changed. */
typedef struct
{
  ApiJobKey *job;    /* (nullable) */
  gchar *update_uid; /* (nullable) */
  gchar *plan_uid;   /* (nullable) */
} StgEngineChange;

/* Called after each committed change, with the change (valid for the call
 * only). For live displays. */
typedef void (*StgEngineWatchFunc) (gpointer data, const StgEngineChange *change);
void stg_engine_add_watcher (StgEngine *engine, StgEngineWatchFunc func, gpointer data);

/* TRUE when an update may go from status @from to status @to. */
gboolean stg_engine_transition_allowed (gint from, gint to);

/* TRUE when a rollout plan (!@stage) or a stage of one may go from status
 * @from to another status @to (RolloutStatus; the machines of plan.c). */
gboolean stg_engine_plan_transition_allowed (gboolean stage, gint from, gint to);

/* TRUE when one instance's work in an update may go from state @from to
 * state @to (update_instances.state; the machine work_state.h draws). */
gboolean stg_engine_work_transition_allowed (gint from, gint to);

/* Asserts the engine's invariants: those of its updates (update.c) and
 * plans (plan.c). Tests call it; where STG_CHECK_INVARIANTS is defined
 * (configure --enable-sanitizers) the engine calls it after every step. */
void stg_engine_check_invariants (StgEngine *engine);

/* Steps taken so far (each writes in one transaction). */
guint64 stg_engine_step_count (StgEngine *engine);

/* Instance transitions recorded so far (each an instance event of an
 * update). */
guint64 stg_engine_transition_count (StgEngine *engine);

/* Active updates held in memory. */
guint stg_engine_active_updates (StgEngine *engine);

/* ---- jobs ------------------------------------------------------------- */

/* Creates a job and starts its instances. */
gboolean stg_engine_create_job (StgEngine *engine, const ApiJobConfiguration *config,
                                const gchar *user, GError **error);

/* Stops instances @instances (a set of gint32*, as Thrift gives it; NULL or
 * empty: all). A job left with no instance is removed once they are gone.
 * Refused with _UPDATING while the job has an active update. */
gboolean stg_engine_kill_instances (StgEngine *engine, const ApiJobKey *job,
                                    GHashTable *instances, const gchar *user,
                                    const gchar *message, GError **error);

/* Adds @count instances running instance @from's configuration, numbered
 * after the job's highest instance. */
gboolean stg_engine_add_instances (StgEngine *engine, const ApiJobKey *job, gint32 from,
                                   gint32 count, const gchar *user, GError **error);

/* Restarts instances @instances (a set of gint32*; NULL or empty: all). */
gboolean stg_engine_restart_instances (StgEngine *engine, const ApiJobKey *job,
                                       GHashTable *instances, const gchar *user,
                                       GError **error);

/* Checks @config as createJob would and returns its task config as
 * createJob would store it, with its tier (the default when unset) and
 * production (the tier's) filled in. */
ApiTaskConfig *stg_engine_populate_job (StgEngine *engine, const ApiJobConfiguration *config,
                                        GError **error);

/* ---- tiers and quotas (task_fields.c, quota.c) ------------------------- */

/* The tiers TaskConfig.tier is checked against (borrowed, must outlive the
 * engine; NULL: Aurora's default tiers, which the engine starts with). */
void stg_engine_set_tiers (StgEngine *engine, const StgTiers *tiers);
const StgTiers *stg_engine_tiers (StgEngine *engine);

/* Resources added up, as Aurora's quota counts them. */
typedef struct
{
  gdouble cpus;
  gdouble ram_mb;
  gdouble disk_mb;
} StgResourceBag;

/* The pools a task's resources count in: production or not (its tier's),
 * shared or dedicated (a "dedicated" constraint). Only PROD_SHARED needs
 * quota. */
typedef enum
{
  STG_QUOTA_PROD_SHARED,
  STG_QUOTA_PROD_DEDICATED,
  STG_QUOTA_NONPROD_SHARED,
  STG_QUOTA_NONPROD_DEDICATED,
  STG_QUOTA_POOLS
} StgQuotaPool;

typedef struct
{
  StgResourceBag quota; /* zero when the role has none */
  StgResourceBag consumption[STG_QUOTA_POOLS];
} StgQuotaInfo;

/* Role @role's quota and what its jobs consume, by pool. */
gboolean stg_engine_get_quota (StgEngine *engine, const gchar *role, StgQuotaInfo *info,
                               GError **error);

/* Replaces @role's quota with @quota (exactly numCpus, ramMb, diskMb, none
 * negative); refused when the role's production tasks of the shared pool
 * already consume more. */
gboolean stg_engine_set_quota (StgEngine *engine, const gchar *role,
                               const ApiResourceAggregate *quota, const gchar *user,
                               GError **error);

/* ---- updates ---------------------------------------------------------- */

/* Starts an update. On STG_ENGINE_ERROR_ACTIVE_UPDATE, *@active_out (when
 * given) receives the active update's summary. */
ApiJobUpdateKey *stg_engine_start_update (StgEngine *engine, const ApiJobUpdateRequest *request,
                                          const gchar *user, const gchar *message,
                                          ApiJobUpdateSummary **active_out, GError **error);

/* What @request asks that will not happen, for its submitter (NULL when
 * nothing): an SLA-aware update (slaAware) of a task with no SLA policy (no
 * slaPolicy of its own and a tier that is not production) waits for none. */
gchar *stg_engine_update_warning (StgEngine *engine, const ApiJobUpdateRequest *request);

gboolean stg_engine_pause_update (StgEngine *engine, const ApiJobUpdateKey *key,
                                  const gchar *user, const gchar *message, GError **error);
gboolean stg_engine_resume_update (StgEngine *engine, const ApiJobUpdateKey *key,
                                   const gchar *user, const gchar *message, GError **error);
gboolean stg_engine_abort_update (StgEngine *engine, const ApiJobUpdateKey *key,
                                  const gchar *user, const gchar *message, GError **error);
gboolean stg_engine_rollback_update (StgEngine *engine, const ApiJobUpdateKey *key,
                                     const gchar *user, const gchar *message, GError **error);

/* Records a pulse; *@status is OK for an active update, FINISHED for a
 * terminal one. Unknown keys fail with _NOT_FOUND. */
gboolean stg_engine_pulse_update (StgEngine *engine, const ApiJobUpdateKey *key,
                                  ApiJobUpdatePulseStatus *status, GError **error);

/* Instance @instance of job @key's output that @query names, as the
 * runtime keeps it (stg_runtime_read_log(), which fills @info). NOT_FOUND
 * when there is no such job, instance, process or output, or the runtime
 * keeps none; FAILED when reading fails. */
GBytes *stg_engine_read_log (StgEngine *engine, const ApiJobKey *key, gint32 instance,
                             const StgLogQuery *query, StgLogInfo *info, GError **error);

/* Why instance @instance of job @key is not running as wanted now, as the
 * runtime says (a failure's cause, what it waits on), and since when
 * (*@since_ms); NULL when it has no cause or there is no such instance. */
gchar *stg_engine_instance_cause (StgEngine *engine, const ApiJobKey *key, gint32 instance,
                                  gint64 *since_ms);

/* What instance @instance of job row @job_id uses now and what it
 * reserves (stg_runtime_usage); FALSE when nothing of it is measured. */
gboolean stg_engine_instance_usage (StgEngine *engine, gint64 job_id, gint32 instance,
                                    StgInstanceUsage *out);

/* Where instance @instance of job row @job_id is announced in Aurora's
 * ServerSet (stg_runtime_announcement); FALSE when it announces nothing. */
gboolean stg_engine_instance_announcement (StgEngine *engine, gint64 job_id, gint32 instance,
                                           StgAnnouncement *out);

/* Removes the instances of job @key in @instances (gint32* set; NULL:
 * every one) that have ended for good (a terminal status, nothing running
 * or to start again) and their task events, and with @history the task
 * events of instances the job no longer has; *@pruned counts the
 * instances. No ended task is kept of them. A job left with none goes, as
 * after a kill. Refused with _UPDATING while the job has an active
 * update. */
/* Removes the ended tasks kept of instance @instance of job @key (every
 * instance when negative), as pruneTasks does; adds how many to *@pruned. */
gboolean stg_engine_prune_ended_tasks (StgEngine *engine, const ApiJobKey *key, gint32 instance,
                                       guint *pruned, GError **error);

gboolean stg_engine_prune_tasks (StgEngine *engine, const ApiJobKey *key, GHashTable *instances,
                                 gboolean history, guint *pruned, GError **error);

/* The runtime compares what runs with the store (see
 * StgRuntimeOps.reconcile); *@summary says what it found. Explicit: the
 * tasks in batches of @batch_size (0: Aurora's default, 1000; negative:
 * _INVALID), the first now, the others later (reconcile.c). */
gboolean stg_engine_reconcile (StgEngine *engine, gboolean implicit, gint32 batch_size,
                               gchar **summary, GError **error);

/* ---- host maintenance (maintenance.c) ----------------------------------- */

/* Aurora's maintenance calls over the hosts Stagger knows (the fleet
 * runtime's, or this machine by its name when the local runtime can drain
 * it; INVALID for a runtime without hosts). @hosts is a set of names;
 * hosts Stagger does not know are left out of the answer (element-type
 * ApiHostStatus: each host and its mode after the call). Start: SCHEDULED.
 * Drain: DRAINING, nothing new placed there, its instances moved off
 * (restarted: elsewhere on the fleet, held until the host opens locally);
 * with a @policy (an empty one: each task's own, or its tier's) only as
 * each job's SLA allows until @timeout_secs have passed; without one at
 * once. DRAINED once nothing of the host runs. End: NONE, open again. */
GPtrArray *stg_engine_start_maintenance (StgEngine *engine, GHashTable *hosts, const gchar *user,
                                         GError **error);
GPtrArray *stg_engine_drain_hosts (StgEngine *engine, GHashTable *hosts, const ApiSlaPolicy *policy,
                                   gint64 timeout_secs, const gchar *user, GError **error);
GPtrArray *stg_engine_maintenance_status (StgEngine *engine, GHashTable *hosts, GError **error);
GPtrArray *stg_engine_end_maintenance (StgEngine *engine, GHashTable *hosts, const gchar *user,
                                       GError **error);

/* Closes the hosts in maintenance in the runtime again (a restarted
 * staggerd's local runtime forgets them): before the runtime adopts its
 * instances, so that none starts on a drained host. */
gboolean stg_engine_recover_hosts (StgEngine *engine, GError **error);

/* Why a drain waits for the SLA of instance @instance of job @job_id
 * before moving it ("instance 0 of www/prod/web waits for its SLA: ..."),
 * or NULL when no drain waits for it. Owned by the engine; valid until it
 * next runs. */
const gchar *stg_engine_sla_wait (StgEngine *engine, gint64 job_id, gint32 instance);

/* The runtime's hosts, each with its maintenance mode (element-type
 * ApiFleetHostStatus); INVALID when it has none. */
GPtrArray *stg_engine_hosts (StgEngine *engine, GError **error);

/* Drains host @name (or, !@drain, opens it again): see drainHost. Its
 * mode is DRAINING with no request (the caller moves its instances), or
 * NONE. NOT_FOUND for an unknown host, INVALID when the runtime has none. */
gboolean stg_engine_drain_host (StgEngine *engine, const gchar *name, gboolean drain,
                                const gchar *user, GError **error);

/* What @request would change, without starting anything; with
 * @rehearse, also the batches it would run and their predicted times
 * (rehearsal.c; reads the job's last finished update). */
ApiGetJobUpdateDiffResult *stg_engine_diff (StgEngine *engine, const ApiJobUpdateRequest *request,
                                            gboolean rehearse, GError **error);

/* ---- rollout plans (plan.c) ------------------------------------------ */

/* Starts rollout plan @plan: checks every stage (each request as
 * startJobUpdate checks it, names unique, dependencies known and acyclic,
 * one stage per job, gates) and returns the new plan's id. */
gchar *stg_engine_start_plan (StgEngine *engine, const ApiRolloutPlan *plan, const gchar *user,
                              const gchar *message, GError **error);

/* What each stage of @plan would do to its job now (a dry run): @plan
 * checked as stg_engine_start_plan checks it, but a job in an active plan
 * is no error; nothing is stored. */
ApiGetRolloutPlanDiffResult *stg_engine_plan_diff (StgEngine *engine, const ApiRolloutPlan *plan,
                                                   GError **error);

/* Starts no new stage and pauses the stages' updates; resume goes on.
 * NOT_FOUND for an unknown plan, STATE when the plan's status forbids it. */
gboolean stg_engine_pause_plan (StgEngine *engine, const gchar *uid, const gchar *user,
                                const gchar *message, GError **error);
gboolean stg_engine_resume_plan (StgEngine *engine, const gchar *uid, const gchar *user,
                                 const gchar *message, GError **error);
/* Stops the plan: the stages' updates are aborted; nothing is rolled back. */
gboolean stg_engine_abort_plan (StgEngine *engine, const gchar *uid, const gchar *user,
                                const gchar *message, GError **error);
/* Rolls the stages' running updates back, then every stage that changed
 * its job, in reverse dependency order; also of a plan that has ended. */
gboolean stg_engine_rollback_plan (StgEngine *engine, const gchar *uid, const gchar *user,
                                   const gchar *message, GError **error);
/* Approves stage @stage (NULL or "": every stage awaiting approval now). */
gboolean stg_engine_approve_stage (StgEngine *engine, const gchar *uid, const gchar *stage,
                                   const gchar *user, const gchar *message, GError **error);

/* Active plans held in memory. */
guint stg_engine_active_plans (StgEngine *engine);

/* Sets @st's versions (currentVersion, desiredVersion, targetVersion)
 * and readiness (readyInstances, desiredInstances, unready) for stage
 * @row of a plan, @spec its part of the plan: where it ended, as it
 * recorded, when @ended (the plan has) and it did; else its job as it
 * stands now (plan_view.c). */
void stg_plan_stage_view (StgStore *store, const ApiRolloutStage *spec, const StgStageRow *row,
                          gboolean ended, ApiRolloutStageState *st);

/* ---- reason codes (reasons.c; stagger(1), CONDITIONS, lists them) ---------- */

/* Updates (and plans and stages, where they say the same). */
#define STG_REASON_STARTED "Started"
#define STG_REASON_RESUMED "Resumed"
#define STG_REASON_PULSE_RECEIVED "PulseReceived"
#define STG_REASON_ROLLBACK_REQUESTED "RollbackRequested"
#define STG_REASON_ROLLING_BACK "RollingBack"
#define STG_REASON_FAILURE_THRESHOLD "FailureThresholdReached"
#define STG_REASON_GATE_FAILED "GateFailed"
#define STG_REASON_PAUSED_BY_USER "PausedByUser"
#define STG_REASON_PAUSED_AFTER_BATCH "PausedAfterBatch"
#define STG_REASON_AWAITING_PULSE "AwaitingPulse"
#define STG_REASON_ROLLED_FORWARD "RolledForward"
#define STG_REASON_NOTHING_TO_CHANGE "NothingToChange"
#define STG_REASON_ROLLED_BACK "RolledBack"
#define STG_REASON_ABORTED "Aborted"
#define STG_REASON_FAILED "Failed"
#define STG_REASON_ERROR "Error"
/* Plans and stages. */
#define STG_REASON_WAITING_FOR_DEPENDENCIES "WaitingForDependencies"
#define STG_REASON_WAITING_FOR_GATE "WaitingForGate"
#define STG_REASON_AWAITING_APPROVAL "AwaitingApproval"
#define STG_REASON_UPDATING "Updating"
#define STG_REASON_STAGE_UPDATING "StageUpdating"
#define STG_REASON_DONE "Done"
#define STG_REASON_ALREADY_CURRENT "AlreadyCurrent"
#define STG_REASON_UPDATE_FAILED "UpdateFailed"
#define STG_REASON_UPDATE_REFUSED "UpdateRefused"
#define STG_REASON_STAGE_FAILED "StageFailed"
#define STG_REASON_NOT_STARTED "NotStarted"
#define STG_REASON_JOB_REMOVED "JobRemoved"
#define STG_REASON_ROLLBACK_FAILED "RollbackFailed"

/* The reason code of an update's move to @status from @previous (-1: it
 * was just started), made by a user (@by_user) or not, with @message. */
const gchar *stg_update_reason (gint status, gint previous, gboolean by_user, const gchar *message);

/* The reason code a plan (!@stage) or a stage has in @status when nothing
 * more particular was recorded. */
const gchar *stg_rollout_reason (gboolean stage, gint status);

/* What a gate does when its timeoutSecs or retryIntervalSecs is unset. */
#define STG_GATE_TIMEOUT_SECS 30
#define STG_GATE_RETRY_INTERVAL_SECS 10

/* What @gate checks, in words ("GET URL: $.x <= 0"; gate.c). */
gchar *stg_gate_describe (const ApiRolloutGate *gate);

/* Where an update stands, for displays. */
typedef struct
{
  gint status;              /* JobUpdateStatus */
  gboolean back;            /* rolling back (or rolled back) */
  guint total;              /* instances in the current direction */
  guint done;               /* finished in the current direction */
  guint failed;             /* failed in the current direction */
  GArray *in_flight;        /* gint32 instance ids being worked on */
  StgRanges *instances;     /* every instance the update changes */
  gchar *states;            /* one letter per instance of @instances, ascending: p pending,
                               u updating, U updated, b rolling back, B rolled back, f failed */
  gint64 last_pulse_ms;
  gint64 started_ms;
  /* The update's surge instances (maxSurge), beyond the job's count;
   * empty once it has ended. */
  StgRanges *surge;
} StgUpdateProgress;

void stg_update_progress_clear (StgUpdateProgress *progress);

/* The progress of update @uid (active or not). Reads: the engine owns an
 * active update's live position (this call); every record (summaries,
 * details, events, instructions) is history, read from the store, which each
 * step has written before its news is announced. */
gboolean stg_engine_update_progress (StgEngine *engine, const gchar *uid,
                                     StgUpdateProgress *progress, GError **error);

/* ---- sidecar sets (sidecar.c, sidecar_calls.c) ------------------------- */

/* Creates the set @set names, or takes its selector and settings and, when
 * its sidecar differs from the version new pods get, makes that a new
 * version rolled to the pods that carry the set (STG_ENGINE_ERROR_ACTIVE_UPDATE
 * while an update of the set is active). The runtime checks the sidecar
 * (_INVALID when it runs no pods). */
gboolean stg_engine_apply_sidecar_set (StgEngine *engine, const ApiSidecarSet *set,
                                       const gchar *user, const gchar *message, GError **error);

/* Applies set @name again with its sidecar as new pods get it now, but
 * @image and @executor_data where given (nullable): a new version rolled
 * out with the set's selector and settings, as stg_engine_apply_sidecar_set()
 * does (_NOT_FOUND for no such set). */
gboolean stg_engine_sidecar_revise (StgEngine *engine, const gchar *name, const gchar *image,
                                    const gchar *executor_data, const gchar *user,
                                    const gchar *message, GError **error);

typedef enum
{
  STG_SIDECAR_PAUSE,
  STG_SIDECAR_RESUME,
  STG_SIDECAR_ABORT,
  STG_SIDECAR_ROLLBACK,
} StgSidecarControl;

/* Pauses, resumes, aborts or rolls back the update of set @name
 * (_NOT_FOUND, or _STATE when its status does not allow it). */
gboolean stg_engine_sidecar_control (StgEngine *engine, const gchar *name, StgSidecarControl what,
                                     const gchar *user, const gchar *message, GError **error);

/* Keeps the last @partition instances of set @name on the old version. */
gboolean stg_engine_sidecar_partition (StgEngine *engine, const gchar *name, gint32 partition,
                                       const gchar *user, const gchar *message, GError **error);

/* Removes set @name, and its containers from every pod. */
gboolean stg_engine_delete_sidecar_set (StgEngine *engine, const gchar *name, const gchar *user,
                                        const gchar *message, GError **error);

/* The role a user needs to change sidecar sets that select @role (a role,
 * or a pattern with * or ?): @role itself, or NULL for a pattern, since
 * such a set selects jobs of many roles and needs a user of every role. */
const gchar *stg_sidecar_role_needed (const gchar *role);

/* The role a user needs to change existing set @name, as
 * stg_sidecar_role_needed() says of its selector (owned; NULL: every
 * role), into *@role; FALSE with _NOT_FOUND for no such set. */
gboolean stg_engine_sidecar_role (StgEngine *engine, const gchar *name, gchar **role,
                                  GError **error);

/* Every set (ApiSidecarSetSummary*), by name. */
GPtrArray *stg_engine_sidecar_sets (StgEngine *engine, GError **error);

/* Set @name with its versions, its instances now and its events. */
ApiSidecarSetDetails *stg_engine_sidecar_set_details (StgEngine *engine, const gchar *name,
                                                      GError **error);

/* TRUE when a sidecar set's update may go from status @from to @to. */
gboolean stg_sidecar_transition_allowed (gint from, gint to);

G_END_DECLS
