/* slot.c: StgSlot and StgSlots (see slot.h): the instance slots every
 * runtime keeps, made from the store, their phases recorded in it.
 * Main-loop thread only.
 */
#include "config.h"

#include <string.h>

#include "runtime/slot.h"

struct _StgSlots
{
  StgRuntime *runtime; /* borrowed: announcements */
  StgStore *store;     /* borrowed */
  StgClock *clock;     /* borrowed */
  const StgSlotClass *klass;
  GHashTable *slots; /* &slot->key -> StgSlot* (owned) */
};

static void
slot_free (gpointer data)
{
  StgSlot *slot = data;

  g_cancellable_cancel (slot->cancel);
  if (slot->table->klass->clear != NULL)
    slot->table->klass->clear (slot);
  g_clear_object (&slot->cancel);
  g_clear_object (&slot->job);
  g_free (slot->cause);
  g_free (slot);
}

StgSlots *
stg_slots_new (StgRuntime *runtime, StgStore *store, StgClock *clock, const StgSlotClass *klass)
{
  StgSlots *slots = g_new0 (StgSlots, 1);

  g_return_val_if_fail (klass->size >= sizeof (StgSlot), NULL);
  slots->runtime = runtime;
  slots->store = store;
  slots->clock = clock;
  slots->klass = klass;
  slots->slots = g_hash_table_new_full (stg_slot_key_hash, stg_slot_key_equal, NULL, slot_free);
  return slots;
}

void
stg_slots_free (StgSlots *slots)
{
  if (slots == NULL)
    return;
  g_hash_table_unref (slots->slots);
  g_free (slots);
}

StgRuntime *
stg_slots_runtime (StgSlots *slots)
{
  return slots->runtime;
}

StgSlot *
stg_slots_find (StgSlots *slots, gint64 job_id, gint32 instance)
{
  StgSlotKey key = { .job_id = job_id, .instance = instance };

  return g_hash_table_lookup (slots->slots, &key);
}

StgSlot *
stg_slots_get (StgSlots *slots, gint64 job_id, gint32 instance, GError **error)
{
  StgSlot *slot = stg_slots_find (slots, job_id, instance);

  if (slot != NULL)
    return slot;
  g_autoptr (StgJobRow) job = stg_store_get_job_by_id (slots->store, job_id, NULL);
  if (job == NULL)
    {
      g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_NOT_FOUND,
                   "no job with id %" G_GINT64_FORMAT, job_id);
      return NULL;
    }
  slot = g_malloc0 (slots->klass->size);
  slot->table = slots;
  slot->key.job_id = job_id;
  slot->key.instance = instance;
  slot->job = g_object_ref (job->key);
  slot->phase = STG_TASK_ABSENT;
  slot->status = API_SCHEDULE_STATUS_PENDING;
  slot->cancel = g_cancellable_new ();
  StgInstanceRow row;
  if (stg_store_get_instance (slots->store, job_id, instance, &row, NULL))
    {
      slot->failures = (guint32) row.failure_count;
      slot->run_id = row.run_id;
      slot->want = row.config_id;
    }
  if (slots->klass->init != NULL)
    slots->klass->init (slot);
  g_hash_table_insert (slots->slots, &slot->key, slot);
  return slot;
}

void
stg_slots_iter_init (StgSlots *slots, GHashTableIter *it)
{
  g_hash_table_iter_init (it, slots->slots);
}

GPtrArray *
stg_slots_job_others (StgSlots *slots, const StgSlot *slot)
{
  GPtrArray *out = g_ptr_array_new ();
  GHashTableIter it;
  gpointer value;

  g_hash_table_iter_init (&it, slots->slots);
  while (g_hash_table_iter_next (&it, NULL, &value))
    {
      StgSlot *other = value;
      if (other != slot && other->key.job_id == slot->key.job_id)
        g_ptr_array_add (out, other);
    }
  return out;
}

static void
announce (StgSlots *slots, StgSlotKey key)
{
  if (slots->klass->announce != NULL)
    slots->klass->announce (slots->runtime, key.job_id, key.instance);
  else
    stg_runtime_notify_later (slots->runtime, key.job_id, key.instance);
}

static void
warn (StgSlot *slot, const GError *error)
{
  g_warning ("%s: cannot record instance %d of %s/%s/%s: %s", slot->table->klass->name,
             slot->key.instance, slot->job->role, slot->job->environment, slot->job->name,
             error->message);
}

void
stg_slot_remove (StgSlot *slot)
{
  StgSlots *slots = slot->table;
  StgSlotKey key = slot->key;
  g_autoptr (GError) error = NULL;

  if (!stg_store_end_instance (slots->store, key.job_id, key.instance,
                               stg_clock_now_ms (slots->clock), &error))
    g_warning ("%s: cannot remove instance %d: %s", slots->klass->name, key.instance,
               error->message);
  g_hash_table_remove (slots->slots, &key);
  announce (slots, key);
}

/* The slot's facts as the store keeps them. */
static gboolean
save_facts (StgSlot *slot, GError **error)
{
  StgInstanceRow facts = {
    .instance_id = slot->key.instance,
    .status = slot->status,
    .run_id = slot->run_id,
    .failure_count = (gint32) slot->failures,
    .status_ms = slot->phase_since_ms,
  };

  slot->table->klass->facts (slot, &facts);
  return stg_store_set_instance_facts (slot->table->store, slot->key.job_id, &facts, error);
}

