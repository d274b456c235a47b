/* gates_test.c: Check suite for the requests staggerd makes itself: the
 * real gate runner (src/runtime/gates.c): HTTP gates against a real HTTP
 * server on loopback (status, a JSONPath compared with a threshold, a
 * Prometheus-style answer, an answer that is too big, one that never comes
 * and is cancelled) and shell gates (exit status and output, the
 * environment the engine gives, a command that hangs and is cancelled with
 * its whole process group); and the webhook notifier (src/runtime/notify.c):
 * signed bodies with a delivery id, a bounded queue that gives up its
 * oldest rather than waits, retries then giving up, refused hosts, and
 * notices kept in a store: those of a rolled back transaction never, the
 * waiting ones sent by the next notifier on the same store. */
#include "config.h"

#include <check.h>
#include <signal.h>

#include "common/json_check.h"
#include "senders/gates.h"
#include "senders/notify.h"
#include "store/notices.h"
#include "testutil.h"

static GSubprocess *server;
static gchar *base;
static StgGateRunner *runner;

typedef struct
{
  gboolean called;
  gboolean passed;
  gchar *message;
} Outcome;

static void
on_done (gpointer data, gboolean passed, const gchar *message)
{
  Outcome *o = data;
  ck_assert (!o->called);
  o->called = TRUE;
  o->passed = passed;
  o->message = g_strdup (message);
}

/* The HTTP server gates talk to: a separate process (Python's http.server),
 * which prints its port. /slow never answers; /big is over the limit. */
static const gchar server_py[] =
    "import http.server, json, sys, time, urllib.parse\n"
    "PROM = b'{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":"
    "[{\"metric\":{},\"value\":[1700000000.1,\"3\"]}]}}'\n"
    "PLAIN = b'{\"ok\": true, \"errors\": 0.25, \"name\": \"x\"}'\n"
    "class H(http.server.BaseHTTPRequestHandler):\n"
    "    last = b'{}'\n"
    "    def log_message(self, *a): pass\n"
    "    def do_POST(self):\n"
    "        body = self.rfile.read(int(self.headers['Content-Length']))\n"
    "        if self.path == '/slow':\n"
    "            time.sleep(3600)\n"
    "        url = urllib.parse.urlparse(self.path)\n"
    "        if 'task=' in url.query:\n"
    "            return self.coordinator(url, json.loads(body))\n"
    "        H.last = json.dumps({'sig': self.headers.get('X-Stagger-Signature-256'),\n"
    "            'event': self.headers.get('X-Stagger-Event'),\n"
    "            'delivery': self.headers.get('X-Stagger-Delivery'),\n"
    "            'body': body.decode()}).encode()\n"
    "        self.send_response(204 if self.path == '/hook' else 500)\n"
    "        self.send_header('Content-Length', '0')\n"
    "        self.end_headers()\n"
    "    def do_GET(self):\n"
    "        if self.path == '/slow':\n"
    "            time.sleep(3600)\n"
    "        code, body = 200, PLAIN\n"
    "        if self.path == '/last': body = H.last\n"
    "        if self.path == '/prom': body = PROM\n"
    "        if self.path == '/big': body = b'0' * (1024 * 1024 + 10)\n"
    "        if self.path == '/broken': code, body = 503, b''\n"
    "        if self.path == '/to-metadata':\n"
    "            self.send_response(302)\n"
    "            self.send_header('Location', 'http://169.254.169.254/latest/meta-data/')\n"
    "            self.send_header('Content-Length', '0')\n"
    "            self.end_headers()\n"
    "            return\n"
    "        self.send_response(code)\n"
    "        self.send_header('Content-Length', str(len(body)))\n"
    "        self.end_headers()\n"
    "        self.wfile.write(body)\n"
    "    def coordinator(self, url, sent):\n"
    "        task = urllib.parse.parse_qs(url.query)['task'][0]\n"
    "        yes = url.path == '/yes' and task == sent['task']\n"
    "        body = json.dumps({'drain': yes, 'go': True}).encode()\n"
    "        if url.path == '/odd': body = b'{\"drain\": \"yes\"}'\n"
    "        if url.path == '/slow': time.sleep(3600)\n"
    "        self.send_response(200)\n"
    "        self.send_header('Content-Length', str(len(body)))\n"
    "        self.end_headers()\n"
    "        self.wfile.write(body)\n"
    "s = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)\n"
    "s.daemon_threads = True\n"
    "print(s.server_address[1], flush=True)\n"
    "s.serve_forever()\n";

