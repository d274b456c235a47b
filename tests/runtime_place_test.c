/* runtime_place_test.c: Check suite for what the local runtime cannot
 * honour and says so: constraints judged against this host (its name, its
 * configured attributes, a limit per host, dedicated hosts) keep an
 * instance PENDING with Aurora's reason; a docker image is refused; an
 * instance waiting out its restart back-off shows THROTTLED and why. Real
 * processes and a real store (runtime_fixture.c). */
#include "config.h"

#include <check.h>

#include "runtime_fixture.h"

#define SLEEPER "{\"command\": \"exec sleep 60\"}"

/* Adds constraint @name to @t: a limit when @limit > 0, else the values
 * @value (comma-separated, "!" first: negated). */
static void
constrain (ApiTaskConfig *t, const gchar *name, gint limit, const gchar *value)
{
  g_autoptr (ApiTaskConstraint) tc = NULL;

  if (limit > 0)
    {
      g_autoptr (ApiLimitConstraint) l = g_object_new (API_TYPE_LIMIT_CONSTRAINT, "limit", limit,
                                                       NULL);
      tc = g_object_new (API_TYPE_TASK_CONSTRAINT, "limit", l, NULL);
    }
  else
    {
      gboolean negated = value[0] == '!';
      g_autoptr (ApiValueConstraint) v = g_object_new (API_TYPE_VALUE_CONSTRAINT, "negated",
                                                       negated, NULL);
      g_auto (GStrv) values = g_strsplit (value + negated, ",", -1);
      for (guint i = 0; values[i] != NULL; i++)
        g_hash_table_add (v->values, g_strdup (values[i]));
      tc = g_object_new (API_TYPE_TASK_CONSTRAINT, "value", v, NULL);
    }
  g_hash_table_add (t->constraints,
                    g_object_new (API_TYPE_CONSTRAINT, "name", name, "constraint", tc, NULL));
  t->__isset_constraints = TRUE;
}

/* Waits for instance @i to be PENDING, and checks its newest event says
 * @why and nothing of it started. */
static void
assert_held (gint64 job, gint32 i, const gchar *why)
{
  wait_for (job, i, STG_TASK_PENDING, 0, 0, 5000);
  spin (300);
  ck_assert_int_eq (observe (job, i).phase, STG_TASK_PENDING);
  ck_assert_int_eq (pid_of (job, i), 0);
  g_autoptr (GPtrArray) list = stg_store_list_task_events (fx.store, job, i, 100, NULL);
  ck_assert_uint_gt (list->len, 0);
  const ApiTaskEvent *last = list->pdata[list->len - 1];
  ck_assert_int_eq (last->status, API_SCHEDULE_STATUS_PENDING);
  ck_assert_str_eq (last->message, why);
}

/* Job www/prod/@name, @n sleepers under constraint (@cname, @limit,
 * @value) as constrain() makes it, with instance 0 applied; its config's
 * id goes to *@c. */
static gint64
start_constrained (const gchar *name, const gchar *cname, gint limit, const gchar *value, gint32 n,
                   gint64 *c)
{
  g_autoptr (ApiTaskConfig) t = config (name, SLEEPER, "", TRUE);

  if (cname != NULL)
    constrain (t, cname, limit, value);
  gint64 job = make_job (t, n, c);
  apply (job, 0, *c);
  return job;
}

/* The fixture's runtime again, on a host with attribute @name=@value. */
static void
remake_with (const gchar *name, const gchar *value)
{
  g_autoptr (GHashTable) attributes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                             g_free);
  g_hash_table_insert (attributes, g_strdup (name), g_strdup (value));
  make_runtime_on (30000, 30999, attributes);
}

START_TEST (host_value_is_this_host)
{
  gint64 c, c2, c3;
  gint64 job = start_constrained ("elsewhere", "host", 0, "not-this-host.example", 1, &c);
  assert_held (job, 0, "Constraint not satisfied: host");

  gint64 job2 = start_constrained ("here", "host", 0, g_get_host_name (), 1, &c2);
  wait_for (job2, 0, STG_TASK_RUNNING, c2, 0, 10000);

  /* Negated: anywhere but here. */
  g_autofree gchar *not_here = g_strdup_printf ("!%s", g_get_host_name ());
  gint64 job3 = start_constrained ("away", "host", 0, not_here, 1, &c3);
  assert_held (job3, 0, "Constraint not satisfied: host");
}
END_TEST

START_TEST (attributes_come_from_the_settings)
{
  gint64 c, c2;

  remake_with ("zone", "a");
  gint64 job = start_constrained ("ina", "zone", 0, "a,b", 1, &c);
  wait_for (job, 0, STG_TASK_RUNNING, c, 0, 10000);
  gint64 job2 = start_constrained ("rack", "rack", 0, "r1", 1, &c2);
  assert_held (job2, 0, "Constraint not satisfied: rack");
}
END_TEST

/* limit host:1 with two instances: one runs, the other waits, and starts
 * once the first is gone. */
