/* testutil.c: helpers for Stagger's Check suites (see testutil.h). */
#include "config.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "common/binary_protocol.h"
#include "common/jobkey.h"
#include "spawn/cgroup.h"
#include "testutil.h"

gchar *
stg_test_tmpdir (void)
{
  g_autoptr (GError) error = NULL;
  gchar *dir = g_dir_make_tmp ("stagger-test-XXXXXX", &error);

  ck_assert_msg (dir != NULL, "cannot make a temporary directory: %s", error ? error->message : "");
  return dir;
}

gchar *
stg_test_scope_begin (void)
{
  const gchar *tmp = g_getenv ("TMPDIR");
  gchar *base = g_build_filename (tmp && *tmp ? tmp : "/tmp", "stagger-suite-XXXXXX", NULL);

  if (g_mkdtemp (base) == NULL)
    g_error ("cannot make a temporary directory %s: %s", base, g_strerror (errno));
  g_setenv ("TMPDIR", base, TRUE);
  return base;
}

void
stg_test_scope_end (gchar *base)
{
  stg_test_kill_instances (base);
  stg_test_rmtree (base);
  g_free (base);
}

/* Removes the control groups of the runs of data folder @data_dir (a
 * staggerd's, stopped) once its killed instances have left them: names
 * start with the first 8 hex digits of the SHA-256 of its path, as
 * local_limits.c names them. Only as root, where groups are made. */
static void
remove_groups (const gchar *data_dir)
{
  if (geteuid () != 0)
    return;
  g_autoptr (StgCgroups) cg = stg_cgroups_new (NULL, NULL);
  g_autofree gchar *path = g_canonicalize_filename (data_dir, NULL);
  g_autofree gchar *sum = g_compute_checksum_for_string (G_CHECKSUM_SHA256, path, -1);
  g_autofree gchar *prefix = g_strdup_printf ("%.8s.", sum);

  if (stg_cgroups_version (cg) == STG_CGROUP_NONE)
    return;
  for (gint tries = 0; tries < 100 && stg_cgroups_prune (cg, prefix) > 0; tries++)
    g_usleep (20000);
}

void
stg_test_rmtree (const gchar *path)
{
  g_autoptr (GDir) dir = NULL;
  const gchar *name;

  if (path == NULL)
    return;
  /* A data directory: its instances go first, they outlive staggerd. */
  g_autofree gchar *sandboxes = g_build_filename (path, "sandboxes", NULL);
  if (g_file_test (sandboxes, G_FILE_TEST_IS_DIR))
    {
      stg_test_kill_instances (path);
      remove_groups (path);
    }
  dir = g_dir_open (path, 0, NULL);
  if (dir != NULL)
    while ((name = g_dir_read_name (dir)) != NULL)
      {
        g_autofree gchar *child = g_build_filename (path, name, NULL);
        if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
          stg_test_rmtree (child);
        else
          g_unlink (child);
      }
  g_rmdir (path);
}

gchar *
stg_test_program (const gchar *name)
{
  return g_build_filename (STG_BUILDDIR, name, NULL);
}

static gboolean
read_ready (StgTestDaemon *d)
{
  g_autoptr (JsonParser) parser = json_parser_new ();

  if (!g_file_test (d->ready_file, G_FILE_TEST_EXISTS) ||
      !json_parser_load_from_file (parser, d->ready_file, NULL))
    return FALSE;
  JsonObject *o = json_node_get_object (json_parser_get_root (parser));
  d->pid = (gint) json_object_get_int_member (o, "pid");
  d->http_port = (guint16) json_object_get_int_member (o, "http_port");
  d->thrift_port = (guint16) json_object_get_int_member (o, "thrift_port");
  return TRUE;
}

static void
die_with_parent (gpointer data G_GNUC_UNUSED)
{
  prctl (PR_SET_PDEATHSIG, SIGTERM);
}

/* Starts staggerd with @data_dir and the arguments in @ap; its standard
 * error goes to @log when given. */
