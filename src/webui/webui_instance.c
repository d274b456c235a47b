/* webui_instance.c: what the update page shows when an instance is picked:
 * GET /ui/api/instance (its status, its current cause and since when, its
 * newest task events and the tails of its stdout and stderr, or of those
 * of the process of an AuroraExecutor task that "process" names, with the
 * task's processes) and GET /ui/api/instance/log (the last 64 KiB of one
 * of them as text). Reads the
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
 * row: 200, or 400 or 404 with @error. */
static guint
query_instance (StgWebUi *ui, StgHttpRequest *request, ApiJobKey **key, StgJobRow **job,
                gint32 *instance, GError **error)
{
  const gchar *text = stg_http_request_query (request, "instance");
  gint64 n = -1;

  *key = stg_webui_query_key (request, error);
  if (*key == NULL)
    return 400;
  if (text == NULL || !g_ascii_string_to_signed (text, 10, 0, G_MAXINT32, &n, NULL))
    return stg_webui_fail (error, 400, "instance: give the instance's number");
  *job = stg_store_get_job (ui->ctx.store, *key, error);
  if (*job == NULL)
    return 404;
  if (n >= (*job)->instance_count)
    return stg_webui_fail (error, 404, "no such instance");
  *instance = (gint32) n;
  return 200;
}

/* The process the query names ("process", nullable) and its run ("run",
 * -1 when absent): FALSE with @error for a run that is not a number. */
static gboolean
query_process (StgHttpRequest *request, const gchar **process, gint *run, GError **error)
{
  const gchar *text = stg_http_request_query (request, "run");
  gint64 n = -1;

  *process = stg_http_request_query (request, "process");
  if (*process != NULL && (*process)[0] == '\0')
    *process = NULL;
  if (text != NULL && !g_ascii_string_to_signed (text, 10, -1, G_MAXINT32, &n, NULL))
    {
      stg_webui_fail (error, 400, "run: give the process's run (from 0), or -1 for its newest");
      return FALSE;
    }
  *run = (gint) n;
  return TRUE;
}

/* The tail of one output as a JSON string member (null when there is
 * none, e.g. a runtime that keeps no output); @info gets what the runtime
 * said of it (the task's processes). */
static void
member_tail (StgWebUi *ui, JsonBuilder *b, const gchar *name, const ApiJobKey *key, gint32 instance,
             StgLogQuery *q, StgLogInfo *info)
{
  stg_log_info_clear (info);
  g_autoptr (GBytes) data = ui->ctx.engine
                                ? stg_engine_read_log (ui->ctx.engine, key, instance, q, info, NULL)
                                : NULL;
  gsize len = 0;
  const gchar *bytes_read = data ? g_bytes_get_data (data, &len) : NULL;
  /* An empty output is null, as no output. */
  g_autofree gchar *text = len > 0 ? g_utf8_make_valid (bytes_read, (gssize) len) : NULL;
  member_string (b, name, text);
}

static guint
read_instance (StgWebUi *ui, StgHttpRequest *request, JsonBuilder *b, GError **error)
{
  g_autoptr (ApiJobKey) key = NULL;
  g_autoptr (StgJobRow) job = NULL;
  gint32 instance;
  guint status = query_instance (ui, request, &key, &job, &instance, error);
  const gchar *process;
  gint run;

  if (status != 200)
    return status;
  if (!query_process (request, &process, &run, error))
    return 400;
  g_autoptr (GPtrArray) events = stg_store_list_task_events (ui->ctx.store, job->id, instance,
                                                             EVENTS, error);
  if (events == NULL)
    return 500;
  const gchar *state = "PENDING";
  json_builder_begin_object (b);
  member_int (b, "instance", instance);
  json_builder_set_member_name (b, "events");
  json_builder_begin_array (b);
  for (guint i = 0; i < events->len; i++)
    {
      ApiTaskEvent *e = events->pdata[i];
      state = stg_schedule_status_name (e->status);
      json_builder_begin_object (b);
      member_int (b, "ts_ms", e->timestamp);
      member_string (b, "status", stg_schedule_status_name (e->status));
      member_string (b, "message", e->message);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  member_string (b, "status", state);
  /* The cause as of now, with its time: older ones are in the events. */
  gint64 cause_ms = 0;
  g_autofree gchar *cause = ui->ctx.engine ? stg_engine_instance_cause (ui->ctx.engine, key,
                                                                        instance, &cause_ms)
                                           : NULL;
  member_string (b, "cause", cause);
  json_builder_set_member_name (b, "cause_ms");
  if (cause != NULL)
    json_builder_add_int_value (b, cause_ms);
  else
    json_builder_add_null_value (b);
  stg_webui_add_usage (ui, b, job->id, instance);
  stg_webui_add_announce (ui, b, job->id, instance);
  /* The instance's own output, or that of the task's process the query
   * names (an AuroraExecutor task's), with the task's processes. */
  StgLogQuery q = { FALSE, -(gint64) TAIL_BYTES, TAIL_BYTES, process, run };
  g_auto (StgLogInfo) info = { .run = -1 };
  member_tail (ui, b, "stdout_tail", key, instance, &q, &info);
  q.err = TRUE;
  member_tail (ui, b, "stderr_tail", key, instance, &q, &info);
  member_string (b, "process", process);
  json_builder_set_member_name (b, "processes");
  json_builder_begin_array (b);
  for (guint i = 0; info.processes != NULL && info.processes[i] != NULL; i++)
    json_builder_add_string_value (b, info.processes[i]);
  json_builder_end_array (b);
  json_builder_end_object (b);
  return 200;
}

static void
route_log (StgHttpRequest *request, StgHttpResponse *response, gpointer user_data)
{
  StgWebUi *ui = user_data;
  g_autoptr (ApiJobKey) key = NULL;
  g_autoptr (StgJobRow) job = NULL;
  g_autoptr (GError) error = NULL;
  gint32 instance;
  const gchar *stream = stg_http_request_query (request, "stream");
  const gchar *process;
  gint run;

  if (!stg_webui_only_get (request, response, FALSE))
    return;
  guint status = query_instance (ui, request, &key, &job, &instance, &error);
  if (status == 200 && !query_process (request, &process, &run, &error))
    status = 400;
  if (status != 200)
    {
      stg_webui_send_error (response, status, error->message);
      return;
    }
  if (stream != NULL && !g_str_equal (stream, "stdout") && !g_str_equal (stream, "stderr"))
    {
      stg_webui_send_error (response, 400, "stream: stdout or stderr");
      return;
    }
  StgLogQuery q = { stream != NULL && g_str_equal (stream, "stderr"), -(gint64) STG_RUNTIME_LOG_MAX,
                    STG_RUNTIME_LOG_MAX, process, run };
  g_auto (StgLogInfo) info = { .run = -1 };
  GBytes *data = ui->ctx.engine
                     ? stg_engine_read_log (ui->ctx.engine, key, instance, &q, &info, &error)
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

const StgWebUiRoute stg_webui_instance_routes[] = {
  { "/ui/api/instance", .read = read_instance },
  { "/ui/api/instance/log", .raw = route_log },
  { NULL },
};
