/* webui_test.c: integration tests of the web UI against a real staggerd:
 * pages and assets (types, ETags, 304, 404, methods), --webui-dir, the JSON
 * data (shapes, paging, bad queries), the update and rollout plan pages'
 * data and their CSRF-protected controls (a plan's roles all needed), the
 * Server-Sent Events feed and the update-change long poll. */
#include "config.h"

#include <check.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <stdio.h>

#include "common/jobkey.h"
#include "daemon_fixture.h"
#include "rollout.h"
#include "store/store.h"

static void
create_job (StgTestDaemon *d, const gchar *name, gint32 instances)
{
  stg_rollout_create_plain_job (d, "www", name, instances);
}

START_TEST (pages_and_assets)
{
  StgTestDaemon *d = dfx_start (NULL);

  StgTestReply page = stg_test_http (d->http_port, "GET", "/", NULL, NULL);
  ck_assert_uint_eq (page.status, 200);
  g_autofree gchar *type = stg_test_http_header (page.head, "Content-Type");
  ck_assert_str_eq (type, "text/html; charset=utf-8");
  ck_assert_ptr_nonnull (strstr (page.body, "/static/app.js"));
  g_autofree gchar *etag = stg_test_http_header (page.head, "ETag");
  ck_assert_ptr_nonnull (etag);
  g_autofree gchar *cache = stg_test_http_header (page.head, "Cache-Control");
  ck_assert_str_eq (cache, "no-cache");

  /* A client that has the page gets 304 and no body. */
  g_autofree gchar *cond = g_strdup_printf ("If-None-Match: %s\r\n", etag);
  StgTestReply again = stg_test_http (d->http_port, "GET", "/", cond, NULL);
  ck_assert_uint_eq (again.status, 304);
  ck_assert_str_eq (again.body, "");

  StgTestReply js = stg_test_http (d->http_port, "GET", "/static/app.js", NULL, NULL);
  ck_assert_uint_eq (js.status, 200);
  g_autofree gchar *js_type = stg_test_http_header (js.head, "Content-Type");
  ck_assert_str_eq (js_type, "text/javascript; charset=utf-8");
  ck_assert_ptr_nonnull (strstr (js.body, "EventSource"));
  StgTestReply css = stg_test_http (d->http_port, "GET", "/static/app.css", NULL, NULL);
  g_autofree gchar *css_type = stg_test_http_header (css.head, "Content-Type");
  ck_assert_str_eq (css_type, "text/css; charset=utf-8");
  ck_assert_ptr_nonnull (strstr (css.body, "prefers-color-scheme: dark"));

  /* Unknown pages and assets get the HTML 404 page; no escaping the folder. */
  static const gchar *const missing[] = {
    "/nothing/here", "/static/nope.js", "/static/../schema/001_initial.sql", "/static/.hidden",
    "/static/index.html",
  };
  for (guint i = 0; i < G_N_ELEMENTS (missing); i++)
    {
      StgTestReply r = stg_test_http (d->http_port, "GET", missing[i], NULL, NULL);
      ck_assert_msg (r.status == 404, "%s answered %u", missing[i], r.status);
      g_autofree gchar *t = stg_test_http_header (r.head, "Content-Type");
      ck_assert_str_eq (t, "text/html; charset=utf-8");
      ck_assert_ptr_nonnull (strstr (r.body, "Not found"));
      stg_test_reply_clear (&r);
    }

  /* Pages are read-only. */
  StgTestReply post = stg_test_http (d->http_port, "POST", "/", NULL, "x=1");
  ck_assert_uint_eq (post.status, 405);
  g_autofree gchar *allow = stg_test_http_header (post.head, "Allow");
  ck_assert_str_eq (allow, "GET, HEAD");

  stg_test_reply_clear (&page);
  stg_test_reply_clear (&again);
  stg_test_reply_clear (&js);
  stg_test_reply_clear (&css);
  stg_test_reply_clear (&post);
  dfx_stop (d);
}
END_TEST

START_TEST (assets_from_a_folder)
{
  g_autofree gchar *assets = g_build_filename (dfx.dir, "assets", NULL);
  g_autofree gchar *data = g_build_filename (dfx.dir, "data", NULL);
  g_autofree gchar *index = g_build_filename (assets, "index.html", NULL);
  g_autofree gchar *arg = g_strconcat ("--webui-dir=", assets, NULL);

  g_mkdir_with_parents (assets, 0700);
  ck_assert (g_file_set_contents (index, "<!doctype html><title>dev copy</title>", -1, NULL));
  StgTestDaemon *d = stg_test_daemon_start (data, arg, NULL);
  StgTestReply r = stg_test_http (d->http_port, "GET", "/", NULL, NULL);
  ck_assert_uint_eq (r.status, 200);
  ck_assert_ptr_nonnull (strstr (r.body, "dev copy"));
  /* Edits show without a restart. */
  ck_assert (g_file_set_contents (index, "<!doctype html><title>edited</title>", -1, NULL));
  StgTestReply r2 = stg_test_http (d->http_port, "GET", "/", NULL, NULL);
  ck_assert_ptr_nonnull (strstr (r2.body, "edited"));
  stg_test_reply_clear (&r);
  stg_test_reply_clear (&r2);
  dfx_stop (d);
}
END_TEST

START_TEST (session_and_jobs_data)
{
  /* Simulated instances: healthy the moment they are created. */
  StgTestDaemon *d = dfx_start ("--cluster=webcluster", "--runtime=simulated", NULL);

  StgTestReply s = stg_test_http (d->http_port, "GET", "/ui/api/session", NULL, NULL);
  ck_assert_uint_eq (s.status, 200);
  g_autofree gchar *type = stg_test_http_header (s.head, "Content-Type");
  ck_assert_str_eq (type, "application/json; charset=utf-8");
  g_autoptr (JsonNode) session = stg_test_parse_json (s.body);
  JsonObject *so = json_node_get_object (session);
  ck_assert_str_eq (json_object_get_string_member (so, "cluster"), "webcluster");
  ck_assert_uint_ge (strlen (json_object_get_string_member (so, "csrf")), 16);

  create_job (d, "alpha", 3);
  create_job (d, "beta", 2);
  StgTestReply j = stg_test_http (d->http_port, "GET", "/ui/api/jobs", NULL, NULL);
  ck_assert_uint_eq (j.status, 200);
  g_autoptr (JsonNode) jobs = stg_test_parse_json (j.body);
  JsonArray *list = json_object_get_array_member (json_node_get_object (jobs), "jobs");
  ck_assert_uint_eq (json_array_get_length (list), 2);
  JsonObject *alpha = json_array_get_object_element (list, 0);
  ck_assert_str_eq (json_object_get_string_member (alpha, "name"), "alpha");
  ck_assert_int_eq (json_object_get_int_member (alpha, "instances"), 3);
  JsonArray *versions = json_object_get_array_member (alpha, "versions");
  ck_assert_uint_eq (json_array_get_length (versions), 1);
  ck_assert_int_eq (json_object_get_int_member (json_array_get_object_element (versions, 0), "version"), 1);
  ck_assert_int_eq (json_object_get_int_member (json_array_get_object_element (versions, 0), "instances"), 3);
  ck_assert (json_object_get_null_member (alpha, "update"));

  StgTestReply one = stg_test_http (d->http_port, "GET",
                                    "/ui/api/job?role=www&environment=prod&name=beta", NULL, NULL);
  ck_assert_uint_eq (one.status, 200);
  g_autoptr (JsonNode) job = stg_test_parse_json (one.body);
  JsonObject *jo = json_node_get_object (job);
  ck_assert_int_eq (json_object_get_int_member (jo, "instances_total"), 2);
  JsonArray *instances = json_object_get_array_member (jo, "instances");
  ck_assert_uint_eq (json_array_get_length (instances), 2);
  JsonObject *i1 = json_array_get_object_element (instances, 1);
  ck_assert_int_eq (json_object_get_int_member (i1, "id"), 1);
  ck_assert_str_eq (json_object_get_string_member (i1, "status"), "RUNNING");
  JsonArray *groups = json_object_get_array_member (jo, "groups");
  ck_assert_uint_eq (json_array_get_length (groups), 1);
  ck_assert_str_eq (json_object_get_string_member (json_array_get_object_element (groups, 0), "ranges"), "0-1");

  StgTestReply none = stg_test_http (d->http_port, "GET",
                                     "/ui/api/job?role=www&environment=prod&name=gamma", NULL,
                                     NULL);
  ck_assert_uint_eq (none.status, 404);
  StgTestReply bad = stg_test_http (d->http_port, "GET",
                                    "/ui/api/job?role=www&environment=prod&name=%3Cscript%3E", NULL,
                                    NULL);
  ck_assert_uint_eq (bad.status, 400);
  /* The error is JSON, with the name escaped by the JSON writer. */
  g_autoptr (JsonNode) err = stg_test_parse_json (bad.body);
  ck_assert_ptr_nonnull (strstr (json_object_get_string_member (json_node_get_object (err), "error"),
                                 "<script>"));

  stg_test_reply_clear (&s);
  stg_test_reply_clear (&j);
  stg_test_reply_clear (&one);
  stg_test_reply_clear (&none);
  stg_test_reply_clear (&bad);
  dfx_stop (d);
}
END_TEST

