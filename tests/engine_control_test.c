/* engine_control_test.c: Check suite for the calls that steer an update:
 * pause, resume, abort, rollback, pulses, the transition table, one active
 * update per job, and how requests are checked (Aurora's validation order,
 * the strategy backfilled from the older fields) and diffed. A fake clock
 * and a scripted runtime drive a real store on a temporary file. */
#include "config.h"

#include <check.h>

#include "common/enums.h"
#include "common/jobkey.h"
#include "engine_fixture.h"

#define S(x) API_JOB_UPDATE_STATUS_##x

/* ---- pause, resume, abort, manual rollback ------------------------------------------ */

START_TEST (manual_rollback_while_paused)
{
  g_autoptr (GError) error = NULL;

  fx_create_job (4);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 4);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);

  fx_run (2300); /* 0 and 1 updated, 2 started */
  ck_assert (stg_engine_pause_update (fx.engine, key, "bob", "look", &error));
  ck_assert_int_eq (fx_status (key), S (ROLL_FORWARD_PAUSED));
  /* Pausing again is fine and changes nothing. */
  ck_assert (stg_engine_pause_update (fx.engine, key, "bob", NULL, &error));
  fx_run (5000);
  ck_assert (stg_engine_rollback_update (fx.engine, key, "bob", "undo", &error));
  fx_run (20000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_BACK));
  g_autofree gchar *log = fx_take_log ();
  g_autofree gchar *fwd = fx_expect_applies ("0 1 2", v2);
  g_autofree gchar *back = fx_expect_applies ("2 1 0", fx.v1);
  g_autofree gchar *want = g_strconcat (fwd, ", ", back, NULL);
  ck_assert_str_eq (log, want);
  g_autofree gchar *ev = fx_update_events (key);
  ck_assert_str_eq (ev, "ROLLING_FORWARD ROLL_FORWARD_PAUSED ROLLING_BACK ROLLED_BACK");
  ck_assert_int_eq (fx_intent (3), fx.v1);
}
END_TEST

START_TEST (abort_leaves_instances_as_they_are)
{
  g_autoptr (GError) error = NULL;

  fx_create_job (4);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 4);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);

  fx_run (1200);
  ck_assert (stg_engine_abort_update (fx.engine, key, "bob", "stop", &error));
  ck_assert_int_eq (fx_status (key), S (ABORTED));
  g_free (fx_take_log ());
  fx_run (20000);
  g_autofree gchar *log = fx_take_log ();
  ck_assert_str_eq (log, "");
  ck_assert_int_eq (fx_intent (0), v2);
  ck_assert_int_eq (fx_intent (1), v2); /* started, left as it is */
  ck_assert_int_eq (fx_intent (2), fx.v1);
  /* Abort again: not allowed from a terminal state. */
  ck_assert (!stg_engine_abort_update (fx.engine, key, "bob", NULL, &error));
  ck_assert (g_error_matches (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_STATE));
  ck_assert_ptr_nonnull (strstr (error->message, "ABORTED -> ABORTED"));
}
END_TEST

START_TEST (unknown_updates_are_refused)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiJobUpdateKey) key = g_object_new (API_TYPE_JOB_UPDATE_KEY, "job", fx.key, "id",
                                                  "no-such-update", NULL);
  ApiJobUpdatePulseStatus status;

  ck_assert (!stg_engine_pause_update (fx.engine, key, "a", NULL, &error));
  ck_assert (g_error_matches (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_NOT_FOUND));
  g_clear_error (&error);
  ck_assert (!stg_engine_resume_update (fx.engine, key, "a", NULL, &error));
  ck_assert (g_error_matches (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_NOT_FOUND));
  g_clear_error (&error);
  ck_assert (!stg_engine_pulse_update (fx.engine, key, &status, &error));
  ck_assert (g_error_matches (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_NOT_FOUND));
  g_clear_error (&error);
  ck_assert (!stg_engine_rollback_update (fx.engine, key, "a", NULL, &error));
  ck_assert (g_error_matches (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_NOT_FOUND));
}
END_TEST

