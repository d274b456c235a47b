/* cgroup.c: StgCgroups, groups that hold instances to their resources.
 *
 * Where: /proc/self/mountinfo names the cgroup file systems, and
 * /proc/self/cgroup the group staggerd is in within each (tests give
 * files of their own). A v2 hierarchy
 * is used when the group the base goes in offers memory, cpu and pids
 * (cgroup.controllers); each group from there down to the base then hands
 * them on (cgroup.subtree_control), which v2 allows only to a group with
 * no process of its own: staggerd leaves its own group for a leaf
 * "daemon" beside the base. Otherwise each v1 hierarchy of memory, cpu,
 * cpuacct and pids that is mounted gets the base as a folder.
 *
 * Files are written with one write(2) each, as the kernel wants them.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spawn/cgroup.h"

/* Under v1 each controller has a folder of its own; under v2 all four
 * name the same one. NULL: that controller is not there. */
enum
{
  C_MEMORY,
  C_CPU,
  C_CPUACCT,
  C_PIDS,
  N_CONTROLLERS
};

static const gchar *const controller_names[N_CONTROLLERS] = { "memory", "cpu", "cpuacct", "pids" };

/* The CFS period a quota is a share of, as Mesos uses: 100 ms. */
#define CPU_PERIOD_US 100000

struct _StgCgroups
{
  StgCgroupVersion version;
  gchar *base[N_CONTROLLERS];
  gchar *describe;
};

/* ---- files ------------------------------------------------------------------- */

/* Writes @value to @file of @dir: 0, or the errno of the failure. */
static gint
write_value (const gchar *dir, const gchar *file, const gchar *value)
{
  g_autofree gchar *path = g_build_filename (dir, file, NULL);
  gint fd = open (path, O_WRONLY | O_CLOEXEC);
  gint saved;

  if (fd < 0)
    return errno;
  saved = write (fd, value, strlen (value)) < 0 ? errno : 0;
  close (fd);
  return saved;
}

static gboolean
write_file (const gchar *dir, const gchar *file, const gchar *value, GError **error)
{
  gint e = write_value (dir, file, value);

  if (e != 0)
    g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "cannot write %s to %s/%s: %s",
                 value, dir, file, g_strerror (e));
  return e == 0;
}

/* Makes folder @dir (and, @parents, those above it); one there is fine. */
static gboolean
make_dir (const gchar *dir, gboolean parents, GError **error)
{
  if ((parents ? g_mkdir_with_parents (dir, 0755) : mkdir (dir, 0755)) == 0 || errno == EEXIST)
    return TRUE;
  g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errno), "cannot make %s: %s", dir,
               g_strerror (errno));
  return FALSE;
}

static gchar *
read_file (const gchar *dir, const gchar *file)
{
  g_autofree gchar *path = g_build_filename (dir, file, NULL);
  gchar *text = NULL;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return NULL;
  return text;
}

static gboolean
has_file (const gchar *dir, const gchar *file)
{
  g_autofree gchar *path = g_build_filename (dir, file, NULL);

  return g_file_test (path, G_FILE_TEST_EXISTS);
}

/* The number in @file of @dir; -1 when it cannot be read. */
static gint64
read_number (const gchar *dir, const gchar *file)
{
  g_autofree gchar *text = dir != NULL ? read_file (dir, file) : NULL;

  return text != NULL && g_ascii_isdigit (text[0]) ? g_ascii_strtoll (text, NULL, 10) : -1;
}

/* The value of "@key N" in flat-keyed @file of @dir; -1 when absent. */
static gint64
read_key (const gchar *dir, const gchar *file, const gchar *key)
{
  g_autofree gchar *text = dir != NULL ? read_file (dir, file) : NULL;
  gsize len = strlen (key);

  for (const gchar *line = text; line != NULL && *line != '\0';)
    {
      if (strncmp (line, key, len) == 0 && line[len] == ' ')
        return g_ascii_strtoll (line + len + 1, NULL, 10);
      line = strchr (line, '\n');
      line = line != NULL ? line + 1 : NULL;
    }
  return -1;
}

