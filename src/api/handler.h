/* handler.h: the Thrift service handler: Aurora's calls onto the engine.
 *
 * StgHandler implements every method of StaggerScheduler (and so of
 * AuroraSchedulerManager and ReadOnlyScheduler). Each method checks its
 * arguments, calls the engine or reads the store, and answers a Response
 * with Aurora's conventions. Methods never return FALSE: failures are
 * Responses (INVALID_REQUEST for bad input, ERROR for the unexpected, which
 * is also logged). Main-loop thread only.
 */
#pragma once

#include "common/clock.h"
#include "engine/engine.h"
#include "store/store.h"

G_BEGIN_DECLS

#define STG_TYPE_HANDLER (stg_handler_get_type ())
G_DECLARE_FINAL_TYPE (StgHandler, stg_handler, STG, HANDLER, ApiStaggerSchedulerHandler)

/* What the handler works on; all borrowed, and must outlive it. */
typedef struct
{
  StgStore *store;
  StgEngine *engine;
  StgClock *clock;
  const gchar *cluster;
} StgHandlerContext;

StgHandler *stg_handler_new (const StgHandlerContext *context);

/* The user the next calls act as (NULL: anonymous). Set by the transport
 * before it dispatches a message. */
void stg_handler_set_user (StgHandler *handler, const gchar *user);

G_END_DECLS
