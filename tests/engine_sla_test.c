/* engine_sla_test.c: Check suite for SLA policies (src/engine/sla.c): the
 * checks made at submission (Aurora's rules), SLA-aware updates under
 * count and percentage policies, which never leave fewer active instances
 * (RUNNING for the policy's duration) than the policy asks and still
 * finish, and under a coordinator (a scripted one) asked again, with a
 * timeout and a back-off, until it allows. A fake clock and a scripted
 * runtime drive a real store on a temporary file (engine_fixture.c). */
#include "config.h"

#include <check.h>

#include <string.h>

#include "common/enums.h"
#include "engine_fixture.h"

#define DURATION_S 5

/* The fixture with SLA limits that small jobs pass. */
static void
setup (void)
{
  fx_setup ();
  stg_engine_limits_init (&fx.limits);
  fx.limits.sla_min_instances = 1;
  fx.limits.sla_max_duration_secs = 600;
  fx.limits.sla_retry_min_ms = 1000;
  fx.limits.sla_retry_max_ms = 4000;
  fx.custom_limits = TRUE;
  fx_restart (NULL, NULL);
}

/* A production config of the fixture's job with @policy (nullable). */
static ApiTaskConfig *
prod_config (const gchar *data, ApiSlaPolicy *policy)
{
  ApiTaskConfig *task = fx_config (data);

  g_object_set (task, "tier", "preferred", NULL);
  if (policy != NULL)
    g_object_set (task, "slaPolicy", policy, NULL);
  return task;
}

static ApiSlaPolicy *
count_policy (gint64 count, gint64 secs)
{
  g_autoptr (ApiCountSlaPolicy) c = g_object_new (API_TYPE_COUNT_SLA_POLICY, "count", count,
                                                  "durationSecs", secs, NULL);
  return g_object_new (API_TYPE_SLA_POLICY, "countSlaPolicy", c, NULL);
}

static ApiSlaPolicy *
percentage_policy (gdouble percentage, gint64 secs)
{
  g_autoptr (ApiPercentageSlaPolicy) p = g_object_new (API_TYPE_PERCENTAGE_SLA_POLICY, "percentage",
                                                       percentage, "durationSecs", secs, NULL);
  return g_object_new (API_TYPE_SLA_POLICY, "percentageSlaPolicy", p, NULL);
}

static ApiSlaPolicy *
coordinator_policy (const gchar *url)
{
  g_autoptr (ApiCoordinatorSlaPolicy) c = g_object_new (API_TYPE_COORDINATOR_SLA_POLICY,
                                                        "coordinatorUrl", url, "statusKey", "drain",
                                                        NULL);
  return g_object_new (API_TYPE_SLA_POLICY, "coordinatorSlaPolicy", c, NULL);
}

/* createJob of @task on @count instances: NULL when done, else the
 * error's message (to free). */
static gchar *
create (ApiTaskConfig *task, gint32 count)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiJobConfiguration) job = g_object_new (API_TYPE_JOB_CONFIGURATION, "key", task->job,
                                                      "taskConfig", task, "instanceCount", count,
                                                      NULL);

  if (stg_engine_create_job (fx.engine, job, "www", &error))
    {
      g_autoptr (StgJobRow) row = stg_store_get_job (fx.store, fx.key, NULL);
      fx.job_id = row->id;
      return NULL;
    }
  return g_strdup (error->message);
}

/* ---- checks at submission ---------------------------------------------------------- */

typedef struct
{
  const gchar *tier;
  ApiSlaPolicy *(*policy) (void);
  gint32 instances;
  const gchar *refused; /* NULL: accepted */
} SubmitCase;

static ApiSlaPolicy *
count_2 (void)
{
  return count_policy (2, 60);
}
static ApiSlaPolicy *
count_3 (void)
{
  return count_policy (3, 60);
}
static ApiSlaPolicy *
count_long (void)
{
  return count_policy (1, 601);
}
static ApiSlaPolicy *
pct_50 (void)
{
  return percentage_policy (50, 60);
}
static ApiSlaPolicy *
pct_80 (void)
{
  return percentage_policy (80, 60);
}
static ApiSlaPolicy *
pct_odd (void)
{
  return percentage_policy (101, 60);
}
static ApiSlaPolicy *
coord (void)
{
  return coordinator_policy ("http://127.0.0.1:9/sla");
}
static ApiSlaPolicy *
coord_bad (void)
{
  return coordinator_policy ("ftp://example.com/");
}
static ApiSlaPolicy *
empty (void)
{
  return g_object_new (API_TYPE_SLA_POLICY, NULL);
}

