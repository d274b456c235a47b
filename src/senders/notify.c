/* notify.c: the real StgNotifier: state changes POSTed to webhooks.
 *
 * A notice posted gets its number (seq, from the store's counter, which
 * only grows) and a delivery id (a UUID), and with a store is written
 * there once per webhook that wants it (store/notices.c), in a savepoint
 * of the transaction recording the change: it commits with the change or
 * not at all, costs no commit of its own, and a failure to write it is
 * logged and undone without failing the change (the notice is then sent
 * from memory only). When that transaction commits (end), the notices go
 * to their webhooks' queues. A new notifier first queues what the store
 * still holds, so notices waiting when staggerd stopped (or its leader
 * went) are sent, in order, before any new one: at least once, a
 * receiver drops repeats by their delivery id.
 *
 * Each webhook has a queue of bodies waiting (at most queue_size: past
 * it the oldest is given up, counted as dropped and logged once per
 * spell of a full queue) and sends one at a time, in order: a POST of the
 * JSON body (stg_notice_to_json) with X-Stagger-Event, X-Stagger-Delivery
 * (the delivery id) and, with a secret, X-Stagger-Signature-256:
 * sha256=HEX, the HMAC-SHA-256 of the body. A 2xx answer delivers it;
 * anything else (another status, no answer within timeout_secs, a refused
 * or failed connection) is tried again after a wait that doubles from
 * retry_secs up to 60 s, up to max_attempts in all, then given up
 * (counted and logged). A notice delivered, given up or dropped leaves
 * the store. Connections go only where the StgHostPolicy allows
 * (host_guard.c). post() never waits for a webhook. Calls common/,
 * host_guard.c and the store. Main-loop thread only.
 */
#include "config.h"

#include <json-glib/json-glib.h>
#include <libsoup/soup.h>
#include <string.h>

#include "common/json_write.h"
#include "senders/host_guard.h"
#include "senders/notify.h"
#include "store/notices.h"

typedef struct _Notifier Notifier;
typedef struct _Webhook Webhook;

typedef struct
{
  Webhook *w; /* the webhook it is for */
  guint64 seq;
  gchar *id;    /* the delivery id */
  gchar *event; /* "plan.ROLLED_BACK", for the header and messages */
  GBytes *body;
} Delivery;

/* One POST in flight; the webhook drops it (w NULL) when it gives up
 * waiting or goes, and its callback frees it. */
typedef struct
{
  Webhook *w; /* NULL once dropped */
  SoupMessage *msg;
  StgHostGuard *guard;
  GCancellable *cancel;
} Attempt;

struct _Webhook
{
  Notifier *owner;
  StgWebhook *hook; /* borrowed from owner->options */
  GQueue waiting;   /* Delivery*, oldest first; the head is the one being sent */
  guint attempts;   /* of the head */
  guint timer;      /* the next attempt, or the one in flight's timeout */
  Attempt *attempt; /* (nullable) in flight */
  guint dropping;   /* notices dropped since the queue was last not full */
};

struct _Notifier
{
  StgNotifier parent;
  StgNotifyOptions options;
  gchar *cluster;
  SoupSession *session;
  StgHostPolicy *hosts;
  StgNotifyCounts *counts; /* (nullable) */
  StgNotifyCounts own;     /* when none is given */
  StgStore *store;         /* (nullable) borrowed: where notices are kept */
  GPtrArray *hooks;        /* Webhook* */
  GPtrArray *pending;      /* Delivery*: posted, their transaction not yet ended */
  guint64 seq;             /* the last notice number given */
};

static void send_head (Webhook *w);

static void
delivery_free (gpointer data)
{
  Delivery *d = data;

  if (d == NULL)
    return;
  g_free (d->id);
  g_free (d->event);
  g_bytes_unref (d->body);
  g_free (d);
}

/* ---- the body ------------------------------------------------------------------ */

static void
member (JsonBuilder *b, const gchar *name, const gchar *value)
{
  if (value == NULL)
    return;
  json_builder_set_member_name (b, name);
  json_builder_add_string_value (b, value);
}

