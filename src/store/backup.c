/* backup.c: StgBackups, backups of the SQLite store and recovery from
 * them, after Aurora's scheduler: copies of the live database made with
 * SQLite's online backup API into a folder, one file each
 * (scheduler-backup-YYYY-MM-DD-HH-MM-SS, UTC), listed and pruned to a
 * count; and a recovery that stages one copy as a store of its own
 * (migrated to this build's schema), which callers read and delete tasks
 * from, then either drop or commit. A committed copy waits
 * beside the database until the next opening of the store puts it in its
 * place (stg_store_install_recovered). PostgreSQL keeps its own backups:
 * every call here says so. Calls db.h and the store's own files.
 * Main-loop thread only.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <glib/gstdio.h>

#include "common/error.h"
#include "store/store_private.h"
#include "store/plans.h"

#define PREFIX "scheduler-backup-"

#define STAGED_SUFFIX ".staged"
#define RECOVERED_SUFFIX ".recovered"

static gboolean
unsupported (GError **error)
{
  return stg_fail (error, STG_STORE_ERROR, STG_STORE_ERROR_UNSUPPORTED,
                   "the store is PostgreSQL: its own backups apply (pg_dump, or base backups "
                   "with WAL archiving, restored with PostgreSQL's tools); performBackup and the "
                   "recovery calls are for the SQLite store");
}

static gboolean
fail_errno (GError **error, const gchar *what, const gchar *path)
{
  int saved = errno;
  return stg_fail (error, STG_STORE_ERROR, STG_STORE_ERROR_FAILED, "%s %s: %s", what, path,
                   g_strerror (saved));
}

/* A backup's name: the prefix, then digits and dashes only. */
static gboolean
backup_name (const gchar *name)
{
  if (!g_str_has_prefix (name, PREFIX) || name[strlen (PREFIX)] == '\0')
    return FALSE;
  for (const gchar *c = name + strlen (PREFIX); *c != '\0'; c++)
    if (!g_ascii_isdigit (*c) && *c != '-')
      return FALSE;
  return TRUE;
}

/* ---- backups ------------------------------------------------------------------ */

/* Copies @store into a new backup of @dir named after @now_ms; its id. */
static gchar *
write_backup (StgStore *store, const gchar *dir, gint64 now_ms, GError **error)
{
  g_return_val_if_fail (!stg_store_in_transaction (store), NULL);
  if (g_mkdir_with_parents (dir, 0700) != 0)
    return fail_errno (error, "cannot create the backup folder", dir), NULL;
  g_autoptr (GDateTime) when = g_date_time_new_from_unix_utc (now_ms / 1000);
  g_autofree gchar *stamp = g_date_time_format (when, "%Y-%m-%d-%H-%M-%S");
  g_autofree gchar *id = g_strconcat (PREFIX, stamp, NULL);
  g_autofree gchar *path = g_build_filename (dir, id, NULL);
  for (guint n = 2; g_file_test (path, G_FILE_TEST_EXISTS); n++)
    {
      g_free (id), id = g_strdup_printf ("%s%s-%u", PREFIX, stamp, n);
      g_free (path), path = g_build_filename (dir, id, NULL);
    }
  /* Written under another name, then renamed: a backup is whole or absent. */
  g_autofree gchar *tmp = g_strconcat (path, ".tmp", NULL);
  g_unlink (tmp);
  if (!stg_db_sqlite_backup (store->db, tmp, error))
    return NULL;
  if (g_rename (tmp, path) != 0)
    {
      fail_errno (error, "cannot rename the backup", tmp);
      g_unlink (tmp);
      return NULL;
    }
  return g_steal_pointer (&id);
}

static gint
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const gchar *const *) a, *(const gchar *const *) b);
}

