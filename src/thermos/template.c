/* template.c: finding, checking and filling in the executor's templates
 * (see template.h). One walker splits a text into plain parts and
 * templates; checking and expansion are two uses of it. Calls common/ and
 * GLib only. Pure; any thread.
 */
#include "config.h"

#include <string.h>

#include "common/error.h"
#include "thermos/task.h"
#include "thermos/template.h"

#define bad(error, ...) stg_fail (error, STG_THERMOS_ERROR, STG_THERMOS_ERROR_INVALID, __VA_ARGS__)

static const gchar known_list[] = "{{mesos.instance}}, {{mesos.hostname}}, {{thermos.task_id}}, "
                                  "{{thermos.user}} and {{thermos.ports[NAME]}}";

/* Called for each part of a text: plain text (@ref NULL; @len bytes of
 * @text) or a template (@ref its address, NUL-terminated). */
typedef gboolean (*PartFunc) (const gchar *text, gsize len, const gchar *ref, gpointer data,
                              GError **error);

/* The length of a template at @p ("{{" then an optional '&', one or more
 * characters other than braces, an optional '&' after a leading one, "}}"),
 * or 0 when @p starts none. *@escaped tells a "{{&...}}"; *@start and
 * *@len give the address inside. */
static gsize
template_at (const gchar *p, gboolean *escaped, gsize *start, gsize *len)
{
  if (p[0] != '{' || p[1] != '{')
    return 0;
  gsize j = 2;
  *escaped = p[j] == '&';
  if (*escaped)
    j++;
  gsize k = j;
  while (p[k] != '\0' && p[k] != '{' && p[k] != '}')
    k++;
  if (k == j || p[k] != '}' || p[k + 1] != '}')
    return 0;
  *start = j;
  *len = k - j;
  if (*escaped && *len > 1 && p[k - 1] == '&')
    (*len)--;
  return k + 2;
}

static gboolean
walk (const gchar *text, PartFunc func, gpointer data, GError **error)
{
  const gchar *plain = text;
  const gchar *p = text;

  while (*p != '\0')
    {
      gboolean escaped = FALSE;
      gsize start = 0, len = 0;
      gsize n = template_at (p, &escaped, &start, &len);
      if (n == 0)
        {
          p++;
          continue;
        }
      if (p > plain && !func (plain, (gsize) (p - plain), NULL, data, error))
        return FALSE;
      if (escaped)
        {
          g_autofree gchar *literal = g_strdup_printf ("{{%.*s}}", (int) len, p + start);
          if (!func (literal, strlen (literal), NULL, data, error))
            return FALSE;
        }
      else
        {
          g_autofree gchar *ref = g_strndup (p + start, len);
          if (!func (NULL, 0, ref, data, error))
            return FALSE;
        }
      p += n;
      plain = p;
    }
  return p == plain || func (plain, (gsize) (p - plain), NULL, data, error);
}

/* A port name as Pystachio indexes allow: letters, digits, '_', '-', '.'
 * and '/'. */
static gboolean
good_port_name (const gchar *name, gsize len)
{
  if (len == 0)
    return FALSE;
  for (gsize i = 0; i < len; i++)
    if (!g_ascii_isalnum (name[i]) && strchr ("_-./", name[i]) == NULL)
      return FALSE;
  return TRUE;
}

