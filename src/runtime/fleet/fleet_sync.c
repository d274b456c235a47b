/* fleet_sync.c: the fleet runtime's view of its hosts.
 *
 * Every poll interval each host's containers carrying this staggerd's
 * marker are listed (one call per host, never two at once): a slot whose
 * container is gone or no longer running has failed, and a host that does
 * not answer is marked unreachable. At start-up, adoption lists every host
 * once and matches containers to the store's slots by their labels: the
 * container of a slot's current run is adopted as it is (a pod's anchor
 * and sidecars with it, fleet_pod.c), any other container with the marker
 * is a stray and is removed, and containers without the marker are never
 * touched. Reconciliation lists every host at once. Calls the store and
 * docker.c. Main-loop thread only.
 */
#include "config.h"

#include <stdio.h>

#include <stdlib.h>
#include <string.h>

#include "runtime/fleet/fleet_private.h"

static const gchar *
label (JsonObject *container, const gchar *name)
{
  JsonObject *labels = json_object_get_object_member (container, "Labels");

  return labels ? json_object_get_string_member_with_default (labels, name, NULL) : NULL;
}

static gint64
label_int (JsonObject *container, const gchar *name)
{
  const gchar *v = label (container, name);

  return v ? g_ascii_strtoll (v, NULL, 10) : -1;
}

static const gchar *
container_state (JsonObject *container)
{
  return json_object_get_string_member_with_default (container, "State", "");
}

/* The container ended (listed, not running): a non-service task whose
 * container exited with status 0 has FINISHED (as Aurora's batch tasks
 * do), anything else failed. @what says when ("exited on HOST"). */
static void
container_ended (Slot *slot, JsonObject *c, const gchar *what)
{
  const gchar *status = json_object_get_string_member_with_default (c, "Status",
                                                                    container_state (c));
  g_autoptr (ApiTaskConfig) config = stg_store_get_config (slot->rt->store, slot->container_config,
                                                           NULL);
  gint code = -1;
  g_autofree gchar *why = g_strdup_printf ("%s: %s", what, status);

  /* Docker and Podman both list an ended container as "Exited (N) ..."
   * (its state "exited", or with Podman "stopped" until cleaned up). */
  if (sscanf (status, "Exited (%d)", &code) == 1 && code == 0 && config != NULL &&
      !config->isService)
    stg_fleet_container_finished (slot, why);
  else
    stg_fleet_container_failed (slot, why);
}

/* Slow answers (a busy engine) count as unreachable only this many times
 * in a row; a refused connection counts at once. */
#define SLOW_LISTINGS_TOLERATED 3

static void
host_reachable (Host *h, gboolean reachable, const gchar *why)
{
  StgFleetRuntime *rt = h->rt;

  if (reachable && !h->reachable)
    {
      /* What it ran while away may have been placed elsewhere since: its
       * strays go before anything new lands there (on_listed). */
      g_message ("fleet: host %s answers again; nothing is placed there until its containers "
                 "are reconciled",
                 h->config->name);
      h->reconciling = TRUE;
    }
  if (!reachable && h->reachable)
    {
      g_warning ("fleet: host %s does not answer: %s", h->config->name, why);
      h->unreachable_since_ms = stg_clock_now_ms (rt->clock);
    }
  h->reachable = reachable;
  g_free (h->last_error);
  h->last_error = g_strdup (why);
}

/* A container of a pod other than its main one (anchor, sidecar). */
static gboolean
pod_member (JsonObject *c)
{
  const gchar *role = label (c, STG_FLEET_LABEL_ROLE);

  return role != NULL && !g_str_equal (role, "main");
}

/* A slot adopted while its host was away: its container is the one whose
 * labels name the slot's current run (if any), with its pod's. Found
 * running, the slot goes on from there (a config applied while the host
 * was away is applied now); one that ended is judged by the caller. */
