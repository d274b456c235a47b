/* retention.c: keeping the database from growing without end: old
 * finished updates and old events are deleted in small steps, and the
 * pages they leave are handed back to the file system a few at a time
 * (SQLite: auto_vacuum = INCREMENTAL, never a whole-file VACUUM;
 * PostgreSQL's autovacuum does that part itself). The daemon calls these
 * from a timer; pruneTasks deletes a job's task events on request.
 * Main-loop thread only.
 */
#include "config.h"

#include "store/store_private.h"

/* Deletes up to @limit rows with @sql (two parameters: the bound, then
 * the limit); adds how many to *@deleted. */
static gboolean
delete_some (StgStore *store, const gchar *sql, gint64 bound, guint limit, guint *deleted,
             GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (store, sql, error);

  if (st == NULL)
    return FALSE;
  stg_db_bind_int64 (st, 1, bound);
  stg_db_bind_int64 (st, 2, (int) limit);
  if (!stg_store_exec_stmt (store, st, error, "pruning"))
    return FALSE;
  *deleted += (guint) stg_db_changes (st);
  return TRUE;
}

gboolean
stg_store_prune (StgStore *store, guint keep_updates, gint64 events_before_ms, guint limit,
                 guint *deleted, GError **error)
{
  guint n = 0;

  g_return_val_if_fail (!stg_store_in_transaction (store), FALSE);
  if (!stg_store_begin (store, error))
    return FALSE;
  /* Finished updates past the newest @keep_updates of their job; their
   * instances and events go with them (ON DELETE CASCADE). */
  gboolean ok =
      (keep_updates == 0 ||
       delete_some (store,
                    "DELETE FROM updates WHERE id IN (SELECT id FROM (SELECT id, active, "
                    "ROW_NUMBER () OVER (PARTITION BY role, environment, name "
                    "ORDER BY created_ms DESC, id DESC) AS n FROM updates) AS ranked "
                    "WHERE active = 0 AND n > ?1 LIMIT ?2)",
                    keep_updates, limit, &n, error)) &&
      (events_before_ms <= 0 ||
       (delete_some (store,
                     "DELETE FROM task_events WHERE id IN (SELECT id FROM task_events "
                     "WHERE ts_ms < ?1 ORDER BY id LIMIT ?2)",
                     events_before_ms, limit, &n, error) &&
        delete_some (store,
                     "DELETE FROM ended_tasks WHERE id IN (SELECT id FROM ended_tasks "
                     "WHERE ended_ms < ?1 ORDER BY id LIMIT ?2)",
                     events_before_ms, limit, &n, error) &&
        delete_some (store,
                     "DELETE FROM instance_events WHERE id IN (SELECT e.id FROM instance_events e "
                     "JOIN updates u ON u.id = e.update_id WHERE u.active = 0 AND e.ts_ms < ?1 "
                     "ORDER BY e.id LIMIT ?2)",
                     events_before_ms, limit, &n, error)));
  if (!ok)
    {
      stg_store_rollback (store);
      return FALSE;
    }
  if (!stg_store_commit (store, error))
    return FALSE;
  if (deleted != NULL)
    *deleted = n;
  return TRUE;
}

gboolean
stg_store_reclaim (StgStore *store, guint pages, GError **error)
{
  g_autoptr (StgStmt) st = NULL;
  int rc;

  g_return_val_if_fail (!stg_store_in_transaction (store), FALSE);
  /* PostgreSQL's autovacuum reclaims space by itself. */
  if (stg_db_engine (store->db) != STG_DB_SQLITE)
    return TRUE;
  g_autofree gchar *sql = g_strdup_printf ("PRAGMA incremental_vacuum (%u)", pages);
  st = stg_store_stmt (store, g_intern_string (sql), error);
  if (st == NULL)
    return FALSE;
  /* Each step frees one page. */
  while ((rc = stg_db_step (st)) == STG_DB_ROW)
    ;
  if (rc != STG_DB_DONE)
    return stg_store_fail (store, error, "reclaiming free pages");
  return TRUE;
}

gint64
stg_store_free_pages (StgStore *store)
{
  g_autoptr (StgStmt) st = NULL;

  if (stg_db_engine (store->db) != STG_DB_SQLITE)
    return 0;
  st = stg_store_stmt (store, "PRAGMA freelist_count", NULL);
  return st != NULL && stg_db_step (st) == STG_DB_ROW ? stg_db_column_int64 (st, 0) : -1;
}

gboolean
stg_store_delete_task_events (StgStore *store, gint64 job_id, gint32 instance, guint *deleted,
                              GError **error)
{
  g_autoptr (StgStmt) st =
      instance >= 0
          ? stg_store_stmt (store, "DELETE FROM task_events WHERE job_id = ? AND instance_id = ?",
                            error)
          : stg_store_stmt (store,
                            "DELETE FROM task_events WHERE job_id = ?1 AND instance_id NOT IN "
                            "(SELECT instance_id FROM instances WHERE job_id = ?1)",
                            error);

  if (st == NULL)
    return FALSE;
  stg_db_bind_int64 (st, 1, job_id);
  if (instance >= 0)
    stg_db_bind_int64 (st, 2, instance);
  if (!stg_store_exec_stmt (store, st, error, "deleting task events"))
    return FALSE;
  *deleted += (guint) stg_db_changes (st);
  return TRUE;
}
