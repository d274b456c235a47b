/* fleet_test.c: the fleet runtime's suite, against real podman services
 * (tests/podman_hosts.c) standing in for container hosts. Host ports handed
 * to containers come from 16000-16999. Test process, main thread. */
#include "config.h"

#include <check.h>
#include <gio/gunixsocketaddress.h>
#include <string.h>

#include "cli/jobfile.h"
#include "podman_hosts.h"
#include "runtime/fleet/docker.h"
#include "runtime/fleet/fleet.h"
#include "runtime/place.h"
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
                                              "127.0.0.1:16000", "-h", "/www", NULL);
  ck_assert_uint_gt (strlen (id), 12);
  ck_assert_msg (stg_test_wait_http_body (16000, "/version", "1", 120000),
                 "the container never served version 1 on 16000");
  g_autofree gchar *ps0 = stg_test_podman_cli (fleet, h0, "ps", "--quiet", NULL);
  g_autofree gchar *ps1 = stg_test_podman_cli (fleet, h1, "ps", "--all", "--quiet", NULL);
  ck_assert_msg (g_str_has_prefix (id, g_strstrip (ps0)), "host0 lists %s, not %s", ps0, id);
  ck_assert_str_eq (g_strstrip (ps1), "");
  stg_test_podman_stop (fleet);
  ck_assert (!stg_test_port_open (16000));
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

/* ---- hosts and placement ------------------------------------------------------ */

static const gchar hosts_conf[] =
  "[staggerd]\nruntime = fleet\n"
  "[fleet]\nlost_after_secs = 5\npoll_interval_ms = 250\n"
  "[host b]\nendpoint = tcp://10.0.0.2:2376\nattributes = zone=z1; rack=r2\n"
  "tls_cert = /etc/c.pem\ntls_key = /etc/k.pem\ntls_ca = /etc/ca.pem\n"
  "[host a]\nendpoint = unix:///run/podman/podman.sock\naddress = 10.0.0.1\nattributes = zone=z1\n"
  "[host c]\nendpoint = unix:///var/run/docker.sock\nattributes = zone=z2\n";

static void
load_hosts (StgFleetOptions *o, const gchar *text)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autoptr (GError) error = NULL;

  stg_fleet_options_init (o);
  ck_assert (g_key_file_load_from_data (kf, text, -1, G_KEY_FILE_NONE, &error));
  ck_assert_msg (stg_fleet_options_load (o, kf, &error), "%s", error ? error->message : "");
}

/* [host NAME] groups become hosts in name order, with defaults. */
START_TEST (fleet_hosts_come_from_the_config_file)
{
  StgFleetOptions o;

  load_hosts (&o, hosts_conf);
  ck_assert_uint_eq (o.hosts->len, 3);
  const StgFleetHostConfig *a = o.hosts->pdata[0], *b = o.hosts->pdata[1], *c = o.hosts->pdata[2];
  ck_assert_str_eq (a->name, "a");
  ck_assert_str_eq (a->address, "10.0.0.1");
  ck_assert_str_eq (b->address, "10.0.0.2"); /* a tcp endpoint's host */
  ck_assert_str_eq (c->address, "127.0.0.1");
  ck_assert_str_eq (b->tls_ca, "/etc/ca.pem");
  ck_assert_str_eq (stg_fleet_host_attribute (b, "rack"), "r2");
  ck_assert_str_eq (stg_fleet_host_attribute (b, "host"), "b");
  ck_assert_uint_eq (o.lost_after_secs, 5);
  ck_assert_uint_eq (o.poll_ms, 250);
  ck_assert_uint_eq (o.call_timeout_secs, 30);
  stg_fleet_options_clear (&o);
}
END_TEST

static const struct
{
  const gchar *text;
  const gchar *message;
} bad_hosts[] = {
  { "[host a]\naddress = 1.2.3.4\n", "[host a] endpoint" },
  { "[host a]\nendpoint = http://x\n", "[host a] endpoint" },
  { "[host a]\nendpoint = unix:///s\nzone = z1\n", "unknown key 'zone' in [host a]" },
  { "[host a]\nendpoint = unix:///s\nattributes = zone\n", "not NAME=VALUE" },
  { "[host a]\nendpoint = unix:///s\nattributes = host=b\n", "\"host\" is the host's own name" },
  { "[host a/b]\nendpoint = unix:///s\n", "a host name has" },
  { "[fleet]\nlost_after_secs = 0\n", "[fleet] lost_after_secs" },
  { "[fleet]\ngrace = 3\n", "unknown key 'grace' in [fleet]" },
};

START_TEST (fleet_hosts_refuse_bad_config)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autoptr (GError) error = NULL;
  StgFleetOptions o;

  stg_fleet_options_init (&o);
  ck_assert (g_key_file_load_from_data (kf, bad_hosts[_i].text, -1, G_KEY_FILE_NONE, NULL));
  ck_assert_msg (!stg_fleet_options_load (&o, kf, &error), "accepted %s", bad_hosts[_i].text);
  ck_assert_msg (strstr (error->message, bad_hosts[_i].message) != NULL, "%s", error->message);
  stg_fleet_options_clear (&o);
}
END_TEST

/* A set of one constraint: @name limit:@limit, or a value set "a,b"
 * (leading "!" negates). */
