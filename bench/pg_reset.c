/* pg_reset.c: see pg_reset.h. Calls libpq directly. */
#include "config.h"

#include <glib.h>
#include <libpq-fe.h>

#include "pg_reset.h"

void
stg_bench_pg_reset (const char *url)
{
  PGconn *conn = PQconnectdb (url);
  PGresult *res = PQexec (conn, "SET client_min_messages = warning; "
                                "DROP SCHEMA public CASCADE; CREATE SCHEMA public");

  if (PQresultStatus (res) != PGRES_COMMAND_OK)
    g_error ("bench: emptying %s: %s", url, PQerrorMessage (conn));
  PQclear (res);
  PQfinish (conn);
}
