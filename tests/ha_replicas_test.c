/* ha_replicas_test.c: three staggerd replicas on one real PostgreSQL. One
 * leads, the others redirect to it; kill -9 the leader while an update
 * runs and another takes over within the bound and finishes the update;
 * a paused leader steps down; PostgreSQL stops and starts again; an
 * update's page open in Chromium follows the new leader by itself.
 * Every event an engine step writes carries the epoch it ran under; after
 * each test no event of an older epoch follows one of a newer epoch.
 * STG_HA_KILLS sets how many kills (default 3; `make soak-ha` runs 20),
 * STG_HA_OUTAGE_S how long PostgreSQL stays down (default 5; soak: 30).
 * Ports 18500-18999. */
#include "config.h"

#include <check.h>
#include <signal.h>
#include <libpq-fe.h>

#include "browser_env.h"
#include "pgtest.h"
#include "rollout.h"

#define REPLICAS 3
#define LEASE_MS 2000
#define BOUND_S 10           /* documented takeover bound */

static StgTestPg *pg;

typedef struct
{
  gchar *dir;
  guint16 http;
  StgTestDaemon *d;
} Replica;

static Replica replicas[REPLICAS];
static gchar *conninfo;

/* "leader", "follower", or "" when nothing answers. */
static gchar *
health (guint16 port)
{
  g_autoptr (GSocketClient) client = g_socket_client_new ();
  g_autoptr (GSocketConnection) conn = g_socket_client_connect_to_host (client, "127.0.0.1", port,
                                                                        NULL, NULL);
  const gchar *req = "GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  gchar buf[2048] = { 0 };
  gsize got = 0;

  if (conn == NULL ||
      !g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (conn)), req,
                                  strlen (req), NULL, NULL, NULL))
    return g_strdup ("");
  (void) g_input_stream_read_all (g_io_stream_get_input_stream (G_IO_STREAM (conn)), buf,
                                  sizeof buf - 1, &got, NULL, NULL);
  const gchar *body = strstr (buf, "\r\n\r\n");
  return g_strstrip (g_strdup (body ? body + 4 : ""));
}

static gchar *
pg_value (const gchar *sql)
{
  PGconn *conn = PQconnectdb (conninfo);
  PGresult *res = PQexec (conn, sql);
  gchar *v = PQresultStatus (res) == PGRES_TUPLES_OK && PQntuples (res) == 1
                 ? g_strdup (PQgetvalue (res, 0, 0)) : NULL;
  PQclear (res);
  PQfinish (conn);
  return v;
}

static void
start_replica (gint i)
{
  Replica *r = &replicas[i];

  /* Our range lies among the kernel's ephemeral ports: a client socket may
   * hold the port; then this replica takes another one. */
  while (!stg_test_port_free (r->http))
    r->http = (guint16) g_random_int_range (18500, 19000);
  g_autofree gchar *store = g_strconcat ("--store=", conninfo, NULL);
  g_autofree gchar *port = g_strdup_printf ("--http-port=%u", r->http);
  g_autofree gchar *url = g_strdup_printf ("--advertise-url=http://127.0.0.1:%u", r->http);
  g_autofree gchar *lease = g_strdup_printf ("--lease-ms=%d", LEASE_MS);

  r->d = stg_test_daemon_start (r->dir, store, port, url, lease, "--runtime=simulated", NULL);
}

/* Waits until exactly one replica says "leader"; returns its index. Fails
 * the test after @bound_s seconds. */
static gint
wait_leader (gint bound_s)
{
  gint64 deadline = g_get_monotonic_time () + bound_s * G_USEC_PER_SEC;
  for (;;)
    {
      gint leader = -1, leaders = 0;
      for (gint i = 0; i < REPLICAS; i++)
        {
          if (replicas[i].d == NULL)
            continue;
          g_autofree gchar *h = health (replicas[i].http);
          if (g_str_equal (h, "leader"))
            leader = i, leaders++;
        }
      ck_assert_int_le (leaders, 1);
      if (leaders == 1)
        return leader;
      ck_assert_msg (g_get_monotonic_time () < deadline, "no leader within %d s", bound_s);
      g_usleep (50 * 1000);
    }
}

