/* fleet.c: StgFleetRuntime's slots and the runtime operations (see fleet.h).
 *
 * A Slot is a StgSlot (slot.h: key, job, wanted config, phase, failures,
 * run numbers, made from the store) with at most one container and one
 * thing done with it at a time (Slot.state, FleetState: drawn in
 * fleet_private.h). stg_fleet_drive() compares what
 * the slot should run (want, killing, restart) with what it has and starts
 * the next step. Its phase changes through stg_fleet_set_phase (which
 * records it: stg_slot_set_phase), along these arrows:
 *
 *   no container, want != 0 --[start: place, record the run, create
 *            (pull the image first when the host lacks it), start
 *            (on_started)]--> STARTING
 *   no container --[place: no host fits (also after
 *            stg_fleet_leave_broken, Aurora's words first)]--> PENDING
 *   STARTING --[on_health, or fleet_hooks.c once post_update passed:
 *            stg_fleet_healthy]--> RUNNING
 *   STARTING, RUNNING --[an exit seen by fleet_sync.c, a failed check or
 *            hook: stg_fleet_container_failed]--> FAILED (dead; done too
 *            once a task that is not a service may not run again)
 *   STARTING, RUNNING --[an exit 0 of a task that is not a service:
 *            stg_fleet_container_finished]--> FINISHED
 *   any, its host away too long --[stg_fleet_slot_lost]--> FAILED (LOST),
 *            no container, no host
 *   RUNNING on a draining host, restarted, no other host with room
 *            --[waits_for_room: a note, tried again later]--> RUNNING
 *            (nothing stopped)
 *   container not wanted (dead, replaced, restarted, killed) --[stop_remove:
 *            stop with the stop timeout, then remove]--> KILLING, then no
 *            container
 *   killing, no container --[finish_removal: stg_slot_remove]--> ABSENT
 *            (row and placement gone)
 *
 * A slot whose job a sidecar set selects runs a pod (fleet_pod.c): start
 * makes the anchor first (stg_fleet_pod_start), then the main container
 * as above, then the sidecars; stop_remove comes once the sidecars are
 * gone (stg_fleet_pod_teardown), and the anchor goes after the main
 * container. The arrows above are the pod's.
 *
 * Invariants: (1) a run's number and config are in the store before its
 * container is created, so a restarted staggerd finds it by its labels;
 * (2) a slot keeps its host from placement until it is removed, is lost
 * with its host, or starts again with no container on a host that drains
 * or breaks the constraints of the config it is to run (moved:
 * stg_fleet_leave_broken);
 * (3) a new container starts only once the old one is removed, so a slot
 * never has two. Engine calls are asynchronous; a slot's cancellable
 * (base.cancel) is cancelled only when the slot is freed or lost, and a
 * callback that sees G_IO_ERROR_CANCELLED touches nothing. Main-loop
 * thread only.
 */
#include "config.h"

#include <string.h>

#include "runtime/fleet/fleet_private.h"

#define BACKOFF_MAX_MS 30000
#define UNPLACED_RETRY_MS 2000
#define ENGINE_RETRY_MS 1000

static void
slot_init (StgSlot *base)
{
  ((Slot *) base)->rt = (StgFleetRuntime *) stg_slots_runtime (base->table);
}

static void
slot_clear (StgSlot *base)
{
  Slot *slot = (Slot *) base;

  stg_fleet_hook_drop (slot);
  stg_fleet_pod_drop (slot);
  g_clear_pointer (&slot->health, stg_health_free);
  g_clear_handle_id (&slot->retry_timer, g_source_remove);
  g_free (slot->container_id);
  g_free (slot->stop_sent);
  g_free (slot->pulling);
  g_free (slot->moving);
}

/* The slot's fact that is the fleet's: the config its container runs. */
static void
slot_facts (const StgSlot *base, StgInstanceRow *facts)
{
  facts->run_config_id = ((const Slot *) base)->container_config;
}

/* clang-format off */
static const StgSlotClass fleet_slot_class = {
  .name = "fleet", .size = sizeof (Slot),
  .init = slot_init, .clear = slot_clear, .facts = slot_facts,
};
/* clang-format on */

