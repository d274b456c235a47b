/* handler_recovery.c: AuroraAdmin's backup and recovery calls over the
 * store's StgBackups (store/backup.c): performBackup and listBackups, and
 * Aurora's recovery flow over one staged backup: stageRecovery,
 * queryRecovery, deleteRecoveryTasks, then commitRecovery (staggerd
 * restarts itself to load it, through the context's recovered callback)
 * or unloadRecovery. Each needs a user of every role (roles = *); on
 * PostgreSQL each answers that the database's own backups apply.
 * Main-loop thread only.
 */
#include "config.h"

#include "api/handler_private.h"
#include "common/error.h"
#include "common/jobkey.h"

/* The backups, when the caller is an admin and this staggerd keeps them;
 * otherwise NULL, answered. */
static StgBackups *
backups (StgHandler *self, ApiResponse *response, const gchar *method)
{
  if (!stg_handler_allowed (self, response, method, NULL, TRUE))
    return NULL;
  if (self->ctx.backups == NULL)
    stg_response_fail (response, self->ctx.cluster, API_RESPONSE_CODE_INVALID_REQUEST,
                       "%s: this staggerd keeps no backups", method);
  return self->ctx.backups;
}

static gboolean
handler_perform_backup (ApiAuroraAdminIf *iface, ApiResponse **_return, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  StgBackups *b;
  (void) unused;

  if ((b = backups (self, *_return, "performBackup")) == NULL)
    return TRUE;
  g_autofree gchar *id = stg_backups_write (b, stg_clock_now_ms (self->ctx.clock), &error);
  if (id == NULL)
    return stg_handler_answer_error (self, *_return, "performBackup", error);
  g_message ("api: backup %s written by %s", id, self->user ? self->user : "(anonymous)");
  stg_response_ok (*_return, self->ctx.cluster, NULL);
  stg_response_add_detail (*_return, "backup %s written to %s", id, stg_backups_dir (b));
  return TRUE;
}

static gboolean
handler_list_backups (ApiAuroraAdminIf *iface, ApiResponse **_return, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  StgBackups *b;
  (void) unused;

  if ((b = backups (self, *_return, "listBackups")) == NULL)
    return TRUE;
  g_autoptr (GPtrArray) names = stg_backups_list (b, &error);
  if (names == NULL)
    return stg_handler_answer_error (self, *_return, "listBackups", error);
  g_autoptr (ApiListBackupsResult) lr = g_object_new (API_TYPE_LIST_BACKUPS_RESULT, NULL);
  for (guint i = 0; i < names->len; i++)
    g_hash_table_add (lr->backups, g_strdup (names->pdata[i]));
  return stg_handler_answer_ok (self, *_return, "listBackupsResult", lr);
}

static gboolean
handler_stage_recovery (ApiAuroraAdminIf *iface, ApiResponse **_return, const gchar *id,
                        GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  StgBackups *b;
  (void) unused;

  if ((b = backups (self, *_return, "stageRecovery")) == NULL)
    return TRUE;
  if (!stg_backups_stage (b, id, &error))
    return stg_handler_answer_error (self, *_return, "stageRecovery", error);
  g_message ("api: backup %s staged for recovery by %s", id,
             self->user ? self->user : "(anonymous)");
  stg_response_ok (*_return, self->ctx.cluster, NULL);
  stg_response_add_detail (*_return, "backup %s is staged", id);
  return TRUE;
}

/* The staged store, or NULL, answered. */
static StgStore *
staged (StgHandler *self, ApiResponse *response, const gchar *method)
{
  g_autoptr (GError) error = NULL;
  StgBackups *b = backups (self, response, method);
  StgStore *store = b ? stg_backups_staged (b, NULL, &error) : NULL;

  if (b != NULL && store == NULL)
    stg_handler_answer_error (self, response, method, error);
  return store;
}

static gboolean
handler_query_recovery (ApiAuroraAdminIf *iface, ApiResponse **_return, const ApiTaskQuery *query,
                        GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiTaskQuery) all = g_object_new (API_TYPE_TASK_QUERY, NULL);
  StgStore *store;
  (void) unused;

  if ((store = staged (self, *_return, "queryRecovery")) == NULL)
    return TRUE;
  g_autoptr (GPtrArray) tasks = stg_handler_query_tasks (store, query ? query : all, TRUE, &error);
  if (tasks == NULL)
    return stg_handler_answer_error (self, *_return, "queryRecovery", error);
  g_autoptr (ApiQueryRecoveryResult) qr = g_object_new (API_TYPE_QUERY_RECOVERY_RESULT, NULL);
  for (guint i = 0; i < tasks->len; i++)
    g_hash_table_add (qr->tasks, g_object_ref (tasks->pdata[i]));
  return stg_handler_answer_ok (self, *_return, "queryRecoveryResult", qr);
}

/* Refuses to delete tasks of a job with an active update in @store: the
 * update would go on over instances that are gone. */
