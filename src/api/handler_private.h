/* handler_private.h: what the handler's files share. Not for use outside
 * src/api/. Main-loop thread only. */
#pragma once

#include "api/handler.h"
#include "api/response.h"

struct _StgHandler
{
  ApiStaggerSchedulerHandler parent;

  StgHandlerContext ctx;
  gchar *user;          /* (nullable) who the current call acts as */
  StgAccess access;
  StgAuth *auth;         /* (nullable) borrowed from the caller */
  gchar *why;
};

/* Whether the current caller may make this call: a read (@role NULL,
 * @write FALSE) or a change to a job of @role. If not, answers AUTH_FAILED
 * and returns FALSE. */
gboolean stg_handler_allowed (StgHandler *self, ApiResponse *response, const gchar *method,
                              const gchar *role, gboolean write);

#define HANDLER(iface) STG_HANDLER (iface)

/* Answers @error: bad input is INVALID_REQUEST; anything else is ERROR and
 * is logged, since the caller did nothing wrong. Returns TRUE. */
gboolean stg_handler_answer_error (StgHandler *self, ApiResponse *response, const gchar *method,
                                   GError *error);

/* Task methods (handler_tasks.c), installed by the class init. */
void stg_handler_install_task_methods (ApiReadOnlySchedulerHandlerClass *ro);

/* The tasks (ApiScheduledTask*) matching @q, in job key and instance
 * order, paged by its offset and limit; their configs without executor
 * data unless @with_configs (handler_tasks.c). */
GPtrArray *stg_handler_query_tasks (StgHandler *self, const ApiTaskQuery *q, gboolean with_configs,
                                    GError **error);

/* Aurora's calls around jobs: tiers, populateJobConfig, pending reasons,
 * role summaries, the refused cron calls (handler_aurora.c). */
void stg_handler_install_aurora_methods (ApiReadOnlySchedulerHandlerClass *ro,
                                         ApiAuroraSchedulerManagerHandlerClass *rw);

/* getQuota and AuroraAdmin's setQuota and snapshot (handler_admin.c). */
void stg_handler_install_admin_methods (ApiReadOnlySchedulerHandlerClass *ro,
                                        ApiAuroraAdminHandlerClass *admin);

/* Update methods (handler_updates.c), installed by the class init. */
void stg_handler_install_update_methods (ApiReadOnlySchedulerHandlerClass *ro,
                                         ApiAuroraSchedulerManagerHandlerClass *rw);

/* Stagger's own methods (handler_stagger.c), installed by the class init. */
void stg_handler_install_stagger_methods (ApiStaggerSchedulerHandlerClass *sc);

/* The rollout plan methods (handler_plans.c), installed by the class init. */
void stg_handler_install_plan_methods (ApiStaggerSchedulerHandlerClass *sc);
