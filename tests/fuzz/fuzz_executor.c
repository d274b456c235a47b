/* fuzz_executor.c: libFuzzer target for the executor's JSON (the task
 * config's executorConfig.data, which any client sends and createJob and
 * getJobUpdateDiff check): any bytes through stg_executor_spec_parse, with
 * a named port so templates resolve. Nothing may crash, leak or recurse
 * without bound. */
#include "config.h"

#include "fuzz.h"
#include "runtime/executor.h"

int
LLVMFuzzerTestOneInput (const guint8 *data, gsize size)
{
  static const gchar *const ports[] = { "http", NULL };
  g_autofree gchar *text = g_strndup ((const gchar *) data, size);
  g_autoptr (GError) error = NULL;
  g_autoptr (StgExecutorSpec) spec = stg_executor_spec_parse (text, ports, &error);

  g_assert ((spec == NULL) == (error != NULL));
  return 0;
}
