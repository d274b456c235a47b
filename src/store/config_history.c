/* config_history.c: the configurations a job has had (task_configs,
 * numbered per job key), each with the first update that moved the job to
 * it and how many of the job's instances should run it now. Read by
 * getJobConfigHistory (stagger job history, job revert). Main-loop thread
 * only.
 */
#include "config.h"

#include "store/store_private.h"

static void
version_row_free (StgConfigVersionRow *row)
{
  if (row == NULL)
    return;
  g_clear_object (&row->config);
  g_free (row->update_uid);
  g_free (row->user);
  g_free (row);
}

GPtrArray *
stg_store_job_config_history (StgStore *store, const ApiJobKey *job, GError **error)
{
  g_autoptr (GPtrArray) rows = g_ptr_array_new_with_free_func ((GDestroyNotify) version_row_free);
  g_autoptr (StgStmt) st = stg_store_stmt (
      store,
      "SELECT c.id, c.version, c.created_ms, "
      "  (SELECT u.uid FROM updates u WHERE u.desired_config_id = c.id "
      "     ORDER BY u.created_ms, u.id LIMIT 1), "
      "  (SELECT u.\"user\" FROM updates u WHERE u.desired_config_id = c.id "
      "     ORDER BY u.created_ms, u.id LIMIT 1), "
      "  (SELECT COUNT(*) FROM instances i JOIN jobs j ON j.id = i.job_id "
      "     WHERE i.config_id = c.id AND j.role = c.role AND j.environment = c.environment "
      "       AND j.name = c.name) "
      "FROM task_configs c WHERE c.role = ? AND c.environment = ? AND c.name = ? "
      "ORDER BY c.version",
      error);
  int rc;

  if (st == NULL)
    return NULL;
  stg_db_bind_text (st, 1, job->role);
  stg_db_bind_text (st, 2, job->environment);
  stg_db_bind_text (st, 3, job->name);
  while ((rc = stg_db_step (st)) == STG_DB_ROW)
    {
      StgConfigVersionRow *row = g_new0 (StgConfigVersionRow, 1);
      row->config_id = stg_db_column_int64 (st, 0);
      row->version = (gint) stg_db_column_int64 (st, 1);
      row->created_ms = stg_db_column_int64 (st, 2);
      row->update_uid = g_strdup (stg_db_column_text (st, 3));
      row->user = g_strdup (stg_db_column_text (st, 4));
      row->instances_now = (gint) stg_db_column_int64 (st, 5);
      g_ptr_array_add (rows, row);
    }
  if (rc != STG_DB_DONE)
    {
      stg_store_fail (store, error, "reading a job's configurations");
      return NULL;
    }
  stg_db_reset (st);
  for (guint i = 0; i < rows->len; i++)
    {
      StgConfigVersionRow *row = rows->pdata[i];
      row->config = stg_store_get_config (store, row->config_id, error);
      if (row->config == NULL)
        return NULL;
    }
  return g_steal_pointer (&rows);
}
