/* fleet_hooks_test.c: update hooks run in containers (the exec API) get
 * the environment hooks of the local runtime get: STAGGER_HOOK,
 * STAGGER_INSTANCE, STAGGER_VERSION and the versions moved between,
 * STAGGER_FROM_VERSION and STAGGER_TO_VERSION, the right way round on a
 * rollback. staggerd --runtime=fleet on one real podman host; each hook
 * writes what it got to a file on a folder the container binds. Host
 * ports come from 17700-17749 (no other suite uses them). Test process,
 * main thread.
 */
#include "config.h"

#include <check.h>
#include <glib/gstdio.h>
#include <string.h>

#include "common/enums.h"
#include "fleet_fixture.h"
#include "rollout.h"

#define PORTS "--port-range=17700-17749"

/* What each hook writes, one line a run: hook, from, to, version, instance. */
#define SAY \
  "echo $STAGGER_HOOK $STAGGER_FROM_VERSION $STAGGER_TO_VERSION $STAGGER_VERSION " \
  "$STAGGER_INSTANCE >> /hooks/seen"

/* busybox httpd on port http with both hooks: @pre and @post. */
static gchar *
hooked_data (const gchar *pre, const gchar *post)
{
  return g_strdup_printf (
      "{\"argv\": [\"httpd\", \"-f\", \"-p\", \"{{ports[http]}}\", \"-h\", \"/www\"],"
      " \"stop_timeout_secs\": 2,"
      " \"health_check\": {\"http\": {\"endpoint\": \"/health\"}, \"timeout_secs\": 5,"
      " \"initial_interval_secs\": 10, \"interval_secs\": 0.5},"
      " \"hooks\": {\"pre_update\": \"%s\", \"post_update\": \"%s\"}}",
      pre, post);
}

static gboolean
runs (gpointer data)
{
  StgTestDaemon *d = data;
  GArray *a = stg_rollout_instances (d, "hooked");
  gboolean ok = a->len == 1 &&
                g_str_equal (g_array_index (a, StgRolloutInstance, 0).status, "RUNNING");

  stg_rollout_instances_free (a);
  if (!ok)
    g_usleep (100 * 1000);
  return ok;
}

/* startJobUpdate to @job, no failure allowed, rolled back on one; waits
 * (10 min at most: podman is slow on a busy machine) for it to end as
 * @status. */
static void
update (StgTestDaemon *d, ApiJobConfiguration *job, gint status)
{
  g_autoptr (ApiJobUpdateSettings) settings = stg_rollout_batch_settings (1, 500);
  g_autoptr (ApiJobUpdateRequest) request = g_object_new (API_TYPE_JOB_UPDATE_REQUEST, "taskConfig",
                                                          job->taskConfig, "instanceCount",
                                                          job->instanceCount, "settings", settings,
                                                          NULL);
  g_autoptr (ApiJobUpdateKey) key = stg_rollout_try_start_request (d, request, NULL);

  ck_assert (key != NULL);
  gint got = stg_rollout_wait_terminal_for (d, key, 600000);
  g_autofree gchar *events = stg_fleet_task_messages (d, NULL);
  ck_assert_msg (got == status, "the update ended %s, not %s:\n%s", stg_update_status_name (got),
                 stg_update_status_name (status), events);
}

/* Version 1 runs; an update to 2 runs 2's pre_update hook in 1's
 * container and its post_update hook in 2's, each told "from 1 to 2"; an
 * update to 3 whose post_update hook fails rolls back, and 2's
 * post_update hook in the new container of 2 is told "from 3 to 2". */
START_TEST (fleet_hooks_know_the_versions)
{
  StgFleetEnv *e = stg_fleet_env_new (1, NULL);
  g_autofree gchar *dir = g_build_filename (e->data_dir, "hooks", NULL);
  g_autofree gchar *seen_path = g_build_filename (dir, "seen", NULL);
  g_autofree gchar *volume = g_strconcat (dir, ":/hooks", NULL);
  g_autofree gchar *config = g_strconcat ("--config=", e->conf, NULL);
  g_autofree gchar *good = hooked_data (SAY, SAY);
  g_autofree gchar *bad = hooked_data (SAY, SAY "; exit 7");
  g_autoptr (ApiJobConfiguration) v1 = stg_fleet_job ("hooked", 1, STG_FLEET_IMAGE_V1, good, "http",
                                                      volume);
  g_autoptr (ApiJobConfiguration) v2 = stg_fleet_job ("hooked", 1, STG_FLEET_IMAGE_V2, good, "http",
                                                      volume);
  g_autoptr (ApiJobConfiguration) v3 = stg_fleet_job ("hooked", 1, STG_FLEET_IMAGE_V1, bad, "http",
                                                      volume);

  ck_assert_int_eq (g_mkdir (dir, 0777), 0);
  ck_assert_int_eq (g_chmod (dir, 0777), 0);
  StgTestDaemon *d = stg_test_daemon_start (e->data_dir, "--runtime=fleet", config, PORTS, NULL);
  stg_fleet_create_job (d, v1);
  ck_assert_msg (stg_test_wait (runs, d, 300000), "version 1 never ran");
  update (d, v2, API_JOB_UPDATE_STATUS_ROLLED_FORWARD);
  g_autofree gchar *forward = NULL;
  ck_assert (g_file_get_contents (seen_path, &forward, NULL, NULL));
  ck_assert_str_eq (forward, "pre_update 1 2 2 0\npost_update 1 2 2 0\n");

  update (d, v3, API_JOB_UPDATE_STATUS_ROLLED_BACK);
  ck_assert_msg (stg_test_wait (runs, d, 300000), "version 2 never ran again");
  g_autofree gchar *all = NULL;
  ck_assert (g_file_get_contents (seen_path, &all, NULL, NULL));
  ck_assert_msg (g_str_has_prefix (all, "pre_update 1 2 2 0\npost_update 1 2 2 0\n"
                                        "pre_update 2 3 3 0\npost_update 2 3 3 0\n"),
                 "%s", all);
  /* Back to 2: its pre_update hook, when the failed container of 3 still
   * ran, and its post_update hook, both from 3 to 2. */
  const gchar *back = all + strlen ("pre_update 1 2 2 0\npost_update 1 2 2 0\n"
                                    "pre_update 2 3 3 0\npost_update 2 3 3 0\n");
  ck_assert_msg (g_str_equal (back, "post_update 3 2 2 0\n") ||
                     g_str_equal (back, "pre_update 3 2 2 0\npost_update 3 2 2 0\n"),
                 "%s", all);
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
  stg_fleet_env_free (e);
}
END_TEST

static Suite *
fleet_hooks_suite (void)
{
  Suite *s = suite_create ("fleet_hooks");
  TCase *tc = tcase_create ("environment");

  tcase_set_timeout (tc, 1200);
  tcase_add_test (tc, fleet_hooks_know_the_versions);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return stg_test_podman_main (fleet_hooks_suite ());
}
