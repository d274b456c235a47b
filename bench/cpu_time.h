/* cpu_time.h: the CPU time a benchmark has used, for the figures beside
 * its wall-clock times. Benchmarks only. */
#pragma once

#include <glib.h>

/* CPU seconds this process has used so far, user and system together. */
gdouble stg_bench_cpu_seconds (void);
