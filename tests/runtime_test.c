/* runtime_test.c: Check suite for the local runtime, with real processes
 * (stagger-example-server and shell commands), real sockets and a real
 * store: start, kill, crash and back-off, exit statuses, health checks,
 * ports and environment, templates, and hot upgrade under load (the hooks
 * are runtime_hooks_test's). */
#include "config.h"

#include <check.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <signal.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "runtime_fixture.h"

/* ---- start, kill, crash ---------------------------------------------------------- */

START_TEST (starts_healthy_and_kills)
{
  g_autofree gchar *data = server_data (NULL, NULL);
  g_autoptr (ApiTaskConfig) t = config ("web", data, "http", TRUE);
  gint64 c;
  gint64 job = make_job (t, 1, &c);

  apply (job, 0, c);
  wait_for (job, 0, STG_TASK_RUNNING, c, 0, 10000);
  gint pid = pid_of (job, 0);
  ck_assert (stg_test_process_alive (pid));
  StgInstanceRow row;
  ck_assert (stg_store_get_instance (fx.store, job, 0, &row, NULL));
  ck_assert_int_eq (row.pid, pid);
  ck_assert_int_eq (row.status, API_SCHEDULE_STATUS_RUNNING);
  ck_assert_int_eq (row.run_config_id, c);
  g_autofree gchar *ev = events (job, 0);
  ck_assert_ptr_nonnull (strstr (ev, "started version 1"));
  ck_assert_ptr_nonnull (strstr (ev, "answered 200 \"ok\""));
  /* Applying what runs already changes nothing. */
  apply (job, 0, c);
  ck_assert_int_eq (pid_of (job, 0), pid);

  g_autoptr (GError) error = NULL;
  ck_assert (stg_runtime_kill (fx.rt, job, 0, &error));
  wait_for (job, 0, STG_TASK_ABSENT, 0, 0, 10000);
  ck_assert (!stg_test_process_alive (pid));
  ck_assert (!stg_store_get_instance (fx.store, job, 0, &row, NULL));
}
END_TEST

/* A `command` names its program as argv does: found on staggerd's PATH
 * when the instance's own PATH lacks it (as it lacks a build tree). */
START_TEST (command_finds_programs_as_argv_does)
{
  g_autofree gchar *bin = server ();
  g_autofree gchar *dir = g_path_get_dirname (bin);
  g_autofree gchar *path = g_strdup_printf ("%s:%s", dir, g_getenv ("PATH"));
  g_setenv ("PATH", path, TRUE);
  const gchar *data = "{\"command\": \"stagger-example-server --port {{ports[http]}}\","
                      " \"health_check\": {\"http\": {\"endpoint\": \"/health\"},"
                      " \"initial_interval_secs\": 2, \"interval_secs\": 0.05}}";
  g_autoptr (ApiTaskConfig) t = config ("bycommand", data, "http", TRUE);
  gint64 c;
  gint64 job = make_job (t, 1, &c);

  apply (job, 0, c);
  wait_for (job, 0, STG_TASK_RUNNING, c, 0, 10000);
  g_autofree gchar *ev = events (job, 0);
  ck_assert_ptr_nonnull (strstr (ev, "answered 200 \"ok\""));
}
END_TEST

START_TEST (crashes_restart_with_back_off)
{
  g_autofree gchar *bin = server ();
  g_autofree gchar *data = g_strdup_printf ("{\"argv\": [\"%s\", \"--port\", \"{{ports[http]}}\", "
                                            "\"--crash-after\", \"0.2\"]}", bin);
  g_autoptr (ApiTaskConfig) t = config ("crashy", data, "http", TRUE);
  gint64 c;
  gint64 job = make_job (t, 1, &c);

  apply (job, 0, c);
  wait_for (job, 0, STG_TASK_FAILED, c, 1, 10000);
  gint64 t1 = g_get_monotonic_time ();
  g_autofree gchar *ev = events (job, 0);
  ck_assert_ptr_nonnull (strstr (ev, "exited with status 1"));
  /* Restarted after the first back-off (1 s), and it fails again. */
  wait_for (job, 0, STG_TASK_FAILED, c, 2, 10000);
  wait_for (job, 0, STG_TASK_STARTING, c, 2, 10000);
  gint64 gap_ms = (g_get_monotonic_time () - t1) / 1000;
  ck_assert_int_ge (gap_ms, 1500);         /* 1 s, then 2 s of back-off */
  StgInstanceRow row;
  ck_assert (stg_store_get_instance (fx.store, job, 0, &row, NULL));
  ck_assert_int_ge (row.failure_count, 2);
}
END_TEST

