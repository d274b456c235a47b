/* crash_test.c: staggerd dying at the worst moments of a rollout (issue
 * "crash safety of instances"). A test hook (STAGGER_TEST_CRASH_AT=name)
 * makes the daemon _exit at a named point; a new daemon then has to find
 * every process the old one made, keep one process per instance with its
 * pid recorded, and bring the update to the end it would have reached
 * without the crash; and staggerd killed while an update runs a surge
 * instance, which must not be left behind. Ports 23000-24999. */
#include "config.h"

#include <check.h>
#include <signal.h>
#include <string.h>

#include "rollout.h"
#include "spawn/process.h"

#define PORT_RANGE "--port-range=23000-23999"

static gchar *dir;

static void
setup (void)
{
  dir = stg_test_tmpdir ();
}

static void
teardown (void)
{
  g_unsetenv ("STAGGER_TEST_CRASH_AT");
  stg_test_rmtree (dir);
  g_clear_pointer (&dir, g_free);
}

static gboolean
daemon_gone (gpointer data)
{
  StgTestDaemon *d = data;
  return g_subprocess_get_identifier (d->process) == NULL;
}

/* Starts staggerd set to die at @point. */
static StgTestDaemon *
start_doomed (const gchar *point)
{
  g_setenv ("STAGGER_TEST_CRASH_AT", point, TRUE);
  StgTestDaemon *d = stg_test_daemon_start (dir, PORT_RANGE, NULL);
  g_unsetenv ("STAGGER_TEST_CRASH_AT");
  return d;
}

/* Waits for @d to die at its crash point, then frees it. */
static void
wait_crash (StgTestDaemon *d)
{
  ck_assert_msg (stg_test_wait (daemon_gone, d, 60000), "staggerd did not reach its crash point");
  ck_assert (g_subprocess_get_if_exited (d->process));
  ck_assert_int_eq (g_subprocess_get_exit_status (d->process), 99);
  g_clear_object (&d->process);
  stg_test_daemon_free (d);
}

/* The pids of this data dir's instance processes for instance @i of any
 * job (every session leader carrying the runtime's marker). */
static GArray *
marked_pids (gint i)
{
  g_autofree gchar *canon = g_canonicalize_filename (dir, NULL);
  g_autoptr (GPtrArray) all = stg_process_find_marked ("STAGGER_RUN_MARK");
  GArray *pids = g_array_new (FALSE, FALSE, sizeof (gint));

  for (guint k = 0; k < all->len; k++)
    {
      StgMarkedProcess *p = all->pdata[k];
      g_auto (GStrv) parts = g_strsplit (p->mark, ":", 4);
      if (g_strv_length (parts) == 4 && g_str_equal (parts[3], canon) && atoi (parts[1]) == i)
        g_array_append_val (pids, p->pid);
    }
  return pids;
}

/* After the rollout: every instance is one process, the one recorded,
 * running config version @version. (Whether the crash was counted as a
 * failure shows in the update's end: it allows none.) */
static void
assert_one_each (StgTestDaemon *d, gint count, gint version)
{
  stg_rollout_wait_running (d, "web", count, version);
  GArray *now = stg_rollout_instances (d, "web");
  for (gint i = 0; i < count; i++)
    {
      StgRolloutInstance *a = &g_array_index (now, StgRolloutInstance, i);
      g_autoptr (GArray) pids = marked_pids (i);
      ck_assert_msg (pids->len == 1, "instance %d has %u processes", i, pids->len);
      ck_assert_int_eq (g_array_index (pids, gint, 0), a->pid);
    }
  stg_rollout_instances_free (now);
}

/* A job of @count instances of version 1 (@extra: more executor JSON),
 * then a daemon that dies at @point during the update to version 2, then
 * one that finishes it. */
