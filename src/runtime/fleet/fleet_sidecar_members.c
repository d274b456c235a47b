/* fleet_sidecar_members.c: the containers of a pod's sidecar
 * (fleet_sidecar.c's members) on its host: created (the image pulled
 * when the host lacks it), started, stopped within the version's stop
 * timeout and removed, one engine call at a time; a failed call is tried
 * again while the host does not answer, else the member failed. Also what
 * the host's listings say of them, and their adoption by labels after a
 * restart. Calls the store, docker.c and fleet_pod_spec.c. Main-loop
 * thread only.
 */
#include "config.h"

#include <string.h>

#include "runtime/fleet/fleet_sidecar_private.h"

#define ENGINE_RETRY_MS 1000
#define EMPTY_STOP_SECS 2

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
      stg_fleet_box_set_cause (box, m);
      stg_fleet_box_retry_in (box, ENGINE_RETRY_MS);
      return;
    }
  stg_fleet_box_member_failed (box, k, m);
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
      stg_fleet_box_retry_in (box, ENGINE_RETRY_MS);
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
      stg_fleet_box_retry_in (box, ENGINE_RETRY_MS);
      return;
    }
  stg_docker_remove_async (box->slot->host->docker, box->m[box->calling].id, box->cancel,
                           on_member_removed, box);
}

/* Stops member @k (its version's stop timeout: it finishes what it has)
 * and removes it. */
void
stg_fleet_box_remove_member (Box *box, guint k)
{
  g_autoptr (ApiSidecar) sc = NULL;
  g_autoptr (StgExecutorSpec) spec = NULL;
  guint timeout = EMPTY_STOP_SECS;

  g_assert (k < 2 && box->m[k].id != NULL && !box->busy); /* one engine call at a time */

  stg_fleet_box_unwatch (box, k);
  if (box->serving == (gint) k)
    {
      box->serving = -1;
      stg_fleet_box_save (box);
    }
  if (box->m[k].version > 0 && stg_fleet_box_load (box, box->m[k].version, &sc, &spec, NULL))
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
        stg_fleet_box_note (box, "version %d started in %s beside version %d (container %.12s)",
                            box->m[k].version, stg_fleet_box_slot_label (box, k, buf),
                            box->m[k].from, box->m[k].id);
      else
        stg_fleet_box_note (box, "version %d started in %s (container %.12s)", box->m[k].version,
                            stg_fleet_box_slot_label (box, k, buf), box->m[k].id);
      stg_fleet_box_watch (box, k, FALSE);
    }
  stg_fleet_box_changed (box);
  stg_fleet_box_drive (box);
}

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
  stg_fleet_box_create_member (box, box->calling, box->m[box->calling].version);
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
      if (stg_fleet_box_load (box, box->m[k].version, &sc, &spec, NULL))
        {
          box->pulled = TRUE;
          stg_fleet_box_note (box, "pulling %s on %s", sc->image, c->name);
          stg_docker_pull_async (h->docker, sc->image, c->registry_user ? &auth : NULL, box->cancel,
                                 on_member_pulled, box);
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
void
stg_fleet_box_create_member (Box *box, guint k, gint version)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiSidecar) sc = NULL;
  g_autoptr (StgExecutorSpec) spec = NULL;

  g_assert (k < 2 && box->m[k].id == NULL && !box->busy); /* one engine call at a time */
  g_autofree gchar *name = NULL;
  gint other = box->serving >= 0 && box->serving != (gint) k ? box->m[box->serving].version : 0;
  StgFleetMember member = {
    .set = box->name,
    .hot = box->hot,
    .activation = box->activation,
    .index = k,
    .version = version,
    .alt = version == 0 ? box->want : other,
  };

  box->m[k] = (Member){ .version = version, .from = version > 0 ? other : 0 };
  if (version > 0 && !stg_fleet_box_load (box, version, &sc, &spec, &error))
    {
      stg_fleet_box_member_failed (box, k, error->message);
      return;
    }
  member.sidecar = sc;
  member.spec = spec;
  g_autoptr (JsonNode) request = stg_fleet_member_spec (box->slot, &member, &name, &error);
  if (request == NULL)
    {
      stg_fleet_box_member_failed (box, k, error->message);
      return;
    }
  box->busy = TRUE;
  box->calling = k;
  stg_docker_create_async (box->slot->host->docker, name, request, box->cancel, on_member_created,
                           box);
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
      g_autofree gchar *why =
          c == NULL
              ? g_strdup_printf ("its container %.12s is gone from %s", m->id,
                                 box->slot->host->config->name)
              : g_strdup_printf ("exited on %s: %s", box->slot->host->config->name,
                                 json_object_get_string_member_with_default (c, "Status", "?"));
      stg_fleet_box_member_failed (box, k, why);
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
