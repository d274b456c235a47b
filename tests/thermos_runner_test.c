/* thermos_runner_test.c: stagger-thermos run for real, on real processes in
 * temporary sandboxes: order constraints, retries and failure limits,
 * ephemeral, daemon and final processes, finalization_wait, concurrency,
 * .thermos_profile, templates and port aliases, the logs' layout and
 * rotation, the environment, the HTTP lifecycle against a small server
 * (tests/aurora/http_server.py), a stop's preemption wait, a daemonizing
 * process killed with the task, and the exit statuses. Aurora's end-to-end
 * jobs run from tests/aurora. Fixed ports: 29100-29199. */
#include "config.h"

#include <check.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#define WAIT_MS 30000

typedef struct
{
  gchar *dir;     /* the test's folder */
  gchar *sandbox; /* dir/sandboxes/0 */
  GSubprocess *proc;
  gboolean exited;
} Run;

static Run *
run_new (void)
{
  Run *r = g_new0 (Run, 1);
  g_autofree gchar *bin = NULL;
  g_autofree gchar *python = NULL;

  r->dir = stg_test_tmpdir ();
  r->sandbox = g_build_filename (r->dir, "sandboxes", "0", NULL);
  /* Aurora's jobs run "python": here it is python3. */
  bin = g_build_filename (r->dir, "bin", NULL);
  python = g_build_filename (bin, "python", NULL);
  ck_assert_int_eq (g_mkdir_with_parents (bin, 0755), 0);
  ck_assert (g_file_set_contents (python, "#!/bin/sh\nexec python3 \"$@\"\n", -1, NULL));
  ck_assert_int_eq (g_chmod (python, 0755), 0);
  return r;
}

static void
run_free (Run *r)
{
  if (r->proc != NULL && !r->exited)
    g_subprocess_force_exit (r->proc);
  g_clear_object (&r->proc);
  stg_test_kill_instances (r->dir);
  stg_test_rmtree (r->dir);
  g_free (r->dir);
  g_free (r->sandbox);
  g_free (r);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Run, run_free)

static void
on_runner_exit (GObject *source, GAsyncResult *result, gpointer data)
{
  Run *r = data;

  g_subprocess_wait_finish (G_SUBPROCESS (source), result, NULL);
  r->exited = TRUE;
}

/* Starts stagger-thermos on @json with the extra arguments (NULL-ended)
 * after --sandbox; its output goes to dir/runner.out and runner.err. */
static void run_start_env (Run *r, const gchar *json, gchar **env, ...) G_GNUC_NULL_TERMINATED;

static void
run_start_env (Run *r, const gchar *json, gchar **env, ...)
{
  g_autofree gchar *task = g_build_filename (r->dir, "task.json", NULL);
  g_autofree gchar *program = stg_test_program ("stagger-thermos");
  g_autofree gchar *out = g_build_filename (r->dir, "runner.out", NULL);
  g_autofree gchar *err = g_build_filename (r->dir, "runner.err", NULL);
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autoptr (GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_NONE);
  g_autoptr (GError) error = NULL;
  va_list ap;

  ck_assert (g_file_set_contents (task, json, -1, NULL));
  g_ptr_array_add (argv, program);
  g_ptr_array_add (argv, "--sandbox");
  g_ptr_array_add (argv, r->sandbox);
  va_start (ap, env);
  for (const gchar *arg = va_arg (ap, const gchar *); arg != NULL; arg = va_arg (ap, const gchar *))
    g_ptr_array_add (argv, (gpointer) arg);
  va_end (ap);
  g_ptr_array_add (argv, task);
  g_ptr_array_add (argv, NULL);
  g_subprocess_launcher_set_environ (launcher, env);
  g_subprocess_launcher_set_stdout_file_path (launcher, out);
  g_subprocess_launcher_set_stderr_file_path (launcher, err);
  r->proc = g_subprocess_launcher_spawnv (launcher, (const gchar *const *) argv->pdata, &error);
  ck_assert_msg (r->proc != NULL, "%s", error ? error->message : "");
  g_subprocess_wait_async (r->proc, NULL, on_runner_exit, r);
}

/* The test's environment for the runner: PATH with the python shim first,
 * and STAGGER_SANDBOX (as staggerd sets it), which lets the suite find and
 * kill what a failed test leaves. */
static gchar **
runner_env (Run *r)
{
  gchar **env = g_get_environ ();
  g_autofree gchar *path = g_strdup_printf ("%s/bin:%s", r->dir, g_getenv ("PATH"));

  env = g_environ_setenv (env, "PATH", path, TRUE);
  return g_environ_setenv (env, "STAGGER_SANDBOX", r->sandbox, TRUE);
}

#define run_start(r, json, ...) \
  G_STMT_START \
  { \
    g_auto (GStrv) env_ = runner_env (r); \
    run_start_env (r, json, env_, __VA_ARGS__); \
  } \
  G_STMT_END

static gboolean
has_exited (gpointer data)
{
  return ((Run *) data)->exited;
}

/* Waits for the runner's end; its exit status, or 128 + the signal. */
static gint
run_wait (Run *r)
{
  g_autofree gchar *err = g_build_filename (r->dir, "runner.err", NULL);
  g_autofree gchar *log = NULL;

  if (!stg_test_wait (has_exited, r, WAIT_MS))
    {
      g_file_get_contents (err, &log, NULL, NULL);
      ck_abort_msg ("stagger-thermos did not end; it said:\n%s", log ? log : "");
    }
  if (g_subprocess_get_if_signaled (r->proc))
    return 128 + g_subprocess_get_term_sig (r->proc);
  return g_subprocess_get_exit_status (r->proc);
}

