/* settings.c: JobUpdateSettings checked and turned into StgSettings, the
 * strategies' batch sizes, and task configs checked.
 *
 * Strategy: updateStrategy when set. startJobUpdate first backfills it from
 * the older updateGroupSize and waitForBatchCompletion (Batch over Queue) as
 * Aurora does, and refuses groups that add up to nothing; updates recorded
 * before that take updateGroupSize (0: 1) directly.
 * Batch sizes: the first is the group size (VariableBatch: the first of the
 * list); after a batch, VariableBatch takes the next listed size while the
 * list lasts, and otherwise the size is multiplied by growthFactor (rounded
 * up, and at most maxBatchSize) when the batch had no failure, or kept when
 * it had one. maxSurge and the failure allowances may be given in percent
 * of the instances the update touches: stg_settings_resolve turns them into
 * counts once the diff is known. A task config
 * is checked here (its Aurora fields by task_fields.c, its executor by the
 * runtime). Pure functions; any thread.
 */
#include "config.h"

#include <math.h>

#include "common/error.h"
#include "common/jobkey.h"
#include "engine/engine_private.h"
#include "engine/gate_private.h"
#include "engine/settings_private.h"
#include "engine/sla_private.h"
#include "engine/task_private.h"
#include "engine/update_private.h"

void
stg_settings_clear (StgSettings *s)
{
  g_clear_pointer (&s->sizes, g_array_unref);
  g_clear_pointer (&s->only, stg_ranges_free);
  g_clear_pointer (&s->gates, g_ptr_array_unref);
  g_clear_pointer (&s->instance_gates[0], g_ptr_array_unref);
  g_clear_pointer (&s->instance_gates[1], g_ptr_array_unref);
}

#define bad(error, ...) stg_fail (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID, __VA_ARGS__)

static gboolean
check_size (gint32 size, const gchar *what, GError **error)
{
  if (size < 1)
    return bad (error, "%s must be at least 1, not %d", what, size);
  return TRUE;
}

/* The group sizes of @in's strategy add up to a positive total, as Aurora's
 * startJobUpdate requires (its messages, after the field's name). */
static gboolean
check_groups (const ApiJobUpdateStrategy *strategy, const gchar *field, const gchar *what,
              GError **error)
{
  gint64 total = 0;

  if (strategy->__isset_queueStrategy && strategy->queueStrategy != NULL)
    total = strategy->queueStrategy->groupSize;
  else if (strategy->__isset_batchStrategy && strategy->batchStrategy != NULL)
    total = strategy->batchStrategy->groupSize;
  else if (strategy->__isset_varBatchStrategy && strategy->varBatchStrategy != NULL)
    {
      GArray *sizes = strategy->varBatchStrategy->groupSizes;
      for (guint i = 0; sizes != NULL && i < sizes->len; i++)
        {
          gint32 size = g_array_index (sizes, gint32, i);
          if (size <= 0)
            return bad (error, "%s.%s[%u] is %d: All update group sizes must be positive.", what,
                        field, i, size);
          total += size;
        }
    }
  else
    return bad (error, "%s.updateStrategy: Update strategy provided is unknown.", what);
  if (total <= 0)
    return bad (error,
                "%s.%s is %" G_GINT64_FORMAT ": Update results in no instance being "
                "modified.",
                what, field, total);
  return TRUE;
}

gboolean
stg_settings_backfill (ApiJobUpdateSettings *in, const gchar *what, GError **error)
{
  const gchar *field;

  if (in == NULL)
    return bad (error, "%s is missing", what);
  if (!in->__isset_updateStrategy || in->updateStrategy == NULL)
    {
      g_autoptr (ApiJobUpdateStrategy) strategy = g_object_new (API_TYPE_JOB_UPDATE_STRATEGY, NULL);
      if (in->waitForBatchCompletion)
        {
          g_autoptr (ApiBatchJobUpdateStrategy) batch =
              g_object_new (API_TYPE_BATCH_JOB_UPDATE_STRATEGY, "groupSize", in->updateGroupSize,
                            NULL);
          g_object_set (strategy, "batchStrategy", batch, NULL);
        }
      else
        {
          g_autoptr (ApiQueueJobUpdateStrategy) queue =
              g_object_new (API_TYPE_QUEUE_JOB_UPDATE_STRATEGY, "groupSize", in->updateGroupSize,
                            NULL);
          g_object_set (strategy, "queueStrategy", queue, NULL);
        }
      g_object_set (in, "updateStrategy", strategy, NULL);
      field = "updateGroupSize";
    }
  else if (in->updateStrategy->__isset_queueStrategy)
    field = "updateStrategy.queueStrategy.groupSize";
  else if (in->updateStrategy->__isset_batchStrategy)
    field = "updateStrategy.batchStrategy.groupSize";
  else
    field = "updateStrategy.varBatchStrategy.groupSizes";
  return check_groups (in->updateStrategy, field, what, error);
}

