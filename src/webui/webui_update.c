/* webui_update.c: the web UI's update page data and its controls.
 *
 * GET /ui/api/update?role=&environment=&name=&id= answers one update: its
 * summary, settings, progress (with one letter per changed instance, so
 * 10,000 instances cost about 10 KB), events, the newest instance events and
 * the configuration diff. POST /ui/api/update/{pause,resume,abort,rollback}
 * acts on it; a POST must carry the session's token in X-Stagger-CSRF (a
 * page from another site cannot set that header), and GET never changes
 * anything. Main-loop thread only.
 */
#include "config.h"

#include <string.h>

#include "webui/webui_private.h"
#include "common/enums.h"
#include "common/jobkey.h"
#include "common/json_check.h"
#include "common/json_write.h"

#define INSTANCE_EVENTS_SHOWN 500

/* ---- settings ------------------------------------------------------------------ */

static void
add_settings (JsonBuilder *b, ApiJobUpdateSettings *s)
{
  const gchar *strategy = s->waitForBatchCompletion ? "batch" : "queue";
  gboolean autopause = FALSE;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "group_sizes");
  json_builder_begin_array (b);
  ApiJobUpdateStrategy *st = s->__isset_updateStrategy ? s->updateStrategy : NULL;
  if (st != NULL && st->__isset_queueStrategy)
    {
      strategy = "queue";
      json_builder_add_int_value (b, st->queueStrategy->groupSize);
    }
  else if (st != NULL && st->__isset_batchStrategy)
    {
      strategy = "batch";
      autopause = st->batchStrategy->autopauseAfterBatch;
      json_builder_add_int_value (b, st->batchStrategy->groupSize);
    }
  else if (st != NULL && st->__isset_varBatchStrategy)
    {
      strategy = "variable batch";
      autopause = st->varBatchStrategy->autopauseAfterBatch;
      for (guint i = 0; st->varBatchStrategy->groupSizes && i < st->varBatchStrategy->groupSizes->len; i++)
        json_builder_add_int_value (b, g_array_index (st->varBatchStrategy->groupSizes, gint32, i));
    }
  else
    json_builder_add_int_value (b, s->updateGroupSize > 0 ? s->updateGroupSize : 1);
  json_builder_end_array (b);
  member_string (b, "strategy", strategy);
  member_bool (b, "autopause", autopause);
  member_int (b, "watch_ms", s->minWaitInInstanceRunningMs);
  member_int (b, "max_per_instance_failures", s->maxPerInstanceFailures);
  member_int (b, "max_failed_instances", s->maxFailedInstances);
  member_bool (b, "rollback_on_failure", s->rollbackOnFailure);
  member_int (b, "pulse_ms", s->__isset_blockIfNoPulsesAfterMs ? s->blockIfNoPulsesAfterMs : 0);
  json_builder_set_member_name (b, "growth_factor");
  json_builder_add_double_value (b, s->__isset_growthFactor ? s->growthFactor : 1.0);
  member_int (b, "min_in_service", s->__isset_minInService ? s->minInService : 0);
  member_int (b, "pause_between_batches_ms", s->__isset_pauseBetweenBatchesMs ? s->pauseBetweenBatchesMs : 0);
  member_int (b, "max_instance_start_ms", s->__isset_maxInstanceStartMs ? s->maxInstanceStartMs : 0);
  json_builder_set_member_name (b, "only");
  if (s->__isset_updateOnlyTheseInstances && g_hash_table_size (s->updateOnlyTheseInstances) > 0)
    {
      g_autoptr (StgRanges) only = stg_ranges_new ();
      GHashTableIter it;
      gpointer key;
      g_hash_table_iter_init (&it, s->updateOnlyTheseInstances);
      while (g_hash_table_iter_next (&it, &key, NULL))
        stg_ranges_add (only, ((ApiRange *) key)->first, ((ApiRange *) key)->last);
      g_autofree gchar *text = stg_ranges_to_string (only);
      json_builder_add_string_value (b, text);
    }
  else
    json_builder_add_null_value (b);
  json_builder_end_object (b);
}

/* ---- the configuration diff ---------------------------------------------------------- */

