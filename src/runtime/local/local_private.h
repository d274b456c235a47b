/* local_private.h: the local runtime's model, shared by local.c, adopt.c,
 * run.c, environ.c, ports.c, sandbox.c and local_slot.c. Not for use outside src/runtime/local/.
 * Main-loop thread only.
 *
 * A Slot is one instance of one job: a StgSlot (slot.h: key, job, wanted
 * config, phase, failures, run numbers, made from the store) and what is
 * the local runtime's own. It has at most two Runs: the one serving (run)
 * and, during a hot upgrade, the new version starting beside it (next). A
 * Run is one process: spawned here or adopted after a restart, with its
 * health checks and its sandbox.
 *
 * A Run's life, and the function behind each arrow:
 *
 *   (none) --[stg_run_start: spawned as slot->run, or as slot->next beside
 *            it (hot upgrade)]--> STARTING
 *   (none) --[stg_run_adopt: found alive after a restart]--> STARTING or RUNNING
 *   STARTING --[commit (run.c), from on_health or on_post_hook; a next
 *            replaces run, whose stopping becomes STOP_OLD]--> RUNNING
 *   STARTING, RUNNING --[stg_run_stop, after setting run->stopping:
 *            local_kill, local_restart, proceed_replace, local_apply
 *            (STOP_ABANDON), stg_run_fail]--> stopping
 *   any --[run_ended, from on_child or on_pidfd; then stg_run_free]--> gone
 *
 * What a run's exit leads to, by its StopReason (run_ended):
 *   STOP_NONE     it ended on its own: stg_local_after_exit (FINISHED for a
 *                 task that succeeded, else FAILED and a restart after
 *                 back-off, for a task that is not a service only while
 *                 stg_slot_runs_again); a next that died leaves run serving.
 *   STOP_KILL     the slot goes once both runs are gone: stg_slot_remove
 *                 (ABSENT, instance row deleted).
 *   STOP_REPLACE  PENDING, then stg_local_start_replacement: the wanted
 *                 config (a cold replace; post_update owed), after its
 *                 pre_update when that did not run for it.
 *   STOP_RESTART  PENDING, then the same config again.
 *   STOP_FAILED   counted already (stg_run_fail): restart after back-off.
 *   STOP_OLD      nothing: the new version serves.
 *   STOP_ABANDON  nothing: the old version keeps serving.
 *
 * A Slot's phase (what observe reports) changes only through
 * stg_slot_set_phase (slot.h), along these arrows:
 *
 *   ABSENT, PENDING, FAILED --[stg_run_start]--> STARTING
 *   ABSENT, FAILED --[stg_local_start_held: max_concurrent_starts]--> PENDING
 *   STARTING --[commit: stg_slot_healthy]--> RUNNING
 *   STARTING, RUNNING --[local_kill, local_restart, proceed_replace]--> KILLING
 *   KILLING --[run_ended: STOP_REPLACE, STOP_RESTART]--> PENDING
 *   KILLING --[run_ended: STOP_KILL, then stg_slot_remove]--> ABSENT (slot gone)
 *   STARTING, RUNNING --[stg_run_fail, start_failed, stg_local_after_exit]--> FAILED
 *   RUNNING --[stg_local_after_exit: a task that exited 0]--> FINISHED
 *   (a restart) --[adopt.c: adopt_run, judge_gone]--> RUNNING, STARTING,
 *            KILLING, FAILED, or ABSENT (slot gone)
 */
#pragma once

#include <libsoup/soup.h>

#include "runtime/executor.h"
#include "runtime/health.h"
#include "runtime/local/local.h"
#include "runtime/slot.h"
#include "spawn/cgroup.h"
#include "spawn/spawn.h"
#include "runtime/spec_cache.h"
#include "store/store.h"

/* Every instance process carries STG_LOCAL_MARK=JOB:INSTANCE:RUN:DATADIR
 * in its environment, so a restarted daemon finds it without its pid. */
#define STG_LOCAL_MARK "STAGGER_RUN_MARK"

/* The PATH instances get (they inherit nothing of staggerd's environment). */
#define STG_LOCAL_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

typedef struct _Slot Slot;
typedef struct _Run Run;

/* What the files below local.c call back into it for: local.c registers
 * them (rt->calls) and local_slot.c calls through them, so no file calls
 * local.c back. */
typedef struct
{
  /* what follows a run that ended on its own (stg_local_after_exit) */
  void (*after_exit) (Slot *slot, Run *run, gboolean success, const gchar *message);
  /* the wanted config once the replaced run is gone (stg_local_start_replacement) */
  void (*start_replacement) (Slot *slot);
  /* starts what waits (stg_local_release_waiting) */
  void (*release_waiting) (StgLocalRuntime *rt);
} StgLocalCalls;

