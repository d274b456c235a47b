/* handler.h: the Thrift service handler: Aurora's calls onto the engine.
 *
 * StgHandler implements every method of StaggerScheduler (and so of
 * AuroraAdmin, AuroraSchedulerManager and ReadOnlyScheduler). Each method checks its
 * arguments, calls the engine or reads the store, and answers a Response
 * with Aurora's conventions. Methods never return FALSE: failures are
 * Responses (INVALID_REQUEST for bad input, ERROR for the unexpected, which
 * is also logged). Main-loop thread only.
 */
#pragma once

#include "common/clock.h"
#include "engine/engine.h"
#include "api/auth.h"
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
  StgBackups *backups; /* (nullable) NULL: the backup and recovery calls are refused */
  /* (nullable) Called once a recovery is committed: staggerd restarts to
   * load it. */
  void (*recovered) (gpointer data);
  gpointer recovered_data;
} StgHandlerContext;

StgHandler *stg_handler_new (const StgHandlerContext *context);

typedef enum
{
  STG_ACCESS_NONE,           /* every call is refused (AUTH_FAILED) */
  STG_ACCESS_READ,           /* reads only */
  STG_ACCESS_WRITE,          /* reads, and changes to jobs of the user's roles */
} StgAccess;

/* Who makes the next calls, as the transport found out. */
typedef struct
{
  const gchar *user;         /* (nullable) recorded in update events; NULL with
                              * STG_ACCESS_WRITE: trusted, every role */
  StgAccess access;
  StgAuth *auth;             /* (nullable) the users' roles */
  const gchar *why;          /* (nullable) why access is limited, for refusals */
} StgCaller;

/* The caller of the next calls (NULL: trusted, anonymous). Set by the
 * transport before it dispatches a message; the strings must live until
 * the next call to this. */
void stg_handler_set_caller (StgHandler *handler, const StgCaller *caller);

G_END_DECLS
