/* engine_private.h: the engine's internal model, shared by its files.
 * Not for use outside src/engine/. Main-loop thread only.
 *
 * An active update lives in memory as a StgUpdate: its settings, one
 * StgWork per instance it changes (ascending instance id), the order of the
 * current direction (forward: every work item ascending; back: the touched
 * ones descending), a cursor into that order, and the batch in flight.
 * Terminal updates are not kept in memory; the store has them.
 *
 * Every change happens inside a step (stg_engine_step_begin/_end): the step
 * writes the changed rows, events and progress in one store transaction, and
 * only after the commit tells the runtime what to do.
 */
#pragma once

#include "engine/engine.h"
#include "engine/work_state.h"

/* ---- settings ------------------------------------------------------------ */

typedef enum
{
  STG_STRATEGY_QUEUE,      /* up to N in flight; the next starts as one finishes */
  STG_STRATEGY_BATCH,      /* groups of N; a group starts when the previous is done */
  STG_STRATEGY_VARIABLE,   /* groups sized by a list, the last repeated */
} StgStrategyKind;

/* JobUpdateSettings, checked and with defaults applied. */
typedef struct
{
  StgStrategyKind kind;
  GArray *sizes;                 /* gint32; one entry for queue and batch */
  gboolean autopause;
  gint32 max_per_instance_failures;
  gint32 max_failed_instances;
  gint64 watch_ms;
  gboolean rollback_on_failure;
  gint64 pulse_ms;               /* 0: not coordinated */
  gint64 max_start_ms;           /* 0: no deadline */
  gdouble growth;                /* >= 1 */
  gint32 min_in_service;
  gint64 pause_between_ms;
  StgRanges *only;               /* (nullable) updateOnlyTheseInstances */
  gboolean restart;              /* restartInstances: same-config instances are restarted */
  GPtrArray *gates;              /* (nullable) ApiRolloutGate*: batchGates, checked */
  gint32 max_surge;              /* extra instances beyond the job's count (resolved) */
  gint32 max_batch_size;         /* 0: growth has no cap */
  gint64 deadline_ms;            /* 0: no deadline for rolling forward */
  /* The percent forms (negative: not given), turned into counts by
   * stg_settings_resolve once the instances the update touches are known. */
  gdouble surge_pct;
  gdouble failed_pct;
  gdouble per_instance_pct;
  GPtrArray *instance_gates[2]; /* (nullable) instanceGatesBefore, instanceGatesAfter, checked */
  gboolean sla_aware;           /* slaAware: an instance goes down only within its SLA */
} StgSettings;

void stg_settings_clear (StgSettings *s);

/* Turns @s's percents into counts of the @touched instances the update
 * changes: maxSurgePercent rounded up, the failure allowances down. */
void stg_settings_resolve (StgSettings *s, guint touched);

/* Aurora's backfill for startJobUpdate: without an updateStrategy, @settings
 * gets a queue strategy of updateGroupSize (a batch strategy when
 * waitForBatchCompletion); then the group sizes must add up to more than 0
 * (STG_ENGINE_ERROR_INVALID with Aurora's message otherwise). */
gboolean stg_settings_backfill (ApiJobUpdateSettings *settings, const gchar *what, GError **error);

/* Checks @settings (field names prefixed with @what) and fills @out. */
gboolean stg_settings_parse (StgEngine *engine, const ApiJobUpdateSettings *settings,
                             const gchar *what, StgSettings *out, GError **error);

/* The size of the first batch, and of the one after a batch of @size that
 * was batch number @index (0-based) and had @failures failures. */
guint stg_strategy_first_size (const StgSettings *s);
guint stg_strategy_next_size (const StgSettings *s, guint index, guint size, gboolean failures);

/* ---- the diff -------------------------------------------------------------- */

/* One instance an update changes. Config ids of 0 mean "absent". */
typedef struct
{
  gint32 instance;
  gint64 from_config;
  gint64 to_config;
} StgChange;

