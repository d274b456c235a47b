/* db.h: the thin database layer under the store: one connection, prepared
 * statements with `?` (or `?N`) placeholders, typed binds and column
 * getters, plain SQL execution. Two engines implement it: SQLite
 * (db_sqlite.c) and PostgreSQL through libpq (db_pg.c). Calls nothing above
 * src/store/; main-loop thread only. Not for use outside src/store/.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _StgDb StgDb;
typedef struct _StgDbStmt StgDbStmt;

typedef enum
{
  STG_DB_SQLITE,
  STG_DB_POSTGRESQL,
} StgDbEngine;

/* What stg_db_step() returns. */
typedef enum
{
  STG_DB_FAILED = -1,   /* the reason: stg_db_fail() */
  STG_DB_DONE = 0,
  STG_DB_ROW = 1,
} StgDbStep;

/* TRUE when @location names a PostgreSQL database (a postgresql:// or
 * postgres:// URI, or a libpq "key=value" conninfo) rather than a file. */
gboolean stg_db_is_postgresql (const gchar *location);

/* Opens a SQLite file (created if missing) with WAL and foreign keys. */
StgDb *stg_db_open_sqlite (const gchar *path, GError **error);

/* SQLite only: copies @db's database, as one consistent snapshot, into the
 * new file @to with SQLite's online backup API (writes on @db wait while
 * it runs; it runs on the caller's thread). */
gboolean stg_db_sqlite_backup (StgDb *db, const gchar *to, GError **error);

/* Copies the SQLite database file @from into the new file @to the same
 * way; a file that is not a sound SQLite database (its quick check) is
 * STG_STORE_ERROR_CORRUPT. */
gboolean stg_db_sqlite_copy_file (const gchar *from, const gchar *to, GError **error);

/* Connects to PostgreSQL. A password inside @conninfo is refused: it
 * belongs in PGPASSWORD or a PGPASSFILE. */
StgDb *stg_db_open_pg (const gchar *conninfo, GError **error);

/* Connects again (PostgreSQL; nothing to do for SQLite). Every cached
 * statement is forgotten: none may be in use. */
gboolean stg_db_reconnect (StgDb *db, GError **error);

/* PostgreSQL: a statement whose answer does not come within a bound
 * (15 s) takes its server as gone: the connection is shut and the call
 * fails, so the store connects again (see db_pg.c). @patient lifts the
 * bound until it is set back (migrations). Nothing for SQLite. */
void stg_db_set_patient (StgDb *db, gboolean patient);

/* Tests: that bound, in milliseconds, for every PostgreSQL connection. */
void stg_db_pg_set_answer_timeout (guint ms);

/* Closes the connection and finalizes every statement. */
void stg_db_close (StgDb *db);

StgDbEngine stg_db_engine (StgDb *db);

/* The cached statement for @sql, prepared on first use. @sql must outlive
 * @db (a literal or an interned string): it is the cache key. */
StgDbStmt *stg_db_stmt (StgDb *db, const gchar *sql, GError **error);

/* Forgets a statement's result and bindings, ready for the next use. */
void stg_db_reset (StgDbStmt *stmt);

/* Binds parameter @index (from 1). Text and blobs are copied. */
void stg_db_bind_int64 (StgDbStmt *stmt, int index, gint64 value);
void stg_db_bind_text (StgDbStmt *stmt, int index, const gchar *text);
void stg_db_bind_blob (StgDbStmt *stmt, int index, gconstpointer data, gsize size);
void stg_db_bind_null (StgDbStmt *stmt, int index);

/* Runs the statement (on the first call after binding) and moves to the
 * next row. */
StgDbStep stg_db_step (StgDbStmt *stmt);

/* Rows the statement's last run inserted, updated or deleted. */
gint64 stg_db_changes (StgDbStmt *stmt);

/* Columns of the current row, from 0. NULL reads as 0 or NULL. */
gint64 stg_db_column_int64 (StgDbStmt *stmt, int col);
const gchar *stg_db_column_text (StgDbStmt *stmt, int col);
gboolean stg_db_column_null (StgDbStmt *stmt, int col);
GBytes *stg_db_column_bytes (StgDbStmt *stmt, int col);

/* Runs SQL text with no parameters (one or more statements). */
gboolean stg_db_exec (StgDb *db, const gchar *sql, GError **error);

/* Sets @error (STG_STORE_ERROR, EXISTS for a constraint violation) from
 * the connection's last error, prefixed with @what; returns FALSE. */
gboolean stg_db_fail (StgDb *db, GError **error, const gchar *what);

/* TRUE while the connection is inside a transaction. */
gboolean stg_db_in_transaction (StgDb *db);

/* The SQL that opens a write transaction (level 1). */
const gchar *stg_db_begin_sql (StgDb *db);

/* The schema version recorded in the database (-1 on error) and setting
 * it inside the current transaction. */
gint stg_db_schema_version (StgDb *db);
gboolean stg_db_set_schema_version (StgDb *db, gint version, GError **error);

G_END_DECLS