START_TEST (one_active_update_per_job)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiJobUpdateSummary) active = NULL;

  fx_create_job (2);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 2);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  g_autoptr (ApiJobUpdateRequest) r2 = fx_request ("v3", 2);
  g_autoptr (ApiJobUpdateKey) k2 = stg_engine_start_update (fx.engine, r2, "a", NULL, &active,
                                                            &error);

  ck_assert_ptr_null (k2);
  ck_assert (g_error_matches (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_ACTIVE_UPDATE));
  ck_assert_ptr_nonnull (active);
  ck_assert_str_eq (active->key->id, key->id);
  ck_assert_int_eq (active->state->status, S (ROLLING_FORWARD));
  /* Once it is over, a new one may start. */
  fx_run (10000);
  g_autoptr (ApiJobUpdateKey) k3 = fx_start (r2);
  ck_assert_ptr_nonnull (k3);
}
END_TEST

START_TEST (bad_requests_are_refused_naming_the_field)
{
  static const struct
  {
    const gchar *prop;
    gint value;
    const gchar *field;
  } cases[] = {
    { "maxPerInstanceFailures", -1, "request.settings.maxPerInstanceFailures" },
    { "maxFailedInstances", -1, "request.settings.maxFailedInstances" },
    { "minWaitInInstanceRunningMs", -5, "request.settings.minWaitInInstanceRunningMs" },
    { "updateGroupSize", -2, "request.settings.updateGroupSize" },
    { "blockIfNoPulsesAfterMs", -1, "request.settings.blockIfNoPulsesAfterMs" },
  };

  fx_create_job (2);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 2);
      g_object_set (r->settings, cases[i].prop, cases[i].value, NULL);
      g_autoptr (ApiJobUpdateKey) k = stg_engine_start_update (fx.engine, r, "a", NULL, NULL,
                                                               &error);
      ck_assert_msg (k == NULL, "%s accepted", cases[i].prop);
      ck_assert (g_error_matches (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID));
      ck_assert_msg (strstr (error->message, cases[i].field) != NULL, "%s", error->message);
    }
  {
    g_autoptr (GError) error = NULL;
    g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 0);
    ck_assert_ptr_null (stg_engine_start_update (fx.engine, r, "a", NULL, NULL, &error));
    ck_assert_ptr_nonnull (strstr (error->message, "request.instanceCount"));
  }
  {
    g_autoptr (GError) error = NULL;
    g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 2);
    fx_set_strategy_batch (r, 0, FALSE);
    ck_assert_ptr_null (stg_engine_start_update (fx.engine, r, "a", NULL, NULL, &error));
    ck_assert_ptr_nonnull (strstr (error->message, "batchStrategy.groupSize is 0: Update results "
                                                   "in no instance being modified."));
  }
  {
    g_autoptr (GError) error = NULL;
    g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 2);
    g_autoptr (ApiRange) range = g_object_new (API_TYPE_RANGE, "first", 1, "last", 9, NULL);
    g_hash_table_add (r->settings->updateOnlyTheseInstances, g_object_ref (range));
    r->settings->__isset_updateOnlyTheseInstances = TRUE;
    ck_assert_ptr_null (stg_engine_start_update (fx.engine, r, "a", NULL, NULL, &error));
    ck_assert_ptr_nonnull (strstr (error->message, "updateOnlyTheseInstances"));
  }
  {
    g_autoptr (GError) error = NULL;
    g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 2);
    g_object_set (r->settings, "growthFactor", 0.5, NULL);
    ck_assert_ptr_null (stg_engine_start_update (fx.engine, r, "a", NULL, NULL, &error));
    ck_assert_ptr_nonnull (strstr (error->message, "growthFactor"));
  }
  /* Nothing was stored by any of them. */
  g_autoptr (GPtrArray) all = stg_store_query_update_summaries (fx.store, NULL, NULL);
  ck_assert_uint_eq (all->len, 0);
}
END_TEST

/* ---- the transition table ------------------------------------------------------ */

