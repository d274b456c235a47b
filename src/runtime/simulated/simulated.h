/* simulated.h: a runtime without processes, for benchmarks and scale demos.
 *
 * StgSimulatedRuntime keeps the runtime contract (runtime.h) with instances
 * that exist only as rows: an applied config is RUNNING and healthy at
 * once, a kill removes the slot, and a restart of the daemon finds every
 * instance running what the store says it runs. It records its facts and
 * task events in the store like the local runtime, so the web UI and the
 * RPCs show the same things. Any executor config is accepted. Main-loop
 * thread only.
 */
#pragma once

#include "common/clock.h"
#include "runtime/runtime.h"
#include "store/store.h"

G_BEGIN_DECLS

/* A simulated runtime over @store and @clock (borrowed); takes over the
 * instances the store knows. */
StgRuntime *stg_simulated_runtime_new (StgStore *store, StgClock *clock, GError **error);

G_END_DECLS
