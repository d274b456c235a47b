/* task_fields.c: what Stagger makes of the TaskConfig fields that Aurora's
 * scheduler interprets and a runtime does not: the tier (checked against
 * the tiers, StgTiers), production (it follows the tier, as in Aurora), the
 * pool (dedicated: a "dedicated" constraint, whose role is checked), and
 * the fields Stagger cannot honour, refused by name rather than ignored:
 * Mesos fetcher URIs, Mesos containerizer images and volumes (an empty
 * MesosContainer, what Aurora's client sends for "no container", is
 * fine), GPUs, and partition policies other than Stagger's own behaviour.
 * slaPolicy is sla.c's. Calls the store and common only. Main-loop thread
 * only.
 */
#include "config.h"

#include "common/error.h"
#include "common/jobkey.h"
#include "common/tiers.h"
#include "engine/engine_private.h"
#include "engine/task_private.h"

#define bad(error, ...) stg_fail (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID, __VA_ARGS__)

/* Aurora's name of the constraint that puts a task in a dedicated pool. */
#define DEDICATED "dedicated"

void
stg_engine_set_tiers (StgEngine *engine, const StgTiers *tiers)
{
  engine->tiers = tiers != NULL ? tiers : engine->default_tiers;
}

const StgTiers *
stg_engine_tiers (StgEngine *engine)
{
  return engine->tiers;
}

/* The tier @task runs in: its own, else the default; NULL when it names
 * none of the tiers. */
static const StgTier *
tier_of (StgEngine *e, const ApiTaskConfig *task)
{
  const gchar *name = task->__isset_tier && task->tier != NULL ? task->tier
                                                               : stg_tiers_default_name (e->tiers);
  return stg_tiers_lookup (e->tiers, name);
}

gboolean
stg_task_is_production (StgEngine *e, const ApiTaskConfig *task)
{
  if (task->__isset_production)
    return task->production;
  const StgTier *tier = tier_of (e, task);
  return tier != NULL && stg_tier_is_production (tier);
}

/* The task's "dedicated" constraint, or NULL. */
static const ApiConstraint *
dedicated_constraint (const ApiTaskConfig *task)
{
  GHashTableIter it;
  gpointer key;

  if (!task->__isset_constraints || task->constraints == NULL)
    return NULL;
  g_hash_table_iter_init (&it, task->constraints);
  while (g_hash_table_iter_next (&it, &key, NULL))
    if (g_strcmp0 (((ApiConstraint *) key)->name, DEDICATED) == 0)
      return key;
  return NULL;
}

gboolean
stg_task_is_dedicated (const ApiTaskConfig *task)
{
  return dedicated_constraint (task) != NULL;
}

/* The tier must be one of the tiers; production then follows it. */
static gboolean
check_tier (StgEngine *e, ApiTaskConfig *task, const gchar *what, GError **error)
{
  if (task->__isset_tier && task->tier != NULL && !stg_job_key_part_valid (task->tier))
    return bad (error, "%s.tier: Tier contains illegal characters: %s", what, task->tier);
  const StgTier *tier = tier_of (e, task);
  if (tier == NULL)
    {
      g_autoptr (GString) known = g_string_new (NULL);
      for (guint i = 0; i < stg_tiers_count (e->tiers); i++)
        g_string_append_printf (known, "%s%s", i ? ", " : "", stg_tiers_get (e->tiers, i)->name);
      return bad (error, "%s.tier: Invalid tier '%s' in TaskConfig. (tiers: %s)", what, task->tier,
                  known->str);
    }
  if (task->__isset_production)
    g_object_set (task, "production", stg_tier_is_production (tier), NULL);
  return TRUE;
}

/* Aurora's rules for a dedicated constraint: one value, ROLE/... of the
 * task's own role (or of every role: "*"). */
static gboolean
check_dedicated (const ApiTaskConfig *task, const gchar *what, GError **error)
{
  const ApiConstraint *c = dedicated_constraint (task);

  if (c == NULL)
    return TRUE;
  if (c->constraint == NULL || !c->constraint->__isset_value || c->constraint->value == NULL)
    return bad (error, "%s.constraints: A dedicated constraint must be of value type.", what);
  GHashTable *values = c->constraint->value->values;
  if (values == NULL || g_hash_table_size (values) != 1)
    return bad (error, "%s.constraints: A dedicated constraint must have exactly one value", what);
  g_autoptr (GList) only = g_hash_table_get_keys (values);
  g_auto (GStrv) parts = g_strsplit (only->data, "/", 2);
  const gchar *role = parts[0] != NULL ? parts[0] : "";
  if (!g_str_equal (role, "*") && g_strcmp0 (role, task->job->role) != 0)
    return bad (error, "%s.constraints: Only %s may use hosts dedicated for that role.", what,
                role);
  return TRUE;
}