START_TEST (transition_table_is_aurora_s)
{
  static const gint allowed[][8] = {
    [S (ROLLING_FORWARD)] = { S (ROLLING_BACK), S (ROLL_FORWARD_PAUSED),
                              S (ROLL_FORWARD_AWAITING_PULSE), S (ROLLED_FORWARD), S (ABORTED),
                              S (FAILED), S (ERROR), -1 },
    [S (ROLLING_BACK)] = { S (ROLL_BACK_PAUSED), S (ROLL_BACK_AWAITING_PULSE), S (ROLLED_BACK),
                           S (ABORTED), S (ERROR), S (FAILED), -1 },
    [S (ROLL_FORWARD_PAUSED)] = { S (ROLLING_BACK), S (ROLLING_FORWARD),
                                  S (ROLL_FORWARD_AWAITING_PULSE), S (ABORTED), S (ERROR), -1 },
    [S (ROLL_BACK_PAUSED)] = { S (ROLLING_BACK), S (ROLL_BACK_AWAITING_PULSE), S (ABORTED),
                               S (ERROR), -1 },
    [S (ROLLED_FORWARD)] = { -1 },
    [S (ROLLED_BACK)] = { -1 },
    [S (ABORTED)] = { -1 },
    [S (ERROR)] = { -1 },
    [S (FAILED)] = { -1 },
    [S (ROLL_FORWARD_AWAITING_PULSE)] = { S (ROLLING_BACK), S (ROLLING_FORWARD),
                                          S (ROLL_FORWARD_PAUSED), S (ABORTED), S (ERROR), -1 },
    [S (ROLL_BACK_AWAITING_PULSE)] = { S (ROLLING_BACK), S (ROLL_BACK_PAUSED), S (ABORTED),
                                       S (ERROR), -1 },
  };

  for (gint from = 0; from <= 10; from++)
    for (gint to = 0; to <= 10; to++)
      {
        gboolean want = FALSE;
        for (guint i = 0; allowed[from][i] != -1 && i < 8; i++)
          want |= allowed[from][i] == to;
        ck_assert_msg (stg_engine_transition_allowed (from, to) == want, "%s -> %s",
                       stg_update_status_name (from), stg_update_status_name (to));
      }
}
END_TEST

/* The work-item machine as work_state.h draws it (0 PENDING, 1 UPDATING,
 * 2 UPDATED, 3 UPDATE_FAILED, 4 ROLLBACK_PENDING, 5 ROLLING_BACK, 6
 * ROLLED_BACK, 7 ROLLBACK_FAILED). */
START_TEST (work_transition_table_is_as_drawn)
{
  static const gint allowed[8][5] = {
    [0] = { 1, -1 }, [1] = { 2, 3, 4, 0, -1 }, [2] = { 4, -1 }, [3] = { 4, -1 },
    [4] = { 5, -1 }, [5] = { 6, 7, -1 },       [6] = { -1 },    [7] = { -1 },
  };

  for (gint from = 0; from < 8; from++)
    for (gint to = 0; to < 8; to++)
      {
        gboolean want = FALSE;
        for (guint i = 0; allowed[from][i] != -1; i++)
          want |= allowed[from][i] == to;
        ck_assert_msg (stg_engine_work_transition_allowed (from, to) == want, "%d -> %d", from, to);
      }
}
END_TEST

START_TEST (illegal_calls_name_both_states)
{
  g_autoptr (GError) error = NULL;

  fx_create_job (2);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 2);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);

  ck_assert (!stg_engine_resume_update (fx.engine, key, "a", NULL, &error));
  ck_assert (g_error_matches (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_STATE));
  ck_assert_ptr_nonnull (strstr (error->message, "ROLLING_FORWARD -> ROLLING_FORWARD"));
  g_clear_error (&error);

  ck_assert (stg_engine_rollback_update (fx.engine, key, "a", NULL, &error));
  ck_assert (!stg_engine_rollback_update (fx.engine, key, "a", NULL, &error));
  ck_assert_ptr_nonnull (strstr (error->message, "ROLLING_BACK -> ROLLING_BACK"));
  g_clear_error (&error);
  ck_assert (!stg_engine_resume_update (fx.engine, key, "a", NULL, &error));
  ck_assert_ptr_nonnull (strstr (error->message, "ROLLING_BACK -> ROLLING_BACK"));
  g_clear_error (&error);

  fx_run (20000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_BACK));
  ck_assert (!stg_engine_pause_update (fx.engine, key, "a", NULL, &error));
  ck_assert_ptr_nonnull (strstr (error->message, "ROLLED_BACK -> ROLL_FORWARD_PAUSED"));
  g_clear_error (&error);
  ck_assert (!stg_engine_rollback_update (fx.engine, key, "a", NULL, &error));
  ck_assert_ptr_nonnull (strstr (error->message, "ROLLED_BACK -> ROLLING_BACK"));
}
END_TEST

