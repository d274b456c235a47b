/* db_pg.c: the PostgreSQL engine of the database layer (db.h), on libpq.
 *
 * `?` and `?N` placeholders become `$N` (outside string literals) and each
 * statement is prepared once per connection. Parameters go as text, blobs
 * as binary bytea; results come back as text. The schema version lives in
 * the one-row table stagger_schema. Connections use TCP keepalives (about
 * 5 s to notice a dead peer) unless the URL says otherwise.
 *
 * A URL may name several servers (a primary and its standbys: libpq's
 * host=a,b port=p,q): each is tried, only a writable one (not in recovery)
 * is used, and of several writable ones the one on the newest timeline
 * (after a failover, the promoted standby; an old primary started again
 * is behind it). A server on an older timeline than one this process has
 * used of the same database system is never used: an old primary that
 * came back while its successor is away is refused, saying so.
 *
 * Every statement's answer is awaited for at most answer_timeout_ms (but
 * a migration's): a server that keeps the connection and never answers
 * (its processes stopped, or hung on a dead disk; its kernel still
 * acknowledges, so keepalives pass) would otherwise hold the main loop
 * for ever. The connection is shut then, later calls fail at once, and
 * the store connects again, to whichever server takes writes. Calls only
 * libpq. Main-loop thread only.
 */
#include "config.h"

#include <errno.h>
#include <libpq-fe.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include "store/db_private.h"
#include "store/store.h"

/* The engine's own state (StgDb.engine_state). */
typedef struct
{
  gchar *conninfo;     /* as given: one server or several */
  gboolean unanswered; /* the last statement got no answer in time */
} PgState;

static guint answer_timeout_ms = 15000;

void
stg_db_pg_set_answer_timeout (guint ms)
{
  answer_timeout_ms = ms;
}

/* Waits until @conn can be read (or written too, @out); FALSE once
 * @deadline (monotonic; 0: none) has passed first. */
static gboolean
wait_socket (PGconn *conn, gboolean out, gint64 deadline)
{
  for (;;)
    {
      gint64 left = deadline - g_get_monotonic_time ();
      if (deadline > 0 && left <= 0)
        return FALSE;
      struct pollfd p = { .fd = PQsocket (conn), .events = (short) (POLLIN | (out ? POLLOUT : 0)) };
      int n = poll (&p, 1, deadline > 0 ? (int) MIN (left / 1000 + 1, G_MAXINT) : -1);
      if (n > 0 || (n < 0 && errno != EINTR))
        return TRUE; /* ready, or an error libpq will report */
    }
}

/* The answer to what was just sent on @conn (@sent: whether sending
 * worked): as PQexec gives it, the first error or else the last result.
 * NULL when it did not come within answer_timeout_ms (unless @patient):
 * the connection is shut then, and *@unanswered set. */
static PGresult *
answer (PGconn *conn, gboolean sent, gboolean patient, gboolean *unanswered)
{
  gint64 deadline = patient ? 0 : g_get_monotonic_time () + (gint64) answer_timeout_ms * 1000;
  PGresult *kept = NULL;

  *unanswered = FALSE;
  if (!sent)
    return NULL;
  for (int f; (f = PQflush (conn)) == 1;)
    if (!wait_socket (conn, TRUE, deadline))
      goto unanswered;
  for (;;)
    {
      while (PQisBusy (conn))
        {
          if (!wait_socket (conn, FALSE, deadline))
            goto unanswered;
          if (!PQconsumeInput (conn))
            break;
        }
      PGresult *res = PQgetResult (conn);
      if (res == NULL)
        return kept;
      if (kept != NULL && PQresultStatus (kept) == PGRES_FATAL_ERROR)
        PQclear (res);
      else
        {
          PQclear (kept);
          kept = res;
        }
      if (PQstatus (conn) == CONNECTION_BAD)
        return kept;
    }
unanswered:
  PQclear (kept);
  shutdown (PQsocket (conn), SHUT_RDWR);
  *unanswered = TRUE;
  return NULL;
}

/* answer() for @db's connection. */
static PGresult *
db_answer (StgDb *db, gboolean sent)
{
  PgState *state = db->engine_state;
  return answer (db->conn, sent, db->patient, &state->unanswered);
}

/* The newest timeline of each database system (by its identifier) used,
 * read from and kept in timelines_file when there is one: staggerd opens
 * its store anew when it steps down, and restarts. Main-loop thread only. */
