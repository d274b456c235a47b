/* spawn_test.c: Check suite for src/spawn/spawn.c, the one way staggerd
 * and stagger-thermos start a process: a child gets exactly the environment, working
 * directory, umask, resource limits, descriptors (its outputs, the ones
 * passed as 3, 4, ..., nothing else of ours), session or process group and
 * PR_SET_NO_NEW_PRIVS it is given, and as root becomes its user with that
 * user's groups; a step that fails says which; StgChild reports an end and
 * kills a whole process group. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn/process.h"
#include "spawn/spawn.h"
#include "testutil.h"

static const gchar *const base_env[] = { "PATH=/usr/bin:/bin", "ONLY=this", NULL };

/* Runs /bin/sh -c @script as @req says (its output through a pipe, its
 * error merged), waits for it, and returns what it printed; *@status
 * (nullable) gets its wait status. */
static gchar *
run_sh (StgSpawnRequest *req, const gchar *script, gint *status)
{
  const gchar *argv[] = { "/bin/sh", "-c", script, NULL };
  g_autoptr (GError) error = NULL;
  g_autoptr (GString) out = g_string_new (NULL);
  StgSpawned s;
  gchar buf[4096];
  gssize got;
  gint st = 0;

  req->argv = argv;
  req->out = (StgSpawnOutput){ .to = STG_SPAWN_PIPE };
  req->err = (StgSpawnOutput){ .to = STG_SPAWN_AS_STDOUT };
  ck_assert_msg (stg_spawn (req, &s, &error), "spawn: %s", error ? error->message : "");
  ck_assert_int_ge (s.out, 0);
  while ((got = read (s.out, buf, sizeof buf)) > 0 || (got < 0 && errno == EINTR))
    if (got > 0)
      g_string_append_len (out, buf, got);
  close (s.out);
  ck_assert_int_eq (waitpid (s.pid, &st, 0), s.pid);
  if (status != NULL)
    *status = st;
  return g_strdup (g_strstrip (out->str));
}

START_TEST (environment_is_exactly_the_given_one)
{
  g_setenv ("STG_SPAWN_SECRET", "hush", TRUE);
  g_setenv ("LISTEN_FDS", "7", TRUE);
  StgSpawnRequest req = { .envp = base_env };
  g_autofree gchar *env = run_sh (&req, "env | sort", NULL);
  g_unsetenv ("STG_SPAWN_SECRET");
  g_unsetenv ("LISTEN_FDS");

  /* sh adds PWD to what it was given. */
  ck_assert_str_eq (env, "ONLY=this\nPATH=/usr/bin:/bin\nPWD=/");
}
END_TEST

START_TEST (cwd_umask_and_limits)
{
  g_autofree gchar *dir = stg_test_tmpdir ();
  StgSpawnRequest req = { .envp = base_env, .cwd = dir };
  g_autofree gchar *out = run_sh (&req, "pwd; umask; ulimit -Sn", NULL);
  struct rlimit l;
  ck_assert (getrlimit (RLIMIT_NOFILE, &l) == 0);
  g_autofree gchar *want = g_strdup_printf ("%s\n0022\n%lu", dir,
                                            (gulong) MIN (l.rlim_max, STG_SPAWN_MAX_FILES));
  ck_assert_str_eq (out, want);

  StgSpawnLimit limits[] = { { RLIMIT_NOFILE, 64, 64 }, { RLIMIT_CORE, 0, 0 } };
  StgSpawnRequest req2 = { .envp = base_env, .umask = 077, .limits = limits, .n_limits = 2 };
  g_autofree gchar *out2 = run_sh (&req2, "pwd; umask; ulimit -Sn; ulimit -Hn; ulimit -c", NULL);
  ck_assert_str_eq (out2, "/\n0077\n64\n64\n0");
  stg_test_rmtree (dir);
}
END_TEST

START_TEST (no_new_privileges_and_no_ambient_capabilities)
{
  StgSpawnRequest req = { .envp = base_env };
  g_autofree gchar *out = run_sh (&req, "grep -E '^(NoNewPrivs|CapAmb)' /proc/self/status", NULL);
  ck_assert_str_eq (out, "CapAmb:\t0000000000000000\nNoNewPrivs:\t1");
}
END_TEST

