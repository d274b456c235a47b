/* engine_controls_test.c: Check suite for the update controls for large
 * jobs, on the fake clock and the scripted runtime: maxSurge (counts and
 * percent, with a rollback and across a restart), maxBatchSize, the failure
 * allowances in percent, updateDeadlineMs, and Aurora's refusal of
 * excessive failure allowances. */
#include "config.h"

#include <check.h>

#include "common/enums.h"
#include "engine_fixture.h"

#define S(x) API_JOB_UPDATE_STATUS_##x

/* Surge instances the store knows of for the fixture's job. */
static guint
surge_rows (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) rows = stg_store_list_surge (fx.store, 0, &error);

  ck_assert_ptr_nonnull (rows);
  return rows->len;
}

/* The job's instance rows. */
static guint
instance_rows (void)
{
  g_autoptr (GArray) rows = stg_store_list_instances (fx.store, fx.job_id, NULL);
  return rows != NULL ? rows->len : 0;
}

static gboolean
log_has (const gchar *text, const gchar *entry)
{
  g_autofree gchar *padded = g_strdup_printf (", %s, ", text);
  g_autofree gchar *want = g_strdup_printf (", %s, ", entry);
  return strstr (padded, want) != NULL;
}

/* ---- maxSurge ------------------------------------------------------------------------ */

START_TEST (surge_keeps_every_instance_in_service)
{
  g_autoptr (GError) error = NULL;

  fx_create_job (4);
  fx_watch_running ();
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 4);
  g_object_set (r->settings, "minInService", 4, "maxSurge", 1, NULL);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);

  /* The surge instance (4, past the job's 0-3) starts first; nothing is
   * taken down before it is healthy. */
  g_autofree gchar *first = fx_take_log ();
  g_autofree gchar *want_first = g_strdup_printf ("apply 4 %" G_GINT64_FORMAT, v2);
  ck_assert_str_eq (first, want_first);
  StgUpdateProgress p;
  ck_assert (stg_engine_update_progress (fx.engine, key->id, &p, &error));
  g_autofree gchar *surge = stg_ranges_to_string (p.surge);
  ck_assert_str_eq (surge, "4");
  stg_update_progress_clear (&p);
  ck_assert_uint_eq (surge_rows (), 1);

  fx_run (30000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_FORWARD));
  ck_assert_int_ge (fx.min_running, 4);
  g_autofree gchar *log = fx_take_log ();
  for (gint i = 0; i < 4; i++)
    {
      g_autofree gchar *apply = g_strdup_printf ("apply %d %" G_GINT64_FORMAT, i, v2);
      ck_assert_msg (log_has (log, apply), "%s not in %s", apply, log);
    }
  /* The surge instance is gone, and so are its rows. */
  ck_assert_msg (log_has (log, "kill 4"), "no kill 4 in %s", log);
  ck_assert_uint_eq (scripted_runtime_running (fx.rt, fx.job_id), 4);
  ck_assert_uint_eq (instance_rows (), 4);
  ck_assert_uint_eq (surge_rows (), 0);
  ck_assert_int_eq (fx_intent (4), 0);
}
END_TEST

START_TEST (surge_percent_rounds_up_and_runs_in_parallel)
{
  fx_create_job (5);
  fx_watch_running ();
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 5);
  fx_set_strategy_queue (r, 5);
  /* 30% of 5 is 1.5: two surge instances, so two may be down at once. */
  g_object_set (r->settings, "minInService", 5, "maxSurgePercent", 30.0, NULL);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);

  g_autofree gchar *first = fx_take_log ();
  g_autofree gchar *want = fx_expect_applies ("5 6", v2);
  ck_assert_str_eq (first, want);
  fx_run (150); /* the surge is up: two of the job's instances go */
  g_autofree gchar *next = fx_take_log ();
  g_autofree gchar *want_next = fx_expect_applies ("0 1", v2);
  ck_assert_str_eq (next, want_next);
  fx_run (30000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_FORWARD));
  ck_assert_int_ge (fx.min_running, 5);
  ck_assert_uint_eq (scripted_runtime_running (fx.rt, fx.job_id), 5);
  ck_assert_uint_eq (surge_rows (), 0);
}
END_TEST