typedef struct
{
  GArray *changes;        /* StgChange, ascending instance */
  GArray *unchanged;      /* StgChange (from == to), ascending instance */
  GArray *outside;        /* StgChange (from == to): instances the job has outside
                             updateOnlyTheseInstances, ascending instance */
  gint64 current_count;   /* instances the job has now */
} StgDiff;

void stg_diff_clear (StgDiff *diff);

/* What moving job @job_id (0: no such job yet) to @desired_config on
 * @instance_count instances changes, within @only (nullable: all). With
 * @restart, instances in scope that already run @desired_config are changes
 * too (from == to: restarts), not unchanged. */
gboolean stg_diff_compute (StgEngine *engine, gint64 job_id, gint64 desired_config,
                           gint32 instance_count, StgRanges *only, gboolean restart, StgDiff *diff,
                           GError **error);

/* ---- surge instances ----------------------------------------------------------- */

/* An extra instance an update with maxSurge runs beyond the job's count
 * (surge.c): a new instance slot, with an id past every instance the job
 * has or will have, running the config the current direction moves to.
 * Its row (update_surge) is written with the step, like work rows. */
typedef struct
{
  gint32 instance;
  gint64 config;        /* what it should run; 0: being removed */
  gint32 failures;      /* failed runs counted against maxPerInstanceFailures */
  gint64 seen_failures; /* the runtime's failure count already counted */
  gint64 started_ms;    /* when it was last asked to start (maxInstanceStartMs) */
  /* memory only */
  gboolean asked; /* the runtime was asked for config (or to kill it) */
  gboolean dirty; /* its row is to be written with the step */
} StgSurge;

/* ---- updates ---------------------------------------------------------------- */

typedef struct _StgUpdate StgUpdate;
typedef struct _StgSlaAsk StgSlaAsk;

/* An SLA-aware update's wait for the SLA of its next instance (sla.c);
 * memory only: a restarted update checks again. */
typedef struct
{
  guint idx1;       /* the work item waiting, +1; 0: none */
  gint64 since_ms;  /* when it began to wait */
  gboolean noted;   /* the wait is recorded as an event */
  guint timer;      /* the next look */
  StgSlaAsk *ask;   /* (nullable) the question to its coordinator under way */
  guint asked;      /* questions answered so far */
  gboolean allowed; /* the coordinator said it may go */
  gchar *said;      /* (nullable) the coordinator's last answer */
} StgSlaWait;

struct _StgUpdate
{
  StgEngine *engine;
  gint64 id;                 /* updates.id */
  gchar *uid;                /* JobUpdateKey.id */
  ApiJobKey *job;
  gint64 job_id;
  gchar *user;
  gint status;               /* JobUpdateStatus */
  gint64 created_ms;
  StgSettings s;

  GArray *work;              /* StgWork, ascending instance */
  GHashTable *position;      /* instance -> index in work, +1 */
  GArray *order;             /* guint indexes into work, the current direction's order */
  gboolean back;             /* rolling back */
  guint cursor;              /* order[cursor] is the next to start */
  guint batch_start;         /* batch strategies: the batch is order[batch_start..batch_end) */
  guint batch_end;
  guint batch_index;         /* batches completed in this direction */
  guint batch_size;          /* current batch size (queue: in-flight limit) */
  guint queue_done;          /* queue: completions since the limit last grew */
  gboolean batch_failed;     /* a failure in the current batch (no growth) */
  GHashTable *active;        /* index -> TRUE: in flight */
  guint n_done;              /* finished in this direction */
  guint n_failed;            /* failed in this direction */
  gint64 gate_ms;            /* no new batch before this */
  gint64 last_pulse_ms;
  gchar *last_failure;       /* why the last instance failed, for the update's message */
  gchar *rollback_cause;     /* (nullable) why it rolls back, for the message of a failed
                                rollback */
  GArray *gated;             /* (nullable) gint32: instances in their before gates, as the
                                stored progress says (recover.c applies it) */
  GArray *unchanged;         /* (nullable) gint32: instances failed in their before gates, as
                                the stored progress says (recover.c applies it) */
  gchar *gate_cause;         /* (nullable) "NAME said ANSWER": the gate that failed the last
                                failed instance, until check_failures has looked */

