/* fleet_sidecar.c: the sidecars of the fleet runtime's pods. A Box is one
 * sidecar set's part of one pod: one container (NAME), or, for a hot
 * sidecar (hot_upgrade), two container slots, NAME-1 and NAME-2, the idle
 * one running the empty image, as OpenKruise's SidecarSet hot upgrade
 * does. The box runs the version it is asked for (want) without touching
 * the pod's main container:
 *
 *   cold:  the old container is stopped and removed, the new one created
 *          and started (the sidecar is down in between);
 *   hot:   the new version starts in the idle slot beside the serving one;
 *          once its checks pass and its migration hook (post_update, run
 *          through exec in the new container) has returned, it serves
 *          (commit) and the old slot is reset to the empty image. With
 *          socket activation both versions accept on the same listening
 *          sockets, which the anchor holds and hands over, so no
 *          connection is refused and the old version only has to finish
 *          what it accepted when it gets SIGTERM.
 *
 * A member's life, and the function behind each arrow:
 *
 *   (no container) --[stg_fleet_box_create_member, on_member_created, on_member_started]--> started
 *   started --[on_health: healthy; run_hook for a version that takes over]--> healthy
 *   healthy, not serving --[commit]--> serving (recorded in the store first)
 *   started, healthy --[stg_fleet_box_member_failed: checks, hook, exit]--> dead (a real version
 *            counts a failure: the box waits out a back-off before trying again)
 *   dead, or not wanted --[stg_fleet_box_remove_member: stop, remove]--> (no container)
 *
 * A new version that keeps failing never takes over: the serving slot
 * keeps serving, and the engine's update (engine/sidecar.c) decides when
 * to give up and roll back. Invariants: (1) a box makes one engine call at
 * a time (busy); (2) at most one member serves, and only a healthy one;
 * (3) the store has what the box is asked to run and which slot serves
 * before a container is created for it, so a restarted staggerd adopts
 * the slot that served and goes on from there: a new version already
 * started is checked again (and its hook run again), never doubled.
 * This file drives the box toward what it should run; fleet_box.c owns
 * the box (its lifetime, its sidecar's versions, what it records, its
 * failures), fleet_sidecar_members.c makes and removes its containers and
 * adopts them, fleet_sidecar_health.c checks them and hands over,
 * fleet_sidecar_ops.c is the runtime's operations on sidecars. Main-loop
 * thread only.
 */
#include "config.h"

#include <string.h>

#include "runtime/fleet/fleet_sidecar_private.h"

/* ---- driving ----------------------------------------------------------------------- */

/* The member the wanted version goes to: the only one of a cold sidecar;
 * the idle one of a hot sidecar; with none serving, one that runs it
 * already, else a free one. */
static guint
target (Box *box)
{
  if (!box->hot)
    return 0;
  if (box->serving >= 0)
    return (guint) (1 - box->serving);
  for (guint k = 0; k < 2; k++)
    if (box->m[k].id != NULL && box->m[k].version == box->want)
      return k;
  for (guint k = 0; k < 2; k++)
    if (box->m[k].id == NULL || box->m[k].version == 0)
      return k;
  return 0;
}

/* Removes the box's containers one after the other; TRUE once none is left. */
static gboolean
empty_out (Box *box)
{
  stg_fleet_box_stop_watching (box);
  stg_fleet_box_drop_hook (box);
  for (guint k = 0; k < 2; k++)
    if (box->m[k].id != NULL)
      {
        stg_fleet_box_remove_member (box, k);
        return FALSE;
      }
  return TRUE;
}

/* The wanted version serves: a hot sidecar's other slot is reset to the
 * empty image. */
static void
steady (Box *box, guint s)
{
  guint o = 1 - s;

  if (box->watched != (gint) s)
    stg_fleet_box_watch (box, s, TRUE);
  if (!box->hot)
    return;
  if (box->m[o].id != NULL && box->m[o].version != 0)
    stg_fleet_box_remove_member (box, o);
  else if (box->m[o].id == NULL)
    stg_fleet_box_create_member (box, o, 0);
}

/* The box leaves the pod (its set is gone): freed, its facts forgotten. */
static void
box_gone (Box *box)
{
  Slot *slot = box->slot;
  g_autoptr (GError) error = NULL;

  stg_fleet_box_note (box, "left the pod");
  if (!stg_store_delete_pod_sidecar (slot->rt->store, slot->base.key.job_id,
                                     slot->base.key.instance, box->name, &error))
    g_warning ("fleet: %s", error->message);
  stg_fleet_box_changed (box);
  g_ptr_array_remove (slot->pod->boxes, box); /* frees it */
}

void
stg_fleet_sidecar_drive (Box *box)
{
  Slot *slot = box->slot;
  g_autoptr (GError) error = NULL;

  if (box->busy || box->retry_timer != 0)
    return;
  for (guint k = 0; k < 2; k++)
    if (box->m[k].id != NULL && box->m[k].dead)
      {
        stg_fleet_box_remove_member (box, k);
        return;
      }
  if (box->clearing || box->want == 0)
    {
      if (!empty_out (box))
        return;
      if (box->clearing)
        stg_fleet_drive (slot);
      else
        box_gone (box);
      return;
    }
  /* The pod's main container runs first. */
  if (slot->container_id == NULL || slot->state == FLEET_STARTING ||
      slot->state == FLEET_STOPPING || slot->state == FLEET_STOPPING_DEAD || box->hook != NULL)
    return;
  if (!stg_fleet_box_learn (box, box->want, &error))
    {
      stg_fleet_box_set_cause (box, error->message);
      stg_fleet_box_changed (box);
      return;
    }
  gint s = box->serving;
  if (s >= 0 && box->m[s].version == box->want && box->m[s].healthy)
    {
      steady (box, (guint) s);
      return;
    }
  guint t = target (box);
  if (box->m[t].id != NULL && box->m[t].version != box->want)
    {
      stg_fleet_box_remove_member (box, t);
      return;
    }
  if (box->m[t].id == NULL)
    {
      gint64 now = g_get_monotonic_time () / 1000;
      if (box->not_before_ms > now)
        {
          stg_fleet_box_retry_in (box, (gint) (box->not_before_ms - now));
          return;
        }
      box->pulled = FALSE;
      stg_fleet_box_create_member (box, t, box->want);
      return;
    }
  if (box->watched != (gint) t && box->m[t].started_us > 0)
    stg_fleet_box_watch (box, t, FALSE); /* e.g. adopted while it was taking over */
}

gboolean
stg_fleet_box_clear (Box *box)
{
  box->clearing = TRUE;
  g_clear_handle_id (&box->retry_timer, g_source_remove);
  if (!box->busy && box->m[0].id == NULL && box->m[1].id == NULL)
    {
      stg_fleet_box_stop_watching (box);
      stg_fleet_box_drop_hook (box);
      return FALSE;
    }
  stg_fleet_box_drive (box);
  return TRUE;
}
