/* quota.c: quotas and their consumption, computed as Aurora's QuotaManager
 * does, and enforced where Aurora enforces them (createJob, addInstances,
 * startJobUpdate).
 *
 * A task's resources (numCpus, ramMb, diskMb) count in one of four pools:
 * production or not (the tier's, stg_task_is_production) times shared or
 * dedicated (a "dedicated" constraint). Only production tasks of the shared
 * pool need quota; the others never wait for it. A role consumes what its
 * active instances (any status but FINISHED, FAILED, KILLED, LOST) run,
 * except the instances an active update changes: those count as the
 * larger, resource by resource, of what the update takes away and what it
 * brings (so an update never needs quota for both versions of an
 * instance at once). Calls the store, update.c (the active updates) and
 * task_fields.c. Main-loop thread only.
 */
#include "config.h"

#include <string.h>

#include "common/enums.h"
#include "common/error.h"
#include "common/jobkey.h"
#include "engine/engine_private.h"
#include "engine/settings_private.h"
#include "engine/task_private.h"
#include "engine/update_private.h"
#include "engine/work_state.h"

/* An update being checked, not yet active: its job and its changes. */
typedef struct
{
  gint64 job_id;
  GArray *changes; /* StgChange */
} StgQuotaPending;

#define bad(error, ...) stg_fail (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID, __VA_ARGS__)

/* ---- bags of resources ------------------------------------------------------- */

static void
bag_add (StgResourceBag *a, const StgResourceBag *b, gdouble times)
{
  a->cpus += b->cpus * times;
  a->ram_mb += b->ram_mb * times;
  a->disk_mb += b->disk_mb * times;
}

static void
bag_max (StgResourceBag *a, const StgResourceBag *b)
{
  a->cpus = MAX (a->cpus, b->cpus);
  a->ram_mb = MAX (a->ram_mb, b->ram_mb);
  a->disk_mb = MAX (a->disk_mb, b->disk_mb);
}

/* Adds up a set of ApiResource: numCpus, ramMb, diskMb. */
static void
bag_from_set (GHashTable *resources, StgResourceBag *out)
{
  GHashTableIter it;
  gpointer key;

  memset (out, 0, sizeof *out);
  if (resources == NULL)
    return;
  g_hash_table_iter_init (&it, resources);
  while (g_hash_table_iter_next (&it, &key, NULL))
    {
      const ApiResource *r = key;
      out->cpus += r->__isset_numCpus ? r->numCpus : 0;
      out->ram_mb += r->__isset_ramMb ? (gdouble) r->ramMb : 0;
      out->disk_mb += r->__isset_diskMb ? (gdouble) r->diskMb : 0;
    }
}

/* "CPU quota exceeded by 1.00 core(s); RAM ...": what @need has beyond
 * @have, in Aurora's words; NULL when nothing. */
static gchar *
shortfall (const StgResourceBag *have, const StgResourceBag *need)
{
  g_autoptr (GString) s = g_string_new (NULL);
  const struct
  {
    const gchar *name, *unit;
    gdouble over;
  } rows[] = {
    { "CPU", "core(s)", need->cpus - have->cpus },
    { "RAM", "MB", need->ram_mb - have->ram_mb },
    { "disk", "MB", need->disk_mb - have->disk_mb },
  };

  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    if (rows[i].over > 1e-9)
      g_string_append_printf (s, "%s%s quota exceeded by %.2f %s", s->len ? "; " : "", rows[i].name,
                              rows[i].over, rows[i].unit);
  return s->len > 0 ? g_strdup (s->str) : NULL;
}

/* ---- consumption ------------------------------------------------------------- */

/* What is known of each config seen: its pool and resources. */
typedef struct
{
  StgQuotaPool pool;
  StgResourceBag bag;
} ConfigUse;

typedef struct
{
  StgEngine *e;
  GHashTable *configs; /* config id (gint64*) -> ConfigUse* */
  StgQuotaInfo *info;
} Tally;

