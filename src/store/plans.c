/* plans.c: rollout plans in the store: the plan as started (a RolloutPlan,
 * Thrift binary), where it and each of its stages stand, and its events
 * and gate attempts (schema/010_plans.sql), with reason codes
 * (schema/015_reasons.sql), where each stage ended and the configuration
 * its job file makes (schema/019_stage_ends.sql). The engine's plan.c writes
 * them inside its steps; the API reads them. Main-loop thread only.
 */
#include "config.h"

#include "common/enums.h"
#include "common/jobkey.h"
#include "store/store_private.h"
#include "store/plans.h"

#define PLAN_COLUMNS \
  "p.id, p.uid, p.name, p.\"user\", p.status, p.since_ms, p.created_ms, p.reason, " \
  "p.stopping, p.back, p.rollback_on_failure, p.reason_code, " \
  "(SELECT COUNT(*) FROM rollout_stages s WHERE s.plan_id = p.id), " \
  "(SELECT COUNT(*) FROM rollout_stages s WHERE s.plan_id = p.id AND s.status = 4)"

/* ---- rows ------------------------------------------------------------------ */

void
stg_stage_row_clear (StgStageRow *row)
{
  g_clear_pointer (&row->name, g_free);
  g_clear_pointer (&row->reason, g_free);
  g_clear_pointer (&row->reason_code, g_free);
  g_clear_pointer (&row->update_uid, g_free);
  g_clear_pointer (&row->rollback_uid, g_free);
  g_clear_pointer (&row->approved_by, g_free);
  g_clear_pointer (&row->end_unready, g_free);
  g_clear_pointer (&row->end_message, g_free);
}

void
stg_plan_row_free (StgPlanRow *row)
{
  if (row == NULL)
    return;
  g_free (row->uid);
  g_free (row->name);
  g_free (row->user);
  g_free (row->reason);
  g_free (row->reason_code);
  g_clear_object (&row->plan);
  g_clear_pointer (&row->stages, g_array_unref);
  g_free (row);
}

static StgPlanRow *
read_plan (StgStmt *st)
{
  StgPlanRow *row = g_new0 (StgPlanRow, 1);

  row->id = stg_db_column_int64 (st, 0);
  row->uid = stg_column_dup (st, 1);
  row->name = stg_column_dup (st, 2);
  row->user = stg_column_dup (st, 3);
  row->status = stg_db_column_int (st, 4);
  row->since_ms = stg_db_column_int64 (st, 5);
  row->created_ms = stg_db_column_int64 (st, 6);
  row->reason = stg_column_dup (st, 7);
  row->stopping = stg_db_column_int64 (st, 8) != 0;
  row->back = stg_db_column_int64 (st, 9) != 0;
  row->rollback_on_failure = stg_db_column_int64 (st, 10) != 0;
  row->reason_code = stg_column_dup (st, 11);
  row->stage_count = stg_db_column_int (st, 12);
  row->stages_done = stg_db_column_int (st, 13);
  return row;
}

static gchar *
column_nullable (StgStmt *st, int col)
{
  const gchar *text = stg_db_column_text (st, col);
  return text ? g_strdup (text) : NULL;
}

/* ---- writing ---------------------------------------------------------------- */

static gboolean
insert_stage (StgStore *store, gint64 plan_id, gint idx, const gchar *name, gint64 now_ms,
              GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (
      store,
      "INSERT INTO rollout_stages (plan_id, idx, name, status, since_ms) VALUES (?, ?, ?, ?, ?)",
      error);
  if (st == NULL)
    return FALSE;
  stg_db_bind_int64 (st, 1, plan_id);
  stg_db_bind_int64 (st, 2, idx);
  stg_bind_text (st, 3, name);
  stg_db_bind_int64 (st, 4, API_ROLLOUT_STATUS_PENDING);
  stg_db_bind_int64 (st, 5, now_ms);
  return stg_store_exec_stmt (store, st, error, "recording a plan's stage");
}

