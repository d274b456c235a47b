/* fleet_sidecar_test.c: pods and sidecar sets with staggerd --runtime=fleet
 * against three real podman services (tests/podman_hosts.c). The job is
 * three instances of busybox httpd, each a pod with an Envoy-like proxy
 * sidecar (stg-test-proxy, tests/sidecar_proxy.c, in the test image)
 * that relays its socket-activated port to the application over the pod's
 * namespace. While a client keeps sending requests through every proxy:
 * a hot upgrade of the set drops none and never restarts an application
 * container; a new version that fails leaves the old one serving and the
 * update rolls back; a kill -9 of staggerd mid-upgrade is adopted with no
 * container left behind or doubled. The web UI's page of the set says the
 * same, and applies the new image in Chromium (tests/browser/
 * sidecar_page.mjs); its routes check their input on a runtime without
 * pods. Host ports come from 17300-17699 (no other suite uses them:
 * suites run at once).
 * Test process: main thread, and the client's thread.
 */
#include "config.h"

#include <check.h>
#include <string.h>

#include "browser_env.h"
#include "common/enums.h"
#include "fleet_fixture.h"

#define IMAGE_V1 "localhost/stagger-test:1"
#define IMAGE_V2 "localhost/stagger-test:2"
#define PORTS "--port-range=17300-17699"
#define INSTANCES 3
#define WAIT_MS (300 * 1000)

typedef StgFleetEnv Env;

/* Three podman hosts with both images (stg-test-proxy in each), and a
 * config file naming them. */
static Env *
env_new (void)
{
  g_autofree gchar *proxy = g_build_filename (STG_BUILDDIR, "tests", "stg-test-proxy", NULL);
  const gchar *programs[] = { proxy, NULL };

  return stg_fleet_env_new (3, programs);
}

static StgTestDaemon *
daemon_start (Env *e)
{
  g_autofree gchar *config = g_strconcat ("--config=", e->conf, NULL);
  g_autofree gchar *anchor = g_strconcat ("--anchor=", STG_BUILDDIR, "/stagger-anchor", NULL);

  return stg_test_daemon_start (e->data_dir, "--runtime=fleet", config, PORTS, anchor, NULL);
}

/* ---- the job and the sidecar set ----------------------------------------------------- */

/* www/prod/web: busybox httpd on port http, one instance a host, on the
 * host's network (the pod's anchor has it, and its containers join). */
static void
create_web_job (StgTestDaemon *d)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  const gchar *data =
      "{\"argv\": [\"httpd\", \"-f\", \"-p\", \"{{ports[http]}}\", \"-h\", \"/www\"],"
      " \"stop_timeout_secs\": 2,"
      " \"health_check\": {\"http\": {\"endpoint\": \"/health\"}, \"timeout_secs\": 5,"
      " \"initial_interval_secs\": 10, \"interval_secs\": 0.5}}";
  g_autoptr (ApiJobConfiguration) job = stg_test_job_full ("www", "prod", "web", INSTANCES, data,
                                                           "http");
  ApiTaskConfig *task = job->taskConfig;
  g_autoptr (ApiDockerParameter) net = g_object_new (API_TYPE_DOCKER_PARAMETER, "name", "network",
                                                     "value", "host", NULL);
  g_autoptr (ApiDockerContainer) docker = g_object_new (API_TYPE_DOCKER_CONTAINER, "image",
                                                        IMAGE_V1, NULL);
  g_ptr_array_add (docker->parameters, g_object_ref (net));
  docker->__isset_parameters = TRUE;
  g_autoptr (ApiContainer) box = g_object_new (API_TYPE_CONTAINER, "docker", docker, NULL);
  g_object_set (task, "container", box, NULL);
  g_autoptr (ApiLimitConstraint) limit = g_object_new (API_TYPE_LIMIT_CONSTRAINT, "limit", 1, NULL);
  g_autoptr (ApiTaskConstraint) tc = g_object_new (API_TYPE_TASK_CONSTRAINT, "limit", limit, NULL);
  g_hash_table_add (task->constraints,
                    g_object_new (API_TYPE_CONSTRAINT, "name", "host", "constraint", tc, NULL));
  task->__isset_constraints = TRUE;
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (GError) error = NULL;

  ck_assert (
      api_aurora_scheduler_manager_if_create_job (API_AURORA_SCHEDULER_MANAGER_IF (c->client), &r,
                                                  job, &error));
  ck_assert_msg (r->responseCode == API_RESPONSE_CODE_OK, "createJob: %s", stg_fleet_detail (r));
}

