/* local_place.c: whether this machine, the local runtime's one host, may
 * start an instance under its job's constraints. The rules are placement's
 * (place.c: dedicated hosts, value constraints, then limits), with
 * this host's name as its "host" attribute, staggerd's host_attributes as
 * the rest, and every other live instance of the job counted here. Reads
 * the runtime's slots. Main-loop thread only.
 */
#include "config.h"

#include "runtime/place.h"
#include "runtime/local/local_private.h"

/* The other instances of @slot's job that run or start here, as indexes
 * into a list of one host (all 0). A run being killed no longer counts. */
static GArray *
job_runs (Slot *slot)
{
  GArray *out = g_array_new (FALSE, TRUE, sizeof (gint));
  g_autoptr (GPtrArray) others = stg_slots_job_others (slot->rt->slots, &slot->base);

  for (guint i = 0; i < others->len; i++)
    {
      const Slot *other = others->pdata[i];
      const Run *r = other->run != NULL ? other->run : other->next;
      if (r != NULL && r->stopping != STOP_KILL)
        {
          gint here = 0;
          g_array_append_val (out, here);
        }
    }
  return out;
}

gchar *
stg_local_veto (Slot *slot, const StgTaskSpec *spec)
{
  StgLocalRuntime *rt = slot->rt;
  const ApiTaskConfig *config = spec->config;
  StgFleetHostConfig self = { .name = rt->host, .attributes = rt->attributes };
  StgPlaceHost here = { .config = &self };
  g_autoptr (GArray) others = job_runs (slot);

  return stg_place_veto (&here, 0, config->__isset_constraints ? config->constraints : NULL,
                         others);
}
