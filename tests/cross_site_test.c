/* cross_site_test.c: cross-site request forgery against /api, in Debian's
 * headless Chromium. A page served from another origin
 * (tests/browser/cross_site.mjs) posts a createJob to a real staggerd in
 * every way a page may without asking; nothing may be created. The same
 * message posted by a plain client creates the job, so the refusal is the
 * daemon's doing and not a bad message. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "api/json_protocol.h"
#include "browser_env.h"
#include "common/mem_transport.h"
#include "testutil.h"

#define PAGE_PORT_MIN "26000"

static gchar *dir;
static gchar *env_dir;

static void
prepare (void)
{
  static const gchar *const scripts[] = { "cross_site.mjs", NULL };
  env_dir = stg_browser_env_prepare ("browser-env-security", scripts);
}

static void
setup (void)
{
  dir = stg_test_tmpdir ();
}

static void
teardown (void)
{
  stg_test_rmtree (dir);
  g_clear_pointer (&dir, g_free);
}

/* createJob of www/prod/@name as one Thrift JSON message. */
static gchar *
create_job_json (const gchar *name)
{
  g_autoptr (StgMemTransport) t = stg_mem_transport_new (NULL, 1 << 20);
  g_autoptr (ThriftProtocol) p = stg_json_protocol_new (THRIFT_TRANSPORT (t));
  g_autoptr (GObject) client = g_object_new (API_TYPE_AURORA_SCHEDULER_MANAGER_CLIENT, "input_protocol", p,
                                             "output_protocol", p, NULL);
  g_autoptr (ApiJobConfiguration) job = stg_test_job ("www", "prod", name, 1, "sleep 60");
  g_autoptr (GError) error = NULL;

  ck_assert_msg (api_aurora_scheduler_manager_client_send_create_job (
                   API_AURORA_SCHEDULER_MANAGER_IF (client), job, &error), "%s", error ? error->message : "");
  gsize len = 0;
  const guint8 *data = stg_mem_transport_output (t, &len);
  return g_strndup ((const gchar *) data, len);
}

/* Whether www has a job called @name. */
static gboolean
job_exists (StgTestDaemon *d, const gchar *name)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (GError) error = NULL;

  ck_assert_msg (api_read_only_scheduler_if_get_jobs (API_READ_ONLY_SCHEDULER_IF (c->client), &r, "www", &error),
                 "getJobs: %s", error ? error->message : "");
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init (&it, r->result->getJobsResult->configs);
  while (g_hash_table_iter_next (&it, &key, NULL))
    if (g_str_equal (((ApiJobConfiguration *) key)->key->name, name))
      return TRUE;
  return FALSE;
}

/* POSTs @body to /api as a plain client does; returns the status. */
static guint
post_api (StgTestDaemon *d, const gchar *body)
{
  g_autoptr (GSocketClient) client = g_socket_client_new ();
  g_autoptr (GError) error = NULL;
  g_autoptr (GSocketConnection) conn = g_socket_client_connect_to_host (client, "127.0.0.1", d->http_port,
                                                                        NULL, &error);
  ck_assert_msg (conn != NULL, "connect: %s", error ? error->message : "");
  g_autofree gchar *req = g_strdup_printf ("POST /api HTTP/1.0\r\nHost: 127.0.0.1\r\n"
                                           "Content-Type: application/vnd.apache.thrift.json\r\n"
                                           "Content-Length: %zu\r\n\r\n%s", strlen (body), body);
  ck_assert (g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (conn)), req,
                                        strlen (req), NULL, NULL, &error));
  gchar head[64] = { 0 };
  ck_assert (g_input_stream_read_all (g_io_stream_get_input_stream (G_IO_STREAM (conn)), head,
                                      sizeof head - 1, NULL, NULL, &error));
  guint status = 0;
  ck_assert_msg (sscanf (head, "HTTP/1.%*d %u", &status) == 1, "no status in %s", head);
  return status;
}

START_TEST (a_page_of_another_origin_cannot_create_jobs)
{
  StgTestDaemon *d = stg_test_daemon_start (dir, "--runtime=simulated", NULL);
  g_autofree gchar *body = create_job_json ("forged");
  g_autofree gchar *body_file = g_build_filename (dir, "create.json", NULL);
  ck_assert (g_file_set_contents (body_file, body, -1, NULL));
  g_autofree gchar *api = g_strdup_printf ("http://127.0.0.1:%u/api", d->http_port);
  g_autofree gchar *last = NULL, *output = NULL;

  gint status = stg_browser_env_run (env_dir, &last, &output, "cross_site.mjs", api, body_file,
                                     PAGE_PORT_MIN, NULL);
  ck_assert_msg (status == 0, "the page did not run: %s", output);
  g_autoptr (JsonNode) result = stg_test_parse_json (last);
  JsonArray *attempts = json_object_get_array_member (json_node_get_object (result), "attempts");
  ck_assert_uint_eq (json_array_get_length (attempts), 3);
  ck_assert_msg (!job_exists (d, "forged"), "a page of another origin created a job: %s", output);

  /* The message itself is good: a plain client creates the job with it. */
  ck_assert_uint_eq (post_api (d, body), 200);
  ck_assert (job_exists (d, "forged"));
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
}
END_TEST

static Suite *
cross_site_suite (void)
{
  Suite *s = suite_create ("cross_site");
  TCase *tc = tcase_create ("csrf");

  tcase_set_timeout (tc, 240);
  tcase_add_unchecked_fixture (tc, prepare, NULL);
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, a_page_of_another_origin_cannot_create_jobs);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  gchar *scope = stg_test_scope_begin ();
  SRunner *sr = srunner_create (cross_site_suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  stg_test_scope_end (scope);
  g_free (env_dir);
  return failed == 0 ? 0 : 1;
}
