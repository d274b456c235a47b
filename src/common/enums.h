/* enums.h: names of the API's enum values, as the IDL spells them.
 *
 * "ROLLING_FORWARD", "RUNNING", "INSTANCE_UPDATED", ... for display, JSON and
 * command lines, and back. Unknown values print as their number. Any thread.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

const gchar *stg_update_status_name (gint value);
const gchar *stg_schedule_status_name (gint value);
const gchar *stg_update_action_name (gint value);
const gchar *stg_response_code_name (gint value);
const gchar *stg_pulse_status_name (gint value);
const gchar *stg_cron_policy_name (gint value);

/* The value named @name (case-insensitive), or -1. */
gint stg_update_status_from_name (const gchar *name);

/* TRUE for the six active (non-terminal) update statuses. */
gboolean stg_update_status_is_active (gint value);

G_END_DECLS
