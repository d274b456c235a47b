/* thermos_test.c: Check suite for src/thermos's library: AuroraExecutor
 * data parsed and checked (Aurora's end-to-end jobs as the aurora client
 * sends them, in tests/aurora/; defaults; every kind of bad input, with the
 * key its error names), the named ports and their aliases, templates, and
 * the planner's rules. */
#include "config.h"

#include <check.h>
#include <string.h>

#include "common/json_fields.h"
#include "thermos/planner.h"
#include "thermos/task.h"
#include "thermos/template.h"

static gchar *
fixture (const gchar *name)
{
  g_autofree gchar *path = g_build_filename (STG_SRCDIR, "tests", "aurora", name, NULL);
  g_autoptr (GError) error = NULL;
  gchar *text = NULL;

  ck_assert_msg (g_file_get_contents (path, &text, NULL, &error), "%s: %s", path,
                 error ? error->message : "");
  return text;
}

static StgThermosJob *
parse_ok (const gchar *text)
{
  g_autoptr (GError) error = NULL;
  StgThermosJob *job = stg_thermos_job_parse (text, -1, &error);

  ck_assert_msg (job != NULL, "parse failed: %s", error ? error->message : "");
  return job;
}

static StgThermosJob *
parse_fixture (const gchar *name)
{
  g_autofree gchar *text = fixture (name);

  return parse_ok (text);
}

static gchar *
joined_ports (const StgThermosJob *job)
{
  return g_strjoinv (" ", job->ports);
}

/* A job around @task (a JSON object's text) and @rest (more top-level
 * members, with a leading comma, or ""). */
static gchar *
job_text (const gchar *task, const gchar *rest)
{
  return g_strdup_printf ("{\"name\": \"j\", \"role\": \"r\", \"environment\": \"test\", "
                          "\"cluster\": \"c\", \"task\": %s%s}",
                          task, rest);
}

#define ONE_PROCESS "{\"processes\": [{\"name\": \"p\", \"cmdline\": \"true\"}]}"

/* ---- Aurora's end-to-end jobs ------------------------------------------------------- */

START_TEST (http_example_as_sent)
{
  g_autoptr (StgThermosJob) job = parse_fixture ("http_example.json");
  g_autofree gchar *ports = joined_ports (job);

  ck_assert_str_eq (job->name, "http_example");
  ck_assert_str_eq (job->role, "vagrant");
  ck_assert_str_eq (job->environment, "test");
  ck_assert (job->service);
  ck_assert_str_eq (job->task.name, "http_example");
  ck_assert_uint_eq (job->task.processes->len, 6);
  /* SequentialTask: each process waits for the one before. */
  for (guint i = 0; i < 6; i++)
    {
      StgThermosProcess *p = stg_thermos_task_process (&job->task, i);
      ck_assert_uint_eq (p->after->len, i == 0 ? 0 : 1);
      if (i > 0)
        ck_assert_uint_eq (g_array_index (p->after, guint, 0), i - 1);
      ck_assert_int_eq (p->max_failures, 1);
      ck_assert_int_eq (p->min_duration, 5);
      ck_assert (!p->daemon && !p->ephemeral && !p->final && !p->logger.set);
    }
  ck_assert_str_eq (stg_thermos_task_process (&job->task, 0)->name, "setup_env");
  ck_assert_double_eq (job->task.cpu, 0.5);
  ck_assert_int_eq (job->task.ram, 32 * 1024 * 1024);
  ck_assert_int_eq (job->task.disk, 64 * 1024 * 1024);
  ck_assert_int_eq (job->task.finalization_wait, 30);
  /* tcp, http, alias (-> http) and health are named; alias is no port of
   * its own. */
  ck_assert_str_eq (ports, "health http tcp");
  ck_assert (stg_thermos_job_has_port (job, "alias"));
  ck_assert (!stg_thermos_job_has_port (job, "aurora"));
  ck_assert_int_eq (job->health.kind, STG_THERMOS_HEALTH_HTTP);
  ck_assert_str_eq (job->health.endpoint, "/health");
  ck_assert_str_eq (job->health.expected_response, "ok");
  ck_assert_double_eq (job->health.initial_interval_secs, 10);
  ck_assert_double_eq (job->health.interval_secs, 1);
  ck_assert_double_eq (job->health.timeout_secs, 1);
  ck_assert_int_eq (job->health.min_consecutive_successes, 1);
  ck_assert (job->lifecycle.enabled);
  ck_assert_str_eq (job->lifecycle.port, "health");
  ck_assert_str_eq (job->lifecycle.graceful_shutdown_endpoint, "/quitquitquit");
  ck_assert_str_eq (job->lifecycle.shutdown_endpoint, "/abortabortabort");
  ck_assert_int_eq (job->lifecycle.graceful_shutdown_wait_secs, 5);
  ck_assert_int_eq (job->container, STG_THERMOS_CONTAINER_NONE);
  /* The key that first needs each port, for messages. */
  ck_assert_str_eq (g_hash_table_lookup (job->port_refs, "tcp"), "task.processes[2].cmdline");
  ck_assert_str_eq (g_hash_table_lookup (job->port_refs, "http"), "announce.portmap.alias");
}
END_TEST