START_TEST (updates_data_checks_queries)
{
  StgTestDaemon *d = dfx_start (NULL);
  static const gchar *const bad[] = {
    "/ui/api/updates?limit=abc", "/ui/api/updates?limit=201", "/ui/api/updates?offset=-1",
    "/ui/api/updates?status=SLEEPING", "/ui/api/updates?job=only/two",
  };

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      StgTestReply r = stg_test_http (d->http_port, "GET", bad[i], NULL, NULL);
      ck_assert_msg (r.status == 400, "%s answered %u", bad[i], r.status);
      g_autoptr (JsonNode) e = stg_test_parse_json (r.body);
      ck_assert (json_object_has_member (json_node_get_object (e), "error"));
      stg_test_reply_clear (&r);
    }
  StgTestReply ok = stg_test_http (d->http_port, "GET",
                                   "/ui/api/updates?status=rolling_forward&limit=5", NULL, NULL);
  ck_assert_uint_eq (ok.status, 200);
  g_autoptr (JsonNode) page = stg_test_parse_json (ok.body);
  JsonObject *po = json_node_get_object (page);
  ck_assert_int_eq (json_object_get_int_member (po, "limit"), 5);
  ck_assert (!json_object_get_boolean_member (po, "more"));
  ck_assert_uint_eq (json_array_get_length (json_object_get_array_member (po, "updates")), 0);
  StgTestReply post = stg_test_http (d->http_port, "POST", "/ui/api/updates", NULL, "{}");
  ck_assert_uint_eq (post.status, 405);
  /* The local runtime's one host: this machine, by the name host
   * maintenance takes, with its mode and no SLA wait. */
  StgTestReply hosts = stg_test_http (d->http_port, "GET", "/ui/api/hosts", NULL, NULL);
  ck_assert_uint_eq (hosts.status, 200);
  g_autoptr (JsonNode) hn = stg_test_parse_json (hosts.body);
  JsonArray *local = json_object_get_array_member (json_node_get_object (hn), "hosts");
  ck_assert_uint_eq (json_array_get_length (local), 1);
  JsonObject *me = json_array_get_object_element (local, 0);
  ck_assert_str_eq (json_object_get_string_member (me, "name"), g_get_host_name ());
  ck_assert_str_eq (json_object_get_string_member (me, "mode"), "NONE");
  ck_assert_str_eq (json_object_get_string_member (me, "sla_wait"), "");
  stg_test_reply_clear (&hosts);
  stg_test_reply_clear (&ok);
  stg_test_reply_clear (&post);
  dfx_stop (d);
}
END_TEST

/* Reads from @conn until @needle shows up or the deadline passes. */
static gboolean
read_until (GSocketConnection *conn, GString *seen, const gchar *needle, guint timeout_ms)
{
  GSocket *sock = g_socket_connection_get_socket (conn);
  gint64 deadline = g_get_monotonic_time () + (gint64) timeout_ms * 1000;

  while (strstr (seen->str, needle) == NULL)
    {
      gint64 left = (deadline - g_get_monotonic_time ()) / 1000;
      if (left <= 0)
        return FALSE;
      GPollFD pfd = { g_socket_get_fd (sock), G_IO_IN, 0 };
      if (g_poll (&pfd, 1, (gint) left) <= 0)
        continue;
      gchar buf[1024];
      gssize n = g_socket_receive (sock, buf, sizeof buf, NULL, NULL);
      if (n <= 0)
        return FALSE;
      g_string_append_len (seen, buf, n);
    }
  return TRUE;
}

START_TEST (event_stream_opens_and_survives_shutdown)
{
  StgTestDaemon *d = dfx_start (NULL);
  g_autoptr (GSocketClient) client = g_socket_client_new ();
  g_autoptr (GSocketConnection) conn = g_socket_client_connect_to_host (client, "127.0.0.1",
                                                                        d->http_port, NULL, NULL);
  static const gchar req[] = "GET /ui/api/events HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n";
  g_autoptr (GString) seen = g_string_new (NULL);

  ck_assert_ptr_nonnull (conn);
  g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (conn)), req, sizeof req - 1,
                             NULL, NULL, NULL);
  ck_assert_msg (read_until (conn, seen, ": connected\n\n", 10000), "no stream start: %s", seen->str);
  ck_assert_ptr_nonnull (strstr (seen->str, "text/event-stream"));
  ck_assert_ptr_nonnull (strstr (seen->str, "retry: 2000"));

  /* The daemon still answers other requests while the stream is parked... */
  StgTestReply r = stg_test_http (d->http_port, "GET", "/ui/api/jobs", NULL, NULL);
  ck_assert_uint_eq (r.status, 200);
  stg_test_reply_clear (&r);
  /* ...and stops cleanly with it open. */
  dfx_stop (d);
}
END_TEST

/* Starts an update of www/prod/NAME to a new command with @settings;
 * returns its id. */
static gchar *
start_update_with (StgTestDaemon *d, const gchar *name, gint32 count, const gchar *message,
                   ApiJobUpdateSettings *settings)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiJobConfiguration) job = stg_test_job ("www", "prod", name, count, "sleep 61");
  g_autoptr (ApiJobUpdateRequest) req = g_object_new (API_TYPE_JOB_UPDATE_REQUEST,
      "taskConfig", job->taskConfig, "instanceCount", count, "settings", settings, NULL);
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (GError) error = NULL;

  ck_assert (api_aurora_scheduler_manager_if_start_job_update (API_AURORA_SCHEDULER_MANAGER_IF (c->client),
                                                               &r, req, message, &error));
  ck_assert_int_eq (r->responseCode, API_RESPONSE_CODE_OK);
  return g_strdup (r->result->startJobUpdateResult->key->id);
}

/* Starts an update of www/prod/NAME to a new command, a queue of one with
 * a watch of 1 s; returns its id. */
static gchar *
start_update (StgTestDaemon *d, const gchar *name, gint32 count, const gchar *message)
{
  g_autoptr (ApiJobUpdateSettings) settings = g_object_new (API_TYPE_JOB_UPDATE_SETTINGS,
                                                            "updateGroupSize", 1,
                                                            "minWaitInInstanceRunningMs", 1000,
                                                            NULL);
  return start_update_with (d, name, count, message, settings);
}

/* www/prod/@name with one instance of "sleep 60" in @image, at most
 * @per_host per host (0: no constraint). */
static ApiJobConfiguration *
placed_job (const gchar *name, const gchar *image, gint32 per_host)
{
  ApiJobConfiguration *job = stg_test_job ("www", "prod", name, 1, "sleep 60");
  g_autoptr (ApiDockerContainer) docker = g_object_new (API_TYPE_DOCKER_CONTAINER, "image", image,
                                                        NULL);
  g_autoptr (ApiContainer) box = g_object_new (API_TYPE_CONTAINER, "docker", docker, NULL);
  g_object_set (job->taskConfig, "container", box, NULL);
  if (per_host > 0)
    {
      g_autoptr (ApiLimitConstraint) limit = g_object_new (API_TYPE_LIMIT_CONSTRAINT, "limit",
                                                           per_host, NULL);
      g_autoptr (ApiTaskConstraint) tc = g_object_new (API_TYPE_TASK_CONSTRAINT, "limit", limit,
                                                       NULL);
      g_hash_table_add (job->taskConfig->constraints,
                        g_object_new (API_TYPE_CONSTRAINT, "name", "host", "constraint", tc, NULL));
      job->taskConfig->__isset_constraints = TRUE;
    }
  return job;
}

