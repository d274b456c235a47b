/* spec_cache.c: task configs parsed (either executor: executor.c or
 * thermos_task.c) and StgSpecCache, a hash table of them by config id,
 * filled on first use (see spec_cache.h). Calls the store; main-loop
 * thread only (the parsing: any thread).
 */
#include "config.h"

#include "common/error.h"
#include "common/templates.h"
#include "runtime/runtime.h"
#include "runtime/spec_cache.h"
#include "runtime/thermos_task.h"

struct _StgSpecCache
{
  StgStore *store;             /* borrowed */
  GHashTable *specs;           /* gint64* config id -> StgTaskSpec* (owned) */
};

#define bad(error, ...) \
  stg_fail (error, STG_EXECUTOR_ERROR, STG_EXECUTOR_ERROR_INVALID, __VA_ARGS__)

void
stg_task_spec_free (StgTaskSpec *spec)
{
  if (spec == NULL)
    return;
  g_clear_object (&spec->config);
  g_strfreev (spec->port_names);
  stg_executor_spec_free (spec->exec);
  stg_thermos_job_free (spec->thermos);
  g_free (spec);
}

StgTaskSpec *
stg_task_spec_new (ApiTaskConfig *config, gint64 config_id, GError **error)
{
  g_autoptr (StgTaskSpec) spec = g_new0 (StgTaskSpec, 1);

  spec->config_id = config_id;
  spec->config = g_object_ref (config);
  if (!config->__isset_executorConfig || config->executorConfig == NULL)
    {
      bad (error, "config %" G_GINT64_FORMAT " has no executor data", config_id);
      return NULL;
    }
  spec->port_names = stg_task_port_names (config);
  const gchar *const *names = (const gchar *const *) spec->port_names;
  if (stg_thermos_task_is (config))
    {
      spec->thermos = stg_thermos_task_parse (config, names, error);
      if (spec->thermos == NULL)
        return NULL;
      spec->exec = stg_thermos_task_exec (spec->thermos);
      return g_steal_pointer (&spec);
    }
  spec->exec = stg_executor_spec_parse (config->executorConfig->data, names, error);
  if (spec->exec == NULL)
    {
      g_prefix_error (error, "executorConfig.data: ");
      return NULL;
    }
  return g_steal_pointer (&spec);
}

/* An error of the config checked: the runtime's, as its other checks give. */
#define invalid(error, ...) \
  (stg_fail (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_INVALID, __VA_ARGS__), \
   (StgTaskSpec *) NULL)

StgTaskSpec *
stg_task_spec_check (ApiTaskConfig *config, GError **error)
{
  const ApiExecutorConfig *ec = config->__isset_executorConfig ? config->executorConfig : NULL;

  if (ec == NULL || ec->name == NULL)
    return invalid (error,
                    "executorConfig is missing (this runtime runs the executors '%s' and '%s')",
                    STG_EXECUTOR_NAME, STG_THERMOS_EXECUTOR_NAME);
  if (!g_str_equal (ec->name, STG_EXECUTOR_NAME) && !stg_thermos_task_is (config))
    return invalid (error, "executorConfig.name is '%s', but this runtime runs only '%s' and '%s'",
                    ec->name, STG_EXECUTOR_NAME, STG_THERMOS_EXECUTOR_NAME);
  g_auto (GStrv) ports = stg_task_port_names (config);
  for (guint i = 0; ports[i] != NULL; i++)
    {
      gboolean good = ports[i][0] != '\0';
      for (const gchar *c = ports[i]; *c && good; c++)
        good = g_ascii_isalnum (*c) || *c == '_' || *c == '-';
      if (!good)
        return invalid (error,
                        "resources: port name '%s' may hold only letters, digits, '_' and '-'",
                        ports[i]);
    }
  g_autoptr (GError) local = NULL;
  StgTaskSpec *spec = stg_task_spec_new (config, 0, &local);
  if (spec == NULL)
    return invalid (error, "%s", local->message);
  return spec;
}

StgSpecCache *
stg_spec_cache_new (StgStore *store)
{
  StgSpecCache *cache = g_new0 (StgSpecCache, 1);

  cache->store = store;
  cache->specs = g_hash_table_new_full (g_int64_hash, g_int64_equal, NULL,
                                        (GDestroyNotify) stg_task_spec_free);
  return cache;
}

void
stg_spec_cache_free (StgSpecCache *cache)
{
  if (cache == NULL)
    return;
  g_hash_table_unref (cache->specs);
  g_free (cache);
}

const StgTaskSpec *
stg_spec_cache_get (StgSpecCache *cache, gint64 config_id, GError **error)
{
  StgTaskSpec *spec = g_hash_table_lookup (cache->specs, &config_id);

  if (spec != NULL)
    return spec;
  g_autoptr (ApiTaskConfig) config = stg_store_get_config (cache->store, config_id, error);
  if (config == NULL)
    return NULL;
  spec = stg_task_spec_new (config, config_id, error);
  if (spec == NULL)
    return NULL;
  /* The key lives in the value, which lives as long as the entry. */
  g_hash_table_insert (cache->specs, &spec->config_id, spec);
  return spec;
}
