# bench/local.mk: benchmarks. `make bench` builds and runs them all, prints
# one table per benchmark and writes bench/results.json in the build tree.
EXTRA_PROGRAMS += bench/engine_bench
bench_engine_bench_SOURCES = bench/engine_bench.c
bench_engine_bench_LDADD = libstg_engine.a libstg_runtime.a libstg_store.a libstg_common.a \
	libstg_gen.a $(STG_LIBS)

STG_BENCH_DEPS = bench/engine_bench staggerd stagger stagger-example-server

bench: $(STG_BENCH_DEPS)
	@mkdir -p bench
	@echo "== 1. engine and store at scale (bench/engine_bench)"
	./bench/engine_bench $(BENCH_ENGINE_FLAGS) --json bench/engine.json
	@echo
	@echo "== 2. an end-to-end rollout of real processes against a shell script (bench/rollout.sh)"
	BUILDDIR='$(abs_top_builddir)' $(SHELL) $(srcdir)/bench/rollout.sh $(BENCH_ROLLOUT_FLAGS) \
		--json bench/rollout.json
	@echo
	@echo "figures: bench/engine.json bench/rollout.json"

.PHONY: bench
CLEANFILES += $(EXTRA_PROGRAMS) bench/engine.json bench/rollout.json
EXTRA_DIST += bench/local.mk bench/rollout.sh
