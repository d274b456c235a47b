# tests/local.mk: Check suites (one per module) and integration tests.
# Each suite is a program; `make check` runs them all in parallel.

check_LIBRARIES = libstg_testutil.a
libstg_testutil_a_SOURCES = tests/testutil.c tests/testutil.h tests/pgtest.c tests/pgtest.h \
	tests/framed_client.c tests/framed_client.h tests/daemon_fixture.c tests/daemon_fixture.h \
	tests/webhook_receiver.c tests/webhook_receiver.h
libstg_testutil_a_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)

STG_TEST_LDADD = libstg_testutil.a $(STG_CORE_LIBS) $(CHECK_LIBS) $(STG_LIBS)
STG_TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)

STG_CHECK_SUITES = \
	tests/common_test \
	tests/body_buffer_test \
	tests/store_test \
	tests/daemon_test \
	tests/webui_test \
	tests/engine_test \
	tests/engine_aurora_test \
	tests/engine_sla_test \
	tests/engine_control_test \
	tests/engine_controls_test \
	tests/engine_plan_test \
	tests/engine_rollout_test \
	tests/engine_timeline_test \
	tests/plan_view_test \
	tests/gates_test \
	tests/plan_daemon_test \
	tests/notify_daemon_test \
	tests/engine_recover_test \
	tests/runtime_test \
	tests/runtime_hooks_test \
	tests/spawn_test \
	tests/cgroup_test \
	tests/runtime_sandbox_test \
	tests/runtime_place_test \
	tests/runtime_disk_test \
	tests/runtime_limits_test \
	tests/runtime_daemon_test \
	tests/admin_daemon_test \
	tests/crash_test \
	tests/browser_test \
	tests/cross_site_test \
	tests/ha_test \
	tests/ha_replicas_test \
	tests/roles_test

check_PROGRAMS += $(STG_CHECK_SUITES)
TESTS += $(STG_CHECK_SUITES) tests/man_test.sh tests/spawn_check_test.sh

tests_common_test_SOURCES = tests/common_test.c
tests_common_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_common_test_LDADD = $(STG_TEST_LDADD)

tests_body_buffer_test_SOURCES = tests/body_buffer_test.c
tests_body_buffer_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_body_buffer_test_LDADD = $(STG_TEST_LDADD)

tests_store_test_SOURCES = tests/store_test.c tests/store_test.h tests/store_notices_test.c
tests_store_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_store_test_LDADD = $(STG_TEST_LDADD)

# A tool the Python suites use: rewrites a Thrift message between protocols.
check_PROGRAMS += tests/thrift_transcode
tests_thrift_transcode_SOURCES = tests/thrift_transcode.c
tests_thrift_transcode_LDADD = $(STG_CORE_LIBS) $(STG_LIBS)

# A tool the migration tests use: a store left at a given schema version.
check_PROGRAMS += tests/store_at
tests_store_at_SOURCES = tests/store_at.c
tests_store_at_LDADD = $(STG_CORE_LIBS) $(STG_LIBS)

# Python suites (python3-thrift): each prints "N passed, N failed".
STG_PY_SUITES = tests/json_compat.py tests/api_compat.py tests/auth_compat.py tests/cli_test.py \
	tests/aurora_compat.py tests/aurora_e2e.py \
	tests/limits_compat.py tests/packaging_test.py tests/demo_test.py tests/ha_compat.py \
	tests/ha_takeover.py tests/ha_schema_test.py tests/migration_test.py tests/pg_failover_test.py \
	tests/fleet_demo_test.py tests/partition_checker_test.py tests/partition_test.py \
	tests/leak_check_test.py tests/beside_test.py tests/local_pending_test.py tests/zk_test.py
TESTS += $(STG_PY_SUITES)
TEST_EXTENSIONS = .py
PY_LOG_COMPILER = $(PYTHON3)
EXTRA_DIST += $(STG_PY_SUITES) tests/stgtest.py tests/netbed.py tests/partition_history.py
# What the partition campaign keeps for a reader: its history and logs.
CLEANFILES += partition-*.jsonl partition-*.log

tests_daemon_test_SOURCES = tests/daemon_test.c $(STG_ROLLOUT)
tests_daemon_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_daemon_test_LDADD = $(STG_TEST_LDADD)

STG_ENGINE_FIXTURE = tests/engine_fixture.c tests/engine_fixture.h \
	tests/scripted_runtime.c tests/scripted_runtime.h \
	tests/scripted_gates.c tests/scripted_gates.h

tests_engine_test_SOURCES = tests/engine_test.c $(STG_ENGINE_FIXTURE)
tests_engine_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_engine_test_LDADD = $(STG_TEST_LDADD)