/* The proxy's executor data: stg-test-proxy relays its socket-activated
 * port "proxy" (and its probe port) to the application's port http;
 * @command replaces its command when given, @hooks is more members. */
static gchar *
proxy_data (const gchar *command, const gchar *hooks)
{
  return g_strdup_printf (
      "{\"command\": \"%s\", \"hot_upgrade\": true, \"stop_timeout_secs\": 5,"
      " \"health_check\": {\"http\": {\"endpoint\": \"/health\"},"
      " \"timeout_secs\": 5, \"initial_interval_secs\": 5, \"interval_secs\": 0.5}%s}",
      command ? command : "stg-test-proxy $PORT_HTTP", hooks ? hooks : "");
}

/* applySidecarSet of "proxy" (selecting www/prod/web): @image running
 * @data, one instance at a time, @max_failures failed starts each. */
static void
apply_proxy (StgTestDaemon *d, const gchar *image, const gchar *data, gint max_failures)
{
  g_autoptr (ApiSidecar) sc = g_object_new (API_TYPE_SIDECAR, "image", image, "executorData", data,
                                            "socketActivation", TRUE, NULL);

  g_ptr_array_add (sc->ports, g_strdup ("proxy"));
  g_autoptr (ApiResponse) r = stg_fleet_apply_proxy (d, "web", sc, max_failures);
  ck_assert_msg (r->responseCode == API_RESPONSE_CODE_OK, "applySidecarSet: %s",
                 stg_fleet_detail (r));
}

static ApiSidecarSetDetails *
set_details (StgTestDaemon *d)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);

  ck_assert (api_stagger_scheduler_if_get_sidecar_set_details (c->client, &r, "proxy", NULL));
  ck_assert_msg (r->responseCode == API_RESPONSE_CODE_OK, "getSidecarSetDetails: %s",
                 stg_fleet_detail (r));
  return g_object_ref (r->result->getSidecarSetDetailsResult->details);
}

/* The events of the job's instances and of the set, on stderr: what a
 * failed wait saw. */
static void
print_events (StgTestDaemon *d)
{
  g_autoptr (ApiSidecarSetDetails) det = set_details (d);
  g_autofree gchar *tasks = stg_fleet_task_messages (d, NULL);

  g_printerr ("%s", tasks);
  for (guint i = 0; i < det->events->len; i++)
    g_printerr ("set: %s\n", ((ApiSidecarEvent *) det->events->pdata[i])->message);
}

typedef struct
{
  StgTestDaemon *d;
  gint status;  /* of the set's last update */
  gint version; /* every instance serves it, RUNNING */
  gchar *last;  /* what was seen last */
} SetWant;

static gboolean
set_reached (gpointer data)
{
  SetWant *w = data;
  g_autoptr (ApiSidecarSetDetails) det = set_details (w->d);
  ApiSidecarSetSummary *s = det->summary;
  gboolean ok = (gint) s->status == w->status && det->instances->len == INSTANCES;
  g_autoptr (GString) seen = g_string_new (NULL);

  g_string_printf (seen, "%s (%s), instances:", stg_update_status_name (s->status), s->reason);
  for (guint i = 0; i < det->instances->len; i++)
    {
      ApiSidecarInstance *in = det->instances->pdata[i];
      g_string_append_printf (seen, " %d:%d/%d %s %s", in->instance->instanceId, in->version,
                              in->wantVersion, stg_schedule_status_name (in->status), in->reason);
      ok = ok && in->version == w->version && in->status == API_SCHEDULE_STATUS_RUNNING;
    }
  g_free (w->last);
  w->last = g_string_free (g_steal_pointer (&seen), FALSE);
  if (!ok)
    g_usleep (200000);
  return ok;
}

/* Waits until the set's update is @status with every instance serving
 * @version. */
static void
wait_set (StgTestDaemon *d, gint status, gint version)
{
  SetWant w = { d, status, version, NULL };
  gboolean ok = stg_test_wait (set_reached, &w, WAIT_MS);

  if (!ok)
    print_events (d);
  ck_assert_msg (ok, "the set never got to %s with version %d everywhere: %s",
                 stg_update_status_name (status), version, w.last);
  g_free (w.last);
}

