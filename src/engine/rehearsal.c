/* rehearsal.c: what an update would do before it starts (the rehearsal
 * getJobUpdateDiff answers with): the batches it would run, grown and
 * capped as the update would grow them, and how long each would take.
 *
 * The times come from the job's last finished update (its timeline): each
 * instance's measured start-to-healthy (the median of that update for an
 * instance it did not measure) plus the watch time is the instance's
 * time; a batch's limit is its slowest instance's time; its predicted time
 * runs the batch as the engine would, at most as many down at once as
 * minInService allows, plus the time that update spent per batch beyond
 * its limits (stopping, spawning, the steps between batches). A queue is
 * run as a window that moves on as each instance finishes. Pauses until
 * resumed, pulses and gates are not predicted: they are named in the
 * notes. Nothing is started; the store is only read. Main-loop thread.
 */
#include "config.h"

#include <string.h>

#include "common/jobkey.h"
#include "engine/engine_private.h"
#include "engine/rehearsal_private.h"
#include "engine/timeline.h"

#define RECENT_UPDATES 5 /* finished updates looked through for one with measured times */

/* The instance times one earlier update measured, kept per job in
 * e->measured while the job's newest finished update stays the same (a
 * start's rehearsal then reuses its diff's, and no timeline is built
 * twice). */
typedef struct
{
  GHashTable *healthy_ms; /* instance -> start-to-healthy ms (+1, so 0 is not NULL) */
  gint64 median_ms;       /* -1: nothing measured */
  gint64 overhead_ms;     /* beyond the limit, per batch */
  gchar *uid;             /* the update measured (NULL: none) */
  gchar *newest;          /* the job's newest finished forward update when read */
} Measured;

static void
measured_clear (Measured *m)
{
  g_clear_pointer (&m->healthy_ms, g_hash_table_unref);
  g_clear_pointer (&m->uid, g_free);
}

static void
measured_free (gpointer data)
{
  Measured *m = data;

  measured_clear (m);
  g_free (m->newest);
  g_free (m);
}

void
stg_rehearsal_forget (StgEngine *e)
{
  g_clear_pointer (&e->measured, g_hash_table_unref);
}

static gint
cmp_int64 (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;
  return (x > y) - (x < y);
}

/* Reads @t's forward works into @m: FALSE when none became healthy. */
static gboolean
measure (const StgTimeline *t, Measured *m)
{
  g_autoptr (GArray) all = g_array_new (FALSE, FALSE, sizeof (gint64));

  m->healthy_ms = g_hash_table_new (g_direct_hash, g_direct_equal);
  for (guint i = 0; i < t->works->len; i++)
    {
      const StgTimelineWork *w = &g_array_index (t->works, StgTimelineWork, i);
      if (w->back || w->healthy_ms < 0)
        continue;
      g_hash_table_insert (m->healthy_ms, GINT_TO_POINTER (w->instance),
                           GSIZE_TO_POINTER ((gsize) w->healthy_ms + 1));
      g_array_append_val (all, w->healthy_ms);
    }
  if (all->len == 0)
    return FALSE;
  g_array_sort (all, cmp_int64);
  m->median_ms = g_array_index (all, gint64, all->len / 2);

  /* What the update took beyond its limits and the waits it was told to
   * make (pauses, pulses, gates), spread over its batches. */
  gint64 beyond = (t->to_ms - t->from_ms) - t->limit_ms;
  for (guint i = 0; i < t->holds->len; i++)
    {
      const StgTimelineSpan *h = &g_array_index (t->holds, StgTimelineSpan, i);
      beyond -= h->to_ms - h->from_ms;
    }
  guint batches = 0;
  for (guint i = 0; i < t->batches->len; i++)
    {
      const StgTimelineBatch *b = &g_array_index (t->batches, StgTimelineBatch, i);
      if (b->back)
        continue;
      batches++;
      if (b->gap_why != NULL)
        beyond -= b->gap_ms;
    }
  m->overhead_ms = batches > 0 ? MAX (0, beyond / batches) : 0;
  return TRUE;
}

