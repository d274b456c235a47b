/* engine_private.h: the engine's internal model, shared by its files:
 * StgEngine itself, and what engine.c wires together: starting new jobs
 * (starts.c), recovery (recover.c), host maintenance (maintenance.c), and
 * the errors every file makes (errors.c). Each subsystem's types and calls
 * are in a header of its own: step_private.h (steps), notice_private.h,
 * settings_private.h (settings and the diff), task_private.h (task fields
 * and quotas), update_private.h (updates and their work items, with
 * work_state.h), surge_private.h, sla_private.h, gate_private.h,
 * plan_private.h, sidecar_private.h, reconcile_private.h.
 * Not for use outside src/engine/. Main-loop thread only.
 *
 * Every change happens inside a step (stg_engine_step_begin/_end): the step
 * writes the changed rows, events and progress in one store transaction, and
 * only after the commit tells the runtime what to do.
 */
#pragma once

#include "engine/engine.h"
#include "engine/step_private.h"

/* A watcher of changes (see stg_engine_add_watcher). */
typedef struct
{
  StgEngineWatchFunc func;
  gpointer data;
} StgWatcher;

typedef struct _StgPlan StgPlan;
typedef struct _StgMaintenance StgMaintenance;

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
  GHashTable *measured;     /* (nullable) job key text -> each job's measured times (rehearsal.c) */
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
  StgMaintenance *maintenance;     /* host maintenance's memory (maintenance.c) */
  const StgTiers *tiers;   /* borrowed: default_tiers or the daemon's */
  StgTiers *default_tiers; /* Aurora's default tiers */
  guint sidecar_timer;     /* the next look at the sidecar sets' updates (sidecar.c) */
};

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

/* ---- host maintenance (maintenance.c) ----------------------------------------- */

/* engine->drains and its timer. */
void stg_maintenance_init (StgEngine *engine);
void stg_maintenance_free (StgEngine *engine);

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

/* ---- errors (errors.c) ----------------------------------------------------------- */

/* Turns a store or runtime error into an engine error, keeping the message. */
void stg_engine_wrap_error (GError **error);

/* Whether the change of @what @id ("update", its uid) from @from to @to
 * (status names) is @allowed by its machine's transition table. One it forbids
 * is a programming error: a g_critical, and the caller refuses it; in
 * builds that check invariants (STG_CHECK_INVARIANTS: configure
 * --enable-sanitizers) an abort, so every test proves the tables. */
gboolean stg_engine_transition_ok (gboolean allowed, const gchar *what, const gchar *id,
                                   const gchar *from, const gchar *to);
