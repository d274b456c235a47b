/* fleet_test.c: the fleet runtime's suite, against real podman services
 * (tests/podman_hosts.c) standing in for container hosts. Host ports handed
 * to containers come from 44000-45999. Test process, main thread. */
#include "config.h"

#include <check.h>
#include <string.h>

#include "cli/jobfile.h"
#include "podman_hosts.h"
#include "testutil.h"

/* The simulated hosts: each has its own storage and socket, images come from
 * a local tarball, and a container started through one is served on the
 * host's address and invisible to the others. */
START_TEST (podman_hosts_run_local_images)
{
  StgTestPodman *fleet = stg_test_podman_start (2);
  StgTestPodmanHost *h0 = fleet->hosts->pdata[0];
  StgTestPodmanHost *h1 = fleet->hosts->pdata[1];

  stg_test_podman_import (fleet, "localhost/stagger-test:1", "1");
  g_autofree gchar *id = stg_test_podman_cli (fleet, h0, "run", "--detach", "--name=probe",
                                              "localhost/stagger-test:1", "httpd", "-f", "-p",
                                              "127.0.0.1:44000", "-h", "/www", NULL);
  ck_assert_uint_gt (strlen (id), 12);
  ck_assert_msg (stg_test_wait_http_body (44000, "/version", "1", 30000),
                 "the container never served version 1 on 44000");
  g_autofree gchar *ps0 = stg_test_podman_cli (fleet, h0, "ps", "--quiet", NULL);
  g_autofree gchar *ps1 = stg_test_podman_cli (fleet, h1, "ps", "--all", "--quiet", NULL);
  ck_assert_msg (g_str_has_prefix (id, g_strstrip (ps0)), "host0 lists %s, not %s", ps0, id);
  ck_assert_str_eq (g_strstrip (ps1), "");
  stg_test_podman_stop (fleet);
  ck_assert (!stg_test_port_open (44000));
}
END_TEST

/* A job file with @extra (JSON members, with a trailing comma) at the top. */
static gchar *
job_text (const gchar *extra)
{
  return g_strdup_printf ("{\"cluster\": \"local\", \"role\": \"www\", \"environment\": \"prod\", "
                          "\"name\": \"web\", %s \"task\": {\"command\": \"httpd -f\"}}", extra);
}

static ApiConstraint *
find_constraint (ApiTaskConfig *task, const gchar *name)
{
  GHashTableIter it;
  gpointer key;

  g_hash_table_iter_init (&it, task->constraints);
  while (g_hash_table_iter_next (&it, &key, NULL))
    if (g_strcmp0 (API_CONSTRAINT (key)->name, name) == 0)
      return key;
  return NULL;
}

/* Aurora's forms: Container{docker{image, parameters}}, and constraints as
 * "limit:N", "a,b" and "!a". */
START_TEST (job_file_reads_container_and_constraints)
{
  g_autoptr (GError) error = NULL;
  g_autofree gchar *text = job_text (
    "\"container\": {\"docker\": {\"image\": \"localhost/web:2\", "
    "\"parameters\": [{\"name\": \"env\", \"value\": \"A=1\"}]}}, "
    "\"constraints\": {\"host\": \"limit:10\", \"zone\": \"a,b\", \"rack\": \"!r1\"},");
  g_autoptr (StgJobFile) jf = stg_job_file_parse ("web.json", text, -1, NULL, &error);

  ck_assert_msg (jf != NULL, "%s", error ? error->message : "");
  ApiTaskConfig *task = jf->job->taskConfig;
  ck_assert (task->__isset_container && task->container->__isset_docker);
  ck_assert (!task->container->__isset_mesos);
  ck_assert_str_eq (task->container->docker->image, "localhost/web:2");
  ck_assert_uint_eq (task->container->docker->parameters->len, 1);
  ApiDockerParameter *p = task->container->docker->parameters->pdata[0];
  ck_assert_str_eq (p->name, "env");
  ck_assert_str_eq (p->value, "A=1");
  ck_assert (task->__isset_constraints);
  ck_assert_uint_eq (g_hash_table_size (task->constraints), 3);
  ApiConstraint *host = find_constraint (task, "host");
  ck_assert (host->constraint->__isset_limit && !host->constraint->__isset_value);
  ck_assert_int_eq (host->constraint->limit->limit, 10);
  ApiValueConstraint *zone = find_constraint (task, "zone")->constraint->value;
  ck_assert (!zone->negated);
  ck_assert_uint_eq (g_hash_table_size (zone->values), 2);
  ck_assert (g_hash_table_contains (zone->values, "a") && g_hash_table_contains (zone->values, "b"));
  ApiValueConstraint *rack = find_constraint (task, "rack")->constraint->value;
  ck_assert (rack->negated);
  ck_assert (g_hash_table_contains (rack->values, "r1"));
}
END_TEST