START_TEST (minimum_equal_to_count_needs_surge)
{
  g_autoptr (GError) error = NULL;

  fx_create_job (3);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 3);
  g_object_set (r->settings, "minInService", 4, "maxSurge", 1, NULL);
  g_autoptr (ApiJobUpdateKey) k = stg_engine_start_update (fx.engine, r, "a", NULL, NULL, &error);
  ck_assert_ptr_null (k);
  ck_assert (g_error_matches (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID));
  ck_assert_ptr_nonnull (strstr (error->message, "maxSurge is 1"));

  g_clear_error (&error);
  g_object_set (r->settings, "minInService", 0, "maxSurge", 1, "maxSurgePercent", 10.0, NULL);
  k = stg_engine_start_update (fx.engine, r, "a", NULL, NULL, &error);
  ck_assert_ptr_null (k);
  ck_assert_ptr_nonnull (strstr (error->message, "not both"));
}
END_TEST

START_TEST (surge_during_rollback_runs_the_old_config)
{
  fx_create_job (3);
  fx_watch_running ();
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 3);
  g_object_set (r->settings, "minInService", 3, "maxSurge", 1, NULL);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);
  scripted_runtime_behave (fx.rt, 1, v2, SCRIPT_CRASH);

  fx_run (60000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_BACK));
  g_autofree gchar *log = fx_take_log ();
  /* Forward the surge instance 3 ran v2; rolling back, a new one (4) ran
   * v1 before 3 went, and both are gone at the end. */
  g_autofree gchar *s3 = g_strdup_printf ("apply 3 %" G_GINT64_FORMAT, v2);
  g_autofree gchar *s4 = g_strdup_printf ("apply 4 %" G_GINT64_FORMAT, fx.v1);
  ck_assert_msg (log_has (log, s3) && log_has (log, s4), "log: %s", log);
  ck_assert_msg (strstr (log, s4) < strstr (log, "kill 3"), "log: %s", log);
  ck_assert_msg (log_has (log, "kill 4"), "log: %s", log);
  ck_assert_uint_eq (scripted_runtime_running (fx.rt, fx.job_id), 3);
  ck_assert_uint_eq (instance_rows (), 3);
  ck_assert_uint_eq (surge_rows (), 0);
  for (gint i = 0; i < 3; i++)
    ck_assert_int_eq (fx_intent (i), fx.v1);
}
END_TEST

START_TEST (failed_surge_instance_counts_as_a_failed_instance)
{
  fx_create_job (2);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 2);
  g_object_set (r->settings, "maxSurge", 1, "rollbackOnFailure", FALSE, NULL);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);
  scripted_runtime_behave (fx.rt, 2, v2, SCRIPT_CRASH);

  fx_run (30000);
  ck_assert_int_eq (fx_status (key), S (FAILED));
  g_autoptr (GPtrArray) events = stg_store_list_update_events (fx.store, fx_update_id (key), NULL);
  ApiJobUpdateEvent *last = events->pdata[events->len - 1];
  ck_assert_ptr_nonnull (strstr (last->message, "surge instance 2"));
  /* The failed update left no surge instance behind. */
  ck_assert_uint_eq (surge_rows (), 0);
  ck_assert_uint_eq (instance_rows (), 2);
}
END_TEST

START_TEST (abort_removes_the_surge)
{
  g_autoptr (GError) error = NULL;

  fx_create_job (3);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 3);
  g_object_set (r->settings, "maxSurge", 2, NULL);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  fx_run (500);
  ck_assert_uint_eq (surge_rows (), 2);
  ck_assert (stg_engine_abort_update (fx.engine, key, "alice", "stop", &error));
  ck_assert_int_eq (fx_status (key), S (ABORTED));
  fx_run (1000);
  ck_assert_uint_eq (surge_rows (), 0);
  ck_assert_uint_eq (instance_rows (), 3);
  ck_assert_uint_eq (scripted_runtime_running (fx.rt, fx.job_id), 3);
}
END_TEST

/* After a restart: the surge instances as the runtime finds them. */
typedef struct
{
  gint n;
  gint64 config[8];
} World;