START_TEST (exit_statuses_are_recorded)
{
  g_autoptr (ApiTaskConfig) fail = config ("batch", "{\"command\": \"exit 3\"}", "", FALSE);
  g_autoptr (ApiTaskConfig) ok = config ("batch2", "{\"command\": \"echo done\"}", "", FALSE);
  gint64 cf, co;
  gint64 jf = make_job (fail, 1, &cf);
  gint64 jo = make_job (ok, 1, &co);

  apply (jf, 0, cf);
  apply (jo, 0, co);
  wait_for (jf, 0, STG_TASK_FAILED, cf, 1, 10000);
  wait_for (jo, 0, STG_TASK_FINISHED, co, 0, 10000);
  g_autofree gchar *ef = events (jf, 0);
  ck_assert_ptr_nonnull (strstr (ef, "exited with status 3"));
  g_autofree gchar *eo = events (jo, 0);
  ck_assert_ptr_nonnull (strstr (eo, "exited with status 0"));
  /* A task that is not a service and failed more than maxTaskFailures (0)
   * is not started again; one that finished is not either. */
  spin (2000);
  ck_assert_int_eq (observe (jf, 0).phase, STG_TASK_FAILED);
  ck_assert_int_eq (observe (jf, 0).failures, 1);
  ck_assert_int_eq (observe (jo, 0).phase, STG_TASK_FINISHED);
  /* The output went to the sandbox, named by the job's row id. */
  g_autofree gchar *jid = g_strdup_printf ("%" G_GINT64_FORMAT, jo);
  g_autofree gchar *out = g_build_filename (fx.dir, "sandboxes", jid, "0", "1", "stdout", NULL);
  g_autofree gchar *text = NULL;
  ck_assert (g_file_get_contents (out, &text, NULL, NULL));
  ck_assert_str_eq (text, "done\n");
}
END_TEST

/* ---- health checks ------------------------------------------------------------------ */

/* One instance whose health check decides: the phase it comes to with
 * this many failures, and what its events say. "@SERVER@" in the data is
 * the path of stagger-example-server. */
typedef struct
{
  const gchar *name;
  const gchar *data;
  const gchar *ports;
  StgTaskPhase phase;
  guint32 failures;
  const gchar *says[3]; /* NULL ends them */
} HealthCase;

static const HealthCase health_cases[] = {
  { "sick",
    "{\"argv\": [\"@SERVER@\", \"--port\", \"{{ports[http]}}\", \"--unhealthy\"],"
    " \"health_check\": {\"http\": {}, \"initial_interval_secs\": 0, \"interval_secs\": 0.05,"
    " \"max_consecutive_failures\": 2}}",
    "http",
    STG_TASK_FAILED,
    1,
    { "failed its health check", "answered 500 \"failing\"" } },
  { "slowcheck",
    "{\"command\": \"sleep 100\", \"health_check\": {\"shell\": {\"shell_command\": \"sleep 5\"},"
    " \"initial_interval_secs\": 0, \"interval_secs\": 0.05, \"timeout_secs\": 0.2}}",
    "",
    STG_TASK_FAILED,
    1,
    { "took longer than 0.2 s" } },
  { "shelly",
    "{\"command\": \"sleep 100\", \"health_check\": {\"shell\": {\"shell_command\": \"true\"},"
    " \"interval_secs\": 0.05}}",
    "",
    STG_TASK_RUNNING,
    0,
    { "exited with status 0" } },
};

START_TEST (health_checks_decide)
{
  const HealthCase *h = &health_cases[_i];
  g_autofree gchar *bin = server ();
  g_auto (GStrv) parts = g_strsplit (h->data, "@SERVER@", -1);
  g_autofree gchar *data = g_strjoinv (bin, parts);
  g_autoptr (ApiTaskConfig) t = config (h->name, data, h->ports, TRUE);
  gint64 c;
  gint64 job = make_job (t, 1, &c);

  apply (job, 0, c);
  wait_for (job, 0, h->phase, c, h->failures, 10000);
  g_autofree gchar *ev = events (job, 0);
  for (guint k = 0; h->says[k] != NULL; k++)
    ck_assert_msg (strstr (ev, h->says[k]) != NULL, "%s: no \"%s\" in:\n%s", h->name, h->says[k],
                   ev);
}
END_TEST

