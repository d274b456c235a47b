/* http_client_transport.c: StgHttpClientTransport, Thrift messages POSTed
 * over libsoup-3's synchronous API. Owns its SoupSession, the message being
 * written and the reply being read. Any thread; one owner at a time.
 */
#include "config.h"

#include <libsoup/soup.h>
#include <string.h>

#include "cli/http_client_transport.h"
#include "common/error.h"

G_DEFINE_QUARK (stg-http-client-error-quark, stg_http_client_error)

#define SNIPPET_MAX 200

struct _StgHttpClientTransport
{
  ThriftTransport parent;

  gchar *url;
  GUri *uri;
  SoupSession *session;      /* (owned) */
  gchar *authorization;      /* (nullable) the header's value */
  gchar *claimed_user;       /* (nullable) X-Stagger-User */
  gsize max_reply;
  gchar *content_type;
  gboolean open;
  guint last_status;
  GByteArray *out;           /* the message being written */
  GByteArray *in;            /* the reply being read */
  gsize in_pos;
  gchar **replicas;     /* (nullable) a cluster's replicas' base URLs */
  guint turn;           /* the replica tried last */
  guint leader_wait_ms; /* how long to look for a leader */
  StgReplicaFinder finder; /* (nullable) the replicas found again after a failed round */
  gpointer finder_data;
};

G_DEFINE_TYPE (StgHttpClientTransport, stg_http_client_transport, THRIFT_TYPE_TRANSPORT)

void
stg_http_client_options_init (StgHttpClientOptions *options)
{
  memset (options, 0, sizeof *options);
  options->timeout_s = 60;
  options->max_reply = 64 * 1024 * 1024;
}

/* ---- the exchange ------------------------------------------------------- */

/* The first line of a short text body, for error messages ("" if none). */
static gchar *
snippet (GByteArray *body)
{
  gsize n = MIN (body->len, (gsize) SNIPPET_MAX);
  g_autofree gchar *text = g_strndup ((const gchar *) body->data, n);
  gchar *nl = strchr (text, '\n');

  if (nl != NULL)
    *nl = '\0';
  g_strstrip (text);
  if (text[0] == '\0' || !g_utf8_validate (text, -1, NULL))
    return g_strdup ("");
  return g_strdup_printf (": %s", text);
}

/* Reads the whole reply body into @into, refusing more than max_reply. */
static gboolean
read_body (StgHttpClientTransport *self, GInputStream *stream, GByteArray *into, GError **error)
{
  g_autoptr (GError) local = NULL;
  guint8 buf[16384];
  gssize n;

  g_byte_array_set_size (into, 0);
  while ((n = g_input_stream_read (stream, buf, sizeof buf, NULL, &local)) > 0)
    {
      if (into->len + (gsize) n > self->max_reply)
        {
          g_set_error (error, STG_HTTP_CLIENT_ERROR, STG_HTTP_CLIENT_ERROR_BAD_REPLY,
                       "the reply from %s is larger than %" G_GSIZE_FORMAT " bytes",
                       self->url, self->max_reply);
          return FALSE;
        }
      g_byte_array_append (into, buf, (guint) n);
    }
  if (n < 0)
    {
      g_set_error (error, STG_HTTP_CLIENT_ERROR, STG_HTTP_CLIENT_ERROR_UNREACHABLE,
                   "reading the reply from %s: %s", self->url, local->message);
      return FALSE;
    }
  return TRUE;
}

