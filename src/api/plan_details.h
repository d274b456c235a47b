/* plan_details.h: a rollout plan as the API shows it (RolloutPlanSummary,
 * RolloutPlanDetails), read from the store: each stage's state with the
 * configuration versions of its job. The Thrift handler (handler_plans.c)
 * and the web UI (webui_plan.c) both answer from it, so the two never tell
 * a plan apart. Main-loop thread only. */
#pragma once

#include "store/store.h"
#include "store/plans.h"

G_BEGIN_DECLS

/* The summary of @row (whole or read in a list). */
ApiRolloutPlanSummary *stg_plan_summary_new (const StgPlanRow *row);

/* Plan @uid whole (summary, stages, events, gate attempts, the plan as
 * started); NULL with STG_STORE_ERROR_NOT_FOUND for an unknown plan. */
ApiRolloutPlanDetails *stg_plan_details_read (StgStore *store, const gchar *uid, GError **error);

/* The role of @stage's job, or NULL when the stage names no job. */
const gchar *stg_plan_stage_role (const ApiRolloutStage *stage);

G_END_DECLS
