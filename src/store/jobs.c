/* jobs.c: the store's task configurations, jobs, instances and task events.
 *
 * Configs are immutable once stored, so they are cached by id after the
 * first read. Main-loop thread only.
 */
#include "config.h"

#include "common/jobkey.h"
#include "store/store_private.h"

/* ---- task configurations ---------------------------------------------- */

gboolean
stg_store_put_config (StgStore *store, ApiTaskConfig *config, gint64 *id, gint *version,
                      GError **error)
{
  g_autofree gchar *hash = NULL;
  g_autoptr (GBytes) blob = NULL;
  ApiJobKey *key = config->job;

  g_return_val_if_fail (key != NULL && key->role != NULL, FALSE);

  hash = stg_thrift_hash (THRIFT_STRUCT (config), error);
  if (hash == NULL)
    return FALSE;

  {
    g_autoptr (StgStmt) st = stg_store_stmt (store, "SELECT id, version FROM task_configs WHERE hash = ?", error);
    if (st == NULL)
      return FALSE;
    stg_bind_text (st, 1, hash);
    int rc = stg_db_step (st);
    if (rc == STG_DB_ROW)
      {
        *id = stg_db_column_int64 (st, 0);
        if (version)
          *version = stg_db_column_int (st, 1);
        return TRUE;
      }
    if (rc != STG_DB_DONE)
      return stg_store_fail (store, error, "looking up a config");
  }

  blob = stg_thrift_to_bytes (THRIFT_STRUCT (config), error);
  if (blob == NULL || !stg_store_begin (store, error))
    return FALSE;

  gint next = 0;
  {
    g_autoptr (StgStmt) st = stg_store_stmt (store,
        "SELECT COALESCE(MAX(version), 0) + 1 FROM task_configs "
        "WHERE role = ? AND environment = ? AND name = ?", error);
    if (st == NULL)
      goto fail;
    stg_bind_text (st, 1, key->role);
    stg_bind_text (st, 2, key->environment);
    stg_bind_text (st, 3, key->name);
    if (stg_db_step (st) != STG_DB_ROW)
      {
        stg_store_fail (store, error, "numbering a config");
        goto fail;
      }
    next = stg_db_column_int (st, 0);
  }
  {
    g_autoptr (StgStmt) st = stg_store_stmt (store,
        "INSERT INTO task_configs (hash, role, environment, name, version, blob, created_ms) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id", error);
    if (st == NULL)
      goto fail;
    stg_bind_text (st, 1, hash);
    stg_bind_text (st, 2, key->role);
    stg_bind_text (st, 3, key->environment);
    stg_bind_text (st, 4, key->name);
    stg_db_bind_int64 (st, 5, next);
    stg_db_bind_blob (st, 6, g_bytes_get_data (blob, NULL), g_bytes_get_size (blob));
    stg_db_bind_int64 (st, 7, g_get_real_time () / 1000);
    if (!stg_store_insert_id (store, st, id, error, "storing a config"))
      goto fail;
  }
  if (version)
    *version = next;
  return stg_store_commit (store, error);

fail:
  stg_store_rollback (store);
  return FALSE;
}

gint64
stg_store_find_config (StgStore *store, const gchar *hash, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (store, "SELECT id FROM task_configs WHERE hash = ?", error);
  if (st == NULL)
    return 0;
  stg_bind_text (st, 1, hash);
  int rc = stg_db_step (st);
  if (rc == STG_DB_ROW)
    return stg_db_column_int64 (st, 0);
  if (rc != STG_DB_DONE)
    stg_store_fail (store, error, "looking up a config");
  return 0;
}

