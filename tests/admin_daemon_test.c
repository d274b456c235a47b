/* admin_daemon_test.c: AuroraAdmin's operator calls against real staggerd
 * daemons running real instances (stagger-example-server): a backup taken
 * during an update and restored into a fresh staggerd through the
 * recovery calls, from which the update finishes. Instances' ports:
 * 25600-25799. */
#include "config.h"

#include <check.h>
#include <glib/gstdio.h>

#include "rollout.h"

#define PORT_RANGE "--port-range=25600-25799"

static gchar *dir;

static void
setup (void)
{
  dir = stg_test_tmpdir ();
}

static void
teardown (void)
{
  stg_test_rmtree (dir); /* kills the instances too */
  g_clear_pointer (&dir, g_free);
}

/* The first detail of @r, or "". */
static const gchar *
detail (ApiResponse *r)
{
  return r->details != NULL && r->details->len > 0
             ? ((ApiResponseDetail *) r->details->pdata[0])->message
             : "";
}

static void
assert_ok (ApiResponse *r, const gchar *what)
{
  ck_assert_msg (r->responseCode == API_RESPONSE_CODE_OK, "%s: %d %s", what, r->responseCode,
                 detail (r));
}

/* ---- backups and recovery ----------------------------------------------------------- */

/* The id of a backup written by performBackup, from its answer. */
static gchar *
perform_backup (StgTestDaemon *d)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (GError) error = NULL;

  ck_assert (api_aurora_admin_if_perform_backup (API_AURORA_ADMIN_IF (c->client), &r, &error));
  assert_ok (r, "performBackup");
  /* "backup ID written to DIR" */
  g_auto (GStrv) words = g_strsplit (detail (r), " ", 3);
  ck_assert_str_eq (words[0], "backup");
  return g_strdup (words[1]);
}

typedef struct
{
  StgTestDaemon *d;
  ApiJobUpdateKey *key;
} Moving;

/* The update has finished its first instance and goes on. */
static gboolean
first_instance_updated (gpointer data)
{
  Moving *m = data;
  g_autoptr (ApiJobUpdateDetails) det = stg_rollout_details (m->d, m->key);
  gint64 first, last;

  ck_assert_int_eq (det->update->summary->state->status, API_JOB_UPDATE_STATUS_ROLLING_FORWARD);
  stg_rollout_action_times (det, 0, API_JOB_UPDATE_ACTION_INSTANCE_UPDATED, &first, &last);
  if (first < 0)
    g_usleep (50000);
  return first >= 0;
}

static gint
compare_strings (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(const gchar *const *) a, *(const gchar *const *) b);
}

/* A ScheduledTask set's job names, sorted and joined. */
static gchar *
task_jobs (GHashTable *tasks)
{
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  GHashTableIter it;
  gpointer t;

  g_hash_table_iter_init (&it, tasks);
  while (g_hash_table_iter_next (&it, &t, NULL))
    {
      ApiAssignedTask *a = ((ApiScheduledTask *) t)->assignedTask;
      g_ptr_array_add (names, g_strdup_printf ("%s/%d", a->task->job->name, a->instanceId));
    }
  g_ptr_array_sort (names, compare_strings);
  g_ptr_array_add (names, NULL);
  return g_strjoinv (" ", (gchar **) names->pdata);
}

