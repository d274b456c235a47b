/* db_pg.c: the PostgreSQL engine of the database layer (db.h), on libpq.
 *
 * `?` and `?N` placeholders become `$N` (outside string literals) and each
 * statement is prepared once per connection. Parameters go as text, blobs
 * as binary bytea; results come back as text. The schema version lives in
 * the one-row table stagger_schema. Connections use TCP keepalives (about
 * 5 s to notice a dead peer) unless the URL says otherwise. Calls only
 * libpq. Main-loop thread only.
 */
#include "config.h"

#include <libpq-fe.h>
#include <string.h>

#include "store/db_private.h"
#include "store/store.h"

typedef struct
{
  StgDb *db;
  gchar *name;           /* the prepared statement's name on the server */
  int nparams;
  gchar **values;        /* nparams each: text, or the blob's bytes */
  int *lengths;
  int *formats;          /* 0 text, 1 binary */
  PGresult *res;         /* the result of the current run, or NULL */
  int row;
} PgStmt;

static gboolean
note_result (StgDb *db, PGresult *res)
{
  const gchar *state = res != NULL ? PQresultErrorField (res, PG_DIAG_SQLSTATE) : NULL;
  const gchar *msg = res != NULL ? PQresultErrorMessage (res) : NULL;

  if (msg == NULL || *msg == '\0')
    msg = PQerrorMessage (db->conn);
  stg_db_set_error (db, msg, state != NULL && g_str_has_prefix (state, "23"));
  return FALSE;
}

/* SQLite-style placeholders to PostgreSQL's; sets the parameter count. */
static gchar *
convert_placeholders (const gchar *sql, int *nparams)
{
  GString *out = g_string_sized_new (strlen (sql) + 16);
  gboolean quoted = FALSE;
  int next = 0, max = 0;

  for (const gchar *p = sql; *p != '\0'; p++)
    {
      if (*p == '\'')
        quoted = !quoted;
      if (quoted || *p != '?')
        {
          g_string_append_c (out, *p);
          continue;
        }
      int n;
      if (g_ascii_isdigit (p[1]))
        {
          gchar *end = NULL;
          n = (int) g_ascii_strtoll (p + 1, &end, 10);
          p = end - 1;
        }
      else
        n = ++next;
      max = MAX (max, n);
      g_string_append_printf (out, "$%d", n);
    }
  *nparams = max;
  return g_string_free (out, FALSE);
}

static void
pg_reset (gpointer data)
{
  PgStmt *st = data;

  g_clear_pointer (&st->res, PQclear);
  st->row = -1;
  for (int i = 0; i < st->nparams; i++)
    {
      g_clear_pointer (&st->values[i], g_free);
      st->lengths[i] = 0;
      st->formats[i] = 0;
    }
}

static void
pg_finalize (gpointer data)
{
  PgStmt *st = data;

  pg_reset (st);
  g_free (st->name);
  g_free (st->values);
  g_free (st->lengths);
  g_free (st->formats);
  g_free (st);
}

static gpointer
pg_prepare (StgDb *db, const gchar *sql, GError **error)
{
  g_autofree gchar *text = NULL;
  PgStmt *st = g_new0 (PgStmt, 1);
  PGresult *res;

  st->db = db;
  st->row = -1;
  st->name = g_strdup_printf ("stg%u", ++db->next_name);
  text = convert_placeholders (sql, &st->nparams);
  st->values = g_new0 (gchar *, MAX (st->nparams, 1));
  st->lengths = g_new0 (int, MAX (st->nparams, 1));
  st->formats = g_new0 (int, MAX (st->nparams, 1));
  res = PQprepare (db->conn, st->name, text, 0, NULL);
  if (PQresultStatus (res) != PGRES_COMMAND_OK)
    {
      note_result (db, res);
      PQclear (res);
      pg_finalize (st);
      stg_db_fail (db, error, "preparing a statement");
      return NULL;
    }
  PQclear (res);
  return st;
}

static void
set_param (PgStmt *st, int index, gchar *value, int length, int format)
{
  g_return_if_fail (index >= 1 && index <= st->nparams);
  g_free (st->values[index - 1]);
  st->values[index - 1] = value;
  st->lengths[index - 1] = length;
  st->formats[index - 1] = format;
}