/* Creates @from, starts an update to @to; the update page's "diff". */
static JsonNode *
diff_of (StgTestDaemon *d, ApiJobConfiguration *from, ApiJobConfiguration *to)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (ApiResponse) u = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiJobUpdateSettings) settings = g_object_new (API_TYPE_JOB_UPDATE_SETTINGS,
                                                            "updateGroupSize", 1,
                                                            "minWaitInInstanceRunningMs", 1000,
                                                            NULL);
  g_autoptr (ApiJobUpdateRequest) req = g_object_new (API_TYPE_JOB_UPDATE_REQUEST, "taskConfig",
                                                      to->taskConfig, "instanceCount", 1,
                                                      "settings", settings, NULL);

  ck_assert (
      api_aurora_scheduler_manager_if_create_job (API_AURORA_SCHEDULER_MANAGER_IF (c->client), &r,
                                                  from, &error));
  ck_assert_int_eq (r->responseCode, API_RESPONSE_CODE_OK);
  ck_assert (
      api_aurora_scheduler_manager_if_start_job_update (API_AURORA_SCHEDULER_MANAGER_IF (c->client),
                                                        &u, req, "", &error));
  ck_assert_int_eq (u->responseCode, API_RESPONSE_CODE_OK);
  g_autofree gchar *path =
      g_strdup_printf ("/ui/api/update?role=www&environment=prod&name=%s&id=%s", from->key->name,
                       u->result->startJobUpdateResult->key->id);
  StgTestReply page = stg_test_http (d->http_port, "GET", path, NULL, NULL);
  ck_assert_uint_eq (page.status, 200);
  JsonNode *root = stg_test_parse_json (page.body);
  stg_test_reply_clear (&page);
  JsonNode *diff = json_node_copy (json_object_get_member (json_node_get_object (root), "diff"));
  json_node_unref (root);
  return diff;
}

/* The diff's lines (or notes) joined by newlines. */
static gchar *
diff_text (JsonNode *diff, const gchar *member)
{
  JsonArray *a = json_object_get_array_member (json_node_get_object (diff), member);
  g_autoptr (GString) s = g_string_new (NULL);

  for (guint i = 0; i < json_array_get_length (a); i++)
    g_string_append_printf (s, "%s\n", json_array_get_string_element (a, i));
  return g_string_free (g_steal_pointer (&s), FALSE);
}

/* #31: every TaskConfig field that can change is in the web UI's diff
 * (the container's image was missing), and a change of the placement
 * constraints says that the instances will be replaced. */
START_TEST (update_diff_shows_every_field)
{
  /* Simulated: the local runtime refuses a docker image. */
  StgTestDaemon *d = dfx_start ("--runtime=simulated", NULL);
  g_autoptr (ApiJobConfiguration) v1 = placed_job ("img", "example/web:1", 0);
  g_autoptr (ApiJobConfiguration) v2 = placed_job ("img", "example/web:2", 0);
  g_autoptr (JsonNode) image = diff_of (d, v1, v2);
  g_autofree gchar *lines = diff_text (image, "lines");
  ck_assert_msg (strstr (lines, "- container: ") != NULL &&
                     strstr (lines, "example/web:1") != NULL &&
                     strstr (lines, "+ container: ") != NULL &&
                     strstr (lines, "example/web:2") != NULL,
                 "%s", lines);
  g_autofree gchar *none = diff_text (image, "notes");
  ck_assert_str_eq (none, "");

  g_autoptr (ApiJobConfiguration) p1 = placed_job ("place", "example/web:1", 0);
  g_autoptr (ApiJobConfiguration) p2 = placed_job ("place", "example/web:1", 1);
  g_autoptr (JsonNode) placement = diff_of (d, p1, p2);
  g_autofree gchar *plines = diff_text (placement, "lines");
  ck_assert_msg (strstr (plines, "+ constraints: ") != NULL, "%s", plines);
  g_autofree gchar *notes = diff_text (placement, "notes");
  ck_assert_str_eq (notes, "constraints changed: instances will be replaced\n");
  dfx_stop (d);
}
END_TEST

/* A new session: its cookie ("stagger_session=...") and its CSRF token. */
static void
new_session (StgTestDaemon *d, gchar **cookie, gchar **token)
{
  stg_test_web_session (d->http_port, cookie, token);
  ck_assert_msg (*token != NULL && *cookie != NULL &&
                     g_str_has_prefix (*cookie, "stagger_session=") &&
                     strstr (*cookie, "HttpOnly") && strstr (*cookie, "SameSite=Strict"),
                 "cookie: %s", *cookie);
  *strchr (*cookie, ';') = '\0';
}

typedef struct
{
  StgTestDaemon *d;
  JsonNode *job; /* the job page's data once it shows a surge instance */
} SurgeSeen;

static gboolean
job_shows_surge (gpointer data)
{
  SurgeSeen *s = data;
  StgTestReply r = stg_test_http (s->d->http_port, "GET",
                                  "/ui/api/job?role=www&environment=prod&name=web", NULL, NULL);
  JsonNode *node = stg_test_parse_json (r.body);
  stg_test_reply_clear (&r);
  JsonArray *list = json_object_get_array_member (json_node_get_object (node), "instances");
  for (guint i = 0; i < json_array_get_length (list); i++)
    if (json_object_get_boolean_member (json_array_get_object_element (list, i), "surge"))
      {
        s->job = node;
        return TRUE;
      }
  json_node_unref (node);
  g_usleep (20000);
  return FALSE;
}

/* The job page marks the update's surge instances (beyond the job's
 * count), and the update page lists them and the new settings. */
START_TEST (surge_instances_are_marked)
{
  StgTestDaemon *d = dfx_start ("--runtime=simulated", NULL);

  create_job (d, "web", 2);
  g_autoptr (ApiJobUpdateSettings) settings =
      g_object_new (API_TYPE_JOB_UPDATE_SETTINGS, "updateGroupSize", 1,
                    "minWaitInInstanceRunningMs", 60000, "minInService", 2, "maxSurge", 1,
                    "maxBatchSize", 4, "maxFailedInstancesPercent", 50.0, NULL);
  g_autofree gchar *id = start_update_with (d, "web", 2, NULL, settings);
  SurgeSeen seen = { d, NULL };
  ck_assert_msg (stg_test_wait (job_shows_surge, &seen, 30000), "no surge instance shown");
  g_autoptr (JsonNode) job = seen.job;
  JsonObject *o = json_node_get_object (job);
  JsonArray *list = json_object_get_array_member (o, "instances");
  ck_assert_uint_eq (json_array_get_length (list), 3);
  for (guint i = 0; i < 3; i++)
    {
      JsonObject *in = json_array_get_object_element (list, i);
      ck_assert_int_eq (json_object_get_boolean_member (in, "surge"),
                        json_object_get_int_member (in, "id") == 2);
    }
  JsonObject *update = json_object_get_object_member (o, "update");
  ck_assert_str_eq (json_object_get_string_member (update, "surge"), "2");

  g_autofree gchar *path =
      g_strdup_printf ("/ui/api/update?role=www&environment=prod&name=web&id=%s", id);
  StgTestReply u = stg_test_http (d->http_port, "GET", path, NULL, NULL);
  ck_assert_uint_eq (u.status, 200);
  g_autoptr (JsonNode) node = stg_test_parse_json (u.body);
  JsonObject *uo = json_node_get_object (node);
  ck_assert_str_eq (json_object_get_string_member (json_object_get_object_member (uo, "instances"),
                                                   "surge"),
                    "2");
  JsonObject *s = json_object_get_object_member (uo, "settings");
  ck_assert_int_eq (json_object_get_int_member (s, "max_surge"), 1);
  ck_assert_int_eq (json_object_get_int_member (s, "max_batch_size"), 4);
  ck_assert (json_object_get_double_member (s, "max_failed_instances_percent") == 50.0);
  ck_assert (json_object_get_null_member (s, "max_surge_percent"));
  stg_test_reply_clear (&u);
  dfx_stop (d);
}
END_TEST

