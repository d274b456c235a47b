# src/zk/local.mk: ZooKeeper ServerSets (GLib, json-glib and ZooKeeper's C
# client, libzookeeper_mt): a member kept in place (serverset.c), the
# settings, auth file and member JSON, and reads for clients (zk.c). Used by
# stagger-thermos (an instance announced), staggerd (the leader announced)
# and stagger (the leader found).
noinst_LIBRARIES += libstg_zk.a
libstg_zk_a_SOURCES = \
	src/zk/zk.c src/zk/zk.h src/zk/zk_private.h \
	src/zk/serverset.c
EXTRA_DIST += src/zk/local.mk
