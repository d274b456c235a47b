/* cluster.c: what a replica says about the cluster: /health, /leader,
 * /cluster, and a follower's answers (an HTTP redirect to the leader, a
 * Thrift error naming it). Reads the store only; main-loop thread only.
 */
#include "config.h"

#include <json-glib/json-glib.h>
#include <string.h>

#include "daemon/daemon_private.h"
#include "daemon/zookeeper.h"

/* A replica not seen for a lease (it says it is alive every quarter of
 * one), and at least this long, is gone: a leader that silent has lost
 * its lock too. */
#define GONE_MIN_MS 1000

static gboolean
leading (StgDaemon *d)
{
  return d->leadership != NULL && stg_leadership_leading (d->leadership);
}

static void
reply_json (StgHttpResponse *response, JsonBuilder *b)
{
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  gchar *text = json_to_string (root, FALSE);

  stg_http_response_set (response, 200, "application/json", g_bytes_new_take (text, strlen (text)));
}

void
stg_daemon_route_health (StgHttpRequest *request, StgHttpResponse *response, gpointer daemon)
{
  StgDaemon *d = daemon;

  (void) request;
  if (d->leadership == NULL)
    stg_http_response_text (response, 200, "ok\n");
  else
    stg_http_response_text (response, 200, leading (d) ? "leader\n" : "follower\n");
}

/* The URL this replica advertises (a single one: where it listens). */
static gchar *
own_url (StgDaemon *d)
{
  if (d->settings.advertise_url != NULL)
    return g_strdup (d->settings.advertise_url);
  return g_strdup_printf ("http://%s:%u", d->settings.bind, stg_http_server_port (d->http));
}

/* Who leads: the stagger_leader row, or this replica when it is the only
 * one (SQLite). */
static gboolean
leader_info (StgDaemon *d, StgLeaderInfo *info, GError **error)
{
  if (d->leadership != NULL)
    return stg_store_leader (d->store, info, error);
  info->epoch = 0;
  info->holder = g_strdup (d->holder);
  info->url = own_url (d);
  info->since_ms = d->started_ms;
  return TRUE;
}

static gboolean
replica_gone (const StgReplicaRow *r, gint64 now_ms)
{
  return now_ms - r->seen_ms > MAX (r->lease_ms, GONE_MIN_MS);
}

static void
add_leader (JsonBuilder *b, const StgLeaderInfo *info)
{
  json_builder_set_member_name (b, "url");
  json_builder_add_string_value (b, info->url);
  json_builder_set_member_name (b, "holder");
  json_builder_add_string_value (b, info->holder);
  json_builder_set_member_name (b, "epoch");
  json_builder_add_int_value (b, info->epoch);
  json_builder_set_member_name (b, "since_ms");
  json_builder_add_int_value (b, info->since_ms);
}

void
stg_daemon_route_leader (StgHttpRequest *request, StgHttpResponse *response, gpointer daemon)
{
  StgDaemon *d = daemon;
  g_autoptr (GError) error = NULL;
  StgLeaderInfo info = { 0 };

  (void) request;
  if (!leader_info (d, &info, &error))
    {
      stg_http_response_text (response, 503, error->message);
      return;
    }
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  add_leader (b, &info);
  json_builder_set_member_name (b, "self");
  json_builder_add_boolean_value (b, d->leadership == NULL || leading (d));
  json_builder_end_object (b);
  stg_leader_info_clear (&info);
  reply_json (response, b);
}

static void
add_replica (JsonBuilder *b, StgDaemon *d, const StgReplicaRow *r, const StgLeaderInfo *leader,
             gint64 now_ms)
{
  const gchar *role = d->leadership == NULL                        ? "single"
                      : replica_gone (r, now_ms)                   ? "gone"
                      : g_strcmp0 (r->holder, leader->holder) == 0 ? "leader"
                                                                   : "follower";

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "holder");
  json_builder_add_string_value (b, r->holder);
  json_builder_set_member_name (b, "url");
  json_builder_add_string_value (b, r->url);
  json_builder_set_member_name (b, "role");
  json_builder_add_string_value (b, role);
  json_builder_set_member_name (b, "started_ms");
  json_builder_add_int_value (b, r->started_ms);
  json_builder_set_member_name (b, "seen_ms");
  json_builder_add_int_value (b, r->seen_ms);
  json_builder_set_member_name (b, "self");
  json_builder_add_boolean_value (b, g_strcmp0 (r->holder, d->holder) == 0);
  json_builder_end_object (b);
}

