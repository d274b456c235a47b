# src/daemon/local.mk: staggerd itself.
noinst_LIBRARIES += libstg_daemon.a
libstg_daemon_a_SOURCES = src/daemon/daemon.c src/daemon/daemon.h src/daemon/daemon_private.h \
	src/daemon/cluster.c \
	src/daemon/instance_users.c src/daemon/instance_users.h \
	src/daemon/leadership.c src/daemon/leadership.h \
	src/daemon/settings.c src/daemon/settings.h \
	src/daemon/systemd.c src/daemon/systemd.h \
	src/daemon/zookeeper.c src/daemon/zookeeper.h

# Layers in link order: each library needs only those after it.
STG_CORE_LIBS = libstg_daemon.a libstg_webui.a libstg_api.a libstg_engine.a libstg_local.a \
	libstg_fleet.a libstg_simulated.a libstg_senders.a libstg_runtime.a \
	libstg_store.a libstg_thermos.a libstg_zk.a libstg_spawn.a libstg_common.a libstg_gen.a

sbin_PROGRAMS += staggerd
staggerd_SOURCES = src/daemon/main.c
staggerd_LDADD = $(STG_CORE_LIBS) $(STG_LIBS)
EXTRA_DIST += src/daemon/local.mk
