/* disk_usage.c: see disk_usage.h. A depth-first walk through directory
 * descriptors (openat with O_NOFOLLOW, fstatat without following), so a
 * symlink that a sandbox's owner puts in the way leads nowhere. Owns
 * nothing between calls; any thread.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/local/disk_usage.h"

typedef struct
{
  dev_t dev;            /* the root's file system: no other is entered */
  GHashTable *linked;   /* "dev:ino" of files with more than one link, counted once */
  GCancellable *cancel; /* (nullable) */
  gint64 bytes;
} Walk;

/* TRUE the first time the walk meets the inode of @st. */
static gboolean
first_sight (Walk *w, const struct stat *st)
{
  if (S_ISDIR (st->st_mode) || st->st_nlink < 2)
    return TRUE;
  gchar *id = g_strdup_printf ("%ju:%ju", (uintmax_t) st->st_dev, (uintmax_t) st->st_ino);
  return g_hash_table_add (w->linked, id);
}

static void walk_folder (Walk *w, gint fd, guint depth);

/* Counts entry @name of the folder @dir and, for a folder on the same
 * file system, what it holds. */
static void
walk_entry (Walk *w, gint dir, const gchar *name, guint depth)
{
  struct stat st;

  if (fstatat (dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_dev != w->dev ||
      !first_sight (w, &st))
    return;
  w->bytes += (gint64) st.st_blocks * 512;
  if (!S_ISDIR (st.st_mode) || depth >= STG_DISK_USAGE_DEPTH_MAX)
    return;
  gint fd = openat (dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat opened;
  /* Replaced between the stat and the open (by a mount, say): not entered. */
  if (fd >= 0 &&
      (fstat (fd, &opened) != 0 || opened.st_dev != st.st_dev || opened.st_ino != st.st_ino))
    {
      close (fd);
      return;
    }
  if (fd >= 0)
    walk_folder (w, fd, depth + 1);
}

/* Counts what the folder open as @fd holds (its own blocks are counted by
 * whoever found it); closes @fd. */
static void
walk_folder (Walk *w, gint fd, guint depth)
{
  DIR *d = fdopendir (fd);
  struct dirent *e;

  if (d == NULL)
    {
      close (fd);
      return;
    }
  while (!g_cancellable_is_cancelled (w->cancel) && (e = readdir (d)) != NULL)
    {
      if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
        continue;
      walk_entry (w, dirfd (d), e->d_name, depth);
    }
  closedir (d);
}

gint64
stg_disk_usage (const gchar *root, GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (root != NULL, -1);
  gint fd = open (root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;

  if (fd < 0 || fstat (fd, &st) != 0)
    {
      int saved = errno;
      if (fd >= 0)
        close (fd);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "%s: %s", root,
                   g_strerror (saved));
      return -1;
    }
  Walk w = {
    .dev = st.st_dev,
    .linked = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL),
    .cancel = cancellable,
    .bytes = (gint64) st.st_blocks * 512,
  };
  walk_folder (&w, fd, 0);
  g_hash_table_unref (w.linked);
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return -1;
  return w.bytes;
}
