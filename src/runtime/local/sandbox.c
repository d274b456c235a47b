/* sandbox.c: the local runtime's folders on disk: each slot's folder
 * under the data dir (DATA_DIR/sandboxes/JOB_ROW_ID/INSTANCE, built from
 * row ids, never from names), one folder per run inside it, the pruning of
 * old run folders (which deletes nothing outside DATA_DIR/sandboxes and
 * follows no symlink) and the trimming of output files. Calls nothing
 * above the runtime; main-loop thread only.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <glib/gstdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/local/local_private.h"
#include "runtime/thermos_task.h"

/* TRUE when @path lies strictly inside DATA_DIR/sandboxes/ (lexically,
 * after making it absolute and removing "." and ".."). */
static gboolean
inside_sandboxes (StgLocalRuntime *rt, const gchar *path)
{
  g_autofree gchar *canon = g_canonicalize_filename (path, NULL);
  g_autofree gchar *top = g_build_filename (rt->mark_dir, "sandboxes", "", NULL);

  return g_str_has_prefix (canon, top) && canon[strlen (top)] != '\0';
}

gchar *
stg_local_slot_root (Slot *slot)
{
  g_autofree gchar *job = g_strdup_printf ("%" G_GINT64_FORMAT, slot->base.key.job_id);
  g_autofree gchar *instance = g_strdup_printf ("%d", slot->base.key.instance);
  gchar *root = g_build_filename (slot->rt->mark_dir, "sandboxes", job, instance, NULL);

  g_assert (inside_sandboxes (slot->rt, root));
  return root;
}

const StgIdentity *
stg_local_identity (Slot *slot)
{
  const StgLocalOptions *o = &slot->rt->options;

  return stg_identity_for_role (o->role_users, o->default_user, slot->base.job->role);
}

const gchar *
stg_local_user_name (Slot *slot)
{
  const StgIdentity *id = stg_local_identity (slot);

  return id != NULL ? id->name : NULL;
}

gboolean
stg_local_open_folders (Slot *slot, const gchar *root)
{
  if (stg_local_identity (slot) == NULL)
    return TRUE;
  g_autofree gchar *job = g_path_get_dirname (root);
  return g_chmod (job, 0711) == 0 && g_chmod (root, 0711) == 0;
}

static gint
compare_runs (gconstpointer a, gconstpointer b)
{
  gint64 x = g_ascii_strtoll (*(const gchar *const *) a, NULL, 10);
  gint64 y = g_ascii_strtoll (*(const gchar *const *) b, NULL, 10);
  return (x > y) - (x < y);
}

/* Deletes entry @name of the open folder @dir_fd and what it holds,
 * through descriptors only: a symlink is removed, never followed, even
 * one swapped in by an instance's user while this runs. */
