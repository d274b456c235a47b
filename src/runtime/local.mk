# src/runtime/local.mk: the runtime seam, the local process runtime and the
# simulated one; beside them the gate runner and the webhook notifier.
noinst_LIBRARIES += libstg_runtime.a
libstg_runtime_a_SOURCES = \
	src/runtime/runtime.c src/runtime/runtime.h \
	src/runtime/adopt.c \
	src/runtime/disk_usage.c src/runtime/disk_usage.h \
	src/runtime/environ.c \
	src/runtime/executor.c src/runtime/executor.h \
	src/runtime/gates.c src/runtime/gates.h \
	src/runtime/health.c src/runtime/health.h \
	src/runtime/host_guard.c src/runtime/host_guard.h \
	src/runtime/local.c src/runtime/local.h src/runtime/local_private.h \
	src/runtime/local_disk.c src/runtime/local_limits.c src/runtime/local_place.c \
	src/runtime/notify.c src/runtime/notify.h src/runtime/notify_options.c \
	src/runtime/ports.c \
	src/runtime/run.c src/runtime/run_launch.c \
	src/runtime/sandbox.c \
	src/runtime/slot.c src/runtime/slot.h \
	src/runtime/simulated.c src/runtime/simulated.h \
	src/runtime/spec_cache.c src/runtime/spec_cache.h \
	src/runtime/thermos_task.c src/runtime/thermos_task.h
# The fleet runtime: containers on many hosts through the Docker Engine API.
libstg_runtime_a_SOURCES += \
	src/runtime/docker.c src/runtime/docker.h src/runtime/docker_private.h \
	src/runtime/docker_calls.c \
	src/runtime/fleet.c src/runtime/fleet.h src/runtime/fleet_private.h \
	src/runtime/fleet_container.c src/runtime/fleet_place.c src/runtime/fleet_health.c \
	src/runtime/fleet_hosts.c src/runtime/fleet_hosts.h \
	src/runtime/fleet_sync.c src/runtime/fleet_drain.c src/runtime/fleet_hooks.c \
	src/runtime/fleet_logs.c \
	src/runtime/fleet_anchor.c src/runtime/fleet_pod.c src/runtime/fleet_pod_spec.c \
	src/runtime/fleet_sidecar.c src/runtime/fleet_sidecar_health.c \
	src/runtime/fleet_sidecar_members.c src/runtime/fleet_sidecar_ops.c \
	src/runtime/fleet_sidecar_private.h
EXTRA_DIST += src/runtime/local.mk