static gboolean
check_reply (StgHttpClientTransport *self, SoupMessage *msg, GError **error)
{
  guint status = soup_message_get_status (msg);
  const gchar *reason = soup_message_get_reason_phrase (msg);
  g_autofree gchar *text = snippet (self->in);

  if (status == SOUP_STATUS_UNAUTHORIZED || status == SOUP_STATUS_FORBIDDEN)
    {
      g_set_error (error, STG_HTTP_CLIENT_ERROR, STG_HTTP_CLIENT_ERROR_AUTH_FAILED,
                   "%s refused the credentials: HTTP %u %s%s", self->url, status,
                   reason ? reason : "", text);
      return FALSE;
    }
  if (!SOUP_STATUS_IS_SUCCESSFUL (status))
    {
      g_set_error (error, STG_HTTP_CLIENT_ERROR, STG_HTTP_CLIENT_ERROR_STATUS,
                   "%s answered HTTP %u %s%s", self->url, status, reason ? reason : "", text);
      return FALSE;
    }
  const gchar *type = soup_message_headers_get_content_type (
      soup_message_get_response_headers (msg), NULL);
  if (type == NULL || g_ascii_strcasecmp (type, self->content_type) != 0)
    {
      g_set_error (error, STG_HTTP_CLIENT_ERROR, STG_HTTP_CLIENT_ERROR_BAD_REPLY,
                   "%s answered with %s, not %s", self->url,
                   type ? type : "no content type", self->content_type);
      return FALSE;
    }
  return TRUE;
}

/* ---- one request, and the replicas ---------------------------------------- */

/* An error of a request that never reached a server (nothing was sent). */
static gboolean
not_sent (const GError *e)
{
  return e->domain == G_RESOLVER_ERROR ||
         g_error_matches (e, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED) ||
         g_error_matches (e, G_IO_ERROR, G_IO_ERROR_HOST_UNREACHABLE) ||
         g_error_matches (e, G_IO_ERROR, G_IO_ERROR_NETWORK_UNREACHABLE);
}

/* A follower's answer: it cannot serve the request and no leader can be
 * named yet (an election is under way), or replicas still send the
 * request round to each other (a redirect left after three). */
static gboolean
election_answer (SoupMessage *msg)
{
  const gchar *role = soup_message_headers_get_one (soup_message_get_response_headers (msg),
                                                    STG_HTTP_CLIENT_REPLICA_HEADER);
  guint status = soup_message_get_status (msg);

  return (status == SOUP_STATUS_SERVICE_UNAVAILABLE && g_strcmp0 (role, "follower") == 0) ||
         ((status == 307 || status == 308) && g_strcmp0 (role, "follower") == 0);
}

/* One request of @method to *@at with @body (nullable), following up to
 * three 307/308 (a follower naming the leader: *@at moves there, and
 * *@redirected is set); the reply's body in @into. The message, with its
 * status, or NULL with @error and *@sent saying whether the request may
 * have reached a server. */
static SoupMessage *
request_once (StgHttpClientTransport *self, const gchar *method, GUri **at, GBytes *body,
              GByteArray *into, gboolean *sent, gboolean *redirected, GError **error)
{
  for (guint hops = 0;; hops++)
    {
      g_autoptr (SoupMessage) msg = soup_message_new_from_uri (method, *at);
      g_autoptr (GError) local = NULL;
      SoupMessageHeaders *headers = soup_message_get_request_headers (msg);

      /* A POST must not turn into a GET on a redirect: only 307 and 308
       * (which keep the method and body) are followed, here, with the
       * credentials kept. */
      soup_message_set_flags (msg, SOUP_MESSAGE_NO_REDIRECT);
      if (self->authorization != NULL)
        soup_message_headers_replace (headers, "Authorization", self->authorization);
      if (body != NULL)
        {
          soup_message_headers_replace (headers, "Accept", self->content_type);
          if (self->claimed_user != NULL)
            soup_message_headers_replace (headers, "X-Stagger-User", self->claimed_user);
          soup_message_set_request_body_from_bytes (msg, self->content_type, body);
        }
      g_autoptr (GInputStream) stream = soup_session_send (self->session, msg, NULL, &local);
      if (stream == NULL)
        {
          g_autofree gchar *text = g_uri_to_string (*at);
          *sent = !not_sent (local);
          if (local->domain == G_TLS_ERROR)
            g_set_error (error, STG_HTTP_CLIENT_ERROR, STG_HTTP_CLIENT_ERROR_TLS,
                         "TLS with %s failed: %s", text, local->message);
          else
            g_set_error (error, STG_HTTP_CLIENT_ERROR, STG_HTTP_CLIENT_ERROR_UNREACHABLE,
                         "cannot reach %s: %s", text, local->message);
          return NULL;
        }
      gboolean ok = read_body (self, stream, into, error);
      (void) g_input_stream_close (stream, NULL, NULL);
      if (!ok)
        {
          *sent = TRUE;
          return NULL;
        }
      guint status = soup_message_get_status (msg);
      const gchar *location = soup_message_headers_get_one (soup_message_get_response_headers (msg),
                                                            "Location");
      GUri *next = (status == 307 || status == 308) && location != NULL && hops < 3
                       ? g_uri_parse_relative (*at, location, SOUP_HTTP_URI_FLAGS, NULL)
                       : NULL;
      if (next == NULL)
        return g_steal_pointer (&msg);
      g_uri_unref (*at);
      *at = next;
      *redirected = TRUE;
    }
}

