/* runner.h: what the files of stagger-thermos share: the runner of one
 * instance of an AuroraExecutor task (runner.c: stages and scheduling),
 * its processes (runner_spawn.c), their process trees (runner_tree.c),
 * their output (runner_logs.c), the state file (runner_state.c) and the
 * HTTP lifecycle (runner_lifecycle.c). stagger-thermos is one process with
 * one GLib main loop; everything here runs on it, except the lifecycle's
 * HTTP request, which runs in a GTask thread. Not a library: the program's
 * own files only.
 */
#pragma once

#include <gio/gio.h>

#include "thermos/planner.h"
#include "thermos/task.h"
#include "zk/zk.h"
#include "thermos/template.h"

G_BEGIN_DECLS

/* The task's states, with Thermos's names. */
typedef enum
{
  STG_RUNNER_ACTIVE,     /* ordinary processes run */
  STG_RUNNER_CLEANING,   /* what still runs got SIGTERM; waiting for it to end */
  STG_RUNNER_FINALIZING, /* final processes run */
  STG_RUNNER_SUCCESS,
  STG_RUNNER_FAILED,
  STG_RUNNER_KILLED,
} StgRunnerStage;

/* A process's state, with Thermos's names. */
typedef enum
{
  STG_RUN_WAITING, /* not started yet, or between runs */
  STG_RUN_RUNNING,
  STG_RUN_SUCCESS, /* the last run exited 0 */
  STG_RUN_FAILED,  /* the last run exited with another status */
  STG_RUN_KILLED,  /* the last run ended by a signal */
} StgRunState;

typedef struct _StgRunnerLog StgRunnerLog;

/* One process of the task as it runs. */
typedef struct
{
  const StgThermosProcess *spec;
  gchar *cmdline; /* templates filled in */
  StgRunState state;
  gint run;          /* the current or last run's number; -1 before the first */
  GPid pid;          /* 0 when no run is going */
  gint64 start_time; /* wall clock, microseconds; 0 before the first run */
  gint64 stop_time;  /* the last run's end; 0 while none ended */
  gint exit_status;  /* the last run's, or -1 */
  gint signal;       /* the signal that ended the last run, or 0 */
  guint runs;        /* runs so far */
} StgRunnerProc;

/* How processes without a logger of their own keep their output. */
typedef struct
{
  StgThermosLogDestination destination;
  StgThermosLogMode mode;
  gint64 rotate_log_size;
  gint rotate_backups;
} StgRunnerLogDefaults;

/* Where the HTTP lifecycle is when a stop was asked for. */
typedef enum
{
  STG_LIFECYCLE_IDLE,          /* no stop asked, or no lifecycle */
  STG_LIFECYCLE_GRACEFUL,      /* POST graceful_shutdown_endpoint under way */
  STG_LIFECYCLE_GRACEFUL_WAIT, /* it was handled: graceful_shutdown_wait_secs */
  STG_LIFECYCLE_SHUTDOWN,      /* POST shutdown_endpoint under way */
  STG_LIFECYCLE_SHUTDOWN_WAIT, /* it was handled: shutdown_wait_secs */
  STG_LIFECYCLE_DONE,
} StgLifecyclePhase;

typedef struct
{
  StgThermosJob *job;  /* owned */
  StgThermosVars vars; /* strings owned below */
  gchar *hostname, *task_id, *user;
  GHashTable *ports; /* every port name -> number (aliases included) */
  gchar *sandbox;    /* absolute */
  gchar *shell;      /* bash, or sh */
  gboolean bash;
  gchar **environ; /* what every process starts from */
  StgRunnerLogDefaults log_defaults;
  gint preemption_wait; /* seconds a stop gives CLEANING and FINALIZING together */

  StgRunnerProc *procs; /* one per process of the task, in its order */
  guint n_procs;
  StgThermosPlanner *regular;
  StgThermosPlanner *finalizing;
  GList *logs; /* StgRunnerLog: output pumps still open */

  StgRunnerStage stage;
  StgRunnerStage ending; /* the terminal state CLEANING leads to; KILLED: a stop was asked */
  gint64 launch_time;    /* wall clock, microseconds */
  gint64 deadline;       /* monotonic: the end of CLEANING and FINALIZING */
  gint64 reap_deadline;  /* monotonic: the last wait for leftovers */
  StgLifecyclePhase lifecycle;
  gint64 lifecycle_deadline; /* monotonic: the end of a lifecycle wait */

  GMainLoop *loop;
  guint timer; /* the next pump () */
  gint sigchld_fd;
  guint sigchld_source;
  guint signal_sources[3]; /* SIGTERM, SIGINT, SIGUSR1 */
  StgServerSet *announcer; /* (nullable) the instance's ServerSet member-to-be */
} StgRunner;

/* runner.c ----------------------------------------------------------------------------- */

