/* instance_users.c: which user runs each role's instances of the local
 * runtime, from [roles], instance_user and allow_root_instances.
 *
 * staggerd as root: a role's instances (and every other process of the
 * role: hooks, shell health checks, shell gates) run as its [roles] user,
 * others as instance_user (default nobody, or root when
 * allow_root_instances is set); none runs as root unless
 * allow_root_instances says so. staggerd as another user: instances run as
 * that user, and naming anyone else is an error at start. Every name is
 * looked up at start, so a typo stops staggerd rather than an instance.
 * Main thread, at start-up.
 */
#include "config.h"

#include <unistd.h>

#include "daemon/instance_users.h"

#define DEFAULT_INSTANCE_USER "nobody"

/* The identity for @user (from @what, for messages), checked against the
 * rules; NULL with @error. */
static StgIdentity *
resolve (const StgDaemonSettings *s, const gchar *what, const gchar *user, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autoptr (StgIdentity) id = stg_identity_lookup (user, &local);

  if (id == NULL)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s: %s", what, local->message);
      return NULL;
    }
  if (geteuid () != 0 && id->uid != geteuid ())
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "%s: instances cannot run as %s: staggerd is not root (it runs as uid %u)", what,
                   id->name, (guint) geteuid ());
      return NULL;
    }
  if (geteuid () == 0 && id->uid == 0 && !s->allow_root_instances)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "%s: refusing to run instances as root; set allow_root_instances = true "
                   "(or --allow-root-instances) to allow it",
                   what);
      return NULL;
    }
  return g_steal_pointer (&id);
}

gboolean
stg_daemon_instance_users (const StgDaemonSettings *s, StgLocalOptions *options, GError **error)
{
  gboolean root = geteuid () == 0;

  if (s->role_users != NULL)
    {
      GHashTableIter it;
      gpointer role, user;
      g_hash_table_iter_init (&it, s->role_users);
      while (g_hash_table_iter_next (&it, &role, &user))
        {
          g_autofree gchar *what = g_strdup_printf ("[roles] %s", (const gchar *) role);
          StgIdentity *id = resolve (s, what, user, error);
          if (id == NULL)
            return FALSE;
          if (!root)
            {
              stg_identity_free (id); /* itself: nothing to switch */
              continue;
            }
          if (options->role_users == NULL)
            options->role_users = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                         (GDestroyNotify) stg_identity_free);
          g_hash_table_insert (options->role_users, g_strdup (role), id);
        }
    }
  /* As root, every process of a role takes a user's identity, root's
   * included when allowed, so none keeps the groups staggerd happened to
   * start with. */
  const gchar *fallback = s->instance_user;
  if (fallback == NULL && root)
    fallback = s->allow_root_instances ? "0" : DEFAULT_INSTANCE_USER;
  if (fallback == NULL)
    return TRUE;
  StgIdentity *id = resolve (s, "instance_user", fallback, error);
  if (id == NULL)
    return FALSE;
  if (root)
    options->default_user = id;
  else
    stg_identity_free (id);
  return TRUE;
}

gboolean
stg_daemon_load_roles (GKeyFile *kf, StgDaemonSettings *settings, GError **error)
{
  g_auto (GStrv) roles = g_key_file_get_keys (kf, "roles", NULL, NULL);

  if (roles == NULL)
    return TRUE;
  g_clear_pointer (&settings->role_users, g_hash_table_unref);
  settings->role_users = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  for (guint i = 0; roles[i] != NULL; i++)
    {
      g_autofree gchar *user = g_key_file_get_string (kf, "roles", roles[i], NULL);
      if (user == NULL || *g_strstrip (user) == '\0')
        {
          g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                       "[roles] %s: give the user its instances run as (e.g. %s = www-data)",
                       roles[i], roles[i]);
          return FALSE;
        }
      g_hash_table_insert (settings->role_users, g_strdup (roles[i]), g_steal_pointer (&user));
    }
  return TRUE;
}