/* The newest of job @key's last finished forward updates with measured
 * times, or NULL when there is none (errors are logged: a rehearsal
 * without measurements is still one). Owned by e->measured. */
static const Measured *
find_measured (StgEngine *e, const ApiJobKey *key)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiJobUpdateQuery) q = g_object_new (API_TYPE_JOB_UPDATE_QUERY, "jobKey", key, "limit",
                                                  RECENT_UPDATES, NULL);

  g_hash_table_add (q->updateStatuses, GINT_TO_POINTER (API_JOB_UPDATE_STATUS_ROLLED_FORWARD));
  q->__isset_updateStatuses = TRUE;
  g_autoptr (GPtrArray) list = stg_store_query_update_summaries (e->store, q, &error);
  if (list == NULL || list->len == 0)
    {
      if (error != NULL)
        g_warning ("engine: a rehearsal reads no earlier update: %s", error->message);
      return NULL;
    }
  const gchar *newest = ((ApiJobUpdateSummary *) list->pdata[0])->key->id;
  g_autofree gchar *job = stg_job_key_to_string (key);
  if (e->measured == NULL)
    e->measured = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, measured_free);
  Measured *m = g_hash_table_lookup (e->measured, job);
  if (m != NULL && g_str_equal (m->newest, newest))
    return m->uid != NULL ? m : NULL;

  m = g_new0 (Measured, 1);
  m->median_ms = -1;
  m->newest = g_strdup (newest);
  for (guint i = 0; i < list->len && m->uid == NULL; i++)
    {
      ApiJobUpdateSummary *s = list->pdata[i];
      g_autoptr (StgTimeline) t = stg_engine_update_timeline (e, s->key->id, &error);
      if (t == NULL)
        break;
      if (measure (t, m))
        m->uid = g_strdup (s->key->id);
      else
        measured_clear (m);
    }
  if (error != NULL)
    {
      /* Not kept: the next rehearsal reads again. */
      g_warning ("engine: a rehearsal reads no earlier update: %s", error->message);
      measured_free (m);
      return NULL;
    }
  g_hash_table_replace (e->measured, g_steal_pointer (&job), m);
  return m->uid != NULL ? m : NULL;
}

/* Instance @ch's time: its measured start-to-healthy (the median when
 * this instance was not measured) plus the watch time; 0 for a kill. */
static gint64
instance_ms (const StgSettings *s, const Measured *m, const StgChange *ch)
{
  if (ch->to_config == 0)
    return 0;
  gsize known = m->healthy_ms != NULL
                    ? GPOINTER_TO_SIZE (
                          g_hash_table_lookup (m->healthy_ms, GINT_TO_POINTER (ch->instance)))
                    : 0;
  gint64 healthy = known > 0 ? (gint64) known - 1 : MAX (m->median_ms, 0);
  return healthy + s->watch_ms;
}

/* At most this many down at once: minInService keeps the rest up (surge
 * instances count towards it). G_MAXUINT: no floor. */
static guint
floor_cap (const StgSettings *s, const StgDiff *diff)
{
  if (s->min_in_service <= 0)
    return G_MAXUINT;
  gint64 room = diff->current_count + s->max_surge - s->min_in_service;
  return (guint) CLAMP (room, 1, G_MAXINT32);
}

/* ---- when instances under way end: a binary min-heap of end times ---------- */

static void
heap_push (GArray *heap, gint64 end)
{
  g_array_append_val (heap, end);
  gint64 *h = (gint64 *) heap->data;
  for (guint i = heap->len - 1; i > 0 && h[(i - 1) / 2] > h[i]; i = (i - 1) / 2)
    {
      gint64 up = h[(i - 1) / 2];
      h[(i - 1) / 2] = h[i];
      h[i] = up;
    }
}

/* Takes the earliest end out of @heap (not empty). */
static gint64
heap_pop (GArray *heap)
{
  gint64 *h = (gint64 *) heap->data, first = h[0];
  guint n = heap->len - 1, i = 0;

  h[0] = h[n];
  g_array_set_size (heap, n);
  for (;;)
    {
      guint least = i, l = 2 * i + 1, r = 2 * i + 2;
      if (l < n && h[l] < h[least])
        least = l;
      if (r < n && h[r] < h[least])
        least = r;
      if (least == i)
        return first;
      gint64 down = h[i];
      h[i] = h[least];
      h[least] = down;
      i = least;
    }
}