/* What @ref names; *@port gets a new copy of a port's name. */
static gboolean
classify (const gchar *ref, const gchar *where, guint scopes, StgThermosRefKind *kind, gchar **port,
          GError **error)
{
  static const struct
  {
    const gchar *name;
    StgThermosRefKind kind;
    guint scope;
  } names[] = {
    { "mesos.instance", STG_THERMOS_REF_INSTANCE, STG_THERMOS_SCOPE_MESOS },
    { "mesos.hostname", STG_THERMOS_REF_HOSTNAME, STG_THERMOS_SCOPE_MESOS },
    { "thermos.task_id", STG_THERMOS_REF_TASK_ID, STG_THERMOS_SCOPE_THERMOS },
    { "thermos.user", STG_THERMOS_REF_USER, STG_THERMOS_SCOPE_THERMOS },
  };
  guint scope = 0;
  gsize n = strlen (ref);

  *port = NULL;
  for (guint i = 0; i < G_N_ELEMENTS (names) && scope == 0; i++)
    if (g_str_equal (ref, names[i].name))
      *kind = names[i].kind, scope = names[i].scope;
  if (scope == 0 && g_str_has_prefix (ref, "thermos.ports[") && ref[n - 1] == ']' &&
      good_port_name (ref + 14, n - 15))
    {
      *kind = STG_THERMOS_REF_PORT;
      *port = g_strndup (ref + 14, n - 15);
      scope = STG_THERMOS_SCOPE_THERMOS;
    }
  if (scope == 0)
    return bad (error,
                "%s: unknown template {{%s}}: the executor fills in only %s (the aurora "
                "client binds every other name before it sends a job)",
                where, ref, known_list);
  if ((scopes & scope) == 0)
    {
      g_clear_pointer (port, g_free);
      return bad (error,
                  "%s: template {{%s}} is not filled in here (the thermos namespace "
                  "exists only in the task's processes and the shell health check)",
                  where, ref);
    }
  return TRUE;
}

typedef struct
{
  const gchar *where;
  guint scopes;
  StgThermosRefFunc func;
  gpointer data;
  const StgThermosVars *vars;
  GString *out;
} Walk;

static gboolean
scan_part (const gchar *text, gsize len, const gchar *ref, gpointer data, GError **error)
{
  Walk *w = data;
  StgThermosRefKind kind;
  g_autofree gchar *port = NULL;

  (void) text, (void) len;
  if (ref == NULL)
    return TRUE;
  return classify (ref, w->where, w->scopes, &kind, &port, error) &&
         (w->func == NULL || w->func (kind, port, w->data, error));
}

gboolean
stg_thermos_template_scan (const gchar *text, const gchar *where, guint scopes,
                           StgThermosRefFunc func, gpointer data, GError **error)
{
  Walk w = { where, scopes, func, data, NULL, NULL };

  return walk (text, scan_part, &w, error);
}

static gboolean
expand_part (const gchar *text, gsize len, const gchar *ref, gpointer data, GError **error)
{
  Walk *w = data;
  const StgThermosVars *v = w->vars;
  StgThermosRefKind kind;
  g_autofree gchar *port = NULL;

  if (ref == NULL)
    {
      g_string_append_len (w->out, text, (gssize) len);
      return TRUE;
    }
  if (!classify (ref, w->where, w->scopes, &kind, &port, error))
    return FALSE;
  switch (kind)
    {
    case STG_THERMOS_REF_INSTANCE:
      g_string_append_printf (w->out, "%d", v->instance);
      break;
    case STG_THERMOS_REF_HOSTNAME:
      g_string_append (w->out, v->hostname);
      break;
    case STG_THERMOS_REF_TASK_ID:
      g_string_append (w->out, v->task_id);
      break;
    case STG_THERMOS_REF_USER:
      g_string_append (w->out, v->user);
      break;
    case STG_THERMOS_REF_PORT:
    default:
      {
        gpointer number = NULL;
        if (v->ports == NULL || !g_hash_table_lookup_extended (v->ports, port, NULL, &number))
          return bad (error, "%s: template {{%s}}: no port '%s' was assigned", w->where, ref, port);
        g_string_append_printf (w->out, "%d", GPOINTER_TO_INT (number));
      }
    }
  return TRUE;
}

gchar *
stg_thermos_template_expand (const gchar *text, const gchar *where, guint scopes,
                             const StgThermosVars *vars, GError **error)
{
  g_autoptr (GString) out = g_string_new (NULL);
  Walk w = { where, scopes, NULL, NULL, vars, out };

  g_return_val_if_fail (text != NULL && vars != NULL, NULL);
  if (!walk (text, expand_part, &w, error))
    return NULL;
  return g_string_free (g_steal_pointer (&out), FALSE);
}
