/* sidecars.c: the store's part for sidecar sets (sidecar_sets, their
 * versions and events: schema/017_sidecars.sql), and the fleet runtime's
 * facts of the sidecars in its pods (fleet_sidecars). Sidecars and update
 * settings are kept as Thrift binary. Main-loop thread only.
 */
#include "config.h"

#include "store/store_private.h"

void
stg_sidecar_set_row_free (StgSidecarSetRow *row)
{
  if (row == NULL)
    return;
  g_free (row->name);
  g_free (row->role);
  g_free (row->environment);
  g_free (row->job);
  g_free (row->reason);
  g_clear_object (&row->settings);
  g_free (row->user);
  g_free (row);
}

gboolean
stg_store_insert_sidecar_set (StgStore *store, StgSidecarSetRow *row, GError **error)
{
  g_autoptr (GBytes) settings = stg_thrift_to_bytes (THRIFT_STRUCT (row->settings), error);

  if (settings == NULL)
    return FALSE;
  g_autoptr (StgStmt) st = stg_store_stmt (
      store,
      "INSERT INTO sidecar_sets (name, role_pattern, env_pattern, name_pattern, version, "
      "from_version, to_version, inject_version, status, status_ms, reason, settings, \"user\", "
      "created_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
      error);
  if (st == NULL)
    return FALSE;
  stg_bind_text (st, 1, row->name);
  stg_bind_text (st, 2, row->role);
  stg_bind_text (st, 3, row->environment);
  stg_bind_text (st, 4, row->job);
  stg_db_bind_int64 (st, 5, row->version);
  stg_db_bind_int64 (st, 6, row->from_version);
  stg_db_bind_int64 (st, 7, row->to_version);
  stg_db_bind_int64 (st, 8, row->inject_version);
  stg_db_bind_int64 (st, 9, row->status);
  stg_db_bind_int64 (st, 10, row->status_ms);
  stg_bind_text (st, 11, row->reason ? row->reason : "");
  stg_db_bind_blob (st, 12, g_bytes_get_data (settings, NULL), g_bytes_get_size (settings));
  stg_bind_text (st, 13, row->user ? row->user : "");
  stg_db_bind_int64 (st, 14, row->created_ms);
  return stg_store_insert_id (store, st, &row->id, error, "recording a sidecar set");
}

gboolean
stg_store_set_sidecar_set (StgStore *store, const StgSidecarSetRow *row, GError **error)
{
  g_autoptr (GBytes) settings = stg_thrift_to_bytes (THRIFT_STRUCT (row->settings), error);

  if (settings == NULL)
    return FALSE;
  g_autoptr (StgStmt) st = stg_store_stmt (
      store,
      "UPDATE sidecar_sets SET role_pattern = ?, env_pattern = ?, name_pattern = ?, version = ?, "
      "from_version = ?, to_version = ?, inject_version = ?, status = ?, status_ms = ?, "
      "reason = ?, settings = ? WHERE id = ?",
      error);
  if (st == NULL)
    return FALSE;
  stg_bind_text (st, 1, row->role);
  stg_bind_text (st, 2, row->environment);
  stg_bind_text (st, 3, row->job);
  stg_db_bind_int64 (st, 4, row->version);
  stg_db_bind_int64 (st, 5, row->from_version);
  stg_db_bind_int64 (st, 6, row->to_version);
  stg_db_bind_int64 (st, 7, row->inject_version);
  stg_db_bind_int64 (st, 8, row->status);
  stg_db_bind_int64 (st, 9, row->status_ms);
  stg_bind_text (st, 10, row->reason ? row->reason : "");
  stg_db_bind_blob (st, 11, g_bytes_get_data (settings, NULL), g_bytes_get_size (settings));
  stg_db_bind_int64 (st, 12, row->id);
  return stg_store_exec_stmt (store, st, error, "recording a sidecar set");
}