static void
seed_world (ScriptedRuntime *rt, gpointer data)
{
  World *w = data;
  for (gint i = 0; i < w->n; i++)
    if (w->config[i] != 0)
      scripted_runtime_seed (rt, fx.job_id, i, w->config[i], T0);
}

START_TEST (restart_keeps_the_surge_known)
{
  fx_create_job (3);
  fx_watch_running ();
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 3);
  g_object_set (r->settings, "minInService", 3, "maxSurge", 1, NULL);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);
  fx_run (1500); /* surge 3 up, 0 updated or under way */

  World w = { .n = 4, .config = { v2, fx.v1, fx.v1, v2 } };
  fx_restart (seed_world, &w);
  ck_assert_uint_eq (surge_rows (), 1);
  fx_run (30000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_FORWARD));
  g_autofree gchar *log = fx_take_log ();
  /* The restarted engine knew 3 as its surge instance: no second one. */
  ck_assert_msg (!log_has (log, "apply 4") && strstr (log, "apply 4 ") == NULL, "log: %s", log);
  ck_assert_msg (log_has (log, "kill 3"), "log: %s", log);
  ck_assert_uint_eq (surge_rows (), 0);
  ck_assert_uint_eq (instance_rows (), 3);
}
END_TEST

START_TEST (restart_after_abort_removes_leftovers)
{
  g_autoptr (GError) error = NULL;

  fx_create_job (2);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 2);
  g_object_set (r->settings, "maxSurge", 1, NULL);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);
  fx_run (500);
  ck_assert (stg_engine_abort_update (fx.engine, key, "alice", "stop", &error));
  /* The daemon dies before the surge instance is gone: the new one finds
   * it running, and its row. */
  World w = { .n = 3, .config = { v2, fx.v1, v2 } };
  fx_restart (seed_world, &w);
  ck_assert_uint_eq (surge_rows (), 1);
  fx_run (1000);
  g_autofree gchar *log = fx_take_log ();
  ck_assert_msg (log_has (log, "kill 2"), "log: %s", log);
  ck_assert_uint_eq (surge_rows (), 0);
  ck_assert_uint_eq (instance_rows (), 2);
}
END_TEST

/* ---- maxBatchSize ------------------------------------------------------------------- */

START_TEST (batch_growth_stops_at_the_cap)
{
  fx_create_job (20);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 20);
  fx_set_strategy_batch (r, 1, FALSE);
  g_object_set (r->settings, "growthFactor", 2.0, "maxBatchSize", 5, "minWaitInInstanceRunningMs",
                0, NULL);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  g_autoptr (GArray) sizes = g_array_new (FALSE, FALSE, sizeof (guint));

  /* Each batch's applies arrive together; count them batch by batch. */
  for (gint i = 0; i < 400 && fx_status (key) == S (ROLLING_FORWARD); i++)
    {
      guint n = scripted_runtime_log (fx.rt)->len;
      if (n > 0)
        g_array_append_val (sizes, n);
      scripted_runtime_clear_log (fx.rt);
      fx_run (50);
    }
  ck_assert_int_eq (fx_status (key), S (ROLLED_FORWARD));
  /* 1, 2, 4, then 5 at most: 5, 5, and the 3 left. */
  guint want[] = { 1, 2, 4, 5, 5, 3 };
  ck_assert_uint_eq (sizes->len, G_N_ELEMENTS (want));
  for (guint i = 0; i < G_N_ELEMENTS (want); i++)
    ck_assert_uint_eq (g_array_index (sizes, guint, i), want[i]);
}
END_TEST

START_TEST (batch_cap_below_a_given_size_is_refused)
{
  g_autoptr (GError) error = NULL;

  fx_create_job (4);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 4);
  fx_set_strategy_batch (r, 3, FALSE);
  g_object_set (r->settings, "maxBatchSize", 2, NULL);
  g_autoptr (ApiJobUpdateKey) k = stg_engine_start_update (fx.engine, r, "a", NULL, NULL, &error);
  ck_assert_ptr_null (k);
  ck_assert_ptr_nonnull (strstr (error->message, "maxBatchSize is 2"));
}
END_TEST

/* ---- failure allowances in percent -------------------------------------------------- */