START_TEST (update_page_data_and_controls)
{
  StgTestDaemon *d = dfx_start (NULL);
  static const gchar message[] = "<script>alert(\"hi\")</script> & more";

  create_job (d, "web", 3);
  g_autofree gchar *id = start_update (d, "web", 3, message);
  g_autofree gchar *path = g_strdup_printf ("/ui/api/update?role=www&environment=prod&name=web&id=%s", id);
  StgTestReply u = stg_test_http (d->http_port, "GET", path, NULL, NULL);
  ck_assert_uint_eq (u.status, 200);
  g_autoptr (JsonNode) node = stg_test_parse_json (u.body);
  JsonObject *o = json_node_get_object (node);
  ck_assert_str_eq (json_object_get_string_member (o, "status"), "ROLLING_FORWARD");
  ck_assert_str_eq (json_object_get_string_member (o, "message"), message);   /* as written */
  JsonObject *prog = json_object_get_object_member (o, "progress");
  ck_assert_int_eq (json_object_get_int_member (prog, "total"), 3);
  JsonObject *inst = json_object_get_object_member (o, "instances");
  ck_assert_str_eq (json_object_get_string_member (inst, "ranges"), "0-2");
  ck_assert_uint_eq (strlen (json_object_get_string_member (inst, "states")), 3);
  JsonObject *settings = json_object_get_object_member (o, "settings");
  ck_assert_str_eq (json_object_get_string_member (settings, "strategy"), "queue");
  ck_assert_int_eq (json_object_get_int_member (settings, "watch_ms"), 1000);
  JsonArray *diff = json_object_get_array_member (json_object_get_object_member (o, "diff"), "lines");
  gboolean changed = FALSE;
  for (guint i = 0; i < json_array_get_length (diff); i++)
    changed |= strstr (json_array_get_string_element (diff, i), "+ task.command: \"sleep 61\"") !=
               NULL;
  ck_assert_msg (changed, "the diff does not show the new command");
  ck_assert_uint_eq (json_array_get_length (json_object_get_array_member (o, "events")), 1);

  /* Controls need POST and the session's token. */
  g_autofree gchar *body = g_strdup_printf ("{\"role\":\"www\",\"environment\":\"prod\","
                                            "\"name\":\"web\",\"id\":\"%s\"}", id);
  StgTestReply get = stg_test_http (d->http_port, "GET", "/ui/api/update/pause", NULL, NULL);
  ck_assert_uint_eq (get.status, 405);
  StgTestReply none = stg_test_http (d->http_port, "POST", "/ui/api/update/pause", NULL, body);
  ck_assert_uint_eq (none.status, 403);
  StgTestReply wrong = stg_test_http (d->http_port, "POST", "/ui/api/update/pause",
                                      "X-Stagger-CSRF: guess\r\n", body);
  ck_assert_uint_eq (wrong.status, 403);
  g_autofree gchar *cookie = NULL, *token = NULL, *cookie2 = NULL, *token2 = NULL;
  new_session (d, &cookie, &token);
  new_session (d, &cookie2, &token2);
  ck_assert_str_ne (token, token2);
  /* A token is good only with its own session's cookie. */
  g_autofree gchar *mixed = g_strdup_printf ("Cookie: %s\r\nX-Stagger-CSRF: %s\r\n", cookie2, token);
  StgTestReply stolen = stg_test_http (d->http_port, "POST", "/ui/api/update/pause", mixed, body);
  ck_assert_uint_eq (stolen.status, 403);
  stg_test_reply_clear (&stolen);
  g_autofree gchar *hdr = g_strdup_printf ("Cookie: %s\r\nX-Stagger-CSRF: %s\r\n"
                                           "Content-Type: application/json\r\n", cookie, token);
  StgTestReply ok = stg_test_http (d->http_port, "POST", "/ui/api/update/pause", hdr, body);
  ck_assert_msg (ok.status == 200, "pause answered %u: %s", ok.status, ok.body);
  StgTestReply again = stg_test_http (d->http_port, "POST", "/ui/api/update/resume", hdr, body);
  ck_assert_uint_eq (again.status, 200);
  StgTestReply bad = stg_test_http (d->http_port, "POST", "/ui/api/update/resume", hdr, body);
  ck_assert_uint_eq (bad.status, 409);
  StgTestReply junk = stg_test_http (d->http_port, "POST", "/ui/api/update/abort", hdr, "not json");
  ck_assert_uint_eq (junk.status, 400);
  StgTestReply unknown = stg_test_http (d->http_port, "POST", "/ui/api/update/explode", hdr, body);
  ck_assert_uint_eq (unknown.status, 404);
  StgTestReply aborted = stg_test_http (d->http_port, "POST", "/ui/api/update/abort", hdr, body);
  ck_assert_uint_eq (aborted.status, 200);

  StgTestReply after = stg_test_http (d->http_port, "GET", path, NULL, NULL);
  g_autoptr (JsonNode) node2 = stg_test_parse_json (after.body);
  JsonObject *o2 = json_node_get_object (node2);
  ck_assert_str_eq (json_object_get_string_member (o2, "status"), "ABORTED");
  JsonArray *events = json_object_get_array_member (o2, "events");
  ck_assert_uint_eq (json_array_get_length (events), 4);
  JsonObject *pause_ev = json_array_get_object_element (events, 1);
  ck_assert_str_eq (json_object_get_string_member (pause_ev, "status"), "ROLL_FORWARD_PAUSED");
  ck_assert_str_eq (json_object_get_string_member (pause_ev, "user"), "web");

  StgTestReply missing = stg_test_http (d->http_port, "GET",
                                        "/ui/api/update?role=www&environment=prod&name=web&id=nope",
                                        NULL, NULL);
  ck_assert_uint_eq (missing.status, 404);

  StgTestReply *all[] = { &u,   &get,  &none,    &wrong,   &ok,    &again,
                          &bad, &junk, &unknown, &aborted, &after, &missing };
  for (guint i = 0; i < G_N_ELEMENTS (all); i++)
    stg_test_reply_clear (all[i]);
  dfx_stop (d);
}
END_TEST

/* ---- rollout plans ------------------------------------------------------------------ */

/* A gate that every instance of ROLE/prod/@job is healthy. */
static ApiRolloutGate *
healthy_gate (const gchar *name, const gchar *role, const gchar *job)
{
  g_autoptr (ApiJobKey) key = stg_job_key_new (role, "prod", job);
  return g_object_new (API_TYPE_ROLLOUT_GATE, "name", name, "kind",
                       API_ROLLOUT_GATE_KIND_JOB_HEALTHY, "job", key, NULL);
}

/* /ui/api/plan?id=@id as JSON; fails the test unless it answers 200. */
static JsonNode *
get_plan (StgTestDaemon *d, const gchar *id)
{
  g_autofree gchar *path = g_strdup_printf ("/ui/api/plan?id=%s", id);
  StgTestReply r = stg_test_http (d->http_port, "GET", path, NULL, NULL);
  ck_assert_msg (r.status == 200, "plan %s: %u %s", id, r.status, r.body);
  JsonNode *node = stg_test_parse_json (r.body);
  stg_test_reply_clear (&r);
  return node;
}

/* The stage named @name of a plan's JSON (fails the test if none). */
static JsonObject *
plan_stage_json (JsonNode *plan, const gchar *name)
{
  JsonArray *stages = json_object_get_array_member (json_node_get_object (plan), "stages");
  for (guint i = 0; i < json_array_get_length (stages); i++)
    {
      JsonObject *s = json_array_get_object_element (stages, i);
      if (g_str_equal (json_object_get_string_member (s, "name"), name))
        return s;
    }
  ck_abort_msg ("no stage %s", name);
  return NULL;
}

/* Polls the plan's page data until the plan (@stage NULL) or its stage
 * @stage has @status; fails the test after @timeout_ms. */
static JsonNode *
wait_plan (StgTestDaemon *d, const gchar *id, const gchar *stage, const gchar *status,
           guint timeout_ms)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) timeout_ms * 1000;

  for (;;)
    {
      g_autoptr (JsonNode) plan = get_plan (d, id);
      JsonObject *o = stage ? plan_stage_json (plan, stage) : json_node_get_object (plan);
      const gchar *now = json_object_get_string_member (o, "status");
      if (g_str_equal (now, status))
        return g_steal_pointer (&plan);
      if (g_get_monotonic_time () >= deadline)
        {
          g_autofree gchar *text = json_to_string (plan, FALSE);
          ck_abort_msg ("%s is %s, not %s, after %u ms: %s", stage ? stage : "the plan", now,
                        status, timeout_ms, text);
        }
      g_usleep (20 * 1000);
    }
}

