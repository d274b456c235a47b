/* podman_hosts.c: simulated container hosts for the fleet suites (see
 * podman_hosts.h). Runs the podman command line and services as
 * subprocesses; test processes only, blocking. */
#include "config.h"

#include <check.h>
#include <crypt.h>
#include <errno.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>

#include "podman_hosts.h"
#include "testutil.h"

/* What this machine needs and the product must not assume: runc (crun
 * refuses cgroups in hybrid mode), cgroupfs, ulimits at or below the hard
 * limits (no CAP_SYS_RESOURCE), host networking, events in a file. */
static const gchar containers_conf[] =
  "[containers]\n"
  "netns = \"host\"\n"
  "default_ulimits = [\"nofile=1024:1024\", \"nproc=4096:4096\"]\n"
  "[engine]\n"
  "runtime = \"runc\"\n"
  "cgroup_manager = \"cgroupfs\"\n"
  "events_logger = \"file\"\n";

/* The test registry answers over plain HTTP on loopback. */
static const gchar registries_conf[] = "[[registry]]\n"
                                       "location = \"" STG_TEST_REGISTRY "\"\n"
                                       "insecure = true\n";

static void
die_with_parent (gpointer data G_GNUC_UNUSED)
{
  prctl (PR_SET_PDEATHSIG, SIGTERM);
}

/* argv for podman with @host's storage, then @args. */
static GPtrArray *
podman_argv (StgTestPodmanHost *host)
{
  GPtrArray *argv = g_ptr_array_new_with_free_func (g_free);

  g_ptr_array_add (argv, g_strdup ("podman"));
  g_ptr_array_add (argv, g_strconcat ("--root=", host->root, "/storage", NULL));
  g_ptr_array_add (argv, g_strconcat ("--runroot=", host->root, "/r", NULL));
  g_ptr_array_add (argv, g_strconcat ("--tmpdir=", host->root, "/tmp", NULL));
  g_ptr_array_add (argv, g_strdup ("--runtime=runc"));
  g_ptr_array_add (argv, g_strdup ("--cgroup-manager=cgroupfs"));
  g_ptr_array_add (argv, g_strdup ("--events-backend=file"));
  return argv;
}

static GSubprocessLauncher *
podman_launcher (StgTestPodman *fleet, GSubprocessFlags flags)
{
  GSubprocessLauncher *launcher = g_subprocess_launcher_new (flags);

  g_autofree gchar *registries = g_build_filename (fleet->dir, "registries.conf", NULL);

  g_subprocess_launcher_setenv (launcher, "CONTAINERS_CONF", fleet->conf_path, TRUE);
  g_subprocess_launcher_setenv (launcher, "CONTAINERS_REGISTRIES_CONF", registries, TRUE);
  g_subprocess_launcher_setenv (launcher, "TMPDIR", fleet->dir, TRUE);
  return launcher;
}

/* Keeps an async call's result for turn_until. */
static void
on_done (GObject *source G_GNUC_UNUSED, GAsyncResult *result, gpointer data)
{
  *(GAsyncResult **) data = g_object_ref (result);
}

/* Turns the default main context until *@done is set: a runtime in this
 * process goes on proving its lead and serving its hosts meanwhile, as it
 * would while a user's podman command runs (one can take seconds on a
 * loaded machine, longer than a test's lease). */
static void
turn_until (GAsyncResult **done)
{
  while (*done == NULL)
    g_main_context_iteration (NULL, TRUE);
}

/* The same for @ms milliseconds. */
static void
turn_for_ms (guint ms)
{
  gint64 end = g_get_monotonic_time () + (gint64) ms * 1000;

  while (g_get_monotonic_time () < end)
    if (!g_main_context_iteration (NULL, FALSE))
      g_usleep (2000);
}

