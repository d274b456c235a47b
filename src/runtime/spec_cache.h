/* spec_cache.h: parsed task specs by config id.
 *
 * A config row never changes once stored, so its executor data is parsed
 * once and kept: starting, replacing and hooking a slot all read the same
 * StgTaskSpec instead of loading and parsing the config at every hop.
 * Reads configs through the store; main-loop thread only.
 */
#pragma once

#include "runtime/executor.h"
#include "store/store.h"

G_BEGIN_DECLS

typedef struct
{
  gint64 config_id;
  ApiTaskConfig *config;
  gchar **port_names;          /* the config's named ports, in name order */
  StgExecutorSpec *exec;
} StgTaskSpec;

typedef struct _StgSpecCache StgSpecCache;

/* An empty cache reading from @store (borrowed: it must outlive the cache). */
StgSpecCache *stg_spec_cache_new (StgStore *store);

/* Frees the cache and every spec it handed out. */
void stg_spec_cache_free (StgSpecCache *cache);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgSpecCache, stg_spec_cache_free)

/* The config's parsed spec; owned by the cache, valid until the cache is
 * freed (configs are immutable). NULL with @error when the config is
 * missing or its executor data does not parse; failures are not cached. */
const StgTaskSpec *stg_spec_cache_get (StgSpecCache *cache, gint64 config_id, GError **error);

G_END_DECLS