/* The strategy and its group sizes: updateStrategy when set, otherwise the
 * older updateGroupSize (0: 1) and waitForBatchCompletion. Requests are
 * backfilled first (stg_settings_backfill), so only updates recorded before
 * backfilling existed take the older way. */
static gboolean
parse_strategy (const ApiJobUpdateSettings *in, const gchar *what, StgSettings *out, GError **error)
{
  ApiJobUpdateStrategy *strategy = in->__isset_updateStrategy ? in->updateStrategy : NULL;
  if (strategy != NULL && strategy->__isset_queueStrategy)
    {
      g_autofree gchar *f = g_strdup_printf ("%s.updateStrategy.queueStrategy.groupSize", what);
      if (!check_size (strategy->queueStrategy->groupSize, f, error))
        return FALSE;
      out->kind = STG_STRATEGY_QUEUE;
      g_array_append_val (out->sizes, strategy->queueStrategy->groupSize);
    }
  else if (strategy != NULL && strategy->__isset_batchStrategy)
    {
      g_autofree gchar *f = g_strdup_printf ("%s.updateStrategy.batchStrategy.groupSize", what);
      if (!check_size (strategy->batchStrategy->groupSize, f, error))
        return FALSE;
      out->kind = STG_STRATEGY_BATCH;
      out->autopause = strategy->batchStrategy->autopauseAfterBatch;
      g_array_append_val (out->sizes, strategy->batchStrategy->groupSize);
    }
  else if (strategy != NULL && strategy->__isset_varBatchStrategy)
    {
      GArray *sizes = strategy->varBatchStrategy->groupSizes;
      if (sizes == NULL || sizes->len == 0)
        return bad (error, "%s.updateStrategy.varBatchStrategy.groupSizes must not be empty", what);
      for (guint i = 0; i < sizes->len; i++)
        {
          gint32 size = g_array_index (sizes, gint32, i);
          g_autofree gchar *f = g_strdup_printf ("%s.updateStrategy.varBatchStrategy.groupSizes[%u]",
                                                 what, i);
          if (!check_size (size, f, error))
            return FALSE;
          g_array_append_val (out->sizes, size);
        }
      out->kind = STG_STRATEGY_VARIABLE;
      out->autopause = strategy->varBatchStrategy->autopauseAfterBatch;
    }
  else
    {
      gint32 size = in->__isset_updateGroupSize && in->updateGroupSize != 0 ? in->updateGroupSize : 1;
      g_autofree gchar *f = g_strdup_printf ("%s.updateGroupSize", what);
      if (!check_size (size, f, error))
        return FALSE;
      out->kind = in->waitForBatchCompletion ? STG_STRATEGY_BATCH : STG_STRATEGY_QUEUE;
      g_array_append_val (out->sizes, size);
    }
  return TRUE;
}

/* batchGates: gates between batches need batches. */
static gboolean
parse_gates (const ApiJobUpdateSettings *in, const gchar *what, StgSettings *out, GError **error)
{
  if (!in->__isset_batchGates || in->batchGates == NULL || in->batchGates->len == 0)
    return TRUE;
  if (out->kind == STG_STRATEGY_QUEUE)
    return bad (error,
                "%s.batchGates need batches: give a batchStrategy or varBatchStrategy (a queue "
                "strategy has no batch to gate)",
                what);
  if (in->batchGates->len > 100)
    return bad (error, "%s.batchGates has %u gates; at most 100", what, in->batchGates->len);
  out->gates = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < in->batchGates->len; i++)
    {
      g_autofree gchar *field = g_strdup_printf ("%s.batchGates[%u]", what, i);
      if (!stg_gate_check (in->batchGates->pdata[i], field, error))
        return FALSE;
      g_ptr_array_add (out->gates, g_object_ref (in->batchGates->pdata[i]));
    }
  return TRUE;
}

/* A percent field (0 to 100), or -1 when it is not set. */
static gboolean
parse_percent (gboolean isset, gdouble value, const gchar *what, const gchar *field, gdouble *out,
               GError **error)
{
  *out = -1.0;
  if (!isset)
    return TRUE;
  if (!(value >= 0.0 && value <= 100.0))
    return bad (error, "%s.%s must be between 0 and 100, not %g", what, field, value);
  *out = value;
  return TRUE;
}