static StgTestDaemon *
daemon_startv (const gchar *data_dir, const gchar *log, va_list ap)
{
  StgTestDaemon *d = g_new0 (StgTestDaemon, 1);
  g_autoptr (GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GError) error = NULL;
  const gchar *arg;

  d->data_dir = g_strdup (data_dir);
  d->ready_file = g_build_filename (data_dir, "ready.json", NULL);
  g_unlink (d->ready_file);
  g_ptr_array_add (argv, stg_test_program ("staggerd"));
  g_ptr_array_add (argv, g_strconcat ("--data-dir=", data_dir, NULL));
  g_ptr_array_add (argv, g_strdup ("--http-port=0"));
  g_ptr_array_add (argv, g_strdup ("--thrift-port=0"));
  g_ptr_array_add (argv, g_strconcat ("--ready-file=", d->ready_file, NULL));
  /* As root (CI), the tests' instances run as root as they were written
   * to; the tests of [roles] start their daemons without this. */
  if (geteuid () == 0 && !g_getenv ("STG_TEST_NO_ROOT_INSTANCES"))
    g_ptr_array_add (argv, g_strdup ("--allow-root-instances"));
  while ((arg = va_arg (ap, const gchar *)) != NULL)
    g_ptr_array_add (argv, g_strdup (arg));
  g_ptr_array_add (argv, NULL);

  /* A test that fails ends its process at once: the daemon goes with it. */
  g_autoptr (GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_NONE);
  g_subprocess_launcher_set_child_setup (launcher, die_with_parent, NULL, NULL);
  if (log != NULL)
    g_subprocess_launcher_set_stderr_file_path (launcher, log);
  d->process = g_subprocess_launcher_spawnv (launcher, (const gchar *const *) argv->pdata, &error);
  ck_assert_msg (d->process != NULL, "cannot start staggerd: %s", error ? error->message : "");
  stg_test_daemon_wait_ready (d);
  return d;
}

StgTestDaemon *
stg_test_daemon_start (const gchar *data_dir, ...)
{
  va_list ap;

  va_start (ap, data_dir);
  StgTestDaemon *d = daemon_startv (data_dir, NULL, ap);
  va_end (ap);
  return d;
}

StgTestDaemon *
stg_test_daemon_start_logged (const gchar *data_dir, const gchar *log, ...)
{
  va_list ap;

  va_start (ap, log);
  StgTestDaemon *d = daemon_startv (data_dir, log, ap);
  va_end (ap);
  return d;
}

void
stg_test_daemon_wait_ready (StgTestDaemon *d)
{
  /* The daemon writes the ready file once it serves. */
  gint64 deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
  while (!read_ready (d))
    {
      ck_assert_msg (g_subprocess_get_identifier (d->process) != NULL,
                     "staggerd exited before it was ready");
      ck_assert_msg (g_get_monotonic_time () < deadline, "staggerd not ready after 30 s");
      g_usleep (10 * 1000);
    }
}

gint
stg_test_daemon_stop (StgTestDaemon *d)
{
  g_autoptr (GError) error = NULL;

  if (d->process == NULL)
    return 0;
  g_subprocess_send_signal (d->process, SIGTERM);
  ck_assert_msg (g_subprocess_wait (d->process, NULL, &error), "waiting for staggerd: %s",
                 error ? error->message : "");
  gint status = g_subprocess_get_if_exited (d->process) ? g_subprocess_get_exit_status (d->process)
                                                       : -g_subprocess_get_term_sig (d->process);
  g_clear_object (&d->process);
  return status;
}

void
stg_test_daemon_kill9 (StgTestDaemon *d)
{
  if (d->process == NULL)
    return;
  g_subprocess_force_exit (d->process);
  g_subprocess_wait (d->process, NULL, NULL);
  g_clear_object (&d->process);
}

void
stg_test_daemon_free (StgTestDaemon *d)
{
  if (d == NULL)
    return;
  if (d->process != NULL)
    stg_test_daemon_kill9 (d);
  g_free (d->data_dir);
  g_free (d->ready_file);
  g_free (d);
}

