/* fleet_facts.c: the store's part for the fleet runtime: which host each
 * instance slot is placed on (table fleet_placements) and which hosts are
 * drained (fleet_drained_hosts). Main-loop thread only. */
#include "config.h"

#include "store/store_private.h"

gboolean
stg_store_set_placement (StgStore *store, gint64 job_id, gint32 instance_id, const gchar *host, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (store,
      "INSERT INTO fleet_placements (job_id, instance_id, host) VALUES (?, ?, ?) "
      "ON CONFLICT (job_id, instance_id) DO UPDATE SET host = excluded.host", error);
  if (st == NULL)
    return FALSE;
  stg_db_bind_int64 (st, 1, job_id);
  stg_db_bind_int64 (st, 2, instance_id);
  stg_bind_text (st, 3, host);
  return stg_store_exec_stmt (store, st, error, "recording a placement");
}

gboolean
stg_store_delete_placement (StgStore *store, gint64 job_id, gint32 instance_id, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (store,
      "DELETE FROM fleet_placements WHERE job_id = ? AND instance_id = ?", error);
  if (st == NULL)
    return FALSE;
  stg_db_bind_int64 (st, 1, job_id);
  stg_db_bind_int64 (st, 2, instance_id);
  return stg_store_exec_stmt (store, st, error, "removing a placement");
}

static void
placement_row_clear (gpointer p)
{
  g_free (((StgPlacementRow *) p)->host);
}

GArray *
stg_store_list_placements (StgStore *store, GError **error)
{
  g_autoptr (GArray) out = g_array_new (FALSE, TRUE, sizeof (StgPlacementRow));
  g_autoptr (StgStmt) st = stg_store_stmt (store,
      "SELECT job_id, instance_id, host FROM fleet_placements ORDER BY job_id, instance_id", error);
  StgDbStep rc;

  if (st == NULL)
    return NULL;
  g_array_set_clear_func (out, placement_row_clear);
  while ((rc = stg_db_step (st)) == STG_DB_ROW)
    {
      StgPlacementRow r = {
        .job_id = stg_db_column_int64 (st, 0),
        .instance_id = stg_db_column_int (st, 1),
        .host = stg_column_dup (st, 2),
      };
      g_array_append_val (out, r);
    }
  if (rc != STG_DB_DONE)
    {
      stg_store_fail (store, error, "listing placements");
      return NULL;
    }
  return g_steal_pointer (&out);
}

gboolean
stg_store_set_host_drained (StgStore *store, const gchar *host, gboolean drained, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (
      store,
      drained ? "INSERT INTO fleet_drained_hosts (host) VALUES (?) ON CONFLICT (host) DO NOTHING"
              : "DELETE FROM fleet_drained_hosts WHERE host = ?",
      error);
  if (st == NULL)
    return FALSE;
  stg_bind_text (st, 1, host);
  return stg_store_exec_stmt (store, st, error, "recording a drained host");
}

GHashTable *
stg_store_drained_hosts (StgStore *store, GError **error)
{
  g_autoptr (GHashTable) hosts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (StgStmt) st = stg_store_stmt (store, "SELECT host FROM fleet_drained_hosts", error);
  StgDbStep step;

  if (st == NULL)
    return NULL;
  while ((step = stg_db_step (st)) == STG_DB_ROW)
    g_hash_table_add (hosts, stg_column_dup (st, 0));
  if (step == STG_DB_FAILED)
    {
      stg_store_fail (store, error, "reading the drained hosts");
      return NULL;
    }
  return g_steal_pointer (&hosts);
}
