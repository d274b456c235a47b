/* jobfile_task.c: a job file's "task" and "health_check_config" sections,
 * checked and turned into the executor data the local runtime reads
 * (stagger-job(5), EXECUTOR DATA): the task's keys as given, in a fixed
 * order, plus "health_check" with every default filled in. Templates such
 * as {{ports[http]}} are checked against the declared ports. Pure; any
 * thread.
 */
#include "config.h"

#include <string.h>

#include "cli/jobfile_private.h"
#include "cli/suggest.h"
#include "common/json_write.h"
#include "common/templates.h"

#define MAX_SECS 86400
#define MAX_COUNT 1000000

/* ---- templates ------------------------------------------------------------ */

typedef struct
{
  const StgJfCtx *c;
  const gchar *path;
  GStrv ports;
} Check;

/* Checks the template {{@inner}}: a known name, or a declared port. */
static gboolean
check_template (const gchar *inner, const gchar *raw, gsize len, GString *out, gpointer data,
                GError **error)
{
  const Check *k = data;
  g_autofree gchar *port = stg_template_port (inner);

  (void) raw;
  (void) len;
  (void) out;
  if (g_strv_contains (stg_template_names, inner))
    return TRUE;
  if (port != NULL)
    {
      if (k->ports != NULL && g_strv_contains ((const gchar *const *) k->ports, port))
        return TRUE;
      g_autofree gchar *declared = k->ports && k->ports[0] ? g_strjoinv (", ", k->ports)
                                                           : g_strdup ("none");
      return stg_jf_fail (k->c, error, STG_JOB_FILE_ERROR_VALUE, k->path,
                          "{{%s}} names no port in resources.ports (declared: %s)", inner,
                          declared);
    }

  /* Suggest among the plain names and ports[NAME] for each declared port. */
  g_autoptr (GPtrArray) all = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; stg_template_names[i] != NULL; i++)
    g_ptr_array_add (all, g_strdup (stg_template_names[i]));
  for (guint i = 0; k->ports != NULL && k->ports[i] != NULL; i++)
    g_ptr_array_add (all, g_strdup_printf ("ports[%s]", k->ports[i]));
  g_ptr_array_add (all, NULL);
  const gchar *close = stg_cli_suggest (inner, (const gchar *const *) all->pdata);
  if (close != NULL)
    return stg_jf_fail (k->c, error, STG_JOB_FILE_ERROR_VALUE, k->path,
                        "unknown template {{%s}}, did you mean {{%s}}?", inner, close);
  return stg_jf_fail (k->c, error, STG_JOB_FILE_ERROR_VALUE, k->path,
                      "unknown template {{%s}}; known: {{instance}}, {{ports[NAME]}}, {{cluster}}, "
                      "{{role}}, {{environment}}, {{name}}, {{version}}",
                      inner);
}

/* Checks every {{...}} in @text. */
static gboolean
check_templates (const StgJfCtx *c, const gchar *text, const gchar *path, GStrv ports,
                 GError **error)
{
  g_autoptr (GError) local = NULL;
  Check k = { c, path, ports };

  if (stg_template_each (text, NULL, check_template, &k, &local))
    return TRUE;
  if (g_error_matches (local, STG_TEMPLATE_ERROR, STG_TEMPLATE_ERROR_UNCLOSED))
    return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, path, "'{{' without a closing '}}'");
  g_propagate_error (error, g_steal_pointer (&local));
  return FALSE;
}

/* ---- commands -------------------------------------------------------------- */

