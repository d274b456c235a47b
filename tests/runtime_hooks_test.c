/* runtime_hooks_test.c: Check suite for the local runtime's update hooks,
 * with real processes (stagger-example-server) and a real store:
 * pre_update before a version goes down (a failing one leaves it running),
 * post_update once the new one is healthy, each knowing the versions it
 * moves from and to, also when a version that failed is taken back, and
 * a version's own pre_update when an update changes course meanwhile.
 * Ports 17830-17879. */
#include "config.h"

#include <check.h>
#include <string.h>

#include "runtime_fixture.h"

static void
setup (void)
{
  stg_rt_setup ();
  make_runtime (17830, 17879);
}

/* ---- hooks ----------------------------------------------------------------------------- */

/* A file in the folder of instance @i of job row @job. */
static gchar *
slot_file (gint64 job, gint32 i, const gchar *file)
{
  g_autofree gchar *jid = g_strdup_printf ("%" G_GINT64_FORMAT, job);
  g_autofree gchar *inst = g_strdup_printf ("%d", i);
  return g_build_filename (fx.dir, "sandboxes", jid, inst, file, NULL);
}

/* A config of job @name running the example server (@extra_argv and
 * @extra as server_data takes them), stored: its id. */
static gint64
server_config (const gchar *name, const gchar *extra_argv, const gchar *extra)
{
  g_autofree gchar *data = server_data (extra_argv, extra);
  g_autoptr (ApiTaskConfig) t = config (name, data, "http", TRUE);
  return add_config (t);
}

/* A job @name of one instance running the example server (@extra as
 * server_data takes it), its config in *@c1: its row id. */
static gint64
running_job (const gchar *name, const gchar *extra, gint64 *c1)
{
  g_autofree gchar *data = server_data (NULL, extra);
  g_autoptr (ApiTaskConfig) t = config (name, data, "http", TRUE);
  gint64 job = make_job (t, 1, c1);
  apply (job, 0, *c1);
  wait_for (job, 0, STG_TASK_RUNNING, *c1, 0, 10000);
  return job;
}

START_TEST (pre_update_hook)
{
  gint64 c1;
  gint64 job = running_job ("hooked", NULL, &c1);
  gint pid = pid_of (job, 0);

  /* A failing check before going down leaves the instance as it is. */
  g_autofree gchar *v2 = server_data (NULL,
                                      ", \"hooks\": {\"pre_update\": \"echo refusing; exit 1\"}");
  g_autoptr (ApiTaskConfig) t2 = config ("hooked", v2, "http", TRUE);
  gint64 c2 = add_config (t2);
  apply (job, 0, c2);
  wait_for (job, 0, STG_TASK_RUNNING, c1, 1, 10000);
  ck_assert_int_eq (pid_of (job, 0), pid);
  ck_assert (stg_test_process_alive (pid));
  g_autofree gchar *ev = events (job, 0);
  ck_assert_ptr_nonnull (strstr (ev, "pre_update hook exited with status 1"));
  g_autofree gchar *log = slot_file (job, 0, "hooks.log");
  g_autofree gchar *text = NULL;
  ck_assert (g_file_get_contents (log, &text, NULL, NULL));
  ck_assert_ptr_nonnull (strstr (text, "refusing"));

  /* A passing one lets the replace go on; it knows what it replaces. */
  g_autofree gchar *v3 = server_data (NULL,
                                      ", \"hooks\": {\"pre_update\": {\"command\": "
                                      "\"echo checked v{{version}} from v$STAGGER_FROM_VERSION "
                                      "to v$STAGGER_TO_VERSION\", \"timeout_secs\": 5}}");
  g_autoptr (ApiTaskConfig) t3 = config ("hooked", v3, "http", TRUE);
  gint64 c3 = add_config (t3);
  apply (job, 0, c3);
  wait_for (job, 0, STG_TASK_RUNNING, c3, 1, 10000);
  ck_assert_int_ne (pid_of (job, 0), pid);
  g_autofree gchar *text2 = NULL;
  ck_assert (g_file_get_contents (log, &text2, NULL, NULL));
  ck_assert_ptr_nonnull (strstr (text2, "checked v3 from v1 to v3"));
}
END_TEST

