/* webui.h: the web UI: its pages, its JSON data and its live change feed.
 *
 * StgWebUi registers routes on the HTTP server: "/" (the page, or an HTML
 * 404 for unknown paths), "/static/..." (CSS and JavaScript, embedded with
 * GResource or read from --webui-dir), "/ui/api/..." (JSON data) and
 * "/ui/api/events" (Server-Sent Events announcing changes, so pages update
 * in place). GET never changes anything. With auth on, the UI takes HTTP
 * Basic credentials ("/ui/login" asks the browser for them): reads need
 * them only with read_requires_auth, the update and plan controls always,
 * and a user acts only on jobs of its roles. Main-loop thread only.
 */
#pragma once

#include "api/metrics.h"

#include "api/auth.h"
#include "api/http_server.h"
#include "engine/engine.h"
#include "store/store.h"

G_BEGIN_DECLS

typedef struct _StgWebUi StgWebUi;

typedef struct
{
  StgStore *store;           /* borrowed */
  StgEngine *engine;         /* borrowed */
  StgClock *clock;           /* borrowed */
  const gchar *cluster;
  const gchar *assets_dir;   /* (nullable) serve assets from here instead of the binary */
  StgAuth *auth;             /* (nullable) borrowed: who may look and act */
  StgMetrics *metrics;       /* (nullable) borrowed: serve /metrics from it */
  const StgHealthCounts *health_counts; /* (nullable) borrowed: for /metrics */
  const StgNotifyCounts *notify_counts; /* (nullable) borrowed: for /metrics */
  gchar *(*more_metrics) (gpointer data); /* (nullable) more /metrics lines, a new string */
  gpointer more_metrics_data;
} StgWebUiContext;

/* Adds the UI's routes to @http. */
StgWebUi *stg_webui_new (StgHttpServer *http, const StgWebUiContext *context);
void stg_webui_free (StgWebUi *ui);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgWebUi, stg_webui_free)

G_END_DECLS