  GHashTable *healthy;       /* instance -> TRUE: the job's running, healthy instances
                                (kept only when min_in_service > 0) */
  guint pulse_timer;
  guint gate_timer;
  gboolean gating; /* between batches: s.gates[gates_passed..] still to pass */
  guint gates_passed;
  struct _StgGateRun *gate_run; /* (nullable) the gate being tried (running only) */
  StgSlaWait sla;               /* slaAware: the next instance's wait */
  gboolean dirty;            /* progress to write in this step */
  GHashTable *dirty_work;    /* index -> TRUE: rows to write in this step */

  GArray *surge;        /* StgSurge, ascending instance (surge.c) */
  gint32 surge_next;    /* the id the next surge instance takes */
  guint surge_failed;   /* surge instances failed in this direction */
  guint surge_timer;    /* maxInstanceStartMs of starting surge instances */
  guint deadline_timer; /* updateDeadlineMs */
};

/* A runtime action waiting for the step's commit. */
typedef enum { STG_ACT_APPLY, STG_ACT_KILL, STG_ACT_RESTART } StgActKind;

typedef struct
{
  StgActKind kind;
  gint64 job_id;
  gint32 instance;
  gint64 config;
  gchar *uid;               /* (nullable) the update asking */
} StgAct;

/* A watcher of changes (see stg_engine_add_watcher). */
typedef struct
{
  StgEngineWatchFunc func;
  gpointer data;
} StgWatcher;

/* What step.c needs from the files above it, set by engine.c, so that
 * step.c calls nothing above it (no cycle between the engine's files). */
typedef struct
{
  /* recover.c: reload update @uid after a step that was not stored */
  void (*reload) (StgEngine *engine, const gchar *uid);
  /* update.c: the runtime refused queued action @act */
  void (*act_failed) (StgEngine *engine, const StgAct *act, const GError *error);
  /* engine.c: a noted slot's news, inside the news step */
  void (*look_at) (StgEngine *engine, gint64 job_id, gint32 instance);
  /* engine.c: a job with noted slots, once per job in the news step */
  void (*job_news) (StgEngine *engine, gint64 job_id);
  /* engine.c: stg_engine_check_invariants, after every step where
   * invariants are checked (STG_CHECK_INVARIANTS) */
  void (*check_invariants) (StgEngine *engine);
  /* engine.c: update @u moves on as far as it can, in a step of its own
   * (a timer or an answer it waited for, outside steps) */
  void (*wake) (StgUpdate *u);
} StgEngineUp;

typedef struct _StgPlan StgPlan;

struct _StgEngine
{
  StgStore *store;          /* borrowed */
  StgClock *clock;          /* borrowed */
  StgRuntime *runtime;      /* borrowed, nullable */
  StgGateRunner *gates;     /* borrowed, nullable: HTTP and shell gates */
  StgNotifier *notifier;    /* borrowed, nullable: state changes, once committed */
  GPtrArray *notices;       /* (nullable) the step's notices, waiting for its commit */
  StgEngineLimits limits;

  GHashTable *updates;      /* uid -> StgUpdate* (active updates only; owned) */
  GHashTable *by_job;       /* job id (gint64*) -> StgUpdate* */
  GHashTable *plans;        /* uid -> StgPlan* (active plans only; owned; plan.c) */
  GArray *watchers;         /* StgWatcher */

  GHashTable *news;         /* StgSlotKey* set: slots to look at in the next step */
  GArray *starting;         /* new jobs' instances still to start (starts.c) */
  guint start_timer;
  GPtrArray *retries;       /* pending retries of updates whose step failed (recover.c) */
  guint news_timer;
  guint64 steps;            /* outermost steps ended */
  guint64 transitions;      /* instance events recorded (an instance's move in an update) */

  guint step_depth;
  GPtrArray *acts;          /* StgAct*, waiting for the commit */
  GPtrArray *touched;       /* StgUpdate* changed in this step */
  GPtrArray *announce;      /* StgEngineChange*: to tell watchers after the commit */
  gboolean step_failed;
  StgEngineUp up;

