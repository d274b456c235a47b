/* runtime.c: the parts of the runtime seam that are not per implementation.
 * Main-loop thread only. */
#include "config.h"

#include "runtime/runtime.h"

G_DEFINE_QUARK (stg-runtime-error-quark, stg_runtime_error)

void
stg_runtime_free (StgRuntime *rt)
{
  if (rt != NULL)
    rt->ops->free (rt);
}

const gchar *
stg_task_phase_name (StgTaskPhase phase)
{
  switch (phase)
    {
    case STG_TASK_ABSENT: return "absent";
    case STG_TASK_PENDING: return "pending";
    case STG_TASK_STARTING: return "starting";
    case STG_TASK_RUNNING: return "running";
    case STG_TASK_KILLING: return "killing";
    case STG_TASK_FAILED: return "failed";
    case STG_TASK_FINISHED: return "finished";
    default: return "unknown";
    }
}