static void
setup (void)
{
  g_autoptr (GError) error = NULL;
  server = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error, "python3", "-c", server_py,
                             NULL);
  ck_assert_msg (server != NULL, "python3: %s", error ? error->message : "");
  g_autoptr (GDataInputStream) in = g_data_input_stream_new (g_subprocess_get_stdout_pipe (server));
  g_autofree gchar *port = g_data_input_stream_read_line (in, NULL, NULL, &error);
  ck_assert_msg (port != NULL, "no port from the server");
  base = g_strdup_printf ("http://127.0.0.1:%s", port);
  runner = stg_gate_runner_new (NULL, NULL, NULL);
}

static void
teardown (void)
{
  g_clear_pointer (&runner, stg_gate_runner_free);
  g_subprocess_force_exit (server);
  g_subprocess_wait (server, NULL, NULL);
  g_clear_object (&server);
  g_clear_pointer (&base, g_free);
}

/* Runs one attempt of @gate with the environment @env (nullable), or
 * asks @ask, to its end (or @cancel_after_ms, then cancels it). */
static Outcome
run_or_ask (ApiRolloutGate *gate, const gchar *const *env, const StgCoordinatorAsk *ask,
            gint cancel_after_ms)
{
  Outcome o = { 0 };
  g_autoptr (GCancellable) cancel = g_cancellable_new ();
  gint64 start = g_get_monotonic_time ();

  if (gate != NULL)
    stg_gate_runner_run (runner, gate, "www", env, cancel, on_done, &o);
  else
    stg_gate_runner_ask (runner, ask, cancel, on_done, &o);
  ck_assert (!o.called); /* never from inside run() */
  while (!o.called)
    {
      g_main_context_iteration (NULL, FALSE);
      gint64 ms = (g_get_monotonic_time () - start) / 1000;
      if (cancel_after_ms > 0 && ms >= cancel_after_ms)
        {
          g_cancellable_cancel (cancel);
          /* A cancelled attempt reports nothing, ever. */
          for (gint i = 0; i < 200; i++)
            {
              g_main_context_iteration (NULL, FALSE);
              g_usleep (1000);
            }
          break;
        }
      ck_assert_msg (ms < 10000, "the attempt did not end");
      g_usleep (1000);
    }
  return o;
}

static Outcome
attempt (ApiRolloutGate *gate, gint cancel_after_ms)
{
  return run_or_ask (gate, NULL, NULL, cancel_after_ms);
}

/* Asks the server's coordinator at @path about task @task with @key. */
static Outcome
ask (const gchar *path, const gchar *key, gint cancel_after_ms)
{
  g_autofree gchar *url = g_strconcat (base, path, NULL);
  StgCoordinatorAsk q = { url, key, "local/www/prod/web/3",
                          "{\"task\": \"local/www/prod/web/3\"}" };
  return run_or_ask (NULL, NULL, &q, cancel_after_ms);
}

static ApiRolloutGate *
http_gate (const gchar *path)
{
  g_autofree gchar *url = g_strconcat (base, path, NULL);
  return g_object_new (API_TYPE_ROLLOUT_GATE, "name", "g", "kind", API_ROLLOUT_GATE_KIND_HTTP,
                       "url", url, NULL);
}

static ApiRolloutGate *
shell_gate (const gchar *command)
{
  return g_object_new (API_TYPE_ROLLOUT_GATE, "name", "s", "kind", API_ROLLOUT_GATE_KIND_SHELL,
                       "command", command, NULL);
}

