/* executor.h: what an instance runs: the "stagger" executor's JSON data.
 *
 * TaskConfig.executorConfig is { name: "stagger", data: <JSON> }. The JSON
 * says what to run (command or argv, env, workdir), how to tell it is
 * healthy (HTTP or shell checks, Aurora's HealthCheckConfig names and
 * defaults), how to stop it, the hooks around an update and whether to hot
 * upgrade it. Parsing checks every key, type and template, so a bad config
 * is refused when it is submitted, not when it runs. Any thread.
 */
#pragma once

#include "common/templates.h"
#include "common/thrift_glue.h"

G_BEGIN_DECLS

#define STG_EXECUTOR_NAME "stagger"

#define STG_EXECUTOR_ERROR (stg_executor_error_quark ())
GQuark stg_executor_error_quark (void);
typedef enum { STG_EXECUTOR_ERROR_FAILED, STG_EXECUTOR_ERROR_INVALID } StgExecutorError;

typedef enum
{
  STG_HEALTH_NONE,      /* healthy means running */
  STG_HEALTH_HTTP,
  STG_HEALTH_SHELL,
} StgHealthKind;

typedef struct
{
  StgHealthKind kind;
  gchar *endpoint;               /* http: default "/health" */
  gchar *expected_response;      /* http: default "ok" */
  gint expected_response_code;   /* http: 0 = check the body instead */
  gchar *shell_command;          /* shell */
  gdouble initial_interval_secs; /* default 15 */
  gdouble interval_secs;         /* default 10 */
  gdouble timeout_secs;          /* default 1 */
  gint max_consecutive_failures; /* default 0 */
  gint min_consecutive_successes;/* default 1 */
  /* Aurora's executor's rules rather than Stagger's (health.h): an
   * AuroraExecutor task's. */
  gboolean aurora;
} StgHealthSpec;

typedef struct
{
  gchar *command;                /* NULL: no hook */
  gdouble timeout_secs;          /* default 60 */
} StgHookSpec;

typedef struct
{
  gchar *command;                /* run with /bin/sh -c; or ... */
  gchar **argv;                  /* ... run directly */
  gchar **env;                   /* NAME=value (templates unexpanded) */
  gchar *workdir;                /* NULL: the sandbox */
  StgHealthSpec health;
  gdouble stop_timeout_secs;     /* default 5 */
  StgHookSpec pre_update;
  StgHookSpec post_update;
  gboolean hot_upgrade;
} StgExecutorSpec;

void stg_executor_spec_free (StgExecutorSpec *spec);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgExecutorSpec, stg_executor_spec_free)

/* Parses and checks @data. @ports (nullable, NULL-terminated) are the
 * config's named ports: {{ports[NAME]}} must name one of them. */
StgExecutorSpec *stg_executor_spec_parse (const gchar *data, const gchar *const *ports,
                                          GError **error);

/* The shell line for the `command` of @spec (owned): "exec COMMAND" for a
 * hot-upgradable simple command, so LISTEN_PID names the program
 * (the local runtime's hot upgrade, the fleet's socket-activated sidecars). */
gchar *stg_executor_shell_command (const StgExecutorSpec *spec);

G_END_DECLS