static GHashTable *
one_constraint (const gchar *name, gint limit, const gchar *values)
{
  GHashTable *set = g_hash_table_new_full (g_direct_hash, g_direct_equal, g_object_unref, NULL);
  g_autoptr (ApiTaskConstraint) tc = NULL;

  if (values == NULL)
    {
      g_autoptr (ApiLimitConstraint) l = g_object_new (API_TYPE_LIMIT_CONSTRAINT, "limit", limit, NULL);
      tc = g_object_new (API_TYPE_TASK_CONSTRAINT, "limit", l, NULL);
    }
  else
    {
      g_autoptr (ApiValueConstraint) v = g_object_new (API_TYPE_VALUE_CONSTRAINT, "negated", values[0] == '!', NULL);
      g_auto (GStrv) parts = g_strsplit (values + (values[0] == '!'), ",", -1);
      for (guint i = 0; parts[i] != NULL; i++)
        g_hash_table_add (v->values, g_strdup (parts[i]));
      tc = g_object_new (API_TYPE_TASK_CONSTRAINT, "value", v, NULL);
    }
  g_hash_table_add (set, g_object_new (API_TYPE_CONSTRAINT, "name", name, "constraint", tc, NULL));
  return set;
}

/* Places @n instances one after another; returns the hosts' names joined. */
static gchar *
place_many (StgPlaceHost *hosts, guint n_hosts, GHashTable *constraints, guint n, gchar **why)
{
  g_autoptr (GArray) job = g_array_new (FALSE, FALSE, sizeof (gint));
  g_autoptr (GString) out = g_string_new (NULL);

  for (guint i = 0; i < n; i++)
    {
      gint h = stg_fleet_place (hosts, n_hosts, constraints, job, why);
      if (h < 0)
        {
          g_string_append (out, " -");
          break;
        }
      g_array_append_val (job, h);
      hosts[h].total++;
      g_string_append_printf (out, " %s", hosts[h].config->name);
    }
  return g_strdup (out->str + 1);
}

/* Fewest of the job, then fewest overall, then name; unavailable hosts
 * and failing constraints are skipped, and the message names them. */
START_TEST (fleet_placement_spreads_under_constraints)
{
  StgFleetOptions o;
  load_hosts (&o, hosts_conf);
  StgPlaceHost hosts[3];
  g_autofree gchar *why = NULL;

  for (guint i = 0; i < 3; i++)
    hosts[i] = (StgPlaceHost){ .config = o.hosts->pdata[i], .unavailable = NULL, .total = 0 };
  hosts[0].total = 5; /* a is busy with other jobs */
  g_autofree gchar *spread = place_many (hosts, 3, NULL, 4, NULL);
  ck_assert_str_eq (spread, "b c a b");

  for (guint i = 0; i < 3; i++)
    hosts[i].total = 0;
  g_autoptr (GHashTable) per_host = one_constraint ("host", 1, NULL);
  g_autofree gchar *limited = place_many (hosts, 3, per_host, 4, &why);
  ck_assert_str_eq (limited, "a b c -");
  ck_assert_msg (strstr (why, "a: limit host:1 reached") != NULL && strstr (why, "c: limit host:1") != NULL, "%s",
                 why);
  g_clear_pointer (&why, g_free);

  g_autoptr (GHashTable) per_zone = one_constraint ("zone", 2, NULL);
  g_autofree gchar *zones = place_many (hosts, 3, per_zone, 5, &why);
  ck_assert_str_eq (zones, "a b c c -"); /* z1 (a, b) is full after two */
  g_clear_pointer (&why, g_free);

  g_autoptr (GHashTable) only_z2 = one_constraint ("zone", 0, "z2");
  g_autofree gchar *z2 = place_many (hosts, 3, only_z2, 2, NULL);
  ck_assert_str_eq (z2, "c c");
  g_autoptr (GHashTable) not_z1 = one_constraint ("zone", 0, "!z1");
  g_autofree gchar *nz1 = place_many (hosts, 3, not_z1, 1, NULL);
  ck_assert_str_eq (nz1, "c");
  g_autoptr (GHashTable) rack = one_constraint ("rack", 0, "r2");
  hosts[1].unavailable = "draining";
  g_autofree gchar *none = place_many (hosts, 3, rack, 1, &why);
  ck_assert_str_eq (none, "-");
  ck_assert_msg (strstr (why, "a: rack in {r2} (the host has none)") != NULL, "%s", why);
  ck_assert_msg (strstr (why, "b: draining") != NULL, "%s", why);
  stg_fleet_options_clear (&o);
}
END_TEST

/* The host an instance is on, judged again under constraints that
 * tightened: a limit counts the job's other instances there, a value set
 * may leave the host out; the constraint comes back in short, with
 * Aurora's words beside it. */
