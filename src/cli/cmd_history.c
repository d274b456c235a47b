/* cmd_history.c: stagger job history|revert: the configurations a job
 * has had (getJobConfigHistory), and an update back to one of them (as
 * kubectl rollout undo and nomad job revert do). One thread: the process's
 * main thread.
 */
#include "config.h"

#include "cli/cli.h"
#include "cli/client.h"
#include "cli/output.h"
#include "common/thrift_json.h"
#include "cli/updates.h"

/* The job's versions (oldest first); NOT_FOUND when it never had one. */
static GPtrArray *
versions_of (StgCliClient *c, ApiJobKey *key, ApiResponse **holder, GError **error)
{
  *holder = stg_cli_get_job_config_history (c, key, error);
  if (*holder == NULL)
    return NULL;
  GPtrArray *v = (*holder)->result->getJobConfigHistoryResult->versions;
  if (v->len == 0)
    {
      g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_NOT_FOUND, "no job %s/%s/%s", key->role,
                   key->environment, key->name);
      return NULL;
    }
  return v;
}

/* The version the job runs now: the one most of its instances should run
 * (the newest of a tie); 0 when none does (a killed job). */
static gint
current_version (GPtrArray *versions)
{
  gint best = 0, most = 0;
  for (guint i = 0; i < versions->len; i++)
    {
      ApiJobConfigVersion *v = versions->pdata[i];
      if (v->instancesOnIt > 0 && v->instancesOnIt >= most)
        {
          most = v->instancesOnIt;
          best = v->version;
        }
    }
  return best;
}

/* What changed from @before to @after, as the task fields' names. */
static gchar *
changes (ApiTaskConfig *before, ApiTaskConfig *after)
{
  g_autoptr (GPtrArray) a = stg_task_lines (before);
  g_autoptr (GPtrArray) b = stg_task_lines (after);
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; i < b->len; i++)
    if (!g_ptr_array_find_with_equal_func (a, b->pdata[i], g_str_equal, NULL))
      {
        const gchar *line = b->pdata[i];
        gchar *name = g_strndup (line,
                                 (gsize) (strchr (line, ':') ? strchr (line, ':') - line : 0));
        if (!g_ptr_array_find_with_equal_func (names, name, g_str_equal, NULL))
          g_ptr_array_add (names, name);
        else
          g_free (name);
      }
  g_ptr_array_add (names, NULL);
  return names->len > 1 ? g_strjoinv (", ", (gchar **) names->pdata) : g_strdup ("-");
}

int
stg_cli_job_history (StgCli *cli, int argc, gchar **argv)
{
  int code;
  g_autoptr (GError) error = NULL;
  g_autoptr (StgJobPath) path = NULL;
  g_autoptr (ApiResponse) holder = NULL;

  if (!stg_cli_parse (cli, cli->entry, "job", NULL,
                      "Lists the configurations the job has had, oldest first: each version, when "
                      "it was stored, the update that moved the job to it and who started it, how "
                      "many instances run it now, and what changed from the version before. "
                      "stagger job revert goes back to one.",
                      1, 1, &argc, &argv, &code))
    return code;
  g_autoptr (StgCliClient) c = stg_cli_client_for_job (cli, argv[1], FALSE, &path, &error);
  GPtrArray *versions = c ? versions_of (c, path->key, &holder, &error) : NULL;
  if (versions == NULL)
    return stg_cli_fail (cli, error);
  if (cli->json)
    {
      g_autoptr (JsonNode) n = stg_thrift_to_json (holder->result->getJobConfigHistoryResult);
      stg_cli_print_json (cli, n, FALSE);
      return STG_EXIT_OK;
    }
  gint current = current_version (versions);
  g_autoptr (StgTable) t = stg_table_new ("VERSION", "STORED", "UPDATE", "USER", "INSTANCES",
                                          "CHANGED", NULL);
  for (guint i = 0; i < versions->len; i++)
    {
      ApiJobConfigVersion *v = versions->pdata[i];
      g_autofree gchar *when = stg_cli_format_time (v->createdTimestampMs);
      g_autofree gchar *what =
          i == 0 ? g_strdup ("(first)")
                 : changes (((ApiJobConfigVersion *) versions->pdata[i - 1])->config, v->config);
      stg_table_row (t);
      stg_table_cell (t, v->version == current ? STG_STYLE_GOOD : STG_STYLE_PLAIN, "%d%s",
                      v->version, v->version == current ? " (current)" : "");
      stg_table_cell (t, STG_STYLE_PLAIN, "%s", when);
      stg_table_cell (t, STG_STYLE_PLAIN, "%s", v->__isset_updateId ? v->updateId : "-");
      stg_table_cell (t, STG_STYLE_PLAIN, "%s", v->__isset_user ? v->user : "-");
      stg_table_cell (t, STG_STYLE_PLAIN, "%d", v->instancesOnIt);
      stg_table_cell (t, STG_STYLE_PLAIN, "%s", what);
    }
  stg_table_print (t, cli);
  return STG_EXIT_OK;
}

