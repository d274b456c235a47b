/* engine_test.c: Check suite for the update engine's rules: diff,
 * strategies, instance evaluation, failures and rollback
 * (engine_control_test.c has the calls that steer an update). A fake clock
 * and a scripted runtime drive a real store on a temporary file. */
#include "config.h"

#include <check.h>

#include "common/enums.h"
#include "engine_fixture.h"

#define S(x) API_JOB_UPDATE_STATUS_##x

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
  g_autofree gchar *want = fx_expect_applies ("0 1 2", v2);
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
  g_autofree gchar *want = fx_expect_applies ("3 4", fx.v1);
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
  g_autofree gchar *want = fx_expect_applies ("0 1", v2);
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
  g_autoptr (ApiGetJobUpdateDiffResult) d = stg_engine_diff (fx.engine, r, FALSE, &error);

  ck_assert_msg (d != NULL, "diff: %s", error ? error->message : "");
  ck_assert_uint_eq (g_hash_table_size (d->add), 1);
  ck_assert_uint_eq (g_hash_table_size (d->update), 1);
  ck_assert_uint_eq (g_hash_table_size (d->remove), 0);
  /* Instance 0 would change but lies outside the scope: Aurora's
   * JobDiff.compute reports it as unchanged, with its current config. */
  ck_assert_uint_eq (g_hash_table_size (d->unchanged), 1);
  g_autoptr (GList) kept = g_hash_table_get_keys (d->unchanged);
  ApiConfigGroup *same = kept->data;
  ck_assert_str_eq (same->config->executorConfig->data, "v1");
  g_autoptr (GList) same_ranges = g_hash_table_get_keys (same->instances);
  ck_assert_uint_eq (g_list_length (same_ranges), 1);
  ck_assert_int_eq (((ApiRange *) same_ranges->data)->first, 0);
  ck_assert_int_eq (((ApiRange *) same_ranges->data)->last, 0);
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

/* ---- rolling restarts ------------------------------------------------------- */

/* restartInstances with the same config restarts every instance in scope,
 * batch by batch, each waiting for a run that came up after its restart
 * and stayed healthy for the watch time. */
START_TEST (rolling_restart_goes_batch_by_batch)
{
  fx_create_job (5);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v1", 5);
  fx_set_strategy_batch (r, 2, FALSE);
  g_object_set (r->settings, "restartInstances", TRUE, NULL);
  g_autoptr (ApiRange) range = g_object_new (API_TYPE_RANGE, "first", 0, "last", 3, NULL);
  g_hash_table_add (r->settings->updateOnlyTheseInstances, g_object_ref (range));
  r->settings->__isset_updateOnlyTheseInstances = TRUE;
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);

  /* The first batch restarts; a run from before the restart does not count. */
  fx_run (50);
  g_autofree gchar *first = fx_take_log ();
  ck_assert_str_eq (first, "restart 0, restart 1");
  fx_run (500);
  ck_assert_int_eq (fx_status (key), S (ROLLING_FORWARD));
  g_autofree gchar *still = fx_take_log ();
  ck_assert_str_eq (still, "");
  /* Watch time (1 s) after the restarted runs came up, then the next batch. */
  fx_run (1000);
  g_autofree gchar *second = fx_take_log ();
  ck_assert_str_eq (second, "restart 2, restart 3");
  fx_run (5000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_FORWARD));
  g_autofree gchar *iev = fx_instance_events (key);
  /* The second batch began only after both of the first were done. */
  const gchar *next = strstr (iev, "2:UPDATING");
  ck_assert_ptr_nonnull (next);
  for (gint32 i = 0; i < 4; i++)
    {
      g_autofree gchar *done = g_strdup_printf ("%d:UPDATED", i);
      const gchar *at = strstr (iev, done);
      ck_assert_msg (at != NULL, "%s", iev);
      ck_assert_msg (i < 2 ? at < next : at > next, "%s", iev);
    }
  g_autofree gchar *rest = fx_take_log ();
  ck_assert_str_eq (rest, ""); /* instance 4 lies outside the scope */
  ck_assert_uint_eq (scripted_runtime_running (fx.rt, fx.job_id), 5);
}
END_TEST

