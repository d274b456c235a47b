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
#include "runtime/thermos_task.h"

/* The job page lists at most this many instances (the count says how many). */
#define JOB_PAGE_INSTANCES 1000
#define UPDATES_PAGE_MAX 200

/* ---- builders ----------------------------------------------------------------- */

static void
member_key (JsonBuilder *b, const ApiJobKey *key)
{
  stg_webui_add_fields (b, key, "role environment name");
}

/* An update of a list. */
static void
add_summary (JsonBuilder *b, gconstpointer item)
{
  const ApiJobUpdateSummary *s = item;

  member_key (b, s->key->job);
  member_string (b, "id", s->key->id);
  stg_webui_add_fields (b, s->state, "status:update");
  member_string (b, "user", s->user);
  stg_webui_add_fields (b, s->state,
                        "created_ms=createdTimestampMs "
                        "modified_ms=lastModifiedTimestampMs");
}

/* ---- pieces that later grow: the active update, ports -------------------------- */

/* The job's active update (FALSE with @error when the store fails; *@out
 * NULL when there is none). */
static gboolean
active_update (StgWebUi *ui, const ApiJobKey *key, ApiJobUpdateSummary **out, GError **error)
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
  *out = list->len > 0 ? g_object_ref (list->pdata[0]) : NULL;
  return TRUE;
}

/* Adds the job's active update ({id, status, ..., surge} or null) as a
 * value; its progress is kept in @p (nullable) for the caller. */