/* ---- coordinated updates ---------------------------------------------------------- */

static ApiJobUpdatePulseStatus
pulse (ApiJobUpdateKey *key)
{
  g_autoptr (GError) error = NULL;
  ApiJobUpdatePulseStatus status = 0;

  ck_assert_msg (stg_engine_pulse_update (fx.engine, key, &status, &error), "pulse: %s",
                 error ? error->message : "");
  return status;
}

START_TEST (coordinated_update_needs_pulses)
{
  g_autoptr (GError) error = NULL;

  fx_create_job (3);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 3);
  g_object_set (r->settings, "blockIfNoPulsesAfterMs", 2000, NULL);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);

  /* Nothing moves before the first pulse. */
  ck_assert_int_eq (fx_status (key), S (ROLL_FORWARD_AWAITING_PULSE));
  fx_run (5000);
  ck_assert_uint_eq (scripted_runtime_log (fx.rt)->len, 0);

  ck_assert_int_eq (pulse (key), API_JOB_UPDATE_PULSE_STATUS_OK);
  ck_assert_int_eq (fx_status (key), S (ROLLING_FORWARD));
  fx_run (1500);
  ck_assert_uint_eq (scripted_runtime_log (fx.rt)->len, 2); /* 0 done, 1 started */

  /* No pulse for 2 s: blocked, and nothing more starts. */
  fx_run (600);
  ck_assert_int_eq (fx_status (key), S (ROLL_FORWARD_AWAITING_PULSE));
  fx_run (5000);
  ck_assert_uint_eq (scripted_runtime_log (fx.rt)->len, 2);

  /* Paused, a pulse is remembered and the update stays paused... */
  ck_assert (stg_engine_pause_update (fx.engine, key, "a", NULL, &error));
  ck_assert_int_eq (pulse (key), API_JOB_UPDATE_PULSE_STATUS_OK);
  ck_assert_int_eq (fx_status (key), S (ROLL_FORWARD_PAUSED));
  /* ...and resuming within the pulse's time goes straight on. */
  ck_assert (stg_engine_resume_update (fx.engine, key, "a", NULL, &error));
  ck_assert_int_eq (fx_status (key), S (ROLLING_FORWARD));

  /* Paused past the pulse's time, resuming waits for a pulse. */
  ck_assert (stg_engine_pause_update (fx.engine, key, "a", NULL, &error));
  fx_run (3000);
  ck_assert (stg_engine_resume_update (fx.engine, key, "a", NULL, &error));
  ck_assert_int_eq (fx_status (key), S (ROLL_FORWARD_AWAITING_PULSE));

  /* A coordinator that keeps pulsing carries it to the end. */
  for (gint i = 0; i < 20 && fx_status (key) != S (ROLLED_FORWARD); i++)
    {
      ck_assert_int_eq (pulse (key), API_JOB_UPDATE_PULSE_STATUS_OK);
      fx_run (1000);
    }
  ck_assert_int_eq (fx_status (key), S (ROLLED_FORWARD));
  ck_assert_int_eq (pulse (key), API_JOB_UPDATE_PULSE_STATUS_FINISHED);
  g_autofree gchar *ev = fx_update_events (key);
  ck_assert_ptr_nonnull (
      strstr (ev, "ROLL_FORWARD_AWAITING_PULSE ROLLING_FORWARD ROLL_FORWARD_AWAITING_PULSE"));
}
END_TEST

/* A pulse that only refreshes the time writes nothing; the one that
 * unblocks the update writes that one transition. */
