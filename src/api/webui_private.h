/* webui_private.h: what the web UI's files share. Not for use outside
 * src/api/. Main-loop thread only. */
#pragma once

#include <json-glib/json-glib.h>

#include "api/webui.h"

struct _StgWebUi
{
  StgWebUiContext ctx;        /* strings owned */
  gchar *csrf;                /* token a mutating POST must echo in X-Stagger-CSRF */
  gchar *who;                 /* (nullable) the signed-in user of the request being served */
  GPtrArray *routes;          /* Route*: the handlers behind the credentials gate */
  GHashTable *listeners;      /* StgHttpStream* set: open event streams */
  GHashTable *changes;        /* JSON text set: changes waiting to be sent */
  guint flush_id;
  guint heartbeat_id;
};

/* Routes @path to @handler behind the credentials gate (see webui.h);
 * @handler gets the StgWebUi. */
void stg_webui_route (StgWebUi *ui, StgHttpServer *http, const gchar *path, StgHttpHandler handler);

/* Whether the current request's viewer may act on jobs of @role; if not,
 * answers 401 (no credentials: the browser asks for them) or 403. */
gboolean stg_webui_may_act (StgWebUi *ui, StgHttpRequest *request, StgHttpResponse *response,
                            const gchar *role);

/* Answers @root as JSON with @status. */
void stg_webui_send_json (StgHttpResponse *response, guint status, JsonNode *root);

/* Answers {"error": message} with @status. */
void stg_webui_send_error (StgHttpResponse *response, guint status, const gchar *message);

/* Adds the job's active update ({id, status, ...} or null) as a value. */
gboolean stg_webui_add_active_update (StgWebUi *ui, JsonBuilder *b, const ApiJobKey *key,
                                      GError **error);

/* Adds the instance's first named port (a number or null) as a value. */
void stg_webui_add_port (StgWebUi *ui, JsonBuilder *b, StgJobRow *job, gint32 instance_id);

/* Adds the update page's routes (webui_update.c). */
void stg_webui_update_routes (StgWebUi *ui, StgHttpServer *http);

/* Adds the JSON data routes (webui_data.c). */
void stg_webui_data_routes (StgWebUi *ui, StgHttpServer *http);

/* Adds "name": value to the object being built (a NULL string as null);
 * shared by the web UI's JSON builders. */
static inline void
member_string (JsonBuilder *b, const gchar *name, const gchar *value)
{
  json_builder_set_member_name (b, name);
  if (value == NULL)
    json_builder_add_null_value (b);
  else
    json_builder_add_string_value (b, value);
}

static inline void
member_int (JsonBuilder *b, const gchar *name, gint64 value)
{
  json_builder_set_member_name (b, name);
  json_builder_add_int_value (b, value);
}
