/* webui.c: StgWebUi: its routes, served behind the credentials gate, and
 * the Server-Sent Events feed.
 *
 * The routes come from the tables of the web UI's files (ROUTE_TABLES);
 * each request first has its viewer found out (webui_session.c), then a
 * JSON read or a control is answered here the same way for every route,
 * and other routes answer for themselves. Announced changes are coalesced
 * for COALESCE_MS and then sent to every open stream as "event: change";
 * a comment line every HEARTBEAT_S keeps proxies from closing idle
 * streams and lets a vanished client be noticed. Main-loop thread only.
 */
#include "config.h"

#include <string.h>

#include "webui/webui_private.h"

#define COALESCE_MS 100
#define HEARTBEAT_S 15

/* A route bound to the HTTP server. */
typedef struct
{
  StgWebUi *ui;
  const StgWebUiRoute *route;
} Bound;

/* ---- serving ---------------------------------------------------------------------- */

/* A JSON read (GET or HEAD only: what it built) or a control (allowed
 * first: {"ok": true}), or its failure. */
static void
answer (StgWebUi *ui, const StgWebUiRoute *route, StgHttpRequest *request,
        StgHttpResponse *response)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (GError) error = NULL;
  guint status;

  if (route->read != NULL ? !stg_webui_only_get (request, response, FALSE)
                          : !stg_webui_control_allowed (ui, request, response))
    return;
  if (route->read != NULL)
    status = route->read (ui, request, b, &error);
  else
    {
      status = route->control (ui, request, &error);
      json_builder_begin_object (b);
      member_bool (b, "ok", TRUE);
      json_builder_end_object (b);
    }
  if (status != 200)
    {
      if (status >= 500)
        g_warning ("webui: %s: %s", route->path, error->message);
      stg_webui_send_error (response, status, error->message);
      return;
    }
  stg_webui_send_built (response, b);
}

/* Finds out who asks, then serves; with read_requires_auth, nobody
 * unknown gets anything. */
static void
serve (StgHttpRequest *request, StgHttpResponse *response, gpointer data)
{
  Bound *bound = data;
  StgWebUi *ui = bound->ui;

  if (!stg_webui_sign_in (ui, request, response))
    return;
  if (bound->route->raw != NULL)
    bound->route->raw (request, response, ui);
  else
    answer (ui, bound->route, request, response);
  g_clear_pointer (&ui->who, g_free);
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

  if (!stg_webui_only_get (request, response, TRUE))
    return;
  stg_http_response_header (response, "Cache-Control", "no-store");
  StgHttpStream *st = stg_http_response_stream (response, "text/event-stream", on_stream_closed,
                                                ui);
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

/* Announces a change to every open page. @kind is "job", "update" or
 * "plan"; @id is the update's or the plan's id (NULL for a job change). */
static void
announce (StgWebUi *ui, const gchar *kind, const gchar *role, const gchar *environment,
          const gchar *name, const gchar *id)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();

  if (g_hash_table_size (ui->listeners) == 0)
    return;
  json_builder_begin_object (b);
  member_string (b, "kind", kind);
  member_string (b, "role", role);
  member_string (b, "environment", environment);
  member_string (b, "name", name);
  if (id != NULL)
    member_string (b, "id", id);
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
    announce (ui, "plan", "", "", "", change->plan_uid);
  if (job == NULL)
    return;
  if (update_uid != NULL)
    stg_webui_waits_note (ui->waits, update_uid);
  announce (ui, "job", job->role, job->environment, job->name, NULL);
  if (update_uid != NULL)
    announce (ui, "update", job->role, job->environment, job->name, update_uid);
}

static const StgWebUiRoute FEED_ROUTES[] = {
  { "/ui/api/events", .raw = route_events },
  { NULL },
};

/* Every route, by file. */
static const StgWebUiRoute *const ROUTE_TABLES[] = {
  stg_webui_page_routes,     stg_webui_session_routes,  FEED_ROUTES,
  stg_webui_data_routes,     stg_webui_update_routes,   stg_webui_plan_routes,
  stg_webui_wait_routes,     stg_webui_instance_routes, stg_webui_sidecar_routes,
  stg_webui_timeline_routes,
};

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

  for (guint t = 0; t < G_N_ELEMENTS (ROUTE_TABLES); t++)
    for (const StgWebUiRoute *route = ROUTE_TABLES[t]; route->path != NULL; route++)
      {
        Bound *bound = g_new (Bound, 1);
        *bound = (Bound){ ui, route };
        g_ptr_array_add (ui->routes, bound);
        stg_http_server_route (http, route->path, serve, bound);
      }
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