static void
crash_during_update (const gchar *point, gint count, const gchar *extra)
{
  StgTestDaemon *d = stg_test_daemon_start (dir, PORT_RANGE, NULL);
  g_autofree gchar *v1 = stg_rollout_server_data (NULL, extra);
  stg_rollout_create_job (d, "web", count, v1);
  stg_rollout_wait_running (d, "web", count, 1);
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);

  d = start_doomed (point);
  g_autofree gchar *more = g_strdup_printf ("%s, \"env\": {\"GREETING\": \"v2\"}", extra ? extra : "");
  g_autofree gchar *v2 = stg_rollout_server_data (NULL, more);
  /* The daemon may die before it answers. */
  ApiJobUpdateKey *sent = stg_rollout_try_start_update (d, "web", count, v2, 1, 300, NULL);
  g_clear_object (&sent);
  wait_crash (d);

  d = stg_test_daemon_start (dir, PORT_RANGE, NULL);
  g_autoptr (ApiJobUpdateKey) key = stg_rollout_only_update (d);
  ck_assert_int_eq (stg_rollout_wait_terminal (d, key), API_JOB_UPDATE_STATUS_ROLLED_FORWARD);
  assert_one_each (d, count, 2);
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
}

/* Cause 2: the process runs, its pid is not stored yet. */
START_TEST (crash_after_fork_before_pid)
{
  crash_during_update ("spawned", 2, NULL);
}
END_TEST

/* The intent is written, the fork not made: nothing to find, no failure. */
START_TEST (crash_after_intent_before_fork)
{
  crash_during_update ("intent", 2, NULL);
}
END_TEST

/* Cause 3: a replace stopping the old version is not a kill. */
START_TEST (crash_during_replace)
{
  crash_during_update ("replace-stopping", 2, NULL);
}
END_TEST

/* Cause 1: a hot upgrade's new process started beside the old one. */
START_TEST (crash_during_hot_upgrade)
{
  crash_during_update ("beside-spawned", 2, ", \"hot_upgrade\": true");
}
END_TEST

/* ---- surge instances ---------------------------------------------------------------- */

typedef struct
{
  StgTestDaemon *d;
  gint count;
} Job;

/* The job has its surge instance (instance @count), running and healthy. */
static gboolean
surge_up (gpointer data)
{
  Job *j = data;
  GArray *now = stg_rollout_instances (j->d, "web");
  gboolean up = (gint) now->len > j->count &&
                g_str_equal (g_array_index (now, StgRolloutInstance, j->count).status, "RUNNING");
  stg_rollout_instances_free (now);
  if (!up)
    g_usleep (20000);
  return up;
}

/* No process of the data dir is instance @count or beyond. */
static gboolean
no_surge_process (gpointer data)
{
  Job *j = data;
  g_autoptr (GArray) pids = marked_pids (j->count);
  if (pids->len > 0)
    g_usleep (20000);
  return pids->len == 0;
}

/* A job of @count instances of version 1 and a daemon updating it to
 * version 2 with one surge instance, killed with SIGKILL once the surge
 * instance is up (@abort: after aborting the update); a new daemon. */
static StgTestDaemon *
kill_during_surge (gint count, gboolean abort, ApiJobUpdateKey **key_out)
{
  StgTestDaemon *d = stg_test_daemon_start (dir, PORT_RANGE, NULL);
  g_autofree gchar *v1 = stg_rollout_server_data (NULL, NULL);
  stg_rollout_create_job (d, "web", count, v1);
  stg_rollout_wait_running (d, "web", count, 1);

  g_autofree gchar *v2 = stg_rollout_server_data (NULL, ", \"env\": {\"GREETING\": \"v2\"}");
  g_autoptr (ApiJobUpdateSettings) settings = stg_rollout_batch_settings (1, 2000);
  g_object_set (settings, "minInService", count, "maxSurge", 1, NULL);
  g_autoptr (GError) error = NULL;
  ApiJobUpdateKey *key = stg_rollout_try_start_update_with (d, "web", count, v2, settings, &error);
  ck_assert_msg (key != NULL, "startJobUpdate: %s", error ? error->message : "");
  Job j = { d, count };
  ck_assert_msg (stg_test_wait (surge_up, &j, 30000), "the surge instance did not come up");
  if (abort)
    {
      g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
      g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
      ck_assert (api_aurora_scheduler_manager_if_abort_job_update (API_AURORA_SCHEDULER_MANAGER_IF (
                                                                       c->client),
                                                                   &r, key, "stop", &error));
      ck_assert_int_eq (r->responseCode, API_RESPONSE_CODE_OK);
    }
  stg_test_daemon_kill9 (d);
  stg_test_daemon_free (d);
  /* The surge instance outlives the daemon, as every instance does. */
  g_autoptr (GArray) pids = marked_pids (count);
  ck_assert_uint_le (pids->len, 1);
  *key_out = key;
  return stg_test_daemon_start (dir, PORT_RANGE, NULL);
}

