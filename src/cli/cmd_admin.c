/* cmd_admin.c: stagger admin, the operators' commands (each needs a user
 * of every role): backup (performBackup), backups (listBackups), restore
 * (Aurora's recovery flow: stageRecovery, queryRecovery,
 * deleteRecoveryTasks, then commitRecovery, or unloadRecovery for a dry
 * run), reconcile (the reconciliation calls) and prune (pruneTasks). One
 * thread: the process's main thread.
 */
#include "config.h"

#include "cli/cli.h"
#include "cli/client.h"
#include "cli/output.h"
#include "common/thrift_json.h"
#include "common/jobkey.h"

static const StgCliCommand *
self (const gchar *name)
{
  return stg_cli_find_command (stg_cli_admin_commands, name);
}

/* Prints what staggerd said it did (the answer's details). */
static void
print_details (StgCli *cli, const ApiResponse *r)
{
  for (guint i = 0; r->details != NULL && i < r->details->len; i++)
    fprintf (cli->out, "%s\n", ((ApiResponseDetail *) r->details->pdata[i])->message);
}

static int
admin_backup (StgCli *cli, int argc, gchar **argv)
{
  int code;
  g_autoptr (GError) error = NULL;

  if (!stg_cli_parse (cli, self ("backup"), "admin", NULL,
                      "Writes a backup of staggerd's store now (SQLite: a copy of the database in "
                      "the backup folder of its data directory; PostgreSQL keeps its own).",
                      0, 1, &argc, &argv, &code))
    return code;
  g_autoptr (StgCliClient) c = stg_cli_client_new (cli, argc > 1 ? argv[1] : NULL, &error);
  g_autoptr (ApiResponse) r = c ? stg_cli_perform_backup (c, &error) : NULL;
  if (r == NULL)
    return stg_cli_fail (cli, error);
  print_details (cli, r);
  return STG_EXIT_OK;
}

static gint
compare_strings (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(const gchar *const *) a, *(const gchar *const *) b);
}

static int
admin_backups (StgCli *cli, int argc, gchar **argv)
{
  int code;
  g_autoptr (GError) error = NULL;

  if (!stg_cli_parse (cli, self ("backups"), "admin", NULL,
                      "Lists the backups staggerd can recover from, oldest first.", 0, 1, &argc,
                      &argv, &code))
    return code;
  g_autoptr (StgCliClient) c = stg_cli_client_new (cli, argc > 1 ? argv[1] : NULL, &error);
  g_autoptr (ApiResponse) r = c ? stg_cli_list_backups (c, &error) : NULL;
  if (r == NULL)
    return stg_cli_fail (cli, error);
  if (cli->json)
    {
      g_autoptr (JsonNode) n = stg_thrift_to_json (r->result->listBackupsResult);
      stg_cli_print_json (cli, n, FALSE);
      return STG_EXIT_OK;
    }
  g_autoptr (GPtrArray) names = g_ptr_array_new ();
  GHashTableIter it;
  gpointer name;
  g_hash_table_iter_init (&it, r->result->listBackupsResult->backups);
  while (g_hash_table_iter_next (&it, &name, NULL))
    g_ptr_array_add (names, name);
  g_ptr_array_sort (names, compare_strings);
  for (guint i = 0; i < names->len; i++)
    fprintf (cli->out, "%s\n", (const gchar *) names->pdata[i]);
  if (names->len == 0)
    fprintf (cli->out, "no backups\n");
  return STG_EXIT_OK;
}

/* A query for the tasks of @text: CLUSTER/ROLE/ENV/NAME[/INSTANCES] of
 * cluster @cluster (the backup's). */
static ApiTaskQuery *
job_query (const gchar *text, const gchar *cluster, GError **error)
{
  g_autoptr (StgJobPath) path = stg_job_path_parse (text, TRUE, error);

  if (path == NULL)
    return NULL;
  if (cluster != NULL && g_strcmp0 (path->cluster, cluster) != 0)
    {
      g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_USAGE,
                   "--delete %s names cluster %s, not %s", text, path->cluster, cluster);
      return NULL;
    }
  return stg_cli_task_query (path);
}

