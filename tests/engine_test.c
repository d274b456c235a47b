/* engine_test.c: Check suite for the update engine's rules: diff, strategies,
 * instance evaluation, failures and rollback, pause, resume, abort, pulses,
 * the transition table, and one active update per job. A fake clock and a
 * scripted runtime drive a real store on a temporary file. */
#include "config.h"

#include <check.h>

#include "common/enums.h"
#include "engine_fixture.h"

#define S(x) API_JOB_UPDATE_STATUS_##x

static gchar *
expect_applies (const gchar *ids, gint64 config)
{
  g_auto (GStrv) parts = g_strsplit (ids, " ", -1);
  g_autoptr (GString) s = g_string_new (NULL);

  for (guint i = 0; parts[i] != NULL; i++)
    g_string_append_printf (s, "%sapply %s %" G_GINT64_FORMAT, i ? ", " : "", parts[i], config);
  return g_strdup (s->str);
}

static void
set_strategy_batch (ApiJobUpdateRequest *r, gint32 size, gboolean autopause)
{
  g_autoptr (ApiBatchJobUpdateStrategy) b = g_object_new (API_TYPE_BATCH_JOB_UPDATE_STRATEGY,
                                                          "groupSize", size,
                                                          "autopauseAfterBatch", autopause, NULL);
  g_autoptr (ApiJobUpdateStrategy) st = g_object_new (API_TYPE_JOB_UPDATE_STRATEGY,
                                                      "batchStrategy", b, NULL);
  g_object_set (r->settings, "updateStrategy", st, NULL);
}

static void
set_strategy_queue (ApiJobUpdateRequest *r, gint32 size)
{
  g_autoptr (ApiQueueJobUpdateStrategy) q = g_object_new (API_TYPE_QUEUE_JOB_UPDATE_STRATEGY,
                                                          "groupSize", size, NULL);
  g_autoptr (ApiJobUpdateStrategy) st = g_object_new (API_TYPE_JOB_UPDATE_STRATEGY,
                                                      "queueStrategy", q, NULL);
  g_object_set (r->settings, "updateStrategy", st, NULL);
}

static void
set_strategy_variable (ApiJobUpdateRequest *r, const gint32 *sizes, guint n, gboolean autopause)
{
  g_autoptr (GArray) list = g_array_new (FALSE, FALSE, sizeof (gint32));
  g_array_append_vals (list, sizes, n);
  g_autoptr (ApiVariableBatchJobUpdateStrategy) v =
    g_object_new (API_TYPE_VARIABLE_BATCH_JOB_UPDATE_STRATEGY, "groupSizes", list,
                  "autopauseAfterBatch", autopause, NULL);
  g_autoptr (ApiJobUpdateStrategy) st = g_object_new (API_TYPE_JOB_UPDATE_STRATEGY,
                                                      "varBatchStrategy", v, NULL);
  g_object_set (r->settings, "updateStrategy", st, NULL);
}

/* ---- the basics ------------------------------------------------------------ */

START_TEST (successful_update)
{
  fx_create_job (3);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 3);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);

  ck_assert_int_eq (fx_status (key), S (ROLLING_FORWARD));
  fx_run (10000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_FORWARD));
  g_autofree gchar *log = fx_take_log ();
  g_autofree gchar *want = expect_applies ("0 1 2", v2);
  ck_assert_str_eq (log, want);
  g_autofree gchar *ev = fx_update_events (key);
  ck_assert_str_eq (ev, "ROLLING_FORWARD ROLLED_FORWARD");
  g_autofree gchar *iev = fx_instance_events (key);
  ck_assert_str_eq (iev, "0:UPDATING 0:UPDATED 1:UPDATING 1:UPDATED 2:UPDATING 2:UPDATED");
  for (gint i = 0; i < 3; i++)
    ck_assert_int_eq (fx_intent (i), v2);
  ck_assert_uint_eq (stg_engine_active_updates (fx.engine), 0);

  /* The user and message of the call are on the first event. */
  g_autoptr (GPtrArray) events = stg_store_list_update_events (fx.store, fx_update_id (key), NULL);
  ApiJobUpdateEvent *first = events->pdata[0];
  ck_assert_str_eq (first->user, "alice");
  ck_assert_str_eq (first->message, "go");
}
END_TEST