/* The port "proxy" of each instance of www/prod/web (guint16 in a GArray). */
static GArray *
proxy_ports (StgTestDaemon *d)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiTaskQuery) q = g_object_new (API_TYPE_TASK_QUERY, "role", "www", "jobName", "web",
                                             NULL);
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  GArray *out = g_array_new (FALSE, FALSE, sizeof (guint16));

  ck_assert (api_read_only_scheduler_if_get_tasks_status (API_READ_ONLY_SCHEDULER_IF (c->client),
                                                          &r, q, NULL));
  GPtrArray *tasks = r->result->scheduleStatusResult->tasks;
  for (guint i = 0; i < tasks->len; i++)
    {
      ApiScheduledTask *t = tasks->pdata[i];
      gint32 *port = g_hash_table_lookup (t->assignedTask->assignedPorts, "proxy");
      if (t->status != API_SCHEDULE_STATUS_RUNNING)
        continue;
      ck_assert_msg (port != NULL, "instance %d has no port proxy", t->assignedTask->instanceId);
      guint16 p = (guint16) *port;
      g_array_append_val (out, p);
    }
  ck_assert_uint_eq (out->len, INSTANCES);
  return out;
}

/* ---- the client ------------------------------------------------------------------------ */

typedef struct
{
  GArray *ports; /* guint16: each proxy's port */
  gint stop;     /* atomic */
  gint ok;       /* atomic: requests answered 200 */
  gint failed;   /* atomic */
  GMutex lock;
  gchar *first_failure;
  GThread *thread;
} Client;

/* GET /version through the proxy on @port, on a new connection. */
static gboolean
request (guint16 port, gchar **why)
{
  g_autoptr (GSocketClient) sc = g_socket_client_new ();
  g_autoptr (GError) error = NULL;

  g_socket_client_set_timeout (sc, 10);
  g_autoptr (GSocketConnection) conn = g_socket_client_connect_to_host (sc, "127.0.0.1", port, NULL,
                                                                        &error);
  if (conn == NULL)
    {
      *why = g_strdup_printf ("port %u: connect: %s", port, error->message);
      return FALSE;
    }
  static const gchar ask[] = "GET /version HTTP/1.0\r\n\r\n";
  GOutputStream *out = g_io_stream_get_output_stream (G_IO_STREAM (conn));
  GInputStream *in = g_io_stream_get_input_stream (G_IO_STREAM (conn));
  g_autoptr (GString) reply = g_string_new (NULL);
  gchar buf[4096];
  gssize n = 0;

  if (!g_output_stream_write_all (out, ask, sizeof ask - 1, NULL, NULL, &error))
    {
      *why = g_strdup_printf ("port %u: write: %s", port, error->message);
      return FALSE;
    }
  while ((n = g_input_stream_read (in, buf, sizeof buf, NULL, &error)) > 0)
    g_string_append_len (reply, buf, n);
  if (n < 0 || !g_str_has_prefix (reply->str, "HTTP/1.") || strstr (reply->str, " 200 ") == NULL)
    {
      *why = g_strdup_printf ("port %u: %s", port, n < 0 ? error->message : reply->str);
      return FALSE;
    }
  return TRUE;
}

static gpointer
client_run (gpointer data)
{
  Client *c = data;

  for (guint i = 0; !g_atomic_int_get (&c->stop); i++)
    {
      g_autofree gchar *why = NULL;
      if (request (g_array_index (c->ports, guint16, i % c->ports->len), &why))
        {
          g_atomic_int_inc (&c->ok);
          continue;
        }
      g_atomic_int_inc (&c->failed);
      g_mutex_lock (&c->lock);
      if (c->first_failure == NULL)
        c->first_failure = g_steal_pointer (&why);
      g_mutex_unlock (&c->lock);
    }
  return NULL;
}

/* Starts sending requests through every proxy, one after the other. */
static Client *
client_start (GArray *ports)
{
  Client *c = g_new0 (Client, 1);

  c->ports = g_array_ref (ports);
  g_mutex_init (&c->lock);
  c->thread = g_thread_new ("client", client_run, c);
  return c;
}

static gboolean
client_answered (gpointer data)
{
  Client *c = data;
  gboolean ok = g_atomic_int_get (&c->ok) >= 3 * INSTANCES;

  if (!ok)
    g_usleep (20000);
  return ok;
}

/* Stops the client; asserts no request failed, and that some went through
 * after @before (the count of answered requests when the change began). */
static void
client_finish (Client *c, gint before)
{
  g_atomic_int_set (&c->stop, 1);
  g_thread_join (c->thread);
  g_print ("%d requests through the proxies, %d of them during the change, %d failed\n",
           c->ok + c->failed, c->ok + c->failed - before, c->failed);
  ck_assert_msg (c->failed == 0, "%d of %d requests failed; the first: %s", c->failed,
                 c->failed + c->ok, c->first_failure);
  ck_assert_msg (c->ok > before, "no request went through during the change");
  g_array_unref (c->ports);
  g_mutex_clear (&c->lock);
  g_free (c->first_failure);
  g_free (c);
}

