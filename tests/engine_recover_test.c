/* engine_recover_test.c: Check suite for the engine's durability: a restart
 * in each active state continues correctly, a step that cannot be stored
 * leaves nothing half-done, one commit per step, and a large job. */
#include "config.h"

#include <check.h>

#include "common/enums.h"
#include "engine_fixture.h"

#define S(x) API_JOB_UPDATE_STATUS_##x

/* The slots as the runtime would find them after a restart: instances
 * 0..n-1 running @config[i], healthy since long ago. */
typedef struct
{
  gint n;
  gint64 config[16];
  gboolean down[16];
} World;

static void
seed_world (ScriptedRuntime *rt, gpointer data)
{
  World *w = data;
  for (gint i = 0; i < w->n; i++)
    {
      if (w->down[i])
        scripted_runtime_set (rt, fx.job_id, i, STG_TASK_FAILED, w->config[i], 1);
      else
        scripted_runtime_seed (rt, fx.job_id, i, w->config[i], T0);
    }
}

START_TEST (restart_while_rolling_forward)
{
  fx_create_job (4);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 4);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);

  fx_run (1150);   /* 0 updated, 1 just asked */
  g_autofree gchar *before = fx_take_log ();
  g_autofree gchar *want_before = g_strdup_printf ("apply 0 %" G_GINT64_FORMAT ", apply 1 %" G_GINT64_FORMAT, v2, v2);
  ck_assert_str_eq (before, want_before);

  /* After the restart the runtime shows 0 and 1 on v2 (1 came up while
   * the daemon was away), 2 and 3 on v1. */
  World w = { .n = 4, .config = { v2, v2, fx.v1, fx.v1 } };
  fx_restart (seed_world, &w);
  ck_assert_int_eq (fx_status (key), S (ROLLING_FORWARD));
  fx_run (20000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_FORWARD));
  /* 0 is not repeated; 1 already runs v2, healthy, so it just finishes;
   * 2 and 3 follow. */
  g_autofree gchar *after = fx_take_log ();
  g_autofree gchar *want = g_strdup_printf ("apply 2 %" G_GINT64_FORMAT ", apply 3 %" G_GINT64_FORMAT,
                                            v2, v2);
  ck_assert_str_eq (after, want);
  g_autofree gchar *iev = fx_instance_events (key);
  ck_assert_str_eq (iev, "0:UPDATING 0:UPDATED 1:UPDATING 1:UPDATED 2:UPDATING 2:UPDATED "
                         "3:UPDATING 3:UPDATED");
}
END_TEST

START_TEST (restart_while_rolling_back)
{
  fx_create_job (6);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 6);
  g_object_set (r->settings, "updateGroupSize", 3, "waitForBatchCompletion", TRUE, NULL);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);
  scripted_runtime_behave (fx.rt, 4, v2, SCRIPT_CRASH);

  /* Forward (0,1,2) then (3,4,5): 4 fails, rollback starts with (5,4,3). */
  fx_run (1100 + 150 + 10);
  ck_assert_int_eq (fx_status (key), S (ROLLING_BACK));
  g_free (fx_take_log ());

  World w = { .n = 6, .config = { v2, v2, v2, v2, fx.v1, fx.v1 } };
  fx_restart (seed_world, &w);
  ck_assert_int_eq (fx_status (key), S (ROLLING_BACK));
  fx_run (30000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_BACK));
  for (gint i = 0; i < 6; i++)
    ck_assert_int_eq (fx_intent (i), fx.v1);
  /* 5 and 4 already run v1 (rolled back, or never changed): they finish at
   * once; 3 of the batch in flight, then 2, 1, 0. */
  g_autofree gchar *log = fx_take_log ();
  g_autofree gchar *want = g_strdup_printf (
      "apply 3 %1$" G_GINT64_FORMAT ", apply 2 %1$" G_GINT64_FORMAT ", apply 1 %1$" G_GINT64_FORMAT
      ", apply 0 %1$" G_GINT64_FORMAT, fx.v1);
  ck_assert_str_eq (log, want);
}
END_TEST

