/* runner_logs.c: where a run's standard output and error go, as the
 * process's logger (or the runner's defaults) says: files in
 * .logs/<process>/<run>/ (the default), the runner's own output
 * ("console"), both, or nowhere; and in "rotate" mode files that roll over
 * at log_size into stdout.1 ... stdout.N (backups). Files alone are plain
 * descriptors; "both" and "rotate" need the runner in between: a pipe
 * whose pump copies what comes to the file (rolling it over) and the
 * console, until the last writer closes it. Main-loop thread only.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <glib-unix.h>

#include "common/error.h"
#include "thermos/runner.h"

struct _StgRunnerLog
{
  StgRunner *runner;
  gint fd; /* the pipe's end the runner reads */
  guint source;
  gint console; /* the runner's descriptor to copy to, or -1 */
  gchar *path;  /* the file, or NULL */
  gint file;    /* -1 when none */
  gint64 size;  /* of the file so far */
  gint64 max;   /* the size that rolls the file over; 0: never */
  gint backups;
};

static gboolean
fail_errno (GError **error, const gchar *what)
{
  gint saved = errno;

  return stg_fail (error, G_IO_ERROR, g_io_error_from_errno (saved), "%s: %s", what,
                   g_strerror (saved));
}

static gint
open_file (const gchar *path, gboolean truncate)
{
  return open (path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (truncate ? O_TRUNC : O_APPEND),
               0644);
}

static void
write_all (gint fd, const gchar *buf, gsize len)
{
  while (len > 0)
    {
      gssize n = write (fd, buf, len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return; /* output that cannot be written is dropped, as a full disk drops it */
      buf += n;
      len -= (gsize) n;
    }
}

/* stdout -> stdout.1 -> ... -> stdout.N (the oldest goes), and a new
 * stdout. */
static void
roll_over (StgRunnerLog *log)
{
  close (log->file);
  for (gint i = log->backups - 1; i >= 1; i--)
    {
      g_autofree gchar *from = g_strdup_printf ("%s.%d", log->path, i);
      g_autofree gchar *to = g_strdup_printf ("%s.%d", log->path, i + 1);
      if (rename (from, to) != 0 && errno != ENOENT)
        g_warning ("%s: %s", from, g_strerror (errno));
    }
  g_autofree gchar *first = g_strdup_printf ("%s.1", log->path);
  if (rename (log->path, first) != 0)
    g_warning ("%s: %s", log->path, g_strerror (errno));
  log->file = open_file (log->path, TRUE);
  log->size = 0;
  if (log->file < 0)
    g_warning ("%s: %s", log->path, g_strerror (errno));
}

static void
log_free (StgRunnerLog *log)
{
  g_clear_handle_id (&log->source, g_source_remove);
  if (log->fd >= 0)
    close (log->fd);
  if (log->file >= 0)
    close (log->file);
  g_free (log->path);
  g_free (log);
}

/* Copies one read's worth: 1 when it copied some, 0 when nothing is
 * there now, -1 at the end of the pipe. */
static gint
copy_some (StgRunnerLog *log)
{
  gchar buf[65536];
  gssize n = read (log->fd, buf, sizeof buf);

  if (n < 0)
    return errno == EINTR ? 1 : errno == EAGAIN ? 0 : -1;
  if (n == 0)
    return -1;
  if (log->console >= 0)
    write_all (log->console, buf, (gsize) n);
  if (log->file >= 0)
    {
      write_all (log->file, buf, (gsize) n);
      log->size += n;
      if (log->max > 0 && log->size >= log->max)
        roll_over (log);
    }
  return 1;
}

static gboolean
on_output (gint fd, GIOCondition condition, gpointer data)
{
  StgRunnerLog *log = data;

  (void) fd, (void) condition;
  if (copy_some (log) >= 0)
    return G_SOURCE_CONTINUE;
  log->source = 0;
  log->runner->logs = g_list_remove (log->runner->logs, log);
  log_free (log);
  return G_SOURCE_REMOVE;
}

/* A pump from a new pipe to @path (nullable) and @console (or -1);
 * *@write_end is the pipe's other end, for the child. */
static gboolean
pump_new (StgRunner *r, const gchar *path, gint console, gint64 max, gint backups, gint *write_end,
          GError **error)
{
  gint fds[2];

  if (pipe2 (fds, O_CLOEXEC) != 0)
    return fail_errno (error, "pipe");
  StgRunnerLog *log = g_new0 (StgRunnerLog, 1);
  log->runner = r;
  log->fd = fds[0];
  log->console = console;
  log->path = g_strdup (path);
  log->file = path != NULL ? open_file (path, FALSE) : -1;
  log->max = max;
  log->backups = backups;
  if (path != NULL && log->file < 0)
    {
      gboolean ok = fail_errno (error, path);
      close (fds[1]);
      log_free (log);
      return ok;
    }
  g_unix_set_fd_nonblocking (log->fd, TRUE, NULL);
  log->source = g_unix_fd_add (log->fd, G_IO_IN | G_IO_HUP | G_IO_ERR, on_output, log);
  r->logs = g_list_prepend (r->logs, log);
  *write_end = fds[1];
  return TRUE;
}

/* The descriptor one stream (@name: "stdout" or "stderr", copied to the
 * runner's @console when asked) of a run goes to. */
static gboolean
open_stream (StgRunner *r, const StgThermosLogger *logger, const gchar *dir, const gchar *name,
             gint console, gint *fd, GError **error)
{
  g_autofree gchar *path = g_build_filename (dir, name, NULL);
  gboolean rotate = logger->mode == STG_THERMOS_LOG_ROTATE;
  gint64 max = rotate ? logger->rotate_log_size : 0;

  switch (logger->destination)
    {
    case STG_THERMOS_LOG_NONE:
      *fd = open ("/dev/null", O_WRONLY | O_CLOEXEC);
      return *fd >= 0 || fail_errno (error, "/dev/null");
    case STG_THERMOS_LOG_CONSOLE:
      *fd = fcntl (console, F_DUPFD_CLOEXEC, 3);
      return *fd >= 0 || fail_errno (error, "the runner's output");
    case STG_THERMOS_LOG_BOTH:
      return pump_new (r, path, console, max, logger->rotate_backups, fd, error);
    case STG_THERMOS_LOG_FILE:
    default:
      if (rotate)
        return pump_new (r, path, -1, max, logger->rotate_backups, fd, error);
      *fd = open_file (path, FALSE);
      return *fd >= 0 || fail_errno (error, path);
    }
}

gboolean
stg_runner_logs_open (StgRunner *r, StgRunnerProc *proc, const gchar *dir, gint *out, gint *err,
                      GError **error)
{
  StgThermosLogger logger = proc->spec->logger;

  if (!logger.set)
    {
      logger.destination = r->log_defaults.destination;
      logger.mode = r->log_defaults.mode;
      logger.rotate_log_size = r->log_defaults.rotate_log_size;
      logger.rotate_backups = r->log_defaults.rotate_backups;
    }
  if (!open_stream (r, &logger, dir, "stdout", 1, out, error))
    return FALSE;
  if (open_stream (r, &logger, dir, "stderr", 2, err, error))
    return TRUE;
  close (*out);
  *out = -1;
  return FALSE;
}

void
stg_runner_logs_close_all (StgRunner *r)
{
  while (r->logs != NULL)
    {
      StgRunnerLog *log = r->logs->data;
      while (copy_some (log) > 0)
        ;
      r->logs = g_list_delete_link (r->logs, r->logs);
      log_free (log);
    }
}
