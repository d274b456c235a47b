/* fleet_hooks.c: update hooks in containers, as the local runtime runs
 * them beside processes. pre_update runs in the container about to be
 * replaced (the new config's command, as Pravega's operator checks an
 * instance before upgrading it): passed, the replace goes on; failed or
 * timed out, the container is left running and the failure counted.
 * post_update runs in the new container once healthy: passed, it counts as
 * RUNNING; failed, the container failed. Both go through the engine's exec
 * API with the hook's timeout. Main-loop thread only.
 */
#include "config.h"

#include "runtime/fleet_private.h"

struct _FleetHook
{
  Slot *slot; /* NULL once dropped */
  gint64 config;
  gboolean pre;
  gboolean timed_out;
  guint timer;
  GCancellable *cancel;
};

static void
hook_free (FleetHook *h)
{
  g_clear_handle_id (&h->timer, g_source_remove);
  g_clear_object (&h->cancel);
  g_free (h);
}

void
stg_fleet_hook_drop (Slot *slot)
{
  FleetHook *h = slot->hook;

  if (h == NULL)
    return;
  slot->hook = NULL;
  h->slot = NULL; /* the callback frees it */
  g_clear_handle_id (&h->timer, g_source_remove);
  g_cancellable_cancel (h->cancel);
  if (slot->op == OP_HOOK)
    slot->op = OP_IDLE;
}

static gboolean
on_timeout (gpointer data)
{
  FleetHook *h = data;

  h->timer = 0;
  h->timed_out = TRUE;
  g_cancellable_cancel (h->cancel);
  return G_SOURCE_REMOVE;
}

/* The hook's outcome, for the slot. */
static void
hook_ended (Slot *slot, gboolean pre, gint64 config, gboolean ok, const gchar *why)
{
  slot->op = OP_IDLE;
  if (pre)
    {
      if (ok)
        slot->pre_passed = config;
      else
        {
          /* Left as it is, with the failure counted, as the local runtime does. */
          slot->pre_failed = config;
          stg_slot_count_failure (&slot->base, why);
          g_autofree gchar *m = g_strdup_printf ("%s: the container on %s is left running", why,
                                                 slot->host->config->name);
          stg_slot_note (&slot->base, m);
        }
      stg_fleet_drive (slot);
      return;
    }
  slot->base.post_owed = 0;
  if (!ok)
    {
      stg_fleet_container_failed (slot, why);
      return;
    }
  g_autofree gchar *m = g_strdup_printf ("healthy on %s; %s", slot->host->config->name, why);
  stg_fleet_healthy (slot, m);
  stg_fleet_drive (slot);
}

static void
on_exec (GObject *source G_GNUC_UNUSED, GAsyncResult *result, gpointer data)
{
  FleetHook *h = data;
  Slot *slot = h->slot;
  g_autoptr (GError) error = NULL;
  gint code = -1;
  const gchar *name = h->pre ? "pre_update" : "post_update";
  gboolean ran = stg_docker_exec_finish (NULL, result, &code, NULL, &error);

  if (slot == NULL)
    {
      hook_free (h);
      return;
    }
  slot->hook = NULL;
  g_autofree gchar *why = h->timed_out ? g_strdup_printf ("%s hook was stopped (timed out)", name)
                          : ran
                              ? g_strdup_printf ("%s hook exited with status %d", name, code)
                              : g_strdup_printf ("%s hook could not run: %s", name, error->message);
  gboolean ok = ran && !h->timed_out && code == 0, pre = h->pre;
  gint64 config = h->config;
  hook_free (h);
  hook_ended (slot, pre, config, ok, why);
}

gboolean
stg_fleet_hook_start (Slot *slot, gint64 config_id, gboolean pre)
{
  g_autoptr (GError) error = NULL;
  gdouble timeout_secs = 60;
  g_auto (GStrv) argv = stg_fleet_hook_argv (slot, config_id, pre, &timeout_secs, &error);

  if (argv == NULL && error == NULL)
    return FALSE;
  FleetHook *h = g_new0 (FleetHook, 1);
  h->slot = slot;
  h->config = config_id;
  h->pre = pre;
  h->cancel = g_cancellable_new ();
  slot->hook = h;
  slot->op = OP_HOOK;
  if (argv == NULL)
    {
      g_autofree gchar *why = g_strdup_printf ("%s hook could not run: %s",
                                               pre ? "pre_update" : "post_update", error->message);
      slot->hook = NULL;
      hook_free (h);
      hook_ended (slot, pre, config_id, FALSE, why);
      return TRUE;
    }
  g_autofree gchar *m = g_strdup_printf ("running the %s hook in container %.12s on %s",
                                         pre ? "pre_update" : "post_update", slot->container_id,
                                         slot->host->config->name);
  stg_slot_note (&slot->base, m);
  h->timer = g_timeout_add ((guint) (timeout_secs * 1000), on_timeout, h);
  stg_docker_exec_async (slot->host->docker, slot->container_id, (const gchar *const *) argv,
                         h->cancel, on_exec, h);
  return TRUE;
}