START_TEST (watch_time_is_waited_out)
{
  fx_create_job (1);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 1);
  g_object_set (r->settings, "minWaitInInstanceRunningMs", 5000, NULL);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);

  fx_run (5050);        /* healthy at +100, so 5,100 ms in all */
  ck_assert_int_eq (fx_status (key), S (ROLLING_FORWARD));
  fx_run (100);
  ck_assert_int_eq (fx_status (key), S (ROLLED_FORWARD));
}
END_TEST

START_TEST (empty_diff_finishes_at_once)
{
  fx_create_job (3);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v1", 3);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);

  ck_assert_int_eq (fx_status (key), S (ROLLED_FORWARD));
  g_autofree gchar *ev = fx_update_events (key);
  ck_assert_str_eq (ev, "ROLLING_FORWARD ROLLED_FORWARD");
  g_autofree gchar *iev = fx_instance_events (key);
  ck_assert_str_eq (iev, "");
  fx_run (1000);
  g_autofree gchar *log = fx_take_log ();
  ck_assert_str_eq (log, "");
}
END_TEST

START_TEST (adds_instances)
{
  fx_create_job (3);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v1", 5);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);

  fx_run (10000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_FORWARD));
  g_autofree gchar *log = fx_take_log ();
  g_autofree gchar *want = expect_applies ("3 4", fx.v1);
  ck_assert_str_eq (log, want);
  ck_assert_int_eq (fx_intent (4), fx.v1);
  ck_assert_uint_eq (scripted_runtime_running (fx.rt, fx.job_id), 5);
}
END_TEST

START_TEST (removes_instances)
{
  fx_create_job (5);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v1", 3);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);

  fx_run (5000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_FORWARD));
  g_autofree gchar *log = fx_take_log ();
  ck_assert_str_eq (log, "kill 3, kill 4");
  ck_assert_int_eq (fx_intent (3), 0);
  ck_assert_int_eq (fx_intent (4), 0);
  g_autoptr (StgJobRow) job = stg_store_get_job (fx.store, fx.key, NULL);
  ck_assert_int_eq (job->instance_count, 3);
}
END_TEST

START_TEST (only_some_instances_leaves_two_configs)
{
  fx_create_job (4);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 4);
  g_autoptr (ApiRange) range = g_object_new (API_TYPE_RANGE, "first", 0, "last", 1, NULL);
  g_hash_table_add (r->settings->updateOnlyTheseInstances, g_object_ref (range));
  r->settings->__isset_updateOnlyTheseInstances = TRUE;
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);

  fx_run (10000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_FORWARD));
  g_autofree gchar *log = fx_take_log ();
  g_autofree gchar *want = expect_applies ("0 1", v2);
  ck_assert_str_eq (log, want);
  ck_assert_int_eq (fx_intent (0), v2);
  ck_assert_int_eq (fx_intent (1), v2);
  ck_assert_int_eq (fx_intent (2), fx.v1);
  ck_assert_int_eq (fx_intent (3), fx.v1);
  g_autoptr (GArray) groups = stg_store_count_configs (fx.store, fx.job_id, NULL);
  ck_assert_uint_eq (groups->len, 2);

  /* The recorded initial state names only the instances in scope. */
  g_autoptr (ApiJobUpdateInstructions) ins =
    stg_store_get_update_instructions (fx.store, fx_update_id (key), NULL);
  ck_assert_uint_eq (g_hash_table_size (ins->initialState), 1);
  g_autoptr (GList) groups_list = g_hash_table_get_keys (ins->initialState);
  ApiInstanceTaskConfig *itc = groups_list->data;
  g_autoptr (GList) ranges = g_hash_table_get_keys (itc->instances);
  ck_assert_int_eq (((ApiRange *) ranges->data)->first, 0);
  ck_assert_int_eq (((ApiRange *) ranges->data)->last, 1);
}
END_TEST

