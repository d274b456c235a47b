/* pgtest.c: a throwaway PostgreSQL cluster for tests (see pgtest.h).
 *
 * Runs initdb and pg_ctl from /usr/lib/postgresql/15/bin (or $STG_PG_BINDIR)
 * through runuser as "nobody" when the test runs as root, and creates
 * databases through libpq. Test processes only.
 */
#include "config.h"

#include "pgtest.h"
#include "testutil.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <libpq-fe.h>
#include <pwd.h>
#include <unistd.h>

#define PG_USER "nobody"
#define PORT_LOW 18000
#define PORT_HIGH 18100   /* 18100-18999: other servers of the tests */

static const gchar *
bindir (void)
{
  const gchar *dir = g_getenv ("STG_PG_BINDIR");
  return dir != NULL ? dir : "/usr/lib/postgresql/15/bin";
}

/* Runs a PostgreSQL program (NULL-terminated arguments after @prog) as the
 * unprivileged user when we are root. */
static gboolean
run_pg (StgTestPg *pg, const gchar *prog, GError **error, ...)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autofree gchar *out = NULL;
  gint status = 0;
  va_list ap;

  if (geteuid () == 0)
    {
      g_ptr_array_add (argv, g_strdup ("runuser"));
      g_ptr_array_add (argv, g_strdup ("-u"));
      g_ptr_array_add (argv, g_strdup (PG_USER));
      g_ptr_array_add (argv, g_strdup ("--"));
    }
  g_ptr_array_add (argv, g_build_filename (bindir (), prog, NULL));
  va_start (ap, error);
  for (const gchar *arg = va_arg (ap, const gchar *); arg != NULL; arg = va_arg (ap, const gchar *))
    g_ptr_array_add (argv, g_strdup (arg));
  va_end (ap);
  g_ptr_array_add (argv, NULL);

  if (!g_spawn_sync (pg->dir, (gchar **) argv->pdata, NULL,
                     G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out, NULL,
                     &status, error))
    return FALSE;
  if (!g_spawn_check_wait_status (status, error))
    {
      g_prefix_error (error, "%s: %s: ", prog, out != NULL ? out : "");
      return FALSE;
    }
  return TRUE;
}

gboolean
stg_test_port_free (guint16 port)
{
  g_autoptr (GSocket) sock = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM,
                                           G_SOCKET_PROTOCOL_TCP, NULL);
  g_autoptr (GInetAddress) lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr (GSocketAddress) addr = g_inet_socket_address_new (lo, port);

  return sock != NULL && g_socket_bind (sock, addr, TRUE, NULL);
}

static gboolean
pg_ctl_start (StgTestPg *pg, GError **error)
{
  g_autofree gchar *log = g_build_filename (pg->dir, "log", NULL);
  g_autofree gchar *data = g_build_filename (pg->dir, "data", NULL);
  g_autofree gchar *opts = g_strdup_printf ("-p %u -c listen_addresses=127.0.0.1 "
                                            "-c unix_socket_directories=%s -c fsync=off "
                                            "-c max_connections=60",
                                            pg->port, pg->dir);
  if (!run_pg (pg, "pg_ctl", error, "start", "-w", "-t", "60", "-D", data, "-l", log, "-o", opts,
               NULL))
    return FALSE;
  pg->running = TRUE;
  return TRUE;
}

StgTestPg *
stg_test_pg_start (GError **error)
{
  g_autoptr (StgTestPg) pg = g_new0 (StgTestPg, 1);
  g_autofree gchar *data = NULL;
  struct passwd *pw = getpwnam (PG_USER);

  pg->dir = g_strdup ("/tmp/stg-pg-XXXXXX");
  if (g_mkdtemp_full (pg->dir, 0700) == NULL)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno), "mkdtemp: %s",
                   g_strerror (errno));
      return NULL;
    }
  if (geteuid () == 0 && (pw == NULL || chown (pg->dir, pw->pw_uid, pw->pw_gid) != 0))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "cannot hand %s to %s", pg->dir, PG_USER);
      return NULL;
    }
  data = g_build_filename (pg->dir, "data", NULL);
  if (!run_pg (pg, "initdb", error, "-D", data, "-U", "stagger", "-A", "trust", "-E", "UTF8",
               "--no-sync", "--locale=C", NULL))
    return NULL;
  /* A random free port of the range; another suite may take it between
   * the check and the start, so a failed start tries another. */
  for (guint attempt = 0; attempt < 8; attempt++)
    {
      g_autoptr (GError) local = NULL;
      pg->port = (guint16) g_random_int_range (PORT_LOW, PORT_HIGH);
      if (!stg_test_port_free (pg->port))
        continue;
      if (pg_ctl_start (pg, &local))
        return g_steal_pointer (&pg);
      if (attempt == 7)
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return NULL;
        }
    }
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_ADDRESS_IN_USE, "no free port for PostgreSQL");
  return NULL;
}

