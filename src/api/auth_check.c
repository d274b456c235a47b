/* auth_check.c: checking credentials without stalling the main loop.
 *
 * Bearer tokens are compared with each user's token digests (HMAC-SHA-256
 * under a salt per digest): microseconds, and every digest is computed
 * whatever matches. Passwords (HTTP Basic, and Bearer tokens given a
 * password hash) need crypt(3), which costs tens of milliseconds on
 * purpose: stg_auth_prepare() hands that to a worker thread with a bounded
 * queue, and the request waits; the result lands in a cache keyed by an
 * HMAC of the secret, where stg_auth_check_header() finds it. The main loop
 * never runs crypt(3). An address may have STG_AUTH_PEER_QUEUE_MAX checks
 * waiting at once; one with STG_AUTH_FAILURES_MAX failures in the last
 * minute gets no more crypt(3) until the minute is over; an unknown user
 * costs one crypt(3) against a real hash like a known one. Credentials
 * refused without a crypt(3) for any of those reasons are answered only
 * after DELAY_MS, so a client that guesses cannot spin.
 * Main-loop thread, except work() on the pool's thread.
 */
#include "config.h"

#include <crypt.h>
#include <string.h>

#include "api/auth_private.h"

#define CACHE_MAX 1024
#define SECRET_MAX 1024
#define REFUSED_US (60 * G_USEC_PER_SEC)
#define WINDOW_US (60 * G_USEC_PER_SEC)
#define DELAY_MS 500

typedef struct
{
  guint failures;
  gint64 since;
  guint waiting;            /* its checks queued or running */
} StgAuthPeer;

typedef struct
{
  gchar *user;              /* (nullable) whom a match signs in: NULL for a stand-in */
  gchar *hash;
} Candidate;

struct _StgAuthCheck
{
  gint refs;                /* atomic: the main loop and the worker */
  StgAuth *auth;            /* NULL once auth is freed (main loop only) */
  GArray *candidates;       /* Candidate: hashes to try in order */
  gchar *secret;
  gchar *key;               /* cache key of the secret */
  gchar *peer;
  gchar *user;              /* set by the worker on a match */
  guint delay;              /* a refusal held back: its timer (main loop) */
  void (*ready) (gpointer data);
  gpointer data;
};

/* ---- parsing ---------------------------------------------------------------- */

typedef enum { CRED_NONE, CRED_BAD, CRED_BASIC, CRED_BEARER } CredKind;

/* Splits an Authorization value: Basic gives *@user and *@secret, Bearer
 * *@secret. Both owned and wiped by the caller (wipe_free). */
