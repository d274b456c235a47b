/* task.h: an Aurora job as the AuroraExecutor gets it, parsed and checked.
 *
 * Aurora's client puts the whole job into TaskConfig.executorConfig.data
 * (name "AuroraExecutor") as JSON: the Thermos task (processes, order
 * constraints, failure limits, finalization wait), the health check, the
 * announcer's port aliases, the HTTP lifecycle, and the job-level fields the
 * scheduler also gets through the TaskConfig. stg_thermos_job_parse() checks
 * every key of it, with Aurora's defaults for what is absent, and refuses
 * what Stagger does not do (cron, Mesos volumes, ZooKeeper paths...) naming
 * the key. The result is the model staggerd and stagger-thermos work from.
 * Part of libstg_thermos (common, GLib and json-glib only); any thread.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define STG_THERMOS_EXECUTOR_NAME "AuroraExecutor"

#define STG_THERMOS_ERROR (stg_thermos_error_quark ())
GQuark stg_thermos_error_quark (void);
typedef enum
{
  STG_THERMOS_ERROR_INVALID,     /* the data is wrong */
  STG_THERMOS_ERROR_UNSUPPORTED, /* the data asks for what Stagger does not do */
} StgThermosError;

/* How many runs (successes, failures and losses) a process gets at most,
 * whatever its max_failures: the cap Thermos has under Aurora. */
#define STG_THERMOS_RUN_LIMIT 100

typedef enum
{
  STG_THERMOS_LOG_FILE, /* .logs/<process>/<run>/stdout and stderr */
  STG_THERMOS_LOG_CONSOLE,
  STG_THERMOS_LOG_BOTH,
  STG_THERMOS_LOG_NONE,
} StgThermosLogDestination;

typedef enum
{
  STG_THERMOS_LOG_STANDARD,
  STG_THERMOS_LOG_ROTATE
} StgThermosLogMode;

/* A Logger's words ("file", "console", "both", "none"; "standard",
 * "rotate"); FALSE for any other. */
gboolean stg_thermos_log_destination_parse (const gchar *word, StgThermosLogDestination *out);
gboolean stg_thermos_log_mode_parse (const gchar *word, StgThermosLogMode *out);

typedef struct
{
  gboolean set; /* the process has a logger; else the runner's defaults apply */
  StgThermosLogDestination destination;
  StgThermosLogMode mode;
  gint64 rotate_log_size; /* bytes; default 100 MiB */
  gint rotate_backups;    /* default 5 */
} StgThermosLogger;

typedef struct
{
  gchar *name;        /* a file name: no '/', no leading '.' */
  gchar *cmdline;     /* run with bash -c; templates unexpanded */
  gint max_failures;  /* default 1; 0: retried until it succeeds */
  gboolean daemon;    /* run again after a success */
  gboolean ephemeral; /* the task's end does not wait for it */
  gint min_duration;  /* seconds between the end of a run and the next; default 5 */
  gboolean final;     /* runs after the others, within finalization_wait (a stop's
                       * preemption wait when stopped) */
  StgThermosLogger logger;
  GArray *after; /* guint: indices of the processes that must finish first */
} StgThermosProcess;

typedef struct
{
  gchar *name;
  GPtrArray *processes;   /* StgThermosProcess, in the order of the JSON */
  gint max_failures;      /* failed processes that fail the task; default 1; 0: none do */
  gint max_concurrency;   /* processes running at once; default 0, unlimited */
  gint finalization_wait; /* seconds for cleaning and final processes when the task ends
                           * on its own; default 30, at most
                           * STG_THERMOS_FINALIZATION_WAIT_MAX */
  gdouble cpu;            /* resources, as the task declares them (0 when absent) */
  gint64 ram;
  gint64 disk;
  gint gpu;
} StgThermosTask;

typedef enum
{
  STG_THERMOS_HEALTH_NONE,  /* healthy while running: no check, or HTTP without a "health" port */
  STG_THERMOS_HEALTH_HTTP,  /* GET on the port named "health" (after aliases) */
  STG_THERMOS_HEALTH_SHELL, /* bash -c shell_command; healthy when it exits 0 */
} StgThermosHealthKind;

typedef struct
{
  StgThermosHealthKind kind;
  gchar *endpoint;                /* HTTP; default "/health" */
  gchar *expected_response;       /* HTTP; default "ok"; "" checks no body */
  gint expected_response_code;    /* HTTP; default 0: any code */
  gchar *shell_command;           /* SHELL; templates unexpanded */
  gdouble initial_interval_secs;  /* default 15 */
  gdouble interval_secs;          /* default 10 */
  gdouble timeout_secs;           /* default 1 */
  gint max_consecutive_failures;  /* default 0 */
  gint min_consecutive_successes; /* default 1 */
} StgThermosHealth;

