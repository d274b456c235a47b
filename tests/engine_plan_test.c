/* engine_plan_test.c: Check suite for rollout plans in the engine (plan.c)
 * and the gates between an update's batches (update.c, gate.c): stages in
 * order and in parallel, gates before, after and between batches, retries
 * and timeouts, approvals, pause, abort, rollback in reverse dependency
 * order (automatic and by hand), checks of bad plans, and a restart in the
 * middle, and the plan and stage transition tables. The fake clock, the
 * scripted runtime and a scripted gate runner drive a real store on a
 * temporary file. */
#include "config.h"

#include <check.h>

#include "common/enums.h"
#include "common/jobkey.h"
#include "engine_fixture.h"
#include "scripted_gates.h"
#include "store/plans.h"

#define P(x) API_ROLLOUT_STATUS_##x
#define U(x) API_JOB_UPDATE_STATUS_##x

/* ---- a scripted gate runner (scripted_gates.c) ----------------------------------- */

static ScriptedGates *gates;

static void
script (const gchar *name, const gchar *outcome)
{
  scripted_gates_script (gates, name, outcome);
}

/* The gates attempted so far, as "a b a", and cleared. */
static gchar *
gate_log (void)
{
  return scripted_gates_log (gates);
}

static void
setup (void)
{
  fx_setup ();
  gates = scripted_gates_new (fx.clock);
  stg_engine_set_gate_runner (fx.engine, scripted_gates_runner (gates));
}

static void
teardown (void)
{
  g_clear_pointer (&fx.engine, stg_engine_free);
  g_clear_pointer (&gates, scripted_gates_free);
  fx_teardown ();
}

/* ---- jobs, stages, plans ------------------------------------------------------------ */

static ApiJobKey *
key_of (const gchar *job)
{
  return stg_job_key_new ("www", "prod", job);
}

static ApiTaskConfig *
config_of (const gchar *job, const gchar *data)
{
  g_autoptr (ApiJobKey) key = key_of (job);
  g_autoptr (ApiExecutorConfig) exec = g_object_new (API_TYPE_EXECUTOR_CONFIG, "name", "stagger",
                                                     "data", data, NULL);
  g_autoptr (ApiIdentity) owner = g_object_new (API_TYPE_IDENTITY, "user", "www", NULL);
  return g_object_new (API_TYPE_TASK_CONFIG, "job", key, "owner", owner, "isService", TRUE,
                       "executorConfig", exec, NULL);
}

/* The id config @data of @job has (or will have) in the store. */
static gint64
config_id (const gchar *job, const gchar *data)
{
  g_autoptr (ApiTaskConfig) c = config_of (job, data);
  gint64 id = 0;
  ck_assert (stg_store_put_config (fx.store, c, &id, NULL, NULL));
  return id;
}

static gint64
job_id (const gchar *job)
{
  g_autoptr (ApiJobKey) key = key_of (job);
  g_autoptr (StgJobRow) row = stg_store_get_job (fx.store, key, NULL);
  return row ? row->id : 0;
}

static void
create_job (const gchar *job, gint32 n)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiJobKey) key = key_of (job);
  g_autoptr (ApiTaskConfig) task = config_of (job, "v1");
  g_autoptr (ApiJobConfiguration) jc = g_object_new (API_TYPE_JOB_CONFIGURATION, "key", key,
                                                     "taskConfig", task, "instanceCount", n, NULL);
  ck_assert_msg (stg_engine_create_job (fx.engine, jc, "www", &error), "create: %s",
                 error ? error->message : "");
  fx_run (1000);
}

/* The config id every instance of @job should run, or -1 when they differ
 * (0: no instance). */
static gint64
job_config (const gchar *job)
{
  g_autoptr (GArray) rows = stg_store_list_instances (fx.store, job_id (job), NULL);
  gint64 config = 0;
  for (guint i = 0; rows != NULL && i < rows->len; i++)
    {
      gint64 c = g_array_index (rows, StgInstanceRow, i).config_id;
      if (config != 0 && c != config)
        return -1;
      config = c;
    }
  return config;
}

/* A stage moving @job to config @data on @n instances in batches of one,
 * after the stages named in @deps (space-separated, nullable). */
static ApiRolloutStage *
stage_new (const gchar *name, const gchar *job, const gchar *data, gint32 n, const gchar *deps)
{
  g_autoptr (ApiJobUpdateRequest) r = fx_request (data, n);
  g_autoptr (ApiTaskConfig) task = config_of (job, data);
  g_object_set (r, "taskConfig", task, NULL);
  fx_set_strategy_batch (r, 1, FALSE);
  ApiRolloutStage *s = g_object_new (API_TYPE_ROLLOUT_STAGE, "name", name, "request", r, NULL);
  g_auto (GStrv) names = g_strsplit (deps ? deps : "", " ", -1);
  for (guint i = 0; names[i] != NULL; i++)
    if (names[i][0] != '\0')
      g_ptr_array_add (s->dependsOn, g_strdup (names[i]));
  return s;
}

static ApiRolloutGate *
gate_new (const gchar *name)
{
  return g_object_new (API_TYPE_ROLLOUT_GATE, "name", name, "kind", API_ROLLOUT_GATE_KIND_HTTP,
                       "url", "http://127.0.0.1:1/metrics", NULL);
}

static void
add_gate (GPtrArray *list, const gchar *name)
{
  g_ptr_array_add (list, gate_new (name));
}

static void
add_batch_gate (ApiRolloutStage *s, const gchar *name)
{
  ApiJobUpdateSettings *settings = s->request->settings;
  g_autoptr (GPtrArray) list = g_ptr_array_new_with_free_func (g_object_unref);
  g_ptr_array_add (list, gate_new (name));
  g_object_set (settings, "batchGates", list, NULL);
}

