/* cgroup_test.c: Check suite for src/spawn/cgroup.c with real processes,
 * as root: a child spawned into a group is in it from its first
 * instruction; a memory hog over its limit is killed and counted as an
 * OOM kill; a busy loop given 0.25 cores is held to about a quarter of a
 * core (and the quota says it held it back); a fork bomb stops at the pids
 * limit; a group with processes cannot be removed until they are killed;
 * a host with no cgroup file system says the limits are not enforced.
 * Not root, or no cgroup can be made here: the suite is skipped (77), and
 * says why. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn/cgroup.h"
#include "spawn/spawn.h"
#include "testutil.h"

static StgCgroups *cg;
static GPid run_pid; /* the suite's own: tests run in forks of it */

static const gchar *const env[] = { "PATH=/usr/bin:/bin", NULL };

/* A group name of this test run: "test-PID-what". */
static gchar *
group_name (const gchar *what)
{
  return g_strdup_printf ("test-%d-%s", (gint) run_pid, what);
}

/* Starts /bin/sh -c @script in group @name; output to a pipe (*@out). */
static GPid
start_in (const gchar *name, const gchar *script, gint *out)
{
  const gchar *argv[] = { "/bin/sh", "-c", script, NULL };
  g_autoptr (GError) error = NULL;
  GArray *join = stg_cgroup_open_procs (cg, name, &error);
  ck_assert_msg (join != NULL, "%s", error ? error->message : "");
  StgSpawnRequest req = {
    .argv = argv,
    .envp = env,
    .out = { .to = out != NULL ? STG_SPAWN_PIPE : STG_SPAWN_NULL },
    .err = { .to = STG_SPAWN_AS_STDOUT },
    .join = (const gint *) join->data,
    .n_join = join->len,
  };
  StgSpawned s;
  ck_assert_msg (stg_spawn (&req, &s, &error), "spawn: %s", error ? error->message : "");
  stg_cgroup_close_procs (join);
  if (out != NULL)
    *out = s.out;
  return s.pid;
}

static gchar *
read_all (gint fd)
{
  g_autoptr (GString) text = g_string_new (NULL);
  gchar buf[4096];
  gssize got;

  while ((got = read (fd, buf, sizeof buf)) > 0 || (got < 0 && errno == EINTR))
    if (got > 0)
      g_string_append_len (text, buf, got);
  close (fd);
  return g_string_free (g_steal_pointer (&text), FALSE);
}

static void
make (const gchar *name, const StgCgroupLimits *limits)
{
  g_autoptr (GError) error = NULL;

  ck_assert_msg (stg_cgroup_make (cg, name, limits, &error), "%s", error ? error->message : "");
}

static void
kill_and_remove (const gchar *name)
{
  g_autoptr (GError) error = NULL;

  stg_cgroup_kill (cg, name);
  for (gint i = 0; i < 200 && !stg_cgroup_remove (cg, name, NULL); i++)
    g_usleep (10000);
  ck_assert_msg (stg_cgroup_remove (cg, name, &error), "%s", error ? error->message : "");
}

START_TEST (child_is_in_its_group_from_the_start)
{
  g_autofree gchar *name = group_name ("join");
  StgCgroupLimits none = { 0 };
  gint out, status;

  make (name, &none);
  GPid pid = start_in (name, "cat /proc/self/cgroup", &out);
  g_autofree gchar *text = read_all (out);
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  /* cat is a child of the shell: what it reports was inherited. */
  g_autofree gchar *line = g_strdup_printf ("/%s\n", name);
  ck_assert_msg (strstr (text, line) != NULL, "not in %s: %s", name, text);
  kill_and_remove (name);
}
END_TEST

START_TEST (memory_hog_is_oom_killed)
{
  g_autofree gchar *name = group_name ("memory");
  StgCgroupLimits limits = { .memory = 32 * 1024 * 1024 };
  StgCgroupUsage u;
  gint status;

  make (name, &limits);
  GPid pid = start_in (name,
                       "exec python3 -c 'import time; x = bytearray(200 << 20); time.sleep(30)'",
                       NULL);
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  ck_assert_msg (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL, "status %d", status);
  ck_assert (stg_cgroup_usage (cg, name, &u, NULL));
  ck_assert_int_ge (u.oom_kills, 1);
  ck_assert_int_le (u.memory_peak, 33 * 1024 * 1024);
  kill_and_remove (name);
}
END_TEST