static gboolean
load_config (StgStore *store, gint64 id, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (store, "SELECT blob, version FROM task_configs WHERE id = ?", error);
  if (st == NULL)
    return FALSE;
  stg_db_bind_int64 (st, 1, id);
  int rc = stg_db_step (st);
  if (rc == STG_DB_DONE)
    {
      g_set_error (error, STG_STORE_ERROR, STG_STORE_ERROR_NOT_FOUND, "no config with id %" G_GINT64_FORMAT, id);
      return FALSE;
    }
  if (rc != STG_DB_ROW)
    return stg_store_fail (store, error, "reading a config");

  g_autoptr (GBytes) blob = stg_column_bytes (st, 0);
  ApiTaskConfig *config = stg_thrift_new_from_bytes (API_TYPE_TASK_CONFIG, blob, error);
  if (config == NULL)
    {
      g_prefix_error (error, "config %" G_GINT64_FORMAT " is damaged: ", id);
      if (error && *error)
        (*error)->domain = STG_STORE_ERROR, (*error)->code = STG_STORE_ERROR_CORRUPT;
      return FALSE;
    }
  g_hash_table_insert (store->configs, g_memdup2 (&id, sizeof id), config);
  g_hash_table_insert (store->versions, g_memdup2 (&id, sizeof id),
                       GINT_TO_POINTER (stg_db_column_int (st, 1)));
  return TRUE;
}

ApiTaskConfig *
stg_store_get_config (StgStore *store, gint64 id, GError **error)
{
  ApiTaskConfig *config = g_hash_table_lookup (store->configs, &id);

  if (config == NULL)
    {
      if (!load_config (store, id, error))
        return NULL;
      config = g_hash_table_lookup (store->configs, &id);
    }
  return g_object_ref (config);
}

gint
stg_store_config_version (StgStore *store, gint64 id)
{
  if (!g_hash_table_contains (store->versions, &id) && !load_config (store, id, NULL))
    return 0;
  return GPOINTER_TO_INT (g_hash_table_lookup (store->versions, &id));
}

/* ---- jobs --------------------------------------------------------------- */

void
stg_job_row_free (StgJobRow *row)
{
  if (row == NULL)
    return;
  g_clear_object (&row->key);
  g_free (row->owner);
  g_free (row);
}

gboolean
stg_store_create_job (StgStore *store, const ApiJobKey *key, const gchar *owner,
                      gint64 config_id, gint32 instance_count, gint64 now_ms,
                      gint64 *job_id, GError **error)
{
  g_return_val_if_fail (instance_count >= 0, FALSE);

  if (!stg_store_begin (store, error))
    return FALSE;
  {
    g_autoptr (StgStmt) st = stg_store_stmt (store,
        "INSERT INTO jobs (role, environment, name, owner, created_ms) VALUES (?, ?, ?, ?, ?) "
        "RETURNING id", error);
    if (st == NULL)
      goto fail;
    stg_bind_text (st, 1, key->role);
    stg_bind_text (st, 2, key->environment);
    stg_bind_text (st, 3, key->name);
    stg_bind_text (st, 4, owner ? owner : "");
    stg_db_bind_int64 (st, 5, now_ms);
    if (!stg_store_insert_id (store, st, job_id, error, "creating a job"))
      {
        if (g_error_matches (*error, STG_STORE_ERROR, STG_STORE_ERROR_EXISTS))
          {
            g_autofree gchar *name = stg_job_key_to_string (key);
            g_clear_error (error);
            g_set_error (error, STG_STORE_ERROR, STG_STORE_ERROR_EXISTS, "job %s already exists", name);
          }
        goto fail;
      }
  }
  if (instance_count > 0)
    {
      /* Every instance row in one statement, not one statement each. */
      g_autoptr (StgStmt) st = stg_store_stmt (
          store,
          "WITH RECURSIVE ids (i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM ids WHERE i + 1 < ?) "
          "INSERT INTO instances (job_id, instance_id, config_id) SELECT ?, i, ? FROM ids",
          error);
      if (st == NULL)
        goto fail;
      stg_db_bind_int64 (st, 1, instance_count);
      stg_db_bind_int64 (st, 2, *job_id);
      stg_db_bind_int64 (st, 3, config_id);
      if (!stg_store_exec_stmt (store, st, error, "creating a job's instances"))
        goto fail;
    }
  return stg_store_commit (store, error);

fail:
  stg_store_rollback (store);
  return FALSE;
}

static StgJobRow *
read_job (StgStmt *st)
{
  StgJobRow *row = g_new0 (StgJobRow, 1);
  row->id = stg_db_column_int64 (st, 0);
  row->key = stg_job_key_new ((const gchar *) stg_db_column_text (st, 1),
                              (const gchar *) stg_db_column_text (st, 2),
                              (const gchar *) stg_db_column_text (st, 3));
  row->owner = stg_column_dup (st, 4);
  row->created_ms = stg_db_column_int64 (st, 5);
  row->instance_count = stg_db_column_int (st, 6);
  return row;
}

