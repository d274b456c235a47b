/* engine_private.h: the StgEngine struct and what the engine's files share.
 * Not for use outside src/engine/. Main-loop thread only. */
#pragma once

#include "engine/engine.h"

struct _StgEngine
{
  StgStore *store;          /* borrowed */
  StgClock *clock;          /* borrowed */
  StgRuntime *runtime;      /* borrowed, nullable */
  StgEngineLimits limits;
};

/* Checks @config and returns a normalized copy of its task config (job key
 * and owner filled in), or NULL with STG_ENGINE_ERROR_INVALID. */
ApiTaskConfig *stg_engine_check_task_config (StgEngine *engine, const ApiTaskConfig *config,
                                             const ApiJobKey *key, const gchar *what,
                                             GError **error);

/* Turns a store or runtime error into an engine error, keeping the message. */
void stg_engine_wrap_error (GError **error);
