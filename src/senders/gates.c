/* gates.c: the real StgGateRunner: one attempt of an HTTP or a shell gate,
 * and one question to an SLA coordinator (a POST of the task's JSON to its
 * URL with ?task=KEY, judged by a boolean member of the JSON answer, under
 * the same host policy as HTTP gates).
 *
 * HTTP: a GET with libsoup, straight from this host (no proxy), each
 * connection to an address the StgHostPolicy allows (checked as it is
 * about to connect, so what a name resolved to is judged, redirects'
 * hosts too); the answer's status must be the expected one
 * and, with a JSONPath (json-glib's JsonPath), its first value, a number or
 * a string holding one (as Prometheus's query API answers), must stand in
 * the gate's relation to its threshold. At most STG_GATE_MAX_BODY bytes of
 * the answer are read. Shell: /bin/sh -c COMMAND with an environment of its
 * own (nothing of staggerd's: PATH, HOME, LANG and what the engine gives),
 * in a new session so that a cancelled attempt
 * kills the whole process group, as the role's instance user when staggerd
 * is root (spawn.c); its output's last lines go into the message. Calls
 * nothing of Stagger's but common/, identity.c, host_guard.c and spawn.c.
 * Main-loop thread only.
 */
#include "config.h"

#include <string.h>
#include <sys/wait.h>

#include <gio/gunixinputstream.h>
#include <json-glib/json-glib.h>
#include <libsoup/soup.h>

#include "common/host_policy.h"
#include "common/json_check.h"
#include "senders/gates.h"
#include "senders/host_guard.h"
#include "spawn/spawn.h"

#define OUTPUT_KEPT 2048

typedef struct
{
  StgGateRunner parent;
  SoupSession *session;
  GHashTable *role_users;    /* (nullable) role -> StgIdentity* */
  StgIdentity *default_user; /* (nullable) */
  StgHostPolicy *hosts;      /* where HTTP gates may connect */
} Runner;

typedef struct _Attempt
{
  ApiRolloutGate *gate; /* (nullable) a coordinator's question has none */
  GCancellable *cancel;
  StgGateDone done;
  gpointer data;
  /* HTTP: the GET of a gate, or the POST to a coordinator */
  void (*judge) (struct _Attempt *a); /* the answer's verdict */
  gchar *status_key;                  /* a coordinator's */
  SoupMessage *msg;
  GByteArray *body;
  StgHostGuard *guard; /* where its connections may go */
  /* shell */
  StgChild *proc;
  gulong cancel_id;
  GInputStream *stdout_stream;
  GString *output; /* the last OUTPUT_KEPT bytes */
  gboolean exited;
  gboolean drained;
  gint status; /* the wait status */
} Attempt;

static void
attempt_free (Attempt *a)
{
  if (a->cancel_id != 0)
    g_cancellable_disconnect (a->cancel, a->cancel_id);
  g_clear_object (&a->gate);
  g_clear_object (&a->cancel);
  g_clear_pointer (&a->guard, stg_host_guard_free);
  g_clear_object (&a->msg);
  g_clear_pointer (&a->body, g_byte_array_unref);
  g_free (a->status_key);
  g_clear_pointer (&a->proc, stg_child_free);
  g_clear_object (&a->stdout_stream);
  if (a->output != NULL)
    g_string_free (a->output, TRUE);
  g_free (a);
}

/* Reports and frees @a; a cancelled attempt reports nothing. */
static void
finish (Attempt *a, gboolean passed, const gchar *message)
{
  if (!g_cancellable_is_cancelled (a->cancel))
    a->done (a->data, passed, message);
  attempt_free (a);
}

/* ---- HTTP ---------------------------------------------------------------------- */

/* TRUE when @value @op @threshold holds. */
static gboolean
relation_holds (gdouble value, const gchar *op, gdouble threshold)
{
  if (strcmp (op, "<") == 0)
    return value < threshold;
  if (strcmp (op, "<=") == 0)
    return value <= threshold;
  if (strcmp (op, "==") == 0)
    return value == threshold;
  if (strcmp (op, "!=") == 0)
    return value != threshold;
  if (strcmp (op, ">=") == 0)
    return value >= threshold;
  return value > threshold;
}

/* Each relation a gate may compare with, and the one that holds when it
 * does not. */
static const gchar *const relations[][2] = { { "<", ">=" },  { "<=", ">" }, { "==", "!=" },
                                             { "!=", "==" }, { ">=", "<" }, { ">", "<=" } };

