# src/runtime/local.mk: the runtime seam and its implementations.
noinst_LIBRARIES += libstg_runtime.a
libstg_runtime_a_SOURCES = \
	src/runtime/runtime.c src/runtime/runtime.h
EXTRA_DIST += src/runtime/local.mk
