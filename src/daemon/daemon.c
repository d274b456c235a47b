/* daemon.c: StgDaemon: builds the layers bottom-up and tears them down
 * top-down. Owns every part it builds. Main-loop thread only.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <glib/gstdio.h>
#include <unistd.h>

#include "common/host_policy.h"
#include "daemon/daemon_private.h"
#include "daemon/instance_users.h"
#include "daemon/zookeeper.h"
#include "runtime/fleet/fleet.h"
#include "runtime/local/local.h"
#include "runtime/simulated/simulated.h"
#include "spawn/spawn.h"

/* Every commit may change what the update queries answer. */
static guint64
store_generation (gpointer store)
{
  return stg_store_commit_count (store);
}

/* ---- retention ------------------------------------------------------------ */

/* Timer: one small step of retention (see STG_DAEMON_PRUNE_S). */
static gboolean
prune_step (gpointer user_data)
{
  StgDaemon *d = user_data;
  g_autoptr (GError) error = NULL;
  gint64 days = d->settings.keep_events_days;
  gint64 before = days > 0 ? stg_clock_now_ms (d->clock) - days * 24 * 3600 * 1000 : 0;
  guint deleted = 0;

  if (stg_store_in_transaction (d->store))
    return G_SOURCE_CONTINUE;
  if (!stg_store_prune (d->store, (guint) d->settings.keep_updates, before, STG_DAEMON_PRUNE_ROWS,
                        &deleted, &error) ||
      !stg_store_reclaim (d->store, STG_DAEMON_RECLAIM_PAGES, &error))
    g_warning ("staggerd: retention: %s", error->message);
  else if (deleted > 0)
    g_info ("staggerd: retention: deleted %u rows", deleted);
  return G_SOURCE_CONTINUE;
}

/* ---- backups -------------------------------------------------------------- */

/* Timer: a backup of the SQLite store, then the oldest beyond the count go. */
static gboolean
backup_step (gpointer user_data)
{
  StgDaemon *d = user_data;
  g_autoptr (GError) error = NULL;
  guint removed = 0;

  if (stg_store_in_transaction (d->store))
    return G_SOURCE_CONTINUE;
  g_autofree gchar *id = stg_backups_write (d->backups, stg_clock_now_ms (d->clock), &error);
  if (id == NULL ||
      !stg_backups_prune (d->backups, (guint) d->settings.backup_keep, &removed, &error))
    g_warning ("staggerd: backup: %s", error->message);
  else
    g_info ("staggerd: backup %s written; %u old one%s deleted", id, removed,
            removed == 1 ? "" : "s");
  return G_SOURCE_CONTINUE;
}

/* ---- start and stop ------------------------------------------------------- */

static gboolean
write_ready_file (StgDaemon *d, GError **error)
{
  g_autofree gchar *tmp = g_strconcat (d->settings.ready_file, ".tmp", NULL);
  g_autofree gchar *text =
      g_strdup_printf ("{\"pid\": %d, \"http_port\": %u, \"thrift_port\": %u, \"role\": \"%s\"}\n",
                       (int) getpid (), stg_http_server_port (d->http),
                       d->tcp ? stg_tcp_server_port (d->tcp) : 0,
                       d->leadership == NULL                    ? "single"
                       : stg_leadership_leading (d->leadership) ? "leader"
                                                                : "follower");

  /* Written then renamed, so a reader never sees half of it. */
  if (!g_file_set_contents (tmp, text, -1, error))
    return FALSE;
  if (g_rename (tmp, d->settings.ready_file) != 0)
    {
      int saved = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved), "renaming %s: %s", tmp,
                   g_strerror (saved));
      return FALSE;
    }
  return TRUE;
}