START_TEST (diff_without_starting)
{
  g_autoptr (GError) error = NULL;

  fx_create_job (4);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 6);
  g_autoptr (ApiRange) range = g_object_new (API_TYPE_RANGE, "first", 1, "last", 5, NULL);
  g_hash_table_add (r->settings->updateOnlyTheseInstances, g_object_ref (range));
  r->settings->__isset_updateOnlyTheseInstances = TRUE;
  g_autoptr (ApiGetJobUpdateDiffResult) d = stg_engine_diff (fx.engine, r, &error);

  ck_assert_msg (d != NULL, "diff: %s", error ? error->message : "");
  ck_assert_uint_eq (g_hash_table_size (d->add), 1);
  ck_assert_uint_eq (g_hash_table_size (d->update), 1);
  ck_assert_uint_eq (g_hash_table_size (d->remove), 0);
  ck_assert_uint_eq (g_hash_table_size (d->unchanged), 0);
  g_autoptr (GList) adds = g_hash_table_get_keys (d->add);
  ApiConfigGroup *add = adds->data;
  g_autoptr (GList) add_ranges = g_hash_table_get_keys (add->instances);
  ck_assert_int_eq (((ApiRange *) add_ranges->data)->first, 4);
  ck_assert_int_eq (((ApiRange *) add_ranges->data)->last, 5);
  ck_assert_str_eq (add->config->executorConfig->data, "v2");
  g_autoptr (GList) updates = g_hash_table_get_keys (d->update);
  ApiConfigGroup *upd = updates->data;
  ck_assert_str_eq (upd->config->executorConfig->data, "v1");   /* grouped by the current config */
  /* Nothing started, nothing stored. */
  ck_assert_uint_eq (stg_engine_active_updates (fx.engine), 0);
  g_autofree gchar *log = fx_take_log ();
  ck_assert_str_eq (log, "");
}
END_TEST

/* ---- strategies -------------------------------------------------------------- */

START_TEST (queue_starts_the_next_as_one_finishes)
{
  fx_create_job (4);
  scripted_runtime_delay (fx.rt, 1, 3000);       /* instance 1 is slow */
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 4);
  set_strategy_queue (r, 2);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);

  fx_run (1500);   /* 0 done at 1,100; 1 still starting */
  g_autofree gchar *log = fx_take_log ();
  g_autofree gchar *want = expect_applies ("0 1 2", v2);
  ck_assert_str_eq (log, want);
  fx_run (10000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_FORWARD));
}
END_TEST

START_TEST (batch_waits_for_the_whole_group)
{
  fx_create_job (4);
  scripted_runtime_delay (fx.rt, 1, 3000);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 4);
  set_strategy_batch (r, 2, FALSE);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);

  fx_run (1500);
  g_autofree gchar *log1 = fx_take_log ();
  g_autofree gchar *want1 = expect_applies ("0 1", v2);
  ck_assert_str_eq (log1, want1);
  fx_run (3000);   /* 1 healthy at 3,000 and stable at 4,000 */
  g_autofree gchar *log2 = fx_take_log ();
  g_autofree gchar *want2 = expect_applies ("2 3", v2);
  ck_assert_str_eq (log2, want2);
  fx_run (5000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_FORWARD));
}
END_TEST

START_TEST (variable_batch_sizes_in_order_last_repeated)
{
  static const gint32 sizes[] = { 1, 3 };
  fx_create_job (8);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 8);
  set_strategy_variable (r, sizes, 2, FALSE);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);

  fx_run (1000);
  g_autofree gchar *a = fx_take_log ();
  g_autofree gchar *wa = expect_applies ("0", v2);
  ck_assert_str_eq (a, wa);
  fx_run (1100);
  g_autofree gchar *b = fx_take_log ();
  g_autofree gchar *wb = expect_applies ("1 2 3", v2);
  ck_assert_str_eq (b, wb);
  fx_run (1100);
  g_autofree gchar *c = fx_take_log ();
  g_autofree gchar *wc = expect_applies ("4 5 6", v2);
  ck_assert_str_eq (c, wc);
  fx_run (1100);
  g_autofree gchar *d = fx_take_log ();
  g_autofree gchar *wd = expect_applies ("7", v2);
  ck_assert_str_eq (d, wd);
  fx_run (2000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_FORWARD));
}
END_TEST

START_TEST (legacy_group_size_and_batch_completion)
{
  fx_create_job (4);
  scripted_runtime_delay (fx.rt, 0, 3000);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 4);
  g_object_set (r->settings, "updateGroupSize", 2, "waitForBatchCompletion", TRUE, NULL);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);

  fx_run (1500);
  g_autofree gchar *log = fx_take_log ();
  g_autofree gchar *want = expect_applies ("0 1", v2);   /* a batch: 2 waits for slow 0 */
  ck_assert_str_eq (log, want);
  fx_run (10000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_FORWARD));
}
END_TEST

