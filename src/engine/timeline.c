/* timeline.c: an update's timeline (timeline.h), built from its instance
 * events, its job's task events and its status events: the works (one
 * instance's work in one direction, split into phases), the batches they
 * make with each one's physical limit and what held it, and the holds
 * (pauses, pulses awaited). Reads the store. Main-loop thread only.
 */
#include "config.h"

#include "common/enums.h"
#include "engine/engine_private.h"
#include "engine/timeline.h"
#include "engine/update_private.h"

#define A(x) API_JOB_UPDATE_ACTION_INSTANCE_##x
#define S(x) API_SCHEDULE_STATUS_##x

static const gchar *const PHASE_NAMES[] = {
  "waiting", "pending", "stopping", "stopped",        "starting",
  "healthy", "failed",  "paused",   "awaiting_pulse",
};

const gchar *
stg_timeline_phase_name (gint phase)
{
  return phase >= 0 && phase < (gint) G_N_ELEMENTS (PHASE_NAMES) ? PHASE_NAMES[phase] : "unknown";
}

const gchar *
stg_timeline_outcome (const StgTimelineWork *w)
{
  switch (w->outcome)
    {
    case A (UPDATED):
      return "updated";
    case A (ROLLED_BACK):
      return "rolled_back";
    case A (UPDATE_FAILED):
      return "update_failed";
    case A (ROLLBACK_FAILED):
      return "rollback_failed";
    default:
      return w->cut_short ? "cut_short" : NULL;
    }
}

void
stg_timeline_free (StgTimeline *t)
{
  if (t == NULL)
    return;
  for (guint i = 0; i < t->works->len; i++)
    g_array_unref (g_array_index (t->works, StgTimelineWork, i).spans);
  for (guint i = 0; i < t->batches->len; i++)
    {
      StgTimelineBatch *b = &g_array_index (t->batches, StgTimelineBatch, i);
      g_free (b->gap_why);
      g_free (b->held_by);
    }
  g_array_unref (t->works);
  g_array_unref (t->batches);
  g_array_unref (t->holds);
  g_free (t);
}

/* ---- works -------------------------------------------------------------------------- */

/* The phase a task status begins. */
static gint
phase_of (gint status)
{
  switch (status)
    {
    case S (STARTING):
      return STG_TIMELINE_STARTING;
    case S (RUNNING):
      return STG_TIMELINE_HEALTHY;
    case S (KILLING):
    case S (RESTARTING):
    case S (DRAINING):
    case S (PREEMPTING):
      return STG_TIMELINE_STOPPING;
    case S (KILLED):
    case S (FINISHED):
    case S (LOST):
      return STG_TIMELINE_STOPPED;
    case S (FAILED):
      return STG_TIMELINE_FAILED;
    default:
      return STG_TIMELINE_PENDING;
    }
}

static gboolean
ends_work (gint action)
{
  return action == A (UPDATED) || action == A (ROLLED_BACK) || action == A (UPDATE_FAILED) ||
         action == A (ROLLBACK_FAILED);
}

/* The works the instance events make: a work begins at its instance's
 * first UPDATING (or ROLLING_BACK) and ends at the action that ends it;
 * a later UPDATING of the same work is an instance gate's word. A work the
 * other direction begins on cuts short the one still open. */
static GArray *
make_works (const StgTimelineInput *in)
{
  GArray *works = g_array_new (FALSE, TRUE, sizeof (StgTimelineWork));
  g_autoptr (GHashTable) open = g_hash_table_new (NULL, NULL); /* instance -> index + 1 */

  for (guint i = 0; in->instance_events != NULL && i < in->instance_events->len; i++)
    {
      const StgTimelineEvent *ev = &g_array_index (in->instance_events, StgTimelineEvent, i);
      gpointer key = GINT_TO_POINTER (ev->instance);
      guint at = GPOINTER_TO_UINT (g_hash_table_lookup (open, key));
      StgTimelineWork *w = at > 0 ? &g_array_index (works, StgTimelineWork, at - 1) : NULL;

      if (ends_work (ev->code))
        {
          if (w != NULL)
            {
              w->outcome = ev->code;
              w->to_ms = ev->ts_ms;
              g_hash_table_remove (open, key);
            }
          continue;
        }
      gboolean back = ev->code == A (ROLLING_BACK);
      if (w != NULL && w->back == back)
        continue;
      if (w != NULL)
        w->to_ms = ev->ts_ms, w->cut_short = TRUE;
      StgTimelineWork fresh = {
        .instance = ev->instance,
        .back = back,
        .batch = ev->batch,
        .from_ms = ev->ts_ms,
        .to_ms = -1,
        .healthy_ms = -1,
      };
      g_array_append_val (works, fresh);
      g_hash_table_insert (open, key, GUINT_TO_POINTER (works->len));
    }
  for (guint i = 0; i < works->len; i++)
    {
      StgTimelineWork *w = &g_array_index (works, StgTimelineWork, i);
      if (w->to_ms < 0)
        {
          w->to_ms = MAX (in->to_ms, w->from_ms);
          w->cut_short = !in->active;
        }
    }
  return works;
}

