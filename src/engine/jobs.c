/* jobs.c: the engine's job mutations besides createJob: kill instances,
 * add instances (within the role's quota), restart instances, prune ended
 * ones and their history.
 *
 * Each checks the job and the instance ids, refuses while the job has an
 * active update (the update owns the job's instances until it ends), writes
 * the intent in one step, and leaves the doing to the runtime. Main-loop
 * thread only.
 */
#include "config.h"

#include "common/enums.h"
#include "common/error.h"
#include "common/jobkey.h"
#include "engine/engine_private.h"
#include "engine/step_private.h"
#include "engine/task_private.h"
#include "engine/update_private.h"

/* The job, checked, and not being updated. */
static StgJobRow *
job_for_change (StgEngine *e, const ApiJobKey *key, const gchar *verb, GError **error)
{
  g_autoptr (GError) local = NULL;

  if (!stg_job_key_check (key, "job", &local))
    {
      g_set_error_literal (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID, local->message);
      return NULL;
    }
  StgJobRow *job = stg_store_get_job (e->store, key, error);
  if (job == NULL)
    {
      stg_engine_wrap_error (error);
      return NULL;
    }
  StgUpdate *u = stg_engine_update_for_job (e, job->id);
  if (u != NULL)
    {
      g_autofree gchar *name = stg_job_key_to_string (key);
      g_set_error (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_UPDATING,
                   "cannot %s instances of %s while update %s is active: abort it first", verb,
                   name, u->uid);
      stg_job_row_free (job);
      return NULL;
    }
  stg_engine_finish_starts (e, job->id);
  return job;
}

/* The instances of @job named in @set (gint32* elements), ascending; all of
 * them when @set is NULL or empty. Unknown ids are an error. */
static GArray *
pick (StgEngine *e, StgJobRow *job, GHashTable *set, GError **error)
{
  g_autoptr (GArray) rows = stg_store_list_instances (e->store, job->id, error);
  g_autoptr (GArray) ids = g_array_new (FALSE, FALSE, sizeof (gint32));

  if (rows == NULL)
    {
      stg_engine_wrap_error (error);
      return NULL;
    }
  g_autoptr (GHashTable) present = g_hash_table_new (NULL, NULL);
  for (guint i = 0; i < rows->len; i++)
    {
      gint32 id = g_array_index (rows, StgInstanceRow, i).instance_id;
      g_hash_table_add (present, GINT_TO_POINTER (id));
      if (set == NULL || g_hash_table_size (set) == 0)
        g_array_append_val (ids, id);
    }
  if (set != NULL && g_hash_table_size (set) > 0)
    {
      GHashTableIter it;
      gpointer key;
      g_hash_table_iter_init (&it, set);
      while (g_hash_table_iter_next (&it, &key, NULL))
        {
          gint32 id = *(gint32 *) key;
          if (!g_hash_table_contains (present, GINT_TO_POINTER (id)))
            {
              g_autofree gchar *name = stg_job_key_to_string (job->key);
              g_set_error (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID,
                           "job %s has no instance %d", name, id);
              return NULL;
            }
          g_array_append_val (ids, id);
        }
    }
  return g_steal_pointer (&ids);
}

gboolean
stg_engine_kill_instances (StgEngine *e, const ApiJobKey *key, GHashTable *instances,
                           const gchar *user, const gchar *message, GError **error)
{
  g_autoptr (StgJobRow) job = job_for_change (e, key, "kill", error);
  g_autoptr (GArray) ids = job ? pick (e, job, instances, error) : NULL;

  (void) user;
  (void) message;
  if (ids == NULL)
    return FALSE;
  stg_engine_step_begin (e);
  if (e->runtime == NULL)
    {
      /* Nothing runs: the rows are the whole of the instances. */
      GError *local = NULL;
      for (guint i = 0; i < ids->len && local == NULL; i++)
        stg_store_delete_instance (e->store, job->id, g_array_index (ids, gint32, i), &local);
      if (local == NULL && ids->len == (guint) job->instance_count)
        stg_store_delete_job (e->store, job->id, &local);
      if (local != NULL)
        {
          stg_engine_step_fail (e, local);
          g_error_free (local);
        }
    }
  for (guint i = 0; i < ids->len && e->runtime != NULL; i++)
    stg_engine_queue (e, STG_ACT_KILL, job->id, g_array_index (ids, gint32, i), 0, NULL);
  stg_engine_announce (e, job->key, NULL);
  return stg_engine_step_end (e, error);
}

