/* auth_secret.c: the secrets of [users]: Bearer token digests (made for
 * the config file, parsed, and matched in constant time) and password
 * hashes (made with crypt(3)); the auth error domain. Calls only GLib and
 * libcrypt. Any thread (pure functions).
 */
#include "config.h"

#include <crypt.h>
#include <string.h>

#include "api/auth_private.h"

G_DEFINE_QUARK (stg-auth-error-quark, stg_auth_error)

void
stg_auth_token_free (StgAuthToken *token)
{
  g_free (token->salt);
  g_free (token);
}

StgAuthToken *
stg_auth_token_parse (const gchar *word)
{
  g_auto (GStrv) parts = g_strsplit (word, ":", -1);

  if (g_strv_length (parts) != 3 || !g_str_equal (parts[0], "token") || strlen (parts[1]) != 32 ||
      strlen (parts[2]) != 64 || parts[1][strspn (parts[1], "0123456789abcdef")] != '\0' ||
      parts[2][strspn (parts[2], "0123456789abcdef")] != '\0')
    return NULL;
  StgAuthToken *t = g_new0 (StgAuthToken, 1);
  t->salt = g_strdup (parts[1]);
  for (guint i = 0; i < 32; i++)
    t->digest[i] = (guint8) (g_ascii_xdigit_value (parts[2][2 * i]) * 16 +
                             g_ascii_xdigit_value (parts[2][2 * i + 1]));
  return t;
}

static void
token_digest (const gchar *salt, const gchar *secret, guint8 out[32])
{
  g_autoptr (GHmac) hmac = g_hmac_new (G_CHECKSUM_SHA256, (const guchar *) salt, strlen (salt));
  gsize len = 32;

  g_hmac_update (hmac, (const guchar *) secret, (gssize) strlen (secret));
  g_hmac_get_digest (hmac, out, &len);
}

gboolean
stg_auth_token_matches (const StgAuthToken *token, const gchar *secret)
{
  guint8 got[32], diff = 0;

  token_digest (token->salt, secret, got);
  for (guint i = 0; i < 32; i++)
    diff |= (guint8) (got[i] ^ token->digest[i]);
  return diff == 0;
}

gchar *
stg_auth_hash_token (const gchar *token, GError **error)
{
  guint8 digest[32];
  GString *out = g_string_new (STG_AUTH_TOKEN_PREFIX);

  if (token == NULL || strlen (token) < 16)
    {
      g_string_free (out, TRUE);
      g_set_error (error, STG_AUTH_ERROR, STG_AUTH_ERROR_FAILED,
                   "a token needs at least 16 characters (e.g. openssl rand -hex 32)");
      return NULL;
    }
  for (guint i = 0; i < 4; i++)
    g_string_append_printf (out, "%08x", g_random_int ());
  token_digest (out->str + strlen (STG_AUTH_TOKEN_PREFIX), token, digest);
  g_string_append_c (out, ':');
  for (guint i = 0; i < 32; i++)
    g_string_append_printf (out, "%02x", digest[i]);
  return g_string_free (out, FALSE);
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
