/* fleet_health.c: the health of a slot's main container: its checks
 * (HTTP from staggerd to the host's address, or a shell command run in the
 * container through the exec API), and what healthy means for the slot:
 * RUNNING after its post_update hook, and, for a pod, once its sidecars
 * serve too (as a Kubernetes pod is ready once all its containers are).
 * Calls docker.c, health.c and fleet_pod.c. Main-loop thread only.
 */
#include "config.h"

#include "runtime/fleet_private.h"

void
stg_fleet_main_healthy (Slot *slot)
{
  /* First healthy after an update: its post_update hook decides. */
  if (slot->op == OP_HOOK)
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

static void
on_health (gpointer data, gboolean healthy, const gchar *why)
{
  Slot *slot = data;

  if (!healthy)
    {
      g_autofree gchar *m = g_strdup_printf ("unhealthy: %s", why ? why : "health check failed");
      stg_fleet_container_failed (slot, m);
      return;
    }
  stg_fleet_main_healthy (slot);
}

/* Shell checks run inside the slot's container, through the exec API. */
static void
exec_check (gpointer data, const gchar *const *argv, GCancellable *cancel, GAsyncReadyCallback done,
            gpointer done_data)
{
  Slot *slot = data;

  stg_docker_exec_async (slot->host->docker, slot->container_id, argv, cancel, done, done_data);
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