/* Opens the store; PostgreSQL may be down for a while: wait for it. */
static gboolean
open_store (StgDaemon *d, GError **error)
{
  g_autofree gchar *db = NULL;
  gboolean pg = d->settings.store != NULL;

  /* The default store is SQLite in the data directory; --store or
   * [store] url names a PostgreSQL database instead. */
  db = pg ? g_strdup (d->settings.store)
          : g_build_filename (d->settings.data_dir, "stagger.db", NULL);
  if (pg && d->settings.sqlite_normal_sync)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "[store] sqlite_synchronous is for the SQLite store; PostgreSQL has its own "
                   "synchronous_commit setting");
      return FALSE;
    }
  if (pg && !stg_store_is_postgresql (db))
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--store takes a PostgreSQL URL (postgresql://...) or conninfo (host=...)");
      return FALSE;
    }
  if (pg)
    {
      /* An old primary that comes back is refused after a restart too. */
      g_autofree gchar *timelines = g_build_filename (d->settings.data_dir, "pg-timelines", NULL);
      stg_store_remember_timelines (timelines);
    }
  gboolean recovered = FALSE;
  if (!pg && !stg_store_install_recovered (db, &recovered, error))
    return FALSE;
  if (recovered)
    g_message ("staggerd: the recovered backup is the store now");
  for (;;)
    {
      g_autoptr (GError) local = NULL;
      d->store = stg_store_open_shared (db, &local);
      if (d->store != NULL)
        {
          g_autofree gchar *dir = g_build_filename (d->settings.data_dir, "backups", NULL);
          d->backups = stg_backups_new (d->store, db, dir);
          return !(!pg && d->settings.sqlite_normal_sync) ||
                 stg_store_sqlite_relax_sync (d->store, error);
        }
      if (!pg || !g_error_matches (local, STG_STORE_ERROR, STG_STORE_ERROR_FAILED) ||
          strstr (local->message, "connecting to PostgreSQL") == NULL)
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return FALSE;
        }
      g_warning ("ha: cannot open the store (%s); retrying in 1 s", local->message);
      g_usleep (G_USEC_PER_SEC);
    }
}

/* Starts this program again in place, with its command line: nothing of
 * the old process's state (engine, runtime, timers) can write after. */
static void
restart_in_place (StgDaemon *d, const gchar *why)
{
  g_autofree gchar *cmdline = NULL;
  g_autoptr (GError) error = NULL;
  gsize len = 0;

  /* The leader's member goes now, not when its session times out. */
  g_clear_pointer (&d->zk_leader, stg_serverset_free);
  if (g_file_get_contents ("/proc/self/cmdline", &cmdline, &len, NULL) && len > 0)
    {
      g_autoptr (GPtrArray) argv = g_ptr_array_new ();
      for (gsize i = 0; i < len; i += strlen (cmdline + i) + 1)
        g_ptr_array_add (argv, cmdline + i);
      g_ptr_array_add (argv, NULL);
      g_message ("staggerd: restarting %s", why);
      stg_spawn_reexec ((const gchar *const *) argv->pdata, &error);
    }
  g_error ("staggerd: cannot restart %s: %s", why,
           error ? error->message : "no /proc/self/cmdline");
}

/* Stepping down: this process becomes a new follower, in place. */
static void
step_down (gpointer data)
{
  restart_in_place (data, "as a follower");
}

/* Timer: a recovery was committed; the answer has gone out. */
static gboolean
restart_recovered (gpointer data)
{
  restart_in_place (data, "to load the recovered backup");
  return G_SOURCE_REMOVE;
}

/* The handler's news of a committed recovery: restart once its answer is
 * on its way (STG_DAEMON_RECOVERY_RESTART_MS). */
static void
on_recovered (gpointer data)
{
  StgDaemon *d = data;

  if (d->restart_id == 0)
    d->restart_id = g_timeout_add (STG_DAEMON_RECOVERY_RESTART_MS, restart_recovered, d);
}

static gboolean start_core (StgDaemon *d, GError **error);

/* Became the leader: the follower's servers serve the leader's parts
 * from now on, their listeners never closed. HTTP requests that came
 * since the lead was won have waited (the hold, switching()); they go on
 * now. The Thrift port answered with the follower's dispatch meanwhile. */
static void
take_over (gpointer data)
{
  StgDaemon *d = data;
  g_autoptr (GError) error = NULL;
  /* Borrowed by the Thrift port until start_core gives it the leader's. */
  StgDispatch *follower = g_steal_pointer (&d->dispatch);

  if (!start_core (d, &error))
    {
      g_warning ("ha: cannot start leading: %s", error->message);
      step_down (d);
    }
  stg_http_server_set_hold (d->http, NULL, NULL);
  stg_http_server_release_held (d->http);
  stg_dispatch_free (follower);
}

