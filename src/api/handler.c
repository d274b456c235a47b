/* handler.c: StgHandler, Aurora's scheduler calls answered from the engine
 * and the store: the object, its caller, and its class filled from the
 * method tables of handler_jobs.c, handler_tasks.c, handler_updates.c,
 * handler_aurora.c, handler_admin.c, handler_recovery.c,
 * handler_maintenance.c, handler_stagger.c and handler_plans.c.
 *
 * Each method fills the Response the generated processor passes in and
 * returns TRUE: a failure is a Response code with a message, never a Thrift
 * exception (handler_answer.c). Reads go to the store; changes go through
 * the engine. Main-loop thread only.
 */
#include "config.h"

#include "api/handler_private.h"

G_DEFINE_TYPE (StgHandler, stg_handler, API_TYPE_STAGGER_SCHEDULER_HANDLER)

static void
stg_handler_finalize (GObject *object)
{
  StgHandler *self = STG_HANDLER (object);

  g_free (self->user);
  g_free (self->why);
  G_OBJECT_CLASS (stg_handler_parent_class)->finalize (object);
}

/* Every method, from the tables of the handler's files. */
static const StgHandlerMethod *const METHOD_TABLES[] = {
  stg_handler_job_methods,     stg_handler_task_methods,     stg_handler_update_methods,
  stg_handler_aurora_methods,  stg_handler_admin_methods,    stg_handler_stagger_methods,
  stg_handler_plan_methods,    stg_handler_recovery_methods, stg_handler_maintenance_methods,
  stg_handler_sidecar_methods,
};

static void
stg_handler_class_init (StgHandlerClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = stg_handler_finalize;
  for (guint t = 0; t < G_N_ELEMENTS (METHOD_TABLES); t++)
    for (const StgHandlerMethod *m = METHOD_TABLES[t]; m->call != NULL; m++)
      G_STRUCT_MEMBER (GCallback, klass, m->member) = m->call;
}

static void
stg_handler_init (StgHandler *self)
{
  self->access = STG_ACCESS_WRITE;
}

StgHandler *
stg_handler_new (const StgHandlerContext *context)
{
  StgHandler *self = g_object_new (STG_TYPE_HANDLER, NULL);

  self->ctx = *context;
  return self;
}

void
stg_handler_set_caller (StgHandler *handler, const StgCaller *caller)
{
  g_clear_pointer (&handler->user, g_free);
  g_clear_pointer (&handler->why, g_free);
  handler->access = caller ? caller->access : STG_ACCESS_WRITE;
  handler->auth = caller ? caller->auth : NULL;
  if (caller != NULL)
    {
      handler->user = g_strdup (caller->user);
      handler->why = g_strdup (caller->why);
    }
}