START_TEST (restart_while_paused_stays_paused)
{
  g_autoptr (GError) error = NULL;

  fx_create_job (3);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 3);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);
  fx_run (1200);
  ck_assert (stg_engine_pause_update (fx.engine, key, "a", NULL, &error));
  g_free (fx_take_log ());

  World w = { .n = 3, .config = { v2, v2, fx.v1 } };
  fx_restart (seed_world, &w);
  ck_assert_int_eq (fx_status (key), S (ROLL_FORWARD_PAUSED));
  fx_run (10000);
  g_autofree gchar *quiet = fx_take_log ();
  ck_assert_str_eq (quiet, "");
  ck_assert (stg_engine_resume_update (fx.engine, key, "a", NULL, &error));
  fx_run (10000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_FORWARD));
}
END_TEST

START_TEST (restart_waits_for_the_next_pulse)
{
  ApiJobUpdatePulseStatus status;
  g_autoptr (GError) error = NULL;

  fx_create_job (8);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 8);
  g_object_set (r->settings, "blockIfNoPulsesAfterMs", 5000, NULL);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);

  /* Awaiting the first pulse, then restarted: still waiting. */
  World w0 = { .n = 8, .config = { fx.v1, fx.v1, fx.v1, fx.v1, fx.v1, fx.v1, fx.v1, fx.v1 } };
  fx_restart (seed_world, &w0);
  ck_assert_int_eq (fx_status (key), S (ROLL_FORWARD_AWAITING_PULSE));
  fx_run (3000);
  ck_assert_uint_eq (scripted_runtime_log (fx.rt)->len, 0);

  /* Pulsed and rolling, then restarted: pulses are kept in memory only,
   * so the restarted engine waits for the coordinator's next pulse. */
  ck_assert (stg_engine_pulse_update (fx.engine, key, &status, &error));
  fx_run (3000);
  ck_assert_int_eq (fx_status (key), S (ROLLING_FORWARD));
  ck_assert (stg_engine_pulse_update (fx.engine, key, &status, &error));
  World w1 = { .n = 8, .config = { v2, v2, v2, fx.v1, fx.v1, fx.v1, fx.v1, fx.v1 } };
  fx_restart (seed_world, &w1);
  ck_assert_int_eq (fx_status (key), S (ROLL_FORWARD_AWAITING_PULSE));
  guint before = scripted_runtime_log (fx.rt)->len;
  fx_run (3000);
  ck_assert_uint_eq (scripted_runtime_log (fx.rt)->len, before);

  /* The next pulse carries it on. */
  ck_assert (stg_engine_pulse_update (fx.engine, key, &status, &error));
  ck_assert_int_eq (status, API_JOB_UPDATE_PULSE_STATUS_OK);
  ck_assert_int_eq (fx_status (key), S (ROLLING_FORWARD));
}
END_TEST

START_TEST (instance_died_while_away_counts_as_failure)
{
  fx_create_job (3);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 3);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);

  fx_run (150);    /* 0 is starting on v2 */
  /* It died while the daemon was away: the runtime reports a failed run. */
  World w = { .n = 3, .config = { v2, fx.v1, fx.v1 }, .down = { TRUE } };
  fx_restart (seed_world, &w);
  fx_run (30000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_BACK));
  g_autofree gchar *iev = fx_instance_events (key);
  ck_assert_ptr_nonnull (strstr (iev, "0:UPDATE_FAILED"));
}
END_TEST

START_TEST (a_step_that_cannot_be_stored_leaves_nothing_half_done)
{
  fx_create_job (3);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 3);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);

  /* The step that finishes instance 0 and starts 1 fails to commit. */
  fx_run (1050);
  g_autofree gchar *before = fx_instance_events (key);
  ck_assert_str_eq (before, "0:UPDATING");
  g_free (fx_take_log ());
  stg_store_fail_commit (fx.store, 1);
  fx_run (100);
  g_autofree gchar *after = fx_instance_events (key);
  ck_assert_str_eq (after, "0:UPDATING");    /* nothing of that step was written... */
  ck_assert_int_eq (fx_intent (1), fx.v1);   /* ...and the runtime was not told */
  g_autofree gchar *quiet = fx_take_log ();
  ck_assert_str_eq (quiet, "");
  /* The engine went back to the store and continues from there, after a
   * pause (a store that keeps failing must not cause a busy loop). */
  fx_run (10000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_FORWARD));
  g_autofree gchar *iev = fx_instance_events (key);
  ck_assert_str_eq (iev, "0:UPDATING 0:UPDATED 1:UPDATING 1:UPDATED 2:UPDATING 2:UPDATED");
  g_autofree gchar *log = fx_take_log ();
  g_autofree gchar *want = g_strdup_printf ("apply 1 %1$" G_GINT64_FORMAT ", apply 2 %1$" G_GINT64_FORMAT, v2);
  ck_assert_str_eq (log, want);
}
END_TEST