gchar *
stg_test_process_env (gint pid, const gchar *name)
{
  g_autofree gchar *path = g_strdup_printf ("/proc/%d/environ", pid);
  g_autofree gchar *data = NULL;
  gsize len = 0;

  if (!g_file_get_contents (path, &data, &len, NULL))
    return NULL;
  gsize n = strlen (name);
  for (gsize i = 0; i < len; i += strlen (data + i) + 1)
    if (strncmp (data + i, name, n) == 0 && data[i + n] == '=')
      return g_strdup (data + i + n + 1);
  return NULL;
}

gboolean
stg_test_process_alive (gint pid)
{
  g_autofree gchar *path = g_strdup_printf ("/proc/%d/stat", pid);
  g_autofree gchar *text = NULL;

  if (pid <= 0 || !g_file_get_contents (path, &text, NULL, NULL))
    return FALSE;
  const gchar *p = strrchr (text, ')');
  return p != NULL && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

gchar *
stg_test_cli (StgTestDaemon *d, const gchar *const *args)
{
  g_autofree gchar *prog = stg_test_program ("stagger");
  g_autofree gchar *url = g_strdup_printf ("http://127.0.0.1:%u", d->http_port);
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autofree gchar *err = NULL;
  gchar *out = NULL;
  gint status = 0;

  g_ptr_array_add (argv, prog);
  g_ptr_array_add (argv, "--url");
  g_ptr_array_add (argv, url);
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  ck_assert (
      g_spawn_sync (NULL, (gchar **) argv->pdata, NULL, 0, NULL, NULL, &out, &err, &status, NULL));
  ck_assert_msg (g_spawn_check_wait_status (status, NULL), "stagger %s %s: %s", args[0],
                 args[0] ? args[1] : "", err);
  return out;
}

gdouble
stg_test_cpu_seconds (gint pid)
{
  g_autofree gchar *path = g_strdup_printf ("/proc/%d/stat", pid);
  g_autofree gchar *text = NULL;

  ck_assert (g_file_get_contents (path, &text, NULL, NULL));
  /* Fields after the command name, which ends at the last ')': utime and
   * stime are the 12th and 13th. */
  g_auto (GStrv) f = g_strsplit (strrchr (text, ')') + 2, " ", -1);
  return (g_ascii_strtod (f[11], NULL) + g_ascii_strtod (f[12], NULL)) / sysconf (_SC_CLK_TCK);
}

guint
stg_test_kill_instances (const gchar *data_dir)
{
  g_autoptr (GDir) proc = g_dir_open ("/proc", 0, NULL);
  g_autofree gchar *prefix = g_build_filename (data_dir, "/", NULL);
  const gchar *name;
  guint n = 0;

  if (proc == NULL)
    return 0;
  while ((name = g_dir_read_name (proc)) != NULL)
    {
      if (!g_ascii_isdigit (name[0]))
        continue;
      gint pid = atoi (name);
      g_autofree gchar *sandbox = stg_test_process_env (pid, "STAGGER_SANDBOX");
      if (sandbox != NULL && g_str_has_prefix (sandbox, prefix) && strstr (sandbox, "/sandboxes/") != NULL)
        {
          kill (-pid, SIGKILL);
          kill (pid, SIGKILL);
          n++;
        }
    }
  return n;
}

StgTestClient *
stg_test_client_new (guint16 port)
{
  StgTestClient *c = g_new0 (StgTestClient, 1);
  g_autoptr (GError) error = NULL;

  c->transport = THRIFT_TRANSPORT (stg_framed_client_new ("127.0.0.1", port, 60, 64 << 20));
  c->protocol = stg_binary_protocol_new (c->transport);
  c->client = g_object_new (API_TYPE_STAGGER_SCHEDULER_CLIENT,
                            "input_protocol", c->protocol, "output_protocol", c->protocol, NULL);
  ck_assert_msg (thrift_transport_open (c->transport, &error), "cannot connect to port %u: %s",
                 port, error ? error->message : "");
  return c;
}

void
stg_test_client_free (StgTestClient *c)
{
  if (c == NULL)
    return;
  if (c->transport != NULL && thrift_transport_is_open (c->transport))
    thrift_transport_close (c->transport, NULL);
  g_clear_object (&c->client);
  g_clear_object (&c->protocol);
  g_clear_object (&c->transport);
  g_free (c);
}

ApiJobConfiguration *
stg_test_job_full (const gchar *role, const gchar *env, const gchar *name, gint32 instances,
                   const gchar *data, const gchar *ports)
{
  g_autoptr (ApiJobKey) key = stg_job_key_new (role, env, name);
  g_autoptr (ApiIdentity) owner = g_object_new (API_TYPE_IDENTITY, "user", role, NULL);
  g_autoptr (ApiExecutorConfig) exec = g_object_new (API_TYPE_EXECUTOR_CONFIG,
                                                     "name", "stagger", "data", data, NULL);
  g_autoptr (ApiTaskConfig) task = g_object_new (API_TYPE_TASK_CONFIG,
      "job", key, "owner", owner, "isService", TRUE, "priority", 0, "maxTaskFailures", 1,
      "executorConfig", exec, NULL);
  ApiResource *cpu = g_object_new (API_TYPE_RESOURCE, "numCpus", 0.25, NULL);
  g_hash_table_add (task->resources, cpu);
  g_auto (GStrv) names = g_strsplit (ports ? ports : "", " ", -1);
  for (guint i = 0; names[i] != NULL; i++)
    if (names[i][0] != '\0')
      g_hash_table_add (task->resources, g_object_new (API_TYPE_RESOURCE, "namedPort", names[i], NULL));
  task->__isset_resources = TRUE;
  return g_object_new (API_TYPE_JOB_CONFIGURATION, "key", key, "owner", owner,
                       "taskConfig", task, "instanceCount", instances, NULL);
}

ApiJobConfiguration *
stg_test_job (const gchar *role, const gchar *env, const gchar *name, gint32 instances,
              const gchar *command)
{
  g_autofree gchar *data = g_strdup_printf ("{\"command\": \"%s\"}", command);
  return stg_test_job_full (role, env, name, instances, data, NULL);
}

JsonNode *
stg_test_parse_json (const gchar *text)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;

  ck_assert_msg (json_parser_load_from_data (parser, text, -1, &error), "bad JSON (%s): %s",
                 error ? error->message : "", text);
  return json_node_copy (json_parser_get_root (parser));
}

