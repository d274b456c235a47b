/* fuzz_dispatch.c: libFuzzer target for a whole binary Thrift call: any
 * bytes given to the dispatcher in front of the real handler, engine and
 * store (a database in a temporary folder, no runtime), as a TCP frame or
 * an HTTP body would be. Nothing may crash or leak, and the answer is a
 * reply or a clean error. */
#include "config.h"

#include <glib/gstdio.h>
#include <stdlib.h>

#include "api/dispatch.h"
#include "common/clock.h"
#include "engine/engine.h"
#include "fuzz.h"

static StgDispatch *dispatch;
static StgEngine *engine;
static StgStore *store;
static StgClock *fz_clock;
static gchar *dir;

static void
teardown (void)
{
  g_clear_pointer (&dispatch, stg_dispatch_free);
  g_clear_pointer (&engine, stg_engine_free);
  g_clear_pointer (&store, stg_store_close);
  g_clear_pointer (&fz_clock, stg_clock_free);
  if (dir != NULL)
    {
      g_autofree gchar *db = g_build_filename (dir, "stagger.db", NULL);
      g_autofree gchar *wal = g_strconcat (db, "-wal", NULL);
      g_autofree gchar *shm = g_strconcat (db, "-shm", NULL);
      g_unlink (db);
      g_unlink (wal);
      g_unlink (shm);
      g_rmdir (dir);
      g_clear_pointer (&dir, g_free);
    }
}

static void
setup (void)
{
  g_autoptr (GError) error = NULL;
  dir = g_dir_make_tmp ("stagger-fuzz-XXXXXX", &error);
  g_autofree gchar *db = dir ? g_build_filename (dir, "stagger.db", NULL) : NULL;
  store = db ? stg_store_open (db, &error) : NULL;
  if (store == NULL)
    g_error ("fuzz_dispatch: %s", error->message);
  fz_clock = stg_clock_new_real ();
  /* Small jobs: a flipped byte must not turn each run into 100,000 rows. */
  StgEngineLimits limits;
  stg_engine_limits_init (&limits);
  limits.max_instances = 64;
  engine = stg_engine_new (store, fz_clock, NULL, &limits);
  StgHandlerContext ctx = { .store = store, .engine = engine, .clock = fz_clock, .cluster = "fuzz" };
  StgHandler *handler = stg_handler_new (&ctx);
  dispatch = stg_dispatch_new (handler, 1 << 20);
  g_object_unref (handler);
  atexit (teardown);
}

int
LLVMFuzzerTestOneInput (const guint8 *data, gsize size)
{
  if (dispatch == NULL)
    setup ();
  g_autoptr (GBytes) input = g_bytes_new (data, size);
  g_autoptr (GBytes) reply = stg_dispatch_process (dispatch, stg_protocol_binary, input, NULL, NULL);
  (void) reply; /* any answer will do: the target looks for crashes and leaks */
  return 0;
}