/* Why a run was asked to stop; it decides what follows its exit. */
typedef enum
{
  STOP_NONE = 0,     /* running, or ended on its own */
  STOP_KILL,         /* the slot is being removed */
  STOP_REPLACE,      /* a cold replace: start the slot's wanted config */
  STOP_RESTART,      /* restartShards: start the same config again */
  STOP_FAILED,       /* it failed (health, hook): restart after back-off */
  STOP_OLD,          /* the old version after a hot upgrade */
  STOP_ABANDON,      /* a new version that is no longer wanted */
} StopReason;

struct _Run
{
  Slot *slot;
  gint64 id;                 /* run id: grows with each start of the slot */
  gint64 config_id;
  gint version;              /* STAGGER_VERSION */
  gint from_version;         /* started to replace that version (STAGGER_FROM_VERSION); 0: none */
  const StgTaskSpec *task;    /* its config, parsed (owned by the runtime's cache) */
  const StgExecutorSpec *spec; /* task->exec */
  gboolean service;
  GPid pid;
  gint64 pid_start;
  guint child_watch;         /* a child of ours */
  gint pidfd;                /* an adopted process */
  guint pidfd_watch;
  StgHealth *health;
  StgHealthTarget target;    /* where its checks go once it serves alone */
  gboolean healthy;          /* checks pass, and post_update (if any) passed */
  gboolean announcer;        /* a runner given --announcer-ensemble: SIGUSR1 once healthy */
  gint64 healthy_since_ms;
  gboolean from_update;      /* started to replace another config: run post_update */
  StgChild *hook;            /* post_update in flight */
  guint hook_timer;
  StopReason stopping;       /* why we asked it to stop; STOP_NONE: running */
  gboolean failed;           /* counted as a failed run already */
  gboolean counted;          /* one of the runtime's starts in flight */
  guint kill_timer;
  guint group_timer;         /* its first process gone, the rest of its group not yet */
  gboolean end_success;      /* ... and how that first process ended */
  gchar *end_how;
  gchar *sandbox;
  gchar *cgroup;      /* (nullable) its control group's name (local_limits.c) */
  gint64 disk_used;   /* bytes in its sandbox when last sampled; -1: not yet (local_disk.c) */
  gint64 cpu_seen_us; /* its group's CPU time when last looked at, and when; 0: never */
  gint64 cpu_seen_ns;
  gdouble cpu_rate; /* cores it used over the last look's window; -1: not known yet */
};

struct _Slot
{
  StgSlot base; /* the instance: key, job, want, phase, failures... (slot.h) */
  StgLocalRuntime *rt;
  Run *run;
  Run *next;                 /* hot upgrade: the new version starting beside run */
  guint restart_timer;
  StgChild *pre_hook;        /* pre_update in flight */
  guint pre_hook_timer;
  gint64 pre_hook_config;
  GArray *sockets;           /* gint: listening sockets for hot upgrade, by port name */
  GHashTable *ports;         /* name -> port (GINT_TO_POINTER) */
  gint64 queued;             /* config waiting for a start (max_concurrent_starts); 0: none */
  gboolean queued_update;    /* ... started for an update (post_update owed) */
  gchar *held;               /* ... why it waits, as recorded (nullable) */
};

struct _StgLocalRuntime
{
  StgRuntime base;
  const StgLocalCalls *calls; /* local.c's, for the files below it */
  StgStore *store;           /* borrowed */
  StgClock *clock;           /* borrowed */
  StgLocalOptions options;   /* strings owned */
  SoupSession *session;      /* health checks */
  StgSpecCache *specs;       /* parsed configs by config id */
  StgSlots *slots;           /* Slot*, by key */
  gchar *mark_dir;           /* the data dir, absolute: instances' markers name it */
  gchar *crash_at;           /* STAGGER_TEST_CRASH_AT (tests only), or NULL */
  guint log_timer;
  guint starting; /* runs started and not yet healthy nor gone */
  GQueue waiting; /* Slot*: starts held back by max_concurrent_starts or a drain */
  gchar *host;    /* this machine's name: the one host a drain may name */
  GHashTable *attributes; /* name -> value: this host's, for constraints ("host" aside) */
  gboolean drained; /* the host is drained for maintenance: nothing starts */
  guint disk_timer; /* the disk limit (local_disk.c): samples every disk_interval_ms */
  GQueue disk_queue;         /* ... DiskSample*: sandboxes waiting for a walk */
  GHashTable *disk_busy;     /* ... sandbox paths queued or being walked: one walk each */
  guint disk_walks;          /* ... walks under way */
  GCancellable *disk_cancel; /* ... cancelled when the runtime goes */
  StgCgroups *cgroups;       /* runs' limits (local_limits.c) */
  gchar *cgroup_prefix;      /* ... the data folder's, in its runs' group names */
  GPtrArray *cgroup_sweep;   /* ... names of groups to remove once their processes end */
  guint cgroup_sweep_timer;
};

