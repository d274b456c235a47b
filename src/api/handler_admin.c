/* handler_admin.c: StgHandler's quota calls, getQuota (a read: the role's
 * quota and consumption by pool, through the engine) and AuroraAdmin's
 * setQuota; and AuroraAdmin's snapshot (the store made durable now),
 * reconciliation (the runtime compares what runs with the store) and
 * pruneTasks (ended tasks and their history removed, through the engine).
 * The admin calls need a user of every role (roles = *). Main-loop thread
 * only.
 */
#include "config.h"

#include <math.h>

#include "api/handler_private.h"
#include "common/enums.h"
#include "common/jobkey.h"

/* Aurora's ResourceAggregate of @bag: one numCpus, ramMb and diskMb. */
static ApiResourceAggregate *
aggregate_of (const StgResourceBag *bag)
{
  ApiResourceAggregate *a = g_object_new (API_TYPE_RESOURCE_AGGREGATE, NULL);

  g_hash_table_add (a->resources, g_object_new (API_TYPE_RESOURCE, "numCpus", bag->cpus, NULL));
  g_hash_table_add (a->resources, g_object_new (API_TYPE_RESOURCE, "ramMb",
                                                (gint64) llround (bag->ram_mb), NULL));
  g_hash_table_add (a->resources, g_object_new (API_TYPE_RESOURCE, "diskMb",
                                                (gint64) llround (bag->disk_mb), NULL));
  a->__isset_resources = TRUE;
  return a;
}

static gboolean
handler_get_quota (ApiReadOnlySchedulerIf *iface, ApiResponse **_return, const gchar *role,
                   GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  StgQuotaInfo info;
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "getQuota", NULL, FALSE))
    return TRUE;
  if (!stg_engine_get_quota (self->ctx.engine, role, &info, &error))
    return stg_handler_answer_error (self, *_return, "getQuota", error);
  static const struct
  {
    StgQuotaPool pool;
    const gchar *field;
  } fields[] = {
    { STG_QUOTA_PROD_SHARED, "prodSharedConsumption" },
    { STG_QUOTA_NONPROD_SHARED, "nonProdSharedConsumption" },
    { STG_QUOTA_PROD_DEDICATED, "prodDedicatedConsumption" },
    { STG_QUOTA_NONPROD_DEDICATED, "nonProdDedicatedConsumption" },
  };
  g_autoptr (ApiResourceAggregate) quota = aggregate_of (&info.quota);
  g_autoptr (ApiGetQuotaResult) qr = g_object_new (API_TYPE_GET_QUOTA_RESULT, "quota", quota, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (fields); i++)
    {
      g_autoptr (ApiResourceAggregate) used = aggregate_of (&info.consumption[fields[i].pool]);
      g_object_set (qr, fields[i].field, used, NULL);
    }
  ApiResult *result = stg_result_of (*_return);
  g_object_set (result, "getQuotaResult", qr, NULL);
  stg_response_ok (*_return, self->ctx.cluster, result);
  return TRUE;
}

static gboolean
handler_set_quota (ApiAuroraAdminIf *iface, ApiResponse **_return, const gchar *role,
                   const ApiResourceAggregate *quota, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  (void) unused;

  /* Quotas are the operators' (every role's user). */
  if (!stg_handler_allowed (self, *_return, "setQuota", NULL, TRUE))
    return TRUE;
  if (!stg_engine_set_quota (self->ctx.engine, role, quota, self->user, &error))
    return stg_handler_answer_error (self, *_return, "setQuota", error);
  stg_response_ok (*_return, self->ctx.cluster, NULL);
  return TRUE;
}

static gboolean
handler_snapshot (ApiAuroraAdminIf *iface, ApiResponse **_return, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "snapshot", NULL, TRUE))
    return TRUE;
  g_autofree gchar *what = stg_store_snapshot (self->ctx.store, &error);
  if (what == NULL)
    return stg_handler_answer_error (self, *_return, "snapshot", error);
  g_message ("api: snapshot by %s: %s", self->user ? self->user : "(anonymous)", what);
  stg_response_ok (*_return, self->ctx.cluster, NULL);
  stg_response_add_detail (*_return, "%s", what);
  return TRUE;
}

