/* handler_maintenance.c: AuroraAdmin's host maintenance calls, each made
 * by the engine (engine/maintenance.c): startMaintenance, drainHosts,
 * slaDrainHosts, maintenanceStatus and endMaintenance, answered with the
 * hosts Stagger knows and their modes. Each needs a user of every role
 * (roles = *). Main-loop thread only.
 */
#include "config.h"

#include "api/handler_private.h"

/* The hosts of a call: @hosts' names (an empty set when none). */
static GHashTable *
names_of (const ApiHosts *hosts)
{
  return hosts != NULL && hosts->hostNames != NULL ? g_hash_table_ref (hosts->hostNames)
                                                   : g_hash_table_new (g_str_hash, g_str_equal);
}

/* Answers @statuses (ApiHostStatus*, or NULL with @error) as the Result
 * member @member, a struct of @type holding them in "statuses". */
static gboolean
answer (StgHandler *self, ApiResponse *response, const gchar *method, GType type,
        const gchar *member, GPtrArray *statuses, GError *error)
{
  if (statuses == NULL)
    return stg_handler_answer_error (self, response, method, error);
  g_autoptr (GObject) result = g_object_new (type, NULL);
  GHashTable *set = NULL;
  g_object_get (result, "statuses", &set, NULL);
  for (guint i = 0; i < statuses->len; i++)
    g_hash_table_add (set, g_object_ref (statuses->pdata[i]));
  g_hash_table_unref (set);
  return stg_handler_answer_ok (self, response, member, result);
}

static gboolean
handler_start_maintenance (ApiAuroraAdminIf *iface, ApiResponse **_return, const ApiHosts *hosts,
                           GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  g_autoptr (GHashTable) names = names_of (hosts);
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "startMaintenance", NULL, TRUE))
    return TRUE;
  g_autoptr (GPtrArray) statuses = stg_engine_start_maintenance (self->ctx.engine, names,
                                                                 self->user, &error);
  return answer (self, *_return, "startMaintenance", API_TYPE_START_MAINTENANCE_RESULT,
                 "startMaintenanceResult", statuses, error);
}

static gboolean
drain (StgHandler *self, ApiResponse *response, const gchar *method, const ApiHosts *hosts,
       const ApiSlaPolicy *policy, gint64 timeout_secs)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GHashTable) names = names_of (hosts);

  if (!stg_handler_allowed (self, response, method, NULL, TRUE))
    return TRUE;
  g_autoptr (GPtrArray) statuses = stg_engine_drain_hosts (self->ctx.engine, names, policy,
                                                           timeout_secs, self->user, &error);
  return answer (self, response, method, API_TYPE_DRAIN_HOSTS_RESULT, "drainHostsResult", statuses,
                 error);
}

static gboolean
handler_drain_hosts (ApiAuroraAdminIf *iface, ApiResponse **_return, const ApiHosts *hosts,
                     GError **unused)
{
  (void) unused;
  return drain (HANDLER (iface), *_return, "drainHosts", hosts, NULL, 0);
}

static gboolean
handler_sla_drain_hosts (ApiAuroraAdminIf *iface, ApiResponse **_return, const ApiHosts *hosts,
                         const ApiSlaPolicy *policy, const gint64 timeout_secs, GError **unused)
{
  g_autoptr (ApiSlaPolicy) none = g_object_new (API_TYPE_SLA_POLICY, NULL);
  (void) unused;

  return drain (HANDLER (iface), *_return, "slaDrainHosts", hosts, policy ? policy : none,
                timeout_secs);
}

static gboolean
handler_maintenance_status (ApiAuroraAdminIf *iface, ApiResponse **_return, const ApiHosts *hosts,
                            GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  g_autoptr (GHashTable) names = names_of (hosts);
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "maintenanceStatus", NULL, TRUE))
    return TRUE;
  g_autoptr (GPtrArray) statuses = stg_engine_maintenance_status (self->ctx.engine, names, &error);
  return answer (self, *_return, "maintenanceStatus", API_TYPE_MAINTENANCE_STATUS_RESULT,
                 "maintenanceStatusResult", statuses, error);
}

static gboolean
handler_end_maintenance (ApiAuroraAdminIf *iface, ApiResponse **_return, const ApiHosts *hosts,
                         GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  g_autoptr (GHashTable) names = names_of (hosts);
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "endMaintenance", NULL, TRUE))
    return TRUE;
  g_autoptr (GPtrArray) statuses = stg_engine_end_maintenance (self->ctx.engine, names, self->user,
                                                               &error);
  return answer (self, *_return, "endMaintenance", API_TYPE_END_MAINTENANCE_RESULT,
                 "endMaintenanceResult", statuses, error);
}

const StgHandlerMethod stg_handler_maintenance_methods[] = {
  STG_ADMIN_METHOD (start_maintenance, handler_start_maintenance),
  STG_ADMIN_METHOD (drain_hosts, handler_drain_hosts),
  STG_ADMIN_METHOD (sla_drain_hosts, handler_sla_drain_hosts),
  STG_ADMIN_METHOD (maintenance_status, handler_maintenance_status),
  STG_ADMIN_METHOD (end_maintenance, handler_end_maintenance),
  { 0, NULL },
};