/* The part of *@at after the base URL @base ("/api", "/cluster?x=1"), or
 * NULL when *@at is not under it. */
static const gchar *
under_base (const gchar *url, const gchar *base)
{
  gsize n = strlen (base);

  return strncmp (url, base, n) == 0 && (url[n] == '/' || url[n] == '\0') ? url + n : NULL;
}

/* The transport's base URL: its endpoint without "/api" (NULL when the
 * endpoint does not end so). */
static gchar *
own_base (StgHttpClientTransport *self)
{
  return g_str_has_suffix (self->url, "/api")
             ? g_strndup (self->url, strlen (self->url) - strlen ("/api"))
             : NULL;
}

/* Moves the endpoint to @base's /api: where the leader answered. */
static void set_url (StgHttpClientTransport *self, const gchar *url);

static void
move_to (StgHttpClientTransport *self, const gchar *base)
{
  g_autofree gchar *api = g_strconcat (base, "/api", NULL);

  set_url (self, api);
}

/* The replica to try after the one at @base: the next of the list, round
 * and round. */
static void
next_replica (StgHttpClientTransport *self, const gchar *base)
{
  guint n = g_strv_length (self->replicas);

  for (guint i = 0; base != NULL && i < n; i++)
    if (g_str_equal (self->replicas[i], base))
      self->turn = i;
  self->turn = (self->turn + 1) % n;
}

/* Why no replica could serve: each replica's last error, in order. */
static void
no_leader_error (StgHttpClientTransport *self, GHashTable *why, gboolean election, GError **error)
{
  g_autoptr (GString) all = g_string_new (NULL);
  g_autoptr (GList) keys = g_list_sort (g_hash_table_get_keys (why), (GCompareFunc) strcmp);

  for (GList *l = keys; l != NULL; l = l->next)
    g_string_append_printf (all, "%s%s", all->len ? "; " : "",
                            (const gchar *) g_hash_table_lookup (why, l->data));
  if (election)
    g_set_error (error, STG_HTTP_CLIENT_ERROR, STG_HTTP_CLIENT_ERROR_NO_LEADER,
                 "no replica of the cluster leads: an election is under way and did not end "
                 "within %u ms (%s)",
                 self->leader_wait_ms, all->str);
  else
    g_set_error (error, STG_HTTP_CLIENT_ERROR, STG_HTTP_CLIENT_ERROR_UNREACHABLE,
                 "cannot reach any replica of the cluster within %u ms (%s)", self->leader_wait_ms,
                 all->str);
}

/* Whether a failed request may be made again: an election answer always;
 * else one that could not reach the leader, when there are other
 * replicas to ask or a follower named a leader (a new one may be named
 * next time), and it reached no server or changes nothing (@again_ok). */