/* Killed mid-update: the new daemon knows the surge instance, finishes
 * the update and removes it. */
START_TEST (kill_during_surge_leaves_no_surge_behind)
{
  g_autoptr (ApiJobUpdateKey) key = NULL;
  StgTestDaemon *d = kill_during_surge (2, FALSE, &key);

  ck_assert_int_eq (stg_rollout_wait_terminal (d, key), API_JOB_UPDATE_STATUS_ROLLED_FORWARD);
  Job j = { d, 2 };
  ck_assert (stg_test_wait (no_surge_process, &j, 30000));
  assert_one_each (d, 2, 2);
  GArray *now = stg_rollout_instances (d, "web");
  ck_assert_uint_eq (now->len, 2);
  stg_rollout_instances_free (now);
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
}
END_TEST

/* Killed right after an abort: the new daemon finds the ended update's
 * surge instance in its store and removes it. */
START_TEST (kill_after_abort_leaves_no_surge_behind)
{
  g_autoptr (ApiJobUpdateKey) key = NULL;
  StgTestDaemon *d = kill_during_surge (2, TRUE, &key);

  ck_assert_int_eq (stg_rollout_wait_terminal (d, key), API_JOB_UPDATE_STATUS_ABORTED);
  Job j = { d, 2 };
  ck_assert (stg_test_wait (no_surge_process, &j, 30000));
  stg_rollout_wait_running (d, "web", 2, 0);
  GArray *now = stg_rollout_instances (d, "web");
  ck_assert_uint_eq (now->len, 2);
  stg_rollout_instances_free (now);
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
}
END_TEST

/* ---- random kills ---------------------------------------------------------------- */

typedef struct
{
  guint kills, wrong_state, orphans, doubles, missing;
  gdouble heal_max_s, heal_sum_s;
} Tally;

typedef struct
{
  StgTestDaemon *d;
  ApiJobUpdateKey *key;
  gint count;
} Healed;

/* Counts what is wrong now: doubles, instances without a process, and
 * orphans (marked processes no instance records). */
static guint
count_wrong (StgTestDaemon *d, gint count, guint *doubles, guint *missing, guint *orphans)
{
  GArray *now = stg_rollout_instances (d, "web");

  *doubles = *missing = *orphans = 0;
  for (gint i = 0; i < count && i < (gint) now->len; i++)
    {
      g_autoptr (GArray) pids = marked_pids (i);
      *doubles += pids->len > 1;
      *missing += pids->len == 0;
      for (guint k = 0; k < pids->len; k++)
        if (g_array_index (pids, gint, k) != g_array_index (now, StgRolloutInstance, i).pid)
          (*orphans)++;
    }
  stg_rollout_instances_free (now);
  return *doubles + *missing + *orphans;
}

static gboolean
healed (gpointer data)
{
  Healed *h = data;
  g_autoptr (ApiJobUpdateDetails) det = stg_rollout_details (h->d, h->key);
  gint status = det->update->summary->state->status;
  guint doubles, missing, orphans;

  if (status != API_JOB_UPDATE_STATUS_ROLLED_FORWARD && status != API_JOB_UPDATE_STATUS_ROLLED_BACK &&
      status != API_JOB_UPDATE_STATUS_ABORTED && status != API_JOB_UPDATE_STATUS_FAILED &&
      status != API_JOB_UPDATE_STATUS_ERROR)
    return FALSE;
  GArray *now = stg_rollout_instances (h->d, "web");
  gboolean ok = (gint) now->len == h->count;
  for (guint i = 0; ok && i < now->len; i++)
    ok = g_str_equal (g_array_index (now, StgRolloutInstance, i).status, "RUNNING");
  stg_rollout_instances_free (now);
  if (!ok || count_wrong (h->d, h->count, &doubles, &missing, &orphans) != 0)
    {
      g_usleep (20000);
      return FALSE;
    }
  return TRUE;
}

/* One round: an update to the other version, staggerd killed at a random
 * moment of it, a new staggerd, and what it looks like once healed. */
