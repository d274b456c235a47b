/* runtime_limits_test.c: Check suite for the local runtime's limits on
 * memory and CPU (local_limits.c), as root, with real processes and a
 * real store: a task over its ramMb is killed by the memory limit and
 * says so ("exceeded its 32 MiB of RAM (OOM kill)"), counted as a failure;
 * a busy task of 0.25 cores is held to about a quarter of a core; a run's
 * control group goes with it; hooks and shell health checks run in the
 * group of the run they act for. Not root, or no cgroup here: skipped
 * (77), saying why. No ports.
 */
#include "config.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "runtime_fixture.h"
#include "spawn/cgroup.h"

static void
setup (void)
{
  stg_rt_setup ();
  make_runtime (30000, 30999);
}

/* A config of job www/prod/@name running @command with @cpus cores and
 * @ram_mb MiB, failing at most once. */
static ApiTaskConfig *
limited_config (const gchar *name, const gchar *command, gdouble cpus, gint64 ram_mb)
{
  g_autofree gchar *data = g_strdup_printf ("{\"command\": \"%s\"}", command);
  ApiTaskConfig *t = config (name, data, "", FALSE);

  g_hash_table_add (t->resources, g_object_new (API_TYPE_RESOURCE, "numCpus", cpus, NULL));
  g_hash_table_add (t->resources, g_object_new (API_TYPE_RESOURCE, "ramMb", ram_mb, NULL));
  g_object_set (t, "maxTaskFailures", 1, NULL);
  return t;
}

/* The pids controller's group (v2: the group) in the lines of a
 * /proc/PID/cgroup @text; NULL when it has none. */
static gchar *
pids_group (const gchar *text)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);

  for (gchar **l = lines; *l != NULL; l++)
    if (strstr (*l, ":pids:") != NULL || g_str_has_prefix (*l, "0::"))
      return g_strdup (strrchr (*l, ':') + 1);
  return NULL;
}

/* The group of process @pid. */
static gchar *
group_of (gint pid)
{
  g_autofree gchar *path = g_strdup_printf ("/proc/%d/cgroup", pid);
  g_autofree gchar *text = NULL;

  ck_assert (g_file_get_contents (path, &text, NULL, NULL));
  return pids_group (text);
}

START_TEST (over_its_memory_is_oom_killed)
{
  g_autoptr (ApiTaskConfig) t =
      limited_config ("hog",
                      "exec python3 -c 'import time; x = bytearray(100 << 20); time.sleep(60)'",
                      1.0, 32);
  gint64 c;
  gint64 job = make_job (t, 1, &c);

  apply (job, 0, c);
  wait_for (job, 0, STG_TASK_FAILED, c, 1, 20000);
  StgTaskObservation o = observe (job, 0);
  ck_assert_msg (o.cause != NULL && strstr (o.cause, "exceeded its 32 MiB of RAM (OOM kill)"),
                 "cause: %s", o.cause);
}
END_TEST

START_TEST (busy_task_is_held_to_its_cores)
{
  g_autoptr (ApiTaskConfig) t = limited_config ("spin", "while :; do :; done", 0.25, 64);
  gint64 c;
  gint64 job = make_job (t, 1, &c);

  apply (job, 0, c);
  wait_for (job, 0, STG_TASK_RUNNING, c, 0, 10000);
  gint pid = pid_of (job, 0);
  spin (500);
  gdouble before = stg_test_cpu_seconds (pid);
  gint64 t0 = g_get_monotonic_time ();
  spin (3000);
  gdouble used = stg_test_cpu_seconds (pid) - before;
  gdouble wall = (gdouble) (g_get_monotonic_time () - t0) / G_USEC_PER_SEC;
  gdouble cores = used / wall;
  /* A quarter, with room for a loaded machine below and for the period's
   * rounding above; unlimited it would take a whole core when it can. */
  ck_assert_msg (cores > 0.05 && cores < 0.35, "used %.2f cores", cores);

  /* What it uses, as the web UI and the CLI show it, says the same. */
  StgInstanceUsage u;
  ck_assert (stg_runtime_usage (fx.rt, job, 0, &u));
  ck_assert_msg (u.cpus_used > 0.05 && u.cpus_used < 0.35, "cpus_used %.2f", u.cpus_used);
  ck_assert_double_eq_tol (u.cpus, 0.25, 1e-9);
  ck_assert_int_eq (u.ram, 64 << 20);
  ck_assert_msg (u.memory > 0 && u.memory < (64 << 20), "memory %" G_GINT64_FORMAT, u.memory);
  /* Measured (cgroup_test checks that the quota throttles; how long
   * depends on what else the machine runs). */
  ck_assert_msg (u.throttled_ms >= 0, "throttled for %" G_GINT64_FORMAT " ms", u.throttled_ms);
  ck_assert_int_eq (u.disk, -1); /* it reserves no disk: never sampled */

  /* Its group goes with it. */
  g_autofree gchar *line = group_of (pid);
  ck_assert_msg (line != NULL && strstr (line, "/stagger/") != NULL, "in %s", line);
  g_autoptr (GError) error = NULL;
  ck_assert (stg_runtime_kill (fx.rt, job, 0, &error));
  for (gint i = 0; i < 100 && kill (pid, 0) == 0; i++)
    spin (50);
  spin (500);
  g_autofree gchar *dir = g_build_filename ("/sys/fs/cgroup/pids", line, NULL);
  g_autofree gchar *v2dir = g_build_filename ("/sys/fs/cgroup", line, NULL);
  ck_assert_msg (!g_file_test (dir, G_FILE_TEST_EXISTS) && !g_file_test (v2dir, G_FILE_TEST_EXISTS),
                 "%s is still there", line);
}
END_TEST