/* The follower's HTTP hold: requests wait from the moment the lead is won
 * until take_over has put the leader's routes in place. */
static gboolean
switching (gpointer data)
{
  StgDaemon *d = data;

  return d->leadership != NULL && stg_leadership_leading (d->leadership);
}

/* The limits of what unfinished requests hold (api/body_buffer.h): one
 * largest frame and the reserve fit at least, and one address holds one
 * largest frame unless the settings say otherwise. */
static void
budget_limits (const StgDaemonSettings *s, StgBodyBudget *budget)
{
  gsize frame = (gsize) s->max_frame;

  budget->reserve = (gsize) s->buffered_reserve;
  budget->per_address = s->max_buffered_per_address > 0 ? (gsize) s->max_buffered_per_address
                                                        : frame;
  budget->max = MAX ((gsize) s->max_buffered, frame + budget->reserve);
}

/* The HTTP server, as the settings say. */
static gboolean
start_http (StgDaemon *d, GError **error)
{
  StgHttpOptions http_options;

  stg_http_options_init (&http_options);
  http_options.max_body = (gsize) d->settings.max_frame;   /* one message, as on TCP */
  http_options.tls_cert = d->settings.tls_cert;
  http_options.tls_key = d->settings.tls_key;
  budget_limits (&d->settings, &d->budget);
  http_options.budget = &d->budget;
  http_options.max_connections = (guint) d->settings.max_connections;
  http_options.max_per_address = (guint) d->settings.max_per_address;
  http_options.host_names = (const gchar *const *) d->settings.http_names;
  http_options.allowed_origins = (const gchar *const *) d->settings.allowed_origins;
  d->http = stg_http_server_new (d->settings.bind, (guint16) d->settings.http_port,
                                 &http_options, error);
  return d->http != NULL;
}

/* The TCP server's options, as the settings say. */
static void
tcp_options (StgDaemon *d, StgTcpOptions *options)
{
  stg_tcp_options_init (options);
  options->max_frame = (gsize) d->settings.max_frame;
  options->idle_timeout_s = (guint) d->settings.idle_timeout_s;
  options->backlog = d->settings.tcp_backlog;
  options->budget = &d->budget;
  options->max_connections = (guint) d->settings.max_connections;
  options->max_per_address = (guint) d->settings.max_per_address;
}

/* A follower serves HTTP (redirects) and the Thrift port (an error naming
 * the leader: framed Thrift has no redirect). */
static gboolean
start_follower (StgDaemon *d, GError **error)
{
  StgTcpOptions options;

  if (!start_http (d, error))
    return FALSE;
  stg_http_server_route (d->http, "/", stg_daemon_route_follower, d);
  stg_http_server_set_hold (d->http, switching, d);
  d->dispatch = stg_dispatch_new (NULL, (gsize) d->settings.max_frame);
  stg_dispatch_refuse_all (d->dispatch, API_RESPONSE_CODE_ERROR_TRANSIENT, d->settings.cluster,
                           stg_daemon_follower_why, d);
  tcp_options (d, &options);
  d->tcp = stg_tcp_server_new (d->dispatch, d->settings.bind, (guint16) d->settings.thrift_port,
                               &options, error);
  if (d->tcp == NULL)
    return FALSE;
  if (d->settings.ready_file != NULL && !write_ready_file (d, error))
    return FALSE;
  g_message ("staggerd: following; HTTP on %s:%u redirects to the leader, Thrift on %s:%u "
             "names it",
             d->settings.bind, stg_http_server_port (d->http), d->settings.bind,
             stg_tcp_server_port (d->tcp));
  return TRUE;
}

