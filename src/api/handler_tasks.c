/* handler_tasks.c: the task read methods: getTasksStatus,
 * getTasksWithoutConfigs (TaskQuery filters, offset and limit) and
 * getConfigSummary. Tasks are the instance rows the runtime keeps up to
 * date, and, for a query that asks for an ended status, the tasks that
 * ended with their instance (kept until pruned); a task id names the job,
 * the instance and the run: ROLE-ENV-NAME-INSTANCE-RUN. Main-loop thread only.
 */
#include "config.h"

#include "api/handler_private.h"
#include "common/jobkey.h"
#include "common/ranges.h"
#include "store/store.h"

#define MAX_TASK_EVENTS 50

/* A C GLib client writes every field, so an empty string means "unset". */
static const gchar *
term (gboolean isset, const gchar *value)
{
  return isset && value != NULL && value[0] != '\0' ? value : NULL;
}

gboolean
stg_handler_task_query_job (const ApiTaskQuery *q, const ApiJobKey *key)
{
  const gchar *env = term (q->__isset_environment, q->environment);
  const gchar *name = term (q->__isset_jobName, q->jobName);

  if ((env && g_strcmp0 (env, key->environment) != 0) || (name && g_strcmp0 (name, key->name) != 0))
    return FALSE;
  if (!q->__isset_jobKeys || q->jobKeys == NULL || g_hash_table_size (q->jobKeys) == 0)
    return TRUE;
  GHashTableIter it;
  gpointer k;
  g_hash_table_iter_init (&it, q->jobKeys);
  while (g_hash_table_iter_next (&it, &k, NULL))
    if (stg_job_key_equal (k, key))
      return TRUE;
  return FALSE;
}

static gboolean
instance_matches (const ApiTaskQuery *q, gint status, gint32 instance_id, const gchar *task_id)
{
  GHashTableIter it;
  gpointer k;
  gboolean any = FALSE, found = FALSE;

  if (q->__isset_statuses && q->statuses != NULL && g_hash_table_size (q->statuses) > 0 &&
      !g_hash_table_contains (q->statuses, GINT_TO_POINTER (status)))
    return FALSE;
  if (q->__isset_instanceIds && q->instanceIds != NULL)
    {
      g_hash_table_iter_init (&it, q->instanceIds);
      while (g_hash_table_iter_next (&it, &k, NULL))
        {
          any = TRUE;
          found = found || *(const gint32 *) k == instance_id;
        }
      if (any && !found)
        return FALSE;
    }
  if (q->__isset_taskIds && q->taskIds != NULL && g_hash_table_size (q->taskIds) > 0 &&
      !g_hash_table_contains (q->taskIds, task_id))
    return FALSE;
  return TRUE;
}

/* A copy of @config that carries no executor data (getTasksWithoutConfigs). */
static ApiTaskConfig *
without_data (ApiTaskConfig *config)
{
  ApiTaskConfig *copy = stg_thrift_copy (config);
  if (copy != NULL && copy->executorConfig != NULL)
    g_object_set (copy->executorConfig, "data", "", NULL);
  return copy;
}

/* Whether @q asks for an ended status (FINISHED, FAILED, KILLED, LOST). */
static gboolean
asks_ended (const ApiTaskQuery *q)
{
  GHashTableIter it;
  gpointer k;

  if (!q->__isset_statuses || q->statuses == NULL)
    return FALSE;
  g_hash_table_iter_init (&it, q->statuses);
  while (g_hash_table_iter_next (&it, &k, NULL))
    if (stg_store_status_ended (GPOINTER_TO_INT (k)))
      return TRUE;
  return FALSE;
}

/* Adds to @out the ended tasks (killed with their instance, kept until
 * pruned) that @q matches, past *@skip of them, up to @limit tasks in all. */