static ApiRolloutPlan *
plan_new (const gchar *name)
{
  return g_object_new (API_TYPE_ROLLOUT_PLAN, "name", name, "rollbackOnFailure", TRUE, NULL);
}

static gchar *
start (ApiRolloutPlan *plan)
{
  g_autoptr (GError) error = NULL;
  gchar *uid = stg_engine_start_plan (fx.engine, plan, "alice", "go", &error);
  ck_assert_msg (uid != NULL, "start: %s", error ? error->message : "");
  return uid;
}

static StgPlanRow *
row_of (const gchar *uid)
{
  g_autoptr (GError) error = NULL;
  StgPlanRow *row = stg_store_get_plan (fx.store, uid, &error);
  ck_assert_msg (row != NULL, "plan: %s", error ? error->message : "");
  return row;
}

static gint
plan_status (const gchar *uid)
{
  g_autoptr (StgPlanRow) row = row_of (uid);
  return row->status;
}

/* "a:DONE b:PENDING" */
static gchar *
stages_text (const gchar *uid)
{
  g_autoptr (StgPlanRow) row = row_of (uid);
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < row->stages->len; i++)
    {
      StgStageRow *st = &g_array_index (row->stages, StgStageRow, i);
      g_string_append_printf (s, "%s%s:%s", i ? " " : "", st->name,
                              stg_rollout_status_name (st->status));
    }
  return g_string_free (s, FALSE);
}

static StgStageRow
stage_row (const gchar *uid, guint idx)
{
  g_autoptr (StgPlanRow) row = row_of (uid);
  StgStageRow copy = g_array_index (row->stages, StgStageRow, idx);
  memset (&g_array_index (row->stages, StgStageRow, idx), 0, sizeof copy);
  return copy;
}

/* Runs until the plan ends or @ms pass. */
static void
run_until_done (const gchar *uid, gint64 ms)
{
  for (gint64 t = 0; t < ms && !stg_rollout_status_is_terminal (plan_status (uid)); t += 500)
    fx_run (500);
}

static gint
update_status_of (const gchar *update_uid)
{
  g_autoptr (StgUpdateRow) u = stg_store_get_update (fx.store, update_uid, NULL);
  ck_assert_ptr_nonnull (u);
  return u->status;
}

static gint64
update_created (const gchar *update_uid)
{
  g_autoptr (StgUpdateRow) u = stg_store_get_update (fx.store, update_uid, NULL);
  ck_assert_ptr_nonnull (u);
  return u->created_ms;
}

/* The plan's events as "STATUS" or "stage:STATUS", space-separated. */
static gchar *
events_text (const gchar *uid)
{
  g_autoptr (StgPlanRow) row = row_of (uid);
  g_autoptr (GPtrArray) events = NULL, results = NULL;
  ck_assert (stg_store_list_plan_events (fx.store, row->id, &events, &results, NULL));
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < events->len; i++)
    {
      ApiRolloutEvent *e = events->pdata[i];
      g_string_append_printf (s, "%s%s%s%s", i ? " " : "", e->__isset_stage ? e->stage : "",
                              e->__isset_stage ? ":" : "", stg_rollout_status_name (e->status));
    }
  return g_string_free (s, FALSE);
}

/* ---- the tests ----------------------------------------------------------------------- */

/* Three stages in a chain, with a gate before the second, after the third
 * and between the first's batches: every job moves, in order. */
START_TEST (chain_rolls_to_done_in_order)
{
  create_job ("bookkeeper", 2);
  create_job ("controller", 2);
  create_job ("segmentstore", 2);
  g_autoptr (ApiRolloutPlan) plan = plan_new ("pravega");
  ApiRolloutStage *bk = stage_new ("bookkeeper", "bookkeeper", "v2", 2, NULL);
  ApiRolloutStage *ctl = stage_new ("controller", "controller", "v2", 2, "bookkeeper");
  ApiRolloutStage *ss = stage_new ("segmentstore", "segmentstore", "v2", 2, "controller");
  add_batch_gate (bk, "between");
  add_gate (ctl->before, "ledgers");
  add_gate (ss->after, "smoke");
  g_ptr_array_add (plan->stages, bk);
  g_ptr_array_add (plan->stages, ctl);
  g_ptr_array_add (plan->stages, ss);
  g_autofree gchar *uid = start (plan);

  fx_run (200);
  ck_assert_int_eq (plan_status (uid), P (ROLLING_FORWARD));
  g_autofree gchar *early = stages_text (uid);
  ck_assert_str_eq (early, "bookkeeper:ROLLING_FORWARD controller:PENDING segmentstore:PENDING");
  run_until_done (uid, 60000);
  ck_assert_int_eq (plan_status (uid), P (DONE));
  g_autofree gchar *st = stages_text (uid);
  ck_assert_str_eq (st, "bookkeeper:DONE controller:DONE segmentstore:DONE");
  g_autofree gchar *log = gate_log ();
  ck_assert_str_eq (log, "between ledgers smoke");
  ck_assert_int_eq (job_config ("bookkeeper"), config_id ("bookkeeper", "v2"));
  ck_assert_int_eq (job_config ("controller"), config_id ("controller", "v2"));
  ck_assert_int_eq (job_config ("segmentstore"), config_id ("segmentstore", "v2"));
  StgStageRow a = stage_row (uid, 0), b = stage_row (uid, 1), c = stage_row (uid, 2);
  ck_assert_int_lt (update_created (a.update_uid), update_created (b.update_uid));
  ck_assert_int_lt (update_created (b.update_uid), update_created (c.update_uid));
  ck_assert (a.prior_known && a.prior_config_id == config_id ("bookkeeper", "v1"));
  ck_assert_int_eq (a.prior_count, 2);
  g_autofree gchar *ev = events_text (uid);
  ck_assert_str_eq (ev, "PENDING ROLLING_FORWARD bookkeeper:ROLLING_FORWARD "
                        "bookkeeper:DONE controller:WAITING_FOR_GATE WAITING_FOR_GATE "
                        "ROLLING_FORWARD controller:ROLLING_FORWARD controller:DONE "
                        "segmentstore:ROLLING_FORWARD segmentstore:WAITING_FOR_GATE "
                        "WAITING_FOR_GATE segmentstore:DONE DONE");
  stg_stage_row_clear (&a);
  stg_stage_row_clear (&b);
  stg_stage_row_clear (&c);
  ck_assert_uint_eq (stg_engine_active_plans (fx.engine), 0);
}
END_TEST