static void
container_failed (Slot *slot, const gchar *why)
{
  stg_fleet_hook_drop (slot);
  g_clear_pointer (&slot->health, stg_health_free);
  stg_slot_count_failure (&slot->base, why);
  stg_fleet_set_state (slot, FLEET_DEAD);
  slot->done = !stg_fleet_runs_again (slot, stg_fleet_shown_config (slot));
  stg_fleet_set_phase (slot, STG_TASK_FAILED, API_SCHEDULE_STATUS_FAILED, why);
  slot->not_before_ms = g_get_monotonic_time () / 1000 +
                        stg_slot_backoff (&slot->base, BACKOFF_MAX_MS);
  stg_fleet_drive (slot);
}

static void
container_finished (Slot *slot, const gchar *why)
{
  stg_fleet_hook_drop (slot);
  g_clear_pointer (&slot->health, stg_health_free);
  stg_slot_set_cause (&slot->base, NULL);
  slot->done = TRUE;
  stg_fleet_set_state (slot, FLEET_DEAD); /* its container is removed; nothing starts again */
  stg_fleet_set_phase (slot, STG_TASK_FINISHED, API_SCHEDULE_STATUS_FINISHED, why);
  stg_fleet_drive (slot);
}

static void
slot_lost (Slot *slot)
{
  StgFleetRuntime *rt = slot->rt;
  g_autoptr (GError) error = NULL;
  g_autofree gchar *why = g_strdup_printf ("lost: host %s has not answered for %u s (%s)", slot->host->config->name,
                                           rt->options.fleet.lost_after_secs,
                                           slot->host->last_error ? slot->host->last_error : "no answer");

  /* Its container stays behind on the host: removed as a stray if the
   * host comes back. The slot starts over elsewhere. */
  stg_fleet_hook_drop (slot);
  stg_fleet_pod_drop (slot);
  g_clear_pointer (&slot->health, stg_health_free);
  g_clear_pointer (&slot->container_id, g_free);
  g_cancellable_cancel (slot->base.cancel);
  g_clear_object (&slot->base.cancel);
  slot->base.cancel = g_cancellable_new ();
  stg_fleet_set_state (slot, FLEET_IDLE);
  slot->confirming = slot->suspect = FALSE;
  stg_slot_count_failure (&slot->base, why);
  stg_fleet_set_host (slot, NULL);
  if (!stg_store_delete_placement (rt->store, slot->base.key.job_id, slot->base.key.instance,
                                   &error))
    g_warning ("fleet: %s", error->message);
  slot->container_config = 0;
  stg_fleet_set_phase (slot, STG_TASK_FAILED, API_SCHEDULE_STATUS_LOST, why);
  g_clear_handle_id (&slot->retry_timer, g_source_remove);
  slot->not_before_ms = 0;
  stg_fleet_drive (slot);
}

/* ---- stopping and removing --------------------------------------------------- */