static gboolean
reconcile (StgHandler *self, ApiResponse *response, const gchar *method, gboolean implicit,
           gint32 batch_size)
{
  g_autoptr (GError) error = NULL;
  g_autofree gchar *summary = NULL;

  if (!stg_handler_allowed (self, response, method, NULL, TRUE))
    return TRUE;
  if (!stg_engine_reconcile (self->ctx.engine, implicit, batch_size, &summary, &error))
    return stg_handler_answer_error (self, response, method, error);
  stg_response_ok (response, self->ctx.cluster, NULL);
  stg_response_add_detail (response, "%s", summary);
  return TRUE;
}

static gboolean
handler_trigger_explicit (ApiAuroraAdminIf *iface, ApiResponse **_return,
                          const ApiExplicitReconciliationSettings *settings, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  (void) unused;

  /* Aurora's check and message; no batch size: Aurora's default. */
  if (settings != NULL && settings->__isset_batchSize && settings->batchSize <= 0 &&
      stg_handler_allowed (self, *_return, "triggerExplicitTaskReconciliation", NULL, TRUE))
    {
      stg_response_fail (*_return, self->ctx.cluster, API_RESPONSE_CODE_INVALID_REQUEST,
                         "Batch size must be greater than zero.");
      return TRUE;
    }
  return reconcile (self, *_return, "triggerExplicitTaskReconciliation", FALSE,
                    settings != NULL && settings->__isset_batchSize ? settings->batchSize : 0);
}

static gboolean
handler_trigger_implicit (ApiAuroraAdminIf *iface, ApiResponse **_return, GError **unused)
{
  (void) unused;
  return reconcile (HANDLER (iface), *_return, "triggerImplicitTaskReconciliation", TRUE, 0);
}

static const gint TERMINAL[] = { API_SCHEDULE_STATUS_FINISHED, API_SCHEDULE_STATUS_FAILED,
                                 API_SCHEDULE_STATUS_KILLED, API_SCHEDULE_STATUS_LOST };

/* @q's statuses, all terminal; unset: every terminal one. FALSE when one
 * is not. */
static gboolean
terminal_statuses (ApiTaskQuery *q)
{
  GHashTableIter it;
  gpointer key;

  if (!q->__isset_statuses || q->statuses == NULL || g_hash_table_size (q->statuses) == 0)
    {
      g_autoptr (GHashTable) all = g_hash_table_new (NULL, NULL);
      for (guint i = 0; i < G_N_ELEMENTS (TERMINAL); i++)
        g_hash_table_add (all, GINT_TO_POINTER (TERMINAL[i]));
      g_object_set (q, "statuses", all, NULL);
      return TRUE;
    }
  g_hash_table_iter_init (&it, q->statuses);
  while (g_hash_table_iter_next (&it, &key, NULL))
    if (!stg_schedule_status_is_terminal (GPOINTER_TO_INT (key)))
      return FALSE;
  return TRUE;
}

/* The instance ids of @tasks (ApiScheduledTask*) of job @key, as a set of
 * gint32*. */
static GHashTable *
instances_of (GPtrArray *tasks, const ApiJobKey *key)
{
  GHashTable *ids = g_hash_table_new_full (g_int_hash, g_int_equal, g_free, NULL);

  for (guint i = 0; i < tasks->len; i++)
    {
      const ApiAssignedTask *a = ((ApiScheduledTask *) tasks->pdata[i])->assignedTask;
      if (stg_job_key_equal (a->task->job, key))
        g_hash_table_add (ids, g_memdup2 (&a->instanceId, sizeof a->instanceId));
    }
  return ids;
}

/* Prunes what @tasks holds of each job @q matches; a job being updated is
 * left, and said so in @response. */
