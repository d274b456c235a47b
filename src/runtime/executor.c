/* executor.c: parsing and checking the "stagger" executor's JSON data, and
 * template expansion.
 *
 * Every object key is checked against the keys allowed at its place; an
 * unknown key is an error that names the closest known one. Errors name the
 * JSON path ("health_check.http.endpoint"). Any thread.
 */
#include "config.h"

#include <json-glib/json-glib.h>
#include <string.h>

#include "common/error.h"
#include "common/json_check.h"
#include "runtime/executor.h"
#include "common/strings.h"

G_DEFINE_QUARK (stg-executor-error-quark, stg_executor_error)

#define bad(error, ...) \
  stg_fail (error, STG_EXECUTOR_ERROR, STG_EXECUTOR_ERROR_INVALID, __VA_ARGS__)

void
stg_executor_spec_free (StgExecutorSpec *spec)
{
  if (spec == NULL)
    return;
  g_free (spec->command);
  g_strfreev (spec->argv);
  g_strfreev (spec->env);
  g_free (spec->workdir);
  g_free (spec->health.endpoint);
  g_free (spec->health.expected_response);
  g_free (spec->health.shell_command);
  g_free (spec->pre_update.command);
  g_free (spec->post_update.command);
  g_free (spec);
}

/* ---- reading JSON ---------------------------------------------------------------- */

/* Levenshtein distance, for suggestions. */
static guint
distance (const gchar *a, const gchar *b)
{
  gsize n = strlen (a), m = strlen (b);
  g_autofree guint *row = g_new (guint, m + 1);

  for (gsize j = 0; j <= m; j++)
    row[j] = (guint) j;
  for (gsize i = 1; i <= n; i++)
    {
      guint prev = row[0];
      row[0] = (guint) i;
      for (gsize j = 1; j <= m; j++)
        {
          guint cur = row[j];
          guint cost = a[i - 1] == b[j - 1] ? 0 : 1;
          row[j] = MIN (MIN (row[j] + 1, row[j - 1] + 1), prev + cost);
          prev = cur;
        }
    }
  return row[m];
}

static gboolean
check_keys (JsonObject *o, const gchar *path, const gchar *const *known, GError **error)
{
  g_autoptr (GList) members = json_object_get_members (o);

  for (GList *l = members; l != NULL; l = l->next)
    {
      const gchar *key = l->data;
      if (g_strv_contains (known, key))
        continue;
      const gchar *best = NULL;
      guint best_d = G_MAXUINT;
      for (guint i = 0; known[i]; i++)
        {
          guint d = distance (key, known[i]);
          if (d < best_d)
            best_d = d, best = known[i];
        }
      if (best != NULL && best_d <= 3)
        return bad (error, "%s%s%s: unknown key (did you mean '%s'?)", path, *path ? "." : "", key, best);
      return bad (error, "%s%s%s: unknown key", path, *path ? "." : "", key);
    }
  return TRUE;
}

static gboolean
get_string (JsonObject *o, const gchar *path, const gchar *key, gchar **out, GError **error)
{
  if (!json_object_has_member (o, key))
    return TRUE;
  JsonNode *n = json_object_get_member (o, key);
  if (!JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_STRING)
    return bad (error, "%s.%s must be a string", path, key);
  g_free (*out);
  *out = g_strdup (json_node_get_string (n));
  return TRUE;
}

static gboolean
get_number (JsonObject *o, const gchar *path, const gchar *key, gdouble min, gdouble max,
            gdouble *out, GError **error)
{
  if (!json_object_has_member (o, key))
    return TRUE;
  JsonNode *n = json_object_get_member (o, key);
  GType t = JSON_NODE_HOLDS_VALUE (n) ? json_node_get_value_type (n) : G_TYPE_INVALID;
  if (t != G_TYPE_INT64 && t != G_TYPE_DOUBLE)
    return bad (error, "%s.%s must be a number", path, key);
  gdouble v = json_node_get_double (n);
  if (!(v >= min && v <= max))
    return bad (error, "%s.%s must be between %g and %g", path, key, min, max);
  *out = v;
  return TRUE;
}

