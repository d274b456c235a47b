/* auth.h: who may call what: users, their roles and their credentials.
 *
 * StgAuth holds the [users] of staggerd's config file: for each user a
 * salted password hash (crypt(3): yescrypt "$y$" or SHA-512 "$6$"), digests
 * of Bearer tokens ("token:SALT:HMAC-SHA-256"), and the roles whose jobs
 * the user may change ("*": every role). With no users, auth is off and
 * every caller may do everything. Credentials come as HTTP Basic (user and
 * password) or as a Bearer token (matched against the token digests, or
 * else against the password hashes). crypt(3) never runs on the main loop:
 * see stg_auth_prepare(). Main-loop thread only.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define STG_AUTH_ERROR (stg_auth_error_quark ())
GQuark stg_auth_error_quark (void);

typedef enum
{
  STG_AUTH_ERROR_FAILED,
  STG_AUTH_ERROR_CONFIG,        /* a bad [users] entry */
  STG_AUTH_ERROR_NO_CREDENTIALS,
  STG_AUTH_ERROR_DENIED,        /* wrong user, password or token */
} StgAuthError;

typedef struct _StgAuth StgAuth;

/* Auth from @users (user name -> "HASH ROLE..." as written in [users];
 * NULL or empty: auth is off). Fails with STG_AUTH_ERROR_CONFIG naming the
 * user whose entry is wrong. */
StgAuth *stg_auth_new (GHashTable *users, gboolean read_requires_auth, gboolean tcp_trusted,
                       GError **error);
void stg_auth_free (StgAuth *auth);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgAuth, stg_auth_free)

/* Whether any user is configured (so credentials are needed). */
gboolean stg_auth_enabled (StgAuth *auth);
gboolean stg_auth_read_requires_auth (StgAuth *auth);
gboolean stg_auth_tcp_trusted (StgAuth *auth);

/* Checks waiting for crypt(3) at once, at most; more are refused. */
#define STG_AUTH_QUEUE_MAX 64
/* Of those, at most this many from one address. */
#define STG_AUTH_PEER_QUEUE_MAX 2
/* Failed crypt(3) checks an address may cause in a minute; then its
 * unknown secrets are refused without one until the minute is over. */
#define STG_AUTH_FAILURES_MAX 10

typedef struct _StgAuthCheck StgAuthCheck;

/* Gets an HTTP Authorization header value (nullable) from @peer (an
 * address, nullable) ready for stg_auth_check_header(): when its answer
 * needs crypt(3), queues that on a worker thread and returns a pending
 * check; @ready(@data) is then called on the main loop once the answer is
 * known. Returns NULL when stg_auth_check_header() can answer at once
 * (no or malformed credentials, a token digest, a known secret, a busy
 * queue or an address with too many failures). Release the check with
 * stg_auth_check_cancel(), whether or not @ready was called. */
StgAuthCheck *stg_auth_prepare (StgAuth *auth, const gchar *header, const gchar *peer,
                                void (*ready) (gpointer data), gpointer data);

/* Releases @check (nullable): @ready will not be called after this. */
void stg_auth_check_cancel (StgAuthCheck *check);

/* Checks an HTTP Authorization header value (nullable) from @peer
 * (nullable) without crypt(3): by token digests and by what
 * stg_auth_prepare() found. Returns the user name, or NULL with
 * _NO_CREDENTIALS (no header) or _DENIED. */
gchar *stg_auth_check_header (StgAuth *auth, const gchar *header, const gchar *peer,
                              GError **error);

/* Whether @user may change jobs of @role (nullable: no role named). */
gboolean stg_auth_user_may (StgAuth *auth, const gchar *user, const gchar *role);

/* A new salted yescrypt hash of @password, for the [users] section. */
gchar *stg_auth_hash_password (const gchar *password, GError **error);

/* A new token digest of @token ("token:SALT:DIGEST"), for [users]. */
gchar *stg_auth_hash_token (const gchar *token, GError **error);

G_END_DECLS