/* Whether the words of @text include @word. */
static gboolean
has_word (const gchar *text, const gchar *word, const gchar *separators)
{
  g_auto (GStrv) words = g_strsplit_set (text != NULL ? text : "", separators, -1);

  return g_strv_contains ((const gchar *const *) words, word);
}

/* ---- where --------------------------------------------------------------------- */

/* A cgroup file system: its mount point, the group it shows as its top,
 * and (v1) its controllers. */
typedef struct
{
  gchar *mount;
  gchar *top;
  gchar *options;
  gboolean v2;
} Mount;

static void
mount_clear (gpointer data)
{
  Mount *m = data;

  g_free (m->mount);
  g_free (m->top);
  g_free (m->options);
}

/* The cgroup mounts of @proc's mountinfo ("36 35 0:31 / /sys/fs/cgroup/memory
 * rw - cgroup cgroup rw,memory"). */
static GArray *
read_mounts (const gchar *proc)
{
  GArray *mounts = g_array_new (FALSE, TRUE, sizeof (Mount));
  g_autofree gchar *path = g_build_filename (proc, "mountinfo", NULL);
  g_autofree gchar *text = NULL;

  g_array_set_clear_func (mounts, mount_clear);
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return mounts;
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (gchar **l = lines; *l != NULL; l++)
    {
      const gchar *dash = strstr (*l, " - ");
      if (dash == NULL)
        continue;
      g_auto (GStrv) left = g_strsplit (*l, " ", 6);
      g_auto (GStrv) right = g_strsplit (dash + 3, " ", 3);
      if (g_strv_length (left) < 5 || g_strv_length (right) < 3)
        continue;
      gboolean v2 = strcmp (right[0], "cgroup2") == 0;
      if (!v2 && strcmp (right[0], "cgroup") != 0)
        continue;
      Mount m = { g_strdup (left[4]), g_strdup (left[3]), g_strdup (right[2]), v2 };
      g_array_append_val (mounts, m);
    }
  return mounts;
}

/* The group this process is in within the hierarchy of @controller ("" for
 * v2), from @proc's cgroup ("4:memory:/a/b", "0::/a"); NULL if none. */
static gchar *
own_group (const gchar *proc, const gchar *controller)
{
  g_autofree gchar *path = g_build_filename (proc, "cgroup", NULL);
  g_autofree gchar *text = NULL;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return NULL;
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (gchar **l = lines; *l != NULL; l++)
    {
      g_auto (GStrv) f = g_strsplit (*l, ":", 3);
      if (g_strv_length (f) < 3)
        continue;
      gboolean match = controller[0] == '\0' ? strcmp (f[0], "0") == 0 && f[1][0] == '\0'
                                             : has_word (f[1], controller, ",");
      if (match)
        return g_strdup (f[2]);
    }
  return NULL;
}

/* The folder of group @group ("/a/b") in mount @m. */
static gchar *
group_dir (const Mount *m, const gchar *group)
{
  const gchar *rel = group;

  if (strcmp (m->top, "/") != 0 && g_str_has_prefix (group, m->top))
    rel = group + strlen (m->top);
  return g_build_filename (m->mount, rel, NULL);
}

/* The group the base is: @base as given, else "stagger" in our own. */
static gchar *
base_group (const gchar *base, const gchar *own)
{
  if (base != NULL)
    return g_strdup (base);
  return g_build_filename (own != NULL ? own : "/", "stagger", NULL);
}

/* ---- v2 ------------------------------------------------------------------------ */

#define V2_CONTROLLERS "+memory +cpu +pids"

/* Whether @dir offers memory, cpu and pids to the groups below it. */
static gboolean
v2_offers (const gchar *dir)
{
  g_autofree gchar *have = read_file (dir, "cgroup.controllers");

  return has_word (have, "memory", " \n") && has_word (have, "cpu", " \n") &&
         has_word (have, "pids", " \n");
}