START_TEST (fleet_placement_says_what_a_host_breaks)
{
  StgFleetOptions o;
  load_hosts (&o, hosts_conf);
  StgPlaceHost hosts[3];
  g_autoptr (GArray) others = g_array_new (FALSE, FALSE, sizeof (gint));
  const gint on_a = 0;

  for (guint i = 0; i < 3; i++)
    hosts[i] = (StgPlaceHost){ .config = o.hosts->pdata[i], .unavailable = NULL, .total = 3 };
  g_array_append_val (others, on_a);
  g_array_append_val (others, on_a);
  g_autoptr (GHashTable) three = one_constraint ("host", 3, NULL);
  ck_assert_ptr_null (stg_place_broken (hosts, 0, three, others, NULL));
  g_autoptr (GHashTable) two = one_constraint ("host", 2, NULL);
  g_autofree gchar *limit_aurora = NULL;
  g_autofree gchar *limit = stg_place_broken (hosts, 0, two, others, &limit_aurora);
  ck_assert_str_eq (limit, "limit:host=2");
  ck_assert_str_eq (limit_aurora, "Limit not satisfied: host");
  ck_assert_ptr_null (stg_place_broken (hosts, 1, two, others, NULL)); /* none on b */

  g_autoptr (GHashTable) z2 = one_constraint ("zone", 0, "z2");
  g_autofree gchar *zone_aurora = NULL;
  g_autofree gchar *zone = stg_place_broken (hosts, 0, z2, NULL, &zone_aurora);
  ck_assert_str_eq (zone, "zone in {z2}");
  ck_assert_str_eq (zone_aurora, "Constraint not satisfied: zone");
  g_autoptr (GHashTable) not_z1 = one_constraint ("zone", 0, "!z1");
  g_autofree gchar *not_zone = stg_place_broken (hosts, 1, not_z1, NULL, NULL);
  ck_assert_str_eq (not_zone, "zone not in {z1}");
  ck_assert_ptr_null (stg_place_broken (hosts, 2, not_z1, NULL, NULL));
  stg_fleet_options_clear (&o);
}
END_TEST

/* ---- what the fleet runtime accepts ------------------------------------------ */

static const struct
{
  const gchar *data;     /* executor data */
  const gchar *image;    /* NULL: no container */
  const gchar *param;    /* a docker parameter "name=value", or NULL */
  const gchar *message;  /* NULL: accepted */
} fleet_configs[] = {
  { "{\"command\": \"httpd -f -p {{ports[http]}}\"}", "localhost/web:1", "network=host", NULL },
  { "{\"command\": \"httpd -f\", \"hot_upgrade\": true}", "localhost/web:1", NULL,
    "hot_upgrade is refused for a task: its container is replaced whole; a program upgraded hot "
    "beside the task is a sidecar set's" },
  { "{\"command\": \"httpd -f\"}", NULL, NULL, "needs container.docker.image" },
  { "{\"command\": \"httpd -f\"}", "localhost/web:1", "privileged=true",
    "docker parameter \"privileged\" is not supported" },
  { "{\"command\": \"httpd -f\"}", "localhost/web:1", "label=org.stagger.job=x", "Stagger's own" },
  /* Hooks run in the container, through exec. */
  { "{\"command\": \"httpd -f\", \"hooks\": {\"pre_update\": {\"command\": \"true\"}}}",
    "localhost/web:1", NULL, NULL },
  { "{\"command\": \"httpd -f {{ports[nope]}}\"}", "localhost/web:1", NULL, "nope" },
};

/* validate() takes what the fleet can run and says why it refuses the rest. */
START_TEST (fleet_validate_says_what_it_cannot_run)
{
  StgFleetRuntimeOptions o = { .data_dir = (gchar *) "/nonexistent", .cluster = (gchar *) "local",
                               .port_min = 16900, .port_max = 16999 };
  g_autoptr (GError) error = NULL;

  load_hosts (&o.fleet, "[host a]\nendpoint = unix:///nonexistent/podman.sock\n");
  g_autoptr (StgRuntime) rt = stg_fleet_runtime_new (NULL, NULL, &o, &error);
  ck_assert_msg (rt != NULL, "%s", error ? error->message : "");
  g_autoptr (ApiJobConfiguration) job = stg_test_job_full ("www", "prod", "web", 1, fleet_configs[_i].data, "http");
  if (fleet_configs[_i].image != NULL)
    {
      g_autoptr (ApiDockerContainer) docker = g_object_new (API_TYPE_DOCKER_CONTAINER, "image",
                                                            fleet_configs[_i].image, NULL);
      if (fleet_configs[_i].param != NULL)
        {
          g_auto (GStrv) kv = g_strsplit (fleet_configs[_i].param, "=", 2);
          g_ptr_array_add (docker->parameters,
                           g_object_new (API_TYPE_DOCKER_PARAMETER, "name", kv[0], "value", kv[1], NULL));
          docker->__isset_parameters = TRUE;
        }
      g_autoptr (ApiContainer) box = g_object_new (API_TYPE_CONTAINER, "docker", docker, NULL);
      g_object_set (job->taskConfig, "container", box, NULL);
    }
  gboolean ok = stg_runtime_validate (rt, job->taskConfig, &error);
  if (fleet_configs[_i].message == NULL)
    ck_assert_msg (ok, "%s", error ? error->message : "");
  else
    {
      ck_assert_msg (!ok, "accepted %s", fleet_configs[_i].data);
      ck_assert_msg (strstr (error->message, fleet_configs[_i].message) != NULL, "%s", error->message);
    }
  stg_fleet_options_clear (&o.fleet);
}
END_TEST

/* An AuroraExecutor task in a container needs the runner's bundle, and
 * its JSON fits in one environment variable; bad data is refused by key,
 * and so is an announced task while staggerd announces in ZooKeeper. */
