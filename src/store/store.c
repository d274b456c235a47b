/* store.c: opening the database, migrations, transactions, statements.
 *
 * Migrations are the numbered files of schema/, embedded as GResources under
 * /org/stagger/schema/. The database's PRAGMA user_version is the number of
 * the last one applied; each applies in its own transaction. A database with
 * a higher number than this build knows is refused, untouched.
 *
 * Transactions nest: level 1 is BEGIN IMMEDIATE / COMMIT, deeper levels are
 * SAVEPOINTs. Main-loop thread only.
 */
#include "config.h"

#include <gio/gio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_private.h"

G_DEFINE_QUARK (stg-store-error-quark, stg_store_error)

#define SCHEMA_PREFIX "/org/stagger/schema"

/* Made by glib-compile-resources from schema/schema.gresource.xml. */
GResource *stg_schema_get_resource (void);

/* ---- errors and statements -------------------------------------------- */

gboolean
stg_store_fail (StgStore *store, GError **error, const gchar *what)
{
  int code = sqlite3_extended_errcode (store->db);
  g_set_error (error, STG_STORE_ERROR,
               (code & 0xff) == SQLITE_CONSTRAINT ? STG_STORE_ERROR_EXISTS : STG_STORE_ERROR_FAILED,
               "%s: %s", what, sqlite3_errmsg (store->db));
  return FALSE;
}

void
stg_stmt_release (StgStmt *stmt)
{
  if (stmt == NULL)
    return;
  sqlite3_reset (stmt);
  sqlite3_clear_bindings (stmt);
}

StgStmt *
stg_store_stmt (StgStore *store, const gchar *sql, GError **error)
{
  sqlite3_stmt *stmt = g_hash_table_lookup (store->stmts, sql);

  if (stmt != NULL)
    return stmt;
  if (sqlite3_prepare_v3 (store->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, NULL) != SQLITE_OK)
    {
      stg_store_fail (store, error, "preparing a statement");
      g_prefix_error (error, "%s: ", sql);
      return NULL;
    }
  g_hash_table_insert (store->stmts, (gpointer) sql, stmt);
  return stmt;
}

gboolean
stg_store_exec_stmt (StgStore *store, StgStmt *stmt, GError **error, const gchar *what)
{
  int rc = sqlite3_step (stmt);

  if (rc != SQLITE_DONE && rc != SQLITE_ROW)
    return stg_store_fail (store, error, what);
  return TRUE;
}

gboolean
stg_store_exec (StgStore *store, const gchar *sql, GError **error)
{
  char *msg = NULL;

  if (sqlite3_exec (store->db, sql, NULL, NULL, &msg) != SQLITE_OK)
    {
      int code = sqlite3_extended_errcode (store->db);
      g_set_error (error, STG_STORE_ERROR,
                   (code & 0xff) == SQLITE_CONSTRAINT ? STG_STORE_ERROR_EXISTS : STG_STORE_ERROR_FAILED,
                   "%s", msg ? msg : sqlite3_errstr (code));
      sqlite3_free (msg);
      return FALSE;
    }
  return TRUE;
}

void
stg_bind_text (StgStmt *stmt, int index, const gchar *text)
{
  if (text == NULL)
    sqlite3_bind_null (stmt, index);
  else
    sqlite3_bind_text (stmt, index, text, -1, SQLITE_TRANSIENT);
}

gchar *
stg_column_dup (StgStmt *stmt, int col)
{
  const unsigned char *t = sqlite3_column_text (stmt, col);
  return g_strdup (t ? (const gchar *) t : "");
}

GBytes *
stg_column_bytes (StgStmt *stmt, int col)
{
  const void *data = sqlite3_column_blob (stmt, col);
  int n = sqlite3_column_bytes (stmt, col);
  return g_bytes_new (data, (gsize) n);
}

/* ---- migrations -------------------------------------------------------- */

static gint
migration_number (const gchar *name)
{
  if (!g_ascii_isdigit (name[0]) || !g_str_has_suffix (name, ".sql"))
    return -1;
  return (gint) g_ascii_strtoll (name, NULL, 10);
}

static gint
compare_names (gconstpointer a, gconstpointer b)
{
  return migration_number (*(const gchar *const *) a) - migration_number (*(const gchar *const *) b);
}

/* The migration file names, in order. */
static GPtrArray *
list_migrations (void)
{
  g_auto (GStrv) names = g_resource_enumerate_children (stg_schema_get_resource (),
                                                        SCHEMA_PREFIX, 0, NULL);
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);

  /* Without the embedded schema no store can be opened: a build error. */
  g_assert (names != NULL);
  for (guint i = 0; names[i] != NULL; i++)
    if (migration_number (names[i]) > 0)
      g_ptr_array_add (out, g_strdup (names[i]));
  g_ptr_array_sort (out, compare_names);
  return out;
}

gint
stg_store_latest_schema_version (void)
{
  g_autoptr (GPtrArray) names = list_migrations ();
  return names->len == 0 ? 0 : migration_number (names->pdata[names->len - 1]);
}

gint
stg_store_schema_version (StgStore *store)
{
  sqlite3_stmt *stmt = NULL;
  gint version = -1;

  if (sqlite3_prepare_v2 (store->db, "PRAGMA user_version", -1, &stmt, NULL) == SQLITE_OK &&
      sqlite3_step (stmt) == SQLITE_ROW)
    version = sqlite3_column_int (stmt, 0);
  sqlite3_finalize (stmt);
  return version;
}