START_TEST (failed_instances_percent_of_touched)
{
  fx_create_job (10);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 10);
  /* 25% of the 8 instances touched (0-7) allows 2 failed instances. */
  g_autoptr (GHashTable) only = g_hash_table_new_full (g_direct_hash, g_direct_equal,
                                                       g_object_unref, NULL);
  g_hash_table_add (only, g_object_new (API_TYPE_RANGE, "first", 0, "last", 7, NULL));
  g_object_set (r->settings, "maxFailedInstancesPercent", 25.0, "rollbackOnFailure", FALSE,
                "updateOnlyTheseInstances", only, NULL);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);
  scripted_runtime_behave (fx.rt, 1, v2, SCRIPT_CRASH);
  scripted_runtime_behave (fx.rt, 3, v2, SCRIPT_CRASH);
  fx_run (60000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_FORWARD));

  /* A third failure is one too many. */
  g_autoptr (ApiJobUpdateRequest) r2 = fx_request ("v3", 10);
  g_object_set (r2->settings, "maxFailedInstancesPercent", 25.0, "rollbackOnFailure", FALSE,
                "updateOnlyTheseInstances", only, NULL);
  g_autoptr (ApiJobUpdateKey) k2 = fx_start (r2);
  gint64 v3 = fx_desired (k2);
  for (gint i = 0; i < 3; i++)
    scripted_runtime_behave (fx.rt, i, v3, SCRIPT_CRASH);
  fx_run (60000);
  ck_assert_int_eq (fx_status (k2), S (FAILED));
}
END_TEST

START_TEST (per_instance_failures_percent_of_touched)
{
  fx_create_job (10);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 10);
  /* 20% of 10 touched: each instance may fail twice. */
  g_object_set (r->settings, "maxPerInstanceFailuresPercent", 20.0, "rollbackOnFailure", FALSE,
                NULL);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);
  scripted_runtime_behave (fx.rt, 0, v2, SCRIPT_CRASH);
  fx_run (60000);
  ck_assert_int_eq (fx_status (key), S (FAILED));
  g_autoptr (GPtrArray) events = stg_store_list_update_events (fx.store, fx_update_id (key), NULL);
  ApiJobUpdateEvent *last = events->pdata[events->len - 1];
  ck_assert_msg (strstr (last->message, "failed 3 times") != NULL, "%s", last->message);
}
END_TEST

START_TEST (aurora_refuses_too_many_potential_failures)
{
  g_autoptr (GError) error = NULL;

  stg_engine_free (fx.engine);
  StgEngineLimits limits;
  stg_engine_limits_init (&limits);
  limits.max_update_instance_failures = 20;
  fx.engine = stg_engine_new (fx.store, fx.clock, scripted_runtime_base (fx.rt), &limits);
  fx_create_job (5);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 5);
  g_object_set (r->settings, "maxPerInstanceFailures", 5, NULL);
  g_autoptr (ApiJobUpdateKey) k = stg_engine_start_update (fx.engine, r, "a", NULL, NULL, &error);
  ck_assert_ptr_null (k);
  ck_assert (g_error_matches (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID));
  ck_assert_msg (strstr (error->message,
                         "Your update allows too many failures to occur, consider decreasing the "
                         "per-instance failures or maxFailedInstances.") != NULL,
                 "%s", error->message);
  /* 4 x 5 = 20 is within the limit. */
  g_object_set (r->settings, "maxPerInstanceFailures", 4, NULL);
  g_autoptr (ApiJobUpdateKey) ok = fx_start (r);
  ck_assert_ptr_nonnull (ok);
}
END_TEST

/* ---- updateDeadlineMs -------------------------------------------------------------- */