START_TEST (fleet_validate_aurora_tasks)
{
  g_autofree gchar *path = g_build_filename (STG_SRCDIR, "tests", "aurora",
                                             "ephemeral_daemon_with_final.json", NULL);
  g_autofree gchar *data = NULL;
  ck_assert (g_file_get_contents (path, &data, NULL, NULL));
  /* The same with a contact of 100 KiB. */
  g_autoptr (GString) big = g_string_new ("{\"contact\": \"");
  for (guint i = 0; i < 100 * 1024; i++)
    g_string_append_c (big, 'x');
  g_string_append_printf (big, "\", %s", data + 1);
  /* The same, announced (on a static port: no port to assign). */
  g_autofree gchar *announced = g_strdup_printf (
      "{\"announce\": {\"primary_port\": \"aurora\", \"portmap\": {\"aurora\": \"8080\"}}, %s",
      data + 1);
  const struct
  {
    const gchar *bundle;
    const gchar *data;
    gboolean announcing;
    const gchar *message; /* NULL: accepted */
  } cases[] = {
    { "/opt/bundle", data, FALSE, NULL },
    { NULL, data, FALSE, "thermos_bundle" },
    { "/opt/bundle", big->str, FALSE, "hands a task of at most" },
    { "/opt/bundle", "{\"name\": ", FALSE, "executorConfig.data: not valid JSON" },
    { "/opt/bundle", announced, FALSE, NULL },
    { "/opt/bundle", announced, TRUE, "does not announce containers in ZooKeeper yet" },
    { "/opt/bundle", data, TRUE, NULL },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      StgFleetRuntimeOptions o = { .data_dir = (gchar *) "/nonexistent",
                                   .cluster = (gchar *) "local",
                                   .port_min = 16900,
                                   .port_max = 16999,
                                   .thermos_bundle = (gchar *) cases[i].bundle,
                                   .announcing = cases[i].announcing };
      g_autoptr (GError) error = NULL;
      load_hosts (&o.fleet, "[host a]\nendpoint = unix:///nonexistent/podman.sock\n");
      g_autoptr (StgRuntime) rt = stg_fleet_runtime_new (NULL, NULL, &o, &error);
      ck_assert_msg (rt != NULL, "%s", error ? error->message : "");
      g_autoptr (ApiJobConfiguration) job = stg_test_job_full ("vagrant", "test", "e", 1,
                                                               cases[i].data, NULL);
      g_object_set (job->taskConfig->executorConfig, "name", "AuroraExecutor", NULL);
      g_autoptr (ApiDockerContainer) docker = g_object_new (API_TYPE_DOCKER_CONTAINER, "image",
                                                            "localhost/x:1", NULL);
      g_autoptr (ApiContainer) box = g_object_new (API_TYPE_CONTAINER, "docker", docker, NULL);
      g_object_set (job->taskConfig, "container", box, NULL);
      gboolean ok = stg_runtime_validate (rt, job->taskConfig, &error);
      if (cases[i].message == NULL)
        ck_assert_msg (ok, "case %u: %s", i, error ? error->message : "");
      else
        ck_assert_msg (!ok && strstr (error->message, cases[i].message) != NULL, "case %u: %s", i,
                       ok ? "accepted" : error->message);
      stg_fleet_options_clear (&o.fleet);
    }
}
END_TEST

/* Without hosts there is no fleet, and a bad endpoint names its host. */
START_TEST (fleet_runtime_needs_good_hosts)
{
  StgFleetRuntimeOptions o = { .data_dir = (gchar *) "/nonexistent", .cluster = (gchar *) "local" };
  g_autoptr (GError) error = NULL;

  stg_fleet_options_init (&o.fleet);
  g_autoptr (StgRuntime) none = stg_fleet_runtime_new (NULL, NULL, &o, &error);
  ck_assert (none == NULL && strstr (error->message, "[host NAME]") != NULL);
  g_clear_error (&error);
  stg_fleet_options_clear (&o.fleet);
  load_hosts (&o.fleet, "[host x]\nendpoint = tcp://h:1\ntls_cert = /nonexistent/c.pem\n");
  g_autoptr (StgRuntime) bad = stg_fleet_runtime_new (NULL, NULL, &o, &error);
  ck_assert (bad == NULL);
  ck_assert_msg (g_str_has_prefix (error->message, "host x: "), "%s", error->message);
  stg_fleet_options_clear (&o.fleet);
}
END_TEST

/* ---- the Docker Engine API client ------------------------------------------ */

static gboolean
result_arrived (gpointer data)
{
  return *(GAsyncResult **) data != NULL;
}

static void
keep_result (GObject *source G_GNUC_UNUSED, GAsyncResult *result, gpointer data)
{
  GAsyncResult **slot = data;

  ck_assert_msg (*slot == NULL, "a call called back twice");
  *slot = g_object_ref (result);
}

/* Runs the main loop until @slot holds a result (30 s at most). */
static GAsyncResult *
await_result (GAsyncResult **slot)
{
  ck_assert_msg (stg_test_wait (result_arrived, slot, 30000), "no answer from the engine in 30 s");
  return g_steal_pointer (slot);
}

static StgDocker *
docker_for (StgTestPodmanHost *host, guint timeout_secs)
{
  g_autoptr (GError) error = NULL;
  StgDocker *d = stg_docker_new (host->endpoint, NULL, timeout_secs, &error);

  ck_assert_msg (d != NULL, "%s", error ? error->message : "");
  return d;
}