/* ---- what runs on the hosts ------------------------------------------------------------- */

static gint
compare_lines (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(const gchar *const *) a, *(const gchar *const *) b);
}

/* podman ps of every host: "HOST LINE" for each container of www/prod/web
 * with the role label @role, as @format shows it. */
static GPtrArray *
containers (Env *e, const gchar *role, const gchar *format)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);
  g_autofree gchar *label = g_strdup_printf ("label=org.stagger.role=%s", role);

  for (guint i = 0; i < e->fleet->hosts->len; i++)
    {
      StgTestPodmanHost *h = e->fleet->hosts->pdata[i];
      g_autofree gchar *ps = stg_test_podman_cli (e->fleet, h, "ps", "--all", "--no-trunc",
                                                  "--filter", "label=org.stagger.job=www/prod/web",
                                                  "--filter", label, "--format", format, NULL);
      g_auto (GStrv) lines = g_strsplit (ps, "\n", -1);
      for (guint j = 0; lines[j] != NULL; j++)
        if (lines[j][0] != '\0')
          g_ptr_array_add (out, g_strdup_printf ("%s %s", h->name, lines[j]));
    }
  g_ptr_array_sort (out, compare_lines);
  return out;
}

static gchar *
joined (GPtrArray *list)
{
  g_autoptr (GString) s = g_string_new (NULL);

  for (guint i = 0; i < list->len; i++)
    g_string_append_printf (s, "%s\n", (const gchar *) list->pdata[i]);
  return g_string_free (g_steal_pointer (&s), FALSE);
}

/* The application containers: "HOST ID", sorted; each running. */
static gchar *
main_containers (Env *e)
{
  g_autoptr (GPtrArray) list = containers (e, "main", "{{.ID}} {{.Status}}");

  for (guint i = 0; i < list->len; i++)
    {
      gchar *up = strstr (list->pdata[i], " Up ");
      ck_assert_msg (up != NULL, "not running: %s", (gchar *) list->pdata[i]);
      *up = '\0';
    }

  ck_assert_uint_eq (list->len, INSTANCES);
  return joined (list);
}

/* The proxy in container @id on @host took the pod's sockets as @version
 * (what it says when it starts). */
static void
assert_proxy_serves (Env *e, const gchar *host, const gchar *id, gint version)
{
  g_autofree gchar *said = g_strdup_printf ("stg-test-proxy: version %d serving 2 sockets",
                                            version);

  for (guint h = 0; h < e->fleet->hosts->len; h++)
    {
      StgTestPodmanHost *ph = e->fleet->hosts->pdata[h];
      if (!g_str_equal (ph->name, host))
        continue;
      /* Its log file: podman logs writes the container's stderr on its own. */
      g_autofree gchar *path = stg_test_podman_cli (e->fleet, ph, "inspect", "--format",
                                                    "{{.HostConfig.LogConfig.Path}}", id, NULL);
      g_autofree gchar *log = NULL;
      g_strstrip (path);
      ck_assert_msg (g_file_get_contents (path, &log, NULL, NULL), "no log file %s", path);
      ck_assert_msg (strstr (log, said) != NULL, "container %.12s on %s: \"%s\"", id, host, log);
      return;
    }
  ck_abort_msg ("no host %s", host);
}

/* Every pod has its anchor and exactly two proxy containers, both running:
 * slot 1 and 2, one on @version and one on the empty image (0). */
static void
assert_pods (Env *e, gint version)
{
  g_autoptr (GPtrArray) anchors = containers (e, "anchor", "{{.Status}}");
  g_autoptr (GPtrArray) proxies = containers (
      e, "sidecar",
      "{{index .Labels \"org.stagger.instance\"}} {{index .Labels \"org.stagger.sidecar-slot\"}} "
      "{{index .Labels \"org.stagger.sidecar-version\"}} {{.ID}} {{.Status}}");
  g_autofree gchar *text = joined (proxies);

  ck_assert_uint_eq (anchors->len, INSTANCES);
  for (guint i = 0; i < anchors->len; i++)
    ck_assert_msg (strstr (anchors->pdata[i], " Up ") != NULL, "%s", (gchar *) anchors->pdata[i]);
  ck_assert_msg (proxies->len == 2 * INSTANCES, "the proxies' containers:\n%s", text);
  for (guint i = 0; i < INSTANCES; i++)
    {
      gint seen_new = 0, seen_empty = 0, slots = 0;
      for (guint j = 0; j < proxies->len; j++)
        {
          g_auto (GStrv) f = g_strsplit (proxies->pdata[j], " ", 6);
          if (g_ascii_strtoll (f[1], NULL, 10) != (gint64) i)
            continue;
          ck_assert_msg (g_str_has_prefix (f[5], "Up "), "not running:\n%s", text);
          slots |= 1 << g_ascii_strtoll (f[2], NULL, 10);
          gint v = (gint) g_ascii_strtoll (f[3], NULL, 10);
          seen_new += v == version;
          seen_empty += v == 0;
          if (v == version)
            assert_proxy_serves (e, f[0], f[4], version);
        }
      ck_assert_msg (slots == 6 && seen_new == 1 && seen_empty == 1,
                     "instance %u has not version %d and the empty image in its two slots:\n%s", i,
                     version, text);
    }
}

