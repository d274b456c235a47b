/* job_config.c: a job's configuration for the commands that compare or
 * change it (job diff, job restart, job history and revert, host drain):
 * the job as the daemon keeps it (a task config as readable lines is
 * common/task_lines.c).
 * Calls the client. One thread: the process's main thread.
 */
#include "config.h"

#include "cli/thrift_json.h"
#include "cli/updates.h"
#include "common/jobkey.h"

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
