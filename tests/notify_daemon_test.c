/* notify_daemon_test.c: webhook notices survive staggerd's end. A real
 * staggerd (simulated runtime) and a real receiver that is down while
 * updates change state: staggerd killed with SIGKILL (or stopped) with
 * its notices waiting, the receiver made healthy, staggerd started again
 * on the same data dir sends them all, in order, signed, each with its
 * delivery id; past [notify] queue_size the oldest were given up, and
 * /metrics counted them. */
#include "config.h"

#include <check.h>

#include "common/enums.h"
#include "daemon_fixture.h"
#include "rollout.h"
#include "webhook_receiver.h"

/* The config file for a webhook to @r queueing @queue_size notices, and
 * staggerd's argument naming it. */
static gchar *
config (StgTestReceiver *r, gint queue_size)
{
  g_autofree gchar *conf = g_build_filename (dfx.dir, "staggerd.conf", NULL);
  g_autofree gchar *text = g_strdup_printf (
      "[gates]\nallowed_hosts = 127.0.0.1\n"
      "[notify]\nurl = http://127.0.0.1:%u/hook\nsecret = s3cret\nevents = update\n"
      "queue_size = %d\nmax_attempts = 100\nretry_secs = 1\n",
      r->port, queue_size);
  ck_assert (g_file_set_contents (conf, text, -1, NULL));
  return g_strconcat ("--config=", conf, NULL);
}

/* Updates www/prod/hooked to @command to its end; adds the notices it
 * stored to @want ("UPDATE_ID STATUS"), in order. */
static void
update_to (StgTestDaemon *d, const gchar *command, GPtrArray *want)
{
  g_autoptr (ApiJobConfiguration) job = stg_test_job ("www", "prod", "hooked", 1, command);
  g_autoptr (ApiJobUpdateSettings) settings = stg_rollout_batch_settings (1, 100);
  g_autoptr (ApiJobUpdateRequest) request = g_object_new (API_TYPE_JOB_UPDATE_REQUEST, "taskConfig",
                                                          job->taskConfig, "instanceCount", 1,
                                                          "settings", settings, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiJobUpdateKey) key = stg_rollout_try_start_request (d, request, &error);

  ck_assert_msg (key != NULL, "startJobUpdate: %s", error ? error->message : "");
  ck_assert_int_eq (stg_rollout_wait_terminal (d, key), API_JOB_UPDATE_STATUS_ROLLED_FORWARD);
  g_autoptr (ApiJobUpdateDetails) det = stg_rollout_details (d, key);
  for (guint i = 0; i < det->updateEvents->len; i++)
    g_ptr_array_add (want, g_strdup_printf ("%s %s", key->id,
                                            stg_update_status_name (
                                                ((ApiJobUpdateEvent *) det->updateEvents->pdata[i])
                                                    ->status)));
}

/* Waits until @d has @count notices waiting for the receiver, which is
 * down and has refused one at least. */
static void
wait_queued (StgTestDaemon *d, StgTestReceiver *r, gint64 count)
{
  for (gint64 end = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;;)
    {
      gint64 queued = stg_test_notify_count (d, NULL);
      if (queued == count && stg_test_receiver_refused (r) > 0)
        return;
      ck_assert_msg (g_get_monotonic_time () < end,
                     "%" G_GINT64_FORMAT " notices waiting, not %" G_GINT64_FORMAT, queued, count);
      g_usleep (100 * 1000);
    }
}

/* Checks that @lines (what the receiver took) are @want, in order, each
 * checked as stg_test_receiver_notices does. */
static void
assert_received (gchar **lines, GPtrArray *want)
{
  g_autoptr (GPtrArray) notices = stg_test_receiver_notices (lines, "s3cret");

  ck_assert_uint_eq (notices->len, want->len);
  for (guint i = 0; i < notices->len; i++)
    {
      JsonObject *n = json_node_get_object (notices->pdata[i]);
      g_autofree gchar *got = g_strdup_printf ("%s %s",
                                               json_object_get_string_member (n, "update_id"),
                                               json_object_get_string_member (n, "status"));
      ck_assert_str_eq (got, want->pdata[i]);
    }
}