START_TEST (cpu_quota_holds_a_busy_loop)
{
  g_autofree gchar *name = group_name ("cpu");
  StgCgroupLimits limits = { .cpus = 0.25 };
  StgCgroupUsage before, after;

  make (name, &limits);
  /* Four busy loops, so that the group wants more than its quota even
   * when a loaded machine gives each of them little. */
  GPid pid = start_in (name, "for i in 1 2 3 4; do (while :; do :; done) & done; wait", NULL);
  g_usleep (G_USEC_PER_SEC / 2);
  ck_assert (stg_cgroup_usage (cg, name, &before, NULL));
  gint64 t0 = g_get_monotonic_time ();
  g_usleep (3 * G_USEC_PER_SEC);
  ck_assert (stg_cgroup_usage (cg, name, &after, NULL));
  gint64 wall_ns = (g_get_monotonic_time () - t0) * 1000;
  gdouble cores = (gdouble) (after.cpu_ns - before.cpu_ns) / (gdouble) wall_ns;
  kill (pid, SIGKILL);
  waitpid (pid, NULL, 0);
  /* A quarter, with room for a loaded machine below and for the period's
   * rounding above; unlimited they would take every core they can. */
  ck_assert_msg (cores > 0.05 && cores < 0.35, "used %.2f cores", cores);
  ck_assert_msg (after.throttled_ns > before.throttled_ns, "the quota never held it back");
  kill_and_remove (name);
}
END_TEST

START_TEST (fork_bomb_stops_at_the_pids_limit)
{
  g_autofree gchar *name = group_name ("pids");
  StgCgroupLimits limits = { .pids = 16 };
  StgCgroupUsage u;
  gint out, status;

  make (name, &limits);
  GPid pid = start_in (name,
                       "n=0; while [ $n -lt 100 ]; do sleep 30 & n=$((n+1)); done 2>/dev/null; "
                       "wait",
                       &out);
  g_autofree gchar *text = NULL;
  /* Until the count holds still for half a second: the shell gave up. */
  gint64 last = -1;
  for (gint still = 0, i = 0; still < 25 && i < 1000; i++)
    {
      ck_assert (stg_cgroup_usage (cg, name, &u, NULL));
      still = u.pids == last ? still + 1 : 0;
      last = u.pids;
      g_usleep (20000);
    }
  ck_assert_int_le (u.pids, 16);
  ck_assert_int_ge (u.pids, 15);
  /* The host still answers: this process can start another. */
  g_autofree gchar *other = group_name ("other");
  StgCgroupLimits none = { 0 };
  make (other, &none);
  gint other_out;
  GPid echo = start_in (other, "echo fine", &other_out);
  g_autofree gchar *fine = read_all (other_out);
  ck_assert_int_eq (waitpid (echo, &status, 0), echo);
  ck_assert_str_eq (fine, "fine\n");
  kill_and_remove (other);
  ck_assert_uint_ge (stg_cgroup_kill (cg, name), 1);
  text = read_all (out);
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  kill_and_remove (name);
}
END_TEST

START_TEST (busy_group_is_not_removed)
{
  g_autofree gchar *name = group_name ("busy");
  StgCgroupLimits none = { 0 };
  g_autoptr (GError) error = NULL;

  make (name, &none);
  GPid pid = start_in (name, "sleep 30", NULL);
  ck_assert (!stg_cgroup_remove (cg, name, &error));
  ck_assert_msg (strstr (error->message, "processes remain") != NULL, "%s", error->message);
  ck_assert_uint_ge (stg_cgroup_kill (cg, name), 1);
  waitpid (pid, NULL, 0);
  kill_and_remove (name);
  /* Gone: removing it again is no error. */
  ck_assert (stg_cgroup_remove (cg, name, NULL));
}
END_TEST

/* Pruning by a prefix removes that prefix's empty groups only. */
START_TEST (prune_removes_empty_groups_of_a_prefix)
{
  g_autofree gchar *prefix = group_name ("prune.");
  g_autofree gchar *empty = g_strconcat (prefix, "empty", NULL);
  g_autofree gchar *busy = g_strconcat (prefix, "busy", NULL);
  g_autofree gchar *other = group_name ("other");
  StgCgroupLimits none = { 0 };

  make (empty, &none);
  make (busy, &none);
  make (other, &none);
  GPid pid = start_in (busy, "sleep 30", NULL);
  ck_assert_uint_eq (stg_cgroups_prune (cg, prefix), 1);
  StgCgroupUsage u;
  ck_assert (!stg_cgroup_usage (cg, empty, &u, NULL)); /* gone */
  ck_assert (stg_cgroup_usage (cg, busy, &u, NULL));
  ck_assert (stg_cgroup_usage (cg, other, &u, NULL));
  stg_cgroup_kill (cg, busy);
  waitpid (pid, NULL, 0);
  for (gint i = 0; i < 200 && stg_cgroups_prune (cg, prefix) > 0; i++)
    g_usleep (10000);
  ck_assert (!stg_cgroup_usage (cg, busy, &u, NULL));
  kill_and_remove (other);
}
END_TEST