/* Whether something accepts connections on 127.0.0.1:@port. */
static gboolean
accepts (guint16 port)
{
  g_autoptr (GSocketClient) client = g_socket_client_new ();
  g_autoptr (GSocketConnection) c = g_socket_client_connect_to_host (client, "127.0.0.1", port,
                                                                     NULL, NULL);
  return c != NULL;
}

/* The leader's Thrift port, from its ready file (rewritten on takeover:
 * until then the file may still name the port it had as a follower,
 * closed by now, so the port must take a connection too). */
static void
refresh_ports (Replica *r)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  gint64 deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
  for (;;)
    {
      if (json_parser_load_from_file (parser, r->d->ready_file, NULL))
        {
          JsonObject *o = json_node_get_object (json_parser_get_root (parser));
          r->d->thrift_port = (guint16) json_object_get_int_member (o, "thrift_port");
          if (r->d->thrift_port != 0 && accepts (r->d->thrift_port))
            return;
        }
      ck_assert_msg (g_get_monotonic_time () < deadline, "no Thrift port in %s", r->d->ready_file);
      g_usleep (20 * 1000);
    }
}

static void
setup (void)
{
  g_autoptr (GError) error = NULL;
  guint16 base = (guint16) (18500 + (getpid () % 49) * 10);

  conninfo = stg_test_pg_new_database (pg, &error);
  ck_assert_msg (conninfo != NULL, "%s", error ? error->message : "");
  for (gint i = 0; i < REPLICAS; i++)
    {
      replicas[i].dir = stg_test_tmpdir ();
      replicas[i].http = (guint16) (base + i);
    }
}

/* No step of an old epoch lands after a newer epoch's first step: in
 * each table of engine steps, ids (the order rows were written) never go
 * back in epoch, and every row was written by a leader. */
static void
assert_epochs_in_order (void)
{
  static const gchar *const tables[] = { "update_events", "instance_events" };

  for (guint i = 0; i < G_N_ELEMENTS (tables); i++)
    {
      g_autofree gchar *late =
          g_strdup_printf ("SELECT count(*)::text FROM %s a WHERE EXISTS "
                           "(SELECT 1 FROM %s b WHERE b.id < a.id AND b.epoch > a.epoch)",
                           tables[i], tables[i]);
      g_autofree gchar *unled = g_strdup_printf ("SELECT count(*)::text FROM %s WHERE epoch = 0",
                                                 tables[i]);
      g_autofree gchar *n_late = pg_value (late), *n_unled = pg_value (unled);
      ck_assert_msg (g_strcmp0 (n_late, "0") == 0, "%s: %s rows of an old epoch after a newer one",
                     tables[i], n_late);
      ck_assert_msg (g_strcmp0 (n_unled, "0") == 0, "%s: %s rows written by no leader", tables[i],
                     n_unled);
    }
}

static void
teardown (void)
{
  assert_epochs_in_order ();
  for (gint i = 0; i < REPLICAS; i++)
    {
      if (replicas[i].d != NULL)
        {
          ck_assert_int_eq (stg_test_daemon_stop (replicas[i].d), 0);
          stg_test_daemon_free (replicas[i].d);
        }
      stg_test_rmtree (replicas[i].dir);
      g_free (replicas[i].dir);
    }
  memset (replicas, 0, sizeof replicas);
  g_clear_pointer (&conninfo, g_free);
}