static StgQuotaPool
pool_of (StgEngine *e, const ApiTaskConfig *task)
{
  gboolean prod = stg_task_is_production (e, task), dedicated = stg_task_is_dedicated (task);

  return prod ? (dedicated ? STG_QUOTA_PROD_DEDICATED : STG_QUOTA_PROD_SHARED)
              : (dedicated ? STG_QUOTA_NONPROD_DEDICATED : STG_QUOTA_NONPROD_SHARED);
}

static const ConfigUse *
config_use (Tally *t, gint64 config_id, GError **error)
{
  ConfigUse *use = g_hash_table_lookup (t->configs, &config_id);

  if (use != NULL)
    return use;
  g_autoptr (ApiTaskConfig) task = stg_store_get_config (t->e->store, config_id, error);
  if (task == NULL)
    return NULL;
  use = g_new0 (ConfigUse, 1);
  use->pool = pool_of (t->e, task);
  bag_from_set (task->resources, &use->bag);
  g_hash_table_insert (t->configs, g_memdup2 (&config_id, sizeof config_id), use);
  return use;
}

/* An update's share: per pool, the larger of what @changes take away and
 * what they bring. */
static gboolean
tally_changes (Tally *t, const StgChange *changes, guint n, GError **error)
{
  StgResourceBag from[STG_QUOTA_POOLS] = { 0 }, to[STG_QUOTA_POOLS] = { 0 };

  for (guint i = 0; i < n; i++)
    {
      const ConfigUse *a = changes[i].from_config ? config_use (t, changes[i].from_config, error)
                                                  : NULL;
      const ConfigUse *b = changes[i].to_config ? config_use (t, changes[i].to_config, error)
                                                : NULL;
      if ((changes[i].from_config && a == NULL) || (changes[i].to_config && b == NULL))
        return FALSE;
      if (a != NULL)
        bag_add (&from[a->pool], &a->bag, 1);
      if (b != NULL)
        bag_add (&to[b->pool], &b->bag, 1);
    }
  for (guint p = 0; p < STG_QUOTA_POOLS; p++)
    {
      bag_max (&from[p], &to[p]);
      bag_add (&t->info->consumption[p], &from[p], 1);
    }
  return TRUE;
}

/* The changes of job @job_id's active update (@pending when it is the
 * job being checked), as an array of StgChange; NULL when none. */
static GArray *
update_changes (StgEngine *e, gint64 job_id, const StgQuotaPending *pending)
{
  if (pending != NULL && pending->job_id == job_id)
    return g_array_ref (pending->changes);
  StgUpdate *u = stg_engine_update_for_job (e, job_id);
  if (u == NULL)
    return NULL;
  GArray *changes = g_array_sized_new (FALSE, FALSE, sizeof (StgChange), u->work->len);
  for (guint i = 0; i < u->work->len; i++)
    {
      const StgWork *w = &g_array_index (u->work, StgWork, i);
      StgChange c = { w->instance, w->from_config, w->to_config };
      g_array_append_val (changes, c);
    }
  return changes;
}

static gboolean
tally_job (Tally *t, const StgJobRow *job, const StgQuotaPending *pending, GError **error)
{
  g_autoptr (GArray) rows = stg_store_list_instances (t->e->store, job->id, error);
  g_autoptr (GArray) changes = update_changes (t->e, job->id, pending);
  g_autoptr (GHashTable) changed = g_hash_table_new (NULL, NULL);

  if (rows == NULL)
    return FALSE;
  for (guint i = 0; changes != NULL && i < changes->len; i++)
    g_hash_table_add (changed, GINT_TO_POINTER (g_array_index (changes, StgChange, i).instance));
  for (guint i = 0; i < rows->len; i++)
    {
      const StgInstanceRow *row = &g_array_index (rows, StgInstanceRow, i);
      if (g_hash_table_contains (changed, GINT_TO_POINTER (row->instance_id)) ||
          stg_schedule_status_is_terminal (row->status))
        continue;
      const ConfigUse *use = config_use (t,
                                         row->run_config_id ? row->run_config_id : row->config_id,
                                         error);
      if (use == NULL)
        return FALSE;
      bag_add (&t->info->consumption[use->pool], &use->bag, 1);
    }
  return changes == NULL ||
         tally_changes (t, (const StgChange *) changes->data, changes->len, error);
}

