# src/cli/local.mk: stagger, the command-line client.
bin_PROGRAMS += stagger
noinst_LIBRARIES += libstg_cli.a
libstg_cli_a_SOURCES = \
	src/cli/cli.h \
	src/cli/client.c src/cli/client.h src/cli/client_private.h src/cli/client_sidecar.c \
	src/cli/cmd_job.c src/cli/cmd_history.c src/cli/cmd_task.c \
	src/cli/cmd_update.c src/cli/cmd_timeline.c src/cli/updates.h src/cli/cmd_cluster.c \
	src/cli/cmd_host.c \
	src/cli/cmd_plan.c src/cli/cmd_quota.c src/cli/cmd_admin.c src/cli/cmd_maintenance.c \
	src/cli/cmd_sidecar.c \
	src/cli/command.c \
	src/cli/connect.c src/cli/connect.h \
	src/cli/http_client_transport.c src/cli/http_client_transport.h \
	src/cli/job_config.c \
	src/cli/jobfile.c src/cli/jobfile.h src/cli/jobfile_private.h \
	src/cli/jobfile_read.c src/cli/jobfile_task.c src/cli/jobfile_aurora.c \
	src/cli/jobfile_fleet.c src/cli/jobfile_gates.c src/cli/jobfile_plan.c src/cli/jobfile_vars.c \
	src/cli/jobfile_sidecar.c src/cli/jobfile_sla.c \
	src/cli/output.c src/cli/output.h \
	src/cli/suggest.c src/cli/suggest.h \
	src/cli/update_settings.c
stagger_SOURCES = src/cli/main.c
stagger_LDADD = libstg_cli.a libstg_thermos.a libstg_zk.a libstg_common.a libstg_gen.a $(STG_LIBS)
EXTRA_DIST += src/cli/local.mk
