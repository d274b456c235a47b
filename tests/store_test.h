/* store_test.h: what store_test.c shares with the files of its other
 * test cases (store_notices_test.c): the fixture of a fresh store per
 * test, on SQLite or, in the second run, PostgreSQL. Test processes only.
 */
#pragma once

#include <check.h>

#include "store/store.h"

G_BEGIN_DECLS

/* The checked fixture: a fresh database (a SQLite file, or a new
 * PostgreSQL database in the PostgreSQL run), then its removal. */
void store_test_setup (void);
void store_test_teardown (void);

/* Opens (and migrates) the fixture's database; fails the test otherwise. */
StgStore *store_test_open (void);

/* The test case of the webhook notices kept (store_notices_test.c). */
TCase *store_notices_tcase (void);

G_END_DECLS
