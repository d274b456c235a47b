/* reasons.c: reason codes: why an update, a rollout plan or a stage is in
 * its status, as a word scripts can match (stagger(1), CONDITIONS, lists
 * them all). A plan's and a stage's code is recorded with each status
 * change (plan_state.c); an update's is read from its event: the status,
 * the one before, whether someone asked, and the engine's own messages
 * (update.c's "failure threshold reached", "gate '...' failed"). Pure
 * functions; calls nothing. Any thread.
 */
#include "config.h"

#include <string.h>

#include "engine/engine_private.h"

#define U(x) API_JOB_UPDATE_STATUS_##x
#define R(x) API_ROLLOUT_STATUS_##x

/* A failure the update's message names, or NULL. */
static const gchar *
failure_in (const gchar *message)
{
  if (message == NULL)
    return NULL;
  if (g_str_has_prefix (message, "failure threshold reached"))
    return STG_REASON_FAILURE_THRESHOLD;
  if (g_str_has_prefix (message, "gate '"))
    return STG_REASON_GATE_FAILED;
  return NULL;
}

const gchar *
stg_update_reason (gint status, gint previous, gboolean by_user, const gchar *message)
{
  const gchar *failure = failure_in (message);

  switch (status)
    {
    case U (ROLLING_FORWARD):
    case U (ROLLING_BACK):
      if (previous == U (ROLL_FORWARD_PAUSED) || previous == U (ROLL_BACK_PAUSED))
        return STG_REASON_RESUMED;
      if (previous == U (ROLL_FORWARD_AWAITING_PULSE) || previous == U (ROLL_BACK_AWAITING_PULSE))
        return STG_REASON_PULSE_RECEIVED;
      if (status == U (ROLLING_FORWARD))
        return STG_REASON_STARTED;
      if (failure != NULL)
        return failure;
      return by_user ? STG_REASON_ROLLBACK_REQUESTED : STG_REASON_ROLLING_BACK;
    case U (ROLL_FORWARD_PAUSED):
    case U (ROLL_BACK_PAUSED):
      return by_user ? STG_REASON_PAUSED_BY_USER : STG_REASON_PAUSED_AFTER_BATCH;
    case U (ROLL_FORWARD_AWAITING_PULSE):
    case U (ROLL_BACK_AWAITING_PULSE):
      /* A coordinated update begins waiting for its first pulse. */
      return previous < 0 ? STG_REASON_STARTED : STG_REASON_AWAITING_PULSE;
    case U (ROLLED_FORWARD):
      return message != NULL && g_str_equal (message, "no instance needed a change")
                 ? STG_REASON_NOTHING_TO_CHANGE
                 : STG_REASON_ROLLED_FORWARD;
    case U (ROLLED_BACK):
      return STG_REASON_ROLLED_BACK;
    case U (ABORTED):
      return STG_REASON_ABORTED;
    case U (FAILED):
      return failure != NULL ? failure : STG_REASON_FAILED;
    default:
      return STG_REASON_ERROR;
    }
}

const gchar *
stg_rollout_reason (gboolean stage, gint status)
{
  switch (status)
    {
    case R (PENDING):
      return stage ? STG_REASON_WAITING_FOR_DEPENDENCIES : STG_REASON_STARTED;
    case R (WAITING_FOR_GATE):
      return STG_REASON_WAITING_FOR_GATE;
    case R (AWAITING_APPROVAL):
      return STG_REASON_AWAITING_APPROVAL;
    case R (ROLLING_FORWARD):
      return stage ? STG_REASON_UPDATING : STG_REASON_STAGE_UPDATING;
    case R (DONE):
      return STG_REASON_DONE;
    case R (FAILED):
      return stage ? STG_REASON_UPDATE_FAILED : STG_REASON_STAGE_FAILED;
    case R (ROLLING_BACK):
      return stage ? STG_REASON_ROLLING_BACK : STG_REASON_STAGE_FAILED;
    case R (ROLLED_BACK):
      return STG_REASON_ROLLED_BACK;
    case R (ABORTED):
      return STG_REASON_ABORTED;
    case R (PAUSED):
      return STG_REASON_PAUSED_BY_USER;
    default:
      return STG_REASON_ERROR;
    }
}