/* What the scheduler says of each pod's slots agrees. */
static void
assert_slots (StgTestDaemon *d, gint version)
{
  g_autoptr (ApiSidecarSetDetails) det = set_details (d);

  ck_assert_uint_eq (det->instances->len, INSTANCES);
  for (guint i = 0; i < det->instances->len; i++)
    {
      ApiSidecarInstance *in = det->instances->pdata[i];
      ck_assert_uint_eq (in->slots->len, 2);
      ApiSidecarSlot *a = in->slots->pdata[0], *b = in->slots->pdata[1];
      ApiSidecarSlot *serving = a->serving ? a : b, *idle = a->serving ? b : a;
      ck_assert_msg (serving->serving && !idle->serving, "instance %d: one slot serves",
                     in->instance->instanceId);
      ck_assert_int_eq (serving->version, version);
      ck_assert_int_eq (idle->version, 0);
      ck_assert_str_ne (idle->containerId, "");
    }
}

/* A pod of each instance, serving version 1 of the proxy, and a client
 * answered through each. */
static StgTestDaemon *
start_pods (Env *e, Client **client)
{
  StgTestDaemon *d = daemon_start (e);
  g_autofree gchar *v1 = proxy_data (NULL, NULL);

  apply_proxy (d, IMAGE_V1, v1, 1);
  create_web_job (d);
  wait_set (d, API_JOB_UPDATE_STATUS_ROLLED_FORWARD, 1);
  assert_pods (e, 1);
  g_autoptr (GArray) ports = proxy_ports (d);
  *client = client_start (ports);
  ck_assert_msg (stg_test_wait (client_answered, *client, 30000), "the proxies do not answer");
  return d;
}

/* The web UI's page of the set says the same: @status, each instance on
 * @version in one slot and the empty image in the other. */
static void
assert_webui (StgTestDaemon *d, const gchar *status, gint version)
{
  StgTestReply r = stg_test_http (d->http_port, "GET", "/ui/api/sidecar?name=proxy", NULL, NULL);

  ck_assert_msg (r.status == 200, "/ui/api/sidecar: %u %s", r.status, r.body);
  g_autoptr (JsonNode) n = stg_test_parse_json (r.body);
  JsonObject *o = json_node_get_object (n);
  ck_assert_str_eq (json_object_get_string_member (o, "status"), status);
  ck_assert_int_eq (json_object_get_int_member (o, "instances"), INSTANCES);
  JsonArray *instances = json_object_get_array_member (o, "members");
  ck_assert_uint_eq (json_array_get_length (instances), INSTANCES);
  for (guint i = 0; i < INSTANCES; i++)
    {
      JsonObject *in = json_array_get_object_element (instances, i);
      JsonArray *slots = json_object_get_array_member (in, "slots");
      gint serving = 0, empty = 0;
      ck_assert_str_eq (json_object_get_string_member (in, "status"), "RUNNING");
      for (guint k = 0; k < json_array_get_length (slots); k++)
        {
          JsonObject *sl = json_array_get_object_element (slots, k);
          gint64 v = json_object_get_int_member (sl, "version");
          serving += json_object_get_boolean_member (sl, "serving") && v == version;
          empty += !json_object_get_boolean_member (sl, "serving") && v == 0;
        }
      ck_assert_msg (serving == 1 && empty == 1, "instance %u: %s", i, r.body);
    }
  stg_test_reply_clear (&r);
}

/* The end of each case: the client stopped (no request failed, some went
 * through during the change), every pod on @version with the empty image
 * beside it (also on the web UI's page of the set, ROLLED_FORWARD to 2 or
 * ROLLED_BACK to 1), the application containers those of @apps, staggerd
 * stopped and the hosts removed. */
