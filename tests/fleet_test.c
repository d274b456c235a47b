/* fleet_test.c: the fleet runtime's suite, against real podman services
 * (tests/podman_hosts.c) standing in for container hosts. Host ports handed
 * to containers come from 44000-45999. Test process, main thread. */
#include "config.h"

#include <check.h>
#include <string.h>

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

static Suite *
fleet_suite (void)
{
  Suite *s = suite_create ("fleet");
  TCase *tc = tcase_create ("podman");

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
