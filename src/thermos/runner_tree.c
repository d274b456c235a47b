/* runner_tree.c: the runner's process trees, without cgroups. The runner
 * is the child subreaper of everything it starts (PR_SET_CHILD_SUBREAPER),
 * so a process that daemonizes (forks twice, calls setsid) stays its
 * descendant and comes back to it as a child when its parent exits; exits
 * arrive on a signalfd for SIGCHLD; signals go to each process's group and
 * to every descendant found in /proc. Main-loop thread only.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/error.h"
#include "thermos/runner.h"

gint
stg_runner_tree_init (GError **error)
{
  sigset_t set;

  if (prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
    g_warning ("cannot become the reaper of orphaned descendants (%s): processes that "
               "daemonize may escape",
               g_strerror (errno));
  sigemptyset (&set);
  sigaddset (&set, SIGCHLD);
  gint fd = signalfd (-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  if (fd < 0)
    stg_fail (error, G_IO_ERROR, g_io_error_from_errno (errno), "signalfd: %s", g_strerror (errno));
  return fd;
}

gboolean
stg_runner_tree_reap (GPid *pid, gint *status)
{
  *pid = waitpid (-1, status, WNOHANG);
  return *pid > 0;
}

gboolean
stg_runner_tree_busy (void)
{
  siginfo_t info = { 0 };

  /* Children that have not exited, or exited and wait to be reaped. */
  return waitid (P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0 || errno != ECHILD;
}

/* The parent of @pid from /proc/PID/stat, or 0. */
static pid_t
parent_of (const gchar *pid)
{
  g_autofree gchar *path = g_build_filename ("/proc", pid, "stat", NULL);
  g_autofree gchar *stat = NULL;

  if (!g_file_get_contents (path, &stat, NULL, NULL))
    return 0;
  /* "PID (COMM) STATE PPID ...": COMM may hold anything, so look after its
   * last ')'. */
  const gchar *close = strrchr (stat, ')');
  if (close == NULL)
    return 0;
  gchar state = 0;
  gint ppid = 0;
  if (sscanf (close + 1, " %c %d", &state, &ppid) != 2)
    return 0;
  return (pid_t) ppid;
}

/* Every descendant of the runner, from one walk over /proc. */
static GArray *
descendants (void)
{
  g_autoptr (GDir) dir = g_dir_open ("/proc", 0, NULL);
  g_autoptr (GArray) pids = g_array_new (FALSE, FALSE, sizeof (pid_t));
  g_autoptr (GArray) parents = g_array_new (FALSE, FALSE, sizeof (pid_t));
  GArray *found = g_array_new (FALSE, FALSE, sizeof (pid_t));
  const gchar *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      if (!g_ascii_isdigit (name[0]))
        continue;
      pid_t pid = (pid_t) atoi (name);
      pid_t ppid = parent_of (name);
      g_array_append_val (pids, pid);
      g_array_append_val (parents, ppid);
    }
  pid_t self = getpid ();
  g_array_append_val (found, self);
  for (guint k = 0; k < found->len; k++) /* breadth first: found grows as we go */
    {
      pid_t parent = g_array_index (found, pid_t, k);
      for (guint i = 0; i < pids->len; i++)
        if (g_array_index (parents, pid_t, i) == parent)
          g_array_append_val (found, g_array_index (pids, pid_t, i));
    }
  g_array_remove_index (found, 0);
  return found;
}

guint
stg_runner_tree_signal (StgRunner *runner, gint sig)
{
  g_autoptr (GArray) others = descendants ();
  guint reached = 0;

  for (guint i = 0; i < runner->n_procs; i++)
    if (runner->procs[i].pid > 0 && kill (-runner->procs[i].pid, sig) == 0)
      reached++;
  for (guint i = 0; i < others->len; i++)
    if (kill (g_array_index (others, pid_t, i), sig) == 0)
      reached++;
  if (reached > 0)
    g_message ("sent %s to %u processes and groups", sig == SIGKILL ? "SIGKILL" : "SIGTERM",
               reached);
  return reached;
}