START_TEST (no_cgroup_file_system_says_so)
{
  g_autoptr (StgCgroups) none = stg_cgroups_new (NULL, "/nonexistent");
  StgCgroupUsage u;
  g_autoptr (GError) error = NULL;

  ck_assert_int_eq (stg_cgroups_version (none), STG_CGROUP_NONE);
  ck_assert_msg (strstr (stg_cgroups_describe (none), "not limited") != NULL, "%s",
                 stg_cgroups_describe (none));
  ck_assert (!stg_cgroup_usage (none, "x", &u, &error));
}
END_TEST

/* After each test, in the suite's process: a failed test's groups go too. */
static void
remove_groups (void)
{
  static const gchar *const whats[] = { "join", "memory", "cpu", "pids", "other", "busy" };

  for (guint i = 0; i < G_N_ELEMENTS (whats); i++)
    {
      g_autofree gchar *name = group_name (whats[i]);
      stg_cgroup_kill (cg, name);
      for (gint t = 0; t < 200 && !stg_cgroup_remove (cg, name, NULL); t++)
        g_usleep (10000);
    }
}

/* ---- cgroup v2, on files standing in for it -------------------------------- */

/* Writes @text to @dir/@file, making @dir. */
static void
put (const gchar *dir, const gchar *file, const gchar *text)
{
  g_autofree gchar *path = g_build_filename (dir, file, NULL);

  ck_assert_int_eq (g_mkdir_with_parents (dir, 0755), 0);
  ck_assert (g_file_set_contents (path, text, -1, NULL));
}

static gchar *
got (const gchar *dir, const gchar *file)
{
  g_autofree gchar *path = g_build_filename (dir, file, NULL);
  gchar *text = NULL;

  ck_assert_msg (g_file_get_contents (path, &text, NULL, NULL), "no %s", path);
  return text;
}

/* A v2 hierarchy (no real one here: these hosts bind the controllers to
 * v1) in a folder: a unit's delegated group /svc offering memory, cpu and
 * pids. The base goes in it as "stagger", both hand the controllers on,
 * and a group's files get the kernel's forms of each limit. */
