/* auth.c: StgAuth: users, their roles, password hashes and token digests
 * from [users]. Secrets (digests, hashes) are auth_secret.c's; checking
 * credentials is auth_check.c's (whose state it sets up and tears down).
 * Calls GLib, libcrypt (hash strength), common's job key checks (role
 * names) and those two files. Main-loop thread only.
 */
#include "config.h"

#include <crypt.h>
#include <string.h>

#include "api/auth_private.h"
#include "common/jobkey.h"

typedef StgAuthUser User;

static void
user_free (User *u)
{
  g_free (u->name);
  if (u->hash != NULL)
    explicit_bzero (u->hash, strlen (u->hash));
  g_free (u->hash);
  g_ptr_array_unref (u->tokens);
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

/* ---- users ---------------------------------------------------------------- */

static gboolean
bad_user (GError **error, const gchar *name, const gchar *why)
{
  g_set_error (error, STG_AUTH_ERROR, STG_AUTH_ERROR_CONFIG, "[users] %s: %s", name, why);
  return FALSE;
}

/* Whether @hash uses less work than crypt(3)'s defaults: SHA-512 with
 * fewer than 5000 rounds, or yescrypt with a smaller N or r than
 * crypt_gensalt() picks today ("$y$" FLAGS N r ...: one itoa64 digit
 * each for the first two parameters). */
static gboolean
too_cheap (const gchar *hash)
{
  static const gchar itoa64[] = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

  if (g_str_has_prefix (hash, "$6$rounds="))
    return g_ascii_strtoull (hash + strlen ("$6$rounds="), NULL, 10) < 5000;
  if (!g_str_has_prefix (hash, "$y$"))
    return FALSE;
  g_autofree gchar *want = crypt_gensalt_ra ("$y$", 0, NULL, 0);
  if (want == NULL || strlen (want) < 6 || strlen (hash) < 6)
    return TRUE;
  /* Flags, then N's exponent, then r: each must be the default's or more. */
  for (guint i = 4; i < 6; i++)
    {
      const gchar *got = strchr (itoa64, hash[i]), *need = strchr (itoa64, want[i]);
      if (got == NULL || need == NULL || got < need)
        return TRUE;
    }
  return FALSE;
}

/* One word of a user's entry: a password hash, a token digest, a role or *. */
static gboolean
parse_word (User *u, GPtrArray *roles, const gchar *word, GError **error)
{
  if (word[0] == '$')
    {
      if (u->hash != NULL)
        return bad_user (error, u->name, "more than one password hash");
      if (!(g_str_has_prefix (word, "$y$") || g_str_has_prefix (word, "$6$")) ||
          crypt_checksalt (word) != CRYPT_SALT_OK)
        return bad_user (error, u->name, "expected a yescrypt ($y$) or SHA-512 ($6$) password hash "
                                         "(make one with staggerd --hash-password)");
      if (too_cheap (word))
        return bad_user (error, u->name, "the password hash is cheaper to guess than the defaults "
                                         "allow ($6$ needs rounds of at least 5000, $y$ the default "
                                         "cost); make a new one with staggerd --hash-password");
      u->hash = g_strdup (word);
    }
  else if (g_str_has_prefix (word, STG_AUTH_TOKEN_PREFIX))
    {
      StgAuthToken *t = stg_auth_token_parse (word);
      if (t == NULL)
        return bad_user (error, u->name, "a token digest is token:SALT:DIGEST in hex "
                                         "(make one with staggerd --hash-token)");
      g_ptr_array_add (u->tokens, t);
    }
  else if (strcmp (word, "*") == 0)
    u->every_role = TRUE;
  else if (stg_job_key_part_valid (word))
    g_ptr_array_add (roles, g_strdup (word));
  else
    {
      g_autofree gchar *why = g_strdup_printf ("'%s' is not a role (letters, digits, . _ -) or *", word);
      return bad_user (error, u->name, why);
    }
  return TRUE;
}

static User *
parse_user (const gchar *name, const gchar *value, GError **error)
{
  g_auto (GStrv) words = g_strsplit_set (value ? value : "", " \t,", -1);
  g_autoptr (GPtrArray) roles = g_ptr_array_new_with_free_func (g_free);

  if (!name_valid (name))
    {
      g_set_error (error, STG_AUTH_ERROR, STG_AUTH_ERROR_CONFIG,
                   "[users] '%s': a user name is letters, digits and . _ - @", name);
      return NULL;
    }
  User *u = g_new0 (User, 1);
  u->name = g_strdup (name);
  u->tokens = g_ptr_array_new_with_free_func ((GDestroyNotify) stg_auth_token_free);
  gboolean ok = TRUE;
  for (guint i = 0; ok && words[i] != NULL; i++)
    if (words[i][0] != '\0')
      ok = parse_word (u, roles, words[i], error);
  g_ptr_array_add (roles, NULL);
  u->roles = (GStrv) g_ptr_array_free (g_steal_pointer (&roles), FALSE);
  if (ok && u->hash == NULL && u->tokens->len == 0)
    ok = bad_user (error, name, "no password hash (staggerd --hash-password) or token digest "
                                "(staggerd --hash-token)");
  else if (ok && !u->every_role && u->roles[0] == NULL)
    ok = bad_user (error, name, "no roles after the hash (name roles, or * for all)");
  if (!ok)
    {
      user_free (u);
      return NULL;
    }
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
  auth->read_requires_auth = read_requires_auth;
  auth->tcp_trusted = tcp_trusted;
  for (guint i = 0; i < G_N_ELEMENTS (auth->cache_key); i += 4)
    {
      guint32 r = g_random_int ();
      memcpy (auth->cache_key + i, &r, 4);
    }
  stg_auth_checks_init (auth);
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
  stg_auth_checks_clear (auth);
  g_clear_pointer (&auth->order, g_ptr_array_unref);
  g_clear_pointer (&auth->users, g_hash_table_unref);
  explicit_bzero (auth->cache_key, sizeof auth->cache_key);
  g_free (auth);
}

gboolean
stg_auth_enabled (StgAuth *auth)
{
  return stg_auth_has_users (auth);
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