gchar *
stg_notice_to_json (const StgNotice *n, const gchar *cluster, guint64 seq, const gchar *delivery_id)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "seq");
  json_builder_add_int_value (b, (gint64) seq);
  member (b, "delivery_id", delivery_id);
  member (b, "cluster", cluster);
  member (b, "event", n->event);
  json_builder_set_member_name (b, "timestamp_ms");
  json_builder_add_int_value (b, n->timestamp_ms);
  member (b, "status", n->status);
  member (b, "previous_status", n->previous);
  member (b, "reason", n->reason);
  member (b, "message", n->message);
  member (b, "user", n->user && n->user[0] ? n->user : NULL);
  if (n->job != NULL)
    {
      g_autofree gchar *key = g_strdup_printf ("%s/%s/%s", n->job->role, n->job->environment,
                                               n->job->name);
      json_builder_set_member_name (b, "job");
      json_builder_begin_object (b);
      member (b, "role", n->job->role);
      member (b, "environment", n->job->environment);
      member (b, "name", n->job->name);
      member (b, "key", key);
      json_builder_end_object (b);
    }
  member (b, "update_id", n->update_id);
  if (n->plan_id != NULL)
    {
      json_builder_set_member_name (b, "plan");
      json_builder_begin_object (b);
      member (b, "id", n->plan_id);
      member (b, "name", n->plan_name);
      json_builder_end_object (b);
    }
  member (b, "stage", n->stage);
  json_builder_end_object (b);
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  return stg_json_write (root, FALSE, NULL);
}

/* ---- which webhooks want it ---------------------------------------------------- */

static gboolean
wants (const StgWebhook *hook, const StgNotice *n)
{
  if (hook->events == NULL)
    return TRUE;
  g_autofree gchar *full = g_strdup_printf ("%s.%s", n->event, n->status);
  for (guint i = 0; hook->events[i] != NULL; i++)
    {
      const gchar *e = hook->events[i];
      if (g_str_equal (e, "*") || g_str_equal (e, n->event) || g_str_equal (e, full))
        return TRUE;
    }
  return FALSE;
}

static const gchar *
hook_name (const Webhook *w)
{
  return w->hook->name[0] != '\0' ? w->hook->name : w->hook->url;
}

/* ---- sending ------------------------------------------------------------------- */

static void
attempt_free (Attempt *a)
{
  g_clear_object (&a->cancel);
  g_clear_pointer (&a->guard, stg_host_guard_free);
  g_clear_object (&a->msg);
  g_free (a);
}

/* Stops waiting for the attempt in flight: its callback frees it. */
static void
attempt_drop (Webhook *w)
{
  g_clear_handle_id (&w->timer, g_source_remove);
  if (w->attempt == NULL)
    return;
  w->attempt->w = NULL;
  g_cancellable_cancel (w->attempt->cancel);
  w->attempt = NULL;
}

/* @d leaves the store: delivered, given up or dropped. A failure only
 * means it may be sent again after a restart. */
static void
forget (Notifier *n, Delivery *d)
{
  g_autoptr (GError) error = NULL;

  if (n->store != NULL &&
      !stg_store_delete_notice (n->store, d->w->hook->name, (gint64) d->seq, &error))
    g_warning ("notify: webhook %s: notice %" G_GUINT64_FORMAT " (%s) stays in the store, and may "
               "be sent again after a restart: %s",
               hook_name (d->w), d->seq, d->event, error->message);
}

/* The head is done with (delivered or given up): on to the next. */
static void
next (Webhook *w)
{
  Delivery *d = g_queue_pop_head (&w->waiting);

  forget (w->owner, d);
  delivery_free (d);
  w->owner->counts->queued--;
  w->attempts = 0;
  if (!g_queue_is_empty (&w->waiting))
    send_head (w);
}

static gboolean
on_retry (gpointer data)
{
  Webhook *w = data;

  w->timer = 0;
  send_head (w);
  return G_SOURCE_REMOVE;
}

static void
attempt_failed (Webhook *w, const gchar *why)
{
  Notifier *n = w->owner;
  Delivery *d = g_queue_peek_head (&w->waiting);

  attempt_drop (w);
  if (w->attempts >= (guint) n->options.max_attempts)
    {
      n->counts->failed++;
      g_warning ("notify: webhook %s: gave up notice %" G_GUINT64_FORMAT " (%s) after %u "
                 "attempt%s: %s",
                 hook_name (w), d->seq, d->event, w->attempts, w->attempts == 1 ? "" : "s", why);
      next (w);
      return;
    }
  n->counts->retried++;
  guint wait = (guint) n->options.retry_secs;
  for (guint i = 1; i < w->attempts && wait < STG_NOTIFY_RETRY_MAX_SECS; i++)
    wait *= 2;
  wait = MIN (wait, STG_NOTIFY_RETRY_MAX_SECS);
  g_message ("notify: webhook %s: notice %" G_GUINT64_FORMAT " (%s), attempt %u failed: %s; "
             "again in %u s",
             hook_name (w), d->seq, d->event, w->attempts, why, wait);
  w->timer = g_timeout_add_seconds (wait, on_retry, w);
}