/* Compares two "key: value" lines by key alone. */
static gint
key_cmp (const gchar *x, const gchar *y)
{
  gsize kx = strcspn (x, ":"), ky = strcspn (y, ":");
  gint c = strncmp (x, y, MIN (kx, ky));
  return c != 0 ? c : (gint) kx - (gint) ky;
}

/* By key, then by the whole line. */
static gint
compare_lines (gconstpointer a, gconstpointer b)
{
  const gchar *x = *(const gchar *const *) a, *y = *(const gchar *const *) b;
  gint c = key_cmp (x, y);
  return c != 0 ? c : strcmp (x, y);
}

/* A task config as readable lines, "key: value", sorted by key. */
static GPtrArray *
config_lines (ApiTaskConfig *t)
{
  GPtrArray *lines = g_ptr_array_new_with_free_func (g_free);

  if (t == NULL)
    return lines;
  g_ptr_array_add (lines, g_strdup_printf ("service: %s", t->isService ? "yes" : "no"));
  g_ptr_array_add (lines, g_strdup_printf ("priority: %d", t->priority));
  g_ptr_array_add (lines, g_strdup_printf ("max task failures: %d", t->maxTaskFailures));
  if (t->__isset_tier && t->tier)
    g_ptr_array_add (lines, g_strdup_printf ("tier: %s", t->tier));
  if (t->__isset_contactEmail && t->contactEmail)
    g_ptr_array_add (lines, g_strdup_printf ("contact: %s", t->contactEmail));
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init (&it, t->resources);
  while (g_hash_table_iter_next (&it, &key, NULL))
    {
      ApiResource *r = key;
      if (r->__isset_numCpus)
        g_ptr_array_add (lines, g_strdup_printf ("cpu: %g", r->numCpus));
      if (r->__isset_ramMb)
        g_ptr_array_add (lines, g_strdup_printf ("ram_mb: %" G_GINT64_FORMAT, r->ramMb));
      if (r->__isset_diskMb)
        g_ptr_array_add (lines, g_strdup_printf ("disk_mb: %" G_GINT64_FORMAT, r->diskMb));
      if (r->__isset_namedPort)
        g_ptr_array_add (lines, g_strdup_printf ("port: %s", r->namedPort));
    }
  if (t->__isset_metadata)
    {
      g_hash_table_iter_init (&it, t->metadata);
      while (g_hash_table_iter_next (&it, &key, NULL))
        g_ptr_array_add (lines, g_strdup_printf ("metadata %s: %s", ((ApiMetadata *) key)->key,
                                                 ((ApiMetadata *) key)->value));
    }
  if (t->__isset_taskLinks)
    {
      g_hash_table_iter_init (&it, t->taskLinks);
      while (g_hash_table_iter_next (&it, &key, &value))
        g_ptr_array_add (lines, g_strdup_printf ("link %s: %s", (gchar *) key, (gchar *) value));
    }
  if (t->__isset_executorConfig && t->executorConfig)
    {
      g_ptr_array_add (lines, g_strdup_printf ("executor: %s", t->executorConfig->name));
      /* Executor data is JSON: one line per top-level member when it parses. */
      g_autoptr (JsonParser) p = json_parser_new ();
      if (t->executorConfig->data &&
          stg_json_check_depth (t->executorConfig->data, -1, STG_JSON_NESTING_MAX, NULL) &&
          json_parser_load_from_data (p, t->executorConfig->data, -1, NULL) &&
          JSON_NODE_HOLDS_OBJECT (json_parser_get_root (p)))
        {
          JsonObject *o = json_node_get_object (json_parser_get_root (p));
          g_autoptr (GList) members = json_object_get_members (o);
          for (GList *l = members; l; l = l->next)
            {
              g_autofree gchar *v = stg_json_write (json_object_get_member (o, l->data), FALSE, NULL);
              g_ptr_array_add (lines, g_strdup_printf ("task %s: %s", (gchar *) l->data, v));
            }
        }
      else if (t->executorConfig->data)
        g_ptr_array_add (lines, g_strdup_printf ("executor data: %s", t->executorConfig->data));
    }
  g_ptr_array_sort (lines, compare_lines);
  return lines;
}