static void
on_removed (GObject *source G_GNUC_UNUSED, GAsyncResult *result, gpointer data)
{
  Slot *slot = data;
  g_autoptr (GError) error = NULL;

  if (!stg_docker_finish (NULL, result, &error) && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  if (error != NULL)
    {
      stg_fleet_settle (slot);
      g_warning ("fleet: cannot remove container %.12s on %s: %s", slot->container_id, slot->host->config->name,
                 error->message);
      stg_fleet_retry_in (slot, ENGINE_RETRY_MS);
      return;
    }
  g_clear_pointer (&slot->container_id, g_free);
  stg_fleet_set_state (slot, FLEET_IDLE);
  stg_fleet_drive (slot);
}

static void
on_stopped (GObject *source G_GNUC_UNUSED, GAsyncResult *result, gpointer data)
{
  Slot *slot = data;
  g_autoptr (GError) error = NULL;

  if (!stg_docker_finish (NULL, result, &error) && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  if (g_error_matches (error, STG_DOCKER_ERROR, STG_DOCKER_ERROR_UNREACHABLE))
    {
      /* The stop may have been done all the same (its answer lost): the
       * container's exit, if a listing shows it, is not a failure. */
      stg_fleet_settle (slot);
      stg_fleet_retry_in (slot, ENGINE_RETRY_MS);
      return;
    }
  g_clear_pointer (&slot->stop_sent, g_free);
  stg_docker_remove_async (slot->host->docker, slot->container_id, slot->base.cancel, on_removed,
                           slot);
}

static void
stop_remove (Slot *slot)
{
  g_assert (slot->container_id != NULL && slot->host != NULL);
  g_clear_pointer (&slot->health, stg_health_free);
  stg_fleet_begin_stop (slot);
  if (slot->state == FLEET_STOPPING)
    {
      gboolean kill = slot->killing;
      g_autofree gchar *m = g_strdup_printf ("%s container %.12s on %s", kill ? "stopping" : "replacing",
                                             slot->container_id, slot->host->config->name);
      stg_fleet_set_phase (slot, STG_TASK_KILLING,
                           kill ? API_SCHEDULE_STATUS_KILLING : API_SCHEDULE_STATUS_RESTARTING, m);
    }
  g_free (slot->stop_sent);
  slot->stop_sent = g_strdup (slot->container_id);
  stg_docker_stop_async (slot->host->docker, slot->container_id, slot->stop_timeout_secs,
                         slot->base.cancel, on_stopped, slot);
}

static void
finish_removal (Slot *slot)
{
  g_autoptr (GError) error = NULL;

  g_assert (slot->killing && slot->container_id == NULL && !stg_fleet_busy (slot));
  if (!stg_store_delete_placement (slot->rt->store, slot->base.key.job_id, slot->base.key.instance,
                                   &error) ||
      !stg_store_delete_pod_sidecar (slot->rt->store, slot->base.key.job_id,
                                     slot->base.key.instance, NULL, &error))
    g_warning ("fleet: cannot remove instance %d: %s", slot->base.key.instance, error->message);
  stg_fleet_set_host (slot, NULL);
  stg_slot_remove (&slot->base);
}

/* ---- starting ------------------------------------------------------------------ */

static void
on_started (GObject *source G_GNUC_UNUSED, GAsyncResult *result, gpointer data)
{
  Slot *slot = data;
  g_autoptr (GError) error = NULL;

  if (!stg_docker_finish (NULL, result, &error))
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        stg_fleet_start_failed (slot, "cannot start the container", error);
      return;
    }
  g_assert (slot->state == FLEET_STARTING && slot->container_id != NULL);
  stg_fleet_settle (slot);
  slot->started_us = g_get_monotonic_time ();
  g_autofree gchar *m = g_strdup_printf ("started on %s (container %.12s)", slot->host->config->name,
                                         slot->container_id);
  stg_fleet_set_phase (slot, STG_TASK_STARTING, API_SCHEDULE_STATUS_STARTING, m);
  stg_fleet_watch (slot, FALSE);
  if (slot->pod != NULL)
    stg_fleet_pod_main_started (slot);
  stg_fleet_drive (slot);
}

static void on_pulled (GObject *source, GAsyncResult *result, gpointer data);

/* The host lacks the image of the container being created: the engine
 * pulls it (with the host's registry credentials), then the create is
 * tried again. */
static void
pull (Slot *slot, const gchar *image)
{
  const StgFleetHostConfig *c = slot->host->config;
  StgDockerAuth auth = { c->registry_user, c->registry_password, c->registry_server };
  g_autofree gchar *m = g_strdup_printf ("pulling %s on %s", image, c->name);

  slot->pulled = TRUE;
  stg_slot_set_cause (&slot->base, m);
  stg_fleet_set_phase (slot, STG_TASK_STARTING, API_SCHEDULE_STATUS_ASSIGNED, m);
  g_free (slot->pulling);
  slot->pulling = g_strdup (image);
  stg_docker_pull_async (slot->host->docker, image, c->registry_user ? &auth : NULL,
                         slot->base.cancel, on_pulled, slot);
}

static void
on_pulled (GObject *source G_GNUC_UNUSED, GAsyncResult *result, gpointer data)
{
  Slot *slot = data;
  g_autoptr (GError) error = NULL;

  if (!stg_docker_finish (NULL, result, &error))
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;
      g_autofree gchar *what = g_strdup_printf ("cannot pull image %s", slot->pulling);
      g_clear_pointer (&slot->pulling, g_free);
      stg_fleet_start_failed (slot, what, error);
      return;
    }
  g_clear_pointer (&slot->pulling, g_free);
  stg_slot_set_cause (&slot->base, NULL);
  stg_fleet_create_main (slot);
}

