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
 *   (no container) --[create_member, on_member_created, on_member_started]--> started
 *   started --[on_health: healthy; run_hook for a version that takes over]--> healthy
 *   healthy, not serving --[commit]--> serving (recorded in the store first)
 *   started, healthy --[member_failed: checks, hook, exit]--> dead (a real version
 *            counts a failure: the box waits out a back-off before trying again)
 *   dead, or not wanted --[remove_member: stop, remove]--> (no container)
 *
 * A new version that keeps failing never takes over: the serving slot
 * keeps serving, and the engine's update (engine/sidecar.c) decides when
 * to give up and roll back. Invariants: (1) a box makes one engine call at
 * a time (busy); (2) at most one member serves, and only a healthy one;
 * (3) the store has what the box is asked to run and which slot serves
 * before a container is created for it, so a restarted staggerd adopts
 * the slot that served and goes on from there: a new version already
 * started is checked again (and its hook run again), never doubled.
 * Calls the store, docker.c, health.c and fleet_pod*.c. Main-loop thread
 * only.
 */
#include "config.h"

#include <string.h>

#include "runtime/fleet_private.h"

#define BACKOFF_FIRST_MS 1000
#define BACKOFF_MAX_MS 30000
#define ENGINE_RETRY_MS 1000
#define EMPTY_STOP_SECS 2

typedef struct
{
  gchar *id;         /* (nullable) its container */
  gint version;      /* what it runs; 0: the empty image */
  gint from;         /* the version serving when it was made (0: none) */
  gint64 started_us; /* when it started (monotonic); 0: not started */
  gboolean healthy;  /* its checks passed, and its hook when it took over */
  gboolean dead;     /* exited or failed: to be removed */
} Member;

struct _Box
{
  Slot *slot;
  gchar *name;
  gint known;             /* the version hot, activation and ports were read from; 0: none */
  gboolean hot;
  gboolean activation;
  gchar **ports;          /* its sidecar's named ports (and its probes') */
  gchar **held;           /* those the anchor holds; NULL: none */
  Member m[2];
  gint want;              /* the version asked for; 0: leaving the pod */
  gint serving;           /* the member serving; -1: none */
  guint32 failures;       /* failed starts of @want */
  gint backoff_ms;
  gint64 not_before_ms;   /* monotonic */
  gchar *cause;
  gboolean clearing;      /* the pod goes */
  gboolean busy;          /* an engine call in flight ... */
  guint calling;          /* ... about this member */
  gboolean pulled;        /* the image of the member being made was pulled already */
  StgHealth *health;
  gint watched;           /* the member @health checks; -1 */
  FleetExec *hook;        /* the migration hook in flight */
  gint hook_member;
  guint retry_timer;
  GCancellable *cancel;   /* cancelled when the box is freed */
};

static void box_changed (Box *box);
static void member_failed (Box *box, guint k, const gchar *why);

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

static void
stop_watching (Box *box)
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
stg_fleet_box_free (Box *box)
{
  g_cancellable_cancel (box->cancel);
  g_clear_object (&box->cancel);
  stop_watching (box);
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
static StgExecutorSpec *
parse (const ApiSidecar *sidecar, GError **error)
{
  g_autoptr (GPtrArray) names = g_ptr_array_new ();

  for (guint i = 0; sidecar->ports != NULL && i < sidecar->ports->len; i++)
    g_ptr_array_add (names, sidecar->ports->pdata[i]);
  g_ptr_array_add (names, NULL);
  return stg_executor_spec_parse (sidecar->executorData ? sidecar->executorData : "",
                                  (const gchar *const *) names->pdata, error);
}

/* Version @version of the box's sidecar and its executor data parsed. */
static gboolean
load (Box *box, gint version, ApiSidecar **sidecar, StgExecutorSpec **spec, GError **error)
{
  StgFleetRuntime *rt = box->slot->rt;
  g_autoptr (ApiSidecar) sc = stg_store_get_sidecar_version (rt->store, box->name, version, error);

  if (sc == NULL)
    return FALSE;
  *spec = parse (sc, error);
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
  if (!load (box, version, &sc, &spec, error))
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
    .job_id = slot->base.key.job_id, .instance_id = slot->base.key.instance,
    .sidecar = box->name, .want = box->want, .serving_slot = box->serving + 1,
    .serving_version = box->serving >= 0 ? box->m[box->serving].version : 0,
    .failures = (gint) box->failures,
  };

  if (!stg_store_put_pod_sidecar (slot->rt->store, &row, &error))
    g_warning ("fleet: sidecar %s of instance %d: %s", box->name, slot->base.key.instance,
               error->message);
}

