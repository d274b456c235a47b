/* jobfile_vars.c: plan variables: {{name}} in a plan file and in the job
 * files it names, filled in before either is read.
 *
 * A plan file declares its variables under "variables", each with its
 * default (a string, a number or a boolean) or null (none: it must be
 * given); `stagger plan start FILE --set name=value` gives or overrides
 * them. Every {{name}} of a declared variable is replaced by its value,
 * written as inside a JSON string (so a value may hold quotes); a {{...}}
 * that names no variable is left for staggerd when it is one of the
 * executor's or an instance gate's templates ({{instance}},
 * {{ports[NAME]}}, {{version}}, ...), and is an error naming it
 * otherwise. A declared variable shadows a template of the same name in
 * the plan's files. Any thread.
 */
#include "config.h"

#include <string.h>

#include "cli/jobfile_private.h"
#include "cli/suggest.h"
#include "common/strings.h"
#include "common/templates.h"

/* TRUE for a name staggerd fills in itself (common/templates.c). */
static gboolean
template_name (const gchar *name)
{
  g_autofree gchar *port = stg_template_port (name);
  return port != NULL || g_strv_contains (stg_template_names, name);
}

/* Letters, digits and '_', not first a digit, at most 100. */
static gboolean
variable_name_ok (const gchar *name)
{
  if (name == NULL || name[0] == '\0' || strlen (name) > 100 || g_ascii_isdigit (name[0]))
    return FALSE;
  for (const gchar *c = name; *c; c++)
    if (!g_ascii_isalnum (*c) && *c != '_')
      return FALSE;
  return TRUE;
}

/* @value as it goes inside a JSON string. */
static void
append_escaped (GString *out, const gchar *value)
{
  for (const guchar *c = (const guchar *) value; *c; c++)
    {
      if (*c == '"' || *c == '\\')
        g_string_append_printf (out, "\\%c", *c);
      else if (*c < 0x20)
        g_string_append_printf (out, "\\u%04x", *c);
      else
        g_string_append_c (out, (gchar) *c);
    }
}

/* The error for {{@name}}, which is neither a variable nor a template:
 * declaring it is the fix (--set refuses what is not declared), unless it
 * is a typo of a declared variable, or of a template, which it names. */
static void
not_a_variable (const gchar *file, const gchar *name, GHashTable *vars, GError **error)
{
  g_autoptr (GPtrArray) known = g_ptr_array_new ();
  GHashTableIter it;
  gpointer key;

  if (vars != NULL)
    {
      g_hash_table_iter_init (&it, vars);
      while (g_hash_table_iter_next (&it, &key, NULL))
        g_ptr_array_add (known, key);
      g_ptr_array_sort (known, stg_compare_string_ptrs);
    }
  for (guint i = 0; stg_template_names[i] != NULL; i++)
    g_ptr_array_add (known, (gpointer) stg_template_names[i]);
  g_ptr_array_add (known, NULL);
  /* Declared variables come first: a tie goes to one of them. */
  const gchar *close = stg_cli_suggest (name, (const gchar *const *) known->pdata);
  gboolean template = close != NULL && (vars == NULL || !g_hash_table_contains (vars, close));

  if (close != NULL)
    g_set_error (error, STG_JOB_FILE_ERROR, STG_JOB_FILE_ERROR_VALUE,
                 "%s: {{%s}} is not a variable of the plan: did you mean {{%s}}%s? Otherwise "
                 "declare %s under \"variables\" in the plan file",
                 file, name, close, template ? ", which staggerd fills in" : "", name);
  else
    g_set_error (error, STG_JOB_FILE_ERROR, STG_JOB_FILE_ERROR_VALUE,
                 "%s: {{%s}} is not a variable of the plan: declare %s under \"variables\" in "
                 "the plan file (--set gives values only to declared variables)",
                 file, name, name);
}

typedef struct
{
  const gchar *file;
  GHashTable *vars;
} Substitute;

static gboolean
substitute_one (const gchar *name, const gchar *raw, gsize len, GString *out, gpointer data,
                GError **error)
{
  const Substitute *sub = data;
  const gchar *value = sub->vars ? g_hash_table_lookup (sub->vars, name) : NULL;

  if (value != NULL)
    append_escaped (out, value);
  else if (template_name (name))
    g_string_append_len (out, raw, (gssize) len);
  else
    {
      not_a_variable (sub->file, name, sub->vars, error);
      return FALSE;
    }
  return TRUE;
}

