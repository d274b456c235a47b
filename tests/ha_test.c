/* ha_test.c: Check suite for high availability: the real PostgreSQL that
 * the other PostgreSQL tests stand on (started, stopped, restarted, one
 * database per test), and staggerd running a real rollout with its store
 * there. Ports 18000-18999. */
#include "config.h"

#include <check.h>
#include <libpq-fe.h>
#include <signal.h>

#include <glib/gstdio.h>

#include "common/jobkey.h"
#include "daemon/leadership.h"
#include "pgtest.h"
#include "store/db.h"
#include "store/store.h"
#include "rollout.h"

#define PORT_RANGE "--port-range=18100-18499"

static StgTestPg *pg;

/* One value from a query, as text, or NULL when the query fails. */
static gchar *
query_value (const gchar *conninfo, const gchar *sql)
{
  PGconn *conn = PQconnectdb (conninfo);
  PGresult *res = PQexec (conn, sql);
  gchar *value = NULL;

  if (PQresultStatus (res) == PGRES_TUPLES_OK && PQntuples (res) == 1)
    value = g_strdup (PQgetvalue (res, 0, 0));
  PQclear (res);
  PQfinish (conn);
  return value;
}

START_TEST (pg_serves_fresh_databases)
{
  g_autoptr (GError) error = NULL;
  g_autofree gchar *a = stg_test_pg_new_database (pg, &error);
  ck_assert_msg (a != NULL, "%s", error ? error->message : "");
  g_autofree gchar *b = stg_test_pg_new_database (pg, &error);
  ck_assert_msg (b != NULL, "%s", error ? error->message : "");
  ck_assert_str_ne (a, b);

  g_autofree gchar *version = query_value (a, "SHOW server_version_num");
  ck_assert_ptr_nonnull (version);
  ck_assert_int_ge (g_ascii_strtoll (version, NULL, 10), 150000);
  g_autofree gchar *addr = query_value (b, "SELECT inet_server_addr()::text");
  ck_assert_str_eq (addr, "127.0.0.1/32");
  ck_assert_int_ge (pg->port, 18000);
  ck_assert_int_le (pg->port, 18099);
}
END_TEST

START_TEST (pg_stops_and_restarts_with_its_data)
{
  g_autoptr (GError) error = NULL;
  g_autofree gchar *db = stg_test_pg_new_database (pg, &error);
  ck_assert_msg (db != NULL, "%s", error ? error->message : "");
  g_autofree gchar *made = query_value (db, "CREATE TABLE kept (v int); INSERT INTO kept VALUES (7);"
                                            "SELECT count(*)::text FROM kept");
  ck_assert_str_eq (made, "1");

  ck_assert_msg (stg_test_pg_stop (pg, &error), "%s", error ? error->message : "");
  g_autofree gchar *down = query_value (db, "SELECT 1");
  ck_assert_ptr_null (down);
  ck_assert_msg (stg_test_pg_restart (pg, &error), "%s", error ? error->message : "");
  g_autofree gchar *kept = query_value (db, "SELECT v::text FROM kept");
  ck_assert_str_eq (kept, "7");
}
END_TEST

