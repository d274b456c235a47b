/* roles_test.c: a real staggerd as root runs each role's instances as the
 * user [roles] names (or instance_user, default nobody): an instance sees
 * that uid, cannot read staggerd's config file or database, sees none of
 * staggerd's environment, and root is refused unless allowed. Every kind
 * of process staggerd starts for a role (instance, shell health check,
 * shell gate, pre_update and post_update hooks, the health check of an
 * adopted instance) runs with the uid, gid and groups of the role's user:
 * the default user, a [roles] user with a supplementary group (a
 * throwaway system user the test makes), and root only with
 * --allow-root-instances and instance_user = root. Needs root (CI runs as
 * root); elsewhere it reports SKIP (77). Ports 25500-25599. */
#include "config.h"

#include <check.h>
#include <glib/gstdio.h>
#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include "rollout.h"
#include "testutil.h"

#define PORT_RANGE "--port-range=25500-25599"

static gchar *dir;

static void
setup (void)
{
  dir = stg_test_tmpdir ();
  /* Passable by anyone: only the files' own modes protect them. */
  ck_assert (g_chmod (dir, 0711) == 0);
  g_setenv ("STG_TEST_NO_ROOT_INSTANCES", "1", TRUE);
  g_setenv ("STG_TEST_SECRET", "hush-hush", TRUE);
}

static void
teardown (void)
{
  g_unsetenv ("STG_TEST_NO_ROOT_INSTANCES");
  g_unsetenv ("STG_TEST_SECRET");
  stg_test_rmtree (dir);
  g_clear_pointer (&dir, g_free);
}

static gchar *
write_config (const gchar *text)
{
  gchar *path = g_build_filename (dir, "staggerd.conf", NULL);
  ck_assert (g_file_set_contents (path, text, -1, NULL));
  ck_assert (g_chmod (path, 0600) == 0);
  return path;
}

static void
create_job (StgTestDaemon *d, const gchar *role, const gchar *command)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiJobConfiguration) job = stg_test_job (role, "prod", "who", 1, command);
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (GError) error = NULL;

  ck_assert (
      api_aurora_scheduler_manager_if_create_job (API_AURORA_SCHEDULER_MANAGER_IF (c->client), &r,
                                                  job, &error));
  ck_assert_msg (r->responseCode == API_RESPONSE_CODE_OK, "createJob %s failed", role);
}

/* The run folder under @data's sandboxes that holds a file "done", or
 * NULL; @skip: a folder not to return. */
static gchar *
find_done (const gchar *top, const gchar *skip)
{
  g_autoptr (GDir) d = g_dir_open (top, 0, NULL);
  const gchar *name;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree gchar *path = g_build_filename (top, name, NULL);
      if (g_str_equal (name, "done") && g_strcmp0 (top, skip) != 0)
        return g_strdup (top);
      if (g_file_test (path, G_FILE_TEST_IS_DIR) && !g_file_test (path, G_FILE_TEST_IS_SYMLINK))
        {
          gchar *found = find_done (path, skip);
          if (found != NULL)
            return found;
        }
    }
  return NULL;
}

/* Waits for an instance's "done" file; returns its run folder. */
static gchar *
wait_done (const gchar *skip)
{
  g_autofree gchar *top = g_build_filename (dir, "sandboxes", NULL);
  for (gint i = 0; i < 600; i++)
    {
      gchar *found = find_done (top, skip);
      if (found != NULL)
        return found;
      g_usleep (50 * 1000);
    }
  ck_abort_msg ("no instance wrote its done file under %s", top);
  return NULL;
}

static gchar *
read_in (const gchar *folder, const gchar *file)
{
  g_autofree gchar *path = g_build_filename (folder, file, NULL);
  gchar *text = NULL;
  ck_assert_msg (g_file_get_contents (path, &text, NULL, NULL), "%s is missing", path);
  return g_strstrip (text);
}

static guint
nobody_uid (void)
{
  struct passwd *pw = getpwnam ("nobody");
  ck_assert (pw != NULL);
  return pw->pw_uid;
}