tests_plan_daemon_test_SOURCES = tests/plan_daemon_test.c tests/rollout.c tests/rollout.h
tests_plan_daemon_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_plan_daemon_test_LDADD = $(STG_TEST_LDADD)

tests_notify_daemon_test_SOURCES = tests/notify_daemon_test.c $(STG_ROLLOUT)
tests_notify_daemon_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_notify_daemon_test_LDADD = $(STG_TEST_LDADD)

tests_gates_test_SOURCES = tests/gates_test.c
tests_gates_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_gates_test_LDADD = $(STG_TEST_LDADD)

tests_engine_aurora_test_SOURCES = tests/engine_aurora_test.c $(STG_ENGINE_FIXTURE)
tests_engine_aurora_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_engine_aurora_test_LDADD = $(STG_TEST_LDADD)

tests_engine_sla_test_SOURCES = tests/engine_sla_test.c $(STG_ENGINE_FIXTURE)
tests_engine_sla_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_engine_sla_test_LDADD = $(STG_TEST_LDADD)

tests_engine_plan_test_SOURCES = tests/engine_plan_test.c $(STG_ENGINE_FIXTURE)
tests_engine_plan_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_engine_plan_test_LDADD = $(STG_TEST_LDADD)

tests_engine_rollout_test_SOURCES = tests/engine_rollout_test.c $(STG_ENGINE_FIXTURE)
tests_engine_rollout_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_engine_rollout_test_LDADD = $(STG_TEST_LDADD)

tests_engine_timeline_test_SOURCES = tests/engine_timeline_test.c $(STG_ENGINE_FIXTURE)
tests_engine_timeline_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_engine_timeline_test_LDADD = $(STG_TEST_LDADD)

tests_plan_view_test_SOURCES = tests/plan_view_test.c $(STG_ENGINE_FIXTURE)
tests_plan_view_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_plan_view_test_LDADD = $(STG_TEST_LDADD)

tests_engine_control_test_SOURCES = tests/engine_control_test.c $(STG_ENGINE_FIXTURE)
tests_engine_control_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_engine_control_test_LDADD = $(STG_TEST_LDADD)

tests_engine_controls_test_SOURCES = tests/engine_controls_test.c $(STG_ENGINE_FIXTURE)
tests_engine_controls_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_engine_controls_test_LDADD = $(STG_TEST_LDADD)

tests_engine_recover_test_SOURCES = tests/engine_recover_test.c $(STG_ENGINE_FIXTURE)
tests_engine_recover_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_engine_recover_test_LDADD = $(STG_TEST_LDADD)

tests_spawn_test_SOURCES = tests/spawn_test.c
tests_spawn_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_spawn_test_LDADD = $(STG_TEST_LDADD)

tests_cgroup_test_SOURCES = tests/cgroup_test.c
tests_cgroup_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_cgroup_test_LDADD = $(STG_TEST_LDADD)

tests_runtime_test_SOURCES = tests/runtime_test.c tests/runtime_fixture.c tests/runtime_fixture.h
tests_runtime_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_runtime_test_LDADD = $(STG_TEST_LDADD)

STG_ROLLOUT = tests/rollout.c tests/rollout.h

tests_runtime_hooks_test_SOURCES = tests/runtime_hooks_test.c tests/runtime_fixture.c \
	tests/runtime_fixture.h
tests_runtime_hooks_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_runtime_hooks_test_LDADD = $(STG_TEST_LDADD)

tests_runtime_sandbox_test_SOURCES = tests/runtime_sandbox_test.c tests/runtime_fixture.c \
	tests/runtime_fixture.h
tests_runtime_sandbox_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_runtime_sandbox_test_LDADD = $(STG_TEST_LDADD)

tests_runtime_disk_test_SOURCES = tests/runtime_disk_test.c tests/runtime_fixture.c \
	tests/runtime_fixture.h
tests_runtime_disk_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_runtime_disk_test_LDADD = $(STG_TEST_LDADD)

tests_runtime_limits_test_SOURCES = tests/runtime_limits_test.c tests/runtime_fixture.c \
	tests/runtime_fixture.h
tests_runtime_limits_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_runtime_limits_test_LDADD = $(STG_TEST_LDADD)

tests_runtime_place_test_SOURCES = tests/runtime_place_test.c tests/runtime_fixture.c \
	tests/runtime_fixture.h
tests_runtime_place_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_runtime_place_test_LDADD = $(STG_TEST_LDADD)

tests_admin_daemon_test_SOURCES = tests/admin_daemon_test.c $(STG_ROLLOUT)
tests_admin_daemon_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_admin_daemon_test_LDADD = $(STG_TEST_LDADD)

