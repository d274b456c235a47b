/* runner_spawn.c: one run of one process, as Thermos starts it: "bash -c
 * CMDLINE" in the sandbox (HOME is the sandbox too), with .thermos_profile
 * read first when the sandbox has one (through BASH_ENV, or a leading "."
 * when the shell is not bash), standard input from /dev/null, output in
 * .logs/<process>/<run>/, in a session of its own, and killed if the runner
 * dies. Started through spawn/spawn.c, as every process of Stagger's is.
 * Main-loop thread only.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "common/error.h"
#include "spawn/spawn.h"
#include "thermos/runner.h"

#define PROFILE ".thermos_profile"
#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

gchar **
stg_runner_base_environ (gchar **parent, const gchar *sandbox, const gchar *user, gboolean preserve)
{
  gchar **env = preserve ? g_strdupv (parent) : g_new0 (gchar *, 1);
  const gchar *path = g_environ_getenv (parent, "PATH");

  /* staggerd's marks (STAGGER_*) stay, so that it finds every process. */
  for (guint i = 0; !preserve && parent != NULL && parent[i] != NULL; i++)
    {
      const gchar *eq = strchr (parent[i], '=');
      if (g_str_has_prefix (parent[i], "STAGGER_") && eq != NULL)
        {
          g_autofree gchar *name = g_strndup (parent[i], (gsize) (eq - parent[i]));
          env = g_environ_setenv (env, name, eq + 1, TRUE);
        }
    }
  env = g_environ_setenv (env, "HOME", sandbox, TRUE);
  env = g_environ_setenv (env, "USER", user, TRUE);
  env = g_environ_setenv (env, "LOGNAME", user, TRUE);
  env = g_environ_setenv (env, "PATH", path != NULL ? path : DEFAULT_PATH, TRUE);
  return env;
}

static void
close_fd (gint *fd)
{
  if (*fd >= 0)
    close (*fd);
  *fd = -1;
}

gboolean
stg_runner_spawn (StgRunner *r, StgRunnerProc *proc, GError **error)
{
  g_autofree gchar *run = g_strdup_printf ("%d", proc->run + 1);
  g_autofree gchar *dir = g_build_filename (r->sandbox, ".logs", proc->spec->name, run, NULL);
  g_autofree gchar *profile = g_build_filename (r->sandbox, PROFILE, NULL);
  gboolean has_profile = g_file_test (profile, G_FILE_TEST_EXISTS);
  g_autofree gchar *quoted = g_shell_quote (profile);
  g_autofree gchar *script = has_profile && !r->bash
                                 ? g_strconcat (". ", quoted, "\n", proc->cmdline, NULL)
                                 : g_strdup (proc->cmdline);
  g_auto (GStrv) envp = g_strdupv (r->environ);
  const gchar *argv[] = { r->shell, "-c", script, NULL };
  gint out = -1, err = -1;

  proc->run++;
  proc->runs++;
  if (g_mkdir_with_parents (dir, 0755) != 0)
    return stg_fail (error, G_IO_ERROR, g_io_error_from_errno (errno), "cannot make %s: %s", dir,
                     g_strerror (errno));
  if (has_profile && r->bash)
    envp = g_environ_setenv (envp, "BASH_ENV", profile, TRUE);
  if (!stg_runner_logs_open (r, proc, dir, &out, &err, error))
    return FALSE;
  StgSpawnRequest req = {
    .argv = argv,
    .envp = (const gchar *const *) envp,
    .cwd = r->sandbox,
    .group = STG_SPAWN_SESSION,
    .out = { .to = STG_SPAWN_FD, .fd = out },
    .err = { .to = STG_SPAWN_FD, .fd = err },
    .die_with_parent = TRUE,
  };
  StgSpawned spawned;
  gboolean ok = stg_spawn (&req, &spawned, error);
  if (!ok)
    {
      /* Where the process's own output would have said it. */
      g_autofree gchar *line = g_strdup_printf ("stagger-thermos: %s\n", (*error)->message);
      (void) !write (err, line, strlen (line));
    }
  close_fd (&out);
  close_fd (&err);
  if (!ok)
    return FALSE;
  proc->pid = spawned.pid;
  proc->state = STG_RUN_RUNNING;
  proc->start_time = g_get_real_time ();
  proc->stop_time = 0;
  proc->exit_status = -1;
  proc->signal = 0;
  return TRUE;
}
