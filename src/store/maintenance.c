/* maintenance.c: hosts in maintenance (schema/016_maintenance.sql): each
 * host's MaintenanceMode other than NONE, since when, and the drain asked
 * of it (a HostMaintenanceRequest, Thrift binary). Main-loop thread only.
 */
#include "config.h"

#include "store/store_private.h"

static void
maintenance_row_free (StgMaintenanceRow *row)
{
  if (row == NULL)
    return;
  g_free (row->host);
  g_clear_object (&row->request);
  g_free (row);
}

GPtrArray *
stg_store_list_maintenance (StgStore *store, GError **error)
{
  g_autoptr (GPtrArray) rows = g_ptr_array_new_with_free_func (
      (GDestroyNotify) maintenance_row_free);
  g_autoptr (StgStmt) st =
      stg_store_stmt (store,
                      "SELECT host, mode, request, since_ms FROM host_maintenance ORDER BY host",
                      error);
  StgDbStep step;

  if (st == NULL)
    return NULL;
  while ((step = stg_db_step (st)) == STG_DB_ROW)
    {
      StgMaintenanceRow *row = g_new0 (StgMaintenanceRow, 1);
      g_ptr_array_add (rows, row); /* freed with them */
      row->host = stg_column_dup (st, 0);
      row->mode = stg_db_column_int (st, 1);
      row->since_ms = stg_db_column_int64 (st, 3);
      if (!stg_db_column_null (st, 2))
        {
          g_autoptr (GBytes) blob = stg_column_bytes (st, 2);
          row->request = stg_thrift_new_from_bytes (API_TYPE_HOST_MAINTENANCE_REQUEST, blob, error);
          if (row->request == NULL)
            {
              g_prefix_error (error, "the maintenance request of host %s: ", row->host);
              return NULL;
            }
        }
    }
  if (step == STG_DB_FAILED)
    {
      stg_store_fail (store, error, "reading the hosts in maintenance");
      return NULL;
    }
  return g_steal_pointer (&rows);
}

gboolean
stg_store_set_maintenance (StgStore *store, const gchar *host, gint mode,
                           ApiHostMaintenanceRequest *request, gint64 since_ms, GError **error)
{
  g_autoptr (GBytes) blob = request ? stg_thrift_to_bytes (THRIFT_STRUCT (request), error) : NULL;

  if (request != NULL && blob == NULL)
    return FALSE;
  g_autoptr (StgStmt) st = stg_store_stmt (
      store,
      "INSERT INTO host_maintenance (host, mode, request, since_ms) VALUES (?, ?, ?, ?) "
      "ON CONFLICT (host) DO UPDATE SET mode = excluded.mode, request = excluded.request, "
      "since_ms = excluded.since_ms",
      error);
  if (st == NULL)
    return FALSE;
  stg_bind_text (st, 1, host);
  stg_db_bind_int64 (st, 2, mode);
  if (blob != NULL)
    stg_db_bind_blob (st, 3, g_bytes_get_data (blob, NULL), g_bytes_get_size (blob));
  else
    stg_db_bind_null (st, 3);
  stg_db_bind_int64 (st, 4, since_ms);
  return stg_store_exec_stmt (store, st, error, "recording a host's maintenance");
}

gboolean
stg_store_end_maintenance (StgStore *store, const gchar *host, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (store, "DELETE FROM host_maintenance WHERE host = ?",
                                           error);

  if (st == NULL)
    return FALSE;
  stg_bind_text (st, 1, host);
  return stg_store_exec_stmt (store, st, error, "ending a host's maintenance");
}
