/* runner_spawn.c: one run of one process, as Thermos starts it: "bash -c
 * CMDLINE" in the sandbox (HOME is the sandbox too), with .thermos_profile
 * read first when the sandbox has one (through BASH_ENV, or a leading "."
 * when the shell is not bash), standard input from /dev/null, output in
 * .logs/<process>/<run>/, in a session of its own, and killed if the runner
 * dies. Everything is prepared before fork(); the child calls only
 * async-signal-safe functions. Main-loop thread only.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/error.h"
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

/* What the child needs, all made before fork(). */
typedef struct
{
  pid_t parent;
  const gchar *sandbox;
  gchar *argv[4];
  gchar **envp;
  gint in, out, err;
  gint max_fd;
  const gchar *exec_failed; /* the message when exec fails */
} Child;

static void
close_from (gint first, gint max_fd)
{
#ifdef SYS_close_range
  if (syscall (SYS_close_range, (unsigned) first, ~0U, 0) == 0)
    return;
#endif
  for (gint fd = first; fd < max_fd; fd++)
    close (fd);
}

static void G_GNUC_NORETURN
child (const Child *c)
{
  sigset_t none;
  struct sigaction dfl = { 0 };

  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  dfl.sa_handler = SIG_DFL;
  for (gint sig = 1; sig < NSIG; sig++)
    if (sig != SIGKILL && sig != SIGSTOP)
      sigaction (sig, &dfl, NULL);
  setsid ();
  prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (getppid () != c->parent)
    _exit (127); /* the runner died before the prctl */
  if (chdir (c->sandbox) != 0 || dup2 (c->in, 0) < 0 || dup2 (c->out, 1) < 0 ||
      dup2 (c->err, 2) < 0)
    _exit (127);
  close_from (3, c->max_fd);
  execve (c->argv[0], c->argv, c->envp);
  if (write (2, c->exec_failed, strlen (c->exec_failed)) < 0)
    _exit (127);
  _exit (127);
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
  g_autofree gchar *exec_failed = g_strdup_printf ("stagger-thermos: cannot run %s\n", r->shell);
  struct rlimit nofile = { 1024, 1024 };
  Child c = { getpid (), r->sandbox, { r->shell, (gchar *) "-c", script, NULL }, NULL, -1, -1, -1,
              1024,      exec_failed };

  proc->run++;
  proc->runs++;
  if (g_mkdir_with_parents (dir, 0755) != 0)
    return stg_fail (error, G_IO_ERROR, g_io_error_from_errno (errno), "cannot make %s: %s", dir,
                     g_strerror (errno));
  if (has_profile && r->bash)
    envp = g_environ_setenv (envp, "BASH_ENV", profile, TRUE);
  c.envp = envp;
  if (getrlimit (RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY)
    c.max_fd = (gint) MIN (nofile.rlim_cur, 65536);
  c.in = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  if (c.in < 0 || !stg_runner_logs_open (r, proc, dir, &c.out, &c.err, error))
    {
      if (c.in < 0)
        stg_fail (error, G_IO_ERROR, g_io_error_from_errno (errno), "/dev/null: %s",
                  g_strerror (errno));
      close_fd (&c.in);
      return FALSE;
    }
  pid_t pid = fork ();
  if (pid == 0)
    child (&c);
  gint fork_errno = errno;
  close_fd (&c.in);
  close_fd (&c.out);
  close_fd (&c.err);
  if (pid < 0)
    return stg_fail (error, G_IO_ERROR, g_io_error_from_errno (fork_errno), "fork: %s",
                     g_strerror (fork_errno));
  proc->pid = pid;
  proc->state = STG_RUN_RUNNING;
  proc->start_time = g_get_real_time ();
  proc->stop_time = 0;
  proc->exit_status = -1;
  proc->signal = 0;
  return TRUE;
}
