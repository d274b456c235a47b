/* thermos_task.c: AuroraExecutor tasks as the runtimes see them (see
 * thermos_task.h): the data checked against the TaskConfig, the spec of
 * what staggerd does around the runner, template values, the runner's
 * command line, the processes a log read may name. Calls libstg_thermos; any thread.
 */
#include "config.h"

#include "common/error.h"
#include "common/jobkey.h"
#include "runtime/thermos_task.h"
#include "common/strings.h"

/* What a stop may take beyond what the runner may take: the signal's way
 * there and the runner's own start-up. */
#define STOP_MARGIN_SECS 5

gboolean
stg_thermos_task_is (const ApiTaskConfig *config)
{
  return config->__isset_executorConfig && config->executorConfig != NULL &&
         g_strcmp0 (config->executorConfig->name, STG_THERMOS_EXECUTOR_NAME) == 0;
}

StgThermosJob *
stg_thermos_task_parse (const ApiTaskConfig *config, const gchar *const *ports, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autoptr (StgThermosJob) job = stg_thermos_job_parse (config->executorConfig->data, -1, &local);

  if (job == NULL || !stg_thermos_job_check_ports (job, ports, &local))
    {
      stg_fail (error, STG_EXECUTOR_ERROR, STG_EXECUTOR_ERROR_INVALID, "executorConfig.data: %s",
                local->message);
      return NULL;
    }
  return g_steal_pointer (&job);
}

StgExecutorSpec *
stg_thermos_task_exec (const StgThermosJob *job)
{
  StgExecutorSpec *spec = g_new0 (StgExecutorSpec, 1);
  const StgThermosHealth *h = &job->health;

  spec->health.kind = h->kind == STG_THERMOS_HEALTH_HTTP    ? STG_HEALTH_HTTP
                      : h->kind == STG_THERMOS_HEALTH_SHELL ? STG_HEALTH_SHELL
                                                            : STG_HEALTH_NONE;
  spec->health.endpoint = g_strdup (h->endpoint);
  spec->health.expected_response = g_strdup (h->expected_response);
  spec->health.expected_response_code = h->expected_response_code;
  spec->health.shell_command = g_strdup (h->shell_command);
  spec->health.initial_interval_secs = h->initial_interval_secs;
  spec->health.interval_secs = h->interval_secs;
  spec->health.timeout_secs = h->timeout_secs;
  spec->health.max_consecutive_failures = h->max_consecutive_failures;
  spec->health.min_consecutive_successes = h->min_consecutive_successes;
  spec->health.aurora = TRUE;
  spec->stop_timeout_secs = stg_thermos_job_stop_secs (job) + STOP_MARGIN_SECS;
  return spec;
}

void
stg_thermos_run_vars_init (StgThermosRunVars *out, const ApiJobKey *key, gint32 instance,
                           gint64 run, const gchar *hostname, const gchar *user, GHashTable *ports)
{
  out->hostname = g_strdup (hostname != NULL ? hostname : g_get_host_name ());
  out->task_id = stg_job_key_task_id (key, instance, run);
  out->user = g_strdup (user != NULL ? user : g_get_user_name ());
  out->vars = (StgThermosVars){ instance, out->hostname, out->task_id, out->user, ports };
}

void
stg_thermos_run_vars_clear (StgThermosRunVars *vars)
{
  g_clear_pointer (&vars->hostname, g_free);
  g_clear_pointer (&vars->task_id, g_free);
  g_clear_pointer (&vars->user, g_free);
}

gint
stg_thermos_task_health_port (const StgThermosJob *job, GHashTable *ports)
{
  if (job->health.kind != STG_THERMOS_HEALTH_HTTP)
    return 0;
  return GPOINTER_TO_INT (g_hash_table_lookup (ports, "health"));
}

gchar *
stg_thermos_task_health_command (const StgThermosJob *job, const StgThermosVars *vars,
                                 GError **error)
{
  return stg_thermos_template_expand (job->health.shell_command,
                                      "health_check_config.health_checker.shell.shell_command",
                                      STG_THERMOS_SCOPE_ALL, vars, error);
}