#define JOB_COLUMNS \
  "j.id, j.role, j.environment, j.name, j.owner, j.created_ms, " \
  "(SELECT COUNT(*) FROM instances i WHERE i.job_id = j.id)"

StgJobRow *
stg_store_get_job (StgStore *store, const ApiJobKey *key, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (store,
      "SELECT " JOB_COLUMNS " FROM jobs j WHERE role = ? AND environment = ? AND name = ?", error);
  if (st == NULL)
    return NULL;
  stg_bind_text (st, 1, key->role);
  stg_bind_text (st, 2, key->environment);
  stg_bind_text (st, 3, key->name);
  int rc = stg_db_step (st);
  if (rc == STG_DB_ROW)
    return read_job (st);
  if (rc == STG_DB_DONE)
    {
      g_autofree gchar *name = stg_job_key_to_string (key);
      g_set_error (error, STG_STORE_ERROR, STG_STORE_ERROR_NOT_FOUND, "no job %s", name);
    }
  else
    stg_store_fail (store, error, "reading a job");
  return NULL;
}

StgJobRow *
stg_store_get_job_by_id (StgStore *store, gint64 id, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (store, "SELECT " JOB_COLUMNS " FROM jobs j WHERE id = ?",
                                           error);
  if (st == NULL)
    return NULL;
  stg_db_bind_int64 (st, 1, id);
  int rc = stg_db_step (st);
  if (rc == STG_DB_ROW)
    return read_job (st);
  if (rc == STG_DB_DONE)
    g_set_error (error, STG_STORE_ERROR, STG_STORE_ERROR_NOT_FOUND, "no job %" G_GINT64_FORMAT, id);
  else
    stg_store_fail (store, error, "reading a job");
  return NULL;
}

GPtrArray *
stg_store_list_jobs (StgStore *store, const gchar *role, GError **error)
{
  g_autoptr (GPtrArray) rows = g_ptr_array_new_with_free_func ((GDestroyNotify) stg_job_row_free);
  g_autoptr (StgStmt) st = stg_store_stmt (store,
      "SELECT " JOB_COLUMNS " FROM jobs j WHERE CAST(?1 AS TEXT) IS NULL OR role = ?1 "
      "ORDER BY role, environment, name", error);
  int rc;

  if (st == NULL)
    return NULL;
  stg_bind_text (st, 1, role);
  while ((rc = stg_db_step (st)) == STG_DB_ROW)
    g_ptr_array_add (rows, read_job (st));
  if (rc != STG_DB_DONE)
    {
      stg_store_fail (store, error, "listing jobs");
      return NULL;
    }
  return g_steal_pointer (&rows);
}

gboolean
stg_store_delete_job (StgStore *store, gint64 job_id, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (store, "DELETE FROM jobs WHERE id = ?", error);
  if (st == NULL)
    return FALSE;
  stg_db_bind_int64 (st, 1, job_id);
  return stg_store_exec_stmt (store, st, error, "deleting a job");
}

/* ---- instances ---------------------------------------------------------- */

static GArray *
count_by (StgStore *store, const gchar *sql, gint64 job_id, GError **error)
{
  g_autoptr (GArray) out = g_array_new (FALSE, TRUE, sizeof (StgCount));
  g_autoptr (StgStmt) st = stg_store_stmt (store, sql, error);
  int rc;

  if (st == NULL)
    return NULL;
  stg_db_bind_int64 (st, 1, job_id);
  while ((rc = stg_db_step (st)) == STG_DB_ROW)
    {
      StgCount c = { stg_db_column_int64 (st, 0), stg_db_column_int64 (st, 1) };
      g_array_append_val (out, c);
    }
  if (rc != STG_DB_DONE)
    {
      stg_store_fail (store, error, "counting instances");
      return NULL;
    }
  return g_steal_pointer (&out);
}

GArray *
stg_store_count_configs (StgStore *store, gint64 job_id, GError **error)
{
  return count_by (store, "SELECT config_id, COUNT(*) FROM instances WHERE job_id = ? "
                          "GROUP BY config_id ORDER BY config_id", job_id, error);
}