START_TEST (initial_interval_forgives_a_slow_start)
{
  g_autofree gchar *slow = server_data (", \"--start-delay\", \"0.6\"", NULL);
  g_autoptr (ApiTaskConfig) t = config ("slow", slow, "http", TRUE);
  g_autofree gchar *bin = server ();
  g_autofree gchar *strict = g_strdup_printf (
      "{\"argv\": [\"%s\", \"--port\", \"{{ports[http]}}\", \"--start-delay\", \"0.6\"],"
      " \"health_check\": {\"http\": {}, \"initial_interval_secs\": 0, \"interval_secs\": 0.05}}", bin);
  g_autoptr (ApiTaskConfig) t2 = config ("strict", strict, "http", TRUE);
  gint64 c, c2;
  gint64 job = make_job (t, 1, &c);
  gint64 job2 = make_job (t2, 1, &c2);

  apply (job, 0, c);
  apply (job2, 0, c2);
  /* With a grace period, refused connections at first do not count... */
  wait_for (job, 0, STG_TASK_RUNNING, c, 0, 10000);
  ck_assert_int_eq (observe (job, 0).failures, 0);
  /* ...without one, the first failure fails the run. */
  wait_for (job2, 0, STG_TASK_FAILED, c2, 1, 10000);
  g_autofree gchar *ev = events (job2, 0);
  ck_assert_ptr_nonnull (strstr (ev, "no answer from"));
}
END_TEST

/* A shell check that counts its calls in the sandbox and passes from
 * call @from on (or fails from call @from on, with @invert). */
static gchar *
counting_check (gint from, gboolean invert, const gchar *thresholds)
{
  return g_strdup_printf (
      "{\"command\": \"sleep 100\", \"health_check\": {\"shell\": {\"shell_command\":"
      " \"n=$(cat calls 2>/dev/null || echo 0); n=$((n+1)); echo $n > calls; [ $n %s %d ]\"},"
      " \"initial_interval_secs\": 0, \"interval_secs\": 0.05, %s}}",
      invert ? "-lt" : "-ge", from, thresholds);
}

static gint
calls (gint64 job, gint32 i)
{
  gint pid = pid_of (job, i);
  g_autofree gchar *sandbox = stg_test_process_env (pid, "STAGGER_SANDBOX");
  g_autofree gchar *path = g_build_filename (sandbox, "calls", NULL);
  g_autofree gchar *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return -1;
  return atoi (text);
}

START_TEST (consecutive_thresholds)
{
  /* Passes from call 3 on; healthy after 2 successes in a row: call 4. */
  g_autofree gchar *ok_data = counting_check (3, FALSE,
      "\"min_consecutive_successes\": 2, \"max_consecutive_failures\": 5");
  g_autoptr (ApiTaskConfig) ok = config ("warm", ok_data, "", TRUE);
  gint64 c;
  gint64 job = make_job (ok, 1, &c);

  apply (job, 0, c);
  wait_for (job, 0, STG_TASK_RUNNING, c, 0, 10000);
  ck_assert_int_eq (calls (job, 0), 4);

  /* Passes for calls 1-2, fails from 3 on; unhealthy after more than 2
   * failures in a row: at call 5. */
  g_autofree gchar *bad_data = counting_check (3, TRUE, "\"max_consecutive_failures\": 2");
  g_autoptr (ApiTaskConfig) bad = config ("tired", bad_data, "", TRUE);
  gint64 c2;
  gint64 job2 = make_job (bad, 1, &c2);
  apply (job2, 0, c2);
  wait_for (job2, 0, STG_TASK_RUNNING, c2, 0, 10000);
  gint pid = pid_of (job2, 0);
  g_autofree gchar *sandbox = stg_test_process_env (pid, "STAGGER_SANDBOX");
  wait_for (job2, 0, STG_TASK_FAILED, c2, 1, 10000);
  g_autofree gchar *path = g_build_filename (sandbox, "calls", NULL);
  g_autofree gchar *text = NULL;
  ck_assert (g_file_get_contents (path, &text, NULL, NULL));
  ck_assert_int_eq (atoi (text), 5);
}
END_TEST

