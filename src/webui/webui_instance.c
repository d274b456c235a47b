/* webui_instance.c: what the update page shows when an instance is picked:
 * GET /ui/api/instance (its status, why it last failed, its newest task
 * events and the tails of its stdout and stderr) and GET
 * /ui/api/instance/log (the last 64 KiB of one of them as text). Reads the
 * store and, through the engine, the runtime's output; changes nothing.
 * Main-loop thread only.
 */
#include "config.h"

#include <string.h>

#include "webui/webui_private.h"
#include "common/enums.h"

#define EVENTS 20
#define TAIL_BYTES 4096

/* The instance named by the query (job key and "instance"), with its job
 * row; FALSE after answering 400 or 404. */
static gboolean
query_instance (StgWebUi *ui, StgHttpRequest *request, StgHttpResponse *response, ApiJobKey **key,
                StgJobRow **job, gint32 *instance)
{
  g_autoptr (GError) error = NULL;
  const gchar *text = stg_http_request_query (request, "instance");
  gint64 n = -1;

  if (!stg_webui_only_get (request, response))
    return FALSE;
  *key = stg_webui_query_key (request, response);
  if (*key == NULL)
    return FALSE;
  if (text == NULL || !g_ascii_string_to_signed (text, 10, 0, G_MAXINT32, &n, NULL))
    {
      stg_webui_send_error (response, 400, "instance: give the instance's number");
      return FALSE;
    }
  *job = stg_store_get_job (ui->ctx.store, *key, &error);
  if (*job == NULL || n >= (*job)->instance_count)
    {
      stg_webui_send_error (response, 404, *job == NULL ? error->message : "no such instance");
      return FALSE;
    }
  *instance = (gint32) n;
  return TRUE;
}

/* The tail of one output as a JSON string member (null when there is
 * none, e.g. a runtime that keeps no output). */
static void
member_tail (StgWebUi *ui, JsonBuilder *b, const gchar *name, const ApiJobKey *key, gint32 instance,
             gboolean err, gsize bytes)
{
  gint64 next = 0, size = 0;
  g_autoptr (GBytes) data = ui->ctx.engine
                                ? stg_engine_read_log (ui->ctx.engine, key, instance, err,
                                                       -(gint64) bytes, bytes, &next, &size, NULL)
                                : NULL;
  g_autofree gchar *text = data ? g_utf8_make_valid (g_bytes_get_data (data, NULL),
                                                     (gssize) g_bytes_get_size (data))
                                : NULL;
  member_string (b, name, text);
}

static void
route_instance (StgHttpRequest *request, StgHttpResponse *response, gpointer user_data)
{
  StgWebUi *ui = user_data;
  g_autoptr (ApiJobKey) key = NULL;
  g_autoptr (StgJobRow) job = NULL;
  g_autoptr (GError) error = NULL;
  gint32 instance;

  if (!query_instance (ui, request, response, &key, &job, &instance))
    return;
  g_autoptr (GPtrArray) events = stg_store_list_task_events (ui->ctx.store, job->id, instance,
                                                             EVENTS, &error);
  if (events == NULL)
    {
      stg_webui_send_error (response, 500, error->message);
      return;
    }
  g_autoptr (JsonBuilder) b = json_builder_new ();
  const gchar *status = "PENDING", *cause = NULL;
  json_builder_begin_object (b);
  member_int (b, "instance", instance);
  json_builder_set_member_name (b, "events");
  json_builder_begin_array (b);
  for (guint i = 0; i < events->len; i++)
    {
      ApiTaskEvent *e = events->pdata[i];
      status = stg_schedule_status_name (e->status);
      if (e->status == API_SCHEDULE_STATUS_FAILED || e->status == API_SCHEDULE_STATUS_LOST)
        cause = e->message;
      json_builder_begin_object (b);
      member_int (b, "ts_ms", e->timestamp);
      member_string (b, "status", stg_schedule_status_name (e->status));
      member_string (b, "message", e->message);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  member_string (b, "status", status);
  member_string (b, "cause", cause);
  member_tail (ui, b, "stdout_tail", key, instance, FALSE, TAIL_BYTES);
  member_tail (ui, b, "stderr_tail", key, instance, TRUE, TAIL_BYTES);
  json_builder_end_object (b);
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  stg_webui_send_json (response, 200, root);
}

static void
route_log (StgHttpRequest *request, StgHttpResponse *response, gpointer user_data)
{
  StgWebUi *ui = user_data;
  g_autoptr (ApiJobKey) key = NULL;
  g_autoptr (StgJobRow) job = NULL;
  g_autoptr (GError) error = NULL;
  gint32 instance;
  gint64 next = 0, size = 0;
  const gchar *stream = stg_http_request_query (request, "stream");

  if (!query_instance (ui, request, response, &key, &job, &instance))
    return;
  if (stream != NULL && !g_str_equal (stream, "stdout") && !g_str_equal (stream, "stderr"))
    {
      stg_webui_send_error (response, 400, "stream: stdout or stderr");
      return;
    }
  gboolean err = stream != NULL && g_str_equal (stream, "stderr");
  GBytes *data = ui->ctx.engine ? stg_engine_read_log (ui->ctx.engine, key, instance, err,
                                                       -(gint64) STG_RUNTIME_LOG_MAX,
                                                       STG_RUNTIME_LOG_MAX, &next, &size, &error)
                                : NULL;
  if (data == NULL)
    {
      stg_http_response_text (response, 404, error ? error->message : "no output here");
      return;
    }
  /* Plain text, never rendered: an instance's output is not the page's. */
  stg_http_response_header (response, "Cache-Control", "no-store");
  stg_http_response_set (response, 200, "text/plain; charset=utf-8", data);
}

void
stg_webui_instance_routes (StgWebUi *ui, StgHttpServer *http)
{
  stg_webui_route (ui, http, "/ui/api/instance", route_instance);
  stg_webui_route (ui, http, "/ui/api/instance/log", route_log);
}
