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

#include "runtime/local_private.h"

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

GBytes *
stg_local_read_output (Slot *slot, gboolean err, gint64 offset, gsize max, gint64 *next,
                       gint64 *size, GError **error)
{
  /* The serving run's output; between runs, the newest run folder's. */
  g_autofree gchar *root = stg_local_slot_root (slot);
  g_autofree gchar *seq = g_strdup_printf ("%" G_GINT64_FORMAT,
                                           slot->run ? slot->run->id : stg_local_last_run (slot));
  g_autofree gchar *path = g_build_filename (root, seq, err ? "stderr" : "stdout", NULL);
  gint fd = g_open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0);
  struct stat st;

  if (fd < 0 || fstat (fd, &st) != 0 || !S_ISREG (st.st_mode))
    {
      int saved = fd < 0 ? errno : EINVAL;
      if (fd >= 0)
        close (fd);
      g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_NOT_FOUND,
                   "instance %d has no %s yet (%s)", slot->base.key.instance,
                   err ? "stderr" : "stdout", g_strerror (saved));
      return NULL;
    }
  gint64 from = offset < 0 ? MAX ((gint64) st.st_size + offset, 0)
                           : MIN (offset, (gint64) st.st_size);
  g_autofree guint8 *buf = g_malloc (max > 0 ? max : 1);
  ssize_t got = max > 0 ? pread (fd, buf, max, (off_t) from) : 0;
  close (fd);
  if (got < 0)
    {
      int saved = errno;
      g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_FAILED, "reading %s: %s", path,
                   g_strerror (saved));
      return NULL;
    }
  *next = from + got;
  *size = st.st_size;
  return g_bytes_new (buf, (gsize) got);
}