static void
on_created (GObject *source G_GNUC_UNUSED, GAsyncResult *result, gpointer data)
{
  Slot *slot = data;
  g_autoptr (GError) error = NULL;
  gchar *id = stg_fleet_start_created (slot, result, on_started, &error);

  if (id != NULL)
    slot->container_id = id;
  else if (error != NULL)
    {
      g_autofree gchar *name = NULL;
      g_autoptr (JsonNode) spec = g_error_matches (error, STG_DOCKER_ERROR,
                                                   STG_DOCKER_ERROR_NOT_FOUND) &&
                                          !slot->pulled
                                      ? stg_fleet_container_spec (slot, slot->container_config,
                                                                  slot->base.run_id, &name, NULL)
                                      : NULL;
      const gchar *image = spec ? json_object_get_string_member_with_default (json_node_get_object (
                                                                                  spec),
                                                                              "Image", NULL)
                                : NULL;
      if (image != NULL)
        pull (slot, image);
      else
        stg_fleet_start_failed (slot, "cannot create the container", error);
    }
}

static void
create_main (Slot *slot)
{
  g_autoptr (GError) error = NULL;
  g_autofree gchar *name = NULL;
  g_autoptr (JsonNode) spec = stg_fleet_container_spec (slot, slot->container_config,
                                                        slot->base.run_id, &name, &error);

  if (spec == NULL)
    {
      stg_fleet_start_failed (slot, "cannot build the container", error);
      return;
    }
  stg_fleet_set_state (slot, FLEET_STARTING);
  stg_docker_create_async (slot->host->docker, name, spec, slot->base.cancel, on_created, slot);
}

/* Chooses the slot's host; FALSE (and PENDING with why) when none fits. */
static gboolean
place (Slot *slot)
{
  StgFleetRuntime *rt = slot->rt;
  g_autofree gchar *why = NULL;
  g_autoptr (GError) error = NULL;
  gint best = stg_fleet_choose_host (slot, NULL, &why);

  if (best < 0)
    {
      if (g_strcmp0 (slot->base.cause, why) != 0 || slot->base.phase != STG_TASK_PENDING)
        {
          stg_slot_set_cause (&slot->base, why);
          stg_fleet_set_phase (slot, STG_TASK_PENDING, API_SCHEDULE_STATUS_PENDING, why);
        }
      stg_fleet_retry_in (slot, UNPLACED_RETRY_MS);
      return FALSE;
    }
  stg_fleet_set_host (slot, rt->hosts->pdata[best]);
  if (!stg_store_set_placement (rt->store, slot->base.key.job_id, slot->base.key.instance,
                                slot->host->config->name, &error))
    g_warning ("fleet: cannot record a placement: %s", error->message);
  return TRUE;
}

/* The slot's host answers again but still has strays to remove: the
 * start waits for them (fleet_sync.c). */
static gboolean
waits_for_reconcile (Slot *slot)
{
  if (slot->host == NULL || !slot->host->reconciling)
    return FALSE;
  g_autofree gchar *m = g_strdup_printf ("waiting for host %s to be reconciled",
                                         slot->host->config->name);
  if (g_strcmp0 (slot->base.cause, m) != 0)
    stg_slot_set_cause (&slot->base, m);
  stg_fleet_retry_in (slot, UNPLACED_RETRY_MS);
  return TRUE;
}

static void
start (Slot *slot)
{
  g_assert (slot->container_id == NULL && !stg_fleet_busy (slot));
  (void) stg_fleet_leave_drained (slot);
  (void) stg_fleet_leave_broken (slot);
  if ((slot->host == NULL && !place (slot)) || waits_for_reconcile (slot))
    return;
  /* The intent first: this run's number and config are in the store
   * before the engine hears of it. */
  slot->base.run_id++;
  /* Another config's container went before (replaced, or failed and then
   * rolled back): the new one's post_update hook is owed, from that one. */
  if (slot->container_config != 0 && slot->container_config != slot->base.want)
    {
      slot->base.post_owed = slot->base.want;
      slot->post_from = slot->container_config;
    }
  slot->container_config = slot->base.want;
  slot->pulled = FALSE;
  slot->suspect = FALSE;
  slot->waits_sidecars = FALSE;
  gboolean pod = stg_fleet_pod_plan (slot);
  g_autofree gchar *m = g_strdup_printf ("creating run %" G_GINT64_FORMAT " on %s%s",
                                         slot->base.run_id, slot->host->config->name,
                                         pod ? " (a pod: its anchor first)" : "");
  stg_fleet_set_phase (slot, STG_TASK_STARTING, API_SCHEDULE_STATUS_ASSIGNED, m);
  if (pod)
    stg_fleet_pod_start (slot);
  else
    stg_fleet_create_main (slot);
}

