/* engine_rollout_test.c: Check suite for what updates and plans tell and
 * check besides their own moves: instance gates (work_gates.c: before and
 * after each instance, retried until they pass or their time is up, a
 * failure counted as a failed instance, the environment the right way
 * round when rolling back, before gates tried again after a restart),
 * waitSecs (gate.c), the notices the engine hands its notifier (every
 * state change of a plan, its stages and their updates, in order, and only
 * once committed), reason codes and the conditions worked out from them
 * (reasons.c, api/conditions.c), and the plan dry run. The fake clock, the
 * scripted runtime and the scripted gate runner drive a real store on a
 * temporary file. */
#include "config.h"

#include <check.h>

#include "api/conditions.h"
#include "common/enums.h"
#include "common/jobkey.h"
#include "engine_fixture.h"
#include "scripted_gates.h"
#include "store/plans.h"

#define P(x) API_ROLLOUT_STATUS_##x
#define U(x) API_JOB_UPDATE_STATUS_##x

static ScriptedGates *gates;

/* ---- a recording notifier ----------------------------------------------------------- */

typedef struct
{
  StgNotifier parent;
  GPtrArray *seen;    /* "event[:stage]:STATUS:reason" */
  GPtrArray *bodies;  /* the JSON of each */
  GPtrArray *pending; /* posted, waiting for their transaction's end: seen, then body */
} Recorder;

static Recorder *recorder;

static void
record (StgNotifier *base, const StgNotice *n)
{
  Recorder *r = (Recorder *) base;

  g_ptr_array_add (r->pending, g_strdup_printf ("%s%s%s:%s:%s", n->event, n->stage ? ":" : "",
                                                n->stage ? n->stage : "", n->status, n->reason));
  g_ptr_array_add (r->pending,
                   stg_notice_to_json (n, "test", r->bodies->len + r->pending->len / 2 + 1, NULL));
}

/* Only the notices of a committed step count. */
static void
record_end (StgNotifier *base, gboolean committed)
{
  Recorder *r = (Recorder *) base;

  for (guint i = 0; committed && i + 1 < r->pending->len; i += 2)
    {
      g_ptr_array_add (r->seen, g_steal_pointer (&r->pending->pdata[i]));
      g_ptr_array_add (r->bodies, g_steal_pointer (&r->pending->pdata[i + 1]));
    }
  g_ptr_array_set_size (r->pending, 0);
}

static void
recorder_free (StgNotifier *base)
{
  Recorder *r = (Recorder *) base;

  g_ptr_array_unref (r->seen);
  g_ptr_array_unref (r->bodies);
  g_ptr_array_unref (r->pending);
  g_free (r);
}

static const StgNotifierOps recorder_ops = { record, record_end, recorder_free };

/* The notices seen of @event ("plan", "stage", "update"; NULL: all), in
 * order, space-separated. */
static gchar *
notices (const gchar *event)
{
  g_autoptr (GString) s = g_string_new (NULL);

  for (guint i = 0; i < recorder->seen->len; i++)
    {
      const gchar *n = recorder->seen->pdata[i];
      if (event == NULL || (g_str_has_prefix (n, event) && n[strlen (event)] == ':'))
        g_string_append_printf (s, "%s%s", s->len ? " " : "", n);
    }
  return g_strdup (s->str);
}

static void
setup (void)
{
  fx_setup ();
  gates = scripted_gates_new (fx.clock);
  stg_engine_set_gate_runner (fx.engine, scripted_gates_runner (gates));
  recorder = g_new0 (Recorder, 1);
  recorder->parent.ops = &recorder_ops;
  recorder->seen = g_ptr_array_new_with_free_func (g_free);
  recorder->bodies = g_ptr_array_new_with_free_func (g_free);
  recorder->pending = g_ptr_array_new_with_free_func (g_free);
  stg_engine_set_notifier (fx.engine, &recorder->parent);
}

static void
teardown (void)
{
  g_clear_pointer (&fx.engine, stg_engine_free);
  g_clear_pointer (&gates, scripted_gates_free);
  stg_notifier_free (&recorder->parent);
  recorder = NULL;
  fx_teardown ();
}

/* ---- building requests ---------------------------------------------------------------- */