/* A job file without them leaves both unset (configs keep their hash). */
START_TEST (job_file_without_placement_sets_nothing)
{
  g_autoptr (GError) error = NULL;
  g_autofree gchar *text = job_text ("");
  g_autoptr (StgJobFile) jf = stg_job_file_parse ("web.json", text, -1, NULL, &error);

  ck_assert_msg (jf != NULL, "%s", error ? error->message : "");
  ck_assert (!jf->job->taskConfig->__isset_container);
  ck_assert (!jf->job->taskConfig->__isset_constraints);
}
END_TEST

static const struct
{
  const gchar *extra;
  const gchar *message;
} bad_placement[] = {
  { "\"constraints\": {\"host\": \"limit:0\"},", "constraints.host: \"limit:0\": a limit" },
  { "\"constraints\": {\"host\": \"limit:x\"},", "constraints.host: \"limit:x\"" },
  { "\"constraints\": {\"zone\": \"a,,b\"},", "no empty value" },
  { "\"constraints\": {\"zone\": 3},", "constraints.zone: expected a string" },
  { "\"constraints\": [\"host\"],", "constraints" },
  { "\"container\": {\"docker\": {}},", "container.docker" },
  { "\"container\": {\"mesos\": {}},", "Mesos containers are not supported" },
  { "\"container\": {\"docker\": {\"image\": \"x\", \"imag\": 1}},", "imag" },
  { "\"container\": {\"docker\": {\"image\": \"x\", \"parameters\": [{\"name\": \"a\"}]}},",
    "container.docker.parameters[0]" },
};

/* Every bad placement key is a clear error naming where it is. */
START_TEST (job_file_refuses_bad_placement)
{
  g_autoptr (GError) error = NULL;
  g_autofree gchar *text = job_text (bad_placement[_i].extra);
  g_autoptr (StgJobFile) jf = stg_job_file_parse ("web.json", text, -1, NULL, &error);

  ck_assert_msg (jf == NULL, "accepted %s", bad_placement[_i].extra);
  ck_assert_msg (strstr (error->message, bad_placement[_i].message) != NULL, "%s: got \"%s\"",
                 bad_placement[_i].extra, error->message);
}
END_TEST

/* `stagger job inspect` prints them. */
START_TEST (job_inspect_shows_container_and_constraints)
{
  g_autoptr (GError) error = NULL;
  g_autofree gchar *dir = stg_test_tmpdir ();
  g_autofree gchar *path = g_build_filename (dir, "web.json", NULL);
  g_autofree gchar *text = job_text ("\"container\": {\"docker\": {\"image\": \"localhost/web:2\"}}, "
                                     "\"constraints\": {\"host\": \"limit:1\"},");
  g_autofree gchar *stagger = stg_test_program ("stagger");
  g_autofree gchar *out = NULL;

  ck_assert (g_file_set_contents (path, text, -1, &error));
  g_autoptr (GSubprocess) p = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error, stagger,
                                                "job", "inspect", path, NULL);
  ck_assert (p != NULL && g_subprocess_communicate_utf8 (p, NULL, NULL, &out, NULL, &error));
  ck_assert_int_eq (g_subprocess_get_exit_status (p), 0);
  g_autoptr (JsonNode) root = stg_test_parse_json (out);
  JsonObject *task = json_object_get_object_member (
    json_object_get_object_member (json_node_get_object (root), "job"), "taskConfig");
  ck_assert_msg (json_object_has_member (task, "container") && json_object_has_member (task, "constraints"),
                 "%s", out);
  JsonObject *docker = json_object_get_object_member (json_object_get_object_member (task, "container"),
                                                      "docker");
  ck_assert_str_eq (json_object_get_string_member (docker, "image"), "localhost/web:2");
  ck_assert_msg (strstr (out, "\"limit\"") != NULL && strstr (out, "\"host\"") != NULL, "%s", out);
  stg_test_rmtree (dir);
}
END_TEST

static Suite *
fleet_suite (void)
{
  Suite *s = suite_create ("fleet");
  TCase *tc = tcase_create ("jobfile");

  tcase_add_test (tc, job_file_reads_container_and_constraints);
  tcase_add_test (tc, job_file_without_placement_sets_nothing);
  tcase_add_loop_test (tc, job_file_refuses_bad_placement, 0, G_N_ELEMENTS (bad_placement));
  tcase_add_test (tc, job_inspect_shows_container_and_constraints);
  suite_add_tcase (s, tc);

  tc = tcase_create ("podman");

  tcase_set_timeout (tc, 180);
  tcase_add_test (tc, podman_hosts_run_local_images);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  gchar *scope = stg_test_scope_begin ();
  SRunner *sr = srunner_create (fleet_suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  stg_test_podman_purge (scope);
  stg_test_scope_end (scope);
  return failed == 0 ? 0 : 1;
}
