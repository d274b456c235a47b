/* process.h: starting, finding and signalling instance processes.
 *
 * Each instance runs in its own session and process group, so a stop
 * signals everything it started. A process is named by its pid and its
 * start time (clock ticks since boot, from /proc), so a reused pid is never
 * mistaken for it after a restart. Sockets for hot upgrade are handed over
 * with the systemd protocol (LISTEN_FDS, LISTEN_PID, LISTEN_FDNAMES).
 * Main-loop thread only (fork happens there).
 */
#pragma once

#include <glib.h>

#include "runtime/identity.h"

G_BEGIN_DECLS

#define STG_PROCESS_ERROR (stg_process_error_quark ())
GQuark stg_process_error_quark (void);
typedef enum { STG_PROCESS_ERROR_FAILED, STG_PROCESS_ERROR_NOT_FOUND } StgProcessError;

typedef struct
{
  gchar **argv;              /* argv[0] found on PATH when it has no '/' */
  gchar **envp;              /* the whole environment */
  const gchar *cwd;
  const gchar *stdout_path;  /* appended to */
  const gchar *stderr_path;
  const gint *fds;           /* (nullable) sockets to pass as 3, 4, ... */
  guint n_fds;
  const gchar *fd_names;     /* (nullable) LISTEN_FDNAMES, colon-separated */
  const StgIdentity *identity; /* (nullable) the user to run as; NULL: ours */
  const gchar *own_dir;        /* (nullable) given to @identity once the output files are open */
} StgSpawn;

/* Starts a process; fails if it cannot be executed. */
gboolean stg_process_spawn (const StgSpawn *spawn, GPid *pid, gint64 *start_time, GError **error);

/* TRUE when @pid is alive and started at @start_time. */
gboolean stg_process_is (GPid pid, gint64 start_time);

/* A pidfd for @pid (readable when it exits), or -1 with @error. */
gint stg_process_pidfd (GPid pid, GError **error);

/* A copy of file descriptor @fd of the process behind @pidfd, or -1. */
gint stg_process_getfd (gint pidfd, gint fd, GError **error);

typedef struct
{
  GPid pid;
  gint64 start_time;
  gchar *mark;               /* the value of the marker variable */
} StgMarkedProcess;

/* Every session leader on this host (an instance's first process; its
 * children are left out) whose environment holds @name, readable in
 * /proc/PID/environ (processes of other users are skipped when we may not
 * read them). A GPtrArray of StgMarkedProcess, owned. */
GPtrArray *stg_process_find_marked (const gchar *name);

/* Sends @sig to the process group led by @pid. */
void stg_process_signal_group (GPid pid, gint sig);

/* The executable @name in the folders of @search (a PATH), or NULL. */
gchar *stg_process_search_path (const gchar *name, const gchar *search);

G_END_DECLS