START_TEST (one_commit_per_step)
{
  fx_create_job (6);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 6);
  g_object_set (r->settings, "updateGroupSize", 2, NULL);
  guint64 c0 = stg_store_commit_count (fx.store);
  guint64 s0 = stg_engine_step_count (fx.engine);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);

  /* Starting: the update, its rows, its event, the first instances: one. */
  ck_assert_uint_eq (stg_store_commit_count (fx.store), c0 + 1);
  ck_assert_uint_eq (stg_engine_step_count (fx.engine), s0 + 1);
  fx_run (20000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_FORWARD));
  /* Every step wrote in exactly one transaction. */
  ck_assert_uint_eq (stg_store_commit_count (fx.store) - c0, stg_engine_step_count (fx.engine) - s0);
  /* And news arriving together was handled together: instances 0 and 1
   * came up at the same moment, so far fewer steps than notifications. */
  ck_assert_uint_lt (stg_engine_step_count (fx.engine) - s0, 6 * 3);
}
END_TEST

START_TEST (large_job_in_big_batches)
{
  const gint32 n = 3000;
  g_autoptr (GError) error = NULL;

  fx_create_job (n);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", n);
  g_autoptr (ApiBatchJobUpdateStrategy) b = g_object_new (API_TYPE_BATCH_JOB_UPDATE_STRATEGY,
                                                          "groupSize", 500, NULL);
  g_autoptr (ApiJobUpdateStrategy) st = g_object_new (API_TYPE_JOB_UPDATE_STRATEGY,
                                                      "batchStrategy", b, NULL);
  g_object_set (r->settings, "updateStrategy", st, NULL);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  guint64 c0 = stg_store_commit_count (fx.store);

  for (gint i = 0; i < 20 && fx_status (key) == S (ROLLING_FORWARD); i++)
    stg_clock_advance (fx.clock, 1200);
  ck_assert_int_eq (fx_status (key), S (ROLLED_FORWARD));
  ck_assert_uint_eq (scripted_runtime_log (fx.rt)->len, (guint) n);
  /* Each batch of 500: a step when its members start, one when they come
   * up, one when their watch ends: a few commits a batch, not a few an
   * instance. */
  ck_assert_uint_lt (stg_store_commit_count (fx.store) - c0, 6 * 5);
  gint64 total = 0;
  g_autoptr (GPtrArray) tail = stg_store_list_instance_events (fx.store, fx_update_id (key), 1,
                                                               &total, &error);
  ck_assert_ptr_nonnull (tail);
  ck_assert_int_eq (total, 2 * n);
}
END_TEST

static Suite *
recover_suite (void)
{
  Suite *s = suite_create ("engine-recover");
  TCase *tc = tcase_create ("restart");

  tcase_set_timeout (tc, 120);
  tcase_add_checked_fixture (tc, fx_setup, fx_teardown);
  tcase_add_test (tc, restart_while_rolling_forward);
  tcase_add_test (tc, restart_while_rolling_back);
  tcase_add_test (tc, restart_while_paused_stays_paused);
  tcase_add_test (tc, restart_waits_for_the_next_pulse);
  tcase_add_test (tc, instance_died_while_away_counts_as_failure);
  suite_add_tcase (s, tc);

  tc = tcase_create ("durability");
  tcase_set_timeout (tc, 120);
  tcase_add_checked_fixture (tc, fx_setup, fx_teardown);
  tcase_add_test (tc, a_step_that_cannot_be_stored_leaves_nothing_half_done);
  tcase_add_test (tc, one_commit_per_step);
  tcase_add_test (tc, large_job_in_big_batches);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  SRunner *sr = srunner_create (recover_suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  return failed == 0 ? 0 : 1;
}