static gboolean
docker_done (StgDocker *d, GAsyncResult **slot, GError **error)
{
  g_autoptr (GAsyncResult) r = await_result (slot);

  return stg_docker_finish (d, r, error);
}

static JsonNode *
docker_inspect (StgDocker *d, const gchar *id, GError **error)
{
  GAsyncResult *slot = NULL;

  stg_docker_inspect_async (d, id, NULL, keep_result, &slot);
  g_autoptr (GAsyncResult) r = await_result (&slot);
  return stg_docker_inspect_finish (d, r, error);
}

/* Labels of every container listed with @labels, joined by spaces. */
static gchar *
docker_list_names (StgDocker *d, const gchar *const *labels)
{
  g_autoptr (GError) error = NULL;
  GAsyncResult *slot = NULL;
  g_autoptr (GString) names = g_string_new (NULL);

  stg_docker_list_async (d, labels, NULL, keep_result, &slot);
  g_autoptr (GAsyncResult) r = await_result (&slot);
  g_autoptr (JsonNode) list = stg_docker_list_finish (d, r, &error);
  ck_assert_msg (list != NULL && JSON_NODE_HOLDS_ARRAY (list), "%s", error ? error->message : "not an array");
  JsonArray *a = json_node_get_array (list);
  for (guint i = 0; i < json_array_get_length (a); i++)
    {
      JsonObject *c = json_array_get_object_element (a, i);
      JsonObject *l = json_object_get_object_member (c, "Labels");
      g_string_append_printf (names, "%s%s", i ? " " : "", json_object_get_string_member (l, "test.name"));
    }
  return g_string_free (g_steal_pointer (&names), FALSE);
}

static gchar *
docker_create (StgDocker *d, const gchar *name, const gchar *image, guint16 port, GError **error)
{
  GAsyncResult *slot = NULL;
  g_autofree gchar *json = g_strdup_printf (
    "{\"Image\": \"%s\", \"Cmd\": [\"httpd\", \"-f\", \"-p\", \"127.0.0.1:%u\", \"-h\", \"/www\"], "
    "\"Labels\": {\"test.name\": \"%s\", \"test.kind\": \"web\"}, "
    "\"HostConfig\": {\"NetworkMode\": \"host\", \"Init\": true}}", image, port, name);
  g_autoptr (JsonNode) spec = json_from_string (json, NULL);

  stg_docker_create_async (d, name, spec, NULL, keep_result, &slot);
  g_autoptr (GAsyncResult) r = await_result (&slot);
  return stg_docker_create_finish (d, r, error);
}

static gint
docker_exec (StgDocker *d, const gchar *id, const gchar *const *argv, gchar **output)
{
  g_autoptr (GError) error = NULL;
  GAsyncResult *slot = NULL;
  gint code = -1;

  stg_docker_exec_async (d, id, argv, NULL, NULL, keep_result, &slot);
  g_autoptr (GAsyncResult) r = await_result (&slot);
  ck_assert_msg (stg_docker_exec_finish (d, r, &code, output, &error), "exec: %s", error ? error->message : "");
  return code;
}

static gboolean
json_running (JsonNode *inspect)
{
  JsonObject *state = json_object_get_object_member (json_node_get_object (inspect), "State");

  return json_object_get_boolean_member (state, "Running");
}

/* Create, start, inspect, list by label, exec, stop, remove: each against
 * a real engine, each answering through the main loop. */
START_TEST (docker_client_runs_a_container_through_its_life)
{
  StgTestPodman *fleet = stg_test_podman_start (1);
  g_autoptr (StgDocker) d = docker_for (fleet->hosts->pdata[0], 30);
  g_autoptr (GError) error = NULL;
  GAsyncResult *slot = NULL;

  stg_test_podman_import (fleet, "localhost/stagger-test:1", "1");
  stg_docker_ping_async (d, NULL, keep_result, &slot);
  g_autoptr (GAsyncResult) pinged = await_result (&slot);
  ck_assert_msg (stg_docker_ping_finish (d, pinged, &error), "%s", error ? error->message : "");

  g_autofree gchar *id = docker_create (d, "web-0", "localhost/stagger-test:1", 16010, &error);
  ck_assert_msg (id != NULL, "%s", error ? error->message : "");
  stg_docker_start_async (d, id, NULL, keep_result, &slot);
  ck_assert_msg (docker_done (d, &slot, &error), "%s", error ? error->message : "");
  ck_assert (stg_test_wait_http_body (16010, "/version", "1", 120000));
  g_autoptr (JsonNode) running = docker_inspect (d, id, &error);
  ck_assert (running != NULL && json_running (running));

  const gchar *mine[] = { "test.kind=web", "test.name=web-0", NULL };
  const gchar *other[] = { "test.kind=db", NULL };
  g_autofree gchar *listed = docker_list_names (d, mine);
  g_autofree gchar *none = docker_list_names (d, other);
  ck_assert_str_eq (listed, "web-0");
  ck_assert_str_eq (none, "");

  g_autofree gchar *out = NULL;
  const gchar *cat[] = { "cat", "/www/version", NULL };
  const gchar *fail[] = { "sh", "-c", "echo oops >&2; exit 3", NULL };
  ck_assert_int_eq (docker_exec (d, id, cat, &out), 0);
  ck_assert_str_eq (out, "1");
  g_clear_pointer (&out, g_free);
  ck_assert_int_eq (docker_exec (d, id, fail, &out), 3);
  ck_assert_str_eq (out, "oops\n");

  stg_docker_stop_async (d, id, 5, NULL, keep_result, &slot);
  ck_assert_msg (docker_done (d, &slot, &error), "%s", error ? error->message : "");
  g_autoptr (JsonNode) stopped = docker_inspect (d, id, &error);
  ck_assert (stopped != NULL && !json_running (stopped));
  ck_assert (!stg_test_port_open (16010));
  stg_docker_remove_async (d, id, NULL, keep_result, &slot);
  ck_assert_msg (docker_done (d, &slot, &error), "%s", error ? error->message : "");
  g_autoptr (JsonNode) gone = docker_inspect (d, id, &error);
  ck_assert (gone == NULL);
  ck_assert_msg (g_error_matches (error, STG_DOCKER_ERROR, STG_DOCKER_ERROR_NOT_FOUND), "%s", error->message);
  g_clear_error (&error);
  stg_docker_remove_async (d, id, NULL, keep_result, &slot); /* already gone: fine */
  ck_assert_msg (docker_done (d, &slot, &error), "%s", error ? error->message : "");
  stg_test_podman_stop (fleet);
}
END_TEST