/* "command" or "argv" of @object (the task or a hook), added to @b. */
static gboolean
command (const StgJfCtx *c, JsonObject *object, const gchar *path, GStrv ports, JsonBuilder *b,
         GError **error)
{
  g_autofree gchar *cmd = NULL;
  JsonArray *argv = NULL;

  if (!stg_jf_string (c, object, path, "command", FALSE, &cmd, error) ||
      !stg_jf_array (c, object, path, "argv", FALSE, &argv, error))
    return FALSE;
  if (cmd != NULL && argv != NULL)
    return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, path,
                        "give 'command' or 'argv', not both");
  if (cmd == NULL && argv == NULL)
    return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_MISSING, path,
                        "missing key 'command' (run with /bin/sh -c) or 'argv' (run directly)");
  if (cmd != NULL)
    {
      g_autofree gchar *where = stg_jf_path (path, "command");
      if (!check_templates (c, cmd, where, ports, error))
        return FALSE;
      json_builder_set_member_name (b, "command");
      json_builder_add_string_value (b, cmd);
      return TRUE;
    }

  g_autofree gchar *where = stg_jf_path (path, "argv");
  guint n = json_array_get_length (argv);
  if (n == 0)
    return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, where,
                        "expected at least the program to run");
  json_builder_set_member_name (b, "argv");
  json_builder_begin_array (b);
  for (guint i = 0; i < n; i++)
    {
      JsonNode *arg = json_array_get_element (argv, i);
      g_autofree gchar *at = stg_jf_index (where, i);
      if (!JSON_NODE_HOLDS_VALUE (arg) || json_node_get_value_type (arg) != G_TYPE_STRING)
        {
          g_autofree gchar *got = stg_jf_describe (arg);
          return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_TYPE, at, "expected a string, got %s", got);
        }
      const gchar *s = json_node_get_string (arg);
      if (i == 0 && s[0] == '\0')
        return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, at, "the program must not be empty");
      if (!check_templates (c, s, at, ports, error))
        return FALSE;
      json_builder_add_string_value (b, s);
    }
  json_builder_end_array (b);
  return TRUE;
}

static gboolean
env_name_valid (const gchar *name)
{
  if (!(g_ascii_isalpha (name[0]) || name[0] == '_'))
    return FALSE;
  for (const gchar *p = name; *p != '\0'; p++)
    if (!(g_ascii_isalnum (*p) || *p == '_'))
      return FALSE;
  return TRUE;
}

static gint
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const gchar *const *) a, *(const gchar *const *) b);
}

static gboolean
env (const StgJfCtx *c, JsonObject *task, GStrv ports, JsonBuilder *b, GError **error)
{
  JsonObject *vars = NULL;

  if (!stg_jf_object (c, task, "task", "env", FALSE, &vars, error))
    return FALSE;
  if (vars == NULL || json_object_get_size (vars) == 0)
    return TRUE;

  /* Sorted, so the same variables always make the same data. */
  g_autoptr (GList) names = json_object_get_members (vars);
  g_autoptr (GPtrArray) sorted = g_ptr_array_new ();
  for (GList *l = names; l != NULL; l = l->next)
    g_ptr_array_add (sorted, l->data);
  g_ptr_array_sort (sorted, compare_strings);

  json_builder_set_member_name (b, "env");
  json_builder_begin_object (b);
  for (guint i = 0; i < sorted->len; i++)
    {
      const gchar *name = sorted->pdata[i];
      JsonNode *value = json_object_get_member (vars, name);
      g_autofree gchar *where = stg_jf_path ("task.env", name);
      if (!env_name_valid (name))
        return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, where,
                            "not a variable name (letters, digits and '_', not starting with a digit)");
      if (!JSON_NODE_HOLDS_VALUE (value) || json_node_get_value_type (value) != G_TYPE_STRING)
        {
          g_autofree gchar *got = stg_jf_describe (value);
          return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_TYPE, where, "expected a string, got %s", got);
        }
      if (!check_templates (c, json_node_get_string (value), where, ports, error))
        return FALSE;
      json_builder_set_member_name (b, name);
      json_builder_add_string_value (b, json_node_get_string (value));
    }
  json_builder_end_object (b);
  return TRUE;
}

