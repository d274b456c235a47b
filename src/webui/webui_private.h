/* webui_private.h: what the web UI's files share: the object, the route
 * tables each file exports (webui.c serves them), the answers
 * (webui_answer.c) and the viewer's rights (webui_session.c). Not for use
 * outside src/webui/. Main-loop thread only. */
#pragma once

#include <json-glib/json-glib.h>

#include "webui/webui.h"

/* The update-change long poll (webui_wait.c). */
typedef struct _StgWebUiWaits StgWebUiWaits;

struct _StgWebUi
{
  StgWebUiContext ctx;   /* strings owned */
  gchar *secret;         /* key of the sessions' CSRF tokens (HMAC of the session id) */
  gchar *who;            /* (nullable) the signed-in user of the request being served */
  GPtrArray *routes;     /* the routes bound to the HTTP server */
  GHashTable *listeners; /* StgHttpStream* set: open event streams */
  GHashTable *changes;   /* JSON text set: changes waiting to be sent */
  guint flush_id;
  guint heartbeat_id;
  StgWebUiWaits *waits; /* unanswered long polls and each update's last change */
};

/* ---- routes ------------------------------------------------------------------ */

/* A JSON read (GET or HEAD): builds one JSON value into @b and returns
 * 200, or returns the HTTP status of a failure with @error set. */
typedef guint (*StgWebUiRead) (StgWebUi *ui, StgHttpRequest *request, JsonBuilder *b,
                               GError **error);

/* A control (POST, with the session's CSRF token, from a viewer who may
 * act at all): returns 200 once done ({"ok": true}), or the HTTP status of
 * a failure with @error set. */
typedef guint (*StgWebUiControl) (StgWebUi *ui, StgHttpRequest *request, GError **error);

/* One route; exactly one of read, control and raw is set. A raw handler
 * answers for itself and gets the StgWebUi. Every route sits behind the
 * credentials gate (see webui.h). */
typedef struct
{
  const gchar *path; /* ending in "/": every path under it */
  StgWebUiRead read;
  StgWebUiControl control;
  StgHttpHandler raw;
} StgWebUiRoute;

/* The route tables webui.c serves, each ended by { NULL }: the page and
 * its files (webui_pages.c), the session (webui_session.c), the JSON data
 * (webui_data.c), an update's page (webui_update.c) and timeline
 * (webui_timeline.c), rollout plans
 * (webui_plan.c), the picked instance (webui_instance.c), the long poll
 * (webui_wait.c) and sidecar sets (webui_sidecar.c). */
extern const StgWebUiRoute stg_webui_page_routes[];
extern const StgWebUiRoute stg_webui_session_routes[];
extern const StgWebUiRoute stg_webui_data_routes[];
extern const StgWebUiRoute stg_webui_update_routes[];
extern const StgWebUiRoute stg_webui_timeline_routes[];
extern const StgWebUiRoute stg_webui_plan_routes[];
extern const StgWebUiRoute stg_webui_instance_routes[];
extern const StgWebUiRoute stg_webui_wait_routes[];
extern const StgWebUiRoute stg_webui_sidecar_routes[];

/* ---- answers (webui_answer.c) --------------------------------------------------- */

#define STG_WEBUI_ERROR (stg_webui_error_quark ())
GQuark stg_webui_error_quark (void);

/* Sets @error to the message and returns @status, for a route's failure. */
guint stg_webui_fail (GError **error, guint status, const gchar *format, ...) G_GNUC_PRINTF (3, 4);

/* Answers what @b built, with 200. */
void stg_webui_send_built (StgHttpResponse *response, JsonBuilder *b);

/* Answers {"error": message} with @status; a 401 also asks the browser
 * for credentials (WWW-Authenticate). */
void stg_webui_send_error (StgHttpResponse *response, guint status, const gchar *message);

/* TRUE for GET and HEAD; otherwise answers 405 (JSON, or text when
 * @text) and returns FALSE. */
gboolean stg_webui_only_get (StgHttpRequest *request, StgHttpResponse *response, gboolean text);

/* The HTTP status for an engine refusal: 404 no such thing, 400 bad
 * input, 409 not now (a state or another update in the way), 500 else. */
guint stg_webui_engine_status (const GError *error);

/* The HTTP status for a failed read of the store: 404 or 500. */
guint stg_webui_store_status (const GError *error);

/* Adds members from the fields of Thrift struct @thrift_struct (strings,
 * numbers, booleans, enums by name): @spec lists them, separated by
 * spaces, each as its JSON name in snake_case ("since_ms": the field
 * sinceMs) or as NAME=FIELD ("ts_ms=timestampMs"), then, for an enum,
 * :ENUM (rollout, update, action, schedule: "status:rollout"). An unset
 * string is null. */
