/* environ.c: what an instance process is started with: its environment
 * (nothing of staggerd's own, the documented STAGGER_*, PORT* variables and
 * the task's env), the shell command line of a `command`, and the port its
 * health checks go to. Calls the executor's templates; main-loop thread
 * only.
 */
#include "config.h"

#include <string.h>

#include "runtime/local/local_private.h"
#include "spawn/process.h"

/* What every instance, health command and hook starts from: nothing of
 * staggerd's own environment, only a PATH, HOME (@home) and LANG. */
gchar **
stg_local_base_environ (const gchar *home)
{
  gchar **env = NULL;

  env = g_environ_setenv (env, "PATH", STG_LOCAL_PATH, TRUE);
  env = g_environ_setenv (env, "HOME", home, TRUE);
  env = g_environ_setenv (env, "LANG", "C.UTF-8", TRUE);
  return env;
}

gchar *
stg_local_mark (Slot *slot, gint64 run_id)
{
  return g_strdup_printf ("%" G_GINT64_FORMAT ":%d:%" G_GINT64_FORMAT ":%s", slot->base.key.job_id,
                          slot->base.key.instance, run_id, slot->rt->mark_dir);
}

gchar **
stg_local_environment (Slot *slot, Run *run, gint alt_version, GHashTable *ports,
                       gchar **port_names, const StgTemplateVars *vars, GError **error)
{
  gchar **env = stg_local_base_environ (run->sandbox);
  g_autofree gchar *job = g_strdup_printf ("%s/%s/%s", slot->base.job->role,
                                           slot->base.job->environment, slot->base.job->name);
  g_autofree gchar *inst = g_strdup_printf ("%d", slot->base.key.instance);
  g_autofree gchar *ver = g_strdup_printf ("%d", run->version);
  g_autofree gchar *alt = g_strdup_printf ("%d", alt_version);

  env = g_environ_setenv (env, "STAGGER_INSTANCE", inst, TRUE);
  env = g_environ_setenv (env, "STAGGER_JOB", job, TRUE);
  env = g_environ_setenv (env, "STAGGER_VERSION", ver, TRUE);
  env = g_environ_setenv (env, "STAGGER_VERSION_ALT", alt, TRUE);
  /* What it replaces and what it is, the right way round on a rollback
   * too: during a hot upgrade, FROM is the old process's version. */
  g_autofree gchar *from = g_strdup_printf ("%d", run->from_version);
  env = g_environ_setenv (env, "STAGGER_FROM_VERSION", from, TRUE);
  env = g_environ_setenv (env, "STAGGER_TO_VERSION", ver, TRUE);
  env = g_environ_setenv (env, "STAGGER_SANDBOX", run->sandbox, TRUE);
  g_autofree gchar *mark = stg_local_mark (slot, run->id);
  env = g_environ_setenv (env, STG_LOCAL_MARK, mark, TRUE);
  for (guint i = 0; port_names[i] != NULL; i++)
    {
      g_autofree gchar *var = g_ascii_strup (port_names[i], -1);
      g_strdelimit (var, "-", '_');
      g_autofree gchar *name = g_strconcat ("PORT_", var, NULL);
      g_autofree gchar *value =
          g_strdup_printf ("%d", GPOINTER_TO_INT (g_hash_table_lookup (ports, port_names[i])));
      env = g_environ_setenv (env, name, value, TRUE);
      if (i == 0)
        env = g_environ_setenv (env, "PORT", value, TRUE);
    }
  for (guint i = 0; run->spec->env != NULL && run->spec->env[i] != NULL; i++)
    {
      const gchar *eq = strchr (run->spec->env[i], '=');
      g_autofree gchar *name = g_strndup (run->spec->env[i], (gsize) (eq - run->spec->env[i]));
      g_autofree gchar *value = stg_template_expand (eq + 1, vars, NULL, error);
      if (value == NULL)
        {
          g_strfreev (env);
          return NULL;
        }
      env = g_environ_setenv (env, name, value, TRUE);
    }
  return env;
}

/* The port health checks go to: "health", else "http", else the first. */
gint
stg_local_health_port (GHashTable *ports, gchar **names)
{
  gpointer p = g_hash_table_lookup (ports, "health");
  if (p == NULL)
    p = g_hash_table_lookup (ports, "http");
  if (p == NULL && names[0] != NULL)
    p = g_hash_table_lookup (ports, names[0]);
  return GPOINTER_TO_INT (p);
}

/* The first word of @command (after "exec "), when it names a program
 * the way argv[0] may: a bare name, no '=' (an assignment), no shell
 * syntax before it. */
static gboolean
program_word (const gchar *command, gsize *start, gsize *len)
{
  const gchar *p = command;

  while (g_ascii_isspace (*p))
    p++;
  if (g_str_has_prefix (p, "exec "))
    for (p += 5; g_ascii_isspace (*p); p++)
      ;
  gsize n = strcspn (p, " \t\n;&|()<>`$'\"\\=");
  if (n == 0 || (p[n] != '\0' && !g_ascii_isspace (p[n])) || memchr (p, '/', n) != NULL)
    return FALSE;
  *start = (gsize) (p - command);
  *len = n;
  return TRUE;
}

gchar *
stg_local_resolve_command (const gchar *command)
{
  gsize start, len;

  if (!program_word (command, &start, &len))
    return g_strdup (command);
  g_autofree gchar *name = g_strndup (command + start, len);
  g_autofree gchar *own = stg_process_search_path (name, STG_LOCAL_PATH);
  if (own != NULL)
    return g_strdup (command); /* the instance's own PATH finds it */
  g_autofree gchar *found = g_find_program_in_path (name);
  if (found == NULL)
    return g_strdup (command); /* the shell will say it is not found */
  g_autofree gchar *quoted = g_shell_quote (found);
  return g_strdup_printf ("%.*s%s%s", (int) start, command, quoted, command + start + len);
}