gchar *
stg_test_podman_cli (StgTestPodman *fleet, StgTestPodmanHost *host, ...)
{
  g_autoptr (GPtrArray) argv = podman_argv (host);
  g_autoptr (GError) error = NULL;
  g_autofree gchar *out = NULL;
  g_autofree gchar *err = NULL;
  va_list ap;
  const gchar *arg;

  va_start (ap, host);
  while ((arg = va_arg (ap, const gchar *)) != NULL)
    g_ptr_array_add (argv, g_strdup (arg));
  va_end (ap);
  g_ptr_array_add (argv, NULL);
  g_autoptr (GSubprocessLauncher) launcher =
    podman_launcher (fleet, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr (GSubprocess) p = g_subprocess_launcher_spawnv (launcher, (const gchar *const *) argv->pdata, &error);
  ck_assert_msg (p != NULL, "cannot run podman: %s", error ? error->message : "");
  g_autoptr (GAsyncResult) done = NULL;
  g_subprocess_communicate_utf8_async (p, NULL, NULL, on_done, &done);
  turn_until (&done);
  ck_assert_msg (g_subprocess_communicate_utf8_finish (p, done, &out, &err, &error), "podman: %s",
                 error ? error->message : "");
  ck_assert_msg (g_subprocess_get_if_exited (p) && g_subprocess_get_exit_status (p) == 0,
                 "podman %s failed: %s", (const gchar *) argv->pdata[7], err ? err : "");
  return g_steal_pointer (&out);
}

/* One GET /_ping over the socket; TRUE when the engine answers OK. */
static gboolean
ping (StgTestPodmanHost *host)
{
  g_autoptr (GSocketClient) client = g_socket_client_new ();
  g_autoptr (GSocketAddress) address = g_unix_socket_address_new (host->socket_path);
  g_autoptr (GSocketConnection) conn =
    g_socket_client_connect (client, G_SOCKET_CONNECTABLE (address), NULL, NULL);
  static const gchar request[] = "GET /_ping HTTP/1.0\r\nHost: d\r\n\r\n";
  gchar buf[512] = { 0 };
  gsize got = 0;

  if (conn == NULL)
    return FALSE;
  GOutputStream *out = g_io_stream_get_output_stream (G_IO_STREAM (conn));
  GInputStream *in = g_io_stream_get_input_stream (G_IO_STREAM (conn));
  if (!g_output_stream_write_all (out, request, sizeof request - 1, NULL, NULL, NULL) ||
      !g_input_stream_read_all (in, buf, sizeof buf - 1, &got, NULL, NULL))
    return FALSE;
  return g_str_has_prefix (buf, "HTTP/1.") && strstr (buf, " 200 ") != NULL;
}

void
stg_test_podman_host_up (StgTestPodman *fleet, StgTestPodmanHost *host)
{
  g_autoptr (GPtrArray) argv = podman_argv (host);
  g_autoptr (GError) error = NULL;
  g_autofree gchar *log = g_build_filename (host->root, "service.log", NULL);

  g_ptr_array_add (argv, g_strdup ("system"));
  g_ptr_array_add (argv, g_strdup ("service"));
  g_ptr_array_add (argv, g_strdup ("--time=0"));
  g_ptr_array_add (argv, g_strdup (host->endpoint));
  g_ptr_array_add (argv, NULL);
  g_unlink (host->socket_path);
  g_autoptr (GSubprocessLauncher) launcher = podman_launcher (fleet, G_SUBPROCESS_FLAGS_STDERR_MERGE);
  g_subprocess_launcher_set_stdout_file_path (launcher, log);
  g_subprocess_launcher_set_child_setup (launcher, die_with_parent, NULL, NULL);
  host->service = g_subprocess_launcher_spawnv (launcher, (const gchar *const *) argv->pdata, &error);
  ck_assert_msg (host->service != NULL, "cannot start podman system service: %s",
                 error ? error->message : "");
  gint64 deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
  while (!ping (host))
    {
      if (g_subprocess_get_identifier (host->service) == NULL)
        {
          g_autofree gchar *text = NULL;
          g_file_get_contents (log, &text, NULL, NULL);
          ck_abort_msg ("podman system service for %s exited: %s", host->name, text ? text : "");
        }
      ck_assert_msg (g_get_monotonic_time () < deadline, "podman service %s not answering after 60 s",
                     host->name);
      turn_for_ms (20);
    }
}

void
stg_test_podman_host_down (StgTestPodmanHost *host)
{
  if (host->service == NULL)
    return;
  g_autoptr (GAsyncResult) done = NULL;
  g_subprocess_send_signal (host->service, SIGTERM);
  g_subprocess_wait_async (host->service, NULL, on_done, &done);
  turn_until (&done);
  g_clear_object (&host->service);
}

/* What an earlier test of this suite left behind: a failing check ends
 * its test's process before the test cleans up, and its containers would
 * hold the ports and names the next test needs. Tests of a suite run one
 * at a time, so a fleet folder already in the suite's own temporary
 * folder is such a leftover (never another suite's: each has its own). */
static void
purge_leftovers (void)
{
  const gchar *tmp = g_get_tmp_dir ();
  g_autofree gchar *base = g_path_get_basename (tmp);
  g_autoptr (GDir) d = NULL;
  g_autoptr (GPtrArray) found = g_ptr_array_new_with_free_func (g_free);
  const gchar *name;

  if (!g_str_has_prefix (base, "stagger-suite-") || (d = g_dir_open (tmp, 0, NULL)) == NULL)
    return;
  while ((name = g_dir_read_name (d)) != NULL)
    if (g_str_has_prefix (name, "pm-"))
      g_ptr_array_add (found, g_build_filename (tmp, name, NULL));
  for (guint i = 0; i < found->len; i++)
    {
      g_message ("podman hosts: removing what an earlier test left in %s",
                 (gchar *) found->pdata[i]);
      stg_test_podman_purge (found->pdata[i]);
      stg_test_rmtree (found->pdata[i]);
    }
}

StgTestPodman *
stg_test_podman_start (guint n)
{
  g_autofree gchar *podman = g_find_program_in_path ("podman");
  g_autofree gchar *runc = g_find_program_in_path ("runc");
  g_autoptr (GError) error = NULL;

  ck_assert_msg (podman != NULL && runc != NULL && g_file_test ("/bin/busybox", G_FILE_TEST_EXISTS),
                 "the fleet tests need podman, runc and busybox-static: run scripts/install-deps.sh");
  StgTestPodman *fleet = g_new0 (StgTestPodman, 1);
  /* Short paths: podman refuses a runroot longer than 50 characters. */
  purge_leftovers ();
  fleet->dir = g_dir_make_tmp ("pm-XXXXXX", &error);
  ck_assert_msg (fleet->dir != NULL, "%s", error ? error->message : "");
  fleet->conf_path = g_build_filename (fleet->dir, "containers.conf", NULL);
  ck_assert_msg (g_file_set_contents (fleet->conf_path, containers_conf, -1, &error), "%s",
                 error ? error->message : "");
  g_autofree gchar *registries = g_build_filename (fleet->dir, "registries.conf", NULL);
  ck_assert_msg (g_file_set_contents (registries, registries_conf, -1, &error), "%s",
                 error ? error->message : "");
  fleet->hosts = g_ptr_array_new ();
  for (guint i = 0; i < n; i++)
    {
      StgTestPodmanHost *host = g_new0 (StgTestPodmanHost, 1);
      host->name = g_strdup_printf ("host%u", i);
      g_autofree gchar *short_name = g_strdup_printf ("h%u", i);
      host->root = g_build_filename (fleet->dir, short_name, NULL);
      host->socket_path = g_build_filename (host->root, "podman.sock", NULL);
      host->endpoint = g_strconcat ("unix://", host->socket_path, NULL);
      g_autofree gchar *tmp = g_build_filename (host->root, "tmp", NULL);
      g_mkdir_with_parents (tmp, 0700);
      g_ptr_array_add (fleet->hosts, host);
      stg_test_podman_host_up (fleet, host);
    }
  return fleet;
}

/* The image's root: busybox-static as sh, httpd, sleep and friends, and
 * @programs (static ones, nullable) in /bin. */
static gchar *
build_rootfs (StgTestPodman *fleet, const gchar *version, const gchar *const *programs)
{
  g_autoptr (GError) error = NULL;
  g_autofree gchar *rootfs = g_build_filename (fleet->dir, "image", NULL);
  g_autofree gchar *tarball = g_strdup_printf ("%s/image-%s.tar", fleet->dir, version);
  static const gchar *const applets[] = { "sh", "httpd", "sleep", "cat", "echo", "kill", "ls", NULL };

  stg_test_rmtree (rootfs);
  g_autofree gchar *bin = g_build_filename (rootfs, "bin", NULL);
  g_autofree gchar *www = g_build_filename (rootfs, "www", NULL);
  g_autofree gchar *tmp = g_build_filename (rootfs, "tmp", NULL);
  g_mkdir_with_parents (bin, 0755);
  g_mkdir_with_parents (www, 0755);
  g_mkdir_with_parents (tmp, 01777);
  g_autofree gchar *busybox = NULL;
  gsize len = 0;
  ck_assert (g_file_get_contents ("/bin/busybox", &busybox, &len, &error));
  g_autofree gchar *target = g_build_filename (bin, "busybox", NULL);
  ck_assert (g_file_set_contents_full (target, busybox, (gssize) len, G_FILE_SET_CONTENTS_NONE, 0755, &error));
  for (guint i = 0; applets[i] != NULL; i++)
    {
      g_autofree gchar *link = g_build_filename (bin, applets[i], NULL);
      ck_assert_int_eq (symlink ("busybox", link), 0);
    }
  for (guint i = 0; programs != NULL && programs[i] != NULL; i++)
    {
      g_autofree gchar *bytes = NULL;
      g_autofree gchar *base = g_path_get_basename (programs[i]);
      g_autofree gchar *copy = g_build_filename (bin, base, NULL);
      ck_assert_msg (g_file_get_contents (programs[i], &bytes, &len, &error), "%s",
                     error ? error->message : "");
      ck_assert (g_file_set_contents_full (copy, bytes, (gssize) len, G_FILE_SET_CONTENTS_NONE,
                                           0755, &error));
    }
  g_autofree gchar *health = g_build_filename (www, "health", NULL);
  g_autofree gchar *ver = g_build_filename (www, "version", NULL);
  ck_assert (g_file_set_contents (health, "ok\n", -1, &error));
  ck_assert (g_file_set_contents (ver, version, -1, &error));
  const gchar *tar[] = { "tar", "-C", rootfs, "-cf", tarball, ".", NULL };
  g_autoptr (GSubprocess) p = g_subprocess_newv (tar, G_SUBPROCESS_FLAGS_NONE, &error);
  ck_assert_msg (p != NULL && g_subprocess_wait_check (p, NULL, &error), "tar: %s",
                 error ? error->message : "");
  return g_steal_pointer (&tarball);
}

void
stg_test_podman_import (StgTestPodman *fleet, const gchar *tag, const gchar *version)
{
  stg_test_podman_import_with (fleet, tag, version, NULL);
}

void
stg_test_podman_import_with (StgTestPodman *fleet, const gchar *tag, const gchar *version,
                             const gchar *const *programs)
{
  g_autofree gchar *tarball = build_rootfs (fleet, version, programs);

  for (guint i = 0; i < fleet->hosts->len; i++)
    {
      g_free (stg_test_podman_cli (fleet, fleet->hosts->pdata[i], "import", "--quiet", tarball, tag,
                                   NULL));
    }
}

void
stg_test_podman_push (StgTestPodman *fleet, StgTestPodmanHost *host, const gchar *tag,
                      const gchar *name, const gchar *creds)
{
  g_autofree gchar *dest = g_strconcat (STG_TEST_REGISTRY "/", name, NULL);
  g_autofree gchar *with = g_strconcat ("--creds=", creds ? creds : "", NULL);

  if (creds != NULL)
    g_free (stg_test_podman_cli (fleet, host, "push", "--quiet", "--tls-verify=false", with, tag,
                                 dest, NULL));
  else
    g_free (stg_test_podman_cli (fleet, host, "push", "--quiet", "--tls-verify=false", tag, dest,
                                 NULL));
}

/* One line of htpasswd: @user and a bcrypt hash of @password. */
static gchar *
htpasswd_line (const gchar *user, const gchar *password)
{
  const gchar *salt = crypt_gensalt ("$2b$", 5, NULL, 0);

  ck_assert_msg (salt != NULL, "no bcrypt salt from crypt_gensalt");
  struct crypt_data data = { 0 };
  const gchar *h = crypt_r (password, salt, &data);
  ck_assert_msg (h != NULL && g_str_has_prefix (h, "$2b$"), "crypt(3) cannot make a bcrypt hash");
  return g_strdup_printf ("%s:%s\n", user, h);
}

StgTestRegistry *
stg_test_registry_start (const gchar *user, const gchar *password)
{
  g_autofree gchar *program = g_find_program_in_path ("docker-registry");
  g_autoptr (GError) error = NULL;

  ck_assert_msg (program != NULL, "the image pull tests need Debian's docker-registry: run "
                                  "scripts/install-deps.sh");
  StgTestRegistry *r = g_new0 (StgTestRegistry, 1);
  r->dir = g_dir_make_tmp ("reg-XXXXXX", &error);
  ck_assert_msg (r->dir != NULL, "%s", error ? error->message : "");
  g_autoptr (GString) conf = g_string_new (NULL);
  g_string_append_printf (conf,
                          "version: 0.1\n"
                          "log:\n  level: warn\n"
                          "storage:\n  filesystem:\n    rootdirectory: %s/data\n"
                          "http:\n  addr: " STG_TEST_REGISTRY "\n",
                          r->dir);
  if (user != NULL)
    {
      g_autofree gchar *line = htpasswd_line (user, password);
      g_autofree gchar *path = g_build_filename (r->dir, "htpasswd", NULL);
      ck_assert (g_file_set_contents (path, line, -1, &error));
      g_string_append_printf (conf, "auth:\n  htpasswd:\n    realm: test\n    path: %s\n", path);
    }
  g_autofree gchar *conf_path = g_build_filename (r->dir, "config.yml", NULL);
  g_autofree gchar *log = g_build_filename (r->dir, "registry.log", NULL);
  ck_assert (g_file_set_contents (conf_path, conf->str, -1, &error));
  g_autoptr (GSubprocessLauncher) launcher = g_subprocess_launcher_new (
      G_SUBPROCESS_FLAGS_STDERR_MERGE);
  g_subprocess_launcher_set_stdout_file_path (launcher, log);
  g_subprocess_launcher_set_child_setup (launcher, die_with_parent, NULL, NULL);
  r->process = g_subprocess_launcher_spawn (launcher, &error, program, "serve", conf_path, NULL);
  ck_assert_msg (r->process != NULL, "cannot start docker-registry: %s",
                 error ? error->message : "");
  gint64 deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
  while (!stg_test_port_open (STG_TEST_REGISTRY_PORT))
    {
      if (g_subprocess_get_identifier (r->process) == NULL || g_get_monotonic_time () > deadline)
        {
          g_autofree gchar *text = NULL;
          g_file_get_contents (log, &text, NULL, NULL);
          ck_abort_msg ("docker-registry did not start on " STG_TEST_REGISTRY ": %s",
                        text ? text : "");
        }
      g_usleep (20 * 1000);
    }
  return r;
}

void
stg_test_registry_stop (StgTestRegistry *r)
{
  if (r == NULL)
    return;
  g_subprocess_send_signal (r->process, SIGTERM);
  g_subprocess_wait (r->process, NULL, NULL);
  g_object_unref (r->process);
  stg_test_rmtree (r->dir);
  g_free (r->dir);
  g_free (r);
}

gboolean
stg_test_port_open (guint16 port)
{
  g_autoptr (GSocketClient) client = g_socket_client_new ();
  g_autoptr (GSocketConnection) conn = g_socket_client_connect_to_host (client, "127.0.0.1", port, NULL, NULL);

  return conn != NULL;
}

gboolean
stg_test_wait_http_body (guint16 port, const gchar *path, const gchar *body, guint timeout_ms)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) timeout_ms * 1000;

  do
    {
      g_autofree gchar *got = NULL;
      if (stg_test_port_open (port) && stg_test_http_get (port, path, &got) == 200 &&
          g_strcmp0 (got, body) == 0)
        return TRUE;
      g_usleep (20 * 1000);
    }
  while (g_get_monotonic_time () < deadline);
  return FALSE;
}