void
stg_daemon_route_cluster (StgHttpRequest *request, StgHttpResponse *response, gpointer daemon)
{
  StgDaemon *d = daemon;
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) replicas = NULL;
  g_autofree gchar *store = NULL;
  StgLeaderInfo info = { 0 };
  gint64 now_ms = g_get_real_time () / 1000;

  (void) request;
  if ((store = stg_store_describe (d->store, &error)) == NULL || !leader_info (d, &info, &error) ||
      (d->leadership != NULL && (replicas = stg_store_list_replicas (d->store, &error)) == NULL))
    {
      stg_leader_info_clear (&info);
      stg_http_response_text (response, 503, error->message);
      return;
    }
  if (replicas == NULL) /* the only one */
    {
      StgReplicaRow *self = g_new0 (StgReplicaRow, 1);
      self->holder = g_strdup (d->holder);
      self->url = own_url (d);
      self->started_ms = self->seen_ms = d->started_ms;
      replicas = g_ptr_array_new_with_free_func ((GDestroyNotify) stg_replica_row_free);
      g_ptr_array_add (replicas, self);
    }
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "cluster");
  json_builder_add_string_value (b, d->settings.cluster);
  json_builder_set_member_name (b, "store");
  json_builder_add_string_value (b, store);
  json_builder_set_member_name (b, "now_ms");
  json_builder_add_int_value (b, now_ms);
  json_builder_set_member_name (b, "leader");
  json_builder_begin_object (b);
  add_leader (b, &info);
  /* The leader named in the database, gone: an election is under way. */
  gboolean leader_gone = FALSE;
  for (guint i = 0; i < replicas->len; i++)
    {
      const StgReplicaRow *r = g_ptr_array_index (replicas, i);
      if (d->leadership != NULL && g_strcmp0 (r->holder, info.holder) == 0)
        leader_gone = replica_gone (r, now_ms);
    }
  json_builder_set_member_name (b, "gone");
  json_builder_add_boolean_value (b, leader_gone);
  json_builder_end_object (b);
  json_builder_set_member_name (b, "replicas");
  json_builder_begin_array (b);
  for (guint i = 0; i < replicas->len; i++)
    add_replica (b, d, g_ptr_array_index (replicas, i), &info, now_ms);
  json_builder_end_array (b);
  stg_daemon_zk_add_json (d, b);
  json_builder_end_object (b);
  stg_leader_info_clear (&info);
  reply_json (response, b);
}

void
stg_daemon_route_follower (StgHttpRequest *request, StgHttpResponse *response, gpointer daemon)
{
  StgDaemon *d = daemon;
  const gchar *path = stg_http_request_path (request);
  StgLeaderInfo info = { 0 };

  if (g_str_equal (path, "/health"))
    return stg_daemon_route_health (request, response, d);
  if (g_str_equal (path, "/leader"))
    return stg_daemon_route_leader (request, response, d);
  if (g_str_equal (path, "/cluster"))
    return stg_daemon_route_cluster (request, response, d);
  /* Clients that know replicas (the CLI) try again, or another. */
  stg_http_response_header (response, "X-Stagger-Replica", "follower");
  if (!stg_store_leader (d->store, &info, NULL) || info.url[0] == '\0')
    {
      stg_http_response_text (response, 503, "no replica leads yet; try again\n");
      stg_http_response_header (response, "Retry-After", "1");
      /* A browser on its way to the new leader asks again by itself. */
      stg_http_response_header (response, "Refresh", "2");
    }
  else
    {
      g_autofree gchar *base = g_strdup (info.url);
      while (g_str_has_suffix (base, "/"))
        base[strlen (base) - 1] = '\0';
      /* The query too: the web UI's and the CLI's reads carry their
       * arguments there. */
      g_autofree gchar *query = stg_http_request_query_string (request);
      g_autofree gchar *location = g_strconcat (base, path, query[0] ? "?" : "", query, NULL);
      g_autofree gchar *text = g_strdup_printf ("this replica follows; the leader is %s: %s\n",
                                                info.url, location);
      stg_http_response_text (response, 307, text);
      stg_http_response_header (response, "Location", location);
    }
  stg_leader_info_clear (&info);
}

gchar *
stg_daemon_follower_why (gpointer daemon)
{
  StgDaemon *d = daemon;
  g_autoptr (GError) error = NULL;
  StgLeaderInfo info = { 0 };
  gchar *why;

  if (leading (d))
    why = g_strdup ("this replica is taking the lead; try again in a moment");
  else if (!stg_store_leader (d->store, &info, &error))
    why = g_strdup_printf ("this replica follows, and cannot tell who leads (%s); try again",
                           error->message);
  else if (info.url[0] == '\0')
    why = g_strdup ("this replica follows and no replica leads yet; try again");
  else
    why = g_strdup_printf ("this replica follows; the leader is %s (Thrift over HTTP at %s/api, "
                           "or its Thrift port)",
                           info.url, info.url);
  stg_leader_info_clear (&info);
  return why;
}
