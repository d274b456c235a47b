/* runner_announce.c: an announced instance's ServerSet member, as Aurora's
 * executor makes it: the path ROOT/ROLE/ENVIRONMENT/JOB (or the task's
 * announce.zk_path when custom paths are allowed), the service endpoint
 * announce.primary_port, every named port and alias an additional endpoint,
 * the shard the instance. The runner holds the session, so a member
 * outlives a staggerd that stops or restarts, and goes with the instance.
 * Main-loop thread only.
 */
#include "config.h"

#include "common/error.h"
#include "thermos/runner.h"

StgServerSet *
stg_runner_announcer (const StgRunnerAnnounce *o, const StgThermosJob *job, GHashTable *ports,
                      const gchar *hostname, gint instance, StgServerSetFunc changed, gpointer data,
                      GError **error)
{
  g_autoptr (StgZkAuth) auth = NULL;
  g_autofree gchar *path = NULL;

  if (o->ensemble == NULL || !job->announce)
    return NULL;
  if (job->zk_path != NULL && !o->allow_custom)
    {
      stg_fail (error, STG_ZK_ERROR, STG_ZK_ERROR_INVALID,
                "announce.zk_path is set, but custom ServerSet paths are not allowed "
                "(--announcer-allow-custom-serverset-path; staggerd's [zookeeper] "
                "allow_custom_serverset_path)");
      return NULL;
    }
  if (job->zk_path != NULL)
    path = g_strdup (job->zk_path);
  else
    path = g_strdup_printf ("%s/%s/%s/%s", g_str_equal (o->root, "/") ? "" : o->root, job->role,
                            job->environment, job->name);
  if (o->auth_config != NULL && (auth = stg_zk_auth_load (o->auth_config, error)) == NULL)
    return NULL;
  const gchar *host = o->hostname != NULL ? o->hostname : hostname;
  /* Aurora announces port 0 when the primary port is not a port of the
   * task (an aliased announcer with auto-registration). */
  gint primary = GPOINTER_TO_INT (g_hash_table_lookup (ports, job->primary_port));
  g_autofree gchar *json = stg_zk_member_json (host, primary, ports, instance);
  StgServerSetSpec spec = { .ensemble = o->ensemble, .auth = auth, .path = path, .data = json };
  return stg_serverset_new (&spec, changed, data, error);
}
