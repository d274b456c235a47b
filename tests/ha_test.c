/* ha_test.c: Check suite for high availability: the real PostgreSQL that
 * the other PostgreSQL tests stand on (started, stopped, restarted, one
 * database per test). Ports 46000-46999. */
#include "config.h"

#include <check.h>
#include <libpq-fe.h>

#include "pgtest.h"
#include "testutil.h"

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

static Suite *
ha_suite (void)
{
  Suite *s = suite_create ("ha");
  TCase *tc = tcase_create ("postgresql");
  tcase_set_timeout (tc, 120);
  tcase_add_test (tc, pg_serves_fresh_databases);
  tcase_add_test (tc, pg_stops_and_restarts_with_its_data);
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
