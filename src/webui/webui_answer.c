/* webui_answer.c: how the web UI answers and reads what it is sent: JSON
 * answers and errors, the HTTP status for a failure of the engine or the
 * store, numbers and job keys of the query string, and control bodies
 * (nesting bounded before json-glib sees them). Calls the HTTP server,
 * common's JSON writer and depth check. Main-loop thread only.
 */
#include "config.h"

#include <gio/gio.h>
#include <string.h>

#include "common/enums.h"
#include "common/jobkey.h"
#include "common/json_check.h"
#include "common/json_write.h"
#include "webui/webui_private.h"

G_DEFINE_QUARK (stg-webui-error-quark, stg_webui_error)

guint
stg_webui_fail (GError **error, guint status, const gchar *format, ...)
{
  va_list ap;

  va_start (ap, format);
  g_propagate_error (error, g_error_new_valist (STG_WEBUI_ERROR, (gint) status, format, ap));
  va_end (ap);
  return status;
}

/* ---- answers ------------------------------------------------------------------------ */

/* Answers @root as JSON with @status. */
static void
send_json (StgHttpResponse *response, guint status, JsonNode *root)
{
  gsize len = 0;
  gchar *text = stg_json_write (root, FALSE, &len);

  stg_http_response_header (response, "Cache-Control", "no-store");
  stg_http_response_header (response, "X-Content-Type-Options", "nosniff");
  stg_http_response_set (response, status, "application/json; charset=utf-8",
                         g_bytes_new_take (text, len));
}

void
stg_webui_send_built (StgHttpResponse *response, JsonBuilder *b)
{
  g_autoptr (JsonNode) root = json_builder_get_root (b);

  send_json (response, 200, root);
}

void
stg_webui_send_error (StgHttpResponse *response, guint status, const gchar *message)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  if (status == 401)
    stg_http_response_header (response, "WWW-Authenticate",
                              "Basic realm=\"stagger\", charset=\"UTF-8\"");
  json_builder_begin_object (b);
  member_string (b, "error", message);
  json_builder_end_object (b);
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  send_json (response, status, root);
}

/* "since_ms" -> "sinceMs". */
static gchar *
camel_case (const gchar *name)
{
  GString *out = g_string_new (NULL);

  for (const gchar *p = name; *p != '\0'; p++)
    if (*p == '_' && p[1] != '\0')
      g_string_append_c (out, g_ascii_toupper (*++p));
    else
      g_string_append_c (out, *p);
  return g_string_free (out, FALSE);
}

/* The names of the values of the enums stg_webui_add_fields() knows. */
static const struct
{
  const gchar *name;
  const gchar *(*value_name) (gint value);
} ENUMS[] = {
  { "rollout", stg_rollout_status_name },       { "update", stg_update_status_name },
  { "action", stg_update_action_name },         { "schedule", stg_schedule_status_name },
  { "maintenance", stg_maintenance_mode_name },
};

/* The name of @value of enum @kind. */
static const gchar *
enum_name (const gchar *kind, gint value)
{
  for (guint i = 0; i < G_N_ELEMENTS (ENUMS); i++)
    if (g_str_equal (ENUMS[i].name, kind))
      return ENUMS[i].value_name (value);
  g_error ("webui: no enum named %s", kind);
}

void
stg_webui_add_fields (JsonBuilder *b, gconstpointer thrift_struct, const gchar *spec)
{
  g_auto (GStrv) words = g_strsplit (spec, " ", -1);

  for (guint i = 0; words[i] != NULL; i++)
    {
      gchar *kind = strchr (words[i], ':');
      if (kind != NULL)
        *kind++ = '\0';
      gchar *eq = strchr (words[i], '=');
      if (eq != NULL)
        *eq = '\0';
      g_autofree gchar *field = eq != NULL ? g_strdup (eq + 1) : camel_case (words[i]);
      g_auto (GValue) value = G_VALUE_INIT;
      g_object_get_property (G_OBJECT (thrift_struct), field, &value);
      if (kind != NULL && G_VALUE_HOLDS_INT (&value))
        member_string (b, words[i], enum_name (kind, g_value_get_int (&value)));
      else if (G_VALUE_HOLDS_STRING (&value))
        member_string (b, words[i], g_value_get_string (&value));
      else if (G_VALUE_HOLDS_BOOLEAN (&value))
        member_bool (b, words[i], g_value_get_boolean (&value));
      else if (G_VALUE_HOLDS_INT (&value))
        member_int (b, words[i], g_value_get_int (&value));
      else if (G_VALUE_HOLDS_INT64 (&value))
        member_int (b, words[i], g_value_get_int64 (&value));
      else
        g_error ("webui: %s has no string, number or boolean field %s",
                 G_OBJECT_TYPE_NAME (thrift_struct), field);
    }
}