static gboolean
get_int (JsonObject *o, const gchar *path, const gchar *key, gint min, gint max, gint *out,
         GError **error)
{
  if (!json_object_has_member (o, key))
    return TRUE;
  JsonNode *n = json_object_get_member (o, key);
  if (!JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_INT64)
    return bad (error, "%s.%s must be a whole number", path, key);
  gint64 v = json_node_get_int (n);
  if (v < min || v > max)
    return bad (error, "%s.%s must be between %d and %d", path, key, min, max);
  *out = (gint) v;
  return TRUE;
}

static JsonObject *
get_object (JsonObject *o, const gchar *path, const gchar *key, GError **error)
{
  JsonNode *n = json_object_get_member (o, key);
  if (!JSON_NODE_HOLDS_OBJECT (n))
    {
      bad (error, "%s%s%s must be an object", path, *path ? "." : "", key);
      return NULL;
    }
  return json_node_get_object (n);
}

static gboolean
check_template (const gchar *text, const gchar *path, const gchar *const *ports, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autofree gchar *ok = stg_template_expand (text, NULL, ports, &local);

  if (ok == NULL)
    return bad (error, "%s: %s", path, local->message);
  return TRUE;
}

static gboolean
parse_health (JsonObject *o, const gchar *const *ports, StgHealthSpec *h, GError **error)
{
  static const gchar *const known[] = {
    "http", "shell", "initial_interval_secs", "interval_secs", "timeout_secs",
    "max_consecutive_failures", "min_consecutive_successes", NULL
  };
  static const gchar *const http_known[] = {
    "endpoint", "expected_response", "expected_response_code", NULL
  };
  static const gchar *const shell_known[] = { "shell_command", NULL };

  if (!check_keys (o, "health_check", known, error) ||
      !get_number (o, "health_check", "initial_interval_secs", 0, 86400, &h->initial_interval_secs, error) ||
      !get_number (o, "health_check", "interval_secs", 0.01, 86400, &h->interval_secs, error) ||
      !get_number (o, "health_check", "timeout_secs", 0.01, 3600, &h->timeout_secs, error) ||
      !get_int (o, "health_check", "max_consecutive_failures", 0, 1000000, &h->max_consecutive_failures, error) ||
      !get_int (o, "health_check", "min_consecutive_successes", 1, 1000000, &h->min_consecutive_successes, error))
    return FALSE;
  gboolean http = json_object_has_member (o, "http");
  gboolean shell = json_object_has_member (o, "shell");
  if (http && shell)
    return bad (error, "health_check: give http or shell, not both");
  if (http)
    {
      JsonObject *ho = get_object (o, "health_check", "http", error);
      if (ho == NULL || !check_keys (ho, "health_check.http", http_known, error) ||
          !get_string (ho, "health_check.http", "endpoint", &h->endpoint, error) ||
          !get_string (ho, "health_check.http", "expected_response", &h->expected_response, error) ||
          !get_int (ho, "health_check.http", "expected_response_code", 0, 599, &h->expected_response_code, error))
        return FALSE;
      if (h->endpoint[0] != '/')
        return bad (error, "health_check.http.endpoint must start with '/'");
      if (ports == NULL || ports[0] == NULL)
        return bad (error, "health_check.http needs a named port to check (resources.namedPort)");
      h->kind = STG_HEALTH_HTTP;
    }
  else if (shell)
    {
      JsonObject *so = get_object (o, "health_check", "shell", error);
      if (so == NULL || !check_keys (so, "health_check.shell", shell_known, error) ||
          !get_string (so, "health_check.shell", "shell_command", &h->shell_command, error))
        return FALSE;
      if (h->shell_command == NULL || h->shell_command[0] == '\0')
        return bad (error, "health_check.shell.shell_command is missing");
      if (!check_template (h->shell_command, "health_check.shell.shell_command", ports, error))
        return FALSE;
      h->kind = STG_HEALTH_SHELL;
    }
  return TRUE;
}