/* Runs that may be starting at once (spawned, not yet healthy), unless
 * max_concurrent_starts says otherwise. */
#define STG_LOCAL_DEFAULT_STARTS 100

/* ---- slots (local_slot.c; local.c behind StgLocalCalls) ------------------------ */

/* Test hook: _exit here when STAGGER_TEST_CRASH_AT names @name (read once
 * when the runtime is made; inert when unset). */
void stg_local_crash_point (StgLocalRuntime *rt, const gchar *name);

/* The slot's phase follows its serving run (slot->run): RUNNING once
 * healthy, else STARTING; recorded with @message. */
void stg_local_show_run (Slot *slot, const gchar *message);

/* Closes the listening sockets the runtime holds for a hot-upgradable
 * slot (when a run that binds its own ports replaces it, or the slot goes). */
void stg_local_close_sockets (Slot *slot);

/* Counts a failed run of the slot (saved with the next phase change), and
 * says why: @why, and the last lines of @run's stderr (@run nullable: a
 * run that did not start). */
void stg_local_count_failure (Slot *slot, const Run *run, const gchar *why);

/* Decides what follows a run that ended on its own (@run NULL: one that
 * could not start). @message (nullable) is recorded. */
void stg_local_after_exit (Slot *slot, Run *run, gboolean success, const gchar *message);

/* Starts the wanted config once the run stopped to replace it is gone:
 * through that config's pre_update hook first when the hook has not run
 * for it (the config changed while the run was stopping: a rollback
 * decided while a failed version was being stopped). */
void stg_local_start_replacement (Slot *slot);

/* TRUE when @slot may not start @spec now: the host is drained, its
 * constraints rule this host out (stg_local_veto), or max_concurrent_starts
 * runs are starting already. It then waits (PENDING, saying why) until
 * stg_local_release_waiting starts it. */
gboolean stg_local_start_held (Slot *slot, const StgTaskSpec *spec, gboolean from_update);

/* Starts what waits, as far as the pace, the host and the constraints
 * allow; each waiting slot is tried once. */
void stg_local_release_waiting (StgLocalRuntime *rt);

/* @run no longer counts as starting (healthy, or gone): starts what
 * waits, as far as the cap allows. */
void stg_local_start_done (Run *run);

/* ---- the disk limit (local_disk.c) ------------------------------------------- */

/* Starts sampling the sandboxes of runs that reserve disk, every
 * options.disk_interval_ms; a run over its reservation fails. */
void stg_local_disk_start (StgLocalRuntime *rt);

/* Stops sampling: walks under way are cancelled and their ends ignored. */
void stg_local_disk_stop (StgLocalRuntime *rt);

/* ---- limits (local_limits.c) ------------------------------------------------- */

/* The resources @run's task reserves: cores, bytes of RAM and of disk
 * (an AuroraExecutor task's resources, else numCpus, ramMb, diskMb); 0:
 * none reserved. */
void stg_local_reserved (const Run *run, gdouble *cpus, gint64 *ram, gint64 *disk);

/* Finds where runs' groups go (options.cgroup_parent) and says so once. */
void stg_local_limits_open (StgLocalRuntime *rt);

/* Forgets the groups (they and their processes stay: a restart adopts them). */
void stg_local_limits_close (StgLocalRuntime *rt);

/* Why runs are not limited on this host, or NULL when they are. */
const gchar *stg_local_limits_unenforced (StgLocalRuntime *rt);

/* The name of run @run_id's control group. */
gchar *stg_local_cgroup_name (Slot *slot, gint64 run_id);

/* Makes @run's group with its task's limits (run->cgroup), and returns its
 * cgroup.procs files for the spawn to join (empty when groups cannot be
 * made here; the caller closes them: stg_cgroup_close_procs). */
GArray *stg_local_limits_join (Run *run, GError **error);

/* The cgroup.procs files of @run's group, made already, for a hook or a
 * shell health check acting for it to join (empty: @run is NULL or has
 * none; the caller closes them). */
GArray *stg_local_limits_join_run (Run *run, GError **error);

/* What @run uses (its group's figures, its last disk sample) and what
 * its task reserves; figures its group cannot give stay -1. */
