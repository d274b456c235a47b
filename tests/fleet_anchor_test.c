/* fleet_anchor_test.c: what staggerd --runtime=fleet says about pods'
 * anchors (stagger-anchor), on one real podman host. A pod whose anchor
 * cannot listen on a port (something else has it) fails at once, naming
 * the port and the host; a staggerd with no usable anchor says nothing of
 * it until a pod is asked for, and then says how to give it one (the
 * --anchor flag). Host ports come from 17750-17829 (no other suite uses
 * them). Test process, main thread.
 */
#include "config.h"

#include <check.h>
#include <string.h>

#include "fleet_fixture.h"

#define BUSY_FIRST 17750
#define BUSY_LAST 17759
#define SLEEPER "{\"command\": \"sleep 600\", \"stop_timeout_secs\": 1}"

/* applySidecarSet of "proxy" (selecting every job of www/prod): a socket-activated
 * sidecar with the port "proxy", which each pod's anchor listens on.
 * Returns the response. */
static ApiResponse *
apply_proxy (StgTestDaemon *d)
{
  g_autoptr (ApiSidecar) sc =
      g_object_new (API_TYPE_SIDECAR, "image", STG_FLEET_IMAGE_V1, "executorData",
                    "{\"command\": \"sleep 600\", \"hot_upgrade\": true, \"stop_timeout_secs\": 1}",
                    "socketActivation", TRUE, NULL);

  g_ptr_array_add (sc->ports, g_strdup ("proxy"));
  return stg_fleet_apply_proxy (d, "*", sc, 1);
}

/* A listening socket on every address, port @port, as a program of the
 * host that has the port would have. */
static GSocket *
occupy (guint16 port)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GSocket) s = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM,
                                        G_SOCKET_PROTOCOL_TCP, &error);
  g_autoptr (GInetAddress) any = g_inet_address_new_any (G_SOCKET_FAMILY_IPV4);
  g_autoptr (GSocketAddress) addr = g_inet_socket_address_new (any, port);

  ck_assert_msg (s != NULL && g_socket_bind (s, addr, TRUE, &error) && g_socket_listen (s, &error),
                 "cannot listen on port %u: %s", port, error ? error->message : "");
  return g_steal_pointer (&s);
}

typedef struct
{
  StgTestDaemon *d;
  gchar *messages; /* the tasks' events when the wait ended */
} Told;

/* Whether events name one of the busy ports and the host, from two
 * starts of the pod: the one that failed is started again after its
 * back-off, not left behind (or worse) by the failed anchor's removal. */
static gboolean
names_the_port_twice (gpointer data)
{
  Told *t = data;
  g_autoptr (GRegex) re = g_regex_new ("port 1775[0-9].*host0|host0.*port 1775[0-9]", 0, 0, NULL);
  g_autoptr (GMatchInfo) match = NULL;
  guint told = 0;

  g_free (t->messages);
  t->messages = stg_fleet_task_messages (t->d, NULL);
  for (g_regex_match (re, t->messages, 0, &match); g_match_info_matches (match);
       g_match_info_next (match, NULL))
    told++;
  if (told >= 2)
    return TRUE;
  g_usleep (100 * 1000);
  return FALSE;
}

/* Every port a pod could get is taken on the host: the pod fails within
 * seconds, its task's events naming the port and the host, and is tried
 * again after its back-off, failing the same way. */