static gchar *
run_file (Run *r, const gchar *name)
{
  g_autofree gchar *path = g_build_filename (r->sandbox, name, NULL);
  gchar *text = NULL;

  return g_file_get_contents (path, &text, NULL, NULL) ? text : NULL;
}

static gboolean
run_has (Run *r, const gchar *name)
{
  g_autofree gchar *path = g_build_filename (r->sandbox, name, NULL);

  return g_file_test (path, G_FILE_TEST_EXISTS);
}

static void
assert_file (Run *r, const gchar *name, const gchar *expected)
{
  g_autofree gchar *text = run_file (r, name);

  ck_assert_msg (text != NULL, "no %s in the sandbox", name);
  ck_assert_str_eq (text, expected);
}

/* The state file's object (a new reference), or NULL. */
static JsonObject *
state_root (Run *r)
{
  g_autofree gchar *text = run_file (r, ".thermos_state.json");
  g_autoptr (JsonParser) parser = json_parser_new ();

  if (text == NULL || !json_parser_load_from_data (parser, text, -1, NULL))
    return NULL;
  return json_object_ref (json_node_get_object (json_parser_get_root (parser)));
}

/* The state file's process @name (a new reference), or NULL. */
static JsonObject *
state_process (Run *r, const gchar *name)
{
  g_autoptr (JsonObject) root = state_root (r);
  JsonArray *procs = root != NULL ? json_object_get_array_member (root, "processes") : NULL;

  for (guint i = 0; procs != NULL && i < json_array_get_length (procs); i++)
    {
      JsonObject *p = json_array_get_object_element (procs, i);
      if (g_str_equal (json_object_get_string_member (p, "name"), name))
        return json_object_ref (p);
    }
  return NULL;
}

static void
assert_process (Run *r, const gchar *name, const gchar *state, gint run, gint exit_status)
{
  g_autoptr (JsonObject) p = state_process (r, name);

  ck_assert_msg (p != NULL, "no process %s in the state file", name);
  ck_assert_str_eq (json_object_get_string_member (p, "state"), state);
  ck_assert_int_eq (json_object_get_int_member (p, "run"), run);
  if (exit_status >= 0)
    ck_assert_int_eq (json_object_get_int_member (p, "exit_status"), exit_status);
}

/* Process @name's last run was ended by signal @sig. */
static void
assert_signalled (Run *r, const gchar *name, gint sig)
{
  g_autoptr (JsonObject) p = state_process (r, name);

  ck_assert_msg (p != NULL, "no process %s in the state file", name);
  ck_assert_str_eq (json_object_get_string_member (p, "state"), "KILLED");
  ck_assert_int_eq (json_object_get_int_member (p, "signal"), sig);
}

static void
assert_task_state (Run *r, const gchar *expected)
{
  g_autoptr (JsonObject) root = state_root (r);

  ck_assert_msg (root != NULL, "no state file");
  ck_assert_str_eq (json_object_get_string_member (root, "state"), expected);
}

typedef struct
{
  Run *run;
  const gchar *process;
  const gchar *state;
} StateWait;

static gboolean
process_in_state (gpointer data)
{
  StateWait *w = data;
  g_autoptr (JsonObject) p = state_process (w->run, w->process);

  return p != NULL && g_str_equal (json_object_get_string_member (p, "state"), w->state);
}

static void
wait_process (Run *r, const gchar *process, const gchar *state)
{
  StateWait w = { r, process, state };

  ck_assert_msg (stg_test_wait (process_in_state, &w, WAIT_MS), "process %s never became %s",
                 process, state);
}

typedef struct
{
  const gchar *path;
  gboolean present;
} FileWait;

static gboolean
file_there (gpointer data)
{
  FileWait *w = data;

  return g_file_test (w->path, G_FILE_TEST_EXISTS) == w->present;
}

static void
wait_file (const gchar *path, gboolean present)
{
  FileWait w = { path, present };

  ck_assert_msg (stg_test_wait (file_there, &w, WAIT_MS), "%s was never %s", path,
                 present ? "made" : "removed");
}

/* A job around @task (JSON text), with @rest more top-level members (with
 * a leading comma, or ""). */
static gchar *
job (const gchar *task, const gchar *rest)
{
  return g_strdup_printf ("{\"name\": \"t\", \"role\": \"r\", \"environment\": \"test\", "
                          "\"cluster\": \"c\", \"task\": %s%s}",
                          task, rest);
}

/* A file of tests/aurora with @from replaced by @to (pairs, NULL-ended). */
static gchar *aurora_job (const gchar *name, ...) G_GNUC_NULL_TERMINATED;

static gchar *
aurora_job (const gchar *name, ...)
{
  g_autofree gchar *path = g_build_filename (STG_SRCDIR, "tests", "aurora", name, NULL);
  gchar *text = NULL;
  va_list ap;

  ck_assert (g_file_get_contents (path, &text, NULL, NULL));
  va_start (ap, name);
  for (const gchar *from = va_arg (ap, const gchar *); from != NULL;
       from = va_arg (ap, const gchar *))
    {
      const gchar *to = va_arg (ap, const gchar *);
      g_auto (GStrv) parts = g_strsplit (text, from, -1);
      ck_assert_msg (g_strv_length (parts) > 1, "%s has no %s", name, from);
      g_free (text);
      text = g_strjoinv (to, parts);
    }
  va_end (ap);
  return text;
}

