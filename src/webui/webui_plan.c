/* webui_plan.c: the web UI's rollout plan pages: their data and controls.
 *
 * GET /ui/api/plans answers a page of plans, newest first; GET
 * /ui/api/plan?id=ID one plan: its stages in the plan's order (each after
 * the stages it depends on), each with its job's versions, its update and
 * rollback update, its approval and its gates with their latest attempts,
 * then the plan's events and every gate attempt. Both read the store, the
 * plan through plan_details.c as getRolloutPlanDetails does. POST
 * /ui/api/plan/ID/{pause,resume,abort,rollback,approve} goes to the engine;
 * as the update controls, it needs the session's token in X-Stagger-CSRF,
 * and a user allowed the roles of every job of the plan. Main-loop thread
 * only.
 */
#include "config.h"

#include <string.h>

#include "api/plan_details.h"
#include "webui/webui_private.h"
#include "common/enums.h"
#include "common/jobkey.h"

#define PLANS_PAGE_MAX 200
#define PLANS_PAGE_DEFAULT 25

/* ---- GET /ui/api/plans ------------------------------------------------------------ */

static void
add_summary (JsonBuilder *b, const StgPlanRow *row)
{
  json_builder_begin_object (b);
  member_string (b, "id", row->uid);
  member_string (b, "name", row->name);
  member_string (b, "status", stg_rollout_status_name (row->status));
  member_int (b, "since_ms", row->since_ms);
  member_string (b, "reason", row->reason);
  member_string (b, "user", row->user);
  member_int (b, "created_ms", row->created_ms);
  member_int (b, "stage_count", row->stage_count);
  member_int (b, "stages_done", row->stages_done);
  member_bool (b, "rollback_on_failure", row->rollback_on_failure);
  json_builder_end_object (b);
}

/* "1"/"true" TRUE, "0"/"false"/absent FALSE; anything else is bad. */
static gboolean
parse_flag (const gchar *text, gboolean *out)
{
  if (text == NULL || text[0] == '\0' || g_str_equal (text, "0") || g_str_equal (text, "false"))
    *out = FALSE;
  else if (g_str_equal (text, "1") || g_str_equal (text, "true"))
    *out = TRUE;
  else
    return FALSE;
  return TRUE;
}

static void
route_plans (StgHttpRequest *request, StgHttpResponse *response, gpointer user_data)
{
  StgWebUi *ui = user_data;
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonBuilder) b = json_builder_new ();
  gint32 offset = 0, limit = PLANS_PAGE_DEFAULT;
  gboolean active = FALSE;

  if (!stg_webui_only_get (request, response))
    return;
  if (!stg_webui_parse_count (stg_http_request_query (request, "offset"), G_MAXINT32 - 1,
                              &offset) ||
      !stg_webui_parse_count (stg_http_request_query (request, "limit"), PLANS_PAGE_MAX, &limit) ||
      limit == 0)
    {
      stg_webui_send_error (response, 400,
                            "offset and limit must be whole numbers (limit 1 to 200)");
      return;
    }
  if (!parse_flag (stg_http_request_query (request, "active"), &active))
    {
      stg_webui_send_error (response, 400, "active must be 1 or 0");
      return;
    }
  const gchar *name = stg_http_request_query (request, "name");
  /* One more than asked, to tell whether there is a next page. */
  g_autoptr (GPtrArray) rows = stg_store_list_plans (ui->ctx.store, name && name[0] ? name : NULL,
                                                     active, (guint) offset, (guint) limit + 1,
                                                     &error);
  if (rows == NULL)
    {
      g_warning ("webui: plans: %s", error->message);
      stg_webui_send_error (response, 500, error->message);
      return;
    }
  json_builder_begin_object (b);
  member_int (b, "offset", offset);
  member_int (b, "limit", limit);
  member_bool (b, "more", rows->len > (guint) limit);
  member_int (b, "now_ms", stg_clock_now_ms (ui->ctx.clock));
  json_builder_set_member_name (b, "plans");
  json_builder_begin_array (b);
  for (guint i = 0; i < rows->len && i < (guint) limit; i++)
    add_summary (b, rows->pdata[i]);
  json_builder_end_array (b);
  json_builder_end_object (b);
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  stg_webui_send_json (response, 200, root);
}

/* ---- GET /ui/api/plan ------------------------------------------------------------- */