/* Only its outputs and the descriptors passed as 3, 4, ... reach the
 * child: one of ours that is not close-on-exec does not. */
START_TEST (only_the_given_descriptors_are_inherited)
{
  gint leak = open ("/dev/null", O_RDONLY); /* no O_CLOEXEC */
  ck_assert_int_ge (leak, 0);
  ck_assert_int_eq (dup2 (leak, 57), 57);
  gint pass[2];
  ck_assert (pipe2 (pass, O_CLOEXEC) == 0);
  StgSpawnRequest req = {
    .envp = base_env, .fds = &pass[1], .n_fds = 1, .listen_fds = TRUE, .fd_names = "web"
  };
  g_autofree gchar *out = run_sh (
      &req,
      "echo via-3 >&3; [ -e /proc/$$/fd/57 ] && echo leaked; [ -e /proc/$$/fd/4 ] && echo four;"
      " [ \"$LISTEN_PID\" = $$ ] && echo $LISTEN_FDS $LISTEN_FDNAMES",
      NULL);
  close (pass[1]);
  gchar buf[64] = { 0 };
  ck_assert_int_gt (read (pass[0], buf, sizeof buf - 1), 0);
  close (pass[0]);
  close (57);
  close (leak);
  ck_assert_str_eq (buf, "via-3\n");
  ck_assert_str_eq (out, "1 web");
}
END_TEST

/* A passed descriptor whose number is one of those it goes to, or a
 * standard one, still lands where it should. */
START_TEST (descriptors_that_collide_are_moved_first)
{
  gint pass[2];
  ck_assert (pipe2 (pass, O_CLOEXEC) == 0);
  gint high = fcntl (pass[1], F_DUPFD_CLOEXEC, 200);
  /* The write end as 4, the read end's copy as 3: swapped on the way. */
  gint fds[] = { dup3 (high, 40, O_CLOEXEC), dup3 (pass[0], 41, O_CLOEXEC) };
  gint swapped[] = { fds[1], fds[0] };
  StgSpawnRequest req = { .envp = base_env, .fds = swapped, .n_fds = 2 };
  g_autofree gchar *out = run_sh (&req, "echo moved >&4; [ -e /proc/$$/fd/5 ] || echo two", NULL);
  close (pass[1]);
  close (high);
  close (fds[0]);
  close (fds[1]);
  gchar buf[64] = { 0 };
  ck_assert_int_gt (read (pass[0], buf, sizeof buf - 1), 0);
  close (pass[0]);
  ck_assert_str_eq (buf, "moved\n");
  ck_assert_str_eq (out, "two");
}
END_TEST

/* The session id and process group of the child's shell. */
static void
session_and_group (StgSpawnGroup group, gboolean *own_session, gboolean *own_group)
{
  StgSpawnRequest req = { .envp = base_env, .group = group };
  /* Fields 5 and 6 of /proc/PID/stat: process group, session. */
  g_autofree gchar *out = run_sh (&req,
                                  "read s < /proc/$$/stat; set -- ${s##*) }; "
                                  "[ $3 = $$ ] && echo group; [ $4 = $$ ] && echo session",
                                  NULL);
  *own_group = strstr (out, "group") != NULL;
  *own_session = strstr (out, "session") != NULL;
}

START_TEST (session_or_process_group)
{
  gboolean session, group;

  session_and_group (STG_SPAWN_SESSION, &session, &group);
  ck_assert (session && group);
  session_and_group (STG_SPAWN_GROUP, &session, &group);
  ck_assert (!session && group);
}
END_TEST

/* The start time names the process, as adoption finds it again. */
START_TEST (start_time_names_the_process)
{
  const gchar *argv[] = { "/bin/sleep", "600", NULL };
  g_autoptr (GError) error = NULL;
  StgSpawnRequest req = { .argv = argv, .envp = base_env };
  StgSpawned s;
  ck_assert_msg (stg_spawn (&req, &s, &error), "%s", error ? error->message : "");
  ck_assert_int_eq (s.out, -1);
  ck_assert_int_gt (s.start_time, 0);
  ck_assert (stg_process_is (s.pid, s.start_time));
  kill (s.pid, SIGKILL);
  ck_assert_int_eq (waitpid (s.pid, NULL, 0), s.pid);
}
END_TEST

