/* webui_data.c: the web UI's JSON data: jobs, one job, update lists and the
 * fleet's hosts.
 *
 * Each route reads the store (hosts: the runtime, through the engine),
 * never changes it, and answers one JSON
 * document; the shapes are documented in staggerd(8) under "WEB UI". Text
 * from users (job names, messages) is only ever JSON-escaped here; the page
 * inserts it as text, never as HTML. Main-loop thread only.
 */
#include "config.h"

#include <string.h>

#include "webui/webui_private.h"
#include "common/enums.h"
#include "common/jobkey.h"

/* The job page lists at most this many instances (the count says how many). */
#define JOB_PAGE_INSTANCES 1000
#define UPDATES_PAGE_MAX 200

/* ---- builders ----------------------------------------------------------------- */

static void
member_key (JsonBuilder *b, const ApiJobKey *key)
{
  member_string (b, "role", key->role);
  member_string (b, "environment", key->environment);
  member_string (b, "name", key->name);
}

static void
add_summary (JsonBuilder *b, ApiJobUpdateSummary *s)
{
  json_builder_begin_object (b);
  member_key (b, s->key->job);
  member_string (b, "id", s->key->id);
  member_string (b, "status", stg_update_status_name (s->state->status));
  member_string (b, "user", s->user);
  member_int (b, "created_ms", s->state->createdTimestampMs);
  member_int (b, "modified_ms", s->state->lastModifiedTimestampMs);
  json_builder_end_object (b);
}

ApiJobKey *
stg_webui_query_key (StgHttpRequest *request, StgHttpResponse *response)
{
  const gchar *role = stg_http_request_query (request, "role");
  const gchar *env = stg_http_request_query (request, "environment");
  const gchar *name = stg_http_request_query (request, "name");
  g_autoptr (ApiJobKey) key = stg_job_key_new (role, env, name);
  g_autoptr (GError) error = NULL;

  if (!stg_job_key_check (key, "query", &error))
    {
      stg_webui_send_error (response, 400, error->message);
      return NULL;
    }
  return g_steal_pointer (&key);
}

gboolean
stg_webui_only_get (StgHttpRequest *request, StgHttpResponse *response)
{
  const gchar *m = stg_http_request_method (request);

  if (g_str_equal (m, "GET") || g_str_equal (m, "HEAD"))
    return TRUE;
  stg_http_response_header (response, "Allow", "GET, HEAD");
  stg_webui_send_error (response, 405, "method not allowed");
  return FALSE;
}

/* ---- pieces that later grow: the active update, ports -------------------------- */

gboolean
stg_webui_add_active_update (StgWebUi *ui, JsonBuilder *b, const ApiJobKey *key, GError **error)
{
  g_autoptr (ApiJobKey) k = g_object_ref ((gpointer) key);
  g_autoptr (ApiJobUpdateQuery) q = g_object_new (API_TYPE_JOB_UPDATE_QUERY, "jobKey", k,
                                                  "limit", 1, NULL);
  for (gint s = 0; s <= API_JOB_UPDATE_STATUS_ROLL_BACK_AWAITING_PULSE; s++)
    if (stg_update_status_is_active (s))
      g_hash_table_add (q->updateStatuses, GINT_TO_POINTER (s));
  q->__isset_updateStatuses = TRUE;
  g_autoptr (GPtrArray) list = stg_store_query_update_summaries (ui->ctx.store, q, error);
  if (list == NULL)
    return FALSE;
  if (list->len == 0)
    {
      json_builder_add_null_value (b);
      return TRUE;
    }
  ApiJobUpdateSummary *s = list->pdata[0];
  StgUpdateProgress p;
  if (!stg_engine_update_progress (ui->ctx.engine, s->key->id, &p, error))
    return FALSE;
  json_builder_begin_object (b);
  member_string (b, "id", s->key->id);
  member_string (b, "status", stg_update_status_name (s->state->status));
  member_int (b, "total", p.total);
  member_int (b, "done", p.done);
  member_int (b, "failed", p.failed);
  json_builder_end_object (b);
  stg_update_progress_clear (&p);
  return TRUE;
}

/* ---- /ui/api/jobs -------------------------------------------------------------- */