/* A restart of a live container on a draining host moves it elsewhere:
 * while no other host has room, nothing is stopped, and the slot says
 * why (once per reason) and looks again later. */
static gboolean
waits_for_room (Slot *slot)
{
  g_autofree gchar *why = NULL;

  if (stg_fleet_dead (slot) || slot->host == NULL || !slot->host->draining ||
      stg_fleet_choose_host (slot, slot->host, &why) >= 0)
    return FALSE;
  g_autofree gchar *m = g_strdup_printf ("waiting for room to move off draining host %s, "
                                         "nothing stopped: %s",
                                         slot->host->config->name, why ? why : "no host fits");
  if (g_strcmp0 (slot->base.cause, m) != 0)
    {
      stg_slot_set_cause (&slot->base, m);
      stg_slot_note (&slot->base, m);
    }
  stg_fleet_retry_in (slot, UNPLACED_RETRY_MS);
  return TRUE;
}

static void
drive (Slot *slot)
{
  if (stg_fleet_busy (slot) || slot->retry_timer != 0 ||
      g_strcmp0 (slot->container_id, STG_FLEET_UNKNOWN_CONTAINER) == 0)
    return; /* busy, waiting, or its host has not answered yet */
  gboolean unwanted = slot->killing || slot->restart || stg_fleet_dead (slot) ||
                      slot->base.want == 0 || slot->container_config != slot->base.want;
  gboolean changing = slot->base.want != 0 && !slot->killing &&
                      slot->container_config != slot->base.want;
  if (slot->container_id != NULL && unwanted)
    {
      /* A live container replaced by another config: its pre_update hook
       * first; failed, the container is left running until applied again. */
      gboolean replacing = changing && !stg_fleet_dead (slot) && !slot->restart;
      if (replacing && slot->pre_failed == slot->base.want)
        return;
      if (replacing && slot->pre_passed != slot->base.want &&
          stg_fleet_hook_start (slot, slot->base.want, TRUE))
        return;
      if (changing)
        slot->base.post_owed = slot->base.want;
      if (!replacing && slot->restart && waits_for_room (slot))
        return;
      if (slot->pod != NULL && stg_fleet_pod_teardown (slot))
        return; /* its sidecars go first */
      stop_remove (slot);
      return;
    }
  if (slot->container_id != NULL)
    return;
  if (slot->pod != NULL && stg_fleet_pod_teardown (slot))
    return; /* what is left of a pod goes before anything starts */
  if (slot->state == FLEET_DEAD)
    stg_fleet_set_state (slot, FLEET_IDLE); /* a pod that failed before its main container: gone */
  if (slot->killing)
    {
      finish_removal (slot);
      return;
    }
  slot->restart = FALSE;
  if (slot->base.want == 0 || slot->done)
    return;
  gint64 now = g_get_monotonic_time () / 1000;
  if (slot->not_before_ms > now)
    {
      stg_fleet_retry_in (slot, (guint) (slot->not_before_ms - now));
      return;
    }
  start (slot);
}

/* ---- the runtime's operations ------------------------------------------------ */

static gboolean
fleet_apply (StgRuntime *base, gint64 job_id, gint32 instance_id, gint64 config_id, GError **error)
{
  StgFleetRuntime *rt = (StgFleetRuntime *) base;
  Slot *slot = (Slot *) stg_slots_get (rt->slots, job_id, instance_id, error);

  if (slot == NULL)
    return FALSE;
  if (slot->base.want != config_id || slot->killing)
    {
      slot->done = FALSE;
      slot->not_before_ms = 0;
      g_clear_handle_id (&slot->retry_timer, g_source_remove);
    }
  slot->base.want = config_id;
  slot->killing = FALSE;
  slot->pre_failed = 0; /* applied again: its pre_update hook may run again */
  if (slot->base.phase == STG_TASK_FAILED && slot->container_id == NULL)
    slot->not_before_ms = 0; /* asked again: no need to wait out the back-off */
  stg_fleet_drive (slot);
  return TRUE;
}