static gboolean
migrate (StgStore *store, GError **error)
{
  g_autoptr (GPtrArray) names = list_migrations ();
  gint current = stg_store_schema_version (store);
  gint latest = stg_store_latest_schema_version ();

  if (current < 0)
    return stg_store_fail (store, error, "reading the schema version");
  if (current > latest)
    {
      g_set_error (error, STG_STORE_ERROR, STG_STORE_ERROR_NEWER,
                   "the database is at schema version %d, but this Stagger knows only up to "
                   "version %d: run a newer staggerd, or use another data directory",
                   current, latest);
      return FALSE;
    }
  for (guint i = 0; i < names->len; i++)
    {
      const gchar *name = names->pdata[i];
      gint number = migration_number (name);
      if (number <= current)
        continue;

      g_autofree gchar *path = g_strconcat (SCHEMA_PREFIX "/", name, NULL);
      g_autoptr (GBytes) sql = g_resource_lookup_data (stg_schema_get_resource (), path, 0, error);
      if (sql == NULL)
        return FALSE;
      g_autofree gchar *text = g_strndup (g_bytes_get_data (sql, NULL), g_bytes_get_size (sql));
      g_autofree gchar *bump = g_strdup_printf ("PRAGMA user_version = %d", number);

      if (!stg_store_begin (store, error))
        return FALSE;
      if (!stg_store_exec (store, text, error) || !stg_store_exec (store, bump, error) ||
          !stg_store_commit (store, error))
        {
          stg_store_rollback (store);
          g_prefix_error (error, "applying migration %s: ", name);
          return FALSE;
        }
      g_info ("store: applied migration %s", name);
    }
  return TRUE;
}

/* ---- open and close ---------------------------------------------------- */

static void
finalize_stmt (gpointer stmt)
{
  sqlite3_finalize (stmt);
}

StgStore *
stg_store_open (const gchar *path, GError **error)
{
  g_autoptr (StgStore) store = g_new0 (StgStore, 1);

  store->stmts = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
                                        finalize_stmt);
  store->configs = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_object_unref);
  store->versions = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);

  if (sqlite3_open_v2 (path, &store->db,
                       SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                       NULL) != SQLITE_OK)
    {
      g_set_error (error, STG_STORE_ERROR, STG_STORE_ERROR_FAILED, "opening %s: %s", path,
                   store->db ? sqlite3_errmsg (store->db) : "out of memory");
      return NULL;
    }
  sqlite3_extended_result_codes (store->db, 1);
  sqlite3_busy_timeout (store->db, 5000);
  /* auto_vacuum takes only before the first table: new databases hand
   * freed pages back with stg_store_reclaim() (retention.c). */
  if (!stg_store_exec (store,
                       "PRAGMA auto_vacuum = INCREMENTAL;"
                       "PRAGMA journal_mode = WAL;"
                       "PRAGMA synchronous = FULL;"
                       "PRAGMA foreign_keys = ON;",
                       error) ||
      !migrate (store, error))
    {
      g_prefix_error (error, "%s: ", path);
      return NULL;
    }
  return g_steal_pointer (&store);
}

void
stg_store_close (StgStore *store)
{
  if (store == NULL)
    return;
  while (store->depth > 0)
    stg_store_rollback (store);
  g_clear_pointer (&store->stmts, g_hash_table_unref);
  g_clear_pointer (&store->configs, g_hash_table_unref);
  g_clear_pointer (&store->versions, g_hash_table_unref);
  if (store->db != NULL)
    sqlite3_close (store->db);
  g_free (store);
}

/* ---- transactions ------------------------------------------------------ */

gboolean
stg_store_begin (StgStore *store, GError **error)
{
  g_autofree gchar *sql = store->depth == 0 ? g_strdup ("BEGIN IMMEDIATE")
                                            : g_strdup_printf ("SAVEPOINT s%u", store->depth);
  if (!stg_store_exec (store, sql, error))
    return FALSE;
  store->depth++;
  return TRUE;
}

gboolean
stg_store_commit (StgStore *store, GError **error)
{
  g_return_val_if_fail (store->depth > 0, FALSE);

  if (store->depth > 1)
    {
      g_autofree gchar *sql = g_strdup_printf ("RELEASE s%u", store->depth - 1);
      if (!stg_store_exec (store, sql, error))
        return FALSE;
      store->depth--;
      return TRUE;
    }
  if (store->fail_commit_in > 0 && --store->fail_commit_in == 0)
    {
      stg_store_rollback (store);
      g_set_error (error, STG_STORE_ERROR, STG_STORE_ERROR_INJECTED, "injected commit failure");
      return FALSE;
    }
  if (!stg_store_exec (store, "COMMIT", error))
    {
      stg_store_rollback (store);
      return FALSE;
    }
  store->depth = 0;
  store->commits++;
  return TRUE;
}

void
stg_store_rollback (StgStore *store)
{
  g_return_if_fail (store->depth > 0);

  if (store->depth > 1)
    {
      g_autofree gchar *sql = g_strdup_printf ("ROLLBACK TO s%u; RELEASE s%u",
                                               store->depth - 1, store->depth - 1);
      (void) stg_store_exec (store, sql, NULL);
    }
  else if (sqlite3_get_autocommit (store->db) == 0)
    (void) stg_store_exec (store, "ROLLBACK", NULL);
  store->depth--;
  /* Rows read into the caches inside the transaction may be gone. */
  g_hash_table_remove_all (store->configs);
  g_hash_table_remove_all (store->versions);
}

gboolean
stg_store_in_transaction (StgStore *store)
{
  return store->depth > 0;
}

guint64
stg_store_commit_count (StgStore *store)
{
  return store->commits;
}

void
stg_store_fail_commit (StgStore *store, guint n)
{
  store->fail_commit_in = n;
}