static void
find_by_labels (Slot *slot, JsonArray *list)
{
  JsonObject *main = NULL;

  for (guint i = 0; i < json_array_get_length (list); i++)
    {
      JsonObject *c = json_array_get_object_element (list, i);
      const gchar *id = c ? json_object_get_string_member_with_default (c, "Id", NULL) : NULL;
      if (id == NULL || label_int (c, STG_FLEET_LABEL_JOB_ID) != slot->base.key.job_id ||
          label_int (c, STG_FLEET_LABEL_INSTANCE) != slot->base.key.instance ||
          label_int (c, STG_FLEET_LABEL_RUN) != slot->base.run_id)
        continue;
      if (pod_member (c))
        stg_fleet_pod_adopt_member (slot, c);
      else
        main = c;
    }
  if (main == NULL)
    return;
  g_free (slot->container_id);
  slot->container_id = g_strdup (json_object_get_string_member (main, "Id"));
  if (label (main, STG_FLEET_LABEL_ROLE) != NULL)
    stg_fleet_pod_adopt_main (slot);
  gboolean running = g_str_equal (container_state (main), "running");
  if (running)
    stg_fleet_watch (slot, slot->base.phase == STG_TASK_RUNNING);
  if (slot->pod != NULL)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (GArray) rows = stg_store_list_pod_sidecars (slot->rt->store, &error);
      if (rows != NULL)
        stg_fleet_pod_adopted (slot, rows);
      else
        g_warning ("fleet: %s", error->message);
    }
  if (running)
    stg_fleet_drive (slot);
}

static void on_stray_removed (GObject *source, GAsyncResult *result, gpointer data);

/* A stray container being removed from @host. */
typedef struct
{
  Host *host;
  gchar *id;
} Stray;

/* Removes container @id of @h, unless its removal is under way. */
static void
remove_stray (Host *h, const gchar *id)
{
  Stray *s;

  if (g_hash_table_contains (h->removing, id))
    return;
  s = g_new0 (Stray, 1);
  s->host = h;
  s->id = g_strdup (id);
  g_message ("fleet: removing stray container %.12s on %s", id, h->config->name);
  g_hash_table_add (h->removing, g_strdup (id));
  stg_docker_remove_async (h->docker, id, h->cancel, on_stray_removed, s);
}

/* Containers with our marker that no slot wants (e.g. left behind on a
 * host that came back after its instances were placed elsewhere) are
 * removed; a container being created right now is not one of them. Nor
 * is any container of an older leader's epoch that this one did not
 * adopt: it appeared after the takeover, from a leader that acted late.
 * Returns how many it found. */
static guint
remove_strays (Host *h, JsonArray *list)
{
  gint64 epoch = stg_store_epoch (h->rt->store);
  guint found = 0;

  for (guint i = 0; i < json_array_get_length (list); i++)
    {
      JsonObject *c = json_array_get_object_element (list, i);
      const gchar *id = c ? json_object_get_string_member_with_default (c, "Id", NULL) : NULL;
      Slot *slot = (Slot *) stg_slots_find (h->rt->slots, label_int (c, STG_FLEET_LABEL_JOB_ID),
                                            (gint32) label_int (c, STG_FLEET_LABEL_INSTANCE));
      gboolean older = label_int (c, STG_FLEET_LABEL_EPOCH) < epoch;
      if (id == NULL)
        continue;
      if (slot != NULL && slot->host == h &&
          (g_strcmp0 (slot->container_id, id) == 0 ||
           (!older && (stg_fleet_busy (slot) ||
                       g_strcmp0 (slot->container_id, STG_FLEET_UNKNOWN_CONTAINER) == 0 ||
                       label_int (c, STG_FLEET_LABEL_RUN) == slot->base.run_id))))
        continue;
      remove_stray (h, id);
      found++;
    }
  return found;
}