static void
add_line (JsonBuilder *b, const gchar *mark, const gchar *text)
{
  g_autofree gchar *line = g_strconcat (mark, text, NULL);
  json_builder_add_string_value (b, line);
}

/* A line-by-line diff of two lists sorted by key: "  same", and for a
 * changed key "- old" then "+ new". */
static void
add_diff (JsonBuilder *b, ApiTaskConfig *old, ApiTaskConfig *new)
{
  g_autoptr (GPtrArray) a = config_lines (old);
  g_autoptr (GPtrArray) c = config_lines (new);
  guint i = 0, j = 0;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "lines");
  json_builder_begin_array (b);
  while (i < a->len || j < c->len)
    {
      gint cmp = i >= a->len ? 1 : j >= c->len ? -1 : key_cmp (a->pdata[i], c->pdata[j]);
      if (cmp == 0 && g_str_equal (a->pdata[i], c->pdata[j]))
        add_line (b, "  ", a->pdata[i++]), j++;
      else if (cmp == 0)
        add_line (b, "- ", a->pdata[i++]), add_line (b, "+ ", c->pdata[j++]);
      else if (cmp < 0)
        add_line (b, "- ", a->pdata[i++]);
      else
        add_line (b, "+ ", c->pdata[j++]);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
}

/* ---- GET /ui/api/update ------------------------------------------------------------ */

/* The progress object of an update's page. */
static void
add_progress (JsonBuilder *b, const StgUpdateRow *row, const StgUpdateProgress *p, gint64 now)
{
  json_builder_begin_object (b);
  member_int (b, "total", p->total);
  member_int (b, "done", p->done);
  member_int (b, "failed", p->failed);
  member_bool (b, "rolling_back", p->back);
  json_builder_set_member_name (b, "in_flight");
  json_builder_begin_array (b);
  for (guint i = 0; i < p->in_flight->len; i++)
    json_builder_add_int_value (b, g_array_index (p->in_flight, gint32, i));
  json_builder_end_array (b);
  gint64 elapsed = (stg_update_status_is_active (row->status) ? now : row->modified_ms) -
                   row->created_ms;
  member_int (b, "elapsed_ms", elapsed);
  json_builder_set_member_name (b, "eta_ms");
  if (p->done > 0 && p->total > p->done && stg_update_status_is_active (row->status))
    json_builder_add_int_value (b, elapsed * (gint64) (p->total - p->done) / (gint64) p->done);
  else
    json_builder_add_null_value (b);
  json_builder_end_object (b);
}

