/* webui_pages.c: what the web UI serves that is not JSON: the page, its
 * static files, the HTML 404 and /metrics.
 *
 * Files come from the GResource bundle made from webui/ (or from a
 * directory, for development) with a strong ETag so browsers revalidate
 * cheaply (304). /metrics is metrics.c's text. Main-loop thread only.
 */
#include "config.h"

#include <gio/gio.h>
#include <string.h>

#include "webui/webui_private.h"

/* Made by glib-compile-resources from webui/webui.gresource.xml. */
GResource *stg_webui_get_resource (void);

static const gchar NOT_FOUND_PAGE[] =
    "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
    "<meta name=\"color-scheme\" content=\"light dark\">"
    "<title>Not found - Stagger</title>"
    "<link rel=\"stylesheet\" href=\"/static/app.css\"></head>\n"
    "<body><main id=\"main\"><h1>Not found</h1>"
    "<p>There is no page at this address. <a href=\"/\">See all jobs.</a></p></main>"
    "</body></html>\n";

static void
send_not_found (StgHttpResponse *response)
{
  stg_http_response_set (response, 404, "text/html; charset=utf-8",
                         g_bytes_new_static (NOT_FOUND_PAGE, sizeof NOT_FOUND_PAGE - 1));
}

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

/* "/": the page; any path no other route takes: the HTML 404. */
static void
route_root (StgHttpRequest *request, StgHttpResponse *response, gpointer user_data)
{
  StgWebUi *ui = user_data;
  const gchar *path = stg_http_request_path (request);

  if (!g_str_equal (path, "/") && !g_str_equal (path, "/index.html"))
    {
      send_not_found (response);
      return;
    }
  if (!stg_webui_only_get (request, response, TRUE))
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

  if (!stg_webui_only_get (request, response, TRUE))
    return;
  g_autoptr (GBytes) bytes = load_asset (ui, name);
  if (bytes == NULL || g_str_equal (name, "index.html"))
    {
      send_not_found (response);
      return;
    }
  send_asset (request, response, name, bytes);
}

static void
route_metrics (StgHttpRequest *request, StgHttpResponse *response, gpointer user_data)
{
  StgWebUi *ui = user_data;
  g_autoptr (GError) error = NULL;

  if (ui->ctx.metrics == NULL)
    {
      send_not_found (response);
      return;
    }
  if (!stg_webui_only_get (request, response, TRUE))
    return;
  gchar *text = stg_metrics_render (ui->ctx.metrics, ui->ctx.store, ui->ctx.engine,
                                    ui->ctx.health_counts, ui->ctx.notify_counts, &error);
  if (text == NULL)
    {
      stg_http_response_text (response, 500, error->message);
      return;
    }
  if (ui->ctx.more_metrics != NULL)
    {
      g_autofree gchar *more = ui->ctx.more_metrics (ui->ctx.more_metrics_data);
      gchar *all = g_strconcat (text, more, NULL);
      g_free (text);
      text = all;
    }
  stg_http_response_header (response, "Cache-Control", "no-store");
  stg_http_response_set (response, 200, "text/plain; version=0.0.4; charset=utf-8",
                         g_bytes_new_take (text, strlen (text)));
}

const StgWebUiRoute stg_webui_page_routes[] = {
  { "/", .raw = route_root },
  { "/static/", .raw = route_static },
  { "/metrics", .raw = route_metrics },
  { NULL },
};