/* A gate @name with @retries retries a second apart. */
static ApiRolloutGate *
gate_new (const gchar *name, gint retries)
{
  return g_object_new (API_TYPE_ROLLOUT_GATE, "name", name, "kind", API_ROLLOUT_GATE_KIND_SHELL,
                       "command", "test -f /nowhere", "retries", retries, "retryIntervalSecs", 1,
                       NULL);
}

/* Sets @gate (taken) as the only instance gate @before or after of @r. */
static void
instance_gate (ApiJobUpdateRequest *r, gboolean before, ApiRolloutGate *gate)
{
  g_autoptr (GPtrArray) list = g_ptr_array_new_with_free_func (g_object_unref);
  g_ptr_array_add (list, gate);
  g_object_set (r->settings, before ? "instanceGatesBefore" : "instanceGatesAfter", list, NULL);
}

/* Runs until update @key ends or @ms pass. */
static void
run_update (ApiJobUpdateKey *key, gint64 ms)
{
  for (gint64 t = 0; t < ms && stg_update_status_is_active (fx_status (key)); t += 500)
    fx_run (500);
}

/* The update's instance events' messages that mention @what, joined. */
static gchar *
instance_messages (ApiJobUpdateKey *key, const gchar *what)
{
  g_autoptr (GPtrArray) events = stg_store_list_instance_events (fx.store, fx_update_id (key), 0,
                                                                 NULL, NULL);
  g_autoptr (GString) s = g_string_new (NULL);

  for (guint i = 0; i < events->len; i++)
    {
      ApiJobInstanceUpdateEvent *e = events->pdata[i];
      if (e->__isset_message && e->message && strstr (e->message, what))
        g_string_append_printf (s, "%s%d: %s", s->len ? " | " : "", e->instanceId, e->message);
    }
  return g_strdup (s->str);
}

/* ---- instance gates ------------------------------------------------------------------- */

/* An after gate that fails twice, then passes, on the first instance: it
 * holds that instance until it passes, and the update finishes. */
START_TEST (instance_gate_failing_twice_then_passing_lets_the_update_finish)
{
  fx_create_job (2);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 2);
  instance_gate (r, FALSE, gate_new ("ledgers", 2));
  scripted_gates_script (gates, "ledgers", "fail:2 under-replicated");
  scripted_gates_script (gates, "ledgers", "fail:1 under-replicated");
  scripted_gates_script (gates, "ledgers", "pass:0 under-replicated");
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);

  run_update (key, 60000);
  ck_assert_int_eq (fx_status (key), U (ROLLED_FORWARD));
  /* Three attempts for instance 0, one for instance 1. */
  ck_assert_uint_eq (scripted_gates_attempts (gates, "ledgers"), 4);
  g_autofree gchar *passed = instance_messages (key, "after gate");
  ck_assert_msg (strstr (passed, "0: after gate 'ledgers' passed (attempt 3): 0 under-replicated"),
                 "events: %s", passed);
  ck_assert_msg (strstr (passed, "1: after gate 'ledgers' passed (attempt 1)"), "events: %s",
                 passed);
  ck_assert_int_eq (fx_intent (0), fx_desired (key));
  ck_assert_int_eq (fx_intent (1), fx_desired (key));
  /* Instance 1 began only once instance 0 had passed its gate. */
  g_autofree gchar *ev = fx_instance_events (key);
  ck_assert_str_eq (ev, "0:UPDATING 0:UPDATING 0:UPDATED 1:UPDATING 1:UPDATING 1:UPDATED");
}
END_TEST

/* A before gate that passes on instance 0 and never on instance 1
 * going forward (it waits 5 s, then fails): instance 1 fails without the
 * runtime hearing of the new version, and the update rolls back instance
 * 0 alone; going back, the gate gets the versions the right way round
 * and passes. */
