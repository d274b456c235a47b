/* db_sqlite.c: the SQLite engine of the database layer (db.h): WAL,
 * synchronous=FULL, foreign keys, PRAGMA user_version as the schema
 * version; and copies of a database with SQLite's online backup API (the
 * store's backups). Calls only SQLite. Main-loop thread only.
 */
#include "config.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <sqlite3.h>

#include "store/db_private.h"
#include "store/store.h"

static gboolean
note_error (StgDb *db)
{
  int code = sqlite3_extended_errcode (db->conn);
  stg_db_set_error (db, sqlite3_errmsg (db->conn), (code & 0xff) == SQLITE_CONSTRAINT);
  return FALSE;
}

static gpointer
lite_prepare (StgDb *db, const gchar *sql, GError **error)
{
  sqlite3_stmt *stmt = NULL;

  if (sqlite3_prepare_v3 (db->conn, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, NULL) != SQLITE_OK)
    {
      note_error (db);
      stg_db_fail (db, error, "preparing a statement");
      return NULL;
    }
  return stmt;
}

static void
lite_finalize (gpointer stmt)
{
  sqlite3_finalize (stmt);
}

static void
lite_reset (gpointer stmt)
{
  sqlite3_reset (stmt);
  sqlite3_clear_bindings (stmt);
}

static void
lite_bind_int64 (gpointer stmt, int index, gint64 value)
{
  sqlite3_bind_int64 (stmt, index, value);
}

static void
lite_bind_text (gpointer stmt, int index, const gchar *text)
{
  sqlite3_bind_text (stmt, index, text, -1, SQLITE_TRANSIENT);
}

static void
lite_bind_blob (gpointer stmt, int index, gconstpointer data, gsize size)
{
  sqlite3_bind_blob64 (stmt, index, data, size, SQLITE_TRANSIENT);
}

static void
lite_bind_null (gpointer stmt, int index)
{
  sqlite3_bind_null (stmt, index);
}

static StgDbStep
lite_step (StgDb *db, gpointer stmt)
{
  int rc = sqlite3_step (stmt);

  if (rc == SQLITE_ROW)
    return STG_DB_ROW;
  if (rc == SQLITE_DONE)
    return STG_DB_DONE;
  note_error (db);
  return STG_DB_FAILED;
}

static gint64
lite_changes (StgDb *db, gpointer stmt)
{
  (void) stmt;
  return sqlite3_changes64 (db->conn);
}

static gint64
lite_column_int64 (gpointer stmt, int col)
{
  return sqlite3_column_int64 (stmt, col);
}

static const gchar *
lite_column_text (gpointer stmt, int col)
{
  return (const gchar *) sqlite3_column_text (stmt, col);
}

static gboolean
lite_column_null (gpointer stmt, int col)
{
  return sqlite3_column_type (stmt, col) == SQLITE_NULL;
}

static GBytes *
lite_column_bytes (gpointer stmt, int col)
{
  const void *data = sqlite3_column_blob (stmt, col);
  int n = sqlite3_column_bytes (stmt, col);
  return g_bytes_new (data, (gsize) n);
}

static gboolean
lite_exec (StgDb *db, const gchar *sql, GError **error)
{
  char *msg = NULL;

  if (sqlite3_exec (db->conn, sql, NULL, NULL, &msg) != SQLITE_OK)
    {
      int code = sqlite3_extended_errcode (db->conn);
      stg_db_set_error (db, msg ? msg : sqlite3_errstr (code), (code & 0xff) == SQLITE_CONSTRAINT);
      sqlite3_free (msg);
      g_set_error (error, STG_STORE_ERROR,
                   db->last_constraint ? STG_STORE_ERROR_EXISTS : STG_STORE_ERROR_FAILED, "%s",
                   db->last_error);
      return FALSE;
    }
  return TRUE;
}

static gboolean
lite_in_transaction (StgDb *db)
{
  return sqlite3_get_autocommit (db->conn) == 0;
}

static gint
lite_schema_version (StgDb *db)
{
  sqlite3_stmt *stmt = NULL;
  gint version = -1;

  if (sqlite3_prepare_v2 (db->conn, "PRAGMA user_version", -1, &stmt, NULL) == SQLITE_OK &&
      sqlite3_step (stmt) == SQLITE_ROW)
    version = sqlite3_column_int (stmt, 0);
  else
    note_error (db);
  sqlite3_finalize (stmt);
  return version;
}

static gboolean
lite_set_schema_version (StgDb *db, gint version, GError **error)
{
  g_autofree gchar *sql = g_strdup_printf ("PRAGMA user_version = %d", version);
  return lite_exec (db, sql, error);
}

static gboolean
lite_reconnect (StgDb *db, GError **error)
{
  (void) db;
  (void) error;
  return TRUE;
}

static void
lite_close (StgDb *db)
{
  if (db->conn != NULL)
    sqlite3_close (db->conn);
}

static const StgDbOps SQLITE_OPS = {
  lite_prepare,
  lite_finalize,
  lite_reset,
  lite_bind_int64,
  lite_bind_text,
  lite_bind_blob,
  lite_bind_null,
  lite_step,
  lite_changes,
  lite_column_int64,
  lite_column_text,
  lite_column_null,
  lite_column_bytes,
  lite_exec,
  lite_in_transaction,
  lite_schema_version,
  lite_set_schema_version,
  lite_reconnect,
  lite_close,
};

