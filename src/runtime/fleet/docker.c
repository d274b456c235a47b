/* docker.c: a client of one engine's Docker Engine HTTP API (see docker.h).
 *
 * One SoupSession per engine: for unix:// its remote-connectable is the
 * socket's address (URLs then name "localhost"), for tcp:// it connects to
 * the host, over TLS when given a CA and a client certificate. Each call is
 * one GTask; stg_docker_request() sends one HTTP stg_docker_request (a request that changes
 * something once the guard, when there is one, lets it) and hands the
 * status and body to the call's `done` step, which returns on the task
 * (exec chains three requests). An engine's error reply ({"message": ...}) becomes the GError's
 * message verbatim. The calls themselves are docker_calls.c's. Calls no
 * other layer. Main-loop thread only.
 */
#include "config.h"

#include <errno.h>
#include <gio/gunixsocketaddress.h>
#include <libsoup/soup.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>

#include "common/json_check.h"
#include "runtime/fleet/docker_private.h"

/* The API version every path names: Docker 20.10 and Podman 3 on. */
#define API_PREFIX "/v1.41"

G_DEFINE_QUARK (stg-docker-error-quark, stg_docker_error)

/* How often a request the guard holds back asks it again. */
#define GUARD_RETRY_MS 50

struct _StgDocker
{
  gchar *endpoint;
  gchar *base;                 /* "http://localhost" or "https://host:port" */
  SoupSession *session;
  GTlsCertificate *client_cert; /* nullable */
  guint timeout_secs;
  StgDockerGuard guard; /* nullable */
  gpointer guard_data;
  guint bound_ms; /* 0, or how long a TCP connection waits for an ack */
  GList *held;    /* Request*: held back by the guard */
};

/* One request in flight: the call's task, the message, the next step. */
typedef struct
{
  GTask *task;
  SoupMessage *msg;
  gchar *method;
  gchar *path; /* under the API prefix, as the guard sees it */
  ReplyFn done;
  guint also_ok; /* a status >= 400 that means success here (e.g. 404 on remove) */
  guint retry;   /* while held: the timer that asks the guard again */
  GCancellable *cancel; /* this request's: the call's, or the connect deadline, cancels it */
  gulong linked;        /* its link to the call's cancellable */
  guint connect_timer;  /* while a connection of it is being made: its deadline */
  gchar *gave_up;       /* why this request cancelled itself: its call fails as UNREACHABLE */
  gboolean guarded;     /* the guard let it go: asked again just before it is written */
} Request;

static void
request_free (Request *r)
{
  g_clear_handle_id (&r->connect_timer, g_source_remove);
  g_free (r->gave_up);
  if (r->linked != 0)
    g_cancellable_disconnect (g_task_get_cancellable (r->task), r->linked);
  g_object_unref (r->cancel);
  g_object_unref (r->task);
  g_object_unref (r->msg);
  g_free (r->method);
  g_free (r->path);
  g_free (r);
}

StgDocker *
stg_docker_new (const gchar *endpoint, const StgDockerTls *tls, guint timeout_secs, GError **error)
{
  g_autoptr (GSocketAddress) address = NULL;
  g_autoptr (GTlsDatabase) ca = NULL;
  g_autoptr (GTlsCertificate) cert = NULL;
  g_autofree gchar *base = NULL;
  gboolean with_tls = tls != NULL && (tls->cert_file != NULL || tls->key_file != NULL || tls->ca_file != NULL);

  g_return_val_if_fail (endpoint != NULL, NULL);
  if (g_str_has_prefix (endpoint, "unix://") && endpoint[strlen ("unix://")] == '/')
    {
      address = g_unix_socket_address_new (endpoint + strlen ("unix://"));
      base = g_strdup ("http://localhost");
    }
  else if (g_str_has_prefix (endpoint, "tcp://") && endpoint[strlen ("tcp://")] != '\0' &&
           strchr (endpoint + strlen ("tcp://"), '/') == NULL)
    {
      if (with_tls && (tls->cert_file == NULL || tls->key_file == NULL || tls->ca_file == NULL))
        {
          g_set_error (error, STG_DOCKER_ERROR, STG_DOCKER_ERROR_INVALID,
                       "%s: TLS needs a client certificate, its key and the CA, all three", endpoint);
          return NULL;
        }
      if (with_tls && ((cert = g_tls_certificate_new_from_files (tls->cert_file, tls->key_file, error)) == NULL ||
                       (ca = g_tls_file_database_new (tls->ca_file, error)) == NULL))
        {
          g_prefix_error (error, "%s: ", endpoint);
          return NULL;
        }
      base = g_strconcat (with_tls ? "https://" : "http://", endpoint + strlen ("tcp://"), NULL);
    }
  else
    {
      g_set_error (error, STG_DOCKER_ERROR, STG_DOCKER_ERROR_INVALID,
                   "\"%s\": an engine endpoint is unix:///PATH or tcp://HOST:PORT", endpoint);
      return NULL;
    }
  StgDocker *d = g_new0 (StgDocker, 1);
  d->endpoint = g_strdup (endpoint);
  d->base = g_steal_pointer (&base);
  d->timeout_secs = timeout_secs;
  d->session = g_object_new (SOUP_TYPE_SESSION, "timeout", timeout_secs, "idle-timeout", 30,
                             "max-conns-per-host", 8, "remote-connectable", address, NULL);
  if (ca != NULL)
    soup_session_set_tls_database (d->session, ca);
  d->client_cert = g_steal_pointer (&cert);
  return d;
}