START_TEST (instance_gate_never_passing_fails_the_instance_and_rolls_back)
{
  fx_create_job (2);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 2);
  ApiRolloutGate *g = gate_new ("bookies", 0);
  g_object_set (g, "waitSecs", 5, NULL);
  instance_gate (r, TRUE, g);
  scripted_gates_fail_when (gates, "bookies", "STAGGER_INSTANCE", "1");
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  gint64 v2 = fx_desired (key);

  run_update (key, 60000);
  ck_assert_int_eq (fx_status (key), U (ROLLED_BACK));
  g_autofree gchar *log = fx_take_log ();
  g_autofree gchar *v2_apply = g_strdup_printf ("apply 1 %" G_GINT64_FORMAT, v2);
  ck_assert_msg (strstr (log, v2_apply) == NULL, "instance 1 was told to run v2: %s", log);
  g_autofree gchar *failed = instance_messages (key, "did not pass");
  ck_assert_msg (strstr (failed, "1: failed 1 time; last: before gate 'bookies' failed") &&
                     strstr (failed, "did not pass within 5 s: STAGGER_INSTANCE=1"),
                 "events: %s", failed);
  ck_assert_str_eq (scripted_gates_env (gates, "bookies", "STAGGER_DIRECTION"), "rollback");
  ck_assert_str_eq (scripted_gates_env (gates, "bookies", "STAGGER_FROM_VERSION"), "2");
  ck_assert_str_eq (scripted_gates_env (gates, "bookies", "STAGGER_TO_VERSION"), "1");
  ck_assert_str_eq (scripted_gates_env (gates, "bookies", "STAGGER_INSTANCE"), "0");
  ck_assert_str_eq (scripted_gates_env (gates, "bookies", "STAGGER_GATE_PHASE"), "before");
  ck_assert_str_eq (scripted_gates_env (gates, "bookies", "STAGGER_JOB"), "www/prod/app");
  ck_assert_int_eq (fx_intent (0), fx.v1);
  ck_assert_int_eq (fx_intent (1), fx.v1);
  g_autofree gchar *ev = fx_instance_events (key);
  ck_assert_str_eq (ev, "0:UPDATING 0:UPDATING 0:UPDATED 1:UPDATING 1:UPDATING "
                        "1:UPDATE_FAILED 0:ROLLING_BACK 0:ROLLING_BACK 0:ROLLED_BACK");
  g_autofree gchar *updates = notices ("update");
  ck_assert_str_eq (updates, "update:ROLLING_FORWARD:Started update:ROLLING_BACK:"
                             "FailureThresholdReached update:ROLLED_BACK:RolledBack");
}
END_TEST

/* The message of update @key's last event. */
static gchar *
last_update_message (ApiJobUpdateKey *key)
{
  g_autoptr (GPtrArray) events = stg_store_list_update_events (fx.store, fx_update_id (key), NULL);
  ApiJobUpdateEvent *e = events->pdata[events->len - 1];
  return g_strdup (e->__isset_message && e->message ? e->message : "");
}

/* A before gate that never passes in either direction: the instance it
 * held never changed, so nothing is taken back and the gate is not tried
 * again. The update ends ROLLED_BACK, or with rollback off FAILED, its
 * message naming the gate and its last answer. */
START_TEST (an_instance_that_never_changed_needs_no_rollback)
{
  fx_create_job (2);
  for (gint rollback = 1; rollback >= 0; rollback--)
    {
      g_autoptr (ApiJobUpdateRequest) r = fx_request (rollback ? "v2" : "v3", 2);
      g_object_set (r->settings, "rollbackOnFailure", rollback, NULL);
      instance_gate (r, TRUE, gate_new ("bookies", 1));
      scripted_gates_fail_when (gates, "bookies", "STAGGER_JOB", "www/prod/app");
      g_autoptr (ApiJobUpdateKey) key = fx_start (r);

      run_update (key, 60000);
      g_autofree gchar *message = last_update_message (key);
      g_autofree gchar *ev = fx_instance_events (key);
      g_autofree gchar *log = fx_take_log ();
      ck_assert_str_eq (ev, "0:UPDATING 0:UPDATING 0:UPDATE_FAILED");
      ck_assert_msg (strstr (log, "apply") == NULL, "an instance was told to change: %s", log);
      ck_assert_uint_eq (scripted_gates_attempts (gates, "bookies"), rollback ? 2 : 4);
      ck_assert_str_eq (scripted_gates_env (gates, "bookies", "STAGGER_DIRECTION"), "forward");
      ck_assert_int_eq (fx_intent (0), fx.v1);
      ck_assert_int_eq (fx_intent (1), fx.v1);
      if (rollback)
        {
          ck_assert_int_eq (fx_status (key), U (ROLLED_BACK));
          ck_assert_msg (g_str_has_suffix (message, "; the rollback's cause: bookies said "
                                                    "STAGGER_JOB=www/prod/app"),
                         "message: %s", message);
        }
      else
        {
          ck_assert_int_eq (fx_status (key), U (FAILED));
          ck_assert_msg (strstr (message, "before gate 'bookies' failed (attempt 2): "
                                          "STAGGER_JOB=www/prod/app"),
                         "message: %s", message);
        }
    }
}
END_TEST