/* Aurora's counting (StgHealthSpec.aurora), checked on StgHealth itself
 * with a shell check that counts its calls in its folder: how many calls
 * it takes to decide, which way, and why. */
typedef struct
{
  const gchar *test; /* the check's test of its call number $n */
  gdouble initial;   /* initial_interval_secs (interval_secs is 0.05) */
  gint max_failures;
  gint min_successes;
  gboolean snooze;  /* a .healthchecksnooze file exists */
  gboolean healthy; /* what it decides */
  gint calls;       /* after how many calls of the command */
  const gchar *why; /* (nullable) part of the reason given */
} AuroraHealthCase;

static const AuroraHealthCase aurora_health_cases[] = {
  /* 4 calls forgiven; 5 successes needed within 4 + 0 + 5: the 5th call
   * fails and 4 are left: failing fast. */
  { "false", 0.2, 0, 5, FALSE, FALSE, 5, "exited with status 1" },
  /* Passing every other call never makes 2 in a row: after 2 + 3 + 2
   * calls, "not enough successful health checks in time". */
  { "[ $((n % 2)) = 1 ]", 0.1, 3, 2, FALSE, FALSE, 8, "not enough successful" },
  /* Failures past the 2 forgiven calls count: the second fails it. */
  { "false", 0.1, 1, 1, FALSE, FALSE, 4, "exited with status 1" },
  /* 0 successes needed means the first passing call, as in Aurora. */
  { "[ $n -ge 3 ]", 0.5, 0, 0, FALSE, TRUE, 3, NULL },
  /* A snooze file passes every check without running it. */
  { "false", 0, 0, 1, TRUE, TRUE, 0, "snoozed" },
};

typedef struct
{
  gboolean done, healthy;
  gchar *why;
} Decided;

static void
on_decided (gpointer data, gboolean healthy, const gchar *why)
{
  Decided *d = data;

  d->done = TRUE;
  d->healthy = healthy;
  d->why = g_strdup (why);
}

static gboolean
decided (gpointer data)
{
  return ((Decided *) data)->done;
}

START_TEST (aurora_counting_decides)
{
  const AuroraHealthCase *h = &aurora_health_cases[_i];
  g_autofree gchar *dir = stg_test_tmpdir ();
  g_autofree gchar *snooze = g_build_filename (dir, ".healthchecksnooze", NULL);
  g_autofree gchar *command =
      g_strdup_printf ("n=$(cat calls 2>/dev/null || echo 0); n=$((n+1)); echo $n > calls; %s",
                       h->test);
  gchar *argv[] = { (gchar *) "/bin/sh", (gchar *) "-c", command, NULL };
  gchar *env[] = { (gchar *) "PATH=/usr/bin:/bin", NULL };
  StgHealthSpec spec = { .kind = STG_HEALTH_SHELL,
                         .initial_interval_secs = h->initial,
                         .interval_secs = 0.05,
                         .timeout_secs = 5,
                         .max_consecutive_failures = h->max_failures,
                         .min_consecutive_successes = h->min_successes,
                         .aurora = TRUE };
  StgHealthTarget target = { .shell_argv = argv, .envp = env, .cwd = dir, .snooze_file = snooze };
  Decided d = { 0 };

  if (h->snooze)
    ck_assert (g_file_set_contents (snooze, "", 0, NULL));
  StgHealth *health = stg_health_new (&spec, &target, FALSE, on_decided, &d);
  ck_assert (stg_test_wait (decided, &d, 20000));
  g_autofree gchar *path = g_build_filename (dir, "calls", NULL);
  g_autofree gchar *text = NULL;
  gint n = g_file_get_contents (path, &text, NULL, NULL) ? atoi (text) : 0;
  ck_assert_msg (d.healthy == h->healthy && n == h->calls, "case %d: %s after %d calls (%s)", _i,
                 d.healthy ? "healthy" : "failed", n, d.why);
  ck_assert_msg (h->why == NULL || strstr (d.why, h->why) != NULL, "case %d: %s", _i, d.why);
  stg_health_free (health);
  g_free (d.why);
  stg_test_rmtree (dir);
}
END_TEST

/* A Stagger task that warms up is checked again soon while it does not
 * answer: here its fourth check passes, and the checks every 60 s would
 * take three minutes to get there; the retries while it warms up (5 ms,
 * then twice as long each time) take well under a second. */
