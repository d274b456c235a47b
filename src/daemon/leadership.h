/* leadership.h: StgLeadership: when the store is PostgreSQL, keeps trying
 * to lead (follower) or keeps proving it still leads (leader), on a timer
 * of a quarter of the lease. Calls the store only; main-loop thread only.
 */
#pragma once

#include "store/store.h"

G_BEGIN_DECLS

typedef struct _StgLeadership StgLeadership;
typedef void (*StgLeadershipFunc) (gpointer data);

/* Starts the timer. A leader forgets the replicas not seen for
 * @forget_ms, saying so in the log. @on_lead runs once this replica
 * becomes the leader
 * (from an idle callback: the tick goes on meanwhile);
 * @on_lost once it stops being one (the database connection failed or
 * another replica fenced it). Neither runs from inside this call. */
StgLeadership *stg_leadership_new (StgStore *store, const gchar *holder, const gchar *url,
                                   guint lease_ms, gint64 forget_ms, StgLeadershipFunc on_lead,
                                   StgLeadershipFunc on_lost, gpointer data);
void stg_leadership_free (StgLeadership *leadership);

/* One attempt to lead, now; TRUE when leading (then @on_lead is not
 * called for it). */
gboolean stg_leadership_try (StgLeadership *leadership);

gboolean stg_leadership_leading (StgLeadership *leadership);

G_END_DECLS