static void
add_span (GArray *spans, gint phase, gint64 from, gint64 to)
{
  StgTimelineSpan *last = spans->len > 0 ? &g_array_index (spans, StgTimelineSpan, spans->len - 1)
                                         : NULL;

  if (to <= from)
    return;
  if (last != NULL && last->phase == phase && last->to_ms == from)
    {
      last->to_ms = to;
      return;
    }
  StgTimelineSpan s = { phase, from, to };
  g_array_append_val (spans, s);
}

/* Work @w's phases from its instance's task events (@mine: indices into
 * @tasks, in order) from @since (the update's begin): waiting until the
 * first of them (or the phase an event since the update began left it
 * in: a rollback takes over a run still starting), then each event's
 * phase until the next. Its time to healthy runs from the start that
 * became healthy (the last one before it). */
static void
split_work (StgTimelineWork *w, const GArray *tasks, const GArray *mine, gint64 since)
{
  gint phase = STG_TIMELINE_WAITING;
  gint64 at = w->from_ms, started = -1;

  w->spans = g_array_new (FALSE, FALSE, sizeof (StgTimelineSpan));
  for (guint i = 0; mine != NULL && i < mine->len; i++)
    {
      const StgTimelineEvent *ev = &g_array_index (tasks, StgTimelineEvent,
                                                   g_array_index (mine, guint, i));
      gint next = phase_of (ev->code);
      if (ev->ts_ms > w->to_ms)
        break;
      if (ev->ts_ms < w->from_ms && ev->ts_ms < since)
        continue;
      if (next == STG_TIMELINE_STARTING && phase != STG_TIMELINE_STARTING)
        started = ev->ts_ms;
      if (ev->ts_ms >= w->from_ms)
        {
          if (next == STG_TIMELINE_HEALTHY && phase != STG_TIMELINE_HEALTHY && started >= 0 &&
              w->healthy_ms < 0)
            w->healthy_ms = ev->ts_ms - started;
          add_span (w->spans, phase, at, ev->ts_ms);
          at = ev->ts_ms;
        }
      phase = next;
    }
  add_span (w->spans, phase, at, w->to_ms);
}

static gint
work_cmp (gconstpointer a, gconstpointer b)
{
  const StgTimelineWork *x = a, *y = b;

  if (x->instance != y->instance)
    return x->instance < y->instance ? -1 : 1;
  return x->from_ms < y->from_ms ? -1 : x->from_ms > y->from_ms;
}

/* ---- holds -------------------------------------------------------------------------- */

static gint
hold_of (gint status)
{
  switch (status)
    {
    case API_JOB_UPDATE_STATUS_ROLL_FORWARD_PAUSED:
    case API_JOB_UPDATE_STATUS_ROLL_BACK_PAUSED:
      return STG_TIMELINE_PAUSED;
    case API_JOB_UPDATE_STATUS_ROLL_FORWARD_AWAITING_PULSE:
    case API_JOB_UPDATE_STATUS_ROLL_BACK_AWAITING_PULSE:
      return STG_TIMELINE_AWAITING_PULSE;
    default:
      return -1;
    }
}

/* The update's pauses and awaited pulses, from its status events. */
static GArray *
make_holds (const StgTimelineInput *in)
{
  GArray *holds = g_array_new (FALSE, FALSE, sizeof (StgTimelineSpan));
  gint phase = -1;
  gint64 since = 0;

  for (guint i = 0; in->update_events != NULL && i < in->update_events->len; i++)
    {
      ApiJobUpdateEvent *ev = in->update_events->pdata[i];
      gint next = hold_of (ev->status);
      if (next == phase)
        continue;
      if (phase >= 0)
        add_span (holds, phase, since, ev->timestampMs);
      phase = next;
      since = ev->timestampMs;
    }
  if (phase >= 0)
    add_span (holds, phase, since, MAX (in->to_ms, since));
  return holds;
}

/* How much of [@from, @to) the holds of @phase (-1: any) cover. */
static gint64
held (const GArray *holds, gint phase, gint64 from, gint64 to)
{
  gint64 sum = 0;

  for (guint i = 0; i < holds->len; i++)
    {
      const StgTimelineSpan *h = &g_array_index (holds, StgTimelineSpan, i);
      if (phase < 0 || h->phase == phase)
        sum += MAX (0, MIN (to, h->to_ms) - MAX (from, h->from_ms));
    }
  return sum;
}