static const gchar *
negated (const gchar *op)
{
  for (guint i = 0; i < G_N_ELEMENTS (relations); i++)
    if (strcmp (op, relations[i][0]) == 0)
      return relations[i][1];
  return NULL;
}

gboolean
stg_gate_relation_known (const gchar *op)
{
  return op != NULL && negated (op) != NULL;
}

/* The number at the gate's JSONPath in @body; FALSE with *@why otherwise. */
static gboolean
json_value (const ApiRolloutGate *gate, GByteArray *body, gdouble *out, gchar **why)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (JsonPath) path = json_path_new ();

  if (!stg_json_check_depth ((const gchar *) body->data, body->len, STG_JSON_NESTING_MAX, &error) ||
      !json_parser_load_from_data (parser, (const gchar *) body->data, body->len, &error))
    {
      *why = g_strdup_printf ("the answer is not JSON: %s", error->message);
      return FALSE;
    }
  if (!json_path_compile (path, gate->jsonPath, &error))
    {
      *why = g_strdup_printf ("bad JSONPath %s: %s", gate->jsonPath, error->message);
      return FALSE;
    }
  g_autoptr (JsonNode) found = json_path_match (path, json_parser_get_root (parser));
  JsonArray *matches = found ? json_node_get_array (found) : NULL;
  if (matches == NULL || json_array_get_length (matches) == 0)
    {
      *why = g_strdup_printf ("%s matches nothing in the answer", gate->jsonPath);
      return FALSE;
    }
  JsonNode *node = json_array_get_element (matches, 0);
  if (JSON_NODE_HOLDS_VALUE (node))
    {
      GType type = json_node_get_value_type (node);
      if (type == G_TYPE_INT64 || type == G_TYPE_DOUBLE)
        {
          *out = json_node_get_double (node);
          return TRUE;
        }
      if (type == G_TYPE_BOOLEAN)
        {
          *out = json_node_get_boolean (node) ? 1 : 0;
          return TRUE;
        }
      if (type == G_TYPE_STRING)
        {
          const gchar *text = json_node_get_string (node);
          gchar *end = NULL;
          *out = g_ascii_strtod (text, &end);
          if (end != text && *end == '\0')
            return TRUE;
          *why = g_strdup_printf ("%s is \"%.60s\", not a number", gate->jsonPath, text);
          return FALSE;
        }
    }
  *why = g_strdup_printf ("%s is not a number", gate->jsonPath);
  return FALSE;
}

static void
http_judge (Attempt *a)
{
  const ApiRolloutGate *gate = a->gate;
  guint status = soup_message_get_status (a->msg);
  gint want = gate->__isset_expectStatus && gate->expectStatus > 0 ? gate->expectStatus : 200;

  if ((gint) status != want)
    {
      g_autofree gchar *why = g_strdup_printf ("HTTP %u %s (expected %d)", status,
                                               soup_message_get_reason_phrase (a->msg)
                                                   ? soup_message_get_reason_phrase (a->msg)
                                                   : "",
                                               want);
      finish (a, FALSE, why);
      return;
    }
  if (!gate->__isset_jsonPath || gate->jsonPath == NULL || gate->jsonPath[0] == '\0')
    {
      g_autofree gchar *ok = g_strdup_printf ("HTTP %u", status);
      finish (a, TRUE, ok);
      return;
    }
  gdouble value = 0;
  g_autofree gchar *why = NULL;
  if (!json_value (gate, a->body, &value, &why))
    {
      finish (a, FALSE, why);
      return;
    }
  const gchar *op = gate->__isset_compare && gate->compare ? gate->compare : "==";
  gdouble threshold = gate->__isset_threshold ? gate->threshold : 0;
  gboolean holds = relation_holds (value, op, threshold);
  g_autofree gchar *message = g_strdup_printf ("%g %s %g", value, holds ? op : negated (op),
                                               threshold);
  finish (a, holds, message);
}

static void on_read (GObject *source, GAsyncResult *res, gpointer data);

static void
read_more (Attempt *a, GInputStream *stream)
{
  g_input_stream_read_bytes_async (stream, 16384, G_PRIORITY_DEFAULT, a->cancel, on_read, a);
}