/* ---- order, retries, limits ------------------------------------------------------------ */

START_TEST (order_and_logs)
{
  g_autoptr (Run) r = run_new ();
  g_autofree gchar *json =
      job ("{\"processes\": ["
           "{\"name\": \"c\", \"cmdline\": \"echo c >> order\"},"
           "{\"name\": \"b\", \"cmdline\": \"sleep 0.2; echo b >> order\"},"
           "{\"name\": \"a\", \"cmdline\": \"sleep 0.2; echo a >> order; echo out; echo err >&2\"},"
           "{\"name\": \"free\", \"cmdline\": \"echo free > free\"}],"
           "\"constraints\": [{\"order\": [\"a\", \"b\"]}, {\"order\": [\"b\", \"c\"]}]}",
           "");

  run_start (r, json, NULL);
  ck_assert_int_eq (run_wait (r), 0);
  assert_file (r, "order", "a\nb\nc\n");
  assert_file (r, "free", "free\n");
  assert_file (r, ".logs/a/0/stdout", "out\n");
  assert_file (r, ".logs/a/0/stderr", "err\n");
  assert_file (r, ".logs/c/0/stdout", "");
  assert_task_state (r, "SUCCESS");
  assert_process (r, "a", "SUCCESS", 0, 0);
  assert_process (r, "c", "SUCCESS", 0, 0);
}
END_TEST

/* A process that fails until its third run. */
#define THIRD_TIME_LUCKY \
  "n=$(cat count 2>/dev/null || echo 0); n=$((n + 1)); echo $n > count; echo run $n; [ $n -ge 3 ]"

/* The same process under three failure limits: enough (3), too few (2),
 * none (0: until it succeeds). */
static const struct
{
  const gchar *max_failures;
  gint exit_status;
  const gchar *state;
  gint last_run;
} limits[] = {
  { "3", 0, "SUCCESS", 2 },
  { "2", 1, "FAILED", 1 },
  { "0", 0, "SUCCESS", 2 },
};

START_TEST (retries)
{
  g_autoptr (Run) r = run_new ();
  g_autofree gchar *json = g_strdup_printf (
      "{\"name\": \"t\", \"role\": \"r\", \"environment\": \"test\", \"cluster\": \"c\", "
      "\"task\": {\"processes\": [{\"name\": \"p\", \"cmdline\": \"" THIRD_TIME_LUCKY
      "\", \"max_failures\": %s, \"min_duration\": 0}]}}",
      limits[_i].max_failures);

  run_start (r, json, NULL);
  ck_assert_int_eq (run_wait (r), limits[_i].exit_status);
  assert_task_state (r, limits[_i].state);
  assert_process (r, "p", limits[_i].state, limits[_i].last_run, limits[_i].exit_status);
  for (gint run = 0; run <= limits[_i].last_run; run++)
    {
      g_autofree gchar *name = g_strdup_printf (".logs/p/%d/stdout", run);
      g_autofree gchar *text = g_strdup_printf ("run %d\n", run + 1);
      assert_file (r, name, text);
    }
  g_autofree gchar *next = g_strdup_printf (".logs/p/%d", limits[_i].last_run + 1);
  ck_assert (!run_has (r, next));
}
END_TEST

/* Thermos's documented example: a task fails only when max_failures of
 * its processes have failed. */
START_TEST (task_max_failures)
{
  g_autoptr (Run) r = run_new ();
  g_autofree gchar *two = job ("{\"processes\": [{\"name\": \"failing\", \"cmdline\": \"exit 4\"}, "
                               "{\"name\": \"succeeding\", \"cmdline\": \"true\"}], "
                               "\"max_failures\": 2}",
                               "");

  run_start (r, two, NULL);
  ck_assert_int_eq (run_wait (r), 0);
  assert_task_state (r, "SUCCESS");
  assert_process (r, "failing", "FAILED", 0, 4);
}
END_TEST

/* Never two at once with max_concurrency 1: each holds a lock folder while
 * it runs and fails when it finds it taken. */
START_TEST (max_concurrency)
{
  g_autoptr (Run) r = run_new ();
  g_autofree gchar *json =
      job ("{\"processes\": ["
           "{\"name\": \"a\", \"cmdline\": \"mkdir lock && sleep 0.3 && rmdir lock\"},"
           "{\"name\": \"b\", \"cmdline\": \"mkdir lock && sleep 0.3 && rmdir lock\"},"
           "{\"name\": \"c\", \"cmdline\": \"mkdir lock && sleep 0.3 && rmdir lock\"}],"
           "\"max_concurrency\": 1}",
           "");

  run_start (r, json, NULL);
  ck_assert_int_eq (run_wait (r), 0);
  assert_process (r, "a", "SUCCESS", 0, 0);
  assert_process (r, "b", "SUCCESS", 0, 0);
  assert_process (r, "c", "SUCCESS", 0, 0);
}
END_TEST

/* ---- daemon, ephemeral, final ------------------------------------------------------------ */