static gboolean
parse_hook (JsonObject *hooks, const gchar *name, const gchar *const *ports, StgHookSpec *hook,
            GError **error)
{
  static const gchar *const known[] = { "command", "timeout_secs", NULL };
  g_autofree gchar *path = g_strconcat ("hooks.", name, NULL);

  if (!json_object_has_member (hooks, name))
    return TRUE;
  JsonNode *n = json_object_get_member (hooks, name);
  if (JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING)
    hook->command = g_strdup (json_node_get_string (n));
  else if (JSON_NODE_HOLDS_OBJECT (n))
    {
      JsonObject *o = json_node_get_object (n);
      if (!check_keys (o, path, known, error) ||
          !get_string (o, path, "command", &hook->command, error) ||
          !get_number (o, path, "timeout_secs", 0.01, 86400, &hook->timeout_secs, error))
        return FALSE;
    }
  else
    return bad (error, "%s must be a command string or an object", path);
  if (hook->command == NULL || hook->command[0] == '\0')
    return bad (error, "%s.command is missing", path);
  g_autofree gchar *cpath = g_strconcat (path, ".command", NULL);
  return check_template (hook->command, cpath, ports, error);
}

/* "argv": a non-empty array of strings, each a valid template. */
static gboolean
parse_argv (JsonObject *o, const gchar *const *ports, StgExecutorSpec *spec, GError **error)
{
  if (!json_object_has_member (o, "argv"))
    return TRUE;
  JsonNode *n = json_object_get_member (o, "argv");
  if (!JSON_NODE_HOLDS_ARRAY (n) || json_array_get_length (json_node_get_array (n)) == 0)
    return bad (error, "argv must be a non-empty array of strings");
  JsonArray *a = json_node_get_array (n);
  spec->argv = g_new0 (gchar *, json_array_get_length (a) + 1);
  for (guint i = 0; i < json_array_get_length (a); i++)
    {
      JsonNode *e = json_array_get_element (a, i);
      if (!JSON_NODE_HOLDS_VALUE (e) || json_node_get_value_type (e) != G_TYPE_STRING)
        return bad (error, "argv[%u] must be a string", i);
      spec->argv[i] = g_strdup (json_node_get_string (e));
      g_autofree gchar *path = g_strdup_printf ("argv[%u]", i);
      if (!check_template (spec->argv[i], path, ports, error))
        return FALSE;
    }
  return TRUE;
}

/* "env": an object of NAME: "template" strings. */
static gboolean
parse_env (JsonObject *o, const gchar *const *ports, StgExecutorSpec *spec, GError **error)
{
  if (!json_object_has_member (o, "env"))
    return TRUE;
  JsonObject *env = get_object (o, "", "env", error);
  if (env == NULL)
    return FALSE;
  g_autoptr (GList) names = json_object_get_members (env);
  g_autoptr (GPtrArray) list = g_ptr_array_new_with_free_func (g_free);
  for (GList *l = names; l != NULL; l = l->next)
    {
      const gchar *name = l->data;
      JsonNode *v = json_object_get_member (env, name);
      gboolean good_name = name[0] != '\0' && !g_ascii_isdigit (name[0]);
      for (const gchar *c = name; *c && good_name; c++)
        good_name = g_ascii_isalnum (*c) || *c == '_';
      if (!good_name)
        return bad (error, "env.%s: names hold letters, digits and '_'", name);
      if (!JSON_NODE_HOLDS_VALUE (v) || json_node_get_value_type (v) != G_TYPE_STRING)
        return bad (error, "env.%s must be a string", name);
      g_autofree gchar *path = g_strconcat ("env.", name, NULL);
      if (!check_template (json_node_get_string (v), path, ports, error))
        return FALSE;
      g_ptr_array_add (list, g_strconcat (name, "=", json_node_get_string (v), NULL));
    }
  g_ptr_array_add (list, NULL);
  spec->env = (gchar **) g_ptr_array_free (g_steal_pointer (&list), FALSE);
  return TRUE;
}