StgDaemon *
stg_daemon_start (const StgDaemonSettings *settings, GError **error)
{
  StgDaemon *d = g_new0 (StgDaemon, 1);

  stg_daemon_settings_copy (&d->settings, settings);

  d->tiers = d->settings.tier_config ? stg_tiers_load (d->settings.tier_config, error)
                                     : stg_tiers_new_default ();
  if (d->tiers == NULL)
    {
      g_prefix_error (error, "tier_config: ");
      goto fail;
    }
  if (g_mkdir_with_parents (d->settings.data_dir, 0700) != 0)
    {
      int saved = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved),
                   "cannot create the data directory %s: %s", d->settings.data_dir,
                   g_strerror (saved));
      goto fail;
    }
  if (!open_store (d, error))
    goto fail;
  d->holder = g_strdup_printf ("%s:%d", g_get_host_name (), (int) getpid ());
  d->started_ms = g_get_real_time () / 1000;
  if (d->settings.store == NULL)
    {
      if (!start_core (d, error))
        goto fail;
      return d;
    }
  if (d->settings.advertise_url == NULL)
    d->settings.advertise_url = g_strdup_printf ("http://%s:%d", d->settings.bind,
                                                 d->settings.http_port);
  d->leadership = stg_leadership_new (d->store, d->holder, d->settings.advertise_url,
                                      (guint) d->settings.lease_ms,
                                      d->settings.forget_replicas_s * (gint64) 1000, take_over,
                                      step_down, d);
  if (stg_leadership_try (d->leadership) ? !start_core (d, error) : !start_follower (d, error))
    goto fail;
  return d;

fail:
  stg_daemon_stop (d);
  return NULL;
}

/* Warns when the instances' port range overlaps the kernel's ephemeral
 * ports (net.ipv4.ip_local_port_range): an outgoing connection of any
 * process (health checks included) may then hold an instance's port, and
 * the instance fails to listen. */
static void
check_port_range (const StgDaemonSettings *s)
{
  g_autofree gchar *text = NULL;
  gint lo = 0, hi = 0;

  if (g_str_equal (s->runtime, "simulated") ||
      !g_file_get_contents ("/proc/sys/net/ipv4/ip_local_port_range", &text, NULL, NULL) ||
      sscanf (text, "%d %d", &lo, &hi) != 2 || s->port_max < lo || s->port_min > hi)
    return;
  g_warning ("staggerd: the instances' port range %d-%d overlaps the kernel's ephemeral ports "
             "%d-%d (net.ipv4.ip_local_port_range): an outgoing connection may take an "
             "instance's port; choose a range outside it (--port-range)",
             s->port_min, s->port_max, lo, hi);
}

/* The runtime --runtime names, and the rollout gate runner. Shell gates,
 * like the local runtime's instances, run as the users [roles] names. */
static gboolean
start_runtime (StgDaemon *d, GError **error)
{
  StgLocalOptions lo;

  stg_local_options_init (&lo);
  if (!stg_daemon_instance_users (&d->settings, &lo, error))
    {
      stg_local_options_clear (&lo);
      return FALSE;
    }
  g_autoptr (StgHostPolicy) hosts =
      stg_host_policy_new ((const gchar *const *) d->settings.gate_hosts, "[gates] allowed_hosts",
                           error);
  if (hosts == NULL)
    {
      stg_local_options_clear (&lo);
      return FALSE;
    }
  d->gates = stg_gate_runner_new (lo.role_users, lo.default_user, hosts);
  d->notifier = stg_notifier_new (&d->settings.notify, d->settings.cluster, hosts,
                                  &d->notify_counts, d->store);
  lo.health_counts = &d->health_counts;
  lo.announcer_args = stg_daemon_zk_runner_args (&d->settings);
  lo.zk_allow_custom = d->settings.zk_allow_custom;
  if (g_str_equal (d->settings.runtime, "simulated"))
    d->runtime = stg_simulated_runtime_new (d->store, d->clock, error);
  else if (g_str_equal (d->settings.runtime, "fleet"))
    {
      StgFleetRuntimeOptions fo = {
        .data_dir = d->settings.data_dir, .cluster = d->settings.cluster,
        .port_min = d->settings.port_min, .port_max = d->settings.port_max, .fleet = d->settings.fleet,
      };
      fo.health_counts = &d->health_counts;
      fo.max_pids = d->settings.max_pids;
      fo.thermos_bundle = d->settings.thermos_bundle;
      fo.anchor = d->settings.anchor;
      fo.announcing = d->settings.zk_ensemble != NULL;
      d->runtime = stg_fleet_runtime_new (d->store, d->clock, &fo, error);
      if (d->runtime != NULL && !stg_fleet_runtime_adopt (d->runtime, error))
        g_clear_pointer (&d->runtime, stg_runtime_free);
    }
  else
    {
      g_free (lo.data_dir), lo.data_dir = g_strdup (d->settings.data_dir);
      g_free (lo.cluster), lo.cluster = g_strdup (d->settings.cluster);
      lo.port_min = d->settings.port_min;
      lo.port_max = d->settings.port_max;
      lo.max_ports_per_role = d->settings.max_ports_per_role;
      lo.max_concurrent_starts = (guint) d->settings.max_concurrent_starts;
      lo.disk_interval_ms = (guint) d->settings.disk_interval_s * 1000;
      lo.cgroup_parent = g_strdup (d->settings.cgroup_parent);
      lo.cpu_share = d->settings.cpu_share;
      lo.max_pids = d->settings.max_pids;
      lo.attributes = d->settings.host_attributes ? g_hash_table_ref (d->settings.host_attributes)
                                                  : NULL;
      g_free (lo.thermos_runner), lo.thermos_runner = g_strdup (d->settings.thermos_runner);
      d->runtime = stg_local_runtime_new (d->store, d->clock, &lo, error);
    }
  stg_local_options_clear (&lo);
  return d->runtime != NULL;
}

