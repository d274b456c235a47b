/* zookeeper.c: staggerd and ZooKeeper ([zookeeper] of the config file).
 * The leading staggerd is the one member of scheduler_path, as Aurora's
 * scheduler announces itself where its clients' clusters.json point
 * (scheduler_zk_path); leadership itself stays on the store. Instances are
 * announced by their runners, to which stg_daemon_zk_runner_args hands the
 * settings. The state of both is shown by /cluster and /metrics. Main
 * thread.
 */
#include "config.h"

#include <string.h>

#include "daemon/daemon_private.h"
#include "daemon/zookeeper.h"

gchar **
stg_daemon_zk_runner_args (const StgDaemonSettings *s)
{
  g_autoptr (GStrvBuilder) args = g_strv_builder_new ();

  if (s->zk_ensemble == NULL)
    return NULL;
  g_strv_builder_add_many (args, "--announcer-ensemble", s->zk_ensemble,
                           "--announcer-serverset-path", s->zk_serverset_path, NULL);
  if (s->zk_allow_custom)
    g_strv_builder_add (args, "--announcer-allow-custom-serverset-path");
  if (s->zk_auth_config != NULL)
    g_strv_builder_add_many (args, "--announcer-zookeeper-auth-config", s->zk_auth_config, NULL);
  if (s->zk_hostname != NULL)
    g_strv_builder_add_many (args, "--announcer-hostname", s->zk_hostname, NULL);
  return g_strv_builder_end (args);
}

/* Where clients reach this replica: advertise_url's host and port when it
 * is set, else zk hostname (or this host's name when bound to every
 * address) and the HTTP port. */
static void
endpoint (StgDaemon *d, gchar **host, gint *port)
{
  const StgDaemonSettings *s = &d->settings;
  g_autoptr (GUri) uri = s->advertise_url ? g_uri_parse (s->advertise_url, G_URI_FLAGS_NONE, NULL)
                                          : NULL;

  *port = (gint) stg_http_server_port (d->http);
  if (uri != NULL && g_uri_get_host (uri) != NULL)
    {
      *host = g_strdup (s->zk_hostname ? s->zk_hostname : g_uri_get_host (uri));
      if (g_uri_get_port (uri) > 0)
        *port = g_uri_get_port (uri);
      return;
    }
  if (s->zk_hostname != NULL)
    *host = g_strdup (s->zk_hostname);
  else if (g_str_equal (s->bind, "0.0.0.0") || g_str_equal (s->bind, "::"))
    *host = g_strdup (g_get_host_name ());
  else
    *host = g_strdup (s->bind);
}

gboolean
stg_daemon_zk_announce_leader (StgDaemon *d, GError **error)
{
  const StgDaemonSettings *s = &d->settings;
  g_autoptr (StgZkAuth) auth = NULL;
  g_autofree gchar *host = NULL;
  gint port = 0;

  if (s->zk_ensemble == NULL || s->zk_scheduler_path == NULL)
    return TRUE;
  if (s->zk_auth_config != NULL && (auth = stg_zk_auth_load (s->zk_auth_config, error)) == NULL)
    return FALSE;
  endpoint (d, &host, &port);
  g_autoptr (GHashTable) extra = g_hash_table_new (g_str_hash, g_str_equal);
  g_hash_table_insert (extra, s->tls_cert != NULL ? "https" : "http", GINT_TO_POINTER (port));
  g_autofree gchar *data = stg_zk_member_json (host, port, extra, -1);
  StgServerSetSpec spec = {
    .ensemble = s->zk_ensemble,
    .auth = auth,
    .session_timeout_ms = s->zk_session_timeout_ms,
    .path = s->zk_scheduler_path,
    .data = data,
    .exclusive = TRUE,
  };
  d->zk_leader = stg_serverset_new (&spec, NULL, NULL, error);
  if (d->zk_leader == NULL)
    return FALSE;
  stg_serverset_join (d->zk_leader);
  return TRUE;
}

void
stg_daemon_zk_add_json (StgDaemon *d, JsonBuilder *b)
{
  const StgDaemonSettings *s = &d->settings;

  if (s->zk_ensemble == NULL)
    return;
  json_builder_set_member_name (b, "zookeeper");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "ensemble");
  json_builder_add_string_value (b, s->zk_ensemble);
  json_builder_set_member_name (b, "serverset_path");
  json_builder_add_string_value (b, s->zk_serverset_path);
  if (s->zk_scheduler_path != NULL)
    {
      json_builder_set_member_name (b, "scheduler_path");
      json_builder_add_string_value (b, s->zk_scheduler_path);
    }
  if (d->zk_leader != NULL)
    {
      const gchar *member = stg_serverset_member (d->zk_leader);
      const gchar *problem = stg_serverset_problem (d->zk_leader);
      json_builder_set_member_name (b, "connected");
      json_builder_add_boolean_value (b, stg_serverset_connected (d->zk_leader));
      /* Each only while there is one. */
      if (member != NULL)
        {
          json_builder_set_member_name (b, "member");
          json_builder_add_string_value (b, member);
        }
      if (problem != NULL)
        {
          json_builder_set_member_name (b, "problem");
          json_builder_add_string_value (b, problem);
        }
    }
  json_builder_end_object (b);
}

gchar *
stg_daemon_zk_metrics (gpointer daemon)
{
  StgDaemon *d = daemon;

  if (d->zk_leader == NULL)
    return g_strdup ("");
  return g_strdup_printf (
      "# HELP stagger_zookeeper_connected 1 while the leader's ZooKeeper session is connected.\n"
      "# TYPE stagger_zookeeper_connected gauge\n"
      "stagger_zookeeper_connected %d\n"
      "# HELP stagger_zookeeper_leader_announced 1 while this leader is a member of "
      "[zookeeper] scheduler_path.\n"
      "# TYPE stagger_zookeeper_leader_announced gauge\n"
      "stagger_zookeeper_leader_announced %d\n",
      stg_serverset_connected (d->zk_leader), stg_serverset_member (d->zk_leader) != NULL);
}
