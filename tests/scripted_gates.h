/* scripted_gates.h: a StgGateRunner for the engine's Check suites: each
 * attempt of a gate named N takes the next outcome scripted for N
 * ("pass:MESSAGE", "fail:MESSAGE" or "hang"; none left: it passes; or a
 * failure its environment calls for, scripted_gates_fail_when) and
 * answers 100 ms later on the fake clock; "hang" never answers. Every
 * attempt is logged by name, with the environment it was given. Test
 * processes only. */
#pragma once

#include "common/clock.h"
#include "senders/gates.h"

typedef struct _ScriptedGates ScriptedGates;

ScriptedGates *scripted_gates_new (StgClock *clock);
/* The runner to hand the engine (freed with the ScriptedGates). */
StgGateRunner *scripted_gates_runner (ScriptedGates *g);
void scripted_gates_free (ScriptedGates *g);

/* Drops the attempts the engine cancelled (and their timers): before the
 * engine that made them is replaced. */
void scripted_gates_sweep (ScriptedGates *g);

/* The next outcome of gate @name. */
void scripted_gates_script (ScriptedGates *g, const gchar *name, const gchar *outcome);

/* Gate @name fails (its message "VAR=VALUE") whenever its environment
 * holds @var=@value, whatever is scripted. */
void scripted_gates_fail_when (ScriptedGates *g, const gchar *name, const gchar *var,
                               const gchar *value);

/* The gates attempted so far, as "a b a", and cleared. */
gchar *scripted_gates_log (ScriptedGates *g);

/* The value of @var in the environment of gate @name's last attempt, or
 * NULL. */
const gchar *scripted_gates_env (ScriptedGates *g, const gchar *name, const gchar *var);

/* How many attempts of gate @name were made. */
guint scripted_gates_attempts (ScriptedGates *g, const gchar *name);