START_TEST (instances_run_as_their_role_user)
{
  g_autofree gchar *conf = write_config ("[roles]\nwww = nobody\n");
  g_autofree gchar *conf_arg = g_strconcat ("--config=", conf, NULL);
  g_autofree gchar *db = g_build_filename (dir, "stagger.db", NULL);
  StgTestDaemon *d = stg_test_daemon_start (dir, conf_arg, PORT_RANGE, NULL);
  g_autofree gchar *command = g_strdup_printf (
      "id -u > uid; (cat %s > /dev/null 2>&1; echo $? > conf_rc); (cat %s > /dev/null 2>&1; "
      "echo $? > db_rc); env > env; echo done > done; exec sleep 60",
      conf, db);

  create_job (d, "www", command);
  g_autofree gchar *www = wait_done (NULL);
  g_autofree gchar *uid = read_in (www, "uid");
  g_autofree gchar *conf_rc = read_in (www, "conf_rc");
  g_autofree gchar *db_rc = read_in (www, "db_rc");
  g_autofree gchar *env = read_in (www, "env");
  g_autofree gchar *want = g_strdup_printf ("%u", nobody_uid ());
  ck_assert_str_eq (uid, want);
  ck_assert_msg (!g_str_equal (conf_rc, "0"), "the instance read staggerd's config file");
  ck_assert_msg (!g_str_equal (db_rc, "0"), "the instance read staggerd's database");
  ck_assert_msg (strstr (env, "hush-hush") == NULL, "the instance saw staggerd's environment:\n%s",
                 env);

  /* A role without a [roles] user runs as the default user, nobody. */
  create_job (d, "ops", "id -u > uid; echo done > done; exec sleep 60");
  g_autofree gchar *ops = wait_done (www);
  g_autofree gchar *ops_uid = read_in (ops, "uid");
  ck_assert_str_eq (ops_uid, want);

  /* The database is staggerd's alone. */
  GStatBuf st;
  ck_assert (g_stat (db, &st) == 0);
  ck_assert_int_eq (st.st_mode & 077, 0);
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
}
END_TEST

/* Runs staggerd with @config until it exits; returns its exit status and
 * its standard error in *@err. */
