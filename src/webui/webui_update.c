/* webui_update.c: the web UI's update page data and its controls.
 *
 * GET /ui/api/update?role=&environment=&name=&id= answers one update: its
 * summary, settings, progress (with one letter per changed instance, so
 * 10,000 instances cost about 10 KB), events, its conditions, the newest
 * instance events and the configuration diff. POST /ui/api/update/{pause,resume,abort,rollback}
 * acts on it; a POST must carry the session's token in X-Stagger-CSRF (a
 * page from another site cannot set that header), and GET never changes
 * anything. Main-loop thread only.
 */
#include "config.h"

#include <string.h>

#include "api/conditions.h"
#include "webui/webui_private.h"
#include "common/enums.h"
#include "common/jobkey.h"
#include "common/task_lines.h"

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
  member_int (b, "max_surge", s->__isset_maxSurge ? s->maxSurge : 0);
  json_builder_set_member_name (b, "max_surge_percent");
  if (s->__isset_maxSurgePercent)
    json_builder_add_double_value (b, s->maxSurgePercent);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "max_failed_instances_percent");
  if (s->__isset_maxFailedInstancesPercent)
    json_builder_add_double_value (b, s->maxFailedInstancesPercent);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "max_per_instance_failures_percent");
  if (s->__isset_maxPerInstanceFailuresPercent)
    json_builder_add_double_value (b, s->maxPerInstanceFailuresPercent);
  else
    json_builder_add_null_value (b);
  member_int (b, "max_batch_size", s->__isset_maxBatchSize ? s->maxBatchSize : 0);
  member_int (b, "update_deadline_ms", s->__isset_updateDeadlineMs ? s->updateDeadlineMs : 0);
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

/* A task config as readable lines, "key: value" (every field:
 * common/task_lines.h), sorted by key. */
