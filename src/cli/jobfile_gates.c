/* jobfile_gates.c: gates as job files (update_config.batch_gates and
 * update_config.instance_gates) and plan files (a stage's before, after
 * and between_batches) write them, into RolloutGate. A gate is one of
 *   {"name": N, "http": URL, "expect_status": 200, "json_path": "$.a.b",
 *    "compare": "<=", "threshold": 0}
 *   {"name": N, "shell": COMMAND}
 *   {"name": N, "job_healthy": "[CLUSTER/]ROLE/ENV/NAME"}
 * with "timeout_secs", "retries", "retry_interval_secs" and "wait_secs" on
 * any of them. Uses the generated code only. Any thread.
 */
#include "config.h"

#include <string.h>

#include "cli/jobfile_private.h"

static const gchar *const GATE_KEYS[] = {
  "name",    "http",      "shell",        "job_healthy", "expect_status",       "json_path",
  "compare", "threshold", "timeout_secs", "retries",     "retry_interval_secs", "wait_secs",
  NULL
};
static const gchar *const INSTANCE_GATES_KEYS[] = { "before", "after", NULL };

static const gchar *const relations[] = { "<", "<=", "==", "!=", ">=", ">", NULL };

/* "[CLUSTER/]ROLE/ENV/NAME" into a job key, the cluster checked against
 * @cluster (nullable). */
static ApiJobKey *
healthy_job (const StgJfCtx *c, const gchar *where, const gchar *text, const gchar *cluster,
             GError **error)
{
  g_auto (GStrv) parts = g_strsplit (text, "/", -1);
  guint n = g_strv_length (parts);

  if (n == 4 && cluster != NULL && strcmp (parts[0], cluster) != 0)
    {
      stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, where,
                   "\"%s\" is a job of cluster %s, not of %s", text, parts[0], cluster);
      return NULL;
    }
  if ((n != 3 && n != 4) || !stg_job_key_part_valid (parts[n - 3]) ||
      !stg_job_key_part_valid (parts[n - 2]) || !stg_job_key_part_valid (parts[n - 1]))
    {
      stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, where,
                   "\"%s\": expected a job, ROLE/ENV/NAME or CLUSTER/ROLE/ENV/NAME", text);
      return NULL;
    }
  return stg_job_key_new (parts[n - 3], parts[n - 2], parts[n - 1]);
}

static ApiRolloutGate *
gate (const StgJfCtx *c, JsonObject *o, const gchar *where, const gchar *cluster, GError **error)
{
  g_autofree gchar *name = NULL, *http = NULL, *shell = NULL, *job = NULL, *path = NULL;
  g_autofree gchar *compare = NULL;
  gint64 status = 200, timeout = 30, retries = 0, interval = 10, wait = 0;
  gdouble threshold = 0;
  gboolean has_status = FALSE, has_threshold = FALSE, has_timeout = FALSE, has_retries = FALSE;
  gboolean has_interval = FALSE, has_wait = FALSE;

  if (!stg_jf_check_keys (c, o, where, GATE_KEYS, error) ||
      !stg_jf_string (c, o, where, "name", TRUE, &name, error) ||
      !stg_jf_string (c, o, where, "http", FALSE, &http, error) ||
      !stg_jf_string (c, o, where, "shell", FALSE, &shell, error) ||
      !stg_jf_string (c, o, where, "job_healthy", FALSE, &job, error) ||
      !stg_jf_int (c, o, where, "expect_status", 100, 599, &status, &has_status, error) ||
      !stg_jf_string (c, o, where, "json_path", FALSE, &path, error) ||
      !stg_jf_string (c, o, where, "compare", FALSE, &compare, error) ||
      !stg_jf_number (c, o, where, "threshold", -G_MAXDOUBLE, TRUE, G_MAXDOUBLE, &threshold,
                      &has_threshold, error) ||
      !stg_jf_int (c, o, where, "timeout_secs", 1, 3600, &timeout, &has_timeout, error) ||
      !stg_jf_int (c, o, where, "retries", 0, 10000, &retries, &has_retries, error) ||
      !stg_jf_int (c, o, where, "retry_interval_secs", 0, 3600, &interval, &has_interval, error) ||
      !stg_jf_int (c, o, where, "wait_secs", 1, 86400, &wait, &has_wait, error))
    return NULL;
  if (has_wait && has_retries)
    {
      stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, where,
                   "give retries or wait_secs, not both: with wait_secs the gate is tried until "
                   "it passes or the time is up");
      return NULL;
    }
  if ((http != NULL) + (shell != NULL) + (job != NULL) != 1)
    {
      stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, where,
                   "give exactly one of \"http\" (a URL), \"shell\" (a command) or "
                   "\"job_healthy\" (a job)");
      return NULL;
    }
  if (http == NULL && (has_status || path != NULL || compare != NULL || has_threshold))
    {
      stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, where,
                   "expect_status, json_path, compare and threshold go with \"http\" only");
      return NULL;
    }
  if ((compare != NULL || has_threshold) && path == NULL)
    {
      stg_jf_fail (c, error, STG_JOB_FILE_ERROR_MISSING, where,
                   "compare and threshold need \"json_path\": the value they compare");
      return NULL;
    }
  if (compare != NULL && !g_strv_contains (relations, compare))
    {
      g_autofree gchar *at = stg_jf_path (where, "compare");
      stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, at,
                   "\"%s\": expected one of <, <=, ==, !=, >=, >", compare);
      return NULL;
    }

  ApiRolloutGate *g = g_object_new (API_TYPE_ROLLOUT_GATE, "name", name, NULL);
  if (http != NULL)
    {
      g_object_set (g, "kind", API_ROLLOUT_GATE_KIND_HTTP, "url", http, NULL);
      if (has_status)
        g_object_set (g, "expectStatus", (gint32) status, NULL);
      if (path != NULL)
        g_object_set (g, "jsonPath", path, "compare", compare ? compare : "==", "threshold",
                      threshold, NULL);
    }
  else if (shell != NULL)
    g_object_set (g, "kind", API_ROLLOUT_GATE_KIND_SHELL, "command", shell, NULL);
  else
    {
      g_autofree gchar *at = stg_jf_path (where, "job_healthy");
      g_autoptr (ApiJobKey) key = healthy_job (c, at, job, cluster, error);
      if (key == NULL)
        {
          g_object_unref (g);
          return NULL;
        }
      g_object_set (g, "kind", API_ROLLOUT_GATE_KIND_JOB_HEALTHY, "job", key, NULL);
    }
  if (has_timeout)
    g_object_set (g, "timeoutSecs", (gint32) timeout, NULL);
  if (has_retries)
    g_object_set (g, "retries", (gint32) retries, NULL);
  if (has_interval)
    g_object_set (g, "retryIntervalSecs", (gint32) interval, NULL);
  if (has_wait)
    g_object_set (g, "waitSecs", (gint32) wait, NULL);
  return g;
}

