/* db_private.h: what db.c shares with its two engines, db_sqlite.c and
 * db_pg.c: the connection struct and the table of engine operations.
 * Not for use outside src/store/db*.c. Main-loop thread only.
 */
#pragma once

#include "store/db.h"

typedef struct
{
  gpointer (*prepare) (StgDb *db, const gchar *sql, GError **error);
  void (*finalize) (gpointer stmt);
  void (*reset) (gpointer stmt);
  void (*bind_int64) (gpointer stmt, int index, gint64 value);
  void (*bind_text) (gpointer stmt, int index, const gchar *text);
  void (*bind_blob) (gpointer stmt, int index, gconstpointer data, gsize size);
  void (*bind_null) (gpointer stmt, int index);
  StgDbStep (*step) (StgDb *db, gpointer stmt);
  gint64 (*changes) (StgDb *db, gpointer stmt);
  gint64 (*column_int64) (gpointer stmt, int col);
  const gchar *(*column_text) (gpointer stmt, int col);
  gboolean (*column_null) (gpointer stmt, int col);
  GBytes *(*column_bytes) (gpointer stmt, int col);
  gboolean (*exec) (StgDb *db, const gchar *sql, GError **error);
  gboolean (*in_transaction) (StgDb *db);
  gint (*schema_version) (StgDb *db);
  gboolean (*set_schema_version) (StgDb *db, gint version, GError **error);
  gboolean (*reconnect) (StgDb *db, GError **error);
  void (*close) (StgDb *db);
} StgDbOps;

struct _StgDb
{
  const StgDbOps *ops;
  StgDbEngine engine;
  gpointer conn;           /* sqlite3* or PGconn* */
  GHashTable *stmts;       /* SQL text (not copied) -> StgDbStmt* */
  gchar *last_error;       /* the engine's last error message */
  gboolean last_constraint;/* ... and whether it broke a constraint */
  guint next_name;         /* PostgreSQL: prepared statement names */
  gboolean patient;        /* PostgreSQL: statements may take as long as they take */
  gpointer engine_state;   /* PostgreSQL: what to connect to, the newest timeline seen */
};

/* A statement: the engine's own handle behind the common type. */
struct _StgDbStmt
{
  StgDb *db;
  gpointer handle;
};

/* Creates the common part; the engine fills in conn. */
StgDb *stg_db_new (const StgDbOps *ops, StgDbEngine engine);

/* Records the engine's last error for stg_db_fail(). */
void stg_db_set_error (StgDb *db, const gchar *message, gboolean constraint);
