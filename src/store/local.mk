# src/store/local.mk: persistence (SQLite or PostgreSQL) and its embedded migrations.
noinst_LIBRARIES += libstg_store.a
libstg_store_a_SOURCES = \
	src/store/store.c src/store/store.h src/store/store_private.h \
	src/store/db.c src/store/db.h src/store/db_private.h \
	src/store/db_sqlite.c src/store/db_pg.c \
	src/store/leader.c src/store/replicas.c \
	src/store/backup.c \
	src/store/jobs.c \
	src/store/config_history.c \
	src/store/ended_tasks.c \
	src/store/job_lookups.c \
	src/store/plans.c \
	src/store/quotas.c \
	src/store/retention.c \
	src/store/runtime_facts.c \
	src/store/scheduled_task.c \
	src/store/sidecars.c \
	src/store/timeline.c \
	src/store/updates.c
nodist_libstg_store_a_SOURCES = src/store/schema-resources.c

STG_SCHEMA_FILES = $(srcdir)/schema/001_initial.sql $(srcdir)/schema/002_engine.sql \
	$(srcdir)/schema/001_initial.pg.sql $(srcdir)/schema/003_leader.sql \
	$(srcdir)/schema/006_runtime.sql $(srcdir)/schema/006_runtime.pg.sql \
	$(srcdir)/schema/007_fleet.sql $(srcdir)/schema/007_fleet.pg.sql \
	$(srcdir)/schema/008_cluster.sql $(srcdir)/schema/009_hosts.sql \
	$(srcdir)/schema/010_plans.sql $(srcdir)/schema/010_plans.pg.sql \
	$(srcdir)/schema/011_quotas.sql $(srcdir)/schema/011_quotas.pg.sql \
	$(srcdir)/schema/014_surge.sql $(srcdir)/schema/014_surge.pg.sql \
	$(srcdir)/schema/015_reasons.sql \
	$(srcdir)/schema/016_maintenance.sql $(srcdir)/schema/016_maintenance.pg.sql \
	$(srcdir)/schema/017_sidecars.sql $(srcdir)/schema/017_sidecars.pg.sql \
	$(srcdir)/schema/018_notices.sql $(srcdir)/schema/018_notices.pg.sql \
	$(srcdir)/schema/019_stage_ends.sql $(srcdir)/schema/019_stage_ends.pg.sql \
	$(srcdir)/schema/020_ended_tasks.sql $(srcdir)/schema/020_ended_tasks.pg.sql \
	$(srcdir)/schema/021_batches.sql
libstg_store_a_SOURCES += src/store/fleet_facts.c src/store/maintenance.c \
	src/store/notices.c src/store/notices.h src/store/plans.h
src/store/schema-resources.c: $(srcdir)/schema/schema.gresource.xml $(STG_SCHEMA_FILES)
	$(AM_V_GEN)$(MKDIR_P) src/store && \
	$(GLIB_COMPILE_RESOURCES) --target=$@ --sourcedir=$(srcdir)/schema \
	  --generate-source --c-name stg_schema $(srcdir)/schema/schema.gresource.xml
BUILT_SOURCES += src/store/schema-resources.c
CLEANFILES += src/store/schema-resources.c
EXTRA_DIST += src/store/local.mk schema/schema.gresource.xml $(STG_SCHEMA_FILES)