START_TEST (ephemeral_daemon_with_final)
{
  g_autoptr (Run) r = run_new ();
  g_autofree gchar *stop = g_build_filename (r->dir, "stop_file", NULL);
  g_autofree gchar *json = aurora_job ("ephemeral_daemon_with_final.json", "/tmp/tmp.stop_file",
                                       stop, NULL);

  run_start (r, json, NULL);
  wait_process (r, "ephemeral_daemon", "RUNNING");
  wait_process (r, "main", "RUNNING");
  ck_assert (g_file_set_contents (stop, "", 0, NULL)); /* main ends */
  ck_assert_int_eq (run_wait (r), 0);
  wait_file (stop, FALSE); /* final removed it */
  assert_task_state (r, "SUCCESS");
  assert_file (r, ".logs/main/0/stdout", "main OK\n");
  assert_file (r, ".logs/final/0/stdout", "final OK\n");
  assert_file (r, ".logs/ephemeral_daemon/0/stdout", "ephemeral daemon started\n");
  /* The ephemeral daemon did not hold the task up: SIGTERM ended it. */
  assert_process (r, "ephemeral_daemon", "KILLED", 0, -1);
  assert_process (r, "final", "SUCCESS", 0, 0);
}
END_TEST

START_TEST (daemon_runs_again)
{
  g_autoptr (Run) r = run_new ();
  g_autofree gchar *json = job (
      "{\"processes\": ["
      "{\"name\": \"d\", \"cmdline\": \"echo run >> runs\", \"daemon\": true, "
      "\"ephemeral\": true, \"min_duration\": 1},"
      "{\"name\": \"main\", \"cmdline\": \"until [ \\\"$(wc -l < runs)\\\" -ge 2 ] 2>/dev/null; "
      "do sleep 0.05; done\"}]}",
      "");

  run_start (r, json, NULL);
  ck_assert_int_eq (run_wait (r), 0);
  g_autoptr (JsonObject) d = state_process (r, "d");
  ck_assert_int_ge (json_object_get_int_member (d, "runs"), 2);
  ck_assert (run_has (r, ".logs/d/1/stdout"));
}
END_TEST

/* A process that ignores SIGTERM (it makes the file "up" once started),
 * and a final process that makes "last_ran". */
#define STUBBORN \
  "{\"name\": \"stubborn\", \"cmdline\": \"trap '' TERM; touch up; while :; do sleep 0.1; done\""
#define LAST "{\"name\": \"last\", \"cmdline\": \"touch last_ran\", \"final\": true}"

/* CLEANING lasts at most finalization_wait: a process that ignores SIGTERM
 * gets SIGKILL then, and the final processes do not run. */
START_TEST (finalization_wait_ends_cleaning)
{
  g_autoptr (Run) r = run_new ();
  g_autofree gchar *json = job ("{\"processes\": [" STUBBORN ", \"ephemeral\": true},"
                                "{\"name\": \"main\", \"cmdline\": \"sleep 0.3\"}, " LAST
                                "], \"finalization_wait\": 1}",
                                "");

  run_start (r, json, NULL);
  ck_assert_int_eq (run_wait (r), 0);
  assert_task_state (r, "SUCCESS");
  ck_assert (!run_has (r, "last_ran"));
  assert_signalled (r, "stubborn", SIGKILL);
  assert_process (r, "last", "WAITING", -1, -1);
}
END_TEST

START_TEST (final_process_cut_at_the_deadline)
{
  g_autoptr (Run) r = run_new ();
  g_autofree gchar *json = job ("{\"processes\": [{\"name\": \"main\", \"cmdline\": \"exit 2\"},"
                                "{\"name\": \"last\", \"cmdline\": \"touch started; sleep 60\", "
                                "\"final\": true}], \"finalization_wait\": 1}",
                                "");

  run_start (r, json, NULL);
  ck_assert_int_eq (run_wait (r), 1); /* main failed */
  ck_assert (run_has (r, "started"));
  g_autoptr (JsonObject) p = state_process (r, "last");
  ck_assert_str_eq (json_object_get_string_member (p, "state"), "KILLED");
}
END_TEST

/* ---- the environment ------------------------------------------------------------------ */

START_TEST (thermos_profile)
{
  static const gchar *const shells[] = { NULL, "/bin/sh" };
  g_autoptr (Run) r = run_new ();
  g_autofree gchar *json =
      job ("{\"processes\": ["
           "{\"name\": \"setup_env\", \"cmdline\": \"cat <<EOF > .thermos_profile\\nexport "
           "IT_WORKED=hello\\nEOF\"},"
           "{\"name\": \"read_env\", \"cmdline\": \"echo \\\"$IT_WORKED\\\"\"}],"
           "\"constraints\": [{\"order\": [\"setup_env\", \"read_env\"]}]}",
           "");

  if (shells[_i] != NULL)
    run_start (r, json, "--shell", shells[_i], NULL);
  else
    run_start (r, json, NULL);
  ck_assert_int_eq (run_wait (r), 0);
  assert_file (r, ".logs/read_env/0/stdout", "hello\n");
}
END_TEST

START_TEST (environment)
{
  g_autoptr (Run) r = run_new ();
  g_autofree gchar *json =
      job ("{\"processes\": [{\"name\": \"env\", \"cmdline\": \"echo "
           "\\\"$HOME|$USER|$LOGNAME|$STAGGER_SANDBOX|${FOO:-unset}|$PWD\\\"\"}]}",
           "");
  g_auto (GStrv) env = runner_env (r);
  g_autofree gchar *user = g_strdup (g_get_user_name ());
  g_autofree gchar *expected = g_strdup_printf ("%s|%s|%s|%s|unset|%s\n", r->sandbox, user, user,
                                                r->sandbox, r->sandbox);

  env = g_environ_setenv (env, "FOO", "bar", TRUE);
  run_start_env (r, json, env, "--user", user, NULL);
  ck_assert_int_eq (run_wait (r), 0);
  assert_file (r, ".logs/env/0/stdout", expected);
}
END_TEST