void
stg_docker_set_guard (StgDocker *d, StgDockerGuard guard, gpointer data, guint bound_ms)
{
  d->guard = guard;
  d->guard_data = data;
  d->bound_ms = bound_ms;
}

/* A held request goes no further: its call fails as cancelled. */
static void
drop_held (StgDocker *d, Request *r)
{
  d->held = g_list_remove (d->held, r);
  g_clear_handle_id (&r->retry, g_source_remove);
  g_task_return_new_error (r->task, G_IO_ERROR, G_IO_ERROR_CANCELLED, "%s: cancelled", d->endpoint);
  request_free (r);
}

void
stg_docker_free (StgDocker *d)
{
  if (d == NULL)
    return;
  while (d->held != NULL)
    drop_held (d, d->held->data);
  soup_session_abort (d->session);
  g_object_unref (d->session);
  g_clear_object (&d->client_cert);
  g_free (d->base);
  g_free (d->endpoint);
  g_free (d);
}

/* The engine's {"message": "..."} or, failing that, the body or reason. */
static gchar *
engine_message (SoupMessage *msg, GBytes *body)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  gsize len = 0;
  const gchar *data = body ? g_bytes_get_data (body, &len) : NULL;

  if (len > 0 && stg_json_load (parser, data, (gssize) len, NULL) &&
      JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    {
      JsonObject *o = json_node_get_object (json_parser_get_root (parser));
      const gchar *m = json_object_get_string_member_with_default (o, "message", NULL);
      if (m != NULL)
        return g_strdup (m);
    }
  if (len > 0 && g_utf8_validate (data, (gssize) len, NULL))
    return g_strstrip (g_strndup (data, len));
  return g_strdup_printf ("HTTP %u %s", soup_message_get_status (msg),
                          soup_message_get_reason_phrase (msg));
}

static void
on_reply (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Request *r = user_data;
  GError *error = NULL;
  g_autoptr (GBytes) body = soup_session_send_and_read_finish (SOUP_SESSION (source), result, &error);
  StgDocker *d = g_task_get_task_data (r->task);

  if (body == NULL)
    {
      if (r->gave_up != NULL)
        {
          g_clear_error (&error);
          error = g_error_new (STG_DOCKER_ERROR, STG_DOCKER_ERROR_UNREACHABLE, "%s: %s",
                               d->endpoint, r->gave_up);
        }
      else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          GError *e = g_error_new (STG_DOCKER_ERROR, STG_DOCKER_ERROR_UNREACHABLE, "%s: %s", d->endpoint,
                                   error->message);
          g_clear_error (&error);
          error = e;
        }
      g_task_return_error (r->task, error);
    }
  else
    {
      guint status = soup_message_get_status (r->msg);
      if (status >= 400 && status != r->also_ok)
        {
          g_autofree gchar *message = engine_message (r->msg, body);
          gint code = status == 404 ? STG_DOCKER_ERROR_NOT_FOUND
                      : status == 409 ? STG_DOCKER_ERROR_CONFLICT : STG_DOCKER_ERROR_FAILED;
          g_task_return_new_error (r->task, STG_DOCKER_ERROR, code, "%s", message);
        }
      else
        r->done (r->task, status, body);
    }
  request_free (r);
}

/* @r gives up: its call fails as UNREACHABLE, saying @why. */
static void
give_up (Request *r, gchar *why)
{
  g_free (r->gave_up);
  r->gave_up = why;
  g_cancellable_cancel (r->cancel);
}