/* The POST of control @action on plan @id with @headers and @body. */
static guint
plan_control (StgTestDaemon *d, const gchar *id, const gchar *action, const gchar *headers,
              const gchar *body)
{
  g_autofree gchar *path = g_strdup_printf ("/ui/api/plan/%s/%s", id, action);

  return stg_test_web_control (d->http_port, path, headers, body);
}

START_TEST (plan_pages_data_and_controls)
{
  StgTestDaemon *d = dfx_start ("--runtime=simulated", NULL);

  create_job (d, "pdb", 2);
  create_job (d, "pweb", 2);
  /* db: gated before by its own health and after by an HTTP gate that
   * reads this daemon's plan list; web: after db, once approved. */
  g_autoptr (ApiRolloutPlan) plan = g_object_new (API_TYPE_ROLLOUT_PLAN, "name", "two-stages",
                                                  "rollbackOnFailure", TRUE, NULL);
  ApiRolloutStage *db = stg_rollout_plan_stage ("db", "www", "pdb", 2, NULL);
  g_ptr_array_add (db->before, healthy_gate ("db-up", "www", "pdb"));
  g_autofree gchar *url = g_strdup_printf ("http://127.0.0.1:%u/ui/api/plans", d->http_port);
  g_ptr_array_add (db->after, g_object_new (API_TYPE_ROLLOUT_GATE, "name", "listed", "kind",
                                            API_ROLLOUT_GATE_KIND_HTTP, "url", url, "jsonPath",
                                            "$.limit", "compare", ">=", "threshold", 1.5, NULL));
  ApiRolloutStage *web = stg_rollout_plan_stage ("web", "www", "pweb", 2, "db");
  g_object_set (web, "requireApproval", TRUE, NULL);
  g_autoptr (GPtrArray) batch_gates = g_ptr_array_new_with_free_func (g_object_unref);
  g_ptr_array_add (batch_gates, healthy_gate ("web-up", "www", "pweb"));
  g_object_set (web->request->settings, "batchGates", batch_gates, NULL);
  g_ptr_array_add (plan->stages, db);
  g_ptr_array_add (plan->stages, web);
  g_autofree gchar *id = stg_rollout_start_plan (d, plan);

  /* db goes through its gates and its update; web waits for approval. */
  g_autoptr (JsonNode) waiting = wait_plan (d, id, "web", "AWAITING_APPROVAL", 30000);
  JsonObject *po = json_node_get_object (waiting);
  ck_assert_str_eq (json_object_get_string_member (po, "id"), id);
  ck_assert_str_eq (json_object_get_string_member (po, "name"), "two-stages");
  ck_assert_str_eq (json_object_get_string_member (po, "status"), "AWAITING_APPROVAL");
  ck_assert_int_eq (json_object_get_int_member (po, "stage_count"), 2);
  ck_assert_int_eq (json_object_get_int_member (po, "stages_done"), 1);
  ck_assert (json_object_get_boolean_member (po, "rollback_on_failure"));
  ck_assert_int_gt (json_object_get_int_member (po, "now_ms"), 0);
  JsonObject *so = plan_stage_json (waiting, "db");
  ck_assert_str_eq (json_object_get_string_member (so, "status"), "DONE");
  ck_assert_str_eq (json_object_get_string_member (so, "job"), "www/prod/pdb");
  ck_assert_str_eq (json_object_get_string_member (json_object_get_object_member (so, "job_key"),
                                                   "name"),
                    "pdb");
  const gchar *db_update = json_object_get_string_member (so, "update");
  ck_assert_ptr_nonnull (db_update);
  ck_assert (json_object_get_null_member (so, "rollback_update"));
  ck_assert_int_eq (json_object_get_int_member (so, "previous_version"), 1);
  ck_assert_int_eq (json_object_get_int_member (so, "desired_version"), 2);
  ck_assert_int_eq (json_object_get_int_member (so, "current_version"), 2);
  JsonObject *gates = json_object_get_object_member (so, "gates");
  ck_assert_str_eq (json_object_get_string_member (gates, "phase"), "after");
  ck_assert_int_eq (json_object_get_int_member (gates, "passed"), 1);
  JsonObject *up = json_array_get_object_element (json_object_get_array_member (gates, "before"),
                                                  0);
  ck_assert_str_eq (json_object_get_string_member (up, "kind"), "JOB_HEALTHY");
  ck_assert_str_eq (json_object_get_string_member (up, "description"),
                    "every instance of www/prod/pdb healthy");
  ck_assert (json_object_get_boolean_member (json_object_get_object_member (up, "last"), "passed"));
  JsonObject *listed = json_array_get_object_element (json_object_get_array_member (gates, "after"),
                                                      0);
  g_autofree gchar *want = g_strdup_printf ("GET %s: $.limit >= 1.5", url);
  ck_assert_str_eq (json_object_get_string_member (listed, "description"), want);
  ck_assert_int_eq (json_object_get_int_member (listed, "timeout_s"), 30);
  JsonObject *last = json_object_get_object_member (listed, "last");
  ck_assert_msg (json_object_get_boolean_member (last, "passed"), "the HTTP gate: %s",
                 json_object_get_string_member (last, "message"));
  ck_assert_int_eq (json_object_get_int_member (last, "attempt"), 1);
  JsonObject *wo = plan_stage_json (waiting, "web");
  ck_assert_str_eq (json_array_get_string_element (json_object_get_array_member (wo, "depends_on"),
                                                   0),
                    "db");
  ck_assert (json_object_get_boolean_member (wo, "require_approval"));
  ck_assert (json_object_get_null_member (wo, "approved_by"));
  ck_assert (json_object_get_null_member (wo, "update"));
  /* What the job ran before is recorded when the stage starts. */
  ck_assert_int_eq (json_object_get_int_member (wo, "previous_version"), 0);
  ck_assert_int_eq (json_object_get_int_member (wo, "current_version"), 1);
  JsonArray *between = json_object_get_array_member (json_object_get_object_member (wo, "gates"),
                                                     "between_batches");
  ck_assert_uint_eq (json_array_get_length (between), 1);
  ck_assert_str_eq (json_object_get_string_member (json_array_get_object_element (between, 0),
                                                   "name"),
                    "web-up");
  /* Every gate attempt, in order, and the plan's events. */
  JsonArray *attempts = json_object_get_array_member (po, "gate_results");
  ck_assert_uint_eq (json_array_get_length (attempts), 2);
  JsonObject *a0 = json_array_get_object_element (attempts, 0);
  ck_assert_str_eq (json_object_get_string_member (a0, "stage"), "db");
  ck_assert_str_eq (json_object_get_string_member (a0, "phase"), "before");
  ck_assert_str_eq (json_object_get_string_member (a0, "gate"), "db-up");
  ck_assert_uint_gt (json_array_get_length (json_object_get_array_member (po, "events")), 2);

  /* The list, newest first, filtered and paged. */
  StgTestReply list = stg_test_http (d->http_port, "GET", "/ui/api/plans?active=1", NULL, NULL);
  ck_assert_uint_eq (list.status, 200);
  g_autoptr (JsonNode) ln = stg_test_parse_json (list.body);
  JsonArray *plans = json_object_get_array_member (json_node_get_object (ln), "plans");
  ck_assert_uint_eq (json_array_get_length (plans), 1);
  JsonObject *l0 = json_array_get_object_element (plans, 0);
  ck_assert_str_eq (json_object_get_string_member (l0, "id"), id);
  ck_assert_str_eq (json_object_get_string_member (l0, "status"), "AWAITING_APPROVAL");
  ck_assert_int_eq (json_object_get_int_member (l0, "stage_count"), 2);
  ck_assert_int_eq (json_object_get_int_member (l0, "stages_done"), 1);
  ck_assert (json_object_has_member (l0, "user") && json_object_has_member (l0, "since_ms"));
  static const gchar *const bad[] = {
    "/ui/api/plans?limit=0",  "/ui/api/plans?limit=201",
    "/ui/api/plans?offset=x", "/ui/api/plans?active=maybe",
    "/ui/api/plan",           "/ui/api/plan?id=",
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      StgTestReply r = stg_test_http (d->http_port, "GET", bad[i], NULL, NULL);
      ck_assert_msg (r.status == 400, "%s answered %u", bad[i], r.status);
      stg_test_reply_clear (&r);
    }
  StgTestReply missing = stg_test_http (d->http_port, "GET", "/ui/api/plan?id=nope", NULL, NULL);
  ck_assert_uint_eq (missing.status, 404);
  StgTestReply post_list = stg_test_http (d->http_port, "POST", "/ui/api/plans", NULL, "{}");
  ck_assert_uint_eq (post_list.status, 405);

  /* Controls: POST only, with the session's token. */
  StgTestReply get = stg_test_http (d->http_port, "GET", "/ui/api/plan/x/pause", NULL, NULL);
  ck_assert_uint_eq (get.status, 405);
  ck_assert_uint_eq (plan_control (d, id, "approve", NULL, NULL), 403);
  ck_assert_uint_eq (plan_control (d, id, "approve", "X-Stagger-CSRF: guess\r\n", NULL), 403);
  g_autofree gchar *cookie = NULL, *token = NULL;
  new_session (d, &cookie, &token);
  g_autofree gchar *hdr = g_strdup_printf ("Cookie: %s\r\nX-Stagger-CSRF: %s\r\n"
                                           "Content-Type: application/json\r\n",
                                           cookie, token);
  ck_assert_uint_eq (plan_control (d, id, "explode", hdr, NULL), 404);
  ck_assert_uint_eq (plan_control (d, "nope", "pause", hdr, NULL), 404);
  ck_assert_uint_eq (plan_control (d, id, "pause/more", hdr, NULL), 404);
  ck_assert_uint_eq (plan_control (d, id, "pause", hdr, "not json"), 400);
  ck_assert_uint_eq (plan_control (d, id, "pause", hdr, "{\"message\": 7}"), 400);
  ck_assert_uint_eq (plan_control (d, id, "pause", hdr, "{\"stage\": \"web\"}"), 400);
  ck_assert_uint_eq (plan_control (d, id, "approve", hdr, "{\"stage\": \"nope\"}"), 404);
  ck_assert_uint_eq (plan_control (d, id, "approve", hdr, "{\"stage\": \"db\"}"), 409);
  ck_assert_uint_eq (plan_control (d, id, "resume", hdr, NULL), 409);
  ck_assert_uint_eq (plan_control (d, id, "pause", hdr, "{\"message\": \"hold\"}"), 200);
  g_autoptr (JsonNode) paused = wait_plan (d, id, NULL, "PAUSED", 10000);
  const gchar *why = json_object_get_string_member (json_node_get_object (paused), "reason");
  ck_assert_msg (strstr (why, "paused by web: hold") != NULL, "paused: %s", why);
  ck_assert_uint_eq (plan_control (d, id, "resume", hdr, "{}"), 200);
  g_autoptr (JsonNode) resumed = wait_plan (d, id, NULL, "AWAITING_APPROVAL", 10000);
  ck_assert (json_object_get_null_member (plan_stage_json (resumed, "web"), "approved_by"));

  /* An open page hears of the plan's changes. */
  g_autoptr (GSocketClient) client = g_socket_client_new ();
  g_autoptr (GSocketConnection) conn = g_socket_client_connect_to_host (client, "127.0.0.1",
                                                                        d->http_port, NULL, NULL);
  static const gchar req[] = "GET /ui/api/events HTTP/1.1\r\nHost: localhost\r\n\r\n";
  g_autoptr (GString) seen = g_string_new (NULL);
  g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (conn)), req,
                             sizeof req - 1, NULL, NULL, NULL);
  ck_assert (read_until (conn, seen, ": connected\n\n", 10000));

  ck_assert_uint_eq (plan_control (d, id, "approve", hdr,
                                   "{\"stage\": \"web\", \"message\": \"looks fine\"}"),
                     200);
  g_autofree gchar *change =
      g_strdup_printf ("{\"kind\":\"plan\",\"role\":\"\",\"environment\":\"\","
                       "\"name\":\"\",\"id\":\"%s\"}",
                       id);
  ck_assert_msg (read_until (conn, seen, change, 10000), "no plan change: %s", seen->str);
  g_autoptr (JsonNode) done = wait_plan (d, id, NULL, "DONE", 30000);
  JsonObject *web_done = plan_stage_json (done, "web");
  ck_assert_str_eq (json_object_get_string_member (web_done, "approved_by"), "web");
  ck_assert_ptr_nonnull (json_object_get_string_member (web_done, "update"));
  ck_assert_int_eq (json_object_get_int_member (json_node_get_object (done), "stages_done"), 2);
  JsonArray *events = json_object_get_array_member (json_node_get_object (done), "events");
  gboolean approval = FALSE;
  for (guint i = 0; i < json_array_get_length (events); i++)
    {
      JsonObject *e = json_array_get_object_element (events, i);
      const gchar *m = json_object_get_string_member (e, "message");
      approval |= m != NULL && strstr (m, "looks fine") != NULL &&
                  g_strcmp0 (json_object_get_string_member (e, "stage"), "web") == 0;
    }
  ck_assert_msg (approval, "no approval event");
  StgTestReply active = stg_test_http (d->http_port, "GET", "/ui/api/plans?active=1", NULL, NULL);
  g_autoptr (JsonNode) an = stg_test_parse_json (active.body);
  ck_assert_uint_eq (json_array_get_length (
                         json_object_get_array_member (json_node_get_object (an), "plans")),
                     0);

  /* An ended plan: pausing is a conflict; rolling back takes both stages
   * back, each with an update of its own. */
  ck_assert_uint_eq (plan_control (d, id, "pause", hdr, NULL), 409);
  ck_assert_uint_eq (plan_control (d, id, "rollback", hdr, NULL), 200);
  g_autoptr (JsonNode) back = wait_plan (d, id, NULL, "ROLLED_BACK", 30000);
  JsonObject *db_back = plan_stage_json (back, "db");
  ck_assert_str_eq (json_object_get_string_member (db_back, "status"), "ROLLED_BACK");
  ck_assert_ptr_nonnull (json_object_get_string_member (db_back, "rollback_update"));
  ck_assert_int_eq (json_object_get_int_member (db_back, "current_version"),
                    json_object_get_int_member (db_back, "previous_version"));
  ck_assert_uint_eq (plan_control (d, id, "rollback", hdr, NULL), 409);

  StgTestReply *all[] = { &list, &missing, &post_list, &get, &active };
  for (guint i = 0; i < G_N_ELEMENTS (all); i++)
    stg_test_reply_clear (all[i]);
  dfx_stop (d);
}
END_TEST