void stg_webui_add_fields (JsonBuilder *b, gconstpointer thrift_struct, const gchar *spec);

/* Writes the members of one object of a list (@item: an element). */
typedef void (*StgWebUiMembers) (JsonBuilder *b, gconstpointer item);

/* Adds "@name": [...]: an object for each of the first @max elements of
 * @items, with the members @members writes. */
void stg_webui_add_list (JsonBuilder *b, const gchar *name, GPtrArray *items, guint max,
                         StgWebUiMembers members);

/* The fields of a Condition as the pages show them. */
#define STG_WEBUI_CONDITION_FIELDS \
  "type status reason message last_transition_ms=lastTransitionTimeMs"

/* Adds "@name": [...]: an object for each element of @items, Thrift
 * structs, with the fields @spec names (see stg_webui_add_fields()). */
void stg_webui_add_records (JsonBuilder *b, const gchar *name, GPtrArray *items, const gchar *spec);

/* Adds "offset", "limit" and "more" of a page of a list, and @name: the
 * first @limit elements of @items (which holds one more when there are
 * more). */
void stg_webui_add_page (JsonBuilder *b, gint32 offset, gint32 limit, const gchar *name,
                         GPtrArray *items, StgWebUiMembers members);

/* Adds "usage": what instance @instance of job row @job_id uses and
 * reserves (a figure not measured is null; a resource not reserved 0),
 * or null when nothing of it is measured. */
void stg_webui_add_usage (StgWebUi *ui, JsonBuilder *b, gint64 job_id, gint32 instance);

/* Adds "announce": where instance @instance of job row @job_id is
 * announced in Aurora's ServerSet ({path, member, endpoint, problem}, the
 * last three null when not known), or null when it announces nothing. */
void stg_webui_add_announce (StgWebUi *ui, JsonBuilder *b, gint64 job_id, gint32 instance);

/* Reads a whole number from a query parameter into *@out, left as it is
 * when the parameter is absent or empty; FALSE when it is not a number
 * between 0 and @max. */
gboolean stg_webui_parse_count (const gchar *text, gint64 max, gint32 *out);

/* A job key from the query string (role, environment, name), or NULL
 * with @error (a 400). */
ApiJobKey *stg_webui_query_key (StgHttpRequest *request, GError **error);

/* The update the query string names (role, environment, name, id), or
 * NULL with @error and *@status: 400 for a bad query, 404 for no such
 * update of that job (webui_update.c). */
StgUpdateRow *stg_webui_query_update (StgWebUi *ui, StgHttpRequest *request, guint *status,
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

/* A control's body that is empty or an object of optional strings: each
 * of the @n members named in @names goes to @out[i] (a new string; NULL
 * when absent, null or empty). 200, or 400 with @error. */
guint stg_webui_body_strings (StgHttpRequest *request, guint n, const gchar *const *names,
                              gchar **out, GError **error);

/* A control on a path PREFIX/ID/ACTION: *@id (a new string) and *@action
 * (in the request's path); FALSE with @error (a 404) for another shape. */
gboolean stg_webui_path_control (StgHttpRequest *request, const gchar *prefix, gchar **id,
                                 const gchar **action, GError **error);

/* ---- the viewer (webui_session.c) ------------------------------------------------ */

/* Finds out who asks (ui->who, with auth on; the caller clears it after
 * the request); FALSE after answering 401 for bad credentials, or for none
 * with read_requires_auth. */
gboolean stg_webui_sign_in (StgWebUi *ui, StgHttpRequest *request, StgHttpResponse *response);

/* Whether a control may go on: a POST (else 405) carrying its session's
 * CSRF token in X-Stagger-CSRF (else 403) from a viewer who may act at
 * all (else 401); if not, answered. The roles are the control's to check,
 * once it knows the jobs. */
gboolean stg_webui_control_allowed (StgWebUi *ui, StgHttpRequest *request,
                                    StgHttpResponse *response);

/* 200 when the current request's viewer may act on jobs of @role (NULL:
 * on any job at all); else 401 (no credentials: the browser asks for
 * them) or 403, with @error. */
guint stg_webui_may_act (StgWebUi *ui, const gchar *role, GError **error);

/* Who the current request's changes are recorded as: the signed-in
 * viewer, else "web". */
const gchar *stg_webui_actor (StgWebUi *ui);

/* ---- the long poll (webui_wait.c) -------------------------------------------------- */

StgWebUiWaits *stg_webui_waits_new (void);
void stg_webui_waits_free (StgWebUiWaits *waits);
/* Update @update_id changed (committed): answers its waiting polls. */
void stg_webui_waits_note (StgWebUiWaits *waits, const gchar *update_id);

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
