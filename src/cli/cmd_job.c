/* cmd_job.c: stagger job create|kill|status|list|diff|restart|inspect.
 * One thread: the process's main thread.
 */
#include "config.h"

#include "cli/cli.h"
#include "cli/client.h"
#include "cli/jobfile.h"
#include "common/enums.h"
#include "cli/output.h"
#include "common/thrift_json.h"
#include "cli/updates.h"

static const StgCliCommand *
self (const gchar *name)
{
  return stg_cli_find_command (stg_cli_job_commands, name);
}

static StgJobFile *
load_for (const gchar *file, const StgJobPath *path, GError **error)
{
  g_autoptr (StgJobFile) jf = stg_job_file_load (file, g_get_user_name (), error);
  if (jf == NULL || (path != NULL && !stg_job_file_check_key (jf, path, error)))
    return NULL;
  return g_steal_pointer (&jf);
}

static int
job_create (StgCli *cli, int argc, gchar **argv)
{
  int code;
  g_autoptr (GError) error = NULL;
  g_autoptr (StgJobPath) path = NULL;

  if (!stg_cli_parse (cli, self ("create"), "job", NULL,
                      "Creates the job from a job file (stagger-job(5)) and starts its instances.",
                      2, 2, &argc, &argv, &code))
    return code;
  g_autoptr (StgJobPath) parsed = stg_job_path_parse (argv[1], FALSE, &error);
  g_autoptr (StgJobFile) jf = parsed ? load_for (argv[2], parsed, &error) : NULL;
  g_autoptr (StgCliClient) c = jf ? stg_cli_client_for_job (cli, argv[1], FALSE, &path, &error) : NULL;
  g_autoptr (ApiResponse) r = c ? stg_cli_create_job (c, jf->job, &error) : NULL;
  if (r == NULL)
    return stg_cli_fail (cli, error);
  if (!cli->json)
    fprintf (cli->out, "created %s with %d instance%s\n", argv[1], jf->job->instanceCount,
             jf->job->instanceCount == 1 ? "" : "s");
  else
    {
      g_autoptr (JsonNode) n = stg_thrift_to_json (jf->job);
      stg_cli_print_json (cli, n, FALSE);
    }
  return STG_EXIT_OK;
}

static int
job_kill (StgCli *cli, int argc, gchar **argv)
{
  int code;
  g_autofree gchar *message = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (StgJobPath) path = NULL;
  const GOptionEntry entries[] = {
    { "message", 'm', 0, G_OPTION_ARG_STRING, &message, "Why, for the record", "TEXT" },
    { NULL },
  };

  if (!stg_cli_parse (cli, self ("kill"), "job", entries,
                      "Stops the job's instances (all, or those listed after the key: "
                      "cluster/role/env/name/0-1,3). Killing every instance removes the job.",
                      1, 1, &argc, &argv, &code))
    return code;
  g_autoptr (StgCliClient) c = stg_cli_client_for_job (cli, argv[1], TRUE, &path, &error);
  g_autoptr (GHashTable) ids = c && path->instances ? stg_cli_id_set (path->instances) : NULL;
  g_autoptr (ApiResponse) r = c ? stg_cli_kill_tasks (c, path->key, ids, message, &error) : NULL;
  if (r == NULL)
    return stg_cli_fail (cli, error);
  if (!cli->json)
    fprintf (cli->out, "killing %s\n", argv[1]);
  return STG_EXIT_OK;
}

