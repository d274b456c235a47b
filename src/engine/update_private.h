/* update_private.h: an active update in memory (StgUpdate) and what its
 * files offer each other: the state machine and its pump (update.c), one
 * instance's work (work.c) and its instance gates (work_gates.c), starting
 * an update (control.c), minInService (service.c) and its progress
 * (progress.c). The work items' states are work_state.h's. Not for use
 * outside src/engine/. Main-loop thread only.
 *
 * An active update lives in memory as a StgUpdate: its settings, one
 * StgWork per instance it changes (ascending instance id), the order of the
 * current direction (forward: every work item ascending; back: the touched
 * ones descending), a cursor into that order, and the batch in flight.
 * Terminal updates are not kept in memory; the store has them.
 */
#pragma once

#include "engine/settings_private.h"
#include "engine/sla_private.h"
#include "engine/step_private.h"
#include "engine/surge_private.h"
#include "engine/work_state.h"

typedef struct _StgUpdate StgUpdate;

struct _StgUpdate
{
  StgEngine *engine;
  gint64 id;  /* updates.id */
  gchar *uid; /* JobUpdateKey.id */
  ApiJobKey *job;
  gint64 job_id;
  gchar *user;
  gint status; /* JobUpdateStatus */
  gint64 created_ms;
  StgSettings s;

  GArray *work;         /* StgWork, ascending instance */
  GHashTable *position; /* instance -> index in work, +1 */
  GArray *order;        /* guint indexes into work, the current direction's order */
  gboolean back;        /* rolling back */
  guint cursor;         /* order[cursor] is the next to start */
  guint batch_start;    /* batch strategies: the batch is order[batch_start..batch_end) */
  guint batch_end;
  guint batch_index;     /* batches completed in this direction */
  guint batch_size;      /* current batch size (queue: in-flight limit) */
  guint queue_done;      /* queue: completions since the limit last grew */
  gboolean batch_failed; /* a failure in the current batch (no growth) */
  GHashTable *active;    /* index -> TRUE: in flight */
  guint n_done;          /* finished in this direction */
  guint n_failed;        /* failed in this direction */
  gint64 gate_ms;        /* no new batch before this */
  gint64 last_pulse_ms;
  gint64 predicted_ms;   /* its rehearsal's prediction when it started; -1: none */
  gchar *last_failure;   /* why the last instance failed, for the update's message */
  gchar *rollback_cause; /* (nullable) why it rolls back, for the message of a failed
                            rollback */
  GArray *gated;         /* (nullable) gint32: instances in their before gates, as the
                            stored progress says (recover.c applies it) */
  GArray *unchanged;     /* (nullable) gint32: instances failed in their before gates, as
                            the stored progress says (recover.c applies it) */
  gchar *gate_cause;     /* (nullable) "NAME said ANSWER": the gate that failed the last
                            failed instance, until check_failures has looked */

  GHashTable *healthy; /* instance -> TRUE: the job's running, healthy instances
                          (kept only when min_in_service > 0) */
  guint pulse_timer;
  guint gate_timer;
  gboolean gating; /* between batches: s.gates[gates_passed..] still to pass */
  guint gates_passed;
  struct _StgGateRun *gate_run; /* (nullable) the gate being tried (running only) */
  StgSlaWait sla;               /* slaAware: the next instance's wait */
  gboolean dirty;               /* progress to write in this step */
  GHashTable *dirty_work;       /* index -> TRUE: rows to write in this step */

  StgSurges surge;      /* its surge instances (surge.c) */
  guint deadline_timer; /* updateDeadlineMs */
};

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

/* The work-item machine's table (work_state.h draws it). */
gboolean stg_work_transition_allowed (gint from, gint to);

/* Moves work item @w of @u to state @to, when the table allows it (a
 * refused move is reported: stg_engine_transition_ok). */
void stg_work_set_state (StgUpdate *u, StgWork *w, gint to);

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

/* ---- minInService (service.c) ------------------------------------------------ */

/* Builds the healthy set when min_in_service needs it. */
void stg_update_track_health (StgUpdate *u);

/* Updates the healthy set with the runtime's view of @instance. */
void stg_update_note_health (StgUpdate *u, gint32 instance);

/* Whether starting work item @idx keeps min_in_service instances in
 * service and, for an SLA-aware update, its SLA (sla.c). */
gboolean stg_update_may_start (StgUpdate *u, guint idx);

/* ---- progress (progress.c) --------------------------------------------------- */

/* The progress JSON, and reading it back (recover.c). */
gchar *stg_update_progress_json (StgUpdate *u);
gboolean stg_update_progress_load (StgUpdate *u, const gchar *json, GError **error);
/* The predicted duration stored progress @json (nullable) keeps; -1: none. */
gint64 stg_update_progress_predicted (const gchar *json);
