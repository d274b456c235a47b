/* task_read.c: the Thermos task of AuroraExecutor data: its processes
 * (with their loggers), the order constraints (SequentialTask's and
 * order()'s) checked as Thermos's planner checks them, limits and
 * resources. Notes the ports the processes' templates name. Calls common/
 * and json-glib; any thread.
 */
#include "config.h"

#include <string.h>

#include "thermos/task_private.h"

typedef struct
{
  gchar *destination;
  gchar *mode;
} LoggerText;

/* In the order of StgThermosLogDestination and StgThermosLogMode. */
static const gchar *const destinations[] = { "file", "console", "both", "none", NULL };
static const gchar *const modes[] = { "standard", "rotate", NULL };

/* The index of @word in @words, or -1. */
static gint
word_index (const gchar *const *words, const gchar *word)
{
  for (gint i = 0; words[i] != NULL; i++)
    if (g_str_equal (words[i], word))
      return i;
  return -1;
}

gboolean
stg_thermos_log_destination_parse (const gchar *word, StgThermosLogDestination *out)
{
  gint i = word_index (destinations, word);

  if (i >= 0)
    *out = (StgThermosLogDestination) i;
  return i >= 0;
}

gboolean
stg_thermos_log_mode_parse (const gchar *word, StgThermosLogMode *out)
{
  gint i = word_index (modes, word);

  if (i >= 0)
    *out = (StgThermosLogMode) i;
  return i >= 0;
}

static gboolean
read_logger (StgThermosProcess *p, JsonObject *o, const gchar *path, GError **error)
{
  static const StgField fields[] = {
    STG_FIELD_ROW ("destination", STG_FIELD_STRING, LoggerText, destination),
    STG_FIELD_ROW ("mode", STG_FIELD_STRING, LoggerText, mode),
    STG_FIELD_CHECK ("rotate", STG_FIELD_OBJECT),
    { NULL },
  };
  static const StgField rotate_fields[] = {
    STG_FIELD_RANGE ("log_size", STG_FIELD_INT64, StgThermosLogger, rotate_log_size, 1, 9.0e15),
    STG_FIELD_RANGE ("backups", STG_FIELD_INT, StgThermosLogger, rotate_backups, 1, 10000),
    { NULL },
  };
  LoggerText text = { NULL };
  g_autofree gchar *rotate_path = g_strconcat (path, ".rotate", NULL);
  gboolean ok = stg_thermos_read (o, path, fields, &text, error);

  p->logger.set = TRUE;
  if (ok && text.destination != NULL &&
      !stg_thermos_log_destination_parse (text.destination, &p->logger.destination))
    ok = stg_thermos_bad (error, "%s.destination: '%s' is none of file, console, both, none", path,
                          text.destination);
  if (ok && text.mode != NULL && !stg_thermos_log_mode_parse (text.mode, &p->logger.mode))
    ok = stg_thermos_bad (error, "%s.mode: '%s' is neither standard nor rotate", path, text.mode);
  if (ok && json_object_has_member (o, "rotate"))
    ok = stg_thermos_read (json_object_get_object_member (o, "rotate"), rotate_path, rotate_fields,
                           &p->logger, error);
  g_free (text.destination);
  g_free (text.mode);
  return ok;
}

static const StgField resources_fields[] = {
  STG_FIELD_RANGE ("cpu", STG_FIELD_NUMBER, StgThermosTask, cpu, 0, 1.0e6),
  STG_FIELD_RANGE ("ram", STG_FIELD_INT64, StgThermosTask, ram, 0, 9.0e15),
  STG_FIELD_RANGE ("disk", STG_FIELD_INT64, StgThermosTask, disk, 0, 9.0e15),
  STG_FIELD_RANGE ("gpu", STG_FIELD_INT, StgThermosTask, gpu, 0, G_MAXINT),
  { NULL },
};

/* A process name is a file name: not empty, no '/', no leading '.'
 * (Thermos's rule); and literal, since it names a folder of .logs. */
static gboolean
check_name (const gchar *name, const gchar *path, GError **error)
{
  if (name[0] == '\0' || name[0] == '.' || strchr (name, '/') != NULL)
    return stg_thermos_bad (error,
                            "%s: '%s' is not a process name (a file name: no '/', not "
                            "empty, no leading '.')",
                            path, name);
  if (strstr (name, "{{") != NULL)
    return stg_thermos_bad (error, "%s: '%s': templates are not allowed in process names", path,
                            name);
  return TRUE;
}