/* The engine's own words reach the caller, with a code by kind. */
START_TEST (docker_client_passes_engine_errors_verbatim)
{
  StgTestPodman *fleet = stg_test_podman_start (1);
  StgTestPodmanHost *host = fleet->hosts->pdata[0];
  g_autoptr (StgDocker) d = docker_for (host, 30);
  g_autoptr (GError) error = NULL;

  stg_test_podman_import (fleet, "localhost/stagger-test:1", "1");
  g_autofree gchar *missing = docker_create (d, "web-x", "localhost/no-such-image:9", 16011, &error);
  ck_assert (missing == NULL);
  ck_assert_msg (strstr (error->message, "localhost/no-such-image:9") != NULL, "%s", error->message);
  ck_assert_msg (!g_str_has_prefix (error->message, "HTTP"), "%s", error->message);
  g_clear_error (&error);

  g_autofree gchar *first = docker_create (d, "web-1", "localhost/stagger-test:1", 16012, &error);
  ck_assert_msg (first != NULL, "%s", error ? error->message : "");
  g_autofree gchar *second = docker_create (d, "web-1", "localhost/stagger-test:1", 16012, &error);
  ck_assert (second == NULL);
  /* Docker answers 409 (CONFLICT), Podman 4.3 answers 500: the words count. */
  ck_assert_msg (strstr (error->message, "\"web-1\" is already in use") != NULL, "%s", error->message);
  g_clear_error (&error);

  g_autoptr (JsonNode) nothing = docker_inspect (d, "no-such-container", &error);
  ck_assert (nothing == NULL && g_error_matches (error, STG_DOCKER_ERROR, STG_DOCKER_ERROR_NOT_FOUND));
  ck_assert_msg (strstr (error->message, "no-such-container") != NULL, "%s", error->message);
  stg_test_podman_stop (fleet);
}
END_TEST

/* A listening engine that never answers: its calls time out as
 * UNREACHABLE while another engine's calls go on; a cancelled call calls
 * back once, cancelled; an endpoint that is not a socket is unreachable. */
START_TEST (docker_client_never_waits_on_a_dead_engine)
{
  StgTestPodman *fleet = stg_test_podman_start (1);
  g_autoptr (StgDocker) live = docker_for (fleet->hosts->pdata[0], 30);
  g_autoptr (GError) error = NULL;
  g_autofree gchar *stuck_path = g_build_filename (fleet->dir, "stuck.sock", NULL);
  g_autofree gchar *stuck_url = g_strconcat ("unix://", stuck_path, NULL);
  g_autoptr (GSocketAddress) addr = g_unix_socket_address_new (stuck_path);
  g_autoptr (GSocket) listener = g_socket_new (G_SOCKET_FAMILY_UNIX, G_SOCKET_TYPE_STREAM, 0, &error);

  ck_assert (listener != NULL && g_socket_bind (listener, addr, TRUE, &error) && g_socket_listen (listener, &error));
  g_autoptr (StgDocker) stuck = stg_docker_new (stuck_url, NULL, 2, &error);
  ck_assert_msg (stuck != NULL, "%s", error ? error->message : "");
  GAsyncResult *stuck_slot = NULL, *live_slot = NULL, *cancel_slot = NULL;
  gint64 t0 = g_get_monotonic_time ();
  stg_docker_ping_async (stuck, NULL, keep_result, &stuck_slot);
  stg_docker_ping_async (live, NULL, keep_result, &live_slot);
  g_autoptr (GAsyncResult) live_r = await_result (&live_slot);
  ck_assert (stuck_slot == NULL); /* the live engine answered first */
  ck_assert (stg_docker_ping_finish (live, live_r, NULL));
  g_autoptr (GAsyncResult) stuck_r = await_result (&stuck_slot);
  ck_assert (!stg_docker_ping_finish (stuck, stuck_r, &error));
  ck_assert_msg (g_error_matches (error, STG_DOCKER_ERROR, STG_DOCKER_ERROR_UNREACHABLE), "%s", error->message);
  ck_assert_msg (g_str_has_prefix (error->message, stuck_url), "%s", error->message);
  ck_assert_int_ge (g_get_monotonic_time () - t0, 1 * G_USEC_PER_SEC);
  g_clear_error (&error);

  g_autoptr (GCancellable) cancel = g_cancellable_new ();
  stg_docker_ping_async (stuck, cancel, keep_result, &cancel_slot);
  g_cancellable_cancel (cancel);
  g_autoptr (GAsyncResult) cancelled = await_result (&cancel_slot);
  ck_assert (!stg_docker_ping_finish (stuck, cancelled, &error));
  ck_assert (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED));
  g_clear_error (&error);

  g_autofree gchar *absent = g_strconcat ("unix://", fleet->dir, "/absent.sock", NULL);
  g_autoptr (StgDocker) nowhere = stg_docker_new (absent, NULL, 2, &error);
  stg_docker_ping_async (nowhere, NULL, keep_result, &cancel_slot);
  g_autoptr (GAsyncResult) refused = await_result (&cancel_slot);
  ck_assert (!stg_docker_ping_finish (nowhere, refused, &error));
  ck_assert_msg (g_error_matches (error, STG_DOCKER_ERROR, STG_DOCKER_ERROR_UNREACHABLE), "%s", error->message);
  stg_test_podman_stop (fleet);
}
END_TEST

