/* pgtest.h: a real PostgreSQL server for tests.
 *
 * Debian's postgresql-15 (initdb, pg_ctl) in a temporary directory, run as
 * an unprivileged user when the tests run as root (postgres refuses root),
 * listening on 127.0.0.1 on a free port of 18000-18099 with trust auth.
 * Each test takes its own fresh database. Test processes only.
 */
#pragma once

#include <check.h>
#include <glib.h>

G_BEGIN_DECLS

typedef struct
{
  gchar *dir;       /* data directory (also holds the log and the socket) */
  guint16 port;
  gboolean running;
} StgTestPg;

/* initdb and start; NULL with @error when PostgreSQL cannot be run here. */
StgTestPg *stg_test_pg_start (GError **error);

/* Stops the server (fast shutdown) and keeps the data directory. */
gboolean stg_test_pg_stop (StgTestPg *pg, GError **error);

/* Starts a stopped server again on the same port and data. */
gboolean stg_test_pg_restart (StgTestPg *pg, GError **error);

/* Stops the server if it runs, removes its directory, frees @pg. */
void stg_test_pg_free (StgTestPg *pg);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgTestPg, stg_test_pg_free)

/* Creates a new empty database and returns its libpq conninfo
 * ("host=127.0.0.1 port=N user=stagger dbname=NAME"). */
gchar *stg_test_pg_new_database (StgTestPg *pg, GError **error);

/* The conninfo of database @name on @pg. */
gchar *stg_test_pg_conninfo (StgTestPg *pg, const gchar *name);

/* The PostgreSQL server's log so far (for a failing test's message). */
gchar *stg_test_pg_log (StgTestPg *pg);

/* TRUE when a listening socket could bind 127.0.0.1:@port now. */
gboolean stg_test_port_free (guint16 port);

/* A suite's main() on a PostgreSQL of its own: starts it into *@pg, runs
 * @suite (in this process when @nofork), stops it; the exit status. */
int stg_test_pg_main (const gchar *name, Suite *suite, StgTestPg **pg, gboolean nofork);

G_END_DECLS