static void
on_sent (GObject *source, GAsyncResult *res, gpointer data)
{
  Attempt *a = data;
  Webhook *w = a->w;
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) answer = soup_session_send_and_read_finish (SOUP_SESSION (source), res,
                                                                 &error);

  if (w == NULL)
    {
      attempt_free (a); /* given up on, or the notifier went */
      return;
    }
  w->attempt = NULL;
  g_clear_handle_id (&w->timer, g_source_remove);
  guint status = answer != NULL ? soup_message_get_status (a->msg) : 0;
  g_autofree gchar *why = NULL;
  if (answer == NULL)
    {
      const gchar *refused = stg_host_guard_refused (a->guard);
      why = g_strdup (refused != NULL ? refused : error->message);
    }
  else if (status < 200 || status > 299)
    why = g_strdup_printf ("HTTP %u %s", status,
                           soup_message_get_reason_phrase (a->msg)
                               ? soup_message_get_reason_phrase (a->msg)
                               : "");
  attempt_free (a);
  if (why != NULL)
    {
      attempt_failed (w, why);
      return;
    }
  w->owner->counts->delivered++;
  next (w);
}

static gboolean
on_timeout (gpointer data)
{
  Webhook *w = data;

  w->timer = 0;
  g_autofree gchar *why = g_strdup_printf ("no answer within %d s", w->owner->options.timeout_secs);
  attempt_failed (w, why);
  return G_SOURCE_REMOVE;
}

/* The signature header's value: sha256=HEX, the HMAC-SHA-256 of @body
 * keyed with @secret. */
static gchar *
signature (const gchar *secret, GBytes *body)
{
  g_autoptr (GBytes) key = g_bytes_new_static (secret, strlen (secret));
  g_autofree gchar *hex = g_compute_hmac_for_bytes (G_CHECKSUM_SHA256, key, body);

  return g_strconcat ("sha256=", hex, NULL);
}

/* Sends the queue's head (one attempt). */
static void
send_head (Webhook *w)
{
  Notifier *n = w->owner;
  Delivery *d = g_queue_peek_head (&w->waiting);
  SoupMessage *msg = soup_message_new ("POST", w->hook->url);

  w->attempts++;
  if (msg == NULL)
    {
      attempt_failed (w, "the webhook's URL is not valid");
      return;
    }
  SoupMessageHeaders *h = soup_message_get_request_headers (msg);
  soup_message_headers_replace (h, "X-Stagger-Event", d->event);
  soup_message_headers_replace (h, "X-Stagger-Delivery", d->id);
  if (w->hook->secret != NULL)
    {
      g_autofree gchar *sig = signature (w->hook->secret, d->body);
      soup_message_headers_replace (h, "X-Stagger-Signature-256", sig);
    }
  soup_message_set_request_body_from_bytes (msg, "application/json", d->body);
  Attempt *a = g_new0 (Attempt, 1);
  a->w = w;
  a->msg = msg;
  a->guard = stg_host_guard_new (msg, n->hosts);
  a->cancel = g_cancellable_new ();
  w->attempt = a;
  w->timer = g_timeout_add_seconds ((guint) n->options.timeout_secs, on_timeout, w);
  soup_session_send_and_read_async (n->session, msg, G_PRIORITY_DEFAULT, a->cancel, on_sent, a);
}

/* ---- queues ---------------------------------------------------------------------- */

/* The oldest notice of @w is given up to keep its queue within its
 * bound (the one being sent, if it is that one). Said once per spell of
 * a full queue, not once per notice. */
static void
drop_oldest (Webhook *w)
{
  Notifier *n = w->owner;
  Delivery *d = g_queue_pop_head (&w->waiting);

  if (w->attempts > 0)
    attempt_drop (w);
  w->attempts = 0;
  n->counts->dropped++;
  n->counts->queued--;
  if (w->dropping++ == 0)
    g_warning ("notify: webhook %s: more than %d notices are waiting: the oldest, "
               "%" G_GUINT64_FORMAT " (%s), given up, and the oldest of those after it until "
               "the queue drains",
               hook_name (w), n->options.queue_size, d->seq, d->event);
  forget (n, d);
  delivery_free (d);
}