/* Moves this process into leaf "daemon" of @dir, its own group. */
static gboolean
v2_leave (const gchar *dir, GError **error)
{
  g_autofree gchar *leaf = g_build_filename (dir, "daemon", NULL);
  g_autofree gchar *pid = g_strdup_printf ("%d", (gint) getpid ());

  return make_dir (leaf, FALSE, error) && write_file (leaf, "cgroup.procs", pid, error);
}

/* Makes @dir (when missing) hand memory, cpu and pids on. @own: it is our
 * own group, which we leave when it holds us. */
static gboolean
v2_delegate (const gchar *dir, gboolean own, GError **error)
{
  g_autofree gchar *on = read_file (dir, "cgroup.subtree_control");

  if (!make_dir (dir, FALSE, error))
    return FALSE;
  if (has_word (on, "memory", " \n") && has_word (on, "cpu", " \n") && has_word (on, "pids", " \n"))
    return TRUE;
  /* EBUSY: processes of its own (ours) keep it from handing them on. */
  gint e = write_value (dir, "cgroup.subtree_control", V2_CONTROLLERS);
  if (e == 0)
    return TRUE;
  if (!own || e != EBUSY)
    return write_file (dir, "cgroup.subtree_control", V2_CONTROLLERS, error);
  return v2_leave (dir, error) && write_file (dir, "cgroup.subtree_control", V2_CONTROLLERS, error);
}

/* Makes base group @base of v2 mount @m ready: every group from the one
 * offering the controllers down to it hands them on. */
static gboolean
v2_open (StgCgroups *cg, const Mount *m, const gchar *base, const gchar *own, GError **error)
{
  g_autofree gchar *dir = group_dir (m, base);
  g_autofree gchar *own_dir = own != NULL ? group_dir (m, own) : NULL;
  g_autofree gchar *parent = g_path_get_dirname (dir);

  if (!g_str_has_prefix (dir, m->mount) || !v2_offers (parent))
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
                   "cgroup v2 at %s does not offer memory, cpu and pids to %s", m->mount, dir);
      return FALSE;
    }
  /* The parent offers them; it must also hand them to the base. */
  gboolean parent_own = own_dir != NULL && strcmp (parent, own_dir) == 0;
  if (!v2_delegate (parent, parent_own, error) || !v2_delegate (dir, FALSE, error))
    return FALSE;
  for (guint c = 0; c < N_CONTROLLERS; c++)
    cg->base[c] = g_strdup (dir);
  cg->version = STG_CGROUP_V2;
  cg->describe = g_strdup_printf ("cgroup v2: memory, cpu and pids at %s", dir);
  return TRUE;
}

/* ---- v1 ------------------------------------------------------------------------ */

static gboolean
v1_open (StgCgroups *cg, const gchar *proc, GArray *mounts, const gchar *base, GError **error)
{
  g_autoptr (GString) text = g_string_new ("cgroup v1:");
  g_autoptr (GString) missing = g_string_new (NULL);

  for (guint c = 0; c < N_CONTROLLERS; c++)
    for (guint i = 0; i < mounts->len && cg->base[c] == NULL; i++)
      {
        const Mount *m = &g_array_index (mounts, Mount, i);
        if (m->v2 || !has_word (m->options, controller_names[c], ","))
          continue;
        g_autofree gchar *own = own_group (proc, controller_names[c]);
        g_autofree gchar *group = base_group (base, own);
        g_autofree gchar *dir = group_dir (m, group);
        if (!make_dir (dir, TRUE, error))
          return FALSE;
        cg->base[c] = g_steal_pointer (&dir);
        g_string_append_printf (text, "%s %s at %s", c > 0 ? "," : "", controller_names[c],
                                cg->base[c]);
      }
  for (guint c = 0; c < N_CONTROLLERS; c++)
    if (cg->base[c] == NULL && c != C_CPUACCT)
      g_string_append_printf (missing, "%s%s", missing->len ? ", " : "", controller_names[c]);
  if (cg->base[C_MEMORY] == NULL && cg->base[C_CPU] == NULL && cg->base[C_PIDS] == NULL)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
                   "no cgroup v1 hierarchy of memory, cpu or pids is mounted");
      return FALSE;
    }
  if (missing->len > 0)
    g_string_append_printf (text, " (no %s hierarchy: not limited)", missing->str);
  cg->version = STG_CGROUP_V1;
  cg->describe = g_string_free (g_steal_pointer (&text), FALSE);
  return TRUE;
}

