/* notices.c: webhook notices not yet delivered (schema/018_notices.sql):
 * the notice counter, each webhook's waiting notices bounded to its
 * newest, and their deletion once delivered or given up. Main-loop thread
 * only.
 */
#include "config.h"

#include "store/notices.h"
#include "store/store_private.h"

static void
notice_row_free (StgNoticeRow *row)
{
  g_free (row->webhook);
  g_free (row->delivery_id);
  g_free (row->event);
  g_free (row->body);
  g_free (row);
}

gboolean
stg_store_next_notice_seq (StgStore *store, gint64 after, gint64 *seq, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (
      store,
      "UPDATE notice_seq SET last = (CASE WHEN last > ?1 THEN last ELSE ?1 END) + 1 "
      "WHERE id = 1 RETURNING last",
      error);

  if (st == NULL)
    return FALSE;
  stg_db_bind_int64 (st, 1, after);
  return stg_store_insert_id (store, st, seq, error, "numbering a notice");
}

gboolean
stg_store_add_notice (StgStore *store, const StgNoticeRow *row, gint keep, GError **error)
{
  g_autoptr (StgStmt) add =
      stg_store_stmt (store,
                      "INSERT INTO webhook_notices (webhook, seq, delivery_id, event, body) "
                      "VALUES (?, ?, ?, ?, ?)",
                      error);

  if (add == NULL)
    return FALSE;
  stg_bind_text (add, 1, row->webhook);
  stg_db_bind_int64 (add, 2, row->seq);
  stg_bind_text (add, 3, row->delivery_id);
  stg_bind_text (add, 4, row->event);
  stg_bind_text (add, 5, row->body);
  if (!stg_store_exec_stmt (store, add, error, "keeping a notice"))
    return FALSE;
  /* No row at that offset (fewer than @keep + 1): NULL, nothing deleted. */
  g_autoptr (StgStmt) trim = stg_store_stmt (
      store,
      "DELETE FROM webhook_notices WHERE webhook = ?1 AND seq <= "
      "(SELECT seq FROM webhook_notices WHERE webhook = ?1 ORDER BY seq DESC LIMIT 1 OFFSET ?2)",
      error);
  if (trim == NULL)
    return FALSE;
  stg_bind_text (trim, 1, row->webhook);
  stg_db_bind_int64 (trim, 2, keep);
  return stg_store_exec_stmt (store, trim, error, "giving up the oldest notices");
}

gboolean
stg_store_delete_notice (StgStore *store, const gchar *webhook, gint64 seq, GError **error)
{
  g_autoptr (StgStmt) st =
      stg_store_stmt (store, "DELETE FROM webhook_notices WHERE webhook = ? AND seq = ?", error);

  if (st == NULL)
    return FALSE;
  stg_bind_text (st, 1, webhook);
  stg_db_bind_int64 (st, 2, seq);
  return stg_store_exec_stmt (store, st, error, "deleting a notice");
}

GPtrArray *
stg_store_list_notices (StgStore *store, GError **error)
{
  g_autoptr (GPtrArray) rows = g_ptr_array_new_with_free_func ((GDestroyNotify) notice_row_free);
  g_autoptr (StgStmt) st = stg_store_stmt (
      store,
      "SELECT webhook, seq, delivery_id, event, body FROM webhook_notices ORDER BY webhook, seq",
      error);
  StgDbStep step;

  if (st == NULL)
    return NULL;
  while ((step = stg_db_step (st)) == STG_DB_ROW)
    {
      StgNoticeRow *row = g_new0 (StgNoticeRow, 1);
      g_ptr_array_add (rows, row);
      row->webhook = stg_column_dup (st, 0);
      row->seq = stg_db_column_int64 (st, 1);
      row->delivery_id = stg_column_dup (st, 2);
      row->event = stg_column_dup (st, 3);
      row->body = stg_column_dup (st, 4);
    }
  if (step == STG_DB_FAILED)
    {
      stg_store_fail (store, error, "reading the waiting notices");
      return NULL;
    }
  return g_steal_pointer (&rows);
}