/* An after gate that fails tolerated (one failure per instance allowed)
 * restarts the instance, and its gates go again once it is healthy. */
START_TEST (tolerated_after_gate_failure_restarts_the_instance)
{
  fx_create_job (1);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 1);
  g_object_set (r->settings, "maxPerInstanceFailures", 1, NULL);
  instance_gate (r, FALSE, gate_new ("smoke", 0));
  scripted_gates_script (gates, "smoke", "fail:500");
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);

  run_update (key, 60000);
  ck_assert_int_eq (fx_status (key), U (ROLLED_FORWARD));
  ck_assert_uint_eq (scripted_gates_attempts (gates, "smoke"), 2);
  g_autofree gchar *log = fx_take_log ();
  ck_assert_msg (strstr (log, "restart 0"), "no restart: %s", log);
}
END_TEST

static void
seed_v1 (ScriptedRuntime *rt, gpointer data)
{
  (void) data;
  scripted_runtime_seed (rt, fx.job_id, 0, fx.v1, T0);
}

/* staggerd restarts while an instance waits for its before gate: the
 * runtime still has not heard of the new version, and the gate is tried
 * again before it does. */
START_TEST (before_gates_are_tried_again_after_a_restart)
{
  fx_create_job (1);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 1);
  instance_gate (r, TRUE, gate_new ("quiet", 0));
  scripted_gates_script (gates, "quiet", "hang");
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  fx_run (2000);
  g_autofree gchar *before = fx_take_log ();
  ck_assert_str_eq (before, "");

  g_clear_pointer (&fx.engine, stg_engine_free);
  scripted_gates_sweep (gates);
  fx_restart (seed_v1, NULL);
  stg_engine_set_gate_runner (fx.engine, scripted_gates_runner (gates));
  stg_engine_set_notifier (fx.engine, &recorder->parent);
  /* The gate is tried again at once and answers 100 ms later. */
  fx_run (50);
  ck_assert_uint_eq (scripted_gates_attempts (gates, "quiet"), 2);
  g_autofree gchar *held = fx_take_log ();
  ck_assert_msg (strstr (held, "apply") == NULL, "applied before the gate passed: %s", held);
  run_update (key, 30000);
  ck_assert_int_eq (fx_status (key), U (ROLLED_FORWARD));
  ck_assert_uint_eq (scripted_gates_attempts (gates, "quiet"), 2);
}
END_TEST

/* Bad instance gates are refused when the update starts. */
START_TEST (bad_instance_gates_are_refused)
{
  fx_create_job (1);
  static const struct
  {
    const gchar *command;
    gint wait;
    const gchar *error;
  } cases[] = {
    { "", 0, "instanceGatesAfter[0].command is missing" },
    { "curl {{ports[admin]}}", 0, "names port 'admin'" },
    { "echo {{cluster}}", 0, "no {{cluster}}" },
    { "echo {{nope}}", 0, "unknown template {{nope}}" },
    { "true", 100000, "waitSecs must be between 1 and 86400" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 1);
      ApiRolloutGate *g = gate_new ("g", 0);
      g_object_set (g, "command", cases[i].command, NULL);
      if (cases[i].wait)
        g_object_set (g, "waitSecs", cases[i].wait, NULL);
      instance_gate (r, FALSE, g);
      g_autoptr (GError) error = NULL;
      g_autoptr (ApiJobUpdateKey) key = stg_engine_start_update (fx.engine, r, "www", NULL, NULL,
                                                                 &error);
      ck_assert_ptr_null (key);
      ck_assert_msg (error && strstr (error->message, cases[i].error), "case %u: %s", i,
                     error ? error->message : "(started)");
    }
}
END_TEST