START_TEST (autopause_after_each_batch)
{
  fx_create_job (4);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 4);
  set_strategy_batch (r, 2, TRUE);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);
  g_autoptr (GError) error = NULL;

  fx_run (5000);
  ck_assert_int_eq (fx_status (key), S (ROLL_FORWARD_PAUSED));
  g_autofree gchar *a = fx_take_log ();
  g_autofree gchar *wa = expect_applies ("0 1", v2);
  ck_assert_str_eq (a, wa);
  fx_run (5000);
  g_autofree gchar *none = fx_take_log ();
  ck_assert_str_eq (none, "");

  ck_assert (stg_engine_resume_update (fx.engine, key, "bob", "next", &error));
  fx_run (5000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_FORWARD));
  g_autofree gchar *b = fx_take_log ();
  g_autofree gchar *wb = expect_applies ("2 3", v2);
  ck_assert_str_eq (b, wb);
  g_autofree gchar *ev = fx_update_events (key);
  ck_assert_str_eq (ev, "ROLLING_FORWARD ROLL_FORWARD_PAUSED ROLLING_FORWARD ROLLED_FORWARD");
}
END_TEST

START_TEST (growth_factor_doubles_batches)
{
  fx_create_job (15);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 15);
  set_strategy_batch (r, 1, FALSE);
  g_object_set (r->settings, "growthFactor", 2.0, NULL);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  g_autoptr (GArray) sizes = g_array_new (FALSE, FALSE, sizeof (guint));
  guint seen = 0;

  /* Batch members start in the same step: group the applies by the time
   * they appear. */
  for (gint t = 0; t < 400 && fx_status (key) == S (ROLLING_FORWARD); t++)
    {
      GPtrArray *log = scripted_runtime_log (fx.rt);
      if (log->len > seen)
        {
          guint n = log->len - seen;
          g_array_append_val (sizes, n);
          seen = log->len;
        }
      fx_run (50);
    }
  ck_assert_int_eq (fx_status (key), S (ROLLED_FORWARD));
  ck_assert_uint_eq (sizes->len, 4);
  ck_assert_uint_eq (g_array_index (sizes, guint, 0), 1);
  ck_assert_uint_eq (g_array_index (sizes, guint, 1), 2);
  ck_assert_uint_eq (g_array_index (sizes, guint, 2), 4);
  ck_assert_uint_eq (g_array_index (sizes, guint, 3), 8);
}
END_TEST

START_TEST (pause_between_batches)
{
  fx_create_job (4);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 4);
  set_strategy_batch (r, 2, FALSE);
  g_object_set (r->settings, "pauseBetweenBatchesMs", (gint64) 10000, NULL);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);

  fx_run (5000);     /* first batch done at 1,100 */
  ck_assert_uint_eq (scripted_runtime_log (fx.rt)->len, 2);
  fx_run (6500);     /* the gate opens at 11,100 */
  ck_assert_uint_eq (scripted_runtime_log (fx.rt)->len, 4);
  fx_run (5000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_FORWARD));
}
END_TEST

START_TEST (min_in_service_is_kept_with_an_unhealthy_instance)
{
  g_autoptr (GError) error = NULL;

  fx_create_job (5);
  /* Instance 4 is down before the update starts: 4 in service. */
  scripted_runtime_set (fx.rt, fx.job_id, 4, STG_TASK_FAILED, fx.v1, 1);
  fx_run (100);
  fx_watch_running ();
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 5);
  set_strategy_queue (r, 3);
  g_object_set (r->settings, "minInService", 3, NULL);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);

  fx_run (1000);
  /* Only one of 0-3 may be down at a time. */
  ck_assert_uint_eq (scripted_runtime_log (fx.rt)->len, 1);
  fx_run (20000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_FORWARD));
  ck_assert_int_ge (fx.min_running, 3);

  /* A request that could never take an instance down is refused. */
  g_autoptr (ApiJobUpdateRequest) r2 = fx_request ("v3", 5);
  g_object_set (r2->settings, "minInService", 5, NULL);
  g_autoptr (ApiJobUpdateKey) k2 = stg_engine_start_update (fx.engine, r2, "a", NULL, NULL, &error);
  ck_assert_ptr_null (k2);
  ck_assert (g_error_matches (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID));
  ck_assert_ptr_nonnull (strstr (error->message, "minInService"));
}
END_TEST

/* ---- failures and rollback ------------------------------------------------------ */