START_TEST (daemon_rolls_out_on_postgresql)
{
  g_autoptr (GError) error = NULL;
  g_autofree gchar *conninfo = stg_test_pg_new_database (pg, &error);
  ck_assert_msg (conninfo != NULL, "%s", error ? error->message : "");
  g_autofree gchar *store = g_strconcat ("--store=", conninfo, NULL);
  g_autofree gchar *dir = stg_test_tmpdir ();

  StgTestDaemon *d = stg_test_daemon_start (dir, PORT_RANGE, store, NULL);
  g_autofree gchar *v1 = stg_rollout_server_data (NULL, NULL);
  stg_rollout_create_job (d, "web", 3, v1);
  stg_rollout_wait_running (d, "web", 3, 1);
  g_autofree gchar *v2 = stg_rollout_server_data (NULL, ", \"env\": {\"GREETING\": \"v2\"}");
  g_autoptr (ApiJobUpdateKey) key = stg_rollout_start_update (d, "web", 3, v2, 2, 300);
  ck_assert_int_eq (stg_rollout_wait_terminal (d, key), API_JOB_UPDATE_STATUS_ROLLED_FORWARD);
  stg_rollout_wait_running (d, "web", 3, 2);
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);

  /* Everything went to PostgreSQL, nothing to a SQLite file. */
  g_autofree gchar *sqlite = g_build_filename (dir, "stagger.db", NULL);
  ck_assert (!g_file_test (sqlite, G_FILE_TEST_EXISTS));
  g_autofree gchar *status = query_value (conninfo, "SELECT status::text FROM updates");
  g_autofree gchar *want = g_strdup_printf ("%d", API_JOB_UPDATE_STATUS_ROLLED_FORWARD);
  ck_assert_str_eq (status, want);
  g_autofree gchar *count_sql = g_strdup_printf (
      "SELECT count(*)::text FROM instance_events WHERE action = %d",
      API_JOB_UPDATE_ACTION_INSTANCE_UPDATED);
  g_autofree gchar *events = query_value (conninfo, count_sql);
  ck_assert_str_eq (events, "3");

  /* A restart finds its jobs in PostgreSQL and adopts the instances. */
  d = stg_test_daemon_start (dir, PORT_RANGE, store, NULL);
  stg_rollout_wait_running (d, "web", 3, 2);
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
  stg_test_rmtree (dir);
}
END_TEST

/* ---- leadership in the store ----------------------------------------------------- */

static StgStore *
open_pg_store (const gchar *conninfo)
{
  g_autoptr (GError) error = NULL;
  StgStore *store = stg_store_open (conninfo, &error);
  ck_assert_msg (store != NULL, "%s", error ? error->message : "");
  return store;
}

/* A write: stores a task configuration named @name. */
static gboolean
write_config (StgStore *store, const gchar *name, GError **error)
{
  g_autoptr (ApiJobKey) key = stg_job_key_new ("www", "prod", name);
  g_autoptr (ApiExecutorConfig) exec = g_object_new (API_TYPE_EXECUTOR_CONFIG, "name", "stagger",
                                                     "data", name, NULL);
  g_autoptr (ApiTaskConfig) config = g_object_new (API_TYPE_TASK_CONFIG, "job", key,
                                                   "isService", TRUE, "executorConfig", exec, NULL);
  gint64 id;
  return stg_store_put_config (store, config, &id, NULL, error);
}

START_TEST (one_leader_at_a_time)
{
  g_autoptr (GError) error = NULL;
  g_autofree gchar *db = stg_test_pg_new_database (pg, &error);
  ck_assert_msg (db != NULL, "%s", error ? error->message : "");
  StgStore *a = open_pg_store (db);
  g_autoptr (StgStore) b = open_pg_store (db);
  gint64 epoch_a = 0, epoch_b = 0;

  ck_assert (stg_store_try_lead (a, "a:1", "http://a", 0, 1000, &epoch_a, &error));
  ck_assert_int_eq (epoch_a, 1);
  ck_assert (!stg_store_try_lead (b, "b:2", "http://b", 0, 1001, &epoch_b, &error));
  ck_assert_ptr_null (error);
  ck_assert_int_eq (stg_store_epoch (b), 0);

  StgLeaderInfo info = { 0 };
  ck_assert (stg_store_leader (b, &info, &error));
  ck_assert_int_eq (info.epoch, 1);
  ck_assert_str_eq (info.holder, "a:1");
  ck_assert_str_eq (info.url, "http://a");
  ck_assert_int_eq (info.since_ms, 1000);
  stg_leader_info_clear (&info);

  /* The leader's session ends: the lock is free, the epoch moves on. */
  stg_store_close (a);
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  while (!stg_store_try_lead (b, "b:2", "http://b", 0, 2000, &epoch_b, &error))
    {
      /* The server frees the lock when the old session's backend exits. */
      ck_assert_ptr_null (error);
      ck_assert_msg (g_get_monotonic_time () < deadline, "the lock was not freed");
      g_usleep (20 * 1000);
    }
  ck_assert_int_eq (epoch_b, 2);
  ck_assert (write_config (b, "after", &error));
}
END_TEST

