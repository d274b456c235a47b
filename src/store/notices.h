/* notices.h: webhook notices not yet delivered (schema/018_notices.sql),
 * kept so that a restart or a new leader sends them: one row per webhook
 * and notice, numbered from a counter that only grows. Written by the
 * notifier (runtime/notify.c) inside the transaction that records the
 * change; deleted once the webhook is done with it. Main-loop thread only.
 */
#pragma once

#include "store/store.h"

G_BEGIN_DECLS

/* A notice waiting for one webhook. */
typedef struct
{
  gchar *webhook;     /* the [notify NAME] group's NAME; "" for [notify] */
  gint64 seq;         /* the notice's number (stg_store_next_notice_seq) */
  gchar *delivery_id; /* the notice's UUID */
  gchar *event;       /* KIND.STATUS */
  gchar *body;        /* the JSON POSTed */
} StgNoticeRow;

/* The next notice number: one more than the larger of the last one given
 * and @after (the caller's own last), recorded as the last. Inside the
 * caller's transaction, so a rolled back one is given again. */
gboolean stg_store_next_notice_seq (StgStore *store, gint64 after, gint64 *seq, GError **error);

/* Adds @row, then deletes its webhook's rows older than its newest @keep
 * (the oldest are given up first). */
gboolean stg_store_add_notice (StgStore *store, const StgNoticeRow *row, gint keep, GError **error);

/* Deletes notice @seq of @webhook (no error when it is gone already). */
gboolean stg_store_delete_notice (StgStore *store, const gchar *webhook, gint64 seq,
                                  GError **error);

/* Every waiting notice (StgNoticeRow*, owning its strings), by webhook,
 * then oldest first. */
GPtrArray *stg_store_list_notices (StgStore *store, GError **error);

G_END_DECLS