#define SET_COLUMNS \
  "id, name, role_pattern, env_pattern, name_pattern, version, from_version, to_version, " \
  "inject_version, status, status_ms, reason, settings, \"user\", created_ms"

/* The row @st is on (selected with SET_COLUMNS). */
static StgSidecarSetRow *
read_set (StgStmt *st, GError **error)
{
  g_autoptr (StgSidecarSetRow) row = g_new0 (StgSidecarSetRow, 1);
  g_autoptr (GBytes) settings = stg_column_bytes (st, 12);

  row->id = stg_db_column_int64 (st, 0);
  row->name = stg_column_dup (st, 1);
  row->role = stg_column_dup (st, 2);
  row->environment = stg_column_dup (st, 3);
  row->job = stg_column_dup (st, 4);
  row->version = stg_db_column_int (st, 5);
  row->from_version = stg_db_column_int (st, 6);
  row->to_version = stg_db_column_int (st, 7);
  row->inject_version = stg_db_column_int (st, 8);
  row->status = stg_db_column_int (st, 9);
  row->status_ms = stg_db_column_int64 (st, 10);
  row->reason = stg_column_dup (st, 11);
  row->user = stg_column_dup (st, 13);
  row->created_ms = stg_db_column_int64 (st, 14);
  row->settings = stg_thrift_new_from_bytes (API_TYPE_SIDECAR_UPDATE_SETTINGS, settings, error);
  if (row->settings == NULL)
    {
      g_prefix_error (error, "sidecar set %s is damaged: ", row->name);
      return NULL;
    }
  return g_steal_pointer (&row);
}

StgSidecarSetRow *
stg_store_get_sidecar_set (StgStore *store, const gchar *name, GError **error)
{
  g_autoptr (StgStmt) st =
      stg_store_stmt (store, "SELECT " SET_COLUMNS " FROM sidecar_sets WHERE name = ?", error);

  if (st == NULL)
    return NULL;
  stg_bind_text (st, 1, name);
  switch (stg_db_step (st))
    {
    case STG_DB_ROW:
      return read_set (st, error);
    case STG_DB_DONE:
      g_set_error (error, STG_STORE_ERROR, STG_STORE_ERROR_NOT_FOUND, "no sidecar set %s", name);
      return NULL;
    default:
      stg_store_fail (store, error, "reading a sidecar set");
      return NULL;
    }
}

GPtrArray *
stg_store_list_sidecar_sets (StgStore *store, GError **error)
{
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func (
      (GDestroyNotify) stg_sidecar_set_row_free);
  g_autoptr (StgStmt) st = stg_store_stmt (store,
                                           "SELECT " SET_COLUMNS " FROM sidecar_sets ORDER BY name",
                                           error);
  StgDbStep rc;

  if (st == NULL)
    return NULL;
  while ((rc = stg_db_step (st)) == STG_DB_ROW)
    {
      StgSidecarSetRow *row = read_set (st, error);
      if (row == NULL)
        return NULL;
      g_ptr_array_add (out, row);
    }
  if (rc != STG_DB_DONE)
    {
      stg_store_fail (store, error, "listing sidecar sets");
      return NULL;
    }
  return g_steal_pointer (&out);
}

/* Runs @st (a DELETE with the set's id as its one parameter). */
static gboolean
delete_with (StgStore *store, StgStmt *st, gint64 set_id, GError **error)
{
  if (st == NULL)
    return FALSE;
  stg_db_bind_int64 (st, 1, set_id);
  return stg_store_exec_stmt (store, st, error, "removing a sidecar set");
}