gboolean
stg_store_main_config (StgStore *store, gint64 job_id, gint64 *config_id, GError **error)
{
  g_autoptr (GArray) counts = stg_store_count_configs (store, job_id, error);
  gint64 most = 0;

  *config_id = 0;
  if (counts == NULL)
    return FALSE;
  for (guint i = 0; i < counts->len; i++)
    {
      StgCount c = g_array_index (counts, StgCount, i);
      if (c.count > most)
        {
          most = c.count;
          *config_id = c.key;
        }
    }
  return TRUE;
}

GArray *
stg_store_count_statuses (StgStore *store, gint64 job_id, GError **error)
{
  return count_by (store, "SELECT status, COUNT(*) FROM instances WHERE job_id = ? "
                          "GROUP BY status ORDER BY status", job_id, error);
}

#define INSTANCE_COLUMNS \
  "instance_id, config_id, status, run_id, pid, pid_start, failure_count, status_ms, " \
  "run_config_id, next_run_id, next_config_id, next_pid, next_pid_start, stop_reason"

static void
read_instance (StgStmt *st, StgInstanceRow *row)
{
  row->instance_id = stg_db_column_int (st, 0);
  row->config_id = stg_db_column_int64 (st, 1);
  row->status = stg_db_column_int (st, 2);
  row->run_id = stg_db_column_int64 (st, 3);
  row->pid = stg_db_column_int64 (st, 4);
  row->pid_start = stg_db_column_int64 (st, 5);
  row->failure_count = stg_db_column_int (st, 6);
  row->status_ms = stg_db_column_int64 (st, 7);
  row->run_config_id = stg_db_column_int64 (st, 8);
  row->next_run_id = stg_db_column_int64 (st, 9);
  row->next_config_id = stg_db_column_int64 (st, 10);
  row->next_pid = stg_db_column_int64 (st, 11);
  row->next_pid_start = stg_db_column_int64 (st, 12);
  row->stop_reason = stg_db_column_int (st, 13);
}

GArray *
stg_store_list_instances (StgStore *store, gint64 job_id, GError **error)
{
  g_autoptr (GArray) rows = g_array_new (FALSE, TRUE, sizeof (StgInstanceRow));
  g_autoptr (StgStmt) st = stg_store_stmt (store,
      "SELECT " INSTANCE_COLUMNS " FROM instances WHERE job_id = ? ORDER BY instance_id", error);
  int rc;

  if (st == NULL)
    return NULL;
  stg_db_bind_int64 (st, 1, job_id);
  while ((rc = stg_db_step (st)) == STG_DB_ROW)
    {
      StgInstanceRow row;
      read_instance (st, &row);
      g_array_append_val (rows, row);
    }
  if (rc != STG_DB_DONE)
    {
      stg_store_fail (store, error, "listing instances");
      return NULL;
    }
  return g_steal_pointer (&rows);
}

gboolean
stg_store_get_instance (StgStore *store, gint64 job_id, gint32 instance_id,
                        StgInstanceRow *row, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (store,
      "SELECT " INSTANCE_COLUMNS " FROM instances WHERE job_id = ? AND instance_id = ?", error);
  if (st == NULL)
    return FALSE;
  stg_db_bind_int64 (st, 1, job_id);
  stg_db_bind_int64 (st, 2, instance_id);
  int rc = stg_db_step (st);
  if (rc == STG_DB_ROW)
    {
      read_instance (st, row);
      return TRUE;
    }
  if (rc == STG_DB_DONE)
    g_set_error (error, STG_STORE_ERROR, STG_STORE_ERROR_NOT_FOUND, "no instance %d", instance_id);
  else
    stg_store_fail (store, error, "reading an instance");
  return FALSE;
}

gboolean
stg_store_set_instance_config (StgStore *store, gint64 job_id, gint32 instance_id,
                               gint64 config_id, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (store,
      "INSERT INTO instances (job_id, instance_id, config_id) VALUES (?, ?, ?) "
      "ON CONFLICT (job_id, instance_id) DO UPDATE SET config_id = excluded.config_id", error);
  if (st == NULL)
    return FALSE;
  stg_db_bind_int64 (st, 1, job_id);
  stg_db_bind_int64 (st, 2, instance_id);
  stg_db_bind_int64 (st, 3, config_id);
  return stg_store_exec_stmt (store, st, error, "setting an instance's config");
}

