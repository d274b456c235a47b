/* webhook_receiver.h: a webhook receiver for the suites that start a real
 * staggerd (plan_daemon_test, notify_daemon_test): a separate process
 * (Python's http.server) on a free loopback port that answers as the test
 * says (up, down, or failing its first request) and writes down every
 * request it took; and the webhooks' counts a staggerd shows in /metrics.
 * Test processes only.
 */
#pragma once

#include "testutil.h"

G_BEGIN_DECLS

typedef struct
{
  GSubprocess *process;
  gchar *log;     /* the requests it took (2xx), one JSON object a line */
  gchar *control; /* what it does now: "up", "down" or "once" */
  guint16 port;
} StgTestReceiver;

/* Starts a receiver keeping its files in @dir, doing @mode: "up" (answers
 * 204), "down" (answers 503, takes nothing) or "once" (answers its next
 * request 500, then is up). */
StgTestReceiver *stg_test_receiver_start (const gchar *dir, const gchar *mode);

/* Tells it to do @mode from its next request on. */
void stg_test_receiver_set (StgTestReceiver *receiver, const gchar *mode);

/* The requests it took, in order, each a JSON object: event, delivery and
 * signature (the X-Stagger-* headers) and body (the text). */
gchar **stg_test_receiver_lines (StgTestReceiver *receiver);

/* Waits (@seconds at most) until it took @count requests or more; returns
 * them. */
gchar **stg_test_receiver_wait (StgTestReceiver *receiver, guint count, gint seconds);

/* The notices of @lines (requests a receiver took), each checked: signed
 * with @secret, its seq greater than the one before it, its delivery id
 * (X-Stagger-Delivery, and delivery_id in the body) a UUID no other has,
 * X-Stagger-Event its KIND.STATUS. Returns their bodies (JsonNode*,
 * objects), in order. */
GPtrArray *stg_test_receiver_notices (gchar **lines, const gchar *secret);

/* The requests it answered 503 while down. */
guint stg_test_receiver_refused (StgTestReceiver *receiver);

void stg_test_receiver_free (StgTestReceiver *receiver);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgTestReceiver, stg_test_receiver_free)

/* The value of stagger_notify_total{outcome="@outcome"} in @d's /metrics,
 * or of stagger_notify_queued when @outcome is NULL. */
gint64 stg_test_notify_count (StgTestDaemon *d, const gchar *outcome);

G_END_DECLS
