/* engine_fixture.h: a real store on a temporary file, the fake clock, the
 * scripted runtime and an engine over them, plus helpers to build requests
 * and read results, for the engine's Check suites. Test processes only. */
#pragma once

#include <check.h>

#include "common/clock.h"
#include "engine/engine.h"
#include "scripted_runtime.h"
#include "store/store.h"

typedef struct
{
  gchar *dir;
  gchar *db;
  StgStore *store;
  StgClock *clock;
  ScriptedRuntime *rt;
  StgEngine *engine;
  ApiJobKey *key;         /* www/prod/app */
  gint64 job_id;
  gint64 v1;              /* the job's first config */
  gint min_running;       /* lowest count of RUNNING slots seen (scripted_runtime_on_change) */
  StgEngineLimits limits; /* the engine's, when custom_limits (set them, then fx_restart) */
  gboolean custom_limits;
} Fx;

extern Fx fx;

#define T0 1000000000000LL   /* the fake clock's start */

void fx_setup (void);
void fx_teardown (void);

/* A new engine over the same store file, with a new runtime that has the
 * slots given by @seed (called with the new runtime), as after a restart. */
void fx_restart (void (*seed) (ScriptedRuntime *rt, gpointer data), gpointer data);

/* A task config of the fixture's job whose executor data is @data. */
ApiTaskConfig *fx_config (const gchar *data);

/* Creates the job with @n instances of config "v1", lets them come up, and
 * clears the runtime's log. */
void fx_create_job (gint32 n);

/* A request for @count instances of config @data with Aurora's defaults:
 * Queue(1), watch 1 s, no tolerated failures, rollback on failure. */
ApiJobUpdateRequest *fx_request (const gchar *data, gint32 count);

/* Starts @request; fails the test on error. */
ApiJobUpdateKey *fx_start (ApiJobUpdateRequest *request);

/* Moves the clock forward, then checks the engine's invariants. */
void fx_run (gint64 ms);

/* The update's status, from the store. */
gint fx_status (ApiJobUpdateKey *key);

/* The update's row id and the config id it moves to. */
gint64 fx_update_id (ApiJobUpdateKey *key);
gint64 fx_desired (ApiJobUpdateKey *key);

/* Statuses of the update's events, as "ROLLING_FORWARD ROLLED_FORWARD". */
gchar *fx_update_events (ApiJobUpdateKey *key);

/* Instance events as "0:UPDATING 0:UPDATED ...". */
gchar *fx_instance_events (ApiJobUpdateKey *key);

/* The runtime's log as one string, and cleared. */
gchar *fx_take_log (void);

/* The config id the store says instance @i should run (0: no row). */
gint64 fx_intent (gint32 i);

/* Watches RUNNING slots: fx.min_running keeps the lowest count seen. */
void fx_watch_running (void);

/* The runtime log expected when instances @ids ("0 1") are applied config
 * @config, in that order. */
gchar *fx_expect_applies (const gchar *ids, gint64 config);

/* Gives @r's settings a Batch, Queue or VariableBatch strategy. */
void fx_set_strategy_batch (ApiJobUpdateRequest *r, gint32 size, gboolean autopause);
void fx_set_strategy_queue (ApiJobUpdateRequest *r, gint32 size);
void fx_set_strategy_variable (ApiJobUpdateRequest *r, const gint32 *sizes, guint n,
                               gboolean autopause);
