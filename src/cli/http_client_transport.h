/* http_client_transport.h: a blocking Thrift client transport over HTTP(S).
 *
 * StgHttpClientTransport buffers one message's writes and, on flush, POSTs
 * them to an endpoint URL (Stagger's and Aurora's /api) as
 * application/vnd.apache.thrift.binary, with an optional Basic or Bearer
 * Authorization header, over TLS when the URL is https. The reply body is
 * then read back by the protocol. Built on libsoup-3's synchronous API; for
 * the CLI (and the RPC benchmark), not the daemon. Any thread; one
 * owner at a time.
 */
#pragma once

#include "common/thrift_glue.h"

G_BEGIN_DECLS

#define STG_HTTP_CLIENT_CONTENT_TYPE "application/vnd.apache.thrift.binary"

#define STG_HTTP_CLIENT_ERROR (stg_http_client_error_quark ())
GQuark stg_http_client_error_quark (void);

typedef enum
{
  STG_HTTP_CLIENT_ERROR_FAILED,
  STG_HTTP_CLIENT_ERROR_INVALID,     /* bad URL or options */
  STG_HTTP_CLIENT_ERROR_UNREACHABLE, /* no connection: refused, unknown host, timeout */
  STG_HTTP_CLIENT_ERROR_TLS,         /* TLS handshake or certificate refused */
  STG_HTTP_CLIENT_ERROR_AUTH_FAILED, /* HTTP 401 or 403 */
  STG_HTTP_CLIENT_ERROR_STATUS,      /* any other status outside 2xx */
  STG_HTTP_CLIENT_ERROR_BAD_REPLY,   /* not a Thrift binary reply, or too large */
  STG_HTTP_CLIENT_ERROR_NO_LEADER,   /* replicas answer, but none leads (an election) */
} StgHttpClientError;

/* The header a replica's answers carry: "follower" on a follower's. */
#define STG_HTTP_CLIENT_REPLICA_HEADER "X-Stagger-Replica"

typedef struct
{
  const gchar *user;         /* with @password: HTTP Basic */
  const gchar *password;
  const gchar *token;        /* Authorization: Bearer; not with @user */
  const gchar *ca_file;      /* PEM file of trusted CAs instead of the system's */
  guint timeout_s;           /* each socket operation; 0: none. Default 60 */
  gsize max_reply;           /* bytes; default 64 MiB */
  const gchar *user_agent;   /* default "stagger/<version>" */
  const gchar *claimed_user; /* (nullable) sent as X-Stagger-User: who the caller says it
                              * is; a daemon without auth records it, marked so */
  const gchar *content_type; /* the protocol's media type, sent and expected back;
                              * default STG_HTTP_CLIENT_CONTENT_TYPE (binary) */
} StgHttpClientOptions;

void stg_http_client_options_init (StgHttpClientOptions *options);

#define STG_TYPE_HTTP_CLIENT_TRANSPORT (stg_http_client_transport_get_type ())
G_DECLARE_FINAL_TYPE (StgHttpClientTransport, stg_http_client_transport, STG,
                      HTTP_CLIENT_TRANSPORT, ThriftTransport)

/* A transport that POSTs each message to @url (http or https, used as
 * given: pass ".../api"). @options may be NULL. Fails with
 * STG_HTTP_CLIENT_ERROR_INVALID on a bad URL, both user and token, or an
 * unreadable @ca_file. */
StgHttpClientTransport *stg_http_client_transport_new (const gchar *url,
                                                       const StgHttpClientOptions *options,
                                                       GError **error);

/* The HTTP status of the last exchange (0 before any, or when no reply
 * came). */
guint stg_http_client_transport_last_status (StgHttpClientTransport *self);

/* A plain GET of @url with the same session and credentials (for other
 * pages of the same server), following a follower replica's 307/308 to
 * the leader as the POSTs do; the body, or NULL with @error set. When
 * @final_url is not NULL it gets the URL that answered. */
GBytes *stg_http_client_transport_get (StgHttpClientTransport *self, const gchar *url,
                                       gchar **final_url, GError **error);

/* The URL the transport POSTs to now: the one it was made with, or the
 * leader's once a follower redirected it. */
const gchar *stg_http_client_transport_url (StgHttpClientTransport *self);

/* The base URLs of a cluster's replicas (NULL: only the endpoint), and
 * how long (@wait_ms) a request looks for a leader. A request to the
 * endpoint's base that cannot reach it goes to the next replica, round and
 * round (a follower redirects it to the leader); one a follower answers
 * with 503 (no replica leads yet) is made again, at the next replica if
 * any; for up to @wait_ms (each replica asked once at least), then
 * STG_HTTP_CLIENT_ERROR_NO_LEADER (a follower answered) or _UNREACHABLE
 * naming each replica's error. A
 * request that may have reached a server is made again only when it
 * cannot change anything (a GET, a Thrift call whose name starts with
 * get, query or list, or maintenanceStatus). Where the leader answered is
 * the endpoint from then on. */
void stg_http_client_transport_set_replicas (StgHttpClientTransport *self,
                                             const gchar *const *bases, guint wait_ms);

/* Where the replicas are found again after each round of them failed (a
 * cluster whose leader is announced in ZooKeeper): a new NULL-terminated
 * list of base URLs, or NULL to keep the old one. */
typedef gchar **(*StgReplicaFinder) (gpointer data);
void stg_http_client_transport_set_finder (StgHttpClientTransport *self, StgReplicaFinder finder,
                                           gpointer data);

G_END_DECLS