static gboolean
add_job (StgWebUi *ui, JsonBuilder *b, StgJobRow *job, GError **error)
{
  g_autoptr (GArray) statuses = stg_store_count_statuses (ui->ctx.store, job->id, error);
  g_autoptr (GArray) configs = statuses ? stg_store_count_configs (ui->ctx.store, job->id, error) : NULL;
  gint64 healthy = 0;

  if (configs == NULL)
    return FALSE;
  for (guint i = 0; i < statuses->len; i++)
    if (g_array_index (statuses, StgCount, i).key == API_SCHEDULE_STATUS_RUNNING)
      healthy = g_array_index (statuses, StgCount, i).count;

  json_builder_begin_object (b);
  member_key (b, job->key);
  member_int (b, "instances", job->instance_count);
  member_int (b, "healthy", healthy);
  json_builder_set_member_name (b, "versions");
  json_builder_begin_array (b);
  for (guint i = 0; i < configs->len; i++)
    {
      StgCount c = g_array_index (configs, StgCount, i);
      json_builder_begin_object (b);
      member_int (b, "version", stg_store_config_version (ui->ctx.store, c.key));
      member_int (b, "instances", c.count);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "update");
  if (!stg_webui_add_active_update (ui, b, job->key, error))
    return FALSE;
  json_builder_end_object (b);
  return TRUE;
}

static gboolean
build_jobs (StgWebUi *ui, JsonBuilder *b, const gchar *role, GError **error)
{
  g_autoptr (GPtrArray) jobs = stg_store_list_jobs (ui->ctx.store, role, error);

  if (jobs == NULL)
    return FALSE;
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "jobs");
  json_builder_begin_array (b);
  for (guint i = 0; i < jobs->len; i++)
    if (!add_job (ui, b, jobs->pdata[i], error))
      return FALSE;
  json_builder_end_array (b);
  json_builder_end_object (b);
  return TRUE;
}

static void
route_jobs (StgHttpRequest *request, StgHttpResponse *response, gpointer user_data)
{
  StgWebUi *ui = user_data;
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonBuilder) b = json_builder_new ();

  if (!stg_webui_only_get (request, response))
    return;
  const gchar *role = stg_http_request_query (request, "role");
  if (!build_jobs (ui, b, role && role[0] ? role : NULL, &error))
    {
      g_warning ("webui: jobs: %s", error->message);
      stg_webui_send_error (response, 500, error->message);
      return;
    }
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  stg_webui_send_json (response, 200, root);
}

/* ---- /ui/api/job ----------------------------------------------------------------- */

/* Adds one instance; @ports and @last hold every instance's link port and
 * newest task event (one query each for the whole page). */
static void
add_instance (StgWebUi *ui, JsonBuilder *b, const StgInstanceRow *row, GHashTable *ports,
              GHashTable *last)
{
  gpointer id = GINT_TO_POINTER (row->instance_id);
  gint port = GPOINTER_TO_INT (g_hash_table_lookup (ports, id));
  ApiTaskEvent *ev = g_hash_table_lookup (last, id);

  json_builder_begin_object (b);
  member_int (b, "id", row->instance_id);
  member_string (b, "status", stg_schedule_status_name (row->status));
  json_builder_set_member_name (b, "healthy");
  json_builder_add_boolean_value (b, row->status == API_SCHEDULE_STATUS_RUNNING);
  json_builder_set_member_name (b, "port");
  if (port > 0)
    json_builder_add_int_value (b, port);
  else
    json_builder_add_null_value (b);
  member_int (b, "version", stg_store_config_version (ui->ctx.store,
                                                      row->run_config_id ? row->run_config_id
                                                                         : row->config_id));
  member_int (b, "failures", row->failure_count);
  json_builder_set_member_name (b, "pid");
  if (row->pid > 0)
    json_builder_add_int_value (b, row->pid);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "started_ms");
  if (row->status == API_SCHEDULE_STATUS_RUNNING && row->status_ms > 0)
    json_builder_add_int_value (b, row->status_ms);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "last_event");
  if (ev != NULL)
    {
      json_builder_begin_object (b);
      member_int (b, "ts_ms", ev->timestamp);
      member_string (b, "status", stg_schedule_status_name (ev->status));
      member_string (b, "message", ev->__isset_message ? ev->message : NULL);
      json_builder_end_object (b);
    }
  else
    json_builder_add_null_value (b);
  json_builder_end_object (b);
}

