/* plan_view_test.c: Check suite for what a rollout plan's details show of
 * its stages' jobs (engine/plan_view.c through api/plan_details.c): a
 * stage not started shows the version its job file brings when the store
 * has it, and none when it is new; an ended plan shows where each stage
 * ended, from its own record, whatever moved its jobs since. The fake
 * clock and the scripted runtime drive a real store on a temporary file. */
#include "config.h"

#include <check.h>

#include "api/plan_details.h"
#include "common/enums.h"
#include "engine_fixture.h"
#include "testutil.h"
#include "store/plans.h"

#define P(x) API_ROLLOUT_STATUS_##x
#define U(x) API_JOB_UPDATE_STATUS_##x

/* A plan of one stage "app" moving the fixture's job to @data on 2
 * instances, waiting for approval first when @approval. */
static gchar *
start_plan (const gchar *data, gboolean approval)
{
  g_autoptr (ApiRolloutPlan) plan = g_object_new (API_TYPE_ROLLOUT_PLAN, "name", "p",
                                                  "rollbackOnFailure", TRUE, NULL);
  g_autoptr (ApiJobUpdateRequest) r = fx_request (data, 2);
  g_ptr_array_add (plan->stages, g_object_new (API_TYPE_ROLLOUT_STAGE, "name", "app", "request", r,
                                               "requireApproval", approval, NULL));
  g_autoptr (GError) error = NULL;
  gchar *uid = stg_engine_start_plan (fx.engine, plan, "alice", "go", &error);
  ck_assert_msg (uid != NULL, "start: %s", error ? error->message : "");
  fx_run (1000);
  return uid;
}

static ApiRolloutPlanDetails *
details (const gchar *uid)
{
  g_autoptr (GError) error = NULL;
  ApiRolloutPlanDetails *d = stg_plan_details_read (fx.store, uid, &error);
  ck_assert_msg (d != NULL, "details: %s", error ? error->message : "");
  return d;
}

/* The stage's versions and readiness: "current desired target ready/want
 * [instance: reason]...". */
static gchar *
view (const gchar *uid)
{
  g_autoptr (ApiRolloutPlanDetails) d = details (uid);
  ApiRolloutStageState *st = d->stages->pdata[0];
  g_autoptr (GString) s = g_string_new (NULL);

  g_string_printf (s, "%d %d %d %d/%d", st->currentVersion, st->desiredVersion, st->targetVersion,
                   st->readyInstances, st->desiredInstances);
  for (guint i = 0; i < st->unready->len; i++)
    {
      ApiUnreadyInstance *u = st->unready->pdata[i];
      g_string_append_printf (s, " [%d: %s]", u->instanceId, u->reason);
    }
  return g_strdup (s->str);
}

static gint
plan_status (const gchar *uid)
{
  g_autoptr (StgPlanRow) row = stg_store_get_plan (fx.store, uid, NULL);
  ck_assert_ptr_nonnull (row);
  return row->status;
}

/* A stage waiting for approval shows what its job runs (v2) and the
 * version the plan brings: v1, which the store has, or none for a
 * configuration it does not have yet. */
START_TEST (a_stage_not_started_shows_the_version_its_plan_brings)
{
  fx_create_job (2);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 2);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  fx_run (20000);
  ck_assert_int_eq (fx_status (key), U (ROLLED_FORWARD));

  g_autofree gchar *back = start_plan ("v1", TRUE);
  ck_assert_int_eq (plan_status (back), P (AWAITING_APPROVAL));
  g_autoptr (ApiRolloutPlanDetails) d = details (back);
  ApiRolloutStageState *st = d->stages->pdata[0];
  ck_assert_int_eq (st->currentVersion, 2);
  ck_assert_int_eq (st->desiredVersion, 1);
  ck_assert_int_eq (st->targetVersion, 1);
  ck_assert (stg_engine_abort_plan (fx.engine, back, "alice", NULL, NULL));
  fx_run (1000);

  g_autofree gchar *fresh = start_plan ("v3", TRUE);
  g_autoptr (ApiRolloutPlanDetails) d3 = details (fresh);
  st = d3->stages->pdata[0];
  ck_assert_int_eq (st->currentVersion, 2);
  ck_assert_int_eq (st->desiredVersion, 0);
  ck_assert_int_eq (st->targetVersion, 0);
}
END_TEST

/* A plan that moved its job to v2 and ended DONE still shows that end
 * after a later update moved the job to v3. */
START_TEST (an_ended_plan_shows_where_its_stages_ended)
{
  fx_create_job (2);
  g_autofree gchar *uid = start_plan ("v2", FALSE);
  for (gint i = 0; i < 60 && !stg_rollout_status_is_terminal (plan_status (uid)); i++)
    fx_run (1000);
  ck_assert_int_eq (plan_status (uid), P (DONE));
  g_autofree gchar *ended = view (uid);
  ck_assert_msg (g_str_has_prefix (ended, "2 2 2 "), "at its end: %s", ended);
  g_autoptr (ApiRolloutPlanDetails) before = details (uid);
  g_autofree gchar *reason = g_strdup (((ApiRolloutStageState *) before->stages->pdata[0])->reason);

  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v3", 2);
  g_autoptr (ApiJobUpdateKey) key = fx_start (r);
  fx_run (20000);
  ck_assert_int_eq (fx_status (key), U (ROLLED_FORWARD));
  g_autofree gchar *later = view (uid);
  ck_assert_str_eq (later, ended);
  g_autoptr (ApiRolloutPlanDetails) after = details (uid);
  ck_assert_str_eq (((ApiRolloutStageState *) after->stages->pdata[0])->reason, reason);
}
END_TEST

static Suite *
plan_view_suite (void)
{
  Suite *s = suite_create ("plan_view");
  TCase *tc = tcase_create ("stages");

  tcase_add_checked_fixture (tc, fx_setup, fx_teardown);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, a_stage_not_started_shows_the_version_its_plan_brings);
  tcase_add_test (tc, an_ended_plan_shows_where_its_stages_ended);
  return s;
}

int
main (void)
{
  gchar *scope = stg_test_scope_begin ();
  SRunner *sr = srunner_create (plan_view_suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  stg_test_scope_end (scope);
  return failed == 0 ? 0 : 1;
}
