/* fleet_hooks.c: update hooks in containers, as the local runtime runs
 * them beside processes. pre_update runs in the container about to be
 * replaced (the new config's command, as Pravega's operator checks an
 * instance before upgrading it): passed, the replace goes on; failed or
 * timed out, the container is left running and the failure counted.
 * post_update runs in the new container once healthy: passed, it counts as
 * RUNNING; failed, the container failed. Both go through the engine's exec
 * API with the hook's timeout (stg_fleet_exec, which the pods' sidecars
 * and anchors use too) and the environment a local hook gets (run.c's
 * stg_run_hook), over the container's own. Main-loop thread only.
 */
#include "config.h"

#include "runtime/fleet/fleet_private.h"

/* ---- an exec with a time limit ---------------------------------------------------- */

struct _FleetExec
{
  StgFleetExecDone done; /* NULL once dropped */
  gpointer data;
  gboolean timed_out;
  guint timer;
  GCancellable *cancel;
};

static void
exec_free (FleetExec *x)
{
  g_clear_handle_id (&x->timer, g_source_remove);
  g_clear_object (&x->cancel);
  g_free (x);
}

void
stg_fleet_exec_drop (FleetExec *x)
{
  if (x == NULL)
    return;
  x->done = NULL; /* the call back frees it */
  g_clear_handle_id (&x->timer, g_source_remove);
  g_cancellable_cancel (x->cancel);
}

static gboolean
on_exec_timeout (gpointer data)
{
  FleetExec *x = data;

  x->timer = 0;
  x->timed_out = TRUE;
  g_cancellable_cancel (x->cancel);
  return G_SOURCE_REMOVE;
}

static void
on_exec_done (GObject *source G_GNUC_UNUSED, GAsyncResult *result, gpointer data)
{
  FleetExec *x = data;
  g_autoptr (GError) error = NULL;
  g_autofree gchar *output = NULL;
  gint code = -1;

  if (stg_docker_exec_finish (NULL, result, &code, &output, &error))
    g_clear_error (&error);
  if (x->done != NULL && x->timed_out)
    {
      g_clear_error (&error);
      error = g_error_new (G_IO_ERROR, G_IO_ERROR_TIMED_OUT, "timed out");
    }
  if (x->done != NULL)
    x->done (x->data, code, output, error);
  exec_free (x);
}

gchar *
stg_fleet_exec_outcome (const gchar *name, gint code, const GError *error)
{
  if (error == NULL)
    return g_strdup_printf ("%s exited with status %d", name, code);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT))
    return g_strdup_printf ("%s was stopped (timed out)", name);
  return g_strdup_printf ("%s could not run: %s", name, error->message);
}

FleetExec *
stg_fleet_exec (StgDocker *docker, const gchar *id, const gchar *const *argv,
                const gchar *const *env, gdouble timeout_secs, StgFleetExecDone done, gpointer data)
{
  FleetExec *x = g_new0 (FleetExec, 1);

  x->done = done;
  x->data = data;
  x->cancel = g_cancellable_new ();
  x->timer = g_timeout_add ((guint) (timeout_secs * 1000), on_exec_timeout, x);
  stg_docker_exec_async (docker, id, argv, env, x->cancel, on_exec_done, x);
  return x;
}

/* ---- update hooks ------------------------------------------------------------------ */

struct _FleetHook
{
  Slot *slot;
  gint64 config;
  gboolean pre;
  FleetExec *exec;
};

void
stg_fleet_hook_drop (Slot *slot)
{
  FleetHook *h = slot->hook;

  if (h == NULL)
    return;
  slot->hook = NULL;
  stg_fleet_exec_drop (h->exec);
  g_free (h);
  if (slot->state == FLEET_HOOK)
    stg_fleet_settle (slot);
}

/* The hook's outcome, for the slot. */
static void
hook_ended (Slot *slot, gboolean pre, gint64 config, gboolean ok, const gchar *why)
{
  stg_fleet_settle (slot);
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
on_hook_done (gpointer data, gint code, const gchar *output G_GNUC_UNUSED, const GError *error)
{
  FleetHook *h = data;
  Slot *slot = h->slot;
  const gchar *name = h->pre ? "pre_update hook" : "post_update hook";
  g_autofree gchar *why = stg_fleet_exec_outcome (name, code, error);
  gboolean ok = error == NULL && code == 0, pre = h->pre;
  gint64 config = h->config;

  slot->hook = NULL;
  g_free (h);
  hook_ended (slot, pre, config, ok, why);
}

/* What a hook of @config_id sees besides the container's environment, as
 * a local hook does: the instance, its hook's name, and the versions it
 * moves between, the right way round on a rollback too (pre_update: from
 * what the container runs; post_update: from what the container replaced). */
static gchar **
hook_environ (Slot *slot, gint64 config_id, gboolean pre)
{
  StgStore *store = slot->rt->store;
  gint64 from_config = pre ? slot->container_config : slot->post_from;
  gint from = from_config != 0 ? stg_store_config_version (store, from_config) : 0;
  gint to = stg_store_config_version (store, config_id);
  g_autofree gchar *inst = g_strdup_printf ("%d", slot->base.key.instance);
  g_autofree gchar *from_text = g_strdup_printf ("%d", from);
  g_autofree gchar *to_text = g_strdup_printf ("%d", to);
  gchar **env = NULL;

  env = g_environ_setenv (env, "STAGGER_INSTANCE", inst, TRUE);
  env = g_environ_setenv (env, "STAGGER_VERSION", to_text, TRUE);
  env = g_environ_setenv (env, "STAGGER_HOOK", pre ? "pre_update" : "post_update", TRUE);
  env = g_environ_setenv (env, "STAGGER_FROM_VERSION", from_text, TRUE);
  env = g_environ_setenv (env, "STAGGER_TO_VERSION", to_text, TRUE);
  return env;
}

gboolean
stg_fleet_hook_start (Slot *slot, gint64 config_id, gboolean pre)
{
  g_autoptr (GError) error = NULL;
  gdouble timeout_secs = 60;
  g_auto (GStrv) argv = stg_fleet_hook_argv (slot, config_id, pre, &timeout_secs, &error);

  if (argv == NULL && error == NULL)
    return FALSE;
  if (argv == NULL)
    {
      g_autofree gchar *why = g_strdup_printf ("%s hook could not run: %s",
                                               pre ? "pre_update" : "post_update", error->message);
      stg_fleet_set_state (slot, FLEET_HOOK);
      hook_ended (slot, pre, config_id, FALSE, why);
      return TRUE;
    }
  FleetHook *h = g_new0 (FleetHook, 1);
  h->slot = slot;
  h->config = config_id;
  h->pre = pre;
  slot->hook = h;
  stg_fleet_set_state (slot, FLEET_HOOK);
  g_autofree gchar *m = g_strdup_printf ("running the %s hook in container %.12s on %s",
                                         pre ? "pre_update" : "post_update", slot->container_id,
                                         slot->host->config->name);
  stg_slot_note (&slot->base, m);
  g_auto (GStrv) env = hook_environ (slot, config_id, pre);
  h->exec = stg_fleet_exec (slot->host->docker, slot->container_id, (const gchar *const *) argv,
                            (const gchar *const *) env, timeout_secs, on_hook_done, h);
  return TRUE;
}
