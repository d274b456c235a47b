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
#include "daemon_fixture.h"

#define PAGE_PORT_MIN "26000"

static gchar *env_dir;

static void
prepare (void)
{
  static const gchar *const scripts[] = { "cross_site.mjs", NULL };
  env_dir = stg_browser_env_prepare ("browser-env-security", scripts);
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
  StgTestReply r = stg_test_http (d->http_port, "POST", "/api",
                                  "Content-Type: application/vnd.apache.thrift.json\r\n", body);

  stg_test_reply_clear (&r);
  return r.status;
}

START_TEST (a_page_of_another_origin_cannot_create_jobs)
{
  StgTestDaemon *d = dfx_start ("--runtime=simulated", NULL);
  g_autofree gchar *body = create_job_json ("forged");
  g_autofree gchar *body_file = g_build_filename (dfx.dir, "create.json", NULL);
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
  dfx_stop (d);
}
END_TEST

static Suite *
cross_site_suite (void)
{
  Suite *s = suite_create ("cross_site");
  TCase *tc = tcase_create ("csrf");

  tcase_set_timeout (tc, 240);
  tcase_add_unchecked_fixture (tc, prepare, NULL);
  tcase_add_checked_fixture (tc, dfx_setup, dfx_teardown);
  tcase_add_test (tc, a_page_of_another_origin_cannot_create_jobs);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  int status = dfx_run (cross_site_suite ());
  g_free (env_dir);
  return status;
}
