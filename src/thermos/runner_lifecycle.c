/* runner_lifecycle.c: the HTTP lifecycle's request: a POST with an empty
 * body to an endpoint on localhost, as Aurora's executor sends it when a
 * task is killed. "Handled" means an HTTP answer came back, whatever its
 * status; no answer within a second (Aurora's timeout for each step) means
 * not handled. The request is blocking I/O, so it runs in a GTask thread;
 * the callback runs on the caller's main loop.
 */
#include "config.h"

#include <string.h>

#include "thermos/runner.h"

#define TIMEOUT_SECS STG_THERMOS_LIFECYCLE_POST_SECS
#define REPLY_MAX 65536

typedef struct
{
  guint16 port;
  gchar *endpoint;
} Request;

static void
request_free (gpointer data)
{
  Request *q = data;

  g_free (q->endpoint);
  g_free (q);
}

/* Whether @q got an HTTP status line back. The rest of the answer is read
 * too (up to REPLY_MAX bytes), as Aurora's executor reads it: a server
 * that is still writing when the client goes away may fail. */
static gboolean
post (const Request *q, GCancellable *cancellable)
{
  g_autoptr (GSocketClient) client = g_socket_client_new ();
  g_autoptr (GSocketConnection) conn = NULL;
  g_autofree gchar *request = g_strdup_printf ("POST %s HTTP/1.1\r\nHost: localhost:%u\r\n"
                                               "Content-Length: 0\r\nConnection: close\r\n\r\n",
                                               q->endpoint, q->port);
  g_autofree gchar *reply = g_malloc0 (REPLY_MAX + 1);
  gsize got = 0;

  g_socket_client_set_timeout (client, TIMEOUT_SECS);
  conn = g_socket_client_connect_to_host (client, "localhost", q->port, cancellable, NULL);
  if (conn == NULL)
    return FALSE;
  GOutputStream *out = g_io_stream_get_output_stream (G_IO_STREAM (conn));
  GInputStream *in = g_io_stream_get_input_stream (G_IO_STREAM (conn));
  if (!g_output_stream_write_all (out, request, strlen (request), NULL, cancellable, NULL))
    return FALSE;
  while (got < REPLY_MAX)
    {
      gssize n = g_input_stream_read (in, reply + got, REPLY_MAX - got, cancellable, NULL);
      if (n <= 0)
        break;
      got += (gsize) n;
    }
  return got >= 12 && g_str_has_prefix (reply, "HTTP/1.") && g_ascii_isdigit (reply[9]);
}

static void
post_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  (void) source;
  g_task_return_boolean (task, post (data, cancellable));
}

void
stg_runner_lifecycle_post (guint16 port, const gchar *endpoint, GCancellable *cancellable,
                           GAsyncReadyCallback callback, gpointer data)
{
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, data);
  Request *q = g_new0 (Request, 1);

  q->port = port;
  q->endpoint = g_strdup (endpoint);
  g_task_set_task_data (task, q, request_free);
  g_task_run_in_thread (task, post_thread);
}

gboolean
stg_runner_lifecycle_post_finish (GAsyncResult *result)
{
  return g_task_propagate_boolean (G_TASK (result), NULL);
}
