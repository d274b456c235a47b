/* webui.c: StgWebUi: serving the page and its assets, the session, and the
 * Server-Sent Events feed.
 *
 * Assets come from the GResource bundle made from webui/ (or from a
 * directory, for development) with a strong ETag so browsers revalidate
 * cheaply (304). Announced changes are coalesced for COALESCE_MS and then
 * sent to every open stream as "event: change"; a comment line every
 * HEARTBEAT_S keeps proxies from closing idle streams and lets a vanished
 * client be noticed. The JSON data lives in webui_data.c. Main-loop thread
 * only.
 */
#include "config.h"

#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "webui/webui.h"
#include "webui/webui_private.h"
#include "common/json_write.h"

#define COALESCE_MS 100
#define HEARTBEAT_S 15

/* Made by glib-compile-resources from webui/webui.gresource.xml. */
GResource *stg_webui_get_resource (void);

static const gchar NOT_FOUND_PAGE[] =
  "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
  "<meta name=\"color-scheme\" content=\"light dark\">"
  "<title>Not found - Stagger</title>"
  "<link rel=\"stylesheet\" href=\"/static/app.css\"></head>\n"
  "<body><main id=\"main\"><h1>Not found</h1>"
  "<p>There is no page at this address. <a href=\"/\">See all jobs.</a></p></main></body></html>\n";

/* ---- assets ------------------------------------------------------------------ */

static const gchar *
content_type_for (const gchar *name)
{
  if (g_str_has_suffix (name, ".html"))
    return "text/html; charset=utf-8";
  if (g_str_has_suffix (name, ".css"))
    return "text/css; charset=utf-8";
  if (g_str_has_suffix (name, ".js"))
    return "text/javascript; charset=utf-8";
  if (g_str_has_suffix (name, ".svg"))
    return "image/svg+xml";
  return "application/octet-stream";
}

/* The bytes of asset @name ("app.js"), or NULL. Names are checked so a
 * request can never leave the asset folder. */
static GBytes *
load_asset (StgWebUi *ui, const gchar *name)
{
  for (const gchar *p = name; *p; p++)
    if (!(g_ascii_isalnum (*p) || *p == '-' || *p == '_' || *p == '.'))
      return NULL;
  if (name[0] == '\0' || name[0] == '.')
    return NULL;

  if (ui->ctx.assets_dir != NULL)
    {
      g_autofree gchar *path = g_build_filename (ui->ctx.assets_dir, name, NULL);
      gchar *data = NULL;
      gsize len = 0;
      if (!g_file_get_contents (path, &data, &len, NULL))
        return NULL;
      return g_bytes_new_take (data, len);
    }
  g_autofree gchar *path = g_strconcat ("/org/stagger/webui/", name, NULL);
  return g_resource_lookup_data (stg_webui_get_resource (), path, 0, NULL);
}

static gboolean
method_is_read (StgHttpRequest *request, StgHttpResponse *response)
{
  const gchar *m = stg_http_request_method (request);

  if (g_str_equal (m, "GET") || g_str_equal (m, "HEAD"))
    return TRUE;
  stg_http_response_header (response, "Allow", "GET, HEAD");
  stg_http_response_text (response, 405, "method not allowed\n");
  return FALSE;
}

/* Answers @bytes as asset @name, or 304 when the client has it already. */
static void
send_asset (StgHttpRequest *request, StgHttpResponse *response, const gchar *name, GBytes *bytes)
{
  g_autofree gchar *sum = g_compute_checksum_for_bytes (G_CHECKSUM_SHA1, bytes);
  g_autofree gchar *etag = g_strdup_printf ("\"%s\"", sum);
  const gchar *have = stg_http_request_header (request, "If-None-Match");

  stg_http_response_header (response, "ETag", etag);
  stg_http_response_header (response, "Cache-Control", "no-cache");
  stg_http_response_header (response, "X-Content-Type-Options", "nosniff");
  if (have != NULL && strstr (have, etag) != NULL)
    {
      stg_http_response_set (response, 304, NULL, NULL);
      return;
    }
  stg_http_response_set (response, 200, content_type_for (name), g_bytes_ref (bytes));
}

