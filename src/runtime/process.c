/* process.c: fork and exec with our own session, process group, output
 * files and passed sockets; pid start times; pidfds.
 *
 * Between fork and exec the child only makes async-signal-safe calls. The
 * environment is built before the fork with room for LISTEN_PID, which only
 * the child can know, filled in with a hand-rolled number formatter. Exec
 * failures come back to the parent through a close-on-exec pipe: reading
 * nothing means the exec happened. Main-loop thread only.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/process.h"

G_DEFINE_QUARK (stg-process-error-quark, stg_process_error)

gint64
stg_process_start_time (GPid pid)
{
  g_autofree gchar *path = g_strdup_printf ("/proc/%d/stat", (int) pid);
  g_autofree gchar *text = NULL;

  if (pid <= 0 || !g_file_get_contents (path, &text, NULL, NULL))
    return -1;
  /* The command name (field 2) may hold spaces: count from its ')'. */
  const gchar *p = strrchr (text, ')');
  if (p == NULL)
    return -1;
  g_auto (GStrv) f = g_strsplit (p + 2, " ", 25);
  /* After ')': field 3 is state, so field 22 (starttime) is index 19. */
  if (g_strv_length (f) < 21)
    return -1;
  if (f[0][0] == 'Z' || f[0][0] == 'X')
    return -1;                       /* a zombie is not alive */
  return g_ascii_strtoll (f[19], NULL, 10);
}

gboolean
stg_process_is (GPid pid, gint64 start_time)
{
  gint64 t = stg_process_start_time (pid);
  return t >= 0 && t == start_time;
}

gint
stg_process_pidfd (GPid pid, GError **error)
{
  gint fd = (gint) syscall (SYS_pidfd_open, pid, 0);

  if (fd < 0)
    {
      int saved = errno;
      g_set_error (error, STG_PROCESS_ERROR,
                   saved == ESRCH ? STG_PROCESS_ERROR_NOT_FOUND : STG_PROCESS_ERROR_FAILED,
                   "pidfd_open(%d): %s", (int) pid, g_strerror (saved));
      return -1;
    }
  fcntl (fd, F_SETFD, FD_CLOEXEC);
  return fd;
}

gint
stg_process_getfd (gint pidfd, gint fd, GError **error)
{
  gint copy = (gint) syscall (SYS_pidfd_getfd, pidfd, fd, 0);

  if (copy < 0)
    {
      int saved = errno;
      g_set_error (error, STG_PROCESS_ERROR, STG_PROCESS_ERROR_FAILED, "pidfd_getfd: %s",
                   g_strerror (saved));
      return -1;
    }
  fcntl (copy, F_SETFD, FD_CLOEXEC);
  return copy;
}

void
stg_process_signal_group (GPid pid, gint sig)
{
  if (pid > 0)
    kill (-pid, sig);
}

/* Writes @v in decimal to @buf (async-signal-safe). */
static void
put_number (gchar *buf, long v)
{
  gchar tmp[24];
  gint n = 0;

  do
    tmp[n++] = (gchar) ('0' + v % 10);
  while ((v /= 10) > 0 && n < 23);
  while (n > 0)
    *buf++ = tmp[--n];
  *buf = '\0';
}

