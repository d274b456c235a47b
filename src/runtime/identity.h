/* identity.h: the user an instance runs as.
 *
 * A staggerd that runs as root starts each role's instances (their
 * process, hooks and shell health checks) as the user configured for the
 * role, or a default user; StgIdentity holds what a forked child needs to
 * become that user, resolved before the fork (no lookups after it). A
 * staggerd that is not root runs instances as itself. Main-loop thread,
 * except stg_identity_apply(), which a forked child calls.
 */
#pragma once

#include <glib.h>
#include <sys/types.h>

G_BEGIN_DECLS

typedef struct
{
  gchar *name;
  uid_t uid;
  gid_t gid;
  gid_t *groups; /* supplementary groups, from the group database */
  gint n_groups;
} StgIdentity;

/* Looks @user (a name or a number) up; NULL with @error when there is no
 * such user. */
StgIdentity *stg_identity_lookup (const gchar *user, GError **error);
StgIdentity *stg_identity_copy (const StgIdentity *id);
void stg_identity_free (StgIdentity *id);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgIdentity, stg_identity_free)

/* In a forked child: drops to @id (groups, then gid, then uid) and makes
 * sure it cannot come back. Async-signal-safe; returns 0 or an errno. */
int stg_identity_apply (const StgIdentity *id);

/* A GSpawnChildSetupFunc for GSubprocessLauncher: stg_identity_apply(),
 * exiting with status 126 when it fails. */
void stg_identity_child_setup (gpointer id);

G_END_DECLS