static int
job_restart (StgCli *cli, int argc, gchar **argv)
{
  int code;
  gint batch = 1, watch = 30, max_per = 0, max_total = 0;
  gboolean wait = FALSE;
  g_autofree gchar *message = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (StgJobPath) path = NULL;
  const GOptionEntry entries[] = {
    { "batch-size", 0, 0, G_OPTION_ARG_INT, &batch, "Instances restarted at a time (default 1)",
      "N" },
    { "watch-secs", 0, 0, G_OPTION_ARG_INT, &watch,
      "Seconds a restarted instance must stay healthy before the next batch (default 30)", "S" },
    { "max-per-instance-failures", 0, 0, G_OPTION_ARG_INT, &max_per,
      "Restarts of one instance that may fail before it counts as failed (default 0)", "N" },
    { "max-total-failures", 0, 0, G_OPTION_ARG_INT, &max_total,
      "Failed instances the restart tolerates before it stops (default 0)", "N" },
    { "message", 'm', 0, G_OPTION_ARG_STRING, &message, "Why, recorded with the restart", "TEXT" },
    { "wait", 'w', 0, G_OPTION_ARG_NONE, &wait,
      "Follow the restart to its end (exit codes as update wait)", NULL },
    { NULL },
  };

  if (!stg_cli_parse (
          cli, self ("restart"), "job", entries,
          "Restarts the job's instances (all, or those listed after the key) a batch at a "
          "time, as Aurora's client does: an update to the job's own configuration that "
          "restarts each instance and waits for it to be healthy for the watch time "
          "before the next batch.",
          1, 1, &argc, &argv, &code))
    return code;
  if (batch < 1 || watch < 0 || max_per < 0 || max_total < 0)
    return stg_cli_usage_error (cli, "--batch-size must be at least 1, and the others at least 0");
  g_autoptr (StgCliClient) c = stg_cli_client_for_job (cli, argv[1], TRUE, &path, &error);
  g_autoptr (ApiJobConfiguration) job = c ? stg_cli_current_job (c, path->key, &error) : NULL;
  if (job == NULL)
    return stg_cli_fail (cli, error);
  g_autoptr (ApiJobUpdateSettings) settings = g_object_new (API_TYPE_JOB_UPDATE_SETTINGS,
                                                            "updateGroupSize", batch,
                                                            "minWaitInInstanceRunningMs",
                                                            watch * 1000, "maxPerInstanceFailures",
                                                            max_per, "maxFailedInstances",
                                                            max_total, "rollbackOnFailure", FALSE,
                                                            "restartInstances", TRUE, NULL);
  if (path->instances != NULL)
    {
      stg_job_file_add_ranges (settings->updateOnlyTheseInstances, path->instances);
      settings->__isset_updateOnlyTheseInstances = TRUE;
    }
  g_autoptr (ApiJobUpdateRequest) req = g_object_new (API_TYPE_JOB_UPDATE_REQUEST, "taskConfig",
                                                      job->taskConfig, "instanceCount",
                                                      job->instanceCount, "settings", settings,
                                                      NULL);
  g_autoptr (ApiResponse) r = stg_cli_start_job_update (c, req, message ? message : "restart",
                                                        &error);
  if (r == NULL)
    return stg_cli_fail (cli, error);
  g_autofree gchar *what = g_strdup_printf ("restarting %s, %d at a time", argv[1], batch);
  return stg_cli_update_started (cli, c, argv[1], what, r->result->startJobUpdateResult->key, NULL,
                                 wait);
}

/* The ports of a task, "http=20001 admin=20002". */
static gchar *
ports_text (ApiAssignedTask *a)
{
  g_autoptr (GString) s = g_string_new (NULL);
  g_autoptr (GList) names = g_hash_table_get_keys (a->assignedPorts);

  names = g_list_sort (names, (GCompareFunc) g_strcmp0);
  for (GList *l = names; l != NULL; l = l->next)
    g_string_append_printf (s, "%s%s=%d", s->len ? " " : "", (gchar *) l->data,
                            *(gint32 *) g_hash_table_lookup (a->assignedPorts, l->data));
  return g_strdup (s->len ? s->str : "-");
}

/* Why a drain waits for the SLA of each instance it holds, one line
 * each, from the web UI's data (@extra: instance + 1 -> its object). */
static void
print_sla_waits (StgCli *cli, GPtrArray *tasks, GHashTable *extra)
{
  for (guint i = 0; i < tasks->len; i++)
    {
      const ApiScheduledTask *task = tasks->pdata[i];
      JsonObject *x = g_hash_table_lookup (extra,
                                           GINT_TO_POINTER (task->assignedTask->instanceId + 1));
      const gchar *why = x != NULL
                             ? json_object_get_string_member_with_default (x, "sla_wait", NULL)
                             : NULL;
      if (why != NULL && why[0] != '\0')
        fprintf (cli->out, "drain: %s\n", why);
    }
}