START_TEST (retries_then_fails_without_rollback)
{
  fx_create_job (3);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 3);
  g_object_set (r->settings, "maxPerInstanceFailures", 2, "rollbackOnFailure", FALSE, NULL);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);
  scripted_runtime_behave (fx.rt, 1, v2, SCRIPT_CRASH);

  fx_run (20000);
  ck_assert_int_eq (fx_status (key), S (FAILED));
  g_autofree gchar *log = fx_take_log ();
  g_autofree gchar *want = expect_applies ("0 1 1 1", v2);   /* first try and two retries */
  ck_assert_str_eq (log, want);
  g_autofree gchar *iev = fx_instance_events (key);
  ck_assert_str_eq (iev, "0:UPDATING 0:UPDATED 1:UPDATING 1:UPDATE_FAILED");
  g_autoptr (GPtrArray) events = stg_store_list_update_events (fx.store, fx_update_id (key), NULL);
  ApiJobUpdateEvent *last = events->pdata[events->len - 1];
  ck_assert_ptr_nonnull (strstr (last->message, "failure threshold reached: 1 instance failed"));
  ck_assert_ptr_nonnull (strstr (last->message, "instance 1"));
  /* Instance 2 was never touched. */
  ck_assert_int_eq (fx_intent (2), fx.v1);
}
END_TEST

START_TEST (threshold_rolls_back_in_reverse_batches)
{
  fx_create_job (9);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 9);
  set_strategy_batch (r, 3, FALSE);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);
  scripted_runtime_behave (fx.rt, 7, v2, SCRIPT_CRASH);

  fx_run (60000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_BACK));
  g_autofree gchar *log = fx_take_log ();
  g_autofree gchar *fwd = expect_applies ("0 1 2 3 4 5 6 7 8", v2);
  g_autofree gchar *back = expect_applies ("8 7 6 5 4 3 2 1 0", fx.v1);
  g_autofree gchar *want = g_strconcat (fwd, ", ", back, NULL);
  ck_assert_str_eq (log, want);
  for (gint i = 0; i < 9; i++)
    ck_assert_int_eq (fx_intent (i), fx.v1);
  g_autofree gchar *ev = fx_update_events (key);
  ck_assert_str_eq (ev, "ROLLING_FORWARD ROLLING_BACK ROLLED_BACK");
  g_autofree gchar *iev = fx_instance_events (key);
  ck_assert_ptr_nonnull (strstr (iev, "7:UPDATE_FAILED"));
  ck_assert_ptr_nonnull (strstr (iev, "8:ROLLING_BACK 7:ROLLING_BACK 6:ROLLING_BACK"));
  ck_assert_ptr_nonnull (strstr (iev, "0:ROLLED_BACK"));
}
END_TEST

START_TEST (rollback_skips_untouched_instances)
{
  fx_create_job (6);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 6);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);
  scripted_runtime_behave (fx.rt, 2, v2, SCRIPT_CRASH);

  fx_run (30000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_BACK));
  g_autofree gchar *log = fx_take_log ();
  g_autofree gchar *fwd = expect_applies ("0 1 2", v2);
  g_autofree gchar *back = expect_applies ("2 1 0", fx.v1);
  g_autofree gchar *want = g_strconcat (fwd, ", ", back, NULL);
  ck_assert_str_eq (log, want);
}
END_TEST

START_TEST (rollback_restores_removed_and_removes_added)
{
  fx_create_job (3);
  /* 3 -> 2 instances and a new config; instance 0 fails after 2 is gone. */
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 2);
  g_object_set (r->settings, "maxFailedInstances", 0, NULL);
  set_strategy_queue (r, 1);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);
  scripted_runtime_behave (fx.rt, 1, v2, SCRIPT_CRASH);

  fx_run (30000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_BACK));
  /* Instance 2 came back with its old config. */
  ck_assert_int_eq (fx_intent (2), fx.v1);
  ck_assert_uint_eq (scripted_runtime_running (fx.rt, fx.job_id), 3);

  /* Now grow 3 -> 4 with a failing new instance: the added one is removed. */
  g_autoptr (ApiJobUpdateRequest) r2 = fx_request ("v1", 4);
  g_free (fx_take_log ());
  scripted_runtime_behave (fx.rt, 3, fx.v1, SCRIPT_CRASH);
  g_autoptr (ApiJobUpdateKey) k2 = fx_start (r2);
  fx_run (30000);
  ck_assert_int_eq (fx_status (k2), S (ROLLED_BACK));
  g_autofree gchar *log = fx_take_log ();
  g_autofree gchar *want = g_strdup_printf ("apply 3 %" G_GINT64_FORMAT ", kill 3", fx.v1);
  ck_assert_str_eq (log, want);
  ck_assert_int_eq (fx_intent (3), 0);
}
END_TEST