static gboolean
add_active_update (StgWebUi *ui, JsonBuilder *b, const ApiJobKey *key, StgUpdateProgress *out,
                   GError **error)
{
  g_autoptr (ApiJobUpdateSummary) s = NULL;
  if (!active_update (ui, key, &s, error))
    return FALSE;
  if (s == NULL)
    {
      json_builder_add_null_value (b);
      return TRUE;
    }
  StgUpdateProgress p;
  if (!stg_engine_update_progress (ui->ctx.engine, s->key->id, &p, error))
    return FALSE;
  json_builder_begin_object (b);
  member_string (b, "id", s->key->id);
  member_string (b, "status", stg_update_status_name (s->state->status));
  member_int (b, "total", p.total);
  member_int (b, "done", p.done);
  member_int (b, "failed", p.failed);
  /* Surge instances: beyond the job's count while the update runs. */
  g_autofree gchar *surge = stg_ranges_to_string (p.surge);
  member_string (b, "surge", surge);
  json_builder_end_object (b);
  if (out != NULL)
    *out = p;
  else
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
  if (!add_active_update (ui, b, job->key, NULL, error))
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

static guint
read_jobs (StgWebUi *ui, StgHttpRequest *request, JsonBuilder *b, GError **error)
{
  const gchar *role = stg_http_request_query (request, "role");

  return build_jobs (ui, b, role && role[0] ? role : NULL, error) ? 200 : 500;
}

/* ---- /ui/api/job ----------------------------------------------------------------- */

/* Adds one instance of job @job_id; @ports and @last hold every
 * instance's link port and newest task event (one query each for the whole
 * page). */
static void
add_instance (StgWebUi *ui, JsonBuilder *b, gint64 job_id, const StgInstanceRow *row,
              GHashTable *ports, GHashTable *last, StgRanges *surge)
{
  gpointer id = GINT_TO_POINTER (row->instance_id);
  const gchar *sla_wait = stg_engine_sla_wait (ui->ctx.engine, job_id, row->instance_id);
  gint port = GPOINTER_TO_INT (g_hash_table_lookup (ports, id));
  ApiTaskEvent *ev = g_hash_table_lookup (last, id);

  json_builder_begin_object (b);
  member_int (b, "id", row->instance_id);
  member_bool (b, "surge", surge != NULL && stg_ranges_contains (surge, row->instance_id));
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
  stg_webui_add_usage (ui, b, job_id, row->instance_id);
  stg_webui_add_announce (ui, b, job_id, row->instance_id);
  /* Why a drain of its host waits for its SLA before moving it. */
  member_string (b, "sla_wait", sla_wait);
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

/* Config groups: which instances should run which version. */
static void
add_groups (StgWebUi *ui, JsonBuilder *b, GArray *rows)
{
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
}

static guint
read_job (StgWebUi *ui, StgHttpRequest *request, JsonBuilder *b, GError **error)
{
  g_autoptr (ApiJobKey) key = stg_webui_query_key (request, error);
  if (key == NULL)
    return 400;
  g_autoptr (StgJobRow) job = stg_store_get_job (ui->ctx.store, key, error);
  if (job == NULL)
    return stg_webui_store_status (*error);
  g_autoptr (GArray) rows = stg_store_list_instances (ui->ctx.store, job->id, error);
  g_autoptr (ApiJobKey) job_key = g_object_ref (job->key);
  g_autoptr (ApiJobUpdateQuery) q = g_object_new (API_TYPE_JOB_UPDATE_QUERY, "jobKey", job_key,
                                                  "limit", 50, NULL);
  g_autoptr (GPtrArray) updates = rows ? stg_store_query_update_summaries (ui->ctx.store, q, error)
                                       : NULL;
  g_autoptr (GHashTable) ports = updates ? stg_store_job_link_ports (ui->ctx.store, job->key, error)
                                         : NULL;
  g_autoptr (GHashTable) last = ports
                                    ? stg_store_job_last_task_events (ui->ctx.store, job->id, error)
                                    : NULL;
  if (last == NULL)
    return 500;

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
  /* The active update, whose surge instances the list marks. */
  StgUpdateProgress p = { 0 };
  json_builder_set_member_name (b, "update");
  if (!add_active_update (ui, b, job->key, &p, error))
    return 500;
  json_builder_set_member_name (b, "instances");
  json_builder_begin_array (b);
  for (guint i = 0; i < rows->len && i < JOB_PAGE_INSTANCES; i++)
    add_instance (ui, b, job->id, &g_array_index (rows, StgInstanceRow, i), ports, last, p.surge);
  json_builder_end_array (b);
  stg_update_progress_clear (&p);
  add_groups (ui, b, rows);
  stg_webui_add_list (b, "updates", updates, G_MAXUINT, add_summary);
  /* An AuroraExecutor task's health check in words: such a task without
   * a port named "health" has none, which is easy to miss. */
  g_autoptr (ApiTaskConfig) config =
      rows->len > 0 ? stg_store_get_config (ui->ctx.store,
                                            g_array_index (rows, StgInstanceRow, 0).config_id, NULL)
                    : NULL;
  g_autofree gchar *health = config != NULL ? stg_thermos_task_health_text (config) : NULL;
  member_string (b, "health_check", health);
  json_builder_end_object (b);
  return 200;
}

/* ---- /ui/api/updates ------------------------------------------------------------------ */

/* Sets @q from /ui/api/updates' filters (role, job, status, user): 200,
 * or 400 with @error for a bad one. */
static guint
updates_query (StgHttpRequest *request, ApiJobUpdateQuery *q, GError **error)
{
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
        return stg_webui_fail (error, 400, "job must be role/environment/name");
      g_autoptr (ApiJobKey) key = stg_job_key_new (parts[0], parts[1], parts[2]);
      g_object_set (q, "jobKey", key, NULL);
    }
  if (status != NULL && status[0] != '\0')
    {
      gint v = stg_update_status_from_name (status);
      if (v < 0)
        return stg_webui_fail (error, 400, "unknown update status");
      g_hash_table_add (q->updateStatuses, GINT_TO_POINTER (v));
      q->__isset_updateStatuses = TRUE;
    }
  return 200;
}

static guint
read_updates (StgWebUi *ui, StgHttpRequest *request, JsonBuilder *b, GError **error)
{
  g_autoptr (ApiJobUpdateQuery) q = g_object_new (API_TYPE_JOB_UPDATE_QUERY, NULL);
  gint32 offset = 0, limit = 25;

  if (!stg_webui_parse_count (stg_http_request_query (request, "offset"), G_MAXINT32 - 1,
                              &offset) ||
      !stg_webui_parse_count (stg_http_request_query (request, "limit"), UPDATES_PAGE_MAX, &limit))
    return stg_webui_fail (error, 400,
                           "offset and limit must be whole numbers (limit at most 200)");
  guint status = updates_query (request, q, error);
  if (status != 200)
    return status;
  /* One more than asked, to tell whether there is a next page. */
  g_object_set (q, "offset", offset, "limit", limit + 1, NULL);
  g_autoptr (GPtrArray) list = stg_store_query_update_summaries (ui->ctx.store, q, error);
  if (list == NULL)
    return 500;
  json_builder_begin_object (b);
  stg_webui_add_page (b, offset, limit, "updates", list, add_summary);
  json_builder_end_object (b);
  return 200;
}

/* ---- /ui/api/hosts ------------------------------------------------------------- */

/* An instance a host runs. */
static void
add_instance_key (JsonBuilder *b, gconstpointer item)
{
  const ApiInstanceKey *key = item;

  member_key (b, key->jobKey);
  member_int (b, "id", key->instanceId);
}

static void
add_host (JsonBuilder *b, gconstpointer item)
{
  const ApiFleetHostStatus *h = item;
  GHashTableIter it;
  gpointer k, v;

  stg_webui_add_fields (b, h,
                        "name address endpoint reachable unreachable_since_ms last_error "
                        "draining drain_blocked sla_wait mode:maintenance");
  json_builder_set_member_name (b, "attributes");
  json_builder_begin_object (b);
  g_hash_table_iter_init (&it, h->attributes);
  while (g_hash_table_iter_next (&it, &k, &v))
    member_string (b, k, v);
  json_builder_end_object (b);
  stg_webui_add_list (b, "instances", h->instances, G_MAXUINT, add_instance_key);
}

/* The runtime's hosts (the local runtime's one: this machine), each with
 * its maintenance mode and why its drain waits; "hosts": null and "why"
 * when the runtime has none. */
static guint
read_hosts (StgWebUi *ui, StgHttpRequest *request, JsonBuilder *b, GError **error)
{
  g_autoptr (GError) why = NULL;
  g_autoptr (GPtrArray) hosts = stg_engine_hosts (ui->ctx.engine, &why);

  (void) request, (void) error;
  json_builder_begin_object (b);
  member_int (b, "now_ms", stg_clock_now_ms (ui->ctx.clock));
  if (hosts != NULL)
    stg_webui_add_list (b, "hosts", hosts, G_MAXUINT, add_host);
  else
    {
      member_string (b, "hosts", NULL);
      member_string (b, "why", why->message);
    }
  json_builder_end_object (b);
  return 200;
}

const StgWebUiRoute stg_webui_data_routes[] = {
  { "/ui/api/hosts", .read = read_hosts },
  { "/ui/api/jobs", .read = read_jobs },
  { "/ui/api/job", .read = read_job },
  { "/ui/api/updates", .read = read_updates },
  { NULL },
};
