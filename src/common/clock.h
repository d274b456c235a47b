/* clock.h: the clock seam: what time it is, and timers.
 *
 * The engine and the runtime never read the time or add a GSource
 * themselves: they go through a StgClock. The real clock reads wall time in
 * ms since the epoch (what is stored and shown) and runs timers on the
 * thread-default GMainContext it was created on. The fake clock stands
 * still until a test advances it, firing due timers in time order.
 * Main-loop thread only.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _StgClock StgClock;
typedef void (*StgTimerFunc) (gpointer user_data);

StgClock *stg_clock_new_real (void);
StgClock *stg_clock_new_fake (gint64 start_ms);
void stg_clock_free (StgClock *clock);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgClock, stg_clock_free)

gint64 stg_clock_now_ms (StgClock *clock);

/* Calls @func once, @delay_ms from now (0 or less: on the next iteration,
 * never from inside this call). Returns a non-zero id. */
guint stg_clock_add_timer (StgClock *clock, gint64 delay_ms, StgTimerFunc func, gpointer user_data);

/* Cancels a timer that has not fired; 0 and spent ids are ignored. */
void stg_clock_cancel_timer (StgClock *clock, guint id);

/* Fake clock only: moves time forward by @ms, firing timers as they fall
 * due (each sees the clock at its own due time). */
void stg_clock_advance (StgClock *clock, gint64 ms);

/* Fake clock only: number of timers waiting. */
guint stg_clock_pending (StgClock *clock);

G_END_DECLS
