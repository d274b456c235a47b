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

/* The start time of @pid, or -1 if there is no such process. */
static gint64
process_start_time (GPid pid)
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
  gint64 t = process_start_time (pid);
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

static void
marked_process_free (StgMarkedProcess *p)
{
  if (p == NULL)
    return;
  g_free (p->mark);
  g_free (p);
}

/* The session id of @pid (field 6 of /proc/PID/stat), or -1. */
static gint64
session_of (const gchar *pid)
{
  g_autofree gchar *path = g_strdup_printf ("/proc/%s/stat", pid);
  g_autofree gchar *text = NULL;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return -1;
  const gchar *p = strrchr (text, ')');
  if (p == NULL)
    return -1;
  g_auto (GStrv) f = g_strsplit (p + 2, " ", 6);
  return g_strv_length (f) >= 5 ? g_ascii_strtoll (f[3], NULL, 10) : -1;
}

/* The value of @prefix ("NAME=") in /proc/@pid/environ, or NULL. */
static gchar *
environ_value (const gchar *pid, const gchar *prefix)
{
  g_autofree gchar *path = g_strdup_printf ("/proc/%s/environ", pid);
  g_autofree gchar *text = NULL;
  gsize len = 0;

  if (!g_file_get_contents (path, &text, &len, NULL))
    return NULL;
  for (gsize at = 0; at < len; at += strlen (text + at) + 1)
    if (g_str_has_prefix (text + at, prefix))
      return g_strdup (text + at + strlen (prefix));
  return NULL;
}