/* ---- plans: notices, reason codes, conditions, dry runs ------------------------------------ */

static ApiJobKey *
key_of (const gchar *job)
{
  return stg_job_key_new ("www", "prod", job);
}

static ApiTaskConfig *
config_of (const gchar *job, const gchar *data)
{
  g_autoptr (ApiJobKey) key = key_of (job);
  g_autoptr (ApiTaskConfig) c = fx_config (data);
  g_object_set (c, "job", key, NULL);
  return g_steal_pointer (&c);
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

static ApiRolloutStage *
stage_new (const gchar *name, const gchar *data, const gchar *dep)
{
  g_autoptr (ApiJobUpdateRequest) r = fx_request (data, 1);
  g_autoptr (ApiTaskConfig) task = config_of (name, data);
  g_object_set (r, "taskConfig", task, NULL);
  ApiRolloutStage *s = g_object_new (API_TYPE_ROLLOUT_STAGE, "name", name, "request", r, NULL);
  if (dep != NULL)
    g_ptr_array_add (s->dependsOn, g_strdup (dep));
  return s;
}

/* Plan "p": a, then b (whose v2 crashes). */
static ApiRolloutPlan *
two_stage_plan (const gchar *b_data)
{
  ApiRolloutPlan *plan = g_object_new (API_TYPE_ROLLOUT_PLAN, "name", "p", "rollbackOnFailure",
                                       TRUE, NULL);
  g_ptr_array_add (plan->stages, stage_new ("a", "v2", NULL));
  g_ptr_array_add (plan->stages, stage_new ("b", b_data, "a"));
  return plan;
}

static StgPlanRow *
plan_row (const gchar *uid)
{
  StgPlanRow *row = stg_store_get_plan (fx.store, uid, NULL);
  ck_assert_ptr_nonnull (row);
  return row;
}

static gboolean
plan_ended (const gchar *uid)
{
  g_autoptr (StgPlanRow) row = plan_row (uid);
  return stg_rollout_status_is_terminal (row->status);
}

/* The plan's (stage NULL) or a stage's conditions, "Type=Status/Reason". */
static gchar *
conditions_of (const gchar *uid, const gchar *stage)
{
  g_autoptr (StgPlanRow) row = plan_row (uid);
  g_autoptr (GPtrArray) events = NULL, results = NULL;
  ck_assert (stg_store_list_plan_events (fx.store, row->id, &events, &results, NULL));
  g_autoptr (GArray) changes = stg_conditions_plan_changes (events, stage);
  g_autoptr (GPtrArray) list = stg_conditions_build (stage ? STG_CONDITIONS_STAGE
                                                           : STG_CONDITIONS_PLAN,
                                                     (StgStatusChange *) changes->data,
                                                     changes->len);
  g_autoptr (GString) s = g_string_new (NULL);
  for (guint i = 0; i < list->len; i++)
    {
      ApiCondition *c = list->pdata[i];
      g_string_append_printf (s, "%s%s=%s/%s", i ? " " : "", c->type, c->status, c->reason);
    }
  return g_strdup (s->str);
}

/* A plan whose second stage fails: the notifier hears every state change
 * of the plan and its stages, in the order the store recorded them, each
 * with its reason code; the conditions say what happened. */
START_TEST (a_plan_that_rolls_back_tells_every_change_in_order)
{
  create_job ("a", 1);
  create_job ("b", 1);
  g_autoptr (ApiRolloutPlan) plan = two_stage_plan ("v2");
  g_autoptr (ApiTaskConfig) broken = config_of ("b", "v2");
  gint64 bad = 0;
  ck_assert (stg_store_put_config (fx.store, broken, &bad, NULL, NULL));
  scripted_runtime_behave (fx.rt, 0, bad, SCRIPT_CRASH);
  g_ptr_array_set_size (recorder->seen, 0);
  g_autoptr (GError) error = NULL;
  g_autofree gchar *uid = stg_engine_start_plan (fx.engine, plan, "alice", "go", &error);
  ck_assert_msg (uid != NULL, "start: %s", error ? error->message : "");
  for (gint i = 0; i < 200 && !plan_ended (uid); i++)
    fx_run (500);

  g_autoptr (StgPlanRow) row = plan_row (uid);
  ck_assert_int_eq (row->status, P (ROLLED_BACK));
  ck_assert_str_eq (row->reason_code, "RolledBack");
  /* The notices are the plan's events, in the same order. */
  g_autoptr (GPtrArray) events = NULL, results = NULL;
  ck_assert (stg_store_list_plan_events (fx.store, row->id, &events, &results, NULL));
  g_autoptr (GString) stored = g_string_new (NULL);
  for (guint i = 0; i < events->len; i++)
    {
      ApiRolloutEvent *e = events->pdata[i];
      g_string_append_printf (stored, "%s%s%s%s:%s:%s", i ? " " : "",
                              e->__isset_stage ? "stage:" : "plan",
                              e->__isset_stage ? e->stage : "", "",
                              stg_rollout_status_name (e->status), e->reasonCode);
    }
  g_autoptr (GString) told = g_string_new (NULL);
  for (guint i = 0; i < recorder->seen->len; i++)
    if (!g_str_has_prefix (recorder->seen->pdata[i], "update:"))
      g_string_append_printf (told, "%s%s", told->len ? " " : "",
                              (gchar *) recorder->seen->pdata[i]);
  ck_assert_str_eq (told->str, stored->str);
  ck_assert_str_eq (told->str, "plan:PENDING:Started plan:ROLLING_FORWARD:StageUpdating "
                               "stage:a:ROLLING_FORWARD:Updating stage:a:DONE:Done "
                               "stage:b:ROLLING_FORWARD:Updating stage:b:FAILED:UpdateFailed "
                               "plan:ROLLING_BACK:StageFailed stage:b:ROLLED_BACK:RolledBack "
                               "stage:a:ROLLING_BACK:RollingBack stage:a:ROLLED_BACK:RolledBack "
                               "plan:ROLLED_BACK:RolledBack");
  /* Each body names the plan, and the stage and its job. */
  const gchar *body = NULL;
  for (guint i = 0; i < recorder->seen->len && body == NULL; i++)
    if (g_str_equal (recorder->seen->pdata[i], "stage:b:FAILED:UpdateFailed"))
      body = recorder->bodies->pdata[i];
  ck_assert_ptr_nonnull (body);
  ck_assert_msg (strstr (body, "\"event\":\"stage\"") && strstr (body, "\"stage\":\"b\"") &&
                     strstr (body, "\"status\":\"FAILED\"") &&
                     strstr (body, "\"previous_status\":\"ROLLING_FORWARD\"") &&
                     strstr (body, "\"reason\":\"UpdateFailed\"") &&
                     strstr (body, "\"key\":\"www/prod/b\""),
                 "body: %s", body);
  g_autofree gchar *pc = conditions_of (uid, NULL);
  ck_assert_str_eq (pc, "Progressing=False/RolledBack Complete=False/RolledBack "
                        "Failed=True/StageFailed");
  g_autofree gchar *ac = conditions_of (uid, "a");
  ck_assert_str_eq (ac, "Progressing=False/RolledBack Complete=False/RolledBack "
                        "Failed=False/RolledBack");
  g_autofree gchar *bc = conditions_of (uid, "b");
  ck_assert_str_eq (bc, "Progressing=False/RolledBack Complete=False/RolledBack "
                        "Failed=True/UpdateFailed");
}
END_TEST

/* A step that does not reach the store tells nothing. */
START_TEST (nothing_is_told_of_a_change_that_was_not_stored)
{
  fx_create_job (1);
  g_ptr_array_set_size (recorder->seen, 0);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 1);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  g_autofree gchar *started = notices (NULL);
  ck_assert_str_eq (started, "update:ROLLING_FORWARD:Started");
  /* A pause whose step fails in the store is not told. */
  stg_store_fail_commit (fx.store, 1);
  g_autoptr (GError) error = NULL;
  ck_assert (!stg_engine_pause_update (fx.engine, key, "bob", NULL, &error));
  g_autofree gchar *after = notices (NULL);
  ck_assert_str_eq (after, "update:ROLLING_FORWARD:Started");
  run_update (key, 30000);
  g_autofree gchar *done = notices (NULL);
  ck_assert_str_eq (done, "update:ROLLING_FORWARD:Started update:ROLLED_FORWARD:RolledForward");
}
END_TEST