/* The update's events and the newest instance events. */
static void
add_events (JsonBuilder *b, GPtrArray *events, GPtrArray *ievents, gint64 ievents_total)
{
  json_builder_set_member_name (b, "events");
  json_builder_begin_array (b);
  for (guint i = 0; i < events->len; i++)
    {
      ApiJobUpdateEvent *e = events->pdata[i];
      json_builder_begin_object (b);
      member_string (b, "status", stg_update_status_name (e->status));
      member_int (b, "ts_ms", e->timestampMs);
      member_string (b, "user", e->__isset_user ? e->user : NULL);
      member_string (b, "message", e->__isset_message ? e->message : NULL);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  member_int (b, "instance_events_total", ievents_total);
  json_builder_set_member_name (b, "instance_events");
  json_builder_begin_array (b);
  for (guint i = 0; i < ievents->len; i++)
    {
      ApiJobInstanceUpdateEvent *e = ievents->pdata[i];
      json_builder_begin_object (b);
      member_int (b, "instance", e->instanceId);
      member_int (b, "ts_ms", e->timestampMs);
      member_string (b, "action", stg_update_action_name (e->action));
      member_string (b, "message", e->__isset_message ? e->message : NULL);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

/* The configuration most of the changed instances had (the diff's "old"). */
static ApiTaskConfig *
most_common_initial (ApiJobUpdateInstructions *ins)
{
  ApiTaskConfig *old = NULL;
  guint best = 0;
  GHashTableIter it;
  gpointer key;

  g_hash_table_iter_init (&it, ins->initialState);
  while (g_hash_table_iter_next (&it, &key, NULL))
    {
      ApiInstanceTaskConfig *itc = key;
      guint n = 0;
      GHashTableIter rit;
      gpointer rk;
      g_hash_table_iter_init (&rit, itc->instances);
      while (g_hash_table_iter_next (&rit, &rk, NULL))
        n += (guint) (((ApiRange *) rk)->last - ((ApiRange *) rk)->first + 1);
      if (n > best)
        best = n, old = itc->task;
    }
  return old;
}

static gboolean
build_update (StgWebUi *ui, JsonBuilder *b, const ApiJobKey *job, const gchar *uid, guint *status,
              GError **error)
{
  g_autoptr (StgUpdateRow) row = stg_store_get_update (ui->ctx.store, uid, error);
  if (row == NULL || !stg_job_key_equal (row->job, job))
    {
      *status = 404;
      if (row != NULL)
        g_set_error (error, STG_STORE_ERROR, STG_STORE_ERROR_NOT_FOUND, "no update %s of this job", uid);
      return FALSE;
    }
  *status = 500;
  g_autoptr (ApiJobUpdateInstructions) ins = stg_store_get_update_instructions (ui->ctx.store, row->id, error);
  g_autoptr (GPtrArray) events = ins ? stg_store_list_update_events (ui->ctx.store, row->id, error) : NULL;
  gint64 ievents_total = 0;
  g_autoptr (GPtrArray) ievents = events ? stg_store_list_instance_events (ui->ctx.store, row->id,
                                                                           INSTANCE_EVENTS_SHOWN,
                                                                           &ievents_total, error) : NULL;
  StgUpdateProgress p;
  if (ievents == NULL || !stg_engine_update_progress (ui->ctx.engine, uid, &p, error))
    return FALSE;
  gint64 now = stg_clock_now_ms (ui->ctx.clock);

  json_builder_begin_object (b);
  member_string (b, "role", row->job->role);
  member_string (b, "environment", row->job->environment);
  member_string (b, "name", row->job->name);
  member_string (b, "id", row->uid);
  member_string (b, "status", stg_update_status_name (row->status));
  member_string (b, "user", row->user);
  member_int (b, "created_ms", row->created_ms);
  member_int (b, "modified_ms", row->modified_ms);
  member_int (b, "now_ms", now);
  ApiJobUpdateEvent *first = events->len > 0 ? events->pdata[0] : NULL;
  member_string (b, "message", first && first->__isset_message ? first->message : NULL);

  json_builder_set_member_name (b, "settings");
  add_settings (b, ins->settings);

  json_builder_set_member_name (b, "progress");
  add_progress (b, row, &p, now);
  json_builder_set_member_name (b, "instances");
  json_builder_begin_object (b);
  g_autofree gchar *ranges = stg_ranges_to_string (p.instances);
  member_string (b, "ranges", ranges);
  member_string (b, "states", p.states);
  json_builder_end_object (b);

  json_builder_set_member_name (b, "pulse");
  if (ins->settings->__isset_blockIfNoPulsesAfterMs && ins->settings->blockIfNoPulsesAfterMs > 0)
    {
      json_builder_begin_object (b);
      member_int (b, "last_ms", p.last_pulse_ms);
      member_int (b, "block_after_ms", ins->settings->blockIfNoPulsesAfterMs);
      json_builder_end_object (b);
    }
  else
    json_builder_add_null_value (b);

  add_events (b, events, ievents, ievents_total);
  json_builder_set_member_name (b, "diff");
  add_diff (b, most_common_initial (ins), ins->desiredState ? ins->desiredState->task : NULL);
  json_builder_end_object (b);
  stg_update_progress_clear (&p);
  return TRUE;
}

static void
route_update (StgHttpRequest *request, StgHttpResponse *response, gpointer user_data)
{
  StgWebUi *ui = user_data;
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonBuilder) b = json_builder_new ();
  const gchar *m = stg_http_request_method (request);
  guint status = 500;

  if (!g_str_equal (m, "GET") && !g_str_equal (m, "HEAD"))
    {
      stg_http_response_header (response, "Allow", "GET, HEAD");
      stg_webui_send_error (response, 405, "method not allowed");
      return;
    }
  g_autoptr (ApiJobKey) key = stg_job_key_new (stg_http_request_query (request, "role"),
                                               stg_http_request_query (request, "environment"),
                                               stg_http_request_query (request, "name"));
  const gchar *id = stg_http_request_query (request, "id");
  if (!stg_job_key_check (key, "query", &error) || id == NULL || id[0] == '\0')
    {
      stg_webui_send_error (response, 400, error ? error->message : "query.id is missing");
      return;
    }
  if (!build_update (ui, b, key, id, &status, &error))
    {
      stg_webui_send_error (response, status, error ? error->message : "not found");
      return;
    }
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  stg_webui_send_json (response, 200, root);
}

/* ---- POST /ui/api/update/<action> ---------------------------------------------------- */

void
stg_webui_action_clear (StgWebUiAction *action)
{
  g_clear_object (&action->job);
  g_clear_pointer (&action->id, g_free);
  g_clear_pointer (&action->message, g_free);
}

const gchar *
stg_webui_string_member (JsonObject *o, const gchar *name)
{
  JsonNode *n = json_object_get_member (o, name);
  return n != NULL && JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING
           ? json_node_get_string (n) : NULL;
}

JsonObject *
stg_webui_body_object (JsonParser *parser, const gchar *data, gsize len, GError **error)
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

gboolean
stg_webui_action_parse (const gchar *data, gsize len, StgWebUiAction *action, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();

  memset (action, 0, sizeof *action);
  JsonObject *o = stg_webui_body_object (parser, data, len, error);
  if (o == NULL)
    return FALSE;
  g_autoptr (ApiJobKey) job = stg_job_key_new (stg_webui_string_member (o, "role"),
                                               stg_webui_string_member (o, "environment"),
                                               stg_webui_string_member (o, "name"));
  const gchar *id = stg_webui_string_member (o, "id");
  const gchar *message = stg_webui_string_member (o, "message");
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

static void
route_action (StgHttpRequest *request, StgHttpResponse *response, gpointer user_data)
{
  StgWebUi *ui = user_data;
  const gchar *name = stg_http_request_path (request) + strlen ("/ui/api/update/");
  g_autoptr (GError) error = NULL;
  g_auto (StgWebUiAction) action = { 0 };

  /* Who asks is known before the body is read; the role comes from it. */
  if (!stg_webui_control_allowed (ui, request, response))
    return;
  g_autoptr (GBytes) body = stg_http_request_body (request);
  gsize len;
  const gchar *data = g_bytes_get_data (body, &len);
  if (!stg_webui_action_parse (data, len, &action, &error))
    {
      stg_webui_send_error (response, 400, error->message);
      return;
    }
  ApiJobKey *job = action.job;
  const gchar *message = action.message;
  if (!stg_webui_may_act (ui, request, response, job->role))
    return;
  g_autoptr (ApiJobUpdateKey) key = g_object_new (API_TYPE_JOB_UPDATE_KEY, "job", job, "id", action.id,
                                                  NULL);
  const gchar *user = ui->who != NULL ? ui->who : "web";

  gboolean ok;
  if (g_str_equal (name, "pause"))
    ok = stg_engine_pause_update (ui->ctx.engine, key, user, message, &error);
  else if (g_str_equal (name, "resume"))
    ok = stg_engine_resume_update (ui->ctx.engine, key, user, message, &error);
  else if (g_str_equal (name, "abort"))
    ok = stg_engine_abort_update (ui->ctx.engine, key, user, message, &error);
  else if (g_str_equal (name, "rollback"))
    ok = stg_engine_rollback_update (ui->ctx.engine, key, user, message, &error);
  else
    {
      stg_webui_send_error (response, 404, "no such action");
      return;
    }
  if (!ok)
    {
      stg_webui_send_error (response, stg_webui_engine_status (error), error->message);
      return;
    }
  stg_webui_send_ok (response);
}

void
stg_webui_update_routes (StgWebUi *ui, StgHttpServer *http)
{
  stg_webui_route (ui, http, "/ui/api/update", route_update);
  stg_webui_route (ui, http, "/ui/api/update/", route_action);
}