START_TEST (backup_during_an_update_restores_and_the_update_finishes)
{
  g_autofree gchar *a_dir = g_build_filename (dir, "a", NULL);
  g_autofree gchar *b_dir = g_build_filename (dir, "b", NULL);
  StgTestDaemon *a = stg_test_daemon_start (a_dir, PORT_RANGE, NULL);
  g_autofree gchar *v1 = stg_rollout_server_data (NULL, NULL);
  g_autofree gchar *v2 = stg_rollout_server_data (", \"--start-delay\", \"0\"", NULL);
  stg_rollout_create_job (a, "web", 3, v1);
  stg_rollout_create_job (a, "junk", 1, v1);
  stg_rollout_wait_running (a, "web", 3, 1);

  /* One instance at a time, each watched for 3 s: the backup is taken
   * between the first instance and the last. The instance being updated
   * when the backup was taken is lost with the first machine: one failure
   * of it is allowed. */
  g_autoptr (ApiJobUpdateRequest) req = stg_rollout_request ("web", 3, v2, 1, 3000);
  g_object_set (req->settings, "maxPerInstanceFailures", 1, NULL);
  g_autoptr (ApiJobUpdateKey) key = stg_rollout_try_start_request (a, req, NULL);
  ck_assert (key != NULL);
  Moving m = { a, key };
  ck_assert (stg_test_wait (first_instance_updated, &m, 60000));
  g_autofree gchar *id = perform_backup (a);
  ck_assert (g_str_has_prefix (id, "scheduler-backup-"));
  ck_assert_int_eq (stg_test_daemon_stop (a), 0);
  stg_test_daemon_free (a);
  stg_test_kill_instances (a_dir);

  /* A fresh staggerd, with the backup in its backup folder. */
  StgTestDaemon *b = stg_test_daemon_start (b_dir, PORT_RANGE, NULL);
  g_autofree gchar *from = g_build_filename (a_dir, "backups", id, NULL);
  g_autofree gchar *to_dir = g_build_filename (b_dir, "backups", NULL);
  g_autofree gchar *to = g_build_filename (to_dir, id, NULL);
  g_autofree gchar *bytes = NULL;
  gsize len = 0;
  ck_assert (g_file_get_contents (from, &bytes, &len, NULL));
  ck_assert_int_eq (g_mkdir_with_parents (to_dir, 0700), 0);
  ck_assert (g_file_set_contents (to, bytes, (gssize) len, NULL));

  g_autoptr (StgTestClient) c = stg_test_client_new (b->thrift_port);
  ApiAuroraAdminIf *admin = API_AURORA_ADMIN_IF (c->client);
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiTaskQuery) all = g_object_new (API_TYPE_TASK_QUERY, NULL);
  {
    /* Nothing staged yet: queryRecovery says so. */
    g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
    ck_assert (api_aurora_admin_if_query_recovery (admin, &r, all, &error));
    ck_assert_int_eq (r->responseCode, API_RESPONSE_CODE_INVALID_REQUEST);
    ck_assert_str_eq (detail (r), "no backup is staged (stageRecovery loads one)");
  }
  {
    g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
    ck_assert (api_aurora_admin_if_list_backups (admin, &r, &error));
    assert_ok (r, "listBackups");
    ck_assert (g_hash_table_contains (r->result->listBackupsResult->backups, id));
  }
  {
    g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
    ck_assert (api_aurora_admin_if_stage_recovery (admin, &r, "../stagger.db", &error));
    ck_assert_int_eq (r->responseCode, API_RESPONSE_CODE_INVALID_REQUEST);
  }
  {
    g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
    ck_assert (api_aurora_admin_if_stage_recovery (admin, &r, id, &error));
    assert_ok (r, "stageRecovery");
  }
  {
    g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
    ck_assert (api_aurora_admin_if_query_recovery (admin, &r, all, &error));
    assert_ok (r, "queryRecovery");
    g_autofree gchar *jobs = task_jobs (r->result->queryRecoveryResult->tasks);
    ck_assert_str_eq (jobs, "junk/0 web/0 web/1 web/2");
  }
  {
    /* The job with the update keeps its tasks; the other one goes. */
    g_autoptr (ApiTaskQuery) web = g_object_new (API_TYPE_TASK_QUERY, "jobName", "web", NULL);
    g_autoptr (ApiTaskQuery) junk = g_object_new (API_TYPE_TASK_QUERY, "jobName", "junk", NULL);
    g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
    ck_assert (api_aurora_admin_if_delete_recovery_tasks (admin, &r, web, &error));
    ck_assert_int_eq (r->responseCode, API_RESPONSE_CODE_INVALID_REQUEST);
    g_clear_object (&r);
    r = g_object_new (API_TYPE_RESPONSE, NULL);
    ck_assert (api_aurora_admin_if_delete_recovery_tasks (admin, &r, junk, &error));
    assert_ok (r, "deleteRecoveryTasks");
    g_clear_object (&r);
    r = g_object_new (API_TYPE_RESPONSE, NULL);
    ck_assert (api_aurora_admin_if_query_recovery (admin, &r, all, &error));
    g_autofree gchar *jobs = task_jobs (r->result->queryRecoveryResult->tasks);
    ck_assert_str_eq (jobs, "web/0 web/1 web/2");
  }
  {
    /* staggerd restarts in place once it has answered, and writes its
     * ready file again. */
    g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
    g_unlink (b->ready_file);
    ck_assert (api_aurora_admin_if_commit_recovery (admin, &r, &error));
    assert_ok (r, "commitRecovery");
  }
  g_clear_pointer (&c, stg_test_client_free);
  stg_test_daemon_wait_ready (b);

  /* The update goes on from the backup, to its end. */
  ck_assert_int_eq (stg_rollout_wait_terminal (b, key), API_JOB_UPDATE_STATUS_ROLLED_FORWARD);
  stg_rollout_wait_running (b, "web", 3, 2);
  g_autofree gchar *body = NULL;
  ck_assert_uint_eq (stg_test_http_get (b->http_port,
                                        "/ui/api/job?role=www&environment=prod&name=junk", &body),
                     404);
  ck_assert_int_eq (stg_test_daemon_stop (b), 0);
  stg_test_daemon_free (b);
}
END_TEST

static Suite *
admin_daemon_suite (void)
{
  Suite *s = suite_create ("admin_daemon");
  TCase *tc = tcase_create ("backups");

  tcase_set_timeout (tc, 180);
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, backup_during_an_update_restores_and_the_update_finishes);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  gchar *scope = stg_test_scope_begin ();
  SRunner *sr = srunner_create (admin_daemon_suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  stg_test_scope_end (scope);
  return failed == 0 ? 0 : 1;
}
