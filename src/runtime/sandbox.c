/* sandbox.c: the local runtime's folders on disk: each slot's folder
 * under the data dir, one folder per run inside it, the pruning of old run
 * folders and the trimming of output files. Calls nothing above the
 * runtime; main-loop thread only.
 */
#include "config.h"

#include <fcntl.h>
#include <glib/gstdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/local_private.h"

gchar *
stg_local_slot_root (Slot *slot)
{
  g_autofree gchar *instance = g_strdup_printf ("%d", slot->key.instance);
  return g_build_filename (slot->rt->options.data_dir, "sandboxes", slot->job->role,
                           slot->job->environment, slot->job->name, instance, NULL);
}

static gint
compare_runs (gconstpointer a, gconstpointer b)
{
  gint64 x = g_ascii_strtoll (*(const gchar *const *) a, NULL, 10);
  gint64 y = g_ascii_strtoll (*(const gchar *const *) b, NULL, 10);
  return (x > y) - (x < y);
}

static void
remove_tree (const gchar *path)
{
  g_autoptr (GDir) dir = g_dir_open (path, 0, NULL);
  const gchar *name;

  if (dir != NULL)
    while ((name = g_dir_read_name (dir)) != NULL)
      {
        g_autofree gchar *child = g_build_filename (path, name, NULL);
        if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
          remove_tree (child);
        else
          g_unlink (child);
      }
  g_rmdir (path);
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
      remove_tree (path);
    }
}

/* Keeps the last half of @path when it is over @limit bytes. */
static void
trim_file (const gchar *path, gsize limit)
{
  struct stat st;

  if (g_stat (path, &st) != 0 || (gsize) st.st_size <= limit)
    return;
  gint fd = g_open (path, O_RDWR | O_CLOEXEC, 0);
  if (fd < 0)
    return;
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

  g_hash_table_iter_init (&it, rt->slots);
  while (g_hash_table_iter_next (&it, NULL, &value))
    {
      Slot *slot = value;
      if (slot->run != NULL)
        trim_run (slot->run);
      if (slot->next != NULL)
        trim_run (slot->next);
    }
}