/* Records @message as an event of the instance, about the sidecar. */
static void
note (Box *box, const gchar *format, ...) G_GNUC_PRINTF (2, 3);
static void
note (Box *box, const gchar *format, ...)
{
  va_list ap;

  va_start (ap, format);
  g_autofree gchar *text = g_strdup_vprintf (format, ap);
  va_end (ap);
  g_autofree gchar *m = g_strdup_printf ("sidecar %s: %s", box->name, text);
  stg_slot_note (&box->slot->base, m);
}

static void
set_cause (Box *box, const gchar *why)
{
  g_free (box->cause);
  box->cause = g_strdup (why);
}

/* The engine hears of it (runtime.h's listener). */
static void
box_changed (Box *box)
{
  stg_runtime_notify_later (&box->slot->rt->base, box->slot->base.key.job_id,
                            box->slot->base.key.instance);
}

static const gchar *
slot_label (const Box *box, guint k, gchar buf[64])
{
  if (!box->hot)
    return box->name;
  g_snprintf (buf, 64, "%s-%u", box->name, k + 1);
  return buf;
}

/* ---- health and hand-over ----------------------------------------------------------- */

static void commit (Box *box, guint k);
static void run_hook (Box *box, guint k);

static void
on_health (gpointer data, gboolean healthy, const gchar *why)
{
  Box *box = data;
  gint k = box->watched;

  if (k < 0)
    return;
  if (!healthy)
    {
      g_autofree gchar *m = g_strdup_printf ("unhealthy: %s", why ? why : "health check failed");
      member_failed (box, (guint) k, m);
      return;
    }
  box->m[k].healthy = TRUE;
  if (k == box->serving)
    {
      box_changed (box);
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

  stg_docker_exec_async (box->slot->host->docker, box->m[box->watched].id, argv, cancel, done,
                         done_data);
}

static gboolean
exec_check_finish (gpointer data G_GNUC_UNUSED, GAsyncResult *result, gint *status, GError **error)
{
  return stg_docker_exec_finish (NULL, result, status, NULL, error);
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
static void
watch (Box *box, guint k, gboolean healthy)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiSidecar) sc = NULL;
  g_autoptr (StgExecutorSpec) spec = NULL;
  g_autoptr (GHashTable) ports = NULL;

  stop_watching (box);
  if (!load (box, box->m[k].version, &sc, &spec, &error) ||
      (ports = stg_fleet_pod_ports (box->slot, &error)) == NULL)
    {
      g_autofree gchar *m = g_strdup_printf ("its version %d can no longer be read: %s",
                                             box->m[k].version, error->message);
      member_failed (box, k, m);
      return;
    }
  StgTemplateVars vars = stg_slot_template_vars (&box->slot->base, box->slot->rt->options.cluster,
                                                 box->m[k].version, ports);
  const StgHealthSpec *h = &spec->health;
  gint port = h->kind == STG_HEALTH_HTTP ? health_port (box, k, ports) : 0;
  g_autofree gchar *url = port > 0 ? g_strdup_printf ("http://%s:%d%s",
                                                      box->slot->host->config->address, port,
                                                      h->endpoint ? h->endpoint : "/")
                                   : NULL;
  g_autofree gchar *command = h->kind == STG_HEALTH_SHELL
                                  ? stg_template_expand (h->shell_command, &vars, NULL, NULL)
                                  : NULL;
  gchar *shell[] = { (gchar *) "/bin/sh", (gchar *) "-c", command, NULL };
  StgHealthTarget target = {
    .session = box->slot->rt->session, .url = url, .shell_argv = command ? shell : NULL,
    .run = exec_check, .run_finish = exec_check_finish, .run_data = box,
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
    member_failed (box, (guint) k, why);
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

  if (box->m[k].from == 0 || !load (box, box->m[k].version, &sc, &spec, &error) ||
      spec->post_update.command == NULL)
    {
      if (error != NULL)
        member_failed (box, k, error->message);
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
      member_failed (box, k, error->message);
      return;
    }
  gchar buf[64];
  note (box, "running the post_update hook in %s (version %d takes over from version %d)",
        slot_label (box, k, buf), box->m[k].version, box->m[k].from);
  const gchar *argv[] = { "/bin/sh", "-c", command, NULL };
  box->hook_member = (gint) k;
  box->hook = stg_fleet_exec (box->slot->host->docker, box->m[k].id, argv,
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
  set_cause (box, NULL);
  stg_fleet_box_save (box);
  if (old >= 0 && old != (gint) k)
    note (box, "hot upgrade done: version %d serves in %s, version %d goes", box->m[k].version,
          slot_label (box, k, buf), box->m[old].version);
  else
    note (box, "version %d serves in %s", box->m[k].version, slot_label (box, k, buf));
  box_changed (box);
  stg_fleet_pod_sidecar_serves (box->slot);
  stg_fleet_box_drive (box);
}

/* ---- engine calls --------------------------------------------------------------------- */

static gboolean
on_retry (gpointer data)
{
  Box *box = data;

  box->retry_timer = 0;
  stg_fleet_box_drive (box);
  return G_SOURCE_REMOVE;
}

static void
retry_in (Box *box, gint ms)
{
  g_clear_handle_id (&box->retry_timer, g_source_remove);
  box->retry_timer = g_timeout_add ((guint) MAX (ms, 1), on_retry, box);
}

/* An engine call of the box failed: the host away is tried again; else
 * member @k failed. */
static void
call_failed (Box *box, guint k, const gchar *what, const GError *error)
{
  g_autofree gchar *m = g_strdup_printf ("%s on %s: %s", what, box->slot->host->config->name,
                                         error->message);

  box->busy = FALSE;
  if (g_error_matches (error, STG_DOCKER_ERROR, STG_DOCKER_ERROR_UNREACHABLE))
    {
      set_cause (box, m);
      retry_in (box, ENGINE_RETRY_MS);
      return;
    }
  member_failed (box, k, m);
}

static void
on_member_removed (GObject *source G_GNUC_UNUSED, GAsyncResult *result, gpointer data)
{
  Box *box = data;
  g_autoptr (GError) error = NULL;

  if (!stg_docker_finish (NULL, result, &error) &&
      g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  box->busy = FALSE;
  if (error != NULL)
    {
      g_warning ("fleet: sidecar %s: cannot remove container %.12s on %s: %s", box->name,
                 box->m[box->calling].id, box->slot->host->config->name, error->message);
      retry_in (box, ENGINE_RETRY_MS);
      return;
    }
  Member *m = &box->m[box->calling];
  g_clear_pointer (&m->id, g_free);
  *m = (Member){ 0 };
  stg_fleet_box_drive (box);
}

static void
on_member_stopped (GObject *source G_GNUC_UNUSED, GAsyncResult *result, gpointer data)
{
  Box *box = data;
  g_autoptr (GError) error = NULL;

  if (!stg_docker_finish (NULL, result, &error) &&
      g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  if (g_error_matches (error, STG_DOCKER_ERROR, STG_DOCKER_ERROR_UNREACHABLE))
    {
      box->busy = FALSE;
      retry_in (box, ENGINE_RETRY_MS);
      return;
    }
  stg_docker_remove_async (box->slot->host->docker, box->m[box->calling].id, box->cancel,
                           on_member_removed, box);
}

/* Stops member @k (its version's stop timeout: it finishes what it has)
 * and removes it. */
static void
remove_member (Box *box, guint k)
{
  g_autoptr (ApiSidecar) sc = NULL;
  g_autoptr (StgExecutorSpec) spec = NULL;
  guint timeout = EMPTY_STOP_SECS;

  if (box->watched == (gint) k)
    stop_watching (box);
  if (box->hook_member == (gint) k)
    drop_hook (box);
  if (box->serving == (gint) k)
    {
      box->serving = -1;
      stg_fleet_box_save (box);
    }
  if (box->m[k].version > 0 && load (box, box->m[k].version, &sc, &spec, NULL))
    timeout = (guint) (spec->stop_timeout_secs + 0.999);
  box->busy = TRUE;
  box->calling = k;
  stg_docker_stop_async (box->slot->host->docker, box->m[k].id, timeout, box->cancel,
                         on_member_stopped, box);
}

static void
on_member_started (GObject *source G_GNUC_UNUSED, GAsyncResult *result, gpointer data)
{
  Box *box = data;
  g_autoptr (GError) error = NULL;
  guint k = box->calling;
  gchar buf[64];

  if (!stg_docker_finish (NULL, result, &error))
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        call_failed (box, k, "cannot start its container", error);
      return;
    }
  box->busy = FALSE;
  box->m[k].started_us = g_get_monotonic_time ();
  if (box->m[k].version > 0)
    {
      if (box->m[k].from > 0)
        note (box, "version %d started in %s beside version %d (container %.12s)",
              box->m[k].version, slot_label (box, k, buf), box->m[k].from, box->m[k].id);
      else
        note (box, "version %d started in %s (container %.12s)", box->m[k].version,
              slot_label (box, k, buf), box->m[k].id);
      watch (box, k, FALSE);
    }
  box_changed (box);
  stg_fleet_box_drive (box);
}

static void create_member (Box *box, guint k, gint version);

static void
on_member_pulled (GObject *source G_GNUC_UNUSED, GAsyncResult *result, gpointer data)
{
  Box *box = data;
  g_autoptr (GError) error = NULL;

  if (!stg_docker_finish (NULL, result, &error))
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        call_failed (box, box->calling, "cannot pull its image", error);
      return;
    }
  box->busy = FALSE;
  create_member (box, box->calling, box->m[box->calling].version);
}

static void
on_member_created (GObject *source G_GNUC_UNUSED, GAsyncResult *result, gpointer data)
{
  Box *box = data;
  g_autoptr (GError) error = NULL;
  gchar *id = stg_docker_create_finish (NULL, result, &error);
  guint k = box->calling;
  Host *h = box->slot->host;

  if (id == NULL && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  if (id == NULL && g_error_matches (error, STG_DOCKER_ERROR, STG_DOCKER_ERROR_NOT_FOUND) &&
      box->m[k].version > 0 && !box->pulled)
    {
      /* The host lacks the sidecar's image: pulled, then made again. */
      g_autoptr (ApiSidecar) sc = NULL;
      g_autoptr (StgExecutorSpec) spec = NULL;
      const StgFleetHostConfig *c = h->config;
      StgDockerAuth auth = { c->registry_user, c->registry_password, c->registry_server };
      if (load (box, box->m[k].version, &sc, &spec, NULL))
        {
          box->pulled = TRUE;
          note (box, "pulling %s on %s", sc->image, c->name);
          stg_docker_pull_async (h->docker, sc->image, c->registry_user ? &auth : NULL,
                                 box->cancel, on_member_pulled, box);
          return;
        }
    }
  if (id == NULL)
    {
      if (box->m[k].version == 0 &&
          g_error_matches (error, STG_DOCKER_ERROR, STG_DOCKER_ERROR_NOT_FOUND))
        stg_fleet_anchor_lost (h);
      call_failed (box, k, "cannot create its container", error);
      return;
    }
  box->m[k].id = id;
  stg_docker_start_async (h->docker, id, box->cancel, on_member_started, box);
}

/* Creates and starts member @k running @version (0: the empty image). */
static void
create_member (Box *box, guint k, gint version)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiSidecar) sc = NULL;
  g_autoptr (StgExecutorSpec) spec = NULL;
  g_autofree gchar *name = NULL;
  gint other = box->serving >= 0 && box->serving != (gint) k ? box->m[box->serving].version : 0;
  StgFleetMember member = {
    .set = box->name, .hot = box->hot, .activation = box->activation, .index = k,
    .version = version, .alt = version == 0 ? box->want : other,
  };

  box->m[k] = (Member){ .version = version, .from = version > 0 ? other : 0 };
  if (version > 0 && !load (box, version, &sc, &spec, &error))
    {
      member_failed (box, k, error->message);
      return;
    }
  member.sidecar = sc;
  member.spec = spec;
  g_autoptr (JsonNode) request = stg_fleet_member_spec (box->slot, &member, &name, &error);
  if (request == NULL)
    {
      member_failed (box, k, error->message);
      return;
    }
  box->busy = TRUE;
  box->calling = k;
  stg_docker_create_async (box->slot->host->docker, name, request, box->cancel, on_member_created,
                           box);
}

/* Member @k failed (@why): a real version's failure is counted and waited
 * out; the slot that serves, when another, keeps serving. */
static void
member_failed (Box *box, guint k, const gchar *why)
{
  Member *m = &box->m[k];
  gboolean counted = m->version > 0 && m->version == box->want;
  gchar buf[64];

  if (box->watched == (gint) k)
    stop_watching (box);
  if (box->hook_member == (gint) k)
    drop_hook (box);
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
      set_cause (box, why);
      if (box->serving >= 0)
        note (box, "new version %d failed in %s, version %d keeps serving: %s", box->want,
              slot_label (box, k, buf), box->m[box->serving].version, why);
      else
        note (box, "version %d failed in %s: %s", box->want, slot_label (box, k, buf), why);
    }
  stg_fleet_box_save (box);
  box_changed (box);
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
  stop_watching (box);
  drop_hook (box);
  for (guint k = 0; k < 2; k++)
    if (box->m[k].id != NULL)
      {
        remove_member (box, k);
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
    watch (box, s, TRUE);
  if (!box->hot)
    return;
  if (box->m[o].id != NULL && box->m[o].version != 0)
    remove_member (box, o);
  else if (box->m[o].id == NULL)
    create_member (box, o, 0);
}

/* The box leaves the pod (its set is gone): freed, its facts forgotten. */
static void
box_gone (Box *box)
{
  Slot *slot = box->slot;
  g_autoptr (GError) error = NULL;

  note (box, "left the pod");
  if (!stg_store_delete_pod_sidecar (slot->rt->store, slot->base.key.job_id,
                                     slot->base.key.instance, box->name, &error))
    g_warning ("fleet: %s", error->message);
  box_changed (box);
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
        remove_member (box, k);
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
      set_cause (box, error->message);
      box_changed (box);
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
      remove_member (box, t);
      return;
    }
  if (box->m[t].id == NULL)
    {
      gint64 now = g_get_monotonic_time () / 1000;
      if (box->not_before_ms > now)
        {
          retry_in (box, (gint) (box->not_before_ms - now));
          return;
        }
      box->pulled = FALSE;
      create_member (box, t, box->want);
      return;
    }
  if (box->watched != (gint) t && box->m[t].started_us > 0)
    watch (box, t, FALSE); /* e.g. adopted while it was taking over */
}