static void
remove_at (gint dir_fd, const gchar *name)
{
  if (unlinkat (dir_fd, name, 0) == 0 || errno != EISDIR)
    return;
  gint fd = openat (dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return;
  DIR *dir = fdopendir (fd);
  if (dir == NULL)
    {
      close (fd);
      return;
    }
  struct dirent *e;
  while ((e = readdir (dir)) != NULL)
    if (!g_str_equal (e->d_name, ".") && !g_str_equal (e->d_name, ".."))
      remove_at (fd, e->d_name);
  closedir (dir);
  unlinkat (dir_fd, name, AT_REMOVEDIR);
}

/* Deletes the folder @path and what it holds; nothing outside
 * DATA_DIR/sandboxes is touched and no symlink is followed. */
static void
remove_tree (StgLocalRuntime *rt, const gchar *path)
{
  if (!inside_sandboxes (rt, path))
    return;
  g_autofree gchar *parent = g_path_get_dirname (path);
  g_autofree gchar *name = g_path_get_basename (path);
  gint fd = open (parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return;
  remove_at (fd, name);
  close (fd);
}

/* The slot's run folders ("1", "2", ...), oldest first. */
static GPtrArray *
list_runs (const gchar *root)
{
  g_autoptr (GDir) dir = g_dir_open (root, 0, NULL);
  GPtrArray *runs = g_ptr_array_new_with_free_func (g_free);
  const gchar *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    if (g_ascii_isdigit (name[0]))
      g_ptr_array_add (runs, g_strdup (name));
  g_ptr_array_sort (runs, compare_runs);
  return runs;
}

gint64
stg_local_last_run (Slot *slot)
{
  g_autofree gchar *root = stg_local_slot_root (slot);
  g_autoptr (GPtrArray) runs = list_runs (root);

  return runs->len > 0 ? g_ascii_strtoll (runs->pdata[runs->len - 1], NULL, 10) : 0;
}

void
stg_local_prune (Slot *slot, gint64 keep_id)
{
  g_autofree gchar *root = stg_local_slot_root (slot);
  g_autoptr (GPtrArray) runs = list_runs (root);

  for (guint i = 0; i + slot->rt->options.keep_runs < runs->len; i++)
    {
      g_autofree gchar *path = g_build_filename (root, runs->pdata[i], NULL);
      gint64 id = g_ascii_strtoll (runs->pdata[i], NULL, 10);
      if (id == keep_id || (slot->run && slot->run->id == id) || (slot->next && slot->next->id == id))
        continue;
      remove_tree (slot->rt, path);
    }
}

/* Keeps the last half of @path when it is over @limit bytes. */
static void
trim_file (const gchar *path, gsize limit)
{
  struct stat st;

  /* Never through a symlink: the folder may belong to an instance's user. */
  gint fd = g_open (path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0);
  if (fd < 0)
    return;
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode) || (gsize) st.st_size <= limit)
    {
      close (fd);
      return;
    }
  gsize keep = limit / 2;
  g_autofree gchar *tail = g_malloc (keep);
  ssize_t got = pread (fd, tail, keep, st.st_size - (off_t) keep);
  if (got > 0 && ftruncate (fd, 0) == 0)
    {
      static const gchar mark[] = "[staggerd: earlier output removed to keep this file small]\n";
      (void) !write (fd, mark, sizeof mark - 1);
      (void) !write (fd, tail, (size_t) got);
    }
  close (fd);
}

static void
trim_run (Run *run)
{
  g_autofree gchar *out = g_build_filename (run->sandbox, "stdout", NULL);
  g_autofree gchar *err = g_build_filename (run->sandbox, "stderr", NULL);

  trim_file (out, run->slot->rt->options.log_limit);
  trim_file (err, run->slot->rt->options.log_limit);
}

void
stg_local_trim_logs (StgLocalRuntime *rt)
{
  GHashTableIter it;
  gpointer value;

  stg_slots_iter_init (rt->slots, &it);
  while (g_hash_table_iter_next (&it, NULL, &value))
    {
      Slot *slot = value;
      if (slot->run != NULL)
        trim_run (slot->run);
      if (slot->next != NULL)
        trim_run (slot->next);
    }
}

gchar *
stg_local_stderr_tail (const Run *run, guint lines)
{
  g_autofree gchar *path = g_build_filename (run->sandbox, "stderr", NULL);
  gint fd = g_open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0);
  struct stat st;

  if (fd < 0)
    return NULL;
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode))
    {
      close (fd);
      return NULL;
    }
  gchar buf[STG_LOCAL_TAIL_BYTES + 1];
  off_t from = st.st_size > STG_LOCAL_TAIL_BYTES ? st.st_size - STG_LOCAL_TAIL_BYTES : 0;
  ssize_t got = pread (fd, buf, STG_LOCAL_TAIL_BYTES, from);
  close (fd);
  if (got <= 0)
    return NULL;
  buf[got] = '\0';
  g_strchomp (buf);
  /* Back from the end over @lines line breaks. */
  gchar *start = buf + strlen (buf);
  for (guint n = 0; start > buf && n < lines;)
    if (*--start == '\n')
      n++;
  if (*start == '\n')
    start++;
  return *start != '\0' ? g_utf8_make_valid (start, -1) : NULL;
}

