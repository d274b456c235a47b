/* leader.c: leadership among replicas sharing one PostgreSQL database.
 *
 * A replica leads while its connection holds a session advisory lock; on
 * taking it, it increments the epoch of the stagger_leader row, and each of
 * its write transactions first reads that row FOR SHARE and stops unless
 * the epoch is still its own (fencing, in store.c's stg_store_begin). On
 * SQLite, one process per file, leading always succeeds and nothing is
 * checked. The replica that takes the lock migrates the schema before it
 * moves the epoch (replicas open the store unmigrated: store.c), or,
 * finding a newer schema, lets the lock go and follows.
 *
 * The lease: the server ends a leader's session once it has been idle for
 * lease_ms, which frees the lock, so no other replica can lead before
 * lease_ms after the last query this session sent. Every query that finds
 * the epoch still ours (taking the lock, a transaction's fencing check,
 * a read of the leader row) proves the lead from the moment it was sent,
 * for half the lease (ACTING_SHARE): a leader acts on the outside world
 * (the runtime's hosts) only while stg_store_lead_left_ms says so, well
 * before its lock can have been taken. Calls store.c's statements and
 * transactions and the database layer (db.h); main-loop thread only.
 */
#include "config.h"

#include "store/store_private.h"

/* The advisory lock's key: "stg" and 1 in one bigint. */
#define LEADER_LOCK "7566183001"
/* A proof of the lead lasts this share of the lease (1/2). */
#define ACTING_SHARE 2

void
stg_leader_info_clear (StgLeaderInfo *info)
{
  g_clear_pointer (&info->holder, g_free);
  g_clear_pointer (&info->url, g_free);
}

static gboolean
is_pg (StgStore *store)
{
  return stg_db_engine (store->db) == STG_DB_POSTGRESQL;
}

/* Takes the lock without waiting: TRUE in *@got when this session holds it. */
static gboolean
take_lock (StgStore *store, guint lease_ms, gboolean *got, GError **error)
{
  g_autofree gchar *timeouts = g_strdup_printf ("SET idle_session_timeout = %u; "
                                                "SET idle_in_transaction_session_timeout = %u",
                                                lease_ms, lease_ms);
  g_autoptr (StgStmt) st = NULL;

  *got = TRUE;
  if (!is_pg (store))
    return TRUE;
  if (lease_ms > 0 && !stg_store_exec (store, timeouts, error))
    return FALSE;
  st = stg_store_stmt (store, "SELECT CASE WHEN pg_try_advisory_lock(" LEADER_LOCK ") "
                              "THEN 1 ELSE 0 END", error);
  if (st == NULL)
    return FALSE;
  if (stg_db_step (st) != STG_DB_ROW)
    return stg_store_fail (store, error, "taking the leadership lock");
  *got = stg_db_column_int64 (st, 0) == 1;
  return TRUE;
}

gboolean
stg_store_try_lead (StgStore *store, const gchar *holder, const gchar *url, guint lease_ms,
                    gint64 now_ms, gint64 *epoch, GError **error)
{
  gboolean got = FALSE;
  gint64 mine = 0;

  g_return_val_if_fail (store->depth == 0, FALSE);
  if (store->epoch > 0)
    {
      *epoch = store->epoch;
      return TRUE;
    }
  gint64 sent_us = g_get_monotonic_time ();
  if (!take_lock (store, lease_ms, &got, error) || !got)
    return FALSE;
  if (is_pg (store) && !stg_store_migrate (store, error))
    {
      (void) stg_store_exec (store, "SELECT pg_advisory_unlock(" LEADER_LOCK ")", NULL);
      return FALSE;
    }
  if (!stg_store_begin (store, error))
    return FALSE;
  {
    g_autoptr (StgStmt) st = stg_store_stmt (store,
        "UPDATE stagger_leader SET epoch = epoch + 1, holder = ?, url = ?, since_ms = ? "
        "WHERE id = 1 RETURNING epoch", error);
    if (st == NULL)
      goto fail;
    stg_bind_text (st, 1, holder);
    stg_bind_text (st, 2, url != NULL ? url : "");
    stg_db_bind_int64 (st, 3, now_ms);
    if (!stg_store_insert_id (store, st, &mine, error, "recording the new leader"))
      goto fail;
  }
  if (!stg_store_commit (store, error))
    return FALSE;
  store->epoch = mine;
  store->acting_us = (gint64) lease_ms * 1000 / ACTING_SHARE;
  stg_store_lead_proven (store, sent_us);
  *epoch = mine;
  return TRUE;

fail:
  stg_store_rollback (store);
  return FALSE;
}

gint64
stg_store_epoch (StgStore *store)
{
  return store->epoch;
}

gint64
stg_store_lead_acting_ms (StgStore *store)
{
  return is_pg (store) ? store->acting_us / 1000 : G_MAXINT64;
}

gint64
stg_store_lead_left_ms (StgStore *store)
{
  if (!is_pg (store))
    return G_MAXINT64;
  if (store->epoch == 0)
    return 0;
  return MAX ((store->proven_us + store->acting_us - g_get_monotonic_time ()) / 1000, 0);
}

gboolean
stg_store_leader (StgStore *store, StgLeaderInfo *info, GError **error)
{
  gint64 sent_us = g_get_monotonic_time ();
  g_autoptr (StgStmt) st = stg_store_stmt (store,
      "SELECT epoch, holder, url, since_ms FROM stagger_leader WHERE id = 1", error);

  if (st == NULL)
    return FALSE;
  if (stg_db_step (st) != STG_DB_ROW)
    return stg_store_fail (store, error, "reading who leads");
  info->epoch = stg_db_column_int64 (st, 0);
  info->holder = stg_column_dup (st, 1);
  info->url = stg_column_dup (st, 2);
  info->since_ms = stg_db_column_int64 (st, 3);
  if (store->epoch > 0 && info->epoch == store->epoch)
    stg_store_lead_proven (store, sent_us);
  return TRUE;
}

gboolean
stg_store_ping (StgStore *store, GError **error)
{
  return stg_store_exec (store, "SELECT 1", error);
}

gboolean
stg_store_reconnect (StgStore *store, GError **error)
{
  g_return_val_if_fail (store->depth == 0, FALSE);
  store->epoch = 0;
  store->proven_us = 0;
  g_hash_table_remove_all (store->configs);
  g_hash_table_remove_all (store->versions);
  return stg_db_reconnect (store->db, error);
}