static void
on_read (GObject *source, GAsyncResult *res, gpointer data)
{
  Attempt *a = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) chunk = g_input_stream_read_bytes_finish (G_INPUT_STREAM (source), res,
                                                               &error);

  if (chunk == NULL)
    {
      g_autofree gchar *why = g_strdup_printf ("reading the answer: %s", error->message);
      finish (a, FALSE, why);
      return;
    }
  if (g_bytes_get_size (chunk) == 0)
    {
      a->judge (a);
      return;
    }
  if (a->body->len + g_bytes_get_size (chunk) > STG_GATE_MAX_BODY)
    {
      finish (a, FALSE, "the answer is larger than 1 MiB");
      return;
    }
  g_byte_array_append (a->body, g_bytes_get_data (chunk, NULL), g_bytes_get_size (chunk));
  read_more (a, G_INPUT_STREAM (source));
}

static void
on_sent (GObject *source, GAsyncResult *res, gpointer data)
{
  Attempt *a = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (GInputStream) stream = soup_session_send_finish (SOUP_SESSION (source), res, &error);

  if (stream == NULL)
    {
      const gchar *refused = stg_host_guard_refused (a->guard);
      finish (a, FALSE, refused != NULL ? refused : error->message);
      return;
    }
  read_more (a, stream);
}

/* Sends @a's request, under the host policy, for @a->judge to judge. */
static void
send_http (Runner *r, Attempt *a)
{
  a->body = g_byte_array_new ();
  a->guard = stg_host_guard_new (a->msg, r->hosts);
  soup_session_send_async (r->session, a->msg, G_PRIORITY_DEFAULT, a->cancel, on_sent, a);
}

static void
run_http (Runner *r, Attempt *a)
{
  a->msg = soup_message_new ("GET", a->gate->url);
  if (a->msg == NULL)
    {
      finish (a, FALSE, "the gate's URL is not valid");
      return;
    }
  a->judge = http_judge;
  send_http (r, a);
}

/* ---- SLA coordinators -------------------------------------------------------- */

/* A coordinator's answer: 200 and a JSON object whose status key is true. */
static void
coordinator_judge (Attempt *a)
{
  guint status = soup_message_get_status (a->msg);
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();

  if (status != SOUP_STATUS_OK)
    {
      g_autofree gchar *why = g_strdup_printf ("HTTP %u %s", status,
                                               soup_message_get_reason_phrase (a->msg)
                                                   ? soup_message_get_reason_phrase (a->msg)
                                                   : "");
      finish (a, FALSE, why);
      return;
    }
  if (!stg_json_check_depth ((const gchar *) a->body->data, a->body->len, STG_JSON_NESTING_MAX,
                             &error) ||
      !json_parser_load_from_data (parser, (const gchar *) a->body->data, a->body->len, &error))
    {
      g_autofree gchar *why = g_strdup_printf ("the answer is not JSON: %s", error->message);
      finish (a, FALSE, why);
      return;
    }
  JsonNode *root = json_parser_get_root (parser);
  JsonNode *member = root != NULL && JSON_NODE_HOLDS_OBJECT (root)
                         ? json_object_get_member (json_node_get_object (root), a->status_key)
                         : NULL;
  if (member == NULL || !JSON_NODE_HOLDS_VALUE (member) ||
      json_node_get_value_type (member) != G_TYPE_BOOLEAN)
    {
      g_autofree gchar *why = g_strdup_printf ("the answer has no true or false \"%s\"",
                                               a->status_key);
      finish (a, FALSE, why);
      return;
    }
  gboolean yes = json_node_get_boolean (member);
  g_autofree gchar *said = g_strdup_printf ("{\"%s\": %s}", a->status_key, yes ? "true" : "false");
  finish (a, yes, said);
}

/* @url with "task=@task_key" added to its query; NULL when @url is not one. */
static gchar *
coordinator_uri (const gchar *url, const gchar *task_key)
{
  g_autoptr (GUri) uri = g_uri_parse (url, SOUP_HTTP_URI_FLAGS, NULL);

  if (uri == NULL || g_uri_get_host (uri) == NULL)
    return NULL;
  g_autofree gchar *value = g_uri_escape_string (task_key, NULL, FALSE);
  const gchar *query = g_uri_get_query (uri);
  g_autofree gchar *joined = query != NULL && query[0] != '\0'
                                 ? g_strdup_printf ("%s&task=%s", query, value)
                                 : g_strdup_printf ("task=%s", value);
  g_autoptr (GUri) asked = g_uri_build (g_uri_get_flags (uri), g_uri_get_scheme (uri),
                                        g_uri_get_userinfo (uri), g_uri_get_host (uri),
                                        g_uri_get_port (uri), g_uri_get_path (uri), joined,
                                        g_uri_get_fragment (uri));
  return g_uri_to_string (asked);
}