START_TEST (http_status)
{
  g_autoptr (ApiRolloutGate) ok = http_gate ("/health");
  Outcome o = attempt (ok, 0);
  ck_assert (o.passed);
  ck_assert_str_eq (o.message, "HTTP 200");
  g_free (o.message);

  g_autoptr (ApiRolloutGate) broken = http_gate ("/broken");
  o = attempt (broken, 0);
  ck_assert (!o.passed);
  ck_assert_str_eq (o.message, "HTTP 503 Service Unavailable (expected 200)");
  g_free (o.message);

  g_object_set (broken, "expectStatus", 503, NULL);
  o = attempt (broken, 0);
  ck_assert (o.passed);
  g_free (o.message);

  g_autoptr (ApiRolloutGate) closed = g_object_new (API_TYPE_ROLLOUT_GATE, "name", "c", "kind",
                                                    API_ROLLOUT_GATE_KIND_HTTP, "url",
                                                    "http://127.0.0.1:1/", NULL);
  o = attempt (closed, 0);
  ck_assert (!o.passed);
  ck_assert_msg (strstr (o.message, "onnect") != NULL, "%s", o.message);
  g_free (o.message);
}
END_TEST

START_TEST (http_json_path)
{
  g_autoptr (ApiRolloutGate) prom = http_gate ("/prom");
  g_object_set (prom, "jsonPath", "$.data.result[0].value[1]", "compare", "<=", "threshold", 0.0,
                NULL);
  Outcome o = attempt (prom, 0);
  ck_assert (!o.passed);
  ck_assert_str_eq (o.message, "3 > 0");
  g_free (o.message);

  g_object_set (prom, "threshold", 5.0, NULL);
  o = attempt (prom, 0);
  ck_assert (o.passed);
  ck_assert_str_eq (o.message, "3 <= 5");
  g_free (o.message);

  g_autoptr (ApiRolloutGate) plain = http_gate ("/health");
  g_object_set (plain, "jsonPath", "$.errors", "compare", "<", "threshold", 0.5, NULL);
  o = attempt (plain, 0);
  ck_assert (o.passed);
  ck_assert_str_eq (o.message, "0.25 < 0.5");
  g_free (o.message);

  g_object_set (plain, "jsonPath", "$.name", NULL);
  o = attempt (plain, 0);
  ck_assert (!o.passed);
  ck_assert_str_eq (o.message, "$.name is \"x\", not a number");
  g_free (o.message);

  g_object_set (plain, "jsonPath", "$.missing", NULL);
  o = attempt (plain, 0);
  ck_assert (!o.passed);
  ck_assert_str_eq (o.message, "$.missing matches nothing in the answer");
  g_free (o.message);

  g_autoptr (ApiRolloutGate) big = http_gate ("/big");
  o = attempt (big, 0);
  ck_assert (!o.passed);
  ck_assert_str_eq (o.message, "the answer is larger than 1 MiB");
  g_free (o.message);
}
END_TEST

START_TEST (http_hang_is_cancelled)
{
  g_autoptr (ApiRolloutGate) slow = http_gate ("/slow");
  Outcome o = attempt (slow, 300);
  ck_assert (!o.called);
}
END_TEST

START_TEST (coordinator_answers)
{
  /* The task key goes as ?task= and in the body. */
  Outcome o = ask ("/yes", "drain", 0);
  ck_assert (o.passed);
  ck_assert_str_eq (o.message, "{\"drain\": true}");
  g_free (o.message);

  o = ask ("/no", "drain", 0);
  ck_assert (!o.passed);
  ck_assert_str_eq (o.message, "{\"drain\": false}");
  g_free (o.message);

  o = ask ("/no", "go", 0);
  ck_assert (o.passed);
  g_free (o.message);

  o = ask ("/odd", "drain", 0);
  ck_assert (!o.passed);
  ck_assert_str_eq (o.message, "the answer has no true or false \"drain\"");
  g_free (o.message);

  o = ask ("/broken?x=1", "drain", 0);
  ck_assert (!o.passed);
  g_free (o.message);

  o = ask ("/slow", "drain", 300);
  ck_assert (!o.called);
}
END_TEST