static void
pg_bind_int64 (gpointer stmt, int index, gint64 value)
{
  set_param (stmt, index, g_strdup_printf ("%" G_GINT64_FORMAT, value), 0, 0);
}

static void
pg_bind_text (gpointer stmt, int index, const gchar *text)
{
  set_param (stmt, index, g_strdup (text), 0, 0);
}

static void
pg_bind_blob (gpointer stmt, int index, gconstpointer data, gsize size)
{
  /* A zero-length blob still needs a non-NULL pointer (NULL is SQL NULL). */
  set_param (stmt, index, size > 0 ? g_memdup2 (data, size) : g_strdup (""), (int) size, 1);
}

static void
pg_bind_null (gpointer stmt, int index)
{
  set_param (stmt, index, NULL, 0, 0);
}

static StgDbStep
pg_step (StgDb *db, gpointer stmt)
{
  (void) db;
  PgStmt *st = stmt;

  if (st->res == NULL)
    {
      st->res = PQexecPrepared (st->db->conn, st->name, st->nparams,
                                (const char *const *) st->values, st->lengths, st->formats, 0);
      ExecStatusType status = PQresultStatus (st->res);
      if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK)
        {
          note_result (st->db, st->res);
          g_clear_pointer (&st->res, PQclear);
          return STG_DB_FAILED;
        }
      st->row = -1;
    }
  st->row++;
  return st->row < PQntuples (st->res) ? STG_DB_ROW : STG_DB_DONE;
}

static gint64
pg_changes (StgDb *db, gpointer stmt)
{
  PgStmt *st = stmt;
  (void) db;
  return st->res != NULL ? g_ascii_strtoll (PQcmdTuples (st->res), NULL, 10) : 0;
}

static gboolean
pg_column_null (gpointer stmt, int col)
{
  PgStmt *st = stmt;
  return st->res == NULL || PQgetisnull (st->res, st->row, col);
}

static gint64
pg_column_int64 (gpointer stmt, int col)
{
  PgStmt *st = stmt;
  return pg_column_null (st, col) ? 0 : g_ascii_strtoll (PQgetvalue (st->res, st->row, col), NULL, 10);
}

static const gchar *
pg_column_text (gpointer stmt, int col)
{
  PgStmt *st = stmt;
  return pg_column_null (st, col) ? NULL : PQgetvalue (st->res, st->row, col);
}

static GBytes *
pg_column_bytes (gpointer stmt, int col)
{
  PgStmt *st = stmt;
  size_t n = 0;
  unsigned char *raw;
  GBytes *bytes;

  if (pg_column_null (st, col))
    return g_bytes_new (NULL, 0);
  raw = PQunescapeBytea ((const unsigned char *) PQgetvalue (st->res, st->row, col), &n);
  if (raw == NULL)
    return g_bytes_new (NULL, 0);
  bytes = g_bytes_new (raw, n);
  PQfreemem (raw);
  return bytes;
}

static gboolean
pg_exec (StgDb *db, const gchar *sql, GError **error)
{
  PGresult *res = PQexec (db->conn, sql);
  ExecStatusType status = PQresultStatus (res);

  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
    {
      note_result (db, res);
      PQclear (res);
      g_set_error (error, STG_STORE_ERROR,
                   db->last_constraint ? STG_STORE_ERROR_EXISTS : STG_STORE_ERROR_FAILED, "%s",
                   db->last_error);
      return FALSE;
    }
  PQclear (res);
  return TRUE;
}

static gboolean
pg_in_transaction (StgDb *db)
{
  return PQtransactionStatus (db->conn) != PQTRANS_IDLE;
}

static gint
pg_schema_version (StgDb *db)
{
  PGresult *res;
  gint version = -1;

  if (!pg_exec (db, "CREATE TABLE IF NOT EXISTS stagger_schema (version integer NOT NULL)", NULL))
    return -1;
  res = PQexec (db->conn, "SELECT COALESCE(MAX(version), 0) FROM stagger_schema");
  if (PQresultStatus (res) == PGRES_TUPLES_OK && PQntuples (res) == 1)
    version = (gint) g_ascii_strtoll (PQgetvalue (res, 0, 0), NULL, 10);
  else
    note_result (db, res);
  PQclear (res);
  return version;
}

