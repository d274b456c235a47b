/* identity.c: looking users up before a fork, and becoming one after it.
 * See identity.h. */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include "spawn/identity.h"

G_DEFINE_QUARK (stg-identity-error-quark, stg_identity_error)

#define MAX_GROUPS 256

StgIdentity *
stg_identity_lookup (const gchar *user, GError **error)
{
  struct passwd pw, *found = NULL;
  gchar buf[4096];
  guint64 number = 0;

  int rc = getpwnam_r (user, &pw, buf, sizeof buf, &found);
  if (found == NULL && g_ascii_string_to_unsigned (user, 10, 0, G_MAXUINT32 - 1, &number, NULL))
    rc = getpwuid_r ((uid_t) number, &pw, buf, sizeof buf, &found);
  if (found == NULL)
    {
      g_set_error (error, STG_IDENTITY_ERROR, STG_IDENTITY_ERROR_NOT_FOUND,
                   "no user '%s' on this host%s%s", user, rc != 0 ? ": " : "",
                   rc != 0 ? g_strerror (rc) : "");
      return NULL;
    }
  StgIdentity *id = g_new0 (StgIdentity, 1);
  id->name = g_strdup (pw.pw_name);
  id->uid = pw.pw_uid;
  id->gid = pw.pw_gid;
  gint n = MAX_GROUPS;
  id->groups = g_new0 (gid_t, MAX_GROUPS);
  if (getgrouplist (pw.pw_name, pw.pw_gid, id->groups, &n) < 0)
    n = MAX_GROUPS; /* more than that: the first MAX_GROUPS */
  id->n_groups = n;
  return id;
}

StgIdentity *
stg_identity_copy (const StgIdentity *id)
{
  StgIdentity *copy = g_new0 (StgIdentity, 1);

  *copy = *id;
  copy->name = g_strdup (id->name);
  copy->groups = g_memdup2 (id->groups, sizeof (gid_t) * (gsize) MAX (id->n_groups, 1));
  return copy;
}

void
stg_identity_free (StgIdentity *id)
{
  if (id == NULL)
    return;
  g_free (id->name);
  g_free (id->groups);
  g_free (id);
}

int
stg_identity_apply (const StgIdentity *id)
{
  if (setgroups ((size_t) id->n_groups, id->groups) != 0 || setgid (id->gid) != 0 ||
      setuid (id->uid) != 0)
    return errno;
  /* No way back to root (setuid from a non-root uid must fail). */
  if (id->uid != 0 && setuid (0) == 0)
    return EPERM;
  return 0;
}

const StgIdentity *
stg_identity_for_role (GHashTable *role_users, const StgIdentity *fallback, const gchar *role)
{
  const StgIdentity *id = role_users != NULL && role != NULL
                              ? g_hash_table_lookup (role_users, role)
                              : NULL;

  return id != NULL ? id : fallback;
}