gboolean
stg_test_wait (gboolean (*cond) (gpointer data), gpointer data, guint timeout_ms)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) timeout_ms * 1000;

  while (!cond (data))
    {
      if (g_get_monotonic_time () >= deadline)
        return FALSE;
      if (!g_main_context_iteration (NULL, FALSE))
        g_usleep (2000);
    }
  return TRUE;
}

void
stg_test_reply_clear (StgTestReply *reply)
{
  g_clear_pointer (&reply->head, g_free);
  g_clear_pointer (&reply->body, g_free);
}

/* Sends @req to 127.0.0.1:@port and reads the whole answer (NUL-ended),
 * or NULL with @error when nothing answers within @timeout_s (0: no
 * limit). */
static GByteArray *
http_exchange (guint16 port, const gchar *req, guint timeout_s, GError **error)
{
  g_autoptr (GSocketClient) client = g_socket_client_new ();

  g_socket_client_set_timeout (client, timeout_s);
  g_autoptr (GSocketConnection) conn = g_socket_client_connect_to_host (client, "127.0.0.1", port,
                                                                        NULL, error);
  if (conn == NULL ||
      !g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (conn)), req,
                                  strlen (req), NULL, NULL, error))
    return NULL;
  g_autoptr (GByteArray) all = g_byte_array_new ();
  guint8 buf[8192];
  gssize n;
  while ((n = g_input_stream_read (g_io_stream_get_input_stream (G_IO_STREAM (conn)), buf,
                                   sizeof buf, NULL, error)) > 0)
    g_byte_array_append (all, buf, (guint) n);
  if (n < 0)
    return NULL;
  g_byte_array_append (all, (const guint8 *) "", 1);
  return g_steal_pointer (&all);
}

