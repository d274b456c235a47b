/* enums.c: enum value names, from the generated toString_* functions with
 * their "API_<ENUM>_" prefix removed. Any thread. */
#include "config.h"

#include <string.h>

#include "common/enums.h"
#include "common/thrift_glue.h"

static const gchar *
strip (const gchar *full, const gchar *prefix)
{
  gsize n = strlen (prefix);
  return strncmp (full, prefix, n) == 0 ? full + n : full;
}

const gchar *
stg_update_status_name (gint value)
{
  return strip (toString_JobUpdateStatus (value), "API_JOB_UPDATE_STATUS_");
}

const gchar *
stg_schedule_status_name (gint value)
{
  return strip (toString_ScheduleStatus (value), "API_SCHEDULE_STATUS_");
}

const gchar *
stg_update_action_name (gint value)
{
  return strip (toString_JobUpdateAction (value), "API_JOB_UPDATE_ACTION_");
}

const gchar *
stg_response_code_name (gint value)
{
  return strip (toString_ResponseCode (value), "API_RESPONSE_CODE_");
}

const gchar *
stg_pulse_status_name (gint value)
{
  return strip (toString_JobUpdatePulseStatus (value), "API_JOB_UPDATE_PULSE_STATUS_");
}

const gchar *
stg_rollout_status_name (gint value)
{
  return strip (toString_RolloutStatus (value), "API_ROLLOUT_STATUS_");
}

const gchar *
stg_maintenance_mode_name (gint value)
{
  return strip (toString_MaintenanceMode (value), "API_MAINTENANCE_MODE_");
}

const gchar *
stg_gate_kind_name (gint value)
{
  return strip (toString_RolloutGateKind (value), "API_ROLLOUT_GATE_KIND_");
}

gboolean
stg_rollout_status_is_terminal (gint value)
{
  return value == API_ROLLOUT_STATUS_DONE || value == API_ROLLOUT_STATUS_FAILED ||
         value == API_ROLLOUT_STATUS_ROLLED_BACK || value == API_ROLLOUT_STATUS_ABORTED;
}

gboolean
stg_schedule_status_is_terminal (gint value)
{
  return value == API_SCHEDULE_STATUS_FAILED || value == API_SCHEDULE_STATUS_FINISHED ||
         value == API_SCHEDULE_STATUS_KILLED || value == API_SCHEDULE_STATUS_LOST;
}

const gchar *
stg_cron_policy_name (gint value)
{
  return strip (toString_CronCollisionPolicy (value), "API_CRON_COLLISION_POLICY_");
}

static gint
from_name (const gchar *name, const gchar *(*to_name) (gint), gint max)
{
  if (name == NULL)
    return -1;
  for (gint v = 0; v <= max; v++)
    if (g_ascii_strcasecmp (name, to_name (v)) == 0)
      return v;
  return -1;
}

gint
stg_update_status_from_name (const gchar *name)
{
  return from_name (name, stg_update_status_name, API_JOB_UPDATE_STATUS_ROLL_BACK_AWAITING_PULSE);
}

gboolean
stg_update_status_is_active (gint value)
{
  switch (value)
    {
    case API_JOB_UPDATE_STATUS_ROLLING_FORWARD:
    case API_JOB_UPDATE_STATUS_ROLLING_BACK:
    case API_JOB_UPDATE_STATUS_ROLL_FORWARD_PAUSED:
    case API_JOB_UPDATE_STATUS_ROLL_BACK_PAUSED:
    case API_JOB_UPDATE_STATUS_ROLL_FORWARD_AWAITING_PULSE:
    case API_JOB_UPDATE_STATUS_ROLL_BACK_AWAITING_PULSE:
      return TRUE;
    default:
      return FALSE;
    }
}