static GHashTable *newest_timelines;
static gchar *timelines_file;

void
stg_store_remember_timelines (const gchar *path)
{
  g_free (timelines_file);
  timelines_file = g_strdup (path);
  g_clear_pointer (&newest_timelines, g_hash_table_unref);
}

/* newest_timelines, read from timelines_file the first time. */
static GHashTable *
timelines (void)
{
  g_autofree gchar *text = NULL;

  if (newest_timelines != NULL)
    return newest_timelines;
  newest_timelines = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  if (timelines_file == NULL || !g_file_get_contents (timelines_file, &text, NULL, NULL))
    return newest_timelines;
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto (GStrv) f = g_strsplit (lines[i], " ", 2);
      gint64 tl = f[0] != NULL && f[1] != NULL ? g_ascii_strtoll (f[1], NULL, 10) : 0;
      if (tl > 0 && tl <= G_MAXINT)
        g_hash_table_insert (newest_timelines, g_strdup (f[0]), GINT_TO_POINTER ((gint) tl));
    }
  return newest_timelines;
}

/* Records @timeline as the newest of @system (and in timelines_file). */
static void
note_timeline (const gchar *system, gint timeline)
{
  g_autoptr (GString) text = g_string_new (NULL);
  g_autoptr (GError) error = NULL;
  GHashTableIter it;
  gpointer key, value;

  g_hash_table_insert (timelines (), g_strdup (system), GINT_TO_POINTER (timeline));
  if (timelines_file == NULL)
    return;
  g_hash_table_iter_init (&it, timelines ());
  while (g_hash_table_iter_next (&it, &key, &value))
    g_string_append_printf (text, "%s %d\n", (const gchar *) key, GPOINTER_TO_INT (value));
  if (!g_file_set_contents_full (timelines_file, text->str, (gssize) text->len,
                                 G_FILE_SET_CONTENTS_CONSISTENT, 0600, &error))
    g_warning ("store: cannot keep the PostgreSQL timeline in %s: %s", timelines_file,
               error->message);
}

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
  g_autofree gchar *silent = NULL;

  if (res == NULL && ((PgState *) db->engine_state)->unanswered)
    msg = silent = g_strdup_printf ("the server did not answer within %u ms: taken as gone",
                                    answer_timeout_ms);
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
  res = db_answer (db, PQsendPrepare (db->conn, st->name, text, 0, NULL));
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
      st->res = db_answer (st->db, PQsendQueryPrepared (st->db->conn, st->name, st->nparams,
                                                        (const char *const *) st->values,
                                                        st->lengths, st->formats, 0));
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
  PGresult *res = db_answer (db, PQsendQuery (db->conn, sql));
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
  res = db_answer (db,
                   PQsendQuery (db->conn, "SELECT COALESCE(MAX(version), 0) FROM stagger_schema"));
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

static gboolean pg_connect (StgDb *db, GError **error);

static gboolean
pg_reconnect (StgDb *db, GError **error)
{
  return pg_connect (db, error);
}

