/* fleet_pod.c: instances as pods. An instance whose job some sidecar set
 * selects, when its run starts, is a group of containers on its host that
 * share one network namespace and one volume, as a Kubernetes pod's do:
 *
 *   anchor    the anchor image running `stagger-anchor hold`: it holds the
 *             namespace (the task's network mode, the pod's published
 *             ports) and the shared volume at STG_FLEET_POD_DIR, and the
 *             listening sockets of its socket-activated sidecars;
 *   main      the task's container, joined to the anchor (NetworkMode
 *             container:ID, VolumesFrom ID);
 *   sidecars  each set's containers, joined the same way (fleet_sidecar*.c).
 *
 * The pod is the slot's unit: placed, lost, drained and adopted whole; it
 * starts anchor first (stg_fleet_pod_start: the image imported when the
 * host lacks it, then create, start, and a stat of its copy of
 * stagger-anchor in the volume until it is there; an anchor that ended
 * instead fails the start at once with its last line, such as a port it
 * could not listen on), then the main
 * container (fleet.c), then
 * the sidecars; it is taken apart sidecars first, then the main container,
 * then the anchor with the volume (stg_fleet_pod_teardown). A gone anchor
 * fails the instance as a gone main container does; a gone sidecar fails
 * only that sidecar. Sets are injected when a pod is made: a set made or
 * changed later reaches a job's pods as they are replaced. Calls the
 * store, docker.c and fleet_sidecar*.c. Main-loop thread only.
 */
#include "config.h"

#include <string.h>

#include "common/templates.h"
#include "runtime/fleet/fleet_private.h"

/* How often, and how long, the anchor's readiness is asked for. */
#define READY_EVERY_MS 50
#define READY_TRIES 400

static Pod *
pod_new (void)
{
  Pod *pod = g_new0 (Pod, 1);

  pod->boxes = g_ptr_array_new_with_free_func ((GDestroyNotify) stg_fleet_box_free);
  return pod;
}

static void
pod_free (Pod *pod)
{
  g_clear_handle_id (&pod->ready_timer, g_source_remove);
  g_clear_error (&pod->unready);
  g_ptr_array_unref (pod->boxes);
  g_free (pod->anchor_id);
  g_free (pod);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (Pod, pod_free)

void
stg_fleet_pod_drop (Slot *slot)
{
  Pod *pod = slot->pod;

  stg_fleet_anchor_forget (slot);
  if (pod == NULL)
    return;
  slot->pod = NULL;
  pod_free (pod);
}

/* ---- which sets go into a pod ------------------------------------------------ */

/* Sidecar set @set selects the slot's job, but there is no anchor: the
 * instance runs without its sidecars, and the log and its events say
 * why. */
static void
no_anchor (Slot *slot, const gchar *set)
{
  g_autofree gchar *what = g_strdup_printf ("sidecar set %s selects %s/%s/%s", set,
                                            slot->base.job->role, slot->base.job->environment,
                                            slot->base.job->name);
  g_autofree gchar *m = g_strdup_printf ("not a pod, so without sidecar set %s: %s", set,
                                         stg_fleet_anchor_missing (slot->rt, what));
  stg_slot_note (&slot->base, m);
}

gboolean
stg_fleet_pod_plan (Slot *slot)
{
  StgFleetRuntime *rt = slot->rt;
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) sets = stg_store_list_sidecar_sets (rt->store, &error);
  g_autoptr (ApiTaskConfig) config = stg_store_get_config (rt->store, slot->base.want, NULL);
  if (sets == NULL || config == NULL)
    {
      if (error != NULL)
        g_warning ("fleet: cannot read the sidecar sets: %s", error->message);
      return FALSE;
    }
  g_auto (GStrv) task_ports = stg_task_port_names (config);
  g_autoptr (Pod) pod = NULL;
  for (guint i = 0; i < sets->len; i++)
    {
      StgSidecarSetRow *set = sets->pdata[i];
      g_autoptr (ApiSidecar) sidecar = stg_fleet_set_selects (set, slot->base.job)
                                           ? stg_store_get_sidecar_version (rt->store, set->name,
                                                                            set->inject_version,
                                                                            NULL)
                                           : NULL;
      const gchar *shared = sidecar != NULL ? stg_fleet_shared_port (sidecar, task_ports) : NULL;
      if (sidecar != NULL && rt->anchor_image == NULL)
        {
          no_anchor (slot, set->name);
          return FALSE;
        }
      if (sidecar == NULL || shared != NULL)
        {
          if (shared != NULL)
            {
              g_autofree gchar *m = g_strdup_printf ("sidecar set %s left out: its port %s is the "
                                                     "task's too",
                                                     set->name, shared);
              stg_slot_note (&slot->base, m);
            }
          continue;
        }
      if (pod == NULL)
        pod = pod_new ();
      g_ptr_array_add (pod->boxes, stg_fleet_box_new (slot, set->name, set->inject_version));
    }
  if (pod == NULL)
    return FALSE;
  slot->pod = g_steal_pointer (&pod);
  /* What the pod's sidecars run is in the store before their containers. */
  if (!stg_store_delete_pod_sidecar (rt->store, slot->base.key.job_id, slot->base.key.instance,
                                     NULL, &error))
    g_warning ("fleet: %s", error->message);
  for (guint i = 0; i < slot->pod->boxes->len; i++)
    stg_fleet_box_save (slot->pod->boxes->pdata[i]);
  return TRUE;
}