/* A child of a process that spawns with @die_with_parent and then exits
 * at once: the grandchild's pid and start time. */
static void
orphan (gboolean die_with_parent, GPid *pid, gint64 *start)
{
  gint ends[2];
  ck_assert (pipe (ends) == 0);
  pid_t middle = fork ();
  if (middle == 0)
    {
      const gchar *argv[] = { "/bin/sleep", "600", NULL };
      StgSpawnRequest req = { .argv = argv, .envp = base_env, .die_with_parent = die_with_parent };
      StgSpawned s = { 0 };
      gint64 got[2] = { 0, 0 };
      if (stg_spawn (&req, &s, NULL))
        got[0] = s.pid, got[1] = s.start_time;
      (void) !write (ends[1], got, sizeof got);
      _exit (0);
    }
  gint64 got[2] = { 0, 0 };
  close (ends[1]);
  ck_assert_int_eq (read (ends[0], got, sizeof got), sizeof got);
  close (ends[0]);
  ck_assert_int_eq (waitpid (middle, NULL, 0), middle);
  ck_assert_int_gt (got[0], 0);
  *pid = (GPid) got[0];
  *start = got[1];
}

/* die_with_parent: the child is killed when the process that spawned it
 * dies; without it, the child stays. */
START_TEST (dies_with_its_parent_when_asked)
{
  GPid pid;
  gint64 start;

  orphan (TRUE, &pid, &start);
  for (gint64 end = g_get_monotonic_time () + 20 * G_USEC_PER_SEC; stg_process_is (pid, start);)
    {
      ck_assert_msg (g_get_monotonic_time () < end, "the child outlived its parent");
      g_usleep (1000);
    }
  orphan (FALSE, &pid, &start);
  ck_assert (stg_process_is (pid, start));
  kill (pid, SIGKILL);
}
END_TEST

START_TEST (failures_say_which_step)
{
  g_autoptr (GError) e1 = NULL;
  g_autoptr (GError) e2 = NULL;
  g_autoptr (GError) e3 = NULL;
  StgSpawned s;
  const gchar *sh[] = { "/bin/sh", "-c", "true", NULL };
  StgSpawnRequest req = { .argv = sh, .envp = base_env, .cwd = "/no/such/folder" };
  ck_assert (!stg_spawn (&req, &s, &e1));
  ck_assert_str_eq (e1->message,
                    "cannot run /bin/sh: chdir /no/such/folder: No such file or directory");

  const gchar *missing[] = { "/no/such/program", NULL };
  StgSpawnRequest req2 = { .argv = missing, .envp = base_env };
  ck_assert (!stg_spawn (&req2, &s, &e2));
  ck_assert_str_eq (e2->message, "cannot run /no/such/program: No such file or directory");

  const gchar *unknown[] = { "no-such-program-anywhere", NULL };
  StgSpawnRequest req3 = { .argv = unknown, .envp = base_env };
  ck_assert (!stg_spawn (&req3, &s, &e3));
  ck_assert (g_error_matches (e3, STG_SPAWN_ERROR, STG_SPAWN_ERROR_NOT_FOUND));

  /* A group it cannot join (here: a file open for reading only). */
  g_autoptr (GError) e4 = NULL;
  gint ro = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  StgSpawnRequest req4 = { .argv = sh, .envp = base_env, .join = &ro, .n_join = 1 };
  ck_assert (!stg_spawn (&req4, &s, &e4));
  close (ro);
  ck_assert_str_eq (e4->message,
                    "cannot run /bin/sh: joining its control group: Bad file descriptor");
}
END_TEST

START_TEST (describes_wait_statuses)
{
  g_autofree gchar *a = stg_spawn_describe (3 << 8);
  g_autofree gchar *b = stg_spawn_describe (SIGKILL);
  ck_assert_str_eq (a, "exited with status 3");
  ck_assert_str_eq (b, "killed by signal 9 (Killed)");
}
END_TEST