/* Two independent stages run at once; a third waits for both. */
START_TEST (dag_runs_independent_stages_together)
{
  create_job ("a", 2);
  create_job ("b", 3);
  create_job ("c", 1);
  g_autoptr (ApiRolloutPlan) plan = plan_new ("dag");
  g_ptr_array_add (plan->stages, stage_new ("a", "a", "v2", 2, NULL));
  g_ptr_array_add (plan->stages, stage_new ("b", "b", "v2", 3, NULL));
  g_ptr_array_add (plan->stages, stage_new ("c", "c", "v2", 1, "a b"));
  g_autofree gchar *uid = start (plan);

  fx_run (200);
  g_autofree gchar *both = stages_text (uid);
  ck_assert_str_eq (both, "a:ROLLING_FORWARD b:ROLLING_FORWARD c:PENDING");
  /* a (2 instances) ends first; c still waits for b. */
  gboolean seen_a_done_c_pending = FALSE;
  while (!stg_rollout_status_is_terminal (plan_status (uid)))
    {
      fx_run (100);
      g_autofree gchar *now = stages_text (uid);
      if (g_str_equal (now, "a:DONE b:ROLLING_FORWARD c:PENDING"))
        seen_a_done_c_pending = TRUE;
      ck_assert_msg (!g_str_has_suffix (now, "c:ROLLING_FORWARD") || strstr (now, "b:DONE"),
                     "c started before b was done: %s", now);
    }
  ck_assert (seen_a_done_c_pending);
  ck_assert_int_eq (plan_status (uid), P (DONE));
  StgStageRow a = stage_row (uid, 0), b = stage_row (uid, 1), c = stage_row (uid, 2);
  ck_assert_int_eq (update_created (a.update_uid), update_created (b.update_uid));
  ck_assert_int_gt (update_created (c.update_uid), update_created (b.update_uid));
  stg_stage_row_clear (&a);
  stg_stage_row_clear (&b);
  stg_stage_row_clear (&c);
}
END_TEST

/* The third stage's new version crashes: its update rolls itself back, and
 * the two stages done before go back in reverse order, each with an update
 * of its own, to their configs from before the plan. */
START_TEST (failed_stage_rolls_back_finished_stages_in_reverse)
{
  create_job ("bookkeeper", 2);
  create_job ("controller", 2);
  create_job ("segmentstore", 2);
  g_autoptr (ApiRolloutPlan) plan = plan_new ("pravega");
  g_ptr_array_add (plan->stages, stage_new ("bookkeeper", "bookkeeper", "v2", 2, NULL));
  g_ptr_array_add (plan->stages, stage_new ("controller", "controller", "v2", 2, "bookkeeper"));
  g_ptr_array_add (plan->stages, stage_new ("segmentstore", "segmentstore", "v2", 2, "controller"));
  gint64 broken = config_id ("segmentstore", "v2");
  scripted_runtime_behave (fx.rt, 0, broken, SCRIPT_CRASH);
  scripted_runtime_cause (fx.rt, 0, "exit status 3");
  g_autofree gchar *uid = start (plan);

  run_until_done (uid, 60000);
  ck_assert_int_eq (plan_status (uid), P (ROLLED_BACK));
  g_autofree gchar *st = stages_text (uid);
  ck_assert_str_eq (st, "bookkeeper:ROLLED_BACK controller:ROLLED_BACK segmentstore:ROLLED_BACK");
  ck_assert_int_eq (job_config ("bookkeeper"), config_id ("bookkeeper", "v1"));
  ck_assert_int_eq (job_config ("controller"), config_id ("controller", "v1"));
  ck_assert_int_eq (job_config ("segmentstore"), config_id ("segmentstore", "v1"));
  StgStageRow a = stage_row (uid, 0), b = stage_row (uid, 1), c = stage_row (uid, 2);
  ck_assert_int_eq (update_status_of (c.update_uid), U (ROLLED_BACK));
  /* The failed stage's own update took it back: it needed no second one. */
  ck_assert_ptr_null (c.rollback_uid);
  ck_assert_int_eq (update_status_of (b.rollback_uid), U (ROLLED_FORWARD));
  ck_assert_int_eq (update_status_of (a.rollback_uid), U (ROLLED_FORWARD));
  ck_assert_int_lt (update_created (b.rollback_uid), update_created (a.rollback_uid));
  g_autoptr (StgPlanRow) row = row_of (uid);
  ck_assert_msg (strstr (row->reason, "stage 'segmentstore' failed") != NULL &&
                     strstr (row->reason, "exit status 3") != NULL,
                 "reason: %s", row->reason);
  stg_stage_row_clear (&a);
  stg_stage_row_clear (&b);
  stg_stage_row_clear (&c);
}
END_TEST

/* A gate before a stage fails: nothing of that stage changes, and the
 * plan goes back. */