START_TEST (post_update_hook)
{
  gint64 c1;
  gint64 job = running_job ("posthook", NULL, &c1);

  /* The new version comes up, its check after the update fails: counted. */
  g_autofree gchar *v2 = server_data (NULL, ", \"hooks\": {\"post_update\": \"exit 2\"}");
  g_autoptr (ApiTaskConfig) t2 = config ("posthook", v2, "http", TRUE);
  gint64 c2 = add_config (t2);
  apply (job, 0, c2);
  wait_for (job, 0, STG_TASK_FAILED, c2, 1, 10000);
  g_autofree gchar *ev = events (job, 0);
  ck_assert_ptr_nonnull (strstr (ev, "post_update hook exited with status 2"));

  /* Asked again, it runs the hook again (and fails again). */
  apply (job, 0, c2);
  wait_for (job, 0, STG_TASK_FAILED, c2, 2, 10000);

  static const gchar hook[] = ", \"hooks\": {\"post_update\": "
                              "\"echo post v$STAGGER_FROM_VERSION to v$STAGGER_TO_VERSION\"}";
  gint64 c3 = server_config ("posthook", NULL, hook);
  apply (job, 0, c3);
  wait_for (job, 0, STG_TASK_RUNNING, c3, 2, 10000);

  /* On to version 4, then back to 3: each hook knows where it came from,
   * the right way round going back. */
  gint64 c4 = server_config ("posthook", ", \"--start-delay\", \"0\"", hook);
  apply (job, 0, c4);
  wait_for (job, 0, STG_TASK_RUNNING, c4, 2, 10000);
  apply (job, 0, c3);
  wait_for (job, 0, STG_TASK_RUNNING, c3, 2, 10000);
  g_autofree gchar *log = slot_file (job, 0, "hooks.log");
  g_autofree gchar *text = NULL;
  ck_assert (g_file_get_contents (log, &text, NULL, NULL));
  ck_assert_msg (strstr (text, "post v2 to v3") && strstr (text, "post v3 to v4") &&
                     strstr (text, "post v4 to v3"),
                 "hooks.log: %s", text);
}
END_TEST

/* A version that failed (it exits soon after it starts) is taken back as
 * a running one would be: pre_update, then post_update once the version
 * it goes back to is healthy, both from the failed version to that one. */
START_TEST (taking_back_a_failed_version_runs_both_hooks)
{
  static const gchar hooks[] =
      ", \"hooks\": {"
      "\"pre_update\": \"echo pre v$STAGGER_FROM_VERSION to v$STAGGER_TO_VERSION\","
      " \"post_update\": \"echo post v$STAGGER_FROM_VERSION to "
      "v$STAGGER_TO_VERSION\"}";
  gint64 c1;
  gint64 job = running_job ("failedback", hooks, &c1);

  gint64 c2 = server_config ("failedback", ", \"--crash-after\", \"0.2\"", hooks);
  apply (job, 0, c2);
  wait_for (job, 0, STG_TASK_FAILED, c2, 1, 10000);

  /* Back to version 1 while version 2 waits out its back-off. */
  apply (job, 0, c1);
  wait_for (job, 0, STG_TASK_RUNNING, c1, 1, 10000);
  g_autofree gchar *log = slot_file (job, 0, "hooks.log");
  for (gint tries = 0; tries < 100; tries++)
    {
      g_autofree gchar *text = NULL;
      if (g_file_get_contents (log, &text, NULL, NULL) && strstr (text, "post v2 to v1"))
        break;
      spin (100);
    }
  g_autofree gchar *text = NULL;
  ck_assert (g_file_get_contents (log, &text, NULL, NULL));
  ck_assert_msg (strstr (text, "pre v1 to v2") && strstr (text, "pre v2 to v1") &&
                     strstr (text, "post v2 to v1"),
                 "hooks.log: %s", text);
}
END_TEST