/* ---- the groups ---------------------------------------------------------------- */

StgCgroups *
stg_cgroups_new (const gchar *base, const gchar *proc)
{
  StgCgroups *cg = g_new0 (StgCgroups, 1);
  const gchar *from = proc != NULL ? proc : "/proc/self";
  g_autoptr (GArray) mounts = read_mounts (from);
  g_autoptr (GError) v2_error = NULL, v1_error = NULL;
  g_autofree gchar *own = own_group (from, "");

  for (guint i = 0; i < mounts->len; i++)
    {
      const Mount *m = &g_array_index (mounts, Mount, i);
      g_autofree gchar *group = base_group (base, own);
      if (m->v2 && v2_error == NULL && v2_open (cg, m, group, own, &v2_error))
        return cg;
    }
  if (v1_open (cg, from, mounts, base, &v1_error))
    return cg;
  for (guint c = 0; c < N_CONTROLLERS; c++)
    g_clear_pointer (&cg->base[c], g_free);
  cg->version = STG_CGROUP_NONE;
  cg->describe = g_strdup_printf ("no cgroup can be made (%s%s%s): instances' memory, CPU and "
                                  "processes are not limited",
                                  v2_error != NULL ? v2_error->message : "",
                                  v2_error != NULL ? "; " : "", v1_error->message);
  return cg;
}

void
stg_cgroups_free (StgCgroups *cg)
{
  if (cg == NULL)
    return;
  for (guint c = 0; c < N_CONTROLLERS; c++)
    g_free (cg->base[c]);
  g_free (cg->describe);
  g_free (cg);
}

StgCgroupVersion
stg_cgroups_version (const StgCgroups *cg)
{
  return cg->version;
}

const gchar *
stg_cgroups_describe (const StgCgroups *cg)
{
  return cg->describe;
}

/* The folders of group @name, one per distinct hierarchy (v2: one). */
static GPtrArray *
group_dirs (const StgCgroups *cg, const gchar *name)
{
  GPtrArray *dirs = g_ptr_array_new_with_free_func (g_free);

  for (guint c = 0; c < N_CONTROLLERS; c++)
    {
      if (cg->base[c] == NULL)
        continue;
      g_autofree gchar *dir = g_build_filename (cg->base[c], name, NULL);
      gboolean seen = FALSE;
      for (guint i = 0; i < dirs->len && !seen; i++)
        seen = strcmp (dirs->pdata[i], dir) == 0;
      if (!seen)
        g_ptr_array_add (dirs, g_steal_pointer (&dir));
    }
  return dirs;
}

/* The folder of group @name in the hierarchy of @c; NULL if none. */
static gchar *
dir_of (const StgCgroups *cg, guint c, const gchar *name)
{
  return cg->base[c] != NULL ? g_build_filename (cg->base[c], name, NULL) : NULL;
}

static gboolean
set_memory (const StgCgroups *cg, const gchar *dir, gint64 bytes, GError **error)
{
  g_autofree gchar *value = bytes > 0 ? g_strdup_printf ("%" G_GINT64_FORMAT, bytes) : NULL;

  if (cg->version == STG_CGROUP_V2)
    return write_file (dir, "memory.max", value ? value : "max", error) &&
           (!has_file (dir, "memory.swap.max") ||
            write_file (dir, "memory.swap.max", value ? "0" : "max", error));
  /* memsw (memory and swap) may never be below the memory limit: lift it,
   * set the limit, then bring it down to the limit (no swap beyond). */
  gboolean memsw = has_file (dir, "memory.memsw.limit_in_bytes");
  return (!memsw || write_file (dir, "memory.memsw.limit_in_bytes", "-1", error)) &&
         write_file (dir, "memory.limit_in_bytes", value ? value : "-1", error) &&
         (!memsw || write_file (dir, "memory.memsw.limit_in_bytes", value ? value : "-1", error));
}

