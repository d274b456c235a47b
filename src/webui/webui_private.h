/* webui_private.h: what the web UI's files share. Not for use outside
 * src/api/. Main-loop thread only. */
#pragma once

#include <json-glib/json-glib.h>

#include "webui/webui.h"

/* The update-change long poll (webui_wait.c). */
typedef struct _StgWebUiWaits StgWebUiWaits;

struct _StgWebUi
{
  StgWebUiContext ctx;        /* strings owned */
  gchar *secret;              /* key of the sessions' CSRF tokens (HMAC of the session id) */
  gchar *who;                 /* (nullable) the signed-in user of the request being served */
  GPtrArray *routes;          /* Route*: the handlers behind the credentials gate */
  GHashTable *listeners;      /* StgHttpStream* set: open event streams */
  GHashTable *changes;        /* JSON text set: changes waiting to be sent */
  guint flush_id;
  guint heartbeat_id;
  StgWebUiWaits *waits; /* unanswered long polls and each update's last change */
};

/* Routes @path to @handler behind the credentials gate (see webui.h);
 * @handler gets the StgWebUi. */
void stg_webui_route (StgWebUi *ui, StgHttpServer *http, const gchar *path, StgHttpHandler handler);

/* The cookie naming a browser's session; /ui/api/session sets it. */
#define STG_WEBUI_SESSION_COOKIE "stagger_session"

/* Whether the request carries its session's CSRF token in X-Stagger-CSRF
 * (the one /ui/api/session gave that session's page). */
gboolean stg_webui_csrf_ok (StgWebUi *ui, StgHttpRequest *request);

/* Whether the current request's viewer may act on jobs of @role; if not,
 * answers 401 (no credentials: the browser asks for them) or 403. */
gboolean stg_webui_may_act (StgWebUi *ui, StgHttpRequest *request, StgHttpResponse *response,
                            const gchar *role);

/* Whether a control may go on: a POST (else 405) carrying its session's
 * CSRF token (else 403) from a viewer who may act at all (else 401); the
 * roles are the control's to check, once it knows the jobs. */
gboolean stg_webui_control_allowed (StgWebUi *ui, StgHttpRequest *request,
                                    StgHttpResponse *response);

/* A job key from the query string (role, environment, name), or NULL
 * after answering 400. */
ApiJobKey *stg_webui_query_key (StgHttpRequest *request, StgHttpResponse *response);

/* TRUE for GET and HEAD; otherwise answers 405. */
gboolean stg_webui_only_get (StgHttpRequest *request, StgHttpResponse *response);

/* Adds the instance panel's routes (webui_instance.c). */
void stg_webui_instance_routes (StgWebUi *ui, StgHttpServer *http);

/* Answers @root as JSON with @status. */
void stg_webui_send_json (StgHttpResponse *response, guint status, JsonNode *root);

/* Answers {"error": message} with @status. */
void stg_webui_send_error (StgHttpResponse *response, guint status, const gchar *message);

/* Answers {"ok": true}: a control did what it was asked. */
void stg_webui_send_ok (StgHttpResponse *response);

/* The HTTP status for an engine refusal: 404 no such thing, 400 bad
 * input, 409 not now (a state or another update in the way), 500 else. */
guint stg_webui_engine_status (const GError *error);

/* Reads a whole number from a query parameter into *@out, left as it is
 * when the parameter is absent or empty; FALSE when it is not a number
 * between 0 and @max. */
gboolean stg_webui_parse_count (const gchar *text, gint64 max, gint32 *out);

/* Adds the job's active update ({id, status, ...} or null) as a value. */
gboolean stg_webui_add_active_update (StgWebUi *ui, JsonBuilder *b, const ApiJobKey *key,
                                      GError **error);

/* A web UI control's body: {role, environment, name, id, message?}. */
typedef struct
{
  ApiJobKey *job;
  gchar *id;
  gchar *message; /* (nullable): NULL when absent or empty */
} StgWebUiAction;

/* Parses a control's body (@len bytes of @data, nesting bounded before
 * json-glib sees it) into @action, which the caller clears with
 * stg_webui_action_clear() whatever the result. */
gboolean stg_webui_action_parse (const gchar *data, gsize len, StgWebUiAction *action,
                                 GError **error);
void stg_webui_action_clear (StgWebUiAction *action);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (StgWebUiAction, stg_webui_action_clear)

/* A control's body loaded into @parser (@len bytes of @data, nesting
 * bounded before json-glib sees it): its root object, owned by @parser,
 * or NULL with @error when the body is not a JSON object. */
JsonObject *stg_webui_body_object (JsonParser *parser, const gchar *data, gsize len,
                                   GError **error);

/* The string member @name of @o, or NULL (absent, or not a string). */
const gchar *stg_webui_string_member (JsonObject *o, const gchar *name);

/* Adds the update page's routes (webui_update.c). */
void stg_webui_update_routes (StgWebUi *ui, StgHttpServer *http);

/* Adds the rollout plan pages' routes (webui_plan.c). */
void stg_webui_plan_routes (StgWebUi *ui, StgHttpServer *http);

StgWebUiWaits *stg_webui_waits_new (void);
void stg_webui_waits_free (StgWebUiWaits *waits);
/* Update @update_id changed (committed): answers its waiting polls. */
void stg_webui_waits_note (StgWebUiWaits *waits, const gchar *update_id);
/* Adds /ui/api/wait. */
void stg_webui_wait_routes (StgWebUi *ui, StgHttpServer *http);

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

static inline void
member_bool (JsonBuilder *b, const gchar *name, gboolean value)
{
  json_builder_set_member_name (b, name);
  json_builder_add_boolean_value (b, value);
}
