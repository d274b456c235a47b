/* zk.h: ZooKeeper ServerSets, as Aurora's executor, scheduler and client
 * use them: a path whose children "member_NNNNNNNNNN" are ephemeral nodes,
 * one per live endpoint, each holding JSON
 *
 *   {"serviceEndpoint": {"host": H, "port": P},
 *    "additionalEndpoints": {NAME: {"host": H, "port": P}, ...},
 *    "status": "ALIVE", "shard": N}
 *
 * zk.c: the ensemble's settings, Aurora's ZooKeeper auth file, a member's
 * JSON and reading a ServerSet (blocking; for clients). serverset.c: one
 * member kept on a GLib main loop through lost connections, expired
 * sessions and deletions by others. ZooKeeper's C client runs two threads
 * of its own; everything here is handed to the caller's main context, so
 * callers stay on one thread. GLib, json-glib and libzookeeper_mt only.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define STG_ZK_ERROR (stg_zk_error_quark ())
GQuark stg_zk_error_quark (void);

typedef enum
{
  STG_ZK_ERROR_INVALID,     /* a setting, an auth file or a member's JSON is wrong */
  STG_ZK_ERROR_UNAVAILABLE, /* the ensemble could not be reached in time */
  STG_ZK_ERROR_FAILED,      /* ZooKeeper refused (auth, ACL, a missing node...) */
} StgZkError;

/* Aurora's session timeout for the executor's announcer (kazoo's). */
#define STG_ZK_SESSION_TIMEOUT_MS 10000

/* Aurora's ZooKeeper auth file (--announcer-zookeeper-auth-config):
 *   {"auth": [{"scheme": "digest", "credential": "user:password"}],
 *    "acl": [{"scheme": "digest", "credential": "user:password",
 *             "permissions": {"read": true, "write": true, "create": true,
 *                             "delete": true, "admin": true}}]}
 * Both lists may be empty or missing. */
typedef struct _StgZkAuth StgZkAuth;

StgZkAuth *stg_zk_auth_load (const gchar *path, GError **error);
StgZkAuth *stg_zk_auth_parse (const gchar *text, const gchar *where, GError **error);
void stg_zk_auth_free (StgZkAuth *auth);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgZkAuth, stg_zk_auth_free)

/* Checks @ensemble: "host:port" (port 1-65535) separated by commas,
 * with an optional "/chroot" at the end. */
gboolean stg_zk_ensemble_check (const gchar *ensemble, GError **error);

/* Checks @path: absolute, no empty, "." or ".." part, no trailing '/'. */
gboolean stg_zk_path_check (const gchar *path, GError **error);

/* A member's JSON: @host and @port the service endpoint, @additional
 * (nullable) name -> port (GINT_TO_POINTER) the additional endpoints on
 * @host, @shard the instance (-1: none, as the scheduler announces). */
gchar *stg_zk_member_json (const gchar *host, gint port, GHashTable *additional, gint shard);

typedef struct
{
  gchar *name; /* member_NNNNNNNNNN */
  gchar *data; /* its JSON */
} StgZkMember;

/* The members of the ServerSet at @path (sorted by name, oldest first), read
 * from @ensemble within @timeout_ms: a GPtrArray of StgZkMember. A path
 * that does not exist has none. */
GPtrArray *stg_zk_members_read (const gchar *ensemble, const StgZkAuth *auth, const gchar *path,
                                gint timeout_ms, GError **error);

/* @data's endpoint named @name ("http", "https"; NULL: the service
 * endpoint) as host and port; FALSE when it has none. */
gboolean stg_zk_member_endpoint (const gchar *data, const gchar *name, gchar **host, gint *port);

/* ---- serverset.c ---------------------------------------------------------------------- */

typedef struct _StgServerSet StgServerSet;

/* Called on the main context whenever the member's state changed. */
typedef void (*StgServerSetFunc) (StgServerSet *set, gpointer data);

typedef struct
{
  const gchar *ensemble;
  const StgZkAuth *auth; /* (nullable) copied */
  gint session_timeout_ms;
  const gchar *path;  /* the ServerSet */
  const gchar *data;  /* the member's JSON */
  gboolean exclusive; /* the only member: others are deleted once it joined */
} StgServerSetSpec;

/* A member-to-be of @spec->path, connected at once on the thread-default
 * main context; it joins only when asked. Fails only on a bad ensemble. */
StgServerSet *stg_serverset_new (const StgServerSetSpec *spec, StgServerSetFunc func, gpointer data,
                                 GError **error);

/* Be a member from now on: join whenever connected and not one. */
void stg_serverset_join (StgServerSet *set);

/* Be none from now on: the member node, if any, is deleted. */
void stg_serverset_leave (StgServerSet *set);

/* The ServerSet's path. */
const gchar *stg_serverset_path (StgServerSet *set);

/* The member's node (a path), or NULL while it is none. */
const gchar *stg_serverset_member (StgServerSet *set);

/* What the member holds (its JSON), while it is one or not. */
const gchar *stg_serverset_data (StgServerSet *set);

gboolean stg_serverset_connected (StgServerSet *set);
gboolean stg_serverset_wanted (StgServerSet *set);

/* What went wrong last (nullable): ZooKeeper unreachable, a session
 * expired, a refused create. Cleared when the member is in place. */
const gchar *stg_serverset_problem (StgServerSet *set);

/* Closes the session: ZooKeeper deletes the member at once. */
void stg_serverset_free (StgServerSet *set);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgServerSet, stg_serverset_free)

G_END_DECLS
