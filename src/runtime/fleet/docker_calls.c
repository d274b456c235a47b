/* docker_calls.c: the Docker Engine API calls (see docker.h): ping, pull
 * and import, create, start, stop, remove, stat, inspect, list, exec
 * (create, start attached, inspect), logs, and archive (one file out of a
 * container, read from the tar stream the engine sends). Each is one GTask whose requests go
 * through docker.c's stg_docker_request*, which waits for the guard.
 * Calls no other layer. Main-loop thread only.
 */
#include "config.h"

#include <string.h>

#include "common/json_check.h"
#include "runtime/fleet/docker_private.h"

/* Output kept from an exec or a container's logs. */
#define EXEC_OUTPUT_MAX (64 * 1024)

void
stg_docker_ping_async (StgDocker *d, GCancellable *cancellable, GAsyncReadyCallback callback,
                       gpointer user_data)
{
  g_autoptr (GTask) task = stg_docker_new_task (d, cancellable, callback, user_data,
                                                stg_docker_ping_async);

  stg_docker_request (task, "GET", "/_ping", NULL, 0, stg_docker_done_ok);
}

gboolean
stg_docker_ping_finish (StgDocker *d G_GNUC_UNUSED, GAsyncResult *result, GError **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}

/* ---- pull ------------------------------------------------------------------ */

/* A pull's reply is a stream of JSON objects, one a line; a failure is one
 * with "error" (the status is 200 all the same). */
static void
done_pulled (GTask *task, guint status G_GNUC_UNUSED, GBytes *body)
{
  gsize len = 0;
  const gchar *data = g_bytes_get_data (body, &len);
  g_autofree gchar *text = g_strndup (data ? data : "", len);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);

  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autoptr (JsonParser) parser = json_parser_new ();
      g_strstrip (lines[i]);
      if (lines[i][0] == '\0' || !stg_json_load (parser, lines[i], -1, NULL) ||
          !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
        continue;
      JsonObject *o = json_node_get_object (json_parser_get_root (parser));
      const gchar *error = json_object_get_string_member_with_default (o, "error", NULL);
      if (error != NULL && error[0] != '\0')
        {
          g_task_return_new_error (task, STG_DOCKER_ERROR, STG_DOCKER_ERROR_FAILED, "%s", error);
          return;
        }
    }
  g_task_return_boolean (task, TRUE);
}

/* X-Registry-Auth: the credentials as JSON in URL-safe base64. */
static gchar *
registry_auth (const StgDockerAuth *auth)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "username");
  json_builder_add_string_value (b, auth->user);
  json_builder_set_member_name (b, "password");
  json_builder_add_string_value (b, auth->password);
  if (auth->server != NULL)
    {
      json_builder_set_member_name (b, "serveraddress");
      json_builder_add_string_value (b, auth->server);
    }
  json_builder_end_object (b);
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  g_autofree gchar *json = json_to_string (root, FALSE);
  gchar *out = g_base64_encode ((const guchar *) json, strlen (json));
  for (gchar *p = out; *p != '\0'; p++)
    *p = *p == '+' ? '-' : *p == '/' ? '_' : *p;
  return out;
}

void
stg_docker_pull_async (StgDocker *d, const gchar *image, const StgDockerAuth *auth,
                       GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = stg_docker_new_task (d, cancellable, callback, user_data,
                                                stg_docker_pull_async);
  const gchar *slash = strrchr (image, '/');
  const gchar *colon = strrchr (slash ? slash : image, ':');
  gboolean digest = strchr (image, '@') != NULL;
  g_autofree gchar *name = digest || colon == NULL ? g_strdup (image)
                                                   : g_strndup (image, (gsize) (colon - image));
  g_autofree gchar *from = g_uri_escape_string (name, NULL, FALSE);
  g_autofree gchar *tag = g_uri_escape_string (digest  ? ""
                                               : colon ? colon + 1
                                                       : "latest",
                                               NULL, FALSE);
  g_autofree gchar *path = g_strconcat ("/images/create?fromImage=", from, tag[0] ? "&tag=" : "",
                                        tag, NULL);
  g_autofree gchar *header = auth != NULL ? registry_auth (auth) : NULL;

  stg_docker_request_with (task, "POST", path, NULL, header, 0, done_pulled);
}