static gint
run_with (const gchar *config, gchar **err)
{
  g_autofree gchar *conf = write_config (config);
  g_autofree gchar *prog = stg_test_program ("staggerd");
  g_autofree gchar *conf_arg = g_strconcat ("--config=", conf, NULL);
  g_autofree gchar *data = g_strconcat ("--data-dir=", dir, NULL);
  const gchar *argv[] = { prog, conf_arg, data, "--http-port=0", "--thrift-port=0", NULL };
  gint status = 0;

  ck_assert (g_spawn_sync (NULL, (gchar **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                           NULL, err, &status, NULL));
  return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

START_TEST (root_is_refused_unless_allowed)
{
  g_autofree gchar *err1 = NULL;
  ck_assert_int_ne (run_with ("[roles]\nops = root\n", &err1), 0);
  ck_assert_msg (strstr (err1, "[roles] ops: refusing to run instances as root") != NULL, "%s",
                 err1);
  g_autofree gchar *err2 = NULL;
  ck_assert_int_ne (run_with ("[staggerd]\ninstance_user = root\n", &err2), 0);
  ck_assert_msg (strstr (err2, "allow_root_instances") != NULL, "%s", err2);
  g_autofree gchar *err3 = NULL;
  ck_assert_int_ne (run_with ("[roles]\nwww = no-such-user-here\n", &err3), 0);
  ck_assert_msg (strstr (err3, "no user 'no-such-user-here'") != NULL, "%s", err3);

  /* Allowed: a role's instances may then run as root. */
  g_autofree gchar *conf = write_config (
      "[staggerd]\nallow_root_instances = true\n[roles]\nops = root\n");
  g_autofree gchar *conf_arg = g_strconcat ("--config=", conf, NULL);
  StgTestDaemon *d = stg_test_daemon_start (dir, conf_arg, PORT_RANGE, NULL);
  create_job (d, "ops", "id -u > uid; echo done > done; exec sleep 60");
  g_autofree gchar *ops = wait_done (NULL);
  g_autofree gchar *uid = read_in (ops, "uid");
  ck_assert_str_eq (uid, "0");
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
}
END_TEST

/* ---- every process of a role, as its user ------------------------------------- */

/* A throwaway system user with a supplementary group of its own, so the
 * groups a process runs with mean something; made for the test case and
 * removed after it. */
#define ROLE_USER "stg-roles-test"
#define ROLE_GROUP "stg-roles-extra"

static void
run_tool (const gchar *const *argv)
{
  g_autofree gchar *err = NULL;
  gint status = 0;
  ck_assert (g_spawn_sync (NULL, (gchar **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                           NULL, &err, &status, NULL));
  ck_assert_msg (g_spawn_check_wait_status (status, NULL), "%s: %s", argv[0], err);
}

static void
make_role_user (void)
{
  if (getgrnam (ROLE_GROUP) == NULL)
    run_tool ((const gchar *[]){ "/usr/sbin/groupadd", "--system", ROLE_GROUP, NULL });
  if (getpwnam (ROLE_USER) == NULL)
    run_tool ((const gchar *[]){ "/usr/sbin/useradd", "--system", "--no-create-home",
                                 "--user-group", "--shell", "/usr/sbin/nologin", "--groups",
                                 ROLE_GROUP, ROLE_USER, NULL });
}

/* TRUE while a process of @uid is left (the instances teardown killed
 * may take a moment to go). */
static gboolean
has_processes (uid_t uid)
{
  g_autoptr (GDir) proc = g_dir_open ("/proc", 0, NULL);
  const gchar *name;
  GStatBuf st;

  while (proc != NULL && (name = g_dir_read_name (proc)) != NULL)
    {
      g_autofree gchar *path = g_build_filename ("/proc", name, NULL);
      if (g_ascii_isdigit (name[0]) && g_stat (path, &st) == 0 && st.st_uid == uid)
        return TRUE;
    }
  return FALSE;
}

static void
remove_role_user (void)
{
  struct passwd *pw = getpwnam (ROLE_USER);
  for (gint64 end = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
       pw != NULL && has_processes (pw->pw_uid);)
    {
      ck_assert_msg (g_get_monotonic_time () < end, "processes of %s live on", ROLE_USER);
      g_usleep (50 * 1000);
    }
  if (pw != NULL)
    run_tool ((const gchar *[]){ "/usr/sbin/userdel", ROLE_USER, NULL });
  if (getgrnam (ROLE_GROUP) != NULL)
    run_tool ((const gchar *[]){ "/usr/sbin/groupdel", ROLE_GROUP, NULL });
}

static void
setup_users (void)
{
  setup ();
  make_role_user ();
  /* Processes of other users record who they are in a folder of this
   * test's: the suite's folder above it must be passable too. */
  g_autofree gchar *suite = g_path_get_dirname (dir);
  ck_assert (g_chmod (suite, 0711) == 0);
}

static void
teardown_users (void)
{
  teardown ();
  remove_role_user ();
}

static gint
compare_numbers (gconstpointer a, gconstpointer b)
{
  gint64 x = g_ascii_strtoll (*(const gchar *const *) a, NULL, 10);
  gint64 y = g_ascii_strtoll (*(const gchar *const *) b, NULL, 10);
  return (x > y) - (x < y);
}

/* "UID GID [GROUPS]" (the groups sorted, each once) from what
 * `id -u; id -g; id -G` printed. */
static gchar *
normalize_ids (const gchar *text)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", 3);
  ck_assert_msg (g_strv_length (lines) == 3, "not what id prints: %s", text);
  g_auto (GStrv) words = g_strsplit_set (lines[2], " \n", -1);
  g_autoptr (GPtrArray) groups = g_ptr_array_new ();
  for (guint i = 0; words[i] != NULL; i++)
    if (words[i][0] != '\0' &&
        !g_ptr_array_find_with_equal_func (groups, words[i], g_str_equal, NULL))
      g_ptr_array_add (groups, words[i]);
  g_ptr_array_sort (groups, compare_numbers);
  g_ptr_array_add (groups, NULL);
  g_autofree gchar *set = g_strjoinv (" ", (gchar **) groups->pdata);
  return g_strdup_printf ("%s %s [%s]", g_strstrip (lines[0]), g_strstrip (lines[1]), set);
}

/* What a process of @user should run with: its uid, primary group and
 * every group the group database gives it. */
static gchar *
ids_of (const gchar *user)
{
  struct passwd *pw = getpwnam (user);
  ck_assert_msg (pw != NULL, "no user %s", user);
  gid_t groups[256];
  gint n = G_N_ELEMENTS (groups);
  ck_assert (getgrouplist (user, pw->pw_gid, groups, &n) >= 0);
  g_autoptr (GString) text = g_string_new (NULL);
  g_string_append_printf (text, "%u\n%u\n", (guint) pw->pw_uid, (guint) pw->pw_gid);
  for (gint i = 0; i < n; i++)
    g_string_append_printf (text, "%u ", (guint) groups[i]);
  return normalize_ids (text->str);
}

/* A shell line that records who runs it in IDS/@name, whole or not at
 * all. */
static gchar *
record (const gchar *ids, const gchar *name)
{
  return g_strdup_printf ("(id -u; id -g; id -G) > %s/%s.tmp.$$ && mv -f %s/%s.tmp.$$ %s/%s", ids,
                          name, ids, name, ids, name);
}

/* Executor data whose instance, shell health check and (with @hooks)
 * pre_update and post_update hooks each record who runs them. */
static gchar *
recording_data (const gchar *ids, gboolean hooks, const gchar *version)
{
  g_autofree gchar *instance = record (ids, "instance");
  g_autofree gchar *health = record (ids, "health");
  g_autofree gchar *pre = record (ids, "pre_update");
  g_autofree gchar *post = record (ids, "post_update");
  g_autofree gchar *hook_json =
      hooks ? g_strdup_printf (", \"hooks\": {\"pre_update\": {\"command\": \"%s\"},"
                               " \"post_update\": {\"command\": \"%s\"}}",
                               pre, post)
            : g_strdup ("");
  return g_strdup_printf ("{\"command\": \"%s; exec sleep 600\", \"env\": {\"V\": \"%s\"},"
                          " \"health_check\": {\"shell\": {\"shell_command\": \"%s\"},"
                          " \"initial_interval_secs\": 1, \"interval_secs\": 0.2,"
                          " \"timeout_secs\": 5}%s}",
                          instance, version, health, hook_json);
}

/* Waits for IDS/@name; returns who ran what wrote it. */
static gchar *
wait_ids (const gchar *ids, const gchar *name)
{
  g_autofree gchar *path = g_build_filename (ids, name, NULL);
  for (gint64 end = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;;)
    {
      g_autofree gchar *text = NULL;
      if (g_file_get_contents (path, &text, NULL, NULL))
        return normalize_ids (text);
      ck_assert_msg (g_get_monotonic_time () < end, "nothing recorded %s", path);
      g_usleep (50 * 1000);
    }
}

/* Waits for IDS/@name and checks that @user (who is @want) wrote it. */
static void
expect_ids (const gchar *ids, const gchar *name, const gchar *want, const gchar *user)
{
  g_autofree gchar *got = wait_ids (ids, name);
  ck_assert_msg (g_str_equal (got, want), "%s ran as %s, not %s (%s)", name, got, want, user);
}

/* A plan of one stage that moves @role/prod/who to @data, after a shell
 * gate that records who runs it. */
static ApiRolloutPlan *
recording_plan (const gchar *ids, const gchar *role, const gchar *data)
{
  g_autoptr (ApiJobConfiguration) config = stg_test_job_full (role, "prod", "who", 1, data, NULL);
  g_autoptr (ApiJobUpdateSettings) settings = g_object_new (API_TYPE_JOB_UPDATE_SETTINGS,
                                                            "updateGroupSize", 1,
                                                            "minWaitInInstanceRunningMs", 100,
                                                            NULL);
  g_autoptr (ApiJobUpdateRequest) req = g_object_new (API_TYPE_JOB_UPDATE_REQUEST, "taskConfig",
                                                      config->taskConfig, "instanceCount", 1,
                                                      "settings", settings, NULL);
  g_autofree gchar *command = record (ids, "gate");
  ApiRolloutGate *gate = g_object_new (API_TYPE_ROLLOUT_GATE, "name", "who runs me", "kind",
                                       API_ROLLOUT_GATE_KIND_SHELL, "command", command,
                                       "timeoutSecs", 30, NULL);
  g_autoptr (ApiRolloutStage) stage = g_object_new (API_TYPE_ROLLOUT_STAGE, "name", "who",
                                                    "request", req, NULL);
  g_ptr_array_add (stage->before, gate);
  ApiRolloutPlan *plan = g_object_new (API_TYPE_ROLLOUT_PLAN, "name", "who", NULL);
  g_ptr_array_add (plan->stages, g_object_ref (stage));
  return plan;
}

/* Runs a staggerd with @config (and @flag, nullable) and in it a job of
 * @role whose every kind of process records who runs it: the instance,
 * its shell health check, the shell gate of a plan that updates it, the
 * update's pre_update and post_update hooks, and the health check of the
 * instance a restarted staggerd adopts. Each must have run as @user, with
 * its uid, gid and groups. */
static void
every_process_runs_as (const gchar *config, const gchar *flag, const gchar *role, const gchar *user)
{
  g_autofree gchar *conf = write_config (config);
  g_autofree gchar *conf_arg = g_strconcat ("--config=", conf, NULL);
  g_autofree gchar *ids = g_build_filename (dir, "ids", NULL);
  ck_assert (g_mkdir_with_parents (ids, 0700) == 0 && g_chmod (ids, 0777) == 0);
  g_autofree gchar *want = ids_of (user);
  StgTestDaemon *d = stg_test_daemon_start (dir, conf_arg, PORT_RANGE, flag, NULL);

  g_autofree gchar *v1 = recording_data (ids, FALSE, "1");
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiJobConfiguration) job = stg_test_job_full (role, "prod", "who", 1, v1, NULL);
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  ck_assert (
      api_aurora_scheduler_manager_if_create_job (API_AURORA_SCHEDULER_MANAGER_IF (c->client), &r,
                                                  job, NULL));
  ck_assert_int_eq (r->responseCode, API_RESPONSE_CODE_OK);
  expect_ids (ids, "instance", want, user);
  expect_ids (ids, "health", want, user);

  g_autofree gchar *v2 = recording_data (ids, TRUE, "2");
  g_autoptr (ApiRolloutPlan) plan = recording_plan (ids, role, v2);
  g_free (stg_rollout_start_plan (d, plan));
  expect_ids (ids, "gate", want, user);
  expect_ids (ids, "pre_update", want, user);
  expect_ids (ids, "post_update", want, user);

  /* The instance outlives staggerd; the next one adopts it and checks it. */
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
  g_autofree gchar *health = g_build_filename (ids, "health", NULL);
  ck_assert (g_unlink (health) == 0);
  d = stg_test_daemon_start (dir, conf_arg, PORT_RANGE, flag, NULL);
  expect_ids (ids, "health", want, user);
  ck_assert_int_eq (stg_test_daemon_stop (d), 0);
  stg_test_daemon_free (d);
}

START_TEST (every_process_runs_as_the_default_user)
{
  every_process_runs_as ("[roles]\nwww = " ROLE_USER "\n", NULL, "ops", "nobody");
}
END_TEST

START_TEST (every_process_runs_as_the_roles_user)
{
  every_process_runs_as ("[roles]\nwww = " ROLE_USER "\n", NULL, "www", ROLE_USER);
}
END_TEST

START_TEST (every_process_runs_as_root_only_when_allowed_and_named)
{
  every_process_runs_as ("[staggerd]\ninstance_user = root\n", "--allow-root-instances", "ops",
                         "root");
}
END_TEST

static Suite *
roles_suite (void)
{
  Suite *s = suite_create ("roles");
  TCase *tc = tcase_create ("users");
  TCase *every = tcase_create ("every process");

  tcase_set_timeout (tc, 120);
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, instances_run_as_their_role_user);
  tcase_add_test (tc, root_is_refused_unless_allowed);
  suite_add_tcase (s, tc);
  tcase_set_timeout (every, 240);
  tcase_add_checked_fixture (every, setup_users, teardown_users);
  tcase_add_test (every, every_process_runs_as_the_default_user);
  tcase_add_test (every, every_process_runs_as_the_roles_user);
  tcase_add_test (every, every_process_runs_as_root_only_when_allowed_and_named);
  suite_add_tcase (s, every);
  return s;
}

int
main (void)
{
  if (geteuid () != 0)
    {
      g_print ("roles_test: needs root (instances can only run as other users under a root "
               "staggerd): skipped\n");
      return 77;
    }
  gchar *scope = stg_test_scope_begin ();
  SRunner *sr = srunner_create (roles_suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  stg_test_scope_end (scope);
  return failed == 0 ? 0 : 1;
}
