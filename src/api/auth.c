/* auth.c: StgAuth: users, roles, credential checks with crypt(3).
 *
 * Owns the user table and a cache of verified secrets: HMAC-SHA256 of
 * "user\0secret" under a random key made at start, so the cache never holds
 * a secret or a fast unkeyed hash of one. Calls only GLib and libcrypt.
 * Main-loop thread only.
 */
#include "config.h"

#include <crypt.h>
#include <string.h>

#include "api/auth.h"
#include "common/jobkey.h"

G_DEFINE_QUARK (stg-auth-error-quark, stg_auth_error)

#define CACHE_MAX 1024
#define SECRET_MAX 1024

typedef struct
{
  gchar *name;
  gchar *hash;
  GStrv roles;
  gboolean every_role;
} User;

struct _StgAuth
{
  GHashTable *users;        /* name -> User* */
  GPtrArray *order;         /* User*, sorted by name: Bearer tokens try them in order */
  gboolean read_requires_auth;
  gboolean tcp_trusted;
  guint8 cache_key[32];
  GHashTable *verified;     /* hex HMAC -> user name (owned strings) */
};

static void
user_free (User *u)
{
  g_free (u->name);
  if (u->hash != NULL)
    explicit_bzero (u->hash, strlen (u->hash));
  g_free (u->hash);
  g_strfreev (u->roles);
  g_free (u);
}

static gint
compare_users (gconstpointer a, gconstpointer b)
{
  return strcmp ((*(User *const *) a)->name, (*(User *const *) b)->name);
}

static gboolean
name_valid (const gchar *name)
{
  if (name == NULL || name[0] == '\0' || strlen (name) > 200)
    return FALSE;
  for (const gchar *p = name; *p; p++)
    if (!g_ascii_isalnum (*p) && *p != '.' && *p != '_' && *p != '-' && *p != '@')
      return FALSE;
  return TRUE;
}

static User *
parse_user (const gchar *name, const gchar *value, GError **error)
{
  g_auto (GStrv) words = g_strsplit_set (value ? value : "", " \t,", -1);
  g_autoptr (GPtrArray) roles = g_ptr_array_new_with_free_func (g_free);
  const gchar *hash = NULL;
  gboolean every = FALSE;

  if (!name_valid (name))
    {
      g_set_error (error, STG_AUTH_ERROR, STG_AUTH_ERROR_CONFIG,
                   "[users] '%s': a user name is letters, digits and . _ - @", name);
      return NULL;
    }
  for (guint i = 0; words[i] != NULL; i++)
    {
      if (words[i][0] == '\0')
        continue;
      if (hash == NULL)
        hash = words[i];
      else if (strcmp (words[i], "*") == 0)
        every = TRUE;
      else if (stg_job_key_part_valid (words[i]))
        g_ptr_array_add (roles, g_strdup (words[i]));
      else
        {
          g_set_error (error, STG_AUTH_ERROR, STG_AUTH_ERROR_CONFIG,
                       "[users] %s: '%s' is not a role (letters, digits, . _ -) or *", name,
                       words[i]);
          return NULL;
        }
    }
  if (hash == NULL || !(g_str_has_prefix (hash, "$y$") || g_str_has_prefix (hash, "$6$")) ||
      crypt_checksalt (hash) != CRYPT_SALT_OK)
    {
      g_set_error (error, STG_AUTH_ERROR, STG_AUTH_ERROR_CONFIG,
                   "[users] %s: expected a yescrypt ($y$) or SHA-512 ($6$) password hash "
                   "first (make one with staggerd --hash-password)", name);
      return NULL;
    }
  if (!every && roles->len == 0)
    {
      g_set_error (error, STG_AUTH_ERROR, STG_AUTH_ERROR_CONFIG,
                   "[users] %s: no roles after the hash (name roles, or * for all)", name);
      return NULL;
    }
  User *u = g_new0 (User, 1);
  u->name = g_strdup (name);
  u->hash = g_strdup (hash);
  u->every_role = every;
  g_ptr_array_add (roles, NULL);
  u->roles = (GStrv) g_ptr_array_free (g_steal_pointer (&roles), FALSE);
  return u;
}