void
stg_docker_import_async (StgDocker *d, const gchar *image, GBytes *tar, GCancellable *cancellable,
                         GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = stg_docker_new_task (d, cancellable, callback, user_data,
                                                stg_docker_import_async);
  g_autofree gchar *repo = g_uri_escape_string (image, NULL, FALSE);
  g_autofree gchar *path = g_strconcat ("/images/create?fromSrc=-&repo=", repo, NULL);

  stg_docker_request_full (task, "POST", path, NULL, "application/x-tar", tar, NULL, 0,
                           done_pulled);
}

/* The "Id" of a create reply (hex only: it goes into paths). */
static gchar *
reply_id (GBytes *body, const gchar *what, GError **error)
{
  g_autoptr (JsonNode) node = stg_docker_parse_body (body, error);
  const gchar *id = NULL;

  if (node == NULL)
    return NULL;
  if (JSON_NODE_HOLDS_OBJECT (node))
    id = json_object_get_string_member_with_default (json_node_get_object (node), "Id", NULL);
  if (id == NULL || id[0] == '\0' || strspn (id, "0123456789abcdef") != strlen (id))
    {
      g_set_error (error, STG_DOCKER_ERROR, STG_DOCKER_ERROR_INVALID,
                   "the engine created %s but named no valid Id", what);
      return NULL;
    }
  return g_strdup (id);
}

static void
done_created (GTask *task, guint status G_GNUC_UNUSED, GBytes *body)
{
  GError *error = NULL;
  gchar *id = reply_id (body, "a container", &error);

  if (id == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, id, g_free);
}

void
stg_docker_create_async (StgDocker *d, const gchar *name, JsonNode *spec, GCancellable *cancellable,
                         GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = stg_docker_new_task (d, cancellable, callback, user_data,
                                                stg_docker_create_async);
  g_autofree gchar *escaped = g_uri_escape_string (name, NULL, FALSE);
  g_autofree gchar *path = g_strconcat ("/containers/create?name=", escaped, NULL);

  stg_docker_request (task, "POST", path, spec, 0, done_created);
}