static void
finish_case (Env *e, StgTestDaemon *d, Client *client, gint before, const gchar *apps, gint version)
{
  client_finish (client, before);
  assert_pods (e, version);
  assert_slots (d, version);
  assert_webui (d, version == 2 ? "ROLLED_FORWARD" : "ROLLED_BACK", version);
  g_autofree gchar *apps_after = main_containers (e);
  ck_assert_str_eq (apps, apps_after);
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
  stg_fleet_env_free (e);
}

/* The headers of a web UI control: a new session's cookie and token. */
static gchar *
web_headers (StgTestDaemon *d)
{
  g_autofree gchar *cookie = NULL, *token = NULL;

  stg_test_web_session (d->http_port, &cookie, &token);
  ck_assert (cookie != NULL && token != NULL && strchr (cookie, ';') != NULL);
  *strchr (cookie, ';') = '\0';
  return g_strdup_printf ("Cookie: %s\r\nX-Stagger-CSRF: %s\r\nContent-Type: application/json\r\n",
                          cookie, token);
}

/* POST /ui/api/sidecar/@path with @headers and @body: its status. */
static guint
web_control (StgTestDaemon *d, const gchar *path, const gchar *headers, const gchar *body)
{
  g_autofree gchar *full = g_strconcat ("/ui/api/sidecar/", path, NULL);

  return stg_test_web_control (d->http_port, full, headers, body);
}

/* The status of the set's last update, as its web page reads it. */
static gboolean
web_status_is (StgTestDaemon *d, const gchar *status)
{
  StgTestReply r = stg_test_http (d->http_port, "GET", "/ui/api/sidecar?name=proxy", NULL, NULL);
  g_autoptr (JsonNode) n = r.status == 200 ? stg_test_parse_json (r.body) : NULL;
  gboolean is = n != NULL &&
                g_strcmp0 (json_object_get_string_member (json_node_get_object (n), "status"),
                           status) == 0;

  stg_test_reply_clear (&r);
  return is;
}

typedef struct
{
  StgTestDaemon *d;
  const gchar *status;
} WebWant;

static gboolean
web_reached (gpointer data)
{
  WebWant *w = data;
  gboolean ok = web_status_is (w->d, w->status);

  if (!ok)
    g_usleep (100000);
  return ok;
}

/* The new version's image applied from the set's web page, in Chromium
 * (tests/browser/sidecar_page.mjs): from the list of sets to the set's
 * page, the image new pods get now offered, @image typed over it, Apply;
 * no console error, page error or failed request on the way. The rest of
 * the sidecar stays as version 1 has it. */
static void
apply_from_page (StgTestDaemon *d, const gchar *image)
{
  static const gchar *const scripts[] = { "sidecar_page.mjs", NULL };
  g_autofree gchar *env_dir = stg_browser_env_prepare ("browser-env-sidecar", scripts);
  g_autofree gchar *base = g_strdup_printf ("http://127.0.0.1:%u", d->http_port);
  g_autofree gchar *shots = g_build_filename (STG_BUILDDIR, "tests", "browser-shots", "sidecar",
                                              NULL);
  g_autofree gchar *last = NULL, *output = NULL;
  gint status = stg_browser_env_run (env_dir, &last, &output, "sidecar_page.mjs", base, "proxy",
                                     image, shots, NULL);

  ck_assert_msg (status == 0, "the set's page: %s", output);
  g_autoptr (JsonNode) n = stg_test_parse_json (last);
  JsonObject *o = json_node_get_object (n);
  ck_assert_str_eq (json_object_get_string_member (o, "list_heading"), "Sidecar sets");
  ck_assert_str_eq (json_object_get_string_member (o, "heading"), "Sidecar set proxy");
  const gchar *facts = json_object_get_string_member (o, "facts");
  ck_assert_msg (strstr (facts, "3 of 3 instances run v1") != NULL, "the set's facts: %s", facts);
  ck_assert_str_eq (json_object_get_string_member (o, "offered_image"), IMAGE_V1);
  /* What the viewer types survives a live re-render, and the page does not
   * take the viewer back into the form once left. */
  JsonObject *kept = json_object_get_object_member (o, "kept");
  ck_assert_str_eq (json_object_get_string_member (kept, "focus"), "sidecar-message");
  ck_assert_str_eq (json_object_get_string_member (kept, "image"), image);
  ck_assert_str_eq (json_object_get_string_member (kept, "message"), "new image from the page");
  ck_assert_str_eq (json_object_get_string_member (o, "focus_after_leaving"), "none");
  ck_assert_str_eq (json_object_get_string_member (o, "move"), "v1 → v2");
}