/* The engine, with the limits the settings give it and the gate runner,
 * notifier and tiers made before it. */
static void
start_engine (StgDaemon *d)
{
  StgEngineLimits limits;
  stg_engine_limits_init (&limits);
  /* What one host can run for the local runtime; more where nothing or
   * many hosts run the instances. */
  limits.max_instances = d->settings.max_instances > 0                ? d->settings.max_instances
                         : g_str_equal (d->settings.runtime, "local") ? 1000
                                                                      : 100000;
  limits.max_update_instance_failures = d->settings.max_update_failures > 0
                                            ? d->settings.max_update_failures
                                            : 5LL * limits.max_instances;
  limits.sla_min_instances = d->settings.sla_min_instances;
  limits.sla_max_duration_secs = d->settings.sla_max_duration_s;
  limits.sla_non_production = d->settings.sla_non_production;
  limits.sla_coordinator_timeout_ms = d->settings.sla_coordinator_timeout_s * 1000LL;
  limits.sla_retry_min_ms = d->settings.sla_retry_min_s * 1000LL;
  limits.sla_retry_max_ms = MAX (d->settings.sla_retry_max_s, d->settings.sla_retry_min_s) * 1000LL;
  limits.cluster = d->settings.cluster;
  limits.maintenance_poll_ms = d->settings.maintenance_poll_s * 1000LL;
  d->engine = stg_engine_new (d->store, d->clock, d->runtime, &limits);
  stg_engine_set_gate_runner (d->engine, d->gates);
  stg_engine_set_notifier (d->engine, d->notifier);
  stg_engine_set_tiers (d->engine, d->tiers);
}