static gboolean
worth_again (const GError *e, gboolean sent, gboolean again_ok, gboolean redirected,
             gboolean rotate)
{
  if (g_error_matches (e, STG_HTTP_CLIENT_ERROR, STG_HTTP_CLIENT_ERROR_NO_LEADER))
    return TRUE;
  return g_error_matches (e, STG_HTTP_CLIENT_ERROR, STG_HTTP_CLIENT_ERROR_UNREACHABLE) &&
         (rotate || redirected) && (!sent || again_ok);
}

/* The request as request_once makes it, made again while no replica
 * leads: at the next replica (a follower sends it on to the leader) when
 * the one asked cannot be reached or answers that an election is under
 * way, round and round, for up to leader_wait_ms (every replica asked at
 * least once). A request that may have reached a server is made again
 * only when @again_ok (it changes nothing). A success elsewhere moves the
 * endpoint to the replica that answered. */
static SoupMessage *
request (StgHttpClientTransport *self, const gchar *method, GUri **at, GBytes *body,
         gboolean again_ok, GByteArray *into, GError **error)
{
  g_autoptr (GHashTable) why = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autofree gchar *base = own_base (self);
  g_autofree gchar *first = g_uri_to_string (*at);
  g_autofree gchar *path = g_strdup (base != NULL ? under_base (first, base) : NULL);
  gboolean rotate = self->replicas != NULL && path != NULL;
  gboolean election = FALSE;
  gint64 deadline = 0;
  guint tried = 0;

  for (;;)
    {
      g_autoptr (GError) local = NULL;
      gboolean sent = FALSE, redirected = FALSE;
      g_autofree gchar *asked = g_uri_to_string (*at);
      g_autoptr (SoupMessage) msg = request_once (self, method, at, body, into, &sent, &redirected,
                                                  &local);
      g_autofree gchar *answered = g_uri_to_string (*at);

      if (msg != NULL && !election_answer (msg))
        {
          if (path != NULL && g_str_has_suffix (answered, path))
            {
              g_autofree gchar *there = g_strndup (answered, strlen (answered) - strlen (path));
              if (g_strcmp0 (there, base) != 0)
                move_to (self, there);
            }
          return g_steal_pointer (&msg);
        }
      if (msg != NULL)
        g_set_error (&local, STG_HTTP_CLIENT_ERROR, STG_HTTP_CLIENT_ERROR_NO_LEADER,
                     "%s follows and no replica leads yet", answered);
      else if (redirected)
        g_prefix_error (&local, "%s named the leader, but ", asked);
      if (!worth_again (local, sent, again_ok, redirected, rotate))
        {
          if (rotate && sent && !again_ok &&
              g_error_matches (local, STG_HTTP_CLIENT_ERROR, STG_HTTP_CLIENT_ERROR_UNREACHABLE))
            g_prefix_error (&local, "the answer was lost, so whether the change was made is not "
                                    "known (look before making it again): ");
          g_propagate_error (error, g_steal_pointer (&local));
          return NULL;
        }
      election |= msg != NULL || redirected;

      gint64 now = g_get_monotonic_time ();
      if (deadline == 0)
        deadline = now + (gint64) self->leader_wait_ms * 1000;
      g_autofree gchar *asked_base = path != NULL && g_str_has_suffix (asked, path)
                                         ? g_strndup (asked, strlen (asked) - strlen (path))
                                         : g_strdup (asked);
      g_hash_table_replace (why, g_strdup (asked_base), g_strdup (local->message));
      /* Every replica is asked once a round, however short the wait. */
      gboolean round = TRUE;
      if (rotate)
        {
          next_replica (self, asked_base);
          round = ++tried >= g_strv_length (self->replicas);
        }
      if (round)
        {
          if (now >= deadline)
            {
              no_leader_error (self, why, election, error);
              return NULL;
            }
          tried = 0;
          g_usleep ((gulong) MIN (deadline - now, (gint64) 100 * 1000));
          gchar **found = rotate && self->finder != NULL ? self->finder (self->finder_data) : NULL;
          if (found != NULL && found[0] != NULL)
            {
              g_strfreev (self->replicas);
              self->replicas = g_steal_pointer (&found);
              self->turn = 0;
            }
          g_strfreev (found);
        }
      g_autofree gchar *next = rotate ? g_strconcat (self->replicas[self->turn], path, NULL)
                                      : g_strdup (first);
      g_uri_unref (*at);
      *at = g_uri_parse (next, SOUP_HTTP_URI_FLAGS, NULL);
    }
}