  GHashTable *leftover_surge; /* StgSlotKey* set: surge instances of ended updates still to
                                 remove (surge.c) */
  GHashTable *sla_busy;       /* SLA coordinators' URLs with a question under way (sla.c) */
  struct _StgReconcile *reconcile; /* (nullable) explicit batches still to go (reconcile.c) */
  GHashTable *drains;         /* host -> its DRAINING drain's memory (maintenance.c) */
  guint maintenance_timer;    /* the next pass over DRAINING hosts */
  const StgTiers *tiers;   /* borrowed: default_tiers or the daemon's */
  StgTiers *default_tiers; /* Aurora's default tiers */
  guint sidecar_timer;     /* the next look at the sidecar sets' updates (sidecar.c) */
};

/* ---- notices (notice.c) -------------------------------------------------------------- */

/* Tells the notifier of @notice in the step's transaction, before its
 * commit (at once outside a step). */
void stg_engine_notice (StgEngine *engine, const StgNotice *notice);

/* An update's move to @status from @previous (-1: it was just started). */
void stg_engine_notice_update (StgEngine *engine, const gchar *uid, const ApiJobKey *job,
                               gint status, gint previous, const gchar *user, const gchar *message);

/* The step's notices, in order, to the notifier: inside its transaction,
 * once the rest of it is written and before the commit. */
void stg_engine_notices_keep (StgEngine *engine);

/* The step ended: the notifier sends its notices when @committed, else
 * forgets them (those not handed over are dropped). */
void stg_engine_notices_end (StgEngine *engine, gboolean committed);

/* ---- steps and news (step.c) ------------------------------------------------------- */

void stg_engine_step_begin (StgEngine *engine);
/* Writes what the step changed in one transaction, then runs its runtime
 * actions. On failure the changed updates are reloaded from the store. */
gboolean stg_engine_step_end (StgEngine *engine, GError **error);

/* Marks a store failure inside a step: the step's end will not commit. */
void stg_engine_step_fail (StgEngine *engine, const GError *error);

/* Queues a runtime action for after the commit. */
void stg_engine_queue (StgEngine *engine, StgActKind kind, gint64 job_id, gint32 instance,
                       gint64 config, const gchar *uid);

/* Tells watchers about a job (and update, nullable) after the commit. */
void stg_engine_announce (StgEngine *engine, const ApiJobKey *job, const gchar *uid);

/* Tells watchers about plan @plan_uid after the commit. */
void stg_engine_announce_plan (StgEngine *engine, const gchar *plan_uid);

/* Marks @u's progress (and work item @idx's row) for writing with the step. */
void stg_update_touch (StgUpdate *u);
void stg_update_touch_work (StgUpdate *u, guint idx);

/* Writes @u's marked rows and progress now (inside the step's transaction). */
gboolean stg_update_write (StgUpdate *u, GError **error);

/* Queues slot (@job_id, @instance) to be looked at in the next step. News
 * that arrives in one main-loop iteration is handled in one step. */
void stg_engine_note (StgEngine *engine, gint64 job_id, gint32 instance);

/* An empty set of noted slots (StgSlotKey*, owned). */
GHashTable *stg_engine_news_new (void);

/* ---- instance gates (work_gates.c) ---------------------------------------------- */

/* Checks instanceGatesBefore/After of @in into @out (fields named after
 * @what). */
gboolean stg_work_gates_parse (const ApiJobUpdateSettings *in, const gchar *what, StgSettings *out,
                               GError **error);

/* Checks the templates of @s's instance gates against @task's ports. */
gboolean stg_work_gates_check_task (const StgSettings *s, const ApiTaskConfig *task,
                                    GError **error);

/* Begins the @phase (BEFORE or AFTER) gates of work item @idx (inside a
 * step): FALSE, and nothing begins, when the update has none or the
 * instance has nothing to check (before: it does not exist yet; after:
 * it is being removed). */
gboolean stg_work_gates_begin (StgUpdate *u, guint idx, StgWorkGates phase);