static gboolean
prune_jobs (StgHandler *self, ApiResponse *response, ApiTaskQuery *q, GPtrArray *tasks,
            guint *pruned, GError **error)
{
  const gchar *role = q->__isset_role && q->role && q->role[0] ? q->role : NULL;
  g_autoptr (GPtrArray) jobs = stg_store_list_jobs (self->ctx.store, role, error);
  /* The history of gone instances is a job's, unless the query names some. */
  gboolean history = g_hash_table_contains (q->statuses,
                                            GINT_TO_POINTER (API_SCHEDULE_STATUS_KILLED)) &&
                     !(q->__isset_instanceIds && q->instanceIds &&
                       g_hash_table_size (q->instanceIds)) &&
                     !(q->__isset_taskIds && q->taskIds && g_hash_table_size (q->taskIds));

  if (jobs == NULL)
    return FALSE;
  for (guint j = 0; j < jobs->len; j++)
    {
      const StgJobRow *job = jobs->pdata[j];
      g_autoptr (GError) local = NULL;
      g_autoptr (GHashTable) ids = instances_of (tasks, job->key);
      guint n = 0;
      if (!stg_handler_task_query_job (q, job->key) || (g_hash_table_size (ids) == 0 && !history))
        continue;
      if (stg_engine_prune_tasks (self->ctx.engine, job->key, ids, history, &n, &local))
        *pruned += n;
      else if (g_error_matches (local, STG_ENGINE_ERROR, STG_ENGINE_ERROR_UPDATING))
        stg_response_add_detail (response, "%s", local->message);
      else
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return FALSE;
        }
    }
  return TRUE;
}

/* Removes the ended tasks kept of the instances of @tasks that ended (the
 * jobs' own instances are pruned already: prune_jobs). */
static gboolean
prune_ended (StgHandler *self, GPtrArray *tasks, guint *pruned, GError **error)
{
  for (guint i = 0; i < tasks->len; i++)
    {
      const ApiScheduledTask *task = tasks->pdata[i];
      const ApiAssignedTask *a = task->assignedTask;
      if (stg_store_status_ended (task->status) &&
          !stg_engine_prune_ended_tasks (self->ctx.engine, a->task->job, a->instanceId, pruned,
                                         error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
handler_prune_tasks (ApiAuroraAdminIf *iface, ApiResponse **_return, const ApiTaskQuery *query,
                     GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiTaskQuery) q = query ? stg_thrift_copy ((gpointer) query)
                                     : g_object_new (API_TYPE_TASK_QUERY, NULL);
  guint pruned = 0;
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "pruneTasks", NULL, TRUE))
    return TRUE;
  if (!terminal_statuses (q))
    {
      stg_response_fail (*_return, self->ctx.cluster, API_RESPONSE_CODE_INVALID_REQUEST,
                         "Tasks in non-terminal state cannot be pruned.");
      return TRUE;
    }
  stg_response_ok (*_return, self->ctx.cluster, NULL);
  g_autoptr (GPtrArray) tasks = stg_handler_query_tasks (self->ctx.store, q, FALSE, &error);
  if (tasks == NULL || !prune_jobs (self, *_return, q, tasks, &pruned, &error) ||
      !prune_ended (self, tasks, &pruned, &error))
    return stg_handler_answer_error (self, *_return, "pruneTasks", error);
  stg_response_add_detail (*_return, "pruned %u ended task%s", pruned, pruned == 1 ? "" : "s");
  return TRUE;
}

const StgHandlerMethod stg_handler_admin_methods[] = {
  STG_READ_METHOD (get_quota, handler_get_quota),
  STG_ADMIN_METHOD (set_quota, handler_set_quota),
  STG_ADMIN_METHOD (snapshot, handler_snapshot),
  STG_ADMIN_METHOD (trigger_explicit_task_reconciliation, handler_trigger_explicit),
  STG_ADMIN_METHOD (trigger_implicit_task_reconciliation, handler_trigger_implicit),
  STG_ADMIN_METHOD (prune_tasks, handler_prune_tasks),
  { 0, NULL },
};