static gboolean
add_ended (StgStore *store, const ApiTaskQuery *q, gboolean with_configs, GPtrArray *out,
           gint64 *skip, gint64 limit, GError **error)
{
  g_autoptr (GPtrArray) ended = stg_store_list_ended_tasks (store, term (q->__isset_role, q->role),
                                                            error);

  if (ended == NULL)
    return FALSE;
  for (guint i = 0; i < ended->len && (gint64) out->len < limit; i++)
    {
      ApiScheduledTask *task = ended->pdata[i];
      ApiAssignedTask *a = task->assignedTask;
      if (!stg_handler_task_query_job (q, a->task->job) ||
          !instance_matches (q, task->status, a->instanceId, a->taskId))
        continue;
      if (*skip > 0)
        {
          (*skip)--;
          continue;
        }
      if (!with_configs && a->task->executorConfig != NULL)
        g_object_set (a->task->executorConfig, "data", "", NULL);
      g_ptr_array_add (out, g_object_ref (task));
    }
  return TRUE;
}

GPtrArray *
stg_handler_query_tasks (StgStore *store, const ApiTaskQuery *q, gboolean with_configs,
                         GError **error)
{
  const gchar *role = term (q->__isset_role, q->role);
  g_autoptr (GPtrArray) jobs = stg_store_list_jobs (store, role, error);
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func (g_object_unref);
  gint64 skip = q->__isset_offset ? MAX (q->offset, 0) : 0;
  gint64 limit = q->__isset_limit && q->limit > 0 ? q->limit : G_MAXINT64;

  if (jobs == NULL)
    return NULL;
  for (guint j = 0; j < jobs->len && (gint64) out->len < limit; j++)
    {
      StgJobRow *job = jobs->pdata[j];
      if (!stg_handler_task_query_job (q, job->key))
        continue;
      g_autoptr (GArray) rows = stg_store_list_instances (store, job->id, error);
      g_autoptr (GHashTable) configs = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                                              g_object_unref);
      if (rows == NULL)
        return NULL;
      for (guint i = 0; i < rows->len && (gint64) out->len < limit; i++)
        {
          const StgInstanceRow *row = &g_array_index (rows, StgInstanceRow, i);
          g_autofree gchar *task_id = stg_job_key_task_id (job->key, row->instance_id, row->run_id);
          if (!instance_matches (q, row->status, row->instance_id, task_id))
            continue;
          if (skip > 0)
            {
              skip--;
              continue;
            }
          gint64 config_id = row->run_config_id ? row->run_config_id : row->config_id;
          ApiTaskConfig *config = g_hash_table_lookup (configs, &config_id);
          if (config == NULL)
            {
              g_autoptr (ApiTaskConfig) stored = stg_store_get_config (store, config_id, error);
              if (stored == NULL)
                return NULL;
              config = with_configs ? g_object_ref (stored) : without_data (stored);
              if (config == NULL)
                {
                  g_set_error (error, STG_STORE_ERROR, STG_STORE_ERROR_FAILED,
                               "cannot copy configuration %" G_GINT64_FORMAT, config_id);
                  return NULL;
                }
              g_hash_table_insert (configs, g_memdup2 (&config_id, sizeof config_id), config);
            }
          ApiScheduledTask *task = stg_store_scheduled_task (store, job->key, job->id, row, config,
                                                             g_get_host_name (), MAX_TASK_EVENTS,
                                                             error);
          if (task == NULL)
            return NULL;
          g_ptr_array_add (out, task);
        }
    }
  /* Aurora keeps terminal tasks until they are pruned: those asked for by
   * status come after the live ones. */
  if (asks_ended (q) && !add_ended (store, q, with_configs, out, &skip, limit, error))
    return NULL;
  return g_steal_pointer (&out);
}

static gboolean
answer_tasks (StgHandler *self, ApiResponse *response, const ApiTaskQuery *q, gboolean with_configs,
              const gchar *method)
{
  g_autoptr (GError) error = NULL;

  if (!stg_handler_allowed (self, response, method, NULL, FALSE))
    return TRUE;
  if (q == NULL)
    {
      g_autoptr (ApiTaskQuery) all = g_object_new (API_TYPE_TASK_QUERY, NULL);
      return answer_tasks (self, response, all, with_configs, method);
    }
  g_autoptr (GPtrArray) tasks = stg_handler_query_tasks (self->ctx.store, q, with_configs, &error);
  if (tasks == NULL)
    return stg_handler_answer_error (self, response, method, error);
  g_autoptr (ApiScheduleStatusResult) sr = g_object_new (API_TYPE_SCHEDULE_STATUS_RESULT, NULL);
  for (guint i = 0; i < tasks->len; i++)
    g_ptr_array_add (sr->tasks, g_object_ref (tasks->pdata[i]));
  return stg_handler_answer_ok (self, response, "scheduleStatusResult", sr);
}

