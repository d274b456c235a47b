/* webui_private.h: what the web UI's files share. Not for use outside
 * src/api/. Main-loop thread only. */
#pragma once

#include <json-glib/json-glib.h>

#include "api/webui.h"

struct _StgWebUi
{
  StgWebUiContext ctx;        /* strings owned */
  gchar *csrf;                /* token a mutating POST must echo in X-Stagger-CSRF */
  gboolean can_act;           /* whether this viewer may pause, resume, abort, roll back */
  gchar *user;                /* (nullable) who the page acts as in update events */
  GHashTable *listeners;      /* StgHttpStream* set: open event streams */
  GHashTable *changes;        /* JSON text set: changes waiting to be sent */
  guint flush_id;
  guint heartbeat_id;
};

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
