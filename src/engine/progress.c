/* progress.c: an update's position, as stored and as shown.
 *
 * The progress JSON (direction, cursor, batch, counts, last failure, why it
 * rolls back) is written with every step that touches an update and read
 * back by recover.c; StgUpdateProgress is the read of one update for live displays,
 * from memory while the update is active and from the store afterwards.
 * Calls the store and errors.c only. Main-loop thread only.
 */
#include "config.h"

#include <json-glib/json-glib.h>

#include "engine/engine_private.h"
#include "engine/surge_private.h"
#include "engine/update_private.h"
#include "engine/work_state.h"

/* ---- the stored progress ------------------------------------------------------ */

/* Member @name: the instances of @u's work items for which @pick holds. */
static void
add_instances (JsonBuilder *b, const gchar *name, StgUpdate *u, gboolean (*pick) (const StgWork *))
{
  json_builder_set_member_name (b, name);
  json_builder_begin_array (b);
  for (guint i = 0; i < u->work->len; i++)
    if (pick (&g_array_index (u->work, StgWork, i)))
      json_builder_add_int_value (b, g_array_index (u->work, StgWork, i).instance);
  json_builder_end_array (b);
}

/* Instances waiting for their before gates: the runtime was not asked. */
static gboolean
in_before_gates (const StgWork *w)
{
  return w->gates == STG_WORK_GATES_BEFORE;
}

/* Instances their before gates failed: the runtime was never asked. */
static gboolean
unchanged (const StgWork *w)
{
  return w->unchanged;
}

gchar *
stg_update_progress_json (StgUpdate *u)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();

#define INT(name, v) json_builder_set_member_name (b, name), json_builder_add_int_value (b, v)
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "back");
  json_builder_add_boolean_value (b, u->back);
  INT ("cursor", u->cursor);
  INT ("batch_start", u->batch_start);
  INT ("batch_end", u->batch_end);
  INT ("batch_index", u->batch_index);
  INT ("batch_size", u->batch_size);
  INT ("queue_done", u->queue_done);
  json_builder_set_member_name (b, "batch_failed");
  json_builder_add_boolean_value (b, u->batch_failed);
  INT ("gate_ms", u->gate_ms);
  json_builder_set_member_name (b, "gating");
  json_builder_add_boolean_value (b, u->gating);
  INT ("gates_passed", u->gates_passed);
  INT ("done", u->n_done);
  INT ("failed", u->n_failed);
  INT ("surge_next", u->surge.next);
  INT ("surge_failed", u->surge.failed);
  INT ("predicted_ms", u->predicted_ms);
  json_builder_set_member_name (b, "last_failure");
  if (u->last_failure)
    json_builder_add_string_value (b, u->last_failure);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "rollback_cause");
  if (u->rollback_cause)
    json_builder_add_string_value (b, u->rollback_cause);
  else
    json_builder_add_null_value (b);
  add_instances (b, "before_gates", u, in_before_gates);
  add_instances (b, "unchanged", u, unchanged);
  json_builder_end_object (b);
#undef INT
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  return json_generator_to_data (gen, NULL);
}

static gint64
member_int (JsonObject *o, const gchar *name)
{
  return json_object_has_member (o, name) ? json_object_get_int_member (o, name) : 0;
}

/* Member @name's instances (gint32), or NULL when there are none. */
static GArray *
member_instances (JsonObject *o, const gchar *name)
{
  JsonArray *list = json_object_has_member (o, name) ? json_object_get_array_member (o, name)
                                                     : NULL;
  GArray *out = NULL;

  for (guint i = 0; list != NULL && i < json_array_get_length (list); i++)
    {
      if (out == NULL)
        out = g_array_new (FALSE, FALSE, sizeof (gint32));
      gint32 instance = (gint32) json_array_get_int_element (list, i);
      g_array_append_val (out, instance);
    }
  return out;
}

gboolean
stg_update_progress_load (StgUpdate *u, const gchar *json, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();

  if (!json_parser_load_from_data (parser, json, -1, error))
    return FALSE;
  JsonNode *root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_FAILED, "progress is not an object");
      return FALSE;
    }
  JsonObject *o = json_node_get_object (root);
  u->back = json_object_has_member (o, "back") && json_object_get_boolean_member (o, "back");
  u->cursor = (guint) member_int (o, "cursor");
  u->batch_start = (guint) member_int (o, "batch_start");
  u->batch_end = (guint) member_int (o, "batch_end");
  u->batch_index = (guint) member_int (o, "batch_index");
  u->batch_size = (guint) member_int (o, "batch_size");
  u->queue_done = (guint) member_int (o, "queue_done");
  u->batch_failed = json_object_has_member (o, "batch_failed") &&
                    json_object_get_boolean_member (o, "batch_failed");
  u->gate_ms = member_int (o, "gate_ms");
  u->gating = json_object_has_member (o, "gating") && json_object_get_boolean_member (o, "gating");
  u->gates_passed = (guint) member_int (o, "gates_passed");
  u->surge.next = (gint32) member_int (o, "surge_next");
  u->surge.failed = (guint) member_int (o, "surge_failed");
  u->predicted_ms = json_object_has_member (o, "predicted_ms") ? member_int (o, "predicted_ms")
                                                               : -1;
  if (json_object_has_member (o, "last_failure") &&
      !json_object_get_null_member (o, "last_failure"))
    u->last_failure = g_strdup (json_object_get_string_member (o, "last_failure"));
  if (json_object_has_member (o, "rollback_cause") &&
      !json_object_get_null_member (o, "rollback_cause"))
    u->rollback_cause = g_strdup (json_object_get_string_member (o, "rollback_cause"));
  u->gated = member_instances (o, "before_gates");
  u->unchanged = member_instances (o, "unchanged");
  return TRUE;
}