START_TEST (http_example_updated_and_bad_healthcheck)
{
  g_autoptr (StgThermosJob) updated = parse_fixture ("http_example_updated.json");
  g_autoptr (StgThermosJob) bad = parse_fixture ("http_example_bad_healthcheck.json");
  g_autofree gchar *ports = joined_ports (updated);
  g_autofree gchar *bad_ports = joined_ports (bad);

  /* Announcer(): the client's default alias aurora -> http. */
  ck_assert_str_eq (ports, "health http");
  ck_assert (stg_thermos_job_has_port (updated, "aurora"));
  ck_assert_str_eq (g_hash_table_lookup (updated->portmap, "aurora"), "http");
  ck_assert_int_eq (updated->health.min_consecutive_successes, 15);
  ck_assert_double_eq (updated->health.interval_secs, 2);
  ck_assert_int_eq (updated->task.ram, 34 * 1024 * 1024);

  ck_assert_str_eq (bad_ports, "health http");
  ck_assert_int_eq (bad->health.kind, STG_THERMOS_HEALTH_SHELL);
  ck_assert_str_eq (bad->health.shell_command, "rm -f /etc/passwd");
  ck_assert_int_eq (bad->health.min_consecutive_successes, 5);
  ck_assert_uint_eq (stg_thermos_task_process (&bad->task, 1)->after->len, 1);
}
END_TEST

START_TEST (ephemeral_daemon_and_daemonizing)
{
  g_autoptr (StgThermosJob) edf = parse_fixture ("ephemeral_daemon_with_final.json");
  g_autoptr (StgThermosJob) dz = parse_fixture ("test_daemonizing_process.json");

  StgThermosProcess *daemon = stg_thermos_task_process (&edf->task, 0);
  ck_assert (daemon->daemon && daemon->ephemeral && !daemon->final);
  ck_assert (stg_thermos_task_process (&edf->task, 2)->final);
  ck_assert (!edf->service);
  /* No port named health: no HTTP check, and no lifecycle, as Aurora. */
  ck_assert_ptr_null (edf->ports[0]);
  ck_assert_int_eq (edf->health.kind, STG_THERMOS_HEALTH_NONE);
  ck_assert (!edf->lifecycle.enabled);

  ck_assert_str_eq (dz->task.name, "hello");
  ck_assert_uint_eq (stg_thermos_task_process (&dz->task, 0)->after->len, 0);
  ck_assert_uint_eq (stg_thermos_task_process (&dz->task, 2)->after->len, 1);
  ck_assert_double_eq (dz->task.cpu, 1);
  ck_assert_int_eq (dz->health.kind, STG_THERMOS_HEALTH_NONE);
}
END_TEST

START_TEST (hello_world_example)
{
  g_autofree gchar *path = g_build_filename (STG_SRCDIR, "examples", "aurora", "hello_world.json",
                                             NULL);
  g_autofree gchar *text = NULL;

  ck_assert (g_file_get_contents (path, &text, NULL, NULL));
  g_autoptr (StgThermosJob) job = parse_ok (text);
  ck_assert_str_eq (job->task.name, "fetch_package");
  ck_assert_uint_eq (job->task.processes->len, 2);
  ck_assert_ptr_null (job->ports[0]);
}
END_TEST

/* ---- defaults ------------------------------------------------------------------------- */

START_TEST (defaults_of_a_bare_job)
{
  g_autofree gchar *text = job_text (ONE_PROCESS, "");
  g_autoptr (StgThermosJob) job = parse_ok (text);
  StgThermosProcess *p = stg_thermos_task_process (&job->task, 0);

  ck_assert_str_eq (job->task.name, "p"); /* {{processes[0].name}} */
  ck_assert_int_eq (job->task.max_failures, 1);
  ck_assert_int_eq (job->task.max_concurrency, 0);
  ck_assert_int_eq (job->task.finalization_wait, 30);
  ck_assert_int_eq (p->max_failures, 1);
  ck_assert_int_eq (p->min_duration, 5);
  ck_assert (!p->daemon && !p->ephemeral && !p->final);
  ck_assert_int_eq (p->logger.destination, STG_THERMOS_LOG_FILE);
  ck_assert_int_eq (p->logger.rotate_log_size, 100 * 1024 * 1024);
  ck_assert_int_eq (p->logger.rotate_backups, 5);
  ck_assert_double_eq (job->health.initial_interval_secs, 15);
  ck_assert_double_eq (job->health.interval_secs, 10);
  ck_assert_double_eq (job->health.timeout_secs, 1);
  ck_assert_int_eq (job->health.max_consecutive_failures, 0);
  ck_assert_int_eq (job->health.min_consecutive_successes, 1);
  ck_assert_int_eq (job->health.kind, STG_THERMOS_HEALTH_NONE);
  ck_assert (!job->lifecycle.enabled);
  ck_assert (!job->announce);
  ck_assert_ptr_null (job->ports[0]);
}
END_TEST