/* Slots on @h whose container the listing does not show running. */
static void
check_containers (Host *h, JsonArray *list)
{
  g_autoptr (GHashTable) by_id = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GPtrArray) failed = g_ptr_array_new ();
  GHashTableIter it;
  gpointer value;

  for (guint i = 0; i < json_array_get_length (list); i++)
    {
      JsonObject *c = json_array_get_object_element (list, i);
      const gchar *id = c ? json_object_get_string_member_with_default (c, "Id", NULL) : NULL;
      if (id != NULL)
        g_hash_table_insert (by_id, (gpointer) id, c);
    }
  stg_slots_iter_init (h->rt->slots, &it);
  while (g_hash_table_iter_next (&it, NULL, &value))
    {
      Slot *slot = value;
      /* A listing sent before the container started may show it created. */
      if (slot->host == h && slot->container_id != NULL && slot->state == FLEET_IDLE &&
          slot->started_us < h->list_sent_us)
        g_ptr_array_add (failed, slot);
    }
  for (guint i = 0; i < failed->len; i++)
    {
      Slot *slot = failed->pdata[i];
      if (g_str_equal (slot->container_id, STG_FLEET_UNKNOWN_CONTAINER))
        find_by_labels (slot, list);
      JsonObject *c = g_hash_table_lookup (by_id, slot->container_id);
      if (c != NULL && g_str_equal (container_state (c), "running"))
        {
          /* Running, and nothing watches it (its config could not be read
           * when it was adopted or started): watch it now. */
          if (slot->health == NULL && !slot->confirming && !stg_fleet_busy (slot))
            stg_fleet_watch (slot, slot->base.phase == STG_TASK_RUNNING);
          if (slot->pod != NULL)
            stg_fleet_pod_check (slot, by_id, h->list_sent_us);
          continue;
        }
      if (c != NULL && g_strcmp0 (slot->stop_sent, slot->container_id) == 0)
        {
          /* Ended by the stop this replica sent, whose answer was lost:
           * not a failure; removed as a stopped one. */
          stg_fleet_set_state (slot, FLEET_DEAD);
          stg_fleet_drive (slot);
          continue;
        }
      g_autofree gchar *what = c == NULL ? g_strdup_printf ("container %.12s is gone from %s",
                                                            slot->container_id, h->config->name)
                                         : g_strdup_printf ("exited on %s", h->config->name);
      if (c != NULL)
        container_ended (slot, c, what);
      else
        stg_fleet_container_failed (slot, what);
    }
}

static void
on_listed (GObject *source G_GNUC_UNUSED, GAsyncResult *result, gpointer data)
{
  Host *h = data; /* freed, when the runtime was: read only once not cancelled */
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonNode) list = stg_docker_list_finish (NULL, result, &error);

  if (list == NULL && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  h->listing = FALSE;
  if (list == NULL || !JSON_NODE_HOLDS_ARRAY (list))
    {
      gboolean slow = error != NULL && strstr (error->message, "timed out") != NULL;
      if (!slow || ++h->failed_lists >= SLOW_LISTINGS_TOLERATED)
        host_reachable (h, FALSE, error ? error->message : "the container list is not an array");
      return;
    }
  h->failed_lists = 0;
  host_reachable (h, TRUE, NULL);
  check_containers (h, json_node_get_array (list));
  if (remove_strays (h, json_node_get_array (list)) == 0 && g_hash_table_size (h->removing) == 0 &&
      h->reconciling)
    {
      h->reconciling = FALSE;
      g_message ("fleet: host %s is reconciled: instances may be placed there again",
                 h->config->name);
    }
}

static void
list_host (Host *h, GAsyncReadyCallback callback, gpointer data)
{
  g_autofree gchar *marker = g_strconcat (STG_FLEET_LABEL_MARKER, "=", h->rt->marker, NULL);
  const gchar *labels[] = { marker, NULL };

  h->listing = TRUE;
  h->list_sent_us = g_get_monotonic_time ();
  stg_docker_list_async (h->docker, labels, h->cancel, callback, data);
}

/* Slots on hosts unreachable for longer than the grace period are LOST. */
static void
declare_lost (StgFleetRuntime *rt)
{
  gint64 now = stg_clock_now_ms (rt->clock);
  gint64 grace = (gint64) rt->options.fleet.lost_after_secs * 1000;
  g_autoptr (GPtrArray) lost = g_ptr_array_new ();
  GHashTableIter it;
  gpointer value;

  stg_slots_iter_init (rt->slots, &it);
  while (g_hash_table_iter_next (&it, NULL, &value))
    {
      Slot *slot = value;
      /* Its container, an operation on it, or a start it keeps trying. */
      if (slot->host != NULL && !slot->host->reachable &&
          now - slot->host->unreachable_since_ms >= grace &&
          (slot->container_id != NULL || stg_fleet_busy (slot) ||
           (slot->base.want != 0 && !slot->done)))
        g_ptr_array_add (lost, slot);
    }
  for (guint i = 0; i < lost->len; i++)
    stg_fleet_slot_lost (lost->pdata[i]);
}

