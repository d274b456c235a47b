/* store_private.h: what the store's own files share: the StgStore struct,
 * the statement cache and SQLite error helpers. Not for use outside
 * src/store/. Main-loop thread only.
 */
#pragma once

#include <sqlite3.h>

#include "store/store.h"

struct _StgStore
{
  sqlite3 *db;
  GHashTable *stmts;       /* SQL text (static) -> sqlite3_stmt*, prepared once */
  GHashTable *configs;     /* config id -> ApiTaskConfig* (immutable, cached) */
  GHashTable *versions;    /* config id -> version */
  guint depth;             /* open transaction levels */
  guint64 commits;
  guint fail_commit_in;    /* 0: no injected fault */
};

/* A cached statement, borrowed for one use: g_autoptr (StgStmt) resets it
 * and clears its bindings when it goes out of scope. */
typedef sqlite3_stmt StgStmt;
void stg_stmt_release (StgStmt *stmt);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgStmt, stg_stmt_release)

/* The cached statement for @sql (a string literal), or NULL with @error. */
StgStmt *stg_store_stmt (StgStore *store, const gchar *sql, GError **error);

/* Sets @error from the connection's last error, prefixed with @what. */
gboolean stg_store_fail (StgStore *store, GError **error, const gchar *what);

/* Steps a statement that returns no rows. */
gboolean stg_store_exec_stmt (StgStore *store, StgStmt *stmt, GError **error, const gchar *what);

/* Runs SQL text with no parameters (schema, pragmas). */
gboolean stg_store_exec (StgStore *store, const gchar *sql, GError **error);

/* Binds a NUL-terminated string, or NULL. */
void stg_bind_text (StgStmt *stmt, int index, const gchar *text);

/* A column as a new string ("" for NULL). */
gchar *stg_column_dup (StgStmt *stmt, int col);

/* A blob column as new GBytes. */
GBytes *stg_column_bytes (StgStmt *stmt, int col);
