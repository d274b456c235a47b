/* notify.c: the real StgNotifier: state changes POSTed to webhooks.
 *
 * Each webhook has a queue of bodies waiting (at most queue_size: a notice
 * that finds it full is dropped, counted and logged) and sends one at a
 * time, in order: a POST of the JSON body (stg_notice_to_json) with
 * X-Stagger-Event, X-Stagger-Delivery (the notice's number) and, with a
 * secret, X-Stagger-Signature-256: sha256=HEX, the HMAC-SHA-256 of the
 * body. A 2xx answer delivers it; anything else (another status, no
 * answer within timeout_secs, a refused or failed connection) is tried
 * again after a wait that doubles from retry_secs up to 60 s, up to
 * max_attempts in all, then given up (counted and logged; drops are
 * logged once per spell of a full queue). Connections
 * go only where the StgHostPolicy allows (host_guard.c). post() only
 * queues: it never waits for a webhook. Calls common/ and host_guard.c.
 * Main-loop thread only.
 */
#include "config.h"

#include <json-glib/json-glib.h>
#include <libsoup/soup.h>
#include <string.h>

#include "common/json_write.h"
#include "runtime/host_guard.h"
#include "runtime/notify.h"

typedef struct
{
  guint64 seq;
  gchar *event; /* "plan.ROLLED_BACK", for the header and messages */
  GBytes *body;
} Delivery;

typedef struct _Notifier Notifier;
typedef struct _Webhook Webhook;

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
  GPtrArray *hooks;        /* Webhook* */
  guint64 seq;
};

static void send_head (Webhook *w);

static void
delivery_free (gpointer data)
{
  Delivery *d = data;

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
stg_notice_to_json (const StgNotice *n, const gchar *cluster, guint64 seq)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "seq");
  json_builder_add_int_value (b, (gint64) seq);
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

/* The head is done with (delivered or given up): on to the next. */
static void
next (Webhook *w)
{
  delivery_free (g_queue_pop_head (&w->waiting));
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
  g_autofree gchar *seq = g_strdup_printf ("%" G_GUINT64_FORMAT, d->seq);
  SoupMessage *msg = soup_message_new ("POST", w->hook->url);

  w->attempts++;
  if (msg == NULL)
    {
      attempt_failed (w, "the webhook's URL is not valid");
      return;
    }
  SoupMessageHeaders *h = soup_message_get_request_headers (msg);
  soup_message_headers_replace (h, "X-Stagger-Event", d->event);
  soup_message_headers_replace (h, "X-Stagger-Delivery", seq);
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

/* ---- the notifier ---------------------------------------------------------------- */

static void
notifier_post (StgNotifier *base, const StgNotice *notice)
{
  Notifier *n = (Notifier *) base;
  g_autofree gchar *event = g_strdup_printf ("%s.%s", notice->event, notice->status);
  g_autofree gchar *json = NULL;
  guint64 seq = ++n->seq;

  for (guint i = 0; i < n->hooks->len; i++)
    {
      Webhook *w = n->hooks->pdata[i];
      if (!wants (w->hook, notice))
        continue;
      if (g_queue_get_length (&w->waiting) >= (guint) n->options.queue_size)
        {
          /* Said once per spell, not once per notice. */
          n->counts->dropped++;
          if (w->dropping++ == 0)
            g_warning (
                "notify: webhook %s: %u notices are waiting already: notice %" G_GUINT64_FORMAT
                " (%s) dropped, and those after it until the queue drains",
                hook_name (w), g_queue_get_length (&w->waiting), seq, event);
          continue;
        }
      if (w->dropping > 0)
        g_warning ("notify: webhook %s: %u notices were dropped while its queue was full",
                   hook_name (w), w->dropping);
      w->dropping = 0;
      if (json == NULL)
        json = stg_notice_to_json (notice, n->cluster, seq);
      Delivery *d = g_new0 (Delivery, 1);
      d->seq = seq;
      d->event = g_strdup (event);
      d->body = g_bytes_new (json, strlen (json));
      g_queue_push_tail (&w->waiting, d);
      n->counts->queued++;
      if (g_queue_get_length (&w->waiting) == 1 && w->timer == 0 && w->attempt == NULL)
        send_head (w);
    }
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

  g_ptr_array_unref (n->hooks);
  g_clear_object (&n->session);
  g_clear_pointer (&n->hosts, stg_host_policy_unref);
  stg_notify_options_clear (&n->options);
  g_free (n->cluster);
  g_free (n);
}

static const StgNotifierOps notifier_ops = { notifier_post, notifier_free };

StgNotifier *
stg_notifier_new (const StgNotifyOptions *options, const gchar *cluster, StgHostPolicy *hosts,
                  StgNotifyCounts *counts)
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
  n->hooks = g_ptr_array_new_with_free_func ((GDestroyNotify) webhook_free);
  for (guint i = 0; i < n->options.webhooks->len; i++)
    {
      Webhook *w = g_new0 (Webhook, 1);
      w->owner = n;
      w->hook = n->options.webhooks->pdata[i];
      g_queue_init (&w->waiting);
      g_ptr_array_add (n->hooks, w);
    }
  return &n->parent;
}

void
stg_notifier_free (StgNotifier *notifier)
{
  if (notifier != NULL)
    notifier->ops->free (notifier);
}