tests_runtime_daemon_test_SOURCES = tests/runtime_daemon_test.c $(STG_ROLLOUT)
tests_runtime_daemon_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_runtime_daemon_test_LDADD = $(STG_TEST_LDADD)

tests_crash_test_SOURCES = tests/crash_test.c $(STG_ROLLOUT)
tests_crash_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_crash_test_LDADD = $(STG_TEST_LDADD)
tests_cross_site_test_SOURCES = tests/cross_site_test.c tests/browser_env.c tests/browser_env.h
tests_cross_site_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_cross_site_test_LDADD = $(STG_TEST_LDADD)

tests_browser_test_SOURCES = tests/browser_test.c tests/browser_env.c tests/browser_env.h $(STG_ROLLOUT)
tests_browser_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_browser_test_LDADD = $(STG_TEST_LDADD)

tests_ha_test_SOURCES = tests/ha_test.c $(STG_ROLLOUT)
tests_ha_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_ha_test_LDADD = $(STG_TEST_LDADD)

tests_ha_replicas_test_SOURCES = tests/ha_replicas_test.c tests/browser_env.c tests/browser_env.h \
	$(STG_ROLLOUT)
tests_ha_replicas_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_ha_replicas_test_LDADD = $(STG_TEST_LDADD)

tests_webui_test_SOURCES = tests/webui_test.c $(STG_ROLLOUT)
tests_webui_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_webui_test_LDADD = $(STG_TEST_LDADD)

tests_roles_test_SOURCES = tests/roles_test.c tests/rollout.c tests/rollout.h
tests_roles_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_roles_test_LDADD = $(STG_TEST_LDADD)

# The integration tests run the staggerd built here ("make check" builds
# "all" first).
# GSlice's caches look like leaks to LeakSanitizer: allocate plainly.
AM_TESTS_ENVIRONMENT = \
	srcdir=$(srcdir); export srcdir; \
	CK_VERBOSITY=normal; export CK_VERBOSITY; \
	G_SLICE=always-malloc; export G_SLICE; \
	G_DEBUG=gc-friendly; export G_DEBUG; \
	PYTHONDONTWRITEBYTECODE=1; export PYTHONDONTWRITEBYTECODE; \
	STG_BUILDDIR='$(abs_top_builddir)'; export STG_BUILDDIR; \
	STG_SRCDIR='$(abs_top_srcdir)'; export STG_SRCDIR; \
	THRIFT='$(THRIFT_COMPILER)'; export THRIFT;

EXTRA_DIST += tests/local.mk tests/man_test.sh tests/spawn_check_test.sh \
	tests/browser/package.json tests/browser/package-lock.json tests/browser/watch_update.mjs \
	tests/browser/watch_plan.mjs tests/browser/cross_site.mjs tests/browser/visit_pages.mjs \
	tests/browser/sidecar_page.mjs tests/browser/chromium.mjs tests/browser/follow_leader.mjs

# The browser test's node_modules and screenshots.
clean-local: clean-browser-test
clean-browser-test:
	rm -rf tests/browser-env tests/browser-shots tests/browser-env-security \
		tests/browser-env-sidecar tests/browser-env-ha
.PHONY: clean-browser-test

