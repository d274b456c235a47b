/* quotas.c: the store's quotas (one ResourceAggregate per role, Thrift
 * binary, schema/011_quotas.sql) and snapshots on request (AuroraAdmin's
 * snapshot: a SQLite checkpoint). Main-loop thread only.
 */
#include "config.h"

#include "store/store_private.h"

ApiResourceAggregate *
stg_store_get_quota (StgStore *store, const gchar *role, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (store, "SELECT quota FROM quotas WHERE role = ?", error);

  if (st == NULL)
    return NULL;
  stg_bind_text (st, 1, role);
  int rc = stg_db_step (st);
  if (rc == STG_DB_DONE)
    return NULL;
  if (rc != STG_DB_ROW)
    {
      stg_store_fail (store, error, "reading a quota");
      return NULL;
    }
  g_autoptr (GBytes) blob = stg_column_bytes (st, 0);
  ApiResourceAggregate *quota = stg_thrift_new_from_bytes (API_TYPE_RESOURCE_AGGREGATE, blob,
                                                           error);
  if (quota == NULL)
    g_prefix_error (error, "the stored quota of role %s: ", role);
  return quota;
}

gboolean
stg_store_set_quota (StgStore *store, const gchar *role, ApiResourceAggregate *quota,
                     GError **error)
{
  g_autoptr (GBytes) blob = stg_thrift_to_bytes (THRIFT_STRUCT (quota), error);
  if (blob == NULL)
    return FALSE;
  g_autoptr (StgStmt) st =
      stg_store_stmt (store,
                      "INSERT INTO quotas (role, quota) VALUES (?, ?) "
                      "ON CONFLICT (role) DO UPDATE SET quota = excluded.quota",
                      error);
  if (st == NULL)
    return FALSE;
  stg_bind_text (st, 1, role);
  stg_db_bind_blob (st, 2, g_bytes_get_data (blob, NULL), g_bytes_get_size (blob));
  return stg_store_exec_stmt (store, st, error, "setting a quota");
}

gchar *
stg_store_snapshot (StgStore *store, GError **error)
{
  g_return_val_if_fail (!stg_store_in_transaction (store), NULL);

  if (stg_db_engine (store->db) == STG_DB_POSTGRESQL)
    return g_strdup ("the PostgreSQL store is durable at each commit; nothing to snapshot: "
                     "back it up with PostgreSQL's own means (pg_dump, base backups and WAL "
                     "archiving)");
  /* busy, then the log's pages (both 0 once TRUNCATE emptied it): busy
   * is 1 only while another connection reads, and staggerd keeps one. */
  g_autoptr (StgStmt) st = stg_store_stmt (store, "PRAGMA wal_checkpoint(TRUNCATE)", error);
  if (st == NULL)
    return NULL;
  if (stg_db_step (st) != STG_DB_ROW)
    {
      stg_store_fail (store, error, "checkpointing the write-ahead log");
      return NULL;
    }
  if (stg_db_column_int64 (st, 0) != 0)
    {
      g_set_error (error, STG_STORE_ERROR, STG_STORE_ERROR_FAILED,
                   "checkpointing the write-ahead log: another connection reads the database; "
                   "try again");
      return NULL;
    }
  g_autofree gchar *where = stg_store_describe (store, NULL);
  return g_strdup_printf ("checkpointed the write-ahead log into the database file and emptied "
                          "it (%s): the file alone holds every commit and may be copied while "
                          "staggerd is stopped",
                          where ? where : "SQLite");
}