/* A restart that does not come back counts as a failure and rolls back. */
START_TEST (rolling_restart_failure_rolls_back)
{
  fx_create_job (3);
  scripted_runtime_behave (fx.rt, 1, fx.v1, SCRIPT_CRASH);
  scripted_runtime_cause (fx.rt, 1, "exit status 2");
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v1", 3);
  g_object_set (r->settings, "restartInstances", TRUE, NULL);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);

  fx_run (20000);
  g_autofree gchar *ev = fx_update_events (key);
  ck_assert_msg (g_str_has_prefix (ev, "ROLLING_FORWARD ROLLING_BACK"), "%s", ev);
  g_autoptr (GPtrArray) events = stg_store_list_update_events (fx.store, fx_update_id (key), NULL);
  ApiJobUpdateEvent *back = events->pdata[1];
  ck_assert_msg (strstr (back->message, "instance 1: ") != NULL, "%s", back->message);
  ck_assert_msg (strstr (back->message, "exit status 2") != NULL, "%s", back->message);
  /* Instance 2 was never restarted. */
  g_autofree gchar *log = fx_take_log ();
  ck_assert_ptr_null (strstr (log, "restart 2"));
}
END_TEST

/* ---- strategies -------------------------------------------------------------- */

/* Strategies: what the runtime is asked to apply after each stretch of the
 * fake clock, then the end. */
typedef struct
{
  gint64 ms;
  const gchar *applies; /* instances, as fx_expect_applies takes them */
} Stretch;

typedef struct
{
  const gchar *what;
  gint32 instances;
  gint32 slow; /* an instance 3 s late to come up, or -1 */
  void (*strategy) (ApiJobUpdateRequest *r);
  Stretch stretches[4]; /* { 0 } ends them */
  gint64 rest_ms;       /* ROLLED_FORWARD after this much more */
} StrategyCase;

static void
queue_of_2 (ApiJobUpdateRequest *r)
{
  fx_set_strategy_queue (r, 2);
}

static void
batches_of_2 (ApiJobUpdateRequest *r)
{
  fx_set_strategy_batch (r, 2, FALSE);
}

static void
sizes_1_then_3 (ApiJobUpdateRequest *r)
{
  static const gint32 sizes[] = { 1, 3 };
  fx_set_strategy_variable (r, sizes, 2, FALSE);
}

static void
legacy_groups_of_2 (ApiJobUpdateRequest *r)
{
  g_object_set (r->settings, "updateGroupSize", 2, "waitForBatchCompletion", TRUE, NULL);
}

static const StrategyCase strategy_cases[] = {
  /* 0 done at 1,100; 1 still starting. */
  { "a queue starts the next as one finishes", 4, 1, queue_of_2, { { 1500, "0 1 2" } }, 10000 },
  /* 1 healthy at 3,000 and stable at 4,000. */
  { "a batch waits for the whole group",
    4,
    1,
    batches_of_2,
    { { 1500, "0 1" }, { 3000, "2 3" } },
    5000 },
  { "variable batch sizes in order, the last repeated",
    8,
    -1,
    sizes_1_then_3,
    { { 1000, "0" }, { 1100, "1 2 3" }, { 1100, "4 5 6" }, { 1100, "7" } },
    2000 },
  /* A batch: 2 waits for slow 0. */
  { "legacy group size and batch completion",
    4,
    0,
    legacy_groups_of_2,
    { { 1500, "0 1" } },
    10000 },
};

START_TEST (strategies_start_instances_in_order)
{
  const StrategyCase *c = &strategy_cases[_i];

  fx_create_job (c->instances);
  if (c->slow >= 0)
    scripted_runtime_delay (fx.rt, c->slow, 3000);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", c->instances);
  c->strategy (r);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);

  for (guint k = 0; k < G_N_ELEMENTS (c->stretches) && c->stretches[k].ms > 0; k++)
    {
      fx_run (c->stretches[k].ms);
      g_autofree gchar *log = fx_take_log ();
      g_autofree gchar *want = fx_expect_applies (c->stretches[k].applies, v2);
      ck_assert_msg (g_str_equal (log, want), "%s, stretch %u: \"%s\", not \"%s\"", c->what, k, log,
                     want);
    }
  fx_run (c->rest_ms);
  ck_assert_msg (fx_status (key) == S (ROLLED_FORWARD), "%s: ends %s", c->what,
                 stg_update_status_name (fx_status (key)));
}
END_TEST

START_TEST (autopause_after_each_batch)
{
  fx_create_job (4);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 4);
  fx_set_strategy_batch (r, 2, TRUE);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);
  g_autoptr (GError) error = NULL;

  fx_run (5000);
  ck_assert_int_eq (fx_status (key), S (ROLL_FORWARD_PAUSED));
  g_autofree gchar *a = fx_take_log ();
  g_autofree gchar *wa = fx_expect_applies ("0 1", v2);
  ck_assert_str_eq (a, wa);
  fx_run (5000);
  g_autofree gchar *none = fx_take_log ();
  ck_assert_str_eq (none, "");

  ck_assert (stg_engine_resume_update (fx.engine, key, "bob", "next", &error));
  fx_run (5000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_FORWARD));
  g_autofree gchar *b = fx_take_log ();
  g_autofree gchar *wb = fx_expect_applies ("2 3", v2);
  ck_assert_str_eq (b, wb);
  g_autofree gchar *ev = fx_update_events (key);
  ck_assert_str_eq (ev, "ROLLING_FORWARD ROLL_FORWARD_PAUSED ROLLING_FORWARD ROLLED_FORWARD");
}
END_TEST