/* As root: the child is the user it is given, with that user's groups
 * from the group database, not ours. Not root: it cannot be, and says so. */
START_TEST (becomes_its_user_with_its_groups)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (StgIdentity) nobody = stg_identity_lookup ("nobody", &error);
  ck_assert_msg (nobody != NULL, "%s", error ? error->message : "");
  StgSpawnRequest req = { .envp = base_env, .identity = nobody };
  if (geteuid () != 0)
    {
      const gchar *argv[] = { "/bin/true", NULL };
      StgSpawned s;
      req.argv = argv;
      ck_assert (!stg_spawn (&req, &s, &error));
      ck_assert_str_eq (error->message, "cannot run /bin/true: becoming user nobody: "
                                        "Operation not permitted");
      return;
    }
  /* Ours differ: a supplementary group root would otherwise pass on. */
  gid_t mine[] = { 0, 4242 };
  ck_assert (setgroups (2, mine) == 0);
  g_autofree gchar *out = run_sh (&req, "id -u; id -g; id -G", NULL);
  g_autoptr (GString) want = g_string_new (NULL);
  g_string_append_printf (want, "%u\n%u\n", (guint) nobody->uid, (guint) nobody->gid);
  for (gint i = 0; i < nobody->n_groups; i++)
    g_string_append_printf (want, "%s%u", i ? " " : "", (guint) nobody->groups[i]);
  ck_assert_str_eq (out, want->str);
}
END_TEST

typedef struct
{
  gboolean done;
  gint status;
} Ended;

static void
on_ended (gpointer data, gint status)
{
  Ended *e = data;
  ck_assert (!e->done);
  e->done = TRUE;
  e->status = status;
}

static void
iterate_until (gboolean *flag)
{
  gint64 end = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  while (!*flag)
    {
      ck_assert_msg (g_get_monotonic_time () < end, "the child did not end");
      g_main_context_iteration (NULL, TRUE);
    }
}

/* A kill reaches the child's whole process group; its end is reported
 * once. */
START_TEST (child_kill_reaches_the_group)
{
  g_autofree gchar *dir = stg_test_tmpdir ();
  g_autofree gchar *pidfile = g_build_filename (dir, "pid", NULL);
  g_autofree gchar *script = g_strdup_printf ("sleep 600 & echo $! > %s; wait", pidfile);
  const gchar *argv[] = { "/bin/sh", "-c", script, NULL };
  Ended e = { 0 };
  g_autoptr (GError) error = NULL;
  StgSpawnRequest req = { .argv = argv, .envp = base_env, .group = STG_SPAWN_GROUP };
  StgChild *c = stg_child_spawn (&req, on_ended, &e, &error);
  ck_assert_msg (c != NULL, "%s", error ? error->message : "");
  g_autofree gchar *text = NULL;
  for (gint64 end = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
       !g_file_get_contents (pidfile, &text, NULL, NULL) || strchr (text, '\n') == NULL;)
    {
      ck_assert_msg (g_get_monotonic_time () < end, "no pid file");
      g_clear_pointer (&text, g_free);
      g_usleep (10 * 1000);
    }
  GPid sleeper = (GPid) g_ascii_strtoll (text, NULL, 10);
  stg_child_kill (c);
  iterate_until (&e.done);
  ck_assert (WIFSIGNALED (e.status) && WTERMSIG (e.status) == SIGKILL);
  stg_child_free (c);
  /* The grandchild got the same SIGKILL (init reaps it). */
  for (gint64 end = g_get_monotonic_time () + 20 * G_USEC_PER_SEC; kill (sleeper, 0) == 0;)
    {
      g_autofree gchar *stat = g_strdup_printf ("/proc/%d/stat", (int) sleeper);
      g_autofree gchar *st = NULL;
      if (g_file_get_contents (stat, &st, NULL, NULL) && strstr (st, ") Z ") != NULL)
        break;
      ck_assert_msg (g_get_monotonic_time () < end, "the group's other process lives on");
      g_usleep (10 * 1000);
    }
  stg_test_rmtree (dir);
}
END_TEST