static gboolean
pg_set_schema_version (StgDb *db, gint version, GError **error)
{
  g_autofree gchar *sql = g_strdup_printf ("DELETE FROM stagger_schema; "
                                           "INSERT INTO stagger_schema (version) VALUES (%d)",
                                           version);
  return pg_exec (db, sql, error);
}

static gboolean
pg_reconnect (StgDb *db, GError **error)
{
  PQreset (db->conn);
  if (PQstatus (db->conn) != CONNECTION_OK)
    {
      g_autofree gchar *msg = g_strdup (PQerrorMessage (db->conn));
      g_set_error (error, STG_STORE_ERROR, STG_STORE_ERROR_FAILED, "connecting to PostgreSQL: %s",
                   g_strchomp (msg));
      return FALSE;
    }
  return TRUE;
}

static void
pg_close (StgDb *db)
{
  if (db->conn != NULL)
    PQfinish (db->conn);
}

static const StgDbOps PG_OPS = {
  pg_prepare,        pg_finalize,           pg_reset,        pg_bind_int64, pg_bind_text,
  pg_bind_blob,      pg_bind_null,          pg_step,         pg_changes,    pg_column_int64,
  pg_column_text,    pg_column_null,        pg_column_bytes, pg_exec,       pg_in_transaction,
  pg_schema_version, pg_set_schema_version, pg_reconnect,    pg_close,
};

/* Refuses a conninfo or URI that carries a password. */
static gboolean
check_no_password (const gchar *conninfo, GError **error)
{
  char *msg = NULL;
  PQconninfoOption *opts = PQconninfoParse (conninfo, &msg);
  gboolean ok = TRUE;

  if (opts == NULL)
    {
      g_set_error (error, STG_STORE_ERROR, STG_STORE_ERROR_FAILED,
                   "not a PostgreSQL URL or conninfo: %s", msg ? msg : "out of memory");
      PQfreemem (msg);
      return FALSE;
    }
  for (PQconninfoOption *o = opts; o->keyword != NULL; o++)
    if (g_strcmp0 (o->keyword, "password") == 0 && o->val != NULL && o->val[0] != '\0')
      ok = FALSE;
  PQconninfoFree (opts);
  if (!ok)
    g_set_error_literal (error, STG_STORE_ERROR, STG_STORE_ERROR_FAILED,
                         "the store URL contains a password: put it in PGPASSWORD or a "
                         "PGPASSFILE instead, where other users cannot read it");
  return ok;
}

static void
ignore_notice (void *arg, const char *message)
{
  (void) arg;
  (void) message;
}

StgDb *
stg_db_open_pg (const gchar *conninfo, GError **error)
{
  StgDb *db;
  PGconn *conn;

  if (!check_no_password (conninfo, error))
    return NULL;
  /* Our defaults first; the URL's own settings, expanded from dbname,
   * override them. Keepalives notice a dead server or network within
   * about five seconds instead of the kernel's two hours. */
  const char *const keys[] = { "connect_timeout", "keepalives", "keepalives_idle",
                               "keepalives_interval", "keepalives_count", "tcp_user_timeout",
                               "dbname", NULL };
  const char *const values[] = { "5", "1", "2", "1", "3", "5000", conninfo, NULL };
  conn = PQconnectdbParams (keys, values, 1);
  if (PQstatus (conn) != CONNECTION_OK)
    {
      g_autofree gchar *msg = g_strdup (PQerrorMessage (conn));
      g_set_error (error, STG_STORE_ERROR, STG_STORE_ERROR_FAILED, "connecting to PostgreSQL: %s",
                   g_strchomp (msg));
      PQfinish (conn);
      return NULL;
    }
  PQsetNoticeProcessor (conn, ignore_notice, NULL);
  db = stg_db_new (&PG_OPS, STG_DB_POSTGRESQL);
  db->conn = conn;
  return db;
}