gboolean
stg_test_pg_stop (StgTestPg *pg, GError **error)
{
  g_autofree gchar *data = g_build_filename (pg->dir, "data", NULL);

  if (!pg->running)
    return TRUE;
  if (!run_pg (pg, "pg_ctl", error, "stop", "-w", "-m", "fast", "-D", data, NULL))
    return FALSE;
  pg->running = FALSE;
  return TRUE;
}

gboolean
stg_test_pg_restart (StgTestPg *pg, GError **error)
{
  return pg->running || pg_ctl_start (pg, error);
}

void
stg_test_pg_free (StgTestPg *pg)
{
  if (pg == NULL)
    return;
  if (pg->running)
    {
      g_autofree gchar *data = g_build_filename (pg->dir, "data", NULL);
      (void) run_pg (pg, "pg_ctl", NULL, "stop", "-w", "-m", "immediate", "-D", data, NULL);
    }
  if (pg->dir != NULL)
    {
      const gchar *argv[] = { "rm", "-rf", pg->dir, NULL };
      (void) g_spawn_sync (NULL, (gchar **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL,
                           NULL, NULL, NULL);
    }
  g_free (pg->dir);
  g_free (pg);
}

gchar *
stg_test_pg_conninfo (StgTestPg *pg, const gchar *name)
{
  return g_strdup_printf ("host=127.0.0.1 port=%u user=stagger dbname=%s connect_timeout=10",
                          pg->port, name);
}

gchar *
stg_test_pg_new_database (StgTestPg *pg, GError **error)
{
  static gint counter;
  g_autofree gchar *admin = stg_test_pg_conninfo (pg, "postgres");
  g_autofree gchar *name = g_strdup_printf ("t%d_%d", (gint) getpid (),
                                            g_atomic_int_add (&counter, 1));
  g_autofree gchar *sql = g_strdup_printf ("CREATE DATABASE %s", name);
  PGconn *conn = PQconnectdb (admin);
  PGresult *res = NULL;
  gboolean ok = FALSE;

  if (PQstatus (conn) == CONNECTION_OK)
    {
      res = PQexec (conn, sql);
      ok = PQresultStatus (res) == PGRES_COMMAND_OK;
    }
  if (!ok)
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "creating database %s: %s", name,
                 PQerrorMessage (conn));
  PQclear (res);
  PQfinish (conn);
  return ok ? stg_test_pg_conninfo (pg, name) : NULL;
}

gchar *
stg_test_pg_log (StgTestPg *pg)
{
  g_autofree gchar *path = g_build_filename (pg->dir, "log", NULL);
  gchar *text = NULL;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return g_strdup ("(no log)");
  return text;
}

int
stg_test_pg_main (const gchar *name, Suite *suite, StgTestPg **pg, gboolean nofork)
{
  g_autoptr (GError) error = NULL;
  gchar *scope = stg_test_scope_begin ();
  SRunner *sr = srunner_create (suite);
  int failed = 1;

  *pg = stg_test_pg_start (&error);
  if (*pg == NULL)
    g_printerr ("%s: cannot start PostgreSQL: %s\n", name, error->message);
  else
    {
      if (nofork)
        srunner_set_fork_status (sr, CK_NOFORK);
      srunner_run_all (sr, CK_NORMAL);
      failed = srunner_ntests_failed (sr);
    }
  srunner_free (sr);
  g_clear_pointer (pg, stg_test_pg_free);
  stg_test_scope_end (scope);
  return failed == 0 ? 0 : 1;
}
