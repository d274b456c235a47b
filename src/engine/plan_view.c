/* plan_view.c: what a rollout plan's stage shows of its job: the versions
 * (what most of its instances should run, what the stage moves it to,
 * where it moves it now) and its readiness (how many instances run that
 * configuration healthy, of how many, and why each other one is not
 * ready), read from the store as the job stands now; and the record of
 * where a stage ended (schema/019_stage_ends.sql), written when the stage
 * or its plan ends, which an ended plan shows instead of its jobs' live
 * state. Reads the store; plan_state.c saves the record in the plan's
 * step. Main-loop thread only. */
#include "config.h"

#include <json-glib/json-glib.h>

#include "common/enums.h"
#include "common/json_check.h"
#include "common/json_write.h"
#include "engine/plan_private.h"
#include "store/plans.h"

/* The version of config @id (0 for none). */
static gint
version_of (StgStore *store, gint64 id)
{
  return id > 0 ? stg_store_config_version (store, id) : 0;
}

/* Why instance @r of a job is not ready on @target, or NULL when it is
 * (@last: its newest event, nullable). */
static gchar *
unready_reason (StgStore *store, const StgInstanceRow *r, gint64 target, ApiTaskEvent *last)
{
  const gchar *said = last != NULL && last->__isset_message && last->message != NULL &&
                              last->message[0] != '\0'
                          ? last->message
                          : NULL;

  if (r->config_id != target)
    return g_strdup_printf ("should run version %d, not %d", version_of (store, target),
                            version_of (store, r->config_id));
  if (r->run_config_id != target && r->run_config_id != 0)
    return g_strdup_printf ("runs version %d; version %d %s", version_of (store, r->run_config_id),
                            version_of (store, target), said ? said : "is not running yet");
  if (r->status == API_SCHEDULE_STATUS_RUNNING && r->run_config_id == target)
    return NULL;
  return g_strdup_printf ("%s%s%s", stg_schedule_status_name (r->status), said ? ": " : "",
                          said ? said : "");
}

static void
add_unready (ApiRolloutStageState *st, gint32 instance, gint status, const gchar *reason)
{
  g_ptr_array_add (st->unready, g_object_new (API_TYPE_UNREADY_INSTANCE, "instanceId", instance,
                                              "status", status, "reason", reason, NULL));
}

/* How many of @job's instances 0..@desired-1 run @target healthy, and why
 * each other one does not. */
static void
readiness (StgStore *store, const StgJobRow *job, gint64 target, gint32 desired,
           ApiRolloutStageState *st)
{
  g_autoptr (GArray) rows = job ? stg_store_list_instances (store, job->id, NULL) : NULL;
  g_autoptr (GHashTable) last = job ? stg_store_job_last_task_events (store, job->id, NULL) : NULL;
  gint32 ready = 0;
  guint k = 0; /* rows are in instance order */

  for (gint32 i = 0; i < desired; i++)
    {
      while (rows != NULL && k < rows->len &&
             g_array_index (rows, StgInstanceRow, k).instance_id < i)
        k++;
      const StgInstanceRow *r = rows != NULL && k < rows->len &&
                                        g_array_index (rows, StgInstanceRow, k).instance_id == i
                                    ? &g_array_index (rows, StgInstanceRow, k)
                                    : NULL;
      ApiTaskEvent *ev = r && last ? g_hash_table_lookup (last, GINT_TO_POINTER (i)) : NULL;
      g_autofree gchar *why = r != NULL ? unready_reason (store, r, target, ev)
                                        : g_strdup ("missing: not started yet");
      if (why == NULL)
        ready++;
      else
        add_unready (st, i, r != NULL ? r->status : API_SCHEDULE_STATUS_PENDING, why);
    }
  g_object_set (st, "readyInstances", ready, "desiredInstances", desired, NULL);
}

