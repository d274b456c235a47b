/* jobkey.c: job key checks, formatting and command-line parsing.
 *
 * Key parts are letters, digits, '.', '_' and '-', at most
 * STG_JOB_KEY_PART_MAX bytes, and never start with '.'. Calls GLib and the
 * generated types only. Any thread.
 */
#include "config.h"

#include <string.h>

#include "common/jobkey.h"

G_DEFINE_QUARK (stg-job-key-error-quark, stg_job_key_error)

/* What is wrong with key part @part, or NULL when it is valid. Parts become
 * folder names (sandboxes), so "." and ".." (and any leading dot) are
 * refused, though Aurora's [\w\-\.]+ would allow them. */
static const gchar *
part_problem (const gchar *part)
{
  gsize n = 0;

  if (part == NULL || part[0] == '\0')
    return "is missing";
  for (const gchar *p = part; *p != '\0'; p++, n++)
    if (!(g_ascii_isalnum (*p) || *p == '.' || *p == '_' || *p == '-'))
      return "may hold only letters, digits, '.', '_' and '-'";
  if (n > STG_JOB_KEY_PART_MAX)
    return "is longer than " G_STRINGIFY (STG_JOB_KEY_PART_MAX) " bytes";
  if (part[0] == '.')
    return "may not start with '.' (\".\" and \"..\" would name other folders)";
  return NULL;
}

gboolean
stg_job_key_part_valid (const gchar *part)
{
  return part_problem (part) == NULL;
}

static gboolean
check_part (const gchar *value, const gchar *what, const gchar *field, GError **error)
{
  const gchar *problem = part_problem (value);

  if (problem == NULL)
    return TRUE;
  if (value == NULL || value[0] == '\0' || strlen (value) > STG_JOB_KEY_PART_MAX)
    g_set_error (error, STG_JOB_KEY_ERROR, STG_JOB_KEY_ERROR_INVALID, "%s.%s %s", what, field,
                 problem);
  else
    {
      g_autofree gchar *shown = g_utf8_make_valid (value, -1);
      g_set_error (error, STG_JOB_KEY_ERROR, STG_JOB_KEY_ERROR_INVALID, "%s.%s '%s' %s", what,
                   field, shown, problem);
    }
  return FALSE;
}

gboolean
stg_job_key_check (const ApiJobKey *key, const gchar *what, GError **error)
{
  if (key == NULL)
    {
      g_set_error (error, STG_JOB_KEY_ERROR, STG_JOB_KEY_ERROR_INVALID, "%s is missing", what);
      return FALSE;
    }
  return check_part (key->role, what, "role", error) &&
         check_part (key->environment, what, "environment", error) &&
         check_part (key->name, what, "name", error);
}

ApiJobKey *
stg_job_key_new (const gchar *role, const gchar *environment, const gchar *name)
{
  return g_object_new (API_TYPE_JOB_KEY,
                       "role", role, "environment", environment, "name", name, NULL);
}

gchar *
stg_job_key_to_string (const ApiJobKey *key)
{
  return g_strdup_printf ("%s/%s/%s", key->role ? key->role : "",
                          key->environment ? key->environment : "",
                          key->name ? key->name : "");
}

gboolean
stg_job_key_equal (const ApiJobKey *a, const ApiJobKey *b)
{
  return g_strcmp0 (a->role, b->role) == 0 &&
         g_strcmp0 (a->environment, b->environment) == 0 &&
         g_strcmp0 (a->name, b->name) == 0;
}

gchar *
stg_job_key_task_id (const ApiJobKey *key, gint32 instance, gint64 run)
{
  return g_strdup_printf ("%s-%s-%s-%d-%" G_GINT64_FORMAT, key->role, key->environment, key->name,
                          instance, run);
}

void
stg_job_path_free (StgJobPath *path)
{
  if (path == NULL)
    return;
  g_free (path->cluster);
  g_clear_object (&path->key);
  stg_ranges_free (path->instances);
  g_free (path);
}

StgJobPath *
stg_job_path_parse (const gchar *text, gboolean allow_instances, GError **error)
{
  static const gchar *const names[] = { "cluster", "role", "environment", "name" };
  g_auto (GStrv) parts = g_strsplit (text, "/", -1);
  guint n = g_strv_length (parts);

  if (n < 4 || n > (allow_instances ? 5u : 4u))
    {
      g_set_error (error, STG_JOB_KEY_ERROR, STG_JOB_KEY_ERROR_INVALID,
                   "bad job key '%s': expected cluster/role/environment/name%s", text,
                   allow_instances ? "[/instances]" : "");
      return NULL;
    }
  for (guint i = 0; i < 4; i++)
    {
      const gchar *problem = part_problem (parts[i]);
      if (problem != NULL)
        {
          g_set_error (error, STG_JOB_KEY_ERROR, STG_JOB_KEY_ERROR_INVALID,
                       "bad job key '%s': the %s '%s' %s", text, names[i], parts[i], problem);
          return NULL;
        }
    }
  g_autoptr (StgJobPath) path = g_new0 (StgJobPath, 1);
  path->cluster = g_strdup (parts[0]);
  path->key = stg_job_key_new (parts[1], parts[2], parts[3]);
  if (n == 5)
    {
      path->instances = stg_ranges_parse (parts[4], error);
      if (path->instances == NULL)
        return NULL;
    }
  return g_steal_pointer (&path);
}