static gboolean
hooks (const StgJfCtx *c, JsonObject *task, GStrv ports, JsonBuilder *b, GError **error)
{
  JsonObject *hooks_obj = NULL;

  if (!stg_jf_object (c, task, "task", "hooks", FALSE, &hooks_obj, error))
    return FALSE;
  if (hooks_obj == NULL)
    return TRUE;
  if (!stg_jf_check_keys (c, hooks_obj, "task.hooks", stg_jf_hooks_keys, error))
    return FALSE;
  if (json_object_get_size (hooks_obj) == 0)
    return TRUE;

  json_builder_set_member_name (b, "hooks");
  json_builder_begin_object (b);
  for (guint i = 0; stg_jf_hooks_keys[i] != NULL; i++)
    {
      JsonObject *hook = NULL;
      g_autofree gchar *where = stg_jf_path ("task.hooks", stg_jf_hooks_keys[i]);
      gint64 timeout = 0;
      gboolean has_timeout = FALSE;

      if (!stg_jf_object (c, hooks_obj, "task.hooks", stg_jf_hooks_keys[i], FALSE, &hook, error))
        return FALSE;
      if (hook == NULL)
        continue;
      if (!stg_jf_check_keys (c, hook, where, stg_jf_hook_keys, error))
        return FALSE;
      json_builder_set_member_name (b, stg_jf_hooks_keys[i]);
      json_builder_begin_object (b);
      if (!command (c, hook, where, ports, b, error) ||
          !stg_jf_int (c, hook, where, "timeout_secs", 1, MAX_SECS, &timeout, &has_timeout, error))
        return FALSE;
      if (has_timeout)
        {
          json_builder_set_member_name (b, "timeout_secs");
          json_builder_add_int_value (b, timeout);
        }
      json_builder_end_object (b);
    }
  json_builder_end_object (b);
  return TRUE;
}

/* ---- the health check ---------------------------------------------------------- */

static gboolean
checker (const StgJfCtx *c, JsonObject *health, JsonBuilder *b, GError **error)
{
  static const gchar *path = "health_check_config.health_checker";
  JsonObject *which = NULL, *http = NULL, *shell = NULL;

  if (!stg_jf_object (c, health, "health_check_config", "health_checker", FALSE, &which, error))
    return FALSE;
  if (which != NULL)
    {
      if (!stg_jf_check_keys (c, which, path, stg_jf_checker_keys, error) ||
          !stg_jf_object (c, which, path, "http", FALSE, &http, error) ||
          !stg_jf_object (c, which, path, "shell", FALSE, &shell, error))
        return FALSE;
      if (http != NULL && shell != NULL)
        return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, path, "give 'http' or 'shell', not both");
      if (http == NULL && shell == NULL)
        return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_MISSING, path, "missing key 'http' or 'shell'");
    }

  if (shell != NULL)
    {
      g_autofree gchar *cmd = NULL;
      if (!stg_jf_check_keys (c, shell, "health_check_config.health_checker.shell",
                              stg_jf_shell_keys, error) ||
          !stg_jf_string (c, shell, "health_check_config.health_checker.shell", "shell_command",
                          TRUE, &cmd, error))
        return FALSE;
      json_builder_set_member_name (b, "shell");
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "shell_command");
      json_builder_add_string_value (b, cmd);
      json_builder_end_object (b);
      return TRUE;
    }

  /* HTTP, Aurora's default checker. */
  static const gchar *hpath = "health_check_config.health_checker.http";
  g_autofree gchar *endpoint = g_strdup ("/health");
  g_autofree gchar *expected = g_strdup ("ok");
  gint64 code = 0;
  if (http != NULL)
    {
      JsonNode *resp = json_object_get_member (http, "expected_response");
      if (!stg_jf_check_keys (c, http, hpath, stg_jf_http_keys, error) ||
          !stg_jf_string (c, http, hpath, "endpoint", FALSE, &endpoint, error) ||
          !stg_jf_int (c, http, hpath, "expected_response_code", 0, 599, &code, NULL, error))
        return FALSE;
      /* An empty expected_response means "any body". */
      if (resp != NULL)
        {
          g_autofree gchar *where = stg_jf_path (hpath, "expected_response");
          if (!JSON_NODE_HOLDS_VALUE (resp) || json_node_get_value_type (resp) != G_TYPE_STRING)
            {
              g_autofree gchar *got = stg_jf_describe (resp);
              return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_TYPE, where, "expected a string, got %s", got);
            }
          g_free (expected);
          expected = g_strdup (json_node_get_string (resp));
        }
      if (endpoint[0] != '/')
        {
          g_autofree gchar *where = stg_jf_path (hpath, "endpoint");
          return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, where,
                              "expected a path starting with '/', got \"%s\"", endpoint);
        }
      if (code != 0 && code < 100)
        {
          g_autofree gchar *where = stg_jf_path (hpath, "expected_response_code");
          return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, where,
                              "expected 0 (any) or an HTTP status from 100 to 599, got %" G_GINT64_FORMAT,
                              code);
        }
    }
  json_builder_set_member_name (b, "http");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "endpoint");
  json_builder_add_string_value (b, endpoint);
  json_builder_set_member_name (b, "expected_response");
  json_builder_add_string_value (b, expected);
  json_builder_set_member_name (b, "expected_response_code");
  json_builder_add_int_value (b, code);
  json_builder_end_object (b);
  return TRUE;
}