static void
route_root (StgHttpRequest *request, StgHttpResponse *response, gpointer user_data)
{
  StgWebUi *ui = user_data;
  const gchar *path = stg_http_request_path (request);

  if (!g_str_equal (path, "/") && !g_str_equal (path, "/index.html"))
    {
      stg_http_response_set (response, 404, "text/html; charset=utf-8",
                             g_bytes_new_static (NOT_FOUND_PAGE, sizeof NOT_FOUND_PAGE - 1));
      return;
    }
  if (!method_is_read (request, response))
    return;
  g_autoptr (GBytes) page = load_asset (ui, "index.html");
  if (page == NULL)
    {
      stg_http_response_text (response, 500, "the web UI's page is missing\n");
      return;
    }
  send_asset (request, response, "index.html", page);
}

static void
route_static (StgHttpRequest *request, StgHttpResponse *response, gpointer user_data)
{
  StgWebUi *ui = user_data;
  const gchar *name = stg_http_request_path (request) + strlen ("/static/");

  if (!method_is_read (request, response))
    return;
  g_autoptr (GBytes) bytes = load_asset (ui, name);
  if (bytes == NULL || g_str_equal (name, "index.html"))
    {
      stg_http_response_set (response, 404, "text/html; charset=utf-8",
                             g_bytes_new_static (NOT_FOUND_PAGE, sizeof NOT_FOUND_PAGE - 1));
      return;
    }
  send_asset (request, response, name, bytes);
}

/* ---- JSON answers --------------------------------------------------------------- */

void
stg_webui_send_json (StgHttpResponse *response, guint status, JsonNode *root)
{
  gsize len = 0;
  gchar *text = stg_json_write (root, FALSE, &len);

  stg_http_response_header (response, "Cache-Control", "no-store");
  stg_http_response_header (response, "X-Content-Type-Options", "nosniff");
  stg_http_response_set (response, status, "application/json; charset=utf-8",
                         g_bytes_new_take (text, len));
}

void
stg_webui_send_error (StgHttpResponse *response, guint status, const gchar *message)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "error");
  json_builder_add_string_value (b, message);
  json_builder_end_object (b);
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  stg_webui_send_json (response, status, root);
}

/* The HTTP status for an engine refusal. */
guint
stg_webui_engine_status (const GError *error)
{
  if (error->domain != STG_ENGINE_ERROR)
    return 500;
  switch (error->code)
    {
    case STG_ENGINE_ERROR_NOT_FOUND:
      return 404;
    case STG_ENGINE_ERROR_INVALID:
      return 400;
    case STG_ENGINE_ERROR_STATE:
    case STG_ENGINE_ERROR_ACTIVE_UPDATE:
    case STG_ENGINE_ERROR_UPDATING:
      return 409;
    default:
      return 500;
    }
}

void
stg_webui_send_ok (StgHttpResponse *response)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "ok");
  json_builder_add_boolean_value (b, TRUE);
  json_builder_end_object (b);
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  stg_webui_send_json (response, 200, root);
}

/* ---- sessions and their CSRF tokens ------------------------------------------------ */

/* The token of session @id: an HMAC of it under the process's secret, so
 * a token is good for one browser's session only and needs no table. */
static gchar *
csrf_token (StgWebUi *ui, const gchar *id)
{
  return g_compute_hmac_for_string (G_CHECKSUM_SHA256, (const guchar *) ui->secret,
                                    strlen (ui->secret), id, -1);
}

/* A session id as this server makes them: 32 hex digits. */
static gboolean
session_id_valid (const gchar *id)
{
  if (id == NULL || strlen (id) != 32)
    return FALSE;
  for (const gchar *p = id; *p; p++)
    if (!g_ascii_isxdigit (*p))
      return FALSE;
  return TRUE;
}

gboolean
stg_webui_csrf_ok (StgWebUi *ui, StgHttpRequest *request)
{
  const gchar *id = stg_http_request_cookie (request, STG_WEBUI_SESSION_COOKIE);
  const gchar *token = stg_http_request_header (request, "X-Stagger-CSRF");

  if (!session_id_valid (id) || token == NULL)
    return FALSE;
  g_autofree gchar *want = csrf_token (ui, id);
  gsize n = strlen (want);
  if (strlen (token) != n)
    return FALSE;
  guchar diff = 0;
  for (gsize i = 0; i < n; i++)   /* the same time whatever the first wrong byte */
    diff |= (guchar) (want[i] ^ token[i]);
  return diff == 0;
}