/* Whether the Thrift message @body only reads: its method's name (binary
 * protocol) says so. Such a call may be sent again after a lost answer. */
static gboolean
reads_only (GBytes *body)
{
  static const gchar *const reads[] = { "get", "query", "list", "maintenanceStatus", NULL };
  gsize n = 0;
  const guint8 *p = g_bytes_get_data (body, &n);
  guint32 len;

  if (n < 8 || p[0] != 0x80)
    return FALSE;
  memcpy (&len, p + 4, sizeof len);
  len = GUINT32_FROM_BE (len);
  if (len > n - 8)
    return FALSE;
  g_autofree gchar *name = g_strndup ((const gchar *) p + 8, len);
  for (guint i = 0; reads[i] != NULL; i++)
    if (g_str_has_prefix (name, reads[i]))
      return TRUE;
  return FALSE;
}

static gboolean
hc_flush (ThriftTransport *transport, GError **error)
{
  StgHttpClientTransport *self = STG_HTTP_CLIENT_TRANSPORT (transport);
  g_autoptr (GBytes) body = g_byte_array_free_to_bytes (self->out);
  GUri *at = g_uri_ref (self->uri);

  self->out = g_byte_array_new ();
  self->last_status = 0;
  self->in_pos = 0;
  g_autoptr (SoupMessage) msg = request (self, SOUP_METHOD_POST, &at, body, reads_only (body),
                                         self->in, error);
  g_uri_unref (at);
  if (msg == NULL)
    {
      g_byte_array_set_size (self->in, 0);
      return FALSE;
    }
  self->last_status = soup_message_get_status (msg);
  if (!check_reply (self, msg, error))
    {
      g_byte_array_set_size (self->in, 0);
      return FALSE;
    }
  transport->remainingMessageSize_ = (glong) self->in->len;
  return TRUE;
}

/* ---- ThriftTransport ------------------------------------------------------ */

static gboolean
hc_is_open (ThriftTransport *transport)
{
  return STG_HTTP_CLIENT_TRANSPORT (transport)->open;
}

static gboolean
hc_open (ThriftTransport *transport, GError **error)
{
  (void) error;
  STG_HTTP_CLIENT_TRANSPORT (transport)->open = TRUE;
  return TRUE;
}

static gboolean
hc_close (ThriftTransport *transport, GError **error)
{
  (void) error;
  STG_HTTP_CLIENT_TRANSPORT (transport)->open = FALSE;
  return TRUE;
}

static gint32
hc_read (ThriftTransport *transport, gpointer buf, guint32 len, GError **error)
{
  StgHttpClientTransport *self = STG_HTTP_CLIENT_TRANSPORT (transport);
  gsize give = MIN ((gsize) len, self->in->len - self->in_pos);

  if (len == 0)
    return 0;
  if (give == 0)
    {
      g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_RECEIVE,
                   "the reply from %s ended early", self->url);
      return -1;
    }
  memcpy (buf, self->in->data + self->in_pos, give);
  self->in_pos += give;
  transport->remainingMessageSize_ = (glong) (self->in->len - self->in_pos);
  return (gint32) give;
}

static gboolean
hc_nothing (ThriftTransport *transport, GError **error)
{
  (void) transport;
  (void) error;
  return TRUE;
}

static gboolean
hc_write (ThriftTransport *transport, const gpointer buf, const guint32 len, GError **error)
{
  (void) error;
  g_byte_array_append (STG_HTTP_CLIENT_TRANSPORT (transport)->out, buf, len);
  return TRUE;
}