/* Role @role's quota and consumption, with @pending (nullable) counted in
 * place of its job's active update, if any. With @own (nullable), the
 * pending job's consumption goes there and not into @info's. */
static gboolean
quota_info (StgEngine *e, const gchar *role, const StgQuotaPending *pending, StgQuotaInfo *info,
            StgQuotaInfo *own, GError **error)
{
  g_autoptr (GHashTable) configs = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                                          g_free);
  Tally t = { e, configs, info };
  g_autoptr (GError) local = NULL;

  memset (info, 0, sizeof *info);
  g_autoptr (ApiResourceAggregate) quota = stg_store_get_quota (e->store, role, &local);
  if (local != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  if (quota != NULL)
    bag_from_set (quota->resources, &info->quota);
  g_autoptr (GPtrArray) jobs = stg_store_list_jobs (e->store, role, error);
  if (jobs == NULL)
    return FALSE;
  if (own != NULL)
    memset (own, 0, sizeof *own);
  for (guint i = 0; i < jobs->len; i++)
    {
      const StgJobRow *job = jobs->pdata[i];
      t.info = own != NULL && pending != NULL && job->id == pending->job_id ? own : info;
      if (!tally_job (&t, job, pending, error))
        return FALSE;
    }
  return TRUE;
}

/* ---- checks ------------------------------------------------------------------ */

#define BAG_FORMAT "%.2f CPU, %.0f MB RAM, %.0f MB disk"
#define BAG_ARGS(b) (b).cpus, (b).ram_mb, (b).disk_mb

/* Refuses when @need (production, shared pool) exceeds @info's quota;
 * @used says in words what @info's consumption is, and what else counts. */
static gboolean
check_fits (const gchar *role, const StgQuotaInfo *info, const StgResourceBag *need,
            const gchar *used, GError **error)
{
  g_autofree gchar *over = shortfall (&info->quota, need);

  if (over == NULL)
    return TRUE;
  return bad (error,
              "Insufficient resource quota: %s (role %s has a quota of %.2f CPU, %.0f MB RAM and "
              "%.0f MB disk for production tasks of the shared pool; %s)",
              over, role, info->quota.cpus, info->quota.ram_mb, info->quota.disk_mb, used);
}

gboolean
stg_quota_check_add (StgEngine *e, const ApiJobKey *key, const ApiTaskConfig *task, gint32 count,
                     GError **error)
{
  StgQuotaInfo info;
  StgResourceBag need, each;

  if (pool_of (e, task) != STG_QUOTA_PROD_SHARED)
    return TRUE;
  if (!quota_info (e, key->role, NULL, &info, NULL, error))
    {
      stg_engine_wrap_error (error);
      return FALSE;
    }
  need = info.consumption[STG_QUOTA_PROD_SHARED];
  bag_from_set (task->resources, &each);
  bag_add (&need, &each, count);
  g_autofree gchar *used = g_strdup_printf ("its other production tasks there use " BAG_FORMAT,
                                            BAG_ARGS (info.consumption[STG_QUOTA_PROD_SHARED]));
  return check_fits (key->role, &info, &need, used, error);
}

gboolean
stg_quota_check_update (StgEngine *e, const ApiJobKey *key, gint64 job_id,
                        const ApiTaskConfig *desired, const StgDiff *diff, GError **error)
{
  StgQuotaInfo others, own;
  StgQuotaPending pending = { job_id, diff->changes };

  if (pool_of (e, desired) != STG_QUOTA_PROD_SHARED)
    return TRUE;
  if (!quota_info (e, key->role, &pending, &others, &own, error))
    {
      stg_engine_wrap_error (error);
      return FALSE;
    }
  const StgResourceBag *mine = &own.consumption[STG_QUOTA_PROD_SHARED];
  StgResourceBag need = others.consumption[STG_QUOTA_PROD_SHARED];
  bag_add (&need, mine, 1);
  g_autofree gchar *used = g_strdup_printf ("during the update this job counts " BAG_FORMAT
                                            " there, the role's other jobs " BAG_FORMAT,
                                            BAG_ARGS (*mine),
                                            BAG_ARGS (others.consumption[STG_QUOTA_PROD_SHARED]));
  return check_fits (key->role, &others, &need, used, error);
}