gchar *
stg_docker_create_finish (StgDocker *d G_GNUC_UNUSED, GAsyncResult *result, GError **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* /containers/ID/WHAT, with @id escaped. */
static gchar *
container_path (const gchar *id, const gchar *what)
{
  g_autofree gchar *escaped = g_uri_escape_string (id, NULL, FALSE);

  return g_strconcat ("/containers/", escaped, what, NULL);
}

void
stg_docker_start_async (StgDocker *d, const gchar *id, GCancellable *cancellable,
                        GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = stg_docker_new_task (d, cancellable, callback, user_data,
                                                stg_docker_start_async);
  g_autofree gchar *path = container_path (id, "/start");

  stg_docker_request (task, "POST", path, NULL, 0, stg_docker_done_ok); /* 304: already running */
}

void
stg_docker_stop_async (StgDocker *d, const gchar *id, guint timeout_secs, GCancellable *cancellable,
                       GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = stg_docker_new_task (d, cancellable, callback, user_data,
                                                stg_docker_stop_async);
  g_autofree gchar *what = g_strdup_printf ("/stop?t=%u", timeout_secs);
  g_autofree gchar *path = container_path (id, what);

  stg_docker_request (task, "POST", path, NULL, 0, stg_docker_done_ok); /* 304: already stopped */
}

void
stg_docker_remove_async (StgDocker *d, const gchar *id, GCancellable *cancellable,
                         GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = stg_docker_new_task (d, cancellable, callback, user_data,
                                                stg_docker_remove_async);
  /* v: the container's anonymous volumes go with it (a pod's shared one). */
  g_autofree gchar *path = container_path (id, "?force=true&v=true");

  stg_docker_request (task, "DELETE", path, NULL, 404, stg_docker_done_ok);
}

/* /containers/ID/archive?path=PATH, both escaped. */
static gchar *
archive_path (const gchar *id, const gchar *path)
{
  g_autofree gchar *escaped = g_uri_escape_string (path, NULL, FALSE);
  g_autofree gchar *what = g_strconcat ("/archive?path=", escaped, NULL);

  return container_path (id, what);
}

void
stg_docker_stat_async (StgDocker *d, const gchar *id, const gchar *path, GCancellable *cancellable,
                       GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = stg_docker_new_task (d, cancellable, callback, user_data,
                                                stg_docker_stat_async);
  g_autofree gchar *url = archive_path (id, path);

  stg_docker_request (task, "HEAD", url, NULL, 0, stg_docker_done_ok);
}

gboolean
stg_docker_finish (StgDocker *d G_GNUC_UNUSED, GAsyncResult *result, GError **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}

void
stg_docker_inspect_async (StgDocker *d, const gchar *id, GCancellable *cancellable,
                          GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = stg_docker_new_task (d, cancellable, callback, user_data,
                                                stg_docker_inspect_async);
  g_autofree gchar *path = container_path (id, "/json");

  stg_docker_request (task, "GET", path, NULL, 0, stg_docker_done_json);
}

JsonNode *
stg_docker_inspect_finish (StgDocker *d G_GNUC_UNUSED, GAsyncResult *result, GError **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

void
stg_docker_list_async (StgDocker *d, const gchar *const *labels, GCancellable *cancellable,
                       GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = stg_docker_new_task (d, cancellable, callback, user_data,
                                                stg_docker_list_async);
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "label");
  json_builder_begin_array (b);
  for (guint i = 0; labels != NULL && labels[i] != NULL; i++)
    json_builder_add_string_value (b, labels[i]);
  json_builder_end_array (b);
  json_builder_end_object (b);
  g_autoptr (JsonNode) filters = json_builder_get_root (b);
  g_autofree gchar *text = json_to_string (filters, FALSE);
  g_autofree gchar *escaped = g_uri_escape_string (text, NULL, FALSE);
  g_autofree gchar *path = g_strconcat ("/containers/json?all=true&filters=", escaped, NULL);
  stg_docker_request (task, "GET", path, NULL, 0, stg_docker_done_json);
}

JsonNode *
stg_docker_list_finish (StgDocker *d G_GNUC_UNUSED, GAsyncResult *result, GError **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* ---- exec: create, start attached, inspect --------------------------------- */

typedef struct
{
  gchar *exec_id;
  gchar *output;
} ExecState;

static void
exec_state_free (ExecState *s)
{
  g_free (s->exec_id);
  g_free (s->output);
  g_free (s);
}

/* The attached stream's frames: [stream, 0, 0, 0, size (big-endian)] then
 * size bytes; those of the streams in @streams (a bit per stream number:
 * 1 << 1 stdout, 1 << 2 stderr) are kept together, up to @max bytes. A
 * body without frame headers (a TTY) is kept as it is. */
static gchar *
demultiplex (GBytes *body, guint streams, gsize max)
{
  gsize len = 0;
  const guint8 *p = g_bytes_get_data (body, &len);
  g_autoptr (GString) out = g_string_new (NULL);
  gsize i = 0;

  while (p != NULL && i + 8 <= len && p[i] <= 2 && p[i + 1] == 0 && p[i + 2] == 0 && p[i + 3] == 0)
    {
      gsize size = ((gsize) p[i + 4] << 24) | ((gsize) p[i + 5] << 16) | ((gsize) p[i + 6] << 8) |
                   p[i + 7];
      gsize take = MIN (size, len - i - 8);
      if (streams & (1u << MAX (p[i], 1)))
        g_string_append_len (out, (const gchar *) p + i + 8,
                             (gssize) MIN (take, max - MIN (out->len, max)));
      i += 8 + take;
    }
  if (i == 0 && p != NULL && len > 0)
    g_string_append_len (out, (const gchar *) p, (gssize) MIN (len, max));
  return g_utf8_make_valid (out->str, (gssize) out->len);
}

static void
exec_inspected (GTask *task, guint status G_GNUC_UNUSED, GBytes *body)
{
  GError *error = NULL;
  g_autoptr (JsonNode) node = stg_docker_parse_body (body, &error);

  if (node == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  JsonObject *o = JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
  if (o == NULL || !json_object_has_member (o, "ExitCode") ||
      json_object_get_boolean_member_with_default (o, "Running", FALSE))
    g_task_return_new_error (task, STG_DOCKER_ERROR, STG_DOCKER_ERROR_INVALID,
                             "the engine has no exit code for the finished exec");
  else
    g_task_return_int (task, json_object_get_int_member (o, "ExitCode"));
}

static void
exec_started (GTask *task, guint status G_GNUC_UNUSED, GBytes *body)
{
  ExecState *s = g_object_get_data (G_OBJECT (task), "exec");
  g_autofree gchar *path = g_strconcat ("/exec/", s->exec_id, "/json", NULL);

  s->output = demultiplex (body, STG_DOCKER_STDOUT | STG_DOCKER_STDERR, EXEC_OUTPUT_MAX);
  stg_docker_request (task, "GET", path, NULL, 0, exec_inspected);
}

static void
exec_created (GTask *task, guint status G_GNUC_UNUSED, GBytes *body)
{
  GError *error = NULL;
  ExecState *s = g_object_get_data (G_OBJECT (task), "exec");

  s->exec_id = reply_id (body, "an exec", &error);
  if (s->exec_id == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  g_autofree gchar *path = g_strconcat ("/exec/", s->exec_id, "/start", NULL);
  g_autoptr (JsonNode) start = json_from_string ("{\"Detach\": false, \"Tty\": false}", NULL);
  stg_docker_request (task, "POST", path, start, 0, exec_started);
}

void
stg_docker_exec_async (StgDocker *d, const gchar *id, const gchar *const *argv,
                       const gchar *const *env, GCancellable *cancellable,
                       GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = stg_docker_new_task (d, cancellable, callback, user_data,
                                                stg_docker_exec_async);
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autofree gchar *path = container_path (id, "/exec");

  g_object_set_data_full (G_OBJECT (task), "exec", g_new0 (ExecState, 1),
                          (GDestroyNotify) exec_state_free);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "Cmd");
  json_builder_begin_array (b);
  for (guint i = 0; argv[i] != NULL; i++)
    json_builder_add_string_value (b, argv[i]);
  json_builder_end_array (b);
  if (env != NULL)
    {
      json_builder_set_member_name (b, "Env");
      json_builder_begin_array (b);
      for (guint i = 0; env[i] != NULL; i++)
        json_builder_add_string_value (b, env[i]);
      json_builder_end_array (b);
    }
  json_builder_set_member_name (b, "AttachStdout");
  json_builder_add_boolean_value (b, TRUE);
  json_builder_set_member_name (b, "AttachStderr");
  json_builder_add_boolean_value (b, TRUE);
  json_builder_end_object (b);
  g_autoptr (JsonNode) spec = json_builder_get_root (b);
  stg_docker_request (task, "POST", path, spec, 0, exec_created);
}

gboolean
stg_docker_exec_finish (StgDocker *d G_GNUC_UNUSED, GAsyncResult *result, gint *exit_code,
                        gchar **output, GError **error)
{
  GError *e = NULL;
  gssize code = g_task_propagate_int (G_TASK (result), &e);

  if (e != NULL)
    {
      g_propagate_error (error, e);
      return FALSE;
    }
  *exit_code = (gint) code;
  if (output != NULL)
    {
      ExecState *s = g_object_get_data (G_OBJECT (result), "exec");
      *output = g_strdup (s->output ? s->output : "");
    }
  return TRUE;
}

/* ---- logs -------------------------------------------------------------------- */

static void
logs_read (GTask *task, guint status G_GNUC_UNUSED, GBytes *body)
{
  guint streams = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (task), "streams"));

  g_task_return_pointer (task, demultiplex (body, streams, STG_DOCKER_LOGS_MAX), g_free);
}

void
stg_docker_logs_async (StgDocker *d, const gchar *id, gint tail, guint streams,
                       GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = stg_docker_new_task (d, cancellable, callback, user_data,
                                                stg_docker_logs_async);
  g_autofree gchar *lines = tail < 0 ? g_strdup ("all") : g_strdup_printf ("%d", tail);
  g_autofree gchar *what = g_strdup_printf ("/logs?stdout=%s&stderr=%s&tail=%s",
                                            streams & STG_DOCKER_STDOUT ? "true" : "false",
                                            streams & STG_DOCKER_STDERR ? "true" : "false", lines);
  g_autofree gchar *path = container_path (id, what);

  g_object_set_data (G_OBJECT (task), "streams", GUINT_TO_POINTER (streams));
  stg_docker_request (task, "GET", path, NULL, 0, logs_read);
}

gchar *
stg_docker_logs_finish (StgDocker *d G_GNUC_UNUSED, GAsyncResult *result, GError **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* ---- archive: one file of a container, out of a tar stream ------------------- */

#define TAR_BLOCK 512

/* A tar header's number: octal digits (ended by NUL or space), or, with
 * the top bit of its first byte set, GNU's base-256; -1 when malformed. */
static gint64
tar_number (const guint8 *field, gsize len)
{
  gint64 n = 0;
  gsize i = 0;

  if (field[0] & 0x80)
    {
      if (field[0] & 0x40)
        return -1; /* negative */
      for (n = field[0] & 0x3f, i = 1; i < len; i++)
        {
          if (n > (G_MAXINT64 >> 8))
            return -1;
          n = (n << 8) | field[i];
        }
      return n;
    }
  while (i < len && field[i] == ' ')
    i++;
  gsize first = i;
  for (; i < len && field[i] >= '0' && field[i] <= '7'; i++)
    {
      if (n > (G_MAXINT64 >> 3))
        return -1;
      n = (n << 3) | (field[i] - '0');
    }
  return i > first && (i == len || field[i] == '\0' || field[i] == ' ') ? n : -1;
}

/* Whether header @h's checksum (its bytes summed, the checksum field as
 * spaces) is the one it records. */
static gboolean
tar_checksum_ok (const guint8 *h)
{
  gint64 sum = 0;

  for (gsize i = 0; i < TAR_BLOCK; i++)
    sum += i >= 148 && i < 156 ? ' ' : h[i];
  return tar_number (h + 148, 8) == sum;
}

/* The bytes of the first regular file in @tar, the archive of @path; a
 * pax or GNU long-name header before it is skipped. */
static GBytes *
tar_regular_file (GBytes *tar, const gchar *path, GError **error)
{
  gsize len = 0;
  const guint8 *p = tar != NULL ? g_bytes_get_data (tar, &len) : NULL;

  for (gsize at = 0; p != NULL && at + TAR_BLOCK <= len && p[at] != 0;)
    {
      const guint8 *h = p + at;
      gint64 size = tar_number (h + 124, 12);
      gsize data = at + TAR_BLOCK;
      if (size < 0 || (guint64) size > len - data || !tar_checksum_ok (h))
        break;
      if (h[156] == '0' || h[156] == '\0' || h[156] == '7')
        return g_bytes_new_from_bytes (tar, data, (gsize) size);
      if (!strchr ("xgLK", h[156]))
        {
          g_set_error (error, STG_DOCKER_ERROR, STG_DOCKER_ERROR_INVALID,
                       "%s is not a regular file", path);
          return NULL;
        }
      at = data + (((gsize) size + TAR_BLOCK - 1) / TAR_BLOCK) * TAR_BLOCK;
    }
  g_set_error (error, STG_DOCKER_ERROR, STG_DOCKER_ERROR_INVALID,
               "the engine's archive of %s holds no file it can read", path);
  return NULL;
}

static void
archive_read (GTask *task, guint status G_GNUC_UNUSED, GBytes *body)
{
  const gchar *path = g_object_get_data (G_OBJECT (task), "path");
  GError *error = NULL;
  GBytes *file = tar_regular_file (body, path, &error);

  if (file == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, file, (GDestroyNotify) g_bytes_unref);
}

void
stg_docker_archive_async (StgDocker *d, const gchar *id, const gchar *path,
                          GCancellable *cancellable, GAsyncReadyCallback callback,
                          gpointer user_data)
{
  g_autoptr (GTask) task = stg_docker_new_task (d, cancellable, callback, user_data,
                                                stg_docker_archive_async);
  g_autofree gchar *url = archive_path (id, path);

  g_object_set_data_full (G_OBJECT (task), "path", g_strdup (path), g_free);
  stg_docker_request (task, "GET", url, NULL, 0, archive_read);
}

GBytes *
stg_docker_archive_finish (StgDocker *d G_GNUC_UNUSED, GAsyncResult *result, GError **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}