START_TEST (warming_up_is_checked_again_soon)
{
  g_autofree gchar *dir = stg_test_tmpdir ();
  gchar *argv[] = { (gchar *) "/bin/sh", (gchar *) "-c",
                    (gchar *) "n=$(cat calls 2>/dev/null || echo 0); n=$((n+1)); echo $n > calls;"
                              " [ $n -ge 4 ]",
                    NULL };
  gchar *env[] = { (gchar *) "PATH=/usr/bin:/bin", NULL };
  StgHealthSpec spec = { .kind = STG_HEALTH_SHELL,
                         .initial_interval_secs = 120,
                         .interval_secs = 60,
                         .timeout_secs = 5,
                         .max_consecutive_failures = 0,
                         .min_consecutive_successes = 1 };
  StgHealthTarget target = { .shell_argv = argv, .envp = env, .cwd = dir };
  Decided d = { 0 };
  StgHealth *health = stg_health_new (&spec, &target, FALSE, on_decided, &d);

  ck_assert_msg (stg_test_wait (decided, &d, 30000), "not decided within 30 s");
  ck_assert_msg (d.healthy, "%s", d.why);
  g_autofree gchar *path = g_build_filename (dir, "calls", NULL);
  g_autofree gchar *text = NULL;
  ck_assert (g_file_get_contents (path, &text, NULL, NULL));
  ck_assert_int_eq (atoi (text), 4);
  stg_health_free (health);
  g_free (d.why);
  stg_test_rmtree (dir);
}
END_TEST

/* ---- ports, environment, templates ----------------------------------------------------- */

START_TEST (ports_and_environment)
{
  g_autofree gchar *bin = server ();
  g_autofree gchar *v1 = g_strdup_printf (
      "{\"argv\": [\"%s\", \"--port\", \"{{ports[http]}}\"], \"env\": {\"WHO\": "
      "\"{{role}}-{{environment}}-{{name}}-{{instance}}-v{{version}}-{{cluster}}\", "
      "\"OLD\": \"{{mesos.instance}}:{{thermos.ports[admin]}}\"},"
      " \"health_check\": {\"http\": {}, \"interval_secs\": 0.05}}", bin);
  g_autoptr (ApiTaskConfig) t1 = config ("env", v1, "http admin", TRUE);
  gint64 c1;
  gint64 job = make_job (t1, 2, &c1);

  apply (job, 1, c1);
  wait_for (job, 1, STG_TASK_RUNNING, c1, 0, 10000);
  gint pid = pid_of (job, 1);
  g_autofree gchar *http = stg_test_process_env (pid, "PORT_HTTP");
  g_autofree gchar *admin = stg_test_process_env (pid, "PORT_ADMIN");
  g_autofree gchar *first = stg_test_process_env (pid, "PORT");
  ck_assert_ptr_nonnull (http);
  ck_assert_ptr_nonnull (admin);
  ck_assert_str_ne (http, admin);
  ck_assert_str_eq (first, admin);          /* the first port by name */
  g_autofree gchar *who = stg_test_process_env (pid, "WHO");
  ck_assert_str_eq (who, "www-prod-env-1-v1-local");
  g_autofree gchar *old = stg_test_process_env (pid, "OLD");
  g_autofree gchar *want_old = g_strdup_printf ("1:%s", admin);
  ck_assert_str_eq (old, want_old);
  g_autofree gchar *inst = stg_test_process_env (pid, "STAGGER_INSTANCE");
  g_autofree gchar *jobname = stg_test_process_env (pid, "STAGGER_JOB");
  g_autofree gchar *ver = stg_test_process_env (pid, "STAGGER_VERSION");
  g_autofree gchar *alt = stg_test_process_env (pid, "STAGGER_VERSION_ALT");
  ck_assert_str_eq (inst, "1");
  ck_assert_str_eq (jobname, "www/prod/env");
  ck_assert_str_eq (ver, "1");
  ck_assert_str_eq (alt, "0");
  g_autofree gchar *from = stg_test_process_env (pid, "STAGGER_FROM_VERSION");
  g_autofree gchar *to = stg_test_process_env (pid, "STAGGER_TO_VERSION");
  ck_assert_str_eq (from, "0");
  ck_assert_str_eq (to, "1");

  /* A new config: new process, new version, same ports. */
  g_autofree gchar *v2 = g_strconcat (v1, "", NULL);
  v2[strlen (v2) - 1] = '\0';
  g_autofree gchar *v2b = g_strconcat (v2, ", \"stop_timeout_secs\": 2}", NULL);
  g_autoptr (ApiTaskConfig) t2 = config ("env", v2b, "http admin", TRUE);
  gint64 c2 = add_config (t2);
  apply (job, 1, c2);
  wait_for (job, 1, STG_TASK_RUNNING, c2, 0, 10000);
  gint pid2 = pid_of (job, 1);
  ck_assert_int_ne (pid2, pid);
  g_autofree gchar *http2 = stg_test_process_env (pid2, "PORT_HTTP");
  g_autofree gchar *ver2 = stg_test_process_env (pid2, "STAGGER_VERSION");
  ck_assert_str_eq (http2, http);
  ck_assert_str_eq (ver2, "2");
  /* It replaced version 1. */
  g_autofree gchar *from2 = stg_test_process_env (pid2, "STAGGER_FROM_VERSION");
  g_autofree gchar *to2 = stg_test_process_env (pid2, "STAGGER_TO_VERSION");
  ck_assert_str_eq (from2, "1");
  ck_assert_str_eq (to2, "2");
}
END_TEST

