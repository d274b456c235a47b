/* jobfile_read.c: the job file's keys, section by section, and typed reads
 * of JSON members with errors that name the file, the JSON path and what
 * was expected. Pure; any thread.
 */
#include "config.h"

#include <math.h>

#include "cli/jobfile_private.h"
#include "cli/suggest.h"
#include "common/json_write.h"

G_DEFINE_QUARK (stg-job-file-error-quark, stg_job_file_error)

/* ---- the keys ------------------------------------------------------------- */

const gchar *const stg_jf_top_keys[] = { "cluster",
                                         "role",
                                         "environment",
                                         "name",
                                         "instances",
                                         "service",
                                         "max_task_failures",
                                         "priority",
                                         "tier",
                                         "contact",
                                         "metadata",
                                         "resources",
                                         "task",
                                         "health_check_config",
                                         "update_config",
                                         "container",
                                         "constraints",
                                         "aurora_task",
                                         "sla_policy",
                                         NULL };
const gchar *const stg_jf_resources_keys[] = { "cpu", "ram_mb", "disk_mb", "ports", NULL };
const gchar *const stg_jf_metadata_keys[] = { "key", "value", NULL };
const gchar *const stg_jf_task_keys[] = {
  "command", "argv", "env", "workdir", "stop_timeout_secs", "hooks", "hot_upgrade", NULL
};
const gchar *const stg_jf_hooks_keys[] = { "pre_update", "post_update", NULL };
const gchar *const stg_jf_hook_keys[] = { "command", "timeout_secs", NULL };
const gchar *const stg_jf_health_keys[] = {
  "health_checker", "initial_interval_secs", "interval_secs", "max_consecutive_failures",
  "min_consecutive_successes", "timeout_secs", NULL
};
const gchar *const stg_jf_checker_keys[] = { "http", "shell", NULL };
const gchar *const stg_jf_http_keys[] = {
  "endpoint", "expected_response", "expected_response_code", NULL
};
const gchar *const stg_jf_shell_keys[] = { "shell_command", NULL };
const gchar *const stg_jf_update_keys[] = { "batch_size",
                                            "watch_secs",
                                            "max_per_shard_failures",
                                            "max_total_failures",
                                            "rollback_on_failure",
                                            "wait_for_batch_completion",
                                            "pulse_interval_secs",
                                            "update_strategy",
                                            "growth_factor",
                                            "min_in_service",
                                            "pause_between_batches_secs",
                                            "max_instance_start_secs",
                                            "batch_gates",
                                            "max_surge",
                                            "max_batch_size",
                                            "update_deadline_secs",
                                            "instance_gates",
                                            "sla_aware",
                                            NULL };
const gchar *const stg_jf_strategy_keys[] = { "queue", "batch", "variable_batch", NULL };
const gchar *const stg_jf_queue_keys[] = { "batch_size", NULL };
const gchar *const stg_jf_batch_keys[] = { "batch_size", "autopause_after_batch", NULL };
const gchar *const stg_jf_variable_batch_keys[] = { "batch_sizes", "autopause_after_batch", NULL };

/* Where each key belongs, for "unknown key here; it belongs in ...". */
static const struct
{
  const gchar *section;
  const gchar *const *keys;
} sections[] = {
  { "the top level", stg_jf_top_keys },
  { "resources", stg_jf_resources_keys },
  { "task", stg_jf_task_keys },
  { "task.hooks", stg_jf_hooks_keys },
  { "health_check_config", stg_jf_health_keys },
  { "health_check_config.health_checker", stg_jf_checker_keys },
  { "health_check_config.health_checker.http", stg_jf_http_keys },
  { "health_check_config.health_checker.shell", stg_jf_shell_keys },
  { "update_config", stg_jf_update_keys },
  { "update_config.update_strategy", stg_jf_strategy_keys },
};

/* ---- paths and messages ---------------------------------------------------- */

gboolean
stg_jf_read_file (const gchar *path, const gchar *what, gchar **text, gsize *len, GError **error)
{
  g_autoptr (GError) local = NULL;

  if (g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, STG_JOB_FILE_ERROR, STG_JOB_FILE_ERROR_READ, "%s: is a directory, not %s",
                   path, what);
      return FALSE;
    }
  if (!g_file_get_contents (path, text, len, &local))
    {
      g_set_error (error, STG_JOB_FILE_ERROR, STG_JOB_FILE_ERROR_READ, "%s", local->message);
      return FALSE;
    }
  return TRUE;
}

gchar *
stg_jf_path (const gchar *parent, const gchar *key)
{
  if (parent == NULL || parent[0] == '\0')
    return g_strdup (key);
  return g_strconcat (parent, ".", key, NULL);
}

gchar *
stg_jf_index (const gchar *parent, guint i)
{
  return g_strdup_printf ("%s[%u]", parent, i);
}