static const SubmitCase submit_cases[] = {
  { "preferred", count_2, 3, NULL },
  { "preferred", pct_50, 3, NULL },
  { "preferred", coord, 1, NULL },
  { "preemptible", count_2, 3, "slaPolicy: Tier 'preemptible' does not support SlaPolicy." },
  { "preferred", count_3, 3,
    "slaPolicy: Current CountSlaPolicy: count=3 will not allow any instances to be killed. "
    "Must be less than instanceCount=3." },
  { "preferred", pct_80, 3,
    "slaPolicy: Current PercentageSlaPolicy: percentage=80.000000 will "
    "not allow any instances to be killed. Must be less than 66.666667." },
  { "preferred", count_long, 3,
    "slaPolicy: CountSlaPolicy: durationSecs=601 must be less than cluster-wide maximum of 600 "
    "secs." },
  { "preferred", pct_odd, 3, "slaPolicy: PercentageSlaPolicy: percentage must be from 0 to 100" },
  { "preferred", coord_bad, 3, "is not an http:// or https:// URL" },
  { "preferred", empty, 3, "slaPolicy: give exactly one of" },
};

START_TEST (policies_are_checked_as_aurora_does)
{
  const SubmitCase *c = &submit_cases[_i];
  g_autoptr (ApiSlaPolicy) policy = c->policy ();
  g_autoptr (ApiTaskConfig) task = prod_config ("v1", policy);
  g_object_set (task, "tier", c->tier, NULL);
  g_autofree gchar *refused = create (task, c->instances);

  if (c->refused == NULL)
    ck_assert_msg (refused == NULL, "refused: %s", refused);
  else
    ck_assert_msg (refused != NULL && strstr (refused, c->refused) != NULL, "%s: got %s",
                   c->refused, refused ? refused : "accepted");
}
END_TEST

START_TEST (count_policies_need_enough_instances)
{
  /* Aurora's -min_required_instances_for_sla_check, for count and
   * percentage; a coordinator decides for any job. */
  fx.limits.sla_min_instances = 20;
  fx_restart (NULL, NULL);
  g_autoptr (ApiSlaPolicy) policy = count_policy (2, 60);
  g_autoptr (ApiTaskConfig) task = prod_config ("v1", policy);
  g_autofree gchar *refused = create (task, 3);
  ck_assert_str_eq (refused, "description.taskConfig.slaPolicy: Job with fewer than 20 instances "
                             "cannot have Percentage/Count SlaPolicy.");
  g_autoptr (ApiSlaPolicy) c = coord ();
  g_object_set (task, "slaPolicy", c, NULL);
  g_autofree gchar *ok = create (task, 3);
  ck_assert_msg (ok == NULL, "refused: %s", ok);
}
END_TEST

/* ---- SLA-aware updates ------------------------------------------------------------ */

/* The fewest active instances (RUNNING for DURATION_S) seen at any change
 * of a slot. */
static guint fewest_active;

static void
count_active (gpointer data)
{
  (void) data;
  gint64 now = stg_clock_now_ms (fx.clock);
  guint active = 0;
  g_autoptr (GArray) rows = stg_store_list_instances (fx.store, fx.job_id, NULL);

  for (guint i = 0; rows != NULL && i < rows->len; i++)
    {
      StgTaskObservation obs = { 0 };
      stg_runtime_observe (scripted_runtime_base (fx.rt), fx.job_id,
                           g_array_index (rows, StgInstanceRow, i).instance_id, &obs);
      if (obs.phase == STG_TASK_RUNNING && now - obs.healthy_since_ms >= DURATION_S * 1000)
        active++;
    }
  fewest_active = MIN (fewest_active, active);
}

static gint update_for (ApiSlaPolicy *policy, gint64 secs, gint32 n, gint32 parallel,
                        gboolean sla_aware, ApiJobUpdateKey **key_out);

/* A job of @n instances under @policy, each RUNNING long enough to count;
 * then an update of them all to v2, Queue(@parallel), SLA-aware or not.
 * Returns the update's end, with fewest_active. */
static gint
update_under (ApiSlaPolicy *policy, gint32 n, gint32 parallel, gboolean sla_aware,
              ApiJobUpdateKey **key_out)
{
  return update_for (policy, DURATION_S, n, parallel, sla_aware, key_out);
}

/* The same with instances that must run for @secs to count. */
static gint
update_for (ApiSlaPolicy *policy, gint64 secs, gint32 n, gint32 parallel, gboolean sla_aware,
            ApiJobUpdateKey **key_out)
{
  g_autoptr (ApiTaskConfig) v1 = prod_config ("v1", policy);
  g_autofree gchar *refused = create (v1, n);
  ck_assert_msg (refused == NULL, "refused: %s", refused);
  fx_run (1000 + secs * 1000);

  g_autoptr (ApiTaskConfig) v2 = prod_config ("v2", policy);
  g_autoptr (ApiJobUpdateRequest) req = fx_request ("v2", n);
  g_object_set (req, "taskConfig", v2, NULL);
  fx_set_strategy_queue (req, parallel);
  g_object_set (req->settings, "slaAware", sla_aware, NULL);
  fewest_active = G_MAXUINT;
  scripted_runtime_on_change (fx.rt, count_active, NULL);
  ApiJobUpdateKey *key = fx_start (req);
  for (gint i = 0; i < 1200 && stg_update_status_is_active (fx_status (key)); i++)
    fx_run (MAX (500, secs * 10));
  *key_out = key;
  return fx_status (key);
}