gchar *
stg_thermos_task_health_text (const ApiTaskConfig *config)
{
  if (!stg_thermos_task_is (config))
    return NULL;
  g_autoptr (StgThermosJob) job = stg_thermos_job_parse (config->executorConfig->data, -1, NULL);
  if (job == NULL)
    return NULL;
  const StgThermosHealth *h = &job->health;
  g_autofree gchar *every = g_strdup_printf ("every %g s, the first %g s forgiven, healthy after "
                                             "%d in a row, failed after more than %d",
                                             h->interval_secs, h->initial_interval_secs,
                                             MAX (h->min_consecutive_successes, 1),
                                             h->max_consecutive_failures);
  switch (h->kind)
    {
    case STG_THERMOS_HEALTH_HTTP:
      return g_strdup_printf ("HTTP GET %s on port health (%s)", h->endpoint, every);
    case STG_THERMOS_HEALTH_SHELL:
      return g_strdup_printf ("shell: %s (%s)", h->shell_command, every);
    case STG_THERMOS_HEALTH_NONE:
      break;
    }
  return g_strdup ("none: the task has no port named 'health' (announce.portmap may name one), so, "
                   "as in Aurora, it gets no HTTP health check and is healthy while it runs");
}

gchar **
stg_thermos_task_argv (const gchar *runner, const gchar *sandbox, const StgThermosVars *vars,
                       GHashTable *assigned, const gchar *const *tail)
{
  GPtrArray *argv = g_ptr_array_new ();
  g_autoptr (GPtrArray) names = g_ptr_array_new ();
  GHashTableIter it;
  gpointer name;

  g_hash_table_iter_init (&it, assigned);
  while (g_hash_table_iter_next (&it, &name, NULL))
    g_ptr_array_add (names, name);

  g_ptr_array_add (argv, g_strdup (runner));
  if (sandbox != NULL)
    {
      g_ptr_array_add (argv, g_strdup ("--sandbox"));
      g_ptr_array_add (argv, g_strdup (sandbox));
    }
  g_ptr_array_add (argv, g_strdup ("--instance"));
  g_ptr_array_add (argv, g_strdup_printf ("%d", vars->instance));
  g_ptr_array_add (argv, g_strdup ("--hostname"));
  g_ptr_array_add (argv, g_strdup (vars->hostname));
  g_ptr_array_add (argv, g_strdup ("--task-id"));
  g_ptr_array_add (argv, g_strdup (vars->task_id));
  g_ptr_array_sort (names, stg_compare_string_ptrs);
  for (guint i = 0; i < names->len; i++)
    {
      g_ptr_array_add (argv, g_strdup ("--port"));
      g_ptr_array_add (argv,
                       g_strdup_printf ("%s=%d", (const gchar *) names->pdata[i],
                                        GPOINTER_TO_INT (
                                            g_hash_table_lookup (assigned, names->pdata[i]))));
    }
  for (guint i = 0; tail != NULL && tail[i] != NULL; i++)
    g_ptr_array_add (argv, g_strdup (tail[i]));
  g_ptr_array_add (argv, NULL);
  return (gchar **) g_ptr_array_free (argv, FALSE);
}

gboolean
stg_thermos_task_log_processes (const StgThermosJob *job, gint32 instance, const gchar *process,
                                StgLogInfo *info, GError **error)
{
  const StgThermosTask *task = job != NULL ? &job->task : NULL;

  if (task != NULL)
    {
      info->processes = g_new0 (gchar *, task->processes->len + 1);
      for (guint i = 0; i < task->processes->len; i++)
        info->processes[i] = g_strdup (stg_thermos_task_process (task, i)->name);
    }
  if (process == NULL || (info->processes != NULL &&
                          g_strv_contains ((const gchar *const *) info->processes, process)))
    return TRUE;
  g_autofree gchar *known = info->processes != NULL ? g_strjoinv (", ", info->processes) : NULL;
  g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_NOT_FOUND,
               known != NULL ? "instance %d's task has no process '%s' (its processes: %s)"
                             : "instance %d does not run an AuroraExecutor task: it has no "
                               "process '%s'%s",
               instance, process, known != NULL ? known : "");
  return FALSE;
}