START_TEST (announce_defaults_and_loggers)
{
  g_autofree gchar *text = job_text (
      "{\"processes\": [{\"name\": \"p\", \"cmdline\": \"run {{thermos.ports[health]}}\", "
      "\"logger\": {\"destination\": \"both\", \"mode\": \"rotate\", "
      "\"rotate\": {\"log_size\": 1024, \"backups\": 2}}}]}",
      ", \"announce\": {}, \"lifecycle\": {\"http\": {}}");
  g_autoptr (StgThermosJob) job = parse_ok (text);
  g_autofree gchar *ports = joined_ports (job);
  StgThermosProcess *p = stg_thermos_task_process (&job->task, 0);

  /* An empty Announcer is {'aurora': '{{primary_port}}'}: http is asked for. */
  ck_assert_str_eq (ports, "health http");
  ck_assert_str_eq (g_hash_table_lookup (job->portmap, "aurora"), "http");
  ck_assert (job->lifecycle.enabled);
  ck_assert_int_eq (job->lifecycle.shutdown_wait_secs, 5);
  ck_assert_int_eq (job->health.kind, STG_THERMOS_HEALTH_HTTP);
  ck_assert (p->logger.set);
  ck_assert_int_eq (p->logger.destination, STG_THERMOS_LOG_BOTH);
  ck_assert_int_eq (p->logger.mode, STG_THERMOS_LOG_ROTATE);
  ck_assert_int_eq (p->logger.rotate_log_size, 1024);
  ck_assert_int_eq (p->logger.rotate_backups, 2);
}
END_TEST

START_TEST (containers)
{
  g_autofree gchar *docker = job_text (ONE_PROCESS, ", \"container\": {\"image\": \"web:1\", "
                                                    "\"parameters\": []}");
  g_autofree gchar *wrapped = job_text (ONE_PROCESS, ", \"container\": {\"docker\": "
                                                     "{\"image\": \"web:2\"}}");
  g_autofree gchar *mesos = job_text (ONE_PROCESS, ", \"container\": {\"image\": {\"name\": "
                                                   "\"web\", \"tag\": \"3\"}, \"volumes\": []}");
  g_autoptr (StgThermosJob) a = parse_ok (docker);
  g_autoptr (StgThermosJob) b = parse_ok (wrapped);
  g_autoptr (StgThermosJob) c = parse_ok (mesos);

  ck_assert_int_eq (a->container, STG_THERMOS_CONTAINER_DOCKER);
  ck_assert_str_eq (a->image, "web:1");
  ck_assert_int_eq (b->container, STG_THERMOS_CONTAINER_DOCKER);
  ck_assert_str_eq (b->image, "web:2");
  ck_assert_int_eq (c->container, STG_THERMOS_CONTAINER_MESOS);
  ck_assert_str_eq (c->image, "web:3");
}
END_TEST

/* ---- bad input ------------------------------------------------------------------------ */

typedef struct
{
  const gchar *task; /* NULL: ONE_PROCESS */
  const gchar *rest;
  const gchar *error;
  gint code;
} Bad;

#define INV STG_THERMOS_ERROR_INVALID
#define UNS STG_THERMOS_ERROR_UNSUPPORTED