static gboolean
fleet_kill (StgRuntime *base, gint64 job_id, gint32 instance_id, GError **error)
{
  StgFleetRuntime *rt = (StgFleetRuntime *) base;
  Slot *slot = (Slot *) stg_slots_get (rt->slots, job_id, instance_id, NULL);

  if (slot == NULL)
    return stg_store_delete_instance (rt->store, job_id, instance_id, error);
  slot->killing = TRUE;
  slot->base.want = 0;
  g_clear_handle_id (&slot->retry_timer, g_source_remove);
  if (!stg_fleet_busy (slot) && slot->container_id == NULL)
    stg_fleet_set_phase (slot, STG_TASK_KILLING, API_SCHEDULE_STATUS_KILLING, "killing");
  stg_fleet_drive (slot);
  return TRUE;
}

static gboolean
fleet_restart (StgRuntime *base, gint64 job_id, gint32 instance_id, GError **error)
{
  StgFleetRuntime *rt = (StgFleetRuntime *) base;
  Slot *slot = (Slot *) stg_slots_find (rt->slots, job_id, instance_id);

  if (slot == NULL || slot->base.want == 0)
    {
      g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_NOT_FOUND,
                   "instance %d of job %" G_GINT64_FORMAT " is not running", instance_id, job_id);
      return FALSE;
    }
  slot->restart = slot->container_id != NULL;
  slot->done = FALSE;
  g_clear_handle_id (&slot->retry_timer, g_source_remove);
  slot->not_before_ms = 0;
  stg_fleet_drive (slot);
  return TRUE;
}

static void
fleet_observe (StgRuntime *base, gint64 job_id, gint32 instance_id, StgTaskObservation *out)
{
  Slot *slot = (Slot *) stg_slots_find (((StgFleetRuntime *) base)->slots, job_id, instance_id);

  stg_slot_observe (slot != NULL ? &slot->base : NULL, out);
  if (slot != NULL && slot->base.phase != STG_TASK_ABSENT)
    out->config_id = stg_fleet_shown_config (slot);
}

static void
fleet_free (StgRuntime *base)
{
  StgFleetRuntime *rt = (StgFleetRuntime *) base;

  g_clear_handle_id (&rt->poll_timer, g_source_remove);
  g_clear_pointer (&rt->slots, stg_slots_free);
  for (guint i = 0; i < rt->hosts->len; i++)
    {
      Host *h = rt->hosts->pdata[i];
      g_cancellable_cancel (h->cancel);
      g_clear_object (&h->cancel);
      stg_docker_free (h->docker);
      g_hash_table_unref (h->removing);
      g_free (h->last_error);
      g_ptr_array_unref (h->anchor_waiting);
      g_free (h);
    }
  g_ptr_array_unref (rt->hosts);
  soup_session_abort (rt->session);
  g_object_unref (rt->session);
  stg_fleet_options_clear (&rt->options.fleet);
  g_free (rt->options.data_dir);
  g_free (rt->options.cluster);
  g_free (rt->options.thermos_bundle);
  g_free (rt->options.anchor);
  g_clear_pointer (&rt->anchor_tar, g_bytes_unref);
  g_free (rt->anchor_image);
  g_free (rt->anchor_error);
  g_free (rt->marker);
  g_free (rt);
}

/* clang-format off */
static const FleetCalls fleet_calls = {
  .drive = drive, .container_failed = container_failed,
  .container_finished = container_finished, .slot_lost = slot_lost, .create_main = create_main,
  .create_anchor = stg_fleet_pod_create_anchor, .box_drive = stg_fleet_sidecar_drive,
};

static const StgRuntimeOps fleet_ops = {
  .apply = fleet_apply, .kill = fleet_kill, .restart = fleet_restart, .observe = fleet_observe,
  .validate = stg_fleet_validate, .free = fleet_free,
  .hosts = stg_fleet_hosts, .drain_host = stg_fleet_drain_host, /* a runtime of several hosts */
  .moves = stg_fleet_moves,
  .reconcile = stg_fleet_reconcile, .read_log = stg_fleet_read_log,
  .sidecar_validate = stg_fleet_sidecar_validate, .sidecars = stg_fleet_sidecars,
  .sidecar_apply = stg_fleet_sidecar_apply, /* pods */
};
/* clang-format on */

/* How long a request to a host may take to get there: a quarter of the
 * time a proof of the lead lasts (0, no bound, when it lasts forever). */