/* ---- the cases -------------------------------------------------------------------------- */

/* #30 "Done means" 1: the hot upgrade of the proxy across the three pods
 * (its new image applied from the set's web page) drops no request and
 * leaves the application containers alone. */
START_TEST (hot_upgrade_drops_no_request)
{
  Env *e = env_new ();
  Client *client = NULL;
  StgTestDaemon *d = start_pods (e, &client);
  g_autofree gchar *apps = main_containers (e);
  gint before = g_atomic_int_get (&client->ok);

  apply_from_page (d, IMAGE_V2);
  wait_set (d, API_JOB_UPDATE_STATUS_ROLLED_FORWARD, 2);
  finish_case (e, d, client, before, apps, 2);
}
END_TEST

/* #30 "Done means" 2: a new version that cannot start leaves the old one
 * serving, and the update rolls back. */
START_TEST (failing_version_rolls_back)
{
  Env *e = env_new ();
  Client *client = NULL;
  StgTestDaemon *d = start_pods (e, &client);
  g_autofree gchar *apps = main_containers (e);
  /* No upstream port: it says how to use it and exits. */
  g_autofree gchar *bad = proxy_data ("stg-test-proxy", NULL);
  gint before = g_atomic_int_get (&client->ok);

  apply_proxy (d, IMAGE_V2, bad, 1);
  wait_set (d, API_JOB_UPDATE_STATUS_ROLLED_BACK, 1);
  finish_case (e, d, client, before, apps, 1);
}
END_TEST

static gboolean
taking_over (gpointer data)
{
  StgTestDaemon *d = data;
  g_autoptr (ApiSidecarSetDetails) det = set_details (d);
  gboolean ok = FALSE;

  for (guint i = 0; i < det->instances->len && !ok; i++)
    {
      ApiSidecarInstance *in = det->instances->pdata[i];
      for (guint k = 0; k < in->slots->len && !ok; k++)
        {
          ApiSidecarSlot *s = in->slots->pdata[k];
          ok = s->version == 2 && !s->serving && s->containerId[0] != '\0';
        }
    }
  if (!ok)
    g_usleep (100000);
  return ok;
}

/* Lets the migration hooks of every pod return: the file they wait for,
 * on each pod's shared volume. */
static void
release_hooks (Env *e)
{
  g_autoptr (GPtrArray) apps = containers (e, "main", "{{.ID}}");

  for (guint i = 0; i < apps->len; i++)
    {
      g_auto (GStrv) f = g_strsplit (apps->pdata[i], " ", 2);
      StgTestPodmanHost *host = NULL;
      for (guint h = 0; h < e->fleet->hosts->len; h++)
        if (g_str_equal (((StgTestPodmanHost *) e->fleet->hosts->pdata[h])->name, f[0]))
          host = e->fleet->hosts->pdata[h];
      ck_assert (host != NULL);
      g_free (stg_test_podman_cli (e->fleet, host, "exec", f[1], "sh", "-c",
                                   "echo go > /.stagger/go", NULL));
    }
}

/* #30 "Done means" 2: staggerd killed while a new version is taking over
 * (its migration hook waits); the next staggerd adopts every container,
 * none left behind, none doubled, and the upgrade ends as it should. */
START_TEST (kill9_mid_upgrade_is_adopted)
{
  Env *e = env_new ();
  Client *client = NULL;
  StgTestDaemon *d = start_pods (e, &client);
  g_autofree gchar *apps = main_containers (e);
  g_autofree gchar *v2 =
      proxy_data (NULL,
                  ", \"hooks\": {\"post_update\": {\"command\":"
                  " \"while [ ! -f /.stagger/go ]; do sleep 0.2; done\", \"timeout_secs\": 600}}");
  gint before = g_atomic_int_get (&client->ok);

  apply_proxy (d, IMAGE_V2, v2, 1);
  ck_assert_msg (stg_test_wait (taking_over, d, WAIT_MS), "no instance started version 2");
  stg_test_daemon_kill9 (d);
  stg_test_daemon_free (d);

  d = daemon_start (e);
  ck_assert (stg_test_wait (taking_over, d, WAIT_MS));
  /* The set's page pauses and resumes the update it follows. */
  g_autofree gchar *hdr = web_headers (d);
  ck_assert_uint_eq (web_control (d, "proxy/pause", hdr, "{\"message\": \"a look\"}"), 200);
  WebWant paused = { d, "ROLL_FORWARD_PAUSED" };
  ck_assert_msg (stg_test_wait (web_reached, &paused, WAIT_MS), "the web's pause did not hold");
  ck_assert_uint_eq (web_control (d, "proxy/pause", hdr, NULL), 409);
  ck_assert_uint_eq (web_control (d, "proxy/resume", hdr, "{}"), 200);
  WebWant resumed = { d, "ROLLING_FORWARD" };
  ck_assert_msg (stg_test_wait (web_reached, &resumed, WAIT_MS), "the web's resume did not go on");
  release_hooks (e);
  wait_set (d, API_JOB_UPDATE_STATUS_ROLLED_FORWARD, 2);
  finish_case (e, d, client, before, apps, 2);
}
END_TEST