static const Bad bad_jobs[] = {
  { NULL, ", \"colour\": 1", "colour: unknown key (known here: name, role", INV },
  { NULL, ", \"service\": \"yes\"", "service must be true or false, not a string", INV },
  { NULL, ", \"cron_schedule\": \"* * * * *\"", "cron_schedule: cron jobs are not supported", UNS },
  { NULL, ", \"update_config\": {}", "update_config: update settings travel with the update", UNS },
  { NULL, ", \"instance\": 0", "instance: this is the MesosTaskInstance form", UNS },
  { NULL, ", \"cron_collision_policy\": \"NOPE\"", "cron_collision_policy: 'NOPE' is none of",
    INV },
  { NULL, ", \"max_task_failures\": -2", "max_task_failures must be between -1 and", INV },
  { NULL, ", \"metadata\": [{\"key\": \"k\"}]", "metadata[0].value is missing", INV },
  { NULL, ", \"executor_config\": {\"name\": \"other\", \"data\": \"\"}",
    "executor_config.name is 'other'", INV },
  { NULL, ", \"executor_config\": {\"name\": \"AuroraExecutor\", \"dat\": \"\"}",
    "executor_config.dat: unknown key (known here: name, data)", INV },
  { NULL, ", \"announce\": {\"zk_path\": \"x\"}",
    "announce.zk_path: 'x' is not a ZooKeeper path (it starts with '/')", INV },
  { NULL, ", \"announce\": {\"zk_path\": 1}", "announce.zk_path must be a string", INV },
  { NULL, ", \"announce\": {\"portmap\": {\"a\": \"b\", \"b\": \"a\"}}",
    "announce.portmap.a: the aliases form a cycle", INV },
  { NULL, ", \"announce\": {\"portmap\": {\"a\": 80}}", "announce.portmap.a must be a string",
    INV },
  { NULL, ", \"announce\": {\"portmap\": {\"a\": \"{{x}}\"}}",
    "announce.portmap.a: '{{x}}' is neither a port name nor a port number", INV },
  { NULL, ", \"container\": {\"image\": {\"name\": \"a\", \"image_id\": \"b\"}}",
    "container.image.image_id: AppC images are not supported", UNS },
  { NULL,
    ", \"container\": {\"volumes\": [{\"container_path\": \"a\", \"host_path\": \"b\", "
    "\"mode\": \"RO\"}]}",
    "container.volumes: the Mesos containerizer's volumes are not supported", UNS },
  { NULL,
    ", \"container\": {\"image\": \"x\", \"parameters\": [{\"name\": \"a\", \"value\": "
    "\"b\"}]}",
    "container.parameters: Docker parameters are not supported", UNS },
  { NULL, ", \"health_check_config\": {\"health_checker\": {}}",
    "health_check_config.health_checker: give http or shell", INV },
  { NULL, ", \"health_check_config\": {\"interval_secs\": 0}",
    "health_check_config.interval_secs must be between", INV },
  { NULL, ", \"health_check_config\": {\"timeout\": 1}", "health_check_config.timeout: unknown key",
    INV },
  { NULL, ", \"health_check_config\": {\"health_checker\": {\"http\": {\"endpoint\": \"health\"}}}",
    "health_check_config.health_checker.http.endpoint must start with '/'", INV },
  { NULL,
    ", \"health_check_config\": {\"health_checker\": {\"http\": {\"endpoint\": "
    "\"/{{thermos.task_id}}\"}}}",
    "health_check_config.health_checker.http.endpoint: template {{thermos.task_id}} is not "
    "filled in here",
    INV },
  { NULL, ", \"health_check_config\": {\"health_checker\": {\"shell\": {}}}",
    "health_check_config.health_checker.shell.shell_command is missing", INV },
  { NULL,
    ", \"health_check_config\": {\"health_checker\": {\"shell\": {\"shell_command\": "
    "\"curl :{{thermos.ports[admin]}}\"}}}",
    "health_check_config.health_checker.shell.shell_command: template "
    "{{thermos.ports[admin]}} names port 'admin', which the task does not ask for",
    INV },
  { NULL, ", \"lifecycle\": {\"http\": {\"shutdown_endpoint\": \"abort\"}}",
    "lifecycle.http.shutdown_endpoint must start with '/'", INV },
  { NULL, ", \"lifecycle\": {\"http\": {\"graceful_shutdown_wait_secs\": 1.5}}",
    "lifecycle.http.graceful_shutdown_wait_secs must be a whole number, not the number 1.5", INV },
  { "{\"processes\": []}", "", "task.processes: a task needs at least one process", INV },
  { "{}", "", "task.processes is missing", INV },
  { "{\"processes\": [{\"name\": \"p\"}]}", "", "task.processes[0].cmdline is missing", INV },
  { "{\"processes\": [3]}", "", "task.processes[0] must be an object, not the number 3", INV },
  { "{\"processes\": [{\"name\": \"p\", \"cmdline\": \"x\", \"max_failure\": 1}]}", "",
    "task.processes[0].max_failure: unknown key", INV },
  { "{\"processes\": [{\"name\": \"p\", \"cmdline\": \"x\", \"max_failures\": -1}]}", "",
    "task.processes[0].max_failures must be between 0 and", INV },
  { "{\"processes\": [{\"name\": \"p\", \"cmdline\": \"x\", \"daemon\": 1}]}", "",
    "task.processes[0].daemon must be true or false, not the number 1", INV },
  { "{\"processes\": [{\"name\": \"a/b\", \"cmdline\": \"x\"}]}", "",
    "task.processes[0].name: 'a/b' is not a process name", INV },
  { "{\"processes\": [{\"name\": \".a\", \"cmdline\": \"x\"}]}", "",
    "task.processes[0].name: '.a' is not a process name", INV },
  { "{\"processes\": [{\"name\": \"p{{mesos.instance}}\", \"cmdline\": \"x\"}]}", "",
    "task.processes[0].name: 'p{{mesos.instance}}': templates are not allowed", INV },
  { "{\"processes\": [{\"name\": \"p\", \"cmdline\": \"x\"}, {\"name\": \"p\", \"cmdline\": "
    "\"y\"}]}",
    "", "task.processes[1].name: two processes are named 'p'", INV },
  { "{\"processes\": [{\"name\": \"p\", \"cmdline\": \"echo {{profile.cmd}}\"}]}", "",
    "task.processes[0].cmdline: unknown template {{profile.cmd}}", INV },
  { "{\"processes\": [{\"name\": \"p\", \"cmdline\": \"x\", \"logger\": {\"destination\": "
    "\"disk\"}}]}",
    "", "task.processes[0].logger.destination: 'disk' is none of", INV },
  { "{\"processes\": [{\"name\": \"p\", \"cmdline\": \"x\", \"logger\": {\"rotate\": "
    "{\"backups\": 0}}}]}",
    "", "task.processes[0].logger.rotate.backups must be between 1", INV },
  { "{\"processes\": [{\"name\": \"a\", \"cmdline\": \"x\"}], \"constraints\": [{\"order\": "
    "[\"a\", \"b\"]}]}",
    "", "task.constraints[0].order[1]: no process is named 'b'", INV },
  { "{\"processes\": [{\"name\": \"a\", \"cmdline\": \"x\"}], \"constraints\": [{\"order\": "
    "[\"a\", 1]}]}",
    "", "task.constraints[0].order[1] must be a process name, not the number 1", INV },
  { "{\"processes\": [{\"name\": \"a\", \"cmdline\": \"x\"}, {\"name\": \"b\", \"cmdline\": "
    "\"y\"}, {\"name\": \"c\", \"cmdline\": \"z\"}], \"constraints\": [{\"order\": [\"a\", "
    "\"b\"]}, {\"order\": [\"b\", \"c\", \"a\"]}]}",
    "",
    "task.constraints: the order constraints form a cycle (processes 'a', 'b', 'c' never start)",
    INV },
  { "{\"processes\": [{\"name\": \"a\", \"cmdline\": \"x\"}], \"constraints\": [{\"order\": "
    "[\"a\", \"a\"]}]}",
    "", "form a cycle (processes 'a' never start)", INV },
  { "{\"processes\": [{\"name\": \"a\", \"cmdline\": \"x\", \"daemon\": true}, {\"name\": "
    "\"b\", \"cmdline\": \"y\"}], \"constraints\": [{\"order\": [\"a\", \"b\"]}]}",
    "", "task.constraints[0].order[1]: process 'b' may not wait for daemon process 'a'", INV },
  { "{\"processes\": [{\"name\": \"a\", \"cmdline\": \"x\", \"ephemeral\": true}, {\"name\": "
    "\"b\", \"cmdline\": \"y\"}], \"constraints\": [{\"order\": [\"a\", \"b\"]}]}",
    "", "task.constraints[0].order[1]: process 'b' may not wait for ephemeral process 'a'", INV },
  { "{\"processes\": [{\"name\": \"a\", \"cmdline\": \"x\"}, {\"name\": \"b\", \"cmdline\": "
    "\"y\", \"final\": true}], \"constraints\": [{\"order\": [\"a\", \"b\"]}]}",
    "", "task.constraints[0].order[1]: final and ordinary processes may not wait for each other",
    INV },
  { "{\"processes\": [{\"name\": \"a\", \"cmdline\": \"x\"}], \"constraints\": [{\"after\": "
    "[]}]}",
    "", "task.constraints[0].after: unknown key (known here: order)", INV },
  { "{\"processes\": [{\"name\": \"a\", \"cmdline\": \"x\"}], \"finalization_wait\": \"30\"}", "",
    "task.finalization_wait must be a whole number, not a string", INV },
  { "{\"processes\": [{\"name\": \"a\", \"cmdline\": \"x\"}], \"resources\": {\"cpu\": -1}}", "",
    "task.resources.cpu must be between 0", INV },
};

