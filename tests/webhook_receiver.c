/* webhook_receiver.c: a webhook receiver run by the tests, and the
 * webhooks' counts in /metrics (see webhook_receiver.h). Test processes
 * only. */
#include "config.h"

#include <string.h>

#include "webhook_receiver.h"

/* argv: the log, the control file. Each request taken is a JSON line of
 * the log; each refused one a line of LOG.refused. */
static const gchar receiver_py[] =
    "import http.server, json, sys\n"
    "log, control = sys.argv[1], sys.argv[2]\n"
    "class H(http.server.BaseHTTPRequestHandler):\n"
    "    def log_message(self, *a): pass\n"
    "    def answer(self, code):\n"
    "        self.send_response(code)\n"
    "        self.send_header('Content-Length', '0')\n"
    "        self.end_headers()\n"
    "    def do_POST(self):\n"
    "        body = self.rfile.read(int(self.headers['Content-Length'])).decode()\n"
    "        mode = open(control).read().strip()\n"
    "        if mode == 'once':\n"
    "            open(control, 'w').write('up')\n"
    "            return self.answer(500)\n"
    "        if mode == 'down':\n"
    "            with open(log + '.refused', 'a') as f: f.write(body + '\\n')\n"
    "            return self.answer(503)\n"
    "        with open(log, 'a') as f:\n"
    "            f.write(json.dumps({'event': self.headers['X-Stagger-Event'],\n"
    "                'delivery': self.headers['X-Stagger-Delivery'],\n"
    "                'signature': self.headers['X-Stagger-Signature-256'],\n"
    "                'body': body}) + '\\n')\n"
    "        self.answer(204)\n"
    "s = http.server.HTTPServer(('127.0.0.1', 0), H)\n"
    "print(s.server_address[1], flush=True)\n"
    "s.serve_forever()\n";

StgTestReceiver *
stg_test_receiver_start (const gchar *dir, const gchar *mode)
{
  g_autoptr (GError) error = NULL;
  StgTestReceiver *r = g_new0 (StgTestReceiver, 1);

  r->log = g_build_filename (dir, "received.jsonl", NULL);
  r->control = g_build_filename (dir, "receiver.mode", NULL);
  stg_test_receiver_set (r, mode);
  r->process = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error, "python3", "-c",
                                 receiver_py, r->log, r->control, NULL);
  ck_assert_msg (r->process != NULL, "python3: %s", error ? error->message : "");
  g_autoptr (GDataInputStream) in = g_data_input_stream_new (
      g_subprocess_get_stdout_pipe (r->process));
  g_autofree gchar *port = g_data_input_stream_read_line (in, NULL, NULL, &error);
  ck_assert_msg (port != NULL, "no port from the receiver");
  r->port = (guint16) atoi (port);
  return r;
}

void
stg_test_receiver_set (StgTestReceiver *r, const gchar *mode)
{
  ck_assert (g_file_set_contents (r->control, mode, -1, NULL));
}

static gchar **
file_lines (const gchar *path)
{
  g_autofree gchar *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return g_new0 (gchar *, 1);
  g_strchomp (text);
  return text[0] ? g_strsplit (text, "\n", -1) : g_new0 (gchar *, 1);
}

gchar **
stg_test_receiver_lines (StgTestReceiver *r)
{
  return file_lines (r->log);
}

gchar **
stg_test_receiver_wait (StgTestReceiver *r, guint count, gint seconds)
{
  for (gint64 end = g_get_monotonic_time () + seconds * G_USEC_PER_SEC;;)
    {
      g_auto (GStrv) lines = stg_test_receiver_lines (r);
      if (g_strv_length (lines) >= count)
        return g_steal_pointer (&lines);
      ck_assert_msg (g_get_monotonic_time () < end, "the receiver has %u of %u notices",
                     g_strv_length (lines), count);
      g_usleep (100 * 1000);
    }
}

/* The body of request @r (a line of the log), its headers checked. */
static JsonNode *
checked (JsonObject *r, const gchar *secret, GHashTable *ids)
{
  const gchar *body = json_object_get_string_member (r, "body");
  g_autofree gchar *mac = g_compute_hmac_for_string (G_CHECKSUM_SHA256, (const guchar *) secret,
                                                     strlen (secret), body, -1);
  g_autofree gchar *signature = g_strconcat ("sha256=", mac, NULL);
  ck_assert_str_eq (json_object_get_string_member (r, "signature"), signature);
  JsonNode *notice = stg_test_parse_json (body);
  JsonObject *n = json_node_get_object (notice);
  const gchar *id = json_object_get_string_member (r, "delivery");
  ck_assert_msg (id != NULL && g_uuid_string_is_valid (id), "delivery id %s", id);
  ck_assert_str_eq (json_object_get_string_member (n, "delivery_id"), id);
  ck_assert_msg (g_hash_table_add (ids, g_strdup (id)), "delivery id %s twice", id);
  g_autofree gchar *event = g_strdup_printf ("%s.%s", json_object_get_string_member (n, "event"),
                                             json_object_get_string_member (n, "status"));
  ck_assert_str_eq (json_object_get_string_member (r, "event"), event);
  return notice;
}

GPtrArray *
stg_test_receiver_notices (gchar **lines, const gchar *secret)
{
  g_autoptr (GHashTable) ids = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  GPtrArray *notices = g_ptr_array_new_with_free_func ((GDestroyNotify) json_node_unref);
  gint64 last_seq = 0;

  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autoptr (JsonNode) line = stg_test_parse_json (lines[i]);
      JsonNode *notice = checked (json_node_get_object (line), secret, ids);
      g_ptr_array_add (notices, notice);
      gint64 seq = json_object_get_int_member (json_node_get_object (notice), "seq");
      ck_assert_int_gt (seq, last_seq);
      last_seq = seq;
    }
  return notices;
}

guint
stg_test_receiver_refused (StgTestReceiver *r)
{
  g_autofree gchar *path = g_strconcat (r->log, ".refused", NULL);
  g_auto (GStrv) lines = file_lines (path);
  return g_strv_length (lines);
}

void
stg_test_receiver_free (StgTestReceiver *r)
{
  if (r == NULL)
    return;
  g_subprocess_force_exit (r->process);
  g_subprocess_wait (r->process, NULL, NULL);
  g_object_unref (r->process);
  g_free (r->log);
  g_free (r->control);
  g_free (r);
}

gint64
stg_test_notify_count (StgTestDaemon *d, const gchar *outcome)
{
  g_autofree gchar *body = NULL;
  ck_assert_uint_eq (stg_test_http_get (d->http_port, "/metrics", &body), 200);
  g_autofree gchar *name = outcome != NULL
                               ? g_strdup_printf ("\nstagger_notify_total{outcome=\"%s\"} ",
                                                  outcome)
                               : g_strdup ("\nstagger_notify_queued ");
  const gchar *at = strstr (body, name);
  ck_assert_msg (at != NULL, "no %s in /metrics", name);
  return g_ascii_strtoll (at + strlen (name), NULL, 10);
}