/* The [users] entry of a token: what staggerd --hash-token makes of it. */
static gchar *
token_digest (const gchar *token)
{
  g_autofree gchar *staggerd = stg_test_program ("staggerd");
  g_autoptr (GError) error = NULL;
  g_autoptr (GSubprocess) p = g_subprocess_new (G_SUBPROCESS_FLAGS_STDIN_PIPE |
                                                    G_SUBPROCESS_FLAGS_STDOUT_PIPE,
                                                &error, staggerd, "--hash-token", NULL);
  g_autofree gchar *in = g_strconcat (token, "\n", NULL);
  gchar *out = NULL;

  ck_assert_msg (p != NULL, "staggerd --hash-token: %s", error ? error->message : "");
  ck_assert (g_subprocess_communicate_utf8 (p, in, NULL, &out, NULL, &error));
  ck_assert (g_subprocess_get_successful (p));
  return g_strstrip (out);
}

START_TEST (plan_controls_need_every_role)
{
  g_autofree gchar *alice = token_digest ("alice-token-0123456789");
  g_autofree gchar *bob = token_digest ("bob-token-0123456789ab");
  g_autofree gchar *config = g_strdup_printf ("[staggerd]\ntcp_trusted = true\n"
                                              "[users]\nalice = %s www\nbob = %s www data\n",
                                              alice, bob);
  g_autofree gchar *path = g_build_filename (dfx.dir, "staggerd.conf", NULL);
  g_autofree gchar *data = g_build_filename (dfx.dir, "data", NULL);
  g_autofree gchar *arg = g_strconcat ("--config=", path, NULL);
  ck_assert (g_file_set_contents (path, config, -1, NULL));
  ck_assert (g_chmod (path, 0600) == 0);
  StgTestDaemon *d = stg_test_daemon_start (data, arg, "--runtime=simulated", NULL);

  stg_rollout_create_plain_job (d, "www", "front", 1);
  stg_rollout_create_plain_job (d, "data", "store", 1);
  g_autoptr (ApiRolloutPlan) plan = g_object_new (API_TYPE_ROLLOUT_PLAN, "name", "roles", NULL);
  ApiRolloutStage *front = stg_rollout_plan_stage ("front", "www", "front", 1, NULL);
  ApiRolloutStage *store = stg_rollout_plan_stage ("store", "data", "store", 1, "front");
  g_object_set (front, "requireApproval", TRUE, NULL);
  g_ptr_array_add (plan->stages, front);
  g_ptr_array_add (plan->stages, store);
  g_autofree gchar *id = stg_rollout_start_plan (d, plan);
  g_autoptr (JsonNode) waiting = wait_plan (d, id, "front", "AWAITING_APPROVAL", 30000);
  ck_assert (
      json_object_get_boolean_member (plan_stage_json (waiting, "front"), "require_approval"));

  g_autofree gchar *cookie = NULL, *token = NULL;
  new_session (d, &cookie, &token);
  g_autofree gchar *nobody = g_strdup_printf ("Cookie: %s\r\nX-Stagger-CSRF: %s\r\n", cookie,
                                              token);
  g_autofree gchar *as_alice =
      g_strdup_printf ("%sAuthorization: Bearer alice-token-0123456789\r\n", nobody);
  g_autofree gchar *as_bob = g_strdup_printf ("%sAuthorization: Bearer bob-token-0123456789ab\r\n",
                                              nobody);
  /* Nobody signed in is asked to; alice may change www but not data. */
  ck_assert_uint_eq (plan_control (d, id, "approve", nobody, NULL), 401);
  g_autofree gchar *apath = g_strdup_printf ("/ui/api/plan/%s/approve", id);
  StgTestReply refused = stg_test_http (d->http_port, "POST", apath, as_alice, NULL);
  ck_assert_uint_eq (refused.status, 403);
  ck_assert_ptr_nonnull (strstr (refused.body, "role data"));
  stg_test_reply_clear (&refused);
  ck_assert_uint_eq (plan_control (d, id, "pause", as_alice, NULL), 403);
  g_autoptr (JsonNode) still = get_plan (d, id);
  ck_assert_str_eq (json_object_get_string_member (json_node_get_object (still), "status"),
                    "AWAITING_APPROVAL");
  ck_assert_uint_eq (plan_control (d, id, "approve", as_bob, NULL), 200);
  g_autoptr (JsonNode) done = wait_plan (d, id, NULL, "DONE", 30000);
  ck_assert_str_eq (json_object_get_string_member (plan_stage_json (done, "front"), "approved_by"),
                    "bob");
  dfx_stop (d);
}
END_TEST