START_TEST (fenced_leader_writes_nothing)
{
  g_autoptr (GError) error = NULL;
  g_autofree gchar *db = stg_test_pg_new_database (pg, &error);
  ck_assert_msg (db != NULL, "%s", error ? error->message : "");
  g_autoptr (StgStore) a = open_pg_store (db);
  gint64 epoch = 0;

  ck_assert (stg_store_try_lead (a, "a:1", "http://a", 0, 1000, &epoch, &error));
  ck_assert (write_config (a, "before", &error));
  /* A takeover this leader did not see (as after a network partition). */
  g_autofree gchar *bumped = query_value (db, "UPDATE stagger_leader SET epoch = epoch + 1 "
                                              "RETURNING epoch::text");
  ck_assert_str_eq (bumped, "2");
  ck_assert (!write_config (a, "after", &error));
  ck_assert (g_error_matches (error, STG_STORE_ERROR, STG_STORE_ERROR_FENCED));
  g_autofree gchar *count = query_value (db, "SELECT count(*)::text FROM task_configs");
  ck_assert_str_eq (count, "1");
}
END_TEST

/* A leader that stops talking (paused, hung) loses the lock after its
 * lease; the next leader takes over within the bound, and the old one's
 * next write fails and lands nowhere. */
START_TEST (paused_leader_loses_the_lock)
{
  g_autoptr (GError) error = NULL;
  g_autofree gchar *db = stg_test_pg_new_database (pg, &error);
  ck_assert_msg (db != NULL, "%s", error ? error->message : "");
  g_autoptr (StgStore) a = open_pg_store (db);
  g_autoptr (StgStore) b = open_pg_store (db);
  gint64 epoch = 0;

  ck_assert (stg_store_try_lead (a, "a:1", "http://a", 1500, 1000, &epoch, &error));
  gint64 paused = g_get_monotonic_time ();
  gint64 deadline = paused + 10 * G_USEC_PER_SEC;
  while (!stg_store_try_lead (b, "b:2", "http://b", 1500, 2000, &epoch, &error))
    {
      ck_assert_ptr_null (error);
      ck_assert_msg (g_get_monotonic_time () < deadline, "no takeover within 10 s");
      ck_assert (stg_store_ping (b, &error));
      g_usleep (100 * 1000);
    }
  ck_assert_int_eq (epoch, 2);
  ck_assert (!write_config (a, "stale", &error));
  g_autofree gchar *count = query_value (db, "SELECT count(*)::text FROM task_configs");
  ck_assert_str_eq (count, "0");
}
END_TEST

/* A server that keeps the connection and never answers (here, the one
 * process serving the store's session, stopped: its kernel still
 * acknowledges, so keepalives pass) is given up within the answer bound
 * instead of holding the caller for ever; later calls fail at once, and
 * the store connects again once the server answers. */
/* Wakes the stopped backend after 10 s, whatever the test does: a test
 * that fails while it is stopped must not leave PostgreSQL unable to stop. */
static gpointer
wake_backend (gpointer data)
{
  GPid *backend = data;
  for (gint i = 0; i < 100 && g_atomic_int_get (backend) != 0; i++)
    g_usleep (100 * 1000);
  GPid pid = g_atomic_int_get (backend);
  if (pid != 0)
    kill (pid, SIGCONT);
  return NULL;
}

START_TEST (silent_server_given_up_within_the_bound)
{
  g_autoptr (GError) error = NULL;
  g_autofree gchar *db = stg_test_pg_new_database (pg, &error);
  ck_assert_msg (db != NULL, "%s", error ? error->message : "");
  g_autoptr (StgStore) store = open_pg_store (db);
  /* The store's is the one other session on this new database. */
  g_autofree gchar *pid_text = query_value (db, "SELECT pid::text FROM pg_stat_activity WHERE "
                                                "datname = current_database() AND "
                                                "pid <> pg_backend_pid()");
  GPid backend = (GPid) g_ascii_strtoll (pid_text, NULL, 10);
  ck_assert_int_gt (backend, 0);

  stg_db_pg_set_answer_timeout (300);
  GPid stopped = backend;
  GThread *waker = g_thread_new ("waker", wake_backend, &stopped);
  ck_assert_int_eq (kill (backend, SIGSTOP), 0);
  gint64 t0 = g_get_monotonic_time ();
  gboolean answered = stg_store_ping (store, &error);
  gint64 took_ms = (g_get_monotonic_time () - t0) / 1000;
  ck_assert (!answered);
  ck_assert_msg (strstr (error->message, "did not answer within 300 ms") != NULL, "%s",
                 error->message);
  ck_assert_int_ge (took_ms, 300);
  ck_assert_int_lt (took_ms, 5000);
  g_clear_error (&error);
  t0 = g_get_monotonic_time ();
  ck_assert (!stg_store_ping (store, &error)); /* shut: at once */
  ck_assert_int_lt ((g_get_monotonic_time () - t0) / 1000, 250);
  g_clear_error (&error);
  kill (backend, SIGCONT);
  g_atomic_int_set (&stopped, 0);
  g_thread_join (waker);
  stg_db_pg_set_answer_timeout (15000);
  ck_assert_msg (stg_store_reconnect (store, &error), "%s", error ? error->message : "");
  ck_assert_msg (stg_store_ping (store, &error), "%s", error ? error->message : "");
}
END_TEST