static void
one_kill (GRand *rand, gint round, gint count, const gchar *v1, const gchar *v2, Tally *t)
{
  StgTestDaemon *d = stg_test_daemon_start (dir, "--port-range=24000-24999", NULL);
  const gchar *data = round % 2 == 0 ? v2 : v1;
  g_autoptr (ApiJobUpdateKey) key = stg_rollout_start_update (d, "web", count, data, 1, 200);
  /* The moment of the kill is the point of the test, not a wait. */
  g_usleep ((gulong) g_rand_int_range (rand, 0, 2500) * 1000);
  stg_test_daemon_kill9 (d);
  stg_test_daemon_free (d);
  t->kills++;

  gint64 t0 = g_get_monotonic_time ();
  d = stg_test_daemon_start (dir, "--port-range=24000-24999", NULL);
  Healed h = { d, key, count };
  gboolean ok = stg_test_wait (healed, &h, 60000);
  gdouble s = (gdouble) (g_get_monotonic_time () - t0) / G_USEC_PER_SEC;
  t->heal_sum_s += s;
  t->heal_max_s = MAX (t->heal_max_s, s);
  g_autoptr (ApiJobUpdateDetails) det = stg_rollout_details (d, key);
  if (det->update->summary->state->status != API_JOB_UPDATE_STATUS_ROLLED_FORWARD)
    {
      t->wrong_state++;
      g_printerr ("round %d: the update ended in status %d\n", round, det->update->summary->state->status);
    }
  guint doubles, missing, orphans;
  count_wrong (d, count, &doubles, &missing, &orphans);
  t->doubles += doubles;
  t->missing += missing;
  t->orphans += orphans;
  if (!ok)
    g_printerr ("round %d did not heal within 60 s\n", round);
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
}

/* STAGGER_KILLS rounds (default 20; `make soak` runs 200), all counted. */
START_TEST (random_kills)
{
  const gchar *env = g_getenv ("STAGGER_KILLS");
  gint kills = env != NULL ? atoi (env) : 20;
  const gchar *seed_env = g_getenv ("STAGGER_SEED");
  guint32 seed = seed_env != NULL ? (guint32) g_ascii_strtoull (seed_env, NULL, 10) : g_random_int ();
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  Tally t = { 0 };
  const gint count = 2;

  StgTestDaemon *d = stg_test_daemon_start (dir, "--port-range=24000-24999", NULL);
  g_autofree gchar *v1 = stg_rollout_server_data (NULL, NULL);
  g_autofree gchar *v2 = stg_rollout_server_data (NULL, ", \"hot_upgrade\": true, \"env\": {\"V\": \"2\"}");
  stg_rollout_create_job (d, "web", count, v1);
  stg_rollout_wait_running (d, "web", count, 1);
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);

  for (gint round = 0; round < kills; round++)
    {
      one_kill (rand, round, count, v1, v2, &t);
      /* Figures so far, every 10 kills and at the end. */
      if (t.kills % 10 == 0 || round == kills - 1)
        g_print (
            "random kills (seed %u): %u kills, %u wrong terminal states, %u orphans, %u doubles, "
            "%u instances without a process, time to heal: mean %.2f s, max %.2f s\n",
            seed, t.kills, t.wrong_state, t.orphans, t.doubles, t.missing,
            t.heal_sum_s / MAX (t.kills, 1u), t.heal_max_s);
    }
  ck_assert_uint_eq (t.wrong_state, 0);
  ck_assert_uint_eq (t.orphans, 0);
  ck_assert_uint_eq (t.doubles, 0);
  ck_assert_uint_eq (t.missing, 0);
}
END_TEST

static Suite *
crash_suite (void)
{
  Suite *s = suite_create ("crash");
  TCase *tc = tcase_create ("points");

  tcase_set_timeout (tc, 240);
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, crash_after_fork_before_pid);
  tcase_add_test (tc, crash_after_intent_before_fork);
  tcase_add_test (tc, crash_during_replace);
  tcase_add_test (tc, crash_during_hot_upgrade);
  tcase_add_test (tc, kill_during_surge_leaves_no_surge_behind);
  tcase_add_test (tc, kill_after_abort_leaves_no_surge_behind);
  suite_add_tcase (s, tc);

  tc = tcase_create ("random");
  tcase_set_timeout (tc, g_getenv ("STAGGER_KILLS") != NULL ? 7200 : 600);
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, random_kills);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  gchar *scope = stg_test_scope_begin ();
  SRunner *sr = srunner_create (crash_suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  stg_test_scope_end (scope);
  return failed == 0 ? 0 : 1;
}