START_TEST (environment_preserved)
{
  g_autoptr (Run) r = run_new ();
  g_autofree gchar *json = job ("{\"processes\": [{\"name\": \"env\", \"cmdline\": \"echo "
                                "\\\"${FOO:-unset}\\\"\"}]}",
                                "");
  g_auto (GStrv) env = runner_env (r);

  env = g_environ_setenv (env, "FOO", "bar", TRUE);
  run_start_env (r, json, env, "--preserve-env", NULL);
  ck_assert_int_eq (run_wait (r), 0);
  assert_file (r, ".logs/env/0/stdout", "bar\n");
}
END_TEST

START_TEST (templates)
{
  g_autoptr (Run) r = run_new ();
  g_autofree gchar *json =
      job ("{\"processes\": [{\"name\": \"p\", \"cmdline\": \"echo {{mesos.instance}} "
           "{{mesos.hostname}} {{thermos.task_id}} {{thermos.user}} {{thermos.ports[http]}} "
           "{{thermos.ports[aurora]}} {{thermos.ports[web]}}\"}]}",
           ", \"announce\": {\"primary_port\": \"http\", \"portmap\": {\"aurora\": \"http\", "
           "\"web\": \"8443\"}}");
  g_autofree gchar *user = g_strdup (g_get_user_name ());
  g_autofree gchar *expected = g_strdup_printf ("7 node-1 task-1 %s 29100 29100 8443\n", user);

  run_start (r, json, "--instance", "7", "--hostname", "node-1", "--task-id", "task-1", "--port",
             "http=29100", NULL);
  ck_assert_int_eq (run_wait (r), 0);
  assert_file (r, ".logs/p/0/stdout", expected);
}
END_TEST

/* Each 1000-byte write rolls stdout over (log_size 1000); the process waits
 * for each roll-over before it writes again, so there are four, and only
 * the newest two files are kept (backups 2). "both": the runner's own
 * output gets it all too. */
START_TEST (rotated_and_copied_output)
{
  g_autoptr (Run) r = run_new ();
  g_autofree gchar *json = job (
      "{\"processes\": [{\"name\": \"p\", \"cmdline\": \"for i in 1 2 3 4; do printf '%01000d' 0 "
      "| tr 0 $i; until [ \\\"$(head -c 1 .logs/p/0/stdout.1 2>/dev/null)\\\" = $i ]; do sleep "
      "0.05; done; done\", \"logger\": {\"destination\": \"both\", \"mode\": \"rotate\", "
      "\"rotate\": {\"log_size\": 1000, \"backups\": 2}}}]}",
      "");
  g_autofree gchar *out_path = g_build_filename (r->dir, "runner.out", NULL);
  g_autofree gchar *console = NULL;

  run_start (r, json, NULL);
  ck_assert_int_eq (run_wait (r), 0);
  g_autofree gchar *newest = run_file (r, ".logs/p/0/stdout.1");
  g_autofree gchar *older = run_file (r, ".logs/p/0/stdout.2");
  ck_assert_ptr_nonnull (newest);
  ck_assert_ptr_nonnull (older);
  ck_assert_uint_eq (strlen (newest), 1000);
  ck_assert_int_eq (newest[0], '4');
  ck_assert_int_eq (older[0], '3');
  ck_assert (!run_has (r, ".logs/p/0/stdout.3"));
  assert_file (r, ".logs/p/0/stdout", "");
  ck_assert (g_file_get_contents (out_path, &console, NULL, NULL));
  ck_assert_uint_eq (strlen (console), 4000);
  ck_assert_int_eq (console[0], '1');
  ck_assert_int_eq (console[3999], '4');
}
END_TEST

/* The runner's defaults for processes without a logger of their own. */
START_TEST (logger_defaults)
{
  g_autoptr (Run) r = run_new ();
  g_autofree gchar *json = job ("{\"processes\": [{\"name\": \"p\", \"cmdline\": \"echo to "
                                "the runner\"}, {\"name\": \"q\", \"cmdline\": \"echo kept\", "
                                "\"logger\": {}}]}",
                                "");
  g_autofree gchar *out_path = g_build_filename (r->dir, "runner.out", NULL);
  g_autofree gchar *console = NULL;

  run_start (r, json, "--process-logger-destination", "console", NULL);
  ck_assert_int_eq (run_wait (r), 0);
  ck_assert (g_file_get_contents (out_path, &console, NULL, NULL));
  ck_assert_str_eq (console, "to the runner\n");
  ck_assert (!run_has (r, ".logs/p/0/stdout"));
  assert_file (r, ".logs/q/0/stdout", "kept\n"); /* a Logger() of its own: the file */
}
END_TEST

/* ---- stopping ------------------------------------------------------------------------- */

static gchar *
server_job (Run *r, const gchar *extra, const gchar *lifecycle)
{
  g_autofree gchar *task = g_strdup_printf (
      "{\"processes\": [{\"name\": \"server\", \"cmdline\": \"exec python3 %s/tests/aurora/"
      "http_server.py {{thermos.ports[http]}} {{thermos.ports[health]}} %s\"}]}",
      STG_SRCDIR, extra);

  (void) r;
  return job (task, lifecycle);
}

static gboolean
accepting (gpointer data)
{
  guint16 port = (guint16) GPOINTER_TO_UINT (data);
  g_autoptr (GSocketClient) client = g_socket_client_new ();
  g_autoptr (GSocketConnection) conn = g_socket_client_connect_to_host (client, "127.0.0.1", port,
                                                                        NULL, NULL);

  return conn != NULL;
}