START_TEST (refreshing_pulses_cost_no_commit)
{
  fx_create_job (3);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 3);
  g_object_set (r->settings, "blockIfNoPulsesAfterMs", 60000, NULL);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);

  guint64 before = stg_store_commit_count (fx.store);
  ck_assert_int_eq (pulse (key), API_JOB_UPDATE_PULSE_STATUS_OK);
  ck_assert_int_eq (fx_status (key), S (ROLLING_FORWARD));
  guint64 unblocked = stg_store_commit_count (fx.store);
  ck_assert_uint_gt (unblocked, before);

  for (gint i = 0; i < 100; i++)
    ck_assert_int_eq (pulse (key), API_JOB_UPDATE_PULSE_STATUS_OK);
  ck_assert_uint_eq (stg_store_commit_count (fx.store), unblocked);
  ck_assert_int_eq (fx_status (key), S (ROLLING_FORWARD));
}
END_TEST

/* ---- checking requests ---------------------------------------------------- */

/* Starts @r, which must be refused as invalid with a message holding @want. */
static void
assert_refused (ApiJobUpdateRequest *r, const gchar *want)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiJobUpdateKey) k = stg_engine_start_update (fx.engine, r, "a", NULL, NULL, &error);

  ck_assert_ptr_null (k);
  ck_assert (g_error_matches (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID));
  ck_assert_msg (strstr (error->message, want) != NULL, "%s", error->message);
}

/* Aurora backfills a missing updateStrategy from updateGroupSize (and
 * waitForBatchCompletion), then refuses groups that add up to nothing,
 * before it looks at any other setting. */
START_TEST (group_size_zero_without_strategy_is_refused)
{
  fx_create_job (2);
  {
    g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 2);
    g_object_set (r->settings, "updateGroupSize", 0, NULL);
    assert_refused (r, "request.settings.updateGroupSize is 0: "
                       "Update results in no instance being modified.");
    g_object_set (r->settings, "waitForBatchCompletion", TRUE, NULL);
    assert_refused (r, "request.settings.updateGroupSize is 0: "
                       "Update results in no instance being modified.");
    /* Group sizes come first in Aurora's order. */
    g_object_set (r->settings, "maxPerInstanceFailures", -1, NULL);
    assert_refused (r, "Update results in no instance being modified.");
    g_object_set (r->settings, "updateGroupSize", 1, NULL);
    assert_refused (r, "request.settings.maxPerInstanceFailures must be non-negative.");
  }
  {
    g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 2);
    const gint32 sizes[] = { 2, 0 };
    fx_set_strategy_variable (r, sizes, G_N_ELEMENTS (sizes), FALSE);
    assert_refused (r, "request.settings.updateStrategy.varBatchStrategy.groupSizes[1] is 0: "
                       "All update group sizes must be positive.");
  }
  {
    g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 2);
    fx_set_strategy_queue (r, 0);
    assert_refused (r, "request.settings.updateStrategy.queueStrategy.groupSize is 0");
  }
  /* Nothing was stored, and a diff (which Aurora does not check) still works. */
  g_autoptr (GPtrArray) all = stg_store_query_update_summaries (fx.store, NULL, NULL);
  ck_assert_uint_eq (all->len, 0);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 2);
  g_object_set (r->settings, "updateGroupSize", 0, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiGetJobUpdateDiffResult) diff = stg_engine_diff (fx.engine, r, FALSE, &error);
  ck_assert_ptr_nonnull (diff);
}
END_TEST

/* The recorded instructions carry the backfilled strategy, as Aurora's do. */
START_TEST (strategy_is_backfilled_from_the_older_fields)
{
  static const struct
  {
    gint32 size;
    gboolean batch;
  } cases[] = { { 3, TRUE }, { 2, FALSE } };

  fx_create_job (4);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (ApiJobUpdateRequest) r = fx_request (i == 0 ? "v2" : "v3", 4);
      g_object_set (r->settings, "updateGroupSize", cases[i].size, "waitForBatchCompletion",
                    cases[i].batch, NULL);
      g_autoptr (ApiJobUpdateKey) key = fx_start (r);
      g_autoptr (ApiJobUpdateInstructions) ins =
          stg_store_get_update_instructions (fx.store, fx_update_id (key), NULL);
      ck_assert_ptr_nonnull (ins);
      ApiJobUpdateStrategy *st = ins->settings->updateStrategy;
      ck_assert (ins->settings->__isset_updateStrategy && st != NULL);
      if (cases[i].batch)
        ck_assert (st->__isset_batchStrategy && !st->__isset_queueStrategy &&
                   st->batchStrategy->groupSize == cases[i].size);
      else
        ck_assert (st->__isset_queueStrategy && !st->__isset_batchStrategy &&
                   st->queueStrategy->groupSize == cases[i].size);
      fx_run (20000);
      ck_assert_int_eq (fx_status (key), S (ROLLED_FORWARD));
    }
}
END_TEST