static CredKind
parse_header (const gchar *header, gchar **user, gchar **secret)
{
  *user = *secret = NULL;
  if (header == NULL || header[0] == '\0')
    return CRED_NONE;
  while (*header == ' ')
    header++;
  if (g_ascii_strncasecmp (header, "Bearer ", 7) == 0)
    {
      const gchar *token = header + 7;
      while (*token == ' ')
        token++;
      if (token[0] == '\0' || strlen (token) > SECRET_MAX)
        return CRED_BAD;
      *secret = g_strdup (token);
      return CRED_BEARER;
    }
  if (g_ascii_strncasecmp (header, "Basic ", 6) != 0)
    return CRED_BAD;
  const gchar *b64 = header + 6;
  while (*b64 == ' ')
    b64++;
  if (strlen (b64) > SECRET_MAX * 2 ||
      b64[strspn (b64, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")] != '\0')
    return CRED_BAD;
  gsize len = 0;
  gchar *text = (gchar *) g_base64_decode (b64, &len);
  gchar *colon = text ? memchr (text, ':', len) : NULL;
  if (colon == NULL || memchr (text, '\0', len) != NULL)
    {
      if (text != NULL)
        explicit_bzero (text, len);
      g_free (text);
      return CRED_BAD;
    }
  *user = g_strndup (text, (gsize) (colon - text));
  *secret = g_strndup (colon + 1, len - (gsize) (colon - text) - 1);
  explicit_bzero (text, len);
  g_free (text);
  return CRED_BASIC;
}

static void
wipe_free (gchar *s)
{
  if (s == NULL)
    return;
  explicit_bzero (s, strlen (s));
  g_free (s);
}

/* The cache key of @secret for @user (Basic) or for any user (Bearer). */
static gchar *
cache_key (StgAuth *auth, CredKind kind, const gchar *user, const gchar *secret)
{
  g_autoptr (GHmac) hmac = g_hmac_new (G_CHECKSUM_SHA256, auth->cache_key, sizeof auth->cache_key);
  const gchar *who = kind == CRED_BEARER ? "" : user;

  g_hmac_update (hmac, (const guchar *) (kind == CRED_BEARER ? "B" : "P"), 1);
  g_hmac_update (hmac, (const guchar *) who, (gssize) strlen (who) + 1);
  g_hmac_update (hmac, (const guchar *) secret, (gssize) strlen (secret));
  return g_strdup (g_hmac_get_string (hmac));
}

/* The user one of whose token digests @secret matches, or NULL; every
 * digest of every user is computed, so the time tells nothing. */
static const gchar *
token_user (StgAuth *auth, const gchar *secret)
{
  const gchar *found = NULL;

  for (guint i = 0; i < auth->order->len; i++)
    {
      StgAuthUser *u = auth->order->pdata[i];
      for (guint j = 0; j < u->tokens->len; j++)
        if (stg_auth_token_matches (u->tokens->pdata[j], secret) && found == NULL)
          found = u->name;
    }
  return found;
}

/* The record of @peer, its failure count restarted once a minute. */
static StgAuthPeer *
peer_get (StgAuth *auth, const gchar *peer)
{
  StgAuthPeer *p = g_hash_table_lookup (auth->peers, peer);
  gint64 now = g_get_monotonic_time ();

  if (p == NULL)
    {
      if (g_hash_table_size (auth->peers) >= CACHE_MAX)
        g_hash_table_remove_all (auth->peers);   /* its checks' counts restart at 0 */
      p = g_new0 (StgAuthPeer, 1);
      p->since = now;
      g_hash_table_insert (auth->peers, g_strdup (peer), p);
    }
  if (now - p->since > WINDOW_US)
    {
      p->failures = 0;
      p->since = now;
    }
  return p;
}

static gboolean
peer_blocked (StgAuth *auth, const gchar *peer)
{
  return peer != NULL && peer_get (auth, peer)->failures >= STG_AUTH_FAILURES_MAX;
}

static gboolean
recently_refused (StgAuth *auth, const gchar *key)
{
  gpointer expiry = g_hash_table_lookup (auth->refused, key);
  return expiry != NULL && *(gint64 *) expiry > g_get_monotonic_time ();
}

/* ---- the worker --------------------------------------------------------------- */

static void
check_unref (StgAuthCheck *c)
{
  if (!g_atomic_int_dec_and_test (&c->refs))
    return;
  for (guint i = 0; i < c->candidates->len; i++)
    {
      Candidate *k = &g_array_index (c->candidates, Candidate, i);
      g_free (k->user);
      wipe_free (k->hash);
    }
  g_array_unref (c->candidates);
  wipe_free (c->secret);
  g_free (c->key);
  g_free (c->peer);
  g_free (c->user);
  g_free (c);
}

/* On the main loop: the verdict is in. */
static gboolean
check_done (gpointer data)
{
  StgAuthCheck *c = data;
  StgAuth *auth = c->auth;

  if (auth != NULL)
    {
      g_hash_table_remove (auth->checks, c);
      c->auth = NULL;
      StgAuthPeer *p = c->peer ? peer_get (auth, c->peer) : NULL;
      if (p != NULL && p->waiting > 0)
        p->waiting--;
      if (c->user != NULL)
        {
          if (g_hash_table_size (auth->verified) >= CACHE_MAX)
            g_hash_table_remove_all (auth->verified);
          g_hash_table_insert (auth->verified, g_strdup (c->key), g_strdup (c->user));
        }
      else
        {
          if (g_hash_table_size (auth->refused) >= CACHE_MAX)
            g_hash_table_remove_all (auth->refused);
          gint64 *expiry = g_new (gint64, 1);
          *expiry = g_get_monotonic_time () + REFUSED_US;
          g_hash_table_insert (auth->refused, g_strdup (c->key), expiry);
          if (p != NULL)
            p->failures++;
        }
    }
  if (c->ready != NULL)
    c->ready (c->data);
  check_unref (c);   /* the worker's reference */
  return G_SOURCE_REMOVE;
}

/* On the pool's thread: crypt(3) against every candidate. */
static void
work (gpointer data, gpointer user_data)
{
  StgAuthCheck *c = data;
  struct crypt_data *cd = g_new0 (struct crypt_data, 1);
  (void) user_data;

  for (guint i = 0; i < c->candidates->len && c->user == NULL; i++)
    {
      Candidate *k = &g_array_index (c->candidates, Candidate, i);
      const gchar *got = crypt_rn (c->secret, k->hash, cd, sizeof *cd);
      if (got != NULL && got[0] != '*' && strcmp (got, k->hash) == 0 && k->user != NULL)
        c->user = g_strdup (k->user);
    }
  explicit_bzero (cd, sizeof *cd);
  g_free (cd);
  g_idle_add (check_done, c);
}

/* On the main loop: a held-back refusal may go out now. */
static gboolean
delay_done (gpointer data)
{
  StgAuthCheck *c = data;

  c->delay = 0;
  if (c->auth != NULL)
    g_hash_table_remove (c->auth->checks, c);
  c->auth = NULL;
  if (c->ready != NULL)
    c->ready (c->data);
  check_unref (c);   /* the timer's reference */
  return G_SOURCE_REMOVE;
}

static StgAuthCheck *
check_new (StgAuth *auth, const gchar *peer, void (*ready) (gpointer data), gpointer data)
{
  StgAuthCheck *c = g_new0 (StgAuthCheck, 1);

  c->refs = 2;   /* the caller's, and the worker's or the timer's */
  c->auth = auth;
  c->candidates = g_array_new (FALSE, TRUE, sizeof (Candidate));
  c->peer = g_strdup (peer);
  c->ready = ready;
  c->data = data;
  g_hash_table_add (auth->checks, c);
  return c;
}

static void
add_candidate (StgAuthCheck *c, const gchar *user, const gchar *hash)
{
  Candidate k = { g_strdup (user), g_strdup (hash) };
  g_array_append_val (c->candidates, k);
}

/* ---- the API ------------------------------------------------------------------ */

/* Whether a check of @secret may go to the worker. */
static gboolean
may_queue (StgAuth *auth, const gchar *peer)
{
  return !peer_blocked (auth, peer) && g_hash_table_size (auth->checks) < STG_AUTH_QUEUE_MAX &&
         (peer == NULL || peer_get (auth, peer)->waiting < STG_AUTH_PEER_QUEUE_MAX);
}

/* A check on the worker: the hashes @secret may match, in order. */
static StgAuthCheck *
queue_check (StgAuth *auth, CredKind kind, const gchar *user, const gchar *secret, gchar *key,
             const gchar *peer, void (*ready) (gpointer data), gpointer data)
{
  StgAuthCheck *c = check_new (auth, peer, ready, data);
  StgAuthUser *u = kind == CRED_BASIC ? g_hash_table_lookup (auth->users, user) : NULL;

  c->secret = g_strdup (secret);
  c->key = key;
  for (guint i = 0; i < auth->order->len; i++)
    {
      StgAuthUser *v = auth->order->pdata[i];
      if (v->hash != NULL && (kind == CRED_BEARER || v == u))
        add_candidate (c, v->name, v->hash);
    }
  /* An unknown user costs the same as a known one. */
  for (guint i = 0; i < auth->order->len && c->candidates->len == 0 && kind == CRED_BASIC; i++)
    if (((StgAuthUser *) auth->order->pdata[i])->hash != NULL)
      add_candidate (c, NULL, ((StgAuthUser *) auth->order->pdata[i])->hash);
  if (peer != NULL)
    peer_get (auth, peer)->waiting++;
  g_thread_pool_push (auth->pool, c, NULL);
  return c;
}

StgAuthCheck *
stg_auth_prepare (StgAuth *auth, const gchar *header, const gchar *peer,
                  void (*ready) (gpointer data), gpointer data)
{
  gchar *user = NULL, *secret = NULL;
  CredKind kind = stg_auth_has_users (auth) ? parse_header (header, &user, &secret) : CRED_NONE;
  StgAuthCheck *c = NULL;

  if (kind == CRED_BASIC || kind == CRED_BEARER)
    {
      gchar *key = cache_key (auth, kind, user, secret);
      if (g_hash_table_contains (auth->verified, key) ||
          (kind == CRED_BEARER && token_user (auth, secret) != NULL))
        g_free (key);   /* good: answered at once */
      else if (!recently_refused (auth, key) && may_queue (auth, peer))
        c = queue_check (auth, kind, user, secret, key, peer, ready, data);
      else
        {
          g_free (key);
          c = check_new (auth, peer, ready, data);
          c->delay = g_timeout_add (DELAY_MS, delay_done, c);
        }
    }
  wipe_free (user);
  wipe_free (secret);
  return c;
}

void
stg_auth_check_cancel (StgAuthCheck *check)
{
  if (check == NULL)
    return;
  check->ready = NULL;
  check->data = NULL;
  check_unref (check);
}

static gchar *
denied (StgAuth *auth, const gchar *peer, GError **error)
{
  if (peer_blocked (auth, peer))
    g_set_error (error, STG_AUTH_ERROR, STG_AUTH_ERROR_DENIED,
                 "authentication failed: too many failures from %s; try again in a minute", peer);
  else
    g_set_error (error, STG_AUTH_ERROR, STG_AUTH_ERROR_DENIED,
                 "authentication failed: unknown user or wrong password or token");
  return NULL;
}

gchar *
stg_auth_check_header (StgAuth *auth, const gchar *header, const gchar *peer, GError **error)
{
  g_autofree gchar *user = NULL, *secret = NULL;
  CredKind kind = parse_header (header, &user, &secret);
  gchar *found = NULL;

  if (kind == CRED_NONE)
    {
      g_set_error (error, STG_AUTH_ERROR, STG_AUTH_ERROR_NO_CREDENTIALS,
                   "authentication required: send HTTP Basic credentials or a Bearer token");
      return NULL;
    }
  if (kind == CRED_BAD)
    {
      g_set_error (error, STG_AUTH_ERROR, STG_AUTH_ERROR_DENIED,
                   "authentication failed: only Basic and Bearer credentials are understood");
      return NULL;
    }
  const gchar *by_token = kind == CRED_BEARER ? token_user (auth, secret) : NULL;
  if (by_token != NULL)
    found = g_strdup (by_token);
  else
    {
      g_autofree gchar *key = cache_key (auth, kind, user, secret);
      const gchar *known = g_hash_table_lookup (auth->verified, key);
      if (known != NULL && (kind == CRED_BEARER || g_str_equal (known, user)))
        found = g_strdup (known);
    }
  explicit_bzero (secret, strlen (secret));
  return found != NULL ? found : denied (auth, peer, error);
}

void
stg_auth_checks_init (StgAuth *auth)
{
  auth->verified = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  auth->refused = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  auth->peers = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  auth->checks = g_hash_table_new (NULL, NULL);
  auth->pool = g_thread_pool_new (work, NULL, 1, FALSE, NULL);
}

void
stg_auth_checks_clear (StgAuth *auth)
{
  if (auth->pool != NULL)
    g_thread_pool_free (auth->pool, FALSE, TRUE);   /* finish what is queued */
  auth->pool = NULL;
  /* Their verdicts are on their way to the main loop: they find no auth. */
  GHashTableIter it;
  gpointer c;
  if (auth->checks != NULL)
    {
      g_hash_table_iter_init (&it, auth->checks);
      while (g_hash_table_iter_next (&it, &c, NULL))
        {
          StgAuthCheck *check = c;
          check->auth = NULL;
          if (check->delay != 0)
            {
              g_clear_handle_id (&check->delay, g_source_remove);
              check_unref (check);   /* the timer's reference */
            }
        }
    }
  g_clear_pointer (&auth->checks, g_hash_table_unref);
  g_clear_pointer (&auth->verified, g_hash_table_unref);
  g_clear_pointer (&auth->refused, g_hash_table_unref);
  g_clear_pointer (&auth->peers, g_hash_table_unref);
}