gboolean
stg_fleet_box_clear (Box *box)
{
  box->clearing = TRUE;
  g_clear_handle_id (&box->retry_timer, g_source_remove);
  if (!box->busy && box->m[0].id == NULL && box->m[1].id == NULL)
    {
      stop_watching (box);
      drop_hook (box);
      return FALSE;
    }
  stg_fleet_box_drive (box);
  return TRUE;
}

/* ---- watching and adopting ------------------------------------------------------------- */

void
stg_fleet_box_check (Box *box, GHashTable *by_id, gint64 sent_us)
{
  if (box->busy)
    return;
  for (guint k = 0; k < 2; k++)
    {
      Member *m = &box->m[k];
      if (m->id == NULL || m->dead || m->started_us == 0 || m->started_us >= sent_us)
        continue;
      JsonObject *c = g_hash_table_lookup (by_id, m->id);
      if (c != NULL &&
          g_str_equal (json_object_get_string_member_with_default (c, "State", ""), "running"))
        continue;
      g_autofree gchar *why = c == NULL
                                  ? g_strdup_printf ("its container %.12s is gone from %s", m->id,
                                                     box->slot->host->config->name)
                                  : g_strdup_printf (
                                        "exited on %s: %s", box->slot->host->config->name,
                                        json_object_get_string_member_with_default (c, "Status",
                                                                                    "?"));
      member_failed (box, k, why);
      return;
    }
}