START_TEST (bad_job_names_the_key)
{
  const Bad *b = &bad_jobs[_i];
  g_autofree gchar *text = job_text (b->task != NULL ? b->task : ONE_PROCESS, b->rest);
  g_autoptr (GError) error = NULL;
  g_autoptr (StgThermosJob) job = stg_thermos_job_parse (text, -1, &error);

  ck_assert_msg (job == NULL, "accepted: %s", text);
  ck_assert (g_error_matches (error, STG_THERMOS_ERROR, b->code));
  ck_assert_msg (strstr (error->message, b->error) != NULL, "%s\n  gave: %s\n  want: %s", text,
                 error->message, b->error);
}
END_TEST

START_TEST (malformed_json)
{
  static const gchar *const bad[] = { "", "{", "{\"name\": }", "[1, 2]", "\"text\"", "nul" };
  g_autoptr (GString) deep = g_string_new (NULL);

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GError) error = NULL;
      ck_assert_ptr_null (stg_thermos_job_parse (bad[i], -1, &error));
      ck_assert (g_error_matches (error, STG_THERMOS_ERROR, STG_THERMOS_ERROR_INVALID));
    }
  for (guint i = 0; i < 100000; i++)
    g_string_append_c (deep, '[');
  g_autoptr (GError) error = NULL;
  ck_assert_ptr_null (stg_thermos_job_parse (deep->str, -1, &error));
  ck_assert_msg (strstr (error->message, "not valid JSON: JSON nested deeper than") != NULL, "%s",
                 error->message);
  g_clear_error (&error);
  ck_assert_ptr_null (stg_thermos_job_parse ("[]", -1, &error));
  ck_assert_str_eq (error->message, "the executor data must be a JSON object (Aurora's job)");
}
END_TEST