static void
route_job (StgHttpRequest *request, StgHttpResponse *response, gpointer user_data)
{
  StgWebUi *ui = user_data;
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonBuilder) b = json_builder_new ();

  if (!stg_webui_only_get (request, response))
    return;
  g_autoptr (ApiJobKey) key = stg_webui_query_key (request, response);
  if (key == NULL)
    return;
  g_autoptr (StgJobRow) job = stg_store_get_job (ui->ctx.store, key, &error);
  if (job == NULL)
    {
      stg_webui_send_error (response, g_error_matches (error, STG_STORE_ERROR, STG_STORE_ERROR_NOT_FOUND)
                                        ? 404 : 500, error->message);
      return;
    }
  g_autoptr (GArray) rows = stg_store_list_instances (ui->ctx.store, job->id, &error);
  g_autoptr (ApiJobKey) job_key = g_object_ref (job->key);
  g_autoptr (ApiJobUpdateQuery) q = g_object_new (API_TYPE_JOB_UPDATE_QUERY, "jobKey", job_key,
                                                  "limit", 50, NULL);
  g_autoptr (GPtrArray) updates = rows ? stg_store_query_update_summaries (ui->ctx.store, q, &error)
                                       : NULL;
  g_autoptr (GHashTable) ports = updates ? stg_store_job_link_ports (ui->ctx.store, job->key, &error)
                                         : NULL;
  g_autoptr (GHashTable) last = ports ? stg_store_job_last_task_events (ui->ctx.store, job->id, &error)
                                      : NULL;
  if (last == NULL)
    {
      stg_webui_send_error (response, 500, error->message);
      return;
    }

  json_builder_begin_object (b);
  member_key (b, job->key);
  member_int (b, "now_ms", stg_clock_now_ms (ui->ctx.clock));
  member_int (b, "instances_total", rows->len);
  /* Running and healthy: what a plan's HTTP gate can compare with a
   * threshold ($.instances_healthy). */
  gint64 healthy = 0;
  for (guint i = 0; i < rows->len; i++)
    healthy += g_array_index (rows, StgInstanceRow, i).status == API_SCHEDULE_STATUS_RUNNING;
  member_int (b, "instances_healthy", healthy);
  json_builder_set_member_name (b, "instances");
  json_builder_begin_array (b);
  for (guint i = 0; i < rows->len && i < JOB_PAGE_INSTANCES; i++)
    add_instance (ui, b, &g_array_index (rows, StgInstanceRow, i), ports, last);
  json_builder_end_array (b);

  /* Config groups: which instances should run which version. */
  g_autoptr (GHashTable) groups = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                                         (GDestroyNotify) stg_ranges_free);
  for (guint i = 0; i < rows->len; i++)
    {
      StgInstanceRow *r = &g_array_index (rows, StgInstanceRow, i);
      StgRanges *set = g_hash_table_lookup (groups, &r->config_id);
      if (set == NULL)
        {
          set = stg_ranges_new ();
          g_hash_table_insert (groups, g_memdup2 (&r->config_id, sizeof r->config_id), set);
        }
      stg_ranges_add_one (set, r->instance_id);
    }
  json_builder_set_member_name (b, "groups");
  json_builder_begin_array (b);
  g_autoptr (GList) ids = g_hash_table_get_keys (groups);
  for (GList *l = ids; l != NULL; l = l->next)
    {
      g_autofree gchar *text = stg_ranges_to_string (g_hash_table_lookup (groups, l->data));
      json_builder_begin_object (b);
      member_int (b, "version", stg_store_config_version (ui->ctx.store, *(gint64 *) l->data));
      member_string (b, "ranges", text);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);

  json_builder_set_member_name (b, "updates");
  json_builder_begin_array (b);
  for (guint i = 0; i < updates->len; i++)
    add_summary (b, updates->pdata[i]);
  json_builder_end_array (b);
  json_builder_end_object (b);
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  stg_webui_send_json (response, 200, root);
}

/* ---- /ui/api/updates ------------------------------------------------------------------ */

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