START_TEST (growth_factor_doubles_batches)
{
  fx_create_job (15);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 15);
  fx_set_strategy_batch (r, 1, FALSE);
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
  fx_set_strategy_batch (r, 2, FALSE);
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
  fx_set_strategy_queue (r, 3);
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
  g_autofree gchar *want = fx_expect_applies ("0 1 1 1", v2); /* first try and two retries */
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

/* The runtime's cause of a failure reaches the instance's event and the
 * update's message, which names the failing instance. */
START_TEST (failure_cause_reaches_events_and_message)
{
  static const gchar cause[] = "exit status 3; stderr: cannot bind port 8080";

  fx_create_job (3);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 3);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);
  scripted_runtime_behave (fx.rt, 1, v2, SCRIPT_CRASH);
  scripted_runtime_cause (fx.rt, 1, cause);

  fx_run (20000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_BACK));
  g_autoptr (GPtrArray) iev = stg_store_list_instance_events (fx.store, fx_update_id (key), 0, NULL,
                                                              NULL);
  gboolean seen = FALSE;
  for (guint i = 0; i < iev->len; i++)
    {
      ApiJobInstanceUpdateEvent *ev = iev->pdata[i];
      if (ev->action != API_JOB_UPDATE_ACTION_INSTANCE_UPDATE_FAILED)
        continue;
      ck_assert_int_eq (ev->instanceId, 1);
      ck_assert (ev->__isset_message);
      ck_assert_msg (strstr (ev->message, cause) != NULL, "%s", ev->message);
      seen = TRUE;
    }
  ck_assert (seen);
  g_autoptr (GPtrArray) events = stg_store_list_update_events (fx.store, fx_update_id (key), NULL);
  ApiJobUpdateEvent *back = NULL;
  for (guint i = 0; i < events->len; i++)
    if (((ApiJobUpdateEvent *) events->pdata[i])->status == S (ROLLING_BACK))
      back = events->pdata[i];
  ck_assert_ptr_nonnull (back);
  ck_assert_msg (strstr (back->message, "instance 1: ") != NULL, "%s", back->message);
  ck_assert_msg (strstr (back->message, cause) != NULL, "%s", back->message);
}
END_TEST

START_TEST (threshold_rolls_back_in_reverse_batches)
{
  fx_create_job (9);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 9);
  fx_set_strategy_batch (r, 3, FALSE);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);
  scripted_runtime_behave (fx.rt, 7, v2, SCRIPT_CRASH);

  fx_run (60000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_BACK));
  g_autofree gchar *log = fx_take_log ();
  g_autofree gchar *fwd = fx_expect_applies ("0 1 2 3 4 5 6 7 8", v2);
  g_autofree gchar *back = fx_expect_applies ("8 7 6 5 4 3 2 1 0", fx.v1);
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
  g_autofree gchar *fwd = fx_expect_applies ("0 1 2", v2);
  g_autofree gchar *back = fx_expect_applies ("2 1 0", fx.v1);
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
  fx_set_strategy_queue (r, 1);
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
  tcase_add_test (tc, rolling_restart_goes_batch_by_batch);
  tcase_add_test (tc, rolling_restart_failure_rolls_back);

  CASE ("strategies");
  tcase_add_loop_test (tc, strategies_start_instances_in_order, 0, G_N_ELEMENTS (strategy_cases));
  tcase_add_test (tc, autopause_after_each_batch);
  tcase_add_test (tc, growth_factor_doubles_batches);
  tcase_add_test (tc, pause_between_batches);
  tcase_add_test (tc, min_in_service_is_kept_with_an_unhealthy_instance);

  CASE ("failures");
  tcase_add_test (tc, retries_then_fails_without_rollback);
  tcase_add_test (tc, failure_cause_reaches_events_and_message);
  tcase_add_test (tc, threshold_rolls_back_in_reverse_batches);
  tcase_add_test (tc, rollback_skips_untouched_instances);
  tcase_add_test (tc, rollback_restores_removed_and_removes_added);
  tcase_add_test (tc, failure_during_rollback_fails_the_update);
  tcase_add_test (tc, progress_deadline_counts_as_failure);

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