static gboolean
on_poll (gpointer data)
{
  StgFleetRuntime *rt = data;

  declare_lost (rt);
  for (guint i = 0; i < rt->hosts->len; i++)
    {
      Host *h = rt->hosts->pdata[i];
      if (!h->listing)
        list_host (h, on_listed, h);
    }
  return G_SOURCE_CONTINUE;
}

gboolean
stg_fleet_reconcile (StgRuntime *base, gboolean implicit, GHashTable *tasks, gchar **summary,
                     GError **error)
{
  StgFleetRuntime *rt = (StgFleetRuntime *) base;
  g_autoptr (GHashTable) wanted = tasks ? g_hash_table_new (NULL, NULL) : NULL;
  guint listing = 0;
  GHashTableIter it;
  gpointer key;

  (void) implicit; /* a listing judges both: slots' containers, and strays */
  (void) error;
  /* A batch: the hosts its slots are on (a listing covers a whole host). */
  if (tasks != NULL)
    g_hash_table_iter_init (&it, tasks);
  while (tasks != NULL && g_hash_table_iter_next (&it, &key, NULL))
    {
      Slot *slot = (Slot *) stg_slots_find (rt->slots, ((StgSlotKey *) key)->job_id,
                                            ((StgSlotKey *) key)->instance);
      if (slot != NULL && slot->host != NULL)
        g_hash_table_add (wanted, slot->host);
    }
  for (guint i = 0; i < rt->hosts->len; i++)
    {
      Host *h = rt->hosts->pdata[i];
      if (wanted != NULL && !g_hash_table_contains (wanted, h))
        continue;
      if (!h->listing)
        list_host (h, on_listed, h);
      listing++;
    }
  *summary = g_strdup_printf ("fleet: listing the marked containers of %u host%s now: a slot's "
                              "container that is gone or stopped has ended, one no slot expects "
                              "is removed",
                              listing, listing == 1 ? "" : "s");
  return TRUE;
}

/* Starts polling every host's containers. */
static void
sync_start (StgFleetRuntime *rt)
{
  if (rt->poll_timer == 0)
    rt->poll_timer = g_timeout_add (rt->options.fleet.poll_ms, on_poll, rt);
}

/* ---- adoption ---------------------------------------------------------------- */

typedef struct
{
  Host *host;
  JsonNode *list;  /* NULL: the host did not answer */
  gboolean done;
} Listing;

static void
on_adopt_listed (GObject *source G_GNUC_UNUSED, GAsyncResult *result, gpointer data)
{
  Listing *l = data;
  g_autoptr (GError) error = NULL;

  l->list = stg_docker_list_finish (l->host->docker, result, &error);
  l->host->listing = FALSE;
  l->done = TRUE;
  if (l->list == NULL)
    host_reachable (l->host, FALSE, error->message);
}

