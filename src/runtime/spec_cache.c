/* spec_cache.c: StgSpecCache (see spec_cache.h): a hash table of parsed
 * configs by config id, filled on first use. Calls the store and the
 * executor parser. Main-loop thread only.
 */
#include "config.h"

#include "runtime/spec_cache.h"
#include "runtime/runtime.h"

struct _StgSpecCache
{
  StgStore *store;             /* borrowed */
  GHashTable *specs;           /* gint64* config id -> StgTaskSpec* (owned) */
};

static void
task_spec_free (gpointer data)
{
  StgTaskSpec *spec = data;

  g_clear_object (&spec->config);
  g_strfreev (spec->port_names);
  stg_executor_spec_free (spec->exec);
  g_free (spec);
}

StgSpecCache *
stg_spec_cache_new (StgStore *store)
{
  StgSpecCache *cache = g_new0 (StgSpecCache, 1);

  cache->store = store;
  cache->specs = g_hash_table_new_full (g_int64_hash, g_int64_equal, NULL, task_spec_free);
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
  if (!config->__isset_executorConfig || config->executorConfig == NULL)
    {
      g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_INVALID,
                   "config %" G_GINT64_FORMAT " has no executor data", config_id);
      return NULL;
    }
  g_auto (GStrv) names = stg_executor_port_names (config);
  g_autoptr (StgExecutorSpec) exec = stg_executor_spec_parse (config->executorConfig->data,
                                                              (const gchar *const *) names, error);
  if (exec == NULL)
    return NULL;
  spec = g_new0 (StgTaskSpec, 1);
  spec->config_id = config_id;
  spec->config = g_steal_pointer (&config);
  spec->port_names = g_steal_pointer (&names);
  spec->exec = g_steal_pointer (&exec);
  /* The key lives in the value, which lives as long as the entry. */
  g_hash_table_insert (cache->specs, &spec->config_id, spec);
  return spec;
}
