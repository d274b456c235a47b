/* fleet_place.c: which host a slot goes to: the hosts that can take it
 * now (reachable, reconciled, not draining) and where the job's other
 * instances are, handed to fleet_hosts.c's placement (constraints, then
 * spreading). Reads the store for the task's constraints. Main-loop
 * thread only.
 */
#include "config.h"

#include "runtime/fleet_private.h"

/* Indexes into rt->hosts of the hosts of the job's placed slots other than
 * @slot, leaving out those on @without (nullable). */
static GArray *
job_hosts (Slot *slot, Host *without)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (gint));
  g_autoptr (GPtrArray) others = stg_slots_job_others (slot->rt->slots, &slot->base);

  for (guint i = 0; i < others->len; i++)
    {
      Slot *other = others->pdata[i];
      guint index = 0;
      if (other->host != NULL && other->host != without && !other->killing &&
          g_ptr_array_find (slot->rt->hosts, other->host, &index))
        {
          gint at = (gint) index;
          g_array_append_val (out, at);
        }
    }
  return out;
}

/* Why nothing may be placed on @h now, or NULL when something may. */
static const gchar *
unavailable (Host *h, Host *without)
{
  if (h == without)
    return "the host being drained";
  if (!h->reachable)
    return "unreachable";
  if (h->reconciling)
    return "not yet reconciled (its strays are being removed)";
  if (h->draining)
    return "draining";
  return NULL;
}

gint
stg_fleet_choose_host (Slot *slot, Host *without, gchar **why)
{
  StgFleetRuntime *rt = slot->rt;
  g_autoptr (ApiTaskConfig) config = stg_store_get_config (rt->store, slot->base.want, NULL);
  g_autofree StgPlaceHost *hosts = g_new0 (StgPlaceHost, rt->hosts->len + 1);
  g_autoptr (GArray) others = job_hosts (slot, without);

  for (guint i = 0; i < rt->hosts->len; i++)
    {
      Host *h = rt->hosts->pdata[i];
      hosts[i] = (StgPlaceHost){ .config = h->config,
                                 .unavailable = unavailable (h, without),
                                 .total = h->slots };
    }
  return stg_fleet_place (hosts, rt->hosts->len,
                          config && config->__isset_constraints ? config->constraints : NULL,
                          others, why);
}