START_TEST (followers_redirect_to_the_leader)
{
  for (gint i = 0; i < REPLICAS; i++)
    start_replica (i);
  gint leader = wait_leader (BOUND_S);
  gint follower = (leader + 1) % REPLICAS;

  g_autofree gchar *body = NULL;
  ck_assert_uint_eq (stg_test_http_get (replicas[follower].http, "/api", &body), 307);
  g_autofree gchar *want = g_strdup_printf ("http://127.0.0.1:%u", replicas[leader].http);
  ck_assert_ptr_nonnull (strstr (body, want));
  g_autofree gchar *who = NULL;
  ck_assert_uint_eq (stg_test_http_get (replicas[follower].http, "/leader", &who), 200);
  ck_assert_ptr_nonnull (strstr (who, want));
  ck_assert_ptr_nonnull (strstr (who, "\"self\":false"));

  /* The CLI, pointed at a follower, follows it to the leader. */
  g_autofree gchar *cli = stg_test_program ("stagger");
  g_autofree gchar *url = g_strdup_printf ("http://127.0.0.1:%u", replicas[follower].http);
  const gchar *argv[] = { cli, "--url", url, "job", "list", "local", NULL };
  g_autofree gchar *out = NULL, *err = NULL;
  gint status = 0;
  ck_assert (g_spawn_sync (NULL, (gchar **) argv, NULL, 0, NULL, NULL, &out, &err, &status, NULL));
  ck_assert_msg (g_spawn_check_wait_status (status, NULL), "stagger failed: %s", err);
  ck_assert_ptr_nonnull (strstr (out, "no jobs"));

  /* Every request follows the leader, the web UI's reads the CLI makes
   * too: a follower's redirect keeps the query, and `job status` through
   * a follower shows each instance's version (#31). */
  g_autofree gchar *jobfile = g_build_filename (replicas[follower].dir, "ha.json", NULL);
  ck_assert (g_file_set_contents (jobfile,
                                  "{\"cluster\": \"local\", \"role\": \"www\", \"environment\": "
                                  "\"prod\", \"name\": \"ha\", \"instances\": 2,"
                                  " \"task\": {\"command\": \"sleep 600\"}}",
                                  -1, NULL));
  const gchar *create[] = {
    cli, "--url", url, "job", "create", "local/www/prod/ha", jobfile, NULL
  };
  g_autofree gchar *create_err = NULL;
  ck_assert (g_spawn_sync (NULL, (gchar **) create, NULL, 0, NULL, NULL, NULL, &create_err, &status,
                           NULL));
  ck_assert_msg (g_spawn_check_wait_status (status, NULL), "job create failed: %s", create_err);
  g_autofree gchar *moved = NULL;
  ck_assert_uint_eq (stg_test_http_get (replicas[follower].http,
                                        "/ui/api/job?role=www&environment=prod&name=ha", &moved),
                     307);
  ck_assert_msg (strstr (moved, "/ui/api/job?role=www&environment=prod&name=ha") != NULL, "%s",
                 moved);
  const gchar *status_argv[] = { cli, "--url", url, "job", "status", "local/www/prod/ha", NULL };
  g_autofree gchar *table = NULL, *table_err = NULL;
  ck_assert (g_spawn_sync (NULL, (gchar **) status_argv, NULL, 0, NULL, NULL, &table, &table_err,
                           &status, NULL));
  ck_assert_msg (g_spawn_check_wait_status (status, NULL), "job status failed: %s", table_err);
  g_auto (GStrv) rows = g_strsplit (table, "\n", -1);
  ck_assert_msg (g_strv_length (rows) >= 3, "%s", table);
  g_auto (GStrv) cells = g_strsplit_set (rows[1], " ", -1);
  guint filled = 0;
  for (guint i = 0; cells[i] != NULL; i++)
    if (cells[i][0] != '\0')
      {
        filled++;
        if (filled == 5) /* INSTANCE STATUS HEALTHY PORTS VERSION */
          ck_assert_msg (g_str_equal (cells[i], "1"), "no version through a follower:\n%s", table);
      }

  /* Framed Thrift has no redirect: the follower's port answers every
   * call, read or write, with an error naming the leader. */
  refresh_ports (&replicas[follower]);
  g_autoptr (StgTestClient) tc = stg_test_client_new (replicas[follower].d->thrift_port);
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (GError) error = NULL;
  ck_assert_msg (api_read_only_scheduler_if_get_job_summary (API_READ_ONLY_SCHEDULER_IF (
                                                                 tc->client),
                                                             &r, "", &error),
                 "%s", error ? error->message : "");
  ck_assert_int_eq (r->responseCode, API_RESPONSE_CODE_ERROR_TRANSIENT);
  ck_assert_uint_eq (r->details->len, 1);
  const gchar *why = ((ApiResponseDetail *) g_ptr_array_index (r->details, 0))->message;
  ck_assert_msg (strstr (why, want) != NULL, "'%s' does not name %s", why, want);
  g_autoptr (ApiJobKey) job = g_object_new (API_TYPE_JOB_KEY, "role", "www", "environment", "prod",
                                            "name", "web", NULL);
  g_autoptr (ApiResponse) w = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (GHashTable) none = g_hash_table_new (g_int_hash, g_int_equal);
  ck_assert (
      api_aurora_scheduler_manager_if_kill_tasks (API_AURORA_SCHEDULER_MANAGER_IF (tc->client), &w,
                                                  job, none, "", &error));
  ck_assert_int_eq (w->responseCode, API_RESPONSE_CODE_ERROR_TRANSIENT);
}
END_TEST

