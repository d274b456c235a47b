/* spawn.h: the one way Stagger's programs start a process.
 *
 * Every process staggerd starts (an instance, its pre_update and
 * post_update hooks, its shell health checks, a shell gate, staggerd
 * itself again when a leader steps down) and every process stagger-thermos
 * starts (a Thermos process's run) is started here; nothing else in src/
 * forks or execs (scripts/spawn-check, run by make check, fails when
 * something does). Between the fork and the exec, the child, in order:
 *
 *   0. joins its control groups (@join: cgroup.procs files, cgroup.h),
 *      so not one of its instructions runs outside them;
 *   1. takes the default signal mask and dispositions (SIGPIPE included);
 *   2. leads a session, or a process group, of its own (StgSpawnGroup), so
 *      a stop or a timeout reaches everything it started;
 *   3. gets /dev/null as standard input, its outputs (StgSpawnOutput), the
 *      descriptors meant for it as 3, 4, ..., and loses every other one
 *      (close_range, or one by one where the kernel has no close_range);
 *   4. enters its working directory (before the user change: the folders
 *      above it may be closed to that user);
 *   5. sets its umask and resource limits;
 *   6. becomes its user: that user's supplementary groups (from the group
 *      database, never staggerd's), primary group and uid (identity.c);
 *   7. drops every ambient capability and sets PR_SET_NO_NEW_PRIVS, so no
 *      setuid program gives back what it left;
 *   8. asks for SIGKILL when its parent dies, when the request says so
 *      (after the user change, which would clear it), and exits at once
 *      when the parent is gone already;
 *   9. execs with exactly the environment it was given.
 *
 * A step that fails comes back to the parent through a close-on-exec pipe
 * (the step and its errno; reading nothing means the exec happened), so
 * stg_spawn() fails with, e.g., "cannot run sh: chdir /x: Permission
 * denied". The child only makes async-signal-safe calls.
 *
 * StgChild watches a short-lived child (a hook, a check, a gate) on the
 * main loop. Part of libstg_spawn (GLib only), below the runtime and the
 * Thermos runner. Main-loop thread only.
 */
#pragma once

#include <glib.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "spawn/identity.h"

G_BEGIN_DECLS

#define STG_SPAWN_ERROR (stg_spawn_error_quark ())
GQuark stg_spawn_error_quark (void);
typedef enum
{
  STG_SPAWN_ERROR_FAILED,
  STG_SPAWN_ERROR_NOT_FOUND
} StgSpawnError;

/* The umask a child starts with unless its request says otherwise. */
#define STG_SPAWN_UMASK 022

/* The soft limit on open files a child starts with (never above the hard
 * limit, which it keeps, and may raise its own up to), unless its request
 * sets RLIMIT_NOFILE. */
#define STG_SPAWN_MAX_FILES 1024

typedef enum
{
  STG_SPAWN_SESSION = 0, /* a session, and process group, of its own */
  STG_SPAWN_GROUP,       /* a process group of its own, in staggerd's session */
} StgSpawnGroup;

typedef enum
{
  STG_SPAWN_NULL = 0,  /* /dev/null */
  STG_SPAWN_FD,        /* @fd (borrowed; the child gets a copy) */
  STG_SPAWN_FILE,      /* @path, appended to, created 0600, never through a symlink */
  STG_SPAWN_PIPE,      /* a pipe; its read end is StgSpawned.out */
  STG_SPAWN_AS_STDOUT, /* standard error only: where standard output goes */
} StgSpawnTarget;

typedef struct
{
  StgSpawnTarget to;
  gint fd;
  const gchar *path;
} StgSpawnOutput;

typedef struct
{
  gint resource; /* RLIMIT_* */
  rlim_t soft;
  rlim_t hard;
} StgSpawnLimit;

typedef struct
{
  const gchar *const *argv;    /* argv[0] without a '/': found on @envp's PATH, else ours */
  const gchar *const *envp;    /* the whole environment (NULL: an empty one) */
  const gchar *cwd;            /* (nullable) "/" when NULL */
  const StgIdentity *identity; /* (nullable) the user to become; NULL: the caller's own */
  StgSpawnGroup group;
  StgSpawnOutput out; /* standard output; standard input is /dev/null */
  StgSpawnOutput err; /* standard error */
  const gint *fds;    /* (nullable) descriptors given as 3, 4, ... */
  guint n_fds;
  gboolean listen_fds;         /* announce @fds with LISTEN_FDS and LISTEN_PID */
  const gchar *fd_names;       /* (nullable) LISTEN_FDNAMES, colon-separated */
  mode_t umask;                /* 0: STG_SPAWN_UMASK */
  const StgSpawnLimit *limits; /* (nullable) resource limits to set */
  guint n_limits;
  const gchar *own_dir; /* (nullable) given to @identity once the outputs are open */
  gboolean die_with_parent; /* SIGKILL when the spawning process dies (PR_SET_PDEATHSIG) */
  const gint *join;         /* (nullable) cgroup.procs files it writes its pid to, first */
  guint n_join;
} StgSpawnRequest;

typedef struct
{
  GPid pid;
  gint64 start_time; /* clock ticks since boot (stg_process_start_time) */
  gint out;          /* STG_SPAWN_PIPE: the read end (the caller's to close); else -1 */
} StgSpawned;

/* Starts the process @request describes; FALSE with @error when it could
 * not be executed. The caller reaps it (g_child_watch_add, or StgChild). */
gboolean stg_spawn (const StgSpawnRequest *request, StgSpawned *spawned, GError **error);

/* Replaces this process by a new run of its own program (/proc/self/exe)
 * with @argv. Returns only when that fails, with @error set. */
gboolean stg_spawn_reexec (const gchar *const *argv, GError **error);

/* A wait status in words: "exited with status 3", "killed by signal 9
 * (Killed)". */
gchar *stg_spawn_describe (gint wait_status);

/* ---- StgChild: a short-lived child watched on the main loop --------------- */

typedef struct _StgChild StgChild;

/* Called once, when the child has ended, with its wait status. */
typedef void (*StgChildDone) (gpointer data, gint wait_status);

/* stg_spawn(), then watches the child until it ends: @done is called then,
 * unless the StgChild was freed first. */
StgChild *stg_child_spawn (const StgSpawnRequest *request, StgChildDone done, gpointer data,
                           GError **error);

/* The read end of the child's STG_SPAWN_PIPE output, handed over (-1 if
 * none or taken). */
gint stg_child_steal_out (StgChild *child);

/* SIGKILL to the child's process group, unless it has ended; @done still
 * follows. */
void stg_child_kill (StgChild *child);

/* Stops watching: @done is never called. A child still running is left
 * to run (stg_child_kill() first to stop it), and reaped when it ends. */
void stg_child_free (StgChild *child);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgChild, stg_child_free)

G_END_DECLS
