/* gate_private.h: gates as the engine runs them (gate.c): checking a gate
 * a request names, and StgGateRun, one gate tried attempt by attempt, for
 * a plan's stage, an update's batches or an instance's gates. Not for use
 * outside src/engine/. Main-loop thread only.
 */
#pragma once

#include "engine/engine.h"

/* Checks @gate (field names prefixed with @what). */
gboolean stg_gate_check (const ApiRolloutGate *gate, const gchar *what, GError **error);

/* One attempt's result: @attempt counts from 1; @last when the gate has
 * passed or has no attempt left (the run then does nothing more). Called
 * outside steps; the owner may free the run inside. */
typedef void (*StgGateResultFunc) (gpointer data, guint attempt, gboolean passed, gboolean last,
                                   const gchar *message);

typedef struct _StgGateRun StgGateRun;

/* Starts trying @gate for a job of @role (the first attempt on the next
 * iteration); a shell gate gets @env (nullable, NAME=VALUE, copied). */
StgGateRun *stg_gate_run_start (StgEngine *engine, const ApiRolloutGate *gate, const gchar *role,
                                const gchar *const *env, StgGateResultFunc func, gpointer data);
/* Stops it (an attempt in flight is cancelled and never reported). */
void stg_gate_run_free (StgGateRun *run);

/* How many attempts @gate has: 1 + retries; 0 when it waits (waitSecs). */
guint stg_gate_attempts_allowed (const ApiRolloutGate *gate);

/* What a shell gate of job @job moving it from config version
 * @from_version to @to_version gets: STAGGER_JOB, STAGGER_FROM_VERSION,
 * STAGGER_TO_VERSION (a GStrv to add to with g_environ_setenv). */
gchar **stg_gate_environ (const ApiJobKey *job, gint from_version, gint to_version);