/* The dry run: nothing would change on a system that runs the plan
 * already; a stage whose job runs something else would change it. */
START_TEST (plan_diff_tells_which_stages_would_change)
{
  create_job ("a", 1);
  create_job ("b", 1);
  g_autoptr (ApiRolloutPlan) same = g_object_new (API_TYPE_ROLLOUT_PLAN, "name", "p", NULL);
  g_ptr_array_add (same->stages, stage_new ("a", "v1", NULL));
  g_ptr_array_add (same->stages, stage_new ("b", "v1", "a"));
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiGetRolloutPlanDiffResult) none = stg_engine_plan_diff (fx.engine, same, &error);
  ck_assert_msg (none != NULL, "diff: %s", error ? error->message : "");
  ck_assert_uint_eq (none->stages->len, 2);
  for (guint i = 0; i < 2; i++)
    {
      ApiRolloutStageDiff *d = none->stages->pdata[i];
      ck_assert (!d->changes);
      ck_assert_int_eq (d->currentVersion, 1);
      ck_assert_uint_eq (g_hash_table_size (d->diff->unchanged), 1);
    }
  g_autoptr (ApiRolloutPlan) other = two_stage_plan ("v3");
  g_autoptr (ApiGetRolloutPlanDiffResult) some = stg_engine_plan_diff (fx.engine, other, &error);
  ck_assert_msg (some != NULL, "diff: %s", error ? error->message : "");
  ApiRolloutStageDiff *b = some->stages->pdata[1];
  ck_assert_str_eq (b->name, "b");
  ck_assert (b->changes);
  ck_assert_uint_eq (g_hash_table_size (b->diff->update), 1);
  /* Nothing was started or stored. */
  ck_assert_uint_eq (stg_engine_active_plans (fx.engine), 0);
  ck_assert_uint_eq (stg_engine_active_updates (fx.engine), 0);
  g_autoptr (GPtrArray) plans = stg_store_list_plans (fx.store, NULL, FALSE, 0, 10, NULL);
  ck_assert_uint_eq (plans->len, 0);
  /* A bad plan is refused as startRolloutPlan refuses it. */
  g_autoptr (ApiRolloutPlan) bad = two_stage_plan ("v2");
  g_object_set (bad, "name", "no spaces please", NULL);
  g_autoptr (GError) refused = NULL;
  ck_assert_ptr_null (stg_engine_plan_diff (fx.engine, bad, &refused));
  ck_assert (g_error_matches (refused, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID));
}
END_TEST

