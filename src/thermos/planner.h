/* planner.h: which processes of a Thermos task may run next, as Thermos's
 * TaskPlanner decides it.
 *
 * A task has two plans: its ordinary processes and its final ones. Within a
 * plan each process moves between four states:
 *
 *       .------ success of a daemon, failure under max_failures, loss ----.
 *       v                                                                 |
 *    IDLE --[stg_thermos_planner_start]--> RUNNING --[..._end]------------+
 *                                             |--> FINISHED  success (not a daemon),
 *                                             |              or an ephemeral's last failure
 *                                             `--> FAILED    the last failure, or the
 *                                                            STG_THERMOS_RUN_LIMIT-th run
 *
 * An IDLE process is ready when every process it waits for (its order
 * constraints) is FINISHED and min_duration seconds have passed since its
 * last run ended. The plan is complete when every process that is not
 * ephemeral is FINISHED or FAILED, and deadlocked when it is not complete
 * and nothing runs or can ever become ready. Time is given by the caller
 * (seconds on a monotonic clock), so the planner is pure logic. Part of
 * libstg_thermos; one thread at a time.
 */
#pragma once

#include "thermos/task.h"

G_BEGIN_DECLS

typedef enum
{
  STG_THERMOS_PLAN_IDLE,
  STG_THERMOS_PLAN_RUNNING,
  STG_THERMOS_PLAN_FINISHED,
  STG_THERMOS_PLAN_FAILED,
} StgThermosPlanState;

typedef enum
{
  STG_THERMOS_RUN_SUCCEEDED, /* exited 0 */
  STG_THERMOS_RUN_FAILED,    /* exited with another status */
  STG_THERMOS_RUN_LOST,      /* killed by a signal: run again, not counted as a failure */
} StgThermosRunEnd;

typedef struct _StgThermosPlanner StgThermosPlanner;

/* The plan of @task's final processes (@final) or of its ordinary ones.
 * @task must outlive the planner. */
StgThermosPlanner *stg_thermos_planner_new (const StgThermosTask *task, gboolean final);
void stg_thermos_planner_free (StgThermosPlanner *planner);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgThermosPlanner, stg_thermos_planner_free)

/* Whether process @index (of the task) belongs to this plan. */
gboolean stg_thermos_planner_has (const StgThermosPlanner *planner, guint index);
StgThermosPlanState stg_thermos_planner_state (const StgThermosPlanner *planner, guint index);

/* The processes that may start at @now, in the task's order (guint task
 * indices; a new array). The caller applies max_concurrency. */
GArray *stg_thermos_planner_ready (const StgThermosPlanner *planner, gdouble now);

/* Seconds from @now until a waiting process becomes ready (its
 * min_duration has passed), or a negative number when none waits. */
gdouble stg_thermos_planner_next_wait (const StgThermosPlanner *planner, gdouble now);

void stg_thermos_planner_start (StgThermosPlanner *planner, guint index);
void stg_thermos_planner_end (StgThermosPlanner *planner, guint index, StgThermosRunEnd end,
                              gdouble now);

guint stg_thermos_planner_running (const StgThermosPlanner *planner);
/* The running processes the plan's completion waits for: those that are
 * not ephemeral. */
guint stg_thermos_planner_running_required (const StgThermosPlanner *planner);
guint stg_thermos_planner_failed (const StgThermosPlanner *planner);
gboolean stg_thermos_planner_complete (const StgThermosPlanner *planner);
gboolean stg_thermos_planner_deadlocked (const StgThermosPlanner *planner);

/* Thermos's health of a plan: not deadlocked, and fewer failed processes
 * than @max_failures (0: any number). */
gboolean stg_thermos_planner_healthy (const StgThermosPlanner *planner, gint max_failures);

/* Asserts the planner's invariants (for tests): only the plan's processes
 * have a state other than IDLE, and a RUNNING process's predecessors are
 * FINISHED. */
void stg_thermos_planner_check_invariants (const StgThermosPlanner *planner);

G_END_DECLS
