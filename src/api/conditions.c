/* conditions.c: Progressing, Complete and Failed of an update, a plan or a
 * stage, worked out from its status changes, oldest first:
 *
 *   Progressing  True while it moves: an update ROLLING_FORWARD or
 *                ROLLING_BACK; a plan PENDING, WAITING_FOR_GATE,
 *                ROLLING_FORWARD or ROLLING_BACK; a stage WAITING_FOR_GATE,
 *                ROLLING_FORWARD or ROLLING_BACK. Its reason and message
 *                are those of the newest change.
 *   Complete     True once an update is ROLLED_FORWARD, a plan or a stage
 *                DONE (False again once it goes back).
 *   Failed       True from the first change whose reason is a failure
 *                (FailureThresholdReached, GateFailed, Failed, Error,
 *                UpdateFailed, UpdateRefused, StageFailed, RollbackFailed)
 *                on; its reason and message are those of the newest such
 *                change.
 *
 * A condition's lastTransitionTimeMs is when its status last changed (the
 * first change's time at first). An update's reason codes come from
 * engine/reasons.c; a plan's and a stage's were recorded with them (the
 * status's own when none was). Calls the engine's reason codes only.
 * Main-loop thread only.
 */
#include "config.h"

#include "api/conditions.h"
#include "engine/engine.h"

#define U(x) API_JOB_UPDATE_STATUS_##x
#define R(x) API_ROLLOUT_STATUS_##x

static const gchar *const failures[] = {
  STG_REASON_FAILURE_THRESHOLD,
  STG_REASON_GATE_FAILED,
  STG_REASON_FAILED,
  STG_REASON_ERROR,
  STG_REASON_UPDATE_FAILED,
  STG_REASON_UPDATE_REFUSED,
  STG_REASON_STAGE_FAILED,
  STG_REASON_ROLLBACK_FAILED,
  NULL,
};

static gboolean
progressing (StgConditionsOf of, gint status)
{
  if (of == STG_CONDITIONS_UPDATE)
    return status == U (ROLLING_FORWARD) || status == U (ROLLING_BACK);
  return status == R (WAITING_FOR_GATE) || status == R (ROLLING_FORWARD) ||
         status == R (ROLLING_BACK) || (of == STG_CONDITIONS_PLAN && status == R (PENDING));
}

static gboolean
complete (StgConditionsOf of, gint status)
{
  return of == STG_CONDITIONS_UPDATE ? status == U (ROLLED_FORWARD) : status == R (DONE);
}

typedef struct
{
  const gchar *type;
  gboolean status;
  gint64 since;
  const gchar *reason;
  const gchar *message;
} Condition;

/* @c's status is @now at change @t (its reason and message with it). */
static void
see (Condition *c, gboolean now, const StgStatusChange *t, gboolean first)
{
  if (first || c->status != now)
    c->since = t->timestamp_ms;
  c->status = now;
  c->reason = t->reason;
  c->message = t->message;
}

static ApiCondition *
condition_new (const Condition *c)
{
  return g_object_new (API_TYPE_CONDITION, "type", c->type, "status", c->status ? "True" : "False",
                       "reason", c->reason ? c->reason : "", "message",
                       c->message ? c->message : "", "lastTransitionTimeMs", c->since, NULL);
}

GPtrArray *
stg_conditions_build (StgConditionsOf of, const StgStatusChange *changes, guint n)
{
  Condition p = { "Progressing" }, done = { "Complete" }, failed = { "Failed" };
  GPtrArray *out = g_ptr_array_new_with_free_func (g_object_unref);

  for (guint i = 0; i < n; i++)
    {
      const StgStatusChange *t = &changes[i];
      see (&p, progressing (of, t->status), t, i == 0);
      see (&done, complete (of, t->status), t, i == 0);
      gboolean failure = t->reason != NULL && g_strv_contains (failures, t->reason);
      if (failure || !failed.status)
        see (&failed, failed.status || failure, t, i == 0);
    }
  if (n > 0)
    {
      g_ptr_array_add (out, condition_new (&p));
      g_ptr_array_add (out, condition_new (&done));
      g_ptr_array_add (out, condition_new (&failed));
    }
  return out;
}

GArray *
stg_conditions_update_changes (GPtrArray *events)
{
  GArray *out = g_array_new (FALSE, TRUE, sizeof (StgStatusChange));
  gint previous = -1;

  for (guint i = 0; events != NULL && i < events->len; i++)
    {
      ApiJobUpdateEvent *e = events->pdata[i];
      if ((gint) e->status == previous)
        continue; /* a note (a gate between batches), not a change */
      const gchar *user = e->__isset_user ? e->user : NULL;
      const gchar *message = e->__isset_message ? e->message : NULL;
      StgStatusChange t = {
        .timestamp_ms = e->timestampMs,
        .status = e->status,
        .reason = stg_update_reason (e->status, previous, user != NULL && user[0] != '\0', message),
        .user = user,
        .message = message,
      };
      g_array_append_val (out, t);
      previous = e->status;
    }
  return out;
}

GArray *
stg_conditions_plan_changes (GPtrArray *events, const gchar *stage)
{
  GArray *out = g_array_new (FALSE, TRUE, sizeof (StgStatusChange));
  gint previous = -1;

  for (guint i = 0; events != NULL && i < events->len; i++)
    {
      ApiRolloutEvent *e = events->pdata[i];
      const gchar *of = e->__isset_stage ? e->stage : NULL;
      if (g_strcmp0 (of, stage) != 0 || (gint) e->status == previous)
        continue;
      const gchar *code = e->__isset_reasonCode && e->reasonCode && e->reasonCode[0]
                              ? e->reasonCode
                              : stg_rollout_reason (stage != NULL, e->status);
      StgStatusChange t = {
        .timestamp_ms = e->timestampMs,
        .status = e->status,
        .reason = code,
        .user = e->__isset_user ? e->user : NULL,
        .message = e->__isset_message ? e->message : NULL,
      };
      g_array_append_val (out, t);
      previous = e->status;
    }
  return out;
}
