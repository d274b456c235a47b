/* handler_admin.c: StgHandler's quota calls, getQuota (a read: the role's
 * quota and consumption by pool, through the engine) and AuroraAdmin's
 * setQuota, and AuroraAdmin's snapshot (the store made durable now). The
 * admin calls need a user of every role (roles = *). Main-loop thread only.
 */
#include "config.h"

#include <math.h>

#include "api/handler_private.h"

/* Aurora's ResourceAggregate of @bag: one numCpus, ramMb and diskMb. */
static ApiResourceAggregate *
aggregate_of (const StgResourceBag *bag)
{
  ApiResourceAggregate *a = g_object_new (API_TYPE_RESOURCE_AGGREGATE, NULL);

  g_hash_table_add (a->resources, g_object_new (API_TYPE_RESOURCE, "numCpus", bag->cpus, NULL));
  g_hash_table_add (a->resources, g_object_new (API_TYPE_RESOURCE, "ramMb",
                                                (gint64) llround (bag->ram_mb), NULL));
  g_hash_table_add (a->resources, g_object_new (API_TYPE_RESOURCE, "diskMb",
                                                (gint64) llround (bag->disk_mb), NULL));
  a->__isset_resources = TRUE;
  return a;
}

static gboolean
handler_get_quota (ApiReadOnlySchedulerIf *iface, ApiResponse **_return, const gchar *role,
                   GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  StgQuotaInfo info;
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "getQuota", NULL, FALSE))
    return TRUE;
  if (!stg_engine_get_quota (self->ctx.engine, role, &info, &error))
    return stg_handler_answer_error (self, *_return, "getQuota", error);
  static const struct
  {
    StgQuotaPool pool;
    const gchar *field;
  } fields[] = {
    { STG_QUOTA_PROD_SHARED, "prodSharedConsumption" },
    { STG_QUOTA_NONPROD_SHARED, "nonProdSharedConsumption" },
    { STG_QUOTA_PROD_DEDICATED, "prodDedicatedConsumption" },
    { STG_QUOTA_NONPROD_DEDICATED, "nonProdDedicatedConsumption" },
  };
  g_autoptr (ApiResourceAggregate) quota = aggregate_of (&info.quota);
  g_autoptr (ApiGetQuotaResult) qr = g_object_new (API_TYPE_GET_QUOTA_RESULT, "quota", quota, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (fields); i++)
    {
      g_autoptr (ApiResourceAggregate) used = aggregate_of (&info.consumption[fields[i].pool]);
      g_object_set (qr, fields[i].field, used, NULL);
    }
  ApiResult *result = stg_result_of (*_return);
  g_object_set (result, "getQuotaResult", qr, NULL);
  stg_response_ok (*_return, self->ctx.cluster, result);
  return TRUE;
}

static gboolean
handler_set_quota (ApiAuroraAdminIf *iface, ApiResponse **_return, const gchar *role,
                   const ApiResourceAggregate *quota, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  (void) unused;

  /* Quotas are the operators' (every role's user). */
  if (!stg_handler_allowed (self, *_return, "setQuota", NULL, TRUE))
    return TRUE;
  if (!stg_engine_set_quota (self->ctx.engine, role, quota, self->user, &error))
    return stg_handler_answer_error (self, *_return, "setQuota", error);
  stg_response_ok (*_return, self->ctx.cluster, NULL);
  return TRUE;
}

static gboolean
handler_snapshot (ApiAuroraAdminIf *iface, ApiResponse **_return, GError **unused)
{
  StgHandler *self = HANDLER (iface);
  g_autoptr (GError) error = NULL;
  (void) unused;

  if (!stg_handler_allowed (self, *_return, "snapshot", NULL, TRUE))
    return TRUE;
  g_autofree gchar *what = stg_store_snapshot (self->ctx.store, &error);
  if (what == NULL)
    return stg_handler_answer_error (self, *_return, "snapshot", error);
  g_message ("api: snapshot by %s: %s", self->user ? self->user : "(anonymous)", what);
  stg_response_ok (*_return, self->ctx.cluster, NULL);
  stg_response_add_detail (*_return, "%s", what);
  return TRUE;
}

const StgHandlerMethod stg_handler_admin_methods[] = {
  STG_READ_METHOD (get_quota, handler_get_quota),
  STG_ADMIN_METHOD (set_quota, handler_set_quota),
  STG_ADMIN_METHOD (snapshot, handler_snapshot),
  { 0, NULL },
};
