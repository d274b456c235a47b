/* db.c: the engine-neutral half of the database layer: the statement
 * cache, errors (in the store's error domain, defined here, at the bottom
 * of the store), and calls forwarded to the engine (SQLite or PostgreSQL)
 * through its operations table. Calls only db_sqlite.c and db_pg.c.
 * Main-loop thread only.
 */
#include "config.h"

#include "store/db_private.h"
#include "store/store.h"

G_DEFINE_QUARK (stg-store-error-quark, stg_store_error)

static void
free_stmt (gpointer data)
{
  StgDbStmt *stmt = data;

  stmt->db->ops->finalize (stmt->handle);
  g_free (stmt);
}

StgDb *
stg_db_new (const StgDbOps *ops, StgDbEngine engine)
{
  StgDb *db = g_new0 (StgDb, 1);

  db->ops = ops;
  db->engine = engine;
  db->stmts = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, free_stmt);
  return db;
}

void
stg_db_set_error (StgDb *db, const gchar *message, gboolean constraint)
{
  g_free (db->last_error);
  db->last_error = g_strdup (message != NULL ? message : "unknown error");
  g_strchomp (db->last_error);
  db->last_constraint = constraint;
}

gboolean
stg_db_is_postgresql (const gchar *location)
{
  if (location == NULL)
    return FALSE;
  if (g_str_has_prefix (location, "postgresql://") || g_str_has_prefix (location, "postgres://"))
    return TRUE;
  /* A conninfo starts with a keyword and '=' ("host=... dbname=..."). */
  const gchar *p = location;
  while (g_ascii_isalpha (*p) || *p == '_')
    p++;
  return p != location && *p == '=';
}

void
stg_db_close (StgDb *db)
{
  if (db == NULL)
    return;
  g_clear_pointer (&db->stmts, g_hash_table_unref);
  db->ops->close (db);
  g_free (db->last_error);
  g_free (db);
}

gboolean
stg_db_reconnect (StgDb *db, GError **error)
{
  g_hash_table_remove_all (db->stmts);
  return db->ops->reconnect (db, error);
}

void
stg_db_set_patient (StgDb *db, gboolean patient)
{
  db->patient = patient;
}

StgDbEngine
stg_db_engine (StgDb *db)
{
  return db->engine;
}

StgDbStmt *
stg_db_stmt (StgDb *db, const gchar *sql, GError **error)
{
  StgDbStmt *stmt = g_hash_table_lookup (db->stmts, sql);
  gpointer handle;

  if (stmt != NULL)
    return stmt;
  handle = db->ops->prepare (db, sql, error);
  if (handle == NULL)
    {
      g_prefix_error (error, "%s: ", sql);
      return NULL;
    }
  stmt = g_new0 (StgDbStmt, 1);
  stmt->db = db;
  stmt->handle = handle;
  g_hash_table_insert (db->stmts, (gpointer) sql, stmt);
  return stmt;
}

void
stg_db_reset (StgDbStmt *stmt)
{
  stmt->db->ops->reset (stmt->handle);
}

void
stg_db_bind_int64 (StgDbStmt *stmt, int index, gint64 value)
{
  stmt->db->ops->bind_int64 (stmt->handle, index, value);
}

void
stg_db_bind_text (StgDbStmt *stmt, int index, const gchar *text)
{
  if (text == NULL)
    stmt->db->ops->bind_null (stmt->handle, index);
  else
    stmt->db->ops->bind_text (stmt->handle, index, text);
}

void
stg_db_bind_blob (StgDbStmt *stmt, int index, gconstpointer data, gsize size)
{
  stmt->db->ops->bind_blob (stmt->handle, index, data, size);
}

void
stg_db_bind_null (StgDbStmt *stmt, int index)
{
  stmt->db->ops->bind_null (stmt->handle, index);
}

StgDbStep
stg_db_step (StgDbStmt *stmt)
{
  return stmt->db->ops->step (stmt->db, stmt->handle);
}

gint64
stg_db_changes (StgDbStmt *stmt)
{
  return stmt->db->ops->changes (stmt->db, stmt->handle);
}

gint64
stg_db_column_int64 (StgDbStmt *stmt, int col)
{
  return stmt->db->ops->column_int64 (stmt->handle, col);
}

const gchar *
stg_db_column_text (StgDbStmt *stmt, int col)
{
  return stmt->db->ops->column_text (stmt->handle, col);
}

gboolean
stg_db_column_null (StgDbStmt *stmt, int col)
{
  return stmt->db->ops->column_null (stmt->handle, col);
}

GBytes *
stg_db_column_bytes (StgDbStmt *stmt, int col)
{
  return stmt->db->ops->column_bytes (stmt->handle, col);
}

gboolean
stg_db_exec (StgDb *db, const gchar *sql, GError **error)
{
  return db->ops->exec (db, sql, error);
}

gboolean
stg_db_fail (StgDb *db, GError **error, const gchar *what)
{
  g_set_error (error, STG_STORE_ERROR,
               db->last_constraint ? STG_STORE_ERROR_EXISTS : STG_STORE_ERROR_FAILED, "%s: %s",
               what, db->last_error != NULL ? db->last_error : "unknown error");
  return FALSE;
}

gboolean
stg_db_in_transaction (StgDb *db)
{
  return db->ops->in_transaction (db);
}

const gchar *
stg_db_begin_sql (StgDb *db)
{
  /* SQLite: take the write lock at once, so a transaction never fails
   * half-way on another writer. PostgreSQL locks rows as it goes. */
  return db->engine == STG_DB_SQLITE ? "BEGIN IMMEDIATE" : "BEGIN";
}

gint
stg_db_schema_version (StgDb *db)
{
  return db->ops->schema_version (db);
}

gboolean
stg_db_set_schema_version (StgDb *db, gint version, GError **error)
{
  return db->ops->set_schema_version (db, version, error);
}