static gint64
label_int (JsonObject *c, const gchar *name)
{
  JsonObject *labels = json_object_get_object_member (c, "Labels");
  const gchar *v = labels ? json_object_get_string_member_with_default (labels, name, NULL) : NULL;

  return v ? g_ascii_strtoll (v, NULL, 10) : -1;
}

void
stg_fleet_box_adopt_member (Box *box, JsonObject *c)
{
  gint64 index = label_int (c, STG_FLEET_LABEL_SLOT) - 1;
  const gchar *id = json_object_get_string_member_with_default (c, "Id", NULL);
  gboolean running = g_str_equal (json_object_get_string_member_with_default (c, "State", ""),
                                  "running");

  if (index < 0 || index > 1 || id == NULL || box->m[index].id != NULL)
    {
      /* Not a slot of ours, or a second container in one: removed. */
      g_message ("fleet: removing stray container %.12s of sidecar %s", id ? id : "?", box->name);
      if (id != NULL)
        stg_docker_remove_async (box->slot->host->docker, id, NULL, NULL, NULL);
      return;
    }
  box->m[index] = (Member){
    .id = g_strdup (id),
    .version = (gint) label_int (c, STG_FLEET_LABEL_VERSION),
    .started_us = running ? 1 : 0,
    .dead = !running,
  };
}