/* Set @name selecting jobs of @role (a role or a pattern) written into the
 * store in @data before staggerd opens it: no runtime but the fleet's runs
 * pods, and only this test's rules need a set. */
static void
put_sidecar_set (const gchar *data, const gchar *name, const gchar *role)
{
  g_autofree gchar *path = g_build_filename (data, "stagger.db", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiSidecarUpdateSettings) settings = g_object_new (API_TYPE_SIDECAR_UPDATE_SETTINGS,
                                                                NULL);

  ck_assert (g_mkdir_with_parents (data, 0700) == 0);
  g_autoptr (StgStore) store = stg_store_open (path, &error);
  ck_assert_msg (store != NULL, "%s", error ? error->message : "");
  StgSidecarSetRow row = { .name = (gchar *) name,
                           .role = (gchar *) role,
                           .environment = (gchar *) "prod",
                           .job = (gchar *) "*",
                           .version = 1,
                           .inject_version = 1,
                           .status = API_JOB_UPDATE_STATUS_ROLLED_FORWARD,
                           .reason = (gchar *) "",
                           .settings = settings,
                           .user = (gchar *) "test",
                           .created_ms = 1 };
  ck_assert_msg (stg_store_insert_sidecar_set (store, &row, &error), "%s", error->message);
}

/* A sidecar set's controls need a user of the role it selects, or of every
 * role when it selects a pattern (one rule, the engine's, for the page and
 * the API). Past that rule the set's state refuses the pause: 409. */
START_TEST (sidecar_controls_need_the_sets_role)
{
  g_autofree gchar *alice = token_digest ("alice-token-0123456789");
  g_autofree gchar *dave = token_digest ("dave-token-0123456789ab");
  g_autofree gchar *root = token_digest ("root-token-0123456789ab");
  g_autofree gchar *config = g_strdup_printf ("[users]\nalice = %s www\ndave = %s data\n"
                                              "root = %s *\n",
                                              alice, dave, root);
  g_autofree gchar *path = g_build_filename (dfx.dir, "staggerd.conf", NULL);
  g_autofree gchar *data = g_build_filename (dfx.dir, "data", NULL);
  g_autofree gchar *arg = g_strconcat ("--config=", path, NULL);
  ck_assert (g_file_set_contents (path, config, -1, NULL));
  ck_assert (g_chmod (path, 0600) == 0);
  put_sidecar_set (data, "web", "www");
  put_sidecar_set (data, "every", "*");
  StgTestDaemon *d = stg_test_daemon_start (data, arg, "--runtime=simulated", NULL);

  /* Its page's data: the count of instances carrying it, and the list. */
  StgTestReply details = stg_test_http (d->http_port, "GET", "/ui/api/sidecar?name=web", NULL,
                                        NULL);
  ck_assert_msg (details.status == 200, "%u %s", details.status, details.body);
  g_autoptr (JsonNode) dn = stg_test_parse_json (details.body);
  JsonObject *dobj = json_node_get_object (dn);
  ck_assert (JSON_NODE_HOLDS_VALUE (json_object_get_member (dobj, "instances")));
  ck_assert_int_eq (json_object_get_int_member (dobj, "instances"), 0);
  ck_assert (JSON_NODE_HOLDS_ARRAY (json_object_get_member (dobj, "members")));
  stg_test_reply_clear (&details);

  g_autofree gchar *cookie = NULL, *token = NULL;
  new_session (d, &cookie, &token);
  static const struct
  {
    const gchar *who;
    const gchar *set;
    guint status;
    const gchar *says;
  } cases[] = {
    { NULL, "web", 401, NULL },
    { "alice-token-0123456789", "web", 409, NULL },
    { "dave-token-0123456789ab", "web", 403, "role www" },
    { "alice-token-0123456789", "every", 403, "every role" },
    { "root-token-0123456789ab", "every", 409, NULL },
    { "root-token-0123456789ab", "gone", 404, NULL },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree gchar *headers = g_strdup_printf ("Cookie: %s\r\nX-Stagger-CSRF: %s\r\n%s%s%s",
                                                   cookie, token,
                                                   cases[i].who ? "Authorization: Bearer " : "",
                                                   cases[i].who ? cases[i].who : "",
                                                   cases[i].who ? "\r\n" : "");
      g_autofree gchar *url = g_strdup_printf ("/ui/api/sidecar/%s/pause", cases[i].set);
      StgTestReply r = stg_test_http (d->http_port, "POST", url, headers, NULL);
      ck_assert_msg (r.status == cases[i].status, "case %u: %u, not %u: %s", i, r.status,
                     cases[i].status, r.body);
      ck_assert_msg (cases[i].says == NULL || strstr (r.body, cases[i].says) != NULL, "case %u: %s",
                     i, r.body);
      stg_test_reply_clear (&r);
    }
  dfx_stop (d);
}
END_TEST

START_TEST (ten_thousand_instances_stay_small)
{
  /* Ten thousand processes are no test; simulated instances are rows. */
  StgTestDaemon *d = dfx_start ("--runtime=simulated", NULL);

  create_job (d, "big", 10000);
  g_autofree gchar *id = start_update (d, "big", 10000, "wide");
  g_autofree gchar *path = g_strdup_printf ("/ui/api/update?role=www&environment=prod&name=big&id=%s", id);
  StgTestReply u = stg_test_http (d->http_port, "GET", path, NULL, NULL);
  ck_assert_uint_eq (u.status, 200);
  g_autoptr (JsonNode) node = stg_test_parse_json (u.body);
  JsonObject *inst = json_object_get_object_member (json_node_get_object (node), "instances");
  ck_assert_str_eq (json_object_get_string_member (inst, "ranges"), "0-9999");
  ck_assert_uint_eq (strlen (json_object_get_string_member (inst, "states")), 10000);
  /* One letter an instance, plus a fixed part. */
  ck_assert_uint_lt (strlen (u.body), 10000 + 16 * 1024);
  StgTestReply jobs = stg_test_http (d->http_port, "GET", "/ui/api/jobs", NULL, NULL);
  ck_assert_uint_eq (jobs.status, 200);
  g_autoptr (JsonNode) jn = stg_test_parse_json (jobs.body);
  JsonObject *job = json_array_get_object_element (
      json_object_get_array_member (json_node_get_object (jn), "jobs"), 0);
  JsonObject *upd = json_object_get_object_member (job, "update");
  ck_assert_int_eq (json_object_get_int_member (upd, "total"), 10000);
  stg_test_reply_clear (&u);
  stg_test_reply_clear (&jobs);
  dfx_stop (d);
}
END_TEST

