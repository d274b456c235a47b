/* jobfile_sla.c: a job file's "sla_policy", Aurora's SlaPolicy objects in
 * one object whose keys say the kind: {"count": 2, "duration_secs": 1800}
 * (CountSlaPolicy), {"percentage": 99.9, "duration_secs": 3600}
 * (PercentageSlaPolicy) or {"coordinator_url": URL, "status_key": "drain"}
 * (CoordinatorSlaPolicy), into TaskConfig.slaPolicy. staggerd checks the
 * rest (tier, instances, limits). Uses the generated code only. Any
 * thread.
 */
#include "config.h"

#include "cli/jobfile_private.h"

static const gchar *const sla_keys[] = { "count",           "percentage", "duration_secs",
                                         "coordinator_url", "status_key", NULL };

#define MAX_SECS (366 * 86400)

/* The policy of @o (at @path), one kind; NULL with @error. */
static ApiSlaPolicy *
policy (const StgJfCtx *c, JsonObject *o, const gchar *path, GError **error)
{
  gint64 count = 0, secs = 0;
  gdouble percentage = 0;
  gboolean has_count = FALSE, has_pct = FALSE, has_secs = FALSE;
  g_autofree gchar *url = NULL, *key = NULL;

  if (!stg_jf_check_keys (c, o, path, sla_keys, error) ||
      !stg_jf_int (c, o, path, "count", 0, G_MAXINT32, &count, &has_count, error) ||
      !stg_jf_number (c, o, path, "percentage", 0, TRUE, 100, &percentage, &has_pct, error) ||
      !stg_jf_int (c, o, path, "duration_secs", 0, MAX_SECS, &secs, &has_secs, error) ||
      !stg_jf_string (c, o, path, "coordinator_url", FALSE, &url, error) ||
      !stg_jf_string (c, o, path, "status_key", FALSE, &key, error))
    return NULL;
  if (has_count + has_pct + (url != NULL) != 1)
    return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, path,
                        "give exactly one of count, percentage and coordinator_url"),
           NULL;
  if (url != NULL && has_secs)
    return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, path,
                        "duration_secs is for count and percentage, not coordinator_url"),
           NULL;
  if (url == NULL && key != NULL)
    return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, path,
                        "status_key is for coordinator_url"),
           NULL;
  if (url == NULL && !has_secs)
    return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, path,
                        "duration_secs is needed: how long a task runs to count as active"),
           NULL;
  if (has_count)
    {
      g_autoptr (ApiCountSlaPolicy) p = g_object_new (API_TYPE_COUNT_SLA_POLICY, "count", count,
                                                      "durationSecs", secs, NULL);
      return g_object_new (API_TYPE_SLA_POLICY, "countSlaPolicy", p, NULL);
    }
  if (has_pct)
    {
      g_autoptr (ApiPercentageSlaPolicy) p = g_object_new (API_TYPE_PERCENTAGE_SLA_POLICY,
                                                           "percentage", percentage, "durationSecs",
                                                           secs, NULL);
      return g_object_new (API_TYPE_SLA_POLICY, "percentageSlaPolicy", p, NULL);
    }
  g_autoptr (ApiCoordinatorSlaPolicy) p = g_object_new (API_TYPE_COORDINATOR_SLA_POLICY,
                                                        "coordinatorUrl", url, "statusKey",
                                                        key ? key : "drain", NULL);
  return g_object_new (API_TYPE_SLA_POLICY, "coordinatorSlaPolicy", p, NULL);
}

gboolean
stg_jf_sla_policy (const StgJfCtx *c, JsonObject *top, ApiTaskConfig *task, GError **error)
{
  JsonObject *o = NULL;

  if (!stg_jf_object (c, top, "", "sla_policy", FALSE, &o, error))
    return FALSE;
  if (o == NULL)
    return TRUE;
  g_autoptr (ApiSlaPolicy) p = policy (c, o, "sla_policy", error);
  if (p == NULL)
    return FALSE;
  g_object_set (task, "slaPolicy", p, NULL);
  return TRUE;
}
