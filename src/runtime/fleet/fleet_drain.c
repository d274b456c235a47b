/* fleet_drain.c: the fleet's hosts as the API sees them (getHosts), and
 * draining: a drained host gets no new placement, and a slot of it that
 * starts again without a container is placed anew elsewhere (fleet.c's
 * start()). Drained hosts are kept in the store, so a restarted staggerd
 * or a new leader drains them too. Main-loop thread only.
 */
#include "config.h"

#include "runtime/fleet/fleet_private.h"

/* Orders slots by job, then instance. */
static gint
by_key (gconstpointer a, gconstpointer b)
{
  const Slot *x = *(Slot *const *) a, *y = *(Slot *const *) b;

  if (x->base.key.job_id != y->base.key.job_id)
    return x->base.key.job_id < y->base.key.job_id ? -1 : 1;
  return x->base.key.instance - y->base.key.instance;
}

/* Why some of @h's instances could not be placed on the other hosts now,
 * or NULL when all could: what a drain of @h would wait on. Places @h's
 * slots one by one on the other hosts as a drain would, each one counted
 * where it went (moved there for the while, then back). */
static gchar *
drain_shortfall (StgFleetRuntime *rt, Host *h)
{
  g_autoptr (GPtrArray) on = g_ptr_array_new ();
  g_autoptr (GString) out = g_string_new (NULL);
  guint short_of = 0;
  GHashTableIter it;
  gpointer v;

  stg_slots_iter_init (rt->slots, &it);
  while (g_hash_table_iter_next (&it, NULL, &v))
    if (((Slot *) v)->host == h && !((Slot *) v)->killing && ((Slot *) v)->base.want != 0)
      g_ptr_array_add (on, v);
  g_ptr_array_sort (on, by_key);
  for (guint i = 0; i < on->len; i++)
    {
      Slot *slot = on->pdata[i];
      g_autofree gchar *why = NULL;
      gint best = stg_fleet_choose_host (slot, h, &why);
      if (best >= 0)
        stg_fleet_set_host (slot, rt->hosts->pdata[best]);
      else if (short_of++ < 3)
        g_string_append_printf (out, "%sinstance %d of %s/%s/%s: %s", out->len ? "; " : "",
                                slot->base.key.instance, slot->base.job->role,
                                slot->base.job->environment, slot->base.job->name,
                                why ? why : "no host fits");
    }
  for (guint i = 0; i < on->len; i++)
    stg_fleet_set_host (on->pdata[i], h);
  if (short_of > 3)
    g_string_append_printf (out, "; and %u more", short_of - 3);
  return short_of > 0 ? g_strdup (out->str) : NULL;
}

static ApiFleetHostStatus *
host_status (StgFleetRuntime *rt, Host *h)
{
  g_autofree gchar *blocked = drain_shortfall (rt, h);
  /* The maintenance mode is the engine's to say. */
  ApiFleetHostStatus *s = g_object_new (API_TYPE_FLEET_HOST_STATUS, "name", h->config->name,
                                        "endpoint", h->config->endpoint, "address",
                                        h->config->address, "reachable", h->reachable,
                                        "unreachableSinceMs",
                                        h->reachable ? (gint64) 0 : h->unreachable_since_ms,
                                        "lastError", h->last_error ? h->last_error : "", "draining",
                                        h->draining, "drainBlocked", blocked ? blocked : "",
                                        "slaWait", "", "mode", API_MAINTENANCE_MODE_NONE, NULL);
  GHashTableIter it;
  gpointer k, v;

  if (h->config->attributes != NULL)
    {
      g_hash_table_iter_init (&it, h->config->attributes);
      while (g_hash_table_iter_next (&it, &k, &v))
        g_hash_table_insert (s->attributes, g_strdup (k), g_strdup (v));
    }
  stg_slots_iter_init (rt->slots, &it);
  while (g_hash_table_iter_next (&it, NULL, &v))
    {
      Slot *slot = v;
      if (slot->host != h)
        continue;
      g_ptr_array_add (s->instances, g_object_new (API_TYPE_INSTANCE_KEY, "jobKey", slot->base.job,
                                                   "instanceId", slot->base.key.instance, NULL));
    }
  return s;
}

GPtrArray *
stg_fleet_hosts (StgRuntime *base)
{
  StgFleetRuntime *rt = (StgFleetRuntime *) base;
  GPtrArray *out = g_ptr_array_new_with_free_func (g_object_unref);

  for (guint i = 0; i < rt->hosts->len; i++)
    g_ptr_array_add (out, host_status (rt, rt->hosts->pdata[i]));
  return out;
}

gboolean
stg_fleet_drain_host (StgRuntime *base, const gchar *name, gboolean drain, GError **error)
{
  StgFleetRuntime *rt = (StgFleetRuntime *) base;
  Host *h = stg_fleet_host (rt, name);

  if (h == NULL)
    {
      g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_NOT_FOUND,
                   "no host named '%s' (the config file's [host NAME] groups name them)", name);
      return FALSE;
    }
  if (!stg_store_set_host_drained (rt->store, name, drain, error))
    return FALSE;
  if (h->draining != drain)
    g_message ("fleet: host %s %s", name,
               drain ? "drains: nothing new is placed on it" : "is open again");
  h->draining = drain;
  return TRUE;
}

gboolean
stg_fleet_load_drained (StgFleetRuntime *rt, GError **error)
{
  g_autoptr (GHashTable) drained = stg_store_drained_hosts (rt->store, error);

  if (drained == NULL)
    return FALSE;
  for (guint i = 0; i < rt->hosts->len; i++)
    {
      Host *h = rt->hosts->pdata[i];
      h->draining = g_hash_table_contains (drained, h->config->name);
    }
  return TRUE;
}

gboolean
stg_fleet_leave_drained (Slot *slot)
{
  g_autoptr (GError) error = NULL;

  if (slot->host == NULL || !slot->host->draining || slot->container_id != NULL)
    return FALSE;
  stg_fleet_set_host (slot, NULL);
  if (!stg_store_delete_placement (slot->rt->store, slot->base.key.job_id, slot->base.key.instance,
                                   &error))
    g_warning ("fleet: %s", error->message);
  return TRUE;
}
