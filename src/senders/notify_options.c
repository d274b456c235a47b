/* notify_options.c: the webhooks of the config file, as StgNotifyOptions:
 * [notify] (one webhook, and how every webhook is served) and any number
 * of [notify NAME] groups (one webhook each), every key checked: url
 * (http:// or https://), secret or secret_file (the HMAC-SHA-256 key),
 * events (update, plan, stage, KIND.STATUS, or *). Calls common/enums.c.
 * Main thread, at start-up.
 */
#include "config.h"

#include <string.h>

#include "common/enums.h"
#include "senders/notify.h"

#define GROUP "notify"
#define GROUP_PREFIX "notify "

static void
webhook_free (gpointer data)
{
  StgWebhook *w = data;

  g_free (w->name);
  g_free (w->url);
  g_free (w->secret);
  g_strfreev (w->events);
  g_free (w);
}

void
stg_notify_options_init (StgNotifyOptions *o)
{
  o->webhooks = g_ptr_array_new_with_free_func (webhook_free);
  o->queue_size = STG_NOTIFY_QUEUE_SIZE;
  o->max_attempts = STG_NOTIFY_MAX_ATTEMPTS;
  o->timeout_secs = STG_NOTIFY_TIMEOUT_SECS;
  o->retry_secs = STG_NOTIFY_RETRY_SECS;
}

void
stg_notify_options_clear (StgNotifyOptions *o)
{
  g_clear_pointer (&o->webhooks, g_ptr_array_unref);
}

void
stg_notify_options_copy (StgNotifyOptions *to, const StgNotifyOptions *from)
{
  *to = *from;
  to->webhooks = g_ptr_array_new_with_free_func (webhook_free);
  for (guint i = 0; from->webhooks != NULL && i < from->webhooks->len; i++)
    {
      const StgWebhook *w = from->webhooks->pdata[i];
      StgWebhook *c = g_new0 (StgWebhook, 1);
      c->name = g_strdup (w->name);
      c->url = g_strdup (w->url);
      c->secret = g_strdup (w->secret);
      c->events = g_strdupv (w->events);
      g_ptr_array_add (to->webhooks, c);
    }
}

static gboolean invalid (GError **error, const gchar *group, const gchar *key, const gchar *format,
                         ...) G_GNUC_PRINTF (4, 5);

static gboolean
invalid (GError **error, const gchar *group, const gchar *key, const gchar *format, ...)
{
  va_list ap;
  va_start (ap, format);
  g_autofree gchar *what = g_strdup_vprintf (format, ap);
  va_end (ap);
  g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE, "[%s] %s: %s", group, key,
               what);
  return FALSE;
}

/* TRUE when @name is a status of events of @kind. */
static gboolean
status_of (const gchar *kind, const gchar *name)
{
  if (g_str_equal (kind, "update"))
    return stg_update_status_from_name (name) >= 0;
  for (gint v = API_ROLLOUT_STATUS_PENDING; v <= API_ROLLOUT_STATUS_PAUSED; v++)
    if (g_str_equal (stg_rollout_status_name (v), name))
      return TRUE;
  return FALSE;
}

/* "update", "plan", "stage", "*", or KIND.STATUS. */
static gboolean
event_ok (const gchar *word)
{
  static const gchar *const kinds[] = { "update", "plan", "stage", NULL };
  const gchar *dot = strchr (word, '.');
  g_autofree gchar *kind = dot ? g_strndup (word, (gsize) (dot - word)) : g_strdup (word);

  if (dot == NULL)
    return g_str_equal (word, "*") || g_strv_contains (kinds, word);
  return g_strv_contains (kinds, kind) && status_of (kind, dot + 1);
}

static gboolean
load_events (GKeyFile *kf, const gchar *group, StgWebhook *w, GError **error)
{
  g_autofree gchar *text = g_key_file_get_string (kf, group, "events", NULL);

  if (text == NULL)
    return TRUE;
  g_auto (GStrv) parts = g_strsplit_set (text, ", \t", -1);
  g_autoptr (GStrvBuilder) words = g_strv_builder_new ();
  for (guint i = 0; parts[i] != NULL; i++)
    {
      if (parts[i][0] == '\0')
        continue;
      if (!event_ok (parts[i]))
        return invalid (error, group, "events",
                        "'%s' is not an event: say update, plan, stage or *, or KIND.STATUS "
                        "(plan.ROLLED_BACK, update.FAILED)",
                        parts[i]);
      g_strv_builder_add (words, parts[i]);
    }
  w->events = g_strv_builder_end (words);
  return TRUE;
}