static guint
send_bound_ms (StgFleetRuntime *rt)
{
  gint64 acting_ms = rt->store != NULL ? stg_store_lead_acting_ms (rt->store) : 0;

  return acting_ms <= 0 || acting_ms == G_MAXINT64 ? 0 : (guint) MAX (acting_ms / 4, 1);
}

/* The guard of every host's engine (docker.h): a request that changes
 * something on a host goes only while this replica's lead is proven
 * (stg_store_lead_left_ms: on PostgreSQL, for half a lease after a query
 * found its epoch) for longer than the request may take to arrive
 * (send_bound_ms: a quarter of that); otherwise it waits, and the replica
 * steps down or proves its lead again. Each request is logged (debug)
 * with the epoch that sends it. */
static gboolean
may_act (gpointer data, const gchar *method, const gchar *path)
{
  Host *h = data;
  StgFleetRuntime *rt = h->rt;

  if (stg_store_lead_left_ms (rt->store) <= (gint64) send_bound_ms (rt))
    {
      if (!rt->holding)
        g_message ("fleet: holding back requests to the hosts: this replica's lead is not "
                   "proven (the database has not confirmed it lately)");
      rt->holding = TRUE;
      return FALSE;
    }
  if (rt->holding)
    g_message ("fleet: the lead is proven again; requests to the hosts go on");
  rt->holding = FALSE;
  g_debug ("fleet: epoch %" G_GINT64_FORMAT ": %s %s on %s", stg_store_epoch (rt->store), method,
           path, h->config->name);
  return TRUE;
}

/* The marker: a digest of the cluster and the data directory's absolute
 * path, so two staggerds sharing hosts never touch each other's containers. */
static gchar *
make_marker (const gchar *cluster, const gchar *data_dir)
{
  g_autofree gchar *abs = g_canonicalize_filename (data_dir, NULL);
  g_autofree gchar *both = g_strconcat (cluster ? cluster : "", "\n", abs, NULL);

  return g_compute_checksum_for_string (G_CHECKSUM_SHA256, both, -1);
}

StgRuntime *
stg_fleet_runtime_new (StgStore *store, StgClock *clock, const StgFleetRuntimeOptions *options, GError **error)
{
  if (options->fleet.hosts == NULL || options->fleet.hosts->len == 0)
    {
      g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_INVALID,
                   "the fleet runtime needs hosts: add a [host NAME] group with an endpoint to the config file");
      return NULL;
    }
  StgFleetRuntime *rt = g_new0 (StgFleetRuntime, 1);
  rt->base.ops = &fleet_ops;
  rt->calls = &fleet_calls;
  rt->store = store;
  rt->clock = clock;
  rt->options = *options; /* the numbers; the strings and hosts copied below */
  rt->options.data_dir = g_strdup (options->data_dir);
  rt->options.cluster = g_strdup (options->cluster);
  stg_fleet_options_copy (&rt->options.fleet, &options->fleet);
  rt->options.thermos_bundle = g_strdup (options->thermos_bundle);
  rt->options.anchor = g_strdup (options->anchor);
  rt->options.announcing = options->announcing;
  stg_fleet_anchor_load (rt, options->anchor);
  rt->marker = make_marker (options->cluster, options->data_dir);
  rt->slots = stg_slots_new (&rt->base, store, clock, &fleet_slot_class);
  rt->session = soup_session_new_with_options ("timeout", 5, NULL);
  rt->hosts = g_ptr_array_new ();
  for (guint i = 0; i < rt->options.fleet.hosts->len; i++)
    {
      const StgFleetHostConfig *c = rt->options.fleet.hosts->pdata[i];
      StgDockerTls tls = { c->tls_cert, c->tls_key, c->tls_ca };
      StgDocker *docker = stg_docker_new (c->endpoint, &tls, rt->options.fleet.call_timeout_secs, error);
      if (docker == NULL)
        {
          g_prefix_error (error, "host %s: ", c->name);
          fleet_free (&rt->base);
          return NULL;
        }
      Host *h = g_new0 (Host, 1);
      h->rt = rt;
      h->config = c;
      h->docker = docker;
      h->reachable = TRUE;
      h->cancel = g_cancellable_new ();
      h->removing = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      h->anchor_waiting = g_ptr_array_new ();
      stg_docker_set_guard (docker, may_act, h, send_bound_ms (rt));
      g_ptr_array_add (rt->hosts, h);
    }
  return &rt->base;
}