/* A member of @o as a number; -1 when it is absent or null. */
static gdouble
number_member (JsonObject *o, const gchar *name)
{
  JsonNode *n = o != NULL ? json_object_get_member (o, name) : NULL;

  return n != NULL && JSON_NODE_HOLDS_VALUE (n) ? json_node_get_double (n) : -1;
}

/* A cell of what an instance uses of a resource against what it reserved
 * ("0.21/0.25", "12/64M"), from its "usage" (@usage nullable); "-" when
 * not measured. */
static void
usage_cell (StgTable *t, JsonObject *usage, const gchar *used, const gchar *reserved,
            gboolean cores)
{
  gdouble u = number_member (usage, used), r = number_member (usage, reserved);

  if (u < 0)
    {
      stg_table_cell (t, STG_STYLE_DIM, "-");
      return;
    }
  gboolean over = r > 0 && u > r;
  if (cores && r > 0)
    stg_table_cell (t, over ? STG_STYLE_WARN : STG_STYLE_PLAIN, "%.2f/%.2f", u, r);
  else if (cores)
    stg_table_cell (t, STG_STYLE_PLAIN, "%.2f", u);
  else if (r > 0)
    stg_table_cell (t, over ? STG_STYLE_WARN : STG_STYLE_PLAIN, "%.0f/%.0fM", u / 1048576.0,
                    r / 1048576.0);
  else
    stg_table_cell (t, STG_STYLE_PLAIN, "%.0fM", u / 1048576.0);
}

/* Whether an instance of @extra (the web UI's instances) is announced in
 * Aurora's ServerSet: job status then has an ANNOUNCED column. */
static gboolean
any_announced (GHashTable *extra)
{
  GHashTableIter it;
  gpointer value;

  g_hash_table_iter_init (&it, extra);
  while (g_hash_table_iter_next (&it, NULL, &value))
    {
      JsonNode *a = json_object_get_member (value, "announce");
      if (a != NULL && JSON_NODE_HOLDS_OBJECT (a))
        return TRUE;
    }
  return FALSE;
}

/* The instance's ServerSet membership: its endpoint (or member node)
 * while it is a member, else why not, else "-" when it announces nothing. */
static void
announce_cell (StgTable *t, JsonObject *x)
{
  JsonNode *n = x != NULL ? json_object_get_member (x, "announce") : NULL;
  JsonObject *a = n != NULL && JSON_NODE_HOLDS_OBJECT (n) ? json_node_get_object (n) : NULL;
  const gchar *member = a ? json_object_get_string_member_with_default (a, "member", NULL) : NULL;
  const gchar *endpoint = a ? json_object_get_string_member_with_default (a, "endpoint", NULL)
                            : NULL;
  const gchar *problem = a ? json_object_get_string_member_with_default (a, "problem", NULL) : NULL;

  if (a == NULL)
    stg_table_cell (t, STG_STYLE_DIM, "-");
  else if (member != NULL)
    stg_table_cell (t, STG_STYLE_GOOD, "%s", endpoint ? endpoint : member);
  else if (problem != NULL)
    stg_table_cell (t, STG_STYLE_WARN, "no: %s", problem);
  else
    stg_table_cell (t, STG_STYLE_DIM, "not yet");
}

/* The web UI's instances of a job (@ui: its /ui/api/job answer, nullable)
 * by instance id + 1: JsonObject*, owned by @ui. */
static GHashTable *
ui_instances (JsonNode *ui)
{
  GHashTable *by_id = g_hash_table_new (NULL, NULL);

  if (ui == NULL || !json_object_has_member (json_node_get_object (ui), "instances"))
    return by_id;
  JsonArray *list = json_object_get_array_member (json_node_get_object (ui), "instances");
  for (guint i = 0; i < json_array_get_length (list); i++)
    {
      JsonObject *x = json_array_get_object_element (list, i);
      g_hash_table_insert (by_id, GINT_TO_POINTER (json_object_get_int_member (x, "id") + 1), x);
    }
  return by_id;
}