/* TRUE when @pid's command line or root directory names a path under
 * @prefix (a podman service or conmon, or a container's process). */
static gboolean
process_under (gint pid, const gchar *prefix)
{
  g_autofree gchar *cmdline_path = g_strdup_printf ("/proc/%d/cmdline", pid);
  g_autofree gchar *root_path = g_strdup_printf ("/proc/%d/root", pid);
  g_autofree gchar *cmdline = NULL;
  g_autofree gchar *root = g_file_read_link (root_path, NULL);
  gsize len = 0;

  if (root != NULL && g_str_has_prefix (root, prefix))
    return TRUE;
  if (!g_file_get_contents (cmdline_path, &cmdline, &len, NULL))
    return FALSE;
  for (gsize i = 0; i < len; i += strlen (cmdline + i) + 1)
    if (strstr (cmdline + i, prefix) != NULL)
      return TRUE;
  return FALSE;
}

static void
kill_processes_under (const gchar *prefix)
{
  g_autoptr (GDir) proc = g_dir_open ("/proc", 0, NULL);
  const gchar *name;

  while (proc != NULL && (name = g_dir_read_name (proc)) != NULL)
    {
      gint pid = g_ascii_isdigit (name[0]) ? atoi (name) : 0;
      if (pid > 0 && pid != getpid () && process_under (pid, prefix))
        kill (pid, SIGKILL);
    }
}