/* The backups of @dir, oldest first. */
static GPtrArray *
list_backups (const gchar *dir, GError **error)
{
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GError) local = NULL;
  g_autoptr (GDir) d = g_dir_open (dir, 0, &local);
  const gchar *name;

  if (d == NULL && g_error_matches (local, G_FILE_ERROR, G_FILE_ERROR_NOENT))
    return g_steal_pointer (&out);
  if (d == NULL)
    return stg_fail (error, STG_STORE_ERROR, STG_STORE_ERROR_FAILED,
                     "cannot read the backup folder: %s", local->message),
           NULL;
  while ((name = g_dir_read_name (d)) != NULL)
    if (backup_name (name))
      g_ptr_array_add (out, g_strdup (name));
  /* The names sort as their times do (a second backup of one second
   * after the first: "-2" sorts after the bare stamp). */
  g_ptr_array_sort (out, compare_names);
  return g_steal_pointer (&out);
}

/* Deletes the oldest backups of @dir beyond the newest @keep. */
static gboolean
prune_backups (const gchar *dir, guint keep, guint *removed, GError **error)
{
  g_autoptr (GPtrArray) names = list_backups (dir, error);

  *removed = 0;
  if (names == NULL)
    return FALSE;
  for (guint i = 0; i + keep < names->len; i++)
    {
      g_autofree gchar *path = g_build_filename (dir, names->pdata[i], NULL);
      if (g_unlink (path) != 0 && errno != ENOENT)
        return fail_errno (error, "cannot remove the backup", path);
      (*removed)++;
    }
  return TRUE;
}

/* ---- the object ---------------------------------------------------------------- */

struct _StgBackups
{
  StgStore *live;      /* borrowed */
  gboolean postgresql; /* every call refuses */
  gchar *db_path;      /* the live SQLite database */
  gchar *dir;          /* the backups */
  gchar *staged_path;  /* db_path.staged */
  StgStore *staged;    /* (nullable) the staged copy */
  gchar *staged_id;    /* (nullable) the backup it came from */
};

StgBackups *
stg_backups_new (StgStore *live, const gchar *db_path, const gchar *dir)
{
  StgBackups *r = g_new0 (StgBackups, 1);

  r->live = live;
  r->postgresql = stg_db_engine (live->db) != STG_DB_SQLITE;
  r->db_path = g_strdup (db_path);
  r->dir = g_strdup (dir);
  r->staged_path = g_strconcat (db_path, STAGED_SUFFIX, NULL);
  return r;
}

const gchar *
stg_backups_dir (StgBackups *r)
{
  return r->dir;
}

gchar *
stg_backups_write (StgBackups *r, gint64 now_ms, GError **error)
{
  if (r->postgresql)
    return unsupported (error), NULL;
  return write_backup (r->live, r->dir, now_ms, error);
}

GPtrArray *
stg_backups_list (StgBackups *r, GError **error)
{
  if (r->postgresql)
    return unsupported (error), NULL;
  return list_backups (r->dir, error);
}

gboolean
stg_backups_prune (StgBackups *r, guint keep, guint *removed, GError **error)
{
  *removed = 0;
  if (r->postgresql)
    return unsupported (error);
  return prune_backups (r->dir, keep, removed, error);
}

/* ---- recovery ----------------------------------------------------------------- */

/* Removes a database file and what SQLite keeps beside it. */
static void
remove_database (const gchar *path)
{
  static const gchar *const suffixes[] = { "", "-wal", "-shm", "-journal" };

  for (guint i = 0; i < G_N_ELEMENTS (suffixes); i++)
    {
      g_autofree gchar *file = g_strconcat (path, suffixes[i], NULL);
      if (g_unlink (file) != 0 && errno != ENOENT)
        g_warning ("store: cannot remove %s: %s", file, g_strerror (errno));
    }
}

/* Drops the staged copy, when there is one. */
static void
unload (StgBackups *r)
{
  if (r->staged == NULL)
    return;
  g_clear_pointer (&r->staged, stg_store_close);
  g_clear_pointer (&r->staged_id, g_free);
  remove_database (r->staged_path);
}

gboolean
stg_backups_unload (StgBackups *r, GError **error)
{
  if (r->postgresql)
    return unsupported (error);
  unload (r);
  return TRUE;
}