/* The settings of the job's newest update, to revert the way it updates;
 * Aurora's defaults when it has none. */
static ApiJobUpdateSettings *
revert_settings (StgCliClient *c, ApiJobKey *key)
{
  ApiJobUpdateSettings *copy = stg_cli_newest_update_settings (c, key);

  if (copy == NULL)
    return g_object_new (API_TYPE_JOB_UPDATE_SETTINGS, "updateGroupSize", 1,
                         "minWaitInInstanceRunningMs", 30000, "rollbackOnFailure", TRUE, NULL);
  g_hash_table_remove_all (copy->updateOnlyTheseInstances);
  copy->__isset_updateOnlyTheseInstances = FALSE;
  copy->restartInstances = FALSE;
  copy->__isset_restartInstances = FALSE;
  return copy;
}

/* The version to go back to: @wanted (0: the newest before @current). */
static ApiJobConfigVersion *
revert_target (GPtrArray *versions, gint current, gint wanted, GError **error)
{
  ApiJobConfigVersion *found = NULL;
  for (guint i = 0; i < versions->len; i++)
    {
      ApiJobConfigVersion *v = versions->pdata[i];
      if (wanted > 0 ? v->version == wanted : v->version < current)
        found = v;
    }
  if (found == NULL && wanted > 0)
    g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_NOT_FOUND,
                 "the job has no version %d (it has 1 to %d)", wanted,
                 ((ApiJobConfigVersion *) versions->pdata[versions->len - 1])->version);
  else if (found == NULL)
    g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_FAILED,
                 "version %d is the job's first: there is nothing before it to go back to",
                 current);
  else if (found->version == current)
    {
      g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_FAILED, "the job runs version %d already",
                   current);
      found = NULL;
    }
  return found;
}

int
stg_cli_job_revert (StgCli *cli, int argc, gchar **argv)
{
  int code;
  gint wanted = 0;
  gboolean wait = FALSE;
  g_autofree gchar *message = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (StgJobPath) path = NULL;
  g_autoptr (ApiResponse) holder = NULL;
  const GOptionEntry entries[] = {
    { "to-version", 0, 0, G_OPTION_ARG_INT, &wanted,
      "Go back to version N (default: the one before the current)", "N" },
    { "message", 'm', 0, G_OPTION_ARG_STRING, &message, "Why, recorded with the update", "TEXT" },
    { "wait", 'w', 0, G_OPTION_ARG_NONE, &wait,
      "Follow the update to its end (exit codes as update wait)", NULL },
    { NULL },
  };

  if (!stg_cli_parse (cli, cli->entry, "job", entries,
                      "Starts an update of the job back to an earlier stored configuration (see "
                      "stagger job history), with the settings of the job's newest update and its "
                      "current instance count.",
                      1, 1, &argc, &argv, &code))
    return code;
  if (wanted < 0)
    return stg_cli_usage_error (cli, "--to-version takes a version number (1 or more)");
  g_autoptr (StgCliClient) c = stg_cli_client_for_job (cli, argv[1], FALSE, &path, &error);
  GPtrArray *versions = c ? versions_of (c, path->key, &holder, &error) : NULL;
  g_autoptr (ApiJobConfiguration) job = versions ? stg_cli_current_job (c, path->key, &error)
                                                 : NULL;
  ApiJobConfigVersion *target = job ? revert_target (versions, current_version (versions), wanted,
                                                     &error)
                                    : NULL;
  if (target == NULL)
    return stg_cli_fail (cli, error);
  g_autoptr (ApiJobUpdateSettings) settings = revert_settings (c, path->key);
  g_autoptr (ApiJobUpdateRequest) req = g_object_new (API_TYPE_JOB_UPDATE_REQUEST, "taskConfig",
                                                      target->config, "instanceCount",
                                                      job->instanceCount, "settings", settings,
                                                      NULL);
  g_autofree gchar *why = message ? g_strdup (message)
                                  : g_strdup_printf ("revert to version %d", target->version);
  g_autoptr (ApiResponse) r = stg_cli_start_job_update (c, req, why, &error);
  if (r == NULL)
    return stg_cli_fail (cli, error);
  g_autofree gchar *what = g_strdup_printf ("reverting %s to version %d", argv[1], target->version);
  return stg_cli_update_started (cli, c, argv[1], what, r->result->startJobUpdateResult->key, NULL,
                                 wait);
}