/* The staged backup's tasks, as a line per job. */
static gboolean
print_staged (StgCli *cli, StgCliClient *c, GError **error)
{
  g_autoptr (ApiTaskQuery) all = g_object_new (API_TYPE_TASK_QUERY, NULL);
  g_autoptr (ApiResponse) r = stg_cli_query_recovery (c, all, error);

  if (r == NULL)
    return FALSE;
  g_autoptr (GHashTable) jobs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  GHashTableIter it;
  gpointer task;
  g_hash_table_iter_init (&it, r->result->queryRecoveryResult->tasks);
  while (g_hash_table_iter_next (&it, &task, NULL))
    {
      gchar *name = stg_job_key_to_string (((ApiScheduledTask *) task)->assignedTask->task->job);
      guint n = GPOINTER_TO_UINT (g_hash_table_lookup (jobs, name));
      g_hash_table_insert (jobs, name, GUINT_TO_POINTER (n + 1));
    }
  g_autoptr (GList) names = g_list_sort (g_hash_table_get_keys (jobs), (GCompareFunc) g_strcmp0);
  fprintf (cli->out, "the staged backup holds %u job%s:\n", g_hash_table_size (jobs),
           g_hash_table_size (jobs) == 1 ? "" : "s");
  for (GList *l = names; l != NULL; l = l->next)
    {
      guint n = GPOINTER_TO_UINT (g_hash_table_lookup (jobs, l->data));
      fprintf (cli->out, "  %s/%s: %u task%s\n", stg_cli_client_cluster (c),
               (const gchar *) l->data, n, n == 1 ? "" : "s");
    }
  return TRUE;
}

/* Deletes the tasks of each of @deletes from the staged backup, then
 * commits it (or, @dry_run, unloads it). */
static gboolean
recover (StgCli *cli, StgCliClient *c, gchar **deletes, gboolean dry_run, GError **error)
{
  for (guint i = 0; deletes != NULL && deletes[i] != NULL; i++)
    {
      g_autoptr (ApiTaskQuery) q = job_query (deletes[i], stg_cli_client_cluster (c), error);
      g_autoptr (ApiResponse) r = q ? stg_cli_delete_recovery_tasks (c, q, error) : NULL;
      if (r == NULL)
        return FALSE;
      print_details (cli, r);
    }
  if (!print_staged (cli, c, error))
    return FALSE;
  g_autoptr (ApiResponse) r = dry_run ? stg_cli_unload_recovery (c, error)
                                      : stg_cli_commit_recovery (c, error);
  if (r == NULL)
    return FALSE;
  if (dry_run)
    fprintf (cli->out, "dry run: the staged backup is unloaded; nothing changed\n");
  print_details (cli, r);
  return TRUE;
}

static int
admin_restore (StgCli *cli, int argc, gchar **argv)
{
  int code;
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) deletes = NULL;
  gboolean dry_run = FALSE;
  g_autofree gchar *cluster = NULL, *id = NULL;
  const GOptionEntry entries[] = {
    { "delete", 0, 0, G_OPTION_ARG_STRING_ARRAY, &deletes,
      "Delete these tasks from the backup before it is restored (repeatable)",
      "CLUSTER/ROLE/ENV/NAME[/INSTANCES]" },
    { "dry-run", 'n', 0, G_OPTION_ARG_NONE, &dry_run,
      "Stage the backup, show what it holds, and unload it again", NULL },
    { NULL },
  };

  if (!stg_cli_parse (cli, self ("restore"), "admin", entries,
                      "Restores a backup as Aurora's recovery does: staggerd stages it, the "
                      "tasks given with --delete are deleted from it, and it replaces the store; "
                      "staggerd then restarts itself to load it. Jobs and updates go back to "
                      "where the backup has them, and updates under way go on from there. "
                      "Instances that run now but are not in the backup are stopped.",
                      1, 1, &argc, &argv, &code))
    return code;
  if (!stg_cli_parse_cluster_name (argv[1], "BACKUP", &cluster, &id, &error))
    return stg_cli_fail (cli, error);
  g_autoptr (StgCliClient) c = stg_cli_client_new (cli, cluster, &error);
  g_autoptr (ApiResponse) r = c ? stg_cli_stage_recovery (c, id, &error) : NULL;
  if (r == NULL)
    return stg_cli_fail (cli, error);
  print_details (cli, r);
  if (!recover (cli, c, deletes, dry_run, &error))
    {
      g_autoptr (ApiResponse) unloaded = stg_cli_unload_recovery (c, NULL);
      if (unloaded != NULL)
        stg_cli_warn (cli, "the staged backup is unloaded");
      return stg_cli_fail (cli, error);
    }
  return STG_EXIT_OK;
}

