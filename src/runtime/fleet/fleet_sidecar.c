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
 * This file owns the box: its lifetime, its sidecar's versions, what it
 * records, its failures and how it is driven; fleet_sidecar_members.c makes
 * and removes its containers and adopts them, fleet_sidecar_health.c checks
 * them and hands over, fleet_sidecar_ops.c is the runtime's operations on
 * sidecars. Calls the store and fleet_pod*.c. Main-loop thread only.
 */
#include "config.h"

#include <string.h>

#include "runtime/fleet/fleet_sidecar_private.h"

#define BACKOFF_FIRST_MS 1000
#define BACKOFF_MAX_MS 30000

const gchar *
stg_fleet_box_name (const Box *box)
{
  return box->name;
}

Box *
stg_fleet_box_new (Slot *slot, const gchar *name, gint version)
{
  Box *box = g_new0 (Box, 1);

  box->slot = slot;
  box->name = g_strdup (name);
  box->want = version;
  box->serving = -1;
  box->watched = -1;
  box->hook_member = -1;
  box->cancel = g_cancellable_new ();
  return box;
}

void
stg_fleet_box_stop_watching (Box *box)
{
  g_clear_pointer (&box->health, stg_health_free);
  box->watched = -1;
}

static void
drop_hook (Box *box)
{
  g_clear_pointer (&box->hook, stg_fleet_exec_drop);
  box->hook_member = -1;
}

void
stg_fleet_box_unwatch (Box *box, guint k)
{
  if (box->watched == (gint) k)
    stg_fleet_box_stop_watching (box);
  if (box->hook_member == (gint) k)
    drop_hook (box);
}

void
stg_fleet_box_free (Box *box)
{
  g_cancellable_cancel (box->cancel);
  g_clear_object (&box->cancel);
  stg_fleet_box_stop_watching (box);
  drop_hook (box);
  g_clear_handle_id (&box->retry_timer, g_source_remove);
  for (guint k = 0; k < 2; k++)
    g_free (box->m[k].id);
  g_strfreev (box->ports);
  g_strfreev (box->held);
  g_free (box->cause);
  g_free (box->name);
  g_free (box);
}

/* ---- the sidecar's versions ------------------------------------------------------ */

/* @sidecar's executor data, parsed with its ports. */
StgExecutorSpec *
stg_fleet_box_parse (const ApiSidecar *sidecar, GError **error)
{
  g_autoptr (GPtrArray) names = g_ptr_array_new ();

  for (guint i = 0; sidecar->ports != NULL && i < sidecar->ports->len; i++)
    g_ptr_array_add (names, sidecar->ports->pdata[i]);
  g_ptr_array_add (names, NULL);
  return stg_executor_spec_parse (sidecar->executorData ? sidecar->executorData : "",
                                  (const gchar *const *) names->pdata, error);
}

/* Version @version of the box's sidecar and its executor data parsed. */
gboolean
stg_fleet_box_load (Box *box, gint version, ApiSidecar **sidecar, StgExecutorSpec **spec,
                    GError **error)
{
  StgFleetRuntime *rt = box->slot->rt;
  g_autoptr (ApiSidecar) sc = stg_store_get_sidecar_version (rt->store, box->name, version, error);

  if (sc == NULL)
    return FALSE;
  *spec = stg_fleet_box_parse (sc, error);
  if (*spec == NULL)
    return FALSE;
  *sidecar = g_steal_pointer (&sc);
  return TRUE;
}

/* Reads what a box's sidecar is (hot, activation, ports) from @version:
 * a set's versions never change it. */
static gboolean
learn (Box *box, gint version, GError **error)
{
  g_autoptr (ApiSidecar) sc = NULL;
  g_autoptr (StgExecutorSpec) spec = NULL;

  if (box->known != 0 || version == 0)
    return TRUE;
  if (!stg_fleet_box_load (box, version, &sc, &spec, error))
    return FALSE;
  box->known = version;
  box->hot = spec->hot_upgrade;
  box->activation = sc->socketActivation;
  g_autoptr (GPtrArray) ports = g_ptr_array_new ();
  for (guint i = 0; sc->ports != NULL && i < sc->ports->len; i++)
    g_ptr_array_add (ports, g_strdup (sc->ports->pdata[i]));
  if (box->activation)
    {
      g_ptr_array_add (ports, NULL);
      box->held = g_strdupv ((gchar **) ports->pdata);
      g_ptr_array_remove_index (ports, ports->len - 1);
    }
  for (guint k = 0; box->hot && box->activation && k < 2; k++)
    g_ptr_array_add (ports, stg_fleet_probe_port_name (box->name, k));
  g_ptr_array_add (ports, NULL);
  box->ports = (gchar **) g_ptr_array_free (g_steal_pointer (&ports), FALSE);
  return TRUE;
}

