/* runtime.c: the parts of the runtime seam that are not per implementation.
 * Main-loop thread only. */
#include "config.h"

#include "runtime/runtime.h"

G_DEFINE_QUARK (stg-runtime-error-quark, stg_runtime_error)

typedef struct
{
  gint64 job_id;
  gint32 instance_id;
} SlotKey;

static guint
slot_key_hash (gconstpointer p)
{
  const SlotKey *k = p;
  return g_int64_hash (&k->job_id) * 31u + (guint) k->instance_id;
}

static gboolean
slot_key_equal (gconstpointer a, gconstpointer b)
{
  const SlotKey *x = a, *y = b;
  return x->job_id == y->job_id && x->instance_id == y->instance_id;
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
      const SlotKey *k = key;
      stg_runtime_notify (rt, k->job_id, k->instance_id);
    }
  return G_SOURCE_REMOVE;
}

void
stg_runtime_notify_later (StgRuntime *rt, gint64 job_id, gint32 instance_id)
{
  SlotKey *k = g_new (SlotKey, 1);

  k->job_id = job_id;
  k->instance_id = instance_id;
  if (rt->later == NULL)
    rt->later = g_hash_table_new_full (slot_key_hash, slot_key_equal, g_free, NULL);
  g_hash_table_add (rt->later, k);
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