/* A group runs while any of its processes does, its leader gone or not,
 * and not once the last is gone (or only a zombie is left). */
START_TEST (group_runs_until_its_last_process_ends)
{
  const gchar *argv[] = { "/bin/sh", "-c", "sleep 600 & echo $!", NULL };
  g_autoptr (GError) error = NULL;
  StgSpawnRequest req = {
    .argv = argv, .envp = base_env, .group = STG_SPAWN_GROUP, .out = { .to = STG_SPAWN_PIPE }
  };
  StgSpawned s;
  gchar buf[64] = { 0 };
  gint st = 0;

  ck_assert_msg (stg_spawn (&req, &s, &error), "spawn: %s", error ? error->message : "");
  ck_assert_int_gt (read (s.out, buf, sizeof buf - 1), 0);
  close (s.out);
  ck_assert_int_eq (waitpid (s.pid, &st, 0), s.pid); /* the leader is gone */
  ck_assert (stg_process_group_runs (s.pid));        /* its sleep is not */
  stg_process_signal_group (s.pid, SIGKILL);
  for (gint64 end = g_get_monotonic_time () + 20 * G_USEC_PER_SEC; stg_process_group_runs (s.pid);)
    {
      ck_assert_msg (g_get_monotonic_time () < end, "the group runs on after SIGKILL");
      g_usleep (10 * 1000);
    }
  ck_assert_int_gt (g_ascii_strtoll (buf, NULL, 10), 0);
}
END_TEST

/* A freed child never calls back, and is still reaped when it ends. */
START_TEST (freed_child_is_reaped_quietly)
{
  const gchar *argv[] = { "/bin/sh", "-c", "echo $$; exec sleep 600", NULL };
  Ended e = { 0 };
  StgSpawnRequest req = { .argv = argv, .envp = base_env, .out = { .to = STG_SPAWN_PIPE } };
  StgChild *c = stg_child_spawn (&req, on_ended, &e, NULL);
  ck_assert (c != NULL);
  gint out = stg_child_steal_out (c);
  ck_assert_int_ge (out, 0);
  ck_assert_int_eq (stg_child_steal_out (c), -1);
  gchar buf[32] = { 0 };
  ck_assert_int_gt (read (out, buf, sizeof buf - 1), 0);
  close (out);
  GPid pid = (GPid) g_ascii_strtoll (buf, NULL, 10);
  stg_child_free (c);
  ck_assert_int_eq (kill (pid, SIGKILL), 0);
  g_autofree gchar *proc = g_strdup_printf ("/proc/%d", (int) pid);
  for (gint64 end = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
       g_file_test (proc, G_FILE_TEST_EXISTS);)
    {
      ck_assert_msg (g_get_monotonic_time () < end, "the freed child was never reaped");
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
  ck_assert (!e.done);
}
END_TEST

static Suite *
spawn_suite (void)
{
  Suite *s = suite_create ("spawn");
  TCase *tc = tcase_create ("spawn");

  tcase_set_timeout (tc, 60);
  tcase_add_test (tc, environment_is_exactly_the_given_one);
  tcase_add_test (tc, cwd_umask_and_limits);
  tcase_add_test (tc, no_new_privileges_and_no_ambient_capabilities);
  tcase_add_test (tc, only_the_given_descriptors_are_inherited);
  tcase_add_test (tc, descriptors_that_collide_are_moved_first);
  tcase_add_test (tc, session_or_process_group);
  tcase_add_test (tc, start_time_names_the_process);
  tcase_add_test (tc, dies_with_its_parent_when_asked);
  tcase_add_test (tc, failures_say_which_step);
  tcase_add_test (tc, describes_wait_statuses);
  tcase_add_test (tc, becomes_its_user_with_its_groups);
  tcase_add_test (tc, child_kill_reaches_the_group);
  tcase_add_test (tc, group_runs_until_its_last_process_ends);
  tcase_add_test (tc, freed_child_is_reaped_quietly);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  gchar *scope = stg_test_scope_begin ();
  SRunner *sr = srunner_create (spawn_suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  stg_test_scope_end (scope);
  return failed == 0 ? 0 : 1;
}