gboolean
stg_jf_gates (const StgJfCtx *c, JsonArray *list, const gchar *where, const gchar *cluster,
              GPtrArray *out, GError **error)
{
  for (guint i = 0; list != NULL && i < json_array_get_length (list); i++)
    {
      JsonNode *e = json_array_get_element (list, i);
      g_autofree gchar *at = stg_jf_index (where, i);
      if (!JSON_NODE_HOLDS_OBJECT (e))
        {
          g_autofree gchar *got = stg_jf_describe (e);
          return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_TYPE, at,
                              "expected a gate (an object with a name and one of http, shell "
                              "or job_healthy), got %s",
                              got);
        }
      ApiRolloutGate *g = gate (c, json_node_get_object (e), at, cluster, error);
      if (g == NULL)
        return FALSE;
      for (guint k = 0; k < out->len; k++)
        if (g_str_equal (((ApiRolloutGate *) out->pdata[k])->name, g->name))
          {
            g_autofree gchar *name = g_strdup (g->name);
            g_object_unref (g);
            return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, at,
                                "two gates here are named \"%s\"", name);
          }
      g_ptr_array_add (out, g);
    }
  return TRUE;
}

gboolean
stg_jf_instance_gates (const StgJfCtx *c, JsonObject *uc, const gchar *cluster,
                       ApiJobUpdateSettings *settings, GError **error)
{
  static const gchar *const path = "update_config.instance_gates";
  static const gchar *const props[] = { "instanceGatesBefore", "instanceGatesAfter" };
  JsonObject *ig = NULL;

  if (!stg_jf_object (c, uc, "update_config", "instance_gates", FALSE, &ig, error))
    return FALSE;
  if (ig == NULL)
    return TRUE;
  if (!stg_jf_check_keys (c, ig, path, INSTANCE_GATES_KEYS, error))
    return FALSE;
  for (guint i = 0; INSTANCE_GATES_KEYS[i] != NULL; i++)
    {
      JsonArray *list = NULL;
      g_autofree gchar *at = stg_jf_path (path, INSTANCE_GATES_KEYS[i]);
      g_autoptr (GPtrArray) gates = g_ptr_array_new_with_free_func (g_object_unref);
      if (!stg_jf_array (c, ig, path, INSTANCE_GATES_KEYS[i], FALSE, &list, error) ||
          !stg_jf_gates (c, list, at, cluster, gates, error))
        return FALSE;
      if (gates->len > 0)
        g_object_set (settings, props[i], gates, NULL);
    }
  return TRUE;
}