/* A config of job www/prod/hooked, version @v, whose shell health check
 * writes its group to a file in the sandbox and whose hooks write theirs
 * to hooks.log. */
static ApiTaskConfig *
hooked_config (gint v)
{
  ApiTaskConfig *t = limited_config ("hooked", "exec sleep 60", 1.0, 64);
  g_autofree gchar *data = g_strdup_printf (
      "{\"command\": \"exec sleep 60 # v%d\","
      " \"hooks\": {\"pre_update\": \"echo pre; cat /proc/self/cgroup\","
      " \"post_update\": \"echo post; cat /proc/self/cgroup\"},"
      " \"health_check\": {\"shell\": {\"shell_command\": \"cat /proc/self/cgroup > check\"},"
      " \"initial_interval_secs\": 0, \"interval_secs\": 0.05}}",
      v);

  g_object_set (t->executorConfig, "data", data, NULL);
  return t;
}

/* The first group named after @mark in the file @path. */
static gchar *
group_after (const gchar *path, const gchar *mark)
{
  g_autofree gchar *text = NULL;

  ck_assert_msg (g_file_get_contents (path, &text, NULL, NULL), "no %s", path);
  const gchar *at = strstr (text, mark);
  ck_assert_msg (at != NULL, "no %s in %s", mark, text);
  return pids_group (at);
}

START_TEST (hooks_and_checks_run_in_the_group_of_their_run)
{
  g_autoptr (ApiTaskConfig) t1 = hooked_config (1);
  g_autoptr (ApiTaskConfig) t2 = hooked_config (2);
  gint64 c1;
  gint64 job = make_job (t1, 1, &c1);

  apply (job, 0, c1);
  wait_for (job, 0, STG_TASK_RUNNING, c1, 0, 10000);
  gint pid1 = pid_of (job, 0);
  g_autofree gchar *run1 = group_of (pid1);
  g_autofree gchar *cwd = g_strdup_printf ("/proc/%d/cwd", pid1);
  g_autofree gchar *sandbox = g_file_read_link (cwd, NULL);
  ck_assert_ptr_nonnull (sandbox);
  g_autofree gchar *check = g_build_filename (sandbox, "check", NULL);
  g_autofree gchar *checked = group_after (check, "");
  ck_assert_msg (run1 != NULL && strstr (run1, "/stagger/") != NULL, "run in %s", run1);
  ck_assert_str_eq (checked, run1);

  /* The update: pre_update runs in the old run's group, post_update in the
   * new one's. */
  gint64 c2 = add_config (t2);
  apply (job, 0, c2);
  wait_for (job, 0, STG_TASK_RUNNING, c2, 0, 10000);
  g_autofree gchar *run2 = group_of (pid_of (job, 0));
  g_autofree gchar *jid = g_strdup_printf ("%" G_GINT64_FORMAT, job);
  g_autofree gchar *log = g_build_filename (fx.dir, "sandboxes", jid, "0", "hooks.log", NULL);
  g_autofree gchar *pre = group_after (log, "\npre\n");
  g_autofree gchar *post = group_after (log, "\npost\n");
  ck_assert_str_ne (run1, run2);
  ck_assert_str_eq (pre, run1);
  ck_assert_str_eq (post, run2);
}
END_TEST

static Suite *
runtime_limits_suite (void)
{
  Suite *s = suite_create ("runtime_limits");
  TCase *tc = tcase_create ("limits");

  tcase_set_timeout (tc, 60);
  tcase_add_checked_fixture (tc, setup, stg_rt_teardown);
  tcase_add_test (tc, over_its_memory_is_oom_killed);
  tcase_add_test (tc, busy_task_is_held_to_its_cores);
  tcase_add_test (tc, hooks_and_checks_run_in_the_group_of_their_run);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  g_autoptr (StgCgroups) cg = geteuid () == 0 ? stg_cgroups_new (NULL, NULL) : NULL;

  if (cg == NULL || stg_cgroups_version (cg) == STG_CGROUP_NONE)
    {
      g_print ("runtime_limits_test: skipped: %s\n",
               cg ? stg_cgroups_describe (cg) : "control groups are made as root only");
      return 77;
    }
  gchar *scope = stg_test_scope_begin ();
  SRunner *sr = srunner_create (runtime_limits_suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  stg_test_scope_end (scope);
  return failed == 0 ? 0 : 1;
}