START_TEST (ports_checked_against_the_task_config)
{
  g_autoptr (StgThermosJob) job = parse_fixture ("http_example.json");
  static const gchar *const all[] = { "health", "http", "tcp", "extra", NULL };
  static const gchar *const few[] = { "http", "health", NULL };
  g_autoptr (GError) error = NULL;

  ck_assert (stg_thermos_job_check_ports (job, all, &error));
  ck_assert (!stg_thermos_job_check_ports (job, few, &error));
  ck_assert_str_eq (error->message, "task.processes[2].cmdline needs port 'tcp', which the task "
                                    "does not ask for (its named ports: http, health)");
  g_clear_error (&error);
  ck_assert (!stg_thermos_job_check_ports (job, NULL, &error));
  ck_assert (strstr (error->message, "(its named ports: none)") != NULL);
}
END_TEST

START_TEST (ports_resolve_aliases_and_static_ports)
{
  g_autofree gchar *text =
      job_text ("{\"processes\": [{\"name\": \"p\", \"cmdline\": \"{{thermos.ports[web]}} "
                "{{thermos.ports[admin]}} {{thermos.ports[https]}}\"}]}",
                ", \"announce\": {\"primary_port\": \"web\", \"portmap\": {\"aurora\": \"web\", "
                "\"https\": \"secure\", \"secure\": \"443\", \"health\": \"admin\"}}");
  g_autoptr (StgThermosJob) job = parse_ok (text);
  g_autofree gchar *ports = joined_ports (job);
  g_autoptr (GHashTable) assigned = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GError) error = NULL;

  /* https -> secure -> 443 is static: nothing to assign for it. */
  ck_assert_str_eq (ports, "admin web");
  ck_assert_int_eq (job->health.kind, STG_THERMOS_HEALTH_HTTP); /* health -> admin */
  g_hash_table_insert (assigned, "web", GINT_TO_POINTER (31000));
  ck_assert_ptr_null (stg_thermos_job_resolve_ports (job, assigned, &error));
  ck_assert (strstr (error->message, "no port 'admin' was assigned") != NULL);
  g_clear_error (&error);
  g_hash_table_insert (assigned, "admin", GINT_TO_POINTER (31001));
  g_autoptr (GHashTable) all = stg_thermos_job_resolve_ports (job, assigned, &error);
  ck_assert_ptr_nonnull (all);
  ck_assert_int_eq (GPOINTER_TO_INT (g_hash_table_lookup (all, "web")), 31000);
  ck_assert_int_eq (GPOINTER_TO_INT (g_hash_table_lookup (all, "aurora")), 31000);
  ck_assert_int_eq (GPOINTER_TO_INT (g_hash_table_lookup (all, "health")), 31001);
  ck_assert_int_eq (GPOINTER_TO_INT (g_hash_table_lookup (all, "https")), 443);
  ck_assert_int_eq (GPOINTER_TO_INT (g_hash_table_lookup (all, "secure")), 443);
  ck_assert_uint_eq (g_hash_table_size (all), 6);
}
END_TEST

/* ---- templates ------------------------------------------------------------------------ */

START_TEST (templates_expand)
{
  g_autoptr (GHashTable) ports = g_hash_table_new (g_str_hash, g_str_equal);
  StgThermosVars vars = { 3, "host1", "task-7", "www-data", ports };
  g_autoptr (GError) error = NULL;

  g_hash_table_insert (ports, "http", GINT_TO_POINTER (8080));
  g_autofree gchar *out = stg_thermos_template_expand (
      "{{mesos.instance}} {{mesos.hostname}} {{thermos.task_id}} {{thermos.user}} "
      ":{{thermos.ports[http]}} {{&not.a.template}} ${HOME} {x} {{{mesos.instance}}}",
      "cmd", STG_THERMOS_SCOPE_ALL, &vars, &error);
  ck_assert_str_eq (out, "3 host1 task-7 www-data :8080 {{not.a.template}} ${HOME} {x} {3}");

  ck_assert_ptr_null (stg_thermos_template_expand ("{{thermos.ports[tcp]}}", "cmd",
                                                   STG_THERMOS_SCOPE_ALL, &vars, &error));
  ck_assert_str_eq (error->message, "cmd: template {{thermos.ports[tcp]}}: no port 'tcp' was "
                                    "assigned");
  g_clear_error (&error);
  ck_assert_ptr_null (stg_thermos_template_expand ("{{ mesos.instance }}", "cmd",
                                                   STG_THERMOS_SCOPE_ALL, &vars, &error));
  ck_assert (strstr (error->message, "cmd: unknown template {{ mesos.instance }}") != NULL);
  g_clear_error (&error);
  ck_assert_ptr_null (stg_thermos_template_expand ("{{thermos.user}}", "endpoint",
                                                   STG_THERMOS_SCOPE_MESOS, &vars, &error));
  ck_assert (strstr (error->message, "is not filled in here") != NULL);
  g_clear_error (&error);
  ck_assert_ptr_null (stg_thermos_template_expand ("{{thermos.ports[a b]}}", "cmd",
                                                   STG_THERMOS_SCOPE_ALL, &vars, &error));
}
END_TEST

