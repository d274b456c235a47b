/* spec_cache.h: task configs parsed, and kept by config id.
 *
 * A config's executor data says what an instance runs: the "stagger"
 * executor's JSON (executor.h), or an AuroraExecutor task (Aurora's job,
 * which stagger-thermos runs: thermos_task.h). Either is parsed into one
 * StgTaskSpec, whose exec part is what staggerd does for any instance. A
 * config row never changes once stored, so its data is parsed once and
 * kept: starting, replacing and hooking a slot all read the same
 * StgTaskSpec instead of loading and parsing the config at every hop.
 * Reads configs through the store; main-loop thread only (the parsing
 * functions: any thread).
 */
#pragma once

#include "runtime/executor.h"
#include "store/store.h"
#include "thermos/task.h"

G_BEGIN_DECLS

typedef struct
{
  gint64 config_id;
  ApiTaskConfig *config;
  gchar **port_names;          /* the config's named ports, in name order */
  StgExecutorSpec *exec;       /* the "stagger" executor's data, or what it is for @thermos */
  StgThermosJob *thermos;      /* (nullable) an AuroraExecutor task */
} StgTaskSpec;

/* Checks that @config can run: an executor this runtime runs ("stagger"
 * or AuroraExecutor), its named ports' names, and its data, whose errors
 * name the key. Returns @config parsed (as config 0), or NULL with @error
 * (STG_RUNTIME_ERROR_INVALID). */
StgTaskSpec *stg_task_spec_check (ApiTaskConfig *config, GError **error);

/* @config (referenced) parsed, as config @config_id; NULL with @error
 * when its executor data does not parse. */
StgTaskSpec *stg_task_spec_new (ApiTaskConfig *config, gint64 config_id, GError **error);
void stg_task_spec_free (StgTaskSpec *spec);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgTaskSpec, stg_task_spec_free)

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