/* `stagger cluster status`, asked of a follower: every replica, one
 * leading, and the store. */
START_TEST (cluster_status_from_a_follower)
{
  for (gint i = 0; i < REPLICAS; i++)
    start_replica (i);
  gint leader = wait_leader (BOUND_S);
  gint follower = (leader + 2) % REPLICAS;
  g_autofree gchar *cli = stg_test_program ("stagger");
  g_autofree gchar *url = g_strdup_printf ("http://127.0.0.1:%u", replicas[follower].http);
  const gchar *argv[] = { cli, "--url", url, "cluster", "status", "--json", NULL };
  gint64 deadline = g_get_monotonic_time () + BOUND_S * G_USEC_PER_SEC;

  /* Each replica says it is alive every quarter lease: wait for all. */
  for (;;)
    {
      g_autofree gchar *out = NULL, *err = NULL;
      gint status = 0;
      ck_assert (
          g_spawn_sync (NULL, (gchar **) argv, NULL, 0, NULL, NULL, &out, &err, &status, NULL));
      ck_assert_msg (g_spawn_check_wait_status (status, NULL), "stagger failed: %s", err);
      g_autoptr (JsonNode) root = stg_test_parse_json (out);
      JsonObject *o = json_node_get_object (root);
      JsonArray *rs = json_object_get_array_member (o, "replicas");
      guint leaders = 0, followers = 0;
      for (guint i = 0; i < json_array_get_length (rs); i++)
        {
          const gchar *role = json_object_get_string_member (json_array_get_object_element (rs, i),
                                                             "role");
          leaders += g_str_equal (role, "leader");
          followers += g_str_equal (role, "follower");
        }
      if (leaders == 1 && followers == REPLICAS - 1)
        {
          g_autofree gchar *want = g_strdup_printf ("http://127.0.0.1:%u", replicas[leader].http);
          JsonObject *l = json_object_get_object_member (o, "leader");
          ck_assert_str_eq (json_object_get_string_member (l, "url"), want);
          ck_assert_int_ge (json_object_get_int_member (l, "epoch"), 1);
          ck_assert (
              g_str_has_prefix (json_object_get_string_member (o, "store"), "PostgreSQL 15"));
          ck_assert_ptr_null (strstr (json_object_get_string_member (o, "store"), "password"));
          break;
        }
      ck_assert_msg (g_get_monotonic_time () < deadline, "replicas not all seen: %s", out);
      g_usleep (100 * 1000);
    }
}
END_TEST

START_TEST (leader_killed_during_updates)
{
  const gchar *env = g_getenv ("STG_HA_KILLS");
  gint kills = env != NULL ? (gint) g_ascii_strtoll (env, NULL, 10) : 3;

  for (gint i = 0; i < REPLICAS; i++)
    start_replica (i);
  gint leader = wait_leader (BOUND_S);
  refresh_ports (&replicas[leader]);
  g_autofree gchar *v1 = stg_rollout_server_data (NULL, NULL);
  stg_rollout_create_job (replicas[leader].d, "web", 4, v1);

  for (gint k = 0; k < kills; k++)
    {
      g_autofree gchar *data = stg_rollout_server_data (NULL, k % 2 ? NULL
                                                        : ", \"env\": {\"K\": \"x\"}");
      g_autoptr (ApiJobUpdateKey) key = stg_rollout_start_update (replicas[leader].d, "web", 4,
                                                                  data, 1, 400);
      g_autofree gchar *epoch_before = pg_value ("SELECT epoch::text FROM stagger_leader");
      g_usleep ((gulong) g_random_int_range (0, 1500) * 1000);   /* a random moment */
      stg_test_daemon_kill9 (replicas[leader].d);
      stg_test_daemon_free (replicas[leader].d);
      replicas[leader].d = NULL;
      gint64 killed = g_get_monotonic_time ();

      gint next = wait_leader (BOUND_S);
      gint64 took = (g_get_monotonic_time () - killed) / 1000;
      g_printerr ("kill %d: replica %d took over in %" G_GINT64_FORMAT " ms\n", k + 1, next, took);
      g_autofree gchar *epoch_after = pg_value ("SELECT epoch::text FROM stagger_leader");
      ck_assert_int_eq (g_ascii_strtoll (epoch_after, NULL, 10),
                        g_ascii_strtoll (epoch_before, NULL, 10) + 1);
      start_replica (leader);                      /* back, as a follower */
      leader = next;
      refresh_ports (&replicas[leader]);
      ck_assert_int_eq (stg_rollout_wait_terminal (replicas[leader].d, key),
                        API_JOB_UPDATE_STATUS_ROLLED_FORWARD);
    }
  /* Every leader wrote steps (at least each update's last event), so the
   * order check in teardown compares several epochs. */
  g_autofree gchar *epochs = pg_value ("SELECT count(DISTINCT epoch)::text FROM update_events");
  ck_assert_int_ge (g_ascii_strtoll (epochs, NULL, 10), kills + 1);
}
END_TEST