gboolean
stg_webui_control_allowed (StgWebUi *ui, StgHttpRequest *request, StgHttpResponse *response)
{
  if (!g_str_equal (stg_http_request_method (request), "POST"))
    {
      stg_http_response_header (response, "Allow", "POST");
      stg_webui_send_error (response, 405, "use POST");
      return FALSE;
    }
  if (!stg_webui_csrf_ok (ui, request))
    {
      stg_webui_send_error (response, 403,
                            "missing or wrong X-Stagger-CSRF token for this session");
      return FALSE;
    }
  return stg_webui_may_act (ui, request, response, NULL);
}

/* The request's session id, or a new one set as a cookie on @response. */
static gchar *
session_id (StgHttpRequest *request, StgHttpResponse *response)
{
  const gchar *id = stg_http_request_cookie (request, STG_WEBUI_SESSION_COOKIE);

  if (session_id_valid (id))
    return g_strdup (id);
  /* 122 random bits: a UUID's hex digits. */
  g_autofree gchar *uuid = g_uuid_string_random ();
  gchar *fresh = g_new0 (gchar, 33);
  for (gsize i = 0, n = 0; uuid[i] != '\0'; i++)
    if (uuid[i] != '-')
      fresh[n++] = uuid[i];
  g_autofree gchar *cookie = g_strdup_printf ("%s=%s; Path=/; HttpOnly; SameSite=Strict",
                                              STG_WEBUI_SESSION_COOKIE, fresh);
  stg_http_response_header (response, "Set-Cookie", cookie);
  return fresh;
}

static void
route_session (StgHttpRequest *request, StgHttpResponse *response, gpointer user_data)
{
  StgWebUi *ui = user_data;
  g_autoptr (JsonBuilder) b = json_builder_new ();

  if (!method_is_read (request, response))
    return;
  g_autofree gchar *id = session_id (request, response);
  g_autofree gchar *csrf = csrf_token (ui, id);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "cluster");
  json_builder_add_string_value (b, ui->ctx.cluster);
  gboolean auth = stg_auth_enabled (ui->ctx.auth);
  json_builder_set_member_name (b, "user");
  if (ui->who != NULL)
    json_builder_add_string_value (b, ui->who);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "auth");
  json_builder_add_boolean_value (b, auth);
  json_builder_set_member_name (b, "can_act");
  json_builder_add_boolean_value (b, !auth || ui->who != NULL);
  json_builder_set_member_name (b, "csrf");
  json_builder_add_string_value (b, csrf);
  json_builder_end_object (b);
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  stg_webui_send_json (response, 200, root);
}

/* /ui/login: asks the browser for credentials until they are good. */
static void
route_login (StgHttpRequest *request, StgHttpResponse *response, gpointer user_data)
{
  StgWebUi *ui = user_data;

  if (!method_is_read (request, response))
    return;
  if (stg_webui_may_act (ui, request, response, NULL))
    {
      stg_http_response_header (response, "Location", "/");
      stg_http_response_text (response, 303, "signed in\n");
    }
}

/* ---- credentials ------------------------------------------------------------------ */

typedef struct
{
  StgWebUi *ui;
  StgHttpHandler handler;
} Route;

static void
ask_credentials (StgHttpResponse *response, const gchar *why)
{
  stg_http_response_header (response, "WWW-Authenticate", "Basic realm=\"stagger\", charset=\"UTF-8\"");
  stg_webui_send_error (response, 401, why);
}

/* Finds out who asks, then serves; with read_requires_auth, nobody
 * unknown gets anything. */
