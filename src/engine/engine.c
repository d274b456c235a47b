/* engine.c: StgEngine: construction, recovery and job mutations.
 *
 * Owns nothing but its limits: the store, clock and runtime are borrowed
 * from the daemon. Job mutations validate first, then write the store (one
 * transaction), then tell the runtime. Main-loop thread only.
 */
#include "config.h"

#include "common/jobkey.h"
#include "engine/engine_private.h"

G_DEFINE_QUARK (stg-engine-error-quark, stg_engine_error)

void
stg_engine_limits_init (StgEngineLimits *limits)
{
  limits->max_instances = 100000;
  limits->max_watch_ms = 24 * 3600 * 1000LL;
  limits->max_pulse_ms = 7 * 24 * 3600 * 1000LL;
}

StgEngine *
stg_engine_new (StgStore *store, StgClock *clock, StgRuntime *runtime,
                const StgEngineLimits *limits)
{
  StgEngine *engine = g_new0 (StgEngine, 1);

  engine->store = store;
  engine->clock = clock;
  engine->runtime = runtime;
  if (limits != NULL)
    engine->limits = *limits;
  else
    stg_engine_limits_init (&engine->limits);
  return engine;
}

void
stg_engine_free (StgEngine *engine)
{
  g_free (engine);
}

gboolean
stg_engine_recover (StgEngine *engine, GError **error)
{
  (void) engine;
  (void) error;
  return TRUE;
}

void
stg_engine_wrap_error (GError **error)
{
  if (error == NULL || *error == NULL || (*error)->domain == STG_ENGINE_ERROR)
    return;
  if ((*error)->domain == STG_STORE_ERROR && (*error)->code == STG_STORE_ERROR_EXISTS)
    (*error)->code = STG_ENGINE_ERROR_INVALID;
  else if ((*error)->domain == STG_STORE_ERROR && (*error)->code == STG_STORE_ERROR_NOT_FOUND)
    (*error)->code = STG_ENGINE_ERROR_NOT_FOUND;
  else if ((*error)->domain == STG_RUNTIME_ERROR && (*error)->code == STG_RUNTIME_ERROR_INVALID)
    (*error)->code = STG_ENGINE_ERROR_INVALID;
  else
    (*error)->code = STG_ENGINE_ERROR_FAILED;
  (*error)->domain = STG_ENGINE_ERROR;
}

ApiTaskConfig *
stg_engine_check_task_config (StgEngine *engine, const ApiTaskConfig *config,
                              const ApiJobKey *key, const gchar *what, GError **error)
{
  if (config == NULL)
    {
      g_set_error (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID, "%s is missing", what);
      return NULL;
    }
  if (config->__isset_job && config->job != NULL && config->job->role != NULL &&
      !stg_job_key_equal (config->job, key))
    {
      g_autofree gchar *a = stg_job_key_to_string (config->job);
      g_autofree gchar *b = stg_job_key_to_string (key);
      g_set_error (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID,
                   "%s.job is %s but the job is %s", what, a, b);
      return NULL;
    }
  if (engine->runtime != NULL)
    {
      const gchar *name = config->__isset_executorConfig && config->executorConfig
                            ? config->executorConfig->name : NULL;
      const gchar *data = config->__isset_executorConfig && config->executorConfig
                            ? config->executorConfig->data : NULL;
      if (!stg_runtime_validate (engine->runtime, name, data, error))
        {
          g_prefix_error (error, "%s.executorConfig: ", what);
          stg_engine_wrap_error (error);
          return NULL;
        }
    }

  ApiTaskConfig *copy = stg_thrift_copy ((gpointer) config);
  g_autoptr (ApiJobKey) job = stg_thrift_copy ((gpointer) key);
  g_object_set (copy, "job", job, NULL);
  if (!copy->__isset_owner || copy->owner == NULL || copy->owner->user == NULL)
    {
      g_autoptr (ApiIdentity) owner = g_object_new (API_TYPE_IDENTITY, "user", key->role, NULL);
      g_object_set (copy, "owner", owner, NULL);
    }
  return copy;
}

gboolean
stg_engine_create_job (StgEngine *engine, const ApiJobConfiguration *config, const gchar *user,
                       GError **error)
{
  const ApiJobKey *key;
  gint64 config_id = 0, job_id = 0;

  g_return_val_if_fail (config != NULL, FALSE);

  key = config->__isset_key ? config->key : NULL;
  if (key == NULL && config->__isset_taskConfig && config->taskConfig->__isset_job)
    key = config->taskConfig->job;
  if (!stg_job_key_check (key, "description.key", error))
    {
      stg_engine_wrap_error (error);
      (*error)->code = STG_ENGINE_ERROR_INVALID;
      return FALSE;
    }
  if (config->__isset_cronSchedule && config->cronSchedule != NULL && config->cronSchedule[0])
    {
      g_set_error (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID,
                   "description.cronSchedule: cron jobs are not supported");
      return FALSE;
    }
  if (config->instanceCount < 1 || config->instanceCount > engine->limits.max_instances)
    {
      g_set_error (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID,
                   "description.instanceCount must be between 1 and %d, not %d",
                   engine->limits.max_instances, config->instanceCount);
      return FALSE;
    }
  g_autoptr (ApiTaskConfig) task = stg_engine_check_task_config (
      engine, config->__isset_taskConfig ? config->taskConfig : NULL, key,
      "description.taskConfig", error);
  if (task == NULL)
    return FALSE;

  g_autoptr (StgJobRow) existing = stg_store_get_job (engine->store, key, NULL);
  if (existing != NULL)
    {
      g_autofree gchar *name = stg_job_key_to_string (key);
      g_set_error (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID, "job %s already exists", name);
      return FALSE;
    }

  const gchar *owner = user;
  if (owner == NULL && config->__isset_owner && config->owner != NULL)
    owner = config->owner->user;

  if (!stg_store_begin (engine->store, error))
    goto fail;
  if (!stg_store_put_config (engine->store, task, &config_id, NULL, error) ||
      !stg_store_create_job (engine->store, key, owner, config_id, config->instanceCount,
                             stg_clock_now_ms (engine->clock), &job_id, error))
    {
      stg_store_rollback (engine->store);
      goto fail;
    }
  if (!stg_store_commit (engine->store, error))
    goto fail;

  if (engine->runtime != NULL)
    for (gint32 i = 0; i < config->instanceCount; i++)
      {
        g_autoptr (GError) local = NULL;
        if (!stg_runtime_apply (engine->runtime, job_id, i, config_id, &local))
          g_warning ("engine: starting instance %d of a new job failed: %s", i, local->message);
      }
  return TRUE;

fail:
  stg_engine_wrap_error (error);
  return FALSE;
}