START_TEST (shell_status_and_output)
{
  g_autoptr (ApiRolloutGate) ok = shell_gate ("echo first; echo all good");
  Outcome o = attempt (ok, 0);
  ck_assert (o.passed);
  ck_assert_str_eq (o.message, "exit status 0: all good");
  g_free (o.message);

  g_autoptr (ApiRolloutGate) bad = shell_gate ("echo 'ledgers under-replicated: 3' >&2; exit 3");
  o = attempt (bad, 0);
  ck_assert (!o.passed);
  ck_assert_str_eq (o.message, "exit status 3: ledgers under-replicated: 3");
  g_free (o.message);

  /* Nothing of the test's environment reaches the command. */
  g_setenv ("STAGGER_SECRET", "x", TRUE);
  g_autoptr (ApiRolloutGate) env = shell_gate ("test -z \"$STAGGER_SECRET\"");
  o = attempt (env, 0);
  ck_assert (o.passed);
  g_free (o.message);

  /* What the engine gives it does, and PATH, HOME and LANG stay its own. */
  const gchar *const given[] = { "STAGGER_FROM_VERSION=2", "STAGGER_TO_VERSION=1", "PATH=/nowhere",
                                 NULL };
  g_autoptr (ApiRolloutGate) versions = shell_gate (
      "echo \"$STAGGER_FROM_VERSION->$STAGGER_TO_VERSION $PATH\"");
  o = run_or_ask (versions, given, NULL, 0);
  ck_assert (o.passed);
  ck_assert_str_eq (o.message, "exit status 0: 2->1 /usr/local/bin:/usr/bin:/bin");
  g_free (o.message);
}
END_TEST

START_TEST (shell_hang_kills_the_group)
{
  g_autofree gchar *dir = stg_test_tmpdir ();
  g_autofree gchar *pidfile = g_build_filename (dir, "pid", NULL);
  g_autofree gchar *cmd = g_strdup_printf ("sleep 300 & echo $! > %s; wait", pidfile);
  g_autoptr (ApiRolloutGate) hang = shell_gate (cmd);
  Outcome o = attempt (hang, 500);
  ck_assert (!o.called);
  g_autofree gchar *text = NULL;
  ck_assert (g_file_get_contents (pidfile, &text, NULL, NULL));
  pid_t child = (pid_t) g_ascii_strtoll (text, NULL, 10);
  ck_assert_int_gt (child, 1);
  /* The background sleep went with the shell. */
  gboolean gone = FALSE;
  for (gint i = 0; i < 200 && !gone; i++)
    {
      g_autofree gchar *stat = g_strdup_printf ("/proc/%d/stat", child);
      g_autofree gchar *st = NULL;
      gone = !g_file_get_contents (stat, &st, NULL, NULL) || strstr (st, ") Z ") != NULL;
      if (!gone)
        g_usleep (10000);
    }
  ck_assert_msg (gone, "the gate's background process %d outlived the cancel", child);
  stg_test_rmtree (dir);
}
END_TEST

/* ---- where HTTP gates may go ------------------------------------------------------ */

/* A resolver that answers "metadata.test" with the cloud metadata address,
 * as a name an attacker controls could; others go to the real one. */
typedef struct
{
  GResolver parent;
  GResolver *real;
} FakeResolver;
typedef struct
{
  GResolverClass parent_class;
} FakeResolverClass;
GType fake_resolver_get_type (void);
G_DEFINE_TYPE (FakeResolver, fake_resolver, G_TYPE_RESOLVER)

static GList *
fake_lookup (GResolver *resolver, const gchar *host, GResolverNameLookupFlags flags,
             GCancellable *cancel, GError **error)
{
  FakeResolver *self = (FakeResolver *) resolver;

  if (!g_str_equal (host, "metadata.test"))
    return g_resolver_lookup_by_name_with_flags (self->real, host, flags, cancel, error);
  if (flags & G_RESOLVER_NAME_LOOKUP_FLAGS_IPV6_ONLY)
    {
      g_set_error (error, G_RESOLVER_ERROR, G_RESOLVER_ERROR_NOT_FOUND, "no IPv6 address");
      return NULL;
    }
  return g_list_append (NULL, g_inet_address_new_from_string ("169.254.169.254"));
}