/* "health_check", "hooks" and "hot_upgrade". */
static gboolean
parse_checks (JsonObject *o, const gchar *const *ports, StgExecutorSpec *spec, GError **error)
{
  static const gchar *const hook_names[] = { "pre_update", "post_update", NULL };

  if (json_object_has_member (o, "health_check"))
    {
      JsonObject *h = get_object (o, "", "health_check", error);
      if (h == NULL || !parse_health (h, ports, &spec->health, error))
        return FALSE;
    }
  if (json_object_has_member (o, "hooks"))
    {
      JsonObject *hooks = get_object (o, "", "hooks", error);
      if (hooks == NULL || !check_keys (hooks, "hooks", hook_names, error) ||
          !parse_hook (hooks, "pre_update", ports, &spec->pre_update, error) ||
          !parse_hook (hooks, "post_update", ports, &spec->post_update, error))
        return FALSE;
    }
  if (!json_object_has_member (o, "hot_upgrade"))
    return TRUE;
  JsonNode *n = json_object_get_member (o, "hot_upgrade");
  if (!JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_BOOLEAN)
    return bad (error, "hot_upgrade must be true or false");
  spec->hot_upgrade = json_node_get_boolean (n);
  if (spec->hot_upgrade && (ports == NULL || ports[0] == NULL))
    return bad (error, "hot_upgrade needs at least one named port to hand over");
  return TRUE;
}

StgExecutorSpec *
stg_executor_spec_parse (const gchar *data, const gchar *const *ports, GError **error)
{
  static const gchar *const known[] = {
    "command", "argv", "env", "workdir", "health_check", "stop_timeout_secs", "hooks",
    "hot_upgrade", NULL
  };
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) local = NULL;
  g_autoptr (StgExecutorSpec) spec = g_new0 (StgExecutorSpec, 1);

  spec->stop_timeout_secs = 5;
  spec->health.endpoint = g_strdup ("/health");
  spec->health.expected_response = g_strdup ("ok");
  spec->health.initial_interval_secs = 15;
  spec->health.interval_secs = 10;
  spec->health.timeout_secs = 1;
  spec->health.min_consecutive_successes = 1;
  spec->pre_update.timeout_secs = 60;
  spec->post_update.timeout_secs = 60;

  if (data == NULL || !stg_json_check_depth (data, -1, STG_JSON_NESTING_MAX, &local) ||
      !json_parser_load_from_data (parser, data, -1, &local))
    {
      bad (error, "not valid JSON: %s", local ? local->message : "no data");
      return NULL;
    }
  JsonNode *root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      bad (error, "must be a JSON object");
      return NULL;
    }
  JsonObject *o = json_node_get_object (root);
  if (!check_keys (o, "", known, error) ||
      !get_string (o, "", "command", &spec->command, error) ||
      !get_string (o, "", "workdir", &spec->workdir, error) ||
      !get_number (o, "", "stop_timeout_secs", 0, 3600, &spec->stop_timeout_secs, error) ||
      !parse_argv (o, ports, spec, error))
    return NULL;
  if ((spec->command == NULL) == (spec->argv == NULL))
    {
      bad (error, "give exactly one of command (run with /bin/sh -c) and argv");
      return NULL;
    }
  if (spec->command != NULL && (spec->command[0] == '\0' ||
                                !check_template (spec->command, "command", ports, error)))
    {
      if (spec->command[0] == '\0')
        bad (error, "command is empty");
      return NULL;
    }
  if (!parse_env (o, ports, spec, error) || !parse_checks (o, ports, spec, error))
    return NULL;
  return g_steal_pointer (&spec);
}

/* The `command` of a hot-upgradable config, when it is one simple command
 * (no ; & | ( ) ` $( or newline, no leading NAME=value, not a shell
 * builtin): the shell execs it, so the program keeps the shell's pid and
 * LISTEN_PID (set to that pid) names the program for socket activation. */
gchar *
stg_executor_shell_command (const StgExecutorSpec *spec)
{
  static const gchar *const builtins[] = { "exit",   "cd",       "export", "set",    "unset",
                                           "eval",   "exec",     ".",      ":",      "read",
                                           "trap",   "wait",     "umask",  "ulimit", "shift",
                                           "return", "readonly", "true",   "false",  "test",
                                           "[",      NULL };
  const gchar *p = spec->command;

  while (g_ascii_isspace (*p))
    p++;
  g_autofree gchar *first = g_strndup (p, strcspn (p, " \t"));
  if (!spec->hot_upgrade || strpbrk (p, ";&|()`\n") != NULL || strstr (p, "$(") != NULL ||
      strchr (first, '=') != NULL || g_strv_contains (builtins, first))
    return g_strdup (spec->command);
  return g_strconcat ("exec ", p, NULL);
}
