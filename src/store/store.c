/* store.c: opening the database, migrations, transactions, statements.
 *
 * The database is SQLite (a file) or PostgreSQL (a URL or conninfo), both
 * behind the database layer (db.h). Migrations are the numbered files of
 * schema/, embedded as GResources under /org/stagger/schema/:
 * NNN_name.sql is shared by both engines unless NNN_name.pg.sql or
 * NNN_name.sqlite.sql exists for the engine. The database records the
 * number of the last one applied (SQLite: PRAGMA user_version; PostgreSQL:
 * the stagger_schema table); each applies in its own transaction. A
 * database with a higher number than this build knows is refused, untouched.
 * Replicas sharing a PostgreSQL database migrate only when they win the
 * lead (stg_store_open_shared, leader.c): a follower never changes the
 * schema under a leader, and one that meets a newer schema follows.
 *
 * Transactions nest: level 1 is BEGIN IMMEDIATE / COMMIT, deeper levels are
 * SAVEPOINTs; a leader's level 1 first checks its epoch (see leader.c).
 * Main-loop thread only.
 */
#include "config.h"

#include <gio/gio.h>

#include "store/store_private.h"


#define SCHEMA_PREFIX "/org/stagger/schema"

/* Made by glib-compile-resources from schema/schema.gresource.xml. */
GResource *stg_schema_get_resource (void);

/* ---- errors and statements -------------------------------------------- */

gboolean
stg_store_fail (StgStore *store, GError **error, const gchar *what)
{
  return stg_db_fail (store->db, error, what);
}

void
stg_stmt_release (StgStmt *stmt)
{
  if (stmt != NULL)
    stg_db_reset (stmt);
}

StgStmt *
stg_store_stmt (StgStore *store, const gchar *sql, GError **error)
{
  return stg_db_stmt (store->db, sql, error);
}

gboolean
stg_store_exec_stmt (StgStore *store, StgStmt *stmt, GError **error, const gchar *what)
{
  if (stg_db_step (stmt) == STG_DB_FAILED)
    return stg_store_fail (store, error, what);
  return TRUE;
}

gboolean
stg_store_insert_id (StgStore *store, StgStmt *stmt, gint64 *id, GError **error, const gchar *what)
{
  if (stg_db_step (stmt) != STG_DB_ROW)
    return stg_store_fail (store, error, what);
  *id = stg_db_column_int64 (stmt, 0);
  return TRUE;
}

gboolean
stg_store_exec (StgStore *store, const gchar *sql, GError **error)
{
  return stg_db_exec (store->db, sql, error);
}

void
stg_bind_text (StgStmt *stmt, int index, const gchar *text)
{
  stg_db_bind_text (stmt, index, text);
}

gchar *
stg_column_dup (StgStmt *stmt, int col)
{
  const gchar *t = stg_db_column_text (stmt, col);
  return g_strdup (t ? t : "");
}

GBytes *
stg_column_bytes (StgStmt *stmt, int col)
{
  return stg_db_column_bytes (stmt, col);
}

/* ---- migrations -------------------------------------------------------- */

static gint
migration_number (const gchar *name)
{
  if (!g_ascii_isdigit (name[0]) || !g_str_has_suffix (name, ".sql"))
    return -1;
  return (gint) g_ascii_strtoll (name, NULL, 10);
}

/* The engine a migration file is for: NULL for a shared one (NNN_name.sql),
 * else "pg" or "sqlite" (NNN_name.pg.sql, NNN_name.sqlite.sql). */
static const gchar *
migration_engine (const gchar *name)
{
  if (g_str_has_suffix (name, ".pg.sql"))
    return "pg";
  if (g_str_has_suffix (name, ".sqlite.sql"))
    return "sqlite";
  return NULL;
}

static gint
compare_names (gconstpointer a, gconstpointer b)
{
  return migration_number (*(const gchar *const *) a) - migration_number (*(const gchar *const *) b);
}

/* The migration file names for @engine ("pg", "sqlite", or NULL for any),
 * in order: for each number the engine's own file if there is one, else the
 * shared one. */
static GPtrArray *
list_migrations (const gchar *engine)
{
  g_auto (GStrv) names = g_resource_enumerate_children (stg_schema_get_resource (),
                                                        SCHEMA_PREFIX, 0, NULL);
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);

  /* Without the embedded schema no store can be opened: a build error. */
  g_assert (names != NULL);
  for (guint i = 0; names[i] != NULL; i++)
    {
      gint number = migration_number (names[i]);
      const gchar *own = migration_engine (names[i]);
      gboolean overridden = FALSE;
      if (number <= 0 || (own != NULL && g_strcmp0 (own, engine) != 0))
        continue;
      for (guint j = 0; own == NULL && engine != NULL && names[j] != NULL; j++)
        overridden |= migration_number (names[j]) == number &&
                      g_strcmp0 (migration_engine (names[j]), engine) == 0;
      if (!overridden)
        g_ptr_array_add (out, g_strdup (names[i]));
    }
  g_ptr_array_sort (out, compare_names);
  return out;
}

