/* roles_test.c: a real staggerd as root runs each role's instances as the
 * user [roles] names (or instance_user, default nobody): an instance sees
 * that uid, cannot read staggerd's config file or database, sees none of
 * staggerd's environment, and root is refused unless allowed. Needs root
 * (CI runs as root); elsewhere it reports SKIP (77). Ports 25500-25599. */
#include "config.h"

#include <check.h>
#include <glib/gstdio.h>
#include <pwd.h>
#include <unistd.h>

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

static Suite *
roles_suite (void)
{
  Suite *s = suite_create ("roles");
  TCase *tc = tcase_create ("users");

  tcase_set_timeout (tc, 120);
  tcase_add_checked_fixture (tc, setup, teardown);
  tcase_add_test (tc, instances_run_as_their_role_user);
  tcase_add_test (tc, root_is_refused_unless_allowed);
  suite_add_tcase (s, tc);
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