static gboolean
set_cpu (const StgCgroups *cg, const gchar *dir, const StgCgroupLimits *l, GError **error)
{
  gboolean quota = l->cpus > 0 && !l->cpu_weight;
  gint64 us = quota ? MAX (1000, (gint64) (l->cpus * CPU_PERIOD_US)) : -1;

  if (cg->version == STG_CGROUP_V2)
    {
      g_autofree gchar *max = quota ? g_strdup_printf ("%" G_GINT64_FORMAT " %d", us, CPU_PERIOD_US)
                                    : g_strdup_printf ("max %d", CPU_PERIOD_US);
      gint64 w = l->cpus > 0 && l->cpu_weight ? CLAMP ((gint64) (l->cpus * 100), 1, 10000) : 100;
      g_autofree gchar *weight = g_strdup_printf ("%" G_GINT64_FORMAT, w);
      return write_file (dir, "cpu.max", max, error) &&
             write_file (dir, "cpu.weight", weight, error);
    }
  g_autofree gchar *period = g_strdup_printf ("%d", CPU_PERIOD_US);
  g_autofree gchar *q = g_strdup_printf ("%" G_GINT64_FORMAT, us);
  gint64 s = l->cpus > 0 && l->cpu_weight ? MAX (2, (gint64) (l->cpus * 1024)) : 1024;
  g_autofree gchar *shares = g_strdup_printf ("%" G_GINT64_FORMAT, s);
  return write_file (dir, "cpu.cfs_period_us", period, error) &&
         write_file (dir, "cpu.cfs_quota_us", q, error) &&
         write_file (dir, "cpu.shares", shares, error);
}

gboolean
stg_cgroup_make (StgCgroups *cg, const gchar *name, const StgCgroupLimits *limits, GError **error)
{
  g_return_val_if_fail (strchr (name, '/') == NULL && name[0] != '.', FALSE);
  g_autoptr (GPtrArray) dirs = group_dirs (cg, name);

  for (guint i = 0; i < dirs->len; i++)
    if (!make_dir (dirs->pdata[i], FALSE, error))
      return FALSE;
  g_autofree gchar *memory = dir_of (cg, C_MEMORY, name);
  g_autofree gchar *cpu = dir_of (cg, C_CPU, name);
  g_autofree gchar *pids = dir_of (cg, C_PIDS, name);
  g_autofree gchar *max = limits->pids > 0 ? g_strdup_printf ("%" G_GINT64_FORMAT, limits->pids)
                                           : g_strdup ("max");
  return (memory == NULL || set_memory (cg, memory, limits->memory, error)) &&
         (cpu == NULL || set_cpu (cg, cpu, limits, error)) &&
         (pids == NULL || write_file (pids, "pids.max", max, error));
}

GArray *
stg_cgroup_open_procs (StgCgroups *cg, const gchar *name, GError **error)
{
  g_autoptr (GPtrArray) dirs = group_dirs (cg, name);
  GArray *fds = g_array_new (FALSE, FALSE, sizeof (gint));

  for (guint i = 0; i < dirs->len; i++)
    {
      g_autofree gchar *path = g_build_filename (dirs->pdata[i], "cgroup.procs", NULL);
      gint fd = open (path, O_WRONLY | O_CLOEXEC);
      if (fd < 0)
        {
          g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errno), "cannot open %s: %s",
                       path, g_strerror (errno));
          stg_cgroup_close_procs (fds);
          return NULL;
        }
      g_array_append_val (fds, fd);
    }
  return fds;
}

void
stg_cgroup_close_procs (GArray *fds)
{
  if (fds == NULL)
    return;
  for (guint i = 0; i < fds->len; i++)
    close (g_array_index (fds, gint, i));
  g_array_unref (fds);
}

