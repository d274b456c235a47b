/* spawn.c: fork and exec for every child of staggerd and stagger-thermos,
 * and StgChild (see spawn.h).
 *
 * Everything the child needs is made before the fork: the program's path,
 * the environment (with room for LISTEN_PID, which only the child knows,
 * filled in with a hand-rolled number formatter), the output files and
 * pipes, and the array the passed descriptors move through. Calls
 * identity.c and process.c (start times, PATH search). Main-loop thread
 * only.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn/process.h"
#include "spawn/spawn.h"

G_DEFINE_QUARK (stg-spawn-error-quark, stg_spawn_error)

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* The step of the child that failed, reported with its errno. */
typedef enum
{
  STEP_FDS = 1,
  STEP_CGROUP,
  STEP_CWD,
  STEP_LIMITS,
  STEP_IDENTITY,
  STEP_PRIVILEGES,
  STEP_PARENT,
  STEP_EXEC,
} Step;

typedef struct
{
  gint step;
  gint err;
} Report;

/* The descriptors of one spawn, made before the fork; -1 when not open.
 * Those the child gets are closed in the parent once it has forked. */
typedef struct
{
  gint report[2]; /* the child's failure; close-on-exec */
  gint null;      /* /dev/null, read and write */
  gint out;       /* the child's standard output (borrowed when STG_SPAWN_FD) */
  gint err;       /* its standard error; -1: as standard output */
  gint opened[2]; /* output files or a pipe's write end, opened here */
  gint pipe_read; /* STG_SPAWN_PIPE: the parent's end */
  gint *moved;    /* room for the passed descriptors on their way to 3, 4, ... */
} Prep;

static void
close_fd (gint *fd)
{
  if (*fd >= 0)
    close (*fd);
  *fd = -1;
}

/* The descriptors only the child needs, closed once it has forked. */
static void
prep_close_child_side (Prep *p)
{
  close_fd (&p->report[1]);
  close_fd (&p->null);
  close_fd (&p->opened[0]);
  close_fd (&p->opened[1]);
}

static void
prep_clear (Prep *p)
{
  prep_close_child_side (p);
  close_fd (&p->report[0]);
  close_fd (&p->pipe_read);
  g_clear_pointer (&p->moved, g_free);
}

static gboolean
fail_errno (GError **error, const gchar *what, const gchar *detail)
{
  int saved = errno;

  g_set_error (error, STG_SPAWN_ERROR, STG_SPAWN_ERROR_FAILED, "%s%s%s: %s", what,
               detail ? " " : "", detail ? detail : "", g_strerror (saved));
  return FALSE;
}

/* Where output @o goes, in *@fd: opened here when it is a file or a pipe. */
static gboolean
prep_output (Prep *p, const StgSpawnOutput *o, gint slot, gint *fd, GError **error)
{
  switch (o->to)
    {
    case STG_SPAWN_NULL:
      *fd = p->null;
      return TRUE;
    case STG_SPAWN_FD:
      *fd = o->fd;
      return TRUE;
    case STG_SPAWN_FILE:
      /* Never through a symlink: a sandbox may belong to another user. */
      p->opened[slot] = open (o->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW,
                              0600);
      if (p->opened[slot] < 0)
        return fail_errno (error, "cannot open", o->path);
      *fd = p->opened[slot];
      return TRUE;
    case STG_SPAWN_PIPE:
      {
        gint ends[2];
        if (pipe2 (ends, O_CLOEXEC) != 0)
          return fail_errno (error, "pipe", NULL);
        p->pipe_read = ends[0];
        p->opened[slot] = ends[1];
        *fd = ends[1];
        return TRUE;
      }
    case STG_SPAWN_AS_STDOUT:
      *fd = -1;
      return TRUE;
    }
  g_return_val_if_reached (FALSE);
}

static gboolean
prep_open (const StgSpawnRequest *r, Prep *p, GError **error)
{
  *p = (Prep){
    .report = { -1, -1 }, .null = -1, .out = -1, .err = -1, .opened = { -1, -1 }, .pipe_read = -1
  };
  p->moved = g_new0 (gint, MAX (r->n_fds, 1u));
  if (pipe2 (p->report, O_CLOEXEC) != 0)
    return fail_errno (error, "pipe", NULL);
  p->null = open ("/dev/null", O_RDWR | O_CLOEXEC);
  if (p->null < 0)
    return fail_errno (error, "cannot open", "/dev/null");
  return prep_output (p, &r->out, 0, &p->out, error) && prep_output (p, &r->err, 1, &p->err, error);
}

/* ---- before the fork -------------------------------------------------------- */

/* The program to exec: argv[0] as is when it has a '/', else found on the
 * child's own PATH when it sets one, else on ours. */