gchar **
stg_fleet_box_port_names (const Box *box)
{
  if (box->known == 0 && !learn ((Box *) box, box->want, NULL))
    return NULL;
  return g_strdupv (box->ports);
}

const gchar *const *
stg_fleet_box_held_ports (const Box *box)
{
  return (const gchar *const *) box->held;
}

/* ---- what the box records and tells ------------------------------------------------ */

void
stg_fleet_box_save (Box *box)
{
  Slot *slot = box->slot;
  g_autoptr (GError) error = NULL;
  StgPodSidecarRow row = {
    .job_id = slot->base.key.job_id,
    .instance_id = slot->base.key.instance,
    .sidecar = box->name,
    .want = box->want,
    .serving_slot = box->serving + 1,
    .serving_version = box->serving >= 0 ? box->m[box->serving].version : 0,
    .failures = (gint) box->failures,
  };

  if (!stg_store_put_pod_sidecar (slot->rt->store, &row, &error))
    g_warning ("fleet: sidecar %s of instance %d: %s", box->name, slot->base.key.instance,
               error->message);
}

void
stg_fleet_box_note (Box *box, const gchar *format, ...)
{
  va_list ap;

  va_start (ap, format);
  g_autofree gchar *text = g_strdup_vprintf (format, ap);
  va_end (ap);
  g_autofree gchar *m = g_strdup_printf ("sidecar %s: %s", box->name, text);
  stg_slot_note (&box->slot->base, m);
}

void
stg_fleet_box_set_cause (Box *box, const gchar *why)
{
  g_free (box->cause);
  box->cause = g_strdup (why);
}

/* The engine hears of it (runtime.h's listener). */
void
stg_fleet_box_changed (Box *box)
{
  stg_runtime_notify_later (&box->slot->rt->base, box->slot->base.key.job_id,
                            box->slot->base.key.instance);
}

const gchar *
stg_fleet_box_slot_label (const Box *box, guint k, gchar buf[64])
{
  if (!box->hot)
    return box->name;
  g_snprintf (buf, 64, "%s-%u", box->name, k + 1);
  return buf;
}

static gboolean
on_retry (gpointer data)
{
  Box *box = data;

  box->retry_timer = 0;
  stg_fleet_box_drive (box);
  return G_SOURCE_REMOVE;
}

void
stg_fleet_box_retry_in (Box *box, gint ms)
{
  g_clear_handle_id (&box->retry_timer, g_source_remove);
  box->retry_timer = g_timeout_add ((guint) MAX (ms, 1), on_retry, box);
}

void
stg_fleet_box_member_failed (Box *box, guint k, const gchar *why)
{
  Member *m = &box->m[k];
  gboolean counted = m->version > 0 && m->version == box->want;
  gchar buf[64];

  stg_fleet_box_unwatch (box, k);
  if (box->serving == (gint) k)
    box->serving = -1;
  m->healthy = FALSE;
  m->dead = m->id != NULL;
  if (m->id == NULL)
    *m = (Member){ 0 };
  if (counted)
    {
      box->failures++;
      box->backoff_ms = box->backoff_ms == 0 ? BACKOFF_FIRST_MS
                                             : MIN (box->backoff_ms * 2, BACKOFF_MAX_MS);
      box->not_before_ms = g_get_monotonic_time () / 1000 + box->backoff_ms;
      stg_fleet_box_set_cause (box, why);
      if (box->serving >= 0)
        stg_fleet_box_note (box, "new version %d failed in %s, version %d keeps serving: %s",
                            box->want, stg_fleet_box_slot_label (box, k, buf),
                            box->m[box->serving].version, why);
      else
        stg_fleet_box_note (box, "version %d failed in %s: %s", box->want,
                            stg_fleet_box_slot_label (box, k, buf), why);
    }
  stg_fleet_box_save (box);
  stg_fleet_box_changed (box);
  stg_fleet_box_drive (box);
}

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
  drop_hook (box);
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
  g_ptr_array_remove (stg_fleet_pod_boxes (slot), box); /* frees it */
}

void
stg_fleet_box_drive (Box *box)
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
  if (slot->container_id == NULL || slot->op == OP_STARTING || slot->op == OP_STOPPING ||
      box->hook != NULL)
    return;
  if (!learn (box, box->want, &error))
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
      drop_hook (box);
      return FALSE;
    }
  stg_fleet_box_drive (box);
  return TRUE;
}