/* @x's member @name as a number cell, "-" when absent or null. */
static void
number_cell (StgTable *t, JsonObject *x, const gchar *name)
{
  if (x != NULL && json_object_has_member (x, name) && !json_object_get_null_member (x, name))
    stg_table_cell (t, STG_STYLE_PLAIN, "%" G_GINT64_FORMAT, json_object_get_int_member (x, name));
  else
    stg_table_cell (t, STG_STYLE_DIM, "-");
}

/* One row of `job status`: @task, with @x its instance in the web UI's
 * data (nullable), at @now. */
static void
status_row (StgTable *t, ApiScheduledTask *task, JsonObject *x, gboolean announced, gint64 now)
{
  ApiTaskEvent *last = task->taskEvents->len ? task->taskEvents->pdata[task->taskEvents->len - 1]
                                             : NULL;
  g_autofree gchar *ports = ports_text (task->assignedTask);
  /* Up since it became healthy (kept across adoption and failover),
   * else since its last event. */
  gint64 since = x != NULL && json_object_has_member (x, "started_ms") &&
                         !json_object_get_null_member (x, "started_ms")
                     ? json_object_get_int_member (x, "started_ms")
                 : last ? last->timestamp
                        : 0;
  g_autofree gchar *up = since > 0 && task->status == API_SCHEDULE_STATUS_RUNNING
                             ? stg_cli_format_duration (now - since)
                             : g_strdup ("-");
  stg_table_row (t);
  stg_table_cell (t, STG_STYLE_PLAIN, "%d", task->assignedTask->instanceId);
  stg_table_cell (t, stg_cli_schedule_status_style (task->status), "%s",
                  stg_schedule_status_name (task->status));
  gboolean healthy = task->status == API_SCHEDULE_STATUS_RUNNING;
  stg_table_cell (t, healthy ? STG_STYLE_GOOD : STG_STYLE_WARN, "%s", healthy ? "yes" : "no");
  stg_table_cell (t, STG_STYLE_PLAIN, "%s", ports);
  number_cell (t, x, "version");
  number_cell (t, x, "pid");
  stg_table_cell (t, task->failureCount ? STG_STYLE_WARN : STG_STYLE_PLAIN, "%d",
                  task->failureCount);
  stg_table_cell (t, STG_STYLE_PLAIN, "%s", up);
  JsonNode *un = x != NULL ? json_object_get_member (x, "usage") : NULL;
  JsonObject *usage = un != NULL && JSON_NODE_HOLDS_OBJECT (un) ? json_node_get_object (un) : NULL;
  usage_cell (t, usage, "cpus_used", "cpus", TRUE);
  usage_cell (t, usage, "memory_bytes", "ram_bytes", FALSE);
  usage_cell (t, usage, "disk_bytes", "disk_reserved_bytes", FALSE);
  if (announced)
    announce_cell (t, x);
  stg_table_cell (t, STG_STYLE_DIM, "%s",
                  last && last->__isset_message && last->message ? last->message : "-");
}