static gboolean
handler_get_tasks_status (ApiReadOnlySchedulerIf *iface, ApiResponse **_return, const ApiTaskQuery *q,
                          GError **unused)
{
  (void) unused;
  return answer_tasks (HANDLER (iface), *_return, q, TRUE, "getTasksStatus");
}

static gboolean
handler_get_tasks_without_configs (ApiReadOnlySchedulerIf *iface, ApiResponse **_return,
                                   const ApiTaskQuery *q, GError **unused)
{
  (void) unused;
  return answer_tasks (HANDLER (iface), *_return, q, FALSE, "getTasksWithoutConfigs");
}

/* getConfigSummary: the job's configurations and the instances of each. */
static gboolean
handler_get_config_summary (ApiReadOnlySchedulerIf *iface, ApiResponse **_return, const ApiJobKey *key,
                            GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "getConfigSummary", NULL, FALSE))
    return TRUE;
  if (key == NULL || !stg_job_key_check (key, "job", &error))
    {
      if (error == NULL)
        g_set_error_literal (&error, STG_JOB_KEY_ERROR, STG_JOB_KEY_ERROR_INVALID, "job: missing");
      return stg_handler_answer_error (self, *_return, "getConfigSummary", error);
    }
  g_autoptr (StgJobRow) job = stg_store_get_job (self->ctx.store, key, &error);
  g_autoptr (GArray) rows = job ? stg_store_list_instances (self->ctx.store, job->id, &error) : NULL;
  if (rows == NULL)
    return stg_handler_answer_error (self, *_return, "getConfigSummary", error);

  /* Instances by the config they run (or are to run). */
  g_autoptr (GHashTable) by_config = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                                            (GDestroyNotify) stg_ranges_free);
  for (guint i = 0; i < rows->len; i++)
    {
      const StgInstanceRow *row = &g_array_index (rows, StgInstanceRow, i);
      gint64 id = row->run_config_id ? row->run_config_id : row->config_id;
      StgRanges *r = g_hash_table_lookup (by_config, &id);
      if (r == NULL)
        g_hash_table_insert (by_config, g_memdup2 (&id, sizeof id), r = stg_ranges_new ());
      stg_ranges_add_one (r, row->instance_id);
    }
  g_autoptr (ApiConfigSummary) summary = g_object_new (API_TYPE_CONFIG_SUMMARY, "key", job->key, NULL);
  GHashTableIter it;
  gpointer id, ranges;
  g_hash_table_iter_init (&it, by_config);
  while (g_hash_table_iter_next (&it, &id, &ranges))
    {
      g_autoptr (ApiTaskConfig) config = stg_store_get_config (self->ctx.store, *(gint64 *) id, &error);
      if (config == NULL)
        return stg_handler_answer_error (self, *_return, "getConfigSummary", error);
      ApiConfigGroup *group = g_object_new (API_TYPE_CONFIG_GROUP, "config", config, NULL);
      for (guint i = 0; i < stg_ranges_n (ranges); i++)
        {
          StgRange r = stg_ranges_get (ranges, i);
          g_hash_table_add (group->instances, g_object_new (API_TYPE_RANGE, "first", r.first,
                                                            "last", r.last, NULL));
        }
      g_hash_table_add (summary->groups, group);
    }
  g_autoptr (ApiConfigSummaryResult) cr = g_object_new (API_TYPE_CONFIG_SUMMARY_RESULT,
                                                        "summary", summary, NULL);
  return stg_handler_answer_ok (self, *_return, "configSummaryResult", cr);
}

const StgHandlerMethod stg_handler_task_methods[] = {
  STG_READ_METHOD (get_tasks_status, handler_get_tasks_status),
  STG_READ_METHOD (get_tasks_without_configs, handler_get_tasks_without_configs),
  STG_READ_METHOD (get_config_summary, handler_get_config_summary),
  { 0, NULL },
};
