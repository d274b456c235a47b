/* runtime_sandbox_test.c: Check suite for the local runtime's own
 * bookkeeping, with real processes: the spec cache, run numbers across a
 * kill and a re-add, sandboxes inside the data dir, an environment with
 * nothing of the daemon's, the cause of a failure in observe(), a hot
 * upgrade of a `command`, and how often a failing task that is not a
 * service runs (maxTaskFailures, across a restart too). Ports
 * 25000-25299. */
#include "config.h"

#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "runtime/spec_cache.h"
#include "runtime_fixture.h"

static void
setup (void)
{
  stg_rt_setup ();
  make_runtime (25200, 25299);
}

/* ---- the spec cache ------------------------------------------------------------ */

START_TEST (spec_cache_parses_once)
{
  g_autoptr (ApiTaskConfig) t = config ("web", "{\"command\": \"sleep 9\", \"hot_upgrade\": true}",
                                        "http admin", TRUE);
  g_autoptr (ApiTaskConfig) bad = config ("web", "{\"command\": 5}", "", TRUE);
  g_autoptr (StgSpecCache) cache = stg_spec_cache_new (fx.store);
  g_autoptr (GError) error = NULL;
  gint64 c = add_config (t), b = 0;

  const StgTaskSpec *spec = stg_spec_cache_get (cache, c, &error);
  ck_assert_msg (spec != NULL, "%s", error ? error->message : "");
  ck_assert_int_eq (spec->config_id, c);
  ck_assert_str_eq (spec->exec->command, "sleep 9");
  ck_assert (spec->exec->hot_upgrade);
  ck_assert_str_eq (spec->port_names[0], "admin");
  ck_assert_str_eq (spec->port_names[1], "http");
  ck_assert_ptr_null (spec->port_names[2]);
  ck_assert (spec->config->isService);
  /* The same spec, not a second parse. */
  ck_assert_ptr_eq (stg_spec_cache_get (cache, c, NULL), spec);
  /* A missing config and one that does not parse are errors, not crashes. */
  ck_assert_ptr_null (stg_spec_cache_get (cache, c + 1000, &error));
  ck_assert_ptr_nonnull (error);
  g_clear_error (&error);
  ck_assert (stg_store_put_config (fx.store, bad, &b, NULL, &error));
  ck_assert_ptr_null (stg_spec_cache_get (cache, b, &error));
  ck_assert_ptr_nonnull (strstr (error->message, "command"));
}
END_TEST

/* Restarts instance 0 of @job @n times, each time until a new process of
 * @config runs. */
static void
restart_times (gint64 job, gint64 config, gint n)
{
  g_autoptr (GError) error = NULL;

  for (gint k = 0; k < n; k++)
    {
      gint pid = pid_of (job, 0);
      ck_assert (stg_runtime_restart (fx.rt, job, 0, &error));
      for (gint w = 0;
           w < 1000 && (pid_of (job, 0) == pid || observe (job, 0).phase != STG_TASK_RUNNING); w++)
        spin (10);
      wait_for (job, 0, STG_TASK_RUNNING, config, 0, 10000);
    }
}

/* A slot killed after several runs and added again starts at a run number
 * above all before it: the pruning never deletes the folder it just made. */
START_TEST (kill_then_add_again)
{
  g_autoptr (ApiTaskConfig) t = config ("again", "{\"command\": \"exec sleep 60\"}", "", TRUE);
  g_autoptr (GError) error = NULL;
  gint64 c;
  gint64 job = make_job (t, 1, &c);

  apply (job, 0, c);
  wait_for (job, 0, STG_TASK_RUNNING, c, 0, 10000);
  restart_times (job, c, 4);
  StgInstanceRow row;
  ck_assert (stg_store_get_instance (fx.store, job, 0, &row, NULL));
  gint64 last = row.run_id;
  ck_assert_int_eq (last, 5);
  ck_assert (stg_runtime_kill (fx.rt, job, 0, &error));
  wait_for (job, 0, STG_TASK_ABSENT, 0, 0, 10000);

  apply (job, 0, c);
  wait_for (job, 0, STG_TASK_RUNNING, c, 0, 10000);
  ck_assert (stg_store_get_instance (fx.store, job, 0, &row, NULL));
  ck_assert_int_eq (row.run_id, last + 1);
  ck_assert (stg_test_process_alive (pid_of (job, 0)));
  g_autofree gchar *ev = events (job, 0);
  ck_assert_ptr_null (strstr (ev, "cannot start"));
}
END_TEST