static int
job_status (StgCli *cli, int argc, gchar **argv)
{
  int code;
  g_autoptr (GError) error = NULL;
  g_autoptr (StgJobPath) path = NULL;

  if (!stg_cli_parse (cli, self ("status"), "job", NULL,
                      "Shows each instance: status, health, ports, config version, pid, failures, "
                      "uptime, the CPU cores, MiB of memory and of disk it uses against what it "
                      "reserved (where measured: the local runtime as root), and its last event "
                      "(a PENDING or THROTTLED instance's says why it waits), then why a host "
                      "drain waits for an instance's SLA.",
                      1, 1, &argc, &argv, &code))
    return code;
  g_autoptr (StgCliClient) c = stg_cli_client_for_job (cli, argv[1], TRUE, &path, &error);
  if (c == NULL)
    return stg_cli_fail (cli, error);
  g_autoptr (ApiTaskQuery) q = stg_cli_task_query (path);
  g_autoptr (ApiResponse) r = stg_cli_get_tasks_status (c, q, &error);
  if (r == NULL)
    return stg_cli_fail (cli, error);
  GPtrArray *tasks = r->result->scheduleStatusResult->tasks;
  if (tasks->len == 0)
    {
      g_set_error (&error, STG_CLI_ERROR, STG_CLI_ERROR_NOT_FOUND, "no instances of %s", argv[1]);
      return stg_cli_fail (cli, error);
    }
  if (cli->json)
    {
      g_autoptr (JsonNode) n = stg_thrift_to_json (r->result->scheduleStatusResult);
      stg_cli_print_json (cli, n, FALSE);
      return STG_EXIT_OK;
    }
  /* The pid and config version come from the web UI's data when there is
   * one: Thrift's ScheduledTask has no place for them. */
  g_autoptr (JsonNode) ui = stg_cli_client_ui_job (c, path->key);
  g_autoptr (GHashTable) extra = ui_instances (ui);
  gboolean announced = any_announced (extra);
  g_autoptr (StgTable) t = stg_table_new ("INSTANCE", "STATUS", "HEALTHY", "PORTS", "VERSION",
                                          "PID", "FAILURES", "UP", "CPU", "MEMORY", "DISK",
                                          announced ? "ANNOUNCED" : "LAST EVENT",
                                          announced ? "LAST EVENT" : NULL, NULL);
  gint64 now = stg_cli_now_ms ();
  for (guint i = 0; i < tasks->len; i++)
    {
      ApiScheduledTask *task = tasks->pdata[i];
      status_row (t, task,
                  g_hash_table_lookup (extra, GINT_TO_POINTER (task->assignedTask->instanceId + 1)),
                  announced, now);
    }
  stg_table_print (t, cli);
  print_sla_waits (cli, tasks, extra);
  JsonNode *health = ui != NULL ? json_object_get_member (json_node_get_object (ui), "health_check")
                                : NULL;
  if (health != NULL && JSON_NODE_HOLDS_VALUE (health))
    fprintf (cli->out, "health check: %s\n", json_node_get_string (health));
  return STG_EXIT_OK;
}

static int
job_list (StgCli *cli, int argc, gchar **argv)
{
  int code;
  g_autoptr (GError) error = NULL;
  g_autofree gchar *cluster = NULL, *role = NULL;

  if (!stg_cli_parse (cli, self ("list"), "job", NULL, "Lists jobs with their instance counts.",
                      0, 1, &argc, &argv, &code))
    return code;
  if (!stg_cli_parse_scope (argc > 1 ? argv[1] : NULL, &cluster, &role, &error))
    return stg_cli_fail (cli, error);
  g_autoptr (StgCliClient) c = stg_cli_client_new (cli, cluster, &error);
  g_autoptr (ApiResponse) r = c ? stg_cli_get_job_summary (c, role ? role : "", &error) : NULL;
  if (r == NULL)
    return stg_cli_fail (cli, error);
  if (cli->json)
    {
      g_autoptr (JsonNode) n = stg_thrift_to_json (r->result->jobSummaryResult);
      stg_cli_print_json (cli, n, FALSE);
      return STG_EXIT_OK;
    }
  g_autoptr (StgTable) t = stg_table_new ("JOB", "INSTANCES", "ACTIVE", "PENDING", "FAILED", NULL);
  g_autoptr (GList) summaries = g_hash_table_get_keys (r->result->jobSummaryResult->summaries);
  g_autoptr (GPtrArray) rows = g_ptr_array_new_with_free_func (g_free);
  for (GList *l = summaries; l != NULL; l = l->next)
    {
      ApiJobSummary *s = l->data;
      g_autofree gchar *key = stg_job_key_to_string (s->job->key);
      g_ptr_array_add (rows, g_strdup_printf ("%s/%s\t%d\t%d\t%d\t%d", stg_cli_client_cluster (c), key,
                                              s->job->instanceCount, s->stats->activeTaskCount,
                                              s->stats->pendingTaskCount, s->stats->failedTaskCount));
    }
  g_ptr_array_sort (rows, (GCompareFunc) g_ascii_strcasecmp);
  for (guint i = 0; i < rows->len; i++)
    {
      g_auto (GStrv) f = g_strsplit (rows->pdata[i], "\t", -1);
      stg_table_row (t);
      for (guint k = 0; f[k] != NULL; k++)
        stg_table_cell (t, k == 4 && !g_str_equal (f[k], "0") ? STG_STYLE_BAD : STG_STYLE_PLAIN, "%s", f[k]);
    }
  if (stg_table_rows (t) == 0)
    fprintf (cli->out, "no jobs\n");
  else
    stg_table_print (t, cli);
  return STG_EXIT_OK;
}