/* A leader acts on the outside world only while a query sent less than
 * half a lease ago found its epoch: the server keeps its idle session (and
 * so its lock) for the whole lease, so that proof always outlives the
 * acting time, and any query that finds the epoch proves it again. */
START_TEST (lead_is_held_half_a_lease_after_each_proof)
{
  g_autoptr (GError) error = NULL;
  g_autofree gchar *db = stg_test_pg_new_database (pg, &error);
  ck_assert_msg (db != NULL, "%s", error ? error->message : "");
  g_autoptr (StgStore) a = open_pg_store (db);
  g_autoptr (StgStore) b = open_pg_store (db);
  gint64 epoch = 0;

  ck_assert_int_eq (stg_store_lead_left_ms (a), 0);
  ck_assert (stg_store_try_lead (a, "a:1", "http://a", 4000, 1000, &epoch, &error));
  ck_assert_int_le (stg_store_lead_left_ms (a), 2000);
  ck_assert_int_gt (stg_store_lead_left_ms (a), 0);
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  while (stg_store_lead_left_ms (a) > 0)
    {
      ck_assert_msg (g_get_monotonic_time () < deadline, "the lead never lapsed");
      g_usleep (20 * 1000);
    }
  ck_assert_int_eq (stg_store_lead_left_ms (a), 0);
  /* Its lock is still its own: the session outlives the acting time. */
  ck_assert (!stg_store_try_lead (b, "b:2", "http://b", 4000, 2000, &epoch, &error));
  ck_assert_ptr_null (error);
  StgLeaderInfo info = { 0 };
  ck_assert_msg (stg_store_leader (a, &info, &error), "%s", error ? error->message : "");
  ck_assert_int_eq (info.epoch, 1);
  stg_leader_info_clear (&info);
  ck_assert (stg_store_lead_left_ms (a) > 0);
  /* So does every write: its fencing check finds the epoch. */
  while (stg_store_lead_left_ms (a) > 0)
    g_usleep (20 * 1000);
  ck_assert (write_config (a, "proof", &error));
  ck_assert (stg_store_lead_left_ms (a) > 0);
}
END_TEST

/* A follower that takes over and then spends longer than a lease
 * starting to lead (adopting what runs on hosts, one of which does not
 * answer) keeps its lead meanwhile: its leadership's tick still runs. */
typedef struct
{
  gint64 lease_ms;
  gboolean led, lost;
  gchar *after; /* what the store said once it had started leading */
} SlowTakeover;

static gboolean
wake (gpointer data G_GNUC_UNUSED)
{
  return G_SOURCE_CONTINUE;
}

static void
slow_take_over (gpointer data)
{
  SlowTakeover *t = data;
  gint64 until = g_get_monotonic_time () + 3 * t->lease_ms * 1000;
  guint waker = g_timeout_add (50, wake, NULL);

  /* As adoption does: the main loop runs while the hosts are listed. */
  while (g_get_monotonic_time () < until && !t->lost)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (waker);
  t->led = TRUE;
}

static void
lost_lead (gpointer data)
{
  ((SlowTakeover *) data)->lost = TRUE;
}

static gboolean
took_over (gpointer data)
{
  SlowTakeover *t = data;
  return t->led || t->lost;
}