static gboolean
hc_check_available (ThriftTransport *transport, glong bytes, GError **error)
{
  StgHttpClientTransport *self = STG_HTTP_CLIENT_TRANSPORT (transport);

  /* Sizes in a reply are checked against what the reply holds. */
  if (bytes < 0 || (gsize) bytes > self->in->len - self->in_pos)
    {
      g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_MAX_MESSAGE_SIZE_REACHED,
                   "the reply from %s claims more data than it holds", self->url);
      return FALSE;
    }
  return TRUE;
}

static void
stg_http_client_transport_finalize (GObject *object)
{
  StgHttpClientTransport *self = STG_HTTP_CLIENT_TRANSPORT (object);

  g_clear_object (&self->session);
  g_clear_pointer (&self->uri, g_uri_unref);
  g_free (self->url);
  g_free (self->content_type);
  g_free (self->authorization);
  g_free (self->claimed_user);
  g_byte_array_unref (self->out);
  g_byte_array_unref (self->in);
  g_strfreev (self->replicas);
  G_OBJECT_CLASS (stg_http_client_transport_parent_class)->finalize (object);
}

static void
stg_http_client_transport_class_init (StgHttpClientTransportClass *klass)
{
  ThriftTransportClass *ttc = THRIFT_TRANSPORT_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = stg_http_client_transport_finalize;
  ttc->is_open = hc_is_open;
  ttc->open = hc_open;
  ttc->close = hc_close;
  ttc->read = hc_read;
  ttc->read_all = stg_transport_read_all;
  ttc->read_end = hc_nothing;
  ttc->write = hc_write;
  ttc->write_end = hc_nothing;
  ttc->flush = hc_flush;
  ttc->checkReadBytesAvailable = hc_check_available;
}

static void
stg_http_client_transport_init (StgHttpClientTransport *self)
{
  self->out = g_byte_array_new ();
  self->in = g_byte_array_new ();
}

/* ---- construction ----------------------------------------------------------- */

#define invalid(error, ...) \
  stg_fail (error, STG_HTTP_CLIENT_ERROR, STG_HTTP_CLIENT_ERROR_INVALID, __VA_ARGS__)

static gboolean
setup (StgHttpClientTransport *self, const gchar *url, const StgHttpClientOptions *o,
       GError **error)
{
  self->uri = g_uri_parse (url, SOUP_HTTP_URI_FLAGS, NULL);
  if (self->uri == NULL)
    return invalid (error, "'%s' is not a URL", url);
  const gchar *scheme = g_uri_get_scheme (self->uri);
  if (g_ascii_strcasecmp (scheme, "http") != 0 && g_ascii_strcasecmp (scheme, "https") != 0)
    return invalid (error, "'%s' is not an http:// or https:// URL", url);
  if (g_uri_get_host (self->uri) == NULL || g_uri_get_host (self->uri)[0] == '\0')
    return invalid (error, "'%s' names no host", url);
  if (o->user != NULL && o->token != NULL)
    return invalid (error, "%s: give a user or a token, not both", url);

  self->content_type = g_strdup (o->content_type ? o->content_type : STG_HTTP_CLIENT_CONTENT_TYPE);
  g_autofree gchar *agent = g_strdup_printf ("stagger/%s", STG_VERSION);
  self->session = soup_session_new_with_options (
      "timeout", o->timeout_s,
      "user-agent", o->user_agent ? o->user_agent : agent,
      NULL);
  /* Credentials go with every request; no negotiation on a 401. */
  soup_session_remove_feature_by_type (self->session, SOUP_TYPE_AUTH_MANAGER);
  if (o->ca_file != NULL)
    {
      g_autoptr (GError) local = NULL;
      g_autoptr (GTlsDatabase) db = g_tls_file_database_new (o->ca_file, &local);
      if (db == NULL)
        {
          g_set_error (error, STG_HTTP_CLIENT_ERROR, STG_HTTP_CLIENT_ERROR_INVALID,
                       "cannot use %s as the trusted CAs: %s", o->ca_file, local->message);
          return FALSE;
        }
      soup_session_set_tls_database (self->session, db);
    }

  if (o->user != NULL)
    {
      g_autofree gchar *pair = g_strdup_printf ("%s:%s", o->user, o->password ? o->password : "");
      g_autofree gchar *b64 = g_base64_encode ((const guchar *) pair, strlen (pair));
      self->authorization = g_strdup_printf ("Basic %s", b64);
    }
  else if (o->token != NULL)
    self->authorization = g_strdup_printf ("Bearer %s", o->token);
  self->claimed_user = g_strdup (o->claimed_user);
  self->max_reply = o->max_reply ? o->max_reply : 64 * 1024 * 1024;
  return TRUE;
}

