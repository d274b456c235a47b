/* runtime_facts.c: the store's part for runtimes: stable named ports and a
 * listing of every slot (for adoption after a restart). Main-loop thread
 * only. */
#include "config.h"

#include "store/store_private.h"

gint
stg_store_get_port (StgStore *store, const ApiJobKey *job, gint32 instance, const gchar *name,
                    GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (store,
      "SELECT port FROM ports WHERE role = ? AND environment = ? AND name = ? AND instance_id = ? "
      "AND port_name = ?", error);
  if (st == NULL)
    return 0;
  stg_bind_text (st, 1, job->role);
  stg_bind_text (st, 2, job->environment);
  stg_bind_text (st, 3, job->name);
  stg_db_bind_int64 (st, 4, instance);
  stg_bind_text (st, 5, name);
  int rc = stg_db_step (st);
  if (rc == STG_DB_ROW)
    return stg_db_column_int (st, 0);
  if (rc != STG_DB_DONE)
    stg_store_fail (store, error, "reading a port");
  return 0;
}

gboolean
stg_store_put_port (StgStore *store, const ApiJobKey *job, gint32 instance, const gchar *name,
                    gint port, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (store,
      "INSERT INTO ports (role, environment, name, instance_id, port_name, port) "
      "VALUES (?, ?, ?, ?, ?, ?)", error);
  if (st == NULL)
    return FALSE;
  stg_bind_text (st, 1, job->role);
  stg_bind_text (st, 2, job->environment);
  stg_bind_text (st, 3, job->name);
  stg_db_bind_int64 (st, 4, instance);
  stg_bind_text (st, 5, name);
  stg_db_bind_int64 (st, 6, port);
  return stg_store_exec_stmt (store, st, error, "keeping a port");
}

gint64
stg_store_count_role_ports (StgStore *store, const gchar *role, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (store, "SELECT COUNT(*) FROM ports WHERE role = ?",
                                           error);
  if (st == NULL)
    return -1;
  stg_db_bind_text (st, 1, role);
  if (stg_db_step (st) != STG_DB_ROW)
    {
      stg_store_fail (store, error, "counting a role's ports");
      return -1;
    }
  return stg_db_column_int64 (st, 0);
}

gboolean
stg_store_port_used (StgStore *store, gint port, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (store, "SELECT 1 FROM ports WHERE port = ?", error);
  if (st == NULL)
    return TRUE;
  stg_db_bind_int64 (st, 1, port);
  int rc = stg_db_step (st);
  if (rc != STG_DB_ROW && rc != STG_DB_DONE)
    {
      stg_store_fail (store, error, "looking up a port");
      return TRUE;
    }
  return rc == STG_DB_ROW;
}

GHashTable *
stg_store_list_ports (StgStore *store, const ApiJobKey *job, gint32 instance, GError **error)
{
  g_autoptr (GHashTable) out = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (StgStmt) st = stg_store_stmt (store,
      "SELECT port_name, port FROM ports WHERE role = ? AND environment = ? AND name = ? "
      "AND instance_id = ?", error);
  int rc;

  if (st == NULL)
    return NULL;
  stg_bind_text (st, 1, job->role);
  stg_bind_text (st, 2, job->environment);
  stg_bind_text (st, 3, job->name);
  stg_db_bind_int64 (st, 4, instance);
  while ((rc = stg_db_step (st)) == STG_DB_ROW)
    g_hash_table_insert (out, stg_column_dup (st, 0), GINT_TO_POINTER (stg_db_column_int (st, 1)));
  if (rc != STG_DB_DONE)
    {
      stg_store_fail (store, error, "listing ports");
      return NULL;
    }
  return g_steal_pointer (&out);
}

GArray *
stg_store_list_all_instances (StgStore *store, GError **error)
{
  g_autoptr (GArray) out = g_array_new (FALSE, TRUE, sizeof (StgSlotRow));
  g_autoptr (StgStmt) st = stg_store_stmt (store,
      "SELECT job_id, instance_id, config_id, status, run_id, pid, pid_start, failure_count, "
      "status_ms, COALESCE(run_config_id, 0), next_run_id, next_config_id, next_pid, next_pid_start, "
      "stop_reason FROM instances ORDER BY job_id, instance_id", error);
  int rc;

  if (st == NULL)
    return NULL;
  while ((rc = stg_db_step (st)) == STG_DB_ROW)
    {
      StgSlotRow s = { 0 };
      s.job_id = stg_db_column_int64 (st, 0);
      s.row.instance_id = stg_db_column_int (st, 1);
      s.row.config_id = stg_db_column_int64 (st, 2);
      s.row.status = stg_db_column_int (st, 3);
      s.row.run_id = stg_db_column_int64 (st, 4);
      s.row.pid = stg_db_column_int64 (st, 5);
      s.row.pid_start = stg_db_column_int64 (st, 6);
      s.row.failure_count = stg_db_column_int (st, 7);
      s.row.status_ms = stg_db_column_int64 (st, 8);
      s.row.run_config_id = stg_db_column_int64 (st, 9);
      s.row.next_run_id = stg_db_column_int64 (st, 10);
      s.row.next_config_id = stg_db_column_int64 (st, 11);
      s.row.next_pid = stg_db_column_int64 (st, 12);
      s.row.next_pid_start = stg_db_column_int64 (st, 13);
      s.row.stop_reason = stg_db_column_int (st, 14);
      g_array_append_val (out, s);
    }
  if (rc != STG_DB_DONE)
    {
      stg_store_fail (store, error, "listing instances");
      return NULL;
    }
  return g_steal_pointer (&out);
}
