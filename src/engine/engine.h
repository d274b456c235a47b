/* engine.h: the scheduler core: jobs and their rolling updates.
 *
 * StgEngine owns every job mutation (create, kill, add instances, restart)
 * and every job update, from the request to a terminal state. It is pure
 * logic behind three seams: a StgClock for time and timers, the StgStore for
 * durability (each step one transaction, written before the runtime is told
 * to act), and a StgRuntime that runs tasks and reports on them. It never
 * touches a socket, a process or SQL itself.
 *
 * Errors: STG_ENGINE_ERROR_INVALID (bad request; the message names the
 * field), _NOT_FOUND (no such job or update), _ACTIVE_UPDATE (the job
 * already has one; see @active_out of stg_engine_start_update()), _STATE
 * (the transition is not allowed; the message names both states),
 * _UNAVAILABLE (not supported by this build), _FAILED (storage or runtime
 * trouble). Main-loop thread only.
 */
#pragma once

#include "common/clock.h"
#include "common/thrift_glue.h"
#include "runtime/runtime.h"
#include "store/store.h"

G_BEGIN_DECLS

#define STG_ENGINE_ERROR (stg_engine_error_quark ())
GQuark stg_engine_error_quark (void);

typedef enum
{
  STG_ENGINE_ERROR_FAILED,
  STG_ENGINE_ERROR_INVALID,
  STG_ENGINE_ERROR_NOT_FOUND,
  STG_ENGINE_ERROR_ACTIVE_UPDATE,
  STG_ENGINE_ERROR_STATE,
  STG_ENGINE_ERROR_UNAVAILABLE,
} StgEngineError;

typedef struct _StgEngine StgEngine;

/* Limits the engine enforces on requests. */
typedef struct
{
  gint32 max_instances;          /* per job; default 100000 */
  gint64 max_watch_ms;           /* minWaitInInstanceRunningMs bound */
  gint64 max_pulse_ms;           /* blockIfNoPulsesAfterMs bound */
} StgEngineLimits;

void stg_engine_limits_init (StgEngineLimits *limits);

/* An engine over @store, @clock and @runtime (all borrowed; @runtime may be
 * NULL: jobs and updates are stored but nothing runs and no update moves).
 * Call stg_engine_recover() once before serving requests. */
StgEngine *stg_engine_new (StgStore *store, StgClock *clock, StgRuntime *runtime,
                           const StgEngineLimits *limits);
void stg_engine_free (StgEngine *engine);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgEngine, stg_engine_free)

/* Reloads every active update from the store and continues it. */
gboolean stg_engine_recover (StgEngine *engine, GError **error);

/* ---- jobs ------------------------------------------------------------- */

/* Creates a job and starts its instances. */
gboolean stg_engine_create_job (StgEngine *engine, const ApiJobConfiguration *config,
                                const gchar *user, GError **error);

/* ---- updates ---------------------------------------------------------- */

/* Starts an update. On STG_ENGINE_ERROR_ACTIVE_UPDATE, *@active_out (when
 * given) receives the active update's summary. */
ApiJobUpdateKey *stg_engine_start_update (StgEngine *engine, const ApiJobUpdateRequest *request,
                                          const gchar *user, const gchar *message,
                                          ApiJobUpdateSummary **active_out, GError **error);

gboolean stg_engine_pause_update (StgEngine *engine, const ApiJobUpdateKey *key,
                                  const gchar *user, const gchar *message, GError **error);
gboolean stg_engine_resume_update (StgEngine *engine, const ApiJobUpdateKey *key,
                                   const gchar *user, const gchar *message, GError **error);
gboolean stg_engine_abort_update (StgEngine *engine, const ApiJobUpdateKey *key,
                                  const gchar *user, const gchar *message, GError **error);
gboolean stg_engine_rollback_update (StgEngine *engine, const ApiJobUpdateKey *key,
                                     const gchar *user, const gchar *message, GError **error);

/* Records a pulse; *@status is OK for an active update, FINISHED for a
 * terminal one. Unknown keys fail with _NOT_FOUND. */
gboolean stg_engine_pulse_update (StgEngine *engine, const ApiJobUpdateKey *key,
                                  ApiJobUpdatePulseStatus *status, GError **error);

/* What @request would change, without starting anything. */
ApiGetJobUpdateDiffResult *stg_engine_diff (StgEngine *engine, const ApiJobUpdateRequest *request,
                                            GError **error);

G_END_DECLS