static StgThermosProcess *
read_process (StgThermosJob *job, JsonObject *o, const gchar *path, GError **error)
{
  static const StgField fields[] = {
    STG_FIELD_NEED ("name", STG_FIELD_STRING, StgThermosProcess, name),
    STG_FIELD_NEED ("cmdline", STG_FIELD_STRING, StgThermosProcess, cmdline),
    STG_FIELD_RANGE ("max_failures", STG_FIELD_INT, StgThermosProcess, max_failures, 0, G_MAXINT),
    STG_FIELD_ROW ("daemon", STG_FIELD_BOOL, StgThermosProcess, daemon),
    STG_FIELD_ROW ("ephemeral", STG_FIELD_BOOL, StgThermosProcess, ephemeral),
    STG_FIELD_RANGE ("min_duration", STG_FIELD_INT, StgThermosProcess, min_duration, 0, G_MAXINT),
    STG_FIELD_ROW ("final", STG_FIELD_BOOL, StgThermosProcess, final),
    STG_FIELD_CHECK ("resources", STG_FIELD_OBJECT),
    STG_FIELD_CHECK ("logger", STG_FIELD_OBJECT),
    { NULL },
  };
  g_autofree StgThermosProcess *p = g_new0 (StgThermosProcess, 1);
  g_autofree gchar *name_path = g_strconcat (path, ".name", NULL);
  g_autofree gchar *cmd_path = g_strconcat (path, ".cmdline", NULL);
  g_autofree gchar *res_path = g_strconcat (path, ".resources", NULL);
  g_autofree gchar *log_path = g_strconcat (path, ".logger", NULL);
  StgThermosTask unused = { NULL };
  StgThermosPortNote note = { job->port_refs, cmd_path };

  p->max_failures = 1;
  p->min_duration = 5;
  p->logger.rotate_log_size = 100 * 1024 * 1024;
  p->logger.rotate_backups = 5;
  p->after = g_array_new (FALSE, FALSE, sizeof (guint));
  gboolean ok = stg_thermos_read (o, path, fields, p, error) &&
                check_name (p->name, name_path, error) &&
                stg_thermos_template_scan (p->cmdline, cmd_path, STG_THERMOS_SCOPE_ALL,
                                           stg_thermos_note_port, &note, error) &&
                (!json_object_has_member (o, "resources") ||
                 stg_thermos_read (json_object_get_object_member (o, "resources"), res_path,
                                   resources_fields, &unused, error)) &&
                (!json_object_has_member (o, "logger") ||
                 read_logger (p, json_object_get_object_member (o, "logger"), log_path, error));
  if (!ok)
    {
      g_free (p->name);
      g_free (p->cmdline);
      g_array_unref (p->after);
      return NULL;
    }
  return g_steal_pointer (&p);
}

/* The index of the process named @name in @task, or -1. */
static gint
find_process (const StgThermosTask *task, const gchar *name)
{
  for (guint i = 0; i < task->processes->len; i++)
    if (g_str_equal (stg_thermos_task_process (task, i)->name, name))
      return (gint) i;
  return -1;
}

/* One order constraint: each process waits for the one before it, under
 * Thermos's rules (no waiting for a daemon, nor an ordinary process for an
 * ephemeral one, nor across final and ordinary processes). */
static gboolean
read_order (StgThermosTask *task, JsonObject *o, const gchar *path, GError **error)
{
  static const StgField fields[] = {
    STG_FIELD_CHECK ("order", STG_FIELD_ARRAY),
    { NULL },
  };
  g_autofree gchar *order_path = g_strconcat (path, ".order", NULL);

  if (!stg_thermos_read (o, path, fields, NULL, error))
    return FALSE;
  JsonArray *order = json_object_has_member (o, "order") ? json_object_get_array_member (o, "order")
                                                         : NULL;
  gint prev = -1;
  for (guint i = 0; order != NULL && i < json_array_get_length (order); i++)
    {
      JsonNode *n = json_array_get_element (order, i);
      g_autofree gchar *at = stg_json_path_index (order_path, i);
      if (!JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_STRING)
        {
          g_autofree gchar *got = stg_json_describe (n);
          return stg_thermos_bad (error, "%s must be a process name, not %s", at, got);
        }
      gint k = find_process (task, json_node_get_string (n));
      if (k < 0)
        return stg_thermos_bad (error, "%s: no process is named '%s'", at,
                                json_node_get_string (n));
      StgThermosProcess *p = stg_thermos_task_process (task, (guint) k);
      StgThermosProcess *before = prev < 0 ? NULL : stg_thermos_task_process (task, (guint) prev);
      if (before != NULL && before->daemon)
        return stg_thermos_bad (error,
                                "%s: process '%s' may not wait for daemon process '%s' (a "
                                "daemon runs again and never finishes)",
                                at, p->name, before->name);
      if (before != NULL && before->ephemeral && !p->ephemeral)
        return stg_thermos_bad (error,
                                "%s: process '%s' may not wait for ephemeral process '%s' "
                                "(only an ephemeral process may)",
                                at, p->name, before->name);
      if (before != NULL && before->final != p->final)
        return stg_thermos_bad (error,
                                "%s: final and ordinary processes may not wait for each "
                                "other ('%s' and '%s')",
                                at, before->name, p->name);
      if (before != NULL)
        {
          guint b = (guint) prev;
          g_array_append_val (p->after, b);
        }
      prev = k;
    }
  return TRUE;
}