static gboolean
check_no_update (StgStore *store, GPtrArray *tasks, GError **error)
{
  g_autoptr (GPtrArray) active = stg_store_list_active_updates (store, error);

  if (active == NULL)
    return FALSE;
  for (guint u = 0; u < active->len; u++)
    for (guint i = 0; i < tasks->len; i++)
      {
        const StgUpdateRow *row = active->pdata[u];
        const ApiAssignedTask *a = ((ApiScheduledTask *) tasks->pdata[i])->assignedTask;
        if (!stg_job_key_equal (row->job, a->task->job))
          continue;
        g_autofree gchar *name = stg_job_key_to_string (row->job);
        return stg_fail (error, STG_STORE_ERROR, STG_STORE_ERROR_INVALID,
                         "job %s has an active update (%s) in the staged backup: its tasks "
                         "cannot be deleted",
                         name, row->uid);
      }
  return TRUE;
}

/* Deletes instance @task of @store, and its job once it has none left. */
static gboolean
delete_task (StgStore *store, const ApiScheduledTask *task, GError **error)
{
  const ApiAssignedTask *a = task->assignedTask;
  g_autoptr (StgJobRow) job = stg_store_get_job (store, a->task->job, error);

  if (job == NULL || !stg_store_delete_instance (store, job->id, a->instanceId, error))
    return FALSE;
  return job->instance_count > 1 || stg_store_delete_job (store, job->id, error);
}

/* Deletes @tasks of @store in one transaction. */
static gboolean
delete_tasks (StgStore *store, GPtrArray *tasks, GError **error)
{
  if (!check_no_update (store, tasks, error) || !stg_store_begin (store, error))
    return FALSE;
  for (guint i = 0; i < tasks->len; i++)
    if (!delete_task (store, tasks->pdata[i], error))
      {
        stg_store_rollback (store);
        return FALSE;
      }
  return stg_store_commit (store, error);
}

static gboolean
handler_delete_recovery_tasks (ApiAuroraAdminIf *iface, ApiResponse **_return,
                               const ApiTaskQuery *query, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  StgStore *store;
  (void) unused;

  if ((store = staged (self, *_return, "deleteRecoveryTasks")) == NULL)
    return TRUE;
  g_autoptr (GPtrArray) tasks = query ? stg_handler_query_tasks (store, query, FALSE, &error)
                                      : g_ptr_array_new ();
  if (tasks == NULL || !delete_tasks (store, tasks, &error))
    return stg_handler_answer_error (self, *_return, "deleteRecoveryTasks", error);
  stg_response_ok (*_return, self->ctx.cluster, NULL);
  stg_response_add_detail (*_return, "deleted %u task%s from the staged backup", tasks->len,
                           tasks->len == 1 ? "" : "s");
  return TRUE;
}

static gboolean
handler_commit_recovery (ApiAuroraAdminIf *iface, ApiResponse **_return, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  const gchar *id = NULL;
  (void) unused;

  if (staged (self, *_return, "commitRecovery") == NULL)
    return TRUE;
  stg_backups_staged (self->ctx.backups, &id, NULL);
  g_autofree gchar *name = g_strdup (id);
  if (!stg_backups_commit (self->ctx.backups, &error))
    return stg_handler_answer_error (self, *_return, "commitRecovery", error);
  g_message ("api: recovery from backup %s committed by %s", name,
             self->user ? self->user : "(anonymous)");
  stg_response_ok (*_return, self->ctx.cluster, NULL);
  stg_response_add_detail (*_return, "backup %s replaces the store: staggerd restarts to load it",
                           name);
  if (self->ctx.recovered != NULL)
    self->ctx.recovered (self->ctx.recovered_data);
  return TRUE;
}

static gboolean
handler_unload_recovery (ApiAuroraAdminIf *iface, ApiResponse **_return, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  StgBackups *b;
  (void) unused;

  if ((b = backups (self, *_return, "unloadRecovery")) == NULL)
    return TRUE;
  if (!stg_backups_unload (b, &error))
    return stg_handler_answer_error (self, *_return, "unloadRecovery", error);
  return stg_handler_answer_ok (self, *_return, NULL, NULL);
}

const StgHandlerMethod stg_handler_recovery_methods[] = {
  STG_ADMIN_METHOD (perform_backup, handler_perform_backup),
  STG_ADMIN_METHOD (list_backups, handler_list_backups),
  STG_ADMIN_METHOD (stage_recovery, handler_stage_recovery),
  STG_ADMIN_METHOD (query_recovery, handler_query_recovery),
  STG_ADMIN_METHOD (delete_recovery_tasks, handler_delete_recovery_tasks),
  STG_ADMIN_METHOD (commit_recovery, handler_commit_recovery),
  STG_ADMIN_METHOD (unload_recovery, handler_unload_recovery),
  { 0, NULL },
};
