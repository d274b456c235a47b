/* job_config.c: a job's configuration for the commands that compare or
 * change it (job diff, plan diff, job restart, job history and revert,
 * host drain): the job as the daemon keeps it, its update named or
 * newest (the update commands find theirs here), and the lines of a task
 * config that an update would change (a task config as readable lines is
 * common/task_lines.c).
 * Calls the client. One thread: the process's main thread.
 */
#include "config.h"

#include "cli/output.h"
#include "common/thrift_json.h"
#include "cli/updates.h"
#include "common/enums.h"
#include "common/jobkey.h"
#include "common/task_lines.h"

ApiJobConfiguration *
stg_cli_current_job (StgCliClient *c, const ApiJobKey *key, GError **error)
{
  g_autoptr (ApiResponse) r = stg_cli_get_job_summary (c, key->role, error);
  GHashTableIter it;
  gpointer s;

  if (r == NULL)
    return NULL;
  g_hash_table_iter_init (&it, r->result->jobSummaryResult->summaries);
  while (g_hash_table_iter_next (&it, &s, NULL))
    {
      ApiJobConfiguration *job = ((ApiJobSummary *) s)->job;
      if (stg_job_key_equal (job->key, key))
        return g_object_ref (job);
    }
  g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_NOT_FOUND, "no job %s/%s/%s", key->role,
               key->environment, key->name);
  return NULL;
}

ApiJobUpdateSettings *
stg_cli_newest_update_settings (StgCliClient *c, ApiJobKey *key)
{
  g_autoptr (ApiJobUpdateQuery) q = g_object_new (API_TYPE_JOB_UPDATE_QUERY, "jobKey", key, "limit",
                                                  1, NULL);
  g_autoptr (ApiResponse) list = stg_cli_get_job_update_summaries (c, q, NULL);
  GPtrArray *s = list ? list->result->getJobUpdateSummariesResult->updateSummaries : NULL;
  g_autoptr (ApiResponse) d =
      s && s->len > 0
          ? stg_cli_get_job_update_details (c, ((ApiJobUpdateSummary *) s->pdata[0])->key, NULL)
          : NULL;
  ApiJobUpdateDetails *details = d ? d->result->getJobUpdateDetailsResult->details : NULL;
  ApiJobUpdateInstructions *ins = details && details->update ? details->update->instructions : NULL;

  return ins && ins->settings ? stg_thrift_copy (ins->settings) : NULL;
}

void
stg_cli_print_config_changes (StgCli *cli, ApiTaskConfig *want_config,
                              ApiGetJobUpdateDiffResult *diff, const gchar *indent)
{
  g_autoptr (GPtrArray) want = stg_task_lines (want_config);
  GHashTableIter it;
  gpointer g;

  g_hash_table_iter_init (&it, diff->update);
  while (g_hash_table_iter_next (&it, &g, NULL))
    {
      ApiConfigGroup *group = g;
      g_autoptr (StgRanges) ids = stg_cli_ranges_from_set (group->instances);
      g_autofree gchar *ids_text = stg_cli_ranges_text (ids);
      g_autoptr (GPtrArray) have = stg_task_lines (group->config);
      fprintf (cli->out, "\n%sinstances %s:\n", indent, ids_text);
      for (guint pass = 0; pass < 2; pass++)
        {
          GPtrArray *from = pass == 0 ? have : want, *other = pass == 0 ? want : have;
          for (guint i = 0; i < from->len; i++)
            if (!g_ptr_array_find_with_equal_func (other, from->pdata[i], g_str_equal, NULL))
              {
                g_autofree gchar *line = g_strconcat (pass == 0 ? "- " : "+ ",
                                                      (gchar *) from->pdata[i], NULL);
                g_autofree gchar *shown = stg_cli_styled (cli->color_out,
                                                          pass == 0 ? STG_STYLE_BAD
                                                                    : STG_STYLE_GOOD,
                                                          line);
                fprintf (cli->out, "%s  %s\n", indent, shown);
              }
        }
    }
}

ApiJobUpdateKey *
stg_cli_find_update (StgCliClient *c, ApiJobKey *job, const gchar *id, gboolean active,
                     GError **error)
{
  g_autofree gchar *text = stg_job_key_to_string (job);

  g_autoptr (ApiJobUpdateKey) wanted = id ? g_object_new (API_TYPE_JOB_UPDATE_KEY, "job", job, "id",
                                                          id, NULL)
                                          : NULL;
  g_autoptr (ApiJobUpdateQuery) q = g_object_new (API_TYPE_JOB_UPDATE_QUERY, "jobKey", job, "limit",
                                                  1, NULL);
  /* A named update is looked up too, so that a wrong --id is "not found". */
  if (wanted != NULL)
    g_object_set (q, "key", wanted, NULL);
  if (active)
    for (gint s = 0; s < 32; s++)
      if (stg_update_status_is_active (s))
        g_hash_table_add (q->updateStatuses, GINT_TO_POINTER (s));
  g_autoptr (ApiResponse) r = stg_cli_get_job_update_summaries (c, q, error);
  if (r == NULL)
    return NULL;
  GPtrArray *list = r->result->getJobUpdateSummariesResult->updateSummaries;
  if (list->len == 0 && id != NULL)
    {
      g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_NOT_FOUND, "%s has no %supdate %s", text,
                   active ? "active " : "", id);
      return NULL;
    }
  if (list->len == 0)
    {
      g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_NOT_FOUND, "%s has no %supdate", text,
                   active ? "active " : "");
      return NULL;
    }
  return g_object_ref (((ApiJobUpdateSummary *) list->pdata[0])->key);
}