/* maxSurge, maxBatchSize, the percents and updateDeadlineMs. */
static gboolean
parse_controls (StgEngine *engine, const ApiJobUpdateSettings *in, const gchar *what,
                StgSettings *out, GError **error)
{
  if (!parse_percent (in->__isset_maxSurgePercent, in->maxSurgePercent, what, "maxSurgePercent",
                      &out->surge_pct, error) ||
      !parse_percent (in->__isset_maxFailedInstancesPercent, in->maxFailedInstancesPercent, what,
                      "maxFailedInstancesPercent", &out->failed_pct, error) ||
      !parse_percent (in->__isset_maxPerInstanceFailuresPercent, in->maxPerInstanceFailuresPercent,
                      what, "maxPerInstanceFailuresPercent", &out->per_instance_pct, error))
    return FALSE;
  if (in->__isset_maxSurge)
    {
      if (in->maxSurge < 0 || in->maxSurge > engine->limits.max_instances)
        return bad (error, "%s.maxSurge must be between 0 and %d, not %d", what,
                    engine->limits.max_instances, in->maxSurge);
      if (out->surge_pct >= 0.0 && in->maxSurge > 0)
        return bad (error, "%s: give maxSurge or maxSurgePercent, not both", what);
      out->max_surge = in->maxSurge;
    }
  if (out->failed_pct >= 0.0 && in->maxFailedInstances > 0)
    return bad (error, "%s: give maxFailedInstances or maxFailedInstancesPercent, not both", what);
  if (out->per_instance_pct >= 0.0 && in->maxPerInstanceFailures > 0)
    return bad (error, "%s: give maxPerInstanceFailures or maxPerInstanceFailuresPercent, not both",
                what);
  if (in->__isset_maxBatchSize && in->maxBatchSize != 0)
    {
      if (in->maxBatchSize < 0)
        return bad (error, "%s.maxBatchSize must not be negative, not %d", what, in->maxBatchSize);
      for (guint i = 0; i < out->sizes->len; i++)
        if (g_array_index (out->sizes, gint32, i) > in->maxBatchSize)
          return bad (error,
                      "%s.maxBatchSize is %d but the strategy asks for batches of %d: the cap "
                      "bounds growth, it cannot shrink a batch given",
                      what, in->maxBatchSize, g_array_index (out->sizes, gint32, i));
      out->max_batch_size = in->maxBatchSize;
    }
  if (in->__isset_updateDeadlineMs)
    {
      if (in->updateDeadlineMs < 0 || in->updateDeadlineMs > engine->limits.max_pulse_ms)
        return bad (error, "%s.updateDeadlineMs must be between 0 and %" G_GINT64_FORMAT, what,
                    engine->limits.max_pulse_ms);
      out->deadline_ms = in->updateDeadlineMs;
    }
  return TRUE;
}

gboolean
stg_settings_parse (StgEngine *engine, const ApiJobUpdateSettings *in, const gchar *what,
                    StgSettings *out, GError **error)
{
  memset (out, 0, sizeof *out);
  out->sizes = g_array_new (FALSE, FALSE, sizeof (gint32));
  out->growth = 1.0;

  if (in == NULL)
    return bad (error, "%s is missing", what);

  if (!parse_strategy (in, what, out, error))
    return FALSE;
  if (in->maxPerInstanceFailures < 0)
    return bad (error, "%s.maxPerInstanceFailures must be non-negative.", what);
  if (in->maxFailedInstances < 0)
    return bad (error, "%s.maxFailedInstances must be non-negative.", what);
  out->max_per_instance_failures = in->maxPerInstanceFailures;
  out->max_failed_instances = in->maxFailedInstances;

  if (in->minWaitInInstanceRunningMs < 0)
    return bad (error, "%s.minWaitInInstanceRunningMs must be non-negative.", what);
  if (in->minWaitInInstanceRunningMs > engine->limits.max_watch_ms)
    return bad (error, "%s.minWaitInInstanceRunningMs must be between 0 and %" G_GINT64_FORMAT,
                what, engine->limits.max_watch_ms);
  out->watch_ms = in->minWaitInInstanceRunningMs;
  out->rollback_on_failure = in->rollbackOnFailure;

  if (in->__isset_blockIfNoPulsesAfterMs)
    {
      if (in->blockIfNoPulsesAfterMs < 0)
        return bad (error, "%s.blockIfNoPulsesAfterMs must be positive.", what);
      if (in->blockIfNoPulsesAfterMs > engine->limits.max_pulse_ms)
        return bad (error, "%s.blockIfNoPulsesAfterMs must be between 0 and %" G_GINT64_FORMAT,
                    what, engine->limits.max_pulse_ms);
      out->pulse_ms = in->blockIfNoPulsesAfterMs;
    }

  if (in->__isset_maxInstanceStartMs)
    {
      if (in->maxInstanceStartMs < 0 || in->maxInstanceStartMs > engine->limits.max_watch_ms)
        return bad (error, "%s.maxInstanceStartMs must be between 0 and %" G_GINT64_FORMAT,
                    what, engine->limits.max_watch_ms);
      out->max_start_ms = in->maxInstanceStartMs;
    }
  if (in->__isset_growthFactor)
    {
      if (!(in->growthFactor >= 1.0 && in->growthFactor <= 1000.0))
        return bad (error, "%s.growthFactor must be between 1 and 1000", what);
      out->growth = in->growthFactor;
    }
  if (in->__isset_minInService)
    {
      if (in->minInService < 0)
        return bad (error, "%s.minInService must not be negative", what);
      out->min_in_service = in->minInService;
    }
  if (in->__isset_pauseBetweenBatchesMs)
    {
      if (in->pauseBetweenBatchesMs < 0 || in->pauseBetweenBatchesMs > engine->limits.max_watch_ms)
        return bad (error, "%s.pauseBetweenBatchesMs must be between 0 and %" G_GINT64_FORMAT,
                    what, engine->limits.max_watch_ms);
      out->pause_between_ms = in->pauseBetweenBatchesMs;
    }

  out->restart = in->__isset_restartInstances && in->restartInstances;
  out->sla_aware = in->__isset_slaAware && in->slaAware;
  if (in->__isset_updateOnlyTheseInstances && in->updateOnlyTheseInstances != NULL &&
      g_hash_table_size (in->updateOnlyTheseInstances) > 0)
    {
      out->only = stg_ranges_new ();
      GHashTableIter it;
      gpointer key;
      g_hash_table_iter_init (&it, in->updateOnlyTheseInstances);
      while (g_hash_table_iter_next (&it, &key, NULL))
        {
          ApiRange *r = key;
          if (r->first < 0 || r->last < r->first)
            return bad (error, "%s.updateOnlyTheseInstances has a bad range %d-%d", what,
                        r->first, r->last);
          stg_ranges_add (out->only, r->first, r->last);
        }
    }
  return parse_controls (engine, in, what, out, error) && parse_gates (in, what, out, error) &&
         stg_work_gates_parse (in, what, out, error);
}