START_TEST (failure_during_rollback_fails_the_update)
{
  fx_create_job (3);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 3);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);
  scripted_runtime_behave (fx.rt, 2, 0, SCRIPT_CRASH);   /* fails with any config */

  fx_run (30000);
  ck_assert_int_eq (fx_status (key), S (FAILED));
  g_autofree gchar *ev = fx_update_events (key);
  ck_assert_str_eq (ev, "ROLLING_FORWARD ROLLING_BACK FAILED");
  g_autofree gchar *iev = fx_instance_events (key);
  ck_assert_ptr_nonnull (strstr (iev, "2:ROLLBACK_FAILED"));
  (void) v2;
}
END_TEST

START_TEST (progress_deadline_counts_as_failure)
{
  fx_create_job (2);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 2);
  g_object_set (r->settings, "maxInstanceStartMs", (gint64) 2000, "maxPerInstanceFailures", 1, NULL);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);
  scripted_runtime_behave (fx.rt, 0, v2, SCRIPT_HANG);

  fx_run (2100);
  g_autofree gchar *a = fx_take_log ();
  g_autofree gchar *wa = g_strdup_printf ("apply 0 %" G_GINT64_FORMAT ", restart 0", v2);
  ck_assert_str_eq (a, wa);
  fx_run (30000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_BACK));
  g_autoptr (GPtrArray) events = stg_store_list_instance_events (fx.store, fx_update_id (key), 0,
                                                                 NULL, NULL);
  gboolean found = FALSE;
  for (guint i = 0; i < events->len; i++)
    {
      ApiJobInstanceUpdateEvent *e = events->pdata[i];
      if (e->action == API_JOB_UPDATE_ACTION_INSTANCE_UPDATE_FAILED)
        found = e->__isset_message && strstr (e->message, "not healthy within 2000 ms") != NULL;
    }
  ck_assert (found);
}
END_TEST

/* ---- pause, resume, abort, manual rollback ------------------------------------------ */

START_TEST (manual_rollback_while_paused)
{
  g_autoptr (GError) error = NULL;

  fx_create_job (4);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 4);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);

  fx_run (2300);   /* 0 and 1 updated, 2 started */
  ck_assert (stg_engine_pause_update (fx.engine, key, "bob", "look", &error));
  ck_assert_int_eq (fx_status (key), S (ROLL_FORWARD_PAUSED));
  /* Pausing again is fine and changes nothing. */
  ck_assert (stg_engine_pause_update (fx.engine, key, "bob", NULL, &error));
  fx_run (5000);
  ck_assert (stg_engine_rollback_update (fx.engine, key, "bob", "undo", &error));
  fx_run (20000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_BACK));
  g_autofree gchar *log = fx_take_log ();
  g_autofree gchar *fwd = expect_applies ("0 1 2", v2);
  g_autofree gchar *back = expect_applies ("2 1 0", fx.v1);
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
  ck_assert_int_eq (fx_intent (1), v2);   /* started, left as it is */
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
  g_autoptr (ApiJobUpdateKey) key = g_object_new (API_TYPE_JOB_UPDATE_KEY, "job", fx.key,
                                                  "id", "no-such-update", NULL);
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
  g_autoptr (ApiJobUpdateKey) k2 = stg_engine_start_update (fx.engine, r2, "a", NULL, &active, &error);

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
  static const struct { const gchar *prop; gint value; const gchar *field; } cases[] = {
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
      g_autoptr (ApiJobUpdateKey) k = stg_engine_start_update (fx.engine, r, "a", NULL, NULL, &error);
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
    set_strategy_batch (r, 0, FALSE);
    ck_assert_ptr_null (stg_engine_start_update (fx.engine, r, "a", NULL, NULL, &error));
    ck_assert_ptr_nonnull (strstr (error->message, "batchStrategy.groupSize must be at least 1"));
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
    [S (ROLLING_FORWARD)] = { S (ROLLING_BACK), S (ROLL_FORWARD_PAUSED), S (ROLL_FORWARD_AWAITING_PULSE),
                              S (ROLLED_FORWARD), S (ABORTED), S (FAILED), S (ERROR), -1 },
    [S (ROLLING_BACK)] = { S (ROLL_BACK_PAUSED), S (ROLL_BACK_AWAITING_PULSE), S (ROLLED_BACK),
                           S (ABORTED), S (ERROR), S (FAILED), -1 },
    [S (ROLL_FORWARD_PAUSED)] = { S (ROLLING_BACK), S (ROLLING_FORWARD), S (ROLL_FORWARD_AWAITING_PULSE),
                                  S (ABORTED), S (ERROR), -1 },
    [S (ROLL_BACK_PAUSED)] = { S (ROLLING_BACK), S (ROLL_BACK_AWAITING_PULSE), S (ABORTED), S (ERROR), -1 },
    [S (ROLLED_FORWARD)] = { -1 },
    [S (ROLLED_BACK)] = { -1 },
    [S (ABORTED)] = { -1 },
    [S (ERROR)] = { -1 },
    [S (FAILED)] = { -1 },
    [S (ROLL_FORWARD_AWAITING_PULSE)] = { S (ROLLING_BACK), S (ROLLING_FORWARD), S (ROLL_FORWARD_PAUSED),
                                          S (ABORTED), S (ERROR), -1 },
    [S (ROLL_BACK_AWAITING_PULSE)] = { S (ROLLING_BACK), S (ROLL_BACK_PAUSED), S (ABORTED), S (ERROR), -1 },
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
  ck_assert_uint_eq (scripted_runtime_log (fx.rt)->len, 2);   /* 0 done, 1 started */

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
  ck_assert_ptr_nonnull (strstr (ev, "ROLL_FORWARD_AWAITING_PULSE ROLLING_FORWARD ROLL_FORWARD_AWAITING_PULSE"));
}
END_TEST