/* ---- shell ------------------------------------------------------------------- */

static void
on_cancel (GCancellable *cancel, gpointer data)
{
  Attempt *a = data;
  (void) cancel;

  if (a->proc != NULL)
    stg_child_kill (a->proc);
}

static void
shell_judge (Attempt *a)
{
  g_autofree gchar *tail = NULL;
  const gchar *out = a->output->str;

  /* The output's last non-empty line says most. */
  g_strchomp (a->output->str);
  const gchar *nl = strrchr (out, '\n');
  tail = g_strdup (nl ? nl + 1 : out);
  g_strstrip (tail);
  if (WIFEXITED (a->status) && WEXITSTATUS (a->status) == 0)
    {
      g_autofree gchar *ok = g_strdup_printf ("exit status 0%s%s", tail[0] ? ": " : "", tail);
      finish (a, TRUE, ok);
      return;
    }
  g_autofree gchar *how = WIFSIGNALED (a->status)
                              ? g_strdup_printf ("killed by signal %d", WTERMSIG (a->status))
                              : g_strdup_printf ("exit status %d", WEXITSTATUS (a->status));
  g_autofree gchar *why = g_strdup_printf ("%s%s%s", how, tail[0] ? ": " : "", tail);
  finish (a, FALSE, why);
}

static void
shell_step (Attempt *a)
{
  if (a->exited && a->drained)
    shell_judge (a);
}

static void on_output (GObject *source, GAsyncResult *res, gpointer data);

static void
read_output (Attempt *a)
{
  g_input_stream_read_bytes_async (a->stdout_stream, 4096, G_PRIORITY_DEFAULT, NULL, on_output, a);
}

static void
on_output (GObject *source, GAsyncResult *res, gpointer data)
{
  Attempt *a = data;
  g_autoptr (GBytes) chunk = g_input_stream_read_bytes_finish (G_INPUT_STREAM (source), res, NULL);

  if (chunk == NULL || g_bytes_get_size (chunk) == 0)
    {
      a->drained = TRUE;
      shell_step (a);
      return;
    }
  g_string_append_len (a->output, g_bytes_get_data (chunk, NULL), g_bytes_get_size (chunk));
  if (a->output->len > OUTPUT_KEPT)
    g_string_erase (a->output, 0, a->output->len - OUTPUT_KEPT);
  read_output (a);
}

static void
on_shell_exit (gpointer data, gint status)
{
  Attempt *a = data;

  a->status = status;
  a->exited = TRUE;
  shell_step (a);
}

static gboolean
report_later (gpointer data)
{
  Attempt *a = data;
  g_autofree gchar *why = g_strdup (a->output->str);

  finish (a, FALSE, why);
  return G_SOURCE_REMOVE;
}

static void
run_shell (Runner *r, Attempt *a, const gchar *role, const gchar *const *extra)
{
  const gchar *const argv[] = { "/bin/sh", "-c", a->gate->command, NULL };
  g_auto (GStrv) env = g_strdupv ((gchar **) extra);
  g_autoptr (GError) error = NULL;

  env = g_environ_setenv (env, "PATH", "/usr/local/bin:/usr/bin:/bin", TRUE);
  env = g_environ_setenv (env, "HOME", "/", TRUE);
  env = g_environ_setenv (env, "LANG", "C.UTF-8", TRUE);
  a->output = g_string_new (NULL);
  StgSpawnRequest req = {
    .argv = argv,
    .envp = (const gchar *const *) env,
    .cwd = "/",
    .identity = stg_identity_for_role (r->role_users, r->default_user, role),
    .group = STG_SPAWN_SESSION,
    .out = { .to = STG_SPAWN_PIPE },
    .err = { .to = STG_SPAWN_AS_STDOUT },
  };
  a->proc = stg_child_spawn (&req, on_shell_exit, a, &error);
  if (a->proc == NULL)
    {
      g_string_printf (a->output, "cannot run the command: %s", error->message);
      g_idle_add (report_later, a);
      return;
    }
  a->stdout_stream = g_unix_input_stream_new (stg_child_steal_out (a->proc), TRUE);
  a->cancel_id = g_cancellable_connect (a->cancel, G_CALLBACK (on_cancel), a, NULL);
  read_output (a);
}

