/* task_private.h: what the engine checks of a job's task beyond its
 * config: the TaskConfig fields Aurora's scheduler interprets
 * (task_fields.c) and quotas (quota.c). Not for use outside src/engine/.
 * Main-loop thread only.
 */
#pragma once

#include "engine/settings_private.h"

/* Checks the fields of @task (a copy with its job key set) that Aurora's
 * scheduler interprets: the tier, a dedicated constraint, resources (one
 * value of each, no GPU), and the fields Stagger refuses by name (Mesos
 * fetcher URIs, Mesos container images and volumes, partition policies
 * other than reschedule at once, an SLA policy of no or several kinds).
 * Sets production, when @task has it, to the tier's. Field names are
 * prefixed with @what. */
gboolean stg_task_fields_check (StgEngine *engine, ApiTaskConfig *task, const gchar *what,
                                GError **error);

/* Fills in @task's tier (the default when unset) and production. */
void stg_task_fields_populate (StgEngine *engine, ApiTaskConfig *task);

/* Production: the task's own production when set (it follows the tier),
 * else its tier's (unknown tiers are not production). */
gboolean stg_task_is_production (StgEngine *engine, const ApiTaskConfig *task);

/* In a dedicated pool: the task has a "dedicated" constraint. */
gboolean stg_task_is_dedicated (const ApiTaskConfig *task);

/* Refuses (INVALID, Aurora's "Insufficient resource quota: ...", naming
 * what is short) @count more instances of @task in job @key, when @task
 * is a production task of the shared pool and its role's quota cannot
 * hold them. */
gboolean stg_quota_check_add (StgEngine *engine, const ApiJobKey *key, const ApiTaskConfig *task,
                              gint32 count, GError **error);

/* Refuses the same way an update of job @job_id to @desired that makes
 * the changes of @diff. */
gboolean stg_quota_check_update (StgEngine *engine, const ApiJobKey *key, gint64 job_id,
                                 const ApiTaskConfig *desired, const StgDiff *diff, GError **error);
