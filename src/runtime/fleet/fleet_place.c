/* fleet_place.c: which host a slot goes to: the hosts that can take it
 * now (reachable, reconciled, not draining) and where the job's other
 * instances are, handed to place.c's placement (constraints, then
 * spreading); and whether a slot's host still keeps the constraints of
 * the config it is to run, which decides a move when they tightened
 * (stg_fleet_leave_broken at a start, stg_fleet_moves ahead of an
 * update). Reads the store for the task's constraints. Main-loop thread
 * only.
 */
#include "config.h"

#include "runtime/fleet/fleet_private.h"

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

/* The hosts as placement sees them, @without (nullable) unavailable;
 * owned, one past the last zeroed. */
static StgPlaceHost *
place_hosts (StgFleetRuntime *rt, Host *without)
{
  StgPlaceHost *hosts = g_new0 (StgPlaceHost, rt->hosts->len + 1);

  for (guint i = 0; i < rt->hosts->len; i++)
    {
      Host *h = rt->hosts->pdata[i];
      hosts[i] = (StgPlaceHost){ .config = h->config,
                                 .unavailable = unavailable (h, without),
                                 .total = h->slots };
    }
  return hosts;
}

static GHashTable *
constraints_of (const ApiTaskConfig *config)
{
  return config != NULL && config->__isset_constraints ? config->constraints : NULL;
}

gint
stg_fleet_choose_host (Slot *slot, Host *without, gchar **why)
{
  StgFleetRuntime *rt = slot->rt;
  g_autoptr (ApiTaskConfig) config = stg_store_get_config (rt->store, slot->base.want, NULL);
  g_autofree StgPlaceHost *hosts = place_hosts (rt, without);
  g_autoptr (GArray) others = job_hosts (slot, without);
  gint best = stg_fleet_place (hosts, rt->hosts->len, constraints_of (config), others, why);

  if (best < 0 && why != NULL && slot->moving != NULL)
    {
      /* Leaving a host that broke its constraints: why, first. */
      g_autofree gchar *none = *why;
      *why = g_strdup_printf ("%s: %s", slot->moving, none);
    }
  return best;
}

/* ---- constraints that tightened ------------------------------------------------ */

gboolean
stg_fleet_leave_broken (Slot *slot)
{
  StgFleetRuntime *rt = slot->rt;
  g_autoptr (GError) error = NULL;
  guint at = 0;

  if (slot->host == NULL || slot->container_id != NULL ||
      !g_ptr_array_find (rt->hosts, slot->host, &at))
    return FALSE;
  g_autoptr (ApiTaskConfig) config = stg_store_get_config (rt->store, slot->base.want, NULL);
  if (config == NULL)
    return FALSE; /* unread: nothing to judge the host by */
  g_autofree StgPlaceHost *hosts = place_hosts (rt, NULL);
  g_autoptr (GArray) others = job_hosts (slot, NULL);
  g_autofree gchar *aurora = NULL;
  g_autofree gchar *brief = stg_place_broken (hosts, at, constraints_of (config), others, &aurora);

  if (brief == NULL)
    return FALSE;
  g_autofree gchar *moving = g_strdup_printf ("%s (%s), moving off %s", aurora, brief,
                                              slot->host->config->name);
  stg_fleet_set_host (slot, NULL);
  slot->moving = g_steal_pointer (&moving);
  stg_slot_note (&slot->base, slot->moving);
  if (!stg_store_delete_placement (rt->store, slot->base.key.job_id, slot->base.key.instance,
                                   &error))
    g_warning ("fleet: %s", error->message);
  return TRUE;
}

/* Instance -> index into rt->hosts of job @job_id's placed slots. */
static GHashTable *
job_placements (StgFleetRuntime *rt, gint64 job_id)
{
  GHashTable *at = g_hash_table_new (g_direct_hash, g_direct_equal);
  GHashTableIter it;
  gpointer value;

  stg_slots_iter_init (rt->slots, &it);
  while (g_hash_table_iter_next (&it, NULL, &value))
    {
      Slot *slot = value;
      guint index = 0;
      if (slot->base.key.job_id == job_id && slot->host != NULL && !slot->killing &&
          g_ptr_array_find (rt->hosts, slot->host, &index))
        g_hash_table_insert (at, GINT_TO_POINTER (slot->base.key.instance),
                             GUINT_TO_POINTER (index));
    }
  return at;
}

/* The host indexes of @at's values, as job_hosts gives them. */
static GArray *
placed_hosts (GHashTable *at)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (gint));
  GHashTableIter it;
  gpointer value;

  g_hash_table_iter_init (&it, at);
  while (g_hash_table_iter_next (&it, NULL, &value))
    {
      gint index = GPOINTER_TO_INT (value);
      g_array_append_val (out, index);
    }
  return out;
}

GPtrArray *
stg_fleet_moves (StgRuntime *base, gint64 job_id, const ApiTaskConfig *config,
                 const GArray *instances)
{
  StgFleetRuntime *rt = (StgFleetRuntime *) base;
  GPtrArray *out = g_ptr_array_new_with_free_func (g_object_unref);
  g_autofree StgPlaceHost *hosts = place_hosts (rt, NULL);
  g_autoptr (GHashTable) at = job_placements (rt, job_id);
  GHashTable *constraints = constraints_of (config);

  for (guint i = 0; i < instances->len; i++)
    {
      gpointer key = GINT_TO_POINTER (g_array_index (instances, gint32, i));
      gpointer value = NULL;
      if (!g_hash_table_steal_extended (at, key, NULL, &value))
        continue; /* not placed: placed under the new constraints when it starts */
      guint from = GPOINTER_TO_UINT (value);
      g_autoptr (GArray) others = placed_hosts (at);
      g_autofree gchar *brief = stg_place_broken (hosts, from, constraints, others, NULL);
      if (brief == NULL)
        {
          g_hash_table_insert (at, key, value);
          continue;
        }
      /* As stg_fleet_leave_broken, then place(). */
      hosts[from].total--;
      gint to = stg_fleet_place (hosts, rt->hosts->len, constraints, others, NULL);
      ApiInstanceMove *move = g_object_new (API_TYPE_INSTANCE_MOVE, "instanceId",
                                            GPOINTER_TO_INT (key), "host", hosts[from].config->name,
                                            "constraint", brief, NULL);
      if (to >= 0)
        {
          g_object_set (move, "toHost", hosts[to].config->name, NULL);
          hosts[to].total++;
          g_hash_table_insert (at, key, GINT_TO_POINTER (to));
        }
      g_ptr_array_add (out, move);
    }
  return out;
}
