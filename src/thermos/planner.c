/* planner.c: one plan of a Thermos task (see planner.h for the states and
 * the rules). Pure logic over the task model; calls GLib only; one thread
 * at a time.
 */
#include "config.h"

#include "thermos/planner.h"

typedef struct
{
  gboolean in_plan;
  StgThermosPlanState state;
  guint runs; /* successes, failures and losses */
  guint failures;
  gboolean ended; /* a run has ended: last_end holds when */
  gdouble last_end;
} Entry;

struct _StgThermosPlanner
{
  const StgThermosTask *task;
  Entry *entries; /* one per process of the task */
  guint n;
};

StgThermosPlanner *
stg_thermos_planner_new (const StgThermosTask *task, gboolean final)
{
  StgThermosPlanner *planner = g_new0 (StgThermosPlanner, 1);

  planner->task = task;
  planner->n = task->processes->len;
  planner->entries = g_new0 (Entry, planner->n);
  for (guint i = 0; i < planner->n; i++)
    planner->entries[i].in_plan = stg_thermos_task_process (task, i)->final == final;
  return planner;
}

void
stg_thermos_planner_free (StgThermosPlanner *planner)
{
  if (planner == NULL)
    return;
  g_free (planner->entries);
  g_free (planner);
}

gboolean
stg_thermos_planner_has (const StgThermosPlanner *planner, guint index)
{
  return index < planner->n && planner->entries[index].in_plan;
}

StgThermosPlanState
stg_thermos_planner_state (const StgThermosPlanner *planner, guint index)
{
  g_return_val_if_fail (index < planner->n, STG_THERMOS_PLAN_IDLE);
  return planner->entries[index].state;
}

/* IDLE, in the plan, and every process it waits for FINISHED. */
static gboolean
startable (const StgThermosPlanner *planner, guint i)
{
  const Entry *e = &planner->entries[i];
  GArray *after = stg_thermos_task_process (planner->task, i)->after;

  if (!e->in_plan || e->state != STG_THERMOS_PLAN_IDLE)
    return FALSE;
  for (guint k = 0; k < after->len; k++)
    if (planner->entries[g_array_index (after, guint, k)].state != STG_THERMOS_PLAN_FINISHED)
      return FALSE;
  return TRUE;
}

/* Seconds until process @i's min_duration has passed (<= 0: it has). */
static gdouble
wait_of (const StgThermosPlanner *planner, guint i, gdouble now)
{
  const Entry *e = &planner->entries[i];

  if (!e->ended)
    return 0;
  return stg_thermos_task_process (planner->task, i)->min_duration - (now - e->last_end);
}

GArray *
stg_thermos_planner_ready (const StgThermosPlanner *planner, gdouble now)
{
  GArray *ready = g_array_new (FALSE, FALSE, sizeof (guint));

  for (guint i = 0; i < planner->n; i++)
    if (startable (planner, i) && wait_of (planner, i, now) <= 0)
      g_array_append_val (ready, i);
  return ready;
}

gdouble
stg_thermos_planner_next_wait (const StgThermosPlanner *planner, gdouble now)
{
  gdouble next = -1;

  for (guint i = 0; i < planner->n; i++)
    {
      gdouble w = startable (planner, i) ? wait_of (planner, i, now) : 0;
      if (w > 0 && (next < 0 || w < next))
        next = w;
    }
  return next;
}

void
stg_thermos_planner_start (StgThermosPlanner *planner, guint index)
{
  g_return_if_fail (index < planner->n && startable (planner, index));
  planner->entries[index].state = STG_THERMOS_PLAN_RUNNING;
}

void
stg_thermos_planner_end (StgThermosPlanner *planner, guint index, StgThermosRunEnd end, gdouble now)
{
  g_return_if_fail (index < planner->n);
  Entry *e = &planner->entries[index];
  const StgThermosProcess *p = stg_thermos_task_process (planner->task, index);

  g_return_if_fail (e->state == STG_THERMOS_PLAN_RUNNING);
  e->ended = TRUE;
  e->last_end = now;
  e->runs++;
  if (end == STG_THERMOS_RUN_FAILED)
    e->failures++;
  if (e->runs >= STG_THERMOS_RUN_LIMIT)
    e->state = STG_THERMOS_PLAN_FAILED;
  else if (end == STG_THERMOS_RUN_SUCCEEDED)
    e->state = p->daemon ? STG_THERMOS_PLAN_IDLE : STG_THERMOS_PLAN_FINISHED;
  else if (end == STG_THERMOS_RUN_LOST)
    e->state = STG_THERMOS_PLAN_IDLE;
  else if (p->max_failures == 0 || e->failures < (guint) p->max_failures)
    e->state = STG_THERMOS_PLAN_IDLE;
  else
    e->state = p->ephemeral ? STG_THERMOS_PLAN_FINISHED : STG_THERMOS_PLAN_FAILED;
}

static guint
count (const StgThermosPlanner *planner, StgThermosPlanState state)
{
  guint n = 0;

  for (guint i = 0; i < planner->n; i++)
    if (planner->entries[i].in_plan && planner->entries[i].state == state)
      n++;
  return n;
}

guint
stg_thermos_planner_running (const StgThermosPlanner *planner)
{
  return count (planner, STG_THERMOS_PLAN_RUNNING);
}

guint
stg_thermos_planner_running_required (const StgThermosPlanner *planner)
{
  guint n = 0;

  for (guint i = 0; i < planner->n; i++)
    if (planner->entries[i].in_plan && planner->entries[i].state == STG_THERMOS_PLAN_RUNNING &&
        !stg_thermos_task_process (planner->task, i)->ephemeral)
      n++;
  return n;
}

guint
stg_thermos_planner_failed (const StgThermosPlanner *planner)
{
  return count (planner, STG_THERMOS_PLAN_FAILED);
}

gboolean
stg_thermos_planner_complete (const StgThermosPlanner *planner)
{
  for (guint i = 0; i < planner->n; i++)
    {
      const Entry *e = &planner->entries[i];
      if (e->in_plan && !stg_thermos_task_process (planner->task, i)->ephemeral &&
          e->state != STG_THERMOS_PLAN_FINISHED && e->state != STG_THERMOS_PLAN_FAILED)
        return FALSE;
    }
  return TRUE;
}

gboolean
stg_thermos_planner_deadlocked (const StgThermosPlanner *planner)
{
  if (stg_thermos_planner_complete (planner) || stg_thermos_planner_running (planner) > 0)
    return FALSE;
  for (guint i = 0; i < planner->n; i++)
    if (startable (planner, i))
      return FALSE;
  return TRUE;
}

gboolean
stg_thermos_planner_healthy (const StgThermosPlanner *planner, gint max_failures)
{
  return !stg_thermos_planner_deadlocked (planner) &&
         (max_failures == 0 || stg_thermos_planner_failed (planner) < (guint) max_failures);
}

void
stg_thermos_planner_check_invariants (const StgThermosPlanner *planner)
{
  for (guint i = 0; i < planner->n; i++)
    {
      const Entry *e = &planner->entries[i];
      GArray *after = stg_thermos_task_process (planner->task, i)->after;
      g_assert (e->in_plan || e->state == STG_THERMOS_PLAN_IDLE);
      g_assert (e->failures <= e->runs && e->runs <= STG_THERMOS_RUN_LIMIT);
      for (guint k = 0; e->state == STG_THERMOS_PLAN_RUNNING && k < after->len; k++)
        g_assert (planner->entries[g_array_index (after, guint, k)].state ==
                  STG_THERMOS_PLAN_FINISHED);
    }
}