gboolean
stg_store_set_instance_facts (StgStore *store, gint64 job_id, const StgInstanceRow *row,
                              GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (store,
      "UPDATE instances SET status = ?, run_id = ?, pid = ?, pid_start = ?, failure_count = ?, "
      "status_ms = ?, run_config_id = ?, next_run_id = ?, next_config_id = ?, next_pid = ?, "
      "next_pid_start = ?, stop_reason = ? WHERE job_id = ? AND instance_id = ?", error);
  if (st == NULL)
    return FALSE;
  stg_db_bind_int64 (st, 1, row->status);
  stg_db_bind_int64 (st, 2, row->run_id);
  if (row->pid > 0)
    {
      stg_db_bind_int64 (st, 3, row->pid);
      stg_db_bind_int64 (st, 4, row->pid_start);
    }
  stg_db_bind_int64 (st, 5, row->failure_count);
  stg_db_bind_int64 (st, 6, row->status_ms);
  if (row->run_config_id > 0)
    stg_db_bind_int64 (st, 7, row->run_config_id);
  stg_db_bind_int64 (st, 8, row->next_run_id);
  stg_db_bind_int64 (st, 9, row->next_config_id);
  stg_db_bind_int64 (st, 10, row->next_pid);
  stg_db_bind_int64 (st, 11, row->next_pid_start);
  stg_db_bind_int64 (st, 12, row->stop_reason);
  stg_db_bind_int64 (st, 13, job_id);
  stg_db_bind_int64 (st, 14, row->instance_id);
  return stg_store_exec_stmt (store, st, error, "recording an instance's state");
}

gboolean
stg_store_delete_instance (StgStore *store, gint64 job_id, gint32 instance_id, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (store,
      "DELETE FROM instances WHERE job_id = ? AND instance_id = ?", error);
  if (st == NULL)
    return FALSE;
  stg_db_bind_int64 (st, 1, job_id);
  stg_db_bind_int64 (st, 2, instance_id);
  return stg_store_exec_stmt (store, st, error, "deleting an instance");
}

gboolean
stg_store_add_task_event (StgStore *store, gint64 job_id, gint32 instance_id, gint64 ts_ms,
                          gint32 status, const gchar *message, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (store,
      "INSERT INTO task_events (job_id, instance_id, ts_ms, status, message) VALUES (?, ?, ?, ?, ?)",
      error);
  if (st == NULL)
    return FALSE;
  stg_db_bind_int64 (st, 1, job_id);
  stg_db_bind_int64 (st, 2, instance_id);
  stg_db_bind_int64 (st, 3, ts_ms);
  stg_db_bind_int64 (st, 4, status);
  stg_bind_text (st, 5, message);
  return stg_store_exec_stmt (store, st, error, "recording a task event");
}

GPtrArray *
stg_store_list_task_events (StgStore *store, gint64 job_id, gint32 instance_id, guint limit,
                            GError **error)
{
  g_autoptr (GPtrArray) events = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr (StgStmt) st = stg_store_stmt (store,
      "SELECT ts_ms, status, message FROM (SELECT id, ts_ms, status, message FROM task_events "
      "WHERE job_id = ? AND instance_id = ? ORDER BY id DESC LIMIT ?) AS recent ORDER BY id", error);
  int rc;

  if (st == NULL)
    return NULL;
  stg_db_bind_int64 (st, 1, job_id);
  stg_db_bind_int64 (st, 2, instance_id);
  stg_db_bind_int64 (st, 3, limit);
  while ((rc = stg_db_step (st)) == STG_DB_ROW)
    {
      ApiTaskEvent *ev = g_object_new (API_TYPE_TASK_EVENT,
                                       "timestamp", (gint64) stg_db_column_int64 (st, 0),
                                       "status", stg_db_column_int (st, 1), NULL);
      if (!stg_db_column_null (st, 2))
        g_object_set (ev, "message", (const gchar *) stg_db_column_text (st, 2), NULL);
      g_ptr_array_add (events, ev);
    }
  if (rc != STG_DB_DONE)
    {
      stg_store_fail (store, error, "listing task events");
      return NULL;
    }
  return g_steal_pointer (&events);
}
