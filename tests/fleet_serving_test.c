/* fleet_serving_test.c: how staggerd --runtime=fleet judges a pod's
 * serving hot sidecar, on one real podman host: one round of failed
 * checks (its health command fails once, as a check that times out on a
 * loaded machine) while its container runs is not enough to restart it;
 * the checks go on, and a second round in a row would decide, as for a
 * main container. Host ports come from 19550-19569 (no other suite uses
 * them). Test process, main thread.
 */
#include "config.h"

#include <check.h>
#include <string.h>

#include "fleet_fixture.h"

#define SLEEPER "{\"command\": \"sleep 600\", \"stop_timeout_secs\": 1}"

/* The sidecar's check counts itself in /.stagger/checks (the pod's
 * shared volume) and fails once while /.stagger/flake exists. */
#define FLAKY_SIDECAR \
  "{\"command\": \"sleep 600\", \"hot_upgrade\": true, \"stop_timeout_secs\": 1," \
  " \"health_check\": {\"shell\": {\"shell_command\": \"echo x >> /.stagger/checks;" \
  " if [ -f /.stagger/flake ]; then rm /.stagger/flake; exit 1; fi\"}," \
  " \"initial_interval_secs\": 1, \"interval_secs\": 0.3, \"timeout_secs\": 5}}"

/* applySidecarSet of "proxy" (selecting every job of www/prod): the flaky sidecar. */
static void
apply_sidecar (StgTestDaemon *d)
{
  g_autoptr (ApiSidecar) sc = g_object_new (API_TYPE_SIDECAR, "image", STG_FLEET_IMAGE_V1,
                                            "executorData", FLAKY_SIDECAR, NULL);

  g_ptr_array_add (sc->ports, g_strdup ("proxy"));
  g_autoptr (ApiResponse) r = stg_fleet_apply_proxy (d, "*", sc, 1);
  ck_assert_msg (r->responseCode == API_RESPONSE_CODE_OK, "applySidecarSet: %s",
                 stg_fleet_detail (r));
}

typedef struct
{
  StgFleetEnv *e;
  StgTestDaemon *d;
  gchar *main_id; /* the pod's main container */
} Pod;

/* Runs @script in the pod's main container; its output. */
static gchar *
in_pod (Pod *p, const gchar *script)
{
  return stg_test_podman_cli (p->e->fleet, p->e->fleet->hosts->pdata[0], "exec", p->main_id, "sh",
                              "-c", script, NULL);
}

static gboolean
sidecar_serves (gpointer data)
{
  Pod *p = data;
  g_autofree gchar *messages = stg_fleet_task_messages (p->d, NULL);
  gboolean ok = strstr (messages, "healthy on host0") != NULL &&
                strstr (messages, "sidecar proxy: version 1 serves") != NULL;

  if (!ok)
    g_usleep (100 * 1000);
  return ok;
}

static gboolean
flake_taken (gpointer data)
{
  g_autofree gchar *left = in_pod (data, "test -f /.stagger/flake && echo left || echo taken");
  gboolean ok = g_str_has_prefix (left, "taken");

  if (!ok)
    g_usleep (100 * 1000);
  return ok;
}

/* The checks made so far. */
static guint
checks (Pod *p)
{
  g_autofree gchar *n = in_pod (p, "cat /.stagger/checks 2>/dev/null | wc -l");

  return (guint) g_ascii_strtoull (n, NULL, 10);
}

typedef struct
{
  Pod *p;
  guint until;
} Count;

static gboolean
checked_enough (gpointer data)
{
  Count *c = data;
  gboolean ok = checks (c->p) >= c->until;

  if (!ok)
    g_usleep (100 * 1000);
  return ok;
}

static guint
count (const gchar *text, const gchar *what)
{
  guint n = 0;

  for (const gchar *at = strstr (text, what); at != NULL; at = strstr (at + 1, what))
    n++;
  return n;
}

/* #36 17: the serving version's health command fails once, then passes:
 * its container keeps serving, the instance's events say the checks go
 * on, and nothing failed or started again. */
START_TEST (serving_sidecar_survives_one_failed_round)
{
  Pod p = { stg_fleet_env_new (1, NULL), NULL, NULL };
  g_autofree gchar *config = g_strconcat ("--config=", p.e->conf, NULL);
  g_autofree gchar *anchor = g_strconcat ("--anchor=", STG_BUILDDIR, "/stagger-anchor", NULL);
  g_autoptr (ApiJobConfiguration) job = stg_fleet_job ("podded", 1, STG_FLEET_IMAGE_V1, SLEEPER,
                                                       NULL, NULL);

  p.d = stg_test_daemon_start (p.e->data_dir, "--runtime=fleet", config, "--port-range=19550-19569",
                               anchor, NULL);
  apply_sidecar (p.d);
  stg_fleet_create_job (p.d, job);
  ck_assert_msg (stg_test_wait (sidecar_serves, &p, 120000), "the pod never served");
  g_autofree gchar *ids = stg_test_podman_cli (p.e->fleet, p.e->fleet->hosts->pdata[0], "ps", "-q",
                                               "--no-trunc", "--filter",
                                               "label=org.stagger.role=main", NULL);
  p.main_id = g_strstrip (g_strdup (ids));
  ck_assert_msg (p.main_id[0] != '\0' && strchr (p.main_id, '\n') == NULL, "main: %s", p.main_id);
  g_autofree gchar *before = stg_fleet_task_messages (p.d, NULL);

  g_free (in_pod (&p, "touch /.stagger/flake"));
  ck_assert_msg (stg_test_wait (flake_taken, &p, 30000), "the check never ran");
  Count c = { &p, checks (&p) + 10 };
  ck_assert_msg (stg_test_wait (checked_enough, &c, 60000), "the checks stopped");

  g_autofree gchar *after = stg_fleet_task_messages (p.d, NULL);
  ck_assert_msg (strstr (after, "failed in") == NULL, "one failed check failed it:\n%s", after);
  ck_assert_msg (count (after, "started in") == count (before, "started in"),
                 "the serving version was started again:\n%s", after);
  ck_assert_msg (strstr (after, "checking again") != NULL, "not a word of it:\n%s", after);
  ck_assert_int_eq (stg_test_daemon_stop (p.d), 0);
  stg_test_daemon_free (p.d);
  g_free (p.main_id);
  stg_fleet_env_free (p.e);
}
END_TEST

static Suite *
fleet_serving_suite (void)
{
  Suite *s = suite_create ("fleet_serving");
  TCase *tc = tcase_create ("serving sidecar");

  tcase_set_timeout (tc, 600);
  tcase_add_test (tc, serving_sidecar_survives_one_failed_round);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return stg_test_podman_main (fleet_serving_suite ());
}