static void
gate (StgHttpRequest *request, StgHttpResponse *response, gpointer data)
{
  Route *r = data;
  StgWebUi *ui = r->ui;
  g_autoptr (GError) error = NULL;

  if (stg_auth_enabled (ui->ctx.auth))
    {
      const gchar *header = stg_http_request_header (request, "Authorization");
      ui->who = header ? stg_auth_check_header (ui->ctx.auth, header, stg_http_request_peer (request),
                                                &error) : NULL;
      if (ui->who == NULL && (header != NULL || stg_auth_read_requires_auth (ui->ctx.auth)))
        {
          ask_credentials (response, error ? error->message : "authentication required");
          return;
        }
    }
  r->handler (request, response, ui);
  g_clear_pointer (&ui->who, g_free);
}

void
stg_webui_route (StgWebUi *ui, StgHttpServer *http, const gchar *path, StgHttpHandler handler)
{
  Route *r = g_new (Route, 1);

  r->ui = ui;
  r->handler = handler;
  g_ptr_array_add (ui->routes, r);
  stg_http_server_route (http, path, gate, r);
}

gboolean
stg_webui_may_act (StgWebUi *ui, StgHttpRequest *request, StgHttpResponse *response,
                   const gchar *role)
{
  (void) request;
  if (!stg_auth_enabled (ui->ctx.auth))
    return TRUE;
  if (ui->who == NULL)
    {
      ask_credentials (response, "sign in to change updates");
      return FALSE;
    }
  if (role != NULL && !stg_auth_user_may (ui->ctx.auth, ui->who, role))
    {
      g_autofree gchar *why = g_strdup_printf ("user %s may not change jobs of role %s", ui->who, role);
      stg_webui_send_error (response, 403, why);
      return FALSE;
    }
  return TRUE;
}

/* ---- /metrics -------------------------------------------------------------------- */

static void
route_metrics (StgHttpRequest *request, StgHttpResponse *response, gpointer user_data)
{
  StgWebUi *ui = user_data;
  g_autoptr (GError) error = NULL;

  if (!method_is_read (request, response))
    return;
  gchar *text = stg_metrics_render (ui->ctx.metrics, ui->ctx.store, ui->ctx.engine, &error);
  if (text == NULL)
    {
      stg_http_response_text (response, 500, error->message);
      return;
    }
  stg_http_response_header (response, "Cache-Control", "no-store");
  stg_http_response_set (response, 200, "text/plain; version=0.0.4; charset=utf-8",
                         g_bytes_new_take (text, strlen (text)));
}

/* ---- the change feed -------------------------------------------------------------- */

static void
on_stream_closed (StgHttpStream *stream, gpointer data)
{
  StgWebUi *ui = data;
  g_hash_table_remove (ui->listeners, stream);
}

static void
route_events (StgHttpRequest *request, StgHttpResponse *response, gpointer user_data)
{
  StgWebUi *ui = user_data;
  static const gchar hello[] = "retry: 2000\n: connected\n\n";

  if (!method_is_read (request, response))
    return;
  stg_http_response_header (response, "Cache-Control", "no-store");
  StgHttpStream *st = stg_http_response_stream (response, "text/event-stream", on_stream_closed, ui);
  g_hash_table_add (ui->listeners, st);
  stg_http_stream_send (st, hello, sizeof hello - 1);
}

static void
broadcast (StgWebUi *ui, const gchar *text)
{
  GHashTableIter it;
  gpointer key;
  gsize len = strlen (text);

  g_hash_table_iter_init (&it, ui->listeners);
  while (g_hash_table_iter_next (&it, &key, NULL))
    stg_http_stream_send (key, text, len);
}

static gboolean
flush_changes (gpointer user_data)
{
  StgWebUi *ui = user_data;
  GHashTableIter it;
  gpointer key;
  g_autoptr (GString) out = g_string_new (NULL);

  ui->flush_id = 0;
  g_hash_table_iter_init (&it, ui->changes);
  while (g_hash_table_iter_next (&it, &key, NULL))
    g_string_append_printf (out, "event: change\ndata: %s\n\n", (const gchar *) key);
  g_hash_table_remove_all (ui->changes);
  if (out->len > 0)
    broadcast (ui, out->str);
  return G_SOURCE_REMOVE;
}

static gboolean
heartbeat (gpointer user_data)
{
  broadcast (user_data, ": ping\n\n");
  return G_SOURCE_CONTINUE;
}