/* ---- starting -------------------------------------------------------------- */

void
stg_fleet_pod_start (Slot *slot)
{
  stg_fleet_set_state (slot, FLEET_STARTING);
  stg_fleet_anchor_ensure (slot);
}

static void ask_ready (Slot *slot);

static gboolean
on_ready_timer (gpointer data)
{
  Slot *slot = data;

  slot->pod->ready_timer = 0;
  ask_ready (slot);
  return G_SOURCE_REMOVE;
}

/* The anchor's last line of output, its own words on why it ended
 * ("cannot listen on port 17750 (proxy): Address already in use"). */
static void
on_anchor_logs (GObject *source G_GNUC_UNUSED, GAsyncResult *result, gpointer data)
{
  Slot *slot = data;
  g_autoptr (GError) error = NULL;
  g_autofree gchar *logs = stg_docker_logs_finish (NULL, result, &error);

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  if (logs != NULL)
    {
      g_strchomp (logs);
      const gchar *line = strrchr (logs, '\n') ? strrchr (logs, '\n') + 1 : logs;
      if (g_str_has_prefix (line, "stagger-anchor: "))
        line += strlen ("stagger-anchor: ");
      error = g_error_new (STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_FAILED, "%s",
                           *line != '\0' ? line : "it said nothing");
    }
  stg_fleet_start_failed (slot, "the pod's anchor exited", error);
}

/* The engine's word on the anchor, asked when it does not serve yet: one
 * that ended (a port it could not listen on) fails the start at once,
 * with what it said; one that runs is asked again, a while. */
static void
on_anchor_inspected (GObject *source G_GNUC_UNUSED, GAsyncResult *result, gpointer data)
{
  Slot *slot = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonNode) node = stg_docker_inspect_finish (NULL, result, &error);
  JsonObject *o = node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node)
                                                                : NULL;
  JsonNode *state = o != NULL ? json_object_get_member (o, "State") : NULL;
  Pod *pod = slot->pod;

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  if (state != NULL && JSON_NODE_HOLDS_OBJECT (state) &&
      !json_object_get_boolean_member_with_default (json_node_get_object (state), "Running", TRUE))
    {
      stg_docker_logs_async (slot->host->docker, pod->anchor_id, 5,
                             STG_DOCKER_STDOUT | STG_DOCKER_STDERR, slot->base.cancel,
                             on_anchor_logs, slot);
      return;
    }
  if (g_error_matches (pod->unready, STG_DOCKER_ERROR, STG_DOCKER_ERROR_NOT_FOUND) &&
      ++pod->tries < READY_TRIES)
    {
      pod->ready_timer = g_timeout_add (READY_EVERY_MS, on_ready_timer, slot);
      return;
    }
  stg_fleet_start_failed (slot, "the pod's anchor does not serve its volume", pod->unready);
}