static void
wait_serving (guint16 port)
{
  ck_assert_msg (stg_test_wait (accepting, GUINT_TO_POINTER (port), WAIT_MS),
                 "nothing answers on port %u", port);
  g_autofree gchar *body = NULL;
  ck_assert_uint_eq (stg_test_http_get (port, "/health", &body), 200);
  ck_assert_str_eq (body, "ok");
}

static void
stop (Run *r)
{
  g_subprocess_send_signal (r->proc, SIGTERM);
}

/* The server quits on /quitquitquit: the lifecycle ends there. */
START_TEST (lifecycle_graceful)
{
  g_autoptr (Run) r = run_new ();
  g_autofree gchar *json = server_job (r, "", ", \"lifecycle\": {\"http\": {}}");

  run_start (r, json, "--port", "http=29110", "--port", "health=29111", NULL);
  wait_serving (29111);
  stop (r);
  ck_assert_int_eq (run_wait (r), 2);
  assert_task_state (r, "KILLED");
  assert_file (r, "lifecycle.log", "/quitquitquit\n");
  assert_process (r, "server", "SUCCESS", 0, 0);
}
END_TEST

/* A server that stays gets both endpoints, each followed by its wait,
 * then SIGTERM. */
START_TEST (lifecycle_escalates)
{
  g_autoptr (Run) r = run_new ();
  g_autofree gchar *json = server_job (
      r, "--stay",
      ", \"lifecycle\": {\"http\": {\"graceful_shutdown_wait_secs\": 1, "
      "\"shutdown_wait_secs\": 1, \"shutdown_endpoint\": \"/abort/{{mesos.instance}}\"}}");

  run_start (r, json, "--port", "http=29112", "--port", "health=29113", "--instance", "4", NULL);
  wait_serving (29113);
  stop (r);
  ck_assert_int_eq (run_wait (r), 2);
  assert_file (r, "lifecycle.log", "/quitquitquit\n/abort/4\n");
  assert_signalled (r, "server", SIGTERM);
}
END_TEST

/* Nothing listens on the lifecycle port: straight to SIGTERM. The lifecycle
 * goes to an alias of the port the task asks for. */
START_TEST (lifecycle_unanswered)
{
  g_autoptr (Run) r = run_new ();
  g_autofree gchar *json =
      job ("{\"processes\": [{\"name\": \"sleeper\", \"cmdline\": \"touch up; sleep 60\"}]}",
           ", \"announce\": {\"portmap\": {\"health\": \"admin\", \"admin\": \"http\"}}, "
           "\"lifecycle\": {\"http\": {}}");

  run_start (r, json, "--port", "http=29114", NULL);
  wait_process (r, "sleeper", "RUNNING");
  g_autofree gchar *up = g_build_filename (r->sandbox, "up", NULL);
  wait_file (up, TRUE);
  stop (r);
  ck_assert_int_eq (run_wait (r), 2);
  ck_assert (!run_has (r, "lifecycle.log"));
  assert_process (r, "sleeper", "KILLED", 0, -1);
}
END_TEST

/* An ephemeral process does not keep the task going: once the server has
 * quit on /quitquitquit, the wait ends (no /abortabortabort to a closed
 * port after graceful_shutdown_wait_secs) and the log shipper gets
 * SIGTERM. */
START_TEST (lifecycle_ends_when_only_ephemerals_are_left)
{
  g_autoptr (Run) r = run_new ();
  g_autofree gchar *task = g_strdup_printf (
      "{\"processes\": [{\"name\": \"server\", \"cmdline\": \"exec python3 %s/tests/aurora/"
      "http_server.py {{thermos.ports[http]}} {{thermos.ports[health]}}\"}, "
      "{\"name\": \"shipper\", \"cmdline\": \"exec sleep 60\", \"ephemeral\": true}]}",
      STG_SRCDIR);
  g_autofree gchar *json = job (task, ", \"lifecycle\": {\"http\": "
                                      "{\"graceful_shutdown_wait_secs\": 10}}");

  run_start (r, json, "--port", "http=29130", "--port", "health=29131", NULL);
  wait_serving (29131);
  wait_process (r, "shipper", "RUNNING");
  gint64 asked = g_get_monotonic_time ();
  stop (r);
  ck_assert_int_eq (run_wait (r), 2);
  gint64 took_ms = (g_get_monotonic_time () - asked) / 1000;
  ck_assert_msg (took_ms < 4000, "the stop took %" G_GINT64_FORMAT " ms", took_ms);
  assert_task_state (r, "KILLED");
  assert_file (r, "lifecycle.log", "/quitquitquit\n");
  assert_process (r, "server", "SUCCESS", 0, 0);
  assert_signalled (r, "shipper", SIGTERM);
}
END_TEST

/* A stop gives the processes Thermos's preemption wait (a minute), not
 * finalization_wait: one that takes 2 s to drain after SIGTERM finishes,
 * and the final processes run after it. */
START_TEST (stop_gives_the_preemption_wait)
{
  g_autoptr (Run) r = run_new ();
  g_autofree gchar *json =
      job ("{\"processes\": ["
           "{\"name\": \"drain\", \"cmdline\": \"trap 'sleep 2; touch drained; exit 0' TERM; "
           "touch up; while :; do sleep 0.1; done\"}," LAST "], \"finalization_wait\": 1}",
           "");
  g_autofree gchar *up = g_build_filename (r->sandbox, "up", NULL);

  run_start (r, json, NULL);
  wait_file (up, TRUE);
  stop (r);
  ck_assert_int_eq (run_wait (r), 2);
  assert_task_state (r, "KILLED");
  ck_assert (run_has (r, "drained"));
  assert_process (r, "drain", "SUCCESS", 0, 0);
  assert_process (r, "last", "SUCCESS", 0, 0);
  ck_assert (run_has (r, "last_ran"));
}
END_TEST

