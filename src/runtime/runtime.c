/* runtime.c: the parts of the runtime seam that are not per implementation.
 * Main-loop thread only. */
#include "config.h"

#include <string.h>

#include "runtime/runtime.h"

G_DEFINE_QUARK (stg-runtime-error-quark, stg_runtime_error)

guint
stg_slot_key_hash (gconstpointer p)
{
  const StgSlotKey *k = p;
  return g_int64_hash (&k->job_id) * 31u + (guint) k->instance;
}

gboolean
stg_slot_key_equal (gconstpointer a, gconstpointer b)
{
  const StgSlotKey *x = a, *y = b;
  return x->job_id == y->job_id && x->instance == y->instance;
}

StgSlotKey *
stg_slot_key_new (gint64 job_id, gint32 instance)
{
  StgSlotKey *k = g_new (StgSlotKey, 1);

  k->job_id = job_id;
  k->instance = instance;
  return k;
}

static gboolean
flush_later (gpointer data)
{
  StgRuntime *rt = data;
  g_autoptr (GHashTable) later = g_steal_pointer (&rt->later);
  GHashTableIter it;
  gpointer key;

  rt->later_idle = 0;
  g_hash_table_iter_init (&it, later);
  while (g_hash_table_iter_next (&it, &key, NULL))
    {
      const StgSlotKey *k = key;
      stg_runtime_notify (rt, k->job_id, k->instance);
    }
  return G_SOURCE_REMOVE;
}

void
stg_runtime_notify_later (StgRuntime *rt, gint64 job_id, gint32 instance_id)
{
  if (rt->later == NULL)
    rt->later = g_hash_table_new_full (stg_slot_key_hash, stg_slot_key_equal, g_free, NULL);
  g_hash_table_add (rt->later, stg_slot_key_new (job_id, instance_id));
  if (rt->later_idle == 0)
    rt->later_idle = g_idle_add (flush_later, rt);
}

void
stg_runtime_free (StgRuntime *rt)
{
  if (rt == NULL)
    return;
  g_clear_handle_id (&rt->later_idle, g_source_remove);
  g_clear_pointer (&rt->later, g_hash_table_unref);
  rt->ops->free (rt);
}

const gchar *
stg_task_phase_name (StgTaskPhase phase)
{
  switch (phase)
    {
    case STG_TASK_ABSENT: return "absent";
    case STG_TASK_PENDING: return "pending";
    case STG_TASK_STARTING: return "starting";
    case STG_TASK_RUNNING: return "running";
    case STG_TASK_KILLING: return "killing";
    case STG_TASK_FAILED: return "failed";
    case STG_TASK_FINISHED: return "finished";
    default: return "unknown";
    }
}

void
stg_log_info_clear (StgLogInfo *info)
{
  g_clear_pointer (&info->processes, g_strfreev);
}

GBytes *
stg_runtime_read_log (StgRuntime *rt, gint64 job_id, gint32 instance_id, const StgLogQuery *query,
                      StgLogInfo *info, GError **error)
{
  StgLogQuery capped = *query;

  *info = (StgLogInfo){ .run = -1 };
  if (rt->ops->read_log == NULL)
    {
      g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_INVALID,
                   "this runtime keeps no output of its instances");
      return NULL;
    }
  capped.max = MIN (query->max, (gsize) STG_RUNTIME_LOG_MAX);
  return rt->ops->read_log (rt, job_id, instance_id, &capped, info, error);
}

gboolean
stg_runtime_usage (StgRuntime *rt, gint64 job_id, gint32 instance_id, StgInstanceUsage *out)
{
  *out = STG_INSTANCE_USAGE_UNKNOWN;
  return rt->ops->usage != NULL && rt->ops->usage (rt, job_id, instance_id, out);
}

void
stg_announcement_clear (StgAnnouncement *a)
{
  g_clear_pointer (&a->path, g_free);
  g_clear_pointer (&a->member, g_free);
  g_clear_pointer (&a->endpoint, g_free);
  g_clear_pointer (&a->problem, g_free);
}

gboolean
stg_runtime_announcement (StgRuntime *rt, gint64 job_id, gint32 instance_id, StgAnnouncement *out)
{
  memset (out, 0, sizeof *out);
  if (rt->ops->announcement == NULL || !rt->ops->announcement (rt, job_id, instance_id, out))
    {
      stg_announcement_clear (out);
      return FALSE;
    }
  return TRUE;
}

/* TRUE when the runtime has operation @op, else INVALID. */
static gboolean
has_hosts (gpointer op, GError **error)
{
  if (op != NULL)
    return TRUE;
  g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_INVALID,
               "this staggerd runs its instances itself and has no hosts (hosts are the fleet "
               "runtime's: --runtime=fleet)");
  return FALSE;
}

GPtrArray *
stg_runtime_hosts (StgRuntime *rt, GError **error)
{
  return has_hosts (rt->ops->hosts, error) ? rt->ops->hosts (rt) : NULL;
}

GPtrArray *
stg_runtime_moves (StgRuntime *rt, gint64 job_id, const ApiTaskConfig *config,
                   const GArray *instances)
{
  if (rt->ops->moves == NULL)
    return g_ptr_array_new_with_free_func (g_object_unref);
  return rt->ops->moves (rt, job_id, config, instances);
}

gboolean
stg_runtime_drain_host (StgRuntime *rt, const gchar *name, gboolean drain, GError **error)
{
  return has_hosts (rt->ops->drain_host, error) && rt->ops->drain_host (rt, name, drain, error);
}

gboolean
stg_runtime_reconcile (StgRuntime *rt, gboolean implicit, GHashTable *tasks, gchar **summary,
                       GError **error)
{
  if (rt->ops->reconcile != NULL)
    return rt->ops->reconcile (rt, implicit, implicit ? NULL : tasks, summary, error);
  *summary = g_strdup ("nothing to compare: this runtime runs nothing outside the store");
  return TRUE;
}

void
stg_sidecar_observation_clear (gpointer p)
{
  StgSidecarObservation *o = p;

  g_free (o->job);
  g_free (o->host);
  g_free (o->cause);
  for (guint i = 0; i < G_N_ELEMENTS (o->slots); i++)
    {
      g_free (o->slots[i].name);
      g_free (o->slots[i].container_id);
    }
}

static gboolean
has_sidecars (StgRuntime *rt, GError **error)
{
  if (rt->ops->sidecars != NULL)
    return TRUE;
  g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_INVALID,
               "sidecar sets run in the pods of the fleet runtime (--runtime=fleet); this "
               "staggerd's instances are processes without pods");
  return FALSE;
}

gboolean
stg_runtime_sidecar_validate (StgRuntime *rt, const gchar *name, const ApiSidecar *sidecar,
                              const ApiSidecar *previous, GError **error)
{
  return has_sidecars (rt, error) && rt->ops->sidecar_validate (rt, name, sidecar, previous, error);
}

GArray *
stg_runtime_sidecars (StgRuntime *rt, const gchar *name, GError **error)
{
  return has_sidecars (rt, error) ? rt->ops->sidecars (rt, name) : NULL;
}

gboolean
stg_runtime_sidecar_apply (StgRuntime *rt, gint64 job_id, gint32 instance, const gchar *name,
                           gint version, GError **error)
{
  return has_sidecars (rt, error) &&
         rt->ops->sidecar_apply (rt, job_id, instance, name, version, error);
}