START_TEST (before_gate_failure_changes_nothing)
{
  create_job ("a", 1);
  create_job ("b", 1);
  g_autoptr (ApiRolloutPlan) plan = plan_new ("p");
  ApiRolloutStage *b = stage_new ("b", "b", "v2", 1, "a");
  add_gate (b->before, "ready");
  g_ptr_array_add (plan->stages, stage_new ("a", "a", "v2", 1, NULL));
  g_ptr_array_add (plan->stages, b);
  script ("ready", "fail:3 > 0");
  g_autofree gchar *uid = start (plan);

  run_until_done (uid, 30000);
  ck_assert_int_eq (plan_status (uid), P (ROLLED_BACK));
  StgStageRow sb = stage_row (uid, 1);
  ck_assert_int_eq (sb.status, P (FAILED));
  ck_assert_ptr_null (sb.update_uid);
  ck_assert_str_eq (sb.reason, "gate 'ready' failed: 3 > 0");
  ck_assert_int_eq (job_config ("b"), config_id ("b", "v1"));
  ck_assert_int_eq (job_config ("a"), config_id ("a", "v1"));
  g_autoptr (StgPlanRow) row = row_of (uid);
  ck_assert_str_eq (row->reason, "stage 'b' failed: gate 'ready' failed: 3 > 0");
  /* Every attempt is recorded. */
  g_autoptr (GPtrArray) events = NULL, results = NULL;
  ck_assert (stg_store_list_plan_events (fx.store, row->id, &events, &results, NULL));
  ck_assert_uint_eq (results->len, 1);
  ApiRolloutGateResult *r = results->pdata[0];
  ck_assert_str_eq (r->gate, "ready");
  ck_assert_str_eq (r->phase, "before");
  ck_assert (!r->passed);
  ck_assert_str_eq (r->message, "3 > 0");
  stg_stage_row_clear (&sb);
}
END_TEST

/* A gate after a stage fails with rollbackOnFailure off: that stage still
 * goes back; the one before it stays. */
START_TEST (after_gate_failure_rolls_its_stage_back)
{
  create_job ("a", 1);
  create_job ("b", 2);
  g_autoptr (ApiRolloutPlan) plan = plan_new ("p");
  g_object_set (plan, "rollbackOnFailure", FALSE, NULL);
  ApiRolloutStage *b = stage_new ("b", "b", "v2", 2, "a");
  add_gate (b->after, "smoke");
  g_ptr_array_add (plan->stages, stage_new ("a", "a", "v2", 1, NULL));
  g_ptr_array_add (plan->stages, b);
  script ("smoke", "fail:HTTP 500 Internal Server Error (expected 200)");
  g_autofree gchar *uid = start (plan);

  run_until_done (uid, 30000);
  ck_assert_int_eq (plan_status (uid), P (FAILED));
  g_autofree gchar *st = stages_text (uid);
  ck_assert_str_eq (st, "a:DONE b:ROLLED_BACK");
  ck_assert_int_eq (job_config ("a"), config_id ("a", "v2"));
  ck_assert_int_eq (job_config ("b"), config_id ("b", "v1"));
  g_autoptr (StgPlanRow) row = row_of (uid);
  ck_assert_str_eq (row->reason,
                    "stage 'b' failed: gate 'smoke' failed: HTTP 500 Internal Server Error "
                    "(expected 200)");
}
END_TEST

/* A gate between batches fails: the update fails and rolls back by its own
 * settings, and so does the plan. */
START_TEST (batch_gate_failure_rolls_the_update_back)
{
  create_job ("a", 3);
  g_autoptr (ApiRolloutPlan) plan = plan_new ("p");
  ApiRolloutStage *a = stage_new ("a", "a", "v2", 3, NULL);
  add_batch_gate (a, "errors");
  g_ptr_array_add (plan->stages, a);
  script ("errors", "pass:0.1 <= 1");
  script ("errors", "fail:7 > 1");
  g_autofree gchar *uid = start (plan);

  run_until_done (uid, 30000);
  ck_assert_int_eq (plan_status (uid), P (ROLLED_BACK));
  StgStageRow s = stage_row (uid, 0);
  ck_assert_int_eq (update_status_of (s.update_uid), U (ROLLED_BACK));
  ck_assert_int_eq (job_config ("a"), config_id ("a", "v1"));
  g_autofree gchar *log = gate_log ();
  ck_assert_str_eq (log, "errors errors");
  /* The gate's attempts are the update's events. */
  g_autoptr (StgUpdateRow) u = stg_store_get_update (fx.store, s.update_uid, NULL);
  g_autoptr (GPtrArray) events = stg_store_list_update_events (fx.store, u->id, NULL);
  gboolean seen = FALSE;
  for (guint i = 0; i < events->len; i++)
    {
      ApiJobUpdateEvent *e = events->pdata[i];
      if (e->__isset_message && e->message &&
          g_str_equal (e->message, "gate 'errors' after batch 2 failed (attempt 1 of 1): 7 > 1"))
        seen = TRUE;
    }
  ck_assert (seen);
  stg_stage_row_clear (&s);
}
END_TEST

/* A gate that hangs is timed out, then tried again; the last failure's
 * message reaches the plan's reason. */