static void
on_ready_answer (GObject *source G_GNUC_UNUSED, GAsyncResult *result, gpointer data)
{
  Slot *slot = data;
  g_autoptr (GError) error = NULL;

  if (stg_docker_finish (NULL, result, &error))
    {
      slot->pod->ready = TRUE;
      stg_slot_set_cause (&slot->base, NULL);
      stg_fleet_create_main (slot);
      return;
    }
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  g_clear_error (&slot->pod->unready);
  slot->pod->unready = g_steal_pointer (&error);
  stg_docker_inspect_async (slot->host->docker, slot->pod->anchor_id, slot->base.cancel,
                            on_anchor_inspected, slot);
}

/* Asks whether the anchor has put its copy of stagger-anchor into the
 * pod's volume yet (what the sidecars start with): a stat through the
 * engine, no process in the container. */
static void
ask_ready (Slot *slot)
{
  stg_docker_stat_async (slot->host->docker, slot->pod->anchor_id,
                         STG_FLEET_POD_DIR "/stagger-anchor", slot->base.cancel, on_ready_answer,
                         slot);
}

static void
on_anchor_started (GObject *source G_GNUC_UNUSED, GAsyncResult *result, gpointer data)
{
  Slot *slot = data;
  g_autoptr (GError) error = NULL;

  if (!stg_docker_finish (NULL, result, &error))
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        stg_fleet_start_failed (slot, "cannot start the pod's anchor", error);
      return;
    }
  slot->pod->started_us = g_get_monotonic_time ();
  slot->pod->tries = 0;
  ask_ready (slot);
}

static void
on_anchor_created (GObject *source G_GNUC_UNUSED, GAsyncResult *result, gpointer data)
{
  Slot *slot = data;
  g_autoptr (GError) error = NULL;
  gchar *id = stg_fleet_start_created (slot, result, on_anchor_started, &error);

  if (id != NULL)
    slot->pod->anchor_id = id;
  else if (error != NULL)
    {
      if (g_error_matches (error, STG_DOCKER_ERROR, STG_DOCKER_ERROR_NOT_FOUND))
        stg_fleet_anchor_lost (slot->host); /* imported again on the next start */
      stg_fleet_start_failed (slot, "cannot create the pod's anchor", error);
    }
}

void
stg_fleet_pod_create_anchor (Slot *slot)
{
  g_autoptr (GError) error = NULL;
  g_autofree gchar *name = NULL;
  g_autoptr (JsonNode) spec = stg_fleet_anchor_spec (slot, &name, &error);

  if (spec == NULL)
    {
      stg_fleet_start_failed (slot, "cannot build the pod's anchor", error);
      return;
    }
  stg_docker_create_async (slot->host->docker, name, spec, slot->base.cancel, on_anchor_created,
                           slot);
}

void
stg_fleet_pod_main_started (Slot *slot)
{
  for (guint i = 0; i < slot->pod->boxes->len; i++)
    stg_fleet_box_drive (slot->pod->boxes->pdata[i]);
}

/* ---- taking it apart --------------------------------------------------------- */

