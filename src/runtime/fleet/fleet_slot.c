/* fleet_slot.c: what the fleet runtime's files ask of a slot: its host,
 * its state (FleetState, checked against its table), its phase and
 * health recorded, a retry later, whether it runs again, a
 * failed start step judged; and the calls back up (FleetCalls: driving a
 * slot, a failed, finished or lost container, creating a main container
 * or an anchor, driving a sidecar's box), which fleet.c registers, so the
 * files below it never call it. Main-loop thread only.
 */
#include "config.h"

#include "runtime/fleet/fleet_private.h"

#define ENGINE_RETRY_MS 1000

/* ---- its state (FleetState) ---------------------------------------------------- */

static const gchar *const STATE_NAMES[] = {
  "IDLE", "STARTING", "HOOK", "DEAD", "STOPPING", "STOPPING_DEAD",
};

gboolean
stg_fleet_state_allowed (gint from, gint to)
{
  if (from == to || to == FLEET_IDLE) /* IDLE: a call ended, or the slot was lost */
    return TRUE;
  switch (from)
    {
    case FLEET_IDLE:
      return to == FLEET_STARTING || to == FLEET_HOOK || to == FLEET_DEAD || to == FLEET_STOPPING;
    case FLEET_DEAD:
      return to == FLEET_STOPPING_DEAD;
    case FLEET_STOPPING_DEAD:
      return to == FLEET_DEAD;
    default:
      return FALSE; /* STARTING, HOOK and STOPPING end in IDLE */
    }
}

void
stg_fleet_set_state (Slot *slot, FleetState to)
{
  FleetState from = slot->state;

  g_assert ((guint) from < G_N_ELEMENTS (STATE_NAMES) && (guint) to < G_N_ELEMENTS (STATE_NAMES));
  if (!stg_fleet_state_allowed ((gint) from, (gint) to))
    {
#ifdef STG_CHECK_INVARIANTS
      g_error ("fleet: instance %d of job %" G_GINT64_FORMAT ": %s -> %s is not a transition of "
               "its machine",
               slot->base.key.instance, slot->base.key.job_id, STATE_NAMES[from], STATE_NAMES[to]);
#else
      g_critical ("fleet: instance %d of job %" G_GINT64_FORMAT ": %s -> %s is not a transition "
                  "of its machine",
                  slot->base.key.instance, slot->base.key.job_id, STATE_NAMES[from],
                  STATE_NAMES[to]);
#endif
    }
  slot->state = to;
}

void
stg_fleet_settle (Slot *slot)
{
  if (slot->state == FLEET_STOPPING_DEAD)
    stg_fleet_set_state (slot, FLEET_DEAD);
  else if (slot->state != FLEET_DEAD)
    stg_fleet_set_state (slot, FLEET_IDLE);
}

void
stg_fleet_begin_stop (Slot *slot)
{
  stg_fleet_set_state (slot, stg_fleet_dead (slot) ? FLEET_STOPPING_DEAD : FLEET_STOPPING);
}

gboolean
stg_fleet_busy (const Slot *slot)
{
  return slot->state != FLEET_IDLE && slot->state != FLEET_DEAD;
}

gboolean
stg_fleet_dead (const Slot *slot)
{
  return slot->state == FLEET_DEAD || slot->state == FLEET_STOPPING_DEAD;
}

/* ---- its host, phase and health ------------------------------------------------- */

Host *
stg_fleet_host (StgFleetRuntime *rt, const gchar *name)
{
  for (guint i = 0; i < rt->hosts->len; i++)
    if (g_str_equal (((Host *) rt->hosts->pdata[i])->config->name, name))
      return rt->hosts->pdata[i];
  return NULL;
}

void
stg_fleet_set_host (Slot *slot, Host *host)
{
  if (slot->host == host)
    return;
  if (slot->host != NULL)
    slot->host->slots--;
  slot->host = host;
  g_clear_pointer (&slot->moving, g_free); /* a move ends with any change of host */
  if (host != NULL)
    host->slots++;
}

/* The config a slot reports: its container's, else the one it is to run
 * (observe shows a change of either at once, not with the next phase). */
gint64
stg_fleet_shown_config (const Slot *slot)
{
  return slot->container_config ? slot->container_config : slot->base.want;
}

void
stg_fleet_set_phase (Slot *slot, StgTaskPhase phase, gint status, const gchar *message)
{
  stg_slot_set_phase (&slot->base, phase, stg_fleet_shown_config (slot), status, message);
}

void
stg_fleet_healthy (Slot *slot, const gchar *message)
{
  stg_slot_healthy (&slot->base, stg_fleet_shown_config (slot), stg_clock_now_ms (slot->rt->clock),
                    message);
}

static gboolean
on_retry (gpointer data)
{
  Slot *slot = data;

  slot->retry_timer = 0;
  stg_fleet_drive (slot);
  return G_SOURCE_REMOVE;
}

void
stg_fleet_retry_in (Slot *slot, guint ms)
{
  g_clear_handle_id (&slot->retry_timer, g_source_remove);
  slot->retry_timer = g_timeout_add (ms, on_retry, slot);
}

void
stg_fleet_retry_later (Slot *slot)
{
  stg_fleet_retry_in (slot, ENGINE_RETRY_MS);
}

gboolean
stg_fleet_runs_again (Slot *slot, gint64 config_id)
{
  g_autoptr (ApiTaskConfig) config = stg_store_get_config (slot->rt->store, config_id, NULL);

  return config == NULL || stg_slot_runs_again (&slot->base, config);
}

void
stg_fleet_start_failed (Slot *slot, const gchar *what, const GError *error)
{
  g_autofree gchar *m = g_strdup_printf ("%s on %s: %s", what, slot->host->config->name,
                                         error->message);

  stg_fleet_settle (slot);
  if (g_error_matches (error, STG_DOCKER_ERROR, STG_DOCKER_ERROR_UNREACHABLE))
    {
      /* The host failed, not the instance: nothing is counted. The start
       * is tried again until the host answers, or is declared lost after
       * the grace period (counted once then) and the slot placed anew. */
      stg_slot_set_cause (&slot->base, m);
      stg_fleet_retry_in (slot, ENGINE_RETRY_MS);
      return;
    }
  stg_fleet_container_failed (slot, m);
}

gchar *
stg_fleet_start_created (Slot *slot, GAsyncResult *result, GAsyncReadyCallback started,
                         GError **error)
{
  g_autoptr (GError) local = NULL;
  gchar *id = stg_docker_create_finish (NULL, result, &local);

  if (id == NULL)
    {
      if (!g_error_matches (local, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  stg_docker_start_async (slot->host->docker, id, slot->base.cancel, started, slot);
  return id;
}

/* ---- calls back up (FleetCalls) ------------------------------------------------ */

void
stg_fleet_drive (Slot *slot)
{
  slot->rt->calls->drive (slot);
}

void
stg_fleet_container_failed (Slot *slot, const gchar *why)
{
  slot->rt->calls->container_failed (slot, why);
}

void
stg_fleet_container_finished (Slot *slot, const gchar *why)
{
  slot->rt->calls->container_finished (slot, why);
}

void
stg_fleet_slot_lost (Slot *slot)
{
  slot->rt->calls->slot_lost (slot);
}

void
stg_fleet_create_main (Slot *slot)
{
  slot->rt->calls->create_main (slot);
}