gboolean
stg_store_delete_sidecar_set (StgStore *store, gint64 set_id, GError **error)
{
  g_autoptr (StgStmt) events = stg_store_stmt (store, "DELETE FROM sidecar_events WHERE set_id = ?",
                                               error);
  if (!delete_with (store, events, set_id, error))
    return FALSE;
  g_autoptr (StgStmt) versions = stg_store_stmt (store,
                                                 "DELETE FROM sidecar_versions WHERE set_id = ?",
                                                 error);
  if (!delete_with (store, versions, set_id, error))
    return FALSE;
  g_autoptr (StgStmt) set = stg_store_stmt (store, "DELETE FROM sidecar_sets WHERE id = ?", error);
  return delete_with (store, set, set_id, error);
}

/* ---- versions -------------------------------------------------------------------- */

gboolean
stg_store_put_sidecar_version (StgStore *store, gint64 set_id, gint version, ApiSidecar *sidecar,
                               const gchar *user, gint64 created_ms, GError **error)
{
  g_autoptr (GBytes) blob = stg_thrift_to_bytes (THRIFT_STRUCT (sidecar), error);
  g_autofree gchar *hash = blob ? stg_thrift_hash (THRIFT_STRUCT (sidecar), error) : NULL;

  if (hash == NULL)
    return FALSE;
  g_autoptr (StgStmt) st = stg_store_stmt (
      store,
      "INSERT INTO sidecar_versions (set_id, version, hash, sidecar, created_ms, \"user\") "
      "VALUES (?, ?, ?, ?, ?, ?)",
      error);
  if (st == NULL)
    return FALSE;
  stg_db_bind_int64 (st, 1, set_id);
  stg_db_bind_int64 (st, 2, version);
  stg_bind_text (st, 3, hash);
  stg_db_bind_blob (st, 4, g_bytes_get_data (blob, NULL), g_bytes_get_size (blob));
  stg_db_bind_int64 (st, 5, created_ms);
  stg_bind_text (st, 6, user ? user : "");
  return stg_store_exec_stmt (store, st, error, "recording a sidecar version");
}

ApiSidecar *
stg_store_get_sidecar_version (StgStore *store, const gchar *name, gint version, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (
      store,
      "SELECT v.sidecar FROM sidecar_versions v JOIN sidecar_sets s ON s.id = v.set_id "
      "WHERE s.name = ? AND v.version = ?",
      error);

  if (st == NULL)
    return NULL;
  stg_bind_text (st, 1, name);
  stg_db_bind_int64 (st, 2, version);
  switch (stg_db_step (st))
    {
    case STG_DB_ROW:
      {
        g_autoptr (GBytes) blob = stg_column_bytes (st, 0);
        return stg_thrift_new_from_bytes (API_TYPE_SIDECAR, blob, error);
      }
    case STG_DB_DONE:
      g_set_error (error, STG_STORE_ERROR, STG_STORE_ERROR_NOT_FOUND,
                   "sidecar set %s has no version %d", name, version);
      return NULL;
    default:
      stg_store_fail (store, error, "reading a sidecar version");
      return NULL;
    }
}

gint
stg_store_find_sidecar_version (StgStore *store, gint64 set_id, const gchar *hash, GError **error)
{
  g_autoptr (StgStmt) st =
      stg_store_stmt (store,
                      "SELECT MAX(version) FROM sidecar_versions WHERE set_id = ? AND hash = ?",
                      error);

  if (st == NULL)
    return 0;
  stg_db_bind_int64 (st, 1, set_id);
  stg_bind_text (st, 2, hash);
  if (stg_db_step (st) != STG_DB_ROW)
    {
      stg_store_fail (store, error, "finding a sidecar version");
      return 0;
    }
  return stg_db_column_null (st, 0) ? 0 : stg_db_column_int (st, 0);
}