/* hooks.log of instance 0 of @job once it holds @text (10 s at most). */
static gchar *
hooks_log_with (gint64 job, const gchar *text)
{
  g_autofree gchar *log = slot_file (job, 0, "hooks.log");
  gchar *got = NULL;

  for (gint tries = 0; tries < 100; tries++)
    {
      g_clear_pointer (&got, g_free);
      if (g_file_get_contents (log, &got, NULL, NULL) && strstr (got, text) != NULL)
        break;
      spin (100);
    }
  return got != NULL ? got : g_strdup ("");
}

/* The update moves on from version 2 to 3 and, while version 2 is still
 * stopping (it takes a second and a half over SIGTERM), goes back to 1:
 * version 1 starts only after its own pre_update, from 2, not after the
 * check made for version 3. And a change of mind while a pre_update runs
 * is checked by the new target's own hook. */
START_TEST (going_back_while_the_old_version_stops_runs_pre_update)
{
  static const gchar hooks[] =
      ", \"hooks\": {"
      "\"pre_update\": \"echo pre v$STAGGER_FROM_VERSION to v$STAGGER_TO_VERSION; sleep 0.3\"}";
  gint64 c1;
  gint64 job = running_job ("stopping", hooks, &c1);

  g_autofree gchar *bin = server ();
  g_autofree gchar *slow = g_strdup_printf (
      "{\"command\": \"trap 'sleep 1.5; exit 0' TERM; %s --port {{ports[http]}} & wait; wait\","
      " \"health_check\": {\"http\": {\"endpoint\": \"/health\"}, \"initial_interval_secs\": 2,"
      " \"interval_secs\": 0.05, \"timeout_secs\": 1}%s}",
      bin, hooks);
  g_autoptr (ApiTaskConfig) t2 = config ("stopping", slow, "http", TRUE);
  gint64 c2 = add_config (t2);
  apply (job, 0, c2);
  wait_for (job, 0, STG_TASK_RUNNING, c2, 0, 10000);
  gint64 c3 = server_config ("stopping", NULL, NULL);
  apply (job, 0, c3);
  spin (200);
  apply (job, 0, c1);
  wait_for (job, 0, STG_TASK_RUNNING, c1, 0, 15000);
  g_autofree gchar *text = hooks_log_with (job, "pre v2 to v1");
  ck_assert_msg (strstr (text, "pre v1 to v2") && strstr (text, "pre v2 to v1"), "hooks.log: %s",
                 text);

  /* To 2 again, and back to 1 while 2's pre_update still runs: 1 runs
   * already, so nothing more is checked or started. */
  gint pid = pid_of (job, 0);
  apply (job, 0, c2);
  apply (job, 0, c1);
  spin (1000);
  wait_for (job, 0, STG_TASK_RUNNING, c1, 0, 10000);
  ck_assert_int_eq (pid_of (job, 0), pid);
}
END_TEST

static Suite *
hooks_suite (void)
{
  Suite *s = suite_create ("runtime_hooks");
  TCase *tc = tcase_create ("hooks");

  tcase_set_timeout (tc, 90);
  tcase_add_checked_fixture (tc, setup, stg_rt_teardown);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, pre_update_hook);
  tcase_add_test (tc, post_update_hook);
  tcase_add_test (tc, taking_back_a_failed_version_runs_both_hooks);
  tcase_add_test (tc, going_back_while_the_old_version_stops_runs_pre_update);
  return s;
}

int
main (void)
{
  gchar *scope = stg_test_scope_begin ();
  SRunner *sr = srunner_create (hooks_suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  stg_test_scope_end (scope);
  return failed == 0 ? 0 : 1;
}
