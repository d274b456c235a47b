/* clock.c: real and fake StgClock.
 *
 * Real: g_get_real_time() and g_timeout_add_full() on the default context.
 * Fake: a time value and a list of timers ordered by (due, id); advancing
 * fires them in that order. Main-loop thread only.
 */
#include "config.h"

#include "common/clock.h"

typedef struct
{
  guint id;
  gint64 due;
  StgTimerFunc func;
  gpointer data;
} FakeTimer;

struct _StgClock
{
  gboolean fake;
  gint64 now;               /* fake only */
  guint next_id;            /* fake only */
  GList *timers;            /* fake only: FakeTimer*, sorted by (due, id) */
  GHashTable *sources;      /* real only: id -> RealTimer* */
};

typedef struct
{
  StgClock *clock;
  guint id;
  StgTimerFunc func;
  gpointer data;
} RealTimer;

StgClock *
stg_clock_new_real (void)
{
  StgClock *clock = g_new0 (StgClock, 1);
  clock->sources = g_hash_table_new (NULL, NULL);
  return clock;
}

StgClock *
stg_clock_new_fake (gint64 start_ms)
{
  StgClock *clock = g_new0 (StgClock, 1);
  clock->fake = TRUE;
  clock->now = start_ms;
  clock->next_id = 1;
  return clock;
}

static gboolean
remove_source (gpointer key, gpointer value, gpointer user_data)
{
  (void) value;
  (void) user_data;
  g_source_remove (GPOINTER_TO_UINT (key));
  return TRUE;
}

void
stg_clock_free (StgClock *clock)
{
  if (clock == NULL)
    return;
  if (clock->fake)
    g_list_free_full (clock->timers, g_free);
  else
    {
      g_hash_table_foreach_remove (clock->sources, remove_source, NULL);
      g_hash_table_unref (clock->sources);
    }
  g_free (clock);
}

gint64
stg_clock_now_ms (StgClock *clock)
{
  if (clock->fake)
    return clock->now;
  return g_get_real_time () / 1000;
}

static gboolean
real_fire (gpointer user_data)
{
  RealTimer *t = user_data;

  g_hash_table_remove (t->clock->sources, GUINT_TO_POINTER (t->id));
  t->func (t->data);
  return G_SOURCE_REMOVE;
}

static gint
compare_timer (gconstpointer a, gconstpointer b)
{
  const FakeTimer *x = a;
  const FakeTimer *y = b;
  if (x->due != y->due)
    return x->due < y->due ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

guint
stg_clock_add_timer (StgClock *clock, gint64 delay_ms, StgTimerFunc func, gpointer user_data)
{
  g_return_val_if_fail (func != NULL, 0);

  if (delay_ms < 0)
    delay_ms = 0;
  if (clock->fake)
    {
      FakeTimer *t = g_new0 (FakeTimer, 1);
      t->id = clock->next_id++;
      t->due = clock->now + delay_ms;
      t->func = func;
      t->data = user_data;
      clock->timers = g_list_insert_sorted (clock->timers, t, compare_timer);
      return t->id;
    }

  RealTimer *t = g_new0 (RealTimer, 1);
  t->clock = clock;
  t->func = func;
  t->data = user_data;
  t->id = g_timeout_add_full (G_PRIORITY_DEFAULT, (guint) MIN (delay_ms, (gint64) G_MAXUINT),
                              real_fire, t, g_free);
  g_hash_table_add (clock->sources, GUINT_TO_POINTER (t->id));
  return t->id;
}

void
stg_clock_cancel_timer (StgClock *clock, guint id)
{
  if (id == 0)
    return;
  if (clock->fake)
    {
      for (GList *l = clock->timers; l != NULL; l = l->next)
        {
          FakeTimer *t = l->data;
          if (t->id == id)
            {
              clock->timers = g_list_delete_link (clock->timers, l);
              g_free (t);
              return;
            }
        }
      return;
    }
  if (g_hash_table_remove (clock->sources, GUINT_TO_POINTER (id)))
    g_source_remove (id);
}

static void
fire_until (StgClock *clock, gint64 until)
{
  while (clock->timers != NULL)
    {
      FakeTimer *t = clock->timers->data;
      if (t->due > until)
        break;
      clock->timers = g_list_delete_link (clock->timers, clock->timers);
      if (t->due > clock->now)
        clock->now = t->due;
      t->func (t->data);
      g_free (t);
    }
}

void
stg_clock_advance (StgClock *clock, gint64 ms)
{
  g_return_if_fail (clock->fake);
  g_return_if_fail (ms >= 0);

  gint64 until = clock->now + ms;
  fire_until (clock, until);
  clock->now = until;
}

guint
stg_clock_pending (StgClock *clock)
{
  g_return_val_if_fail (clock->fake, 0);
  return g_list_length (clock->timers);
}
