/* cpu_time.c: the CPU time a benchmark has used (getrusage). */
#include "config.h"

#include <sys/resource.h>

#include "cpu_time.h"

gdouble
stg_bench_cpu_seconds (void)
{
  struct rusage r;

  getrusage (RUSAGE_SELF, &r);
  return (gdouble) r.ru_utime.tv_sec + r.ru_utime.tv_usec / 1e6 + (gdouble) r.ru_stime.tv_sec +
         r.ru_stime.tv_usec / 1e6;
}