void
stg_backups_free (StgBackups *r)
{
  if (r == NULL)
    return;
  unload (r);
  g_free (r->db_path);
  g_free (r->dir);
  g_free (r->staged_path);
  g_free (r);
}

gboolean
stg_backups_stage (StgBackups *r, const gchar *id, GError **error)
{
  if (r->postgresql)
    return unsupported (error);
  if (r->staged != NULL)
    return stg_fail (error, STG_STORE_ERROR, STG_STORE_ERROR_INVALID,
                     "backup %s is staged already: commit or unload it first", r->staged_id);
  if (id == NULL || !backup_name (id))
    return stg_fail (error, STG_STORE_ERROR, STG_STORE_ERROR_INVALID,
                     "'%s' is not a backup's id (listBackups names them: " PREFIX "...)",
                     id ? id : "");
  g_autofree gchar *path = g_build_filename (r->dir, id, NULL);
  if (!g_file_test (path, G_FILE_TEST_IS_REGULAR))
    return stg_fail (error, STG_STORE_ERROR, STG_STORE_ERROR_NOT_FOUND, "no backup %s in %s", id,
                     r->dir);
  remove_database (r->staged_path);
  if (!stg_db_sqlite_copy_file (path, r->staged_path, error))
    return FALSE;
  /* Opening migrates a backup of an older Stagger; one of a newer is refused. */
  r->staged = stg_store_open (r->staged_path, error);
  if (r->staged == NULL)
    {
      g_prefix_error (error, "staging backup %s: ", id);
      remove_database (r->staged_path);
      return FALSE;
    }
  r->staged_id = g_strdup (id);
  return TRUE;
}

StgStore *
stg_backups_staged (StgBackups *r, const gchar **id, GError **error)
{
  if (r->postgresql)
    return unsupported (error), NULL;
  if (r->staged == NULL)
    return stg_fail (error, STG_STORE_ERROR, STG_STORE_ERROR_INVALID,
                     "no backup is staged (stageRecovery loads one)"),
           NULL;
  if (id != NULL)
    *id = r->staged_id;
  return r->staged;
}

gboolean
stg_backups_commit (StgBackups *r, GError **error)
{
  g_autofree gchar *recovered = g_strconcat (r->db_path, RECOVERED_SUFFIX, NULL);

  if (stg_backups_staged (r, NULL, error) == NULL)
    return FALSE;
  /* Closing the last connection folds the write-ahead log into the file. */
  g_clear_pointer (&r->staged, stg_store_close);
  remove_database (recovered);
  if (g_rename (r->staged_path, recovered) != 0)
    {
      fail_errno (error, "cannot move the staged backup to", recovered);
      g_clear_pointer (&r->staged_id, g_free);
      remove_database (r->staged_path);
      return FALSE;
    }
  g_clear_pointer (&r->staged_id, g_free);
  remove_database (r->staged_path);
  return TRUE;
}

gboolean
stg_store_install_recovered (const gchar *db_path, gboolean *installed, GError **error)
{
  g_autofree gchar *recovered = g_strconcat (db_path, RECOVERED_SUFFIX, NULL);

  *installed = FALSE;
  if (!g_file_test (recovered, G_FILE_TEST_IS_REGULAR))
    return TRUE;
  /* The old database's log first: left beside the new file, SQLite would
   * replay it into it. Interrupted anywhere, this runs again at the next
   * start, since the recovered file stays until the rename. */
  static const gchar *const beside[] = { "-wal", "-shm", "-journal" };
  for (guint i = 0; i < G_N_ELEMENTS (beside); i++)
    {
      g_autofree gchar *file = g_strconcat (db_path, beside[i], NULL);
      if (g_unlink (file) != 0 && errno != ENOENT)
        return fail_errno (error, "cannot remove", file);
    }
  if (g_rename (recovered, db_path) != 0)
    return fail_errno (error, "cannot put the recovered backup in place of", db_path);
  *installed = TRUE;
  return TRUE;
}