/* Instance @row has ended for good: a terminal status, and its slot runs
 * nothing and will not start again. */
static gboolean
ended (StgEngine *e, gint64 job_id, const StgInstanceRow *row)
{
  StgTaskObservation obs = { 0 };

  if (!stg_schedule_status_is_terminal (row->status))
    return FALSE;
  if (e->runtime == NULL)
    return TRUE;
  stg_runtime_observe (e->runtime, job_id, row->instance_id, &obs);
  return obs.phase == STG_TASK_FINISHED || obs.phase == STG_TASK_ABSENT;
}

gboolean
stg_engine_prune_tasks (StgEngine *e, const ApiJobKey *key, GHashTable *instances, gboolean history,
                        guint *pruned, GError **error)
{
  g_autoptr (StgJobRow) job = job_for_change (e, key, "prune", error);
  g_autoptr (GArray) rows = job ? stg_store_list_instances (e->store, job->id, error) : NULL;
  g_autoptr (GArray) gone = g_array_new (FALSE, FALSE, sizeof (gint32));

  *pruned = 0;
  if (rows == NULL)
    {
      stg_engine_wrap_error (error);
      return FALSE;
    }
  for (guint i = 0; i < rows->len; i++)
    {
      const StgInstanceRow *row = &g_array_index (rows, StgInstanceRow, i);
      if ((instances == NULL || g_hash_table_contains (instances, &row->instance_id)) &&
          ended (e, job->id, row))
        g_array_append_val (gone, row->instance_id);
    }
  /* The runtime forgets an ended slot at once: its row goes with it. */
  stg_engine_step_begin (e);
  for (guint i = 0; i < gone->len; i++)
    {
      gint32 id = g_array_index (gone, gint32, i);
      GError *local = NULL;
      if (e->runtime != NULL)
        stg_engine_queue (e, STG_ACT_KILL, job->id, id, 0, NULL);
      else
        stg_engine_step_check (e, stg_store_delete_instance (e->store, job->id, id, &local),
                               &local);
    }
  stg_engine_announce (e, job->key, NULL);
  if (!stg_engine_step_end (e, error))
    return FALSE;
  guint events = 0;
  gboolean ok = TRUE;
  guint kept = 0;
  for (guint i = 0; ok && i < gone->len; i++)
    ok = stg_store_delete_task_events (e->store, job->id, g_array_index (gone, gint32, i), &events,
                                       error) &&
         stg_store_delete_ended_tasks (e->store, key, g_array_index (gone, gint32, i), &kept,
                                       error);
  if (ok && history)
    ok = stg_store_delete_task_events (e->store, job->id, -1, &events, error);
  if (!ok)
    {
      stg_engine_wrap_error (error);
      return FALSE;
    }
  *pruned = gone->len;
  g_message ("engine: pruned %u ended instance%s and %u task event%s of %s/%s/%s", gone->len,
             gone->len == 1 ? "" : "s", events, events == 1 ? "" : "s", key->role, key->environment,
             key->name);
  return TRUE;
}

gboolean
stg_engine_prune_ended_tasks (StgEngine *e, const ApiJobKey *key, gint32 instance, guint *pruned,
                              GError **error)
{
  if (stg_store_delete_ended_tasks (e->store, key, instance, pruned, error))
    return TRUE;
  stg_engine_wrap_error (error);
  return FALSE;
}

