/* ended_tasks.c: tasks that ended with their instance (killed, or left out
 * by a smaller update), kept as Aurora keeps terminal tasks until they are
 * pruned (schema/020_ended_tasks.sql): written as the instance's row goes
 * (stg_store_end_instance), read by the task queries when they ask for an
 * ended status, at most STG_STORE_ENDED_PER_JOB per job; older ones go
 * with old events (retention.c) or by pruneTasks. Main-loop thread only.
 */
#include "config.h"

#include "common/thrift_glue.h"
#include "store/store_private.h"

/* The newest events an ended task keeps. */
#define ENDED_EVENTS 50

gboolean
stg_store_status_ended (gint status)
{
  return status == API_SCHEDULE_STATUS_FINISHED || status == API_SCHEDULE_STATUS_FAILED ||
         status == API_SCHEDULE_STATUS_KILLED || status == API_SCHEDULE_STATUS_LOST;
}

/* @row of job @job as a task that ends now (@now_ms): KILLED, with an event
 * saying so, unless it had ended already. */
static ApiScheduledTask *
ending_task (StgStore *store, const StgJobRow *job, const StgInstanceRow *row, gint64 now_ms,
             GError **error)
{
  gint64 config_id = row->run_config_id ? row->run_config_id : row->config_id;
  g_autoptr (ApiTaskConfig) config = stg_store_get_config (store, config_id, error);
  if (config == NULL)
    return NULL;
  ApiScheduledTask *task = stg_store_scheduled_task (store, job->key, job->id, row, config,
                                                     g_get_host_name (), ENDED_EVENTS, error);
  if (task == NULL || stg_store_status_ended (task->status))
    return task;
  g_object_set (task, "status", API_SCHEDULE_STATUS_KILLED, NULL);
  g_ptr_array_add (task->taskEvents,
                   g_object_new (API_TYPE_TASK_EVENT, "timestamp", now_ms, "status",
                                 API_SCHEDULE_STATUS_KILLED, "message", "killed", NULL));
  return task;
}

/* Statement @sql with job @key's role, environment and name bound to its
 * first three parameters. */
static StgStmt *
job_stmt (StgStore *store, const gchar *sql, const ApiJobKey *key, GError **error)
{
  StgStmt *st = stg_store_stmt (store, sql, error);

  if (st == NULL)
    return NULL;
  stg_bind_text (st, 1, key->role);
  stg_bind_text (st, 2, key->environment);
  stg_bind_text (st, 3, key->name);
  return st;
}

/* Keeps the newest STG_STORE_ENDED_PER_JOB ended tasks of @key. */
static gboolean
trim_job (StgStore *store, const ApiJobKey *key, GError **error)
{
  g_autoptr (StgStmt) st = job_stmt (
      store,
      "DELETE FROM ended_tasks WHERE role = ?1 AND environment = ?2 AND name = ?3 AND id NOT IN "
      "(SELECT id FROM ended_tasks WHERE role = ?1 AND environment = ?2 AND name = ?3 "
      "ORDER BY id DESC LIMIT ?4)",
      key, error);
  if (st == NULL)
    return FALSE;
  stg_db_bind_int64 (st, 4, STG_STORE_ENDED_PER_JOB);
  return stg_store_exec_stmt (store, st, error, "trimming ended tasks");
}

/* Records @task of job @key, ended at @now_ms. */
static gboolean
keep_task (StgStore *store, const ApiJobKey *key, ApiScheduledTask *task, gint64 now_ms,
           GError **error)
{
  g_autoptr (GBytes) blob = stg_thrift_to_bytes (THRIFT_STRUCT (task), error);
  g_autoptr (StgStmt) st =
      blob ? job_stmt (store,
                       "INSERT INTO ended_tasks (role, environment, name, instance_id, ended_ms, "
                       "task) VALUES (?, ?, ?, ?, ?, ?)",
                       key, error)
           : NULL;
  if (st == NULL)
    return FALSE;
  stg_db_bind_int64 (st, 4, task->assignedTask->instanceId);
  stg_db_bind_int64 (st, 5, now_ms);
  stg_db_bind_blob (st, 6, g_bytes_get_data (blob, NULL), g_bytes_get_size (blob));
  return stg_store_exec_stmt (store, st, error, "keeping an ended task") &&
         trim_job (store, key, error);
}

gboolean
stg_store_end_instance (StgStore *store, gint64 job_id, gint32 instance_id, gint64 now_ms,
                        GError **error)
{
  StgInstanceRow row;
  g_autoptr (StgJobRow) job = stg_store_get_job_by_id (store, job_id, NULL);

  if (job != NULL && stg_store_get_instance (store, job_id, instance_id, &row, NULL))
    {
      g_autoptr (GError) local = NULL;
      g_autoptr (ApiScheduledTask) task = ending_task (store, job, &row, now_ms, &local);
      /* The instance goes either way: a task that cannot be kept is logged. */
      if (task == NULL || !keep_task (store, job->key, task, now_ms, &local))
        g_warning ("store: cannot keep ended task %d of job %" G_GINT64_FORMAT ": %s", instance_id,
                   job_id, local->message);
    }
  return stg_store_delete_instance (store, job_id, instance_id, error);
}

GPtrArray *
stg_store_list_ended_tasks (StgStore *store, const gchar *role, GError **error)
{
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr (StgStmt) st = stg_store_stmt (
      store,
      role != NULL
          ? "SELECT task FROM ended_tasks WHERE role = ? "
            "ORDER BY role, environment, name, instance_id, id"
          : "SELECT task FROM ended_tasks ORDER BY role, environment, name, instance_id, id",
      error);
  int rc;

  if (st == NULL)
    return NULL;
  if (role != NULL)
    stg_bind_text (st, 1, role);
  while ((rc = stg_db_step (st)) == STG_DB_ROW)
    {
      g_autoptr (GBytes) blob = stg_column_bytes (st, 0);
      ApiScheduledTask *task = stg_thrift_new_from_bytes (API_TYPE_SCHEDULED_TASK, blob, NULL);
      if (task != NULL)
        g_ptr_array_add (out, task);
    }
  if (rc != STG_DB_DONE)
    {
      stg_store_fail (store, error, "listing ended tasks");
      return NULL;
    }
  return g_steal_pointer (&out);
}

gboolean
stg_store_delete_ended_tasks (StgStore *store, const ApiJobKey *key, gint32 instance,
                              guint *deleted, GError **error)
{
  g_autoptr (StgStmt) st = job_stmt (store,
                                     "DELETE FROM ended_tasks WHERE role = ?1 AND environment = ?2 "
                                     "AND name = ?3 AND (?4 < 0 OR instance_id = ?4)",
                                     key, error);
  if (st == NULL)
    return FALSE;
  stg_db_bind_int64 (st, 4, instance);
  if (!stg_store_exec_stmt (store, st, error, "pruning ended tasks"))
    return FALSE;
  *deleted += (guint) stg_db_changes (st);
  return TRUE;
}