/* An engine whose host drops every packet (here: a listener whose queue
 * is full, so the kernel drops new connections' first packets): a call
 * gives up connecting within the timeout, as UNREACHABLE, and leaves
 * nothing behind (under the sanitizers: GIO leaks a connection attempt
 * whose socket times out while connecting). */
/* A listening socket on the loopback whose accept queue is full when
 * @silent (the kernel drops the first packets of new connections), and
 * the sockets that fill it. */
typedef struct
{
  GSocket *listener;
  GSocket *queued[2];
  guint16 port;
} Listener;

static void
listener_open (Listener *l, gboolean silent)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GInetAddress) lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr (GSocketAddress) any = g_inet_socket_address_new (lo, 0);

  l->listener = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP,
                              &error);
  g_socket_set_listen_backlog (l->listener, silent ? 0 : 8);
  ck_assert (g_socket_bind (l->listener, any, TRUE, &error) &&
             g_socket_listen (l->listener, &error));
  g_autoptr (GSocketAddress) bound = g_socket_get_local_address (l->listener, &error);
  l->port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
  for (guint i = 0; silent && i < G_N_ELEMENTS (l->queued); i++)
    {
      l->queued[i] = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM,
                                   G_SOCKET_PROTOCOL_TCP, &error);
      g_socket_set_blocking (l->queued[i], FALSE);
      g_socket_connect (l->queued[i], bound, NULL, NULL); /* pending, or queued */
    }
}

static void
listener_close (Listener *l)
{
  for (guint i = 0; i < G_N_ELEMENTS (l->queued); i++)
    g_clear_object (&l->queued[i]);
  g_clear_object (&l->listener);
}

static gboolean
allow_all (gpointer data G_GNUC_UNUSED, const gchar *method G_GNUC_UNUSED,
           const gchar *path G_GNUC_UNUSED)
{
  return TRUE;
}

/* An engine whose host drops every packet: the connection attempt is
 * given up (and freed) before the session's timeout, with or without a
 * bound on sending (_i: 0 without, 1 with 100 ms; a bound set while
 * connecting would end the attempt by the kernel's timeout, which GIO
 * leaks). */
START_TEST (docker_client_gives_up_connecting_to_a_silent_engine)
{
  g_autoptr (GError) error = NULL;
  Listener l = { 0 };

  listener_open (&l, TRUE);
  g_autofree gchar *url = g_strdup_printf ("tcp://127.0.0.1:%u", l.port);
  g_autoptr (StgDocker) d = stg_docker_new (url, NULL, 3, &error);
  if (_i == 1)
    stg_docker_set_guard (d, allow_all, NULL, 100);
  GAsyncResult *slot = NULL;
  stg_docker_ping_async (d, NULL, keep_result, &slot);
  g_autoptr (GAsyncResult) r = await_result (&slot);
  ck_assert (!stg_docker_ping_finish (d, r, &error));
  ck_assert_msg (g_error_matches (error, STG_DOCKER_ERROR, STG_DOCKER_ERROR_UNREACHABLE), "%s",
                 error->message);
  ck_assert_msg (strstr (error->message, "no connection within 3 s") != NULL, "%s", error->message);
  listener_close (&l);
}
END_TEST

/* Says yes once, then no. */
static gboolean
allow_once (gpointer data, const gchar *method G_GNUC_UNUSED, const gchar *path G_GNUC_UNUSED)
{
  guint *asked = data;

  return (*asked)++ == 0;
}

/* A request the guard let go is asked about again just before it is
 * written (it may have waited for a connection): held back then, its
 * call fails as UNREACHABLE and the engine receives nothing. */