static void
pg_close (StgDb *db)
{
  PgState *state = db->engine_state;

  if (db->conn != NULL)
    PQfinish (db->conn);
  g_free (state->conninfo);
  g_free (state);
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

/* One server to try: its libpq parameters, and where it is, for people. */
typedef struct
{
  GPtrArray *keys;   /* const gchar*, NULL-terminated once built */
  GPtrArray *values; /* gchar*, owned */
  gchar *where;      /* "HOST:PORT" */
} Server;

static void
server_free (Server *s)
{
  g_ptr_array_unref (s->keys);
  g_ptr_array_unref (s->values);
  g_free (s->where);
  g_free (s);
}

/* Our defaults first: keepalives notice a dead server or network within
 * about five seconds instead of the kernel's two hours. */
static const char *const DEFAULT_KEYS[] = { "connect_timeout",  "keepalives",
                                            "keepalives_idle",  "keepalives_interval",
                                            "keepalives_count", "tcp_user_timeout" };
static const char *const DEFAULT_VALUES[] = { "5", "1", "2", "1", "3", "5000" };

static void
server_add (Server *s, const gchar *key, const gchar *value)
{
  g_ptr_array_add (s->keys, (gpointer) key);
  g_ptr_array_add (s->values, g_strdup (value));
}

/* Item @i of the comma-separated @list, or its only item (libpq's rule for
 * a port given once for several hosts); NULL for none. */
static gchar *
list_item (const gchar *list, guint i)
{
  if (list == NULL || list[0] == '\0')
    return NULL;
  g_auto (GStrv) items = g_strsplit (list, ",", -1);
  guint n = g_strv_length (items);
  return g_strdup (n == 1 ? items[0] : i < n ? items[i] : NULL);
}

/* The servers @conninfo names, each with every other setting of it, or
 * NULL with @error. */
static GPtrArray *
servers_of (const gchar *conninfo, GError **error)
{
  char *msg = NULL;
  PQconninfoOption *opts = PQconninfoParse (conninfo, &msg);
  const gchar *host = NULL, *hostaddr = NULL, *port = NULL;

  if (opts == NULL)
    {
      g_set_error (error, STG_STORE_ERROR, STG_STORE_ERROR_FAILED,
                   "not a PostgreSQL URL or conninfo: %s", msg ? msg : "out of memory");
      PQfreemem (msg);
      return NULL;
    }
  for (PQconninfoOption *o = opts; o->keyword != NULL; o++)
    if (g_str_equal (o->keyword, "host"))
      host = o->val;
    else if (g_str_equal (o->keyword, "hostaddr"))
      hostaddr = o->val;
    else if (g_str_equal (o->keyword, "port"))
      port = o->val;
  g_autoptr (GPtrArray) servers = g_ptr_array_new_with_free_func ((GDestroyNotify) server_free);
  g_auto (GStrv) hosts = g_strsplit (host != NULL && host[0] ? host : "", ",", -1);
  guint n = MAX (1u, g_strv_length (hosts));
  for (guint i = 0; i < n; i++)
    {
      Server *s = g_new0 (Server, 1);
      s->keys = g_ptr_array_new ();
      s->values = g_ptr_array_new_with_free_func (g_free);
      for (guint k = 0; k < G_N_ELEMENTS (DEFAULT_KEYS); k++)
        server_add (s, DEFAULT_KEYS[k], DEFAULT_VALUES[k]);
      for (PQconninfoOption *o = opts; o->keyword != NULL; o++)
        if (o->val != NULL && o->val[0] != '\0' && !g_str_equal (o->keyword, "host") &&
            !g_str_equal (o->keyword, "hostaddr") && !g_str_equal (o->keyword, "port") &&
            !g_str_equal (o->keyword, "target_session_attrs"))
          server_add (s, o->keyword, o->val);
      g_autofree gchar *h = list_item (host, i);
      g_autofree gchar *a = list_item (hostaddr, i);
      g_autofree gchar *p = list_item (port, i);
      if (h != NULL)
        server_add (s, "host", h);
      if (a != NULL)
        server_add (s, "hostaddr", a);
      if (p != NULL)
        server_add (s, "port", p);
      /* This server only, and only while it takes writes. */
      server_add (s, "target_session_attrs", "read-write");
      g_ptr_array_add (s->keys, NULL);
      g_ptr_array_add (s->values, NULL);
      s->where = g_strdup_printf ("%s:%s", h ? h : a ? a : "localhost", p ? p : "5432");
      g_ptr_array_add (servers, s);
    }
  PQconninfoFree (opts);
  return g_steal_pointer (&servers);
}

/* The database system's identifier and the server's timeline (a writable
 * server's: its WAL's), in *@system and *@timeline; FALSE when it cannot
 * tell (an older server, or one in recovery; *@unanswered: one that did
 * not answer). */
static gboolean
timeline_of (PGconn *conn, gchar **system, gint *timeline, gboolean *unanswered)
{
  PGresult *res = answer (conn,
                          PQsendQuery (conn, "SELECT system_identifier::text, "
                                             "('x' || substr(pg_walfile_name("
                                             "pg_current_wal_lsn()), 1, 8))"
                                             "::bit(32)::int FROM pg_control_system()"),
                          FALSE, unanswered);
  gboolean ok = PQresultStatus (res) == PGRES_TUPLES_OK && PQntuples (res) == 1;

  if (ok)
    {
      *system = g_strdup (PQgetvalue (res, 0, 0));
      *timeline = (gint) g_ascii_strtoll (PQgetvalue (res, 0, 1), NULL, 10);
    }
  PQclear (res);
  return ok;
}

/* A server tried: its connection and timeline, or why it was not taken. */
typedef struct
{
  PGconn *conn; /* NULL: not taken */
  gchar *system;
  gint timeline;
} Tried;

static void
tried_clear (Tried *t)
{
  if (t->conn != NULL)
    PQfinish (t->conn);
  g_free (t->system);
}

/* Connects to each server of @servers; the index of the one to use (the
 * writable one on the newest timeline, or the only one), or -1 with
 * @error saying why each was not. */
static gint
choose (GPtrArray *servers, Tried *tried, GError **error)
{
  g_autoptr (GString) why = g_string_new (NULL);
  gint best = -1;

  for (guint i = 0; i < servers->len; i++)
    {
      Server *sv = servers->pdata[i];
      PGconn *conn = PQconnectdbParams ((const char *const *) sv->keys->pdata,
                                        (const char *const *) sv->values->pdata, 0);
      if (PQstatus (conn) != CONNECTION_OK)
        {
          g_autofree gchar *msg = g_strdup (PQerrorMessage (conn));
          g_string_append_printf (why, "%s%s", why->len ? "; " : "", g_strstrip (msg));
          PQfinish (conn);
          continue;
        }
      gboolean unanswered = FALSE;
      if (!timeline_of (conn, &tried[i].system, &tried[i].timeline, &unanswered))
        tried[i].timeline = 0;
      if (unanswered)
        {
          g_string_append_printf (why, "%s%s did not answer within %u ms", why->len ? "; " : "",
                                  sv->where, answer_timeout_ms);
          PQfinish (conn);
          continue;
        }
      tried[i].conn = conn;
      if (best < 0 || tried[i].timeline > tried[best].timeline)
        best = (gint) i;
    }
  if (best < 0)
    g_set_error (error, STG_STORE_ERROR, STG_STORE_ERROR_FAILED, "connecting to PostgreSQL: %s",
                 why->str);
  return best;
}

/* The newest timeline of @system used before (0: none). */
static gint
newest_timeline (const gchar *system)
{
  return GPOINTER_TO_INT (g_hash_table_lookup (timelines (), system));
}

/* Connects to the server to use of the URL (see the top of the file). */
static gboolean
pg_connect (StgDb *db, GError **error)
{
  PgState *state = db->engine_state;
  g_autoptr (GPtrArray) servers = servers_of (state->conninfo, error);

  if (servers == NULL)
    return FALSE;
  g_autofree Tried *tried = g_new0 (Tried, servers->len);
  gint best = choose (servers, tried, error);
  gboolean ok = best >= 0;
  Server *chosen = ok ? servers->pdata[best] : NULL;
  Tried *t = ok ? &tried[best] : NULL;

  for (guint i = 0; ok && i < servers->len; i++)
    if ((gint) i != best && tried[i].conn != NULL && tried[i].timeline > 0)
      g_warning ("store: PostgreSQL at %s takes writes too, on timeline %d, behind %s on "
                 "timeline %d (an old primary started again?): not used",
                 ((Server *) servers->pdata[i])->where, tried[i].timeline, chosen->where,
                 t->timeline);
  gint newest = ok && t->timeline > 0 ? newest_timeline (t->system) : 0;
  if (ok && t->timeline < newest)
    {
      g_set_error (error, STG_STORE_ERROR, STG_STORE_ERROR_FAILED,
                   "connecting to PostgreSQL: %s is on timeline %d, behind timeline %d this "
                   "staggerd used before: an old primary started again while its successor is "
                   "away? Not used (make it a standby of the new primary, or take it out of "
                   "--store)",
                   chosen->where, t->timeline, newest);
      ok = FALSE;
    }
  if (ok)
    {
      if (db->conn != NULL)
        PQfinish (db->conn);
      db->conn = g_steal_pointer (&t->conn);
      PQsetNoticeProcessor (db->conn, ignore_notice, NULL);
      if (t->timeline > 0 && t->timeline != newest)
        {
          note_timeline (t->system, t->timeline);
          g_message ("store: PostgreSQL at %s, timeline %d", chosen->where, t->timeline);
        }
    }
  for (guint i = 0; i < servers->len; i++)
    tried_clear (&tried[i]);
  return ok;
}

StgDb *
stg_db_open_pg (const gchar *conninfo, GError **error)
{
  if (!check_no_password (conninfo, error))
    return NULL;
  StgDb *db = stg_db_new (&PG_OPS, STG_DB_POSTGRESQL);
  PgState *state = g_new0 (PgState, 1);

  state->conninfo = g_strdup (conninfo);
  db->engine_state = state;
  if (!pg_connect (db, error))
    {
      stg_db_close (db);
      return NULL;
    }
  return db;
}