void
stg_fleet_box_adopted (Box *box, const StgPodSidecarRow *row)
{
  if (row == NULL)
    box->want = 0; /* its set is gone, or it was leaving: its containers go */
  else
    {
      gint k = row->serving_slot - 1;
      box->want = row->want;
      box->failures = (guint32) row->failures;
      if (k >= 0 && k < 2 && box->m[k].id != NULL && !box->m[k].dead &&
          box->m[k].version == row->serving_version && row->serving_version > 0)
        {
          box->serving = k;
          box->m[k].healthy = TRUE;
        }
      for (guint j = 0; j < 2; j++)
        if ((gint) j != box->serving && box->m[j].version > 0)
          box->m[j].from = box->serving >= 0 ? box->m[box->serving].version : 0;
    }
  stg_fleet_box_drive (box);
}

/* ---- the runtime's operations ------------------------------------------------------------ */

static StgTaskPhase phase_of (const Box *box);

gboolean
stg_fleet_box_serving (const Box *box)
{
  return box->want == 0 || box->clearing || phase_of (box) == STG_TASK_RUNNING;
}

static StgTaskPhase
phase_of (const Box *box)
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
  o->phase = phase_of (box);
  o->failures = box->failures;
  o->cause = g_strdup (box->cause);
  o->n_slots = box->hot ? 2 : 1;
  for (guint k = 0; k < o->n_slots; k++)
    {
      o->slots[k].name = g_strdup (slot_label (box, k, buf));
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
    note (box, "asked to run version %d (was %d)", version, box->want);
  else
    note (box, "asked to leave the pod");
  box->want = version;
  box->failures = 0;
  box->backoff_ms = 0;
  box->not_before_ms = 0;
  set_cause (box, NULL);
  g_clear_handle_id (&box->retry_timer, g_source_remove);
  /* A version on its way that is no longer wanted stops being checked. */
  for (guint k = 0; k < 2; k++)
    if ((gint) k != box->serving && box->m[k].version > 0 && box->m[k].version != version)
      {
        if (box->watched == (gint) k)
          stop_watching (box);
        if (box->hook_member == (gint) k)
          drop_hook (box);
      }
  stg_fleet_box_save (box);
  box_changed (box);
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
stg_fleet_sidecar_validate (StgRuntime *base, const gchar *name G_GNUC_UNUSED,
                            const ApiSidecar *sidecar, const ApiSidecar *previous, GError **error)
{
  StgFleetRuntime *rt = (StgFleetRuntime *) base;
  g_autoptr (StgExecutorSpec) spec = NULL;
  g_autoptr (StgExecutorSpec) before = NULL;
  const gchar *refused = NULL;
  guint n_ports = sidecar->ports ? sidecar->ports->len : 0;

  if (rt->anchor_image == NULL)
    {
      g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_INVALID,
                   "sidecar sets need pods, and %s", rt->anchor_error);
      return FALSE;
    }
  spec = parse (sidecar, error);
  if (spec == NULL)
    {
      g_prefix_error (error, "sidecar.executorData: ");
      (*error)->domain = STG_RUNTIME_ERROR;
      (*error)->code = STG_RUNTIME_ERROR_INVALID;
      return FALSE;
    }
  if (previous != NULL)
    before = parse (previous, NULL);
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