static gboolean
load_secret (GKeyFile *kf, const gchar *group, StgWebhook *w, GError **error)
{
  g_autofree gchar *secret = g_key_file_get_string (kf, group, "secret", NULL);
  g_autofree gchar *file = g_key_file_get_string (kf, group, "secret_file", NULL);
  g_autoptr (GError) local = NULL;

  if (secret != NULL && file != NULL)
    return invalid (error, group, "secret", "give secret or secret_file, not both");
  if (file != NULL)
    {
      if (!g_file_get_contents (file, &secret, NULL, &local))
        return invalid (error, group, "secret_file", "%s", local->message);
      g_strchomp (secret);
    }
  if (secret != NULL && secret[0] == '\0')
    return invalid (error, group, file != NULL ? "secret_file" : "secret", "the secret is empty");
  w->secret = g_steal_pointer (&secret);
  return TRUE;
}

/* One webhook from @group; @global: [notify], whose serving keys are
 * read too. */
static gboolean
load_webhook (GKeyFile *kf, const gchar *group, gboolean global, StgWebhook **out, GError **error)
{
  static const gchar *const keys[] = { "url",          "secret",     "secret_file",
                                       "events",       "queue_size", "max_attempts",
                                       "timeout_secs", "retry_secs", NULL };
  g_auto (GStrv) present = g_key_file_get_keys (kf, group, NULL, NULL);

  for (guint i = 0; present != NULL && present[i] != NULL; i++)
    {
      const gchar *key = present[i];
      guint k = 0;
      while (keys[k] != NULL && !g_str_equal (keys[k], key))
        k++;
      if (keys[k] == NULL || (!global && k >= 4))
        {
          g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_KEY_NOT_FOUND,
                       "unknown key '%s' in [%s] (known: url, secret, secret_file, events%s)", key,
                       group, global ? ", queue_size, max_attempts, timeout_secs, retry_secs" : "");
          return FALSE;
        }
    }
  g_autofree gchar *url = g_key_file_get_string (kf, group, "url", NULL);
  *out = NULL;
  if (url == NULL)
    {
      /* [notify] may say only how webhooks are served. */
      if (!global || g_key_file_has_key (kf, group, "secret", NULL) ||
          g_key_file_has_key (kf, group, "secret_file", NULL) ||
          g_key_file_has_key (kf, group, "events", NULL))
        return invalid (error, group, "url", "missing: a webhook needs its URL");
      return TRUE;
    }
  g_autoptr (GUri) uri = g_uri_parse (url, G_URI_FLAGS_NONE, NULL);
  if (uri == NULL || g_uri_get_host (uri) == NULL || g_uri_get_host (uri)[0] == '\0' ||
      (g_ascii_strcasecmp (g_uri_get_scheme (uri), "http") != 0 &&
       g_ascii_strcasecmp (g_uri_get_scheme (uri), "https") != 0))
    return invalid (error, group, "url", "'%s' is not an http:// or https:// URL", url);
  StgWebhook *w = g_new0 (StgWebhook, 1);
  w->name = g_strdup (global ? "" : group + strlen (GROUP_PREFIX));
  w->url = g_steal_pointer (&url);
  if (!load_secret (kf, group, w, error) || !load_events (kf, group, w, error))
    {
      webhook_free (w);
      return FALSE;
    }
  *out = w;
  return TRUE;
}

static gboolean
load_int (GKeyFile *kf, const gchar *key, gint min, gint max, gint *out, GError **error)
{
  g_autoptr (GError) local = NULL;

  if (!g_key_file_has_key (kf, GROUP, key, NULL))
    return TRUE;
  gint value = g_key_file_get_integer (kf, GROUP, key, &local);
  if (local != NULL || value < min || value > max)
    return invalid (error, GROUP, key, "must be a number between %d and %d", min, max);
  *out = value;
  return TRUE;
}

gboolean
stg_notify_options_load (StgNotifyOptions *o, GKeyFile *kf, GError **error)
{
  g_auto (GStrv) groups = g_key_file_get_groups (kf, NULL);

  for (guint i = 0; groups[i] != NULL; i++)
    {
      gboolean global = g_str_equal (groups[i], GROUP);
      if (!global && !g_str_has_prefix (groups[i], GROUP_PREFIX))
        continue;
      StgWebhook *w = NULL;
      if (!load_webhook (kf, groups[i], global, &w, error))
        return FALSE;
      if (w != NULL)
        g_ptr_array_add (o->webhooks, w);
    }
  return load_int (kf, "queue_size", 1, 1000000, &o->queue_size, error) &&
         load_int (kf, "max_attempts", 1, 1000, &o->max_attempts, error) &&
         load_int (kf, "timeout_secs", 1, 3600, &o->timeout_secs, error) &&
         load_int (kf, "retry_secs", 1, 3600, &o->retry_secs, error);
}
