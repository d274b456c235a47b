/* metrics.h: what /metrics reports, in Prometheus's text format (see
 * metrics.c). Main-loop thread only. */
#pragma once

#include "engine/engine.h"
#include "runtime/health.h"
#include "senders/notify.h"
#include "store/store.h"

G_BEGIN_DECLS

typedef struct _StgMetrics StgMetrics;

StgMetrics *stg_metrics_new (void);
void stg_metrics_free (StgMetrics *metrics);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgMetrics, stg_metrics_free)

/* Counts one Thrift call of @method (a known method's name) that took
 * @seconds to answer. */
void stg_metrics_rpc (StgMetrics *metrics, const gchar *method, gdouble seconds);

/* The whole exposition (text format 0.0.4): the counted calls, and what
 * @store, @engine (nullable), @health and @notify (nullable: none
 * counted) say now; NULL with @error when the store cannot be read. */
gchar *stg_metrics_render (StgMetrics *metrics, StgStore *store, StgEngine *engine,
                           const StgHealthCounts *health, const StgNotifyCounts *notify,
                           GError **error);

G_END_DECLS