StgDb *
stg_db_open_sqlite (const gchar *path, GError **error)
{
  StgDb *db = stg_db_new (&SQLITE_OPS, STG_DB_SQLITE);
  sqlite3 *conn = NULL;

  if (sqlite3_open_v2 (path, &conn, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                       NULL) != SQLITE_OK)
    {
      g_set_error (error, STG_STORE_ERROR, STG_STORE_ERROR_FAILED, "opening %s: %s", path,
                   conn ? sqlite3_errmsg (conn) : "out of memory");
      sqlite3_close (conn);
      stg_db_close (db);
      return NULL;
    }
  db->conn = conn;
  /* Only staggerd's user reads the database, whatever the umask (the data
   * dir may be passable by instances' users); the WAL files SQLite makes
   * next take the database's mode. */
  if (!g_str_equal (path, ":memory:"))
    {
      static const gchar *const suffixes[] = { "", "-wal", "-shm" };
      for (guint i = 0; i < G_N_ELEMENTS (suffixes); i++)
        {
          g_autofree gchar *file = g_strconcat (path, suffixes[i], NULL);
          if (g_chmod (file, 0600) != 0 && errno != ENOENT)
            g_warning ("store: cannot make %s private: %s", file, g_strerror (errno));
        }
    }
  sqlite3_extended_result_codes (conn, 1);
  sqlite3_busy_timeout (conn, 5000);
  /* auto_vacuum takes only before the first table: new databases hand
   * freed pages back with stg_store_reclaim() (retention.c). */
  if (!lite_exec (db,
                  "PRAGMA auto_vacuum = INCREMENTAL;"
                  "PRAGMA journal_mode = WAL;"
                  "PRAGMA synchronous = FULL;"
                  "PRAGMA foreign_keys = ON;",
                  error))
    {
      stg_db_close (db);
      return NULL;
    }
  return db;
}

/* ---- copies (the online backup API) ------------------------------------------ */

/* Copies the main database of @from, as one consistent snapshot, into
 * the new file @to (mode 0600, a rollback journal rather than WAL), which
 * the last step makes durable. */
static gboolean
copy_into (sqlite3 *from, const gchar *what, const gchar *to, GError **error)
{
  sqlite3 *dest = NULL;
  int rc = sqlite3_open_v2 (to, &dest, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);

  if (rc == SQLITE_OK && g_chmod (to, 0600) != 0)
    g_warning ("store: cannot make %s private: %s", to, g_strerror (errno));
  if (rc == SQLITE_OK)
    {
      sqlite3_backup *b = sqlite3_backup_init (dest, "main", from, "main");
      if (b == NULL)
        rc = sqlite3_errcode (dest);
      else
        {
          rc = sqlite3_backup_step (b, -1);
          int finish = sqlite3_backup_finish (b);
          rc = rc == SQLITE_DONE ? finish : rc;
        }
    }
  /* The copy is one file, with no write-ahead log beside it. */
  if (rc == SQLITE_OK)
    rc = sqlite3_exec (dest, "PRAGMA journal_mode = DELETE", NULL, NULL, NULL);
  if (rc != SQLITE_OK)
    {
      g_set_error (error, STG_STORE_ERROR, STG_STORE_ERROR_FAILED, "copying %s into %s: %s", what,
                   to, dest ? sqlite3_errmsg (dest) : sqlite3_errstr (rc));
      sqlite3_close (dest);
      g_unlink (to);
      return FALSE;
    }
  sqlite3_close (dest);
  return TRUE;
}

gboolean
stg_db_sqlite_backup (StgDb *db, const gchar *to, GError **error)
{
  g_return_val_if_fail (db->engine == STG_DB_SQLITE, FALSE);
  return copy_into (db->conn, "the database", to, error);
}

gboolean
stg_db_sqlite_copy_file (const gchar *from, const gchar *to, GError **error)
{
  sqlite3 *src = NULL;
  int rc = sqlite3_open_v2 (from, &src, SQLITE_OPEN_READONLY, NULL);
  sqlite3_stmt *check = NULL;

  /* A file that is not a database fails its first read. */
  if (rc == SQLITE_OK)
    rc = sqlite3_prepare_v2 (src, "PRAGMA quick_check", -1, &check, NULL);
  if (rc == SQLITE_OK)
    {
      rc = sqlite3_step (check);
      const unsigned char *verdict = rc == SQLITE_ROW ? sqlite3_column_text (check, 0) : NULL;
      rc = verdict != NULL && g_str_equal ((const gchar *) verdict, "ok") ? SQLITE_OK
           : rc == SQLITE_ROW                                             ? SQLITE_CORRUPT
                                                                          : rc;
    }
  sqlite3_finalize (check);
  if (rc != SQLITE_OK)
    {
      g_set_error (error, STG_STORE_ERROR, STG_STORE_ERROR_CORRUPT,
                   "%s is not a sound SQLite database: %s", from,
                   rc == SQLITE_CORRUPT ? "its quick check fails"
                   : src != NULL        ? sqlite3_errmsg (src)
                                        : sqlite3_errstr (rc));
      sqlite3_close (src);
      return FALSE;
    }
  gboolean ok = copy_into (src, from, to, error);
  sqlite3_close (src);
  return ok;
}
