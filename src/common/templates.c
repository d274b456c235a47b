/* templates.c: see templates.h. */
#include "config.h"

#include <string.h>

#include "common/error.h"
#include "common/strings.h"
#include "common/templates.h"

G_DEFINE_QUARK (stg-template-error-quark, stg_template_error)

#define bad(error, ...) \
  stg_fail (error, STG_TEMPLATE_ERROR, STG_TEMPLATE_ERROR_INVALID, __VA_ARGS__)

static gboolean
port_known (const gchar *const *ports, const gchar *name)
{
  return ports != NULL && g_strv_contains (ports, name);
}

gchar *
stg_template_expand (const gchar *text, const StgTemplateVars *vars, const gchar *const *ports,
                     GError **error)
{
  g_autoptr (GString) out = g_string_new (NULL);
  const gchar *p = text;

  while (*p != '\0')
    {
      const gchar *open = strstr (p, "{{");
      if (open == NULL)
        {
          g_string_append (out, p);
          break;
        }
      g_string_append_len (out, p, open - p);
      const gchar *close = strstr (open + 2, "}}");
      if (close == NULL)
        {
          bad (error, "unclosed template in '%s'", text);
          return NULL;
        }
      g_autofree gchar *name = g_strstrip (g_strndup (open + 2, (gsize) (close - open - 2)));
      const gchar *port = NULL;
      if (g_str_has_prefix (name, "ports[") && g_str_has_suffix (name, "]"))
        port = name + 6;
      else if (g_str_has_prefix (name, "thermos.ports[") && g_str_has_suffix (name, "]"))
        port = name + 14;

      if (port != NULL)
        {
          g_autofree gchar *pname = g_strndup (port, strlen (port) - 1);
          if (ports != NULL && !port_known (ports, pname))
            {
              bad (error,
                   "template {{%s}} names port '%s', which the task does not ask for "
                   "(resources.namedPort)",
                   name, pname);
              return NULL;
            }
          if (vars != NULL)
            {
              gpointer v = vars->ports ? g_hash_table_lookup (vars->ports, pname) : NULL;
              if (v == NULL)
                {
                  bad (error, "no port '%s' was assigned", pname);
                  return NULL;
                }
              g_string_append_printf (out, "%d", GPOINTER_TO_INT (v));
            }
        }
      else if (g_str_equal (name, "instance") || g_str_equal (name, "mesos.instance"))
        {
          if (vars)
            g_string_append_printf (out, "%d", vars->instance);
        }
      else if (g_str_equal (name, "version"))
        {
          if (vars)
            g_string_append_printf (out, "%d", vars->version);
        }
      else if (g_str_equal (name, "cluster") || g_str_equal (name, "role") ||
               g_str_equal (name, "environment") || g_str_equal (name, "name"))
        {
          if (vars)
            g_string_append (out, g_str_equal (name, "cluster")       ? vars->cluster
                                  : g_str_equal (name, "role")        ? vars->role
                                  : g_str_equal (name, "environment") ? vars->environment
                                                                      : vars->name);
        }
      else
        {
          bad (error,
               "unknown template {{%s}} (known: instance, ports[NAME], cluster, role, "
               "environment, name, version)",
               name);
          return NULL;
        }
      p = close + 2;
    }
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