/* Queues @d (taken) on its webhook, the oldest given up past the bound,
 * and sends the head unless one is in flight or waiting for a retry. */
static void
enqueue (Delivery *d)
{
  Webhook *w = d->w;
  Notifier *n = w->owner;
  guint dropped = w->dropping;

  g_queue_push_tail (&w->waiting, d);
  n->counts->queued++;
  while (g_queue_get_length (&w->waiting) > (guint) n->options.queue_size)
    drop_oldest (w);
  if (w->dropping > 0 && w->dropping == dropped)
    {
      g_warning ("notify: webhook %s: %u notices were given up while its queue was full",
                 hook_name (w), w->dropping);
      w->dropping = 0;
    }
  if (w->attempt == NULL && w->timer == 0)
    send_head (w);
}

/* ---- keeping notices in the store ------------------------------------------------- */

/* The notice numbered and written for each webhook of @to, in a
 * savepoint of the transaction recording the change (a transaction of
 * its own outside one); on failure nothing of it stays and @error says
 * why. *@seq is set either way. */
static gboolean
keep (Notifier *n, GPtrArray *to, const StgNotice *notice, guint64 *seq, gchar **json,
      const gchar *id, GError **error)
{
  gboolean nested = stg_store_in_transaction (n->store);
  gint64 next = 0;

  *seq = n->seq + 1;
  if (!stg_store_begin (n->store, error))
    return FALSE;
  gboolean ok = stg_store_next_notice_seq (n->store, (gint64) n->seq, &next, error);
  if (ok)
    *seq = (guint64) next;
  *json = stg_notice_to_json (notice, n->cluster, *seq, id);
  g_autofree gchar *event = g_strdup_printf ("%s.%s", notice->event, notice->status);
  for (guint i = 0; ok && i < to->len; i++)
    {
      Webhook *w = to->pdata[i];
      StgNoticeRow row = { .webhook = w->hook->name,
                           .seq = (gint64) *seq,
                           .delivery_id = (gchar *) id,
                           .event = event,
                           .body = *json };
      ok = stg_store_add_notice (n->store, &row, n->options.queue_size, error);
    }
  if (!ok)
    {
      stg_store_rollback (n->store);
      return FALSE;
    }
  /* A failed outermost commit rolls back by itself; a failed release not. */
  if (!stg_store_commit (n->store, error))
    {
      if (nested)
        stg_store_rollback (n->store);
      return FALSE;
    }
  return TRUE;
}

/* ---- the notifier ---------------------------------------------------------------- */

static void
notifier_post (StgNotifier *base, const StgNotice *notice)
{
  Notifier *n = (Notifier *) base;
  g_autoptr (GPtrArray) to = g_ptr_array_new ();

  for (guint i = 0; i < n->hooks->len; i++)
    if (wants (((Webhook *) n->hooks->pdata[i])->hook, notice))
      g_ptr_array_add (to, n->hooks->pdata[i]);
  if (to->len == 0)
    return;
  g_autofree gchar *id = g_uuid_string_random ();
  g_autofree gchar *json = NULL;
  g_autoptr (GError) error = NULL;
  guint64 seq = n->seq + 1;
  if (n->store != NULL && !keep (n, to, notice, &seq, &json, id, &error))
    g_warning ("notify: notice %" G_GUINT64_FORMAT " (%s.%s) is not kept in the store, so it is "
               "lost if staggerd stops before it is sent: %s",
               seq, notice->event, notice->status, error->message);
  if (json == NULL)
    json = stg_notice_to_json (notice, n->cluster, seq, id);
  n->seq = seq;
  for (guint i = 0; i < to->len; i++)
    {
      Delivery *d = g_new0 (Delivery, 1);
      d->w = to->pdata[i];
      d->seq = seq;
      d->id = g_strdup (id);
      d->event = g_strdup_printf ("%s.%s", notice->event, notice->status);
      d->body = g_bytes_new (json, strlen (json));
      g_ptr_array_add (n->pending, d);
    }
}