/* Plan variables are recorded with the plan, and bad ones refused. */
START_TEST (plan_variables_are_recorded_and_checked)
{
  create_job ("a", 1);
  create_job ("b", 1);
  g_autoptr (ApiRolloutPlan) plan = two_stage_plan ("v2");
  g_autoptr (GHashTable) vars = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_hash_table_insert (vars, g_strdup ("version"), g_strdup ("0.10"));
  g_object_set (plan, "variables", vars, NULL);
  g_autoptr (GError) error = NULL;
  g_autofree gchar *uid = stg_engine_start_plan (fx.engine, plan, "alice", NULL, &error);
  ck_assert_msg (uid != NULL, "start: %s", error ? error->message : "");
  g_autoptr (StgPlanRow) row = plan_row (uid);
  ck_assert (row->plan->__isset_variables);
  ck_assert_str_eq (g_hash_table_lookup (row->plan->variables, "version"), "0.10");
  ck_assert (stg_engine_abort_plan (fx.engine, uid, "alice", NULL, NULL));

  g_hash_table_insert (vars, g_strdup ("9lives"), g_strdup ("x"));
  g_autoptr (ApiRolloutPlan) bad = two_stage_plan ("v2");
  g_object_set (bad, "variables", vars, NULL);
  g_autoptr (GError) refused = NULL;
  ck_assert_ptr_null (stg_engine_start_plan (fx.engine, bad, "alice", NULL, &refused));
  ck_assert_msg (strstr (refused->message, "'9lives' is not a variable name"), "%s",
                 refused->message);
}
END_TEST