gboolean
stg_engine_add_instances (StgEngine *e, const ApiJobKey *key, gint32 from, gint32 count,
                          const gchar *user, GError **error)
{
  g_autoptr (StgJobRow) job = job_for_change (e, key, "add", error);
  StgInstanceRow source;
  GError *local = NULL;

  (void) user;
  if (job == NULL)
    return FALSE;
  if (count < 1 || count > e->limits.max_instances - job->instance_count)
    {
      g_set_error (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID,
                   "count must be between 1 and %d (the job has %d of at most %d instances)",
                   MAX (0, e->limits.max_instances - job->instance_count), job->instance_count,
                   e->limits.max_instances);
      return FALSE;
    }
  if (!stg_store_get_instance (e->store, job->id, from, &source, error))
    {
      g_clear_error (error);
      g_autofree gchar *name = stg_job_key_to_string (key);
      g_set_error (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID,
                   "key.instanceId: job %s has no instance %d", name, from);
      return FALSE;
    }
  g_autoptr (GArray) rows = stg_store_list_instances (e->store, job->id, error);
  if (rows == NULL)
    {
      stg_engine_wrap_error (error);
      return FALSE;
    }
  gint32 next = rows->len == 0 ? 0 : g_array_index (rows, StgInstanceRow, rows->len - 1).instance_id + 1;
  g_autoptr (ApiTaskConfig) task = stg_store_get_config (e->store, source.config_id, error);
  if (task == NULL || !stg_quota_check_add (e, key, task, count, error))
    {
      stg_engine_wrap_error (error);
      return FALSE;
    }

  stg_engine_step_begin (e);
  for (gint32 i = 0; i < count && local == NULL; i++)
    if (stg_store_set_instance_config (e->store, job->id, next + i, source.config_id, &local))
      stg_engine_queue (e, STG_ACT_APPLY, job->id, next + i, source.config_id, NULL);
  if (local != NULL)
    {
      stg_engine_step_fail (e, local);
      g_error_free (local);
    }
  stg_engine_announce (e, job->key, NULL);
  return stg_engine_step_end (e, error);
}

gboolean
stg_engine_restart_instances (StgEngine *e, const ApiJobKey *key, GHashTable *instances,
                              const gchar *user, GError **error)
{
  g_autoptr (StgJobRow) job = job_for_change (e, key, "restart", error);
  g_autoptr (GArray) ids = job ? pick (e, job, instances, error) : NULL;

  (void) user;
  if (ids == NULL)
    return FALSE;
  stg_engine_step_begin (e);
  for (guint i = 0; i < ids->len; i++)
    stg_engine_queue (e, STG_ACT_RESTART, job->id, g_array_index (ids, gint32, i), 0, NULL);
  stg_engine_announce (e, job->key, NULL);
  return stg_engine_step_end (e, error);
}

gchar *
stg_engine_instance_cause (StgEngine *e, const ApiJobKey *key, gint32 instance, gint64 *since_ms)
{
  g_autoptr (StgJobRow) job = stg_store_get_job (e->store, key, NULL);
  StgTaskObservation obs = { 0 };

  *since_ms = 0;
  if (job == NULL || e->runtime == NULL || instance < 0 || instance >= job->instance_count)
    return NULL;
  stg_runtime_observe (e->runtime, job->id, instance, &obs);
  if (obs.cause == NULL)
    return NULL;
  *since_ms = obs.cause_ms;
  return g_strdup (obs.cause);
}

gboolean
stg_engine_instance_usage (StgEngine *e, gint64 job_id, gint32 instance, StgInstanceUsage *out)
{
  *out = STG_INSTANCE_USAGE_UNKNOWN;
  return e->runtime != NULL && stg_runtime_usage (e->runtime, job_id, instance, out);
}

gboolean
stg_engine_instance_announcement (StgEngine *e, gint64 job_id, gint32 instance,
                                  StgAnnouncement *out)
{
  *out = (StgAnnouncement){ 0 };
  return e->runtime != NULL && stg_runtime_announcement (e->runtime, job_id, instance, out);
}

GBytes *
stg_engine_read_log (StgEngine *e, const ApiJobKey *key, gint32 instance, const StgLogQuery *query,
                     StgLogInfo *info, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autoptr (StgJobRow) job = stg_store_get_job (e->store, key, &local);

  if (job == NULL)
    {
      g_set_error (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_NOT_FOUND, "%s", local->message);
      return NULL;
    }
  if (instance < 0 || instance >= job->instance_count)
    {
      g_set_error (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_NOT_FOUND,
                   "%s/%s/%s has no instance %d (it has %d)", key->role, key->environment,
                   key->name, instance, job->instance_count);
      return NULL;
    }
  GBytes *bytes = stg_runtime_read_log (e->runtime, job->id, instance, query, info, &local);
  if (bytes == NULL)
    g_set_error (error, STG_ENGINE_ERROR,
                 g_error_matches (local, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_FAILED)
                     ? STG_ENGINE_ERROR_FAILED
                     : STG_ENGINE_ERROR_NOT_FOUND,
                 "%s", local->message);
  return bytes;
}