static void
notifier_end (StgNotifier *base, gboolean committed)
{
  Notifier *n = (Notifier *) base;
  g_autoptr (GPtrArray) pending = g_steal_pointer (&n->pending);

  n->pending = g_ptr_array_new_with_free_func (delivery_free);
  for (guint i = 0; committed && i < pending->len; i++)
    enqueue (g_steal_pointer (&pending->pdata[i]));
}

/* Queues what the store kept (another staggerd's, before a restart or a
 * takeover), oldest first; a notice of a webhook no longer configured is
 * deleted. */
static void
load (Notifier *n)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) rows = stg_store_list_notices (n->store, &error);

  if (rows == NULL)
    {
      g_warning ("notify: cannot read the notices kept in the store: %s", error->message);
      return;
    }
  for (guint i = 0; i < rows->len; i++)
    {
      StgNoticeRow *row = rows->pdata[i];
      Webhook *w = NULL;
      n->seq = MAX (n->seq, (guint64) row->seq);
      for (guint k = 0; w == NULL && k < n->hooks->len; k++)
        if (g_str_equal (((Webhook *) n->hooks->pdata[k])->hook->name, row->webhook))
          w = n->hooks->pdata[k];
      g_autoptr (GError) gone = NULL;
      if (w == NULL)
        {
          g_message ("notify: notice %" G_GINT64_FORMAT " (%s) was kept for webhook '%s', which "
                     "is no longer configured: forgotten",
                     row->seq, row->event, row->webhook);
          if (!stg_store_delete_notice (n->store, row->webhook, row->seq, &gone))
            g_warning ("notify: %s", gone->message);
          continue;
        }
      Delivery *d = g_new0 (Delivery, 1);
      d->w = w;
      d->seq = (guint64) row->seq;
      d->id = g_strdup (row->delivery_id);
      d->event = g_strdup (row->event);
      d->body = g_bytes_new (row->body, strlen (row->body));
      enqueue (d);
    }
  if (rows->len > 0)
    g_message ("notify: %u notices kept from before are sent first", rows->len);
}

static void
webhook_free (Webhook *w)
{
  attempt_drop (w);
  w->owner->counts->queued -= g_queue_get_length (&w->waiting);
  g_queue_clear_full (&w->waiting, delivery_free);
  g_free (w);
}

static void
notifier_free (StgNotifier *base)
{
  Notifier *n = (Notifier *) base;

  g_ptr_array_unref (n->pending);
  g_ptr_array_unref (n->hooks);
  g_clear_object (&n->session);
  g_clear_pointer (&n->hosts, stg_host_policy_unref);
  stg_notify_options_clear (&n->options);
  g_free (n->cluster);
  g_free (n);
}

static const StgNotifierOps notifier_ops = { notifier_post, notifier_end, notifier_free };

StgNotifier *
stg_notifier_new (const StgNotifyOptions *options, const gchar *cluster, StgHostPolicy *hosts,
                  StgNotifyCounts *counts, StgStore *store)
{
  Notifier *n = g_new0 (Notifier, 1);

  n->parent.ops = &notifier_ops;
  if (options != NULL)
    stg_notify_options_copy (&n->options, options);
  else
    stg_notify_options_init (&n->options);
  n->cluster = g_strdup (cluster);
  n->counts = counts != NULL ? counts : &n->own;
  /* No proxy: the policy judges the address a request really goes to. */
  n->session = soup_session_new_with_options ("user-agent", "stagger-notify/" STG_VERSION,
                                              "proxy-resolver", NULL, NULL);
  n->hosts = hosts != NULL ? stg_host_policy_ref (hosts)
                           : stg_host_policy_new (NULL, "[gates] allowed_hosts", NULL);
  n->store = store;
  n->pending = g_ptr_array_new_with_free_func (delivery_free);
  n->hooks = g_ptr_array_new_with_free_func ((GDestroyNotify) webhook_free);
  for (guint i = 0; i < n->options.webhooks->len; i++)
    {
      Webhook *w = g_new0 (Webhook, 1);
      w->owner = n;
      w->hook = n->options.webhooks->pdata[i];
      g_queue_init (&w->waiting);
      g_ptr_array_add (n->hooks, w);
    }
  if (store != NULL && n->hooks->len > 0)
    load (n);
  return &n->parent;
}

void
stg_notifier_free (StgNotifier *notifier)
{
  if (notifier != NULL)
    notifier->ops->free (notifier);
}