static Suite *
engine_suite (void)
{
  Suite *s = suite_create ("engine");
  TCase *tc;

#define CASE(name) tc = tcase_create (name); tcase_set_timeout (tc, 60); \
  tcase_add_checked_fixture (tc, fx_setup, fx_teardown); suite_add_tcase (s, tc)

  CASE ("basics");
  tcase_add_test (tc, successful_update);
  tcase_add_test (tc, watch_time_is_waited_out);
  tcase_add_test (tc, empty_diff_finishes_at_once);
  tcase_add_test (tc, adds_instances);
  tcase_add_test (tc, removes_instances);
  tcase_add_test (tc, only_some_instances_leaves_two_configs);
  tcase_add_test (tc, diff_without_starting);

  CASE ("strategies");
  tcase_add_test (tc, queue_starts_the_next_as_one_finishes);
  tcase_add_test (tc, batch_waits_for_the_whole_group);
  tcase_add_test (tc, variable_batch_sizes_in_order_last_repeated);
  tcase_add_test (tc, legacy_group_size_and_batch_completion);
  tcase_add_test (tc, autopause_after_each_batch);
  tcase_add_test (tc, growth_factor_doubles_batches);
  tcase_add_test (tc, pause_between_batches);
  tcase_add_test (tc, min_in_service_is_kept_with_an_unhealthy_instance);

  CASE ("failures");
  tcase_add_test (tc, retries_then_fails_without_rollback);
  tcase_add_test (tc, threshold_rolls_back_in_reverse_batches);
  tcase_add_test (tc, rollback_skips_untouched_instances);
  tcase_add_test (tc, rollback_restores_removed_and_removes_added);
  tcase_add_test (tc, failure_during_rollback_fails_the_update);
  tcase_add_test (tc, progress_deadline_counts_as_failure);

  CASE ("control");
  tcase_add_test (tc, manual_rollback_while_paused);
  tcase_add_test (tc, abort_leaves_instances_as_they_are);
  tcase_add_test (tc, unknown_updates_are_refused);
  tcase_add_test (tc, one_active_update_per_job);
  tcase_add_test (tc, bad_requests_are_refused_naming_the_field);
  tcase_add_test (tc, transition_table_is_aurora_s);
  tcase_add_test (tc, illegal_calls_name_both_states);
  tcase_add_test (tc, coordinated_update_needs_pulses);
#undef CASE
  return s;
}

int
main (void)
{
  SRunner *sr = srunner_create (engine_suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  return failed == 0 ? 0 : 1;
}
