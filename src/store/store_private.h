/* store_private.h: what the store's own files share: the StgStore struct,
 * statements of the database layer (db.h) and error helpers. Not for use
 * outside src/store/. Main-loop thread only.
 */
#pragma once

#include "store/db.h"
#include "store/store.h"

struct _StgStore
{
  StgDb *db;               /* SQLite or PostgreSQL */
  GHashTable *configs;     /* config id -> ApiTaskConfig* (immutable, cached) */
  GHashTable *versions;    /* config id -> version */
  guint depth;             /* open transaction levels */
  guint64 commits;
  gint64 commit_us;        /* time spent in outermost commits */
  guint fail_commit_in;    /* 0: no injected fault */
  gint64 epoch;            /* leading under this epoch; 0: not leading */
  gint64 acting_us;        /* how long a proof of the lead lasts (leader.c) */
  gint64 proven_us;        /* when the last query that proved it was sent (monotonic) */
};

/* A query sent at @sent_us (monotonic) found the epoch still ours: the
 * lead holds until @sent_us plus the acting time (in store.c, which the
 * fencing check calls; leader.c reads it). */
void stg_store_lead_proven (StgStore *store, gint64 sent_us);

/* Applies the pending migrations, each in its own transaction (one replica
 * at a time on PostgreSQL); STG_STORE_ERROR_NEWER, nothing written, when
 * the schema is newer than this build knows. */
gboolean stg_store_migrate (StgStore *store, GError **error);

/* A cached statement, borrowed for one use: g_autoptr (StgStmt) resets it
 * and clears its bindings when it goes out of scope. */
typedef StgDbStmt StgStmt;
void stg_stmt_release (StgStmt *stmt);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgStmt, stg_stmt_release)

/* The cached statement for @sql (a string literal), or NULL with @error. */
StgStmt *stg_store_stmt (StgStore *store, const gchar *sql, GError **error);

/* Sets @error from the connection's last error, prefixed with @what. */
gboolean stg_store_fail (StgStore *store, GError **error, const gchar *what);

/* Steps a statement that returns no rows. */
gboolean stg_store_exec_stmt (StgStore *store, StgStmt *stmt, GError **error, const gchar *what);

/* Steps an INSERT ... RETURNING id and reads the new row's id. */
gboolean stg_store_insert_id (StgStore *store, StgStmt *stmt, gint64 *id, GError **error,
                              const gchar *what);

/* Runs SQL text with no parameters (schema, pragmas). */
gboolean stg_store_exec (StgStore *store, const gchar *sql, GError **error);

/* Binds a NUL-terminated string, or NULL. */
void stg_bind_text (StgStmt *stmt, int index, const gchar *text);

/* A column as a new string ("" for NULL). */
gchar *stg_column_dup (StgStmt *stmt, int col);

/* A blob column as new GBytes. */
GBytes *stg_column_bytes (StgStmt *stmt, int col);

/* An integer column that fits a gint (enum values, counts, instance ids). */
static inline gint
stg_db_column_int (StgStmt *stmt, int col)
{
  return (gint) stg_db_column_int64 (stmt, col);
}