/* The connect deadline: a connection still being made gives up just
 * before the session's own timeout would end the attempt (GIO 2.74 leaks
 * an attempt that ends in a timeout, its socket's or the kernel's; a
 * cancelled one is freed). */
static gboolean
on_connect_deadline (gpointer data)
{
  Request *r = data;
  StgDocker *d = g_task_get_task_data (r->task);

  r->connect_timer = 0;
  give_up (r, g_strdup_printf ("no connection within %u s", d->timeout_secs));
  return G_SOURCE_REMOVE;
}

/* A connection to the engine of @d: TCP gives up after d->bound_ms
 * without an acknowledgement, and closing it drops what is unsent. */
static void
bound_sending (StgDocker *d, GSocket *socket)
{
  struct linger drop = { 1, 0 };
  g_autoptr (GError) error = NULL;

  if (g_socket_get_family (socket) != G_SOCKET_FAMILY_IPV4 &&
      g_socket_get_family (socket) != G_SOCKET_FAMILY_IPV6)
    return;
  if (!g_socket_set_option (socket, IPPROTO_TCP, TCP_USER_TIMEOUT,
                            (gint) MIN (d->bound_ms, (guint) G_MAXINT), &error))
    g_warning ("docker: cannot bound the time a request takes to arrive: %s", error->message);
  else if (setsockopt (g_socket_get_fd (socket), SOL_SOCKET, SO_LINGER, &drop, sizeof drop) != 0)
    g_warning ("docker: cannot make a connection drop what it did not send: %s",
               g_strerror (errno));
}

/* Each connection made for @r (the first, or another when a kept one
 * failed): its deadline runs while it is being made; once made, it is
 * bounded (not before: a connection attempt TCP_USER_TIMEOUT ends is one
 * GIO leaks). */
static void
on_network_event (SoupMessage *msg G_GNUC_UNUSED, GSocketClientEvent event, GIOStream *stream,
                  gpointer data)
{
  Request *r = data;
  StgDocker *d = g_task_get_task_data (r->task);

  if (event == G_SOCKET_CLIENT_CONNECTING)
    {
      g_clear_handle_id (&r->connect_timer, g_source_remove);
      if (d->timeout_secs > 0)
        r->connect_timer = g_timeout_add (d->timeout_secs * 900, on_connect_deadline, r);
    }
  else if (event == G_SOCKET_CLIENT_CONNECTED && d->bound_ms > 0 && G_IS_SOCKET_CONNECTION (stream))
    bound_sending (d, g_socket_connection_get_socket (G_SOCKET_CONNECTION (stream)));
  else if (event == G_SOCKET_CLIENT_COMPLETE)
    g_clear_handle_id (&r->connect_timer, g_source_remove);
}

static gboolean guard_allows (StgDocker *d, Request *r);

/* @r is about to be written on a connection (libsoup sends nothing when
 * this cancels it): a request the guard let go is asked about again, as
 * it may have waited for a connection since. */
static void
on_starting (SoupMessage *msg G_GNUC_UNUSED, gpointer data)
{
  Request *r = data;
  StgDocker *d = g_task_get_task_data (r->task);

  if (r->guarded && !guard_allows (d, r))
    give_up (r, g_strdup ("not sent: the guard held it back once a connection was free"));
}

static void
send_now (Request *r)
{
  StgDocker *d = g_task_get_task_data (r->task);

  g_signal_connect (r->msg, "network-event", G_CALLBACK (on_network_event), r);
  g_signal_connect (r->msg, "starting", G_CALLBACK (on_starting), r);
  soup_session_send_and_read_async (d->session, r->msg, G_PRIORITY_DEFAULT, r->cancel, on_reply, r);
}

static gboolean
cancel_request (gpointer data)
{
  g_cancellable_cancel (data);
  return G_SOURCE_REMOVE;
}

/* The call was cancelled: so is its request, from the loop (what a
 * cancel finishes may free the request, which must not leave the call's
 * cancellable from inside its own handler). */
static void
on_call_cancelled (GCancellable *call G_GNUC_UNUSED, gpointer data)
{
  g_idle_add_full (G_PRIORITY_DEFAULT, cancel_request, g_object_ref (data), g_object_unref);
}

/* TRUE when @r may go now: a GET, or the guard says so. */
static gboolean
guard_allows (StgDocker *d, Request *r)
{
  if (d->guard == NULL || g_str_equal (r->method, "GET"))
    return TRUE;
  r->guarded = TRUE;
  return d->guard (d->guard_data, r->method, r->path);
}

