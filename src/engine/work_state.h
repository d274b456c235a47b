/* work_state.h: one instance's work in an update (StgWork): its states
 * and, within them, its instance gates' phases, drawn with the function
 * behind each arrow and what holds in each. work.c, work_gates.c and
 * update.c move them; update_private.h includes this. Not for use outside
 * src/engine/. Main-loop thread only.
 */
#pragma once

#include <glib.h>

/* update_instances.state: one instance's work, forward states then the
 * same four for rollback. Each arrow names the function that takes it
 * (work.c's, but stg_update_start_rollback in update.c); every move goes
 * through stg_work_set_state, which refuses one the table
 * (stg_work_transition_allowed) does not hold:
 *
 *   PENDING --[start]--> UPDATING --[finish_work: ok]--> UPDATED
 *                            |
 *                            +--[finish_work: failed (count_failure)]--> UPDATE_FAILED
 *
 *   UPDATING, UPDATED, UPDATE_FAILED
 *        --[stg_update_start_rollback]--> ROLLBACK_PENDING   (PENDING stays PENDING)
 *   UPDATING in its before gates --[stg_update_start_rollback]--> PENDING
 *   UPDATE_FAILED in its before gates (unchanged): stays UPDATE_FAILED
 *
 *   ROLLBACK_PENDING --[start]--> ROLLING_BACK --[finish_work: ok]--> ROLLED_BACK
 *                                      |
 *                                      +--[finish_work: failed]--> ROLLBACK_FAILED
 *
 * Inside UPDATING and ROLLING_BACK, the instance gates
 * (instanceGatesBefore/After) add a phase of their own (StgWork.gates,
 * work_gates.c's), in both directions:
 *
 *   start --[stg_work_gates_begin: before gates, an instance that exists]--> BEFORE
 *   BEFORE --[gates_hold: all passed]--> NONE, the runtime asked (not before)
 *   BEFORE --[gates_hold: one failed, counted, tolerated]--> BEFORE again
 *   NONE --[stg_work_evaluate: healthy for the watch time, after gates]--> AFTER
 *   AFTER --[gates_hold: all passed]--> NONE, finish_work: ok
 *   AFTER --[gates_hold: one failed, counted, tolerated]--> RESTARTED (the instance
 *             restarted) --[stg_work_evaluate: a run healthy since, for the watch time]--> AFTER
 *   AFTER, RESTARTED --[stg_work_evaluate: a failure of the slot]--> NONE
 *   any --[count_failure: too many]--> finish_work: failed (from BEFORE: unchanged, the
 *             runtime never asked, so stg_update_start_rollback leaves it be)
 *
 * What holds in each state:
 *   PENDING            not started: the runtime was never asked; the slot
 *                      has from_config (or is absent when from_config is 0).
 *   UPDATING           in update->active; started_ms is this attempt's start;
 *                      seen_failures is the runtime's failure count already
 *                      counted; a watch or deadline timer may be armed.
 *   UPDATED            to_config has run healthy for the watch time (or the
 *                      slot is gone when to_config is 0); counted in n_done.
 *   UPDATE_FAILED      failures > maxPerInstanceFailures; counted in n_failed;
 *                      unchanged when its before gates failed it (the slot
 *                      still has from_config).
 *   ROLLBACK_PENDING   touched forward, to be moved back to from_config; in
 *                      the back order (descending instance), not started.
 *   ROLLING_BACK       as UPDATING, with from_config as the target.
 *   ROLLED_BACK        from_config is back and healthy (or the slot is gone
 *                      when from_config is 0); counted in n_done.
 *   ROLLBACK_FAILED    as UPDATE_FAILED, in the back direction.
 */
typedef enum
{
  STG_WORK_PENDING = 0,
  STG_WORK_UPDATING = 1,
  STG_WORK_UPDATED = 2,
  STG_WORK_UPDATE_FAILED = 3,
  STG_WORK_ROLLBACK_PENDING = 4,
  STG_WORK_ROLLING_BACK = 5,
  STG_WORK_ROLLED_BACK = 6,
  STG_WORK_ROLLBACK_FAILED = 7,
} StgWorkState;

typedef struct
{
  gint32 instance;
  gint64 from_config;   /* 0: absent before the update */
  gint64 to_config;     /* 0: absent after it */
  gint state;           /* StgWorkState */
  gint32 failures;      /* failures counted in the current direction */
  gint64 started_ms;    /* when the current attempt began (deadline) */
  gint64 seen_failures; /* the runtime's failure count already accounted for */
  /* memory only */
  gint batch; /* the update's batch its current attempt began in; -1: not known (begun
               * before a restart: the update's current batch is taken) */
  struct _StgUpdate *owner;
  guint timer;    /* watch or deadline */
  gboolean asked; /* the runtime was asked to act in this direction */
  /* Failed in its before gates: the runtime never heard of the change, so
   * a rollback leaves it be (stored with the progress). */
  gboolean unchanged;
  /* StgWorkGates: the instance gates' phase (BEFORE: stored with the
   * progress, so a restart tries them again). */
  gint gates;
  guint gates_passed;           /* of the phase's gates */
  gint gate_verdict;            /* the current gate: 0 trying, 1 passed, -1 failed (last attempt) */
  gchar *gate_message;          /* (nullable) its last attempt's message */
  gchar *gate_said;             /* (nullable) "NAME said ANSWER" of its last attempt */
  struct _StgGateRun *gate_run; /* (nullable) */
} StgWork;

typedef enum
{
  STG_WORK_GATES_NONE = 0,
  STG_WORK_GATES_BEFORE,
  STG_WORK_GATES_AFTER,
  STG_WORK_GATES_RESTARTED, /* an after gate failed: the instance was restarted, and only a
                               run healthy since counts */
} StgWorkGates;