START_TEST (bad_configs_are_refused_when_submitted)
{
  static const struct { const gchar *data; const gchar *ports; const gchar *says; } cases[] = {
    { "{\"command\": \"run {{nope}}\"}", "", "unknown template {{nope}}" },
    { "{\"command\": \"run {{ports[admin]}}\"}", "http", "names port 'admin'" },
    { "{\"comand\": \"x\"}", "", "did you mean 'command'" },
    { "{\"command\": \"x\", \"argv\": [\"y\"]}", "", "exactly one of command" },
    { "{\"argv\": []}", "", "argv must be a non-empty array" },
    { "{\"command\": \"x\", \"health_check\": {\"http\": {}}}", "", "needs a named port" },
    { "{\"command\": \"x\", \"health_check\": {\"shell\": {}}}", "", "shell_command is missing" },
    { "{\"command\": \"x\", \"health_check\": {\"interval_secs\": \"often\"}}", "", "interval_secs must be a number" },
    { "{\"command\": \"x\", \"hooks\": {\"pre_update\": 3}}", "", "hooks.pre_update must be" },
    { "{\"command\": \"x\", \"hot_upgrade\": true}", "", "hot_upgrade needs" },
    { "{\"command\": \"x\", \"env\": {\"1BAD\": \"v\"}}", "", "env.1BAD" },
    { "not json", "", "not valid JSON" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (ApiTaskConfig) t = config ("bad", cases[i].data, cases[i].ports, TRUE);
      ck_assert_msg (!stg_runtime_validate (fx.rt, t, &error), "accepted %s", cases[i].data);
      ck_assert_msg (strstr (error->message, cases[i].says) != NULL, "%s: %s", cases[i].data,
                     error->message);
      ck_assert (g_error_matches (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_INVALID));
    }
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiTaskConfig) other = config ("x", "{}", "", TRUE);
  g_object_set (other->executorConfig, "name", "MesosCommand", NULL);
  ck_assert (!stg_runtime_validate (fx.rt, other, &error));
  ck_assert_ptr_nonnull (strstr (error->message, "runs only 'stagger' and 'AuroraExecutor'"));
  g_clear_error (&error);
  g_autoptr (ApiTaskConfig) aurora = config ("x", "{}", "", TRUE);
  g_object_set (aurora->executorConfig, "name", "AuroraExecutor", NULL);
  ck_assert (!stg_runtime_validate (fx.rt, aurora, &error));
  ck_assert_msg (g_str_has_prefix (error->message, "executorConfig.data: "), "%s", error->message);
}
END_TEST

/* ---- hot upgrade ------------------------------------------------------------------------- */

typedef struct
{
  gint port;
  volatile gint stop;
  gint ok;
  gint failed;
  GHashTable *versions;     /* "1", "2", ... */
  GMutex lock;
  gchar *last_error;
} Load;