static void
route_updates (StgHttpRequest *request, StgHttpResponse *response, gpointer user_data)
{
  StgWebUi *ui = user_data;
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (ApiJobUpdateQuery) q = g_object_new (API_TYPE_JOB_UPDATE_QUERY, NULL);
  gint32 offset = 0, limit = 25;

  if (!stg_webui_only_get (request, response))
    return;
  if (!stg_webui_parse_count (stg_http_request_query (request, "offset"), G_MAXINT32 - 1,
                              &offset) ||
      !stg_webui_parse_count (stg_http_request_query (request, "limit"), UPDATES_PAGE_MAX, &limit))
    {
      stg_webui_send_error (response, 400, "offset and limit must be whole numbers (limit at most 200)");
      return;
    }
  const gchar *role = stg_http_request_query (request, "role");
  const gchar *job = stg_http_request_query (request, "job");
  const gchar *status = stg_http_request_query (request, "status");
  const gchar *user = stg_http_request_query (request, "user");
  if (role != NULL && role[0] != '\0')
    g_object_set (q, "role", role, NULL);
  if (user != NULL && user[0] != '\0')
    g_object_set (q, "user", user, NULL);
  if (job != NULL && job[0] != '\0')
    {
      g_auto (GStrv) parts = g_strsplit (job, "/", -1);
      if (g_strv_length (parts) != 3)
        {
          stg_webui_send_error (response, 400, "job must be role/environment/name");
          return;
        }
      g_autoptr (ApiJobKey) key = stg_job_key_new (parts[0], parts[1], parts[2]);
      g_object_set (q, "jobKey", key, NULL);
    }
  if (status != NULL && status[0] != '\0')
    {
      gint v = stg_update_status_from_name (status);
      if (v < 0)
        {
          stg_webui_send_error (response, 400, "unknown update status");
          return;
        }
      g_hash_table_add (q->updateStatuses, GINT_TO_POINTER (v));
      q->__isset_updateStatuses = TRUE;
    }
  /* One more than asked, to tell whether there is a next page. */
  g_object_set (q, "offset", offset, "limit", limit + 1, NULL);
  g_autoptr (GPtrArray) list = stg_store_query_update_summaries (ui->ctx.store, q, &error);
  if (list == NULL)
    {
      stg_webui_send_error (response, 500, error->message);
      return;
    }
  json_builder_begin_object (b);
  member_int (b, "offset", offset);
  member_int (b, "limit", limit);
  json_builder_set_member_name (b, "more");
  json_builder_add_boolean_value (b, list->len > (guint) limit);
  json_builder_set_member_name (b, "updates");
  json_builder_begin_array (b);
  for (guint i = 0; i < list->len && i < (guint) limit; i++)
    add_summary (b, list->pdata[i]);
  json_builder_end_array (b);
  json_builder_end_object (b);
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  stg_webui_send_json (response, 200, root);
}

/* ---- /ui/api/hosts ------------------------------------------------------------- */

static void
add_host (JsonBuilder *b, ApiHostStatus *h)
{
  GHashTableIter it;
  gpointer k, v;

  json_builder_begin_object (b);
  member_string (b, "name", h->name);
  member_string (b, "address", h->address);
  member_string (b, "endpoint", h->endpoint);
  json_builder_set_member_name (b, "reachable");
  json_builder_add_boolean_value (b, h->reachable);
  member_int (b, "unreachable_since_ms", h->unreachableSinceMs);
  member_string (b, "last_error", h->lastError);
  json_builder_set_member_name (b, "draining");
  json_builder_add_boolean_value (b, h->draining);
  json_builder_set_member_name (b, "attributes");
  json_builder_begin_object (b);
  g_hash_table_iter_init (&it, h->attributes);
  while (g_hash_table_iter_next (&it, &k, &v))
    member_string (b, k, v);
  json_builder_end_object (b);
  json_builder_set_member_name (b, "instances");
  json_builder_begin_array (b);
  for (guint i = 0; i < h->instances->len; i++)
    {
      ApiInstanceKey *key = h->instances->pdata[i];
      json_builder_begin_object (b);
      member_key (b, key->jobKey);
      member_int (b, "id", key->instanceId);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
}

/* The fleet's hosts; "hosts": null and "why" when the runtime has none. */
static void
route_hosts (StgHttpRequest *request, StgHttpResponse *response, gpointer user_data)
{
  StgWebUi *ui = user_data;
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonBuilder) b = json_builder_new ();

  if (!stg_webui_only_get (request, response))
    return;
  g_autoptr (GPtrArray) hosts = stg_engine_hosts (ui->ctx.engine, &error);
  json_builder_begin_object (b);
  member_int (b, "now_ms", stg_clock_now_ms (ui->ctx.clock));
  json_builder_set_member_name (b, "hosts");
  if (hosts == NULL)
    {
      json_builder_add_null_value (b);
      member_string (b, "why", error->message);
    }
  else
    {
      json_builder_begin_array (b);
      for (guint i = 0; i < hosts->len; i++)
        add_host (b, hosts->pdata[i]);
      json_builder_end_array (b);
    }
  json_builder_end_object (b);
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  stg_webui_send_json (response, 200, root);
}

void
stg_webui_data_routes (StgWebUi *ui, StgHttpServer *http)
{
  stg_webui_route (ui, http, "/ui/api/hosts", route_hosts);
  stg_webui_route (ui, http, "/ui/api/jobs", route_jobs);
  stg_webui_route (ui, http, "/ui/api/job", route_job);
  stg_webui_route (ui, http, "/ui/api/updates", route_updates);
}
