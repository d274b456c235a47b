/* fleet_box.c: a Box, one sidecar set's part of one pod (drawn at the top
 * of fleet_sidecar.c): its lifetime, its sidecar's versions and ports,
 * what it records in the store and says in events, its failures and
 * back-off; and the call up that drives it (stg_fleet_box_drive, through
 * FleetCalls to fleet_sidecar.c), so the files that make, check and
 * operate its containers never call the driver. Main-loop thread only.
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

void
stg_fleet_box_drop_hook (Box *box)
{
  g_clear_pointer (&box->hook, stg_fleet_exec_drop);
  box->hook_member = -1;
}

void
stg_fleet_box_unwatch (Box *box, guint k)
{
  g_assert (k < 2);
  if (box->watched == (gint) k)
    stg_fleet_box_stop_watching (box);
  if (box->hook_member == (gint) k)
    stg_fleet_box_drop_hook (box);
}

void
stg_fleet_box_free (Box *box)
{
  g_cancellable_cancel (box->cancel);
  g_clear_object (&box->cancel);
  stg_fleet_box_stop_watching (box);
  stg_fleet_box_drop_hook (box);
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
gboolean
stg_fleet_box_learn (Box *box, gint version, GError **error)
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
  if (box->known == 0 && !stg_fleet_box_learn ((Box *) box, box->want, NULL))
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
  g_assert (k < 2);
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
  g_assert (k < 2);
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

gchar *
stg_fleet_probe_port_name (const gchar *set, guint index)
{
  return g_strdup_printf ("%s.probe%u", set, index + 1);
}

StgTaskPhase
stg_fleet_box_phase (const Box *box)
{
  gint s = box->serving;

  if (s >= 0 && box->m[s].version == box->want && box->m[s].healthy)
    return STG_TASK_RUNNING;
  if (box->failures > 0 && box->not_before_ms > g_get_monotonic_time () / 1000)
    return STG_TASK_FAILED;
  if (box->slot->container_id == NULL && box->m[0].id == NULL && box->m[1].id == NULL)
    return STG_TASK_PENDING;
  return STG_TASK_STARTING;
}

/* Whether the box serves the version it is asked for, healthy. */
static gboolean
box_serving (const Box *box)
{
  return box->want == 0 || box->clearing || stg_fleet_box_phase (box) == STG_TASK_RUNNING;
}

/* ---- a pod's boxes ------------------------------------------------------------- */

Box *
stg_fleet_pod_box (Slot *slot, const gchar *name)
{
  for (guint i = 0; slot->pod != NULL && i < slot->pod->boxes->len; i++)
    if (g_str_equal (stg_fleet_box_name (slot->pod->boxes->pdata[i]), name))
      return slot->pod->boxes->pdata[i];
  return NULL;
}

gboolean
stg_fleet_pod_serving (Slot *slot)
{
  for (guint i = 0; i < slot->pod->boxes->len; i++)
    if (!box_serving (slot->pod->boxes->pdata[i]))
      return FALSE;
  return TRUE;
}

void
stg_fleet_box_drive (Box *box)
{
  box->slot->rt->calls->box_drive (box);
}