/* Builds the runner of @job (taken) with everything main() decided (its
 * preemption_wait is STG_THERMOS_PREEMPTION_WAIT_SECS; main() may set
 * another before stg_runner_run). Fails when a template cannot be filled
 * in. */
StgRunner *stg_runner_new (StgThermosJob *job, const StgThermosVars *vars, GHashTable *ports,
                           const gchar *sandbox, const gchar *shell, gchar **env,
                           const StgRunnerLogDefaults *log_defaults, GError **error);
void stg_runner_free (StgRunner *runner);

/* Runs the task to its end; returns the exit status (STG_RUNNER_EXIT_*). */
gint stg_runner_run (StgRunner *runner, GError **error);

/* runner_announce.c -------------------------------------------------------------------- */

typedef struct
{
  gchar *ensemble;       /* --announcer-ensemble; NULL: nothing is announced */
  gchar *root;           /* --announcer-serverset-path: /aurora by default */
  gboolean allow_custom; /* --announcer-allow-custom-serverset-path: announce.zk_path honoured */
  gchar *auth_config;    /* --announcer-zookeeper-auth-config (nullable) */
  gchar *hostname;       /* --announcer-hostname (nullable): else the task's host name */
} StgRunnerAnnounce;

/* The member-to-be of the job's ServerSet for one instance of @job, with
 * @ports (every port name and alias -> number) on @hostname; NULL with no
 * @error when the job does not announce or no ensemble is given. It joins
 * when staggerd says the instance is healthy (SIGUSR1, runner.c). */
StgServerSet *stg_runner_announcer (const StgRunnerAnnounce *options, const StgThermosJob *job,
                                    GHashTable *ports, const gchar *hostname, gint instance,
                                    StgServerSetFunc changed, gpointer data, GError **error);

/* runner_spawn.c ------------------------------------------------------------------------ */

/* Starts the next run of @proc (run number proc->run + 1): its log folder,
 * its output, bash -c CMDLINE in the sandbox in a session of its own. */
gboolean stg_runner_spawn (StgRunner *runner, StgRunnerProc *proc, GError **error);

/* The environment processes start from: HOME (the sandbox), USER and
 * LOGNAME (@user), PATH, and every STAGGER_* variable of @parent; or all of
 * @parent with @preserve. */
gchar **stg_runner_base_environ (gchar **parent, const gchar *sandbox, const gchar *user,
                                 gboolean preserve);

/* runner_tree.c ------------------------------------------------------------------------- */

/* Makes the runner the reaper of its orphaned descendants and returns a
 * descriptor that becomes readable when a child exits (SIGCHLD, which the
 * caller blocked in every thread before starting any). */
gint stg_runner_tree_init (GError **error);

/* Reaps one child that has exited: its *@pid and wait *@status; FALSE
 * when none has. */
gboolean stg_runner_tree_reap (GPid *pid, gint *status);

/* Whether any child (a process, or an orphan adopted by the runner) is
 * left. */
gboolean stg_runner_tree_busy (void);

/* Sends @sig to the process group of every running process and to every
 * descendant of the runner (found in /proc), so that processes that left
 * their group or session (daemons) get it too. Returns how many processes
 * and groups it reached. */
guint stg_runner_tree_signal (StgRunner *runner, gint sig);

/* runner_logs.c ------------------------------------------------------------------------- */

/* The descriptors a run's standard output and error go to (*@out, *@err,
 * to close in the parent after the fork), opening files or pipes under
 * @dir (.logs/<process>/<run>) as @proc's logger says. */
gboolean stg_runner_logs_open (StgRunner *runner, StgRunnerProc *proc, const gchar *dir, gint *out,
                               gint *err, GError **error);

/* Reads what is left in every open pump and closes them. */
void stg_runner_logs_close_all (StgRunner *runner);

/* runner_state.c ------------------------------------------------------------------------ */

#define STG_RUNNER_STATE_FILE ".thermos_state.json"

/* The states' names, as the state file and the runner's messages say
 * them. */
const gchar *stg_runner_stage_name (StgRunnerStage stage);

/* Writes STG_RUNNER_STATE_FILE in the sandbox (through a temporary file
 * and a rename, so that readers see a whole one). */
gboolean stg_runner_state_write (StgRunner *runner, GError **error);

/* StgServerSetFunc: the instance's membership changed; the state file
 * says so ("announce"). */
void stg_runner_announce_changed (StgServerSet *set, gpointer runner);

/* runner_lifecycle.c -------------------------------------------------------------------- */

/* POSTs to @endpoint on localhost:@port, within a second (Aurora's
 * timeout); @callback gets whether it was handled: any HTTP answer. */
void stg_runner_lifecycle_post (guint16 port, const gchar *endpoint, GCancellable *cancellable,
                                GAsyncReadyCallback callback, gpointer data);
gboolean stg_runner_lifecycle_post_finish (GAsyncResult *result);

G_END_DECLS
