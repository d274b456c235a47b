/* identity.h: the user a role's processes run as.
 *
 * A staggerd that runs as root starts every process of a role (its
 * instances, their hooks and shell health checks, its shell gates) as the
 * user configured for the role, or a default user; StgIdentity holds what
 * a forked child needs to become that user, resolved before the fork (no
 * lookups after it). A staggerd that is not root runs them as itself.
 * Part of libstg_spawn. Main-loop thread, except stg_identity_apply(),
 * which spawn.c's child calls.
 */
#pragma once

#include <glib.h>
#include <sys/types.h>

G_BEGIN_DECLS

#define STG_IDENTITY_ERROR (stg_identity_error_quark ())
GQuark stg_identity_error_quark (void);
typedef enum
{
  STG_IDENTITY_ERROR_FAILED,
  STG_IDENTITY_ERROR_NOT_FOUND, /* no such user */
} StgIdentityError;

typedef struct
{
  gchar *name;
  uid_t uid;
  gid_t gid;
  gid_t *groups; /* supplementary groups, from the group database */
  gint n_groups;
} StgIdentity;

/* Looks @user (a name or a number) up; NULL with @error
 * (STG_IDENTITY_ERROR_NOT_FOUND) when there is no such user. */
StgIdentity *stg_identity_lookup (const gchar *user, GError **error);
StgIdentity *stg_identity_copy (const StgIdentity *id);
void stg_identity_free (StgIdentity *id);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgIdentity, stg_identity_free)

/* In a forked child: drops to @id (groups, then gid, then uid) and makes
 * sure it cannot come back. Async-signal-safe; returns 0 or an errno. */
int stg_identity_apply (const StgIdentity *id);

/* Who runs the processes of @role: its entry in @role_users (role ->
 * StgIdentity*; nullable), else @fallback (nullable: staggerd's own
 * user). */
const StgIdentity *stg_identity_for_role (GHashTable *role_users, const StgIdentity *fallback,
                                          const gchar *role);

G_END_DECLS
