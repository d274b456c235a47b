/* timeline.c: the rows an update's timeline is drawn from (the engine's
 * timeline.c draws it): the update's instance events with the batch of
 * each (schema/021_batches.sql) and its job's task events over the same
 * time, each in one query. Main-loop thread only.
 */
#include "config.h"

#include "store/store_private.h"

/* The rows of @st (instance, ts_ms, code, batch) until it is done. */
static GArray *
read_events (StgStore *store, StgStmt *st, const gchar *what, GError **error)
{
  g_autoptr (GArray) out = g_array_new (FALSE, FALSE, sizeof (StgTimelineEvent));
  int rc;

  while ((rc = stg_db_step (st)) == STG_DB_ROW)
    {
      StgTimelineEvent ev = {
        .instance = stg_db_column_int (st, 0),
        .ts_ms = stg_db_column_int64 (st, 1),
        .code = stg_db_column_int (st, 2),
        .batch = stg_db_column_null (st, 3) ? -1 : stg_db_column_int (st, 3),
      };
      g_array_append_val (out, ev);
    }
  if (rc != STG_DB_DONE)
    {
      stg_store_fail (store, error, what);
      return NULL;
    }
  return g_steal_pointer (&out);
}

GArray *
stg_store_timeline_instance_events (StgStore *store, gint64 update_id, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (
      store,
      "SELECT instance_id, ts_ms, action, batch FROM instance_events WHERE update_id = ? "
      "ORDER BY id",
      error);

  if (st == NULL)
    return NULL;
  stg_db_bind_int64 (st, 1, update_id);
  return read_events (store, st, "listing an update's instance events", error);
}

GArray *
stg_store_timeline_task_events (StgStore *store, gint64 job_id, gint64 from_ms, gint64 to_ms,
                                GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (
      store,
      "SELECT instance_id, ts_ms, status, NULL FROM task_events WHERE job_id = ? AND ts_ms >= ? "
      "AND ts_ms <= ? ORDER BY id",
      error);

  if (st == NULL)
    return NULL;
  stg_db_bind_int64 (st, 1, job_id);
  stg_db_bind_int64 (st, 2, from_ms);
  stg_db_bind_int64 (st, 3, to_ms);
  return read_events (store, st, "listing a job's task events", error);
}
