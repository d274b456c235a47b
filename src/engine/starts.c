/* starts.c: starting a new job's instances, paced.
 *
 * createJob stores every instance in one transaction; then the runtime is
 * asked to start them. A small job's instances start at once; a big one's
 * go STG_ENGINE_START_CHUNK at a time from a clock timer, each chunk's
 * runtime records in one transaction, so the loop keeps serving (/health,
 * other calls) while a job of 100,000 comes up. Anything else that touches
 * a job first finishes its pending starts. Calls the store, the runtime and
 * the clock only. Main-loop thread only.
 */
#include "config.h"

#include "engine/engine_private.h"

typedef struct
{
  gint64 job_id;
  gint64 config_id;
  gint32 next; /* the next instance to start */
  gint32 count;
} Starting;

/* Starts instances next..@until-1 of @s, all their records in one transaction. */
static void
start_range (StgEngine *e, Starting *s, gint32 until)
{
  g_autoptr (GError) error = NULL;
  gboolean batched = stg_store_begin (e->store, &error);

  if (!batched)
    g_warning ("engine: starting instances one by one: %s", error->message);
  for (; s->next < until; s->next++)
    {
      g_autoptr (GError) local = NULL;
      if (!stg_runtime_apply (e->runtime, s->job_id, s->next, s->config_id, &local))
        g_warning ("engine: starting instance %d of a new job failed: %s", s->next, local->message);
    }
  if (batched && !stg_store_commit (e->store, &error))
    {
      g_warning ("engine: recording a new job's instances failed: %s", error->message);
      stg_store_rollback (e->store);
    }
}

static void
start_chunk (gpointer data)
{
  StgEngine *e = data;
  Starting *s = &g_array_index (e->starting, Starting, 0);

  e->start_timer = 0;
  start_range (e, s, MIN (s->count, s->next + STG_ENGINE_START_CHUNK));
  if (s->next >= s->count)
    g_array_remove_index (e->starting, 0);
  if (e->starting->len > 0)
    e->start_timer = stg_clock_add_timer (e->clock, 0, start_chunk, e);
}

void
stg_engine_start_instances (StgEngine *e, gint64 job_id, gint64 config_id, gint32 count)
{
  Starting s = { job_id, config_id, 0, count };

  if (e->runtime == NULL || count <= 0)
    return;
  if (count <= STG_ENGINE_START_CHUNK)
    {
      start_range (e, &s, count);
      return;
    }
  g_array_append_val (e->starting, s);
  if (e->start_timer == 0)
    e->start_timer = stg_clock_add_timer (e->clock, 0, start_chunk, e);
}

void
stg_engine_finish_starts (StgEngine *e, gint64 job_id)
{
  for (guint i = 0; i < e->starting->len; i++)
    {
      Starting *s = &g_array_index (e->starting, Starting, i);
      if (s->job_id != job_id)
        continue;
      start_range (e, s, s->count);
      g_array_remove_index (e->starting, i);
      break;
    }
  if (e->starting->len == 0)
    {
      stg_clock_cancel_timer (e->clock, e->start_timer);
      e->start_timer = 0;
    }
}

GArray *
stg_engine_starts_new (void)
{
  return g_array_new (FALSE, FALSE, sizeof (Starting));
}

void
stg_engine_starts_free (StgEngine *e)
{
  stg_clock_cancel_timer (e->clock, e->start_timer);
  e->start_timer = 0;
  g_array_unref (e->starting);
}
