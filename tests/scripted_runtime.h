/* scripted_runtime.h: a runtime for engine tests, driven by the fake clock.
 *
 * It keeps the runtime contract (runtime.h) with no process, on the slot
 * model the real runtimes share (runtime/slot.h: slots made from the store,
 * their phases and failures; its phases are not recorded). Apply makes a
 * slot STARTING at once and, after the slot's delay, RUNNING (or whatever
 * the script says for that instance and config); kill makes it KILLING and,
 * after the delay, ABSENT (removing the instance row, as a real runtime
 * does). Every call is logged as "apply I C", "kill I", "restart I" or
 * "reconcile I;J;..." (an explicit batch's instances, sorted), and
 * every change is announced from a clock timer, never from inside a call.
 * Test processes only.
 */
#pragma once

#include "common/clock.h"
#include "runtime/runtime.h"
#include "runtime/slot.h"
#include "store/store.h"

G_BEGIN_DECLS

typedef enum
{
  SCRIPT_HEALTHY,   /* comes up and stays healthy */
  SCRIPT_CRASH,     /* starts, then fails (a failed run) */
  SCRIPT_HANG,      /* starts and never becomes healthy */
  SCRIPT_FINISH,    /* starts, then exits 0 */
} ScriptBehaviour;

typedef struct _ScriptedRuntime ScriptedRuntime;

ScriptedRuntime *scripted_runtime_new (StgClock *clock, StgStore *store, gint64 delay_ms);

/* Whether runtimes made from now on record their slots' phases as
 * TaskEvents in the store (off: nothing is written for them). */
void scripted_runtime_set_recording (gboolean on);
StgRuntime *scripted_runtime_base (ScriptedRuntime *rt);

/* What instance @instance does when asked to run config @config (0: any). */
void scripted_runtime_behave (ScriptedRuntime *rt, gint32 instance, gint64 config,
                              ScriptBehaviour behaviour);

/* The cause (StgTaskObservation.cause) a crash of @instance reports, as a
 * real runtime says why a run failed; without one it reports none. */
void scripted_runtime_cause (ScriptedRuntime *rt, gint32 instance, const gchar *cause);

/* A different delay for one instance. */
void scripted_runtime_delay (ScriptedRuntime *rt, gint32 instance, gint64 delay_ms);

/* Makes a slot RUNNING @config, healthy since @since_ms, without a call. */
void scripted_runtime_seed (ScriptedRuntime *rt, gint64 job_id, gint32 instance, gint64 config,
                            gint64 since_ms);

/* Sets a slot's observation by hand and announces it (on the next timer). */
void scripted_runtime_set (ScriptedRuntime *rt, gint64 job_id, gint32 instance, StgTaskPhase phase,
                           gint64 config, guint32 failures);

/* The calls so far, and a copy joined with ", " (for messages). */
GPtrArray *scripted_runtime_log (ScriptedRuntime *rt);
gchar *scripted_runtime_log_text (ScriptedRuntime *rt);
void scripted_runtime_clear_log (ScriptedRuntime *rt);

/* Slots of job @job_id that are RUNNING. */
guint scripted_runtime_running (ScriptedRuntime *rt, gint64 job_id);

/* Called after every change of any slot (to check invariants). */
void scripted_runtime_on_change (ScriptedRuntime *rt, void (*func) (gpointer), gpointer data);

G_END_DECLS