/* ---- batches ------------------------------------------------------------------------ */

static gint
batch_cmp (gconstpointer a, gconstpointer b)
{
  const StgTimelineBatch *x = a, *y = b;

  return x->from_ms < y->from_ms ? -1 : x->from_ms > y->from_ms;
}

/* "a pause" or "awaited pulses" when holds cover at least half of
 * [@from, @to), else NULL. */
static gchar *
held_mostly (const GArray *holds, gint64 from, gint64 to)
{
  gint64 paused = held (holds, STG_TIMELINE_PAUSED, from, to);
  gint64 pulse = held (holds, STG_TIMELINE_AWAITING_PULSE, from, to);

  if ((paused + pulse) * 2 < to - from || to <= from)
    return NULL;
  return g_strdup (paused >= pulse ? "a pause" : "awaited pulses");
}

/* What batch @b waited for last: its work that ended last, by that
 * work's longest phase, after the holds that kept that work from
 * beginning sooner (a pause lets the works under way go on). */
static gchar *
held_by (const StgTimeline *t, const StgTimelineBatch *b, const StgTimelineWork *last)
{
  g_autofree gchar *hold = held_mostly (t->holds, b->from_ms, last->from_ms);
  const StgTimelineSpan *longest = NULL;
  g_autofree gchar *work = NULL;

  for (guint i = 0; i < last->spans->len; i++)
    {
      const StgTimelineSpan *s = &g_array_index (last->spans, StgTimelineSpan, i);
      if (longest == NULL || s->to_ms - s->from_ms > longest->to_ms - longest->from_ms)
        longest = s;
    }
  if (longest == NULL)
    work = g_strdup_printf ("instance %d", last->instance);
  else
    work = g_strdup_printf ("instance %d (%s %.1f s)", last->instance,
                            stg_timeline_phase_name (longest->phase),
                            (gdouble) (longest->to_ms - longest->from_ms) / 1000.0);
  if (hold == NULL)
    return g_steal_pointer (&work);
  return g_strdup_printf ("%s (%.1f s), then %s", hold,
                          (gdouble) held (t->holds, -1, b->from_ms, last->from_ms) / 1000.0, work);
}

/* What the time before a batch waited for: holds, batch gates (their
 * status events name them), or nothing in particular (NULL). */
static gchar *
gap_why (const StgTimelineInput *in, const GArray *holds, gint64 from, gint64 to)
{
  gchar *hold = held_mostly (holds, from, to);

  if (hold != NULL)
    return hold;
  for (guint i = 0; in->update_events != NULL && i < in->update_events->len; i++)
    {
      ApiJobUpdateEvent *ev = in->update_events->pdata[i];
      if (ev->timestampMs >= from && ev->timestampMs <= to && ev->__isset_message &&
          ev->message != NULL && g_str_has_prefix (ev->message, "gate '"))
        return g_strdup ("batch gates");
    }
  return NULL;
}

/* The batches the works make, by (direction, batch), in order of begin. */
static void
make_batches (StgTimeline *t, const StgTimelineInput *in)
{
  g_autoptr (GHashTable) index = g_hash_table_new (NULL, NULL); /* key -> position + 1 */
  g_autoptr (GPtrArray) lasts = g_ptr_array_new ();             /* the work ending last */

  for (guint i = 0; i < t->works->len; i++)
    {
      StgTimelineWork *w = &g_array_index (t->works, StgTimelineWork, i);
      gpointer key = GINT_TO_POINTER ((w->batch + 1) * 2 + (w->back ? 1 : 0));
      guint at = GPOINTER_TO_UINT (g_hash_table_lookup (index, key));
      if (at == 0)
        {
          StgTimelineBatch fresh = { .back = w->back,
                                     .batch = w->batch,
                                     .from_ms = w->from_ms,
                                     .to_ms = w->to_ms,
                                     .slowest = -1,
                                     .slowest_ms = -1 };
          g_array_append_val (t->batches, fresh);
          g_ptr_array_add (lasts, w);
          at = t->batches->len;
          g_hash_table_insert (index, key, GUINT_TO_POINTER (at));
        }
      StgTimelineBatch *b = &g_array_index (t->batches, StgTimelineBatch, at - 1);
      b->works++;
      b->from_ms = MIN (b->from_ms, w->from_ms);
      if (w->to_ms >= b->to_ms)
        b->to_ms = w->to_ms, lasts->pdata[at - 1] = w;
      if (w->healthy_ms > b->slowest_ms)
        b->slowest_ms = w->healthy_ms, b->slowest = w->instance;
    }
  for (guint i = 0; i < t->batches->len; i++)
    {
      StgTimelineBatch *b = &g_array_index (t->batches, StgTimelineBatch, i);
      b->limit_ms = b->slowest_ms >= 0 ? b->slowest_ms + in->watch_ms : 0;
      b->held_ms = held (t->holds, -1, b->from_ms, b->to_ms);
      b->held_by = held_by (t, b, lasts->pdata[i]);
    }
  g_array_sort (t->batches, batch_cmp);
  gint64 prev = t->from_ms;
  for (guint i = 0; i < t->batches->len; i++)
    {
      StgTimelineBatch *b = &g_array_index (t->batches, StgTimelineBatch, i);
      b->gap_ms = MAX (0, b->from_ms - prev);
      b->gap_why = gap_why (in, t->holds, prev, b->from_ms);
      prev = MAX (prev, b->to_ms);
      t->limit_ms += b->limit_ms;
    }
}

