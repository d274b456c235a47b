/* auth_private.h: what auth.c (users and roles), auth_secret.c (token
 * digests, password hashes) and auth_check.c (credentials, off the main
 * loop) share. Not for use outside src/api/.
 * Main-loop thread, except where a field says otherwise. */
#pragma once

#include "api/auth.h"

typedef struct
{
  gchar *name;
  gchar *hash;              /* (nullable) crypt(3) password hash */
  GPtrArray *tokens;        /* StgAuthToken*: digests of the user's Bearer tokens */
  GStrv roles;
  gboolean every_role;
} StgAuthUser;

typedef struct
{
  gchar *salt;              /* 32 hex digits: the HMAC key */
  guint8 digest[32];        /* HMAC-SHA-256 (salt, token) */
} StgAuthToken;

struct _StgAuth
{
  GHashTable *users;        /* name -> StgAuthUser* */
  GPtrArray *order;         /* StgAuthUser*, sorted by name */
  gboolean read_requires_auth;
  gboolean tcp_trusted;
  guint8 cache_key[32];
  GHashTable *verified;     /* hex HMAC -> user name: secrets that passed crypt(3) */
  GHashTable *refused;      /* hex HMAC -> expiry (monotonic µs): secrets that did not */
  GHashTable *peers;        /* address -> StgAuthPeer*: recent failures */
  GHashTable *checks;       /* StgAuthCheck* set: checks queued or running */
  GThreadPool *pool;        /* runs crypt(3); at most STG_AUTH_QUEUE_MAX checks wait */
};

/* How a Bearer token digest word of [users] starts. */
#define STG_AUTH_TOKEN_PREFIX "token:"

/* Whether @auth has users (else auth is off): stg_auth_enabled(). */
static inline gboolean
stg_auth_has_users (const StgAuth *auth)
{
  return auth != NULL && g_hash_table_size (auth->users) > 0;
}

/* Parses one Bearer token digest word ("token:SALT:DIGEST"). */
StgAuthToken *stg_auth_token_parse (const gchar *word);
void stg_auth_token_free (StgAuthToken *token);

/* Whether @secret matches @token, in the same time whatever the answer. */
gboolean stg_auth_token_matches (const StgAuthToken *token, const gchar *secret);

/* Sets up and tears down auth_check.c's part of @auth. */
void stg_auth_checks_init (StgAuth *auth);
void stg_auth_checks_clear (StgAuth *auth);
