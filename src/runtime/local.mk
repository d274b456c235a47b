# src/runtime/local.mk: the runtime layer, one library per folder: the seam,
# the slot model and what every runtime shares (libstg_runtime.a, this
# folder); the local process runtime (local/), the fleet runtime (fleet/:
# containers on many hosts through the Docker Engine API) and the simulated
# one (simulated/), each on top of it.
noinst_LIBRARIES += libstg_runtime.a libstg_local.a libstg_fleet.a libstg_simulated.a
libstg_runtime_a_SOURCES = \
	src/runtime/runtime.c src/runtime/runtime.h \
	src/runtime/executor.c src/runtime/executor.h \
	src/runtime/health.c src/runtime/health.h \
	src/runtime/place.c src/runtime/place.h \
	src/runtime/slot.c src/runtime/slot.h \
	src/runtime/spec_cache.c src/runtime/spec_cache.h \
	src/runtime/thermos_task.c src/runtime/thermos_task.h
libstg_local_a_SOURCES = \
	src/runtime/local/local.c src/runtime/local/local.h src/runtime/local/local_private.h \
	src/runtime/local/adopt.c \
	src/runtime/local/disk_usage.c src/runtime/local/disk_usage.h \
	src/runtime/local/environ.c \
	src/runtime/local/local_disk.c src/runtime/local/local_limits.c \
	src/runtime/local/local_place.c src/runtime/local/local_slot.c \
	src/runtime/local/ports.c \
	src/runtime/local/run.c src/runtime/local/run_launch.c src/runtime/local/run_state.c \
	src/runtime/local/sandbox.c
libstg_fleet_a_SOURCES = \
	src/runtime/fleet/docker.c src/runtime/fleet/docker.h src/runtime/fleet/docker_private.h \
	src/runtime/fleet/docker_calls.c \
	src/runtime/fleet/fleet.c src/runtime/fleet/fleet.h src/runtime/fleet/fleet_private.h \
	src/runtime/fleet/fleet_slot.c src/runtime/fleet/fleet_box.c \
	src/runtime/fleet/fleet_container.c src/runtime/fleet/fleet_place.c \
	src/runtime/fleet/fleet_health.c \
	src/runtime/fleet/fleet_sync.c src/runtime/fleet/fleet_drain.c \
	src/runtime/fleet/fleet_hooks.c src/runtime/fleet/fleet_logs.c \
	src/runtime/fleet/fleet_anchor.c src/runtime/fleet/fleet_pod.c \
	src/runtime/fleet/fleet_pod_spec.c \
	src/runtime/fleet/fleet_sidecar.c src/runtime/fleet/fleet_sidecar_health.c \
	src/runtime/fleet/fleet_sidecar_members.c src/runtime/fleet/fleet_sidecar_ops.c \
	src/runtime/fleet/fleet_sidecar_private.h
libstg_simulated_a_SOURCES = \
	src/runtime/simulated/simulated.c src/runtime/simulated/simulated.h
EXTRA_DIST += src/runtime/local.mk
