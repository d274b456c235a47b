/* store_at.c: a test tool that leaves a store as a given schema version
 * made it, for the migration tests (migration_test.py):
 *
 *   store_at LOCATION VERSION|latest
 *
 * LOCATION is a SQLite file or a PostgreSQL conninfo, as staggerd's
 * --store takes it. The store is created or migrated up to VERSION (never
 * down); the version it is at then is printed. Exits 1 with the reason on
 * stderr when the store does not open.
 */
#include "config.h"

#include <stdio.h>

#include "store/store.h"

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (StgStore) store = NULL;
  gint64 version = 0;

  if (argc != 3)
    {
      fprintf (stderr, "usage: store_at LOCATION VERSION|latest\n");
      return 2;
    }
  if (g_strcmp0 (argv[2], "latest") == 0)
    version = stg_store_latest_schema_version ();
  else if (!g_ascii_string_to_signed (argv[2], 10, 1, G_MAXINT, &version, &error))
    {
      fprintf (stderr, "store_at: version %s: %s\n", argv[2], error->message);
      return 2;
    }
  store = stg_store_open_at (argv[1], (gint) version, &error);
  if (store == NULL)
    {
      fprintf (stderr, "store_at: %s\n", error->message);
      return 1;
    }
  printf ("%d\n", stg_store_schema_version (store));
  return 0;
}