/* The pruning of old run folders deletes nothing it reaches through a
 * symlink, and sandboxes are named by row ids, whatever the job's name. */
START_TEST (pruning_stays_in_the_data_dir)
{
  g_autoptr (ApiTaskConfig) t = config ("prune", "{\"command\": \"exec sleep 60\"}", "", TRUE);
  gint64 c;
  gint64 job = make_job (t, 1, &c);
  g_autofree gchar *outside = stg_test_tmpdir ();
  g_autofree gchar *keep = g_build_filename (outside, "keep", NULL);
  ck_assert (g_file_set_contents (keep, "precious", -1, NULL));
  g_autofree gchar *jid = g_strdup_printf ("%" G_GINT64_FORMAT, job);
  g_autofree gchar *root = g_build_filename (fx.dir, "sandboxes", jid, "0", NULL);
  g_autofree gchar *link = g_build_filename (root, "0", NULL);
  ck_assert_int_eq (g_mkdir_with_parents (root, 0700), 0);
  ck_assert_int_eq (symlink (outside, link), 0);

  apply (job, 0, c);
  wait_for (job, 0, STG_TASK_RUNNING, c, 0, 10000);
  restart_times (job, c, 4);
  g_autofree gchar *sandbox = stg_test_process_env (pid_of (job, 0), "STAGGER_SANDBOX");
  g_autofree gchar *canon_root = g_canonicalize_filename (root, NULL);
  ck_assert (g_str_has_prefix (sandbox, canon_root));
  /* The link went (it sorted first), what it pointed to stayed. */
  ck_assert (!g_file_test (link, G_FILE_TEST_EXISTS));
  ck_assert (g_file_test (keep, G_FILE_TEST_EXISTS));
  stg_test_rmtree (outside);
}
END_TEST

/* An instance's environment holds nothing of the daemon's, and its
 * sandbox and output are not readable by other users. */