/* Key parts become folder names: ".", ".." and leading dots are refused
 * with a message naming the part, on every route a key comes in by. */
START_TEST (dot_key_parts_are_refused)
{
  static const gchar *const keys[][3] = {
    { "..", "prod", "app" },
    { "www", ".", "app" },
    { "www", "prod", ".hidden" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    {
      g_autoptr (ApiJobKey) key = stg_job_key_new (keys[i][0], keys[i][1], keys[i][2]);
      g_autoptr (ApiTaskConfig) task = fx_config ("v1");
      g_object_set (task, "job", key, NULL);
      g_autoptr (ApiJobConfiguration) job = g_object_new (API_TYPE_JOB_CONFIGURATION, "key", key,
                                                          "taskConfig", task, "instanceCount", 1,
                                                          NULL);
      g_autoptr (GError) error = NULL;
      ck_assert (!stg_engine_create_job (fx.engine, job, "www", &error));
      ck_assert (g_error_matches (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID));
      ck_assert_msg (strstr (error->message, "may not start with '.'") != NULL, "%s",
                     error->message);
      g_clear_error (&error);

      g_autoptr (ApiJobUpdateRequest) r = fx_request ("v1", 1);
      g_object_set (r->taskConfig, "job", key, NULL);
      assert_refused (r, "may not start with '.'");

      g_autofree gchar *text = g_strdup_printf ("local/%s/%s/%s", keys[i][0], keys[i][1],
                                                keys[i][2]);
      g_autoptr (StgJobPath) path = stg_job_path_parse (text, FALSE, &error);
      ck_assert_ptr_null (path);
      ck_assert_msg (strstr (error->message, "may not start with '.'") != NULL, "%s",
                     error->message);
    }
  g_autoptr (GPtrArray) jobs = stg_store_list_jobs (fx.store, NULL, NULL);
  ck_assert_uint_eq (jobs->len, 0);
  /* Dots inside a part are fine. */
  g_autoptr (ApiJobKey) inner = stg_job_key_new ("www", "prod.1", "a..b");
  ck_assert (stg_job_key_check (inner, "key", NULL));
}
END_TEST

static Suite *
engine_control_suite (void)
{
  Suite *s = suite_create ("engine_control");
  TCase *tc = tcase_create ("control");

  tcase_set_timeout (tc, 60);
  tcase_add_checked_fixture (tc, fx_setup, fx_teardown);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, manual_rollback_while_paused);
  tcase_add_test (tc, abort_leaves_instances_as_they_are);
  tcase_add_test (tc, unknown_updates_are_refused);
  tcase_add_test (tc, one_active_update_per_job);
  tcase_add_test (tc, bad_requests_are_refused_naming_the_field);
  tcase_add_test (tc, transition_table_is_aurora_s);
  tcase_add_test (tc, work_transition_table_is_as_drawn);
  tcase_add_test (tc, illegal_calls_name_both_states);
  tcase_add_test (tc, coordinated_update_needs_pulses);
  tcase_add_test (tc, refreshing_pulses_cost_no_commit);
  tcase_add_test (tc, group_size_zero_without_strategy_is_refused);
  tcase_add_test (tc, strategy_is_backfilled_from_the_older_fields);
  tcase_add_test (tc, dot_key_parts_are_refused);
  return s;
}

int
main (void)
{
  SRunner *sr = srunner_create (engine_control_suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  return failed == 0 ? 0 : 1;
}