/* The leader's (or the only replica's) parts: runtime, engine, API, web UI. */
static gboolean
start_core (StgDaemon *d, GError **error)
{
  StgTcpOptions options;
  StgHandlerContext ctx;

  check_port_range (&d->settings);
  d->clock = stg_clock_new_real ();
  d->prune_id = g_timeout_add_seconds (STG_DAEMON_PRUNE_S, prune_step, d);
  if (!start_runtime (d, error))
    return FALSE;
  start_engine (d);
  /* Hosts in maintenance closed again, then instances (adopted, or
   * reported dead), then the updates over them. */
  if (!stg_engine_recover_hosts (d->engine, error) ||
      (g_str_equal (d->settings.runtime, "local") &&
       !stg_local_runtime_adopt (d->runtime, error)) ||
      !stg_engine_recover (d->engine, error))
    return FALSE;

  ctx = (StgHandlerContext){
    .store = d->store,
    .engine = d->engine,
    .clock = d->clock,
    .cluster = d->settings.cluster,
    .backups = d->backups,
    .recovered = on_recovered,
    .recovered_data = d,
  };
  if (d->settings.store == NULL && d->settings.backup_interval_s > 0)
    d->backup_id = g_timeout_add_seconds ((guint) d->settings.backup_interval_s, backup_step, d);
  d->handler = stg_handler_new (&ctx);
  d->dispatch = stg_dispatch_new (d->handler, (gsize) d->settings.max_frame);
  stg_dispatch_set_generation (d->dispatch, store_generation, d->store);

  d->auth = stg_auth_new (d->settings.users, d->settings.read_requires_auth, d->settings.tcp_trusted,
                          error);
  if (d->auth == NULL)
    return FALSE;

  tcp_options (d, &options);
  /* Plain TCP carries no credentials: with users, it may only read unless
   * the operator trusts it. */
  if (!stg_auth_tcp_trusted (d->auth))
    options.caller = (StgCaller){
      .access = stg_auth_read_requires_auth (d->auth) ? STG_ACCESS_NONE : STG_ACCESS_READ,
      .why = "the TCP port is read-only when auth is on (use /api over HTTP, or tcp_trusted)",
    };
  /* A follower taking the lead keeps its listeners: they serve the
   * leader's parts from here. */
  if (d->tcp != NULL)
    stg_tcp_server_serve (d->tcp, d->dispatch, &options.caller);
  else if ((d->tcp = stg_tcp_server_new (d->dispatch, d->settings.bind,
                                         (guint16) d->settings.thrift_port, &options, error)) ==
           NULL)
    return FALSE;

  if (d->http != NULL)
    stg_http_server_clear_routes (d->http);
  else if (!start_http (d, error))
    return FALSE;
  stg_http_server_route (d->http, "/health", stg_daemon_route_health, d);
  stg_http_server_route (d->http, "/leader", stg_daemon_route_leader, d);
  stg_http_server_route (d->http, "/cluster", stg_daemon_route_cluster, d);
  d->api = stg_http_api_new (d->http, d->dispatch, d->auth);
  {
    StgWebUiContext ui = {
      .store = d->store,
      .engine = d->engine,
      .clock = d->clock,
      .cluster = d->settings.cluster,
      .assets_dir = d->settings.webui_dir,
      .auth = d->auth,
      .metrics = stg_dispatch_metrics (d->dispatch),
      .health_counts = &d->health_counts,
      .notify_counts = &d->notify_counts,
      .more_metrics = stg_daemon_zk_metrics,
      .more_metrics_data = d,
    };
    d->webui = stg_webui_new (d->http, &ui);
  }

  if (!stg_daemon_zk_announce_leader (d, error) ||
      (d->settings.ready_file != NULL && !write_ready_file (d, error)))
    return FALSE;
  g_message ("staggerd: cluster '%s', data in %s, HTTP on %s:%u, Thrift on %s:%u",
             d->settings.cluster, d->settings.data_dir, d->settings.bind,
             stg_http_server_port (d->http), d->settings.bind, stg_tcp_server_port (d->tcp));
  return TRUE;
}

void
stg_daemon_stop (StgDaemon *d)
{
  if (d == NULL)
    return;
  g_clear_handle_id (&d->prune_id, g_source_remove);
  g_clear_handle_id (&d->backup_id, g_source_remove);
  g_clear_handle_id (&d->restart_id, g_source_remove);
  /* Top-down: stop taking requests, then the core, then storage. */
  g_clear_pointer (&d->zk_leader, stg_serverset_free);
  g_clear_pointer (&d->leadership, stg_leadership_free);
  g_clear_pointer (&d->http, stg_http_server_free);
  g_clear_pointer (&d->webui, stg_webui_free);
  g_clear_pointer (&d->api, stg_http_api_free);
  g_clear_pointer (&d->tcp, stg_tcp_server_free);
  g_clear_pointer (&d->auth, stg_auth_free);
  g_clear_pointer (&d->dispatch, stg_dispatch_free);
  g_clear_object (&d->handler);
  g_clear_pointer (&d->engine, stg_engine_free);
  g_clear_pointer (&d->tiers, stg_tiers_free);
  g_clear_pointer (&d->gates, stg_gate_runner_free);
  g_clear_pointer (&d->notifier, stg_notifier_free);
  /* Instances keep running: the next staggerd adopts them. */
  g_clear_pointer (&d->runtime, stg_runtime_free);
  g_clear_pointer (&d->clock, stg_clock_free);
  g_clear_pointer (&d->backups, stg_backups_free);
  g_clear_pointer (&d->store, stg_store_close);
  stg_daemon_settings_clear (&d->settings);
  g_free (d->holder);
  g_free (d);
}
