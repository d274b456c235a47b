/* fleet_sidecar_health.c: the checks of a pod's sidecar containers
 * (fleet_sidecar.c's members) and the hand-over of a hot upgrade: a new
 * version's health checks (HTTP on its own probe port when the anchor
 * holds the sidecar's sockets, or a shell command run in its container),
 * then its migration hook (post_update, through exec), then the commit
 * that makes it the serving slot, recorded in the store before the old
 * slot is reset. A member whose checks fail, the serving one too, is
 * judged as a main container is (fleet_health.c's stg_fleet_confirm):
 * failed once a second round of checks in a row fails. Calls the store,
 * docker.c and health.c. Main-loop thread only.
 */
#include "config.h"

#include <string.h>

#include "runtime/fleet/fleet_sidecar_private.h"

/* ---- health and hand-over ----------------------------------------------------------- */

static void commit (Box *box, guint k);
static void run_hook (Box *box, guint k);

static void
on_confirmed (gpointer data, const FleetCheckWord *word)
{
  Box *box = data;
  gint k = box->watched;

  if (k < 0 || box->health != NULL || g_strcmp0 (box->m[k].id, word->container) != 0)
    return; /* the box moved on meanwhile */
  if (word->excuse == NULL)
    {
      g_autofree gchar *m = g_strdup_printf ("unhealthy: %s", word->why);
      stg_fleet_box_member_failed (box, (guint) k, m);
      return;
    }
  box->m[k].suspect = word->suspect;
  stg_fleet_box_note (box, "%s", word->excuse);
  stg_fleet_box_watch (box, (guint) k, box->m[k].healthy);
}

/* Member @k's checks failed: judged as a main container's are
 * (stg_fleet_confirm), a serving version too; no checks meanwhile. */
static void
confirm_unhealthy (Box *box, guint k, const gchar *why)
{
  if (stg_health_passed (box->health) > 0)
    box->m[k].suspect = FALSE;
  g_clear_pointer (&box->health, stg_health_free);
  stg_fleet_confirm (box->slot->host, box->m[k].id, why, box->m[k].suspect, box->cancel,
                     on_confirmed, box);
}

static void
on_health (gpointer data, gboolean healthy, const gchar *why)
{
  Box *box = data;
  gint k = box->watched;

  if (k < 0)
    return;
  if (!healthy)
    {
      confirm_unhealthy (box, (guint) k, why);
      return;
    }
  box->m[k].healthy = TRUE;
  if (k == box->serving)
    {
      stg_fleet_box_changed (box);
      stg_fleet_pod_sidecar_serves (box->slot);
      stg_fleet_box_drive (box);
      return;
    }
  run_hook (box, (guint) k);
}

static void
exec_check (gpointer data, const gchar *const *argv, GCancellable *cancel, GAsyncReadyCallback done,
            gpointer done_data)
{
  Box *box = data;

  stg_docker_exec_async (box->slot->host->docker, box->m[box->watched].id, argv, NULL, cancel, done,
                         done_data);
}

/* The port the box's HTTP checks of member @k go to: its probe socket's
 * when the anchor holds the sidecar's sockets (either version may answer
 * on those), else "health", "http" or the first of its ports. 0: none. */
static gint
health_port (Box *box, guint k, GHashTable *ports)
{
  const gchar *which = NULL;
  g_autofree gchar *probe = box->hot && box->activation ? stg_fleet_probe_port_name (box->name, k)
                                                        : NULL;
  gchar **names = box->ports;

  if (probe != NULL)
    which = probe;
  else if (names != NULL && names[0] != NULL)
    which = g_strv_contains ((const gchar *const *) names, "health") ? "health"
            : g_strv_contains ((const gchar *const *) names, "http") ? "http"
                                                                     : names[0];
  return which ? GPOINTER_TO_INT (g_hash_table_lookup (ports, which)) : 0;
}