gboolean
stg_jf_fail (const StgJfCtx *c, GError **error, StgJobFileError code, const gchar *path,
             const gchar *format, ...)
{
  va_list ap;

  va_start (ap, format);
  g_autofree gchar *text = g_strdup_vprintf (format, ap);
  va_end (ap);
  if (path == NULL || path[0] == '\0')
    g_set_error (error, STG_JOB_FILE_ERROR, code, "%s: %s", c->file, text);
  else
    g_set_error (error, STG_JOB_FILE_ERROR, code, "%s: %s: %s", c->file, path, text);
  return FALSE;
}

gchar *
stg_jf_describe (JsonNode *node)
{
  switch (JSON_NODE_TYPE (node))
    {
    case JSON_NODE_OBJECT:
      return g_strdup ("an object");
    case JSON_NODE_ARRAY:
      return g_strdup ("an array");
    case JSON_NODE_NULL:
      return g_strdup ("null");
    case JSON_NODE_VALUE:
    default:
      break;
    }
  g_autofree gchar *text = stg_json_write (node, FALSE, NULL);
  if (g_utf8_strlen (text, -1) > 40)
    {
      gchar *end = g_utf8_offset_to_pointer (text, 37);
      *end = '\0';
      gchar *longer = g_strconcat (text, "...", NULL);
      g_free (text);
      text = longer;
    }
  GType type = json_node_get_value_type (node);
  if (type == G_TYPE_STRING)
    return g_strdup_printf ("the string %s", text);
  if (type == G_TYPE_BOOLEAN)
    return g_strdup (text);
  return g_strdup_printf ("the number %s", text);
}

gboolean
stg_jf_check_keys (const StgJfCtx *c, JsonObject *object, const gchar *path,
                   const gchar *const *known, GError **error)
{
  g_autoptr (GList) members = json_object_get_members (object);

  for (GList *l = members; l != NULL; l = l->next)
    {
      const gchar *key = l->data;
      if (g_strv_contains (known, key))
        continue;
      g_autofree gchar *where = stg_jf_path (path, key);
      const gchar *close = stg_cli_suggest (key, known);
      if (close != NULL)
        return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_UNKNOWN_KEY, where,
                            "unknown key, did you mean '%s'?", close);
      for (guint i = 0; i < G_N_ELEMENTS (sections); i++)
        if (sections[i].keys != known && g_strv_contains (sections[i].keys, key))
          return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_UNKNOWN_KEY, where,
                              "unknown key here; '%s' belongs in %s", key, sections[i].section);
      g_autofree gchar *list = g_strjoinv (", ", (gchar **) known);
      return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_UNKNOWN_KEY, where,
                          "unknown key; expected one of %s", list);
    }
  return TRUE;
}

/* ---- typed members ----------------------------------------------------------- */

/* The member @key of @object, or NULL (then fails when @required). */
static JsonNode *
member (const StgJfCtx *c, JsonObject *object, const gchar *path, const gchar *key,
        gboolean required, GError **error)
{
  JsonNode *node = json_object_get_member (object, key);

  if (node == NULL && required)
    stg_jf_fail (c, error, STG_JOB_FILE_ERROR_MISSING, path, "missing key '%s'", key);
  return node;
}

static gboolean
wrong_type (const StgJfCtx *c, GError **error, const gchar *path, const gchar *expected,
            JsonNode *node)
{
  g_autofree gchar *got = stg_jf_describe (node);
  return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_TYPE, path, "expected %s, got %s", expected, got);
}

static gboolean
is_number (JsonNode *node)
{
  GType t = JSON_NODE_HOLDS_VALUE (node) ? json_node_get_value_type (node) : G_TYPE_INVALID;
  return t == G_TYPE_INT64 || t == G_TYPE_DOUBLE;
}

gboolean
stg_jf_int_value (const StgJfCtx *c, JsonNode *node, const gchar *where, gint64 min, gint64 max,
                  gint64 *out, GError **error)
{
  gint64 value;

  if (!is_number (node))
    return wrong_type (c, error, where, "an integer", node);
  if (json_node_get_value_type (node) == G_TYPE_DOUBLE)
    {
      /* 45.0 is an integer; 45.5 is not. */
      gdouble d = json_node_get_double (node);
      if (!isfinite (d) || d != floor (d) || d < -9.0e15 || d > 9.0e15)
        return wrong_type (c, error, where, "an integer", node);
      value = (gint64) d;
    }
  else
    value = json_node_get_int (node);
  if (value < min || value > max)
    {
      if (max == G_MAXINT64 || (max == G_MAXINT32 && min >= 0))
        return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, where,
                            "expected an integer of at least %" G_GINT64_FORMAT ", got %" G_GINT64_FORMAT,
                            min, value);
      return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, where,
                          "expected an integer from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT
                          ", got %" G_GINT64_FORMAT, min, max, value);
    }
  *out = value;
  return TRUE;
}