static gboolean
on_held (gpointer data)
{
  Request *r = data;
  StgDocker *d = g_task_get_task_data (r->task);

  if (g_cancellable_is_cancelled (g_task_get_cancellable (r->task)))
    {
      r->retry = 0;
      drop_held (d, r);
      return G_SOURCE_REMOVE;
    }
  if (!guard_allows (d, r))
    return G_SOURCE_CONTINUE;
  r->retry = 0;
  d->held = g_list_remove (d->held, r);
  send_now (r);
  return G_SOURCE_REMOVE;
}

/* Sends @method @path (under the API prefix) with @body (nullable JSON)
 * and @auth (nullable: X-Registry-Auth's value), or with @raw (nullable)
 * of type @raw_type, for @task (whose task data is the StgDocker), once
 * the guard lets it; @done gets the reply. */
void
stg_docker_request_full (GTask *task, const gchar *method, const gchar *path, JsonNode *body,
                         const gchar *raw_type, GBytes *raw, const gchar *auth, guint also_ok,
                         ReplyFn done)
{
  StgDocker *d = g_task_get_task_data (task);
  g_autofree gchar *url = g_strconcat (d->base, API_PREFIX, path, NULL);
  Request *r = g_new0 (Request, 1);

  r->task = g_object_ref (task);
  r->method = g_strdup (method);
  r->path = g_strdup (path);
  r->done = done;
  r->also_ok = also_ok;
  r->cancel = g_cancellable_new ();
  if (g_task_get_cancellable (task) != NULL)
    r->linked = g_cancellable_connect (g_task_get_cancellable (task),
                                       G_CALLBACK (on_call_cancelled), r->cancel, NULL);
  r->msg = soup_message_new (method, url);
  g_assert (r->msg != NULL); /* paths are built from escaped parts */
  if (d->client_cert != NULL)
    soup_message_set_tls_client_certificate (r->msg, d->client_cert);
  if (auth != NULL)
    soup_message_headers_replace (soup_message_get_request_headers (r->msg), "X-Registry-Auth",
                                  auth);
  if (body != NULL)
    {
      gchar *text = json_to_string (body, FALSE);
      g_autoptr (GBytes) bytes = g_bytes_new_take (text, strlen (text));
      soup_message_set_request_body_from_bytes (r->msg, "application/json", bytes);
    }
  else if (raw != NULL)
    soup_message_set_request_body_from_bytes (r->msg, raw_type, raw);
  if (guard_allows (d, r))
    {
      send_now (r);
      return;
    }
  d->held = g_list_prepend (d->held, r);
  r->retry = g_timeout_add (GUARD_RETRY_MS, on_held, r);
}

void
stg_docker_request_with (GTask *task, const gchar *method, const gchar *path, JsonNode *body,
                         const gchar *auth, guint also_ok, ReplyFn done)
{
  stg_docker_request_full (task, method, path, body, NULL, NULL, auth, also_ok, done);
}

void
stg_docker_request (GTask *task, const gchar *method, const gchar *path, JsonNode *body,
                    guint also_ok, ReplyFn done)
{
  stg_docker_request_with (task, method, path, body, NULL, also_ok, done);
}

GTask *
stg_docker_new_task (StgDocker *d, GCancellable *cancellable, GAsyncReadyCallback callback,
                     gpointer user_data, gpointer tag)
{
  GTask *task = g_task_new (NULL, cancellable, callback, user_data);

  g_task_set_source_tag (task, tag);
  g_task_set_task_data (task, d, NULL);
  return task;
}

JsonNode *
stg_docker_parse_body (GBytes *body, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) e = NULL;
  gsize len = 0;
  const gchar *data = g_bytes_get_data (body, &len);

  if (!stg_json_load (parser, data, (gssize) len, &e))
    {
      g_set_error (error, STG_DOCKER_ERROR, STG_DOCKER_ERROR_INVALID, "the engine's reply is not JSON: %s",
                   e->message);
      return NULL;
    }
  return json_node_copy (json_parser_get_root (parser));
}

void
stg_docker_done_ok (GTask *task, guint status G_GNUC_UNUSED, GBytes *body G_GNUC_UNUSED)
{
  g_task_return_boolean (task, TRUE);
}

void
stg_docker_done_json (GTask *task, guint status G_GNUC_UNUSED, GBytes *body)
{
  GError *error = NULL;
  JsonNode *node = stg_docker_parse_body (body, &error);

  if (node == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, node, (GDestroyNotify) json_node_unref);
}
