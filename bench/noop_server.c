/* noop_server.c: the limit of the stack itself, for rpc_bench: Stagger's own
 * TCP and HTTP servers and dispatcher on one GLib main loop, in front of a
 * Thrift handler that answers pulseJobUpdate with OK and
 * getJobUpdateSummaries with a canned list of 100 summaries shaped like the
 * ones rpc_bench seeds (built once), and does nothing else: the clients
 * then read answers of the same size from both servers.
 *
 *   noop_server --ready-file FILE
 *
 * Writes {"pid", "http_port", "thrift_port"} to FILE once serving; stops on
 * SIGTERM.
 */
#include "config.h"

#include <glib-unix.h>
#include <stdio.h>

#include "api/dispatch.h"
#include "api/http_api.h"
#include "api/http_server.h"
#include "api/tcp_server.h"

#define NOOP_TYPE_HANDLER (noop_handler_get_type ())
G_DECLARE_FINAL_TYPE (NoopHandler, noop_handler, NOOP, HANDLER, ApiStaggerSchedulerHandler)

struct _NoopHandler
{
  ApiStaggerSchedulerHandler parent;
};

G_DEFINE_TYPE (NoopHandler, noop_handler, API_TYPE_STAGGER_SCHEDULER_HANDLER)

static void
ok (ApiResponse *r)
{
  g_object_set (r, "responseCode", API_RESPONSE_CODE_OK, NULL);
}

static gboolean
noop_pulse (ApiAuroraSchedulerManagerIf *iface, ApiResponse **_return, const ApiJobUpdateKey *key,
            GError **error)
{
  (void) iface;
  (void) key;
  (void) error;
  ok (*_return);
  return TRUE;
}

static ApiResult *canned; /* 100 summaries */

static ApiResult *
canned_summaries (void)
{
  g_autoptr (GPtrArray) list = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr (ApiJobKey) job = g_object_new (API_TYPE_JOB_KEY, "role", "bench", "environment",
                                            "prod", "name", "rpc", NULL);

  for (gint i = 0; i < 100; i++)
    {
      g_autofree gchar *id = g_uuid_string_random ();
      g_autoptr (ApiJobUpdateKey) key = g_object_new (API_TYPE_JOB_UPDATE_KEY, "job", job, "id", id,
                                                      NULL);
      g_autoptr (ApiJobUpdateState) state = g_object_new (API_TYPE_JOB_UPDATE_STATE, "status",
                                                          API_JOB_UPDATE_STATUS_ABORTED,
                                                          "createdTimestampMs",
                                                          (gint64) 1795000000000 + i,
                                                          "lastModifiedTimestampMs",
                                                          (gint64) 1795000000100 + i, NULL);
      g_ptr_array_add (list, g_object_new (API_TYPE_JOB_UPDATE_SUMMARY, "key", key, "user", "bench",
                                           "state", state, NULL));
    }
  g_autoptr (ApiGetJobUpdateSummariesResult) sr =
      g_object_new (API_TYPE_GET_JOB_UPDATE_SUMMARIES_RESULT, "updateSummaries", list, NULL);
  return g_object_new (API_TYPE_RESULT, "getJobUpdateSummariesResult", sr, NULL);
}

static gboolean
noop_summaries (ApiReadOnlySchedulerIf *iface, ApiResponse **_return, const ApiJobUpdateQuery *query,
                GError **error)
{
  (void) iface;
  (void) query;
  (void) error;
  ok (*_return);
  g_object_set (*_return, "result", canned, NULL);
  return TRUE;
}

static void
noop_handler_class_init (NoopHandlerClass *klass)
{
  API_AURORA_SCHEDULER_MANAGER_HANDLER_CLASS (klass)->pulse_job_update = noop_pulse;
  API_READ_ONLY_SCHEDULER_HANDLER_CLASS (klass)->get_job_update_summaries = noop_summaries;
}

static void
noop_handler_init (NoopHandler *self)
{
  (void) self;
}

static gboolean
on_term (gpointer loop)
{
  g_main_loop_quit (loop);
  return G_SOURCE_REMOVE;
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;

  if (argc != 3 || !g_str_equal (argv[1], "--ready-file"))
    {
      g_printerr ("usage: noop_server --ready-file FILE\n");
      return 2;
    }
  g_autoptr (GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  canned = canned_summaries ();
  g_autoptr (NoopHandler) handler = g_object_new (NOOP_TYPE_HANDLER, NULL);
  StgDispatch *dispatch = stg_dispatch_new (handler, 16 << 20);
  StgTcpServer *tcp = stg_tcp_server_new (dispatch, "127.0.0.1", 0, NULL, &error);
  StgHttpServer *http = tcp ? stg_http_server_new ("127.0.0.1", 0, NULL, &error) : NULL;
  if (http == NULL)
    {
      g_printerr ("noop_server: %s\n", error->message);
      return 1;
    }
  StgHttpApi *api = stg_http_api_new (http, dispatch, NULL);
  g_autofree gchar *ready = g_strdup_printf ("{\"pid\": %d, \"http_port\": %u, \"thrift_port\": %u}\n",
                                             (int) getpid (), stg_http_server_port (http),
                                             stg_tcp_server_port (tcp));
  if (!g_file_set_contents (argv[2], ready, -1, &error))
    {
      g_printerr ("noop_server: %s\n", error->message);
      return 1;
    }
  g_unix_signal_add (SIGTERM, on_term, loop);
  g_main_loop_run (loop);
  stg_http_server_free (http);
  stg_http_api_free (api);
  stg_tcp_server_free (tcp);
  stg_dispatch_free (dispatch);
  return 0;
}
