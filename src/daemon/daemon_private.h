/* daemon_private.h: the StgDaemon struct and what daemon.c and cluster.c
 * share. Not for use outside src/daemon/. Main-loop thread only.
 */
#pragma once

#include "api/dispatch.h"
#include "api/http_api.h"
#include "api/handler.h"
#include "api/http_server.h"
#include "api/tcp_server.h"
#include "webui/webui.h"
#include "daemon/daemon.h"
#include "daemon/leadership.h"
#include "engine/engine.h"
#include "store/store.h"
#include "zk/zk.h"

struct _StgDaemon
{
  StgDaemonSettings settings; /* copies of the strings */
  StgStore *store;
  StgClock *clock;
  StgRuntime *runtime;
  StgEngine *engine;
  StgGateRunner *gates; /* rollout gates: HTTP and shell */
  StgNotifier *notifier; /* [notify] webhooks */
  StgTiers *tiers;      /* the tiers TaskConfig.tier names (--tier-config, or Aurora's) */
  StgHandler *handler;
  StgDispatch *dispatch; /* the leader's; a follower's only refuses */
  StgAuth *auth;
  StgHttpApi *api;
  StgTcpServer *tcp;
  StgHttpServer *http;
  StgWebUi *webui;
  StgLeadership *leadership; /* PostgreSQL only */
  gchar *holder;             /* host:pid, as recorded when leading */
  gint64 started_ms;
  StgBodyBudget budget; /* what unfinished requests hold, on both ports */
  StgHealthCounts health_counts; /* the runtime's health checks, for /metrics */
  StgNotifyCounts notify_counts; /* the webhooks' deliveries, for /metrics */
  guint prune_id;       /* the retention timer */
  StgBackups *backups;  /* the store's backups and recovery */
  guint backup_id;      /* the backup timer (SQLite, [backup] interval_secs) */
  guint restart_id;     /* a committed recovery's restart */
  StgServerSet *zk_leader; /* (nullable) this leader's member of [zookeeper] scheduler_path */
};

/* GET /health: "ok" (one replica), "leader" or "follower". */
void stg_daemon_route_health (StgHttpRequest *request, StgHttpResponse *response, gpointer daemon);

/* GET /leader: who leads, as JSON. */
void stg_daemon_route_leader (StgHttpRequest *request, StgHttpResponse *response, gpointer daemon);

/* GET /cluster: the store, who leads and every replica, as JSON. */
void stg_daemon_route_cluster (StgHttpRequest *request, StgHttpResponse *response, gpointer daemon);

/* A follower's answer to every other path: a redirect to the leader. */
void stg_daemon_route_follower (StgHttpRequest *request, StgHttpResponse *response,
                                gpointer daemon);

/* Why a follower refuses Thrift calls on its TCP port (a new string). */
gchar *stg_daemon_follower_why (gpointer daemon);
