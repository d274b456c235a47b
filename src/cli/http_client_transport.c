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

static gboolean
fail_send (StgHttpClientTransport *self, GError *cause, GError **error)
{
  if (cause->domain == G_TLS_ERROR)
    g_set_error (error, STG_HTTP_CLIENT_ERROR, STG_HTTP_CLIENT_ERROR_TLS,
                 "TLS with %s failed: %s", self->url, cause->message);
  else
    g_set_error (error, STG_HTTP_CLIENT_ERROR, STG_HTTP_CLIENT_ERROR_UNREACHABLE,
                 "cannot reach %s: %s", self->url, cause->message);
  return FALSE;
}

/* Reads the whole reply body into self->in, refusing more than max_reply. */
static gboolean
read_body (StgHttpClientTransport *self, GInputStream *stream, GError **error)
{
  g_autoptr (GError) local = NULL;
  guint8 buf[16384];
  gssize n;

  g_byte_array_set_size (self->in, 0);
  self->in_pos = 0;
  while ((n = g_input_stream_read (stream, buf, sizeof buf, NULL, &local)) > 0)
    {
      if (self->in->len + (gsize) n > self->max_reply)
        {
          g_set_error (error, STG_HTTP_CLIENT_ERROR, STG_HTTP_CLIENT_ERROR_BAD_REPLY,
                       "the reply from %s is larger than %" G_GSIZE_FORMAT " bytes",
                       self->url, self->max_reply);
          return FALSE;
        }
      g_byte_array_append (self->in, buf, (guint) n);
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

/* A follower replica answers 307/308 naming the leader: TRUE (and the
 * transport now talks to the leader) when @msg is such a redirect. */
static gboolean
follow_redirect (StgHttpClientTransport *self, SoupMessage *msg)
{
  guint status = soup_message_get_status (msg);
  const gchar *location = soup_message_headers_get_one (soup_message_get_response_headers (msg),
                                                        "Location");
  if ((status != 307 && status != 308) || location == NULL)
    return FALSE;
  GUri *next = g_uri_parse_relative (self->uri, location, SOUP_HTTP_URI_FLAGS, NULL);
  if (next == NULL)
    return FALSE;
  g_uri_unref (self->uri);
  self->uri = next;
  g_free (self->url);
  self->url = g_uri_to_string (next);
  return TRUE;
}

static gboolean
hc_flush (ThriftTransport *transport, GError **error)
{
  StgHttpClientTransport *self = STG_HTTP_CLIENT_TRANSPORT (transport);
  g_autoptr (GBytes) body = g_byte_array_free_to_bytes (self->out);

  self->out = g_byte_array_new ();
  for (guint hops = 0;; hops++)
    {
      g_autoptr (SoupMessage) msg = soup_message_new_from_uri (SOUP_METHOD_POST, self->uri);
      g_autoptr (GError) local = NULL;
      SoupMessageHeaders *headers = soup_message_get_request_headers (msg);

      self->last_status = 0;
      g_byte_array_set_size (self->in, 0);
      self->in_pos = 0;
      /* A POST must not turn into a GET on a redirect: only 307 and 308
       * (which keep the method and body) are followed, here. */
      soup_message_set_flags (msg, SOUP_MESSAGE_NO_REDIRECT);
      soup_message_headers_replace (headers, "Accept", self->content_type);
      if (self->authorization != NULL)
        soup_message_headers_replace (headers, "Authorization", self->authorization);
      if (self->claimed_user != NULL)
        soup_message_headers_replace (headers, "X-Stagger-User", self->claimed_user);
      soup_message_set_request_body_from_bytes (msg, self->content_type, body);

      g_autoptr (GInputStream) stream = soup_session_send (self->session, msg, NULL, &local);
      if (stream == NULL)
        return fail_send (self, local, error);
      self->last_status = soup_message_get_status (msg);
      gboolean ok = read_body (self, stream, error);
      (void) g_input_stream_close (stream, NULL, NULL);
      if (ok && hops < 3 && follow_redirect (self, msg))
        continue;
      if (!ok || !check_reply (self, msg, error))
        {
          g_byte_array_set_size (self->in, 0);
          return FALSE;
        }
      transport->remainingMessageSize_ = (glong) self->in->len;
      return TRUE;
    }
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
  g_autoptr (GUri) at = g_uri_parse (url, SOUP_HTTP_URI_FLAGS, NULL);

  if (at == NULL)
    {
      g_set_error (error, STG_HTTP_CLIENT_ERROR, STG_HTTP_CLIENT_ERROR_INVALID, "'%s' is not a URL", url);
      return NULL;
    }
  for (guint hops = 0;; hops++)
    {
      g_autoptr (SoupMessage) msg = soup_message_new_from_uri (SOUP_METHOD_GET, at);
      g_autoptr (GError) local = NULL;
      g_autofree gchar *text = g_uri_to_string (at);

      /* Redirects are followed here, with the credentials kept. */
      soup_message_set_flags (msg, SOUP_MESSAGE_NO_REDIRECT);
      if (self->authorization != NULL)
        soup_message_headers_replace (soup_message_get_request_headers (msg), "Authorization",
                                      self->authorization);
      g_autoptr (GBytes) body = soup_session_send_and_read (self->session, msg, NULL, &local);
      if (body == NULL)
        {
          g_set_error (error, STG_HTTP_CLIENT_ERROR, STG_HTTP_CLIENT_ERROR_UNREACHABLE, "%s: %s",
                       text, local->message);
          return NULL;
        }
      guint status = soup_message_get_status (msg);
      const gchar *location = soup_message_headers_get_one (soup_message_get_response_headers (msg),
                                                            "Location");
      GUri *next = (status == 307 || status == 308) && location != NULL && hops < 3
                       ? g_uri_parse_relative (at, location, SOUP_HTTP_URI_FLAGS, NULL)
                       : NULL;
      if (next != NULL)
        {
          g_uri_unref (at);
          at = next;
          continue;
        }
      if (!SOUP_STATUS_IS_SUCCESSFUL (status))
        {
          g_set_error (error, STG_HTTP_CLIENT_ERROR, STG_HTTP_CLIENT_ERROR_STATUS,
                       "%s answered HTTP %u", text, status);
          return NULL;
        }
      if (final_url != NULL)
        *final_url = g_steal_pointer (&text);
      return g_steal_pointer (&body);
    }
}

const gchar *
stg_http_client_transport_url (StgHttpClientTransport *self)
{
  return self->url;
}

void
stg_http_client_transport_set_url (StgHttpClientTransport *self, const gchar *url)
{
  GUri *next = g_uri_parse (url, SOUP_HTTP_URI_FLAGS, NULL);

  g_return_if_fail (next != NULL);
  g_uri_unref (self->uri);
  self->uri = next;
  g_free (self->url);
  self->url = g_uri_to_string (next);
}