gchar *
stg_jf_substitute (const gchar *file, const gchar *text, GHashTable *vars, GError **error)
{
  g_autoptr (GString) out = g_string_new (NULL);
  g_autoptr (GError) local = NULL;
  Substitute sub = { file, vars };

  /* An unclosed "{{" stays as it is: the reader says what is wrong, if anything. */
  if (!stg_template_each (text, out, substitute_one, &sub, &local) &&
      !g_error_matches (local, STG_TEMPLATE_ERROR, STG_TEMPLATE_ERROR_UNCLOSED))
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* The text of a default: a string as it is, a number or boolean as JSON
 * writes it; NULL (no default) for null. */
static gboolean
default_of (const StgJfCtx *c, JsonNode *node, const gchar *where, gchar **out, GError **error)
{
  *out = NULL;
  if (JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (JSON_NODE_HOLDS_VALUE (node))
    {
      GType t = json_node_get_value_type (node);
      if (t == G_TYPE_STRING)
        *out = g_strdup (json_node_get_string (node));
      else if (t == G_TYPE_BOOLEAN)
        *out = g_strdup (json_node_get_boolean (node) ? "true" : "false");
      else if (t == G_TYPE_INT64)
        *out = g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (node));
      else if (t == G_TYPE_DOUBLE)
        {
          gchar buf[G_ASCII_DTOSTR_BUF_SIZE];
          *out = g_strdup (g_ascii_dtostr (buf, sizeof buf, json_node_get_double (node)));
        }
      if (*out != NULL)
        return TRUE;
    }
  g_autofree gchar *got = stg_jf_describe (node);
  return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_TYPE, where,
                      "expected the variable's default (a string, a number or a boolean), or "
                      "null for none, got %s",
                      got);
}

GHashTable *
stg_jf_plan_variables (const StgJfCtx *c, JsonObject *top, GHashTable *set, GError **error)
{
  g_autoptr (GHashTable) vars = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr (GHashTable) declared = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  JsonObject *o = NULL;

  if (!stg_jf_object (c, top, "", "variables", FALSE, &o, error))
    return NULL;
  g_autoptr (GList) names = o ? json_object_get_members (o) : NULL;
  for (GList *l = names; l != NULL; l = l->next)
    {
      const gchar *name = l->data;
      g_autofree gchar *where = stg_jf_path ("variables", name);
      g_autofree gchar *value = NULL;
      if (!variable_name_ok (name))
        {
          stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, where,
                       "\"%s\" is not a variable name: letters, digits and '_', not first a digit",
                       name);
          return NULL;
        }
      if (!default_of (c, json_object_get_member (o, name), where, &value, error))
        return NULL;
      g_hash_table_add (declared, g_strdup (name));
      if (value != NULL)
        g_hash_table_insert (vars, g_strdup (name), g_steal_pointer (&value));
    }
  GHashTableIter it;
  gpointer key, value;
  if (set != NULL)
    g_hash_table_iter_init (&it, set);
  while (set != NULL && g_hash_table_iter_next (&it, &key, &value))
    {
      if (!g_hash_table_contains (declared, key))
        {
          g_set_error (error, STG_JOB_FILE_ERROR, STG_JOB_FILE_ERROR_VALUE,
                       "%s: --set %s: the plan declares no variable %s (its \"variables\" name "
                       "them)",
                       c->file, (const gchar *) key, (const gchar *) key);
          return NULL;
        }
      g_hash_table_insert (vars, g_strdup (key), g_strdup (value));
    }
  g_hash_table_iter_init (&it, declared);
  while (g_hash_table_iter_next (&it, &key, NULL))
    if (!g_hash_table_contains (vars, key))
      {
        g_set_error (error, STG_JOB_FILE_ERROR, STG_JOB_FILE_ERROR_MISSING,
                     "%s: variable %s has no value: give it with --set %s=VALUE", c->file,
                     (const gchar *) key, (const gchar *) key);
        return NULL;
      }
  return g_steal_pointer (&vars);
}
