/* updates.c: the store's job updates: their rows, per-instance work, surge
 * instances, events and queries.
 *
 * Query statements are built from the filter terms that are set, so each
 * shape can use its index (updates_by_job, _by_role, _by_user, _by_status,
 * _by_created); each shape is prepared once and cached. The active flag is
 * kept in step with the status, and a unique partial index keeps one active
 * update per job. Main-loop thread only.
 */
#include "config.h"

#include "common/enums.h"
#include "common/jobkey.h"
#include "store/store_private.h"

#define UPDATE_COLUMNS \
  "id, uid, role, environment, name, \"user\", status, created_ms, modified_ms, " \
  "COALESCE(desired_config_id, 0), last_pulse_ms, progress"

#define SUMMARY_COLUMNS \
  "uid, role, environment, name, \"user\", status, created_ms, modified_ms, metadata"

/* ---- rows ---------------------------------------------------------------------- */

void
stg_update_row_free (StgUpdateRow *row)
{
  if (row == NULL)
    return;
  g_free (row->uid);
  g_clear_object (&row->job);
  g_free (row->user);
  g_free (row->progress);
  g_free (row);
}

static StgUpdateRow *
read_update (StgStmt *st)
{
  StgUpdateRow *row = g_new0 (StgUpdateRow, 1);

  row->id = stg_db_column_int64 (st, 0);
  row->uid = stg_column_dup (st, 1);
  row->job = stg_job_key_new ((const gchar *) stg_db_column_text (st, 2),
                              (const gchar *) stg_db_column_text (st, 3),
                              (const gchar *) stg_db_column_text (st, 4));
  row->user = stg_column_dup (st, 5);
  row->status = stg_db_column_int (st, 6);
  row->created_ms = stg_db_column_int64 (st, 7);
  row->modified_ms = stg_db_column_int64 (st, 8);
  row->desired_config_id = stg_db_column_int64 (st, 9);
  row->last_pulse_ms = stg_db_column_int64 (st, 10);
  row->progress = stg_column_dup (st, 11);
  return row;
}

