/* webui_plan.c: the web UI's rollout plan pages: their data and controls.
 *
 * GET /ui/api/plans answers a page of plans, newest first; GET
 * /ui/api/plan?id=ID one plan: its conditions and variables, its stages in
 * the plan's order (each after the stages it depends on), each with its
 * job's versions, its readiness and the instances not ready, its
 * conditions, its update and rollback update, its approval and its gates
 * with their latest attempts, then the plan's events and every gate
 * attempt. Both read the store, the
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
#include "store/plans.h"

#define PLANS_PAGE_MAX 200
#define PLANS_PAGE_DEFAULT 25

/* ---- GET /ui/api/plans ------------------------------------------------------------ */

/* The members of a plan's summary, in the list and on the plan's page. */
static void
add_summary_members (JsonBuilder *b, const ApiRolloutPlanSummary *s)
{
  stg_webui_add_fields (b, s,
                        "id name status:rollout since_ms reason reason_code user "
                        "created_ms=createdTimestampMs stage_count stages_done "
                        "rollback_on_failure");
}

/* A plan of the list. */
static void
add_row (JsonBuilder *b, gconstpointer item)
{
  g_autoptr (ApiRolloutPlanSummary) summary = stg_plan_summary_new (item);

  add_summary_members (b, summary);
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

static guint
read_plans (StgWebUi *ui, StgHttpRequest *request, JsonBuilder *b, GError **error)
{
  gint32 offset = 0, limit = PLANS_PAGE_DEFAULT;
  gboolean active = FALSE;

  if (!stg_webui_parse_count (stg_http_request_query (request, "offset"), G_MAXINT32 - 1,
                              &offset) ||
      !stg_webui_parse_count (stg_http_request_query (request, "limit"), PLANS_PAGE_MAX, &limit) ||
      limit == 0)
    return stg_webui_fail (error, 400, "offset and limit must be whole numbers (limit 1 to 200)");
  if (!parse_flag (stg_http_request_query (request, "active"), &active))
    return stg_webui_fail (error, 400, "active must be 1 or 0");
  const gchar *name = stg_http_request_query (request, "name");
  /* One more than asked, to tell whether there is a next page. */
  g_autoptr (GPtrArray) rows = stg_store_list_plans (ui->ctx.store, name && name[0] ? name : NULL,
                                                     active, (guint) offset, (guint) limit + 1,
                                                     error);
  if (rows == NULL)
    return 500;
  json_builder_begin_object (b);
  member_int (b, "now_ms", stg_clock_now_ms (ui->ctx.clock));
  stg_webui_add_page (b, offset, limit, "plans", rows, add_row);
  json_builder_end_object (b);
  return 200;
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
          stg_webui_add_fields (b, r, "ts_ms=timestampMs attempt passed message");
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
  stg_webui_add_fields (b, st->job, "role environment name");
  json_builder_end_object (b);
  member_string (b, "status", stg_rollout_status_name (st->status));
  stg_webui_add_fields (b, st, "since_ms reason");
  add_strings (b, "depends_on", st->dependsOn);
  member_string (b, "update", started ? st->update->id : NULL);
  member_string (b, "rollback_update",
                 st->__isset_rollbackUpdate && st->rollbackUpdate != NULL ? st->rollbackUpdate->id
                                                                          : NULL);
  member_bool (b, "require_approval", st->requireApproval);
  member_string (b, "approved_by", st->__isset_approvedBy ? st->approvedBy : NULL);
  stg_webui_add_fields (b, st,
                        "current_version desired_version previous_version target_version "
                        "reason_code ready=readyInstances desired=desiredInstances");
  stg_webui_add_records (b, "unready", st->unready, "instance=instanceId status:schedule reason");
  stg_webui_add_records (b, "conditions", st->conditions, STG_WEBUI_CONDITION_FIELDS);

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
build_plan (StgWebUi *ui, JsonBuilder *b, const ApiRolloutPlanDetails *d)
{
  json_builder_begin_object (b);
  add_summary_members (b, d->summary);
  member_int (b, "now_ms", stg_clock_now_ms (ui->ctx.clock));
  json_builder_set_member_name (b, "stages");
  json_builder_begin_array (b);
  for (guint i = 0; i < d->stages->len; i++)
    add_stage (b, d->stages->pdata[i], d->gateResults);
  json_builder_end_array (b);
  stg_webui_add_records (b, "conditions", d->conditions, STG_WEBUI_CONDITION_FIELDS);
  json_builder_set_member_name (b, "variables");
  json_builder_begin_object (b);
  if (d->plan != NULL && d->plan->__isset_variables && d->plan->variables != NULL)
    {
      g_autoptr (GList) names = g_list_sort (g_hash_table_get_keys (d->plan->variables),
                                             (GCompareFunc) g_strcmp0);
      for (GList *l = names; l != NULL; l = l->next)
        member_string (b, l->data, g_hash_table_lookup (d->plan->variables, l->data));
    }
  json_builder_end_object (b);
  stg_webui_add_records (b, "events", d->events,
                         "ts_ms=timestampMs stage status:rollout reason_code user message");
  stg_webui_add_records (b, "gate_results", d->gateResults,
                         "ts_ms=timestampMs stage phase gate attempt passed message");
  json_builder_end_object (b);
}

static guint
read_plan (StgWebUi *ui, StgHttpRequest *request, JsonBuilder *b, GError **error)
{
  const gchar *id = stg_http_request_query (request, "id");

  if (id == NULL || id[0] == '\0')
    return stg_webui_fail (error, 400, "query.id is missing");
  g_autoptr (ApiRolloutPlanDetails) d = stg_plan_details_read (ui->ctx.store, id, error);
  if (d == NULL)
    return stg_webui_store_status (*error);
  build_plan (ui, b, d);
  return 200;
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

/* 200 when the viewer may change every job of @plan; else 401 or 403. */
static guint
may_change_plan (StgWebUi *ui, const ApiRolloutPlan *plan, GError **error)
{
  guint status = 200;

  for (guint i = 0; status == 200 && plan != NULL && i < plan->stages->len; i++)
    {
      const gchar *role = stg_plan_stage_role (plan->stages->pdata[i]);
      if (role != NULL)
        status = stg_webui_may_act (ui, role, error);
    }
  return status;
}

/* Who asks is known before anything is read; the roles come from the plan. */
static guint
control_plan (StgWebUi *ui, StgHttpRequest *request, GError **error)
{
  static const gchar *const members[] = { "message", "stage" };
  g_autofree gchar *id = NULL;
  const gchar *name = NULL;
  gchar *strings[G_N_ELEMENTS (members)] = { NULL };
  guint a = 0, status;

  if (!stg_webui_path_control (request, "/ui/api/plan/", &id, &name, error))
    return 404;
  while (a < G_N_ELEMENTS (ACTIONS) && !g_str_equal (ACTIONS[a].name, name))
    a++;
  if (a == G_N_ELEMENTS (ACTIONS))
    return stg_webui_fail (error, 404, "no such action");
  status = stg_webui_body_strings (request, G_N_ELEMENTS (members), members, strings, error);
  g_autofree gchar *message = strings[0], *stage = strings[1];
  if (status != 200)
    return status;
  if (stage != NULL && ACTIONS[a].call != NULL)
    return stg_webui_fail (error, 400, "body.stage: only approve names a stage");
  g_autoptr (StgPlanRow) row = stg_store_get_plan (ui->ctx.store, id, error);
  if (row == NULL)
    return stg_webui_store_status (*error);
  if ((status = may_change_plan (ui, row->plan, error)) != 200)
    return status;
  const gchar *user = stg_webui_actor (ui);
  gboolean ok = ACTIONS[a].call != NULL
                    ? ACTIONS[a].call (ui->ctx.engine, id, user, message, error)
                    : stg_engine_approve_stage (ui->ctx.engine, id, stage, user, message, error);
  return ok ? 200 : stg_webui_engine_status (*error);
}

const StgWebUiRoute stg_webui_plan_routes[] = {
  { "/ui/api/plans", .read = read_plans },
  { "/ui/api/plan", .read = read_plan },
  { "/ui/api/plan/", .control = control_plan },
  { NULL },
};