/* At most one value of each resource, and no GPU. */
static gboolean
check_resources (const ApiTaskConfig *task, const gchar *what, GError **error)
{
  guint cpus = 0, ram = 0, disk = 0;
  GHashTableIter it;
  gpointer key;

  if (task->resources == NULL)
    return TRUE;
  g_hash_table_iter_init (&it, task->resources);
  while (g_hash_table_iter_next (&it, &key, NULL))
    {
      const ApiResource *r = key;
      if (r->__isset_numGpus)
        return bad (error,
                    "%s.resources: numGpus: Stagger schedules no GPUs; remove the GPU "
                    "resource",
                    what);
      cpus += r->__isset_numCpus;
      ram += r->__isset_ramMb;
      disk += r->__isset_diskMb;
    }
  if (cpus > 1 || ram > 1 || disk > 1)
    return bad (error, "%s.resources: Multiple resource values are not supported for %s%s%s", what,
                cpus > 1 ? "numCpus " : "", ram > 1 ? "ramMb " : "", disk > 1 ? "diskMb" : "");
  return TRUE;
}

/* Mesos' unified containerizer: only the empty MesosContainer (no image, no
 * volume) that stands for "no container". */
static gboolean
check_container (const ApiTaskConfig *task, const gchar *what, GError **error)
{
  const ApiContainer *c = task->__isset_container ? task->container : NULL;

  if (c == NULL || !c->__isset_mesos || c->mesos == NULL)
    return TRUE;
  if (c->mesos->__isset_image && c->mesos->image != NULL)
    return bad (error,
                "%s.container.mesos.image: Mesos containerizer images are not supported by "
                "Stagger; give container.docker (the fleet runtime runs Docker images)",
                what);
  if (c->mesos->__isset_volumes && c->mesos->volumes != NULL && c->mesos->volumes->len > 0)
    return bad (error,
                "%s.container.mesos.volumes: Mesos containerizer volumes are not supported "
                "by Stagger; with container.docker, mount them with the docker parameter "
                "volume",
                what);
  return TRUE;
}

/* Stagger counts the tasks of a host it cannot reach as failed and starts
 * them again at once: reschedule, no delay. */
static gboolean
check_partition (const ApiTaskConfig *task, const gchar *what, GError **error)
{
  const ApiPartitionPolicy *p = task->__isset_partitionPolicy ? task->partitionPolicy : NULL;

  if (p == NULL)
    return TRUE;
  if (!p->reschedule)
    return bad (error,
                "%s.partitionPolicy.reschedule: Stagger always starts again the tasks of a "
                "host it cannot reach; reschedule = false is not supported",
                what);
  if (p->__isset_delaySecs && p->delaySecs != 0)
    return bad (error,
                "%s.partitionPolicy.delaySecs: Stagger starts again the tasks of a host it "
                "cannot reach at once; a delay (%" G_GINT64_FORMAT " s) is not supported",
                what, p->delaySecs);
  return TRUE;
}

gboolean
stg_task_fields_check (StgEngine *e, ApiTaskConfig *task, const gchar *what, GError **error)
{
  if (task->__isset_mesosFetcherUris && task->mesosFetcherUris != NULL &&
      g_hash_table_size (task->mesosFetcherUris) > 0)
    return bad (error,
                "%s.mesosFetcherUris: Stagger fetches no URIs into sandboxes (Mesos' "
                "fetcher); put the files in the image or fetch them in the command",
                what);
  return check_tier (e, task, what, error) && check_dedicated (task, what, error) &&
         check_resources (task, what, error) && check_container (task, what, error) &&
         check_partition (task, what, error);
}

void
stg_task_fields_populate (StgEngine *e, ApiTaskConfig *task)
{
  if (!task->__isset_tier || task->tier == NULL)
    g_object_set (task, "tier", stg_tiers_default_name (e->tiers), NULL);
  g_object_set (task, "production", stg_task_is_production (e, task), NULL);
}