/* An update event of @key's that contains @text. */
static gboolean
has_event (ApiJobUpdateKey *key, const gchar *text)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiJobUpdateQuery) q = g_object_new (API_TYPE_JOB_UPDATE_QUERY, "key", key, NULL);
  g_autoptr (GPtrArray) list = stg_store_query_update_details (fx.store, q, &error);

  ck_assert_ptr_nonnull (list);
  ck_assert_uint_eq (list->len, 1);
  ApiJobUpdateDetails *d = list->pdata[0];
  for (guint i = 0; i < d->updateEvents->len; i++)
    {
      ApiJobUpdateEvent *ev = d->updateEvents->pdata[i];
      if (ev->__isset_message && ev->message != NULL && strstr (ev->message, text) != NULL)
        return TRUE;
    }
  return FALSE;
}

START_TEST (a_count_policy_holds_during_an_sla_aware_update)
{
  g_autoptr (ApiSlaPolicy) policy = count_policy (3, DURATION_S);
  g_autoptr (ApiJobUpdateKey) key = NULL;

  ck_assert_int_eq (update_under (policy, 4, 4, TRUE, &key), API_JOB_UPDATE_STATUS_ROLLED_FORWARD);
  ck_assert_uint_ge (fewest_active, 3);
  ck_assert (has_event (key, "instance 1 waits for its SLA: 2 of 4 tasks would stay active"));
  ck_assert (has_event (key, "its SLA holds"));
  for (gint32 i = 0; i < 4; i++)
    ck_assert_int_eq (fx_intent (i), fx_desired (key));
}
END_TEST

START_TEST (a_percentage_policy_holds_during_an_sla_aware_update)
{
  /* 60 % of 5: three stay active, so two may be down at once. */
  g_autoptr (ApiSlaPolicy) policy = percentage_policy (60, DURATION_S);
  g_autoptr (ApiJobUpdateKey) key = NULL;

  ck_assert_int_eq (update_under (policy, 5, 5, TRUE, &key), API_JOB_UPDATE_STATUS_ROLLED_FORWARD);
  ck_assert_uint_eq (fewest_active, 3);
  ck_assert (has_event (key, "its percentage policy needs 60 %"));
}
END_TEST

START_TEST (without_sla_awareness_the_policy_is_not_applied)
{
  g_autoptr (ApiSlaPolicy) policy = count_policy (3, DURATION_S);
  g_autoptr (ApiJobUpdateKey) key = NULL;

  ck_assert_int_eq (update_under (policy, 4, 4, FALSE, &key), API_JOB_UPDATE_STATUS_ROLLED_FORWARD);
  ck_assert_uint_lt (fewest_active, 3);
  ck_assert (!has_event (key, "waits for its SLA"));
}
END_TEST

START_TEST (the_preferred_tiers_default_applies_without_a_policy)
{
  /* 95 % of 4 lets no instance go: as Aurora, one may. */
  g_autoptr (ApiJobUpdateKey) key = NULL;

  ck_assert_int_eq (update_for (NULL, 1800, 4, 4, TRUE, &key),
                    API_JOB_UPDATE_STATUS_ROLLED_FORWARD);
  ck_assert (has_event (key, "waits for its SLA: 2 of 4 tasks would stay active (RUNNING for 1800 "
                             "s) without instance 1; its percentage policy needs 75 %"));
}
END_TEST

/* ---- coordinators ---------------------------------------------------------------- */

/* A coordinator scripted answer by answer on the fake clock: "yes",
 * "no", or "hang" (never answers); the questions are logged. */
typedef struct
{
  StgGateRunner parent;
  GQueue answers;   /* gchar*, owned */
  GPtrArray *asked; /* "TASK_KEY at MS", owned */
  gboolean busy;    /* a question is open: never two at once */
} Coordinator;

typedef struct
{
  Coordinator *c;
  GCancellable *cancel;
  StgGateDone done;
  gpointer data;
  gboolean yes;
} Question;

static void
reply (gpointer data)
{
  Question *q = data;

  q->c->busy = FALSE;
  if (!g_cancellable_is_cancelled (q->cancel))
    q->done (q->data, q->yes, q->yes ? "{\"drain\": true}" : "{\"drain\": false}");
  g_object_unref (q->cancel);
  g_free (q);
}