gboolean
stg_store_insert_plan (StgStore *store, StgPlanRow *row, ApiRolloutPlan *plan, GError **error)
{
  g_autoptr (GBytes) blob = stg_thrift_to_bytes (THRIFT_STRUCT (plan), error);

  if (blob == NULL)
    return FALSE;
  {
    g_autoptr (StgStmt) st = stg_store_stmt (
        store,
        "INSERT INTO rollout_plans (uid, name, \"user\", status, active, since_ms, created_ms, "
        "reason, plan, rollback_on_failure, reason_code) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "RETURNING id",
        error);
    if (st == NULL)
      return FALSE;
    stg_bind_text (st, 1, row->uid);
    stg_bind_text (st, 2, row->name);
    stg_bind_text (st, 3, row->user ? row->user : "");
    stg_db_bind_int64 (st, 4, row->status);
    stg_db_bind_int64 (st, 5, !stg_rollout_status_is_terminal (row->status));
    stg_db_bind_int64 (st, 6, row->since_ms);
    stg_db_bind_int64 (st, 7, row->created_ms);
    stg_bind_text (st, 8, row->reason ? row->reason : "");
    stg_db_bind_blob (st, 9, g_bytes_get_data (blob, NULL), g_bytes_get_size (blob));
    stg_db_bind_int64 (st, 10, plan->rollbackOnFailure);
    stg_bind_text (st, 11, row->reason_code ? row->reason_code : "");
    if (!stg_store_insert_id (store, st, &row->id, error, "recording a plan"))
      return FALSE;
  }
  for (guint i = 0; i < plan->stages->len; i++)
    {
      ApiRolloutStage *stage = plan->stages->pdata[i];
      if (!insert_stage (store, row->id, (gint) i, stage->name, row->created_ms, error))
        return FALSE;
    }
  return TRUE;
}

gboolean
stg_store_set_plan (StgStore *store, const StgPlanRow *row, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (
      store,
      "UPDATE rollout_plans SET status = ?, active = ?, since_ms = ?, reason = ?, stopping = ?, "
      "back = ?, reason_code = ? WHERE id = ?",
      error);
  if (st == NULL)
    return FALSE;
  stg_db_bind_int64 (st, 1, row->status);
  stg_db_bind_int64 (st, 2, !stg_rollout_status_is_terminal (row->status));
  stg_db_bind_int64 (st, 3, row->since_ms);
  stg_bind_text (st, 4, row->reason ? row->reason : "");
  stg_db_bind_int64 (st, 5, row->stopping);
  stg_db_bind_int64 (st, 6, row->back);
  stg_bind_text (st, 7, row->reason_code ? row->reason_code : "");
  stg_db_bind_int64 (st, 8, row->id);
  return stg_store_exec_stmt (store, st, error, "recording a plan's status");
}

gboolean
stg_store_set_stage (StgStore *store, gint64 plan_id, const StgStageRow *row, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (
      store,
      "UPDATE rollout_stages SET status = ?, since_ms = ?, reason = ?, update_uid = ?, "
      "rollback_uid = ?, prior_config_id = ?, prior_count = ?, prior_known = ?, "
      "gates_passed = ?, roll_back = ?, rolled = ?, approved_by = ?, reason_code = ?, "
      "end_ms = ?, end_current = ?, end_desired = ?, end_target = ?, end_ready = ?, "
      "end_want = ?, end_unready = ?, end_message = ? "
      "WHERE plan_id = ? AND idx = ?",
      error);
  if (st == NULL)
    return FALSE;
  stg_db_bind_int64 (st, 1, row->status);
  stg_db_bind_int64 (st, 2, row->since_ms);
  stg_bind_text (st, 3, row->reason ? row->reason : "");
  stg_bind_text (st, 4, row->update_uid);
  stg_bind_text (st, 5, row->rollback_uid);
  stg_db_bind_int64 (st, 6, row->prior_config_id);
  stg_db_bind_int64 (st, 7, row->prior_count);
  stg_db_bind_int64 (st, 8, row->prior_known);
  stg_db_bind_int64 (st, 9, row->gates_passed);
  stg_db_bind_int64 (st, 10, row->roll_back);
  stg_db_bind_int64 (st, 11, row->rolled);
  stg_bind_text (st, 12, row->approved_by);
  stg_bind_text (st, 13, row->reason_code ? row->reason_code : "");
  stg_db_bind_int64 (st, 14, row->end_ms);
  stg_db_bind_int64 (st, 15, row->end_current);
  stg_db_bind_int64 (st, 16, row->end_desired);
  stg_db_bind_int64 (st, 17, row->end_target);
  stg_db_bind_int64 (st, 18, row->end_ready);
  stg_db_bind_int64 (st, 19, row->end_want);
  stg_bind_text (st, 20, row->end_unready ? row->end_unready : "[]");
  stg_bind_text (st, 21, row->end_message ? row->end_message : "");
  stg_db_bind_int64 (st, 22, plan_id);
  stg_db_bind_int64 (st, 23, row->idx);
  return stg_store_exec_stmt (store, st, error, "recording a stage's status");
}