static GList *
fake_lookup_plain (GResolver *resolver, const gchar *host, GCancellable *cancel, GError **error)
{
  return fake_lookup (resolver, host, G_RESOLVER_NAME_LOOKUP_FLAGS_DEFAULT, cancel, error);
}

static void
fake_lookup_async (GResolver *resolver, const gchar *host, GResolverNameLookupFlags flags,
                   GCancellable *cancel, GAsyncReadyCallback callback, gpointer data)
{
  g_autoptr (GTask) task = g_task_new (resolver, cancel, callback, data);
  GError *error = NULL;
  GList *found = fake_lookup (resolver, host, flags, cancel, &error);

  if (found != NULL)
    g_task_return_pointer (task, found, (GDestroyNotify) g_resolver_free_addresses);
  else
    g_task_return_error (task, error);
}

static void
fake_lookup_plain_async (GResolver *resolver, const gchar *host, GCancellable *cancel,
                         GAsyncReadyCallback callback, gpointer data)
{
  fake_lookup_async (resolver, host, G_RESOLVER_NAME_LOOKUP_FLAGS_DEFAULT, cancel, callback, data);
}

static GList *
fake_lookup_finish (GResolver *resolver, GAsyncResult *result, GError **error)
{
  (void) resolver;
  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
fake_resolver_finalize (GObject *object)
{
  g_clear_object (&((FakeResolver *) object)->real);
  G_OBJECT_CLASS (fake_resolver_parent_class)->finalize (object);
}

static void
fake_resolver_class_init (FakeResolverClass *klass)
{
  GResolverClass *r = G_RESOLVER_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = fake_resolver_finalize;
  r->lookup_by_name = fake_lookup_plain;
  r->lookup_by_name_async = fake_lookup_plain_async;
  r->lookup_by_name_finish = fake_lookup_finish;
  r->lookup_by_name_with_flags = fake_lookup;
  r->lookup_by_name_with_flags_async = fake_lookup_async;
  r->lookup_by_name_with_flags_finish = fake_lookup_finish;
}

static void
fake_resolver_init (FakeResolver *self)
{
  self->real = g_resolver_get_default ();
}

/* The gate's message, once it has failed. */
static gchar *
refusal (const gchar *url)
{
  g_autoptr (ApiRolloutGate) gate = g_object_new (API_TYPE_ROLLOUT_GATE, "name", "r", "kind",
                                                  API_ROLLOUT_GATE_KIND_HTTP, "url", url, NULL);
  Outcome o = attempt (gate, 0);
  ck_assert_msg (!o.passed, "%s passed: %s", url, o.message);
  return o.message;
}

#define METADATA_REFUSED \
  "is the cloud metadata address (169.254.169.254/32): refused unless [gates] allowed_hosts " \
  "names it as an address or block"

START_TEST (http_refuses_link_local_and_metadata)
{
  g_autofree gchar *meta = refusal ("http://169.254.169.254/latest/meta-data/");
  ck_assert_str_eq (meta, "refused: 169.254.169.254 " METADATA_REFUSED);
  g_autofree gchar *local = refusal ("http://[fe80::1]:8080/");
  ck_assert_str_eq (local, "refused: fe80::1 is a link-local address (fe80::/10): refused unless "
                           "[gates] allowed_hosts names it as an address or block");
  /* A redirect's host is judged as its connection starts. */
  g_autofree gchar *redirect = g_strconcat (base, "/to-metadata", NULL);
  g_autofree gchar *moved = refusal (redirect);
  ck_assert_str_eq (moved, "refused: 169.254.169.254 " METADATA_REFUSED);
}
END_TEST

/* A name is judged by the address it resolves to. */
START_TEST (http_refuses_a_name_resolving_to_metadata)
{
  g_autoptr (GResolver) fake = g_object_new (fake_resolver_get_type (), NULL);
  g_resolver_set_default (fake);
  g_autofree gchar *meta = refusal ("http://metadata.test/latest/meta-data/");
  ck_assert_str_eq (meta, "refused: metadata.test (169.254.169.254) " METADATA_REFUSED);
}
END_TEST

/* Runs the gate at @path of the test server with a runner that allows
 * @patterns; returns its outcome. */
static Outcome
attempt_allowing (const gchar *const *patterns, const gchar *url)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (StgHostPolicy) hosts = stg_host_policy_new (patterns, "[gates] allowed_hosts", &error);
  ck_assert_msg (hosts != NULL, "%s", error ? error->message : "");
  g_clear_pointer (&runner, stg_gate_runner_free);
  runner = stg_gate_runner_new (NULL, NULL, hosts);
  g_autoptr (ApiRolloutGate) gate = g_object_new (API_TYPE_ROLLOUT_GATE, "name", "a", "kind",
                                                  API_ROLLOUT_GATE_KIND_HTTP, "url", url, NULL);
  return attempt (gate, 0);
}