/* ---- the planner ---------------------------------------------------------------------- */

static StgThermosJob *
planner_job (const gchar *task)
{
  g_autofree gchar *text = job_text (task, "");

  return parse_ok (text);
}

static guint
ready_count (StgThermosPlanner *plan, gdouble now)
{
  g_autoptr (GArray) ready = stg_thermos_planner_ready (plan, now);

  return ready->len;
}

START_TEST (planner_order_and_failures)
{
  g_autoptr (StgThermosJob) job = planner_job (
      "{\"processes\": [{\"name\": \"a\", \"cmdline\": \"x\", \"max_failures\": 2, "
      "\"min_duration\": 3}, {\"name\": \"b\", \"cmdline\": \"y\"}, {\"name\": \"f\", "
      "\"cmdline\": \"z\", \"final\": true}], \"constraints\": [{\"order\": [\"a\", \"b\"]}]}");
  g_autoptr (StgThermosPlanner) plan = stg_thermos_planner_new (&job->task, FALSE);
  g_autoptr (GArray) ready = stg_thermos_planner_ready (plan, 0);

  ck_assert (!stg_thermos_planner_has (plan, 2));
  ck_assert_uint_eq (ready->len, 1);
  ck_assert_uint_eq (g_array_index (ready, guint, 0), 0);
  stg_thermos_planner_start (plan, 0);
  stg_thermos_planner_end (plan, 0, STG_THERMOS_RUN_FAILED, 10);
  stg_thermos_planner_check_invariants (plan);
  /* Under its limit: again, once min_duration has passed. */
  ck_assert_int_eq (stg_thermos_planner_state (plan, 0), STG_THERMOS_PLAN_IDLE);
  ck_assert_uint_eq (ready_count (plan, 12), 0);
  ck_assert_double_eq_tol (stg_thermos_planner_next_wait (plan, 12), 1, 1e-9);
  ck_assert_uint_eq (ready_count (plan, 13), 1);
  stg_thermos_planner_start (plan, 0);
  stg_thermos_planner_end (plan, 0, STG_THERMOS_RUN_FAILED, 14);
  /* The second failure is its last: failed, and b can never start. */
  ck_assert_int_eq (stg_thermos_planner_state (plan, 0), STG_THERMOS_PLAN_FAILED);
  ck_assert_uint_eq (stg_thermos_planner_failed (plan), 1);
  ck_assert (stg_thermos_planner_deadlocked (plan));
  ck_assert (!stg_thermos_planner_healthy (plan, 0));
  ck_assert (!stg_thermos_planner_complete (plan));
  ck_assert_double_eq (stg_thermos_planner_next_wait (plan, 14), -1);
}
END_TEST

START_TEST (planner_daemon_ephemeral_and_run_limit)
{
  g_autoptr (StgThermosJob) job = planner_job (
      "{\"processes\": [{\"name\": \"d\", \"cmdline\": \"x\", \"daemon\": true, \"max_failures\": "
      "0, \"min_duration\": 0}, {\"name\": \"e\", \"cmdline\": \"y\", \"ephemeral\": true}, "
      "{\"name\": \"m\", \"cmdline\": \"z\"}]}");
  g_autoptr (StgThermosPlanner) plan = stg_thermos_planner_new (&job->task, FALSE);

  ck_assert_uint_eq (ready_count (plan, 0), 3);
  for (guint i = 0; i < 3; i++)
    stg_thermos_planner_start (plan, i);
  /* Of the three running, the completion waits for two: not the ephemeral one. */
  ck_assert_uint_eq (stg_thermos_planner_running (plan), 3);
  ck_assert_uint_eq (stg_thermos_planner_running_required (plan), 2);
  /* The ephemeral process's last failure finishes it; the task does not
   * wait for it anyway. */
  stg_thermos_planner_end (plan, 1, STG_THERMOS_RUN_FAILED, 1);
  ck_assert_int_eq (stg_thermos_planner_state (plan, 1), STG_THERMOS_PLAN_FINISHED);
  ck_assert (!stg_thermos_planner_complete (plan));
  stg_thermos_planner_end (plan, 2, STG_THERMOS_RUN_SUCCEEDED, 1);
  /* A daemon that is not ephemeral keeps the task going... */
  ck_assert (!stg_thermos_planner_complete (plan));
  /* ...and runs again after a success (min_duration 0: at once). */
  stg_thermos_planner_end (plan, 0, STG_THERMOS_RUN_SUCCEEDED, 2);
  ck_assert_int_eq (stg_thermos_planner_state (plan, 0), STG_THERMOS_PLAN_IDLE);
  ck_assert_uint_eq (ready_count (plan, 2), 1);
  ck_assert (!stg_thermos_planner_deadlocked (plan));
  ck_assert (stg_thermos_planner_healthy (plan, 1));
  stg_thermos_planner_check_invariants (plan);
}
END_TEST

