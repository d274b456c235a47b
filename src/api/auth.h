/* auth.h: who may call what: users, their roles and their credentials.
 *
 * StgAuth holds the [users] of staggerd's config file: for each user a
 * salted password hash (crypt(3): yescrypt "$y$" or SHA-512 "$6$") and the
 * roles whose jobs the user may change ("*": every role). With no users,
 * auth is off and every caller may do everything. Credentials come as HTTP
 * Basic (user and password) or as a Bearer token (a secret checked against
 * each user's hash). Successful checks are remembered by a keyed digest of
 * the secret, so a client that calls often costs one crypt(3) per process.
 * Also knows which Thrift methods only read. Main-loop thread only.
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

/* Checks an HTTP Authorization header value (nullable): returns the user
 * name, or NULL with _NO_CREDENTIALS (no header) or _DENIED. */
gchar *stg_auth_check_header (StgAuth *auth, const gchar *header, GError **error);

/* Whether @user may change jobs of @role (nullable: no role named). */
gboolean stg_auth_user_may (StgAuth *auth, const gchar *user, const gchar *role);

/* A new salted yescrypt hash of @password, for the [users] section. */
gchar *stg_auth_hash_password (const gchar *password, GError **error);

G_END_DECLS