/* The slot's facts and a task event saying @message, in one commit (one
 * write to the disk where there were two). */
static gboolean
record_phase (StgSlot *slot, gint64 now, const gchar *message, GError **error)
{
  StgStore *store = slot->table->store;

  if (!stg_store_begin (store, error))
    return FALSE;
  if (!save_facts (slot, error) ||
      !stg_store_add_task_event (store, slot->key.job_id, slot->key.instance, now, slot->status,
                                 message, error))
    {
      stg_store_rollback (store);
      return FALSE;
    }
  return stg_store_commit (store, error);
}

void
stg_slot_save (StgSlot *slot)
{
  g_autoptr (GError) error = NULL;

  if (slot->table->klass->facts != NULL && !save_facts (slot, &error))
    warn (slot, error);
}

void
stg_slot_set_phase (StgSlot *slot, StgTaskPhase phase, gint64 config_id, gint status,
                    const gchar *message)
{
  StgSlots *slots = slot->table;
  gint64 now = stg_clock_now_ms (slots->clock);
  g_autoptr (GError) error = NULL;

  /* RUNNING counts from when it became healthy: an instance adopted
   * after a restart or a failover keeps that time, and so does a note. */
  slot->phase_since_ms = phase == STG_TASK_RUNNING && slot->healthy_since_ms > 0
                             ? slot->healthy_since_ms
                         : phase == slot->phase && status == slot->status &&
                                 slot->phase_since_ms > 0
                             ? slot->phase_since_ms
                             : now;
  slot->phase = phase;
  slot->config_id = config_id;
  slot->status = status;
  if (slots->klass->facts != NULL && !record_phase (slot, now, message, &error))
    warn (slot, error);
  g_debug ("%s: %s/%s/%s/%d: %s (%s)", slots->klass->name, slot->job->role, slot->job->environment,
           slot->job->name, slot->key.instance, stg_task_phase_name (phase),
           message ? message : "");
  announce (slots, slot->key);
}

void
stg_slot_note (StgSlot *slot, const gchar *message)
{
  stg_slot_set_phase (slot, slot->phase, slot->config_id, slot->status, message);
}

void
stg_slot_assume (StgSlot *slot, StgTaskPhase phase, gint status)
{
  slot->phase = phase;
  slot->status = status;
}

void
stg_slot_healthy (StgSlot *slot, gint64 config_id, gint64 since_ms, const gchar *message)
{
  slot->healthy_since_ms = since_ms;
  slot->steady_from_ms = since_ms;
  stg_slot_set_cause (slot, NULL);
  stg_slot_set_phase (slot, STG_TASK_RUNNING, config_id, API_SCHEDULE_STATUS_RUNNING, message);
}

void
stg_slot_set_cause (StgSlot *slot, const gchar *why)
{
  gchar *copy = g_strdup (why); /* @why may be the old cause */

  g_free (slot->cause);
  slot->cause = copy;
  slot->cause_ms = why != NULL ? stg_clock_now_ms (slot->table->clock) : 0;
}

void
stg_slot_count_failure (StgSlot *slot, const gchar *why)
{
  slot->failures++;
  if (why != NULL)
    stg_slot_set_cause (slot, why);
}

gboolean
stg_slot_runs_again (const StgSlot *slot, const ApiTaskConfig *config)
{
  return config->isService || config->maxTaskFailures < 0 ||
         slot->failures < (guint32) config->maxTaskFailures;
}

gint
stg_slot_backoff (StgSlot *slot, gint max_ms)
{
  gint64 now = stg_clock_now_ms (slot->table->clock);

  if (slot->steady_from_ms > 0 && now - slot->steady_from_ms >= STG_SLOT_STEADY_MS)
    slot->backoff_ms = 0;
  slot->steady_from_ms = 0; /* the run that failed is judged */
  slot->backoff_ms = slot->backoff_ms == 0 ? STG_SLOT_BACKOFF_FIRST_MS
                                           : MIN (slot->backoff_ms * 2, max_ms);
  return slot->backoff_ms;
}

StgTemplateVars
stg_slot_template_vars (const StgSlot *slot, const gchar *cluster, gint version, GHashTable *ports)
{
  return (StgTemplateVars){
    .instance = slot->key.instance,
    .cluster = cluster,
    .role = slot->job->role,
    .environment = slot->job->environment,
    .name = slot->job->name,
    .version = version,
    .ports = ports,
  };
}

void
stg_slot_observe (const StgSlot *slot, StgTaskObservation *out)
{
  if (slot == NULL)
    {
      *out = (StgTaskObservation){ .phase = STG_TASK_ABSENT, .status = API_SCHEDULE_STATUS_INIT };
      return;
    }
  *out = (StgTaskObservation){
    .phase = slot->phase,
    .config_id = slot->config_id,
    .healthy_since_ms = slot->healthy_since_ms,
    .phase_since_ms = slot->phase_since_ms,
    .failures = slot->failures,
    .status = slot->status,
    .cause = slot->cause,
    .cause_ms = slot->cause_ms,
  };
}