START_TEST (http_allowed_hosts)
{
  g_autofree gchar *url = g_strconcat (base, "/health", NULL);
  g_autofree gchar *by_name = g_strdup_printf ("http://localhost:%s/health",
                                               strrchr (base, ':') + 1);

  const gchar *const elsewhere[] = { "*.example.org", NULL };
  Outcome o = attempt_allowing (elsewhere, url);
  ck_assert (!o.passed);
  ck_assert_str_eq (o.message, "refused: 127.0.0.1 is not in [gates] allowed_hosts");
  g_free (o.message);

  const gchar *const block[] = { "*.example.org", "127.0.0.0/8", NULL };
  o = attempt_allowing (block, url);
  ck_assert_msg (o.passed, "%s", o.message);
  g_free (o.message);

  const gchar *const name[] = { "localhost", NULL };
  o = attempt_allowing (name, by_name);
  ck_assert_msg (o.passed, "%s", o.message);
  g_free (o.message);
}
END_TEST

/* ---- the webhook notifier ----------------------------------------------------------- */

/* A notifier of one webhook at @url, with @secret (nullable), counting in
 * @counts, keeping its notices in @store (nullable). */
static StgNotifier *
notifier_kept (const gchar *url, const gchar *secret, gint queue_size, gint max_attempts,
               StgNotifyCounts *counts, StgStore *store)
{
  StgNotifyOptions o;
  stg_notify_options_init (&o);
  StgWebhook *w = g_new0 (StgWebhook, 1);
  w->name = g_strdup ("test");
  w->url = g_strdup (url);
  w->secret = g_strdup (secret);
  g_ptr_array_add (o.webhooks, w);
  o.queue_size = queue_size;
  o.max_attempts = max_attempts;
  o.retry_secs = 1;
  StgNotifier *n = stg_notifier_new (&o, "test", NULL, counts, store);
  stg_notify_options_clear (&o);
  return n;
}

static StgNotifier *
notifier_to (const gchar *url, const gchar *secret, gint queue_size, gint max_attempts,
             StgNotifyCounts *counts)
{
  return notifier_kept (url, secret, queue_size, max_attempts, counts, NULL);
}

/* @notice posted and its transaction committed. */
static void
post (StgNotifier *n, const StgNotice *notice)
{
  stg_notifier_post (n, notice);
  stg_notifier_end (n, TRUE);
}

static const StgNotice notice = { .event = "plan",
                                  .status = "ROLLED_BACK",
                                  .previous = "ROLLING_BACK",
                                  .reason = "RolledBack",
                                  .message = "every stage went back",
                                  .timestamp_ms = 1,
                                  .plan_id = "p-1",
                                  .plan_name = "pravega" };