# Fuzz targets. With --enable-fuzzing (clang) they are libFuzzer programs and
# `make check` runs each for a few seconds from the seed corpus; otherwise
# tests/fuzz/replay.c drives them over the seeds and their mutations.
STG_FUZZ_CFLAGS = $(AM_CFLAGS) -I$(srcdir)/tests/fuzz
if FUZZING
STG_FUZZ_DRIVER =
STG_FUZZ_LD = $(FUZZ_LDFLAGS)
else
STG_FUZZ_DRIVER = tests/fuzz/replay.c
STG_FUZZ_LD =
endif
check_PROGRAMS += tests/fuzz/fuzz_json tests/fuzz/fuzz_dispatch
check_PROGRAMS += tests/fuzz/fuzz_executor tests/fuzz/fuzz_webui
tests_fuzz_fuzz_json_SOURCES = tests/fuzz/fuzz_json.c tests/fuzz/fuzz.h $(STG_FUZZ_DRIVER)
tests_fuzz_fuzz_json_CFLAGS = $(STG_FUZZ_CFLAGS)
tests_fuzz_fuzz_json_LDFLAGS = $(AM_LDFLAGS) $(STG_FUZZ_LD)
tests_fuzz_fuzz_json_LDADD = $(STG_CORE_LIBS) $(STG_LIBS)
tests_fuzz_fuzz_dispatch_SOURCES = tests/fuzz/fuzz_dispatch.c tests/fuzz/fuzz.h $(STG_FUZZ_DRIVER)
tests_fuzz_fuzz_dispatch_CFLAGS = $(STG_FUZZ_CFLAGS)
tests_fuzz_fuzz_dispatch_LDFLAGS = $(AM_LDFLAGS) $(STG_FUZZ_LD)
tests_fuzz_fuzz_dispatch_LDADD = $(STG_CORE_LIBS) $(STG_LIBS)
tests_fuzz_fuzz_executor_SOURCES = tests/fuzz/fuzz_executor.c tests/fuzz/fuzz.h $(STG_FUZZ_DRIVER)
tests_fuzz_fuzz_executor_CFLAGS = $(STG_FUZZ_CFLAGS)
tests_fuzz_fuzz_executor_LDFLAGS = $(AM_LDFLAGS) $(STG_FUZZ_LD)
tests_fuzz_fuzz_executor_LDADD = $(STG_CORE_LIBS) $(STG_LIBS)
tests_fuzz_fuzz_webui_SOURCES = tests/fuzz/fuzz_webui.c tests/fuzz/fuzz.h $(STG_FUZZ_DRIVER)
tests_fuzz_fuzz_webui_CFLAGS = $(STG_FUZZ_CFLAGS)
tests_fuzz_fuzz_webui_LDFLAGS = $(AM_LDFLAGS) $(STG_FUZZ_LD)
tests_fuzz_fuzz_webui_LDADD = $(STG_CORE_LIBS) $(STG_LIBS)
check_PROGRAMS += tests/fuzz/fuzz_thermos
tests_fuzz_fuzz_thermos_SOURCES = tests/fuzz/fuzz_thermos.c tests/fuzz/fuzz.h $(STG_FUZZ_DRIVER)
tests_fuzz_fuzz_thermos_CFLAGS = $(STG_FUZZ_CFLAGS)
tests_fuzz_fuzz_thermos_LDFLAGS = $(AM_LDFLAGS) $(STG_FUZZ_LD)
tests_fuzz_fuzz_thermos_LDADD = libstg_thermos.a libstg_common.a $(JSON_GLIB_LIBS) $(GLIB_LIBS) -lm
TESTS += tests/fuzz_test.sh
EXTRA_DIST += tests/fuzz_test.sh tests/fuzz/replay.c tests/fuzz/corpus

# The long high-availability run: 20 kills of the leader at random moments,
# then 5 in a minute under a CLI loop and `update start --wait`.
soak-ha: tests/ha_replicas_test staggerd stagger
	$(AM_TESTS_ENVIRONMENT) STG_HA_KILLS=20; export STG_HA_KILLS; \
	  STG_HA_OUTAGE_S=30; export STG_HA_OUTAGE_S; ./tests/ha_replicas_test
	$(AM_TESTS_ENVIRONMENT) STG_TAKEOVER_KILLS=5; export STG_TAKEOVER_KILLS; \
	  $(PYTHON3) $(srcdir)/tests/ha_takeover.py
.PHONY: soak-ha

# The partition campaign (tests/partition_test.py): replicas, PostgreSQL and
# fleet hosts in network namespaces of their own, cut apart 50 times
# (`make check` runs 5). STG_PARTITION_SEED=N for another schedule of faults.
partition: all
	$(AM_TESTS_ENVIRONMENT) STG_PARTITION_FAULTS=$${STG_PARTITION_FAULTS:-50}; \
	  export STG_PARTITION_FAULTS; $(PYTHON3) $(srcdir)/tests/partition_test.py
.PHONY: partition

# `make soak`: the random kill test of crash_test with 200 kills of
# staggerd instead of 20; figures go in RELIABILITY.md.
soak: all tests/crash_test$(EXEEXT)
	STAGGER_KILLS=200 CK_RUN_CASE=random G_SLICE=always-malloc tests/crash_test$(EXEEXT)
.PHONY: soak

# The fleet runtime against real podman services (tests/podman_hosts.c).
STG_PODMAN_HOSTS = tests/podman_hosts.c tests/podman_hosts.h
check_PROGRAMS += tests/fleet_test
TESTS += tests/fleet_test
tests_fleet_test_SOURCES = tests/fleet_test.c $(STG_PODMAN_HOSTS)
tests_fleet_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_fleet_test_LDADD = libstg_cli.a $(STG_TEST_LDADD)

check_PROGRAMS += tests/fleet_ha_test
TESTS += tests/fleet_ha_test
tests_fleet_ha_test_SOURCES = tests/fleet_ha_test.c tests/fleet_ha_fixture.c \
	tests/fleet_ha_fixture.h $(STG_PODMAN_HOSTS)