START_TEST (limit_per_host)
{
  gint64 c, cz;
  gint64 job = start_constrained ("limited", "host", 1, NULL, 2, &c);
  wait_for (job, 0, STG_TASK_RUNNING, c, 0, 10000);
  apply (job, 1, c);
  assert_held (job, 1, "Limit not satisfied: host");

  /* A limit on an attribute the host lacks is a mismatch. */
  gint64 jz = start_constrained ("zoned", "zone", 1, NULL, 1, &cz);
  assert_held (jz, 0, "Constraint not satisfied: zone");

  g_autoptr (GError) error = NULL;
  ck_assert (stg_runtime_kill (fx.rt, job, 0, &error));
  wait_for (job, 1, STG_TASK_RUNNING, c, 0, 10000);
  wait_for (job, 0, STG_TASK_ABSENT, 0, 0, 10000);
}
END_TEST

START_TEST (dedicated_hosts)
{
  gint64 c, c2;
  gint64 job = start_constrained ("wants", "dedicated", 0, "www/db", 1, &c);
  assert_held (job, 0, "Constraint not satisfied: dedicated");

  remake_with ("dedicated", "www/db");
  gint64 job2 = start_constrained ("any", NULL, 0, NULL, 1, &c2);
  assert_held (job2, 0, "Host is dedicated");
  apply (job, 0, c);
  wait_for (job, 0, STG_TASK_RUNNING, c, 0, 10000);
}
END_TEST

START_TEST (docker_images_are_refused)
{
  g_autoptr (ApiTaskConfig) t = config ("boxed", SLEEPER, "", TRUE);
  g_autoptr (ApiDockerContainer) d = g_object_new (API_TYPE_DOCKER_CONTAINER, "image", "nginx:1.25",
                                                   NULL);
  g_autoptr (ApiContainer) box = g_object_new (API_TYPE_CONTAINER, "docker", d, NULL);
  g_object_set (t, "container", box, NULL);
  g_autoptr (GError) error = NULL;

  ck_assert (!stg_runtime_validate (fx.rt, t, &error));
  ck_assert (g_error_matches (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_INVALID));
  ck_assert_msg (strstr (error->message, "nginx:1.25") != NULL, "%s", error->message);
  ck_assert_msg (strstr (error->message, "--runtime=fleet") != NULL, "%s", error->message);
}
END_TEST

/* A service that keeps failing waits out its back-off THROTTLED, saying
 * for how long. */
START_TEST (back_off_shows_throttled)
{
  g_autoptr (ApiTaskConfig) t = config ("crashy", "{\"command\": \"exit 3\"}", "", TRUE);
  gint64 c;
  gint64 job = make_job (t, 1, &c);

  apply (job, 0, c);
  wait_for (job, 0, STG_TASK_FAILED, c, 1, 10000);
  spin (100);
  StgInstanceRow row;
  ck_assert (stg_store_get_instance (fx.store, job, 0, &row, NULL));
  g_autofree gchar *ev = events (job, 0);
  ck_assert_msg (row.status == API_SCHEDULE_STATUS_THROTTLED, "status %d, events:\n%s", row.status,
                 ev);
  ck_assert_msg (strstr (ev, "16: restarting in 1.0 s (back-off after 1 failed run)") != NULL, "%s",
                 ev);
}
END_TEST

/* A service that comes up healthy and fails soon after, again and again
 * (flapping), waits twice as long each time, as one that never comes up
 * does: not a restart every second without end. (Aurora: a task that runs
 * less than -flapping_task_threshold, 5 minutes, before it ends is
 * flapping and its penalty grows: scheduler/scheduling/SchedulingModule.java,
 * RescheduleCalculator.getFlappingPenaltyMs.) */
START_TEST (flapping_service_backs_off_more_each_time)
{
  g_autoptr (ApiTaskConfig) t = config ("flapping", "{\"command\": \"sleep 0.3; exit 3\"}", "",
                                        TRUE);
  gint64 c;
  gint64 job = make_job (t, 1, &c);

  apply (job, 0, c);
  wait_for (job, 0, STG_TASK_FAILED, c, 3, 15000);
  spin (100);
  g_autofree gchar *ev = events (job, 0);
  ck_assert_msg (strstr (ev, "healthy") != NULL, "it never came up: %s", ev);
  ck_assert_msg (strstr (ev, "restarting in 1.0 s (back-off after 1 failed run)") &&
                     strstr (ev, "restarting in 2.0 s (back-off after 2 failed runs)") &&
                     strstr (ev, "restarting in 4.0 s (back-off after 3 failed runs)"),
                 "%s", ev);
}
END_TEST

static Suite *
runtime_place_suite (void)
{
  Suite *s = suite_create ("runtime_place");
  TCase *tc = tcase_create ("constraints");

  tcase_set_timeout (tc, 60);
  tcase_add_checked_fixture (tc, stg_rt_setup, stg_rt_teardown);
  tcase_add_test (tc, host_value_is_this_host);
  tcase_add_test (tc, attributes_come_from_the_settings);
  tcase_add_test (tc, limit_per_host);
  tcase_add_test (tc, dedicated_hosts);
  tcase_add_test (tc, docker_images_are_refused);
  tcase_add_test (tc, back_off_shows_throttled);
  tcase_add_test (tc, flapping_service_backs_off_more_each_time);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  gchar *scope = stg_test_scope_begin ();
  SRunner *sr = srunner_create (runtime_place_suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  stg_test_scope_end (scope);
  return failed == 0 ? 0 : 1;
}