/* Kahn's walk: processes whose predecessors have all gone go next; any
 * left over sit on a cycle (or wait for one). */
static gboolean
check_cycles (StgThermosTask *task, GError **error)
{
  guint n = task->processes->len;
  g_autofree guint *waiting = g_new0 (guint, n);
  g_autofree gboolean *done = g_new0 (gboolean, n);
  guint left = n;
  gboolean moved = TRUE;

  for (guint i = 0; i < n; i++)
    waiting[i] = stg_thermos_task_process (task, i)->after->len;
  while (moved)
    {
      moved = FALSE;
      for (guint i = 0; i < n; i++)
        {
          if (done[i] || waiting[i] > 0)
            continue;
          done[i] = TRUE, left--, moved = TRUE;
          for (guint j = 0; j < n; j++)
            {
              GArray *after = stg_thermos_task_process (task, j)->after;
              for (guint k = 0; k < after->len; k++)
                if (g_array_index (after, guint, k) == i)
                  waiting[j]--;
            }
        }
    }
  if (left == 0)
    return TRUE;
  g_autoptr (GString) names = g_string_new (NULL);
  for (guint i = 0; i < n; i++)
    if (!done[i])
      g_string_append_printf (names, "%s'%s'", names->len > 0 ? ", " : "",
                              stg_thermos_task_process (task, i)->name);
  return stg_thermos_bad (error,
                          "task.constraints: the order constraints form a cycle (processes "
                          "%s never start)",
                          names->str);
}

gboolean
stg_thermos_read_task (StgThermosJob *job, JsonObject *o, GError **error)
{
  static const StgField fields[] = {
    STG_FIELD_ROW ("name", STG_FIELD_STRING, StgThermosTask, name),
    { "processes", STG_FIELD_ARRAY, STG_FIELD_SKIP, 0, 0, TRUE },
    STG_FIELD_CHECK ("constraints", STG_FIELD_ARRAY),
    STG_FIELD_CHECK ("resources", STG_FIELD_OBJECT),
    STG_FIELD_RANGE ("max_failures", STG_FIELD_INT, StgThermosTask, max_failures, 0, G_MAXINT),
    STG_FIELD_RANGE ("max_concurrency", STG_FIELD_INT, StgThermosTask, max_concurrency, 0,
                     G_MAXINT),
    STG_FIELD_RANGE ("finalization_wait", STG_FIELD_INT, StgThermosTask, finalization_wait, 0,
                     G_MAXINT),
    STG_FIELD_CHECK ("user", STG_FIELD_STRING), /* unused, as by Aurora's executor */
    { NULL },
  };
  StgThermosTask *task = &job->task;

  if (!stg_thermos_read (o, "task", fields, task, error))
    return FALSE;
  if (json_object_has_member (o, "resources") &&
      !stg_thermos_read (json_object_get_object_member (o, "resources"), "task.resources",
                         resources_fields, task, error))
    return FALSE;
  /* Aurora's cap: its client takes a bigger value, and the task gets a
   * minute. */
  task->finalization_wait = MIN (task->finalization_wait, STG_THERMOS_FINALIZATION_WAIT_MAX);
  JsonArray *processes = json_object_get_array_member (o, "processes");
  if (json_array_get_length (processes) == 0)
    return stg_thermos_bad (error, "task.processes: a task needs at least one process");
  for (guint i = 0; i < json_array_get_length (processes); i++)
    {
      g_autofree gchar *path = stg_json_path_index ("task.processes", i);
      JsonObject *po = stg_thermos_element_object (processes, "task.processes", i, error);
      StgThermosProcess *p = po == NULL ? NULL : read_process (job, po, path, error);
      if (p == NULL)
        return FALSE;
      if (find_process (task, p->name) >= 0)
        {
          stg_thermos_bad (error, "%s.name: two processes are named '%s'", path, p->name);
          g_ptr_array_add (task->processes, p);
          return FALSE;
        }
      g_ptr_array_add (task->processes, p);
    }
  if (task->name == NULL) /* Aurora's default: {{processes[0].name}} */
    task->name = g_strdup (stg_thermos_task_process (task, 0)->name);
  JsonArray *constraints = json_object_has_member (o, "constraints")
                               ? json_object_get_array_member (o, "constraints")
                               : NULL;
  for (guint i = 0; constraints != NULL && i < json_array_get_length (constraints); i++)
    {
      g_autofree gchar *path = stg_json_path_index ("task.constraints", i);
      JsonObject *co = stg_thermos_element_object (constraints, "task.constraints", i, error);
      if (co == NULL || !read_order (task, co, path, error))
        return FALSE;
    }
  return check_cycles (task, error);
}