/* ---- the calls --------------------------------------------------------------- */

static gboolean
check_role (const gchar *role, GError **error)
{
  if (!stg_job_key_part_valid (role))
    return bad (error, "ownerRole: '%s' is not a role (letters, digits, '.', '_', '-')",
                role ? role : "");
  return TRUE;
}

gboolean
stg_engine_get_quota (StgEngine *e, const gchar *role, StgQuotaInfo *info, GError **error)
{
  if (!check_role (role, error))
    return FALSE;
  if (!quota_info (e, role, NULL, info, NULL, error))
    {
      stg_engine_wrap_error (error);
      return FALSE;
    }
  return TRUE;
}

/* A quota is exactly one numCpus, one ramMb and one diskMb, none negative. */
static gboolean
check_quota (const ApiResourceAggregate *quota, GError **error)
{
  guint cpus = 0, ram = 0, disk = 0, other = 0;
  GHashTableIter it;
  gpointer key;

  if (quota == NULL || quota->resources == NULL)
    return bad (error, "quota is missing");
  g_hash_table_iter_init (&it, quota->resources);
  while (g_hash_table_iter_next (&it, &key, NULL))
    {
      const ApiResource *r = key;
      cpus += r->__isset_numCpus;
      ram += r->__isset_ramMb;
      disk += r->__isset_diskMb;
      other += !r->__isset_numCpus && !r->__isset_ramMb && !r->__isset_diskMb;
      if ((r->__isset_numCpus && !(r->numCpus >= 0)) || (r->__isset_ramMb && r->ramMb < 0) ||
          (r->__isset_diskMb && r->diskMb < 0))
        return bad (error, "quota.resources: Negative values in the quota");
    }
  if (cpus != 1 || ram != 1 || disk != 1 || other != 0)
    return bad (error, "quota.resources: Quota resources must be exactly: numCpus, ramMb, diskMb "
                       "(one of each)");
  return TRUE;
}

gboolean
stg_engine_set_quota (StgEngine *e, const gchar *role, const ApiResourceAggregate *quota,
                      const gchar *user, GError **error)
{
  StgQuotaInfo info;
  StgResourceBag want;
  g_autofree gchar *over = NULL;

  if (!check_role (role, error) || !check_quota (quota, error))
    return FALSE;
  if (!stg_store_begin (e->store, error))
    goto failed;
  if (!quota_info (e, role, NULL, &info, NULL, error))
    goto rollback;
  bag_from_set (quota->resources, &want);
  over = shortfall (&want, &info.consumption[STG_QUOTA_PROD_SHARED]);
  if (over != NULL)
    {
      stg_store_rollback (e->store);
      return bad (error,
                  "quota: Quota is less than the current production reservation of role "
                  "%s in the shared pool (%.2f CPU, %.0f MB RAM, %.0f MB disk): %s",
                  role, info.consumption[STG_QUOTA_PROD_SHARED].cpus,
                  info.consumption[STG_QUOTA_PROD_SHARED].ram_mb,
                  info.consumption[STG_QUOTA_PROD_SHARED].disk_mb, over);
    }
  if (!stg_store_set_quota (e->store, role, (ApiResourceAggregate *) quota, error))
    goto rollback;
  if (!stg_store_commit (e->store, error))
    goto failed;
  g_message ("engine: quota of role %s set to %.2f CPU, %.0f MB RAM, %.0f MB disk by %s", role,
             want.cpus, want.ram_mb, want.disk_mb, user ? user : "(anonymous)");
  return TRUE;

rollback:
  stg_store_rollback (e->store);
failed:
  stg_engine_wrap_error (error);
  return FALSE;
}