gint
stg_store_latest_schema_version (void)
{
  g_autoptr (GPtrArray) names = list_migrations ("sqlite");
  return names->len == 0 ? 0 : migration_number (names->pdata[names->len - 1]);
}

gint
stg_store_schema_version (StgStore *store)
{
  return stg_db_schema_version (store->db);
}

/* Applies the migrations after the store's version up to @upto. */
static gboolean
migrate (StgStore *store, gint upto, GError **error)
{
  g_autoptr (GPtrArray) names =
      list_migrations (stg_db_engine (store->db) == STG_DB_POSTGRESQL ? "pg" : "sqlite");
  gint current = stg_store_schema_version (store);
  gint latest = stg_store_latest_schema_version ();

  if (current < 0)
    return stg_store_fail (store, error, "reading the schema version");
  if (current > latest)
    {
      gboolean pg = stg_db_engine (store->db) == STG_DB_POSTGRESQL;
      g_set_error (error, STG_STORE_ERROR, STG_STORE_ERROR_NEWER,
                   "the database is at schema version %d, but this staggerd (%s) knows only "
                   "up to version %d: run a newer staggerd%s",
                   current, PACKAGE_VERSION, latest,
                   pg ? "; this one will not lead" : ", or use another data directory");
      return FALSE;
    }
  for (guint i = 0; i < names->len; i++)
    {
      const gchar *name = names->pdata[i];
      gint number = migration_number (name);
      if (number <= current || number > upto)
        continue;

      g_autofree gchar *path = g_strconcat (SCHEMA_PREFIX "/", name, NULL);
      g_autoptr (GBytes) sql = g_resource_lookup_data (stg_schema_get_resource (), path, 0, error);
      if (sql == NULL)
        return FALSE;
      g_autofree gchar *text = g_strndup (g_bytes_get_data (sql, NULL), g_bytes_get_size (sql));

      if (!stg_store_begin (store, error))
        return FALSE;
      /* A migration may rewrite a large table: no bound on its answer. */
      stg_db_set_patient (store->db, TRUE);
      gboolean ok = stg_store_exec (store, text, error) &&
                    stg_db_set_schema_version (store->db, number, error) &&
                    stg_store_commit (store, error);
      stg_db_set_patient (store->db, FALSE);
      if (!ok)
        {
          stg_store_rollback (store);
          g_prefix_error (error, "applying migration %s: ", name);
          return FALSE;
        }
      g_info ("store: applied migration %s", name);
    }
  if (current < MIN (latest, upto))
    g_message ("store: schema migrated from version %d to %d", current,
               stg_store_schema_version (store));
  return TRUE;
}

/* ---- open and close ---------------------------------------------------- */

/* Replicas on one PostgreSQL database may start together: one migrates at a
 * time, under this session advisory lock. */
#define MIGRATION_LOCK "7387781501"

static gboolean
migrate_locked (StgStore *store, gint upto, GError **error)
{
  gboolean ok;

  if (stg_db_engine (store->db) != STG_DB_POSTGRESQL)
    return migrate (store, upto, error);
  if (!stg_store_exec (store, "SELECT pg_advisory_lock(" MIGRATION_LOCK ")", error))
    return FALSE;
  ok = migrate (store, upto, error);
  (void) stg_store_exec (store, "SELECT pg_advisory_unlock(" MIGRATION_LOCK ")", NULL);
  return ok;
}

gboolean
stg_store_migrate (StgStore *store, GError **error)
{
  return migrate_locked (store, G_MAXINT, error);
}

/* Opens the store at @location, migrated up to @upto (0: not at all). */
static StgStore *
open_store (const gchar *location, gint upto, GError **error)
{
  g_autoptr (StgStore) store = g_new0 (StgStore, 1);
  gboolean pg = stg_db_is_postgresql (location);

  store->configs = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_object_unref);
  store->versions = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  store->db = pg ? stg_db_open_pg (location, error) : stg_db_open_sqlite (location, error);
  if (store->db == NULL)
    return NULL;
  if (upto > 0 && !migrate_locked (store, upto, error))
    {
      /* Never echo a conninfo: it may name more than the reader needs. */
      g_prefix_error (error, "%s: ", pg ? "PostgreSQL store" : location);
      return NULL;
    }
  return g_steal_pointer (&store);
}

StgStore *
stg_store_open (const gchar *location, GError **error)
{
  return open_store (location, G_MAXINT, error);
}

StgStore *
stg_store_open_at (const gchar *location, gint version, GError **error)
{
  return open_store (location, version, error);
}