/* Runs @ms (instances in order) on @lanes at once, each starting as soon
 * as a lane is free: when the last ends. */
static gint64
run_lanes (const gint64 *ms, guint n, guint lanes)
{
  g_autoptr (GArray) ends = g_array_new (FALSE, FALSE, sizeof (gint64));
  gint64 last = 0;

  for (guint i = 0; i < n; i++)
    {
      gint64 start = ends->len < MAX (lanes, 1) ? 0 : heap_pop (ends);
      heap_push (ends, start + ms[i]);
      last = MAX (last, start + ms[i]);
    }
  return last;
}

static ApiRehearsalBatch *
batch_new (void)
{
  return g_object_new (API_TYPE_REHEARSAL_BATCH, "predictedMs", (gint64) -1, NULL);
}

/* Batches and groups: consecutive slices of the order, sized as the
 * update sizes them. Returns the predicted time of the whole. */
static gint64
run_batches (const StgSettings *s, const StgDiff *diff, const gint64 *ms, guint cap,
             gint64 overhead, ApiUpdateRehearsal *r)
{
  guint n = diff->changes->len, size = stg_strategy_first_size (s);
  gint64 total = 0;

  for (guint at = 0, index = 0; at < n; index++)
    {
      guint end = MIN (n, at + MAX (size, 1));
      ApiRehearsalBatch *b = batch_new ();
      for (guint i = at; i < end; i++)
        {
          g_array_append_val (b->instances, g_array_index (diff->changes, StgChange, i).instance);
          b->limitMs = MAX (b->limitMs, ms[i]);
        }
      b->atOnce = (gint32) MIN (end - at, cap);
      b->predictedMs = run_lanes (ms + at, end - at, cap) + overhead;
      total += b->predictedMs + (index > 0 ? s->pause_between_ms : 0);
      g_ptr_array_add (r->batches, b);
      at = end;
      size = stg_strategy_next_size (s, index, size, FALSE);
    }
  return total;
}

/* A queue: up to its size at once, the next starting as one finishes;
 * each group of that many finished grows the size. Its groups overlap:
 * they get limits, no time of their own. Returns the predicted time. */
static gint64
run_queue (const StgSettings *s, const StgDiff *diff, const gint64 *ms, guint cap, gint64 overhead,
           ApiUpdateRehearsal *r)
{
  guint n = diff->changes->len, size = MAX (stg_strategy_first_size (s), 1), index = 0;
  g_autoptr (GArray) ends = g_array_new (FALSE, FALSE, sizeof (gint64)); /* running */
  gint64 now = 0, not_before = 0;
  guint next = 0, done = 0;
  ApiRehearsalBatch *b = NULL;

  while (next < n || ends->len > 0)
    {
      while (next < n && ends->len < MIN (size, cap))
        {
          if (b == NULL)
            {
              b = batch_new ();
              b->atOnce = (gint32) MIN (size, cap);
              g_ptr_array_add (r->batches, b);
            }
          heap_push (ends, MAX (now, not_before) + ms[next]);
          g_array_append_val (b->instances,
                              g_array_index (diff->changes, StgChange, next).instance);
          b->limitMs = MAX (b->limitMs, ms[next]);
          next++;
        }
      now = heap_pop (ends);
      if (++done >= size)
        {
          size = MAX (stg_strategy_next_size (s, index++, size, FALSE), 1);
          done = 0;
          not_before = now + s->pause_between_ms;
          b = NULL; /* what starts next is the next group's */
        }
    }
  return now + overhead * (gint64) r->batches->len;
}

static void note (ApiUpdateRehearsal *r, const gchar *format, ...) G_GNUC_PRINTF (2, 3);

static void
note (ApiUpdateRehearsal *r, const gchar *format, ...)
{
  va_list args;

  va_start (args, format);
  g_ptr_array_add (r->notes, g_strdup_vprintf (format, args));
  va_end (args);
}

