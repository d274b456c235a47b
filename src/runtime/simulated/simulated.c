/* simulated.c: StgSimulatedRuntime (see simulated.h). Main-loop thread only. */
#include "config.h"

#include "runtime/simulated/simulated.h"

typedef struct
{
  StgRuntime base;
  StgStore *store;
  StgClock *clock;
  GHashTable *slots;         /* Slot* by (job, instance) */
} StgSimulatedRuntime;

/* A slot is hashed by its key, the first member. */
typedef struct
{
  StgSlotKey key;
  StgTaskObservation seen;
} Slot;

static Slot *
find (StgSimulatedRuntime *rt, gint64 job_id, gint32 instance)
{
  StgSlotKey key = { .job_id = job_id, .instance = instance };
  return g_hash_table_lookup (rt->slots, &key);
}

static Slot *
get (StgSimulatedRuntime *rt, gint64 job_id, gint32 instance)
{
  Slot *s = find (rt, job_id, instance);
  if (s == NULL)
    {
      s = g_new0 (Slot, 1);
      s->key.job_id = job_id;
      s->key.instance = instance;
      g_hash_table_add (rt->slots, s);
    }
  return s;
}

/* The slot runs @config_id, healthy from now on; recorded and announced. */
static gboolean
run (StgSimulatedRuntime *rt, Slot *s, gint64 config_id, const gchar *message, GError **error)
{
  gint64 now = stg_clock_now_ms (rt->clock);
  StgInstanceRow facts = {
    .instance_id = s->key.instance,
    .run_config_id = config_id,
    .status = API_SCHEDULE_STATUS_RUNNING,
    .failure_count = (gint32) s->seen.failures,
    .status_ms = now,
  };

  if (!stg_store_set_instance_facts (rt->store, s->key.job_id, &facts, error) ||
      !stg_store_add_task_event (rt->store, s->key.job_id, s->key.instance, now, API_SCHEDULE_STATUS_RUNNING,
                                 message, error))
    return FALSE;
  s->seen.phase = STG_TASK_RUNNING;
  s->seen.config_id = config_id;
  s->seen.status = API_SCHEDULE_STATUS_RUNNING;
  s->seen.healthy_since_ms = now;
  s->seen.phase_since_ms = now;
  stg_runtime_notify_later (&rt->base, s->key.job_id, s->key.instance);
  return TRUE;
}

static gboolean
sim_apply (StgRuntime *base, gint64 job_id, gint32 instance_id, gint64 config_id, GError **error)
{
  StgSimulatedRuntime *rt = (StgSimulatedRuntime *) base;
  Slot *s = get (rt, job_id, instance_id);

  if (s->seen.phase == STG_TASK_RUNNING && s->seen.config_id == config_id)
    return TRUE;
  return run (rt, s, config_id, "started (simulated)", error);
}

static gboolean
sim_kill (StgRuntime *base, gint64 job_id, gint32 instance_id, GError **error)
{
  StgSimulatedRuntime *rt = (StgSimulatedRuntime *) base;
  Slot *s = find (rt, job_id, instance_id);

  if (!stg_store_delete_instance (rt->store, job_id, instance_id, error))
    return FALSE;
  if (s != NULL)
    g_hash_table_remove (rt->slots, s);
  stg_runtime_notify_later (base, job_id, instance_id);
  return TRUE;
}

static gboolean
sim_restart (StgRuntime *base, gint64 job_id, gint32 instance_id, GError **error)
{
  StgSimulatedRuntime *rt = (StgSimulatedRuntime *) base;
  Slot *s = find (rt, job_id, instance_id);

  if (s == NULL || s->seen.phase == STG_TASK_ABSENT)
    {
      g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_NOT_FOUND,
                   "instance %d of job %" G_GINT64_FORMAT " is not running", instance_id, job_id);
      return FALSE;
    }
  return run (rt, s, s->seen.config_id, "restarted (simulated)", error);
}

static void
sim_observe (StgRuntime *base, gint64 job_id, gint32 instance_id, StgTaskObservation *out)
{
  StgSimulatedRuntime *rt = (StgSimulatedRuntime *) base;
  Slot *s = find (rt, job_id, instance_id);

  if (s != NULL)
    *out = s->seen;
  else
    *out = (StgTaskObservation) { .phase = STG_TASK_ABSENT, .status = API_SCHEDULE_STATUS_INIT };
}

static void
sim_free (StgRuntime *base)
{
  StgSimulatedRuntime *rt = (StgSimulatedRuntime *) base;

  g_hash_table_unref (rt->slots);
  g_free (rt);
}

static const StgRuntimeOps sim_ops = {
  .apply = sim_apply,
  .kill = sim_kill,
  .restart = sim_restart,
  .observe = sim_observe,
  .free = sim_free,
};

StgRuntime *
stg_simulated_runtime_new (StgStore *store, StgClock *clock, GError **error)
{
  g_autoptr (GArray) rows = stg_store_list_all_instances (store, error);
  if (rows == NULL)
    return NULL;

  StgSimulatedRuntime *rt = g_new0 (StgSimulatedRuntime, 1);
  rt->base.ops = &sim_ops;
  rt->store = store;
  rt->clock = clock;
  rt->slots = g_hash_table_new_full (stg_slot_key_hash, stg_slot_key_equal, g_free, NULL);
  /* Whatever ran before the restart still runs. */
  for (guint i = 0; i < rows->len; i++)
    {
      const StgSlotRow *r = &g_array_index (rows, StgSlotRow, i);
      if (r->row.run_config_id == 0)
        continue;
      Slot *s = get (rt, r->job_id, r->row.instance_id);
      s->seen.phase = STG_TASK_RUNNING;
      s->seen.config_id = r->row.run_config_id;
      s->seen.status = API_SCHEDULE_STATUS_RUNNING;
      s->seen.failures = (guint32) r->row.failure_count;
      s->seen.healthy_since_ms = r->row.status_ms;
      s->seen.phase_since_ms = r->row.status_ms;
    }
  return &rt->base;
}
