/* ha_test.c: Check suite for high availability: the real PostgreSQL that
 * the other PostgreSQL tests stand on (started, stopped, restarted, one
 * database per test), and staggerd running a real rollout with its store
 * there. Ports 46000-46999. */
#include "config.h"

#include <check.h>
#include <libpq-fe.h>

#include <glib/gstdio.h>

#include "pgtest.h"
#include "rollout.h"

#define PORT_RANGE "--port-range=46100-46499"

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
  ck_assert_int_ge (pg->port, 46000);
  ck_assert_int_le (pg->port, 46999);
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
  ck_assert (g_file_set_contents (conf, "[store]\nurl = postgresql://u:hunter2@127.0.0.1:46999/x\n",
                                  -1, NULL));

  g_autofree gchar *cli = staggerd_fails (dir, "--store=postgresql://u:hunter2@127.0.0.1:46999/x");
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
  g_autoptr (GError) error = NULL;
  gchar *scope = stg_test_scope_begin ();

  pg = stg_test_pg_start (&error);
  if (pg == NULL)
    {
      g_printerr ("ha_test: cannot start PostgreSQL: %s\n", error->message);
      stg_test_scope_end (scope);
      return 1;
    }
  SRunner *sr = srunner_create (ha_suite ());
  srunner_set_fork_status (sr, CK_NOFORK);
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  stg_test_pg_free (pg);
  stg_test_scope_end (scope);
  return failed == 0 ? 0 : 1;
}
