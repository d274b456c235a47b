/* cgroup.h: control groups that hold an instance's processes to what its
 * task reserved: memory (a hard limit, no swap beyond it), CPU (a CFS
 * quota of so many cores, as Mesos sets one, or a weight) and a number of
 * processes, and what they used.
 *
 * Both kinds of host are served: cgroup v2 where the memory, cpu and pids
 * controllers can be had from one unified hierarchy, else cgroup v1 with
 * one hierarchy per controller (hybrid hosts mount both; this takes v2
 * only when its controllers are there). Groups are made below a base:
 * the one given, or "stagger" in staggerd's own group (which systemd's
 * Delegate=yes hands it), out of which staggerd's own process moves to a
 * leaf "daemon" under v2 so its controllers may be handed down.
 *
 * A process joins a group by writing its own pid into the group's
 * cgroup.procs files before it execs (stg_cgroup_open_procs gives the
 * descriptors; spawn.c writes them first thing after the fork), so no
 * process of an instance ever runs outside its group. Part of
 * libstg_spawn (GLib only). Main-loop thread only.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  STG_CGROUP_NONE = 0, /* no group can be made: limits are not enforced */
  STG_CGROUP_V1,
  STG_CGROUP_V2,
} StgCgroupVersion;

typedef struct _StgCgroups StgCgroups;

typedef struct
{
  gint64 memory;       /* bytes; 0: not limited */
  gdouble cpus;        /* cores; 0: not limited */
  gboolean cpu_weight; /* a weight in proportion to @cpus instead of a quota */
  gint64 pids;         /* processes and threads; 0: not limited */
} StgCgroupLimits;

typedef struct
{
  gint64 memory;       /* bytes in use now (page cache included, as the limit counts it) */
  gint64 memory_peak;  /* the most it used; -1: not known */
  gint64 rss;          /* anonymous memory; -1: not known */
  gint64 cpu_ns;       /* CPU time used by all its processes */
  gint64 throttled_ns; /* time its CPU quota held it back */
  gint64 oom_kills;    /* processes the memory limit killed; -1: not known */
  gint64 pids;         /* processes and threads in it now */
} StgCgroupUsage;

/* Finds where groups can be made, below @base (a path inside the
 * hierarchy, "/stagger"; NULL: "stagger" in staggerd's own group), and
 * makes the base ready. Never fails: a host where no group can be made
 * gives a StgCgroups of version STG_CGROUP_NONE whose
 * stg_cgroups_describe() says why. @proc: the folder holding the
 * "mountinfo" and "cgroup" files to read (NULL: /proc/self). */
StgCgroups *stg_cgroups_new (const gchar *base, const gchar *proc);
void stg_cgroups_free (StgCgroups *cg);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgCgroups, stg_cgroups_free)

StgCgroupVersion stg_cgroups_version (const StgCgroups *cg);

/* What is used and where ("cgroup v1: memory at /sys/fs/cgroup/memory/x,
 * ..."), or why nothing is. */
const gchar *stg_cgroups_describe (const StgCgroups *cg);

/* Makes group @name (a single path component) below the base, or takes it
 * as it is when it exists (after a restart), and sets @limits on it. */
gboolean stg_cgroup_make (StgCgroups *cg, const gchar *name, const StgCgroupLimits *limits,
                          GError **error);

/* The cgroup.procs files of group @name, opened for writing, close-on-exec
 * (one per hierarchy), as a GArray of gint: the caller closes them. */
GArray *stg_cgroup_open_procs (StgCgroups *cg, const gchar *name, GError **error);

/* What group @name has used. */
gboolean stg_cgroup_usage (StgCgroups *cg, const gchar *name, StgCgroupUsage *usage,
                           GError **error);

/* Sends SIGKILL to every process of group @name; how many it reached. */
guint stg_cgroup_kill (StgCgroups *cg, const gchar *name);

/* Removes group @name; FALSE with @error while processes remain in it.
 * A group that is not there is removed already. */
gboolean stg_cgroup_remove (StgCgroups *cg, const gchar *name, GError **error);

/* Removes every group whose name starts with @prefix and holds no
 * process; returns how many of them still hold processes. */
guint stg_cgroups_prune (StgCgroups *cg, const gchar *prefix);

/* Closes each descriptor of @fds (from stg_cgroup_open_procs) and frees it. */
void stg_cgroup_close_procs (GArray *fds);

G_END_DECLS