START_TEST (hanging_gate_times_out_and_retries)
{
  create_job ("a", 1);
  g_autoptr (ApiRolloutPlan) plan = plan_new ("p");
  ApiRolloutStage *a = stage_new ("a", "a", "v2", 1, NULL);
  ApiRolloutGate *g = gate_new ("slow");
  g_object_set (g, "timeoutSecs", 5, "retries", 1, "retryIntervalSecs", 2, NULL);
  g_ptr_array_add (a->before, g);
  g_ptr_array_add (plan->stages, a);
  script ("slow", "hang");
  script ("slow", "hang");
  g_autofree gchar *uid = start (plan);

  fx_run (4900);
  ck_assert_int_eq (plan_status (uid), P (WAITING_FOR_GATE));
  fx_run (200); /* the first attempt timed out; the next waits 2 s */
  g_autoptr (StgPlanRow) mid = row_of (uid);
  ck_assert_int_eq (mid->status, P (WAITING_FOR_GATE));
  fx_run (7000);
  ck_assert_int_eq (plan_status (uid), P (ROLLED_BACK)); /* nothing had changed */
  g_autofree gchar *log = gate_log ();
  ck_assert_str_eq (log, "slow slow");
  g_autoptr (StgPlanRow) row = row_of (uid);
  ck_assert_str_eq (row->reason, "stage 'a' failed: gate 'slow' failed: timed out after 5 s");
  ck_assert_int_eq (job_config ("a"), config_id ("a", "v1"));
}
END_TEST

/* A stage that needs an approval waits for it, and records who gave it. */
START_TEST (approval_lets_a_stage_go)
{
  g_autoptr (GError) error = NULL;

  create_job ("a", 1);
  g_autoptr (ApiRolloutPlan) plan = plan_new ("p");
  ApiRolloutStage *a = stage_new ("a", "a", "v2", 1, NULL);
  g_object_set (a, "requireApproval", TRUE, NULL);
  g_ptr_array_add (plan->stages, a);
  g_autofree gchar *uid = start (plan);

  fx_run (5000);
  ck_assert_int_eq (plan_status (uid), P (AWAITING_APPROVAL));
  ck_assert_int_eq (job_config ("a"), config_id ("a", "v1"));
  ck_assert (!stg_engine_approve_stage (fx.engine, uid, "nosuch", "bob", NULL, &error));
  ck_assert (g_error_matches (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_NOT_FOUND));
  g_clear_error (&error);
  ck_assert_msg (stg_engine_approve_stage (fx.engine, uid, NULL, "bob", "looks good", &error), "%s",
                 error ? error->message : "");
  ck_assert (!stg_engine_approve_stage (fx.engine, uid, "a", "carol", NULL, &error));
  ck_assert (g_error_matches (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_STATE));
  run_until_done (uid, 30000);
  ck_assert_int_eq (plan_status (uid), P (DONE));
  StgStageRow s = stage_row (uid, 0);
  ck_assert_str_eq (s.approved_by, "bob");
  stg_stage_row_clear (&s);
  g_autofree gchar *ev = events_text (uid);
  ck_assert_str_eq (ev, "PENDING a:AWAITING_APPROVAL AWAITING_APPROVAL a:AWAITING_APPROVAL "
                        "ROLLING_FORWARD a:ROLLING_FORWARD a:DONE DONE");
}
END_TEST

/* A manual update of a job that an active plan has yet to reach is
 * refused, naming the plan, unless it overrides the plan; once the plan
 * has passed the job, it is not. */
START_TEST (manual_update_before_the_plan_reaches_the_job)
{
  g_autoptr (GError) error = NULL;

  create_job ("a", 1);
  create_job ("b", 1);
  g_autoptr (ApiRolloutPlan) plan = plan_new ("p");
  ApiRolloutStage *a = stage_new ("a", "a", "v2", 1, NULL);
  g_object_set (a, "requireApproval", TRUE, NULL);
  g_ptr_array_add (plan->stages, a);
  g_ptr_array_add (plan->stages, stage_new ("b", "b", "v2", 1, "a"));
  g_autofree gchar *uid = start (plan);
  fx_run (1000);
  ck_assert_int_eq (plan_status (uid), P (AWAITING_APPROVAL));

  for (const gchar *const *job = (const gchar *const[]){ "a", "b", NULL }; *job; job++)
    {
      g_autoptr (ApiJobUpdateRequest) r = fx_request ("v3", 1);
      g_autoptr (ApiTaskConfig) task = config_of (*job, "v3");
      g_object_set (r, "taskConfig", task, NULL);
      g_autoptr (ApiJobUpdateKey) k = stg_engine_start_update (fx.engine, r, "bob", NULL, NULL,
                                                               &error);
      ck_assert_msg (k == NULL, "an update of %s before the plan reached it", *job);
      ck_assert (g_error_matches (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_UPDATING));
      g_autofree gchar *want = g_strdup_printf ("rollout plan p (%s) has not reached it yet", uid);
      ck_assert_msg (strstr (error->message, want) != NULL, "%s", error->message);
      g_clear_error (&error);
    }
  /* Overridden, it starts. */
  g_autoptr (ApiJobUpdateRequest) forced = fx_request ("v3", 1);
  g_autoptr (ApiTaskConfig) v3 = config_of ("b", "v3");
  g_object_set (forced, "taskConfig", v3, "overridePlan", TRUE, NULL);
  g_autoptr (ApiJobUpdateKey) fk = fx_start (forced);
  fx_run (10000);
  ck_assert_int_eq (fx_status (fk), U (ROLLED_FORWARD));

  ck_assert (stg_engine_approve_stage (fx.engine, uid, "a", "bob", NULL, &error));
  run_until_done (uid, 30000);
  ck_assert_int_eq (plan_status (uid), P (DONE));
  g_autoptr (ApiJobUpdateRequest) after = fx_request ("v3", 1);
  g_autoptr (ApiTaskConfig) task = config_of ("b", "v3");
  g_object_set (after, "taskConfig", task, NULL);
  g_autoptr (ApiJobUpdateKey) k = fx_start (after);
  ck_assert_ptr_nonnull (k);
}
END_TEST

