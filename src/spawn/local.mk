# src/spawn/local.mk: starting and finding processes (GLib only), below the
# runtime and the Thermos runner: spawn.c is the one place in src/ that
# forks and execs (scripts/spawn-check), identity.c the user a child
# becomes, process.c start times, pidfds and marked processes, cgroup.c
# the control groups that hold instances to their resources.
noinst_LIBRARIES += libstg_spawn.a
libstg_spawn_a_SOURCES = \
	src/spawn/spawn.c src/spawn/spawn.h \
	src/spawn/identity.c src/spawn/identity.h \
	src/spawn/process.c src/spawn/process.h \
	src/spawn/cgroup.c src/spawn/cgroup.h
EXTRA_DIST += src/spawn/local.mk