/* Moves on to the next gate of the phase after one passed: FALSE when
 * none is left (the phase passed). */
gboolean stg_work_gates_next (StgUpdate *u, guint idx);

/* Tries the current gate again when none is being tried (after a
 * restart, or a resume). */
void stg_work_gates_resume (StgUpdate *u, guint idx);

/* Stops @w's gates (an attempt in flight is dropped): phase NONE. */
void stg_work_gates_stop (StgWork *w);

/* The environment of @u's batch gates: STAGGER_JOB and the versions it
 * moves its instances from and to. */
gchar **stg_update_gates_environ (StgUpdate *u);

/* ---- one instance's work (work.c) ------------------------------------------- */

/* Begins work on work item @idx of @u in the current direction (inside a
 * step): the runtime is always told the target. */
void stg_work_start (StgUpdate *u, guint idx);

/* Looks at in-flight work item @idx and decides: done, failed, ask the
 * runtime again, or wait (inside a step). */
void stg_work_evaluate (StgUpdate *u, guint idx);

/* ---- updates (update.c) ----------------------------------------------------- */

StgUpdate *stg_update_new (StgEngine *engine);
void stg_update_free (StgUpdate *u);

/* Registers @u as active (takes it). */
void stg_engine_add_update (StgEngine *engine, StgUpdate *u);

/* Moves @u forward as far as it can now (inside a step). */
void stg_update_pump (StgUpdate *u);

/* Evaluates every in-flight instance, then pumps (inside a step). */
void stg_update_evaluate_all (StgUpdate *u);

/* Changes status, recording an event (inside a step). Terminal statuses
 * retire the update. */
void stg_update_transition (StgUpdate *u, gint to, const gchar *user, const gchar *message);

/* Starts rolling back (inside a step). */
void stg_update_start_rollback (StgUpdate *u, const gchar *user, const gchar *message);

/* Schedules the pulse-expiry timer from last_pulse_ms. */
void stg_update_arm_pulse (StgUpdate *u);

/* TRUE when a coordinated update's last pulse is too old. */
gboolean stg_update_pulse_expired (StgUpdate *u);

/* The runtime refused action @act of a step: a failure of its instance. */
void stg_update_act_failed (StgEngine *engine, const StgAct *act, const GError *error);

/* The active update of job @job_id, or NULL. */
StgUpdate *stg_engine_update_for_job (StgEngine *engine, gint64 job_id);

/* Rebuilds the order of the current direction from the work states. */
void stg_update_rebuild_order (StgUpdate *u);

/* The state machine's table (see update.c). */
gboolean stg_update_transition_allowed (gint from, gint to);

/* Runtime news for a slot (engine.c routes it here, inside a step). */
void stg_update_on_instance (StgUpdate *u, gint32 instance);

/* ---- starting an update (control.c) ------------------------------------------ */

/* The stored config equal to the one @request would store (checked as a
 * start checks it), or 0: none yet, or the request does not pass. */
gint64 stg_update_stored_config (StgEngine *engine, const ApiJobUpdateRequest *request);

/* Called inside the step that records a new update @uid, to write more in
 * the same transaction; FALSE (with @error) fails the step. */
typedef gboolean (*StgUpdateStartHook) (StgEngine *engine, const gchar *uid, gpointer data,
                                        GError **error);

/* stg_engine_start_update(), with @hook (nullable) run inside its step. */
ApiJobUpdateKey *stg_update_start (StgEngine *engine, const ApiJobUpdateRequest *request,
                                   const gchar *user, const gchar *message, StgUpdateStartHook hook,
                                   gpointer hook_data, ApiJobUpdateSummary **active_out,
                                   GError **error);

/* ---- starting new jobs (starts.c) ---------------------------------------------- */

/* Jobs with more instances than this start them this many at a time. */
#define STG_ENGINE_START_CHUNK 500

/* Asks the runtime to start instances 0..@count-1 of new job @job_id at
 * @config_id: at once for a small job, paced in chunks for a big one. */
void stg_engine_start_instances (StgEngine *engine, gint64 job_id, gint64 config_id, gint32 count);