static gchar *
find_program (const StgSpawnRequest *r, GError **error)
{
  const gchar *name = r->argv[0];

  if (strchr (name, '/') != NULL)
    return g_strdup (name);
  const gchar *search = g_environ_getenv ((gchar **) r->envp, "PATH");
  gchar *own = search != NULL ? stg_process_search_path (name, search) : NULL;
  if (own != NULL)
    return own;
  gchar *path = g_find_program_in_path (name);
  if (path == NULL)
    g_set_error (error, STG_SPAWN_ERROR, STG_SPAWN_ERROR_NOT_FOUND,
                 "'%s' was not found on the PATH it runs with (%s) nor on staggerd's (%s): give "
                 "its full path, or install it in one of those folders",
                 name, search ? search : "none", g_getenv ("PATH") ? g_getenv ("PATH") : "none");
  return path;
}

/* The child's environment as borrowed strings: the request's minus any
 * LISTEN_* (staggerd's to set), plus LISTEN_FDS, LISTEN_PID (@listen_pid,
 * filled in by the child) and LISTEN_FDNAMES when descriptors are
 * announced. @listen_fds and @listen_names receive what is allocated here. */
static GPtrArray *
child_environment (const StgSpawnRequest *r, gchar *listen_pid, gchar **listen_fds,
                   gchar **listen_names)
{
  GPtrArray *env = g_ptr_array_new ();

  for (guint i = 0; r->envp != NULL && r->envp[i] != NULL; i++)
    if (!g_str_has_prefix (r->envp[i], "LISTEN_"))
      g_ptr_array_add (env, (gpointer) r->envp[i]);
  if (r->listen_fds && r->n_fds > 0)
    {
      *listen_fds = g_strdup_printf ("LISTEN_FDS=%u", r->n_fds);
      g_ptr_array_add (env, *listen_fds);
      g_ptr_array_add (env, listen_pid);
      if (r->fd_names != NULL)
        {
          *listen_names = g_strconcat ("LISTEN_FDNAMES=", r->fd_names, NULL);
          g_ptr_array_add (env, *listen_names);
        }
    }
  g_ptr_array_add (env, NULL);
  return env;
}

/* ---- in the child: async-signal-safe calls only ------------------------------ */

/* Writes @v in decimal to @buf. */
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

G_GNUC_NORETURN static void
child_fail (gint report, Step step)
{
  Report r = { step, errno };

  (void) !write (report, &r, sizeof r);
  _exit (126);
}

/* Every descriptor from @from up is closed on exec: close_range, else each
 * one /proc/self/fd names (read with getdents64, which allocates nothing),
 * else every number up to the hard limit. */