START_TEST (fleet_anchor_names_a_busy_port)
{
  StgFleetEnv *e = stg_fleet_env_new (1, NULL);
  g_autoptr (GPtrArray) busy = g_ptr_array_new_with_free_func (g_object_unref);
  g_autofree gchar *config = g_strconcat ("--config=", e->conf, NULL);
  g_autofree gchar *anchor = g_strconcat ("--anchor=", STG_BUILDDIR, "/stagger-anchor", NULL);
  g_autofree gchar *range = g_strdup_printf ("--port-range=%d-%d", BUSY_FIRST, BUSY_LAST);
  g_autoptr (ApiJobConfiguration) job = stg_fleet_job ("podded", 1, STG_FLEET_IMAGE_V1, SLEEPER,
                                                       NULL, NULL);

  for (guint16 p = BUSY_FIRST; p <= BUSY_LAST; p++)
    g_ptr_array_add (busy, occupy (p));
  StgTestDaemon *d = stg_test_daemon_start (e->data_dir, "--runtime=fleet", config, range, anchor,
                                            NULL);
  g_autoptr (ApiResponse) r = apply_proxy (d);
  ck_assert_msg (r->responseCode == API_RESPONSE_CODE_OK, "applySidecarSet: %s",
                 stg_fleet_detail (r));
  stg_fleet_create_job (d, job);
  Told t = { d, NULL };
  gboolean told = stg_test_wait (names_the_port_twice, &t, 20000);
  ck_assert_msg (told, "no two starts' events named the busy port and the host:\n%s", t.messages);
  g_free (t.messages);
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
  stg_fleet_env_free (e);
}
END_TEST

static gboolean
runs (gpointer data)
{
  StgTestDaemon *d = data;
  g_autofree gchar *messages = stg_fleet_task_messages (d, NULL);
  gboolean ok = strstr (messages, "healthy on host0") != NULL;

  if (!ok)
    g_usleep (100 * 1000);
  return ok;
}

/* No anchor, no pods: not a word of the anchor in the log while jobs run
 * without them; asked for a pod (a sidecar set), the refusal and the log
 * both name --anchor. */
START_TEST (fleet_without_anchor_warns_only_when_pods_are_asked_for)
{
  StgFleetEnv *e = stg_fleet_env_new (1, NULL);
  g_autofree gchar *config = g_strconcat ("--config=", e->conf, NULL);
  g_autofree gchar *anchor = g_strconcat ("--anchor=", e->data_dir, "/no-such-anchor", NULL);
  g_autofree gchar *log = g_build_filename (e->data_dir, "staggerd.log", NULL);
  g_autoptr (ApiJobConfiguration) job = stg_fleet_job ("plain", 1, STG_FLEET_IMAGE_V1, SLEEPER,
                                                       NULL, NULL);

  StgTestDaemon *d = stg_test_daemon_start_logged (e->data_dir, log, "--runtime=fleet", config,
                                                   "--port-range=17760-17769", anchor, NULL);
  stg_fleet_create_job (d, job);
  ck_assert_msg (stg_test_wait (runs, d, 120000), "the job never ran");
  g_autofree gchar *quiet = NULL;
  ck_assert (g_file_get_contents (log, &quiet, NULL, NULL));
  ck_assert_msg (strstr (quiet, "anchor") == NULL, "the log speaks of the anchor:\n%s", quiet);

  g_autoptr (ApiResponse) r = apply_proxy (d);
  ck_assert_int_ne (r->responseCode, API_RESPONSE_CODE_OK);
  ck_assert_msg (strstr (stg_fleet_detail (r), "--anchor") != NULL, "%s", stg_fleet_detail (r));
  g_autofree gchar *warned = NULL;
  ck_assert (g_file_get_contents (log, &warned, NULL, NULL));
  ck_assert_msg (strstr (warned, "--anchor") != NULL, "the log does not say what to do:\n%s",
                 warned);
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
  stg_fleet_env_free (e);
}
END_TEST

static Suite *
fleet_anchor_suite (void)
{
  Suite *s = suite_create ("fleet_anchor");
  TCase *tc = tcase_create ("anchor");

  tcase_set_timeout (tc, 600);
  tcase_add_test (tc, fleet_anchor_names_a_busy_port);
  tcase_add_test (tc, fleet_without_anchor_warns_only_when_pods_are_asked_for);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return stg_test_podman_main (fleet_anchor_suite ());
}