static GPtrArray *
config_lines (ApiTaskConfig *t)
{
  GPtrArray *lines = stg_task_lines (t);

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
 * changed key "- old" then "+ new"; and the change's notes. */
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
  /* What the change means beyond its lines (instances replaced...). */
  g_autoptr (GPtrArray) notes = stg_task_change_notes (old, new);
  json_builder_set_member_name (b, "notes");
  json_builder_begin_array (b);
  for (guint k = 0; k < notes->len; k++)
    json_builder_add_string_value (b, notes->pdata[k]);
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

/* How many instances a set of ApiRange holds. */
static guint
count_instances (GHashTable *ranges)
{
  g_autoptr (GList) list = g_hash_table_get_keys (ranges);
  guint n = 0;

  for (GList *l = list; l != NULL; l = l->next)
    n += (guint) (((ApiRange *) l->data)->last - ((ApiRange *) l->data)->first + 1);
  return n;
}

/* The configuration most of the changed instances had (the diff's "old"). */
static ApiTaskConfig *
most_common_initial (ApiJobUpdateInstructions *ins)
{
  g_autoptr (GList) configs = g_hash_table_get_keys (ins->initialState);
  ApiTaskConfig *old = NULL;
  guint best = 0;

  for (GList *l = configs; l != NULL; l = l->next)
    {
      ApiInstanceTaskConfig *itc = l->data;
      guint n = count_instances (itc->instances);
      if (n > best)
        best = n, old = itc->task;
    }
  return old;
}

/* The page of update @row. */
static gboolean
build_update (StgWebUi *ui, JsonBuilder *b, const StgUpdateRow *row, GError **error)
{
  g_autoptr (ApiJobUpdateInstructions) ins = stg_store_get_update_instructions (ui->ctx.store, row->id, error);
  g_autoptr (GPtrArray) events = ins ? stg_store_list_update_events (ui->ctx.store, row->id, error) : NULL;
  gint64 ievents_total = 0;
  g_autoptr (GPtrArray) ievents = events ? stg_store_list_instance_events (ui->ctx.store, row->id,
                                                                           INSTANCE_EVENTS_SHOWN,
                                                                           &ievents_total, error) : NULL;
  StgUpdateProgress p;
  if (ievents == NULL || !stg_engine_update_progress (ui->ctx.engine, row->uid, &p, error))
    return FALSE;
  gint64 now = stg_clock_now_ms (ui->ctx.clock);

  json_builder_begin_object (b);
  stg_webui_add_fields (b, row->job, "role environment name");
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
  /* Surge instances: beyond the job's count while the update runs. */
  g_autofree gchar *surge = stg_ranges_to_string (p.surge);
  member_string (b, "surge", surge);
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

  stg_webui_add_records (b, "events", events, "status:update ts_ms=timestampMs user message");
  g_autoptr (GArray) changes = stg_conditions_update_changes (events);
  g_autoptr (GPtrArray) conditions = stg_conditions_build (STG_CONDITIONS_UPDATE,
                                                           (StgStatusChange *) changes->data,
                                                           changes->len);
  stg_webui_add_records (b, "conditions", conditions, STG_WEBUI_CONDITION_FIELDS);
  member_int (b, "instance_events_total", ievents_total);
  stg_webui_add_records (b, "instance_events", ievents,
                         "instance=instanceId ts_ms=timestampMs action:action message");
  json_builder_set_member_name (b, "diff");
  add_diff (b, most_common_initial (ins), ins->desiredState ? ins->desiredState->task : NULL);
  json_builder_end_object (b);
  stg_update_progress_clear (&p);
  return TRUE;
}

StgUpdateRow *
stg_webui_query_update (StgWebUi *ui, StgHttpRequest *request, guint *status, GError **error)
{
  g_autoptr (ApiJobKey) key = stg_webui_query_key (request, error);
  const gchar *id = stg_http_request_query (request, "id");

  *status = 400;
  if (key == NULL)
    return NULL;
  if (id == NULL || id[0] == '\0')
    return stg_webui_fail (error, 400, "query.id is missing"), NULL;
  *status = 404;
  g_autoptr (StgUpdateRow) row = stg_store_get_update (ui->ctx.store, id, error);
  if (row == NULL)
    return NULL;
  if (!stg_job_key_equal (row->job, key))
    return stg_webui_fail (error, 404, "no update %s of this job", id), NULL;
  return g_steal_pointer (&row);
}

static guint
read_update (StgWebUi *ui, StgHttpRequest *request, JsonBuilder *b, GError **error)
{
  guint status;
  g_autoptr (StgUpdateRow) row = stg_webui_query_update (ui, request, &status, error);

  if (row == NULL)
    return status;
  return build_update (ui, b, row, error) ? 200 : 500;
}

/* ---- POST /ui/api/update/<action> ---------------------------------------------------- */

typedef gboolean (*UpdateCall) (StgEngine *engine, const ApiJobUpdateKey *key, const gchar *user,
                                const gchar *message, GError **error);

static const struct
{
  const gchar *name;
  UpdateCall call;
} ACTIONS[] = {
  { "pause", stg_engine_pause_update },
  { "resume", stg_engine_resume_update },
  { "abort", stg_engine_abort_update },
  { "rollback", stg_engine_rollback_update },
};

static guint
control_update (StgWebUi *ui, StgHttpRequest *request, GError **error)
{
  const gchar *name = stg_http_request_path (request) + strlen ("/ui/api/update/");
  g_auto (StgWebUiAction) action = { 0 };
  g_autoptr (GBytes) body = stg_http_request_body (request);
  gsize len = 0;
  const gchar *data = body ? g_bytes_get_data (body, &len) : NULL;
  guint a = 0;

  /* Who asks is known before the body is read; the role comes from it. */
  if (!stg_webui_action_parse (data, len, &action, error))
    return 400;
  guint allowed = stg_webui_may_act (ui, action.job->role, error);
  if (allowed != 200)
    return allowed;
  while (a < G_N_ELEMENTS (ACTIONS) && !g_str_equal (ACTIONS[a].name, name))
    a++;
  if (a == G_N_ELEMENTS (ACTIONS))
    return stg_webui_fail (error, 404, "no such action");
  g_autoptr (ApiJobUpdateKey) key = g_object_new (API_TYPE_JOB_UPDATE_KEY, "job", action.job, "id",
                                                  action.id, NULL);
  if (!ACTIONS[a].call (ui->ctx.engine, key, stg_webui_actor (ui), action.message, error))
    return stg_webui_engine_status (*error);
  return 200;
}

const StgWebUiRoute stg_webui_update_routes[] = {
  { "/ui/api/update", .read = read_update },
  { "/ui/api/update/", .control = control_update },
  { NULL },
};
