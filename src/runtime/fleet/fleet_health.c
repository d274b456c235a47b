/* fleet_health.c: the health of a slot's main container: its checks
 * (HTTP from staggerd to the host's address, or a shell command run in the
 * container through the exec API; a failed one confirmed with the engine
 * first: no answer from it counts nothing, a container that runs gets a
 * second round; sidecar containers are judged so too), and what healthy
 * means for the slot:
 * RUNNING after its post_update hook, and, for a pod, once its sidecars
 * serve too (as a Kubernetes pod is ready once all its containers are).
 * Calls docker.c, health.c and fleet_box.c. Main-loop thread only.
 */
#include "config.h"

#include "runtime/fleet/fleet_private.h"

/* The slot's main container passed its checks: RUNNING (after its
 * post_update hook), unless it is a pod whose sidecars do not all serve
 * yet (then called again once they do: stg_fleet_pod_sidecar_serves). */
static void
main_healthy (Slot *slot)
{
  /* First healthy after an update: its post_update hook decides. */
  if (slot->state == FLEET_HOOK)
    return;
  /* A pod is healthy once its sidecars serve too, as a Kubernetes pod is
   * ready once all its containers are (fleet_pod.c calls again). */
  slot->waits_sidecars = slot->pod != NULL && slot->base.phase != STG_TASK_RUNNING &&
                         !stg_fleet_pod_serving (slot);
  if (slot->waits_sidecars)
    {
      stg_slot_set_cause (&slot->base, "its container is healthy; waiting for its sidecars");
      return;
    }
  if (slot->base.post_owed != 0 && slot->base.post_owed == slot->container_config &&
      slot->base.phase != STG_TASK_RUNNING)
    {
      if (stg_fleet_hook_start (slot, slot->container_config, FALSE))
        return;
      slot->base.post_owed = 0;
    }
  g_autofree gchar *m = g_strdup_printf ("healthy on %s", slot->host->config->name);
  stg_fleet_healthy (slot, m);
}

/* A failed health check waiting for the engine's word on its container. */
typedef struct
{
  FleetConfirmFunc func;
  gpointer data;
  gchar *host;      /* the host's name */
  gchar *container; /* the container the check was for */
  gchar *why;
  gboolean suspect;
} Confirm;