/* Iterates the main loop until *@count reaches @want (10 s at most). */
static void
until (const guint64 *count, guint64 want)
{
  for (gint64 end = g_get_monotonic_time () + 10 * G_USEC_PER_SEC; *count < want;)
    {
      ck_assert_msg (g_get_monotonic_time () < end,
                     "count %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT, *count, want);
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
}

START_TEST (notify_posts_a_signed_body)
{
  StgNotifyCounts counts = { 0 };
  g_autofree gchar *url = g_strdup_printf ("%s/hook", base);
  g_autoptr (StgNotifier) n = notifier_to (url, "k3y", 10, 3, &counts);

  post (n, &notice);
  until (&counts.delivered, 1);
  ck_assert_uint_eq (counts.queued, 0);
  g_autofree gchar *last = NULL;
  guint16 port = (guint16) atoi (strrchr (base, ':') + 1);
  ck_assert_uint_eq (stg_test_http_get (port, "/last", &last), 200);
  g_autoptr (JsonParser) p = json_parser_new ();
  ck_assert (stg_json_load (p, last, -1, NULL));
  JsonObject *o = json_node_get_object (json_parser_get_root (p));
  const gchar *body = json_object_get_string_member (o, "body");
  g_autofree gchar *mac = g_compute_hmac_for_string (G_CHECKSUM_SHA256, (const guchar *) "k3y", 3,
                                                     body, -1);
  g_autofree gchar *sig = g_strconcat ("sha256=", mac, NULL);
  ck_assert_str_eq (json_object_get_string_member (o, "sig"), sig);
  ck_assert_str_eq (json_object_get_string_member (o, "event"), "plan.ROLLED_BACK");
  /* The delivery id: a UUID, in the header and the body. */
  const gchar *id = json_object_get_string_member (o, "delivery");
  ck_assert_msg (g_uuid_string_is_valid (id), "%s", id);
  g_autofree gchar *want = stg_notice_to_json (&notice, "test", 1, id);
  ck_assert_str_eq (body, want);
  ck_assert_msg (strstr (body, "\"reason\":\"RolledBack\"") &&
                     strstr (body, "\"plan\":{\"id\":\"p-1\",\"name\":\"pravega\"}"),
                 "%s", body);
}
END_TEST

/* A store in a new folder (freed with the test's data). */
static StgStore *
new_store (gchar **dir)
{
  g_autoptr (GError) error = NULL;
  *dir = stg_test_tmpdir ();
  g_autofree gchar *path = g_build_filename (*dir, "stagger.db", NULL);
  StgStore *store = stg_store_open (path, &error);
  ck_assert_msg (store != NULL, "%s", error ? error->message : "");
  return store;
}

/* The numbers of the notices the store keeps, space-separated. */
static gchar *
kept (StgStore *store)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) rows = stg_store_list_notices (store, &error);
  g_autoptr (GString) s = g_string_new (NULL);

  ck_assert_msg (rows != NULL, "%s", error ? error->message : "");
  for (guint i = 0; i < rows->len; i++)
    g_string_append_printf (s, "%s%" G_GINT64_FORMAT, i ? " " : "",
                            ((StgNoticeRow *) rows->pdata[i])->seq);
  return g_string_free (g_steal_pointer (&s), FALSE);
}

/* A webhook that never answers: posts keep returning at once, and past
 * its bound the oldest are given up, in memory and in the store. */
START_TEST (notify_queue_is_bounded)
{
  g_autofree gchar *dir = NULL;
  g_autoptr (StgStore) store = new_store (&dir);
  StgNotifyCounts counts = { 0 };
  g_autofree gchar *url = g_strdup_printf ("%s/slow", base);
  g_autoptr (StgNotifier) n = notifier_kept (url, NULL, 2, 3, &counts, store);

  for (gint i = 0; i < 5; i++)
    post (n, &notice);
  ck_assert_uint_eq (counts.queued, 2);
  ck_assert_uint_eq (counts.dropped, 3);
  ck_assert_uint_eq (counts.delivered, 0);
  g_autofree gchar *left = kept (store);
  ck_assert_str_eq (left, "4 5");
  g_clear_pointer (&n, stg_notifier_free);
  stg_test_rmtree (dir);
}
END_TEST

/* Notices kept in the store: one whose transaction is rolled back never
 * was; those a notifier could not deliver are sent by the next one on the
 * same store (a restart), in order, with their delivery ids, then leave
 * the store; new ones are numbered after them. */
