/* service.c: which of a job's instances are in service while an update
 * with minInService runs, and whether the next instance may go.
 *
 * Keeps StgUpdate.healthy (the job's running, healthy instances) from the
 * runtime's observations, and says whether taking one more instance down
 * would leave fewer than minInService in service, then asks sla.c whether
 * its SLA lets it go (slaAware). Calls the store, the runtime and sla.c.
 * Main-loop thread only.
 */
#include "config.h"

#include "engine/engine_private.h"
#include "engine/sla_private.h"
#include "engine/update_private.h"
#include "engine/work_state.h"

void
stg_update_track_health (StgUpdate *u)
{
  StgEngine *e = u->engine;
  g_autoptr (GError) error = NULL;

  if (u->s.min_in_service <= 0 || e->runtime == NULL)
    return;
  g_clear_pointer (&u->healthy, g_hash_table_unref);
  u->healthy = g_hash_table_new (NULL, NULL);
  g_autoptr (GArray) rows = stg_store_list_instances (e->store, u->job_id, &error);
  if (rows == NULL)
    {
      g_warning ("engine: cannot list instances of update %s: %s", u->uid, error->message);
      return;
    }
  for (guint i = 0; i < rows->len; i++)
    {
      gint32 id = g_array_index (rows, StgInstanceRow, i).instance_id;
      StgTaskObservation obs;
      stg_runtime_observe (e->runtime, u->job_id, id, &obs);
      if (obs.phase == STG_TASK_RUNNING)
        g_hash_table_add (u->healthy, GINT_TO_POINTER (id));
    }
}

/* Running, healthy instances of the job that the update is not changing. */
static gint64
in_service (StgUpdate *u)
{
  gint64 n = g_hash_table_size (u->healthy);
  GHashTableIter it;
  gpointer key;

  g_hash_table_iter_init (&it, u->active);
  while (g_hash_table_iter_next (&it, &key, NULL))
    {
      StgWork *w = &g_array_index (u->work, StgWork, GPOINTER_TO_UINT (key));
      if (g_hash_table_contains (u->healthy, GINT_TO_POINTER (w->instance)))
        n--;
    }
  return n;
}

gboolean
stg_update_may_start (StgUpdate *u, guint idx)
{
  if (u->s.min_in_service > 0 && u->healthy != NULL)
    {
      StgWork *w = &g_array_index (u->work, StgWork, idx);
      gint64 after = in_service (u) -
                     (g_hash_table_contains (u->healthy, GINT_TO_POINTER (w->instance)) ? 1 : 0);
      if (after < u->s.min_in_service)
        return FALSE;
    }
  return stg_update_sla_may_start (u, idx);
}

void
stg_update_note_health (StgUpdate *u, gint32 instance)
{
  StgEngine *e = u->engine;
  StgTaskObservation obs;

  if (u->healthy == NULL || e->runtime == NULL)
    return;
  stg_runtime_observe (e->runtime, u->job_id, instance, &obs);
  if (obs.phase == STG_TASK_RUNNING)
    g_hash_table_add (u->healthy, GINT_TO_POINTER (instance));
  else
    g_hash_table_remove (u->healthy, GINT_TO_POINTER (instance));
}
