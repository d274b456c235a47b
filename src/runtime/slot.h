/* slot.h: the instance slot every runtime keeps, and the table of them.
 *
 * A slot is one instance of one job (StgSlotKey): what it should run, what
 * observe reports of it, its failed runs and its run numbers, and the
 * store rows behind them (its instance row's facts and its TaskEvents). A
 * runtime's own slot type begins with a StgSlot (its member `base`) and
 * adds only what is its own: processes and sockets for the local runtime,
 * a container and a host for the fleet runtime, timers for the scripted
 * runtime of the engine tests. State every runtime needs per instance
 * (a task runner's, say) belongs in StgSlot.
 *
 * StgSlots is a runtime's table of slots: it finds a slot by its key, makes
 * it from the store (the job's key; the instance row's wanted config,
 * failures and run number), and frees it. A slot's phase, config and
 * status (what observe reports) change through stg_slot_set_phase, which
 * records them and announces the change, or, for what a restarted daemon
 * finds, stg_slot_assume. Calls the store and runtime.c. Main-loop thread
 * only.
 */
#pragma once

#include <gio/gio.h>

#include "common/clock.h"
#include "runtime/executor.h"
#include "runtime/runtime.h"
#include "store/store.h"

G_BEGIN_DECLS

typedef struct _StgSlots StgSlots;

typedef struct
{
  StgSlots *table;         /* the table it belongs to */
  StgSlotKey key;          /* (job row id, instance) */
  ApiJobKey *job;          /* the job's key, for messages and labels */
  gint64 want;             /* the config it should run; 0: none (being removed) */
  gint64 run_id;           /* the newest run's number: grows with each start */
  StgTaskPhase phase;      /* what observe reports (stg_slot_set_phase) */
  gint64 config_id;        /* ... the config of what runs or starts */
  gint status;             /* ... the ScheduleStatus shown */
  gint64 phase_since_ms;   /* ... when the phase was last set */
  gint64 healthy_since_ms; /* ... when it last became healthy */
  guint32 failures;        /* ... failed runs (stg_slot_count_failure) */
  gchar *cause;            /* ... why its last run failed, or what it waits on, in words
                            * (nullable); cleared once it is healthy */
  gint64 cause_ms;         /* ... when the cause was given */
  gint backoff_ms;         /* the wait before a start after a failure; 0: none yet */
  gint64 steady_from_ms;   /* when the run now serving became healthy; 0: none since a failure */
  gint64 post_owed;        /* the config whose post_update hook is owed once healthy; 0: none */
  GCancellable *cancel;    /* cancelled when the slot is freed */
} StgSlot;

/* What a runtime's slots are: their size and what the runtime adds. */
typedef struct
{
  const gchar *name; /* in log lines ("runtime", "fleet") */
  gsize size;        /* of the runtime's slot type, which begins with a StgSlot */
  /* (nullable) Sets up the runtime's part of a slot just made. */
  void (*init) (StgSlot *slot);
  /* (nullable) Frees the runtime's part of a slot being freed. */
  void (*clear) (StgSlot *slot);
  /* (nullable) Fills in the facts that are the runtime's own (pids,
   * runs); NULL: the slot's phases are not recorded in the store at all. */
  void (*facts) (const StgSlot *slot, StgInstanceRow *row);
  /* (nullable) Announces a change of a slot (also of one just removed);
   * NULL: stg_runtime_notify_later. */
  void (*announce) (StgRuntime *runtime, gint64 job_id, gint32 instance);
} StgSlotClass;

/* A table of the slots of @runtime (borrowed, like @store and @clock). */
StgSlots *stg_slots_new (StgRuntime *runtime, StgStore *store, StgClock *clock,
                         const StgSlotClass *klass);
/* Frees the table and every slot in it. */
void stg_slots_free (StgSlots *slots);

/* The runtime the slots belong to. */
StgRuntime *stg_slots_runtime (StgSlots *slots);

