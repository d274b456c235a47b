/* replicas.c: the replicas sharing one database, as each says it is alive
 * (stagger_replicas), and what the store is, for people. Single
 * statements outside transactions: they move no commit count, so the
 * reply cache keeps its answers. Calls the database layer only;
 * main-loop thread only.
 */
#include "config.h"

#include "store/store_private.h"

void
stg_replica_row_free (StgReplicaRow *row)
{
  if (row == NULL)
    return;
  g_free (row->holder);
  g_free (row->url);
  g_free (row);
}

gboolean
stg_store_replica_seen (StgStore *store, const gchar *holder, const gchar *url, gint64 lease_ms,
                        gint64 started_ms, gint64 now_ms, GError **error)
{
  g_return_val_if_fail (store->depth == 0, FALSE);
  g_autoptr (StgStmt) st = stg_store_stmt (
      store,
      "INSERT INTO stagger_replicas (holder, url, lease_ms, started_ms, seen_ms) "
      "VALUES (?, ?, ?, ?, ?) ON CONFLICT (holder) DO UPDATE SET url = excluded.url, "
      "lease_ms = excluded.lease_ms, started_ms = excluded.started_ms, "
      "seen_ms = excluded.seen_ms",
      error);
  if (st == NULL)
    return FALSE;
  stg_bind_text (st, 1, holder);
  stg_bind_text (st, 2, url != NULL ? url : "");
  stg_db_bind_int64 (st, 3, lease_ms);
  stg_db_bind_int64 (st, 4, started_ms);
  stg_db_bind_int64 (st, 5, now_ms);
  return stg_store_exec_stmt (store, st, error, "recording this replica");
}

/* The rows @st gives (holder, url, lease_ms, started_ms, seen_ms), or NULL
 * with @error (@what failed). */
static GPtrArray *
replica_rows (StgStore *store, StgStmt *st, const gchar *what, GError **error)
{
  g_autoptr (GPtrArray) rows = g_ptr_array_new_with_free_func (
      (GDestroyNotify) stg_replica_row_free);
  StgDbStep step;

  while ((step = stg_db_step (st)) == STG_DB_ROW)
    {
      StgReplicaRow *row = g_new0 (StgReplicaRow, 1);
      row->holder = stg_column_dup (st, 0);
      row->url = stg_column_dup (st, 1);
      row->lease_ms = stg_db_column_int64 (st, 2);
      row->started_ms = stg_db_column_int64 (st, 3);
      row->seen_ms = stg_db_column_int64 (st, 4);
      g_ptr_array_add (rows, row);
    }
  if (step == STG_DB_FAILED)
    {
      stg_store_fail (store, error, what);
      return NULL;
    }
  return g_steal_pointer (&rows);
}

GPtrArray *
stg_store_list_replicas (StgStore *store, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (
      store,
      "SELECT holder, url, lease_ms, started_ms, seen_ms FROM stagger_replicas ORDER BY holder",
      error);

  return st != NULL ? replica_rows (store, st, "listing the replicas", error) : NULL;
}

GPtrArray *
stg_store_forget_replicas (StgStore *store, gint64 before_ms, GError **error)
{
  g_return_val_if_fail (store->depth == 0, NULL);
  g_autoptr (StgStmt) st = stg_store_stmt (store,
                                           "DELETE FROM stagger_replicas WHERE seen_ms < ? "
                                           "RETURNING holder, url, lease_ms, started_ms, seen_ms",
                                           error);

  if (st == NULL)
    return NULL;
  stg_db_bind_int64 (st, 1, before_ms);
  return replica_rows (store, st, "forgetting replicas long gone", error);
}

gchar *
stg_store_describe (StgStore *store, GError **error)
{
  gboolean pg = stg_db_engine (store->db) == STG_DB_POSTGRESQL;
  g_autoptr (StgStmt) st = stg_store_stmt (
      store,
      pg ? "SELECT current_setting('server_version'), current_database(), "
           "coalesce(host(inet_server_addr()), 'a local socket'), "
           "coalesce(inet_server_port(), 0)"
         : "SELECT sqlite_version(), file FROM pragma_database_list WHERE name = 'main'",
      error);

  if (st == NULL)
    return NULL;
  if (stg_db_step (st) != STG_DB_ROW)
    {
      stg_store_fail (store, error, "describing the store");
      return NULL;
    }
  if (!pg)
    return g_strdup_printf ("SQLite %s, %s", stg_db_column_text (st, 0),
                            stg_db_column_text (st, 1));
  return g_strdup_printf ("PostgreSQL %s, database %s on %s port %" G_GINT64_FORMAT,
                          stg_db_column_text (st, 0), stg_db_column_text (st, 1),
                          stg_db_column_text (st, 2), stg_db_column_int64 (st, 3));
}