StgStore *
stg_store_open_shared (const gchar *location, GError **error)
{
  return open_store (location, stg_db_is_postgresql (location) ? 0 : G_MAXINT, error);
}

gboolean
stg_store_is_postgresql (const gchar *location)
{
  return stg_db_is_postgresql (location);
}

void
stg_store_close (StgStore *store)
{
  if (store == NULL)
    return;
  while (store->depth > 0)
    stg_store_rollback (store);
  g_clear_pointer (&store->configs, g_hash_table_unref);
  g_clear_pointer (&store->versions, g_hash_table_unref);
  g_clear_pointer (&store->db, stg_db_close);
  g_free (store);
}

/* ---- transactions ------------------------------------------------------ */

void
stg_store_lead_proven (StgStore *store, gint64 sent_us)
{
  store->proven_us = MAX (store->proven_us, sent_us);
}

/* Inside a level-1 transaction of a leader (leader.c): FALSE with
 * STG_STORE_ERROR_FENCED unless the leader row still has our epoch (read
 * FOR SHARE, so no takeover commits before this transaction ends). */
static gboolean
check_epoch (StgStore *store, GError **error)
{
  g_autoptr (StgStmt) st = NULL;
  gint64 now;
  gint64 sent_us = g_get_monotonic_time ();

  if (store->epoch == 0 || stg_db_engine (store->db) != STG_DB_POSTGRESQL)
    return TRUE;
  st = stg_store_stmt (store, "SELECT epoch FROM stagger_leader WHERE id = 1 FOR SHARE", error);
  if (st == NULL)
    return FALSE;
  if (stg_db_step (st) != STG_DB_ROW)
    return stg_store_fail (store, error, "checking the leader's epoch");
  now = stg_db_column_int64 (st, 0);
  if (now != store->epoch)
    {
      g_set_error (error, STG_STORE_ERROR, STG_STORE_ERROR_FENCED,
                   "another replica leads now (epoch %" G_GINT64_FORMAT
                   ", ours was %" G_GINT64_FORMAT "): this one may not write",
                   now, store->epoch);
      return FALSE;
    }
  stg_store_lead_proven (store, sent_us);
  return TRUE;
}

gboolean
stg_store_begin (StgStore *store, GError **error)
{
  g_autofree gchar *sql = store->depth == 0 ? g_strdup (stg_db_begin_sql (store->db))
                                            : g_strdup_printf ("SAVEPOINT s%u", store->depth);
  if (!stg_store_exec (store, sql, error))
    return FALSE;
  store->depth++;
  /* A leader writes only while the epoch is still its own. */
  if (store->depth == 1 && !check_epoch (store, error))
    {
      stg_store_rollback (store);
      return FALSE;
    }
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
  gint64 t0 = g_get_monotonic_time ();
  if (!stg_store_exec (store, "COMMIT", error))
    {
      stg_store_rollback (store);
      return FALSE;
    }
  store->depth = 0;
  store->commits++;
  store->commit_us += g_get_monotonic_time () - t0;
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
  else if (stg_db_in_transaction (store->db))
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

gboolean
stg_store_sqlite_relax_sync (StgStore *store, GError **error)
{
  return stg_store_exec (store, "PRAGMA synchronous = NORMAL", error);
}

guint64
stg_store_commit_count (StgStore *store)
{
  return store->commits;
}

gdouble
stg_store_commit_seconds (StgStore *store)
{
  return (gdouble) store->commit_us / 1e6;
}

GHashTable *
stg_store_count_by_status (StgStore *store, const gchar *table, GError **error)
{
  /* Statements are cached by their text: each must be a constant. */
  static const gchar updates_sql[] = "SELECT status, COUNT(*) FROM updates GROUP BY status";
  static const gchar instances_sql[] = "SELECT status, COUNT(*) FROM instances GROUP BY status";
  g_return_val_if_fail (g_str_equal (table, "updates") || g_str_equal (table, "instances"), NULL);
  g_autoptr (StgStmt) st =
      stg_store_stmt (store, g_str_equal (table, "updates") ? updates_sql : instances_sql, error);
  g_autoptr (GHashTable) counts = g_hash_table_new (NULL, NULL);
  int rc;

  if (st == NULL)
    return NULL;
  while ((rc = stg_db_step (st)) == STG_DB_ROW)
    g_hash_table_insert (counts, GINT_TO_POINTER ((gint) stg_db_column_int64 (st, 0)),
                         GINT_TO_POINTER ((gint) stg_db_column_int64 (st, 1)));
  if (rc != STG_DB_DONE)
    {
      stg_store_fail (store, error, "counting rows by status");
      return NULL;
    }
  return g_steal_pointer (&counts);
}

void
stg_store_fail_commit (StgStore *store, guint n)
{
  store->fail_commit_in = n;
}