StgAuth *
stg_auth_new (GHashTable *users, gboolean read_requires_auth, gboolean tcp_trusted,
              GError **error)
{
  g_autoptr (StgAuth) auth = g_new0 (StgAuth, 1);
  GHashTableIter it;
  gpointer name, value;

  auth->users = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) user_free);
  auth->order = g_ptr_array_new ();
  auth->verified = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  auth->read_requires_auth = read_requires_auth;
  auth->tcp_trusted = tcp_trusted;
  for (guint i = 0; i < G_N_ELEMENTS (auth->cache_key); i += 4)
    {
      guint32 r = g_random_int ();
      memcpy (auth->cache_key + i, &r, 4);
    }
  if (users != NULL)
    {
      g_hash_table_iter_init (&it, users);
      while (g_hash_table_iter_next (&it, &name, &value))
        {
          User *u = parse_user (name, value, error);
          if (u == NULL)
            return NULL;
          g_hash_table_insert (auth->users, u->name, u);
          g_ptr_array_add (auth->order, u);
        }
    }
  g_ptr_array_sort (auth->order, compare_users);
  return g_steal_pointer (&auth);
}

void
stg_auth_free (StgAuth *auth)
{
  if (auth == NULL)
    return;
  g_clear_pointer (&auth->order, g_ptr_array_unref);
  g_clear_pointer (&auth->users, g_hash_table_unref);
  g_clear_pointer (&auth->verified, g_hash_table_unref);
  explicit_bzero (auth->cache_key, sizeof auth->cache_key);
  g_free (auth);
}

gboolean
stg_auth_enabled (StgAuth *auth)
{
  return auth != NULL && g_hash_table_size (auth->users) > 0;
}

gboolean
stg_auth_read_requires_auth (StgAuth *auth)
{
  return stg_auth_enabled (auth) && auth->read_requires_auth;
}

gboolean
stg_auth_tcp_trusted (StgAuth *auth)
{
  return !stg_auth_enabled (auth) || auth->tcp_trusted;
}

/* ---- verifying ----------------------------------------------------------- */

static gchar *
cache_key (StgAuth *auth, const gchar *user, const gchar *secret)
{
  g_autoptr (GHmac) hmac = g_hmac_new (G_CHECKSUM_SHA256, auth->cache_key, sizeof auth->cache_key);

  g_hmac_update (hmac, (const guchar *) user, (gssize) strlen (user) + 1);
  g_hmac_update (hmac, (const guchar *) secret, (gssize) strlen (secret));
  return g_strdup (g_hmac_get_string (hmac));
}

/* Constant-time comparison of two NUL-terminated strings. */
static gboolean
same_string (const gchar *a, const gchar *b)
{
  gsize la = strlen (a), lb = strlen (b);
  guint8 diff = la != lb;

  for (gsize i = 0; i < la; i++)
    diff |= (guint8) (a[i] ^ b[i % (lb ? lb : 1)]);
  return diff == 0;
}

static gboolean
verify (StgAuth *auth, User *u, const gchar *secret)
{
  g_autofree gchar *key = cache_key (auth, u->name, secret);
  const gchar *known = g_hash_table_lookup (auth->verified, key);

  if (known != NULL)
    return strcmp (known, u->name) == 0;

  struct crypt_data *data = g_new0 (struct crypt_data, 1);
  const gchar *got = crypt_rn (secret, u->hash, data, sizeof *data);
  gboolean ok = got != NULL && got[0] != '*' && same_string (got, u->hash);
  explicit_bzero (data, sizeof *data);
  g_free (data);
  if (ok)
    {
      if (g_hash_table_size (auth->verified) >= CACHE_MAX)
        g_hash_table_remove_all (auth->verified);
      g_hash_table_insert (auth->verified, g_steal_pointer (&key), g_strdup (u->name));
    }
  return ok;
}

