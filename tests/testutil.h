/* testutil.h: helpers shared by Stagger's Check suites.
 *
 * Temporary directories, a real staggerd started on free ports (found
 * through its --ready-file) and stopped with SIGTERM, Thrift clients over
 * framed TCP, and waiting on a condition with a deadline instead of sleeping
 * a fixed time. Test processes only.
 */
#pragma once

#include <check.h>
#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "framed_client.h"
#include "common/thrift_glue.h"

G_BEGIN_DECLS

/* A new empty directory under $TMPDIR; removed by stg_test_rmtree(), which
 * also kills the instances of a data directory (stg_test_kill_instances). */
gchar *stg_test_tmpdir (void);
void stg_test_rmtree (const gchar *path);

/* For a suite's main(): a directory that holds every temporary directory
 * of the suite (it becomes TMPDIR), so that stg_test_scope_end() can kill
 * the instances of tests that failed before their teardown, and remove it
 * all. Call before anything asks GLib for the temporary directory. */
gchar *stg_test_scope_begin (void);
void stg_test_scope_end (gchar *base);

/* Path of a program built in this tree (e.g. "staggerd"). */
gchar *stg_test_program (const gchar *name);

typedef struct
{
  GSubprocess *process;
  gchar *data_dir;
  gchar *ready_file;
  gint pid;
  guint16 http_port;
  guint16 thrift_port;
} StgTestDaemon;

/* Starts staggerd on free ports with @data_dir and extra arguments (NULL-
 * terminated), and waits until it is serving (fails the test otherwise).
 * As root it adds --allow-root-instances, unless STG_TEST_NO_ROOT_INSTANCES
 * is set (the tests of the users instances run as). */
StgTestDaemon *stg_test_daemon_start (const gchar *data_dir, ...) G_GNUC_NULL_TERMINATED;

/* The same, with staggerd's standard error (its log) written to the file
 * @log, which a test reads to see what it said. */
StgTestDaemon *stg_test_daemon_start_logged (const gchar *data_dir, const gchar *log,
                                             ...) G_GNUC_NULL_TERMINATED;

/* Waits until @daemon has written its ready file (removed by the caller
 * before the daemon restarts itself) and reads its ports from it. */
void stg_test_daemon_wait_ready (StgTestDaemon *daemon);

/* SIGTERM, then waits for the exit; returns the exit status (or -signal). */
gint stg_test_daemon_stop (StgTestDaemon *daemon);

/* SIGKILL, then waits. */
void stg_test_daemon_kill9 (StgTestDaemon *daemon);
void stg_test_daemon_free (StgTestDaemon *daemon);

/* Kills (SIGKILL, whole process group) every instance process whose
 * sandbox lies under @data_dir (at any depth): instances outlive staggerd by
 * design, so tests clean them up themselves. Returns how many were found. */
guint stg_test_kill_instances (const gchar *data_dir);

/* The value of @name in the environment of process @pid, or NULL. */
gchar *stg_test_process_env (gint pid, const gchar *name);

/* TRUE when process @pid exists (and is not a zombie). */
gboolean stg_test_process_alive (gint pid);

/* Runs the stagger CLI against @d's HTTP port with the words of @args
 * (NULL-terminated) and asserts it succeeds; its standard output. */
gchar *stg_test_cli (StgTestDaemon *d, const gchar *const *args);

/* CPU seconds (user and system) process @pid has used, from /proc. */
gdouble stg_test_cpu_seconds (gint pid);

/* A client of staggerd's TCP port (framed, binary). */
typedef struct
{
  ThriftTransport *transport;
  ThriftProtocol *protocol;
  ApiStaggerSchedulerIf *client;
} StgTestClient;

StgTestClient *stg_test_client_new (guint16 port);
void stg_test_client_free (StgTestClient *client);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgTestClient, stg_test_client_free)

/* A JobConfiguration with @instances instances running @command. */
ApiJobConfiguration *stg_test_job (const gchar *role, const gchar *env, const gchar *name,
                                   gint32 instances, const gchar *command);
/* The same with the executor's JSON @data and named @ports (space-separated,
 * nullable). */
ApiJobConfiguration *stg_test_job_full (const gchar *role, const gchar *env, const gchar *name,
                                        gint32 instances, const gchar *data, const gchar *ports);

/* Parses @text as JSON (fails the test if it is not). */
JsonNode *stg_test_parse_json (const gchar *text);

/* Iterates the default main context until @cond(@data) holds or @timeout_ms
 * passes; returns whether it held. */
gboolean stg_test_wait (gboolean (*cond) (gpointer data), gpointer data, guint timeout_ms);

/* One HTTP reply. */
typedef struct
{
  guint status;
  gchar *head; /* status line and headers */
  gchar *body;
} StgTestReply;

void stg_test_reply_clear (StgTestReply *reply);

/* One HTTP/1.0 request to 127.0.0.1:@port: @method @path with extra
 * header lines @headers (each ending in \r\n; nullable) and @body
 * (nullable; its Content-Length is always sent). Fails the test when there
 * is no answer. */
StgTestReply stg_test_http (guint16 port, const gchar *method, const gchar *path,
                            const gchar *headers, const gchar *body);

/* The value of header @name in @head, or NULL (new string). */
gchar *stg_test_http_header (const gchar *head, const gchar *name);

/* A new web UI session of the daemon on @port: *@cookie its Set-Cookie
 * header's value, *@token its CSRF token (new strings; NULL when the
 * daemon gave none). */
void stg_test_web_session (guint16 port, gchar **cookie, gchar **token);

/* POST @path (a web UI control) on 127.0.0.1:@port with @headers and
 * @body: its status, or 0 (the body printed) for a refusal that does not
 * say why in JSON ({"error": ...}). */
guint stg_test_web_control (guint16 port, const gchar *path, const gchar *headers,
                            const gchar *body);

/* An HTTP GET of @path on 127.0.0.1:@port; returns the status and sets
 * *@body (nullable). */
guint stg_test_http_get (guint16 port, const gchar *path, gchar **body);

/* The status of a GET of @path on 127.0.0.1:@port, or 0 when nothing
 * answers there within 2 s (no listener, a connection closed early). */
guint stg_test_http_probe (guint16 port, const gchar *path);

G_END_DECLS
