/* fleet_sidecar_ops.c: the fleet runtime's operations on sidecars
 * (runtime.h: sidecar_validate, sidecars, sidecar_apply): what each pod's
 * box of a set looks like to the engine, what the engine asks a box to
 * run, and which sidecars (and which changes between versions) pods can
 * run. Calls the store and fleet_box.c. Main-loop thread only.
 */
#include "config.h"

#include <string.h>

#include "runtime/fleet/fleet_sidecar_private.h"

/* ---- the runtime's operations ------------------------------------------------------------ */

static void
observe (const Box *box, StgSidecarObservation *o)
{
  Slot *slot = box->slot;
  gchar buf[64];

  o->job_id = slot->base.key.job_id;
  o->instance = slot->base.key.instance;
  o->job = g_strdup_printf ("%s/%s/%s", slot->base.job->role, slot->base.job->environment,
                            slot->base.job->name);
  o->host = slot->host ? g_strdup (slot->host->config->name) : NULL;
  o->version = box->serving >= 0 ? box->m[box->serving].version : 0;
  o->want = box->want;
  o->phase = stg_fleet_box_phase (box);
  o->failures = box->failures;
  o->cause = g_strdup (box->cause);
  o->n_slots = box->hot ? 2 : 1;
  for (guint k = 0; k < o->n_slots; k++)
    {
      o->slots[k].name = g_strdup (stg_fleet_box_slot_label (box, k, buf));
      o->slots[k].version = box->m[k].id ? box->m[k].version : 0;
      o->slots[k].container_id = g_strdup (box->m[k].id);
      o->slots[k].serving = box->serving == (gint) k;
    }
}

static gint
compare_observations (gconstpointer a, gconstpointer b)
{
  const StgSidecarObservation *x = a, *y = b;
  gint c = g_strcmp0 (x->job, y->job);

  return c != 0 ? c : (x->instance > y->instance) - (x->instance < y->instance);
}

GArray *
stg_fleet_sidecars (StgRuntime *base, const gchar *name)
{
  StgFleetRuntime *rt = (StgFleetRuntime *) base;
  GArray *out = g_array_new (FALSE, TRUE, sizeof (StgSidecarObservation));
  GHashTableIter it;
  gpointer value;

  g_array_set_clear_func (out, stg_sidecar_observation_clear);
  stg_slots_iter_init (rt->slots, &it);
  while (g_hash_table_iter_next (&it, NULL, &value))
    {
      Slot *slot = value;
      Box *box = slot->pod != NULL ? stg_fleet_pod_box (slot, name) : NULL;
      if (box == NULL || box->want == 0 || box->clearing)
        continue;
      StgSidecarObservation o = { 0 };
      observe (box, &o);
      g_array_append_val (out, o);
    }
  g_array_sort (out, compare_observations);
  return out;
}

gboolean
stg_fleet_sidecar_apply (StgRuntime *base, gint64 job_id, gint32 instance, const gchar *name,
                         gint version, GError **error)
{
  StgFleetRuntime *rt = (StgFleetRuntime *) base;
  Slot *slot = (Slot *) stg_slots_find (rt->slots, job_id, instance);
  Box *box = slot != NULL && slot->pod != NULL ? stg_fleet_pod_box (slot, name) : NULL;

  if (box == NULL || box->clearing)
    {
      g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_NOT_FOUND,
                   "instance %d of job %" G_GINT64_FORMAT " has no pod with sidecar %s", instance,
                   job_id, name);
      return FALSE;
    }
  if (box->want == version)
    return TRUE;
  if (version > 0)
    stg_fleet_box_note (box, "asked to run version %d (was %d)", version, box->want);
  else
    stg_fleet_box_note (box, "asked to leave the pod");
  box->want = version;
  box->failures = 0;
  box->backoff_ms = 0;
  box->not_before_ms = 0;
  stg_fleet_box_set_cause (box, NULL);
  g_clear_handle_id (&box->retry_timer, g_source_remove);
  /* A version on its way that is no longer wanted stops being checked. */
  for (guint k = 0; k < 2; k++)
    if ((gint) k != box->serving && box->m[k].version > 0 && box->m[k].version != version)
      {
        stg_fleet_box_unwatch (box, k);
      }
  stg_fleet_box_save (box);
  stg_fleet_box_changed (box);
  stg_fleet_box_drive (box);
  return TRUE;
}

/* ---- validation ------------------------------------------------------------------------- */

static gboolean
same_ports (const ApiSidecar *a, const ApiSidecar *b)
{
  guint na = a->ports ? a->ports->len : 0, nb = b->ports ? b->ports->len : 0;

  for (guint i = 0; na == nb && i < na; i++)
    if (g_strcmp0 (a->ports->pdata[i], b->ports->pdata[i]) != 0)
      return FALSE;
  return na == nb;
}

gboolean
stg_fleet_sidecar_validate (StgRuntime *base, const gchar *name, const ApiSidecar *sidecar,
                            const ApiSidecar *previous, GError **error)
{
  StgFleetRuntime *rt = (StgFleetRuntime *) base;
  g_autoptr (StgExecutorSpec) spec = NULL;
  g_autoptr (StgExecutorSpec) before = NULL;
  const gchar *refused = NULL;
  guint n_ports = sidecar->ports ? sidecar->ports->len : 0;

  if (rt->anchor_image == NULL)
    {
      g_autofree gchar *what = g_strdup_printf ("sidecar set %s was refused", name);
      g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_INVALID,
                   "sidecar sets need pods, and %s", stg_fleet_anchor_missing (rt, what));
      return FALSE;
    }
  spec = stg_fleet_box_parse (sidecar, error);
  if (spec == NULL)
    {
      g_prefix_error (error, "sidecar.executorData: ");
      (*error)->domain = STG_RUNTIME_ERROR;
      (*error)->code = STG_RUNTIME_ERROR_INVALID;
      return FALSE;
    }
  if (previous != NULL)
    before = stg_fleet_box_parse (previous, NULL);
  if (spec->pre_update.command != NULL)
    refused = "hooks.pre_update: a sidecar has none; its post_update hook runs in a new version "
              "before it takes over";
  else if (spec->workdir != NULL)
    refused = "workdir is not supported in containers";
  else if (sidecar->socketActivation && (!spec->hot_upgrade || n_ports == 0))
    refused = "socketActivation needs hot_upgrade and a named port";
  else if (previous != NULL && !same_ports (sidecar, previous))
    refused = "sidecar.ports cannot change between versions (the pods' anchors publish and hold "
              "them): make a new sidecar set";
  else if (previous != NULL && (previous->socketActivation != sidecar->socketActivation ||
                                (before != NULL && before->hot_upgrade != spec->hot_upgrade)))
    refused = "hot_upgrade and socketActivation cannot change between versions: make a new "
              "sidecar set";
  if (refused != NULL)
    g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_INVALID, "%s", refused);
  return refused == NULL;
}