/* Starts the replicas, creates www/prod/web (@instances instances) on the
 * leader and starts an update of it to @env (one instance at a time,
 * @watch_ms watch); returns the leader. */
static gint
start_update_of (gint32 instances, const gchar *env, gint32 watch_ms, ApiJobUpdateKey **key)
{
  for (gint i = 0; i < REPLICAS; i++)
    start_replica (i);
  gint leader = wait_leader (BOUND_S);
  refresh_ports (&replicas[leader]);
  g_autofree gchar *v1 = stg_rollout_server_data (NULL, NULL);
  stg_rollout_create_job (replicas[leader].d, "web", instances, v1);
  g_autofree gchar *extra = g_strdup_printf (", \"env\": {\"K\": \"%s\"}", env);
  g_autofree gchar *v2 = stg_rollout_server_data (NULL, extra);
  *key = stg_rollout_start_update (replicas[leader].d, "web", instances, v2, 1, watch_ms);
  return leader;
}

/* The same with 4 instances and a 400 ms watch. */
static gint
start_update (const gchar *env, ApiJobUpdateKey **key)
{
  return start_update_of (4, env, 400, key);
}

/* Paused past the lease, the leader loses the lead; resumed, it finds
 * itself fenced, steps down and comes back as a follower. */
START_TEST (paused_leader_steps_down)
{
  g_autoptr (ApiJobUpdateKey) key = NULL;
  gint old = start_update ("y", &key);

  kill (replicas[old].d->pid, SIGSTOP);
  StgTestDaemon *paused = g_steal_pointer (&replicas[old].d);   /* out of wait_leader's view */
  gint next = wait_leader (BOUND_S);
  ck_assert_int_ne (next, old);
  refresh_ports (&replicas[next]);
  kill (paused->pid, SIGCONT);
  replicas[old].d = paused;

  /* It steps down (a follower again, on the same port) while the new
   * leader finishes the update. */
  gint64 deadline = g_get_monotonic_time () + BOUND_S * G_USEC_PER_SEC;
  for (;;)
    {
      g_autofree gchar *h = health (replicas[old].http);
      if (g_str_equal (h, "follower"))
        break;
      ck_assert_msg (g_get_monotonic_time () < deadline, "the resumed leader says '%s'", h);
      g_usleep (50 * 1000);
    }
  ck_assert_int_eq (wait_leader (BOUND_S), next);
  ck_assert_int_eq (stg_rollout_wait_terminal (replicas[next].d, key),
                    API_JOB_UPDATE_STATUS_ROLLED_FORWARD);
}
END_TEST

static gboolean
file_exists (gpointer path)
{
  return g_file_test (path, G_FILE_TEST_EXISTS);
}

/* A page open on the leader, in Chromium (tests/browser/follow_leader.mjs),
 * through a kill -9 of that leader: it finds the new leader by itself,
 * says so, and goes on showing the update there, instance by instance, to
 * its end. The killed replica stays down, so the page must move to another
 * replica (the one /cluster named freshest) rather than wait for it. */