START_TEST (changes_are_pushed_to_open_pages)
{
  StgTestDaemon *d = dfx_start (NULL);
  g_autoptr (GSocketClient) client = g_socket_client_new ();
  g_autoptr (GSocketConnection) conn = g_socket_client_connect_to_host (client, "127.0.0.1",
                                                                        d->http_port, NULL, NULL);
  static const gchar req[] = "GET /ui/api/events HTTP/1.1\r\nHost: localhost\r\n\r\n";
  g_autoptr (GString) seen = g_string_new (NULL);

  g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (conn)), req, sizeof req - 1,
                             NULL, NULL, NULL);
  ck_assert (read_until (conn, seen, ": connected\n\n", 10000));
  create_job (d, "live", 2);
  g_autofree gchar *id = start_update (d, "live", 2, NULL);
  g_autofree gchar *want = g_strdup_printf ("\"id\":\"%s\"", id);
  ck_assert_msg (read_until (conn, seen, want, 10000), "no change event: %s", seen->str);
  ck_assert_ptr_nonnull (strstr (seen->str, "event: change"));
  ck_assert_ptr_nonnull (strstr (seen->str, "\"kind\":\"update\""));
  dfx_stop (d);
}
END_TEST

/* The change number in a /ui/api/wait answer. */
static gint64
wait_seq (const StgTestReply *r)
{
  ck_assert_msg (r->status == 200, "wait: %u %s", r->status, r->body);
  g_autoptr (JsonNode) n = stg_test_parse_json (r->body);
  return json_object_get_int_member (json_node_get_object (n), "seq");
}

START_TEST (wait_answers_when_the_update_changes)
{
  StgTestDaemon *d = dfx_start (NULL);
  static const gchar *bad[] = {
    "/ui/api/wait",
    "/ui/api/wait?update=",
    "/ui/api/wait?update=x&since=abc",
    "/ui/api/wait?update=x&timeout_ms=30001",
    "/ui/api/wait?update=x&timeout_ms=-1",
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      StgTestReply r = stg_test_http (d->http_port, "GET", bad[i], NULL, NULL);
      ck_assert_msg (r.status == 400, "%s: %u", bad[i], r.status);
      stg_test_reply_clear (&r);
    }
  StgTestReply post = stg_test_http (d->http_port, "POST", "/ui/api/wait?update=x", NULL, NULL);
  ck_assert_uint_eq (post.status, 405);
  stg_test_reply_clear (&post);

  /* Nothing known of an update: its poll times out with the floor. */
  StgTestReply none = stg_test_http (d->http_port, "GET",
                                     "/ui/api/wait?update=nope&since=0&timeout_ms=200", NULL, NULL);
  ck_assert_int_eq (wait_seq (&none), 0);
  stg_test_reply_clear (&none);

  create_job (d, "waited", 2);
  g_autofree gchar *id = start_update (d, "waited", 2, NULL);
  g_autofree gchar *now = g_strdup_printf ("/ui/api/wait?update=%s&timeout_ms=0", id);
  StgTestReply first = stg_test_http (d->http_port, "GET", now, NULL, NULL);
  gint64 seq = wait_seq (&first);
  stg_test_reply_clear (&first);
  ck_assert_int_gt (seq, 0);

  /* A poll from the current number parks until the update moves on, and
   * answers with a newer number (a timeout would repeat the old one). */
  g_autofree gchar *next = g_strdup_printf ("/ui/api/wait?update=%s&since=%" G_GINT64_FORMAT
                                            "&timeout_ms=30000",
                                            id, seq);
  StgTestReply moved = stg_test_http (d->http_port, "GET", next, NULL, NULL);
  ck_assert_int_gt (wait_seq (&moved), seq);
  stg_test_reply_clear (&moved);

  /* A poll still parked when the daemon stops does not keep it up. */
  g_autoptr (GSocketClient) client = g_socket_client_new ();
  g_autoptr (GSocketConnection) conn = g_socket_client_connect_to_host (client, "127.0.0.1",
                                                                        d->http_port, NULL, NULL);
  g_autofree gchar *req = g_strdup_printf ("GET /ui/api/wait?update=nope&since=0&timeout_ms=30000 "
                                           "HTTP/1.1\r\nHost: localhost\r\n\r\n");
  g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (conn)), req, strlen (req),
                             NULL, NULL, NULL);
  g_autoptr (GString) seen = g_string_new (NULL);
  ck_assert (read_until (conn, seen, "application/json", 10000));
  dfx_stop (d);
}
END_TEST

START_TEST (instance_routes_check_their_input)
{
  StgTestDaemon *d = dfx_start ("--runtime=simulated", NULL);
  create_job (d, "picked", 2);
  static const struct
  {
    const gchar *path;
    guint status;
  } cases[] = {
    { "/ui/api/instance?role=www&environment=prod&name=picked&instance=1", 200 },
    { "/ui/api/instance?role=www&environment=prod&name=picked&instance=2", 404 },
    { "/ui/api/instance?role=www&environment=prod&name=picked&instance=-1", 400 },
    { "/ui/api/instance?role=www&environment=prod&name=picked", 400 },
    { "/ui/api/instance?role=www&environment=prod&name=nosuch&instance=0", 404 },
    { "/ui/api/instance?role=..&environment=prod&name=picked&instance=0", 400 },
    { "/ui/api/instance/log?role=www&environment=prod&name=picked&instance=0&stream=bogus", 400 },
    /* The simulated runtime keeps no output. */
    { "/ui/api/instance/log?role=www&environment=prod&name=picked&instance=0", 404 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      StgTestReply r = stg_test_http (d->http_port, "GET", cases[i].path, NULL, NULL);
      ck_assert_msg (r.status == cases[i].status, "%s: %u, not %u: %s", cases[i].path, r.status,
                     cases[i].status, r.body);
      stg_test_reply_clear (&r);
    }
  StgTestReply ok = stg_test_http (d->http_port, "GET", cases[0].path, NULL, NULL);
  g_autoptr (JsonNode) n = stg_test_parse_json (ok.body);
  JsonObject *o = json_node_get_object (n);
  ck_assert_int_eq (json_object_get_int_member (o, "instance"), 1);
  ck_assert (json_object_has_member (o, "events") && json_object_has_member (o, "stdout_tail"));
  stg_test_reply_clear (&ok);
  StgTestReply post = stg_test_http (d->http_port, "POST", cases[0].path, NULL, NULL);
  ck_assert_uint_eq (post.status, 405);
  stg_test_reply_clear (&post);
  dfx_stop (d);
}
END_TEST

static Suite *
webui_suite (void)
{
  Suite *s = suite_create ("webui");
  TCase *tc = tcase_create ("http");

  tcase_set_timeout (tc, 120);
  tcase_add_checked_fixture (tc, dfx_setup, dfx_teardown);
  tcase_add_test (tc, pages_and_assets);
  tcase_add_test (tc, assets_from_a_folder);
  tcase_add_test (tc, session_and_jobs_data);
  tcase_add_test (tc, updates_data_checks_queries);
  tcase_add_test (tc, event_stream_opens_and_survives_shutdown);
  tcase_add_test (tc, update_page_data_and_controls);
  tcase_add_test (tc, update_diff_shows_every_field);
  tcase_add_test (tc, surge_instances_are_marked);
  tcase_add_test (tc, plan_pages_data_and_controls);
  tcase_add_test (tc, plan_controls_need_every_role);
  tcase_add_test (tc, sidecar_controls_need_the_sets_role);
  tcase_add_test (tc, ten_thousand_instances_stay_small);
  tcase_add_test (tc, changes_are_pushed_to_open_pages);
  tcase_add_test (tc, wait_answers_when_the_update_changes);
  tcase_add_test (tc, instance_routes_check_their_input);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return dfx_run (webui_suite ());
}