void
stg_settings_resolve (StgSettings *s, guint touched)
{
  if (s->surge_pct >= 0.0)
    s->max_surge = (gint32) ceil (s->surge_pct * touched / 100.0);
  if (s->failed_pct >= 0.0)
    s->max_failed_instances = (gint32) floor (s->failed_pct * touched / 100.0);
  if (s->per_instance_pct >= 0.0)
    s->max_per_instance_failures = (gint32) floor (s->per_instance_pct * touched / 100.0);
}

guint
stg_strategy_first_size (const StgSettings *s)
{
  return (guint) g_array_index (s->sizes, gint32, 0);
}

guint
stg_strategy_next_size (const StgSettings *s, guint index, guint size, gboolean failures)
{
  if (s->kind == STG_STRATEGY_VARIABLE && index + 1 < s->sizes->len)
    return (guint) g_array_index (s->sizes, gint32, index + 1);
  if (failures || s->growth <= 1.0)
    return size;
  gdouble next = ceil ((gdouble) size * s->growth);
  guint grown = next > (gdouble) G_MAXINT32 ? (guint) G_MAXINT32 : MAX ((guint) next, size);
  if (s->max_batch_size > 0)
    grown = MIN (grown, MAX ((guint) s->max_batch_size, size));
  return grown;
}

ApiTaskConfig *
stg_engine_check_task_config (StgEngine *engine, const ApiTaskConfig *config, const ApiJobKey *key,
                              gint32 instances, const gchar *what, GError **error)
{
  if (config == NULL)
    {
      g_set_error (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID, "%s is missing", what);
      return NULL;
    }
  if (config->__isset_job && config->job != NULL && config->job->role != NULL &&
      !stg_job_key_equal (config->job, key))
    {
      g_autofree gchar *a = stg_job_key_to_string (config->job);
      g_autofree gchar *b = stg_job_key_to_string (key);
      g_set_error (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID,
                   "%s.job is %s but the job is %s", what, a, b);
      return NULL;
    }
  g_autoptr (ApiTaskConfig) copy = stg_thrift_copy ((gpointer) config);
  g_autoptr (ApiJobKey) job = stg_thrift_copy ((gpointer) key);
  g_object_set (copy, "job", job, NULL);
  if (!copy->__isset_owner || copy->owner == NULL || copy->owner->user == NULL)
    {
      g_autoptr (ApiIdentity) owner = g_object_new (API_TYPE_IDENTITY, "user", key->role, NULL);
      g_object_set (copy, "owner", owner, NULL);
    }
  if (!stg_task_fields_check (engine, copy, what, error) ||
      !stg_sla_check_task (engine, copy, instances, what, error))
    return NULL;
  if (engine->runtime != NULL)
    {
      if (!stg_runtime_validate (engine->runtime, config, error))
        {
          g_prefix_error (error, "%s.executorConfig: ", what);
          stg_engine_wrap_error (error);
          return NULL;
        }
    }
  return g_steal_pointer (&copy);
}