gboolean stg_local_limits_usage (Run *run, StgInstanceUsage *out);

/* @run is gone: why, when the memory limit killed it ("exceeded its 64 MiB
 * of RAM (OOM kill)"), else NULL; its group is emptied and removed. */
gchar *stg_local_limits_end (Run *run);

/* ---- constraints (local_place.c) -------------------------------------------- */

/* Why this host may not run @spec for @slot, given where the job's other
 * instances run (all here), in Aurora's words ("Constraint not satisfied:
 * host", "Limit not satisfied: host", "Host is dedicated"); NULL when it
 * may. */
gchar *stg_local_veto (Slot *slot, const StgTaskSpec *spec);

/* ---- runs (run.c) ---------------------------------------------------------- */

/* Starts @spec in @slot as a new run. @beside: a hot upgrade (start next
 * beside run). @from_update: run post_update once healthy. Returns NULL
 * after counting the failure when it cannot start. */
Run *stg_run_start (Slot *slot, const StgTaskSpec *spec, gboolean beside, gboolean from_update);

/* stg_run_start for config @config_id, found in the runtime's cache (a
 * config that cannot be loaded or parsed counts as a failed start). */
Run *stg_run_start_config (Slot *slot, gint64 config_id, gboolean beside, gboolean from_update);

/* What a restarted daemon knows of a process it adopts. */
typedef struct
{
  gint64 run_id;
  gint64 config_id;
  gint64 pid;
  gint64 pid_start;
  gint64 healthy_since_ms;   /* 0: not known to be healthy */
} StgRunFacts;

/* Adopts a process that outlived the previous daemon, as slot->run. */
Run *stg_run_adopt (Slot *slot, const StgRunFacts *row, GError **error);

/* A run that failed while still running (health, hook, disk): the failure
 * is counted with @why and the run stopped, to start again after back-off
 * (a new version of a hot upgrade: the old one keeps serving). Nothing
 * when it is stopping or failed already. */
void stg_run_fail (Run *run, const gchar *why);

/* Asks a run to stop: SIGTERM to its group, SIGKILL after its stop timeout. */
void stg_run_stop (Run *run);

void stg_run_free (Run *run);

/* A run whose process is gone though its end was not seen: it ended,
 * failed (reconciliation, adopt.c). */
void stg_run_lost (Run *run);

/* The runtime's reconcile operation (adopt.c: the marked processes in
 * /proc against the slots' runs). */
gboolean stg_local_reconcile (StgRuntime *base, gboolean implicit, GHashTable *tasks,
                              gchar **summary, GError **error);

/* Starts a hook command for @slot as its role's user (output appended to
 * hooks.log in the slot's folder), with STAGGER_FROM_VERSION
 * @from_version (the version the change leaves) and STAGGER_TO_VERSION
 * (@spec's), in the control group of @in, the run it acts for (nullable:
 * none, the instance is down); @done gets its wait status. The caller
 * bounds it with a timer (stg_child_kill). */
StgChild *stg_run_hook (Slot *slot, Run *in, const StgHookSpec *hook, const StgTaskSpec *spec,
                        const gchar *name, gint from_version, StgChildDone done, gpointer data,
                        GError **error);

/* What a hook's wait status means, in words ("pre_update hook exited with
 * status 1"); a signal means it was stopped. */
gchar *stg_run_hook_outcome (const gchar *name, gint status);

/* ---- what a start puts together (run_launch.c) ------------------------------ */

/* What a start builds before the fork; released by stg_launch_clear. */
typedef struct
{
  GHashTable *ports; /* name -> port */
  StgTemplateVars vars;
  gchar **env;
  gchar *cwd;
  GPtrArray *argv; /* NULL-terminated once built */
  GArray *fds;     /* sockets passed as 3, 4, ... */
  gchar *fd_names;
  gint probe_fd; /* beside: the private probe socket, or -1 */
  gint probe_port;
  gint task_fd; /* an AuroraExecutor task's JSON, for its runner; or -1 */
} Launch;

void stg_launch_clear (Launch *l);

/* The environment, working directory and argv of @run (an AuroraExecutor
 * task's: its runner's), templates expanded. @beside: a hot upgrade. */
gboolean stg_launch_argv (Run *run, Launch *l, gboolean beside, GError **error);

/* The sockets handed to the process: the slot's shared listening sockets
 * for a hot upgrade and, beside the old version, a probe socket only it
 * holds ("probe" in LISTEN_FDNAMES, STAGGER_PROBE_PORT). */
gboolean stg_launch_sockets (Run *run, Launch *l, gboolean beside, GError **error);

