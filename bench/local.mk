# bench/local.mk: benchmarks. `make bench` builds and runs them all, prints
# one table per benchmark and writes bench/results.json in the build tree.
# The engine and RPC benchmarks run on a throwaway PostgreSQL too, beside
# SQLite (bench/pg.sh; skipped with a note when PostgreSQL is not
# installed). BENCH_ENGINE_FLAGS and BENCH_RPC_FLAGS add options.
EXTRA_PROGRAMS += bench/engine_bench
bench_engine_bench_SOURCES = bench/engine_bench.c bench/pg_reset.c bench/pg_reset.h bench/cpu_time.c \
	bench/cpu_time.h
bench_engine_bench_LDADD = libstg_engine.a libstg_senders.a libstg_runtime.a libstg_store.a libstg_thermos.a libstg_spawn.a libstg_common.a \
	libstg_gen.a $(STG_LIBS)

STG_BENCH_API_LIBS = libstg_api.a libstg_engine.a libstg_senders.a libstg_runtime.a libstg_store.a libstg_thermos.a libstg_spawn.a libstg_common.a \
	libstg_gen.a $(STG_LIBS)
EXTRA_PROGRAMS += bench/rpc_bench bench/noop_server
bench_rpc_bench_SOURCES = bench/rpc_bench.c bench/pg_reset.c bench/pg_reset.h tests/framed_client.c \
	tests/framed_client.h
bench_rpc_bench_LDADD = libstg_cli.a $(STG_BENCH_API_LIBS)
bench_noop_server_SOURCES = bench/noop_server.c
bench_noop_server_LDADD = $(STG_BENCH_API_LIBS)

EXTRA_PROGRAMS += bench/limits_bench
bench_limits_bench_SOURCES = bench/limits_bench.c bench/cpu_time.c bench/cpu_time.h
bench_limits_bench_LDADD = libstg_spawn.a $(STG_LIBS)

STG_BENCH_DEPS = bench/engine_bench bench/rpc_bench bench/noop_server bench/limits_bench staggerd stagger \
	stagger-example-server stagger-anchor tests/stg-test-proxy

bench: $(STG_BENCH_DEPS)
	@mkdir -p bench
	@echo "== 1. engine and store at scale (bench/engine_bench)"
	$(SHELL) $(srcdir)/bench/pg.sh sh -c './bench/engine_bench $(BENCH_ENGINE_FLAGS) \
		$${STG_BENCH_PG:+--postgresql="$$STG_BENCH_PG"} --json bench/engine.json'
	@echo
	@echo "== 2. end-to-end rollouts of real processes against shell scripts and the physical limit (bench/rollout.sh)"
	BUILDDIR='$(abs_top_builddir)' $(SHELL) $(srcdir)/bench/rollout.sh --instances 20 --batch 5 \
		--serial $(BENCH_ROLLOUT_FLAGS) --json bench/rollout-20.json
	BUILDDIR='$(abs_top_builddir)' $(SHELL) $(srcdir)/bench/rollout.sh --instances 40 --batch 10 \
		--serial $(BENCH_ROLLOUT_FLAGS) --json bench/rollout-40.json
	BUILDDIR='$(abs_top_builddir)' $(SHELL) $(srcdir)/bench/rollout.sh --serial $(BENCH_ROLLOUT_FLAGS) \
		--json bench/rollout.json
	@echo
	@echo "== 3. RPC throughput and latency against a no-op server (bench/rpc_bench)"
	$(SHELL) $(srcdir)/bench/pg.sh sh -c './bench/rpc_bench $(BENCH_RPC_FLAGS) \
		$${STG_BENCH_PG:+--postgresql="$$STG_BENCH_PG"} --json bench/rpc.json'
	@echo
	@echo "== 4. memory with many jobs, and the update page's data at 10,000 instances (bench/memory.sh)"
	BUILDDIR='$(abs_top_builddir)' $(SHELL) $(srcdir)/bench/memory.sh $(BENCH_MEMORY_FLAGS) \
		--json bench/memory.json
	@echo
	@echo
	@echo "== 5. a rollout of containers on three podman hosts against a parallel shell script (bench/fleet.sh; BENCH_FLEET_FLAGS=--serial adds the serial one)"
	BUILDDIR='$(abs_top_builddir)' $(SHELL) $(srcdir)/bench/fleet.sh $(BENCH_FLEET_FLAGS) \
		--json bench/fleet.json
	@echo
	@echo "== 7. a sidecar set's hot upgrade across 30 pods on three podman hosts against a podman --url script (bench/sidecars.sh)"
	BUILDDIR='$(abs_top_builddir)' $(SHELL) $(srcdir)/bench/sidecars.sh $(BENCH_SIDECARS_FLAGS) \
		--json bench/sidecars.json
	@echo
	@echo "== 8. what control groups cost: 1,000 starts with and without limits, and reading their use (bench/limits_bench; root)"
	./bench/limits_bench $(BENCH_LIMITS_FLAGS) --json bench/limits.json || test $$? -eq 77
	@echo
	@echo "== 9. an update's timeline at 200 and 1,000 instances: its JSON, the CLI and the page (bench/timeline.sh)"
	BUILDDIR='$(abs_top_builddir)' $(SHELL) $(srcdir)/bench/timeline.sh --instances 200 --batch 20 \
		--json bench/timeline-200.json
	BUILDDIR='$(abs_top_builddir)' $(SHELL) $(srcdir)/bench/timeline.sh --json bench/timeline.json
	@echo
	@echo "== 10. the rehearsal's prediction against the time taken, the example job updated four times (bench/rehearsal.sh)"
	BUILDDIR='$(abs_top_builddir)' $(SHELL) $(srcdir)/bench/rehearsal.sh --json bench/rehearsal.json
	@echo "figures: bench/limits.json bench/engine.json bench/rollout-20.json bench/rollout-40.json bench/rollout.json" \
		"bench/rpc.json bench/memory.json bench/fleet.json bench/sidecars.json" \
		"bench/timeline-200.json bench/timeline.json bench/rehearsal.json"

.PHONY: bench
CLEANFILES += $(EXTRA_PROGRAMS) bench/engine.json bench/rollout.json bench/rollout-20.json \
	bench/rollout-40.json bench/rpc.json \
	bench/memory.json bench/fleet.json bench/sidecars.json bench/limits.json \
	bench/timeline-200.json bench/timeline.json bench/rehearsal.json
EXTRA_DIST += bench/local.mk bench/common.sh bench/rollout.sh bench/memory.sh bench/fleet.sh \
	bench/sidecars.sh bench/pg.sh bench/timeline.sh bench/rehearsal.sh