static void
confirm_free (Confirm *c)
{
  g_free (c->host);
  g_free (c->container);
  g_free (c->why);
  g_free (c);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (Confirm, confirm_free)

static void
on_inspected (GObject *source G_GNUC_UNUSED, GAsyncResult *result, gpointer data)
{
  g_autoptr (Confirm) c = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonNode) node = stg_docker_inspect_finish (NULL, result, &error);
  g_autofree gchar *excuse = NULL;
  gboolean suspect = c->suspect;

  if (node == NULL && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  JsonObject *state = node != NULL && JSON_NODE_HOLDS_OBJECT (node)
                          ? json_object_get_object_member (json_node_get_object (node), "State")
                          : NULL;
  gboolean running = state != NULL &&
                     json_object_get_boolean_member_with_default (state, "Running", FALSE);
  if (g_error_matches (error, STG_DOCKER_ERROR, STG_DOCKER_ERROR_UNREACHABLE))
    excuse = g_strdup_printf ("health checks get no answer (%s), nor does host %s's engine: not "
                              "counted while the host is away",
                              c->why, c->host);
  else if (running && !suspect)
    {
      /* The engine answers and the container runs: one round of failed
       * checks (a slow answer on a loaded host, or a host back just now)
       * is not enough; a second round decides. */
      excuse = g_strdup_printf ("health checks failed (%s); host %s answers and the container "
                                "runs: checking again",
                                c->why, c->host);
      suspect = TRUE;
    }
  FleetCheckWord word = { c->container, c->why, excuse, suspect };
  c->func (c->data, &word);
}

void
stg_fleet_confirm (Host *host, const gchar *container, const gchar *why, gboolean suspect,
                   GCancellable *cancel, FleetConfirmFunc func, gpointer data)
{
  Confirm *c = g_new0 (Confirm, 1);

  c->func = func;
  c->data = data;
  c->host = g_strdup (host->config->name);
  c->container = g_strdup (container);
  c->why = g_strdup (why ? why : "health check failed");
  c->suspect = suspect;
  stg_docker_inspect_async (host->docker, container, cancel, on_inspected, c);
}

static void
on_confirmed (gpointer data, const FleetCheckWord *word)
{
  Slot *slot = data;

  slot->confirming = FALSE;
  if (g_strcmp0 (slot->container_id, word->container) != 0 || slot->state != FLEET_IDLE ||
      slot->health != NULL)
    return; /* the slot moved on meanwhile */
  if (word->excuse == NULL)
    {
      g_autofree gchar *failed = g_strdup_printf ("unhealthy: %s", word->why);
      stg_fleet_container_failed (slot, failed);
      return;
    }
  slot->suspect = word->suspect;
  if (g_strcmp0 (slot->base.cause, word->excuse) != 0)
    {
      stg_slot_set_cause (&slot->base, word->excuse);
      stg_slot_note (&slot->base, word->excuse);
    }
  stg_fleet_watch (slot, slot->base.phase == STG_TASK_RUNNING);
}

/* A failed health check counts only when the host's engine answers about
 * the container (stg_fleet_confirm); checks stop until the engine says. A
 * round that passed a check since the last one failed ends the suspicion:
 * only failures in a row count. */
static void
confirm_unhealthy (Slot *slot, const gchar *why)
{
  if (stg_health_passed (slot->health) > 0)
    slot->suspect = FALSE;
  g_clear_pointer (&slot->health, stg_health_free);
  slot->confirming = TRUE;
  stg_fleet_confirm (slot->host, slot->container_id, why, slot->suspect, slot->base.cancel,
                     on_confirmed, slot);
}

static void
on_health (gpointer data, gboolean healthy, const gchar *why)
{
  Slot *slot = data;

  if (!healthy)
    {
      confirm_unhealthy (slot, why);
      return;
    }
  slot->suspect = FALSE;
  main_healthy (slot);
}

/* Shell checks run inside the slot's container, through the exec API. */
static void
exec_check (gpointer data, const gchar *const *argv, GCancellable *cancel, GAsyncReadyCallback done,
            gpointer done_data)
{
  Slot *slot = data;

  stg_docker_exec_async (slot->host->docker, slot->container_id, argv, NULL, cancel, done,
                         done_data);
}

gboolean
stg_fleet_exec_check_finish (gpointer data G_GNUC_UNUSED, GAsyncResult *result, gint *status,
                             GError **error)
{
  return stg_docker_exec_finish (NULL, result, status, NULL, error);
}

void
stg_fleet_watch (Slot *slot, gboolean already_healthy)
{
  g_autoptr (GError) error = NULL;
  g_autofree gchar *url = NULL, *command = NULL;
  g_autoptr (StgTaskSpec) spec = stg_fleet_health_parts (slot, slot->container_config, &url,
                                                         &command, &error);

  g_clear_pointer (&slot->health, stg_health_free);
  if (spec == NULL && error != NULL && error->domain == STG_STORE_ERROR &&
      error->code != STG_STORE_ERROR_CORRUPT)
    {
      /* The database, not the instance (a config it holds damaged is the
       * instance's): the next listing that shows the container running
       * watches it again (fleet_sync.c). */
      g_warning ("fleet: cannot watch instance %d of %s/%s/%s yet: %s", slot->base.key.instance,
                 slot->base.job->role, slot->base.job->environment, slot->base.job->name,
                 error->message);
      return;
    }
  if (spec == NULL)
    {
      g_autofree gchar *m = g_strdup_printf ("its task config can no longer be read: %s",
                                             error->message);
      stg_fleet_container_failed (slot, m);
      return;
    }
  slot->stop_timeout_secs = (guint) (spec->exec->stop_timeout_secs + 0.999);
  gchar *shell[] = { (gchar *) "/bin/sh", (gchar *) "-c", command, NULL };
  StgHealthTarget target = {
    .session = slot->rt->session,
    .url = url,
    .shell_argv = command ? shell : NULL,
    .run = exec_check,
    .run_finish = stg_fleet_exec_check_finish,
    .run_data = slot,
  };
  target.counts = slot->rt->options.health_counts;
  if (already_healthy)
    stg_slot_assume (&slot->base, STG_TASK_RUNNING, slot->base.status); /* adopted as it was */
  slot->health = stg_health_new (&spec->exec->health, &target, already_healthy, on_health, slot);
}

void
stg_fleet_pod_sidecar_serves (Slot *slot)
{
  if (slot->waits_sidecars && !stg_fleet_busy (slot) && slot->health != NULL &&
      stg_fleet_pod_serving (slot))
    main_healthy (slot);
}