START_TEST (notify_sends_what_a_previous_one_kept)
{
  g_autofree gchar *dir = NULL;
  g_autoptr (StgStore) store = new_store (&dir);
  StgNotifyCounts counts = { 0 };
  g_autofree gchar *slow = g_strdup_printf ("%s/slow", base);
  g_autoptr (StgNotifier) n = notifier_kept (slow, NULL, 10, 3, &counts, store);

  ck_assert (stg_store_begin (store, NULL));
  stg_notifier_post (n, &notice);
  stg_notifier_post (n, &notice);
  ck_assert (stg_store_commit (store, NULL));
  stg_notifier_end (n, TRUE);
  ck_assert (stg_store_begin (store, NULL));
  stg_notifier_post (n, &notice);
  stg_store_rollback (store);
  stg_notifier_end (n, FALSE);
  ck_assert_uint_eq (counts.queued, 2);
  g_autofree gchar *before = kept (store);
  ck_assert_str_eq (before, "1 2");
  g_autoptr (GPtrArray) rows = stg_store_list_notices (store, NULL);
  g_clear_pointer (&n, stg_notifier_free);

  StgNotifyCounts again = { 0 };
  g_autofree gchar *url = g_strdup_printf ("%s/hook", base);
  n = notifier_kept (url, NULL, 10, 3, &again, store);
  ck_assert_uint_eq (again.queued, 2);
  post (n, &notice);
  until (&again.delivered, 3);
  g_autofree gchar *after = kept (store);
  ck_assert_str_eq (after, "");
  /* The last one is the new one, numbered after those kept. */
  g_autofree gchar *last = NULL;
  guint16 port = (guint16) atoi (strrchr (base, ':') + 1);
  ck_assert_uint_eq (stg_test_http_get (port, "/last", &last), 200);
  ck_assert_msg (strstr (last, "\\\"seq\\\":3,") != NULL, "%s", last);
  for (guint i = 0; i < rows->len; i++)
    ck_assert (g_uuid_string_is_valid (((StgNoticeRow *) rows->pdata[i])->delivery_id));
  g_clear_pointer (&n, stg_notifier_free);
  stg_test_rmtree (dir);
}
END_TEST

/* A webhook that answers 500 is tried again, then given up; one at an
 * address the policy refuses is never reached. */
START_TEST (notify_retries_then_gives_up)
{
  StgNotifyCounts counts = { 0 };
  g_autofree gchar *url = g_strdup_printf ("%s/fail", base);
  g_autoptr (StgNotifier) n = notifier_to (url, NULL, 10, 2, &counts);

  post (n, &notice);
  until (&counts.failed, 1);
  ck_assert_uint_eq (counts.retried, 1);
  ck_assert_uint_eq (counts.delivered, 0);
  ck_assert_uint_eq (counts.queued, 0);

  StgNotifyCounts refused = { 0 };
  g_autoptr (StgNotifier) m = notifier_to ("http://169.254.169.254/hook", NULL, 10, 1, &refused);
  post (m, &notice);
  until (&refused.failed, 1);
  ck_assert_uint_eq (refused.delivered, 0);
}
END_TEST

static Suite *
gates_suite (void)
{
  Suite *s = suite_create ("gates");
  TCase *tc = tcase_create ("gates");

  tcase_set_timeout (tc, 60);
  tcase_add_checked_fixture (tc, setup, teardown);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, http_status);
  tcase_add_test (tc, http_json_path);
  tcase_add_test (tc, http_hang_is_cancelled);
  tcase_add_test (tc, coordinator_answers);
  tcase_add_test (tc, shell_status_and_output);
  tcase_add_test (tc, shell_hang_kills_the_group);
  tcase_add_test (tc, http_refuses_link_local_and_metadata);
  tcase_add_test (tc, http_refuses_a_name_resolving_to_metadata);
  tcase_add_test (tc, http_allowed_hosts);
  tcase_add_test (tc, notify_posts_a_signed_body);
  tcase_add_test (tc, notify_queue_is_bounded);
  tcase_add_test (tc, notify_sends_what_a_previous_one_kept);
  tcase_add_test (tc, notify_retries_then_gives_up);
  return s;
}

int
main (void)
{
  gchar *scope = stg_test_scope_begin ();
  SRunner *sr = srunner_create (gates_suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  stg_test_scope_end (scope);
  return failed == 0 ? 0 : 1;
}