/* Mount points under @prefix, deepest last in /proc/self/mountinfo order. */
static void
unmount_under (const gchar *prefix)
{
  g_autofree gchar *text = NULL;

  if (!g_file_get_contents ("/proc/self/mountinfo", &text, NULL, NULL))
    return;
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (gint i = (gint) g_strv_length (lines) - 1; i >= 0; i--)
    {
      g_auto (GStrv) fields = g_strsplit (lines[i], " ", 6);
      if (g_strv_length (fields) >= 5 && g_str_has_prefix (fields[4], prefix))
        umount2 (fields[4], MNT_DETACH);
    }
}

/* Removes every container of the podman storages under @dir (a fleet's
 * folder, pm-XXXXXX/hN/storage, at any depth): container processes name
 * no path of ours, only the engine can find them. */
/* podman rm's selections, in the order containers can go: a pod's
 * containers before its anchor, which podman refuses to remove while
 * others use its namespace (a failed rm would leave the anchor's process
 * running). */
static const gchar *const REMOVE_IN_ORDER[] = {
  "--filter=label=org.stagger.role=sidecar",
  "--filter=label=org.stagger.role=main",
  "--all",
};

static void
remove_containers_under (const gchar *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  g_autofree gchar *storage = g_build_filename (dir, "storage", NULL);
  g_autofree gchar *conf = g_build_filename (dir, "..", "containers.conf", NULL);
  const gchar *name;

  if (g_file_test (storage, G_FILE_TEST_IS_DIR) && g_file_test (conf, G_FILE_TEST_EXISTS))
    {
      StgTestPodmanHost host = { .root = (gchar *) dir };
      StgTestPodman fleet = { .dir = (gchar *) dir, .conf_path = conf };
      for (guint k = 0; k < G_N_ELEMENTS (REMOVE_IN_ORDER); k++)
        {
          g_autoptr (GPtrArray) argv = podman_argv (&host);
          const gchar *rm[] = { "rm", "--force", "--time=0", REMOVE_IN_ORDER[k], NULL };
          for (guint i = 0; rm[i] != NULL; i++)
            g_ptr_array_add (argv, g_strdup (rm[i]));
          g_ptr_array_add (argv, NULL);
          g_autoptr (GSubprocessLauncher) l =
              podman_launcher (&fleet, G_SUBPROCESS_FLAGS_STDOUT_SILENCE |
                                           G_SUBPROCESS_FLAGS_STDERR_SILENCE);
          g_autoptr (GSubprocess) p =
              g_subprocess_launcher_spawnv (l, (const gchar *const *) argv->pdata, NULL);
          if (p != NULL)
            g_subprocess_wait (p, NULL, NULL);
        }
      return;
    }
  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree gchar *child = g_build_filename (dir, name, NULL);
      if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
        remove_containers_under (child);
    }
}