/* A staggerd configured by @conf that makes www/prod/hooked and updates
 * it @updates times while the receiver is down; the notices they stored
 * go to @want. */
static StgTestDaemon *
updates_while_down (const gchar *conf, guint updates, GPtrArray *want)
{
  StgTestDaemon *d = dfx_start (conf, "--runtime=simulated", NULL);

  stg_rollout_create_plain_job (d, "www", "hooked", 1);
  for (guint i = 0; i < updates; i++)
    {
      g_autofree gchar *command = g_strdup_printf ("sleep %u", 61 + i);
      update_to (d, command, want);
    }
  ck_assert_uint_ge (want->len, 2 * updates);
  return d;
}

/* Notices waiting for a receiver that is down when staggerd is killed
 * with SIGKILL arrive once it is started again: none lost, in order,
 * none twice. */
START_TEST (notices_waiting_at_a_kill9_arrive_after_the_restart)
{
  g_autoptr (StgTestReceiver) receiver = stg_test_receiver_start (dfx.dir, "down");
  g_autofree gchar *conf = config (receiver, 1000);
  g_autoptr (GPtrArray) want = g_ptr_array_new_with_free_func (g_free);
  StgTestDaemon *d = updates_while_down (conf, 3, want);

  wait_queued (d, receiver, (gint64) want->len);
  stg_test_daemon_kill9 (d);
  stg_test_daemon_free (d);

  stg_test_receiver_set (receiver, "up");
  d = dfx_start (conf, "--runtime=simulated", NULL);
  g_auto (GStrv) lines = stg_test_receiver_wait (receiver, want->len, 30);
  assert_received (lines, want);
  ck_assert_int_eq (stg_test_notify_count (d, "delivered"), (gint64) want->len);
  ck_assert_int_eq (stg_test_notify_count (d, NULL), 0);
  /* Delivered ones leave the store: a second restart sends nothing again. */
  dfx_stop (d);
  d = dfx_start (conf, "--runtime=simulated", NULL);
  g_usleep (G_USEC_PER_SEC);
  g_auto (GStrv) again = stg_test_receiver_lines (receiver);
  ck_assert_uint_eq (g_strv_length (again), want->len);
  ck_assert_int_eq (stg_test_notify_count (d, NULL), 0);
  dfx_stop (d);
}
END_TEST

/* Past queue_size the oldest notices are given up (counted as dropped
 * in /metrics); the newest are kept through a stop and sent after it. */
START_TEST (over_the_bound_the_oldest_are_given_up)
{
  g_autoptr (StgTestReceiver) receiver = stg_test_receiver_start (dfx.dir, "down");
  g_autofree gchar *conf = config (receiver, 2);
  g_autoptr (GPtrArray) want = g_ptr_array_new_with_free_func (g_free);
  StgTestDaemon *d = updates_while_down (conf, 2, want);

  wait_queued (d, receiver, 2);
  ck_assert_int_eq (stg_test_notify_count (d, "dropped"), (gint64) want->len - 2);
  dfx_stop (d);

  stg_test_receiver_set (receiver, "up");
  d = dfx_start (conf, "--runtime=simulated", NULL);
  g_auto (GStrv) lines = stg_test_receiver_wait (receiver, 2, 30);
  g_ptr_array_remove_range (want, 0, want->len - 2);
  assert_received (lines, want);
  dfx_stop (d);
}
END_TEST

static Suite *
notify_daemon_suite (void)
{
  Suite *s = suite_create ("notify_daemon");
  TCase *tc = tcase_create ("restarts");

  tcase_set_timeout (tc, 180);
  tcase_add_checked_fixture (tc, dfx_setup, dfx_teardown);
  tcase_add_test (tc, notices_waiting_at_a_kill9_arrive_after_the_restart);
  tcase_add_test (tc, over_the_bound_the_oldest_are_given_up);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  return dfx_run (notify_daemon_suite ());
}