GPtrArray *
stg_process_find_marked (const gchar *name)
{
  GPtrArray *found = g_ptr_array_new_with_free_func ((GDestroyNotify) marked_process_free);
  g_autoptr (GDir) dir = g_dir_open ("/proc", 0, NULL);
  g_autofree gchar *prefix = g_strconcat (name, "=", NULL);
  const gchar *entry;

  while (dir != NULL && (entry = g_dir_read_name (dir)) != NULL)
    {
      if (!g_ascii_isdigit (entry[0]))
        continue;
      GPid pid = (GPid) g_ascii_strtoll (entry, NULL, 10);
      if (session_of (entry) != pid)
        continue;
      g_autofree gchar *mark = environ_value (entry, prefix);
      gint64 start = mark != NULL ? process_start_time (pid) : -1;
      if (start < 0)
        continue;
      StgMarkedProcess *p = g_new0 (StgMarkedProcess, 1);
      p->pid = pid;
      p->start_time = start;
      p->mark = g_steal_pointer (&mark);
      g_ptr_array_add (found, p);
    }
  return found;
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

gchar *
stg_process_search_path (const gchar *name, const gchar *search)
{
  g_auto (GStrv) dirs = g_strsplit (search, ":", -1);

  for (guint i = 0; dirs[i] != NULL; i++)
    {
      g_autofree gchar *cand = g_build_filename (dirs[i][0] ? dirs[i] : ".", name, NULL);
      if (g_file_test (cand, G_FILE_TEST_IS_EXECUTABLE) && !g_file_test (cand, G_FILE_TEST_IS_DIR))
        return g_steal_pointer (&cand);
    }
  return NULL;
}

/* The program to exec: argv[0] as is when it has a '/', else found on the
 * instance's own PATH when it sets one, else on ours. */
static gchar *
find_program (const StgSpawn *s, GError **error)
{
  if (strchr (s->argv[0], '/') != NULL)
    return g_strdup (s->argv[0]);
  const gchar *search = g_environ_getenv (s->envp, "PATH");
  gchar *own = search != NULL ? stg_process_search_path (s->argv[0], search) : NULL;
  if (own != NULL)
    return own;
  gchar *path = g_find_program_in_path (s->argv[0]);
  if (path == NULL)
    g_set_error (error, STG_PROCESS_ERROR, STG_PROCESS_ERROR_NOT_FOUND,
                 "'%s' was not found on PATH", s->argv[0]);
  return path;
}

/* The child's environment as borrowed strings: the caller's minus any
 * LISTEN_*, plus LISTEN_FDS, LISTEN_PID (@listen_pid, filled in by the
 * child) and LISTEN_FDNAMES when sockets are passed. @listen_fds and
 * @listen_names receive the strings allocated here. */
static GPtrArray *
child_environment (const StgSpawn *s, gchar *listen_pid, gchar **listen_fds, gchar **listen_names)
{
  GPtrArray *env = g_ptr_array_new ();

  for (guint i = 0; s->envp != NULL && s->envp[i] != NULL; i++)
    if (!g_str_has_prefix (s->envp[i], "LISTEN_"))
      g_ptr_array_add (env, s->envp[i]);
  if (s->n_fds > 0)
    {
      *listen_fds = g_strdup_printf ("LISTEN_FDS=%u", s->n_fds);
      g_ptr_array_add (env, *listen_fds);
      g_ptr_array_add (env, listen_pid);
      if (s->fd_names != NULL)
        {
          *listen_names = g_strconcat ("LISTEN_FDNAMES=", s->fd_names, NULL);
          g_ptr_array_add (env, *listen_names);
        }
    }
  g_ptr_array_add (env, NULL);
  return env;
}

/* The descriptors a spawn needs before the fork; -1 when not open. */
typedef struct
{
  gint pipe[2];              /* exec errors, close-on-exec */
  gint out, err, null;
} SpawnFds;

static void
spawn_fds_close (SpawnFds *f)
{
  gint *all[] = { &f->pipe[0], &f->pipe[1], &f->out, &f->err, &f->null };

  for (guint i = 0; i < G_N_ELEMENTS (all); i++)
    if (*all[i] >= 0)
      {
        close (*all[i]);
        *all[i] = -1;
      }
}

static gboolean
spawn_fds_open (const StgSpawn *s, SpawnFds *f, GError **error)
{
  *f = (SpawnFds) { .pipe = { -1, -1 }, .out = -1, .err = -1, .null = -1 };
  if (pipe2 (f->pipe, O_CLOEXEC) != 0)
    {
      int saved = errno;
      g_set_error (error, STG_PROCESS_ERROR, STG_PROCESS_ERROR_FAILED, "pipe: %s", g_strerror (saved));
      return FALSE;
    }
  /* Never through a symlink: a sandbox may belong to another user. */
  f->out = open (s->stdout_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  f->err = open (s->stderr_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  f->null = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  if (f->out < 0 || f->err < 0 || f->null < 0)
    {
      int saved = errno;
      g_set_error (error, STG_PROCESS_ERROR, STG_PROCESS_ERROR_FAILED, "cannot open output files: %s",
                   g_strerror (saved));
      spawn_fds_close (f);
      return FALSE;
    }
  return TRUE;
}

/* The child between fork and exec: async-signal-safe calls only. */
G_GNUC_NORETURN static void
child_exec (const StgSpawn *s, const SpawnFds *f, const gchar *path, gchar **envp, gchar *listen_pid)
{
  sigset_t none;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  signal (SIGPIPE, SIG_DFL);
  setsid ();
  dup2 (f->null, 0);
  dup2 (f->out, 1);
  dup2 (f->err, 2);
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
      (void) !write (f->pipe[1], &e, sizeof e);
      _exit (126);
    }
  /* Its sandbox is entered first: the user it becomes may not be able to
   * reach it from the root. */
  if (s->identity != NULL)
    {
      int e = stg_identity_apply (s->identity);
      if (e != 0)
        {
          (void) !write (f->pipe[1], &e, sizeof e);
          _exit (126);
        }
    }
  put_number (listen_pid + strlen ("LISTEN_PID="), (long) getpid ());
  execve (path, s->argv, envp);
  int e = errno;
  (void) !write (f->pipe[1], &e, sizeof e);
  _exit (127);
}

gboolean
stg_process_spawn (const StgSpawn *s, GPid *pid, gint64 *start_time, GError **error)
{
  gchar listen_pid[48] = "LISTEN_PID=";
  g_autofree gchar *listen_fds = NULL, *listen_names = NULL;
  SpawnFds f;

  g_return_val_if_fail (s->argv != NULL && s->argv[0] != NULL, FALSE);

  g_autofree gchar *path = find_program (s, error);
  if (path == NULL)
    return FALSE;
  g_autoptr (GPtrArray) env = child_environment (s, listen_pid, &listen_fds, &listen_names);
  if (!spawn_fds_open (s, &f, error))
    return FALSE;
  if (s->identity != NULL && s->own_dir != NULL &&
      chown (s->own_dir, s->identity->uid, s->identity->gid) != 0)
    {
      int saved = errno;
      spawn_fds_close (&f);
      g_set_error (error, STG_PROCESS_ERROR, STG_PROCESS_ERROR_FAILED, "cannot give %s to %s: %s",
                   s->own_dir, s->identity->name, g_strerror (saved));
      return FALSE;
    }

  pid_t child = fork ();
  if (child == 0)
    child_exec (s, &f, path, (gchar **) env->pdata, listen_pid);

  int saved_fork = errno;
  gint report = f.pipe[0];
  f.pipe[0] = -1;
  spawn_fds_close (&f);
  if (child < 0)
    {
      close (report);
      g_set_error (error, STG_PROCESS_ERROR, STG_PROCESS_ERROR_FAILED, "fork: %s",
                   g_strerror (saved_fork));
      return FALSE;
    }
  int child_errno = 0;
  ssize_t got;
  do
    got = read (report, &child_errno, sizeof child_errno);
  while (got < 0 && errno == EINTR);
  close (report);
  if (got > 0)
    {
      waitpid (child, NULL, 0);
      g_set_error (error, STG_PROCESS_ERROR, STG_PROCESS_ERROR_FAILED, "cannot run %s: %s", path,
                   g_strerror (child_errno));
      return FALSE;
    }
  *pid = child;
  *start_time = process_start_time (child);
  return TRUE;
}
