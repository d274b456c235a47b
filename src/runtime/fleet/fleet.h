/* fleet.h: the fleet runtime: instances as containers on many hosts.
 *
 * StgFleetRuntime keeps the runtime contract (runtime.h) by driving each
 * host's container engine (Docker or Podman) through the Docker Engine API
 * (docker.h): it places each instance on a host under the job's constraints
 * (place.h) and keeps it there across replaces, runs the task config's
 * image with its command, environment and named ports, checks health over
 * HTTP at the host's address, and labels every container with this data
 * directory's marker, job, instance, run and config, so that a restarted
 * staggerd adopts its containers, removes its strays and never touches a
 * container it did not create. Calls the store and docker.c. Main-loop
 * thread only.
 */
#pragma once

#include "common/clock.h"
#include "runtime/place.h"
#include "runtime/health.h"
#include "runtime/runtime.h"
#include "store/store.h"

G_BEGIN_DECLS

typedef struct
{
  gchar *data_dir;           /* its path names this staggerd's containers (the marker) */
  gchar *cluster;            /* for {{cluster}} and the labels */
  gint port_min;             /* host ports come from port_min..port_max */
  gint port_max;
  StgFleetOptions fleet;     /* hosts and timings */
  StgHealthCounts *health_counts; /* (nullable) borrowed: where health checks are counted */
  gint64 max_pids;                /* processes and threads per container (PidsLimit); 0: none */
  gchar *thermos_bundle;          /* (nullable) on every host: stagger-thermos as containers run it
                                (scripts/thermos-bundle); NULL: AuroraExecutor tasks refused */
  gboolean announcing;            /* staggerd announces in ZooKeeper: an announced task is refused
                                     (containers are not announced yet) */
  gchar *anchor;                  /* (nullable) stagger-anchor on this machine, imported into each
                                     host as the pods' anchor image; NULL: no pods, and so no
                                     sidecar sets */
} StgFleetRuntimeOptions;

/* A fleet runtime over @store and @clock (borrowed); fails without hosts
 * or with a bad endpoint. */
StgRuntime *stg_fleet_runtime_new (StgStore *store, StgClock *clock, const StgFleetRuntimeOptions *options,
                                   GError **error);

/* Lists every host's containers (waiting on the main loop for at most the
 * call timeout), adopts those the store expects, removes this staggerd's
 * strays, and starts what should run but does not. Call once, before the
 * engine recovers. */
gboolean stg_fleet_runtime_adopt (StgRuntime *rt, GError **error);

/* Whether a slot's state machine (FleetState in fleet_private.h, its
 * states numbered as listed there) has the arrow @from -> @to; a state to
 * itself is no change, always allowed. */
gboolean stg_fleet_state_allowed (gint from, gint to);

G_END_DECLS