gboolean
stg_jf_int (const StgJfCtx *c, JsonObject *object, const gchar *path, const gchar *key,
            gint64 min, gint64 max, gint64 *out, gboolean *present, GError **error)
{
  JsonNode *node = member (c, object, path, key, FALSE, error);
  g_autofree gchar *where = stg_jf_path (path, key);

  if (present != NULL)
    *present = node != NULL;
  if (node == NULL)
    return TRUE;
  return stg_jf_int_value (c, node, where, min, max, out, error);
}

gboolean
stg_jf_number (const StgJfCtx *c, JsonObject *object, const gchar *path, const gchar *key,
               gdouble min, gboolean min_included, gdouble max, gdouble *out, gboolean *present,
               GError **error)
{
  JsonNode *node = member (c, object, path, key, FALSE, error);
  g_autofree gchar *where = stg_jf_path (path, key);

  if (present != NULL)
    *present = node != NULL;
  if (node == NULL)
    return TRUE;
  if (!is_number (node))
    return wrong_type (c, error, where, "a number", node);
  gdouble value = json_node_get_value_type (node) == G_TYPE_DOUBLE
                    ? json_node_get_double (node) : (gdouble) json_node_get_int (node);
  if (!isfinite (value) || value > max || value < min || (!min_included && value == min))
    return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, where,
                        "expected a number %s %g and at most %g, got %g",
                        min_included ? "of at least" : "above", min, max, value);
  *out = value;
  return TRUE;
}

gboolean
stg_jf_count_or_percent (const StgJfCtx *c, JsonObject *object, const gchar *path, const gchar *key,
                         gint64 min, gint64 max, gint64 *out, gdouble *percent, GError **error)
{
  JsonNode *node = member (c, object, path, key, FALSE, error);
  g_autofree gchar *where = stg_jf_path (path, key);

  *percent = -1.0;
  if (node == NULL)
    return TRUE;
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return stg_jf_int_value (c, node, where, min, max, out, error);
  const gchar *text = json_node_get_string (node);
  gchar *end = NULL;
  gdouble value = g_ascii_strtod (text, &end);
  if (end == text || g_strcmp0 (end, "%") != 0 || !isfinite (value) || value < 0.0 || value > 100.0)
    return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, where,
                        "expected a count from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT
                        " or a percent from \"0%%\" to \"100%%\", got \"%s\"",
                        min, max, text);
  *percent = value;
  return TRUE;
}

gboolean
stg_jf_bool (const StgJfCtx *c, JsonObject *object, const gchar *path, const gchar *key,
             gboolean *out, gboolean *present, GError **error)
{
  JsonNode *node = member (c, object, path, key, FALSE, error);
  g_autofree gchar *where = stg_jf_path (path, key);

  if (present != NULL)
    *present = node != NULL;
  if (node == NULL)
    return TRUE;
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_BOOLEAN)
    return wrong_type (c, error, where, "true or false", node);
  *out = json_node_get_boolean (node);
  return TRUE;
}

gboolean
stg_jf_string (const StgJfCtx *c, JsonObject *object, const gchar *path, const gchar *key,
               gboolean required, gchar **out, GError **error)
{
  JsonNode *node = member (c, object, path, key, required, error);
  g_autofree gchar *where = stg_jf_path (path, key);

  if (node == NULL)
    return !required;
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return wrong_type (c, error, where, "a string", node);
  const gchar *value = json_node_get_string (node);
  if (value[0] == '\0')
    return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, where, "must not be empty");
  g_free (*out);
  *out = g_strdup (value);
  return TRUE;
}

gboolean
stg_jf_object (const StgJfCtx *c, JsonObject *object, const gchar *path, const gchar *key,
               gboolean required, JsonObject **out, GError **error)
{
  JsonNode *node = member (c, object, path, key, required, error);
  g_autofree gchar *where = stg_jf_path (path, key);

  *out = NULL;
  if (node == NULL)
    return !required;
  if (!JSON_NODE_HOLDS_OBJECT (node))
    return wrong_type (c, error, where, "an object", node);
  *out = json_node_get_object (node);
  return TRUE;
}

gboolean
stg_jf_array (const StgJfCtx *c, JsonObject *object, const gchar *path, const gchar *key,
              gboolean required, JsonArray **out, GError **error)
{
  JsonNode *node = member (c, object, path, key, required, error);
  g_autofree gchar *where = stg_jf_path (path, key);

  *out = NULL;
  if (node == NULL)
    return !required;
  if (!JSON_NODE_HOLDS_ARRAY (node))
    return wrong_type (c, error, where, "an array", node);
  *out = json_node_get_array (node);
  return TRUE;
}