START_TEST (v2_limits_are_written_in_its_forms)
{
  g_autofree gchar *top = g_build_filename (g_get_tmp_dir (), "cg-v2-XXXXXX", NULL);
  ck_assert_ptr_nonnull (g_mkdtemp (top));
  g_autofree gchar *proc = g_build_filename (top, "proc", NULL);
  g_autofree gchar *mount = g_build_filename (top, "cg", NULL);
  g_autofree gchar *svc = g_build_filename (mount, "svc", NULL);
  g_autofree gchar *base = g_build_filename (svc, "stagger", NULL);
  g_autofree gchar *group = g_build_filename (base, "g", NULL);
  g_autofree gchar *line = g_strdup_printf ("30 25 0:26 / %s rw,nosuid - cgroup2 cgroup2 rw\n"
                                            "31 25 0:27 / /proc rw - proc proc rw\n",
                                            mount);
  put (proc, "mountinfo", line);
  put (proc, "cgroup", "0::/svc\n");
  put (svc, "cgroup.controllers", "cpuset cpu io memory pids\n");
  put (svc, "cgroup.subtree_control", "");
  put (base, "cgroup.subtree_control", "");
  static const gchar *const files[] = { "memory.max", "memory.swap.max", "cpu.max",
                                        "cpu.weight", "pids.max",        "cgroup.procs" };
  for (guint i = 0; i < G_N_ELEMENTS (files); i++)
    put (group, files[i], "");

  g_autoptr (StgCgroups) v2 = stg_cgroups_new (NULL, proc);
  ck_assert_msg (stg_cgroups_version (v2) == STG_CGROUP_V2, "%s", stg_cgroups_describe (v2));
  g_autofree gchar *said = g_strdup_printf ("cgroup v2: memory, cpu and pids at %s", base);
  ck_assert_str_eq (stg_cgroups_describe (v2), said);
  g_autofree gchar *handed = got (svc, "cgroup.subtree_control");
  ck_assert_str_eq (handed, "+memory +cpu +pids");
  g_autofree gchar *handed_on = got (base, "cgroup.subtree_control");
  ck_assert_str_eq (handed_on, "+memory +cpu +pids");

  StgCgroupLimits limits = { .memory = 64 * 1024 * 1024, .cpus = 0.5, .pids = 100 };
  g_autoptr (GError) error = NULL;
  ck_assert_msg (stg_cgroup_make (v2, "g", &limits, &error), "%s", error ? error->message : "");
  const gchar *want[][2] = { { "memory.max", "67108864" },
                             { "memory.swap.max", "0" },
                             { "cpu.max", "50000 100000" },
                             { "cpu.weight", "100" },
                             { "pids.max", "100" } };
  for (guint i = 0; i < G_N_ELEMENTS (want); i++)
    {
      g_autofree gchar *v = got (group, want[i][0]);
      ck_assert_msg (g_str_equal (v, want[i][1]), "%s: %s", want[i][0], v);
    }
  /* The same group again (a restart), as a weight: the files change. */
  for (guint i = 0; i < G_N_ELEMENTS (files); i++)
    put (group, files[i], "");
  StgCgroupLimits weight = { .cpus = 2.0, .cpu_weight = TRUE };
  ck_assert (stg_cgroup_make (v2, "g", &weight, NULL));
  g_autofree gchar *max = got (group, "cpu.max");
  g_autofree gchar *w = got (group, "cpu.weight");
  g_autofree gchar *mem = got (group, "memory.max");
  ck_assert_str_eq (max, "max 100000");
  ck_assert_str_eq (w, "200");
  ck_assert_str_eq (mem, "max");

  put (group, "memory.current", "1048576\n");
  put (group, "memory.peak", "2097152\n");
  put (group, "memory.stat", "anon 524288\nfile 0\n");
  put (group, "memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n");
  put (group, "cpu.stat", "usage_usec 1500\nuser_usec 1000\nthrottled_usec 250\n");
  put (group, "pids.current", "7\n");
  StgCgroupUsage u;
  ck_assert (stg_cgroup_usage (v2, "g", &u, NULL));
  ck_assert_int_eq (u.memory, 1048576);
  ck_assert_int_eq (u.memory_peak, 2097152);
  ck_assert_int_eq (u.rss, 524288);
  ck_assert_int_eq (u.oom_kills, 1);
  ck_assert_int_eq (u.cpu_ns, 1500000);
  ck_assert_int_eq (u.throttled_ns, 250000);
  ck_assert_int_eq (u.pids, 7);
  g_autofree gchar *rm = g_strdup_printf ("rm -rf '%s'", top);
  ck_assert_int_eq (system (rm), 0);
}
END_TEST

static Suite *
cgroup_suite (void)
{
  Suite *s = suite_create ("cgroup");
  TCase *tc = tcase_create ("limits");

  tcase_set_timeout (tc, 60);
  tcase_add_unchecked_fixture (tc, NULL, remove_groups);
  tcase_add_test (tc, child_is_in_its_group_from_the_start);
  tcase_add_test (tc, memory_hog_is_oom_killed);
  tcase_add_test (tc, cpu_quota_holds_a_busy_loop);
  tcase_add_test (tc, fork_bomb_stops_at_the_pids_limit);
  tcase_add_test (tc, busy_group_is_not_removed);
  tcase_add_test (tc, prune_removes_empty_groups_of_a_prefix);
  if (cg != NULL)
    suite_add_tcase (s, tc);
  TCase *files = tcase_create ("files");
  tcase_add_test (files, no_cgroup_file_system_says_so);
  tcase_add_test (files, v2_limits_are_written_in_its_forms);
  suite_add_tcase (s, files);
  return s;
}

/* The limits on real processes need root and a cgroup file system; the
 * files' tests run anywhere. Without the first, a pass is a skip (77). */
int
main (void)
{
  run_pid = getpid ();
  cg = geteuid () == 0 ? stg_cgroups_new (NULL, NULL) : NULL;
  if (cg != NULL && stg_cgroups_version (cg) == STG_CGROUP_NONE)
    {
      g_print ("cgroup_test: %s\n", stg_cgroups_describe (cg));
      g_clear_pointer (&cg, stg_cgroups_free);
    }
  else if (cg == NULL)
    g_print ("cgroup_test: control groups are made as root only\n");
  else
    g_print ("cgroup_test: %s\n", stg_cgroups_describe (cg));
  gchar *scope = stg_test_scope_begin ();
  SRunner *sr = srunner_create (cgroup_suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  stg_test_scope_end (scope);
  gboolean limited = cg != NULL;
  g_clear_pointer (&cg, stg_cgroups_free);
  if (failed == 0 && !limited)
    g_print ("cgroup_test: skipped: the limits on real processes were not tried\n");
  return failed != 0 ? 1 : limited ? 0 : 77;
}