GPtrArray *
stg_store_list_sidecar_versions (StgStore *store, gint64 set_id, GError **error)
{
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr (StgStmt) st = stg_store_stmt (
      store,
      "SELECT version, sidecar, created_ms, \"user\" FROM sidecar_versions WHERE set_id = ? "
      "ORDER BY version",
      error);
  StgDbStep rc;

  if (st == NULL)
    return NULL;
  stg_db_bind_int64 (st, 1, set_id);
  while ((rc = stg_db_step (st)) == STG_DB_ROW)
    {
      g_autoptr (GBytes) blob = stg_column_bytes (st, 1);
      g_autoptr (ApiSidecar) sidecar = stg_thrift_new_from_bytes (API_TYPE_SIDECAR, blob, error);
      g_autofree gchar *user = stg_column_dup (st, 3);
      if (sidecar == NULL)
        return NULL;
      g_ptr_array_add (out,
                       g_object_new (API_TYPE_SIDECAR_VERSION, "version", stg_db_column_int (st, 0),
                                     "sidecar", sidecar, "createdTimestampMs",
                                     stg_db_column_int64 (st, 2), "user", user, NULL));
    }
  if (rc != STG_DB_DONE)
    {
      stg_store_fail (store, error, "listing sidecar versions");
      return NULL;
    }
  return g_steal_pointer (&out);
}

/* ---- events ----------------------------------------------------------------------- */

gboolean
stg_store_add_sidecar_event (StgStore *store, gint64 set_id, gint64 ts_ms, gint status,
                             const gchar *job, gint32 instance, const gchar *message,
                             const gchar *user, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (
      store,
      "INSERT INTO sidecar_events (set_id, ts_ms, status, job, instance_id, message, \"user\") "
      "VALUES (?, ?, ?, ?, ?, ?, ?)",
      error);
  if (st == NULL)
    return FALSE;
  stg_db_bind_int64 (st, 1, set_id);
  stg_db_bind_int64 (st, 2, ts_ms);
  stg_db_bind_int64 (st, 3, status);
  stg_bind_text (st, 4, job);
  if (job != NULL)
    stg_db_bind_int64 (st, 5, instance);
  else
    stg_db_bind_null (st, 5);
  stg_bind_text (st, 6, message ? message : "");
  stg_bind_text (st, 7, user);
  return stg_store_exec_stmt (store, st, error, "recording a sidecar event");
}

/* An InstanceKey of "role/environment/name" and @instance, or NULL when
 * @job does not have three parts. */
static ApiInstanceKey *
instance_key (const gchar *job, gint32 instance)
{
  g_auto (GStrv) parts = g_strsplit (job, "/", 3);

  if (g_strv_length (parts) != 3)
    return NULL;
  g_autoptr (ApiJobKey) key = g_object_new (API_TYPE_JOB_KEY, "role", parts[0], "environment",
                                            parts[1], "name", parts[2], NULL);
  return g_object_new (API_TYPE_INSTANCE_KEY, "jobKey", key, "instanceId", instance, NULL);
}

GPtrArray *
stg_store_list_sidecar_events (StgStore *store, gint64 set_id, guint limit, GError **error)
{
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr (StgStmt) st = stg_store_stmt (
      store,
      "SELECT ts_ms, status, job, instance_id, message, \"user\" FROM sidecar_events "
      "WHERE set_id = ? ORDER BY id DESC LIMIT ?",
      error);
  StgDbStep rc;

  if (st == NULL)
    return NULL;
  stg_db_bind_int64 (st, 1, set_id);
  stg_db_bind_int64 (st, 2, limit);
  while ((rc = stg_db_step (st)) == STG_DB_ROW)
    {
      g_autofree gchar *message = stg_column_dup (st, 4);
      ApiSidecarEvent *e = g_object_new (API_TYPE_SIDECAR_EVENT, "timestampMs",
                                         stg_db_column_int64 (st, 0), "status",
                                         stg_db_column_int (st, 1), "message", message, NULL);
      if (!stg_db_column_null (st, 2))
        {
          g_autoptr (ApiInstanceKey) key = instance_key (stg_db_column_text (st, 2),
                                                         stg_db_column_int (st, 3));
          if (key != NULL)
            g_object_set (e, "instance", key, NULL);
        }
      if (!stg_db_column_null (st, 5))
        g_object_set (e, "user", stg_db_column_text (st, 5), NULL);
      g_ptr_array_insert (out, 0, e);
    }
  if (rc != STG_DB_DONE)
    {
      stg_store_fail (store, error, "listing sidecar events");
      return NULL;
    }
  return g_steal_pointer (&out);
}