gboolean
stg_store_set_stage_planned (StgStore *store, gint64 plan_id, gint idx, gint64 config_id,
                             GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (
      store, "UPDATE rollout_stages SET planned_config_id = ? WHERE plan_id = ? AND idx = ?",
      error);
  if (st == NULL)
    return FALSE;
  stg_db_bind_int64 (st, 1, config_id);
  stg_db_bind_int64 (st, 2, plan_id);
  stg_db_bind_int64 (st, 3, idx);
  return stg_store_exec_stmt (store, st, error, "recording a stage's planned configuration");
}

static gboolean
add_event (StgStore *store, gint64 plan_id, const gchar *stage, gint64 ts_ms, gint status,
           const gchar *code, const gchar *user, const gchar *message, const gchar *gate,
           const gchar *phase, gint attempt, gboolean passed, GError **error)
{
  g_autoptr (StgStmt) st = stg_store_stmt (
      store,
      "INSERT INTO rollout_events (plan_id, stage, ts_ms, status, \"user\", message, gate, phase, "
      "attempt, passed, epoch, reason_code) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      error);
  if (st == NULL)
    return FALSE;
  stg_db_bind_int64 (st, 1, plan_id);
  stg_bind_text (st, 2, stage);
  stg_db_bind_int64 (st, 3, ts_ms);
  stg_db_bind_int64 (st, 4, status);
  stg_bind_text (st, 5, user);
  stg_bind_text (st, 6, message);
  stg_bind_text (st, 7, gate);
  stg_bind_text (st, 8, phase);
  stg_db_bind_int64 (st, 9, attempt);
  stg_db_bind_int64 (st, 10, passed);
  stg_db_bind_int64 (st, 11, store->epoch);
  stg_bind_text (st, 12, code);
  return stg_store_exec_stmt (store, st, error, "recording a plan's event");
}

gboolean
stg_store_add_plan_event (StgStore *store, gint64 plan_id, const gchar *stage, gint64 ts_ms,
                          gint status, const gchar *code, const gchar *user, const gchar *message,
                          GError **error)
{
  return add_event (store, plan_id, stage, ts_ms, status, code, user, message, NULL, NULL, 0, FALSE,
                    error);
}

gboolean
stg_store_add_gate_result (StgStore *store, gint64 plan_id, const gchar *stage, gint64 ts_ms,
                           gint status, const gchar *gate, const gchar *phase, gint attempt,
                           gboolean passed, const gchar *message, GError **error)
{
  return add_event (store, plan_id, stage, ts_ms, status, NULL, NULL, message, gate, phase, attempt,
                    passed, error);
}

/* ---- reading ------------------------------------------------------------------- */

static gboolean
read_whole (StgStore *store, StgPlanRow *row, GError **error)
{
  {
    g_autoptr (StgStmt) st = stg_store_stmt (store, "SELECT plan FROM rollout_plans WHERE id = ?",
                                             error);
    if (st == NULL)
      return FALSE;
    stg_db_bind_int64 (st, 1, row->id);
    if (stg_db_step (st) != STG_DB_ROW)
      return stg_store_fail (store, error, "reading a plan");
    g_autoptr (GBytes) blob = stg_column_bytes (st, 0);
    row->plan = stg_thrift_new_from_bytes (API_TYPE_ROLLOUT_PLAN, blob, error);
    if (row->plan == NULL)
      {
        g_prefix_error (error, "plan %s is damaged: ", row->uid);
        return FALSE;
      }
  }
  g_autoptr (StgStmt) st = stg_store_stmt (
      store,
      "SELECT idx, name, status, since_ms, reason, update_uid, rollback_uid, prior_config_id, "
      "prior_count, prior_known, gates_passed, roll_back, rolled, approved_by, reason_code, "
      "planned_config_id, end_ms, end_current, end_desired, end_target, end_ready, end_want, "
      "end_unready, end_message "
      "FROM rollout_stages WHERE plan_id = ? ORDER BY idx",
      error);
  int rc;

  if (st == NULL)
    return FALSE;
  row->stages = g_array_new (FALSE, TRUE, sizeof (StgStageRow));
  g_array_set_clear_func (row->stages, (GDestroyNotify) stg_stage_row_clear);
  stg_db_bind_int64 (st, 1, row->id);
  while ((rc = stg_db_step (st)) == STG_DB_ROW)
    {
      StgStageRow s = {
        .idx = stg_db_column_int (st, 0),
        .name = stg_column_dup (st, 1),
        .status = stg_db_column_int (st, 2),
        .since_ms = stg_db_column_int64 (st, 3),
        .reason = stg_column_dup (st, 4),
        .update_uid = column_nullable (st, 5),
        .rollback_uid = column_nullable (st, 6),
        .prior_config_id = stg_db_column_int64 (st, 7),
        .prior_count = stg_db_column_int (st, 8),
        .prior_known = stg_db_column_int64 (st, 9) != 0,
        .gates_passed = stg_db_column_int (st, 10),
        .roll_back = stg_db_column_int64 (st, 11) != 0,
        .rolled = stg_db_column_int64 (st, 12) != 0,
        .approved_by = column_nullable (st, 13),
        .reason_code = stg_column_dup (st, 14),
        .planned_config_id = stg_db_column_int64 (st, 15),
        .end_ms = stg_db_column_int64 (st, 16),
        .end_current = stg_db_column_int (st, 17),
        .end_desired = stg_db_column_int (st, 18),
        .end_target = stg_db_column_int (st, 19),
        .end_ready = stg_db_column_int (st, 20),
        .end_want = stg_db_column_int (st, 21),
        .end_unready = stg_column_dup (st, 22),
        .end_message = stg_column_dup (st, 23),
      };
      g_array_append_val (row->stages, s);
    }
  if (rc != STG_DB_DONE)
    return stg_store_fail (store, error, "reading a plan's stages");
  if (row->stages->len != row->plan->stages->len)
    {
      g_set_error (error, STG_STORE_ERROR, STG_STORE_ERROR_FAILED,
                   "plan %s is damaged: %u stages stored for %u planned", row->uid,
                   row->stages->len, row->plan->stages->len);
      return FALSE;
    }
  return TRUE;
}

StgPlanRow *
stg_store_get_plan (StgStore *store, const gchar *uid, GError **error)
{
  g_autoptr (StgPlanRow) row = NULL;
  {
    g_autoptr (StgStmt) st = stg_store_stmt (store,
                                             "SELECT " PLAN_COLUMNS
                                             " FROM rollout_plans p WHERE p.uid = ?",
                                             error);
    if (st == NULL)
      return NULL;
    stg_bind_text (st, 1, uid);
    int rc = stg_db_step (st);
    if (rc == STG_DB_DONE)
      {
        g_set_error (error, STG_STORE_ERROR, STG_STORE_ERROR_NOT_FOUND, "no rollout plan %s", uid);
        return NULL;
      }
    if (rc != STG_DB_ROW)
      {
        stg_store_fail (store, error, "reading a plan");
        return NULL;
      }
    row = read_plan (st);
  }
  if (!read_whole (store, row, error))
    return NULL;
  return g_steal_pointer (&row);
}

GPtrArray *
stg_store_list_active_plans (StgStore *store, GError **error)
{
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func ((GDestroyNotify) stg_plan_row_free);
  {
    g_autoptr (StgStmt) st =
        stg_store_stmt (store,
                        "SELECT " PLAN_COLUMNS
                        " FROM rollout_plans p WHERE p.active = 1 ORDER BY p.id",
                        error);
    int rc;
    if (st == NULL)
      return NULL;
    while ((rc = stg_db_step (st)) == STG_DB_ROW)
      g_ptr_array_add (out, read_plan (st));
    if (rc != STG_DB_DONE)
      {
        stg_store_fail (store, error, "listing active plans");
        return NULL;
      }
  }
  for (guint i = 0; i < out->len; i++)
    if (!read_whole (store, out->pdata[i], error))
      return NULL;
  return g_steal_pointer (&out);
}

GPtrArray *
stg_store_list_plans (StgStore *store, const gchar *name, gboolean active_only, guint offset,
                      guint limit, GError **error)
{
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func ((GDestroyNotify) stg_plan_row_free);
  g_autoptr (StgStmt) st = stg_store_stmt (
      store,
      "SELECT " PLAN_COLUMNS " FROM rollout_plans p "
      "WHERE (CAST(?1 AS TEXT) IS NULL OR p.name = ?1) AND (?2 = 0 OR p.active = 1) "
      "ORDER BY p.created_ms DESC, p.id DESC LIMIT ?3 OFFSET ?4",
      error);
  int rc;

  if (st == NULL)
    return NULL;
  stg_bind_text (st, 1, name);
  stg_db_bind_int64 (st, 2, active_only);
  stg_db_bind_int64 (st, 3, limit == 0 ? 100 : limit);
  stg_db_bind_int64 (st, 4, offset);
  while ((rc = stg_db_step (st)) == STG_DB_ROW)
    g_ptr_array_add (out, read_plan (st));
  if (rc != STG_DB_DONE)
    {
      stg_store_fail (store, error, "listing plans");
      return NULL;
    }
  return g_steal_pointer (&out);
}

gboolean
stg_store_list_plan_events (StgStore *store, gint64 plan_id, GPtrArray **events, GPtrArray **gates,
                            GError **error)
{
  g_autoptr (GPtrArray) ev = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr (GPtrArray) gr = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr (StgStmt) st = stg_store_stmt (
      store,
      "SELECT stage, ts_ms, status, \"user\", message, gate, phase, attempt, passed, reason_code "
      "FROM rollout_events WHERE plan_id = ? ORDER BY id",
      error);
  int rc;

  if (st == NULL)
    return FALSE;
  stg_db_bind_int64 (st, 1, plan_id);
  while ((rc = stg_db_step (st)) == STG_DB_ROW)
    {
      const gchar *stage = stg_db_column_text (st, 0);
      const gchar *user = stg_db_column_text (st, 3);
      const gchar *message = stg_db_column_text (st, 4);
      const gchar *gate = stg_db_column_text (st, 5);
      if (gate != NULL)
        {
          const gchar *phase = stg_db_column_text (st, 6);
          g_ptr_array_add (gr, g_object_new (API_TYPE_ROLLOUT_GATE_RESULT, "timestampMs",
                                             stg_db_column_int64 (st, 1), "stage",
                                             stage ? stage : "", "phase", phase ? phase : "",
                                             "gate", gate, "attempt", stg_db_column_int (st, 7),
                                             "passed", stg_db_column_int64 (st, 8) != 0, "message",
                                             message ? message : "", NULL));
          continue;
        }
      ApiRolloutEvent *e = g_object_new (API_TYPE_ROLLOUT_EVENT, "timestampMs",
                                         stg_db_column_int64 (st, 1), "status",
                                         stg_db_column_int (st, 2), NULL);
      if (stage != NULL)
        g_object_set (e, "stage", stage, NULL);
      if (user != NULL)
        g_object_set (e, "user", user, NULL);
      if (message != NULL)
        g_object_set (e, "message", message, NULL);
      const gchar *code = stg_db_column_text (st, 9);
      if (code != NULL && code[0] != '\0')
        g_object_set (e, "reasonCode", code, NULL);
      g_ptr_array_add (ev, e);
    }
  if (rc != STG_DB_DONE)
    return stg_store_fail (store, error, "reading a plan's events");
  *events = g_steal_pointer (&ev);
  *gates = g_steal_pointer (&gr);
  return TRUE;
}
