/* daemon_fixture.c: the suites' staggerd fixture (see daemon_fixture.h).
 * Test processes only. */
#include "config.h"

#include "daemon_fixture.h"

DaemonFixture dfx;

void
dfx_setup (void)
{
  dfx.dir = stg_test_tmpdir ();
}

void
dfx_teardown (void)
{
  stg_test_rmtree (dfx.dir);
  g_clear_pointer (&dfx.dir, g_free);
}

void
dfx_stop (StgTestDaemon *daemon)
{
  ck_assert_int_eq (stg_test_daemon_stop (daemon), 0);
  stg_test_daemon_free (daemon);
}

int
dfx_run (Suite *suite)
{
  gchar *scope = stg_test_scope_begin ();
  SRunner *sr = srunner_create (suite);

  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  stg_test_scope_end (scope);
  return failed == 0 ? 0 : 1;
}