/* An update's conditions, from its events: a failure stays Failed once
 * it rolled back, with the failure's reason. */
START_TEST (update_conditions_follow_its_events)
{
  fx_create_job (1);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 1);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  scripted_runtime_behave (fx.rt, 0, fx_desired (key), SCRIPT_CRASH);
  run_update (key, 30000);
  ck_assert_int_eq (fx_status (key), U (ROLLED_BACK));
  g_autoptr (GPtrArray) events = stg_store_list_update_events (fx.store, fx_update_id (key), NULL);
  g_autoptr (GArray) changes = stg_conditions_update_changes (events);
  g_autoptr (GPtrArray) list = stg_conditions_build (STG_CONDITIONS_UPDATE,
                                                     (StgStatusChange *) changes->data,
                                                     changes->len);
  ck_assert_uint_eq (list->len, 3);
  ApiCondition *progressing = list->pdata[0], *complete = list->pdata[1], *failed = list->pdata[2];
  ck_assert_str_eq (progressing->type, "Progressing");
  ck_assert_str_eq (progressing->status, "False");
  ck_assert_str_eq (progressing->reason, "RolledBack");
  ck_assert_str_eq (complete->status, "False");
  ck_assert_str_eq (failed->type, "Failed");
  ck_assert_str_eq (failed->status, "True");
  ck_assert_str_eq (failed->reason, "FailureThresholdReached");
  ck_assert_msg (strstr (failed->message, "failure threshold reached"), "%s", failed->message);
  /* It turned Failed when it started rolling back. */
  ApiJobUpdateEvent *back = events->pdata[1];
  ck_assert_int_eq (back->status, U (ROLLING_BACK));
  ck_assert_int_eq (failed->lastTransitionTimeMs, back->timestampMs);
  /* Reason codes as stagger(1) lists them. */
  ck_assert_str_eq (stg_update_reason (U (ROLL_FORWARD_PAUSED), U (ROLLING_FORWARD), TRUE, NULL),
                    "PausedByUser");
  ck_assert_str_eq (stg_update_reason (U (ROLLING_FORWARD), U (ROLL_FORWARD_PAUSED), TRUE, NULL),
                    "Resumed");
  ck_assert_str_eq (stg_update_reason (U (ROLLING_BACK), U (ROLLING_FORWARD), FALSE,
                                       "gate 'x' failed: 500"),
                    "GateFailed");
  ck_assert_str_eq (stg_update_reason (U (ROLLING_BACK), U (ROLLING_FORWARD), TRUE, "by hand"),
                    "RollbackRequested");
  ck_assert_str_eq (stg_update_reason (U (ROLL_FORWARD_AWAITING_PULSE), -1, TRUE, NULL), "Started");
  ck_assert_str_eq (stg_update_reason (U (ROLL_FORWARD_AWAITING_PULSE), U (ROLLING_FORWARD), FALSE,
                                       NULL),
                    "AwaitingPulse");
}
END_TEST

static Suite *
suite (void)
{
  Suite *s = suite_create ("engine_rollout");
  TCase *tc = tcase_create ("rollouts");

  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_set_timeout (tc, 60);
  tcase_add_test (tc, instance_gate_failing_twice_then_passing_lets_the_update_finish);
  tcase_add_test (tc, instance_gate_never_passing_fails_the_instance_and_rolls_back);
  tcase_add_test (tc, an_instance_that_never_changed_needs_no_rollback);
  tcase_add_test (tc, tolerated_after_gate_failure_restarts_the_instance);
  tcase_add_test (tc, before_gates_are_tried_again_after_a_restart);
  tcase_add_test (tc, bad_instance_gates_are_refused);
  tcase_add_test (tc, a_plan_that_rolls_back_tells_every_change_in_order);
  tcase_add_test (tc, nothing_is_told_of_a_change_that_was_not_stored);
  tcase_add_test (tc, plan_diff_tells_which_stages_would_change);
  tcase_add_test (tc, plan_variables_are_recorded_and_checked);
  tcase_add_test (tc, update_conditions_follow_its_events);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  SRunner *sr = srunner_create (suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  return failed == 0 ? 0 : 1;
}
