/* fuzz_thermos.c: libFuzzer target for AuroraExecutor data (what the
 * aurora client sends as executorConfig.data, and stagger-thermos reads):
 * any bytes through stg_thermos_job_parse; a job that parses has its ports
 * checked and resolved (each given a number) and every template of its
 * processes and health check filled in. Nothing may crash, leak or recurse
 * without bound. */
#include "config.h"

#include "fuzz.h"
#include "thermos/task.h"
#include "thermos/template.h"

static void
fill_in (const StgThermosJob *job)
{
  g_autoptr (GHashTable) assigned = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GError) error = NULL;

  for (guint i = 0; job->ports[i] != NULL; i++)
    g_hash_table_insert (assigned, job->ports[i], GINT_TO_POINTER (31000 + (gint) i));
  g_assert (stg_thermos_job_check_ports (job, (const gchar *const *) job->ports, NULL));
  g_autoptr (GHashTable) ports = stg_thermos_job_resolve_ports (job, assigned, &error);
  g_assert (ports != NULL);
  StgThermosVars vars = { 1, "host", "task", "user", ports };
  for (guint i = 0; i < job->task.processes->len; i++)
    {
      g_autofree gchar *text =
          stg_thermos_template_expand (stg_thermos_task_process (&job->task, i)->cmdline, "cmdline",
                                       STG_THERMOS_SCOPE_ALL, &vars, &error);
      g_assert (text != NULL);
    }
  if (job->health.kind == STG_THERMOS_HEALTH_SHELL)
    {
      g_autofree gchar *text = stg_thermos_template_expand (job->health.shell_command, "shell",
                                                            STG_THERMOS_SCOPE_ALL, &vars, &error);
      g_assert (text != NULL);
    }
}

int
LLVMFuzzerTestOneInput (const guint8 *data, gsize size)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (StgThermosJob) job = stg_thermos_job_parse ((const gchar *) data, (gssize) size,
                                                         &error);

  g_assert ((job == NULL) == (error != NULL));
  if (job != NULL)
    fill_in (job);
  return 0;
}