gint64
stg_update_progress_predicted (const gchar *json)
{
  g_autoptr (JsonParser) parser = json_parser_new ();

  if (json == NULL || !json_parser_load_from_data (parser, json, -1, NULL))
    return -1;
  JsonNode *root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root) ||
      !json_object_has_member (json_node_get_object (root), "predicted_ms"))
    return -1;
  return member_int (json_node_get_object (root), "predicted_ms");
}

/* ---- the progress shown ------------------------------------------------------- */

void
stg_update_progress_clear (StgUpdateProgress *p)
{
  g_clear_pointer (&p->in_flight, g_array_unref);
  g_clear_pointer (&p->instances, stg_ranges_free);
  g_clear_pointer (&p->surge, stg_ranges_free);
  g_clear_pointer (&p->states, g_free);
}

static gchar
state_letter (gint state)
{
  switch (state)
    {
    case STG_WORK_PENDING:
      return 'p';
    case STG_WORK_UPDATING:
      return 'u';
    case STG_WORK_UPDATED:
      return 'U';
    case STG_WORK_UPDATE_FAILED:
      return 'f';
    case STG_WORK_ROLLBACK_PENDING:
      return 'U'; /* still holds the new config */
    case STG_WORK_ROLLING_BACK:
      return 'b';
    case STG_WORK_ROLLED_BACK:
      return 'B';
    case STG_WORK_ROLLBACK_FAILED:
      return 'f';
    default:
      return 'p';
    }
}

gboolean
stg_engine_update_progress (StgEngine *e, const gchar *uid, StgUpdateProgress *p, GError **error)
{
  memset (p, 0, sizeof *p);
  p->in_flight = g_array_new (FALSE, FALSE, sizeof (gint32));
  p->instances = stg_ranges_new ();
  p->surge = stg_ranges_new ();

  StgUpdate *u = g_hash_table_lookup (e->updates, uid);
  if (u != NULL)
    {
      GString *states = g_string_sized_new (u->work->len);
      p->status = u->status;
      p->back = u->back;
      p->total = u->order->len;
      p->done = u->n_done;
      p->failed = u->n_failed;
      p->last_pulse_ms = u->last_pulse_ms;
      p->started_ms = u->created_ms;
      for (guint i = 0; i < u->work->len; i++)
        {
          StgWork *w = &g_array_index (u->work, StgWork, i);
          stg_ranges_add_one (p->instances, w->instance);
          g_string_append_c (states, state_letter (w->state));
          if (g_hash_table_contains (u->active, GUINT_TO_POINTER (i)))
            g_array_append_val (p->in_flight, w->instance);
        }
      p->states = g_string_free (states, FALSE);
      for (guint i = 0; i < u->surge.list->len; i++)
        stg_ranges_add_one (p->surge, g_array_index (u->surge.list, StgSurge, i).instance);
      return TRUE;
    }

  g_autoptr (StgUpdateRow) row = stg_store_get_update (e->store, uid, error);
  g_autoptr (GArray) rows = row ? stg_store_list_update_instances (e->store, row->id, error) : NULL;
  if (rows == NULL)
    {
      stg_engine_wrap_error (error);
      return FALSE;
    }
  GString *states = g_string_sized_new (rows->len);
  gboolean back = FALSE;
  for (guint i = 0; i < rows->len; i++)
    back |= g_array_index (rows, StgUpdateInstanceRow, i).state >= STG_WORK_ROLLBACK_PENDING;
  p->status = row->status;
  p->back = back;
  p->last_pulse_ms = row->last_pulse_ms;
  p->started_ms = row->created_ms;
  for (guint i = 0; i < rows->len; i++)
    {
      StgUpdateInstanceRow *r = &g_array_index (rows, StgUpdateInstanceRow, i);
      stg_ranges_add_one (p->instances, r->instance_id);
      g_string_append_c (states, state_letter (r->state));
      if (back ? r->state >= STG_WORK_ROLLBACK_PENDING : TRUE)
        p->total++;
      if (r->state == (back ? STG_WORK_ROLLED_BACK : STG_WORK_UPDATED))
        p->done++;
      if (r->state == (back ? STG_WORK_ROLLBACK_FAILED : STG_WORK_UPDATE_FAILED))
        p->failed++;
    }
  p->states = g_string_free (states, FALSE);
  return TRUE;
}