static void
coordinator_ask (StgGateRunner *runner, const StgCoordinatorAsk *ask, GCancellable *cancel,
                 StgGateDone done, gpointer data)
{
  Coordinator *c = (Coordinator *) runner;
  g_autofree gchar *answer = g_queue_pop_head (&c->answers);

  ck_assert (!c->busy || answer == NULL);
  ck_assert_str_eq (ask->status_key, "drain");
  g_ptr_array_add (c->asked, g_strdup_printf ("%s at %" G_GINT64_FORMAT, ask->task_key,
                                              (gint64) (stg_clock_now_ms (fx.clock) - T0)));
  if (answer == NULL || g_str_equal (answer, "hang"))
    return; /* the engine's timeout cancels it */
  Question *q = g_new0 (Question, 1);
  q->c = c;
  q->cancel = g_object_ref (cancel);
  q->done = done;
  q->data = data;
  q->yes = g_str_equal (answer, "yes");
  c->busy = TRUE;
  stg_clock_add_timer (fx.clock, 100, reply, q);
}

static void
coordinator_free (StgGateRunner *runner)
{
  Coordinator *c = (Coordinator *) runner;

  g_queue_clear_full (&c->answers, g_free);
  g_ptr_array_unref (c->asked);
  g_free (c);
}

static const StgGateRunnerOps coordinator_ops = { .free = coordinator_free,
                                                  .ask = coordinator_ask };

START_TEST (a_coordinator_is_asked_again_until_it_allows)
{
  Coordinator *c = g_new0 (Coordinator, 1);
  c->parent.ops = &coordinator_ops;
  c->asked = g_ptr_array_new_with_free_func (g_free);
  /* Instance 0: no, no answer at all (timed out), no, then yes; 1: yes. */
  const gchar *const answers[] = { "no", "hang", "no", "yes", "yes" };
  for (guint i = 0; i < G_N_ELEMENTS (answers); i++)
    g_queue_push_tail (&c->answers, g_strdup (answers[i]));
  fx.limits.sla_coordinator_timeout_ms = 5000;
  fx_restart (NULL, NULL);
  stg_engine_set_gate_runner (fx.engine, &c->parent);

  g_autoptr (ApiSlaPolicy) policy = coordinator_policy ("http://127.0.0.1:9/sla");
  g_autoptr (ApiJobUpdateKey) key = NULL;
  ck_assert_int_eq (update_under (policy, 2, 2, TRUE, &key), API_JOB_UPDATE_STATUS_ROLLED_FORWARD);
  /* Asked at once (no, 100 ms later), again after 1 s (no answer: timed
   * out after 5 s), after 2 s (no), after 4 s (the longest wait: yes);
   * instance 1 then at once. */
  g_ptr_array_add (c->asked, NULL);
  g_autofree gchar *asked = g_strjoinv (", ", (gchar **) c->asked->pdata);
  ck_assert_str_eq (asked, "local/www/prod/app/0 at 6000, local/www/prod/app/0 at 7100, "
                           "local/www/prod/app/0 at 14100, local/www/prod/app/0 at 18200, "
                           "local/www/prod/app/1 at 18300");
  ck_assert (has_event (key, "instance 0 waits for its SLA: coordinator http://127.0.0.1:9/sla "
                             "said {\"drain\": false}"));
  ck_assert (has_event (key, "instance 0: its SLA holds"));
  stg_engine_set_gate_runner (fx.engine, NULL);
  stg_gate_runner_free (&c->parent);
}
END_TEST

static Suite *
engine_sla_suite (void)
{
  Suite *s = suite_create ("engine_sla");
  TCase *tc = tcase_create ("submission");

  tcase_add_checked_fixture (tc, setup, fx_teardown);
  tcase_add_loop_test (tc, policies_are_checked_as_aurora_does, 0, G_N_ELEMENTS (submit_cases));
  tcase_add_test (tc, count_policies_need_enough_instances);
  suite_add_tcase (s, tc);

  tc = tcase_create ("updates");
  tcase_set_timeout (tc, 60);
  tcase_add_checked_fixture (tc, setup, fx_teardown);
  tcase_add_test (tc, a_count_policy_holds_during_an_sla_aware_update);
  tcase_add_test (tc, a_percentage_policy_holds_during_an_sla_aware_update);
  tcase_add_test (tc, without_sla_awareness_the_policy_is_not_applied);
  tcase_add_test (tc, the_preferred_tiers_default_applies_without_a_policy);
  tcase_add_test (tc, a_coordinator_is_asked_again_until_it_allows);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  SRunner *sr = srunner_create (engine_sla_suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  return failed == 0 ? 0 : 1;
}
