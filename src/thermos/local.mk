# src/thermos/local.mk: AuroraExecutor (Thermos) tasks. libstg_thermos reads
# and checks the executor data (common, GLib and json-glib only), so that
# staggerd can check a task when it is submitted; stagger-thermos runs one
# instance of such a task.
noinst_LIBRARIES += libstg_thermos.a
libstg_thermos_a_SOURCES = \
	src/thermos/task.c src/thermos/task.h src/thermos/task_private.h \
	src/thermos/task_read.c \
	src/thermos/read.c \
	src/thermos/ports.c \
	src/thermos/template.c src/thermos/template.h \
	src/thermos/planner.c src/thermos/planner.h
EXTRA_DIST += src/thermos/local.mk

# stagger-thermos is started by staggerd (and mounted into containers), not
# by people: it goes to $(pkglibexecdir), i.e. $(libexecdir)/stagger.
pkglibexec_PROGRAMS = stagger-thermos
stagger_thermos_SOURCES = \
	src/thermos/runner_main.c src/thermos/runner.c src/thermos/runner.h \
	src/thermos/runner_spawn.c src/thermos/runner_tree.c src/thermos/runner_logs.c \
	src/thermos/runner_state.c src/thermos/runner_lifecycle.c \
	src/thermos/runner_announce.c
stagger_thermos_LDADD = libstg_thermos.a libstg_zk.a libstg_spawn.a libstg_common.a $(ZK_LIBS) \
	$(JSON_GLIB_LIBS) $(GLIB_LIBS) -lm

# stagger-thermos as containers get it (scripts/thermos-bundle): the program
# with its shared libraries and dynamic loader, which the fleet runtime
# mounts read-only into a task's image; installed as
# $(pkglibexecdir)/thermos-bundle.
thermos-bundle/stagger-thermos: stagger-thermos$(EXEEXT) $(top_srcdir)/scripts/thermos-bundle
	$(SHELL) $(top_srcdir)/scripts/thermos-bundle stagger-thermos$(EXEEXT) thermos-bundle
all-local: thermos-bundle/stagger-thermos
clean-local: clean-thermos-bundle
clean-thermos-bundle:
	rm -rf thermos-bundle thermos-bundle.tmp
install-exec-local: thermos-bundle/stagger-thermos
	$(MKDIR_P) $(DESTDIR)$(pkglibexecdir)
	rm -rf $(DESTDIR)$(pkglibexecdir)/thermos-bundle
	cp -R thermos-bundle $(DESTDIR)$(pkglibexecdir)/thermos-bundle
uninstall-local:
	rm -rf $(DESTDIR)$(pkglibexecdir)/thermos-bundle
.PHONY: clean-thermos-bundle
EXTRA_DIST += scripts/thermos-bundle
