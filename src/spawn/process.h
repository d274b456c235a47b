/* process.h: finding and signalling instance processes (spawn.h starts
 * them).
 *
 * Each instance runs in its own session and process group, so a stop
 * signals everything it started. A process is named by its pid and its
 * start time (clock ticks since boot, from /proc), so a reused pid is never
 * mistaken for it after a restart. Part of libstg_spawn. Main-loop thread
 * only.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define STG_PROCESS_ERROR (stg_process_error_quark ())
GQuark stg_process_error_quark (void);
typedef enum { STG_PROCESS_ERROR_FAILED, STG_PROCESS_ERROR_NOT_FOUND } StgProcessError;

/* The start time of @pid, or -1 if there is no such process. */
gint64 stg_process_start_time (GPid pid);

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
  GPid parent;               /* its parent's pid */
  gchar *mark;               /* the value of the marker variable */
} StgMarkedProcess;

/* Every session leader on this host (an instance's first process; its
 * children are left out) whose environment holds @name, readable in
 * /proc/PID/environ (processes of other users are skipped when we may not
 * read them). A GPtrArray of StgMarkedProcess, owned. */
GPtrArray *stg_process_find_marked (const gchar *name);

/* Sends @sig to every process on this host, session leader or not, whose
 * environment holds @name=@value; returns how many it reached. */
guint stg_process_signal_marked (const gchar *name, const gchar *value, gint sig);

/* TRUE when @arg is one of the arguments @pid was started with
 * (/proc/PID/cmdline); FALSE too when it cannot be read. */
gboolean stg_process_has_arg (GPid pid, const gchar *arg);

/* Sends @sig to the process group led by @pid. */
void stg_process_signal_group (GPid pid, gint sig);

/* Whether a process of group @pgid still runs, its leader gone or not
 * (a zombie holds nothing and may never be reaped: orphans go to a PID 1
 * that need not reap them). */
gboolean stg_process_group_runs (GPid pgid);

/* The executable @name in the folders of @search (a PATH), or NULL. */
gchar *stg_process_search_path (const gchar *name, const gchar *search);

G_END_DECLS
