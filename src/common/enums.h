/* enums.h: names of the API's enum values, as the IDL spells them.
 *
 * "ROLLING_FORWARD", "RUNNING", "INSTANCE_UPDATED", ... for display, JSON and
 * command lines, and back. Unknown values print as their number. Any thread.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The IDL's name of a JobUpdateStatus value ("ROLLING_FORWARD"); a static
 * string, or the number in a per-thread buffer when unknown. The same holds
 * for the five below. */
const gchar *stg_update_status_name (gint value);
/* The name of a ScheduleStatus value ("RUNNING"). */
const gchar *stg_schedule_status_name (gint value);
/* The name of a JobUpdateAction value ("INSTANCE_UPDATED"). */
const gchar *stg_update_action_name (gint value);
/* The name of a ResponseCode value ("INVALID_REQUEST"). */
const gchar *stg_response_code_name (gint value);
/* The name of a JobUpdatePulseStatus value ("OK", "FINISHED"). */
const gchar *stg_pulse_status_name (gint value);
/* The name of a CronCollisionPolicy value ("KILL_EXISTING"). */
const gchar *stg_cron_policy_name (gint value);

/* The name of a RolloutStatus value ("WAITING_FOR_GATE"). */
const gchar *stg_rollout_status_name (gint value);
/* The name of a MaintenanceMode value ("DRAINING"). */
const gchar *stg_maintenance_mode_name (gint value);
/* The name of a RolloutGateKind value ("HTTP"). */
const gchar *stg_gate_kind_name (gint value);

/* TRUE for a plan's terminal statuses: DONE, FAILED, ROLLED_BACK, ABORTED. */
gboolean stg_rollout_status_is_terminal (gint value);

/* TRUE for Aurora's terminal task statuses (TERMINAL_STATES): FAILED,
 * FINISHED, KILLED, LOST. */
gboolean stg_schedule_status_is_terminal (gint value);

/* The value named @name (case-insensitive), or -1. */
gint stg_update_status_from_name (const gchar *name);

/* TRUE for the six active (non-terminal) update statuses. */
gboolean stg_update_status_is_active (gint value);

G_END_DECLS