static void
bind_blob (StgStmt *st, int index, GBytes *bytes)
{
  if (bytes == NULL)
    stg_db_bind_null (st, index);
  else
    stg_db_bind_blob (st, index, g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
}

gboolean
stg_store_insert_update (StgStore *store, const gchar *uid, const ApiJobKey *job,
                         const gchar *user, gint status, gint64 now_ms,
                         ApiJobUpdateRequest *request, ApiJobUpdateInstructions *instructions,
                         gint64 desired_config_id, gint64 *update_id, GError **error)
{
  g_autoptr (GBytes) req = stg_thrift_to_bytes (THRIFT_STRUCT (request), error);
  g_autoptr (GBytes) ins = req ? stg_thrift_to_bytes (THRIFT_STRUCT (instructions), error) : NULL;
  g_autoptr (GBytes) meta = NULL;

  if (ins == NULL)
    return FALSE;
  if (request->__isset_metadata && request->metadata != NULL &&
      g_hash_table_size (request->metadata) > 0)
    {
      /* Kept apart so summaries need not decode the whole request. */
      g_autoptr (ApiJobUpdateSummary) holder = g_object_new (API_TYPE_JOB_UPDATE_SUMMARY, NULL);
      g_object_set (holder, "metadata", request->metadata, NULL);
      meta = stg_thrift_to_bytes (THRIFT_STRUCT (holder), error);
      if (meta == NULL)
        return FALSE;
    }

  g_autoptr (StgStmt) st = stg_store_stmt (store,
      "INSERT INTO updates (uid, role, environment, name, \"user\", status, active, created_ms, "
      "modified_ms, request, instructions, metadata, desired_config_id) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id", error);
  if (st == NULL)
    return FALSE;
  stg_bind_text (st, 1, uid);
  stg_bind_text (st, 2, job->role);
  stg_bind_text (st, 3, job->environment);
  stg_bind_text (st, 4, job->name);
  stg_bind_text (st, 5, user ? user : "");
  stg_db_bind_int64 (st, 6, status);
  stg_db_bind_int64 (st, 7, stg_update_status_is_active (status));
  stg_db_bind_int64 (st, 8, now_ms);
  stg_db_bind_int64 (st, 9, now_ms);
  bind_blob (st, 10, req);
  bind_blob (st, 11, ins);
  bind_blob (st, 12, meta);
  if (desired_config_id > 0)
    stg_db_bind_int64 (st, 13, desired_config_id);
  return stg_store_insert_id (store, st, update_id, error, "recording an update");
}

gboolean
stg_store_set_update_status (StgStore *store, gint64 update_id, gint status, gint64 now_ms,
                             GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (store,
      "UPDATE updates SET status = ?, active = ?, modified_ms = ? WHERE id = ?", error);
  if (st == NULL)
    return FALSE;
  stg_db_bind_int64 (st, 1, status);
  stg_db_bind_int64 (st, 2, stg_update_status_is_active (status));
  stg_db_bind_int64 (st, 3, now_ms);
  stg_db_bind_int64 (st, 4, update_id);
  return stg_store_exec_stmt (store, st, error, "changing an update's status");
}

gboolean
stg_store_set_update_progress (StgStore *store, gint64 update_id, const gchar *progress,
                               gint64 last_pulse_ms, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (store,
      "UPDATE updates SET progress = ?, last_pulse_ms = ? WHERE id = ?", error);
  if (st == NULL)
    return FALSE;
  stg_bind_text (st, 1, progress);
  stg_db_bind_int64 (st, 2, last_pulse_ms);
  stg_db_bind_int64 (st, 3, update_id);
  return stg_store_exec_stmt (store, st, error, "recording an update's progress");
}

gboolean
stg_store_add_update_event (StgStore *store, gint64 update_id, gint status, gint64 ts_ms,
                            const gchar *user, const gchar *message, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (
      store,
      "INSERT INTO update_events (update_id, status, ts_ms, \"user\", message, epoch) "
      "VALUES (?, ?, ?, ?, ?, ?)",
      error);
  if (st == NULL)
    return FALSE;
  stg_db_bind_int64 (st, 1, update_id);
  stg_db_bind_int64 (st, 2, status);
  stg_db_bind_int64 (st, 3, ts_ms);
  stg_bind_text (st, 4, user);
  stg_bind_text (st, 5, message);
  stg_db_bind_int64 (st, 6, store->epoch);
  return stg_store_exec_stmt (store, st, error, "recording an update event");
}

gboolean
stg_store_add_instance_event (StgStore *store, gint64 update_id, gint32 instance_id, gint64 ts_ms,
                              gint action, gint batch, const gchar *message, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (
      store,
      "INSERT INTO instance_events (update_id, instance_id, ts_ms, action, message, epoch, batch) "
      "VALUES (?, ?, ?, ?, ?, ?, ?)",
      error);
  if (st == NULL)
    return FALSE;
  stg_db_bind_int64 (st, 1, update_id);
  stg_db_bind_int64 (st, 2, instance_id);
  stg_db_bind_int64 (st, 3, ts_ms);
  stg_db_bind_int64 (st, 4, action);
  stg_bind_text (st, 5, message);
  stg_db_bind_int64 (st, 6, store->epoch);
  if (batch >= 0)
    stg_db_bind_int64 (st, 7, batch);
  else
    stg_db_bind_null (st, 7);
  return stg_store_exec_stmt (store, st, error, "recording an instance event");
}

/* ---- per-instance work ---------------------------------------------------------- */

gboolean
stg_store_insert_update_instances (StgStore *store, gint64 update_id,
                                   const StgUpdateInstanceRow *rows, guint n, GError **error)
{
  for (guint i = 0; i < n; i++)
    {
      g_autoptr (StgStmt) st = stg_store_stmt (store,
          "INSERT INTO update_instances (update_id, instance_id, initial_config_id, "
          "desired_config_id, state, failures, started_ms, baseline) "
          "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", error);
      if (st == NULL)
        return FALSE;
      stg_db_bind_int64 (st, 1, update_id);
      stg_db_bind_int64 (st, 2, rows[i].instance_id);
      if (rows[i].initial_config_id > 0)
        stg_db_bind_int64 (st, 3, rows[i].initial_config_id);
      if (rows[i].desired_config_id > 0)
        stg_db_bind_int64 (st, 4, rows[i].desired_config_id);
      stg_db_bind_int64 (st, 5, rows[i].state);
      stg_db_bind_int64 (st, 6, rows[i].failures);
      stg_db_bind_int64 (st, 7, rows[i].started_ms);
      stg_db_bind_int64 (st, 8, rows[i].baseline);
      if (!stg_store_exec_stmt (store, st, error, "recording an update's instances"))
        return FALSE;
    }
  return TRUE;
}

gboolean
stg_store_set_update_instance (StgStore *store, gint64 update_id, const StgUpdateInstanceRow *row,
                               GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (store,
      "UPDATE update_instances SET state = ?, failures = ?, started_ms = ?, baseline = ? "
      "WHERE update_id = ? AND instance_id = ?", error);
  if (st == NULL)
    return FALSE;
  stg_db_bind_int64 (st, 1, row->state);
  stg_db_bind_int64 (st, 2, row->failures);
  stg_db_bind_int64 (st, 3, row->started_ms);
  stg_db_bind_int64 (st, 4, row->baseline);
  stg_db_bind_int64 (st, 5, update_id);
  stg_db_bind_int64 (st, 6, row->instance_id);
  return stg_store_exec_stmt (store, st, error, "recording an instance's progress");
}

GArray *
stg_store_list_update_instances (StgStore *store, gint64 update_id, GError **error)
{
  g_autoptr (GArray) rows = g_array_new (FALSE, TRUE, sizeof (StgUpdateInstanceRow));
  g_autoptr (StgStmt) st = stg_store_stmt (store,
      "SELECT instance_id, COALESCE(initial_config_id, 0), COALESCE(desired_config_id, 0), "
      "state, failures, started_ms, baseline FROM update_instances WHERE update_id = ? "
      "ORDER BY instance_id", error);
  int rc;

  if (st == NULL)
    return NULL;
  stg_db_bind_int64 (st, 1, update_id);
  while ((rc = stg_db_step (st)) == STG_DB_ROW)
    {
      StgUpdateInstanceRow r = {
        .instance_id = stg_db_column_int (st, 0),
        .initial_config_id = stg_db_column_int64 (st, 1),
        .desired_config_id = stg_db_column_int64 (st, 2),
        .state = stg_db_column_int (st, 3),
        .failures = stg_db_column_int (st, 4),
        .started_ms = stg_db_column_int64 (st, 5),
        .baseline = stg_db_column_int64 (st, 6),
      };
      g_array_append_val (rows, r);
    }
  if (rc != STG_DB_DONE)
    {
      stg_store_fail (store, error, "listing an update's instances");
      return NULL;
    }
  return g_steal_pointer (&rows);
}

/* ---- surge instances ------------------------------------------------------------ */

gboolean
stg_store_put_surge (StgStore *store, const StgSurgeRow *row, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (
      store,
      "INSERT INTO update_surge (job_id, instance_id, update_id, config_id, failures, baseline, "
      "started_ms) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (job_id, instance_id) DO UPDATE SET "
      "update_id = excluded.update_id, config_id = excluded.config_id, "
      "failures = excluded.failures, baseline = excluded.baseline, "
      "started_ms = excluded.started_ms",
      error);
  if (st == NULL)
    return FALSE;
  stg_db_bind_int64 (st, 1, row->job_id);
  stg_db_bind_int64 (st, 2, row->instance_id);
  stg_db_bind_int64 (st, 3, row->update_id);
  stg_db_bind_int64 (st, 4, row->config_id);
  stg_db_bind_int64 (st, 5, row->failures);
  stg_db_bind_int64 (st, 6, row->baseline);
  stg_db_bind_int64 (st, 7, row->started_ms);
  return stg_store_exec_stmt (store, st, error, "recording a surge instance");
}

gboolean
stg_store_delete_surge (StgStore *store, gint64 job_id, gint32 instance_id, GError **error)
{
  g_autoptr (StgStmt) st =
      stg_store_stmt (store, "DELETE FROM update_surge WHERE job_id = ? AND instance_id = ?",
                      error);
  if (st == NULL)
    return FALSE;
  stg_db_bind_int64 (st, 1, job_id);
  stg_db_bind_int64 (st, 2, instance_id);
  return stg_store_exec_stmt (store, st, error, "forgetting a surge instance");
}

GArray *
stg_store_list_surge (StgStore *store, gint64 update_id, GError **error)
{
  g_autoptr (GArray) rows = g_array_new (FALSE, TRUE, sizeof (StgSurgeRow));
  g_autoptr (StgStmt) st = stg_store_stmt (
      store,
      "SELECT update_id, job_id, instance_id, config_id, failures, baseline, started_ms "
      "FROM update_surge WHERE ? = 0 OR update_id = ? ORDER BY job_id, instance_id",
      error);
  int rc;

  if (st == NULL)
    return NULL;
  stg_db_bind_int64 (st, 1, update_id);
  stg_db_bind_int64 (st, 2, update_id);
  while ((rc = stg_db_step (st)) == STG_DB_ROW)
    {
      StgSurgeRow r = {
        .update_id = stg_db_column_int64 (st, 0),
        .job_id = stg_db_column_int64 (st, 1),
        .instance_id = stg_db_column_int (st, 2),
        .config_id = stg_db_column_int64 (st, 3),
        .failures = stg_db_column_int (st, 4),
        .baseline = stg_db_column_int64 (st, 5),
        .started_ms = stg_db_column_int64 (st, 6),
      };
      g_array_append_val (rows, r);
    }
  if (rc != STG_DB_DONE)
    {
      stg_store_fail (store, error, "listing surge instances");
      return NULL;
    }
  return g_steal_pointer (&rows);
}

/* ---- single updates ------------------------------------------------------------- */

StgUpdateRow *
stg_store_get_update (StgStore *store, const gchar *uid, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (store,
      "SELECT " UPDATE_COLUMNS " FROM updates WHERE uid = ?", error);
  if (st == NULL)
    return NULL;
  stg_bind_text (st, 1, uid);
  int rc = stg_db_step (st);
  if (rc == STG_DB_ROW)
    return read_update (st);
  if (rc == STG_DB_DONE)
    g_set_error (error, STG_STORE_ERROR, STG_STORE_ERROR_NOT_FOUND, "no update with id %s", uid);
  else
    stg_store_fail (store, error, "reading an update");
  return NULL;
}

GPtrArray *
stg_store_list_active_updates (StgStore *store, GError **error)
{
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func ((GDestroyNotify) stg_update_row_free);
  g_autoptr (StgStmt) st = stg_store_stmt (store,
      "SELECT " UPDATE_COLUMNS " FROM updates WHERE active = 1 ORDER BY id", error);
  int rc;

  if (st == NULL)
    return NULL;
  while ((rc = stg_db_step (st)) == STG_DB_ROW)
    g_ptr_array_add (out, read_update (st));
  if (rc != STG_DB_DONE)
    {
      stg_store_fail (store, error, "listing active updates");
      return NULL;
    }
  return g_steal_pointer (&out);
}

ApiJobUpdateInstructions *
stg_store_get_update_instructions (StgStore *store, gint64 update_id, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (store,
      "SELECT instructions FROM updates WHERE id = ?", error);
  if (st == NULL)
    return NULL;
  stg_db_bind_int64 (st, 1, update_id);
  int rc = stg_db_step (st);
  if (rc != STG_DB_ROW)
    {
      if (rc == STG_DB_DONE)
        g_set_error (error, STG_STORE_ERROR, STG_STORE_ERROR_NOT_FOUND, "no update %" G_GINT64_FORMAT,
                     update_id);
      else
        stg_store_fail (store, error, "reading an update's instructions");
      return NULL;
    }
  g_autoptr (GBytes) blob = stg_column_bytes (st, 0);
  ApiJobUpdateInstructions *ins = stg_thrift_new_from_bytes (API_TYPE_JOB_UPDATE_INSTRUCTIONS,
                                                            blob, error);
  if (ins == NULL)
    g_prefix_error (error, "update %" G_GINT64_FORMAT "'s instructions are damaged: ", update_id);
  return ins;
}

/* Builds a summary from a row of SUMMARY_COLUMNS starting at column @c. */
static ApiJobUpdateSummary *
read_summary (StgStmt *st, int c)
{
  g_autoptr (ApiJobKey) job = stg_job_key_new ((const gchar *) stg_db_column_text (st, c + 1),
                                               (const gchar *) stg_db_column_text (st, c + 2),
                                               (const gchar *) stg_db_column_text (st, c + 3));
  g_autoptr (ApiJobUpdateKey) key = g_object_new (API_TYPE_JOB_UPDATE_KEY,
      "job", job, "id", (const gchar *) stg_db_column_text (st, c), NULL);
  g_autoptr (ApiJobUpdateState) state = g_object_new (API_TYPE_JOB_UPDATE_STATE,
      "status", stg_db_column_int (st, c + 5),
      "createdTimestampMs", (gint64) stg_db_column_int64 (st, c + 6),
      "lastModifiedTimestampMs", (gint64) stg_db_column_int64 (st, c + 7), NULL);
  ApiJobUpdateSummary *summary = NULL;

  if (!stg_db_column_null (st, c + 8))
    {
      g_autoptr (GBytes) blob = stg_column_bytes (st, c + 8);
      summary = stg_thrift_new_from_bytes (API_TYPE_JOB_UPDATE_SUMMARY, blob, NULL);
    }
  if (summary == NULL)
    summary = g_object_new (API_TYPE_JOB_UPDATE_SUMMARY, NULL);
  g_object_set (summary, "key", key, "user", (const gchar *) stg_db_column_text (st, c + 4),
                "state", state, NULL);
  return summary;
}

ApiJobUpdateSummary *
stg_store_get_update_summary (StgStore *store, gint64 update_id, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (store,
      "SELECT " SUMMARY_COLUMNS " FROM updates WHERE id = ?", error);
  if (st == NULL)
    return NULL;
  stg_db_bind_int64 (st, 1, update_id);
  int rc = stg_db_step (st);
  if (rc == STG_DB_ROW)
    return read_summary (st, 0);
  if (rc == STG_DB_DONE)
    g_set_error (error, STG_STORE_ERROR, STG_STORE_ERROR_NOT_FOUND, "no update %" G_GINT64_FORMAT,
                 update_id);
  else
    stg_store_fail (store, error, "reading an update");
  return NULL;
}

GPtrArray *
stg_store_list_update_events (StgStore *store, gint64 update_id, GError **error)
{
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr (StgStmt) st = stg_store_stmt (store,
      "SELECT status, ts_ms, \"user\", message FROM update_events WHERE update_id = ? ORDER BY id",
      error);
  int rc;

  if (st == NULL)
    return NULL;
  stg_db_bind_int64 (st, 1, update_id);
  while ((rc = stg_db_step (st)) == STG_DB_ROW)
    {
      ApiJobUpdateEvent *ev = g_object_new (API_TYPE_JOB_UPDATE_EVENT,
                                            "status", stg_db_column_int (st, 0),
                                            "timestampMs", (gint64) stg_db_column_int64 (st, 1),
                                            NULL);
      if (!stg_db_column_null (st, 2))
        g_object_set (ev, "user", (const gchar *) stg_db_column_text (st, 2), NULL);
      if (!stg_db_column_null (st, 3))
        g_object_set (ev, "message", (const gchar *) stg_db_column_text (st, 3), NULL);
      g_ptr_array_add (out, ev);
    }
  if (rc != STG_DB_DONE)
    {
      stg_store_fail (store, error, "listing update events");
      return NULL;
    }
  return g_steal_pointer (&out);
}

GPtrArray *
stg_store_list_instance_events (StgStore *store, gint64 update_id, guint limit, gint64 *total,
                                GError **error)
{
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func (g_object_unref);
  int rc;

  if (total != NULL)
    {
      g_autoptr (StgStmt) cnt = stg_store_stmt (store,
          "SELECT COUNT(*) FROM instance_events WHERE update_id = ?", error);
      if (cnt == NULL)
        return NULL;
      stg_db_bind_int64 (cnt, 1, update_id);
      if (stg_db_step (cnt) != STG_DB_ROW)
        {
          stg_store_fail (store, error, "counting instance events");
          return NULL;
        }
      *total = stg_db_column_int64 (cnt, 0);
    }

  g_autoptr (StgStmt) st = stg_store_stmt (store,
      "SELECT instance_id, ts_ms, action, message FROM (SELECT id, instance_id, ts_ms, action, "
      "message FROM instance_events WHERE update_id = ? ORDER BY id DESC LIMIT ?) AS recent ORDER BY id",
      error);
  if (st == NULL)
    return NULL;
  stg_db_bind_int64 (st, 1, update_id);
  stg_db_bind_int64 (st, 2, limit == 0 ? G_MAXINT64 : (gint64) limit);   /* 0: all */
  while ((rc = stg_db_step (st)) == STG_DB_ROW)
    {
      ApiJobInstanceUpdateEvent *ev = g_object_new (API_TYPE_JOB_INSTANCE_UPDATE_EVENT,
          "instanceId", stg_db_column_int (st, 0),
          "timestampMs", (gint64) stg_db_column_int64 (st, 1),
          "action", stg_db_column_int (st, 2), NULL);
      if (!stg_db_column_null (st, 3))
        g_object_set (ev, "message", (const gchar *) stg_db_column_text (st, 3), NULL);
      g_ptr_array_add (out, ev);
    }
  if (rc != STG_DB_DONE)
    {
      stg_store_fail (store, error, "listing instance events");
      return NULL;
    }
  return g_steal_pointer (&out);
}

/* ---- queries ----------------------------------------------------------------------- */

gboolean
stg_store_update_query_is_empty (const ApiJobUpdateQuery *q)
{
#define SET(s) ((s) != NULL && (s)[0] != '\0')
  return q == NULL ||
         !((q->__isset_key && q->key != NULL && SET (q->key->id)) ||
           (q->__isset_jobKey && q->jobKey != NULL && SET (q->jobKey->role)) ||
           (q->__isset_role && SET (q->role)) || (q->__isset_user && SET (q->user)) ||
           (q->__isset_updateStatuses && q->updateStatuses && g_hash_table_size (q->updateStatuses) > 0) ||
           (q->__isset_limit && q->limit > 0) || (q->__isset_offset && q->offset > 0));
#undef SET
}

/* Builds the statement for @query over @columns (the row id comes first). */
static StgStmt *
prepare_query (StgStore *store, const gchar *columns, const ApiJobUpdateQuery *query,
               GError **error)
{
  g_autoptr (GString) sql = g_string_new (NULL);
  g_autoptr (GPtrArray) binds = g_ptr_array_new ();   /* const gchar*, in order */
  const ApiJobKey *job = NULL;
  gint32 limit = -1, offset = 0;

  /* Empty strings and keys count as unset: some clients send every field. */
#define SET(s) ((s) != NULL && (s)[0] != '\0')
  g_string_printf (sql, "SELECT id, %s FROM updates WHERE TRUE", columns);
  if (query != NULL)
    {
      if (query->__isset_key && query->key != NULL && SET (query->key->id))
        {
          g_string_append (sql, " AND uid = ?");
          g_ptr_array_add (binds, query->key->id);
          if (query->key->job != NULL && SET (query->key->job->role))
            job = query->key->job;
        }
      if (query->__isset_jobKey && query->jobKey != NULL && SET (query->jobKey->role))
        job = query->jobKey;
      if (job != NULL)
        {
          g_string_append (sql, " AND role = ? AND environment = ? AND name = ?");
          g_ptr_array_add (binds, job->role ? job->role : (gchar *) "");
          g_ptr_array_add (binds, job->environment ? job->environment : (gchar *) "");
          g_ptr_array_add (binds, job->name ? job->name : (gchar *) "");
        }
      else if (query->__isset_role && SET (query->role))
        {
          g_string_append (sql, " AND role = ?");
          g_ptr_array_add (binds, query->role);
        }
      if (query->__isset_user && SET (query->user))
        {
          /* Without auth a daemon records the user a client claims, marked
           * " (unauthenticated)"; asking for the user finds those too. */
          g_string_append (sql, " AND (\"user\" = ? OR \"user\" = CAST(? AS TEXT) || "
                                "' (unauthenticated)')");
          g_ptr_array_add (binds, query->user);
          g_ptr_array_add (binds, query->user);
        }
      if (query->__isset_updateStatuses && query->updateStatuses != NULL &&
          g_hash_table_size (query->updateStatuses) > 0)
        {
          /* Status values are small integers: inline them (no injection
           * possible) so the statement shape depends only on the set.
           * Elements of a set of enums are the values themselves. */
          g_autoptr (GList) keys = g_hash_table_get_keys (query->updateStatuses);
          guint bits = 0;
          for (GList *l = keys; l != NULL; l = l->next)
            {
              gint v = GPOINTER_TO_INT (l->data);
              if (v >= 0 && v < 31)
                bits |= 1u << v;
            }
          g_string_append (sql, " AND status IN (");
          gboolean first = TRUE;
          for (gint v = 0; v < 31; v++)
            if (bits & (1u << v))
              {
                g_string_append_printf (sql, first ? "%d" : ", %d", v);
                first = FALSE;
              }
          if (first)
            g_string_append (sql, "-1");
          g_string_append (sql, ")");
        }
      if (query->__isset_limit && query->limit > 0)
        limit = query->limit;
      if (query->__isset_offset && query->offset > 0)
        offset = query->offset;
    }
#undef SET
  g_string_append (sql, " ORDER BY created_ms DESC, id DESC LIMIT ? OFFSET ?");

  StgStmt *st = stg_store_stmt (store, g_intern_string (sql->str), error);
  if (st == NULL)
    return NULL;
  guint i;
  for (i = 0; i < binds->len; i++)
    stg_bind_text (st, (int) i + 1, binds->pdata[i]);
  /* No limit: the largest one (PostgreSQL refuses SQLite's -1). */
  stg_db_bind_int64 (st, (int) i + 1, limit > 0 ? limit : G_MAXINT64);
  stg_db_bind_int64 (st, (int) i + 2, offset);
  return st;
}

GPtrArray *
stg_store_query_update_summaries (StgStore *store, const ApiJobUpdateQuery *query,
                                  GError **error)
{
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr (StgStmt) st = prepare_query (store, SUMMARY_COLUMNS, query, error);
  int rc;

  if (st == NULL)
    return NULL;
  while ((rc = stg_db_step (st)) == STG_DB_ROW)
    g_ptr_array_add (out, read_summary (st, 1));
  if (rc != STG_DB_DONE)
    {
      stg_store_fail (store, error, "querying updates");
      return NULL;
    }
  return g_steal_pointer (&out);
}

GPtrArray *
stg_store_query_update_details (StgStore *store, const ApiJobUpdateQuery *query, GError **error)
{
  g_autoptr (GArray) ids = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func (g_object_unref);

  /* Collect the ids first: the statement is cached and the reads below use
   * other statements. */
  {
    g_autoptr (StgStmt) st = prepare_query (store, "uid", query, error);
    int rc;
    if (st == NULL)
      return NULL;
    while ((rc = stg_db_step (st)) == STG_DB_ROW)
      {
        gint64 id = stg_db_column_int64 (st, 0);
        g_array_append_val (ids, id);
      }
    if (rc != STG_DB_DONE)
      {
        stg_store_fail (store, error, "querying updates");
        return NULL;
      }
  }
  for (guint i = 0; i < ids->len; i++)
    {
      gint64 id = g_array_index (ids, gint64, i);
      g_autoptr (ApiJobUpdateSummary) summary = stg_store_get_update_summary (store, id, error);
      g_autoptr (ApiJobUpdateInstructions) ins = summary ? stg_store_get_update_instructions (store, id, error) : NULL;
      g_autoptr (GPtrArray) events = ins ? stg_store_list_update_events (store, id, error) : NULL;
      g_autoptr (GPtrArray) ievents = events ? stg_store_list_instance_events (store, id, 0, NULL, error) : NULL;
      if (ievents == NULL)
        return NULL;
      g_autoptr (ApiJobUpdate) update = g_object_new (API_TYPE_JOB_UPDATE, "summary", summary,
                                                      "instructions", ins, NULL);
      g_ptr_array_add (out, g_object_new (API_TYPE_JOB_UPDATE_DETAILS, "update", update,
                                          "updateEvents", events, "instanceEvents", ievents, NULL));
    }
  return g_steal_pointer (&out);
}