tests_fleet_ha_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_fleet_ha_test_LDADD = $(STG_TEST_LDADD)

# What fleet_daemon_test and the suites below share (tests/fleet_fixture.c): hosts, jobs, events.
STG_FLEET_FIXTURE = tests/fleet_fixture.c tests/fleet_fixture.h $(STG_PODMAN_HOSTS)

check_PROGRAMS += tests/fleet_daemon_test
TESTS += tests/fleet_daemon_test
tests_fleet_daemon_test_SOURCES = tests/fleet_daemon_test.c $(STG_FLEET_FIXTURE) $(STG_ROLLOUT)
tests_fleet_daemon_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_fleet_daemon_test_LDADD = $(STG_TEST_LDADD)

# Update hooks in containers: the environment they get.
check_PROGRAMS += tests/fleet_hooks_test
TESTS += tests/fleet_hooks_test
tests_fleet_hooks_test_SOURCES = tests/fleet_hooks_test.c $(STG_FLEET_FIXTURE) $(STG_ROLLOUT)
tests_fleet_hooks_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_fleet_hooks_test_LDADD = $(STG_TEST_LDADD)

# Instances' output on the fleet runtime: their containers' logs.
check_PROGRAMS += tests/fleet_logs_test
TESTS += tests/fleet_logs_test
tests_fleet_logs_test_SOURCES = tests/fleet_logs_test.c $(STG_FLEET_FIXTURE) $(STG_ROLLOUT)
tests_fleet_logs_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_fleet_logs_test_LDADD = $(STG_TEST_LDADD)

# What staggerd says of pods' anchors: a busy port, no anchor at all.
check_PROGRAMS += tests/fleet_anchor_test
TESTS += tests/fleet_anchor_test
tests_fleet_anchor_test_SOURCES = tests/fleet_anchor_test.c $(STG_FLEET_FIXTURE)
tests_fleet_anchor_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_fleet_anchor_test_LDADD = $(STG_TEST_LDADD)

# How a pod's serving sidecar is judged: failed checks in a row, as a main
# container's.
check_PROGRAMS += tests/fleet_serving_test
TESTS += tests/fleet_serving_test
tests_fleet_serving_test_SOURCES = tests/fleet_serving_test.c $(STG_FLEET_FIXTURE)
tests_fleet_serving_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_fleet_serving_test_LDADD = $(STG_TEST_LDADD)

# Pods and sidecar sets on real podman services: stg-test-proxy is the
# Envoy-like sidecar of the test image (static, libc only, so without the
# sanitizers, as stagger-anchor).
check_PROGRAMS += tests/stg-test-proxy
tests_stg_test_proxy_SOURCES = tests/sidecar_proxy.c
tests_stg_test_proxy_CPPFLAGS =
tests_stg_test_proxy_CFLAGS = -std=gnu11 -O2 $(WARN_CFLAGS) $(WERROR_CFLAGS)
tests_stg_test_proxy_LDFLAGS = -static
tests_stg_test_proxy_LDADD =

check_PROGRAMS += tests/fleet_sidecar_test
TESTS += tests/fleet_sidecar_test
tests_fleet_sidecar_test_SOURCES = tests/fleet_sidecar_test.c tests/browser_env.c tests/browser_env.h \
	$(STG_FLEET_FIXTURE)
tests_fleet_sidecar_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_fleet_sidecar_test_LDADD = $(STG_TEST_LDADD)

# AuroraExecutor tasks: the library's suite, and stagger-thermos run on real
# processes.
check_PROGRAMS += tests/thermos_test
TESTS += tests/thermos_test
tests_thermos_test_SOURCES = tests/thermos_test.c
tests_thermos_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_thermos_test_LDADD = libstg_thermos.a libstg_common.a $(CHECK_LIBS) $(JSON_GLIB_LIBS) \
	$(GLIB_LIBS) -lm
EXTRA_DIST += tests/aurora/README.md tests/aurora/http_example.json \
	tests/aurora/http_example_updated.json tests/aurora/http_example_bad_healthcheck.json \
	tests/aurora/ephemeral_daemon_with_final.json tests/aurora/test_daemonizing_process.json
check_PROGRAMS += tests/thermos_runner_test
TESTS += tests/thermos_runner_test
tests_thermos_runner_test_SOURCES = tests/thermos_runner_test.c
tests_thermos_runner_test_CFLAGS = $(STG_TEST_CFLAGS)
tests_thermos_runner_test_LDADD = $(STG_TEST_LDADD)
EXTRA_DIST += tests/aurora/http_server.py