static gpointer
load_run (gpointer data)
{
  Load *l = data;

  while (!g_atomic_int_get (&l->stop))
    {
      gint fd = socket (AF_INET, SOCK_STREAM, 0);
      struct sockaddr_in sa = { 0 };
      sa.sin_family = AF_INET;
      sa.sin_port = htons ((guint16) l->port);
      sa.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
      gboolean ok = FALSE;
      gchar buf[512] = { 0 };
      if (connect (fd, (struct sockaddr *) &sa, sizeof sa) == 0 &&
          write (fd, "GET / HTTP/1.0\r\n\r\n", 18) == 18)
        {
          gsize have = 0;
          gssize n;
          while (have < sizeof buf - 1 && (n = read (fd, buf + have, sizeof buf - 1 - have)) > 0)
            have += (gsize) n;
          const gchar *v = strstr (buf, "hello from version ");
          if (v != NULL)
            {
              ok = TRUE;
              g_autofree gchar *ver = g_strndup (v + 19, strcspn (v + 19, ","));
              g_mutex_lock (&l->lock);
              g_hash_table_add (l->versions, g_steal_pointer (&ver));
              g_mutex_unlock (&l->lock);
            }
        }
      close (fd);
      g_mutex_lock (&l->lock);
      if (ok)
        l->ok++;
      else
        {
          l->failed++;
          g_free (l->last_error);
          l->last_error = g_strdup (buf[0] ? buf : g_strerror (errno));
        }
      g_mutex_unlock (&l->lock);
      g_usleep (2000);
    }
  return NULL;
}

START_TEST (hot_upgrade_keeps_every_connection)
{
  g_autofree gchar *v1 = server_data (NULL, ", \"hot_upgrade\": true");
  g_autoptr (ApiTaskConfig) t1 = config ("hot", v1, "http", TRUE);
  gint64 c1;
  gint64 job = make_job (t1, 1, &c1);
  apply (job, 0, c1);
  wait_for (job, 0, STG_TASK_RUNNING, c1, 0, 10000);
  gint pid1 = pid_of (job, 0);
  g_autofree gchar *port = stg_test_process_env (pid1, "PORT_HTTP");
  g_autofree gchar *fds = stg_test_process_env (pid1, "LISTEN_FDS");
  g_autofree gchar *names = stg_test_process_env (pid1, "LISTEN_FDNAMES");
  ck_assert_str_eq (fds, "1");
  ck_assert_str_eq (names, "http");

  Load l = { .port = atoi (port), .versions = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL) };
  g_mutex_init (&l.lock);
  GThread *client = g_thread_new ("load", load_run, &l);
  spin (300);

  /* Version 2 starts beside version 1 on the same socket, then 1 goes. */
  g_autofree gchar *v2 = server_data (NULL, ", \"hot_upgrade\": true, \"env\": {\"V\": \"2\"}");
  g_autoptr (ApiTaskConfig) t2 = config ("hot", v2, "http", TRUE);
  gint64 c2 = add_config (t2);
  apply (job, 0, c2);
  wait_for (job, 0, STG_TASK_RUNNING, c2, 0, 10000);
  gint pid2 = pid_of (job, 0);
  ck_assert_int_ne (pid2, pid1);
  g_autofree gchar *alt = stg_test_process_env (pid2, "STAGGER_VERSION_ALT");
  ck_assert_str_eq (alt, "1");
  g_autofree gchar *from2 = stg_test_process_env (pid2, "STAGGER_FROM_VERSION");
  g_autofree gchar *to2 = stg_test_process_env (pid2, "STAGGER_TO_VERSION");
  ck_assert_str_eq (from2, "1");
  ck_assert_str_eq (to2, "2");
  for (gint i = 0; i < 500 && stg_test_process_alive (pid1); i++)
    spin (10);
  ck_assert (!stg_test_process_alive (pid1));
  spin (300);

  /* Version 3 never gets healthy: version 2 keeps serving. */
  g_autofree gchar *v3 = server_data (", \"--unhealthy\"", ", \"hot_upgrade\": true");
  /* Fail fast: no grace period for the new version. */
  g_auto (GStrv) v3parts = g_strsplit (v3, "\"initial_interval_secs\": 2", -1);
  g_autofree gchar *v3c = g_strjoinv ("\"initial_interval_secs\": 0", v3parts);
  g_autoptr (ApiTaskConfig) t3 = config ("hot", v3c, "http", TRUE);
  gint64 c3 = add_config (t3);
  apply (job, 0, c3);
  wait_for (job, 0, STG_TASK_RUNNING, c2, 1, 10000);
  ck_assert_int_eq (pid_of (job, 0), pid2);
  spin (300);

  /* Version 4 never serves its probe socket: the cause says so, and where
   * to read about it (#31). */
  g_autofree gchar *v4 = g_strdup ("{\"argv\": [\"/bin/sleep\", \"60\"], \"hot_upgrade\": true,"
                                   " \"health_check\": {\"http\": {\"endpoint\": \"/health\"},"
                                   " \"initial_interval_secs\": 0, \"interval_secs\": 0.05,"
                                   " \"timeout_secs\": 1}}");
  g_autoptr (ApiTaskConfig) t4 = config ("hot", v4, "http", TRUE);
  gint64 c4 = add_config (t4);
  apply (job, 0, c4);
  wait_for (job, 0, STG_TASK_RUNNING, c2, 2, 10000);
  ck_assert_int_eq (pid_of (job, 0), pid2);
  StgTaskObservation o4 = observe (job, 0);
  ck_assert_msg (o4.cause != NULL && strstr (o4.cause, "did not serve its probe socket") != NULL &&
                     strstr (o4.cause, "STAGGER_PROBE_PORT=") != NULL &&
                     strstr (o4.cause, "staggerd(8)") != NULL,
                 "cause: %s", o4.cause ? o4.cause : "(none)");

  /* Back to version 1, as a rollback does: it starts beside version 2
   * and is the new process, the one that replaces version 2. */
  apply (job, 0, c1);
  wait_for (job, 0, STG_TASK_RUNNING, c1, 2, 10000);
  gint pid3 = pid_of (job, 0);
  ck_assert_int_ne (pid3, pid2);
  g_autofree gchar *alt3 = stg_test_process_env (pid3, "STAGGER_VERSION_ALT");
  g_autofree gchar *from3 = stg_test_process_env (pid3, "STAGGER_FROM_VERSION");
  g_autofree gchar *to3 = stg_test_process_env (pid3, "STAGGER_TO_VERSION");
  ck_assert_str_eq (alt3, "2");
  ck_assert_str_eq (from3, "2");
  ck_assert_str_eq (to3, "1");
  spin (300);

  g_atomic_int_set (&l.stop, 1);
  g_thread_join (client);
  ck_assert_msg (l.failed == 0, "%d of %d connections failed (last: %s)", l.failed, l.ok + l.failed,
                 l.last_error ? l.last_error : "");
  ck_assert_int_gt (l.ok, 50);
  ck_assert (g_hash_table_contains (l.versions, "1"));
  ck_assert (g_hash_table_contains (l.versions, "2"));
  g_hash_table_unref (l.versions);
  g_free (l.last_error);
  g_mutex_clear (&l.lock);
}
END_TEST