static gboolean
denied (GError **error)
{
  g_set_error (error, STG_AUTH_ERROR, STG_AUTH_ERROR_DENIED,
               "authentication failed: unknown user or wrong password or token");
  return FALSE;
}

gchar *
stg_auth_check_header (StgAuth *auth, const gchar *header, GError **error)
{
  if (header == NULL || header[0] == '\0')
    {
      g_set_error (error, STG_AUTH_ERROR, STG_AUTH_ERROR_NO_CREDENTIALS,
                   "authentication required: send HTTP Basic credentials or a Bearer token");
      return NULL;
    }
  while (*header == ' ')
    header++;
  if (g_ascii_strncasecmp (header, "Basic ", 6) == 0)
    {
      gsize len = 0;
      g_autofree gchar *text = NULL;
      const gchar *b64 = header + 6;
      while (*b64 == ' ')
        b64++;
      if (strlen (b64) > SECRET_MAX * 2 ||
          b64[strspn (b64, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")] != '\0')
        return denied (error), NULL;
      text = (gchar *) g_base64_decode (b64, &len);
      if (text == NULL || memchr (text, '\0', len) != NULL)
        {
          if (text != NULL)
            explicit_bzero (text, len);
          return denied (error), NULL;
        }
      text = g_realloc (text, len + 1);
      text[len] = '\0';
      gchar *colon = strchr (text, ':');
      User *u = NULL;
      if (colon != NULL)
        {
          *colon = '\0';
          u = g_hash_table_lookup (auth->users, text);
        }
      gboolean ok = u != NULL && verify (auth, u, colon + 1);
      explicit_bzero (text, len);
      if (!ok)
        return denied (error), NULL;
      return g_strdup (u->name);
    }
  if (g_ascii_strncasecmp (header, "Bearer ", 7) == 0)
    {
      const gchar *token = header + 7;
      while (*token == ' ')
        token++;
      if (token[0] == '\0' || strlen (token) > SECRET_MAX)
        return denied (error), NULL;
      for (guint i = 0; i < auth->order->len; i++)
        {
          User *u = auth->order->pdata[i];
          if (verify (auth, u, token))
            return g_strdup (u->name);
        }
      return denied (error), NULL;
    }
  g_set_error (error, STG_AUTH_ERROR, STG_AUTH_ERROR_DENIED,
               "authentication failed: only Basic and Bearer credentials are understood");
  return NULL;
}

gboolean
stg_auth_user_may (StgAuth *auth, const gchar *user, const gchar *role)
{
  User *u;

  if (!stg_auth_enabled (auth))
    return TRUE;
  if (user == NULL || (u = g_hash_table_lookup (auth->users, user)) == NULL)
    return FALSE;
  if (u->every_role)
    return TRUE;
  return role != NULL && g_strv_contains ((const gchar *const *) u->roles, role);
}

gchar *
stg_auth_hash_password (const gchar *password, GError **error)
{
  g_autofree gchar *setting = crypt_gensalt_ra ("$y$", 0, NULL, 0);
  struct crypt_data *data;
  gchar *hash = NULL;

  if (password == NULL || password[0] == '\0')
    {
      g_set_error (error, STG_AUTH_ERROR, STG_AUTH_ERROR_FAILED, "the password is empty");
      return NULL;
    }
  if (setting == NULL)
    {
      g_set_error (error, STG_AUTH_ERROR, STG_AUTH_ERROR_FAILED,
                   "cannot make a salt (no random source?)");
      return NULL;
    }
  data = g_new0 (struct crypt_data, 1);
  const gchar *out = crypt_rn (password, setting, data, sizeof *data);
  if (out != NULL && out[0] != '*')
    hash = g_strdup (out);
  else
    g_set_error (error, STG_AUTH_ERROR, STG_AUTH_ERROR_FAILED, "crypt(3) failed");
  explicit_bzero (data, sizeof *data);
  g_free (data);
  return hash;
}
