/* plans.h: rollout plans and their stages as the store keeps them
 * (plans.c; schema/010_plans.sql, 019_stage_ends.sql): the rows, their
 * insertion, updates and queries. Main-loop thread only.
 */
#pragma once

#include "store/store.h"

G_BEGIN_DECLS

/* ---- rollout plans (plans.c) -------------------------------------------- */

/* Where one stage of a plan stands (rollout_stages). */
typedef struct
{
  gint idx; /* its place in RolloutPlan.stages */
  gchar *name;
  gint status; /* RolloutStatus */
  gint64 since_ms;
  gchar *reason;            /* "" when there is nothing to say */
  gchar *reason_code;       /* "" when none was recorded (schema/015_reasons.sql) */
  gchar *update_uid;        /* (nullable) the update that moves it forward */
  gchar *rollback_uid;      /* (nullable) the one that takes it back */
  gint64 prior_config_id;   /* what most of the job's instances ran before (0: no job) */
  gint32 prior_count;       /* how many instances the job had then */
  gboolean prior_known;     /* the two above are recorded */
  gint32 gates_passed;      /* of the gates of the phase it waits in */
  gboolean roll_back;       /* goes back even when the plan does not (an after-gate failed) */
  gboolean rolled;          /* its going back was started (or found needless) */
  gchar *approved_by;       /* (nullable) */
  gint64 planned_config_id; /* the stored config equal to its job file as the plan began (0:
                               a new one) */
  /* Where it ended (schema/019_stage_ends.sql), recorded when it or its
   * plan ends: */
  gint64 end_ms;      /* 0: not recorded */
  gint32 end_current; /* the version most of the job's instances were to run */
  gint32 end_desired; /* the version the stage moved to (0: none) */
  gint32 end_target;  /* the version it was moving the job to */
  gint32 end_ready;   /* of end_want instances, running end_target healthy */
  gint32 end_want;
  gchar *end_unready; /* (nullable) JSON: [{"instance", "status", "reason"}] */
  gchar *end_message; /* (nullable) why it stood where it did */
} StgStageRow;

void stg_stage_row_clear (StgStageRow *row);

/* One plan (rollout_plans), with its stages when read whole. */
typedef struct
{
  gint64 id;
  gchar *uid;
  gchar *name;
  gchar *user;
  gint status; /* RolloutStatus */
  gint64 since_ms;
  gint64 created_ms;
  gchar *reason;
  gchar *reason_code;           /* "" when none was recorded */
  gboolean stopping;            /* starts no new stage */
  gboolean back;                /* rolls its stages back once nothing runs */
  gboolean rollback_on_failure; /* the plan's RolloutPlan.rollbackOnFailure */
  gint32 stage_count;
  gint32 stages_done;
  ApiRolloutPlan *plan; /* (nullable) as started; read whole only */
  GArray *stages;       /* (nullable) StgStageRow by idx; read whole only */
} StgPlanRow;

void stg_plan_row_free (StgPlanRow *row);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgPlanRow, stg_plan_row_free)

/* Records a new plan (uid, name, user, status, since_ms, created_ms,
 * reason and reason code of @row) and a PENDING row for each of @plan's
 * stages; sets @row->id. */
gboolean stg_store_insert_plan (StgStore *store, StgPlanRow *row, ApiRolloutPlan *plan,
                                GError **error);

/* Saves @row's status (and whether it is active), since_ms, reason,
 * reason code, stopping and back. */
gboolean stg_store_set_plan (StgStore *store, const StgPlanRow *row, GError **error);

/* Records @config_id as the planned config of stage @idx of plan @plan_id. */
gboolean stg_store_set_stage_planned (StgStore *store, gint64 plan_id, gint idx, gint64 config_id,
                                      GError **error);

/* Saves every column of one stage row of plan @plan_id. */
gboolean stg_store_set_stage (StgStore *store, gint64 plan_id, const StgStageRow *row,
                              GError **error);

/* Records an event of the plan (@stage NULL) or of one of its stages,
 * with its reason code @code (nullable). */
gboolean stg_store_add_plan_event (StgStore *store, gint64 plan_id, const gchar *stage,
                                   gint64 ts_ms, gint status, const gchar *code, const gchar *user,
                                   const gchar *message, GError **error);

/* Records one attempt of gate @gate of @stage in @phase ("before", "after"). */
gboolean stg_store_add_gate_result (StgStore *store, gint64 plan_id, const gchar *stage,
                                    gint64 ts_ms, gint status, const gchar *gate,
                                    const gchar *phase, gint attempt, gboolean passed,
                                    const gchar *message, GError **error);

/* The plan with id @uid, whole; NULL with STG_STORE_ERROR_NOT_FOUND. */
StgPlanRow *stg_store_get_plan (StgStore *store, const gchar *uid, GError **error);

/* Every active plan, whole, oldest first. */
GPtrArray *stg_store_list_active_plans (StgStore *store, GError **error);

/* Plans newest first without their stages (stage_count and stages_done
 * filled): those named @name (nullable: any), only active ones when
 * @active_only; @limit at most (0: 100) after @offset. */
GPtrArray *stg_store_list_plans (StgStore *store, const gchar *name, gboolean active_only,
                                 guint offset, guint limit, GError **error);

/* A plan's events (ApiRolloutEvent*) and gate attempts
 * (ApiRolloutGateResult*), oldest first. */
gboolean stg_store_list_plan_events (StgStore *store, gint64 plan_id, GPtrArray **events,
                                     GPtrArray **gates, GError **error);

G_END_DECLS