gint
stg_local_open_run_file (const gchar *dir, const gchar *const *parts, GError **error)
{
  gint at = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  gint fd = -1;
  struct stat st;

  for (guint i = 0; at >= 0 && parts[i] != NULL; i++)
    {
      gboolean last = parts[i + 1] == NULL;
      fd = openat (at, parts[i],
                   O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (last ? O_NONBLOCK : O_DIRECTORY));
      close (at);
      at = last ? -1 : fd;
    }
  if (fd >= 0 && fstat (fd, &st) == 0 && S_ISREG (st.st_mode))
    return fd;
  int saved = fd < 0 ? errno : EINVAL;
  if (fd >= 0)
    close (fd);
  g_autofree gchar *rest = g_strjoinv ("/", (gchar **) parts);
  g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_NOT_FOUND, "%s/%s: %s", dir, rest,
               g_strerror (saved));
  return -1;
}

/* The runs a process of the task has output of (.logs/PROCESS/N in the
 * run folder @dir): the newest, or -1 when none. */
static gint
newest_process_run (const gchar *dir, const gchar *process)
{
  g_autofree gchar *path = g_build_filename (dir, ".logs", process, NULL);
  g_autoptr (GPtrArray) runs = list_runs (path);

  return runs->len > 0 ? (gint) g_ascii_strtoll (runs->pdata[runs->len - 1], NULL, 10) : -1;
}

/* Fills @info->processes when the slot runs an AuroraExecutor task; FALSE
 * with @error when @process is not one of them. */
static gboolean
task_processes (Slot *slot, const gchar *process, StgLogInfo *info, GError **error)
{
  gint64 config = slot->run != NULL ? slot->run->config_id : slot->base.config_id;
  const StgTaskSpec *spec = config != 0 ? stg_spec_cache_get (slot->rt->specs, config, NULL) : NULL;

  return stg_thermos_task_log_processes (spec != NULL ? spec->thermos : NULL,
                                         slot->base.key.instance, process, info, error);
}

GBytes *
stg_local_read_output (Slot *slot, const StgLogQuery *q, StgLogInfo *info, GError **error)
{
  /* The serving run's output; between runs, the newest run folder's. */
  g_autofree gchar *root = stg_local_slot_root (slot);
  g_autofree gchar *seq = g_strdup_printf ("%" G_GINT64_FORMAT,
                                           slot->run ? slot->run->id : stg_local_last_run (slot));
  g_autofree gchar *dir = g_build_filename (root, seq, NULL);
  const gchar *name = q->err ? "stderr" : "stdout";
  g_autofree gchar *run = NULL;
  struct stat st;

  if (!task_processes (slot, q->process, info, error))
    return NULL;
  info->run = q->process != NULL && q->run < 0 ? newest_process_run (dir, q->process) : q->run;
  if (q->process != NULL)
    run = g_strdup_printf ("%d", info->run);
  const gchar *parts[] = { q->process ? ".logs" : name, q->process, run, name, NULL };
  gint fd = q->process == NULL || info->run >= 0 ? stg_local_open_run_file (dir, parts, NULL) : -1;
  if (fd < 0 && q->process != NULL)
    g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_NOT_FOUND,
                 "instance %d's process %s has no %s%s yet", slot->base.key.instance, q->process,
                 name, info->run >= 0 ? " of that run" : "");
  else if (fd < 0)
    g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_NOT_FOUND, "instance %d has no %s yet",
                 slot->base.key.instance, name);
  if (fd < 0)
    return NULL;
  fstat (fd, &st);
  gint64 from = q->offset < 0 ? MAX ((gint64) st.st_size + q->offset, 0)
                              : MIN (q->offset, (gint64) st.st_size);
  g_autofree guint8 *buf = g_malloc (q->max > 0 ? q->max : 1);
  ssize_t got = q->max > 0 ? pread (fd, buf, q->max, (off_t) from) : 0;
  int saved = errno;
  close (fd);
  if (got < 0)
    {
      g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_FAILED,
                   "reading %s of instance %d: %s", name, slot->base.key.instance,
                   g_strerror (saved));
      return NULL;
    }
  info->next = from + got;
  info->size = st.st_size;
  return g_bytes_new (buf, (gsize) got);
}