typedef struct
{
  gboolean enabled;                  /* lifecycle.http is set and its port is one of the task's */
  gchar *port;                       /* default "health" */
  gchar *graceful_shutdown_endpoint; /* default "/quitquitquit" */
  gchar *shutdown_endpoint;          /* default "/abortabortabort" */
  gint graceful_shutdown_wait_secs;  /* default 5 */
  gint shutdown_wait_secs;           /* default 5 */
} StgThermosLifecycle;

typedef enum
{
  STG_THERMOS_CONTAINER_NONE,
  STG_THERMOS_CONTAINER_DOCKER, /* Docker (or Container with docker) */
  STG_THERMOS_CONTAINER_MESOS,  /* Mesos, with a Docker image or none */
} StgThermosContainerKind;

typedef struct
{
  gchar *role;
  gchar *environment;
  gchar *name;
  gchar *cluster;
  gboolean service;
  StgThermosTask task;
  StgThermosHealth health;
  StgThermosLifecycle lifecycle;
  gboolean announce;   /* an announce section is present */
  gchar *primary_port; /* announce.primary_port; default "http" */
  GHashTable *portmap; /* alias -> port name or static number, as text */
  gchar *zk_path;      /* announce.zk_path (nullable): a ServerSet of its own */
  StgThermosContainerKind container;
  gchar *image;          /* the container's image ("name:tag"); NULL without */
  gchar **ports;         /* the named ports to assign, sorted */
  GHashTable *port_refs; /* port name -> path of the first key that needs it */
} StgThermosJob;

void stg_thermos_job_free (StgThermosJob *job);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgThermosJob, stg_thermos_job_free)

/* Parses and checks @data, the executor data of one AuroraExecutor task
 * (@length bytes, or up to NUL when negative). Errors are STG_THERMOS_ERROR
 * and name the key path. */
StgThermosJob *stg_thermos_job_parse (const gchar *data, gssize length, GError **error);

/* Checks that every port @job needs is among @declared (NULL-terminated;
 * the TaskConfig's named ports); the error names the key that needs it. */
gboolean stg_thermos_job_check_ports (const StgThermosJob *job, const gchar *const *declared,
                                      GError **error);

/* Every port name of @job with its number: @assigned (name -> port, as
 * GINT_TO_POINTER; the names in job->ports at least) plus the announcer's
 * aliases and static ports. A new table of name -> GINT_TO_POINTER (port). */
GHashTable *stg_thermos_job_resolve_ports (const StgThermosJob *job, GHashTable *assigned,
                                           GError **error);

/* TRUE when @name is a port of @job: one to assign or an alias. */
gboolean stg_thermos_job_has_port (const StgThermosJob *job, const gchar *name);

/* The exit statuses of stagger-thermos, which staggerd reads. */
enum
{
  STG_RUNNER_EXIT_SUCCESS = 0,   /* the task succeeded */
  STG_RUNNER_EXIT_FAILED = 1,    /* the task failed */
  STG_RUNNER_EXIT_KILLED = 2,    /* the task was stopped by SIGTERM or SIGINT */
  STG_RUNNER_EXIT_USAGE = 64,    /* a wrong command line */
  STG_RUNNER_EXIT_INVALID = 65,  /* the task's JSON is wrong, or a port it needs is missing */
  STG_RUNNER_EXIT_INTERNAL = 70, /* the runner could not work (sandbox, state file, ...) */
};

/* What an exit status of stagger-thermos means, in words ("the task
 * failed"), or NULL for one it does not use. */
const gchar *stg_thermos_exit_meaning (gint status);

/* What stagger-thermos adds to a job's own waits when it stops: each HTTP
 * lifecycle POST may take this long (Aurora's timeout), and after SIGKILL
 * it waits this long for what is left before it gives up. */
#define STG_THERMOS_LIFECYCLE_POST_SECS 1
#define STG_THERMOS_REAP_WAIT_SECS 10

/* A stop gives the task's processes this long, from the SIGTERM that ends
 * ACTIVE to the end of the final processes, whatever finalization_wait
 * says: Thermos's preemption wait, which Aurora's executor kills a task
 * with. */
#define STG_THERMOS_PREEMPTION_WAIT_SECS 60

/* Aurora caps finalization_wait at a minute (its configuration reference;
 * its client takes bigger values): the task model holds at most this. */
#define STG_THERMOS_FINALIZATION_WAIT_MAX 60

/* The longest a runner of @job takes to end once asked to stop: the
 * lifecycle's POSTs and waits (when it has one), the preemption wait, and
 * the last wait for leftovers. */
gint stg_thermos_job_stop_secs (const StgThermosJob *job);

static inline StgThermosProcess *
stg_thermos_task_process (const StgThermosTask *task, guint index)
{
  return g_ptr_array_index (task->processes, index);
}

G_END_DECLS