START_TEST (planner_run_limit)
{
  g_autoptr (StgThermosJob) job = planner_job (
      "{\"processes\": [{\"name\": \"d\", \"cmdline\": \"x\", \"daemon\": true, \"max_failures\": "
      "0, \"min_duration\": 0, \"ephemeral\": true}, {\"name\": \"m\", \"cmdline\": \"z\"}]}");
  g_autoptr (StgThermosPlanner) plan = stg_thermos_planner_new (&job->task, FALSE);

  for (guint run = 0; run < STG_THERMOS_RUN_LIMIT; run++)
    {
      ck_assert_int_eq (stg_thermos_planner_state (plan, 0), STG_THERMOS_PLAN_IDLE);
      stg_thermos_planner_start (plan, 0);
      stg_thermos_planner_end (plan, 0,
                               run % 3 == 0   ? STG_THERMOS_RUN_SUCCEEDED
                               : run % 3 == 1 ? STG_THERMOS_RUN_FAILED
                                              : STG_THERMOS_RUN_LOST,
                               run);
      stg_thermos_planner_check_invariants (plan);
    }
  ck_assert_int_eq (stg_thermos_planner_state (plan, 0), STG_THERMOS_PLAN_FAILED);
  /* A loss is not a failure: a process with max_failures 1 runs again. */
  stg_thermos_planner_start (plan, 1);
  stg_thermos_planner_end (plan, 1, STG_THERMOS_RUN_LOST, 0);
  ck_assert_int_eq (stg_thermos_planner_state (plan, 1), STG_THERMOS_PLAN_IDLE);
  ck_assert_uint_eq (stg_thermos_planner_failed (plan), 1);
  ck_assert (stg_thermos_planner_healthy (plan, 2));
  ck_assert (!stg_thermos_planner_healthy (plan, 1));
}
END_TEST

/* finalization_wait is capped at a minute, as on Aurora; and a stop
 * takes Thermos's preemption wait (a minute) whatever finalization_wait
 * says, after the lifecycle's POSTs and waits: that is what staggerd
 * allows the runner before SIGKILL. */
START_TEST (finalization_wait_capped_and_the_stop_length)
{
  g_autofree gchar *long_wait = job_text ("{\"processes\": [{\"name\": \"p\", \"cmdline\": "
                                          "\"true\"}], \"finalization_wait\": 600}",
                                          "");
  g_autofree gchar *short_wait = job_text ("{\"processes\": [{\"name\": \"p\", \"cmdline\": "
                                           "\"true\"}], \"finalization_wait\": 3}",
                                           "");
  g_autoptr (StgThermosJob) capped = parse_ok (long_wait);
  g_autoptr (StgThermosJob) kept = parse_ok (short_wait);
  g_autoptr (StgThermosJob) example = parse_fixture ("http_example.json");

  ck_assert_int_eq (capped->task.finalization_wait, 60);
  ck_assert_int_eq (kept->task.finalization_wait, 3);
  ck_assert_int_eq (stg_thermos_job_stop_secs (capped), 60 + STG_THERMOS_REAP_WAIT_SECS);
  ck_assert_int_eq (stg_thermos_job_stop_secs (kept), 60 + STG_THERMOS_REAP_WAIT_SECS);
  /* Two POSTs of a second at most, and their waits (5 s each). */
  ck_assert_int_eq (stg_thermos_job_stop_secs (example),
                    2 + 5 + 5 + 60 + STG_THERMOS_REAP_WAIT_SECS);
}
END_TEST

static Suite *
thermos_suite (void)
{
  Suite *s = suite_create ("thermos");
  TCase *tc = tcase_create ("aurora");
  tcase_add_test (tc, http_example_as_sent);
  tcase_add_test (tc, http_example_updated_and_bad_healthcheck);
  tcase_add_test (tc, ephemeral_daemon_and_daemonizing);
  tcase_add_test (tc, hello_world_example);
  suite_add_tcase (s, tc);

  tc = tcase_create ("parse");
  tcase_add_test (tc, defaults_of_a_bare_job);
  tcase_add_test (tc, finalization_wait_capped_and_the_stop_length);
  tcase_add_test (tc, announce_defaults_and_loggers);
  tcase_add_test (tc, containers);
  tcase_add_loop_test (tc, bad_job_names_the_key, 0, G_N_ELEMENTS (bad_jobs));
  tcase_add_test (tc, malformed_json);
  tcase_add_test (tc, ports_checked_against_the_task_config);
  tcase_add_test (tc, ports_resolve_aliases_and_static_ports);
  tcase_add_test (tc, templates_expand);
  suite_add_tcase (s, tc);

  tc = tcase_create ("planner");
  tcase_add_test (tc, planner_order_and_failures);
  tcase_add_test (tc, planner_daemon_ephemeral_and_run_limit);
  tcase_add_test (tc, planner_run_limit);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  SRunner *sr = srunner_create (thermos_suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  return failed == 0 ? 0 : 1;
}
