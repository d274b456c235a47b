/* daemon_fixture.h: what the suites that start a real staggerd in each
 * test share (daemon_test, webui_test, browser_test, cross_site_test): a
 * data directory per test, made by the checked fixture and removed after
 * it (with any instance still running in it), daemons started there and
 * stopped with their clean exit checked, and the suite's main(). The
 * browser they drive is browser_env.h's. Test processes only.
 */
#pragma once

#include <check.h>

#include "testutil.h"

G_BEGIN_DECLS

typedef struct
{
  gchar *dir; /* this test's folder: a daemon's data directory, and its files */
} DaemonFixture;

extern DaemonFixture dfx;

/* The checked fixture: dfx.dir made, then removed. */
void dfx_setup (void);
void dfx_teardown (void);

/* A staggerd on free ports with its data in dfx.dir and these arguments
 * (NULL-terminated). */
#define dfx_start(...) stg_test_daemon_start (dfx.dir, __VA_ARGS__)

/* Stops @daemon with SIGTERM, checks that it exited with status 0 (under
 * the sanitizers: with no leak), and frees it. */
void dfx_stop (StgTestDaemon *daemon);

/* Runs @suite in a test scope (stg_test_scope_begin) and returns main()'s
 * status: 0 when every test passed. */
int dfx_run (Suite *suite);

G_END_DECLS