/* Starts what job @job_id still has to start, now (before changing it). */
void stg_engine_finish_starts (StgEngine *engine, gint64 job_id);

/* engine->starting's constructor and destructor (timer included). */
GArray *stg_engine_starts_new (void);
void stg_engine_starts_free (StgEngine *engine);

/* ---- SLA policies (sla.c) ----------------------------------------------------- */

/* The SLA limits' defaults (Aurora's). */
void stg_sla_limits_init (StgEngineLimits *limits);

/* Checks @task's slaPolicy as Aurora does for a job of @instances
 * instances: one kind, a production tier (unless sla_non_production), a
 * count or percentage only for jobs of sla_min_instances or more that
 * still lets one instance go, a duration within sla_max_duration_secs, a
 * coordinator's http(s) URL. Field names are prefixed with @what. */
gboolean stg_sla_check_task (StgEngine *engine, const ApiTaskConfig *task, gint32 instances,
                             const gchar *what, GError **error);

/* The policy that guards @task's instances (a new reference): its own,
 * else @fallback (nullable), else for a production task Aurora's default
 * for the preferred tier (95 % over 1800 s); NULL: none. */
ApiSlaPolicy *stg_sla_policy_of (StgEngine *engine, const ApiTaskConfig *task,
                                 const ApiSlaPolicy *fallback);

/* Count or percentage policy @policy: whether instance @instance of job
 * @job_id may go down now, the instances in @leaving (nullable; ids as
 * pointers) going down too; *@why says how the count stands, and
 * *@recheck_ms (0: never) when time alone may change the answer. */
gboolean stg_sla_holds (StgEngine *engine, gint64 job_id, gint32 instance,
                        const ApiSlaPolicy *policy, gboolean production, GHashTable *leaving,
                        gchar **why, gint64 *recheck_ms);

/* An SLA-aware update: whether work item @idx may start now (its instance
 * goes down only within its SLA); when not, it waits (an event says so
 * once, a timer or an answer wakes the update). */
gboolean stg_update_sla_may_start (StgUpdate *u, guint idx);

/* Forgets @u's wait (its timer and question): the update stops, turns
 * or retires. */
void stg_update_sla_clear (StgUpdate *u);

/* ---- host maintenance (maintenance.c) ----------------------------------------- */

/* engine->drains and its timer. */
void stg_maintenance_init (StgEngine *engine);
void stg_maintenance_free (StgEngine *engine);

/* ---- minInService (service.c) ------------------------------------------------ */

/* Builds the healthy set when min_in_service needs it. */
void stg_update_track_health (StgUpdate *u);

/* Updates the healthy set with the runtime's view of @instance. */
void stg_update_note_health (StgUpdate *u, gint32 instance);

/* Whether starting work item @idx keeps min_in_service instances in
 * service and, for an SLA-aware update, its SLA (sla.c). */
gboolean stg_update_may_start (StgUpdate *u, guint idx);

/* ---- surge instances (surge.c) --------------------------------------------------- */

/* The id of the first surge instance of an update making @diff: past every
 * instance the job has or will have. */
gint32 stg_surge_first_id (const StgDiff *diff);

/* Brings @u's surge instances to what its current direction wants (inside
 * a step, running only): up to maxSurge instances of the direction's
 * config while it has instances to replace, none once its work is done.
 * TRUE when no surge instance is left, so the update may finish. */
gboolean stg_surge_pump (StgUpdate *u);

/* Looks at @instance if it is one of @u's surge instances (inside a step,
 * running only): a failure counted, the runtime asked again, one gone
 * forgotten. FALSE when it is not a surge instance. */
gboolean stg_surge_on_instance (StgUpdate *u, gint32 instance);

/* Looks at every surge instance of @u (resume, pulse, recovery). */
void stg_surge_evaluate_all (StgUpdate *u);

/* The update ends (inside the step that ends it): its surge instances are
 * removed and kept in engine->leftover_surge until they are gone. */
void stg_surge_release (StgUpdate *u);

/* Loads @u's surge instances from the store (recover.c). */
gboolean stg_surge_load (StgUpdate *u, GError **error);

