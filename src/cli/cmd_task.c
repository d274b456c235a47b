/* cmd_task.c: stagger task logs: an instance's output (stdout, or stderr),
 * or that of one process of an AuroraExecutor task, whole, its last lines,
 * or followed as it grows (getTaskLogs), as kubectl logs does. One thread:
 * the process's main thread.
 */
#include "config.h"

#include <glib-unix.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/client.h"

#define CHUNK (64 * 1024)
#define FOLLOW_INTERVAL_US (300 * 1000)

static const StgCliCommand *
self (const gchar *name)
{
  return stg_cli_find_command (stg_cli_task_commands, name);
}

typedef struct
{
  StgCliClient *c;
  ApiInstanceKey *key;
  gboolean err;
  const gchar *process; /* (nullable) */
  gint run;
} Source;

/* One read; NULL with @error. The daemon refuses a read only for an
 * instance (or output) it does not have, since the command checks the
 * rest: that is NOT_FOUND (exit 6). */
static ApiGetTaskLogsResult *
read_piece (Source *s, gint64 offset, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autoptr (ApiResponse) r = stg_cli_get_task_logs (s->c, s->key, s->err, offset, CHUNK,
                                                     s->process, s->run, &local);

  if (r != NULL)
    return g_object_ref (r->result->getTaskLogsResult);
  if (g_error_matches (local, STG_CLI_ERROR, STG_CLI_ERROR_FAILED) &&
      strstr (local->message, "INVALID_REQUEST"))
    local->code = STG_CLI_ERROR_NOT_FOUND;
  g_propagate_error (error, g_steal_pointer (&local));
  return NULL;
}

/* Writes everything from @offset on; sets *@next where it stopped. */
static gboolean
copy_from (StgCli *cli, Source *s, gint64 offset, gint64 *next, GError **error)
{
  for (;;)
    {
      g_autoptr (ApiGetTaskLogsResult) piece = read_piece (s, offset, error);
      if (piece == NULL)
        return FALSE;
      if (piece->data != NULL && piece->data->len > 0)
        fwrite (piece->data->data, 1, piece->data->len, cli->out);
      offset = piece->nextOffset;
      if (piece->data == NULL || piece->data->len == 0 || offset >= piece->size)
        break;
    }
  fflush (cli->out);
  *next = offset;
  return TRUE;
}

/* Writes the last @lines lines of the last 64 KiB. */
static gboolean
copy_tail (StgCli *cli, Source *s, gint lines, gint64 *next, GError **error)
{
  g_autoptr (ApiGetTaskLogsResult) piece = read_piece (s, -CHUNK, error);
  if (piece == NULL)
    return FALSE;
  const gchar *data = piece->data ? (const gchar *) piece->data->data : "";
  gsize len = piece->data ? piece->data->len : 0;
  gsize start = len;
  /* Back over @lines line ends (a final newline ends the last line). */
  for (gint n = 0; start > 0; start--)
    if (data[start - 1] == '\n' && start != len && ++n == lines)
      break;
  fwrite (data + start, 1, len - start, cli->out);
  fflush (cli->out);
  *next = piece->nextOffset;
  return TRUE;
}

static gboolean
on_signal (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_CONTINUE;
}

/* Copies what the output gains until interrupted; a file that got shorter
 * (a new run, or trimmed) is read again from its start. */
static int
follow (StgCli *cli, Source *s, gint64 offset)
{
  gboolean stop = FALSE;
  guint sigint = g_unix_signal_add (SIGINT, on_signal, &stop);
  guint sigterm = g_unix_signal_add (SIGTERM, on_signal, &stop);

  while (!stop)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (ApiGetTaskLogsResult) probe = read_piece (s, offset, &error);
      if (probe == NULL)
        {
          g_source_remove (sigint);
          g_source_remove (sigterm);
          return stg_cli_fail (cli, error);
        }
      if (probe->size < offset)
        offset = 0;
      if (probe->size > offset && !copy_from (cli, s, offset, &offset, &error))
        {
          g_source_remove (sigint);
          g_source_remove (sigterm);
          return stg_cli_fail (cli, error);
        }
      for (gint i = 0; i < 10 && !stop; i++)
        {
          g_main_context_iteration (NULL, FALSE);
          g_usleep (FOLLOW_INTERVAL_US / 10);
        }
    }
  g_source_remove (sigint);
  g_source_remove (sigterm);
  return STG_EXIT_OK;
}

static int
task_logs (StgCli *cli, int argc, gchar **argv)
{
  int code;
  gboolean err = FALSE, follow_on = FALSE;
  gint tail = -1, run = -1;
  g_autofree gchar *process = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (StgJobPath) path = NULL;
  const GOptionEntry entries[] = {
    { "stderr", 0, 0, G_OPTION_ARG_NONE, &err, "Show the instance's standard error, not its output",
      NULL },
    { "tail", 0, 0, G_OPTION_ARG_INT, &tail, "Only the last N lines (of the last 64 KiB)", "N" },
    { "follow", 'f', 0, G_OPTION_ARG_NONE, &follow_on,
      "Keep printing what it writes, until interrupted", NULL },
    { "process", 'p', 0, G_OPTION_ARG_STRING, &process,
      "An AuroraExecutor task's process: show its output (.logs/NAME/RUN/ in the sandbox)",
      "NAME" },
    { "run", 0, 0, G_OPTION_ARG_INT, &run,
      "With --process: that run of it (from 0; default: its newest)", "N" },
    { NULL },
  };

  if (!stg_cli_parse (
          cli, self ("logs"), "task", entries,
          "Prints an instance's output as its sandbox keeps it (the current run's, or the "
          "newest run's between runs): all of it, the last lines with --tail, and what "
          "it writes next with --follow. For an AuroraExecutor task, that is what its "
          "runner, stagger-thermos, says; --process shows one process's output. On the "
          "fleet runtime, the output is the container's log as its host keeps it, and "
          "--process reads the process's file from the sandbox inside the container.",
          1, 1, &argc, &argv, &code))
    return code;
  if (tail == 0 || tail < -1)
    return stg_cli_usage_error (cli, "--tail takes a number of lines (1 or more)");
  if (run < -1 || (run >= 0 && process == NULL))
    return stg_cli_usage_error (cli, "--run takes a run's number (0 or more), with --process");
  g_autoptr (StgCliClient) c = stg_cli_client_for_job (cli, argv[1], TRUE, &path, &error);
  if (c == NULL)
    return stg_cli_fail (cli, error);
  if (path->instances == NULL || stg_ranges_count (path->instances) != 1)
    return stg_cli_usage_error (cli, "name one instance: CLUSTER/ROLE/ENV/NAME/INSTANCE");
  g_autoptr (ApiInstanceKey) key = g_object_new (API_TYPE_INSTANCE_KEY, "jobKey", path->key,
                                                 "instanceId",
                                                 stg_ranges_get (path->instances, 0).first, NULL);
  Source s = { .c = c, .key = key, .err = err, .process = process, .run = run };
  gint64 next = 0;
  gboolean ok = tail > 0 ? copy_tail (cli, &s, tail, &next, &error)
                         : copy_from (cli, &s, 0, &next, &error);
  if (!ok)
    return stg_cli_fail (cli, error);
  return follow_on ? follow (cli, &s, next) : STG_EXIT_OK;
}

const StgCliCommand stg_cli_task_commands[] = {
  { "logs", "CLUSTER/ROLE/ENV/NAME/INSTANCE", "Show an instance's output", task_logs },
  { NULL, NULL, NULL, NULL },
};