START_TEST (deadline_fails_or_rolls_back)
{
  fx_create_job (4);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 4);
  g_object_set (r->settings, "updateDeadlineMs", (gint64) 2500, "rollbackOnFailure", FALSE, NULL);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  fx_run (2400);
  ck_assert_int_eq (fx_status (key), S (ROLLING_FORWARD));
  fx_run (200);
  ck_assert_int_eq (fx_status (key), S (FAILED));
  g_autoptr (GPtrArray) events = stg_store_list_update_events (fx.store, fx_update_id (key), NULL);
  ApiJobUpdateEvent *last = events->pdata[events->len - 1];
  ck_assert_ptr_nonnull (strstr (last->message, "deadline"));

  /* With rollbackOnFailure the update rolls back, and the rollback is not
   * bound by the deadline. */
  g_autoptr (ApiJobUpdateRequest) r2 = fx_request ("v3", 4);
  g_object_set (r2->settings, "updateDeadlineMs", (gint64) 2500, NULL);
  g_autoptr (ApiJobUpdateKey) k2 = fx_start (r2);
  fx_run (2600);
  ck_assert_int_eq (fx_status (k2), S (ROLLING_BACK));
  fx_run (30000);
  ck_assert_int_eq (fx_status (k2), S (ROLLED_BACK));
}
END_TEST

/* A rollback the deadline began that fails itself: the update's last
 * message still says the deadline started it all. */
START_TEST (failed_rollback_after_the_deadline_names_it)
{
  fx_create_job (4);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 4);
  g_object_set (r->settings, "updateDeadlineMs", (gint64) 2500, NULL);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  fx_run (2400);
  ck_assert_int_eq (fx_status (key), S (ROLLING_FORWARD));
  for (gint i = 0; i < 4; i++)
    scripted_runtime_behave (fx.rt, i, fx.v1, SCRIPT_CRASH);
  fx_run (60000);
  g_autofree gchar *statuses = fx_update_events (key);
  ck_assert_str_eq (statuses, "ROLLING_FORWARD ROLLING_BACK FAILED");
  g_autoptr (GPtrArray) events = stg_store_list_update_events (fx.store, fx_update_id (key), NULL);
  ApiJobUpdateEvent *last = events->pdata[events->len - 1];
  ck_assert_msg (strstr (last->message, "update deadline passed") != NULL &&
                     strstr (last->message, "failure threshold reached") != NULL,
                 "%s", last->message);
}
END_TEST

START_TEST (deadline_survives_a_restart)
{
  fx_create_job (4);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 4);
  g_object_set (r->settings, "updateDeadlineMs", (gint64) 2500, "rollbackOnFailure", FALSE, NULL);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);
  fx_run (1150);
  World w = { .n = 4, .config = { v2, v2, fx.v1, fx.v1 } };
  fx_restart (seed_world, &w);
  fx_run (1300);
  ck_assert_int_eq (fx_status (key), S (ROLLING_FORWARD));
  fx_run (200);
  ck_assert_int_eq (fx_status (key), S (FAILED));
}
END_TEST

static Suite *
controls_suite (void)
{
  Suite *s = suite_create ("engine controls");
  TCase *tc;

#define CASE(name) \
  tc = tcase_create (name); \
  tcase_set_timeout (tc, 60); \
  tcase_add_checked_fixture (tc, fx_setup, fx_teardown); \
  suite_add_tcase (s, tc)

  CASE ("surge");
  tcase_add_test (tc, surge_keeps_every_instance_in_service);
  tcase_add_test (tc, surge_percent_rounds_up_and_runs_in_parallel);
  tcase_add_test (tc, minimum_equal_to_count_needs_surge);
  tcase_add_test (tc, surge_during_rollback_runs_the_old_config);
  tcase_add_test (tc, failed_surge_instance_counts_as_a_failed_instance);
  tcase_add_test (tc, abort_removes_the_surge);
  tcase_add_test (tc, restart_keeps_the_surge_known);
  tcase_add_test (tc, restart_after_abort_removes_leftovers);

  CASE ("batches");
  tcase_add_test (tc, batch_growth_stops_at_the_cap);
  tcase_add_test (tc, batch_cap_below_a_given_size_is_refused);

  CASE ("failures");
  tcase_add_test (tc, failed_instances_percent_of_touched);
  tcase_add_test (tc, per_instance_failures_percent_of_touched);
  tcase_add_test (tc, aurora_refuses_too_many_potential_failures);

  CASE ("deadline");
  tcase_add_test (tc, deadline_fails_or_rolls_back);
  tcase_add_test (tc, failed_rollback_after_the_deadline_names_it);
  tcase_add_test (tc, deadline_survives_a_restart);

#undef CASE
  return s;
}

int
main (void)
{
  SRunner *sr = srunner_create (controls_suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  return failed == 0 ? 0 : 1;
}