/* The newest attempt of gate @gate of @stage in @phase, or NULL. */
static ApiRolloutGateResult *
latest_attempt (GPtrArray *results, const gchar *stage, const gchar *phase, const gchar *gate)
{
  for (guint i = results->len; i > 0; i--)
    {
      ApiRolloutGateResult *r = results->pdata[i - 1];
      if (g_strcmp0 (r->stage, stage) == 0 && g_strcmp0 (r->phase, phase) == 0 &&
          g_strcmp0 (r->gate, gate) == 0)
        return r;
    }
  return NULL;
}

/* The gates of one phase of @stage; @phase NULL for those between batches,
 * whose attempts are events of the stage's update instead. */
static void
add_gates (JsonBuilder *b, GPtrArray *gates, GPtrArray *results, const gchar *stage,
           const gchar *phase)
{
  json_builder_begin_array (b);
  for (guint i = 0; gates != NULL && i < gates->len; i++)
    {
      const ApiRolloutGate *g = gates->pdata[i];
      g_autofree gchar *what = stg_gate_describe (g);
      json_builder_begin_object (b);
      member_string (b, "name", g->name);
      member_string (b, "kind", stg_gate_kind_name (g->kind));
      member_string (b, "description", what);
      member_int (b, "timeout_s", g->__isset_timeoutSecs ? g->timeoutSecs : STG_GATE_TIMEOUT_SECS);
      member_int (b, "retries", g->__isset_retries ? g->retries : 0);
      member_int (b, "retry_interval_s",
                  g->__isset_retryIntervalSecs ? g->retryIntervalSecs
                                               : STG_GATE_RETRY_INTERVAL_SECS);
      ApiRolloutGateResult *r = phase ? latest_attempt (results, stage, phase, g->name) : NULL;
      json_builder_set_member_name (b, "last");
      if (r != NULL)
        {
          json_builder_begin_object (b);
          member_int (b, "ts_ms", r->timestampMs);
          member_int (b, "attempt", r->attempt);
          member_bool (b, "passed", r->passed);
          member_string (b, "message", r->message);
          json_builder_end_object (b);
        }
      else
        json_builder_add_null_value (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

static void
add_strings (JsonBuilder *b, const gchar *name, GPtrArray *list)
{
  json_builder_set_member_name (b, name);
  json_builder_begin_array (b);
  for (guint i = 0; list != NULL && i < list->len; i++)
    json_builder_add_string_value (b, list->pdata[i]);
  json_builder_end_array (b);
}

static void
add_stage (JsonBuilder *b, const ApiRolloutStageState *st, GPtrArray *results)
{
  g_autofree gchar *job = stg_job_key_to_string (st->job);
  gboolean started = st->__isset_update && st->update != NULL;

  json_builder_begin_object (b);
  member_string (b, "name", st->name);
  member_string (b, "job", job);
  json_builder_set_member_name (b, "job_key");
  json_builder_begin_object (b);
  member_string (b, "role", st->job->role);
  member_string (b, "environment", st->job->environment);
  member_string (b, "name", st->job->name);
  json_builder_end_object (b);
  member_string (b, "status", stg_rollout_status_name (st->status));
  member_int (b, "since_ms", st->sinceMs);
  member_string (b, "reason", st->reason);
  add_strings (b, "depends_on", st->dependsOn);
  member_string (b, "update", started ? st->update->id : NULL);
  member_string (b, "rollback_update",
                 st->__isset_rollbackUpdate && st->rollbackUpdate != NULL ? st->rollbackUpdate->id
                                                                          : NULL);
  member_bool (b, "require_approval", st->requireApproval);
  member_string (b, "approved_by", st->__isset_approvedBy ? st->approvedBy : NULL);
  member_int (b, "current_version", st->currentVersion);
  member_int (b, "desired_version", st->desiredVersion);
  member_int (b, "previous_version", st->previousVersion);

  /* gates_passed counts the gates of the phase the stage is in: before
   * its update until the update is started, after it from then on. */
  const gchar *phase = started ? "after" : "before";
  json_builder_set_member_name (b, "gates");
  json_builder_begin_object (b);
  member_string (b, "phase", phase);
  member_int (b, "passed", st->gatesPassed);
  json_builder_set_member_name (b, "before");
  add_gates (b, st->before, results, st->name, "before");
  json_builder_set_member_name (b, "after");
  add_gates (b, st->after, results, st->name, "after");
  json_builder_set_member_name (b, "between_batches");
  add_gates (b, st->batchGates, results, st->name, NULL);
  json_builder_end_object (b);
  json_builder_end_object (b);
}

static void
add_events (JsonBuilder *b, GPtrArray *events)
{
  json_builder_set_member_name (b, "events");
  json_builder_begin_array (b);
  for (guint i = 0; i < events->len; i++)
    {
      ApiRolloutEvent *e = events->pdata[i];
      json_builder_begin_object (b);
      member_int (b, "ts_ms", e->timestampMs);
      member_string (b, "stage", e->__isset_stage ? e->stage : NULL);
      member_string (b, "status", stg_rollout_status_name (e->status));
      member_string (b, "user", e->__isset_user ? e->user : NULL);
      member_string (b, "message", e->__isset_message ? e->message : NULL);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

static void
add_gate_results (JsonBuilder *b, GPtrArray *results)
{
  json_builder_set_member_name (b, "gate_results");
  json_builder_begin_array (b);
  for (guint i = 0; i < results->len; i++)
    {
      ApiRolloutGateResult *r = results->pdata[i];
      json_builder_begin_object (b);
      member_int (b, "ts_ms", r->timestampMs);
      member_string (b, "stage", r->stage);
      member_string (b, "phase", r->phase);
      member_string (b, "gate", r->gate);
      member_int (b, "attempt", r->attempt);
      member_bool (b, "passed", r->passed);
      member_string (b, "message", r->message);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

static void
build_plan (StgWebUi *ui, JsonBuilder *b, const ApiRolloutPlanDetails *d)
{
  const ApiRolloutPlanSummary *s = d->summary;

  json_builder_begin_object (b);
  member_string (b, "id", s->id);
  member_string (b, "name", s->name);
  member_string (b, "status", stg_rollout_status_name (s->status));
  member_int (b, "since_ms", s->sinceMs);
  member_string (b, "reason", s->reason);
  member_string (b, "user", s->user);
  member_int (b, "created_ms", s->createdTimestampMs);
  member_int (b, "stage_count", s->stageCount);
  member_int (b, "stages_done", s->stagesDone);
  member_bool (b, "rollback_on_failure", s->rollbackOnFailure);
  member_int (b, "now_ms", stg_clock_now_ms (ui->ctx.clock));
  json_builder_set_member_name (b, "stages");
  json_builder_begin_array (b);
  for (guint i = 0; i < d->stages->len; i++)
    add_stage (b, d->stages->pdata[i], d->gateResults);
  json_builder_end_array (b);
  add_events (b, d->events);
  add_gate_results (b, d->gateResults);
  json_builder_end_object (b);
}

/* The HTTP status for a failed read of the store. */
static guint
store_status (const GError *error)
{
  return g_error_matches (error, STG_STORE_ERROR, STG_STORE_ERROR_NOT_FOUND) ? 404 : 500;
}

static void
route_plan (StgHttpRequest *request, StgHttpResponse *response, gpointer user_data)
{
  StgWebUi *ui = user_data;
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonBuilder) b = json_builder_new ();

  if (!stg_webui_only_get (request, response))
    return;
  const gchar *id = stg_http_request_query (request, "id");
  if (id == NULL || id[0] == '\0')
    {
      stg_webui_send_error (response, 400, "query.id is missing");
      return;
    }
  g_autoptr (ApiRolloutPlanDetails) d = stg_plan_details_read (ui->ctx.store, id, &error);
  if (d == NULL)
    {
      guint status = store_status (error);
      if (status == 500)
        g_warning ("webui: plan %s: %s", id, error->message);
      stg_webui_send_error (response, status, error->message);
      return;
    }
  build_plan (ui, b, d);
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  stg_webui_send_json (response, 200, root);
}

/* ---- POST /ui/api/plan/ID/ACTION --------------------------------------------------- */

typedef gboolean (*PlanCall) (StgEngine *engine, const gchar *uid, const gchar *user,
                              const gchar *message, GError **error);

static const struct
{
  const gchar *name;
  PlanCall call; /* NULL: approve, which names a stage */
} ACTIONS[] = {
  { "pause", stg_engine_pause_plan },
  { "resume", stg_engine_resume_plan },
  { "abort", stg_engine_abort_plan },
  { "rollback", stg_engine_rollback_plan },
  { "approve", NULL },
};

/* A plan control's body: empty, or {message?, stage?} (stage: approve's
 * only). Sets the strings (NULL when absent or empty), or answers 400. */
static gboolean
parse_body (StgHttpRequest *request, StgHttpResponse *response, gchar **message, gchar **stage)
{
  g_autoptr (GBytes) body = stg_http_request_body (request);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  gsize len = 0;
  const gchar *data = body ? g_bytes_get_data (body, &len) : NULL;

  if (len == 0)
    return TRUE;
  JsonObject *o = stg_webui_body_object (parser, data, len, &error);
  if (o == NULL)
    {
      stg_webui_send_error (response, 400, error->message);
      return FALSE;
    }
  static const gchar *const members[] = { "message", "stage" };
  gchar **out[] = { message, stage };
  for (guint i = 0; i < G_N_ELEMENTS (members); i++)
    {
      JsonNode *n = json_object_get_member (o, members[i]);
      const gchar *text = stg_webui_string_member (o, members[i]);
      if (n != NULL && !JSON_NODE_HOLDS_NULL (n) && text == NULL)
        {
          g_autofree gchar *why = g_strdup_printf ("body.%s must be a string", members[i]);
          stg_webui_send_error (response, 400, why);
          return FALSE;
        }
      *out[i] = text != NULL && text[0] != '\0' ? g_strdup (text) : NULL;
    }
  return TRUE;
}

/* Whether the viewer may change every job of @plan; if not, answered. */
static gboolean
may_change_plan (StgWebUi *ui, StgHttpRequest *request, StgHttpResponse *response,
                 const ApiRolloutPlan *plan)
{
  for (guint i = 0; plan != NULL && i < plan->stages->len; i++)
    {
      const gchar *role = stg_plan_stage_role (plan->stages->pdata[i]);
      if (role != NULL && !stg_webui_may_act (ui, request, response, role))
        return FALSE;
    }
  return TRUE;
}

static void
route_action (StgHttpRequest *request, StgHttpResponse *response, gpointer user_data)
{
  StgWebUi *ui = user_data;
  const gchar *rest = stg_http_request_path (request) + strlen ("/ui/api/plan/");
  g_autoptr (GError) error = NULL;
  g_autofree gchar *message = NULL, *stage = NULL;

  /* Who asks is known before anything is read; the roles come from the plan. */
  if (!stg_webui_control_allowed (ui, request, response))
    return;
  const gchar *slash = strrchr (rest, '/');
  if (slash == NULL || slash == rest || memchr (rest, '/', (gsize) (slash - rest)) != NULL)
    {
      stg_webui_send_error (response, 404, "no such control: use /ui/api/plan/ID/ACTION");
      return;
    }
  g_autofree gchar *id = g_strndup (rest, (gsize) (slash - rest));
  const gchar *name = slash + 1;
  guint a = 0;
  while (a < G_N_ELEMENTS (ACTIONS) && !g_str_equal (ACTIONS[a].name, name))
    a++;
  if (a == G_N_ELEMENTS (ACTIONS))
    {
      stg_webui_send_error (response, 404, "no such action");
      return;
    }
  if (!parse_body (request, response, &message, &stage))
    return;
  if (stage != NULL && ACTIONS[a].call != NULL)
    {
      stg_webui_send_error (response, 400, "body.stage: only approve names a stage");
      return;
    }
  g_autoptr (StgPlanRow) row = stg_store_get_plan (ui->ctx.store, id, &error);
  if (row == NULL)
    {
      stg_webui_send_error (response, store_status (error), error->message);
      return;
    }
  if (!may_change_plan (ui, request, response, row->plan))
    return;
  const gchar *user = ui->who != NULL ? ui->who : "web";
  gboolean ok = ACTIONS[a].call != NULL
                    ? ACTIONS[a].call (ui->ctx.engine, id, user, message, &error)
                    : stg_engine_approve_stage (ui->ctx.engine, id, stage, user, message, &error);
  if (!ok)
    {
      stg_webui_send_error (response, stg_webui_engine_status (error), error->message);
      return;
    }
  stg_webui_send_ok (response);
}

void
stg_webui_plan_routes (StgWebUi *ui, StgHttpServer *http)
{
  stg_webui_route (ui, http, "/ui/api/plans", route_plans);
  stg_webui_route (ui, http, "/ui/api/plan", route_plan);
  stg_webui_route (ui, http, "/ui/api/plan/", route_action);
}