/* After recovery: surge instances of updates that are no longer active are
 * removed (their rows forgotten once they are gone). */
gboolean stg_surge_recover_leftovers (StgEngine *engine, GError **error);

/* News of a slot (inside a step): a leftover surge instance now gone is
 * forgotten. */
void stg_surge_leftover_news (StgEngine *engine, gint64 job_id, gint32 instance);

/* ---- progress (progress.c) --------------------------------------------------- */

/* The progress JSON, and reading it back (recover.c). */
gchar *stg_update_progress_json (StgUpdate *u);
gboolean stg_update_progress_load (StgUpdate *u, const gchar *json, GError **error);

/* ---- recovery (recover.c) ---------------------------------------------------- */

/* Reloads every active update from the store and continues it. */
gboolean stg_updates_recover (StgEngine *engine, GError **error);

/* Replaces the in-memory update @uid with what the store has, and
 * continues it after STG_ENGINE_RETRY_MS. */
#define STG_ENGINE_RETRY_MS 1000
void stg_engine_reload_update (StgEngine *engine, const gchar *uid);

/* Cancels pending retries (engine teardown). */
void stg_engine_cancel_retries (StgEngine *engine);

/* An empty list of pending retries, for engine->retries. */
GPtrArray *stg_engine_retries_new (void);

/* ---- gates (gate.c) ------------------------------------------------------------ */

/* Checks @gate (field names prefixed with @what). */
gboolean stg_gate_check (const ApiRolloutGate *gate, const gchar *what, GError **error);

/* One attempt's result: @attempt counts from 1; @last when the gate has
 * passed or has no attempt left (the run then does nothing more). Called
 * outside steps; the owner may free the run inside. */
typedef void (*StgGateResultFunc) (gpointer data, guint attempt, gboolean passed, gboolean last,
                                   const gchar *message);

typedef struct _StgGateRun StgGateRun;

/* Starts trying @gate for a job of @role (the first attempt on the next
 * iteration); a shell gate gets @env (nullable, NAME=VALUE, copied). */
StgGateRun *stg_gate_run_start (StgEngine *engine, const ApiRolloutGate *gate, const gchar *role,
                                const gchar *const *env, StgGateResultFunc func, gpointer data);
/* Stops it (an attempt in flight is cancelled and never reported). */
void stg_gate_run_free (StgGateRun *run);

/* How many attempts @gate has: 1 + retries; 0 when it waits (waitSecs). */
guint stg_gate_attempts_allowed (const ApiRolloutGate *gate);

/* What a shell gate of job @job moving it from config version
 * @from_version to @to_version gets: STAGGER_JOB, STAGGER_FROM_VERSION,
 * STAGGER_TO_VERSION (a GStrv to add to with g_environ_setenv). */
gchar **stg_gate_environ (const ApiJobKey *job, gint from_version, gint to_version);

/* ---- rollout plans (plan.c) ------------------------------------------------------ */

/* engine->plans. */
void stg_plans_init (StgEngine *engine);
void stg_plans_free (StgEngine *engine);

/* A StgEngineWatchFunc (@data: the engine): a committed change of a job
 * wakes the plans with a stage on it. */
void stg_plans_on_change (gpointer data, const StgEngineChange *change);

/* Loads every active plan and continues it. */
gboolean stg_plans_recover (StgEngine *engine, GError **error);

/* The arrows of a plan's and a stage's machines (drawn in plan.c, the
 * tables in plan_state.c): TRUE when the status may go from @from to
 * another, @to. */
gboolean stg_plan_transition_allowed (gint from, gint to);
gboolean stg_stage_transition_allowed (gint from, gint to);

/* Asserts what holds of every plan in memory (plan.c's invariants). */
void stg_plans_check_invariants (StgEngine *engine);

/* ---- Aurora's task fields (task_fields.c) ------------------------------------------ */