START_TEST (page_follows_the_new_leader)
{
  static const gchar *const scripts[] = { "follow_leader.mjs", NULL };
  g_autofree gchar *env_dir = stg_browser_env_prepare ("browser-env-ha", scripts);
  g_autoptr (ApiJobUpdateKey) key = NULL;

  gint leader = start_update_of (8, "page", 1500, &key);

  g_autofree gchar *url = g_strdup_printf ("http://127.0.0.1:%u/#/update/www/prod/web/%s",
                                           replicas[leader].http, key->id);
  g_autofree gchar *markers = g_build_filename (replicas[leader].dir, "page", NULL);
  g_autofree gchar *loaded = g_build_filename (markers, "loaded", NULL);
  GSubprocess *page = stg_browser_env_start (env_dir, "follow_leader.mjs", url, "ROLLED_FORWARD",
                                             markers, NULL);
  ck_assert_msg (stg_test_wait (file_exists, loaded, 60000), "the page did not load");
  g_autofree gchar *old_origin = g_strdup_printf ("http://127.0.0.1:%u", replicas[leader].http);
  stg_test_daemon_kill9 (replicas[leader].d);
  stg_test_daemon_free (replicas[leader].d);
  replicas[leader].d = NULL;
  gint next = wait_leader (BOUND_S);
  refresh_ports (&replicas[next]);

  g_autofree gchar *last = NULL, *output = NULL;
  gint status = stg_browser_env_finish (page, &last, &output);
  g_autoptr (JsonNode) result = stg_test_parse_json (last);
  JsonObject *o = json_node_get_object (result);
  ck_assert_msg (status == 0, "the page did not follow the leader to the end:\n%s", output);
  ck_assert_str_eq (json_object_get_string_member (o, "first_origin"), old_origin);
  JsonArray *origins = json_object_get_array_member (o, "origins");
  g_autofree gchar *new_origin = g_strdup_printf ("http://127.0.0.1:%u", replicas[next].http);
  ck_assert_str_eq (json_array_get_string_element (origins, json_array_get_length (origins) - 1),
                    new_origin);
  /* It says where it came from, and the grid moved while it was there:
   * the update went on live, not one final read. */
  const gchar *notice = json_object_get_string_member (o, "notice");
  ck_assert_msg (strstr (notice, old_origin) != NULL && strstr (notice, "followed the new leader"),
                 "notice: %s", notice);
  ck_assert_msg (json_array_get_length (json_object_get_array_member (o, "states")) >= 2,
                 "the grid did not change on the new leader:\n%s", output);
  ck_assert_int_eq (json_array_get_length (json_object_get_array_member (o, "errors")), 0);
  ck_assert_int_eq (stg_rollout_wait_terminal (replicas[next].d, key),
                    API_JOB_UPDATE_STATUS_ROLLED_FORWARD);
}
END_TEST

/* PostgreSQL stops for a while: replicas say so and retry; when it is back
 * one leads again and the update finishes. */
START_TEST (database_outage_survived)
{
  const gchar *env = g_getenv ("STG_HA_OUTAGE_S");
  gint outage_s = env != NULL ? (gint) g_ascii_strtoll (env, NULL, 10) : 5;
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiJobUpdateKey) key = NULL;
  gint leader = start_update ("z", &key);

  ck_assert_msg (stg_test_pg_stop (pg, &error), "%s", error ? error->message : "");
  g_usleep ((gulong) outage_s * G_USEC_PER_SEC);   /* the outage itself, not a wait */
  ck_assert_msg (stg_test_pg_restart (pg, &error), "%s", error ? error->message : "");
  leader = wait_leader (BOUND_S + 5);
  refresh_ports (&replicas[leader]);
  ck_assert_int_eq (stg_rollout_wait_terminal (replicas[leader].d, key),
                    API_JOB_UPDATE_STATUS_ROLLED_FORWARD);
}
END_TEST

static Suite *
replicas_suite (void)
{
  Suite *s = suite_create ("ha replicas");
  TCase *tc = tcase_create ("replicas");
  tcase_set_timeout (tc, 600);
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, followers_redirect_to_the_leader);
  tcase_add_test (tc, cluster_status_from_a_follower);
  tcase_add_test (tc, leader_killed_during_updates);
  tcase_add_test (tc, paused_leader_steps_down);
  tcase_add_test (tc, database_outage_survived);
  tcase_add_test (tc, page_follows_the_new_leader);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return stg_test_pg_main ("ha_replicas_test", replicas_suite (), &pg, FALSE);
}