/* ---- the pods' sidecars (the fleet runtime's facts) -------------------------------- */

gboolean
stg_store_put_pod_sidecar (StgStore *store, const StgPodSidecarRow *row, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (
      store,
      "INSERT INTO fleet_sidecars (job_id, instance_id, sidecar, want_version, serving_slot, "
      "serving_version, failures) VALUES (?, ?, ?, ?, ?, ?, ?) "
      "ON CONFLICT (job_id, instance_id, sidecar) DO UPDATE SET "
      "want_version = excluded.want_version, serving_slot = excluded.serving_slot, "
      "serving_version = excluded.serving_version, failures = excluded.failures",
      error);
  if (st == NULL)
    return FALSE;
  stg_db_bind_int64 (st, 1, row->job_id);
  stg_db_bind_int64 (st, 2, row->instance_id);
  stg_bind_text (st, 3, row->sidecar);
  stg_db_bind_int64 (st, 4, row->want);
  stg_db_bind_int64 (st, 5, row->serving_slot);
  stg_db_bind_int64 (st, 6, row->serving_version);
  stg_db_bind_int64 (st, 7, row->failures);
  return stg_store_exec_stmt (store, st, error, "recording a pod's sidecar");
}

gboolean
stg_store_delete_pod_sidecar (StgStore *store, gint64 job_id, gint32 instance_id,
                              const gchar *sidecar, GError **error)
{
  g_autoptr (StgStmt) st =
      sidecar != NULL
          ? stg_store_stmt (store,
                            "DELETE FROM fleet_sidecars WHERE job_id = ? AND instance_id = ? "
                            "AND sidecar = ?",
                            error)
          : stg_store_stmt (store,
                            "DELETE FROM fleet_sidecars WHERE job_id = ? AND instance_id = ?",
                            error);
  if (st == NULL)
    return FALSE;
  stg_db_bind_int64 (st, 1, job_id);
  stg_db_bind_int64 (st, 2, instance_id);
  if (sidecar != NULL)
    stg_bind_text (st, 3, sidecar);
  return stg_store_exec_stmt (store, st, error, "removing a pod's sidecar");
}

static void
pod_sidecar_row_clear (gpointer p)
{
  g_free (((StgPodSidecarRow *) p)->sidecar);
}

GArray *
stg_store_list_pod_sidecars (StgStore *store, GError **error)
{
  g_autoptr (GArray) out = g_array_new (FALSE, TRUE, sizeof (StgPodSidecarRow));
  g_autoptr (StgStmt) st = stg_store_stmt (
      store,
      "SELECT job_id, instance_id, sidecar, want_version, serving_slot, serving_version, "
      "failures FROM fleet_sidecars ORDER BY job_id, instance_id, sidecar",
      error);
  StgDbStep rc;

  if (st == NULL)
    return NULL;
  g_array_set_clear_func (out, pod_sidecar_row_clear);
  while ((rc = stg_db_step (st)) == STG_DB_ROW)
    {
      StgPodSidecarRow r = {
        .job_id = stg_db_column_int64 (st, 0),
        .instance_id = stg_db_column_int (st, 1),
        .sidecar = stg_column_dup (st, 2),
        .want = stg_db_column_int (st, 3),
        .serving_slot = stg_db_column_int (st, 4),
        .serving_version = stg_db_column_int (st, 5),
        .failures = stg_db_column_int (st, 6),
      };
      g_array_append_val (out, r);
    }
  if (rc != STG_DB_DONE)
    {
      stg_store_fail (store, error, "listing the pods' sidecars");
      return NULL;
    }
  return g_steal_pointer (&out);
}