START_TEST (instances_inherit_nothing)
{
  g_setenv ("CANARY_SECRET", "daemon-only", TRUE);
  g_autoptr (ApiTaskConfig) t =
      config ("canary", "{\"command\": \"exec sleep 60\", \"env\": {\"MINE\": \"yes\"}}", "", TRUE);
  gint64 c;
  gint64 job = make_job (t, 1, &c);

  apply (job, 0, c);
  wait_for (job, 0, STG_TASK_RUNNING, c, 0, 10000);
  g_unsetenv ("CANARY_SECRET");
  gint pid = pid_of (job, 0);
  /* While /bin/sh execs the command, /proc/PID/environ can read empty for
   * a moment: wait (with a deadline) until it shows the task's own. */
  g_autofree gchar *mine = NULL;
  for (gint i = 0; i < 200 && mine == NULL; i++)
    {
      mine = stg_test_process_env (pid, "MINE");
      if (mine == NULL)
        g_usleep (25 * 1000);
    }
  g_autofree gchar *canary = stg_test_process_env (pid, "CANARY_SECRET");
  g_autofree gchar *path = stg_test_process_env (pid, "PATH");
  g_autofree gchar *home = stg_test_process_env (pid, "HOME");
  g_autofree gchar *sandbox = stg_test_process_env (pid, "STAGGER_SANDBOX");
  ck_assert_ptr_null (canary);
  ck_assert_str_eq (mine, "yes");
  ck_assert_str_eq (path, "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  ck_assert_str_eq (home, sandbox);
  /* Only documented variables: STAGGER_*, PORT*, LISTEN_*, the task's own, PATH, HOME, LANG
   * (and PWD, which /bin/sh sets). */
  g_autofree gchar *file = g_strdup_printf ("/proc/%d/environ", pid);
  g_autofree gchar *text = NULL;
  gsize len = 0;
  ck_assert (g_file_get_contents (file, &text, &len, NULL));
  for (gsize at = 0; at < len; at += strlen (text + at) + 1)
    ck_assert_msg (g_str_has_prefix (text + at, "STAGGER_") ||
                       g_str_has_prefix (text + at, "PORT") ||
                       g_str_has_prefix (text + at, "LISTEN_") ||
                       g_str_has_prefix (text + at, "MINE=") ||
                       g_str_has_prefix (text + at, "PATH=") ||
                       g_str_has_prefix (text + at, "HOME=") ||
                       g_str_has_prefix (text + at, "LANG=") ||
                       g_str_has_prefix (text + at, "PWD="),
                   "unexpected variable %s", text + at);
  GStatBuf st;
  ck_assert_int_eq (g_stat (sandbox, &st), 0);
  ck_assert_int_eq (st.st_mode & 077, 0);
  g_autofree gchar *err = g_build_filename (sandbox, "stderr", NULL);
  ck_assert_int_eq (g_stat (err, &st), 0);
  ck_assert_int_eq (st.st_mode & 077, 0);
  ck_assert_int_eq (g_stat (fx.dir, &st), 0);
  ck_assert_int_eq (st.st_mode & 077, 0);
}
END_TEST

/* The cause of a slot's last failure, as observe() reports it. */
static void
assert_cause (gint64 job, const gchar *part)
{
  StgTaskObservation o = observe (job, 0);
  ck_assert_msg (o.cause != NULL && strstr (o.cause, part) != NULL, "cause \"%s\" lacks \"%s\"",
                 o.cause ? o.cause : "(none)", part);
}

START_TEST (observe_reports_the_cause)
{
  make_runtime (25100, 25199);
  g_autofree gchar *bin = server ();
  g_autofree gchar *sick_data = g_strdup_printf (
      "{\"argv\": [\"%s\", \"--port\", \"{{ports[http]}}\", \"--unhealthy\"],"
      " \"health_check\": {\"http\": {}, \"initial_interval_secs\": 0, \"interval_secs\": 0.05}}",
      bin);
  g_autoptr (ApiTaskConfig) exits =
      config ("exits", "{\"command\": \"echo first >&2; echo oops >&2; exit 3\"}", "", FALSE);
  g_autoptr (ApiTaskConfig) killed = config ("killed", "{\"command\": \"kill -9 $$\"}", "", FALSE);
  g_autoptr (ApiTaskConfig) missing = config ("missing", "{\"argv\": [\"/nonexistent/prog\"]}", "",
                                              FALSE);
  g_autoptr (ApiTaskConfig) sick = config ("sick", sick_data, "http", TRUE);
  gint64 c1, c2, c3, c4;
  gint64 j1 = make_job (exits, 1, &c1), j2 = make_job (killed, 1, &c2);
  gint64 j3 = make_job (missing, 1, &c3), j4 = make_job (sick, 1, &c4);

  ck_assert_ptr_null (observe (j1, 0).cause);
  apply (j4, 0, c4);
  apply (j1, 0, c1);
  apply (j2, 0, c2);
  apply (j3, 0, c3);
  wait_for (j1, 0, STG_TASK_FAILED, c1, 1, 10000);
  wait_for (j2, 0, STG_TASK_FAILED, c2, 1, 10000);
  wait_for (j3, 0, STG_TASK_FAILED, c3, 1, 10000);
  wait_for (j4, 0, STG_TASK_FAILED, c4, 1, 10000);
  /* The exit status and the last lines of stderr. */
  assert_cause (j1, "exited with status 3");
  assert_cause (j1, "last lines of stderr:\nfirst\noops");
  /* A signal. */
  assert_cause (j2, "killed by signal 9");
  /* The start error. */
  assert_cause (j3, "cannot start");
  assert_cause (j3, "/nonexistent/prog");
  /* The health check's answer: status and body. */
  assert_cause (j4, "failed its health check");
  assert_cause (j4, "answered 500 \"failing\"");
  /* With its time; once the instance is healthy again the cause is over:
   * the events keep it (#31). */
  ck_assert_int_gt (observe (j4, 0).cause_ms, 0);
  g_autofree gchar *well = server_data (NULL, NULL);
  g_autoptr (ApiTaskConfig) cured = config ("sick", well, "http", TRUE);
  gint64 c5 = add_config (cured);
  apply (j4, 0, c5);
  wait_for (j4, 0, STG_TASK_RUNNING, c5, 1, 20000);
  StgTaskObservation o = observe (j4, 0);
  ck_assert_msg (o.cause == NULL && o.cause_ms == 0, "a healthy instance still shows: %s", o.cause);
  g_autofree gchar *ev = events (j4, 0);
  ck_assert_msg (strstr (ev, "failed its health check") != NULL, "%s", ev);
}
END_TEST

/* A hot-upgradable `command` (run through /bin/sh -c) gets its sockets:
 * LISTEN_PID names the program, not a shell around it. */
START_TEST (hot_upgrade_with_a_command)
{
  make_runtime (25000, 25099);
  g_autofree gchar *bin = server ();
  g_autofree gchar *v1 =
      g_strdup_printf ("{\"command\": \"%s --port {{ports[http]}}\", \"hot_upgrade\": true,"
                       " \"health_check\": {\"http\": {\"endpoint\": \"/health\"},"
                       " \"initial_interval_secs\": 2, \"interval_secs\": 0.05}}",
                       bin);
  g_autoptr (ApiTaskConfig) t1 = config ("hotcmd", v1, "http", TRUE);
  gint64 c1;
  gint64 job = make_job (t1, 1, &c1);
  apply (job, 0, c1);
  wait_for (job, 0, STG_TASK_RUNNING, c1, 0, 10000);
  gint pid1 = pid_of (job, 0);
  g_autofree gchar *listen_pid = stg_test_process_env (pid1, "LISTEN_PID");
  g_autofree gchar *expect = g_strdup_printf ("%d", pid1);
  ck_assert_str_eq (listen_pid, expect);
  ck_assert_int_eq (observe (job, 0).failures, 0);

  /* Version 2 starts beside it on the same socket and takes over. */
  g_autofree gchar *v2 =
      g_strdup_printf ("{\"command\": \"%s --port {{ports[http]}}\", \"hot_upgrade\": true,"
                       " \"env\": {\"V\": \"2\"}, \"health_check\": {\"http\":"
                       " {\"endpoint\": \"/health\"}, \"initial_interval_secs\": 2,"
                       " \"interval_secs\": 0.05}}",
                       bin);
  g_autoptr (ApiTaskConfig) t2 = config ("hotcmd", v2, "http", TRUE);
  gint64 c2 = add_config (t2);
  apply (job, 0, c2);
  wait_for (job, 0, STG_TASK_RUNNING, c2, 0, 10000);
  ck_assert_int_ne (pid_of (job, 0), pid1);
  ck_assert_int_eq (observe (job, 0).failures, 0);
  g_autofree gchar *ev = events (job, 0);
  ck_assert_ptr_nonnull (strstr (ev, "hot upgrade done"));
}
END_TEST

/* A failing task that is not a service runs maxTaskFailures times in all,
 * as Aurora reschedules one only while its failures stay under the limit:
 * once for 1 (a migration must not run twice), three times for 3, and
 * without end for -1. Each run appends a line to a file of the test. */
static const struct
{
  gint32 max;
  guint runs;
} batch_limits[] = { { 1, 1 }, { 3, 3 }, { -1, 4 } };

START_TEST (batch_task_runs_max_task_failures_times)
{
  g_autofree gchar *count = g_build_filename (fx.dir, "runs", NULL);
  g_autofree gchar *data = g_strdup_printf ("{\"command\": \"echo run >> %s; exit 3\"}", count);
  g_autoptr (ApiTaskConfig) t = config ("migration", data, "", FALSE);
  gint64 c;

  g_object_set (t, "maxTaskFailures", batch_limits[_i].max, NULL);
  gint64 job = make_job (t, 1, &c);
  apply (job, 0, c);
  wait_for (job, 0, STG_TASK_FAILED, c, batch_limits[_i].runs, 15000);
  if (batch_limits[_i].max >= 0)
    spin (batch_limits[_i].runs == 1 ? 2500 : 4500); /* past the next back-off */
  g_autofree gchar *text = NULL;
  ck_assert (g_file_get_contents (count, &text, NULL, NULL));
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  guint runs = g_strv_length (lines) - 1;
  if (batch_limits[_i].max >= 0)
    {
      ck_assert_uint_eq (runs, batch_limits[_i].runs);
      ck_assert_int_eq (observe (job, 0).phase, STG_TASK_FAILED);
      ck_assert_uint_eq (observe (job, 0).failures, batch_limits[_i].runs);
    }
  else
    ck_assert_uint_ge (runs, batch_limits[_i].runs);
}
END_TEST

/* A daemon that starts again finds a task that is not a service failed
 * for the last time, and leaves it failed. */
START_TEST (failed_batch_task_stays_failed_after_a_restart)
{
  g_autofree gchar *count = g_build_filename (fx.dir, "runs", NULL);
  g_autofree gchar *data = g_strdup_printf ("{\"command\": \"echo run >> %s; exit 3\"}", count);
  g_autoptr (ApiTaskConfig) t = config ("mailer", data, "", FALSE);
  g_autoptr (GError) error = NULL;
  gint64 c;

  g_object_set (t, "maxTaskFailures", 1, NULL);
  gint64 job = make_job (t, 1, &c);
  apply (job, 0, c);
  wait_for (job, 0, STG_TASK_FAILED, c, 1, 10000);
  make_runtime (25200, 25299);
  ck_assert_msg (stg_local_runtime_adopt (fx.rt, &error), "%s", error ? error->message : "");
  spin (2500);
  g_autofree gchar *text = NULL;
  ck_assert (g_file_get_contents (count, &text, NULL, NULL));
  ck_assert_str_eq (text, "run\n");
  ck_assert_int_eq (observe (job, 0).phase, STG_TASK_FAILED);
  ck_assert_uint_eq (observe (job, 0).failures, 1);
}
END_TEST

static Suite *
runtime_sandbox_suite (void)
{
  Suite *s = suite_create ("runtime_sandbox");
  TCase *tc = tcase_create ("bookkeeping");

  tcase_set_timeout (tc, 120);
  tcase_add_checked_fixture (tc, setup, stg_rt_teardown);
  tcase_add_test (tc, spec_cache_parses_once);
  tcase_add_test (tc, kill_then_add_again);
  tcase_add_test (tc, pruning_stays_in_the_data_dir);
  tcase_add_test (tc, instances_inherit_nothing);
  tcase_add_test (tc, observe_reports_the_cause);
  tcase_add_test (tc, hot_upgrade_with_a_command);
  tcase_add_loop_test (tc, batch_task_runs_max_task_failures_times, 0, G_N_ELEMENTS (batch_limits));
  tcase_add_test (tc, failed_batch_task_stays_failed_after_a_restart);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  gchar *scope = stg_test_scope_begin ();
  SRunner *sr = srunner_create (runtime_sandbox_suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  stg_test_scope_end (scope);
  return failed == 0 ? 0 : 1;
}