/* ---- the runner ---------------------------------------------------------------- */

static void
runner_run (StgGateRunner *runner, const ApiRolloutGate *gate, const gchar *role,
            const gchar *const *env, GCancellable *cancel, StgGateDone done, gpointer data)
{
  Runner *r = (Runner *) runner;
  Attempt *a = g_new0 (Attempt, 1);

  a->gate = g_object_ref ((gpointer) gate);
  a->cancel = g_object_ref (cancel);
  a->done = done;
  a->data = data;
  if (gate->kind == API_ROLLOUT_GATE_KIND_HTTP && gate->__isset_url && gate->url != NULL)
    run_http (r, a);
  else if (gate->kind == API_ROLLOUT_GATE_KIND_SHELL && gate->__isset_command &&
           gate->command != NULL)
    run_shell (r, a, role, env);
  else
    {
      a->output = g_string_new ("this gate's kind does not run here");
      g_idle_add (report_later, a);
    }
}

static void
runner_ask (StgGateRunner *runner, const StgCoordinatorAsk *ask, GCancellable *cancel,
            StgGateDone done, gpointer data)
{
  Runner *r = (Runner *) runner;
  Attempt *a = g_new0 (Attempt, 1);
  g_autofree gchar *uri = coordinator_uri (ask->url, ask->task_key);

  a->cancel = g_object_ref (cancel);
  a->done = done;
  a->data = data;
  a->status_key = g_strdup (ask->status_key);
  a->msg = uri != NULL ? soup_message_new ("POST", uri) : NULL;
  if (a->msg == NULL)
    {
      a->output = g_string_new ("the coordinator's URL is not valid");
      g_idle_add (report_later, a);
      return;
    }
  g_autoptr (GBytes) body = g_bytes_new (ask->body, strlen (ask->body));
  soup_message_set_request_body_from_bytes (a->msg, "application/json", body);
  a->judge = coordinator_judge;
  send_http (r, a);
}

static void
runner_free (StgGateRunner *runner)
{
  Runner *r = (Runner *) runner;

  g_clear_object (&r->session);
  g_clear_pointer (&r->role_users, g_hash_table_unref);
  g_clear_pointer (&r->default_user, stg_identity_free);
  g_clear_pointer (&r->hosts, stg_host_policy_unref);
  g_free (r);
}

static const StgGateRunnerOps runner_ops = { runner_run, runner_free, runner_ask };

StgGateRunner *
stg_gate_runner_new (GHashTable *role_users, const StgIdentity *default_user, StgHostPolicy *hosts)
{
  Runner *r = g_new0 (Runner, 1);

  r->parent.ops = &runner_ops;
  /* No proxy: the policy judges the address a request really goes to. */
  r->session = soup_session_new_with_options ("user-agent", "stagger-gate/" STG_VERSION,
                                              "proxy-resolver", NULL, NULL);
  r->role_users = role_users ? g_hash_table_ref (role_users) : NULL;
  r->default_user = default_user ? stg_identity_copy (default_user) : NULL;
  r->hosts = hosts != NULL ? stg_host_policy_ref (hosts)
                           : stg_host_policy_new (NULL, "[gates] allowed_hosts", NULL);
  return &r->parent;
}

/* A runner that asks no coordinators: its answer, on the next iteration. */
typedef struct
{
  GCancellable *cancel;
  StgGateDone done;
  gpointer data;
} Refusal;

static gboolean
refuse_later (gpointer data)
{
  Refusal *no = data;

  if (!g_cancellable_is_cancelled (no->cancel))
    no->done (no->data, FALSE, "this staggerd asks no SLA coordinators");
  g_object_unref (no->cancel);
  g_free (no);
  return G_SOURCE_REMOVE;
}

void
stg_gate_runner_ask (StgGateRunner *runner, const StgCoordinatorAsk *ask, GCancellable *cancel,
                     StgGateDone done, gpointer data)
{
  if (runner->ops->ask != NULL)
    {
      runner->ops->ask (runner, ask, cancel, done, data);
      return;
    }
  Refusal *no = g_new0 (Refusal, 1);
  no->cancel = g_object_ref (cancel);
  no->done = done;
  no->data = data;
  g_idle_add (refuse_later, no);
}

void
stg_gate_runner_free (StgGateRunner *runner)
{
  if (runner != NULL)
    runner->ops->free (runner);
}