static gboolean
health_check (const StgJfCtx *c, JsonObject *health, JsonBuilder *b, GError **error)
{
  static const struct
  {
    const gchar *key;
    gint64 def, min, max;
  } numbers[] = {
    { "initial_interval_secs", 15, 0, MAX_SECS },
    { "interval_secs", 10, 1, MAX_SECS },
    { "timeout_secs", 1, 1, MAX_SECS },
    { "max_consecutive_failures", 0, 0, MAX_COUNT },
    { "min_consecutive_successes", 1, 1, MAX_COUNT },
  };

  if (!stg_jf_check_keys (c, health, "health_check_config", stg_jf_health_keys, error))
    return FALSE;
  json_builder_set_member_name (b, "health_check");
  json_builder_begin_object (b);
  if (!checker (c, health, b, error))
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (numbers); i++)
    {
      json_builder_set_member_name (b, numbers[i].key);
      if (g_str_has_suffix (numbers[i].key, "_secs"))
        {
          /* Seconds may have a fraction (Aurora's are whole; short checks
           * help tests and demos); the interval and timeout stay positive. */
          gdouble value = (gdouble) numbers[i].def;
          if (!stg_jf_number (c, health, "health_check_config", numbers[i].key,
                              0, numbers[i].min == 0, (gdouble) numbers[i].max,
                              &value, NULL, error))
            return FALSE;
          json_builder_add_double_value (b, value);
          continue;
        }
      gint64 value = numbers[i].def;
      if (!stg_jf_int (c, health, "health_check_config", numbers[i].key, numbers[i].min,
                       numbers[i].max, &value, NULL, error))
        return FALSE;
      json_builder_add_int_value (b, value);
    }
  json_builder_end_object (b);
  return TRUE;
}

/* ---- the executor data -------------------------------------------------------- */

gchar *
stg_jf_executor_data (const StgJfCtx *c, JsonObject *task, JsonObject *health, GStrv ports,
                      GError **error)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autofree gchar *workdir = NULL;
  gint64 stop_timeout = 0;
  gboolean has_stop = FALSE, hot = FALSE, has_hot = FALSE;

  if (!stg_jf_check_keys (c, task, "task", stg_jf_task_keys, error))
    return NULL;
  json_builder_begin_object (b);
  if (!command (c, task, "task", ports, b, error) ||
      !env (c, task, ports, b, error) ||
      !stg_jf_string (c, task, "task", "workdir", FALSE, &workdir, error) ||
      !stg_jf_int (c, task, "task", "stop_timeout_secs", 0, MAX_SECS, &stop_timeout, &has_stop, error))
    return NULL;
  if (workdir != NULL)
    {
      json_builder_set_member_name (b, "workdir");
      json_builder_add_string_value (b, workdir);
    }
  if (has_stop)
    {
      json_builder_set_member_name (b, "stop_timeout_secs");
      json_builder_add_int_value (b, stop_timeout);
    }
  if (!hooks (c, task, ports, b, error) ||
      !stg_jf_bool (c, task, "task", "hot_upgrade", &hot, &has_hot, error))
    return NULL;
  if (hot)
    {
      if (ports == NULL || ports[0] == NULL)
        {
          stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, "task.hot_upgrade",
                       "needs at least one port in resources.ports: the runtime hands the "
                       "ports' sockets from the old version to the new");
          return NULL;
        }
      json_builder_set_member_name (b, "hot_upgrade");
      json_builder_add_boolean_value (b, TRUE);
    }
  if (health != NULL && !health_check (c, health, b, error))
    return NULL;
  json_builder_end_object (b);

  g_autoptr (JsonNode) root = json_builder_get_root (b);
  /* Doubles as Aurora's client writes them: 0.2, not 0.20000000000000001. */
  return stg_json_write (root, FALSE, NULL);
}