/* Checks the fields of @task (a copy with its job key set) that Aurora's
 * scheduler interprets: the tier, a dedicated constraint, resources (one
 * value of each, no GPU), and the fields Stagger refuses by name (Mesos
 * fetcher URIs, Mesos container images and volumes, partition policies
 * other than reschedule at once, an SLA policy of no or several kinds).
 * Sets production, when @task has it, to the tier's. Field names are
 * prefixed with @what. */
gboolean stg_task_fields_check (StgEngine *engine, ApiTaskConfig *task, const gchar *what,
                                GError **error);

/* Fills in @task's tier (the default when unset) and production. */
void stg_task_fields_populate (StgEngine *engine, ApiTaskConfig *task);

/* Production: the task's own production when set (it follows the tier),
 * else its tier's (unknown tiers are not production). */
gboolean stg_task_is_production (StgEngine *engine, const ApiTaskConfig *task);

/* In a dedicated pool: the task has a "dedicated" constraint. */
gboolean stg_task_is_dedicated (const ApiTaskConfig *task);

/* ---- quotas (quota.c) -------------------------------------------------------------- */

/* An update being checked, not yet active: its job and its changes. */
typedef struct
{
  gint64 job_id;
  GArray *changes; /* StgChange */
} StgQuotaPending;

/* Refuses (INVALID, Aurora's "Insufficient resource quota: ...", naming
 * what is short) @count more instances of @task in job @key, when @task
 * is a production task of the shared pool and its role's quota cannot
 * hold them. */
gboolean stg_quota_check_add (StgEngine *engine, const ApiJobKey *key, const ApiTaskConfig *task,
                              gint32 count, GError **error);

/* Refuses the same way an update of job @job_id to @desired that makes
 * the changes of @diff. */
gboolean stg_quota_check_update (StgEngine *engine, const ApiJobKey *key, gint64 job_id,
                                 const ApiTaskConfig *desired, const StgDiff *diff, GError **error);

/* ---- checks (settings.c) and errors (errors.c) ---------------------------------- */

/* Checks @config for a job of @instances instances and returns a
 * normalized copy of its task config (job key and owner filled in), or
 * NULL with STG_ENGINE_ERROR_INVALID. */
ApiTaskConfig *stg_engine_check_task_config (StgEngine *engine, const ApiTaskConfig *config,
                                             const ApiJobKey *key, gint32 instances,
                                             const gchar *what, GError **error);

/* Turns a store or runtime error into an engine error, keeping the message. */
void stg_engine_wrap_error (GError **error);

/* Whether the change of @what @id ("update", its uid) from @from to @to
 * (status names) is @allowed by its machine's transition table. One it forbids
 * is a programming error: a g_critical, and the caller refuses it; in
 * builds that check invariants (STG_CHECK_INVARIANTS: configure
 * --enable-sanitizers) an abort, so every test proves the tables. */
gboolean stg_engine_transition_ok (gboolean allowed, const gchar *what, const gchar *id,
                                   const gchar *from, const gchar *to);

/* ---- sidecar sets' updates (sidecar.c) --------------------------------------------- */

/* Looks at the sidecar sets' updates on the next loop iteration (news of a
 * slot, a call, recovery). */
void stg_sidecars_news (StgEngine *engine);

/* Cancels the next look. */
void stg_sidecars_free (StgEngine *engine);

/* TRUE for the statuses of an update that goes, or went, back. */
gboolean stg_sidecar_status_goes_back (gint status);

/* Moves @row's update to @to (checked against the machine), saving the row
 * and an event (inside a transaction). */
gboolean stg_sidecar_transition (StgEngine *engine, StgSidecarSetRow *row, gint to,
                                 const gchar *user, const gchar *message, GError **error);

/* Starts the update of @row to its new @version, from the version new
 * pods get now (inside a transaction). */
gboolean stg_sidecar_begin (StgEngine *engine, StgSidecarSetRow *row, gint version,
                            const gchar *user, const gchar *message, GError **error);

/* What the runtime sees of the instances carrying sidecar @name (empty
 * without a runtime that runs pods). */
GArray *stg_sidecar_observe (StgEngine *engine, const gchar *name);

/* How many of a set's newest events its details show. */
guint stg_sidecar_events_shown (void);
