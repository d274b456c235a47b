/* handler_private.h: what the handler's files share: the object, how a
 * method answers (handler_answer.c) and the method tables each file
 * exports. Not for use outside src/api/. Main-loop thread only. */
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

/* The handler a method is called on: the generated processor calls the
 * methods of handler.c's class on a StgHandler only (a plain cast, so the
 * method files need nothing of handler.c). */
#define HANDLER(iface) ((StgHandler *) (iface))

/* Answers @error: bad input is INVALID_REQUEST; anything else is ERROR and
 * is logged, since the caller did nothing wrong. Returns TRUE. */
gboolean stg_handler_answer_error (StgHandler *self, ApiResponse *response, const gchar *method,
                                   GError *error);

/* Answers OK, with @value as the member @member of the Result ("getJobsResult");
 * @member NULL: no result. Returns TRUE. */
gboolean stg_handler_answer_ok (StgHandler *self, ApiResponse *response, const gchar *member,
                                gpointer value);

/* One Thrift method of the handler: where it goes in the generated class
 * (an offset in ApiStaggerSchedulerHandlerClass) and the function. */
typedef struct
{
  gsize member;
  GCallback call;
} StgHandlerMethod;

/* The tasks (ApiScheduledTask*) of @store (the live one, or a staged
 * backup) matching @q, in job key and instance order, paged by its offset
 * and limit; their configs without executor data unless @with_configs
 * (handler_tasks.c). */
GPtrArray *stg_handler_query_tasks (StgStore *store, const ApiTaskQuery *q, gboolean with_configs,
                                    GError **error);

/* Whether @q's job terms (environment, jobName, jobKeys) match job @key;
 * its role is the caller's to match (handler_tasks.c). */
gboolean stg_handler_task_query_job (const ApiTaskQuery *q, const ApiJobKey *key);

/* An entry of a method table for the class member at @path (e.g.
 * parent.parent.get_jobs); the compiler checks that @fn has the member's
 * type. */
// clang-format off
#define STG_HANDLER_METHOD(path, fn)                                                        \
  { G_STRUCT_OFFSET (ApiStaggerSchedulerHandlerClass, path),                                \
    _Generic ((fn), __typeof__ (((ApiStaggerSchedulerHandlerClass *) 0)->path): G_CALLBACK (fn)) }
// clang-format on
/* ReadOnlyScheduler's, AuroraSchedulerManager's, AuroraAdmin's and
 * StaggerScheduler's own. */
#define STG_READ_METHOD(name, fn) STG_HANDLER_METHOD (parent.parent.parent.name, fn)
#define STG_MANAGE_METHOD(name, fn) STG_HANDLER_METHOD (parent.parent.name, fn)
#define STG_ADMIN_METHOD(name, fn) STG_HANDLER_METHOD (parent.name, fn)
#define STG_STAGGER_METHOD(name, fn) STG_HANDLER_METHOD (name, fn)

/* The method tables handler.c installs, each ended by { 0, NULL }: jobs
 * (handler_jobs.c), tasks (handler_tasks.c), updates (handler_updates.c),
 * Aurora's calls around jobs: tiers, populateJobConfig, pending reasons,
 * role summaries, the refused cron calls (handler_aurora.c), getQuota and
 * AuroraAdmin's (handler_admin.c), backups and recovery
 * (handler_recovery.c), host maintenance (handler_maintenance.c),
 * Stagger's own (handler_stagger.c), rollout plans (handler_plans.c) and
 * sidecar sets (handler_sidecars.c). */
extern const StgHandlerMethod stg_handler_job_methods[];
extern const StgHandlerMethod stg_handler_task_methods[];
extern const StgHandlerMethod stg_handler_update_methods[];
extern const StgHandlerMethod stg_handler_aurora_methods[];
extern const StgHandlerMethod stg_handler_admin_methods[];
extern const StgHandlerMethod stg_handler_recovery_methods[];
extern const StgHandlerMethod stg_handler_maintenance_methods[];
extern const StgHandlerMethod stg_handler_stagger_methods[];
extern const StgHandlerMethod stg_handler_plan_methods[];
extern const StgHandlerMethod stg_handler_sidecar_methods[];