/* The slot (job @job_id, @instance), or NULL when there is none. */
StgSlot *stg_slots_find (StgSlots *slots, gint64 job_id, gint32 instance);

/* The slot, made from the store when there is none yet; NULL when the
 * store has no job @job_id (then STG_RUNTIME_ERROR_NOT_FOUND in @error). */
StgSlot *stg_slots_get (StgSlots *slots, gint64 job_id, gint32 instance, GError **error);

/* Iterates over the slots (values: StgSlot*, keys: StgSlotKey*). */
void stg_slots_iter_init (StgSlots *slots, GHashTableIter *it);

/* The other slots of @slot's job (element-type StgSlot*, borrowed), in no
 * order. */
GPtrArray *stg_slots_job_others (StgSlots *slots, const StgSlot *slot);

/* The slot is gone: its instance row is deleted (its task kept as ended
 * for the task queries), the slot freed, and its absence announced. */
void stg_slot_remove (StgSlot *slot);

/* Sets what observe reports, records the slot's facts and a TaskEvent with
 * @message (nullable), and announces the change. The phase's time is now,
 * unless the phase and status stay as they were (kept), or it is RUNNING
 * and healthy_since_ms is set (that time: an adopted instance keeps the
 * time it became healthy). */
void stg_slot_set_phase (StgSlot *slot, StgTaskPhase phase, gint64 config_id, gint status,
                         const gchar *message);

/* Records @message as an event of the slot, its phase unchanged. */
void stg_slot_note (StgSlot *slot, const gchar *message);

/* The phase and status a restarted daemon finds the slot in, taken on
 * without an event or an announcement. */
void stg_slot_assume (StgSlot *slot, StgTaskPhase phase, gint status);

/* The slot became healthy at @since_ms running @config_id: RUNNING,
 * recorded with @message; the back-off starts again from the beginning,
 * and the cause is over (the events keep it). */
void stg_slot_healthy (StgSlot *slot, gint64 config_id, gint64 since_ms, const gchar *message);

/* Records the slot's facts without an event (the intent, written before
 * acting on it). */
void stg_slot_save (StgSlot *slot);

/* Why the slot's last run failed, or what it waits on, in words (copied;
 * nullable), as of now. */
void stg_slot_set_cause (StgSlot *slot, const gchar *why);

/* Counts a failed run of the slot (recorded with the next phase) and,
 * when @why is not NULL, says why it failed. */
void stg_slot_count_failure (StgSlot *slot, const gchar *why);

/* Whether a failed run of @config is followed by another, as Aurora
 * reschedules a task: a service always; another task only while its
 * failures (counted already, the last one too) stay under maxTaskFailures,
 * so that 1 runs it once; -1 without end. */
gboolean stg_slot_runs_again (const StgSlot *slot, const ApiTaskConfig *config);

#define STG_SLOT_BACKOFF_FIRST_MS 1000
/* A run healthy this long before it fails starts the back-off afresh
 * (Aurora's flapping_task_threshold, 5 minutes). */
#define STG_SLOT_STEADY_MS (5 * 60 * 1000)

/* The wait before the next start after a failure: from
 * STG_SLOT_BACKOFF_FIRST_MS, doubled each time up to @max_ms, also when
 * each run became healthy and failed soon after (a flapping instance, as
 * Aurora calls it); afresh after a run that served STG_SLOT_STEADY_MS. */
gint stg_slot_backoff (StgSlot *slot, gint max_ms);

/* The template variables of @slot's instance in cluster @cluster, at
 * config version @version, with its named @ports (all borrowed). */
StgTemplateVars stg_slot_template_vars (const StgSlot *slot, const gchar *cluster, gint version,
                                        GHashTable *ports);

/* What observe reports of @slot (nullable: ABSENT). */
void stg_slot_observe (const StgSlot *slot, StgTaskObservation *out);

G_END_DECLS