void
stg_test_podman_purge (const gchar *dir)
{
  g_autofree gchar *prefix = g_build_filename (dir, "/", NULL);

  remove_containers_under (dir);
  kill_processes_under (prefix);
  unmount_under (prefix);
}

void
stg_test_podman_stop (StgTestPodman *fleet)
{
  if (fleet == NULL)
    return;
  for (guint i = 0; i < fleet->hosts->len; i++)
    {
      StgTestPodmanHost *host = fleet->hosts->pdata[i];
      for (guint k = 0; k < G_N_ELEMENTS (REMOVE_IN_ORDER); k++)
        g_free (stg_test_podman_cli (fleet, host, "rm", "--force", "--time=0", REMOVE_IN_ORDER[k],
                                     NULL));
      stg_test_podman_host_down (host);
    }
  stg_test_podman_purge (fleet->dir);
  stg_test_rmtree (fleet->dir);
  for (guint i = 0; i < fleet->hosts->len; i++)
    {
      StgTestPodmanHost *host = fleet->hosts->pdata[i];
      g_free (host->name);
      g_free (host->root);
      g_free (host->socket_path);
      g_free (host->endpoint);
      g_free (host);
    }
  g_ptr_array_unref (fleet->hosts);
  g_free (fleet->conf_path);
  g_free (fleet->dir);
  g_free (fleet);
}

int
stg_test_podman_main (Suite *suite)
{
  gchar *scope = stg_test_scope_begin ();
  SRunner *sr = srunner_create (suite);

  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  stg_test_podman_purge (scope);
  stg_test_scope_end (scope);
  return failed == 0 ? 0 : 1;
}
