/* templates.c: see templates.h. */
#include "config.h"

#include <string.h>

#include "common/error.h"
#include "common/strings.h"
#include "common/templates.h"

G_DEFINE_QUARK (stg-template-error-quark, stg_template_error)

#define bad(error, ...) \
  stg_fail (error, STG_TEMPLATE_ERROR, STG_TEMPLATE_ERROR_INVALID, __VA_ARGS__)

const gchar *const stg_template_names[] = { "instance", "cluster", "role",           "environment",
                                            "name",     "version", "mesos.instance", NULL };

gchar *
stg_template_port (const gchar *name)
{
  const gchar *rest = NULL;

  if (g_str_has_prefix (name, "ports["))
    rest = name + strlen ("ports[");
  else if (g_str_has_prefix (name, "thermos.ports["))
    rest = name + strlen ("thermos.ports[");
  if (rest == NULL || !g_str_has_suffix (rest, "]"))
    return NULL;
  return g_strndup (rest, strlen (rest) - 1);
}

gboolean
stg_template_each (const gchar *text, GString *out, StgTemplateFunc each, gpointer data,
                   GError **error)
{
  const gchar *p = text;

  for (;;)
    {
      const gchar *open = strstr (p, "{{");
      if (open == NULL)
        {
          if (out != NULL)
            g_string_append (out, p);
          return TRUE;
        }
      if (out != NULL)
        g_string_append_len (out, p, open - p);
      const gchar *close = strstr (open + 2, "}}");
      if (close == NULL)
        {
          if (out != NULL)
            g_string_append (out, open);
          return stg_fail (error, STG_TEMPLATE_ERROR, STG_TEMPLATE_ERROR_UNCLOSED,
                           "unclosed template in '%s'", text);
        }
      g_autofree gchar *name = g_strstrip (g_strndup (open + 2, (gsize) (close - open - 2)));
      if (!each (name, open, (gsize) (close + 2 - open), out, data, error))
        return FALSE;
      p = close + 2;
    }
}

typedef struct
{
  const StgTemplateVars *vars;
  const gchar *const *ports;
} Expand;

/* The value of the port template {{@name}} (port @port). */
static gboolean
expand_port (const Expand *e, const gchar *name, const gchar *port, GString *out, GError **error)
{
  if (e->ports != NULL && !g_strv_contains (e->ports, port))
    return bad (error,
                "template {{%s}} names port '%s', which the task does not ask for "
                "(resources.namedPort)",
                name, port);
  if (e->vars == NULL)
    return TRUE;
  gpointer v = e->vars->ports ? g_hash_table_lookup (e->vars->ports, port) : NULL;
  if (v == NULL)
    return bad (error, "no port '%s' was assigned", port);
  g_string_append_printf (out, "%d", GPOINTER_TO_INT (v));
  return TRUE;
}

static gboolean
expand_one (const gchar *name, const gchar *raw, gsize len, GString *out, gpointer data,
            GError **error)
{
  const Expand *e = data;
  const StgTemplateVars *vars = e->vars;
  g_autofree gchar *port = stg_template_port (name);

  (void) raw;
  (void) len;
  if (port != NULL)
    return expand_port (e, name, port, out, error);
  if (!g_strv_contains (stg_template_names, name))
    return bad (error,
                "unknown template {{%s}} (known: instance, ports[NAME], cluster, role, "
                "environment, name, version)",
                name);
  if (vars == NULL)
    return TRUE;
  if (g_str_equal (name, "instance") || g_str_equal (name, "mesos.instance"))
    g_string_append_printf (out, "%d", vars->instance);
  else if (g_str_equal (name, "version"))
    g_string_append_printf (out, "%d", vars->version);
  else
    g_string_append (out, g_str_equal (name, "cluster")       ? vars->cluster
                          : g_str_equal (name, "role")        ? vars->role
                          : g_str_equal (name, "environment") ? vars->environment
                                                              : vars->name);
  return TRUE;
}

gchar *
stg_template_expand (const gchar *text, const StgTemplateVars *vars, const gchar *const *ports,
                     GError **error)
{
  g_autoptr (GString) out = g_string_new (NULL);
  Expand e = { vars, ports };

  if (!stg_template_each (text, out, expand_one, &e, error))
    return NULL;
  return g_string_free (g_steal_pointer (&out), FALSE);
}

gchar **
stg_task_port_names (const ApiTaskConfig *config)
{
  g_autoptr (GPtrArray) names = g_ptr_array_new ();
  GHashTableIter it;
  gpointer key;

  if (config->resources != NULL)
    {
      g_hash_table_iter_init (&it, config->resources);
      while (g_hash_table_iter_next (&it, &key, NULL))
        {
          ApiResource *r = key;
          if (r->__isset_namedPort && r->namedPort != NULL)
            g_ptr_array_add (names, g_strdup (r->namedPort));
        }
    }
  g_ptr_array_sort (names, stg_compare_string_ptrs);
  g_ptr_array_add (names, NULL);
  return (gchar **) g_ptr_array_free (g_steal_pointer (&names), FALSE);
}