gboolean
stg_process_spawn (const StgSpawn *s, GPid *pid, gint64 *start_time, GError **error)
{
  g_autofree gchar *path = NULL;
  g_autoptr (GPtrArray) env = g_ptr_array_new ();
  gchar listen_pid[48] = "LISTEN_PID=";
  g_autofree gchar *listen_fds = NULL, *listen_names = NULL;
  int pipefd[2];

  g_return_val_if_fail (s->argv != NULL && s->argv[0] != NULL, FALSE);

  if (strchr (s->argv[0], '/') != NULL)
    path = g_strdup (s->argv[0]);
  else
    {
      /* Looked up on the instance's own PATH when it sets one. */
      const gchar *search = g_environ_getenv (s->envp, "PATH");
      if (search != NULL)
        {
          g_auto (GStrv) dirs = g_strsplit (search, ":", -1);
          for (guint i = 0; dirs[i] != NULL && path == NULL; i++)
            {
              g_autofree gchar *cand = g_build_filename (dirs[i][0] ? dirs[i] : ".", s->argv[0], NULL);
              if (g_file_test (cand, G_FILE_TEST_IS_EXECUTABLE) && !g_file_test (cand, G_FILE_TEST_IS_DIR))
                path = g_steal_pointer (&cand);
            }
        }
      if (path == NULL)
        path = g_find_program_in_path (s->argv[0]);
    }
  if (path == NULL)
    {
      g_set_error (error, STG_PROCESS_ERROR, STG_PROCESS_ERROR_NOT_FOUND,
                   "'%s' was not found on PATH", s->argv[0]);
      return FALSE;
    }

  for (guint i = 0; s->envp != NULL && s->envp[i] != NULL; i++)
    if (!g_str_has_prefix (s->envp[i], "LISTEN_"))
      g_ptr_array_add (env, s->envp[i]);
  if (s->n_fds > 0)
    {
      listen_fds = g_strdup_printf ("LISTEN_FDS=%u", s->n_fds);
      g_ptr_array_add (env, listen_fds);
      g_ptr_array_add (env, listen_pid);
      if (s->fd_names != NULL)
        {
          listen_names = g_strconcat ("LISTEN_FDNAMES=", s->fd_names, NULL);
          g_ptr_array_add (env, listen_names);
        }
    }
  g_ptr_array_add (env, NULL);

  if (pipe2 (pipefd, O_CLOEXEC) != 0)
    {
      int saved = errno;
      g_set_error (error, STG_PROCESS_ERROR, STG_PROCESS_ERROR_FAILED, "pipe: %s", g_strerror (saved));
      return FALSE;
    }
  gint out = open (s->stdout_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  gint err = open (s->stderr_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  gint null = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  if (out < 0 || err < 0 || null < 0)
    {
      int saved = errno;
      g_set_error (error, STG_PROCESS_ERROR, STG_PROCESS_ERROR_FAILED, "cannot open output files: %s",
                   g_strerror (saved));
      close (pipefd[0]), close (pipefd[1]);
      if (out >= 0) close (out);
      if (err >= 0) close (err);
      if (null >= 0) close (null);
      return FALSE;
    }

  pid_t child = fork ();
  if (child == 0)
    {
      /* The child: async-signal-safe calls only, until exec. */
      sigset_t none;
      sigemptyset (&none);
      sigprocmask (SIG_SETMASK, &none, NULL);
      signal (SIGPIPE, SIG_DFL);
      setsid ();
      dup2 (null, 0);
      dup2 (out, 1);
      dup2 (err, 2);
      /* Move the sockets out of the way first, then to 3, 4, ... */
      gint high[64];
      guint n = MIN (s->n_fds, 64u);
      for (guint i = 0; i < n; i++)
        high[i] = fcntl (s->fds[i], F_DUPFD_CLOEXEC, 100);
      for (guint i = 0; i < n; i++)
        dup2 (high[i], 3 + (gint) i);   /* dup2 clears close-on-exec */
      /* Nothing else of the daemon's leaks into the instance. */
      syscall (SYS_close_range, 3 + n, ~0U, 1U << 2 /* CLOSE_RANGE_CLOEXEC */);
      if (s->cwd != NULL && chdir (s->cwd) != 0)
        {
          int e = errno;
          (void) !write (pipefd[1], &e, sizeof e);
          _exit (126);
        }
      put_number (listen_pid + strlen ("LISTEN_PID="), (long) getpid ());
      execve (path, s->argv, (gchar **) env->pdata);
      int e = errno;
      (void) !write (pipefd[1], &e, sizeof e);
      _exit (127);
    }

  int saved_fork = errno;
  close (pipefd[1]);
  close (out);
  close (err);
  close (null);
  if (child < 0)
    {
      close (pipefd[0]);
      g_set_error (error, STG_PROCESS_ERROR, STG_PROCESS_ERROR_FAILED, "fork: %s",
                   g_strerror (saved_fork));
      return FALSE;
    }
  int child_errno = 0;
  ssize_t got;
  do
    got = read (pipefd[0], &child_errno, sizeof child_errno);
  while (got < 0 && errno == EINTR);
  close (pipefd[0]);
  if (got > 0)
    {
      waitpid (child, NULL, 0);
      g_set_error (error, STG_PROCESS_ERROR, STG_PROCESS_ERROR_FAILED, "cannot run %s: %s", path,
                   g_strerror (child_errno));
      return FALSE;
    }
  *pid = child;
  *start_time = stg_process_start_time (child);
  return TRUE;
}