/* Checks member @k (@healthy: known healthy already, e.g. adopted). */
void
stg_fleet_box_watch (Box *box, guint k, gboolean healthy)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiSidecar) sc = NULL;
  g_autoptr (StgExecutorSpec) spec = NULL;

  g_assert (k < 2 && box->m[k].id != NULL); /* a member with a container */
  g_autoptr (GHashTable) ports = NULL;

  stg_fleet_box_stop_watching (box);
  if (!stg_fleet_box_load (box, box->m[k].version, &sc, &spec, &error) ||
      (ports = stg_fleet_pod_ports (box->slot, &error)) == NULL)
    {
      g_autofree gchar *m = g_strdup_printf ("its version %d can no longer be read: %s",
                                             box->m[k].version, error->message);
      stg_fleet_box_member_failed (box, k, m);
      return;
    }
  StgTemplateVars vars = stg_slot_template_vars (&box->slot->base, box->slot->rt->options.cluster,
                                                 box->m[k].version, ports);
  const StgHealthSpec *h = &spec->health;
  gint port = h->kind == STG_HEALTH_HTTP ? health_port (box, k, ports) : 0;
  g_autofree gchar *url = port > 0
                              ? g_strdup_printf ("http://%s:%d%s", box->slot->host->config->address,
                                                 port, h->endpoint ? h->endpoint : "/")
                              : NULL;
  g_autofree gchar *command = h->kind == STG_HEALTH_SHELL
                                  ? stg_template_expand (h->shell_command, &vars, NULL, NULL)
                                  : NULL;
  gchar *shell[] = { (gchar *) "/bin/sh", (gchar *) "-c", command, NULL };
  StgHealthTarget target = {
    .session = box->slot->rt->session,
    .url = url,
    .shell_argv = command ? shell : NULL,
    .run = exec_check,
    .run_finish = stg_fleet_exec_check_finish,
    .run_data = box,
    .counts = box->slot->rt->options.health_counts,
  };
  box->watched = (gint) k;
  box->health = stg_health_new (h, &target, healthy, on_health, box);
}

static void
on_hook_done (gpointer data, gint code, const gchar *output G_GNUC_UNUSED, const GError *error)
{
  Box *box = data;
  gint k = box->hook_member;
  g_autofree gchar *why = stg_fleet_exec_outcome ("post_update hook", code, error);

  box->hook = NULL;
  box->hook_member = -1;
  if (error == NULL && code == 0)
    commit (box, (guint) k);
  else
    stg_fleet_box_member_failed (box, (guint) k, why);
}

/* Member @k is healthy and takes over from the serving one: its migration
 * hook (the sidecar's post_update) first, when it has one. */
static void
run_hook (Box *box, guint k)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiSidecar) sc = NULL;
  g_autoptr (StgExecutorSpec) spec = NULL;
  g_autoptr (GHashTable) ports = NULL;

  if (box->m[k].from == 0 || !stg_fleet_box_load (box, box->m[k].version, &sc, &spec, &error) ||
      spec->post_update.command == NULL)
    {
      if (error != NULL)
        stg_fleet_box_member_failed (box, k, error->message);
      else
        commit (box, k);
      return;
    }
  ports = stg_fleet_pod_ports (box->slot, &error);
  StgTemplateVars vars = stg_slot_template_vars (&box->slot->base, box->slot->rt->options.cluster,
                                                 box->m[k].version, ports);
  g_autofree gchar *command = ports ? stg_template_expand (spec->post_update.command, &vars, NULL,
                                                           &error)
                                    : NULL;
  if (command == NULL)
    {
      stg_fleet_box_member_failed (box, k, error->message);
      return;
    }
  gchar buf[64];
  stg_fleet_box_note (box,
                      "running the post_update hook in %s (version %d takes over from version %d)",
                      stg_fleet_box_slot_label (box, k, buf), box->m[k].version, box->m[k].from);
  const gchar *argv[] = { "/bin/sh", "-c", command, NULL };
  box->hook_member = (gint) k;
  box->hook = stg_fleet_exec (box->slot->host->docker, box->m[k].id, argv, NULL,
                              spec->post_update.timeout_secs, on_hook_done, box);
}

/* Member @k serves now: recorded, then the other slot is reset. */
static void
commit (Box *box, guint k)
{
  gint old = box->serving;
  gchar buf[64];

  box->serving = (gint) k;
  box->backoff_ms = 0;
  stg_fleet_box_set_cause (box, NULL);
  stg_fleet_box_save (box);
  if (old >= 0 && old != (gint) k)
    stg_fleet_box_note (box, "hot upgrade done: version %d serves in %s, version %d goes",
                        box->m[k].version, stg_fleet_box_slot_label (box, k, buf),
                        box->m[old].version);
  else
    stg_fleet_box_note (box, "version %d serves in %s", box->m[k].version,
                        stg_fleet_box_slot_label (box, k, buf));
  stg_fleet_box_changed (box);
  stg_fleet_pod_sidecar_serves (box->slot);
  stg_fleet_box_drive (box);
}
