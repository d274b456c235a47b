/* thermos_task.h: AuroraExecutor tasks in Stagger's runtimes.
 *
 * An AuroraExecutor config's data is Aurora's whole job, which
 * libstg_thermos reads. A runtime runs it as one process, stagger-thermos
 * (the runner), started like any instance; what is the runtime's around it
 * is here: the check at submission (the data, and the TaskConfig's named
 * ports against the ports the task needs), what staggerd does around the
 * runner in the form of the "stagger" executor's spec (Aurora's health
 * check, the time a stop may take), the values of the templates, the
 * health check's port and command, and the runner's command line. Calls
 * libstg_thermos; any thread.
 */
#pragma once

#include "common/thrift_glue.h"
#include "runtime/executor.h"
#include "runtime/runtime.h"
#include "thermos/task.h"
#include "thermos/template.h"

G_BEGIN_DECLS

/* Where stagger-thermos is unless staggerd is told (thermos_runner), and
 * its bundle for containers (thermos_bundle; scripts/thermos-bundle). */
#define STG_THERMOS_RUNNER_DEFAULT STG_PKGLIBEXECDIR "/stagger-thermos"
#define STG_THERMOS_BUNDLE_DEFAULT STG_PKGLIBEXECDIR "/thermos-bundle"

/* TRUE when @config's executor is AuroraExecutor. */
gboolean stg_thermos_task_is (const ApiTaskConfig *config);

/* Parses and checks @config's executor data against its named ports
 * @ports (NULL-terminated): every port the task needs must be one of
 * them. NULL with @error (STG_EXECUTOR_ERROR_INVALID), whose message names
 * the key ("executorConfig.data: task.processes[2].cmdline needs port
 * 'tcp', ..."). */
StgThermosJob *stg_thermos_task_parse (const ApiTaskConfig *config, const gchar *const *ports,
                                       GError **error);

/* What staggerd does around the runner of @job, as the "stagger"
 * executor's spec says it: no command (the runtime starts the runner), no
 * hooks, Aurora's health check (StgHealthSpec.aurora; none when the job
 * has none, or an HTTP one and no port named "health"), and a stop that
 * may take what the runner may take (stg_thermos_job_stop_secs) plus a
 * margin. */
StgExecutorSpec *stg_thermos_task_exec (const StgThermosJob *job);

/* The template values of one run of a task. */
typedef struct
{
  StgThermosVars vars; /* what the templates get; its strings are those below */
  gchar *hostname;
  gchar *task_id;
  gchar *user;
} StgThermosRunVars;

/* Fills @out for run @run of instance @instance of @key on @hostname
 * (nullable: this host's name), as @user (nullable: ours), with @ports,
 * every port name with its number (aliases included; borrowed). The task
 * id is stg_job_key_task_id's. */
void stg_thermos_run_vars_init (StgThermosRunVars *out, const ApiJobKey *key, gint32 instance,
                                gint64 run, const gchar *hostname, const gchar *user,
                                GHashTable *ports);
void stg_thermos_run_vars_clear (StgThermosRunVars *vars);

/* The port HTTP checks of @job go to (its "health", after aliases), or 0
 * when it has none. @ports: every port with its number. */
gint stg_thermos_task_health_port (const StgThermosJob *job, GHashTable *ports);

/* The shell health check's command of @job with its templates filled in
 * (NULL with @error when one cannot be). */
gchar *stg_thermos_task_health_command (const StgThermosJob *job, const StgThermosVars *vars,
                                        GError **error);

/* The health check of @config in words, for people ("HTTP GET /health on
 * port health (every 10 s)", "none: ..."): Aurora's tasks without a port
 * named "health" get no HTTP check, which is easy to miss. NULL for a
 * config that is not an AuroraExecutor task, or does not parse. */
gchar *stg_thermos_task_health_text (const ApiTaskConfig *config);

/* The command line that runs @vars's task with @runner: its sandbox
 * (nullable: the working directory), instance, host name, task id, the
 * ports in @assigned (name -> number) and then @tail (the option that says
 * where the task's JSON comes from). Owned, NULL-terminated. */
gchar **stg_thermos_task_argv (const gchar *runner, const gchar *sandbox,
                               const StgThermosVars *vars, GHashTable *assigned,
                               const gchar *const *tail);

/* What a log read of an instance running @job (nullable: a task that is
 * not AuroraExecutor) tells of its processes: fills @info->processes with
 * theirs, in the task's order. FALSE with @error
 * (STG_RUNTIME_ERROR_NOT_FOUND, naming the processes there are) when
 * @process (nullable) is not one of them. Both runtimes' read_log. */
gboolean stg_thermos_task_log_processes (const StgThermosJob *job, gint32 instance,
                                         const gchar *process, StgLogInfo *info, GError **error);

G_END_DECLS