START_TEST (docker_client_asks_the_guard_again_before_writing)
{
  g_autoptr (GError) error = NULL;
  Listener l = { 0 };
  guint asked = 0;

  listener_open (&l, FALSE);
  g_autofree gchar *url = g_strdup_printf ("tcp://127.0.0.1:%u", l.port);
  g_autoptr (StgDocker) d = stg_docker_new (url, NULL, 3, &error);
  stg_docker_set_guard (d, allow_once, &asked, 0);
  GAsyncResult *slot = NULL;
  stg_docker_remove_async (d, "c1", NULL, keep_result, &slot);
  g_autoptr (GAsyncResult) r = await_result (&slot);
  ck_assert (!stg_docker_finish (d, r, &error));
  ck_assert_msg (g_error_matches (error, STG_DOCKER_ERROR, STG_DOCKER_ERROR_UNREACHABLE) &&
                     strstr (error->message, "not sent") != NULL,
                 "%s", error->message);
  ck_assert_uint_eq (asked, 2);
  g_socket_set_blocking (l.listener, FALSE);
  g_autoptr (GSocket) conn = g_socket_accept (l.listener, NULL, NULL);
  gchar buf[64];
  if (conn != NULL)
    {
      g_socket_set_blocking (conn, FALSE);
      ck_assert_int_le (g_socket_receive (conn, buf, sizeof buf, NULL, NULL), 0);
    }
  listener_close (&l);
}
END_TEST

static const struct
{
  const gchar *endpoint;
  StgDockerTls tls;
} bad_endpoints[] = {
  { "/run/podman/podman.sock", { NULL, NULL, NULL } },
  { "unix://relative.sock", { NULL, NULL, NULL } },
  { "tcp://", { NULL, NULL, NULL } },
  { "tcp://host:2376/path", { NULL, NULL, NULL } },
  { "http://host:2375", { NULL, NULL, NULL } },
  { "tcp://host:2376", { "/nonexistent/cert.pem", NULL, NULL } },
  { "tcp://host:2376", { "/nonexistent/cert.pem", "/nonexistent/key.pem", "/nonexistent/ca.pem" } },
};

/* A bad endpoint or TLS setting is refused up front, saying what is wrong. */
START_TEST (docker_client_refuses_bad_endpoints)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (StgDocker) d = stg_docker_new (bad_endpoints[_i].endpoint, &bad_endpoints[_i].tls, 5, &error);

  ck_assert_msg (d == NULL, "accepted %s", bad_endpoints[_i].endpoint);
  ck_assert_msg (strstr (error->message, bad_endpoints[_i].endpoint) != NULL ||
                 strstr (error->message, "nonexistent") != NULL, "%s", error->message);
}
END_TEST

/* The fleet slot's states, as fleet_private.h numbers and draws them:
 * IDLE, STARTING, HOOK, DEAD, STOPPING, STOPPING_DEAD. */
START_TEST (fleet_slot_state_table_is_as_drawn)
{
  static const gint allowed[6][7] = {
    [0] = { 0, 1, 2, 3, 4, -1 }, /* IDLE: start, hook, dead, stop */
    [1] = { 1, 0, -1 },          /* STARTING: settles */
    [2] = { 2, 0, -1 },          /* HOOK: settles */
    [3] = { 3, 5, 0, -1 },       /* DEAD: stop (dead), or lost */
    [4] = { 4, 0, -1 },          /* STOPPING: removed, settles, or lost */
    [5] = { 5, 3, 0, -1 },       /* STOPPING_DEAD: no answer (dead again), removed */
  };

  for (gint from = 0; from < 6; from++)
    for (gint to = 0; to < 6; to++)
      {
        gboolean want = FALSE;
        for (guint i = 0; allowed[from][i] != -1; i++)
          want |= allowed[from][i] == to;
        ck_assert_msg (stg_fleet_state_allowed (from, to) == want, "%d -> %d", from, to);
      }
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

  tc = tcase_create ("placement");
  tcase_add_test (tc, fleet_hosts_come_from_the_config_file);
  tcase_add_loop_test (tc, fleet_hosts_refuse_bad_config, 0, G_N_ELEMENTS (bad_hosts));
  tcase_add_test (tc, fleet_placement_spreads_under_constraints);
  tcase_add_test (tc, fleet_placement_says_what_a_host_breaks);
  tcase_add_loop_test (tc, fleet_validate_says_what_it_cannot_run, 0, G_N_ELEMENTS (fleet_configs));
  tcase_add_test (tc, fleet_validate_aurora_tasks);
  tcase_add_test (tc, fleet_runtime_needs_good_hosts);
  tcase_add_test (tc, fleet_slot_state_table_is_as_drawn);
  suite_add_tcase (s, tc);

  tc = tcase_create ("podman");

  tcase_set_timeout (tc, 180);
  tcase_add_test (tc, podman_hosts_run_local_images);
  suite_add_tcase (s, tc);

  tc = tcase_create ("docker");
  tcase_set_timeout (tc, 180);
  tcase_add_test (tc, docker_client_runs_a_container_through_its_life);
  tcase_add_test (tc, docker_client_passes_engine_errors_verbatim);
  tcase_add_test (tc, docker_client_never_waits_on_a_dead_engine);
  tcase_add_loop_test (tc, docker_client_gives_up_connecting_to_a_silent_engine, 0, 2);
  tcase_add_test (tc, docker_client_asks_the_guard_again_before_writing);
  tcase_add_loop_test (tc, docker_client_refuses_bad_endpoints, 0, G_N_ELEMENTS (bad_endpoints));
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return stg_test_podman_main (fleet_suite ());
}