/* The stage's versions and readiness from its job as it stands now. */
static void
live_view (StgStore *store, const ApiRolloutStage *spec, const StgStageRow *row,
           ApiRolloutStageState *st)
{
  g_autoptr (StgJobRow) job = stg_store_get_job (store, spec->request->taskConfig->job, NULL);
  gint64 main = 0, desired = 0;

  if (job != NULL && !stg_store_main_config (store, job->id, &main, NULL))
    main = 0;
  if (row->update_uid != NULL)
    {
      g_autoptr (StgUpdateRow) u = stg_store_get_update (store, row->update_uid, NULL);
      desired = u != NULL && u->desired_config_id > 0 ? u->desired_config_id : 0;
    }
  /* Where it moves its job now: back to what the plan found once it goes
   * back (where a rollback ended), forward to its update's configuration,
   * and, before its update, to the one its job file makes when the store
   * has it (its readiness then counts the job as it is). */
  gboolean back = row->rolled || row->status == API_ROLLOUT_STATUS_ROLLING_BACK ||
                  row->status == API_ROLLOUT_STATUS_ROLLED_BACK;
  gint64 target = 0, ready_on = 0;
  gint32 want = 0;
  if (back && row->prior_known)
    {
      target = ready_on = row->prior_config_id;
      want = target != 0 ? row->prior_count : 0;
    }
  else if (desired != 0)
    {
      target = ready_on = desired;
      want = spec->request->instanceCount;
    }
  else
    {
      desired = target = row->planned_config_id;
      ready_on = main;
      want = job != NULL && main != 0 ? job->instance_count : 0;
    }
  g_object_set (st, "currentVersion", version_of (store, main), "desiredVersion",
                version_of (store, desired), "targetVersion", version_of (store, target), NULL);
  readiness (store, job, ready_on, want, st);
}

/* The stage's versions and readiness as it recorded them at its end. */
static void
recorded_view (const StgStageRow *row, ApiRolloutStageState *st)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonNode *root = stg_json_load (parser, row->end_unready ? row->end_unready : "[]", -1, NULL)
                       ? json_parser_get_root (parser)
                       : NULL;
  JsonArray *list = root != NULL && JSON_NODE_HOLDS_ARRAY (root) ? json_node_get_array (root)
                                                                 : NULL;

  g_object_set (st, "currentVersion", row->end_current, "desiredVersion", row->end_desired,
                "targetVersion", row->end_target, "readyInstances", row->end_ready,
                "desiredInstances", row->end_want, NULL);
  for (guint i = 0; list != NULL && i < json_array_get_length (list); i++)
    {
      JsonNode *n = json_array_get_element (list, i);
      if (!JSON_NODE_HOLDS_OBJECT (n))
        continue;
      JsonObject *o = json_node_get_object (n);
      add_unready (st, (gint32) json_object_get_int_member_with_default (o, "instance", 0),
                   (gint) json_object_get_int_member_with_default (o, "status", 0),
                   json_object_get_string_member_with_default (o, "reason", ""));
    }
}

void
stg_plan_stage_view (StgStore *store, const ApiRolloutStage *spec, const StgStageRow *row,
                     gboolean ended, ApiRolloutStageState *st)
{
  if (ended && row->end_ms > 0)
    recorded_view (row, st);
  else
    live_view (store, spec, row, st);
}

/* @st's instances not ready, as end_unready's JSON. */
static gchar *
unready_json (ApiRolloutStageState *st)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_array (b);
  for (guint i = 0; i < st->unready->len; i++)
    {
      ApiUnreadyInstance *u = st->unready->pdata[i];
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "instance");
      json_builder_add_int_value (b, u->instanceId);
      json_builder_set_member_name (b, "status");
      json_builder_add_int_value (b, u->status);
      json_builder_set_member_name (b, "reason");
      json_builder_add_string_value (b, u->reason ? u->reason : "");
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  return stg_json_write (root, FALSE, NULL);
}

void
stg_stage_note_end (StgStage *s)
{
  StgEngine *e = s->plan->engine;
  g_autoptr (ApiRolloutStageState) st = g_object_new (API_TYPE_ROLLOUT_STAGE_STATE, NULL);

  live_view (e->store, s->spec, &s->row, st);
  s->row.end_ms = stg_clock_now_ms (e->clock);
  s->row.end_current = st->currentVersion;
  s->row.end_desired = st->desiredVersion;
  s->row.end_target = st->targetVersion;
  s->row.end_ready = st->readyInstances;
  s->row.end_want = st->desiredInstances;
  g_free (s->row.end_unready);
  s->row.end_unready = unready_json (st);
  g_free (s->row.end_message);
  s->row.end_message = g_strdup (s->row.reason ? s->row.reason : "");
}