/* What the prediction leaves out, or what bounds it, in words. */
static void
add_notes (const StgSettings *s, guint cap, ApiUpdateRehearsal *r)
{
  if (s->autopause)
    note (r, "it pauses after each batch until resumed: that wait is not predicted");
  if (s->pulse_ms > 0)
    note (r, "it is coordinated: it moves on only while pulsed (every %.1f s at the latest)",
          (gdouble) s->pulse_ms / 1000.0);
  if (s->gates != NULL && s->gates->len > 0)
    note (r, "batch gates are checked before each batch after the first: their time is not "
             "predicted");
  if ((s->instance_gates[0] != NULL && s->instance_gates[0]->len > 0) ||
      (s->instance_gates[1] != NULL && s->instance_gates[1]->len > 0))
    note (r, "instance gates run before or after each instance: their time is not predicted");
  if (s->sla_aware)
    note (r, "it is SLA-aware: an instance waits for its job's SLA to allow it down");
  if (cap != G_MAXUINT)
    note (r, "minInService %d keeps at most %u instance%s down at once", s->min_in_service, cap,
          cap == 1 ? "" : "s");
  if (s->max_surge > 0)
    note (r, "up to %d extra instance%s run while it does (maxSurge)", s->max_surge,
          s->max_surge == 1 ? "" : "s");
  if (s->pause_between_ms > 0)
    note (r, "it waits %.1f s between batches (counted)", (gdouble) s->pause_between_ms / 1000.0);
}

static const gchar *
strategy_name (const StgSettings *s)
{
  switch (s->kind)
    {
    case STG_STRATEGY_QUEUE:
      return "queue";
    case STG_STRATEGY_VARIABLE:
      return "variable";
    default:
      return "batch";
    }
}

ApiUpdateRehearsal *
stg_rehearsal_build (StgEngine *e, const ApiJobKey *key, const StgSettings *s, const StgDiff *diff)
{
  static const Measured none = { .median_ms = -1 };
  const Measured *found = key != NULL ? find_measured (e, key) : NULL;
  const Measured *m = found != NULL ? found : &none;
  gboolean known = found != NULL;
  guint n = diff->changes->len, cap = floor_cap (s, diff);
  g_autofree gint64 *ms = g_new0 (gint64, MAX (n, 1));
  ApiUpdateRehearsal *r = g_object_new (API_TYPE_UPDATE_REHEARSAL, "strategy", strategy_name (s),
                                        NULL);

  for (guint i = 0; i < n; i++)
    ms[i] = instance_ms (s, m, &g_array_index (diff->changes, StgChange, i));
  gint64 overhead = known ? m->overhead_ms : 0;
  gint64 predicted = s->kind == STG_STRATEGY_QUEUE ? run_queue (s, diff, ms, cap, overhead, r)
                                                   : run_batches (s, diff, ms, cap, overhead, r);
  for (guint i = 0; i < r->batches->len; i++)
    {
      ApiRehearsalBatch *b = r->batches->pdata[i];
      r->limitMs += b->limitMs;
      if (!known || s->kind == STG_STRATEGY_QUEUE)
        b->predictedMs = -1;
    }
  r->predictedMs = known ? predicted : -1;
  if (known)
    {
      r->basis = g_strdup_printf ("start to healthy as measured in update %s (median %.1f s), "
                                  "plus the watch time (%.1f s), plus %.1f s a batch beyond its "
                                  "limits as that update took",
                                  m->uid, (gdouble) m->median_ms / 1000.0,
                                  (gdouble) s->watch_ms / 1000.0,
                                  (gdouble) m->overhead_ms / 1000.0);
      g_object_set (r, "measuredIn", m->uid, NULL);
    }
  else
    r->basis = g_strdup_printf ("no earlier update of the job finished with an instance healthy: "
                                "the limits count only the watch time (%.1f s) and no time is "
                                "predicted",
                                (gdouble) s->watch_ms / 1000.0);
  add_notes (s, cap, r);
  return r;
}
