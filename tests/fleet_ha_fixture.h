/* fleet_ha_fixture.h: what fleet_ha_test's cases share: a store that
 * leads on a fresh PostgreSQL database and proves its lead, real podman
 * hosts (tests/podman_hosts.c) with the test image, a fleet runtime over
 * them, a job of busybox httpd, waits on an instance's phase, takeovers,
 * the messages logged during a test, and the suite's main(). Test
 * process, main thread (GIO's threads log too).
 */
#pragma once

#include <check.h>

#include "pgtest.h"
#include "podman_hosts.h"
#include "runtime/fleet/fleet.h"
#include "testutil.h"

G_BEGIN_DECLS

#define IMAGE "localhost/stagger-test:1"
#define LEASE_MS 2000

typedef struct
{
  StgTestPodman *fleet;
  gchar *dir;      /* the data directory */
  gchar *conninfo; /* a fresh database */
  StgClock *clock;
  StgStore *store;
  StgRuntime *rt;
  gint64 job;
  gint64 config;
  guint prover; /* proves the lead, as the leadership's tick does */
} FhaEnv;

/* The end of a job's executor config: its HTTP health check. */
#define HTTP_CHECKED \
  " \"health_check\": {\"http\": {\"endpoint\": \"/health\"}, \"timeout_secs\": 1," \
  " \"initial_interval_secs\": 0.5, \"interval_secs\": 0.3, \"max_consecutive_failures\": 1}}"

typedef struct
{
  StgStore *store;
  gint64 epoch;
  gint64 next_us; /* when to try again */
} FhaTakeover;

/* @n podman hosts (attribute zone=z0, z1...), a database, a store that
 * leads on it and proves it every quarter lease. */
FhaEnv *fha_env_new (guint n);
void fha_env_free (FhaEnv *e);

/* Proves @data's (an FhaEnv) lead once; a GSourceFunc. */
gboolean fha_prove (gpointer data);

/* TRUE when @text was logged during this test. */
gboolean fha_was_logged (const gchar *text);

/* The fleet's last messages logged during this test (at most @max
 * characters, " | " between them), for a failure's message. */
gchar *fha_logged_tail (gsize max);

/* A fleet runtime over @store, on every host of @e; a host that does not
 * answer for @lost_after_s is lost. */
StgRuntime *fha_runtime_new (FhaEnv *e, StgStore *store, guint lost_after_s);

/* Job www/prod/web: @n instances of @data's command (an executor
 * config), HTTP-checked, on hosts of zone @zone only (NULL: any). */
void fha_make_job_running (FhaEnv *e, gint32 n, const gchar *zone, const gchar *data);

/* ... of busybox httpd, stopped within a second. */
void fha_make_job (FhaEnv *e, gint32 n, const gchar *zone);

/* Waits (60 s at most) until instance @i of @job is in @phase. */
void fha_wait_phase (StgRuntime *rt, gint64 job, gint32 i, StgTaskPhase phase);

/* The ids of @host's containers of job www/prod/web ("all" with exited
 * ones), one a line. */
gchar *fha_container_ids (FhaEnv *e, guint host, gboolean all);

/* One try (every 100 ms) to take over from an idle leader; a condition
 * for stg_test_wait on an FhaTakeover. */
gboolean fha_takes_over (gpointer data);

/* Runs @suite in a test scope with PostgreSQL started and messages
 * captured; main()'s status. */
int fha_run (Suite *suite);

G_END_DECLS