START_TEST (slow_takeover_keeps_its_lead)
{
  g_autoptr (GError) error = NULL;
  g_autofree gchar *db = stg_test_pg_new_database (pg, &error);
  ck_assert_msg (db != NULL, "%s", error ? error->message : "");
  StgStore *a = open_pg_store (db);
  g_autoptr (StgStore) b = open_pg_store (db);
  SlowTakeover t = { .lease_ms = 1000 };
  gint64 epoch = 0;

  ck_assert (stg_store_try_lead (a, "a:1", "http://a", 1000, 1000, &epoch, &error));
  StgLeadership *l = stg_leadership_new (b, "b:2", "http://b", 1000, 3600 * 1000, slow_take_over,
                                         lost_lead, &t);
  stg_store_close (a);
  ck_assert_msg (stg_test_wait (took_over, &t, 30000), "no takeover");
  ck_assert_msg (!t.lost, "the new leader lost its lead while it started leading");
  StgLeaderInfo info = { 0 };
  ck_assert_msg (stg_store_leader (b, &info, &error), "the new leader's session is gone: %s",
                 error ? error->message : "");
  ck_assert_int_eq (info.epoch, 2);
  ck_assert (stg_store_lead_left_ms (b) > 0);
  stg_leader_info_clear (&info);
  stg_leadership_free (l);
}
END_TEST

/* Runs staggerd with @args until it exits; returns its stderr. */
static gchar *
staggerd_fails (const gchar *dir, const gchar *arg)
{
  g_autofree gchar *prog = stg_test_program ("staggerd");
  g_autofree gchar *data = g_strconcat ("--data-dir=", dir, NULL);
  const gchar *argv[] = { prog, data, "--http-port=0", "--thrift-port=0", arg, NULL };
  gchar *err = NULL;
  gint status = 0;

  ck_assert (g_spawn_sync (NULL, (gchar **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                           NULL, &err, &status, NULL));
  ck_assert_msg (!g_spawn_check_wait_status (status, NULL), "staggerd accepted %s", arg);
  return err;
}

START_TEST (store_url_with_password_refused)
{
  g_autofree gchar *dir = stg_test_tmpdir ();
  g_autofree gchar *conf = g_build_filename (dir, "staggerd.conf", NULL);
  g_autofree gchar *conf_arg = g_strconcat ("--config=", conf, NULL);
  ck_assert (g_file_set_contents (conf, "[store]\nurl = postgresql://u:hunter2@127.0.0.1:18999/x\n",
                                  -1, NULL));

  g_autofree gchar *cli = staggerd_fails (dir, "--store=postgresql://u:hunter2@127.0.0.1:18999/x");
  g_autofree gchar *file = staggerd_fails (dir, conf_arg);
  g_autofree gchar *path = staggerd_fails (dir, "--store=/var/lib/stagger.db");
  ck_assert_ptr_nonnull (strstr (cli, "PGPASSWORD"));
  ck_assert_ptr_null (strstr (cli, "hunter2"));
  ck_assert_ptr_nonnull (strstr (file, "PGPASSWORD"));
  ck_assert_ptr_null (strstr (file, "hunter2"));
  ck_assert_ptr_nonnull (strstr (path, "PostgreSQL URL"));
  stg_test_rmtree (dir);
}
END_TEST

static Suite *
ha_suite (void)
{
  Suite *s = suite_create ("ha");
  TCase *tc = tcase_create ("postgresql");
  tcase_set_timeout (tc, 120);
  tcase_add_test (tc, pg_serves_fresh_databases);
  tcase_add_test (tc, pg_stops_and_restarts_with_its_data);
  suite_add_tcase (s, tc);

  tc = tcase_create ("leadership");
  tcase_set_timeout (tc, 60);
  tcase_add_test (tc, one_leader_at_a_time);
  tcase_add_test (tc, fenced_leader_writes_nothing);
  tcase_add_test (tc, paused_leader_loses_the_lock);
  tcase_add_test (tc, lead_is_held_half_a_lease_after_each_proof);
  tcase_add_test (tc, slow_takeover_keeps_its_lead);
  tcase_add_test (tc, silent_server_given_up_within_the_bound);
  suite_add_tcase (s, tc);

  tc = tcase_create ("daemon");
  tcase_set_timeout (tc, 180);
  tcase_add_test (tc, daemon_rolls_out_on_postgresql);
  tcase_add_test (tc, store_url_with_password_refused);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return stg_test_pg_main ("ha_test", ha_suite (), &pg, TRUE);
}