StgTimeline *
stg_timeline_build (const StgTimelineInput *in)
{
  StgTimeline *t = g_new0 (StgTimeline, 1);
  g_autoptr (GHashTable) by_instance = g_hash_table_new_full (NULL, NULL, NULL,
                                                              (GDestroyNotify) g_array_unref);

  t->predicted_ms = -1;
  t->from_ms = in->from_ms;
  t->to_ms = MAX (in->to_ms, in->from_ms);
  t->active = in->active;
  t->watch_ms = in->watch_ms;
  t->works = make_works (in);
  t->batches = g_array_new (FALSE, TRUE, sizeof (StgTimelineBatch));
  t->holds = make_holds (in);
  for (guint i = 0; in->task_events != NULL && i < in->task_events->len; i++)
    {
      gpointer key = GINT_TO_POINTER (
          g_array_index (in->task_events, StgTimelineEvent, i).instance);
      GArray *mine = g_hash_table_lookup (by_instance, key);
      if (mine == NULL)
        g_hash_table_insert (by_instance, key, mine = g_array_new (FALSE, FALSE, sizeof (guint)));
      g_array_append_val (mine, i);
    }
  for (guint i = 0; i < t->works->len; i++)
    {
      StgTimelineWork *w = &g_array_index (t->works, StgTimelineWork, i);
      split_work (w, in->task_events,
                  g_hash_table_lookup (by_instance, GINT_TO_POINTER (w->instance)), in->from_ms);
    }
  make_batches (t, in);
  g_array_sort (t->works, work_cmp);
  return t;
}

/* ---- from the store ------------------------------------------------------------------ */

StgTimeline *
stg_engine_update_timeline (StgEngine *e, const gchar *uid, GError **error)
{
  g_autoptr (StgUpdateRow) row = stg_store_get_update (e->store, uid, error);
  g_autoptr (ApiJobUpdateInstructions) ins = row ? stg_store_get_update_instructions (e->store,
                                                                                      row->id,
                                                                                      error)
                                                 : NULL;
  g_autoptr (GPtrArray) updates = ins ? stg_store_list_update_events (e->store, row->id, error)
                                      : NULL;
  g_autoptr (GArray) instances = updates
                                     ? stg_store_timeline_instance_events (e->store, row->id, error)
                                     : NULL;
  g_autoptr (GError) missing = NULL;

  if (instances == NULL)
    {
      stg_engine_wrap_error (error);
      return NULL;
    }
  gboolean active = stg_update_status_is_active (row->status);
  gint64 to = active ? stg_clock_now_ms (e->clock) : row->modified_ms;
  /* A job killed since has no task events left: the works stay whole. */
  g_autoptr (StgJobRow) job = stg_store_get_job (e->store, row->job, &missing);
  g_autoptr (GArray) tasks = NULL;
  if (job == NULL && !g_error_matches (missing, STG_STORE_ERROR, STG_STORE_ERROR_NOT_FOUND))
    g_propagate_error (error, g_steal_pointer (&missing));
  else if (job != NULL)
    tasks = stg_store_timeline_task_events (e->store, job->id, row->created_ms, to, error);
  if (job != NULL ? tasks == NULL : missing == NULL)
    {
      stg_engine_wrap_error (error);
      return NULL;
    }
  StgTimelineInput in = {
    .instance_events = instances,
    .task_events = tasks,
    .update_events = updates,
    .from_ms = row->created_ms,
    .to_ms = to,
    .active = active,
    .watch_ms = ins->settings->minWaitInInstanceRunningMs,
  };
  StgTimeline *t = stg_timeline_build (&in);
  StgUpdate *u = g_hash_table_lookup (e->updates, uid);
  t->predicted_ms = u != NULL ? u->predicted_ms : stg_update_progress_predicted (row->progress);
  return t;
}