static int
admin_reconcile (StgCli *cli, int argc, gchar **argv)
{
  int code;
  g_autoptr (GError) error = NULL;
  gboolean implicit = FALSE;
  gint batch_size = G_MININT; /* not given */
  const GOptionEntry entries[] = {
    { "implicit", 0, 0, G_OPTION_ARG_NONE, &implicit,
      "Stop what runs with staggerd's mark that no instance expects (default: look for each "
      "instance)",
      NULL },
    { "batch-size", 0, 0, G_OPTION_ARG_INT, &batch_size,
      "Look for at most N instances at a time, the batches 5 s apart (default: staggerd's, 1000)",
      "N" },
    { NULL },
  };

  if (!stg_cli_parse (cli, self ("reconcile"), "admin", entries,
                      "Makes staggerd's runtime compare what runs with its store now (Aurora's "
                      "task reconciliation): each instance's process or container is looked for, "
                      "and one that is gone has ended; with --implicit, processes or containers "
                      "with staggerd's mark that no instance expects are stopped.",
                      0, 1, &argc, &argv, &code))
    return code;
  if (batch_size != G_MININT && implicit)
    return stg_cli_usage_error (cli, "--batch-size is for the explicit reconciliation (without "
                                     "--implicit)");
  if (batch_size != G_MININT && batch_size <= 0)
    return stg_cli_usage_error (cli, "--batch-size must be greater than zero, not %d", batch_size);
  if (batch_size == G_MININT)
    batch_size = 0; /* staggerd's own */
  g_autoptr (StgCliClient) c = stg_cli_client_new (cli, argc > 1 ? argv[1] : NULL, &error);
  g_autoptr (ApiResponse) r = c ? stg_cli_reconcile (c, implicit, batch_size, &error) : NULL;
  if (r == NULL)
    return stg_cli_fail (cli, error);
  print_details (cli, r);
  return STG_EXIT_OK;
}

static int
admin_prune (StgCli *cli, int argc, gchar **argv)
{
  int code;
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiTaskQuery) q = NULL;
  g_autofree gchar *cluster = NULL, *role = NULL;
  g_autoptr (StgCliClient) c = NULL;

  if (!stg_cli_parse (cli, self ("prune"), "admin", NULL,
                      "Removes ended tasks (FINISHED, FAILED, KILLED or LOST, with nothing to "
                      "start again) and the task events of instances their job no longer has "
                      "(Aurora's pruneTasks): of one job (and its INSTANCES), of a role, or of "
                      "every job. A job with an update under way keeps its tasks.",
                      1, 1, &argc, &argv, &code))
    return code;
  g_auto (GStrv) parts = g_strsplit (argv[1], "/", 0);
  if (g_strv_length (parts) >= 4)
    {
      g_autoptr (StgJobPath) path = NULL;
      c = stg_cli_client_for_job (cli, argv[1], TRUE, &path, &error);
      q = c ? stg_cli_task_query (path) : NULL;
    }
  else if (stg_cli_parse_scope (argv[1], &cluster, &role, &error))
    {
      c = stg_cli_client_new (cli, cluster, &error);
      q = g_object_new (API_TYPE_TASK_QUERY, NULL);
      if (role != NULL)
        g_object_set (q, "role", role, NULL);
    }
  g_autoptr (ApiResponse) r = q ? stg_cli_prune_tasks (c, q, &error) : NULL;
  if (r == NULL)
    return stg_cli_fail (cli, error);
  print_details (cli, r);
  return STG_EXIT_OK;
}

const StgCliCommand stg_cli_admin_commands[] = {
  { "backup", "[CLUSTER]", "Write a backup of staggerd's store now", admin_backup },
  { "backups", "[CLUSTER]", "List the backups staggerd can recover from", admin_backups },
  { "restore", "[CLUSTER/]BACKUP",
    "Replace staggerd's store with a backup (Aurora's recovery); --dry-run to look first",
    admin_restore },
  { "reconcile", "[CLUSTER]", "Make the runtime compare what runs with the store now",
    admin_reconcile },
  { "prune", "CLUSTER[/ROLE[/ENV/NAME[/INSTANCES]]]",
    "Remove ended tasks and the history of gone instances", admin_prune },
  { NULL, NULL, NULL, NULL },
};