void
stg_webui_add_list (JsonBuilder *b, const gchar *name, GPtrArray *items, guint max,
                    StgWebUiMembers members)
{
  json_builder_set_member_name (b, name);
  json_builder_begin_array (b);
  for (guint i = 0; i < items->len && i < max; i++)
    {
      json_builder_begin_object (b);
      members (b, items->pdata[i]);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

void
stg_webui_add_records (JsonBuilder *b, const gchar *name, GPtrArray *items, const gchar *spec)
{
  json_builder_set_member_name (b, name);
  json_builder_begin_array (b);
  for (guint i = 0; i < items->len; i++)
    {
      json_builder_begin_object (b);
      stg_webui_add_fields (b, items->pdata[i], spec);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

void
stg_webui_add_page (JsonBuilder *b, gint32 offset, gint32 limit, const gchar *name,
                    GPtrArray *items, StgWebUiMembers members)
{
  member_int (b, "offset", offset);
  member_int (b, "limit", limit);
  member_bool (b, "more", items->len > (guint) limit);
  stg_webui_add_list (b, name, items, (guint) limit, members);
}

gboolean
stg_webui_only_get (StgHttpRequest *request, StgHttpResponse *response, gboolean text)
{
  const gchar *m = stg_http_request_method (request);

  if (g_str_equal (m, "GET") || g_str_equal (m, "HEAD"))
    return TRUE;
  stg_http_response_header (response, "Allow", "GET, HEAD");
  if (text)
    stg_http_response_text (response, 405, "method not allowed\n");
  else
    stg_webui_send_error (response, 405, "method not allowed");
  return FALSE;
}

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

guint
stg_webui_store_status (const GError *error)
{
  return g_error_matches (error, STG_STORE_ERROR, STG_STORE_ERROR_NOT_FOUND) ? 404 : 500;
}

/* ---- the query string --------------------------------------------------------------- */

/* Adds "@name": @value, or null when it is negative (not measured). */
static void
member_measured (JsonBuilder *b, const gchar *name, gint64 value)
{
  json_builder_set_member_name (b, name);
  if (value < 0)
    json_builder_add_null_value (b);
  else
    json_builder_add_int_value (b, value);
}

void
stg_webui_add_usage (StgWebUi *ui, JsonBuilder *b, gint64 job_id, gint32 instance)
{
  StgInstanceUsage u;

  json_builder_set_member_name (b, "usage");
  if (ui->ctx.engine == NULL || !stg_engine_instance_usage (ui->ctx.engine, job_id, instance, &u))
    {
      json_builder_add_null_value (b);
      return;
    }
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "cpus_used");
  if (u.cpus_used < 0)
    json_builder_add_null_value (b);
  else
    json_builder_add_double_value (b, u.cpus_used);
  json_builder_set_member_name (b, "cpus");
  json_builder_add_double_value (b, u.cpus);
  member_measured (b, "memory_bytes", u.memory);
  member_measured (b, "rss_bytes", u.rss);
  member_int (b, "ram_bytes", u.ram);
  member_measured (b, "disk_bytes", u.disk);
  member_int (b, "disk_reserved_bytes", u.disk_reserved);
  member_measured (b, "throttled_ms", u.throttled_ms);
  member_measured (b, "oom_kills", u.oom_kills);
  json_builder_end_object (b);
}

void
stg_webui_add_announce (StgWebUi *ui, JsonBuilder *b, gint64 job_id, gint32 instance)
{
  g_auto (StgAnnouncement) a = { 0 };

  json_builder_set_member_name (b, "announce");
  if (ui->ctx.engine == NULL ||
      !stg_engine_instance_announcement (ui->ctx.engine, job_id, instance, &a))
    {
      json_builder_add_null_value (b);
      return;
    }
  json_builder_begin_object (b);
  member_string (b, "path", a.path);
  member_string (b, "member", a.member);
  member_string (b, "endpoint", a.endpoint);
  member_string (b, "problem", a.problem);
  json_builder_end_object (b);
}

gboolean
stg_webui_parse_count (const gchar *text, gint64 max, gint32 *out)
{
  gchar *end = NULL;
  gint64 v;

  if (text == NULL || text[0] == '\0')
    return TRUE;
  v = g_ascii_strtoll (text, &end, 10);
  if (*end != '\0' || v < 0 || v > max)
    return FALSE;
  *out = (gint32) v;
  return TRUE;
}

ApiJobKey *
stg_webui_query_key (StgHttpRequest *request, GError **error)
{
  g_autoptr (ApiJobKey) key = stg_job_key_new (stg_http_request_query (request, "role"),
                                               stg_http_request_query (request, "environment"),
                                               stg_http_request_query (request, "name"));

  if (!stg_job_key_check (key, "query", error))
    return NULL;
  return g_steal_pointer (&key);
}

/* ---- control bodies ----------------------------------------------------------------- */

/* The string member @name of @o, or NULL (absent, or not a string). */
static const gchar *
string_member (JsonObject *o, const gchar *name)
{
  JsonNode *n = json_object_get_member (o, name);
  return n != NULL && JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING
             ? json_node_get_string (n)
             : NULL;
}

/* A control's body loaded into @parser (@len bytes of @data, nesting
 * bounded before json-glib sees it): its root object, owned by @parser,
 * or NULL with @error when the body is not a JSON object. */
static JsonObject *
body_object (JsonParser *parser, const gchar *data, gsize len, GError **error)
{
  if (!stg_json_check_depth (data, (gssize) len, STG_JSON_NESTING_MAX, error))
    return NULL;
  if (!json_parser_load_from_data (parser, data ? data : "", (gssize) len, NULL) ||
      !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "the body must be a JSON object");
      return NULL;
    }
  return json_node_get_object (json_parser_get_root (parser));
}

guint
stg_webui_body_strings (StgHttpRequest *request, guint n, const gchar *const *names, gchar **out,
                        GError **error)
{
  g_autoptr (GBytes) body = stg_http_request_body (request);
  g_autoptr (JsonParser) parser = json_parser_new ();
  gsize len = 0;
  const gchar *data = body ? g_bytes_get_data (body, &len) : NULL;

  for (guint i = 0; i < n; i++)
    out[i] = NULL;
  if (len == 0)
    return 200;
  JsonObject *o = body_object (parser, data, len, error);
  if (o == NULL)
    return 400;
  for (guint i = 0; i < n; i++)
    {
      JsonNode *node = json_object_get_member (o, names[i]);
      const gchar *text = string_member (o, names[i]);
      if (node != NULL && !JSON_NODE_HOLDS_NULL (node) && text == NULL)
        return stg_webui_fail (error, 400, "body.%s must be a string", names[i]);
      out[i] = text != NULL && text[0] != '\0' ? g_strdup (text) : NULL;
    }
  return 200;
}

gboolean
stg_webui_path_control (StgHttpRequest *request, const gchar *prefix, gchar **id,
                        const gchar **action, GError **error)
{
  const gchar *path = stg_http_request_path (request);
  const gchar *rest = g_str_has_prefix (path, prefix) ? path + strlen (prefix) : "";
  const gchar *slash = strrchr (rest, '/');

  if (slash == NULL || slash == rest || slash[1] == '\0' ||
      memchr (rest, '/', (gsize) (slash - rest)) != NULL)
    {
      stg_webui_fail (error, 404, "no such control: use %sID/ACTION", prefix);
      return FALSE;
    }
  *id = g_strndup (rest, (gsize) (slash - rest));
  *action = slash + 1;
  return TRUE;
}

void
stg_webui_action_clear (StgWebUiAction *action)
{
  g_clear_object (&action->job);
  g_clear_pointer (&action->id, g_free);
  g_clear_pointer (&action->message, g_free);
}

gboolean
stg_webui_action_parse (const gchar *data, gsize len, StgWebUiAction *action, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();

  memset (action, 0, sizeof *action);
  JsonObject *o = body_object (parser, data, len, error);
  if (o == NULL)
    return FALSE;
  g_autoptr (ApiJobKey) job = stg_job_key_new (string_member (o, "role"),
                                               string_member (o, "environment"),
                                               string_member (o, "name"));
  const gchar *id = string_member (o, "id");
  const gchar *message = string_member (o, "message");
  if (!stg_job_key_check (job, "body", error))
    return FALSE;
  if (id == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "body.id is missing");
      return FALSE;
    }
  action->job = g_steal_pointer (&job);
  action->id = g_strdup (id);
  action->message = message != NULL && message[0] != '\0' ? g_strdup (message) : NULL;
  return TRUE;
}