StgTestReply
stg_test_http (guint16 port, const gchar *method, const gchar *path, const gchar *headers,
               const gchar *body)
{
  g_autoptr (GError) error = NULL;
  StgTestReply r = { 0 };
  g_autofree gchar *req = g_strdup_printf ("%s %s HTTP/1.0\r\nHost: 127.0.0.1\r\n%sContent-Length: "
                                           "%zu\r\n\r\n%s",
                                           method, path, headers ? headers : "",
                                           body ? strlen (body) : 0, body ? body : "");
  g_autoptr (GByteArray) all = http_exchange (port, req, 0, &error);

  ck_assert_msg (all != NULL, "no answer from HTTP port %u: %s", port, error ? error->message : "");
  const gchar *text = (const gchar *) all->data;
  const gchar *split = strstr (text, "\r\n\r\n");
  ck_assert_msg (split != NULL, "no header end in: %s", text);
  ck_assert_msg (sscanf (text, "HTTP/1.%*d %u", &r.status) == 1, "bad HTTP reply: %s", text);
  r.head = g_strndup (text, (gsize) (split - text));
  r.body = g_strdup (split + 4);
  return r;
}

guint
stg_test_http_probe (guint16 port, const gchar *path)
{
  g_autofree gchar *req = g_strdup_printf ("GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path);
  g_autoptr (GByteArray) all = http_exchange (port, req, 2, NULL);
  guint status = 0;

  if (all == NULL || sscanf ((const gchar *) all->data, "HTTP/1.%*d %u", &status) != 1)
    return 0;
  return status;
}

gchar *
stg_test_http_header (const gchar *head, const gchar *name)
{
  g_auto (GStrv) lines = g_strsplit (head, "\r\n", -1);

  for (guint i = 1; lines[i] != NULL; i++)
    {
      const gchar *colon = strchr (lines[i], ':');
      if (colon != NULL && (gsize) (colon - lines[i]) == strlen (name) &&
          g_ascii_strncasecmp (lines[i], name, strlen (name)) == 0)
        return g_strstrip (g_strdup (colon + 1));
    }
  return NULL;
}

void
stg_test_web_session (guint16 port, gchar **cookie, gchar **token)
{
  StgTestReply s = stg_test_http (port, "GET", "/ui/api/session", NULL, NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonNode *root = s.body != NULL && json_parser_load_from_data (parser, s.body, -1, NULL)
                       ? json_parser_get_root (parser)
                       : NULL;
  JsonObject *o = root != NULL && JSON_NODE_HOLDS_OBJECT (root) ? json_node_get_object (root)
                                                                : NULL;

  *token = o != NULL ? g_strdup (json_object_get_string_member_with_default (o, "csrf", NULL))
                     : NULL;
  *cookie = stg_test_http_header (s.head, "Set-Cookie");
  stg_test_reply_clear (&s);
}

guint
stg_test_web_control (guint16 port, const gchar *path, const gchar *headers, const gchar *body)
{
  StgTestReply r = stg_test_http (port, "POST", path, headers, body);
  g_autoptr (JsonParser) parser = json_parser_new ();
  guint status = r.status;

  if (status != 200)
    {
      JsonNode *root = r.body != NULL && json_parser_load_from_data (parser, r.body, -1, NULL)
                           ? json_parser_get_root (parser)
                           : NULL;
      if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root) ||
          !json_object_has_member (json_node_get_object (root), "error"))
        {
          g_printerr ("%s answered %u without saying why: %s\n", path, status, r.body);
          status = 0;
        }
    }
  stg_test_reply_clear (&r);
  return status;
}

guint
stg_test_http_get (guint16 port, const gchar *path, gchar **body)
{
  StgTestReply r = stg_test_http (port, "GET", path, NULL, NULL);

  if (body != NULL)
    *body = g_steal_pointer (&r.body);
  stg_test_reply_clear (&r);
  return r.status;
}
