/* webui_wait.c: the long poll that tells a client an update has changed.
 *
 * GET /ui/api/wait?update=ID&since=SEQ&timeout_ms=T&run=R answers
 * {"seq": N, "run": R} as soon as update ID has changed after change
 * number SEQ (at once if it already has), or when T ms (at most
 * MAX_TIMEOUT_MS) have passed. R names this process's count: a SEQ of
 * another (a leader that was replaced) answers at once. Change
 * numbers count every update change the engine committed; the last one of
 * each update is remembered (MAX_KNOWN of them; past that the table starts
 * again from a floor, which can only wake a waiter early, never late). So
 * `stagger update wait` learns of a change within milliseconds instead of
 * polling. Main-loop thread only.
 */
#include "config.h"

#include <string.h>

#include "webui/webui_private.h"

#define MAX_KNOWN 4096
#define MAX_WAITERS 4096
#define DEFAULT_TIMEOUT_MS 10000
#define MAX_TIMEOUT_MS 30000
#define MAX_ID_LEN 128

struct _StgWebUiWaits
{
  gint64 seq;          /* changes seen so far */
  gint64 floor;        /* the change number of every forgotten update */
  gchar *run;          /* names this count of changes (a random UUID) */
  GHashTable *last;    /* update id -> gint64*: its last change */
  GHashTable *waiters; /* Waiter* set: unanswered polls */
};

typedef struct
{
  StgWebUiWaits *waits;
  StgHttpStream *stream;
  gchar *id;
  gint64 since;
  guint timer;
} Waiter;

StgWebUiWaits *
stg_webui_waits_new (void)
{
  StgWebUiWaits *w = g_new0 (StgWebUiWaits, 1);

  w->last = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  w->waiters = g_hash_table_new (NULL, NULL);
  w->run = g_uuid_string_random ();
  return w;
}

static void
waiter_free (Waiter *waiter)
{
  g_clear_handle_id (&waiter->timer, g_source_remove);
  g_free (waiter->id);
  g_free (waiter);
}

void
stg_webui_waits_free (StgWebUiWaits *w)
{
  GHashTableIter it;
  gpointer key;

  if (w == NULL)
    return;
  /* The HTTP server normally closed every stream first; one still open
   * must not call back into freed memory. */
  g_hash_table_iter_init (&it, w->waiters);
  while (g_hash_table_iter_next (&it, &key, NULL))
    {
      Waiter *waiter = key;
      stg_http_stream_detach (waiter->stream);
      waiter_free (waiter);
    }
  g_hash_table_unref (w->waiters);
  g_hash_table_unref (w->last);
  g_free (w->run);
  g_free (w);
}

static gint64
last_change (StgWebUiWaits *w, const gchar *id)
{
  gint64 *seq = g_hash_table_lookup (w->last, id);
  return seq != NULL ? *seq : w->floor;
}

static gchar *
answer_text (StgWebUiWaits *w, gint64 seq)
{
  return g_strdup_printf ("{\"seq\": %" G_GINT64_FORMAT ", \"run\": \"%s\"}\n", seq, w->run);
}

/* Sends the answer and ends the stream; the waiter is freed when the
 * stream closes. */
static void
answer (Waiter *waiter)
{
  g_autofree gchar *text = answer_text (waiter->waits, last_change (waiter->waits, waiter->id));

  g_hash_table_remove (waiter->waits->waiters, waiter);
  g_clear_handle_id (&waiter->timer, g_source_remove);
  stg_http_stream_send (waiter->stream, text, strlen (text));
  stg_http_stream_finish (waiter->stream);
}

void
stg_webui_waits_note (StgWebUiWaits *w, const gchar *update_id)
{
  g_autoptr (GPtrArray) due = g_ptr_array_new ();
  GHashTableIter it;
  gpointer key;

  if (g_hash_table_size (w->last) >= MAX_KNOWN && !g_hash_table_contains (w->last, update_id))
    {
      g_hash_table_remove_all (w->last);
      w->floor = w->seq;
    }
  gint64 *seq = g_new (gint64, 1);
  *seq = ++w->seq;
  g_hash_table_replace (w->last, g_strdup (update_id), seq);

  g_hash_table_iter_init (&it, w->waiters);
  while (g_hash_table_iter_next (&it, &key, NULL))
    if (g_str_equal (((Waiter *) key)->id, update_id))
      g_ptr_array_add (due, key);
  for (guint i = 0; i < due->len; i++)
    answer (due->pdata[i]);
}

static gboolean
on_timeout (gpointer data)
{
  Waiter *waiter = data;

  waiter->timer = 0;
  answer (waiter);
  return G_SOURCE_REMOVE;
}

static void
on_closed (StgHttpStream *stream, gpointer data)
{
  Waiter *waiter = data;

  (void) stream;
  g_hash_table_remove (waiter->waits->waiters, waiter);
  waiter_free (waiter);
}

/* Reads an integer argument in [@low, @high]; @fallback when absent. */
static gboolean
query_int (StgHttpRequest *request, const gchar *name, gint64 low, gint64 high, gint64 fallback,
           gint64 *out)
{
  const gchar *text = stg_http_request_query (request, name);

  *out = fallback;
  return text == NULL || g_ascii_string_to_signed (text, 10, low, high, out, NULL);
}

static void
route_wait (StgHttpRequest *request, StgHttpResponse *response, gpointer user_data)
{
  StgWebUi *ui = user_data;
  StgWebUiWaits *w = ui->waits;
  const gchar *id = stg_http_request_query (request, "update");
  const gchar *run = stg_http_request_query (request, "run");
  gint64 since, timeout_ms;

  if (!g_str_equal (stg_http_request_method (request), "GET"))
    {
      stg_http_response_header (response, "Allow", "GET");
      stg_webui_send_error (response, 405, "use GET");
      return;
    }
  if (id == NULL || *id == '\0' || strlen (id) > MAX_ID_LEN)
    {
      stg_webui_send_error (response, 400, "update: give the update's id (at most 128 characters)");
      return;
    }
  if (!query_int (request, "since", -1, G_MAXINT64, -1, &since) ||
      !query_int (request, "timeout_ms", 0, MAX_TIMEOUT_MS, DEFAULT_TIMEOUT_MS, &timeout_ms))
    {
      stg_webui_send_error (response, 400,
                            "since and timeout_ms must be whole numbers "
                            "(timeout_ms from 0 to 30000)");
      return;
    }
  stg_http_response_header (response, "Cache-Control", "no-store");
  if (last_change (w, id) > since || timeout_ms == 0 ||
      (run != NULL && strcmp (run, w->run) != 0) || g_hash_table_size (w->waiters) >= MAX_WAITERS)
    {
      gchar *text = answer_text (w, last_change (w, id));
      stg_http_response_set (response, 200, "application/json",
                             g_bytes_new_take (text, strlen (text)));
      return;
    }
  Waiter *waiter = g_new0 (Waiter, 1);
  waiter->waits = w;
  waiter->id = g_strdup (id);
  waiter->since = since;
  waiter->stream = stg_http_response_stream (response, "application/json", on_closed, waiter);
  waiter->timer = g_timeout_add ((guint) timeout_ms, on_timeout, waiter);
  g_hash_table_add (w->waiters, waiter);
}

const StgWebUiRoute stg_webui_wait_routes[] = {
  { "/ui/api/wait", .raw = route_wait },
  { NULL },
};