static void
cloexec_from (gint from)
{
  if (syscall (SYS_close_range, (unsigned) from, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
    return;
  gint dir = open ("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0)
    {
      gchar buf[4096];
      glong got;
      while ((got = syscall (SYS_getdents64, dir, buf, sizeof buf)) > 0)
        for (glong at = 0; at < got;)
          {
            /* struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name */
            guint16 reclen;
            memcpy (&reclen, buf + at + 16, sizeof reclen);
            const gchar *name = buf + at + 19;
            gint fd = 0;
            for (; *name >= '0' && *name <= '9'; name++)
              fd = fd * 10 + (*name - '0');
            if (*name == '\0' && fd >= from && fd != dir)
              fcntl (fd, F_SETFD, FD_CLOEXEC);
            at += reclen;
          }
      close (dir);
      if (got == 0)
        return;
    }
  struct rlimit l;
  rlim_t top = getrlimit (RLIMIT_NOFILE, &l) == 0 ? MIN (l.rlim_max, (rlim_t) 1 << 20) : 65536;
  for (rlim_t fd = (rlim_t) from; fd < top; fd++)
    fcntl ((int) fd, F_SETFD, FD_CLOEXEC);
}

/* Steps 1 to 3 of spawn.h: signals, session or group, descriptors. */
static void
child_descriptors (const StgSpawnRequest *r, const Prep *p, gint *report)
{
  struct sigaction dfl = { .sa_handler = SIG_DFL };
  sigset_t none;

  for (gint s = 1; s < NSIG; s++)
    sigaction (s, &dfl, NULL);
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  if (r->group == STG_SPAWN_SESSION)
    setsid ();
  else
    setpgid (0, 0);

  /* Every source first moves above the numbers it is going to, so no dup2
   * overwrites one still to be copied (a source may be 0, 1 or 2 when
   * staggerd runs without them). */
  gint base = 3 + (gint) r->n_fds;
  gint moved_report = fcntl (*report, F_DUPFD_CLOEXEC, base);
  if (moved_report < 0)
    child_fail (*report, STEP_FDS);
  *report = moved_report;
  gint in = fcntl (p->null, F_DUPFD_CLOEXEC, base);
  gint out = fcntl (p->out, F_DUPFD_CLOEXEC, base);
  gint err = p->err >= 0 ? fcntl (p->err, F_DUPFD_CLOEXEC, base) : out;
  if (in < 0 || out < 0 || err < 0)
    child_fail (*report, STEP_FDS);
  for (guint i = 0; i < r->n_fds; i++)
    if ((p->moved[i] = fcntl (r->fds[i], F_DUPFD_CLOEXEC, base)) < 0)
      child_fail (*report, STEP_FDS);
  /* dup2 clears close-on-exec on what it makes. */
  if (dup2 (in, 0) < 0 || dup2 (out, 1) < 0 || dup2 (err, 2) < 0)
    child_fail (*report, STEP_FDS);
  for (guint i = 0; i < r->n_fds; i++)
    if (dup2 (p->moved[i], 3 + (gint) i) < 0)
      child_fail (*report, STEP_FDS);
  cloexec_from (base);
}

/* Step 5: umask and resource limits. */
static void
child_limits (const StgSpawnRequest *r, gint report)
{
  gboolean files = FALSE;

  umask (r->umask != 0 ? r->umask : STG_SPAWN_UMASK);
  for (guint i = 0; i < r->n_limits; i++)
    {
      struct rlimit l = { r->limits[i].soft, r->limits[i].hard };
      files |= r->limits[i].resource == RLIMIT_NOFILE;
      if (setrlimit (r->limits[i].resource, &l) != 0)
        child_fail (report, STEP_LIMITS);
    }
  struct rlimit l;
  if (!files && getrlimit (RLIMIT_NOFILE, &l) == 0 && l.rlim_cur > STG_SPAWN_MAX_FILES)
    {
      l.rlim_cur = MIN ((rlim_t) STG_SPAWN_MAX_FILES, l.rlim_max);
      if (setrlimit (RLIMIT_NOFILE, &l) != 0)
        child_fail (report, STEP_LIMITS);
    }
}

/* Step 0: joins its control groups, before it does anything else. */
static void
child_join (const StgSpawnRequest *r, gint report)
{
  gchar pid[24];

  put_number (pid, (long) getpid ());
  for (guint i = 0; i < r->n_join; i++)
    if (write (r->join[i], pid, strlen (pid)) < 0)
      child_fail (report, STEP_CGROUP);
}

G_GNUC_NORETURN static void
child_exec (const StgSpawnRequest *r, const Prep *p, const gchar *path, gchar **envp,
            gchar *listen_pid, pid_t parent)
{
  gint report = p->report[1];

  child_join (r, report);
  child_descriptors (r, p, &report);
  /* Entered as root: the user it becomes may not pass the folders above. */
  if (chdir (r->cwd != NULL ? r->cwd : "/") != 0)
    child_fail (report, STEP_CWD);
  child_limits (r, report);
  if (r->identity != NULL)
    {
      gint e = stg_identity_apply (r->identity);
      if (e != 0)
        {
          errno = e;
          child_fail (report, STEP_IDENTITY);
        }
    }
  prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    child_fail (report, STEP_PRIVILEGES);
  /* After the user change, which clears it; a parent that died before it
   * was set has left the child to another. */
  if (r->die_with_parent &&
      (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || getppid () != parent))
    child_fail (report, STEP_PARENT);
  put_number (listen_pid + strlen ("LISTEN_PID="), (long) getpid ());
  execve (path, (gchar **) r->argv, envp);
  child_fail (report, STEP_EXEC);
}

/* ---- after the fork -------------------------------------------------------- */

/* What the child reported, as @error. */
static void
child_failed (const StgSpawnRequest *r, const gchar *path, const Report *rep, GError **error)
{
  g_autofree gchar *step = NULL;

  switch ((Step) rep->step)
    {
    case STEP_FDS:
      step = g_strdup ("setting up its descriptors: ");
      break;
    case STEP_CGROUP:
      step = g_strdup ("joining its control group: ");
      break;
    case STEP_CWD:
      step = g_strdup_printf ("chdir %s: ", r->cwd != NULL ? r->cwd : "/");
      break;
    case STEP_LIMITS:
      step = g_strdup ("setting its resource limits: ");
      break;
    case STEP_IDENTITY:
      step = g_strdup_printf ("becoming user %s: ", r->identity->name);
      break;
    case STEP_PRIVILEGES:
      step = g_strdup ("PR_SET_NO_NEW_PRIVS: ");
      break;
    case STEP_PARENT:
      step = g_strdup ("its parent is gone: ");
      break;
    case STEP_EXEC:
      step = g_strdup ("");
      break;
    }
  g_set_error (error, STG_SPAWN_ERROR, STG_SPAWN_ERROR_FAILED, "cannot run %s: %s%s", path,
               step ? step : "", g_strerror (rep->err));
}

gboolean
stg_spawn (const StgSpawnRequest *r, StgSpawned *spawned, GError **error)
{
  gchar listen_pid[48] = "LISTEN_PID=";
  g_autofree gchar *listen_fds = NULL, *listen_names = NULL;
  Prep p;

  g_return_val_if_fail (r->argv != NULL && r->argv[0] != NULL, FALSE);
  g_return_val_if_fail (r->out.to != STG_SPAWN_AS_STDOUT && r->err.to != STG_SPAWN_PIPE, FALSE);

  g_autofree gchar *path = find_program (r, error);
  if (path == NULL)
    return FALSE;
  g_autoptr (GPtrArray) env = child_environment (r, listen_pid, &listen_fds, &listen_names);
  if (!prep_open (r, &p, error))
    {
      prep_clear (&p);
      return FALSE;
    }
  if (r->identity != NULL && r->own_dir != NULL &&
      chown (r->own_dir, r->identity->uid, r->identity->gid) != 0)
    {
      g_autofree gchar *what = g_strdup_printf ("cannot give %s to %s", r->own_dir,
                                                r->identity->name);
      fail_errno (error, what, NULL);
      prep_clear (&p);
      return FALSE;
    }

  pid_t parent = getpid ();
  pid_t child = fork ();
  if (child == 0)
    child_exec (r, &p, path, (gchar **) env->pdata, listen_pid, parent);
  int saved_fork = errno;
  prep_close_child_side (&p);
  if (child < 0)
    {
      errno = saved_fork;
      fail_errno (error, "fork", NULL);
      prep_clear (&p);
      return FALSE;
    }
  Report rep = { 0, 0 };
  ssize_t got;
  do
    got = read (p.report[0], &rep, sizeof rep);
  while (got < 0 && errno == EINTR);
  if (got > 0)
    {
      waitpid (child, NULL, 0);
      child_failed (r, path, &rep, error);
      prep_clear (&p);
      return FALSE;
    }
  spawned->pid = child;
  spawned->start_time = stg_process_start_time (child);
  spawned->out = p.pipe_read;
  p.pipe_read = -1;
  prep_clear (&p);
  return TRUE;
}

gboolean
stg_spawn_reexec (const gchar *const *argv, GError **error)
{
  execv ("/proc/self/exe", (gchar **) argv);
  return fail_errno (error, "cannot run /proc/self/exe", NULL);
}

gchar *
stg_spawn_describe (gint status)
{
  if (WIFEXITED (status))
    return g_strdup_printf ("exited with status %d", WEXITSTATUS (status));
  if (WIFSIGNALED (status))
    return g_strdup_printf ("killed by signal %d (%s)", WTERMSIG (status),
                            g_strsignal (WTERMSIG (status)));
  return g_strdup_printf ("ended (wait status %d)", status);
}

/* ---- StgChild ------------------------------------------------------------------ */

struct _StgChild
{
  GPid pid;
  gint out; /* the pipe's read end, or -1 */
  gboolean ended;
  StgChildDone done; /* NULL once freed: the watch then only reaps */
  gpointer data;
};

static void
child_release (StgChild *c)
{
  close_fd (&c->out);
  g_free (c);
}

static void
on_child_exit (GPid pid, gint status, gpointer data)
{
  StgChild *c = data;

  (void) pid;
  c->ended = TRUE;
  if (c->done == NULL)
    child_release (c);
  else
    c->done (c->data, status); /* may free @c */
}

StgChild *
stg_child_spawn (const StgSpawnRequest *request, StgChildDone done, gpointer data, GError **error)
{
  StgSpawned s;

  g_return_val_if_fail (done != NULL, NULL);
  if (!stg_spawn (request, &s, error))
    return NULL;
  StgChild *c = g_new0 (StgChild, 1);
  c->pid = s.pid;
  c->out = s.out;
  c->done = done;
  c->data = data;
  g_child_watch_add (s.pid, on_child_exit, c);
  return c;
}

gint
stg_child_steal_out (StgChild *c)
{
  gint fd = c->out;

  c->out = -1;
  return fd;
}

void
stg_child_kill (StgChild *c)
{
  if (!c->ended)
    stg_process_signal_group (c->pid, SIGKILL);
}

void
stg_child_free (StgChild *c)
{
  if (c == NULL)
    return;
  if (c->ended)
    child_release (c);
  else
    c->done = NULL;
}
