/* instance_users.h: the users that run the local runtime's instances (see
 * instance_users.c). Main thread, at start-up. */
#pragma once

#include "daemon/settings.h"
#include "runtime/local/local.h"

G_BEGIN_DECLS

/* Reads the [roles] group (role = user) of @kf into @settings. */
gboolean stg_daemon_load_roles (GKeyFile *kf, StgDaemonSettings *settings, GError **error);

/* Looks up every user @settings names and fills @options' role_users and
 * default_user; FALSE with @error when a user does not exist, is someone
 * else than staggerd's own user while staggerd is not root, or is root
 * without allow_root_instances. */
gboolean stg_daemon_instance_users (const StgDaemonSettings *settings, StgLocalOptions *options,
                                    GError **error);

G_END_DECLS