static void
on_anchor_removed (GObject *source G_GNUC_UNUSED, GAsyncResult *result, gpointer data)
{
  Slot *slot = data;
  g_autoptr (GError) error = NULL;

  if (!stg_docker_finish (NULL, result, &error) &&
      g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  stg_fleet_settle (slot);
  if (error != NULL)
    {
      g_warning ("fleet: cannot remove the pod's anchor %.12s on %s: %s", slot->pod->anchor_id,
                 slot->host->config->name, error->message);
      stg_fleet_retry_later (slot);
      return;
    }
  stg_fleet_pod_drop (slot);
  stg_fleet_drive (slot);
}

gboolean
stg_fleet_pod_teardown (Slot *slot)
{
  Pod *pod = slot->pod;
  gboolean busy = FALSE;

  for (guint i = 0; i < pod->boxes->len; i++)
    busy |= stg_fleet_box_clear (pod->boxes->pdata[i]);
  if (busy || slot->container_id != NULL)
    return busy;
  if (pod->anchor_id == NULL)
    {
      stg_fleet_pod_drop (slot);
      return FALSE;
    }
  stg_fleet_begin_stop (slot);
  g_clear_handle_id (&pod->ready_timer, g_source_remove);
  stg_docker_remove_async (slot->host->docker, pod->anchor_id, slot->base.cancel, on_anchor_removed,
                           slot);
  return TRUE;
}

/* ---- watching and adopting --------------------------------------------------- */

static const gchar *
label (JsonObject *c, const gchar *name)
{
  JsonObject *labels = json_object_get_object_member (c, "Labels");

  return labels ? json_object_get_string_member_with_default (labels, name, NULL) : NULL;
}

static gboolean
running (JsonObject *c)
{
  return c != NULL &&
         g_str_equal (json_object_get_string_member_with_default (c, "State", ""), "running");
}

void
stg_fleet_pod_check (Slot *slot, GHashTable *by_id, gint64 sent_us)
{
  Pod *pod = slot->pod;

  if (pod->anchor_id != NULL && pod->ready && pod->started_us < sent_us &&
      slot->state == FLEET_IDLE && slot->container_id != NULL &&
      !running (g_hash_table_lookup (by_id, pod->anchor_id)))
    {
      g_autofree gchar *why = g_strdup_printf ("the pod's anchor %.12s is gone from %s",
                                               pod->anchor_id, slot->host->config->name);
      stg_fleet_container_failed (slot, why);
      return;
    }
  for (guint i = 0; i < pod->boxes->len; i++)
    stg_fleet_box_check (pod->boxes->pdata[i], by_id, sent_us);
}

static Pod *
ensure_pod (Slot *slot)
{
  if (slot->pod == NULL)
    slot->pod = pod_new ();
  return slot->pod;
}

void
stg_fleet_pod_adopt_main (Slot *slot)
{
  ensure_pod (slot);
}

void
stg_fleet_pod_adopt_member (Slot *slot, JsonObject *c)
{
  Pod *pod = ensure_pod (slot);
  const gchar *id = json_object_get_string_member_with_default (c, "Id", NULL);
  const gchar *name = label (c, STG_FLEET_LABEL_SIDECAR);

  if (g_strcmp0 (label (c, STG_FLEET_LABEL_ROLE), "anchor") == 0)
    {
      g_free (pod->anchor_id);
      pod->anchor_id = g_strdup (id);
      pod->ready = running (c);
      return;
    }
  if (name == NULL)
    return;
  Box *box = stg_fleet_pod_box (slot, name);
  if (box == NULL)
    {
      box = stg_fleet_box_new (slot, name, 0);
      g_ptr_array_add (pod->boxes, box);
    }
  stg_fleet_box_adopt_member (box, c);
}

void
stg_fleet_pod_adopted (Slot *slot, GArray *rows)
{
  Pod *pod = slot->pod;

  /* Sidecars the store knows whose containers are all gone start again. */
  for (guint i = 0; i < rows->len; i++)
    {
      StgPodSidecarRow *r = &g_array_index (rows, StgPodSidecarRow, i);
      if (r->job_id == slot->base.key.job_id && r->instance_id == slot->base.key.instance &&
          stg_fleet_pod_box (slot, r->sidecar) == NULL)
        g_ptr_array_add (pod->boxes, stg_fleet_box_new (slot, r->sidecar, r->want));
    }
  for (guint i = 0; i < pod->boxes->len; i++)
    {
      Box *box = pod->boxes->pdata[i];
      const StgPodSidecarRow *row = NULL;
      for (guint j = 0; row == NULL && j < rows->len; j++)
        {
          StgPodSidecarRow *r = &g_array_index (rows, StgPodSidecarRow, j);
          if (r->job_id == slot->base.key.job_id && r->instance_id == slot->base.key.instance &&
              g_str_equal (r->sidecar, stg_fleet_box_name (box)))
            row = r;
        }
      stg_fleet_box_adopted (box, row);
    }
  if (!pod->ready && slot->container_id != NULL && !stg_fleet_dead (slot))
    stg_fleet_container_failed (slot,
                                pod->anchor_id != NULL
                                    ? "its pod's anchor stopped while staggerd was not running"
                                    : "its pod's anchor went away while staggerd was not running");
}


