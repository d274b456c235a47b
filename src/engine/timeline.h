/* timeline.h: where an update's time went, instance by instance.
 *
 * An update's timeline is drawn from what the store keeps: its instance
 * events (each work's begin and end, with the batch it began in), its
 * job's task events over the same time (stopping, starting, healthy,
 * failed) and its own status events (pauses, pulses awaited). Each
 * instance's work is split into phases; the works of a batch make the
 * batch, whose physical limit is its slowest instance's time from its
 * start to healthy plus the watch time: no rollout in those batches can
 * take less than the sum over its batches. stg_timeline_build is the pure
 * part (tests feed it events); stg_engine_update_timeline reads an
 * update's events and builds it. Main-loop thread only.
 */
#pragma once

#include "engine/engine.h"

G_BEGIN_DECLS

typedef enum
{
  STG_TIMELINE_WAITING,        /* begun; the runtime not yet seen acting (instance gates) */
  STG_TIMELINE_PENDING,        /* waiting to be placed or started */
  STG_TIMELINE_STOPPING,       /* the old run stopping */
  STG_TIMELINE_STOPPED,        /* ended, the new run not begun */
  STG_TIMELINE_STARTING,       /* started, health checks until healthy */
  STG_TIMELINE_HEALTHY,        /* healthy: watched for the watch time */
  STG_TIMELINE_FAILED,         /* the run failed */
  STG_TIMELINE_PAUSED,         /* the update paused (a hold) */
  STG_TIMELINE_AWAITING_PULSE, /* the update waiting for a pulse (a hold) */
} StgTimelinePhase;

/* "waiting", "pending", "stopping", "stopped", "starting", "healthy",
 * "failed", "paused", "awaiting_pulse". */
const gchar *stg_timeline_phase_name (gint phase);

typedef struct
{
  gint phase; /* StgTimelinePhase */
  gint64 from_ms;
  gint64 to_ms;
} StgTimelineSpan;

/* One instance's work in one direction. */
typedef struct
{
  gint32 instance;
  gboolean back;      /* rolling back */
  gint batch;         /* the batch it began in; -1: not recorded */
  gint outcome;       /* the JobUpdateAction that ended it; 0: none (under way, or cut short) */
  gboolean cut_short; /* ended without one: the other direction began, or the update ended */
  gint64 from_ms;
  gint64 to_ms;
  gint64 healthy_ms; /* from its start to healthy; -1: not healthy in this work */
  GArray *spans;     /* StgTimelineSpan, in order, none empty */
} StgTimelineWork;

/* How work @w ended: "updated", "rolled_back", "update_failed",
 * "rollback_failed", "cut_short", or NULL while under way. */
const gchar *stg_timeline_outcome (const StgTimelineWork *w);

typedef struct
{
  gboolean back;
  gint batch;     /* -1: works whose batch was not recorded */
  gint64 from_ms; /* its first work's begin */
  gint64 to_ms;   /* its last work's end */
  guint works;
  gint32 slowest;    /* the instance slowest to healthy; -1: none became healthy */
  gint64 slowest_ms; /* its time from start to healthy; -1: none */
  gint64 limit_ms;   /* slowest_ms plus the watch time (0 when none became healthy) */
  gint64 held_ms;    /* of its time, held by pauses or awaited pulses */
  gint64 gap_ms;     /* from the previous batch's end (or the update's begin) to its begin */
  gchar *gap_why;    /* (nullable) what the gap waited for: "batch gates", "a pause"... */
  gchar *held_by;    /* what it waited for last: "instance 3 (starting 1.2 s)", "a pause" */
} StgTimelineBatch;

typedef struct
{
  gint64 from_ms; /* the update's begin */
  gint64 to_ms;   /* its end, or now while it is active */
  gboolean active;
  gint64 watch_ms;
  gint64 limit_ms; /* the sum of the batches' limits */
  gint64 predicted_ms; /* its rehearsal's prediction when it started; -1: none */
  GArray *works;   /* StgTimelineWork, by instance, then begin */
  GArray *batches; /* StgTimelineBatch, by begin */
  GArray *holds;   /* StgTimelineSpan: PAUSED and AWAITING_PULSE, in order */
} StgTimeline;

void stg_timeline_free (StgTimeline *timeline);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgTimeline, stg_timeline_free)

typedef struct
{
  const GArray *instance_events;  /* StgTimelineEvent, oldest first */
  const GArray *task_events;      /* StgTimelineEvent of the job's instances, oldest first */
  const GPtrArray *update_events; /* ApiJobUpdateEvent*, oldest first */
  gint64 from_ms;
  gint64 to_ms;
  gboolean active;
  gint64 watch_ms;
} StgTimelineInput;

/* The timeline @in's events draw. */
StgTimeline *stg_timeline_build (const StgTimelineInput *in);

/* The timeline of update @uid (active or not), or NULL with
 * STG_ENGINE_ERROR_NOT_FOUND or _FAILED. */
StgTimeline *stg_engine_update_timeline (StgEngine *engine, const gchar *uid, GError **error);

G_END_DECLS
