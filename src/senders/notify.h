/* notify.h: the notification seam: news of updates, rollout plans and
 * their stages changing state, and the webhooks that carry it.
 *
 * The engine hands each state change to a StgNotifier, in order, inside
 * the transaction that records it (post), then says whether that
 * transaction committed (end): only committed notices are sent. post
 * never blocks on a webhook and copies what it keeps. The real notifier
 * (notify.c) keeps each notice in the store beside the change (so those
 * not yet delivered when staggerd stops are sent after it starts again,
 * or by the next leader) and sends it to the webhooks of the config
 * file's [notify] groups whose events it matches, as a JSON body POSTed
 * with a delivery id and an optional HMAC-SHA-256 signature, from a
 * bounded queue per webhook with retries and back-off, to hosts the
 * StgHostPolicy allows. Tests use a recording notifier. Main-loop thread
 * only.
 */
#pragma once

#include <gio/gio.h>

#include "common/host_policy.h"
#include "common/thrift_glue.h"
#include "store/store.h"

G_BEGIN_DECLS

/* One state change. Strings are borrowed for the call. */
typedef struct
{
  const gchar *event;    /* "update", "plan" or "stage" */
  const gchar *status;   /* the status it moved to (JobUpdateStatus or RolloutStatus name) */
  const gchar *previous; /* (nullable) the one it left; NULL for a new one */
  const gchar *reason;   /* a reason code (stagger(1), CONDITIONS) */
  const gchar *message;  /* (nullable) why, in words */
  const gchar *user;     /* (nullable) who asked, when someone did */
  gint64 timestamp_ms;
  const ApiJobKey *job;   /* (nullable) the update's or the stage's job */
  const gchar *update_id; /* (nullable) */
  const gchar *plan_id;   /* (nullable) the plan, for "plan" and "stage" */
  const gchar *plan_name; /* (nullable) */
  const gchar *stage;     /* (nullable) the stage, for "stage" */
} StgNotice;

typedef struct _StgNotifier StgNotifier;

typedef struct
{
  /* @notice is being recorded, inside the store's open transaction. */
  void (*post) (StgNotifier *notifier, const StgNotice *notice);
  /* (nullable) The transaction of the notices posted since the last
   * call ended: @committed, they are sent; otherwise forgotten. */
  void (*end) (StgNotifier *notifier, gboolean committed);
  void (*free) (StgNotifier *notifier);
} StgNotifierOps;

/* Every notifier starts with this header. */
struct _StgNotifier
{
  const StgNotifierOps *ops;
};

static inline void
stg_notifier_post (StgNotifier *notifier, const StgNotice *notice)
{
  notifier->ops->post (notifier, notice);
}

static inline void
stg_notifier_end (StgNotifier *notifier, gboolean committed)
{
  if (notifier->ops->end != NULL)
    notifier->ops->end (notifier, committed);
}

void stg_notifier_free (StgNotifier *notifier);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgNotifier, stg_notifier_free)

/* One webhook of the config file: [notify] or [notify NAME]. */
typedef struct
{
  gchar *name;    /* "" for [notify] */
  gchar *url;     /* http:// or https:// */
  gchar *secret;  /* (nullable) signs each body (X-Stagger-Signature-256) */
  gchar **events; /* (nullable: all) "update", "plan", "stage", or KIND.STATUS */
} StgWebhook;

/* The webhooks and how they are served. */
typedef struct
{
  GPtrArray *webhooks; /* StgWebhook* */
  gint queue_size;     /* notices waiting per webhook; past it the oldest is dropped */
  gint max_attempts;   /* attempts per notice before it is given up */
  gint timeout_secs;   /* one attempt */
  gint retry_secs;     /* the first wait after a failed attempt; doubles up to 60 s */
} StgNotifyOptions;

#define STG_NOTIFY_QUEUE_SIZE 1000
#define STG_NOTIFY_MAX_ATTEMPTS 8
#define STG_NOTIFY_TIMEOUT_SECS 10
#define STG_NOTIFY_RETRY_SECS 1
#define STG_NOTIFY_RETRY_MAX_SECS 60

void stg_notify_options_init (StgNotifyOptions *options);
void stg_notify_options_clear (StgNotifyOptions *options);
void stg_notify_options_copy (StgNotifyOptions *to, const StgNotifyOptions *from);

/* Reads [notify] and every [notify NAME] of @kf (url, secret or
 * secret_file, events; in [notify], also queue_size, max_attempts,
 * timeout_secs, retry_secs), each key checked. */
gboolean stg_notify_options_load (StgNotifyOptions *options, GKeyFile *kf, GError **error);

/* What the notifier did, for /metrics. */
typedef struct
{
  guint64 delivered; /* notices a webhook took (2xx) */
  guint64 retried;   /* failed attempts followed by another */
  guint64 failed;    /* notices given up after max_attempts */
  guint64 dropped;   /* the oldest notices, given up when the queue was over its bound */
  guint64 queued;    /* waiting now (a gauge) */
} StgNotifyCounts;

/* The real notifier; NULL options or no webhook: one that sends nothing.
 * Bodies name @cluster; connections go where @hosts allows (referenced;
 * NULL: the default policy); what it does is counted in @counts
 * (nullable; borrowed). With @store (nullable; borrowed, outliving the
 * notifier) notices are kept there until delivered, and those it kept
 * before (another staggerd's on the same data) are sent first. */
StgNotifier *stg_notifier_new (const StgNotifyOptions *options, const gchar *cluster,
                               StgHostPolicy *hosts, StgNotifyCounts *counts, StgStore *store);

/* The JSON body of @notice as the webhooks get it (@cluster: the
 * cluster's name; @seq: its number; @delivery_id (nullable): its UUID). */
gchar *stg_notice_to_json (const StgNotice *notice, const gchar *cluster, guint64 seq,
                           const gchar *delivery_id);

G_END_DECLS
