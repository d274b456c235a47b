/* conditions.h: the conditions of an update, a rollout plan or a stage
 * (Thrift's Condition: Kubernetes' type, status, reason, message and last
 * transition time), from the status changes they recorded. The Thrift
 * handler and the web UI both use them. Main-loop thread only.
 */
#pragma once

#include "common/thrift_glue.h"

G_BEGIN_DECLS

typedef enum
{
  STG_CONDITIONS_UPDATE, /* statuses are JobUpdateStatus */
  STG_CONDITIONS_PLAN,   /* RolloutStatus */
  STG_CONDITIONS_STAGE,  /* RolloutStatus */
} StgConditionsOf;

/* One recorded status change (or note: an event whose status did not
 * change is passed over). */
typedef struct
{
  gint64 timestamp_ms;
  gint status;
  const gchar *reason; /* (nullable) its reason code; updates' are worked out here */
  const gchar *user;   /* (nullable) who asked */
  const gchar *message;
} StgStatusChange;

/* Progressing, Complete and Failed (ApiCondition*, in that order) of
 * something of @of whose status changes, oldest first, are @changes (@n
 * of them, at least one). */
GPtrArray *stg_conditions_build (StgConditionsOf of, const StgStatusChange *changes, guint n);

/* The status changes of an update's events (ApiJobUpdateEvent*). */
GArray *stg_conditions_update_changes (GPtrArray *events);

/* The status changes of a plan's events (ApiRolloutEvent*) of stage
 * @stage (NULL: the plan's own). */
GArray *stg_conditions_plan_changes (GPtrArray *events, const gchar *stage);

G_END_DECLS