/* The preemption wait ends in SIGKILL, whatever finalization_wait says
 * (30 by default): a process that ignores SIGTERM goes at once after it,
 * and the final processes are skipped. */
START_TEST (stop_window_ends_in_sigkill)
{
  g_autoptr (Run) r = run_new ();
  g_autofree gchar *json = job ("{\"processes\": [" STUBBORN "}, " LAST "]}", "");
  g_autofree gchar *up = g_build_filename (r->sandbox, "up", NULL);

  run_start (r, json, "--preemption-wait", "1", NULL);
  wait_file (up, TRUE);
  gint64 asked = g_get_monotonic_time ();
  stop (r);
  ck_assert_int_eq (run_wait (r), 2);
  gint64 took_ms = (g_get_monotonic_time () - asked) / 1000;
  ck_assert_msg (took_ms >= 900 && took_ms < 4000, "the stop took %" G_GINT64_FORMAT " ms",
                 took_ms);
  assert_signalled (r, "stubborn", SIGKILL);
  assert_process (r, "last", "WAITING", -1, -1);
  ck_assert (!run_has (r, "last_ran"));
}
END_TEST

/* Aurora's http_example as the client sends it: .thermos_profile, the
 * ports and their alias, the server staged and run, health checks
 * answered, and the lifecycle on kill. */
START_TEST (http_example)
{
  g_autoptr (Run) r = run_new ();
  g_autofree gchar *server = g_build_filename (STG_SRCDIR, "tests", "aurora", "http_server.py",
                                               NULL);
  g_autofree gchar *stage = g_strdup_printf ("cp %s http_example.py", server);
  g_autofree gchar *json =
      aurora_job ("http_example.json",
                  "cp /vagrant/src/test/sh/org/apache/aurora/e2e/http_example.py .", stage, NULL);

  run_start (r, json, "--port", "http=29120", "--port", "tcp=29121", "--port", "health=29122",
             NULL);
  wait_serving (29122);
  ck_assert (stg_test_wait (accepting, GUINT_TO_POINTER (29120), WAIT_MS));
  g_autofree gchar *hello = NULL;
  ck_assert_uint_eq (stg_test_http_get (29120, "/", &hello), 200);
  ck_assert_str_eq (hello, "Hello!\n");
  assert_file (r, ".logs/read_env/0/stdout", "hello\n");
  assert_file (r, ".logs/echo_ports/0/stdout",
               "tcp port: 29121; http port: 29120; alias: 29120; health: 29122\n");
  assert_process (r, "verify_command_escaping", "SUCCESS", 0, 0);
  stop (r);
  ck_assert_int_eq (run_wait (r), 2);
  assert_file (r, "lifecycle.log", "/quitquitquit\n");
}
END_TEST

/* Aurora's test_daemonizing_process: run_daemon's program forks twice and
 * leaves its session; killing the task still sends it SIGTERM, whose
 * handler removes the term file. */
START_TEST (daemonizing_process)
{
  g_autoptr (Run) r = run_new ();
  g_autofree gchar *term = g_build_filename (r->dir, "term_file", NULL);
  g_autofree gchar *json = aurora_job ("test_daemonizing_process.json", "/tmp/tmp.term_file", term,
                                       NULL);

  ck_assert (g_file_set_contents (term, "", 0, NULL));
  run_start (r, json, NULL);
  wait_process (r, "run_daemon", "SUCCESS"); /* the daemon is on its own now */
  wait_process (r, "hello", "RUNNING");
  ck_assert (g_file_test (term, G_FILE_TEST_EXISTS));
  stop (r);
  ck_assert_int_eq (run_wait (r), 2);
  ck_assert (!g_file_test (term, G_FILE_TEST_EXISTS));
  assert_task_state (r, "KILLED");
  /* Nothing of the task is left. */
  ck_assert_uint_eq (stg_test_kill_instances (r->dir), 0);
}
END_TEST

static gboolean
file_exists (gpointer path)
{
  return g_file_test (path, G_FILE_TEST_EXISTS);
}

/* The same with a daemon slow to leave: its parent exits at once and the
 * child sits in the run's process group for half a second before setsid.
 * The run's success must not kill the group under it (on a loaded machine
 * the Python of Aurora's test is as slow). */
START_TEST (daemonizing_slowly)
{
  g_autoptr (Run) r = run_new ();
  g_autofree gchar *term = g_build_filename (r->dir, "term_file", NULL);
  g_autofree gchar *up = g_build_filename (r->dir, "up", NULL);
  g_autofree gchar *json = g_strdup_printf (
      "{\"name\": \"t\", \"role\": \"r\", \"environment\": \"test\", \"cluster\": \"c\", "
      "\"task\": {\"processes\": ["
      "{\"name\": \"main\", \"cmdline\": \"sleep 60\"},"
      "{\"name\": \"leave\", \"cmdline\": \"(sleep 0.5; exec setsid sh -c "
      "'trap \\\"rm -f %s; exit 0\\\" TERM; touch %s; while :; do sleep 0.1; done') &\"}],"
      "\"finalization_wait\": 5}}",
      term, up);

  ck_assert (g_file_set_contents (term, "", 0, NULL));
  run_start (r, json, NULL);
  wait_process (r, "leave", "SUCCESS");
  ck_assert_msg (stg_test_wait (file_exists, up, WAIT_MS), "the daemon never left its group");
  stop (r);
  ck_assert_int_eq (run_wait (r), 2);
  ck_assert (!g_file_test (term, G_FILE_TEST_EXISTS));
  ck_assert_uint_eq (stg_test_kill_instances (r->dir), 0);
}
END_TEST