/* Pause holds the stage's update; resume goes on to the end. */
START_TEST (pause_and_resume)
{
  g_autoptr (GError) error = NULL;

  create_job ("a", 4);
  g_autoptr (ApiRolloutPlan) plan = plan_new ("p");
  g_ptr_array_add (plan->stages, stage_new ("a", "a", "v2", 4, NULL));
  g_autofree gchar *uid = start (plan);

  fx_run (1500);
  ck_assert (stg_engine_pause_plan (fx.engine, uid, "bob", "lunch", &error));
  ck_assert_int_eq (plan_status (uid), P (PAUSED));
  StgStageRow s = stage_row (uid, 0);
  ck_assert_int_eq (update_status_of (s.update_uid), U (ROLL_FORWARD_PAUSED));
  fx_run (20000);
  ck_assert_int_eq (plan_status (uid), P (PAUSED));
  ck_assert (!stg_engine_resume_plan (fx.engine, "nope", "bob", NULL, &error));
  ck_assert (g_error_matches (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_NOT_FOUND));
  g_clear_error (&error);
  ck_assert (stg_engine_resume_plan (fx.engine, uid, "bob", NULL, &error));
  run_until_done (uid, 30000);
  ck_assert_int_eq (plan_status (uid), P (DONE));
  ck_assert_int_eq (update_status_of (s.update_uid), U (ROLLED_FORWARD));
  ck_assert (!stg_engine_pause_plan (fx.engine, uid, "bob", NULL, &error));
  ck_assert (g_error_matches (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_STATE));
  stg_stage_row_clear (&s);
}
END_TEST

/* Abort stops at once and takes nothing back. */
START_TEST (abort_stops_and_undoes_nothing)
{
  g_autoptr (GError) error = NULL;

  create_job ("a", 1);
  create_job ("b", 4);
  g_autoptr (ApiRolloutPlan) plan = plan_new ("p");
  g_ptr_array_add (plan->stages, stage_new ("a", "a", "v2", 1, NULL));
  g_ptr_array_add (plan->stages, stage_new ("b", "b", "v2", 4, "a"));
  g_autofree gchar *uid = start (plan);

  for (gint i = 0; i < 200; i++)
    {
      StgStageRow b = stage_row (uid, 1);
      gboolean going = b.status == P (ROLLING_FORWARD);
      stg_stage_row_clear (&b);
      if (going)
        break;
      fx_run (100);
    }
  fx_run (1500);
  ck_assert (stg_engine_abort_plan (fx.engine, uid, "bob", "stop", &error));
  ck_assert_int_eq (plan_status (uid), P (ABORTED));
  fx_run (30000);
  g_autofree gchar *st = stages_text (uid);
  ck_assert_str_eq (st, "a:DONE b:ABORTED");
  StgStageRow b = stage_row (uid, 1);
  ck_assert_int_eq (update_status_of (b.update_uid), U (ABORTED));
  ck_assert_int_eq (job_config ("a"), config_id ("a", "v2"));
  ck_assert_int_eq (job_config ("b"), -1); /* some moved, some not: as they were */
  ck_assert_uint_eq (stg_engine_active_plans (fx.engine), 0);
  stg_stage_row_clear (&b);
}
END_TEST

/* A plan that is done can still be rolled back by hand; a stage whose job
 * did not exist before the plan goes back by being removed. */
START_TEST (rollback_by_hand_after_done)
{
  g_autoptr (GError) error = NULL;

  create_job ("a", 2);
  g_autoptr (ApiRolloutPlan) plan = plan_new ("p");
  g_ptr_array_add (plan->stages, stage_new ("a", "a", "v2", 2, NULL));
  g_ptr_array_add (plan->stages, stage_new ("fresh", "fresh", "v1", 2, "a"));
  g_autofree gchar *uid = start (plan);

  run_until_done (uid, 30000);
  ck_assert_int_eq (plan_status (uid), P (DONE));
  ck_assert_int_eq (job_config ("fresh"), config_id ("fresh", "v1"));
  ck_assert (stg_engine_rollback_plan (fx.engine, uid, "bob", "bad day", &error));
  run_until_done (uid, 30000);
  ck_assert_int_eq (plan_status (uid), P (ROLLED_BACK));
  ck_assert_int_eq (job_config ("a"), config_id ("a", "v1"));
  ck_assert_int_eq (job_id ("fresh"), 0);
  ck_assert (!stg_engine_rollback_plan (fx.engine, uid, "bob", NULL, &error));
  ck_assert (g_error_matches (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_STATE));
}
END_TEST

/* A stage whose job already runs its config is done at once, without an
 * update or its gates. */
START_TEST (unchanged_stage_is_done_at_once)
{
  create_job ("a", 2);
  g_autoptr (ApiRolloutPlan) plan = plan_new ("p");
  ApiRolloutStage *a = stage_new ("a", "a", "v1", 2, NULL);
  add_gate (a->after, "smoke");
  g_ptr_array_add (plan->stages, a);
  g_autofree gchar *uid = start (plan);

  fx_run (200);
  ck_assert_int_eq (plan_status (uid), P (DONE));
  StgStageRow s = stage_row (uid, 0);
  ck_assert_ptr_null (s.update_uid);
  ck_assert_str_eq (s.reason, "its job already runs this configuration");
  g_autofree gchar *log = gate_log ();
  ck_assert_str_eq (log, "");
  stg_stage_row_clear (&s);
}
END_TEST

static void
seed_all (ScriptedRuntime *rt, gpointer data)
{
  const gchar *const *jobs = data;
  for (guint j = 0; jobs[j] != NULL; j++)
    {
      gint64 id = job_id (jobs[j]);
      g_autoptr (GArray) rows = stg_store_list_instances (fx.store, id, NULL);
      for (guint i = 0; rows && i < rows->len; i++)
        {
          StgInstanceRow *r = &g_array_index (rows, StgInstanceRow, i);
          scripted_runtime_seed (rt, id, r->instance_id, r->config_id, T0);
        }
    }
}

