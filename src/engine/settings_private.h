/* settings_private.h: an update's settings and what it changes: StgSettings
 * (JobUpdateSettings checked, with defaults, and the strategies' batch
 * sizes: settings.c), task configs checked (settings.c), and StgDiff, the
 * instances an update changes (diff.c). Not for use outside src/engine/.
 */
#pragma once

#include "engine/engine.h"

typedef enum
{
  STG_STRATEGY_QUEUE,    /* up to N in flight; the next starts as one finishes */
  STG_STRATEGY_BATCH,    /* groups of N; a group starts when the previous is done */
  STG_STRATEGY_VARIABLE, /* groups sized by a list, the last repeated */
} StgStrategyKind;

/* JobUpdateSettings, checked and with defaults applied. */
typedef struct
{
  StgStrategyKind kind;
  GArray *sizes; /* gint32; one entry for queue and batch */
  gboolean autopause;
  gint32 max_per_instance_failures;
  gint32 max_failed_instances;
  gint64 watch_ms;
  gboolean rollback_on_failure;
  gint64 pulse_ms;     /* 0: not coordinated */
  gint64 max_start_ms; /* 0: no deadline */
  gdouble growth;      /* >= 1 */
  gint32 min_in_service;
  gint64 pause_between_ms;
  StgRanges *only;       /* (nullable) updateOnlyTheseInstances */
  gboolean restart;      /* restartInstances: same-config instances are restarted */
  GPtrArray *gates;      /* (nullable) ApiRolloutGate*: batchGates, checked */
  gint32 max_surge;      /* extra instances beyond the job's count (resolved) */
  gint32 max_batch_size; /* 0: growth has no cap */
  gint64 deadline_ms;    /* 0: no deadline for rolling forward */
  /* The percent forms (negative: not given), turned into counts by
   * stg_settings_resolve once the instances the update touches are known. */
  gdouble surge_pct;
  gdouble failed_pct;
  gdouble per_instance_pct;
  GPtrArray *instance_gates[2]; /* (nullable) instanceGatesBefore, instanceGatesAfter, checked */
  gboolean sla_aware;           /* slaAware: an instance goes down only within its SLA */
} StgSettings;

void stg_settings_clear (StgSettings *s);

/* Turns @s's percents into counts of the @touched instances the update
 * changes: maxSurgePercent rounded up, the failure allowances down. */
void stg_settings_resolve (StgSettings *s, guint touched);

/* Aurora's backfill for startJobUpdate: without an updateStrategy, @settings
 * gets a queue strategy of updateGroupSize (a batch strategy when
 * waitForBatchCompletion); then the group sizes must add up to more than 0
 * (STG_ENGINE_ERROR_INVALID with Aurora's message otherwise). */
gboolean stg_settings_backfill (ApiJobUpdateSettings *settings, const gchar *what, GError **error);

/* Checks @settings (field names prefixed with @what) and fills @out. */
gboolean stg_settings_parse (StgEngine *engine, const ApiJobUpdateSettings *settings,
                             const gchar *what, StgSettings *out, GError **error);

/* The size of the first batch, and of the one after a batch of @size that
 * was batch number @index (0-based) and had @failures failures. */
guint stg_strategy_first_size (const StgSettings *s);
guint stg_strategy_next_size (const StgSettings *s, guint index, guint size, gboolean failures);

/* ---- the diff -------------------------------------------------------------- */

/* One instance an update changes. Config ids of 0 mean "absent". */
typedef struct
{
  gint32 instance;
  gint64 from_config;
  gint64 to_config;
} StgChange;

typedef struct
{
  GArray *changes;      /* StgChange, ascending instance */
  GArray *unchanged;    /* StgChange (from == to), ascending instance */
  GArray *outside;      /* StgChange (from == to): instances the job has outside
                           updateOnlyTheseInstances, ascending instance */
  gint64 current_count; /* instances the job has now */
} StgDiff;

void stg_diff_clear (StgDiff *diff);

/* What moving job @job_id (0: no such job yet) to @desired_config on
 * @instance_count instances changes, within @only (nullable: all). With
 * @restart, instances in scope that already run @desired_config are changes
 * too (from == to: restarts), not unchanged. */
gboolean stg_diff_compute (StgEngine *engine, gint64 job_id, gint64 desired_config,
                           gint32 instance_count, StgRanges *only, gboolean restart, StgDiff *diff,
                           GError **error);

/* Checks @config for a job of @instances instances and returns a
 * normalized copy of its task config (job key and owner filled in), or
 * NULL with STG_ENGINE_ERROR_INVALID. */
ApiTaskConfig *stg_engine_check_task_config (StgEngine *engine, const ApiTaskConfig *config,
                                             const ApiJobKey *key, gint32 instances,
                                             const gchar *what, GError **error);