static int
job_diff (StgCli *cli, int argc, gchar **argv)
{
  int code;
  g_autoptr (GError) error = NULL;
  g_autoptr (StgJobPath) path = NULL;

  if (!stg_cli_parse (cli, self ("diff"), "job", NULL,
                      "Shows what an update to the job file would change: instances added, "
                      "removed, updated and unchanged, and the task fields that differ.",
                      2, 2, &argc, &argv, &code))
    return code;
  g_autoptr (StgJobPath) parsed = stg_job_path_parse (argv[1], TRUE, &error);
  g_autoptr (StgJobFile) jf = parsed ? load_for (argv[2], parsed, &error) : NULL;
  g_autoptr (StgCliClient) c = jf ? stg_cli_client_for_job (cli, argv[1], TRUE, &path, &error) : NULL;
  g_autoptr (ApiJobUpdateRequest) req = c ? stg_job_file_update_request (jf, path->instances) : NULL;
  g_autoptr (ApiResponse) r = req ? stg_cli_get_job_update_diff (c, req, &error) : NULL;
  if (r == NULL)
    return stg_cli_fail (cli, error);
  ApiGetJobUpdateDiffResult *d = r->result->getJobUpdateDiffResult;
  if (cli->json)
    {
      g_autoptr (JsonNode) n = stg_thrift_to_json (d);
      stg_cli_print_json (cli, n, FALSE);
      return STG_EXIT_OK;
    }
  stg_cli_print_diff_groups (cli, d);
  g_autofree gchar *notes = stg_cli_change_notes (d, jf->job->taskConfig);
  if (notes != NULL)
    fprintf (cli->out, "%s\n", notes);
  stg_cli_print_config_changes (cli, jf->job->taskConfig, d, "");
  return STG_EXIT_OK;
}

static int
job_inspect (StgCli *cli, int argc, gchar **argv)
{
  int code;
  g_autoptr (GError) error = NULL;

  if (!stg_cli_parse (cli, self ("inspect"), "job", NULL,
                      "Prints, as JSON, what the job file turns into: the JobConfiguration and "
                      "the JobUpdateSettings sent to staggerd. Needs no daemon.",
                      1, 1, &argc, &argv, &code))
    return code;
  g_autoptr (StgJobFile) jf = load_for (argv[1], NULL, &error);
  if (jf == NULL)
    return stg_cli_fail (cli, error);
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  stg_json_string (b, "cluster", jf->cluster);
  stg_json_node (b, "job", stg_thrift_to_json (jf->job));
  stg_json_node (b, "settings", stg_thrift_to_json (jf->settings));
  json_builder_end_object (b);
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  stg_cli_print_json (cli, root, FALSE);
  return STG_EXIT_OK;
}

const StgCliCommand stg_cli_job_commands[] = {
  { "create", "CLUSTER/ROLE/ENV/NAME CONFIG", "Create a job from a job file", job_create },
  { "kill", "CLUSTER/ROLE/ENV/NAME[/INSTANCES]", "Stop a job's instances (all: remove the job)",
    job_kill },
  { "status", "CLUSTER/ROLE/ENV/NAME[/INSTANCES]", "Show a job's instances", job_status },
  { "list", "[CLUSTER[/ROLE]]", "List jobs", job_list },
  { "diff", "CLUSTER/ROLE/ENV/NAME[/INSTANCES] CONFIG",
    "Show what an update to CONFIG would change", job_diff },
  { "restart", "CLUSTER/ROLE/ENV/NAME[/INSTANCES]", "Restart a job's instances a batch at a time",
    job_restart },
  { "history", "CLUSTER/ROLE/ENV/NAME", "List the configurations a job has had",
    stg_cli_job_history },
  { "revert", "CLUSTER/ROLE/ENV/NAME", "Update a job back to an earlier configuration",
    stg_cli_job_revert },
  { "inspect", "CONFIG", "Print what a job file sends, as JSON", job_inspect },
  { NULL, NULL, NULL, NULL },
};