/* Forks and execs the process as its role's user, output appended to the
 * sandbox's stdout and stderr; sets run->pid. */
gboolean stg_launch_spawn (Run *run, Launch *l, GError **error);

/* ---- ports (ports.c) ------------------------------------------------------- */

/* The slot's named ports (kept in the store, stable across runs and
 * restarts), allocating those it has not got yet. */
GHashTable *stg_local_ports (StgLocalRuntime *rt, Slot *slot, gchar **names, GError **error);

/* A listening socket on @port (SO_REUSEADDR), or -1 with @error. */
gint stg_local_listen (StgLocalRuntime *rt, gint port, GError **error);
/* The local port a listening socket is bound to (0 if unknown). */
gint stg_local_socket_port (gint fd);

/* ---- what a process starts with (environ.c) --------------------------------- */

/* The base every instance, health command and hook starts from: PATH,
 * HOME (@home) and LANG, nothing of staggerd's environment (owned). */
gchar **stg_local_base_environ (const gchar *home);

/* The value of STG_LOCAL_MARK for run @run_id of @slot (owned). */
gchar *stg_local_mark (Slot *slot, gint64 run_id);

/* The whole environment of @run (NULL with @error when a template of the
 * task's env fails). @alt_version: the version it starts beside, or 0. */
gchar **stg_local_environment (Slot *slot, Run *run, gint alt_version, GHashTable *ports,
                               gchar **port_names, const StgTemplateVars *vars, GError **error);

/* The port health checks go to: "health", else "http", else the first. */
gint stg_local_health_port (GHashTable *ports, gchar **names);

/* @command with its program (a bare first word, as in argv) found the way
 * argv[0] is: when the instance's PATH lacks it but staggerd's has it, the
 * word becomes its full path, so a `command` runs what the same `argv`
 * would. Other commands come back unchanged. */
gchar *stg_local_resolve_command (const gchar *command);

/* ---- sandboxes (sandbox.c) -------------------------------------------------- */

/* The slot's folder: one folder per run inside it, and hooks.log. */
gchar *stg_local_slot_root (Slot *slot);

/* The slot's output @query names (see StgRuntimeOps.read_log): the
 * serving run's, else the newest run folder's; an AuroraExecutor task's
 * process's from its .logs. Never through a symlink. */
GBytes *stg_local_read_output (Slot *slot, const StgLogQuery *query, StgLogInfo *info,
                               GError **error);

/* Opens the regular file @parts (folder names, then the file's) under the
 * run folder @dir for reading, through descriptors: no part may be a
 * symlink (the folders below a run folder are its user's). -1 with @error
 * (STG_RUNTIME_ERROR_NOT_FOUND). */
gint stg_local_open_run_file (const gchar *dir, const gchar *const *parts, GError **error);

/* run_state.c ---------------------------------------------------------------------------- */

/* The state an AuroraExecutor task's runner left in @run's sandbox
 * (SUCCESS, FAILED, KILLED...), or NULL. */
gchar *stg_local_runner_state (const Run *run);

/* Where @run's runner announces its task, as its state file says: FALSE
 * when it announces nothing (or has said nothing yet). */
gboolean stg_local_runner_announcement (const Run *run, StgAnnouncement *out);

/* Who runs @slot's instances (its role's user, else the default); NULL:
 * staggerd's own user. */
const StgIdentity *stg_local_identity (Slot *slot);

/* The user name {{thermos.user}} stands for in @slot's instances (NULL:
 * staggerd's own user). */
const gchar *stg_local_user_name (Slot *slot);

/* Lets the user of @slot's instances pass through its folder @root and
 * the job's folder above it (0711) to reach its own run folders; FALSE
 * when they cannot be changed. Nothing to do when it runs as staggerd. */
gboolean stg_local_open_folders (Slot *slot, const gchar *root);

#define STG_LOCAL_TAIL_BYTES 2048

/* The last @lines lines of the run's stderr (its last
 * STG_LOCAL_TAIL_BYTES bytes at most, made valid UTF-8), or NULL if empty. */
gchar *stg_local_stderr_tail (const Run *run, guint lines);

/* Keeps the newest keep_runs run folders of a slot, those of its runs and
 * that of run @keep_id (one just made). */
void stg_local_prune (Slot *slot, gint64 keep_id);

/* The highest run number with a folder in the slot's folder (0: none). The
 * newest folders are never pruned, so a slot that is removed and added
 * again goes on counting from there. */
gint64 stg_local_last_run (Slot *slot);

/* Trims output files over the size limit; removes old run folders. */
void stg_local_trim_logs (StgLocalRuntime *rt);