void
stg_webui_announce (StgWebUi *ui, const gchar *kind, const gchar *role, const gchar *environment,
                    const gchar *name, const gchar *id)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();

  if (g_hash_table_size (ui->listeners) == 0)
    return;
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "kind");
  json_builder_add_string_value (b, kind);
  json_builder_set_member_name (b, "role");
  json_builder_add_string_value (b, role);
  json_builder_set_member_name (b, "environment");
  json_builder_add_string_value (b, environment);
  json_builder_set_member_name (b, "name");
  json_builder_add_string_value (b, name);
  if (id != NULL)
    {
      json_builder_set_member_name (b, "id");
      json_builder_add_string_value (b, id);
    }
  json_builder_end_object (b);
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  g_hash_table_add (ui->changes, json_generator_to_data (gen, NULL));
  if (ui->flush_id == 0)
    ui->flush_id = g_timeout_add (COALESCE_MS, flush_changes, ui);
}

/* The engine committed a change: tell the open pages. */
static void
on_engine_change (gpointer data, const StgEngineChange *change)
{
  StgWebUi *ui = data;
  const ApiJobKey *job = change->job;
  const gchar *update_uid = change->update_uid;

  if (change->plan_uid != NULL)
    stg_webui_announce (ui, "plan", "", "", "", change->plan_uid);
  if (job == NULL)
    return;
  if (update_uid != NULL)
    stg_webui_waits_note (ui->waits, update_uid);
  stg_webui_announce (ui, "job", job->role, job->environment, job->name, NULL);
  if (update_uid != NULL)
    stg_webui_announce (ui, "update", job->role, job->environment, job->name, update_uid);
}

/* ---- construction ---------------------------------------------------------------- */

StgWebUi *
stg_webui_new (StgHttpServer *http, const StgWebUiContext *context)
{
  StgWebUi *ui = g_new0 (StgWebUi, 1);

  ui->ctx = *context;
  ui->ctx.assets_dir = g_strdup (context->assets_dir);
  ui->ctx.cluster = g_strdup (context->cluster);
  g_autofree gchar *key1 = g_uuid_string_random (), *key2 = g_uuid_string_random ();
  ui->secret = g_strconcat (key1, key2, NULL);
  ui->routes = g_ptr_array_new_with_free_func (g_free);
  ui->listeners = g_hash_table_new (NULL, NULL);
  ui->changes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  ui->heartbeat_id = g_timeout_add_seconds (HEARTBEAT_S, heartbeat, ui);
  ui->waits = stg_webui_waits_new ();

  stg_webui_route (ui, http, "/", route_root);
  stg_webui_route (ui, http, "/static/", route_static);
  stg_webui_route (ui, http, "/ui/api/session", route_session);
  stg_webui_route (ui, http, "/ui/api/events", route_events);
  stg_webui_route (ui, http, "/ui/login", route_login);
  stg_webui_data_routes (ui, http);
  stg_webui_update_routes (ui, http);
  stg_webui_plan_routes (ui, http);
  stg_webui_wait_routes (ui, http);
  stg_webui_instance_routes (ui, http);
  if (ui->ctx.metrics != NULL)
    stg_webui_route (ui, http, "/metrics", route_metrics);
  if (ui->ctx.engine != NULL)
    stg_engine_add_watcher (ui->ctx.engine, on_engine_change, ui);
  return ui;
}

void
stg_webui_free (StgWebUi *ui)
{
  if (ui == NULL)
    return;
  g_clear_handle_id (&ui->flush_id, g_source_remove);
  g_clear_handle_id (&ui->heartbeat_id, g_source_remove);
  /* The HTTP server is freed first and closes every stream, so this is
   * normally empty; a stream still open must not call back into us. */
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init (&it, ui->listeners);
  while (g_hash_table_iter_next (&it, &key, NULL))
    stg_http_stream_detach (key);
  g_hash_table_unref (ui->listeners);
  g_hash_table_unref (ui->changes);
  stg_webui_waits_free (ui->waits);
  g_free (ui->secret);
  g_ptr_array_unref (ui->routes);
  g_free ((gchar *) ui->ctx.assets_dir);
  g_free ((gchar *) ui->ctx.cluster);
  g_free (ui);
}