/* A restart while the second of two gates is tried: the first, which
 * passed, is not tried again. */
START_TEST (restart_does_not_rerun_passed_gates)
{
  static const gchar *const jobs[] = { "a", NULL };

  create_job ("a", 1);
  g_autoptr (ApiRolloutPlan) plan = plan_new ("p");
  ApiRolloutStage *a = stage_new ("a", "a", "v2", 1, NULL);
  add_gate (a->before, "first");
  add_gate (a->before, "second");
  g_ptr_array_add (plan->stages, a);
  script ("second", "hang");
  g_autofree gchar *uid = start (plan);

  fx_run (1000);
  g_autofree gchar *before = gate_log ();
  ck_assert_str_eq (before, "first second");
  StgStageRow s = stage_row (uid, 0);
  ck_assert_int_eq (s.gates_passed, 1);
  stg_stage_row_clear (&s);

  g_clear_pointer (&fx.engine, stg_engine_free);
  scripted_gates_sweep (gates);
  fx_restart (seed_all, (gpointer) jobs);
  stg_engine_set_gate_runner (fx.engine, scripted_gates_runner (gates));
  run_until_done (uid, 30000);
  ck_assert_int_eq (plan_status (uid), P (DONE));
  g_autofree gchar *after = gate_log ();
  ck_assert_str_eq (after, "second");
  ck_assert_int_eq (job_config ("a"), config_id ("a", "v2"));
}
END_TEST

static void
refused (ApiRolloutPlan *plan, const gchar *part)
{
  g_autoptr (GError) error = NULL;
  g_autofree gchar *uid = stg_engine_start_plan (fx.engine, plan, "alice", NULL, &error);
  ck_assert_msg (uid == NULL, "accepted a plan that should fail with %s", part);
  ck_assert_msg (strstr (error->message, part) != NULL, "'%s' lacks '%s'", error->message, part);
}

START_TEST (bad_plans_are_refused)
{
  create_job ("a", 1);
  {
    g_autoptr (ApiRolloutPlan) plan = plan_new ("p");
    refused (plan, "plan.stages must hold 1 to 100 stages");
  }
  {
    g_autoptr (ApiRolloutPlan) plan = plan_new ("bad name");
    g_ptr_array_add (plan->stages, stage_new ("a", "a", "v2", 1, NULL));
    refused (plan, "plan.name must be");
  }
  {
    g_autoptr (ApiRolloutPlan) plan = plan_new ("p");
    g_ptr_array_add (plan->stages, stage_new ("a", "a", "v2", 1, NULL));
    g_ptr_array_add (plan->stages, stage_new ("a", "b", "v2", 1, NULL));
    refused (plan, "two stages are named 'a'");
  }
  {
    g_autoptr (ApiRolloutPlan) plan = plan_new ("p");
    g_ptr_array_add (plan->stages, stage_new ("a", "a", "v2", 1, "b"));
    g_ptr_array_add (plan->stages, stage_new ("b", "b", "v2", 1, NULL));
    refused (plan, "plan.stages[0].dependsOn names 'b', which is not an earlier stage");
  }
  {
    g_autoptr (ApiRolloutPlan) plan = plan_new ("p");
    g_ptr_array_add (plan->stages, stage_new ("a", "a", "v2", 1, NULL));
    g_ptr_array_add (plan->stages, stage_new ("again", "a", "v3", 1, NULL));
    refused (plan, "as stage 'a' does: one stage a job");
  }
  {
    g_autoptr (ApiRolloutPlan) plan = plan_new ("p");
    ApiRolloutStage *a = stage_new ("a", "a", "v2", 1, NULL);
    ApiRolloutGate *g = gate_new ("g");
    g_object_set (g, "url", "file:///etc/passwd", NULL);
    g_ptr_array_add (a->before, g);
    g_ptr_array_add (plan->stages, a);
    refused (plan, "plan.stages[0].before[0].url 'file:///etc/passwd' is not an http");
  }
  {
    g_autoptr (ApiRolloutPlan) plan = plan_new ("p");
    ApiRolloutStage *a = stage_new ("a", "a", "v2", 1, NULL);
    ApiRolloutGate *g = gate_new ("g");
    g_object_set (g, "jsonPath", "$.data", "compare", "=<", NULL);
    g_ptr_array_add (a->after, g);
    g_ptr_array_add (plan->stages, a);
    refused (plan, "plan.stages[0].after[0].compare must be one of");
  }
  {
    g_autoptr (ApiRolloutPlan) plan = plan_new ("p");
    ApiRolloutStage *a = stage_new ("a", "a", "v2", 1, NULL);
    fx_set_strategy_queue (a->request, 1);
    add_batch_gate (a, "g");
    g_ptr_array_add (plan->stages, a);
    refused (plan, "plan.stages[0]: request.settings.batchGates need batches");
  }
  {
    g_autoptr (ApiRolloutPlan) plan = plan_new ("p");
    ApiRolloutStage *a = stage_new ("a", "a", "v2", 1, NULL);
    g_ptr_array_add (a->before, g_object_new (API_TYPE_ROLLOUT_GATE, "name", "s", "kind",
                                              API_ROLLOUT_GATE_KIND_SHELL, NULL));
    g_ptr_array_add (plan->stages, a);
    refused (plan, "before[0].command is missing");
  }
  {
    /* A job in an active plan cannot be in a second one. */
    g_autoptr (ApiRolloutPlan) first = plan_new ("p");
    ApiRolloutStage *a = stage_new ("a", "a", "v2", 1, NULL);
    g_object_set (a, "requireApproval", TRUE, NULL);
    g_ptr_array_add (first->stages, a);
    g_autofree gchar *uid = start (first);
    g_autoptr (ApiRolloutPlan) second = plan_new ("q");
    g_ptr_array_add (second->stages, stage_new ("a", "a", "v3", 1, NULL));
    refused (second, "is in active rollout plan p");
    fx_run (200);
    ck_assert_int_eq (plan_status (uid), P (AWAITING_APPROVAL));
  }
}
END_TEST