/* The sidecar set routes on a runtime without pods: no sets, an unknown
 * set is not found, a missing name is a bad request, and the controls
 * refuse what they should. */
START_TEST (sidecar_routes_check_their_input)
{
  g_autofree gchar *dir = stg_test_tmpdir ();
  StgTestDaemon *d = stg_test_daemon_start (dir, "--runtime=simulated", NULL);
  static const struct
  {
    const gchar *path;
    guint status;
  } cases[] = {
    { "/ui/api/sidecars", 200 },
    { "/ui/api/sidecar?name=proxy", 404 },
    { "/ui/api/sidecar", 400 },
    { "/ui/api/sidecar?name=", 400 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      StgTestReply r = stg_test_http (d->http_port, "GET", cases[i].path, NULL, NULL);
      ck_assert_msg (r.status == cases[i].status, "%s: %u, not %u: %s", cases[i].path, r.status,
                     cases[i].status, r.body);
      stg_test_reply_clear (&r);
    }
  StgTestReply list = stg_test_http (d->http_port, "GET", "/ui/api/sidecars", NULL, NULL);
  g_autoptr (JsonNode) n = stg_test_parse_json (list.body);
  JsonArray *sets = json_object_get_array_member (json_node_get_object (n), "sets");
  ck_assert (sets != NULL);
  ck_assert_uint_eq (json_array_get_length (sets), 0);
  stg_test_reply_clear (&list);
  /* Its controls: POST only, with the session's token, a set and an
   * action that exist, a body of strings. */
  StgTestReply get = stg_test_http (d->http_port, "GET", "/ui/api/sidecar/proxy/pause", NULL, NULL);
  ck_assert_uint_eq (get.status, 405);
  stg_test_reply_clear (&get);
  ck_assert_uint_eq (web_control (d, "proxy/pause", NULL, NULL), 403);
  g_autofree gchar *hdr = web_headers (d);
  ck_assert_uint_eq (web_control (d, "proxy/pause", hdr, NULL), 404);
  ck_assert_uint_eq (web_control (d, "proxy/explode", hdr, NULL), 404);
  ck_assert_uint_eq (web_control (d, "proxy/pause/more", hdr, NULL), 404);
  ck_assert_uint_eq (web_control (d, "pause", hdr, NULL), 404);
  ck_assert_uint_eq (web_control (d, "proxy/pause", hdr, "not json"), 400);
  ck_assert_uint_eq (web_control (d, "proxy/pause", hdr, "{\"message\": 7}"), 400);
  /* A new version from the page: an image or executor data to apply, of
   * a set that exists. */
  ck_assert_uint_eq (web_control (d, "proxy/apply", hdr, "{}"), 400);
  ck_assert_uint_eq (web_control (d, "proxy/apply", hdr, "{\"image\": 2}"), 400);
  ck_assert_uint_eq (web_control (d, "proxy/apply", hdr, "{\"image\": \"x:1\"}"), 404);
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
  stg_test_rmtree (dir);
}
END_TEST

static Suite *
fleet_sidecar_suite (void)
{
  Suite *s = suite_create ("fleet_sidecar");
  TCase *tc = tcase_create ("hot upgrade");

  tcase_set_timeout (tc, 900);
  tcase_add_test (tc, hot_upgrade_drops_no_request);
  suite_add_tcase (s, tc);

  tc = tcase_create ("rollback");
  tcase_set_timeout (tc, 900);
  tcase_add_test (tc, failing_version_rolls_back);
  suite_add_tcase (s, tc);

  tc = tcase_create ("web ui");
  tcase_add_test (tc, sidecar_routes_check_their_input);
  suite_add_tcase (s, tc);

  tc = tcase_create ("adoption");
  tcase_set_timeout (tc, 900);
  tcase_add_test (tc, kill9_mid_upgrade_is_adopted);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return stg_test_podman_main (fleet_sidecar_suite ());
}
