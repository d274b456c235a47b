/* process.c: processes found and named after they started: pid start
 * times, pidfds, marked session leaders, group signals, PATH searches.
 * Starting them is spawn.c's. Main-loop thread only.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "spawn/process.h"

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

gboolean
stg_process_has_arg (GPid pid, const gchar *arg)
{
  g_autofree gchar *path = g_strdup_printf ("/proc/%d/cmdline", (int) pid);
  g_autofree gchar *text = NULL;
  gsize len = 0;

  if (!g_file_get_contents (path, &text, &len, NULL))
    return FALSE;
  for (gsize at = 0; at < len; at += strlen (text + at) + 1)
    if (g_str_equal (text + at, arg))
      return TRUE;
  return FALSE;
}

void
stg_process_signal_group (GPid pid, gint sig)
{
  if (pid > 0)
    kill (-pid, sig);
}

gboolean
stg_process_group_runs (GPid pgid)
{
  /* The usual case, a group gone with its leader, without reading every
   * process's stat; a zombie still counts for kill(), so a live group is
   * looked at process by process. */
  if (kill (-pgid, 0) != 0 && errno == ESRCH)
    return FALSE;
  g_autoptr (GDir) dir = g_dir_open ("/proc", 0, NULL);
  const gchar *entry;

  while (dir != NULL && (entry = g_dir_read_name (dir)) != NULL)
    {
      if (!g_ascii_isdigit (entry[0]))
        continue;
      g_autofree gchar *path = g_strdup_printf ("/proc/%s/stat", entry);
      g_autofree gchar *text = NULL;
      const gchar *p = g_file_get_contents (path, &text, NULL, NULL) ? strrchr (text, ')') : NULL;
      g_auto (GStrv) f = p != NULL ? g_strsplit (p + 2, " ", 5) : NULL;
      if (f != NULL && g_strv_length (f) >= 4 && f[0][0] != 'Z' && f[0][0] != 'X' &&
          g_ascii_strtoll (f[2], NULL, 10) == pgid)
        return TRUE;
    }
  return FALSE;
}

static void
marked_process_free (StgMarkedProcess *p)
{
  if (p == NULL)
    return;
  g_free (p->mark);
  g_free (p);
}

/* The parent (field 4 of /proc/PID/stat) and session id (field 6) of
 * @pid; FALSE when it is gone. */
static gboolean
parent_and_session (const gchar *pid, gint64 *parent, gint64 *session)
{
  g_autofree gchar *path = g_strdup_printf ("/proc/%s/stat", pid);
  g_autofree gchar *text = NULL;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return FALSE;
  const gchar *p = strrchr (text, ')');
  if (p == NULL)
    return FALSE;
  g_auto (GStrv) f = g_strsplit (p + 2, " ", 6);
  if (g_strv_length (f) < 5)
    return FALSE;
  *parent = g_ascii_strtoll (f[1], NULL, 10);
  *session = g_ascii_strtoll (f[3], NULL, 10);
  return TRUE;
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
      gint64 parent = 0, session = 0;
      if (!parent_and_session (entry, &parent, &session) || session != pid)
        continue;
      g_autofree gchar *mark = environ_value (entry, prefix);
      gint64 start = mark != NULL ? stg_process_start_time (pid) : -1;
      if (start < 0)
        continue;
      StgMarkedProcess *p = g_new0 (StgMarkedProcess, 1);
      p->pid = pid;
      p->start_time = start;
      p->parent = (GPid) parent;
      p->mark = g_steal_pointer (&mark);
      g_ptr_array_add (found, p);
    }
  return found;
}

guint
stg_process_signal_marked (const gchar *name, const gchar *value, gint sig)
{
  g_autoptr (GDir) dir = g_dir_open ("/proc", 0, NULL);
  g_autofree gchar *prefix = g_strconcat (name, "=", NULL);
  const gchar *entry;
  guint reached = 0;

  while (dir != NULL && (entry = g_dir_read_name (dir)) != NULL)
    {
      if (!g_ascii_isdigit (entry[0]))
        continue;
      g_autofree gchar *mark = environ_value (entry, prefix);
      if (mark != NULL && g_str_equal (mark, value) &&
          kill ((pid_t) g_ascii_strtoll (entry, NULL, 10), sig) == 0)
        reached++;
    }
  return reached;
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