static void
on_stray_removed (GObject *source G_GNUC_UNUSED, GAsyncResult *result, gpointer data)
{
  g_autoptr (GError) error = NULL;
  Stray *s = data;

  /* Cancelled: the runtime, its hosts included, may be gone. */
  if (stg_docker_finish (NULL, result, &error) ||
      !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_hash_table_remove (s->host->removing, s->id);
  if (error != NULL && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_warning ("fleet: cannot remove stray container %.12s on %s: %s", s->id, s->host->config->name,
               error->message);
  g_free (s->id);
  g_free (s);
}

/* Adopts container @c of host @h for its slot, or removes it as a stray. */
static void
adopt_container (StgFleetRuntime *rt, Host *h, JsonObject *c, GHashTable *rows)
{
  const gchar *id = json_object_get_string_member_with_default (c, "Id", NULL);
  StgSlotKey key = { label_int (c, STG_FLEET_LABEL_JOB_ID), (gint32) label_int (c, STG_FLEET_LABEL_INSTANCE) };
  Slot *slot = (Slot *) stg_slots_find (rt->slots, key.job_id, key.instance);
  const StgInstanceRow *row = g_hash_table_lookup (rows, &key);

  gboolean member = pod_member (c);

  if (id == NULL)
    return;
  if (slot == NULL || row == NULL || (slot->container_id != NULL && !member) ||
      label_int (c, STG_FLEET_LABEL_RUN) != row->run_id)
    {
      remove_stray (h, id);
      return;
    }
  stg_fleet_set_host (slot, h);
  slot->base.run_id = row->run_id;
  if (member)
    {
      stg_fleet_pod_adopt_member (slot, c);
      return;
    }
  if (label (c, STG_FLEET_LABEL_ROLE) != NULL)
    stg_fleet_pod_adopt_main (slot);
  slot->container_id = g_strdup (id);
  slot->container_config = label_int (c, STG_FLEET_LABEL_CONFIG_ID);
  if (row->status == API_SCHEDULE_STATUS_KILLING)
    {
      slot->killing = TRUE; /* a kill was under way: finish it */
      slot->base.want = 0;
      return;
    }
  gboolean asked_to_stop = row->status == API_SCHEDULE_STATUS_RESTARTING;
  gboolean never_started = row->status == API_SCHEDULE_STATUS_ASSIGNED ||
                           g_str_equal (container_state (c), "created");
  if (!g_str_equal (container_state (c), "running") && (asked_to_stop || never_started))
    {
      /* Stopped because we asked (a replace under way), or created and
       * never started: not a failure; it is removed and the wanted config
       * started. */
      stg_fleet_set_state (slot, FLEET_DEAD);
      stg_slot_assume (&slot->base, STG_TASK_STARTING, row->status);
      stg_fleet_drive (slot);
      return;
    }
  if (!g_str_equal (container_state (c), "running"))
    {
      g_autofree gchar *what = g_strdup_printf ("exited on %s while staggerd was not running",
                                                h->config->name);
      stg_slot_assume (&slot->base, STG_TASK_STARTING, slot->base.status);
      container_ended (slot, c, what);
      return;
    }
  gboolean healthy = row->status == API_SCHEDULE_STATUS_RUNNING;
  g_autofree gchar *m = g_strdup_printf ("adopted by a new staggerd on %s (container %.12s)", h->config->name, id);
  slot->base.healthy_since_ms = healthy ? row->status_ms : 0;
  stg_fleet_set_phase (slot, healthy ? STG_TASK_RUNNING : STG_TASK_STARTING,
                       healthy ? API_SCHEDULE_STATUS_RUNNING : API_SCHEDULE_STATUS_STARTING, m);
  stg_fleet_watch (slot, healthy);
}

/* A slot the store knows whose container no listing showed. */
static void
adopt_missing (Slot *slot, const StgInstanceRow *row)
{
  gboolean failed = row->status == API_SCHEDULE_STATUS_FAILED;

  slot->container_config = row->run_config_id;
  if (slot->host != NULL && !slot->host->reachable)
    {
      /* Its host is away: what the store says stands until it answers. */
      stg_slot_assume (&slot->base,
                       row->status == API_SCHEDULE_STATUS_RUNNING ? STG_TASK_RUNNING
                                                                  : STG_TASK_STARTING,
                       row->status);
      slot->base.healthy_since_ms = row->status_ms;
      slot->container_id = g_strdup (STG_FLEET_UNKNOWN_CONTAINER);
      return;
    }
  if (row->status == API_SCHEDULE_STATUS_KILLING)
    slot->killing = TRUE;
  else if (row->status == API_SCHEDULE_STATUS_FINISHED)
    slot->done = TRUE;
  else if (row->status == API_SCHEDULE_STATUS_RUNNING && row->run_id > 0)
    {
      stg_slot_count_failure (&slot->base, NULL);
      stg_fleet_set_phase (slot, STG_TASK_FAILED, API_SCHEDULE_STATUS_FAILED,
                           "its container went away while staggerd was not running");
      failed = TRUE;
    }
  /* A failed task that is not a service stays failed once it has had its
   * runs, as it would have had staggerd kept running. */
  if (failed)
    slot->done = !stg_fleet_runs_again (slot,
                                        row->run_config_id ? row->run_config_id : row->config_id);
  slot->container_config = 0;
  stg_fleet_drive (slot);
}

/* Lists every host, waiting on the main loop for at most the call timeout. */
static GPtrArray *
list_all (StgFleetRuntime *rt)
{
  GPtrArray *listings = g_ptr_array_new_with_free_func (g_free);
  gint64 deadline = g_get_monotonic_time () + (gint64) rt->options.fleet.call_timeout_secs * G_USEC_PER_SEC;
  gboolean all = FALSE;

  for (guint i = 0; i < rt->hosts->len; i++)
    {
      Listing *l = g_new0 (Listing, 1);
      l->host = rt->hosts->pdata[i];
      g_ptr_array_add (listings, l);
      list_host (l->host, on_adopt_listed, l);
    }
  while (!all && g_get_monotonic_time () < deadline)
    {
      g_main_context_iteration (NULL, TRUE);
      all = TRUE;
      for (guint i = 0; i < listings->len; i++)
        all = all && ((Listing *) listings->pdata[i])->done;
    }
  for (guint i = 0; i < listings->len; i++)
    {
      Listing *l = listings->pdata[i];
      if (!l->done)
        {
          g_cancellable_cancel (l->host->cancel); /* the callback still runs, then l is freed */
          while (!l->done)
            g_main_context_iteration (NULL, TRUE);
          g_clear_object (&l->host->cancel);
          l->host->cancel = g_cancellable_new ();
          g_hash_table_remove_all (l->host->removing); /* cancelled with it */
          host_reachable (l->host, FALSE, "no answer at start-up");
        }
    }
  return listings;
}

gboolean
stg_fleet_runtime_adopt (StgRuntime *base, GError **error)
{
  StgFleetRuntime *rt = (StgFleetRuntime *) base;
  g_autoptr (GArray) placements = stg_fleet_load_drained (rt, error)
                                      ? stg_store_list_placements (rt->store, error)
                                      : NULL;
  g_autoptr (GArray) rows = placements ? stg_store_list_all_instances (rt->store, error) : NULL;
  g_autoptr (GArray) sidecars = rows ? stg_store_list_pod_sidecars (rt->store, error) : NULL;
  g_autoptr (GHashTable) by_key = g_hash_table_new_full (stg_slot_key_hash, stg_slot_key_equal, g_free, NULL);

  if (sidecars == NULL)
    return FALSE;
  for (guint i = 0; i < placements->len; i++)
    {
      StgPlacementRow *p = &g_array_index (placements, StgPlacementRow, i);
      Slot *slot = (Slot *) stg_slots_get (rt->slots, p->job_id, p->instance_id, NULL);
      if (slot != NULL)
        stg_fleet_set_host (slot, stg_fleet_host (rt, p->host));
    }
  for (guint i = 0; i < rows->len; i++)
    {
      StgSlotRow *r = &g_array_index (rows, StgSlotRow, i);
      if (stg_slots_get (rt->slots, r->job_id, r->row.instance_id, NULL) != NULL)
        g_hash_table_insert (by_key, stg_slot_key_new (r->job_id, r->row.instance_id), &r->row);
    }
  g_autoptr (GPtrArray) listings = list_all (rt);
  for (guint i = 0; i < listings->len; i++)
    {
      Listing *l = listings->pdata[i];
      JsonArray *a = l->list && JSON_NODE_HOLDS_ARRAY (l->list) ? json_node_get_array (l->list) : NULL;
      for (guint j = 0; a != NULL && j < json_array_get_length (a); j++)
        adopt_container (rt, l->host, json_array_get_object_element (a, j), by_key);
      g_clear_pointer (&l->list, json_node_unref);
    }
  for (guint i = 0; i < rows->len; i++)
    {
      StgSlotRow *r = &g_array_index (rows, StgSlotRow, i);
      Slot *slot = (Slot *) stg_slots_find (rt->slots, r->job_id, r->row.instance_id);
      if (slot != NULL && slot->pod != NULL)
        stg_fleet_pod_adopted (slot, sidecars);
    }
  for (guint i = 0; i < rows->len; i++)
    {
      StgSlotRow *r = &g_array_index (rows, StgSlotRow, i);
      Slot *slot = (Slot *) stg_slots_find (rt->slots, r->job_id, r->row.instance_id);
      if (slot != NULL && slot->container_id == NULL)
        adopt_missing (slot, &r->row);
      else if (slot != NULL)
        stg_fleet_drive (slot); /* e.g. a replace or a kill that was under way */
    }
  sync_start (rt);
  return TRUE;
}