/* ---- the transition tables ------------------------------------------------------ */

/* The arrows drawn in plan.c, written out again (-1 ends a row): the
 * tables must allow exactly these. */
static const gint plan_arrows[][9] = {
  [P (PENDING)] = { P (WAITING_FOR_GATE), P (AWAITING_APPROVAL), P (ROLLING_FORWARD), P (DONE),
                    P (PAUSED), P (ROLLING_BACK), P (FAILED), P (ABORTED), -1 },
  [P (WAITING_FOR_GATE)] = { P (AWAITING_APPROVAL), P (ROLLING_FORWARD), P (DONE), P (PAUSED),
                             P (ROLLING_BACK), P (FAILED), P (ABORTED), -1 },
  [P (AWAITING_APPROVAL)] = { P (WAITING_FOR_GATE), P (ROLLING_FORWARD), P (DONE), P (PAUSED),
                              P (ROLLING_BACK), P (FAILED), P (ABORTED), -1 },
  [P (ROLLING_FORWARD)] = { P (WAITING_FOR_GATE), P (AWAITING_APPROVAL), P (DONE), P (PAUSED),
                            P (ROLLING_BACK), P (FAILED), P (ABORTED), -1 },
  [P (PAUSED)] = { P (WAITING_FOR_GATE), P (AWAITING_APPROVAL), P (ROLLING_FORWARD),
                   P (ROLLING_BACK), P (ABORTED), -1 },
  [P (ROLLING_BACK)] = { P (ROLLED_BACK), P (FAILED), P (PAUSED), P (ABORTED), -1 },
  [P (DONE)] = { P (ROLLING_BACK), -1 },
  [P (FAILED)] = { P (ROLLING_BACK), -1 },
  [P (ABORTED)] = { P (ROLLING_BACK), -1 },
  [P (ROLLED_BACK)] = { -1 },
};

static const gint stage_arrows[][9] = {
  [P (PENDING)] = { P (AWAITING_APPROVAL), P (WAITING_FOR_GATE), P (ROLLING_FORWARD), P (DONE),
                    P (FAILED), P (ABORTED), -1 },
  [P (AWAITING_APPROVAL)] = { P (WAITING_FOR_GATE), P (ROLLING_FORWARD), P (DONE), P (FAILED),
                              P (ABORTED), -1 },
  [P (WAITING_FOR_GATE)] = { P (ROLLING_FORWARD), P (DONE), P (FAILED), P (ABORTED), -1 },
  [P (ROLLING_FORWARD)] = { P (WAITING_FOR_GATE), P (DONE), P (FAILED), P (ABORTED), -1 },
  [P (DONE)] = { P (ROLLING_BACK), P (ROLLED_BACK), P (FAILED), -1 },
  [P (FAILED)] = { P (ROLLING_BACK), P (ROLLED_BACK), -1 },
  [P (ABORTED)] = { P (ROLLING_BACK), P (ROLLED_BACK), P (FAILED), -1 },
  [P (ROLLING_BACK)] = { P (ROLLED_BACK), P (FAILED), P (ABORTED), -1 },
  [P (ROLLED_BACK)] = { -1 },
  [P (PAUSED)] = { -1 },
};

START_TEST (transition_tables_are_the_drawings)
{
  for (gint stage = 0; stage <= 1; stage++)
    for (gint from = 0; from <= P (PAUSED); from++)
      for (gint to = 0; to <= P (PAUSED); to++)
        {
          const gint *row = stage ? stage_arrows[from] : plan_arrows[from];
          gboolean want = FALSE;
          if (from == to)
            continue; /* not a transition: a new reason only */
          for (guint i = 0; row[i] != -1; i++)
            want |= row[i] == to;
          ck_assert_msg (stg_engine_plan_transition_allowed (stage, from, to) == want,
                         "%s: %s -> %s", stage ? "stage" : "plan", stg_rollout_status_name (from),
                         stg_rollout_status_name (to));
        }
}
END_TEST

static Suite *
engine_plan_suite (void)
{
  Suite *s = suite_create ("engine_plan");
  TCase *tc = tcase_create ("plans");

  tcase_set_timeout (tc, 60);
  tcase_add_checked_fixture (tc, setup, teardown);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, chain_rolls_to_done_in_order);
  tcase_add_test (tc, dag_runs_independent_stages_together);
  tcase_add_test (tc, failed_stage_rolls_back_finished_stages_in_reverse);
  tcase_add_test (tc, before_gate_failure_changes_nothing);
  tcase_add_test (tc, after_gate_failure_rolls_its_stage_back);
  tcase_add_test (tc, batch_gate_failure_rolls_the_update_back);
  tcase_add_test (tc, hanging_gate_times_out_and_retries);
  tcase_add_test (tc, approval_lets_a_stage_go);
  tcase_add_test (tc, manual_update_before_the_plan_reaches_the_job);
  tcase_add_test (tc, pause_and_resume);
  tcase_add_test (tc, abort_stops_and_undoes_nothing);
  tcase_add_test (tc, rollback_by_hand_after_done);
  tcase_add_test (tc, unchanged_stage_is_done_at_once);
  tcase_add_test (tc, restart_does_not_rerun_passed_gates);
  tcase_add_test (tc, bad_plans_are_refused);
  tcase_add_test (tc, transition_tables_are_the_drawings);
  return s;
}

int
main (void)
{
  SRunner *sr = srunner_create (engine_plan_suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  return failed == 0 ? 0 : 1;
}
