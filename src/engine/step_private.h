/* step_private.h: steps (step.c): the step in progress and what waits for
 * its commit (runtime actions, watchers' announcements), the slots noted
 * for the next news step, and the calls every engine file makes inside a
 * step: marking rows to write, recording an update's event, failing the
 * step. Not for use outside src/engine/. Main-loop thread only.
 */
#pragma once

#include "engine/engine.h"

typedef struct _StgUpdate StgUpdate;

/* A runtime action waiting for the step's commit. */
typedef enum
{
  STG_ACT_APPLY,
  STG_ACT_KILL,
  STG_ACT_RESTART
} StgActKind;

typedef struct
{
  StgActKind kind;
  gint64 job_id;
  gint32 instance;
  gint64 config;
  gchar *uid; /* (nullable) the update asking */
} StgAct;

/* What step.c needs from the files above it, set by engine.c, so that
 * step.c calls nothing above it (no cycle between the engine's files). */
typedef struct
{
  /* recover.c: reload update @uid after a step that was not stored */
  void (*reload) (StgEngine *engine, const gchar *uid);
  /* update.c: the runtime refused queued action @act */
  void (*act_failed) (StgEngine *engine, const StgAct *act, const GError *error);
  /* engine.c: a noted slot's news, inside the news step */
  void (*look_at) (StgEngine *engine, gint64 job_id, gint32 instance);
  /* engine.c: a job with noted slots, once per job in the news step */
  void (*job_news) (StgEngine *engine, gint64 job_id);
  /* engine.c: stg_engine_check_invariants, after every step where
   * invariants are checked (STG_CHECK_INVARIANTS) */
  void (*check_invariants) (StgEngine *engine);
  /* engine.c: update @u moves on as far as it can, in a step of its own
   * (a timer or an answer it waited for, outside steps) */
  void (*wake) (StgUpdate *u);
} StgEngineUp;

void stg_engine_step_begin (StgEngine *engine);
/* Writes what the step changed in one transaction, then runs its runtime
 * actions. On failure the changed updates are reloaded from the store. */
gboolean stg_engine_step_end (StgEngine *engine, GError **error);

/* Marks a store failure inside a step: the step's end will not commit. */
void stg_engine_step_fail (StgEngine *engine, const GError *error);

/* TRUE while nothing in the step has failed: what it writes may still be
 * committed. A store call inside a step is made only then. */
gboolean stg_engine_step_ok (StgEngine *engine);

/* The one check after a store call inside a step: when @ok (the call's
 * result) is FALSE, the step fails with *@error, which is then cleared.
 * Returns @ok. */
gboolean stg_engine_step_check (StgEngine *engine, gboolean ok, GError **error);

/* Queues a runtime action for after the commit. */
void stg_engine_queue (StgEngine *engine, StgActKind kind, gint64 job_id, gint32 instance,
                       gint64 config, const gchar *uid);

/* Tells watchers about a job (and update, nullable) after the commit. */
void stg_engine_announce (StgEngine *engine, const ApiJobKey *job, const gchar *uid);

/* Tells watchers about plan @plan_uid after the commit. */
void stg_engine_announce_plan (StgEngine *engine, const gchar *plan_uid);

/* Marks @u's progress (and work item @idx's row) for writing with the step. */
void stg_update_touch (StgUpdate *u);
void stg_update_touch_work (StgUpdate *u, guint idx);

/* Writes @u's marked rows and progress now (inside the step's transaction). */
gboolean stg_update_write (StgUpdate *u, GError **error);

/* Records @message as an event of @u at its current status (inside a
 * step), and tells watchers. */
void stg_update_note_event (StgUpdate *u, const gchar *message);

/* Queues slot (@job_id, @instance) to be looked at in the next step. News
 * that arrives in one main-loop iteration is handled in one step. */
void stg_engine_note (StgEngine *engine, gint64 job_id, gint32 instance);

/* An empty set of noted slots (StgSlotKey*, owned). */
GHashTable *stg_engine_news_new (void);