gboolean
stg_cgroup_usage (StgCgroups *cg, const gchar *name, StgCgroupUsage *u, GError **error)
{
  g_autofree gchar *memory = dir_of (cg, C_MEMORY, name);
  g_autofree gchar *cpu = dir_of (cg, C_CPU, name);
  g_autofree gchar *acct = dir_of (cg, C_CPUACCT, name);
  g_autofree gchar *pids = dir_of (cg, C_PIDS, name);
  gboolean v2 = cg->version == STG_CGROUP_V2;

  *u = (StgCgroupUsage){ -1, -1, -1, -1, -1, -1, -1 };
  if (cg->version == STG_CGROUP_NONE)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT, "%s", cg->describe);
      return FALSE;
    }
  u->memory = read_number (memory, v2 ? "memory.current" : "memory.usage_in_bytes");
  u->memory_peak = read_number (memory, v2 ? "memory.peak" : "memory.max_usage_in_bytes");
  u->rss = read_key (memory, "memory.stat", v2 ? "anon" : "total_rss");
  u->oom_kills = read_key (memory, v2 ? "memory.events" : "memory.oom_control", "oom_kill");
  if (v2)
    {
      gint64 usage = read_key (cpu, "cpu.stat", "usage_usec");
      gint64 held = read_key (cpu, "cpu.stat", "throttled_usec");
      u->cpu_ns = usage >= 0 ? usage * 1000 : -1;
      u->throttled_ns = held >= 0 ? held * 1000 : -1;
    }
  else
    {
      u->cpu_ns = read_number (acct, "cpuacct.usage");
      u->throttled_ns = read_key (cpu, "cpu.stat", "throttled_time");
    }
  u->pids = read_number (pids, "pids.current");
  if (u->memory < 0 && u->cpu_ns < 0 && u->pids < 0)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT, "no group %s in %s", name,
                   cg->describe);
      return FALSE;
    }
  return TRUE;
}

guint
stg_cgroup_kill (StgCgroups *cg, const gchar *name)
{
  g_autoptr (GPtrArray) dirs = group_dirs (cg, name);
  guint reached = 0;

  /* What a process forks meanwhile joins its group: look again until no
   * process was found (a few rounds at most). */
  for (guint round = 0; round < 8; round++)
    {
      guint now = 0;
      for (guint i = 0; i < dirs->len; i++)
        {
          g_autofree gchar *text = read_file (dirs->pdata[i], "cgroup.procs");
          g_auto (GStrv) pids = g_strsplit (text != NULL ? text : "", "\n", -1);
          for (gchar **p = pids; *p != NULL; p++)
            if (**p != '\0' && kill ((pid_t) g_ascii_strtoll (*p, NULL, 10), SIGKILL) == 0)
              now++;
        }
      reached += now;
      if (now == 0)
        break;
      g_usleep (1000);
    }
  return reached;
}

gboolean
stg_cgroup_remove (StgCgroups *cg, const gchar *name, GError **error)
{
  g_autoptr (GPtrArray) dirs = group_dirs (cg, name);

  for (guint i = 0; i < dirs->len; i++)
    if (rmdir (dirs->pdata[i]) != 0 && errno != ENOENT)
      {
        gint saved = errno;
        g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved), "cannot remove %s: %s",
                     (gchar *) dirs->pdata[i],
                     saved == EBUSY ? "processes remain in it" : g_strerror (saved));
        return FALSE;
      }
  return TRUE;
}

guint
stg_cgroups_prune (StgCgroups *cg, const gchar *prefix)
{
  g_autoptr (GPtrArray) bases = group_dirs (cg, "");
  g_autoptr (GHashTable) names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  GHashTableIter it;
  gpointer name;
  guint busy = 0;

  for (guint i = 0; i < bases->len; i++)
    {
      g_autoptr (GDir) dir = g_dir_open (bases->pdata[i], 0, NULL);
      const gchar *entry;
      while (dir != NULL && (entry = g_dir_read_name (dir)) != NULL)
        if (g_str_has_prefix (entry, prefix))
          g_hash_table_add (names, g_strdup (entry));
    }
  g_hash_table_iter_init (&it, names);
  while (g_hash_table_iter_next (&it, &name, NULL))
    if (!stg_cgroup_remove (cg, name, NULL))
      busy++;
  return busy;
}