StgHttpClientTransport *
stg_http_client_transport_new (const gchar *url, const StgHttpClientOptions *options,
                               GError **error)
{
  g_autoptr (StgHttpClientTransport) self = g_object_new (STG_TYPE_HTTP_CLIENT_TRANSPORT, NULL);
  StgHttpClientOptions defaults;

  g_return_val_if_fail (url != NULL, NULL);
  if (options == NULL)
    {
      stg_http_client_options_init (&defaults);
      options = &defaults;
    }
  self->url = g_strdup (url);
  if (!setup (self, url, options, error))
    return NULL;
  THRIFT_TRANSPORT (self)->remainingMessageSize_ = G_MAXLONG;
  return g_steal_pointer (&self);
}

guint
stg_http_client_transport_last_status (StgHttpClientTransport *self)
{
  return self->last_status;
}

GBytes *
stg_http_client_transport_get (StgHttpClientTransport *self, const gchar *url, gchar **final_url,
                               GError **error)
{
  GUri *at = g_uri_parse (url, SOUP_HTTP_URI_FLAGS, NULL);

  if (at == NULL)
    {
      g_set_error (error, STG_HTTP_CLIENT_ERROR, STG_HTTP_CLIENT_ERROR_INVALID, "'%s' is not a URL", url);
      return NULL;
    }
  g_autoptr (GByteArray) into = g_byte_array_new ();
  g_autoptr (SoupMessage) msg = request (self, SOUP_METHOD_GET, &at, NULL, TRUE, into, error);
  g_autofree gchar *text = g_uri_to_string (at);
  g_uri_unref (at);
  if (msg == NULL)
    return NULL;
  guint status = soup_message_get_status (msg);
  if (!SOUP_STATUS_IS_SUCCESSFUL (status))
    {
      g_set_error (error, STG_HTTP_CLIENT_ERROR, STG_HTTP_CLIENT_ERROR_STATUS,
                   "%s answered HTTP %u", text, status);
      return NULL;
    }
  if (final_url != NULL)
    *final_url = g_steal_pointer (&text);
  return g_byte_array_free_to_bytes (g_steal_pointer (&into));
}

const gchar *
stg_http_client_transport_url (StgHttpClientTransport *self)
{
  return self->url;
}

void
stg_http_client_transport_set_replicas (StgHttpClientTransport *self, const gchar *const *bases,
                                        guint wait_ms)
{
  g_strfreev (self->replicas);
  self->replicas = bases != NULL && bases[0] != NULL ? g_strdupv ((gchar **) bases) : NULL;
  self->turn = 0;
  self->leader_wait_ms = wait_ms;
}

void
stg_http_client_transport_set_finder (StgHttpClientTransport *self, StgReplicaFinder finder,
                                      gpointer data)
{
  self->finder = finder;
  self->finder_data = data;
}

/* POSTs to @url from now on (a leader found by a GET's redirect). */
static void
set_url (StgHttpClientTransport *self, const gchar *url)
{
  GUri *next = g_uri_parse (url, SOUP_HTTP_URI_FLAGS, NULL);

  g_return_if_fail (next != NULL);
  g_uri_unref (self->uri);
  self->uri = next;
  g_free (self->url);
  self->url = g_uri_to_string (next);
}