/* Without a stop, the runner SIGKILLs what its processes left behind when
 * the task ends. */
START_TEST (leftovers_killed_at_the_end)
{
  g_autoptr (Run) r = run_new ();
  g_autofree gchar *json =
      job ("{\"processes\": [{\"name\": \"p\", \"cmdline\": \"setsid sh -c 'trap \\\"\\\" TERM; "
           "sleep 60' & echo $! > bg\"}], \"finalization_wait\": 1}",
           "");

  run_start (r, json, NULL);
  ck_assert_int_eq (run_wait (r), 0);
  ck_assert_uint_eq (stg_test_kill_instances (r->dir), 0);
}
END_TEST

/* ---- exit statuses -------------------------------------------------------------------- */

START_TEST (exit_statuses)
{
  g_autoptr (Run) r = run_new ();
  g_autofree gchar *err_path = g_build_filename (r->dir, "runner.err", NULL);
  g_autofree gchar *out_path = g_build_filename (r->dir, "runner.out", NULL);
  g_autofree gchar *needs_port = job ("{\"processes\": [{\"name\": \"p\", \"cmdline\": "
                                      "\"echo {{thermos.ports[http]}}\"}]}",
                                      "");
  g_autofree gchar *example = aurora_job ("http_example.json", NULL);
  g_autofree gchar *text = NULL;

  run_start (r, "{\"task\": ", NULL);
  ck_assert_int_eq (run_wait (r), 65);
  ck_assert (g_file_get_contents (err_path, &text, NULL, NULL));
  ck_assert_msg (strstr (text, "invalid task: not valid JSON") != NULL, "%s", text);
  g_clear_pointer (&text, g_free);
  g_clear_object (&r->proc);
  r->exited = FALSE;

  run_start (r, needs_port, NULL);
  ck_assert_int_eq (run_wait (r), 65);
  ck_assert (g_file_get_contents (err_path, &text, NULL, NULL));
  ck_assert_msg (strstr (text, "no port 'http' was assigned") != NULL, "%s", text);
  g_clear_pointer (&text, g_free);
  g_clear_object (&r->proc);
  r->exited = FALSE;

  run_start (r, needs_port, "--port", "http=70000", NULL);
  ck_assert_int_eq (run_wait (r), 64);
  g_clear_object (&r->proc);
  r->exited = FALSE;

  run_start (r, needs_port, "--port", "http=1", "--user", "no-such-user-here", NULL);
  ck_assert_int_eq (run_wait (r), 64);
  g_clear_object (&r->proc);
  r->exited = FALSE;

  run_start (r, example, "--check", NULL);
  ck_assert_int_eq (run_wait (r), 0);
  ck_assert (g_file_get_contents (out_path, &text, NULL, NULL));
  ck_assert_str_eq (text, "health\nhttp\ntcp\n");
}
END_TEST

static Suite *
runner_suite (void)
{
  Suite *s = suite_create ("thermos_runner");
  TCase *tc = tcase_create ("plan");
  tcase_set_timeout (tc, 120);
  tcase_add_test (tc, order_and_logs);
  tcase_add_loop_test (tc, retries, 0, G_N_ELEMENTS (limits));
  tcase_add_test (tc, task_max_failures);
  tcase_add_test (tc, max_concurrency);
  tcase_add_test (tc, ephemeral_daemon_with_final);
  tcase_add_test (tc, daemon_runs_again);
  tcase_add_test (tc, finalization_wait_ends_cleaning);
  tcase_add_test (tc, final_process_cut_at_the_deadline);
  suite_add_tcase (s, tc);

  tc = tcase_create ("environment");
  tcase_set_timeout (tc, 120);
  tcase_add_loop_test (tc, thermos_profile, 0, 2);
  tcase_add_test (tc, environment);
  tcase_add_test (tc, environment_preserved);
  tcase_add_test (tc, templates);
  tcase_add_test (tc, rotated_and_copied_output);
  tcase_add_test (tc, logger_defaults);
  suite_add_tcase (s, tc);

  tc = tcase_create ("stop");
  tcase_set_timeout (tc, 120);
  tcase_add_test (tc, lifecycle_graceful);
  tcase_add_test (tc, lifecycle_escalates);
  tcase_add_test (tc, lifecycle_unanswered);
  tcase_add_test (tc, lifecycle_ends_when_only_ephemerals_are_left);
  tcase_add_test (tc, stop_gives_the_preemption_wait);
  tcase_add_test (tc, stop_window_ends_in_sigkill);
  tcase_add_test (tc, http_example);
  tcase_add_test (tc, daemonizing_process);
  tcase_add_test (tc, daemonizing_slowly);
  tcase_add_test (tc, leftovers_killed_at_the_end);
  tcase_add_test (tc, exit_statuses);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  g_autofree gchar *scope = stg_test_scope_begin ();
  SRunner *sr = srunner_create (runner_suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  stg_test_scope_end (g_steal_pointer (&scope));
  return failed == 0 ? 0 : 1;
}
