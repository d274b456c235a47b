/* surge_private.h: an update's surge instances (surge.c): StgSurge, one
 * extra instance, StgSurges, what an update keeps of them, and what
 * surge.c offers the update's other files. Not for use outside
 * src/engine/. Main-loop thread only.
 */
#pragma once

#include "engine/settings_private.h"

typedef struct _StgUpdate StgUpdate;

/* An extra instance an update with maxSurge runs beyond the job's count
 * (surge.c): a new instance slot, with an id past every instance the job
 * has or will have, running the config the current direction moves to.
 * Its row (update_surge) is written with the step, like work rows. */
typedef struct
{
  gint32 instance;
  gint64 config;        /* what it should run; 0: being removed */
  gint32 failures;      /* failed runs counted against maxPerInstanceFailures */
  gint64 seen_failures; /* the runtime's failure count already counted */
  gint64 started_ms;    /* when it was last asked to start (maxInstanceStartMs) */
  /* memory only */
  gboolean asked; /* the runtime was asked for config (or to kill it) */
  gboolean dirty; /* its row is to be written with the step */
} StgSurge;

/* An update's surge instances (update->surge). */
typedef struct
{
  GArray *list; /* StgSurge, ascending instance */
  gint32 next;  /* the id the next surge instance takes */
  guint failed; /* surge instances failed in this direction */
  guint timer;  /* maxInstanceStartMs of starting surge instances */
} StgSurges;

/* The id of the first surge instance of an update making @diff: past every
 * instance the job has or will have. */
gint32 stg_surge_first_id (const StgDiff *diff);

/* Brings @u's surge instances to what its current direction wants (inside
 * a step, running only): up to maxSurge instances of the direction's
 * config while it has instances to replace, none once its work is done.
 * TRUE when no surge instance is left, so the update may finish. */
gboolean stg_surge_pump (StgUpdate *u);

/* Looks at @instance if it is one of @u's surge instances (inside a step,
 * running only): a failure counted, the runtime asked again, one gone
 * forgotten. FALSE when it is not a surge instance. */
gboolean stg_surge_on_instance (StgUpdate *u, gint32 instance);

/* Looks at every surge instance of @u (resume, pulse, recovery). */
void stg_surge_evaluate_all (StgUpdate *u);

/* The update ends (inside the step that ends it): its surge instances are
 * removed and kept in engine->leftover_surge until they are gone. */
void stg_surge_release (StgUpdate *u);

/* Loads @u's surge instances from the store (recover.c). */
gboolean stg_surge_load (StgUpdate *u, GError **error);

/* After recovery: surge instances of updates that are no longer active are
 * removed (their rows forgotten once they are gone). */
gboolean stg_surge_recover_leftovers (StgEngine *engine, GError **error);

/* News of a slot (inside a step): a leftover surge instance now gone is
 * forgotten. */
void stg_surge_leftover_news (StgEngine *engine, gint64 job_id, gint32 instance);