static Suite *
runtime_suite (void)
{
  Suite *s = suite_create ("runtime");
  TCase *tc;

#define CASE(name) \
  tc = tcase_create (name); \
  tcase_set_timeout (tc, 90); \
  tcase_add_checked_fixture (tc, stg_rt_setup, stg_rt_teardown); \
  suite_add_tcase (s, tc)
  CASE ("processes");
  tcase_add_test (tc, starts_healthy_and_kills);
  tcase_add_test (tc, command_finds_programs_as_argv_does);
  tcase_add_test (tc, crashes_restart_with_back_off);
  tcase_add_test (tc, exit_statuses_are_recorded);
  CASE ("health");
  tcase_add_loop_test (tc, health_checks_decide, 0, G_N_ELEMENTS (health_cases));
  tcase_add_test (tc, initial_interval_forgives_a_slow_start);
  tcase_add_test (tc, consecutive_thresholds);
  tcase_add_loop_test (tc, aurora_counting_decides, 0, G_N_ELEMENTS (aurora_health_cases));
  tcase_add_test (tc, warming_up_is_checked_again_soon);
  CASE ("config");
  tcase_add_test (tc, ports_and_environment);
  tcase_add_test (tc, bad_configs_are_refused_when_submitted);
  CASE ("hot");
  tcase_add_test (tc, hot_upgrade_keeps_every_connection);
#undef CASE
  return s;
}

int
main (void)
{
  gchar *scope = stg_test_scope_begin ();
  SRunner *sr = srunner_create (runtime_suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  stg_test_scope_end (scope);
  return failed == 0 ? 0 : 1;
}
