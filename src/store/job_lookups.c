/* job_lookups.c: facts about every instance of a job in one query each,
 * for pages that show many instances at once (the web UI's job page):
 * each instance's port to link to and its last task event. Main-loop
 * thread only.
 */
#include "config.h"

#include "store/store_private.h"

GHashTable *
stg_store_job_link_ports (StgStore *store, const ApiJobKey *job, GError **error)
{
  g_autoptr (GHashTable) ports = g_hash_table_new (NULL, NULL);
  /* Per instance, the port named "http" if there is one, else the first by name. */
  g_autoptr (StgStmt) st = stg_store_stmt (store,
      "SELECT instance_id, port FROM ports WHERE role = ? AND environment = ? AND name = ? "
      "ORDER BY instance_id, port_name <> 'http', port_name", error);
  int rc;

  if (st == NULL)
    return NULL;
  stg_bind_text (st, 1, job->role);
  stg_bind_text (st, 2, job->environment);
  stg_bind_text (st, 3, job->name);
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      gpointer instance = GINT_TO_POINTER (sqlite3_column_int (st, 0));
      if (!g_hash_table_contains (ports, instance))
        g_hash_table_insert (ports, instance, GINT_TO_POINTER (sqlite3_column_int (st, 1)));
    }
  if (rc != SQLITE_DONE)
    {
      stg_store_fail (store, error, "listing a job's ports");
      return NULL;
    }
  return g_steal_pointer (&ports);
}

GHashTable *
stg_store_job_last_task_events (StgStore *store, gint64 job_id, GError **error)
{
  g_autoptr (GHashTable) events = g_hash_table_new_full (NULL, NULL, NULL, g_object_unref);
  g_autoptr (StgStmt) st = stg_store_stmt (store,
      "SELECT instance_id, ts_ms, status, message FROM task_events WHERE id IN "
      "(SELECT MAX (id) FROM task_events WHERE job_id = ? GROUP BY instance_id)", error);
  int rc;

  if (st == NULL)
    return NULL;
  sqlite3_bind_int64 (st, 1, job_id);
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      ApiTaskEvent *ev = g_object_new (API_TYPE_TASK_EVENT,
                                       "timestamp", (gint64) sqlite3_column_int64 (st, 1),
                                       "status", sqlite3_column_int (st, 2), NULL);
      if (sqlite3_column_type (st, 3) != SQLITE_NULL)
        g_object_set (ev, "message", (const gchar *) sqlite3_column_text (st, 3), NULL);
      g_hash_table_insert (events, GINT_TO_POINTER (sqlite3_column_int (st, 0)), ev);
    }
  if (rc != SQLITE_DONE)
    {
      stg_store_fail (store, error, "listing a job's last task events");
      return NULL;
    }
  return g_steal_pointer (&events);
}
