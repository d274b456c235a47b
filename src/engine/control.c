/* control.c: the engine's update calls: start, pause, resume, abort, roll
 * back, pulse, and the read calls (diff, details, progress).
 *
 * Each changing call checks the request, then runs one step (update.c): the
 * store sees all of it or none of it. Refusals name the field or the two
 * states involved. Main-loop thread only.
 */
#include "config.h"

#include <json-glib/json-glib.h>

#include "common/enums.h"
#include "common/error.h"
#include "common/jobkey.h"
#include "engine/engine_private.h"
#include "engine/notice_private.h"
#include "engine/rehearsal_private.h"
#include "engine/settings_private.h"
#include "engine/step_private.h"
#include "engine/surge_private.h"
#include "engine/task_private.h"
#include "engine/update_private.h"
#include "engine/work_state.h"

#define fail(error, code, ...) stg_fail (error, STG_ENGINE_ERROR, code, __VA_ARGS__)

/* ---- checking a request ------------------------------------------------------ */

typedef struct
{
  const ApiJobKey *key;
  ApiTaskConfig *task;        /* normalized copy */
  ApiJobUpdateSettings *settings; /* owned copy, backfilled when starting */
  StgSettings s;
  StgJobRow *job;             /* (nullable) the job, if it exists */
} Checked;

static void
checked_clear (Checked *c)
{
  g_clear_object (&c->task);
  stg_settings_clear (&c->s);
  g_clear_pointer (&c->job, stg_job_row_free);
  g_clear_object (&c->settings);
}

static gboolean
check_request (StgEngine *e, const ApiJobUpdateRequest *request, gboolean starting, Checked *c,
               GError **error)
{
  g_autoptr (GError) local = NULL;

  memset (c, 0, sizeof *c);
  if (request == NULL || !request->__isset_taskConfig || request->taskConfig == NULL)
    return fail (error, STG_ENGINE_ERROR_INVALID, "request.taskConfig is missing");
  c->key = request->taskConfig->__isset_job ? request->taskConfig->job : NULL;
  if (!stg_job_key_check (c->key, "request.taskConfig.job", &local))
    return fail (error, STG_ENGINE_ERROR_INVALID, "%s", local->message);
  if (request->instanceCount < 1 || request->instanceCount > e->limits.max_instances)
    return fail (error, STG_ENGINE_ERROR_INVALID,
                 "request.instanceCount must be between 1 and %d, not %d",
                 e->limits.max_instances, request->instanceCount);
  if (request->__isset_settings && request->settings != NULL)
    c->settings = stg_thrift_copy (request->settings);
  if (starting && !stg_settings_backfill (c->settings, "request.settings", error))
    return FALSE;
  if (!stg_settings_parse (e, c->settings, "request.settings", &c->s, error))
    return FALSE;
  c->task = stg_engine_check_task_config (e, request->taskConfig, c->key, request->instanceCount,
                                          "request.taskConfig", error);
  if (c->task == NULL || !stg_work_gates_check_task (&c->s, c->task, error))
    return FALSE;
  c->job = stg_store_get_job (e->store, c->key, &local);
  if (c->job == NULL && !g_error_matches (local, STG_STORE_ERROR, STG_STORE_ERROR_NOT_FOUND))
    {
      g_propagate_error (error, g_steal_pointer (&local));
      stg_engine_wrap_error (error);
      return FALSE;
    }
  return TRUE;
}

/* Aurora's refusal of an update that could record more instance failures
 * than the scheduler is set to track (-max_update_instance_failures). */
#define TOO_MANY_POTENTIAL_FAILED_INSTANCES \
  "Your update allows too many failures to occur, consider decreasing the per-instance " \
  "failures or maxFailedInstances."

/* With the percents resolved against @diff: the failure allowance must stay
 * within what the engine tracks, ranges must lie within the job as it is or
 * as it will be, and minInService must leave room to take an instance down
 * (maxSurge extra instances make room). */
static gboolean
check_scope (StgEngine *e, StgSettings *s, gint32 instance_count, const StgDiff *diff,
             GError **error)
{
  gint64 limit = MAX ((gint64) instance_count, diff->current_count);

  stg_settings_resolve (s, diff->changes->len);
  if ((gint64) s->max_per_instance_failures * instance_count >
      e->limits.max_update_instance_failures)
    return fail (error, STG_ENGINE_ERROR_INVALID,
                 "request.settings.maxPerInstanceFailures is %d for %d instances, more than the "
                 "%" G_GINT64_FORMAT " failures an update may allow: %s",
                 s->max_per_instance_failures, instance_count,
                 e->limits.max_update_instance_failures, TOO_MANY_POTENTIAL_FAILED_INSTANCES);
  if (s->min_in_service > 0)
    {
      gboolean takes_down = FALSE;
      for (guint i = 0; i < diff->changes->len && !takes_down; i++)
        takes_down = g_array_index (diff->changes, StgChange, i).from_config != 0;
      if (takes_down && s->min_in_service >= diff->current_count + s->max_surge)
        return fail (error, STG_ENGINE_ERROR_INVALID,
                     "request.settings.minInService is %d but the job has %" G_GINT64_FORMAT
                     " instance%s and maxSurge is %d: no instance could ever be taken down for "
                     "the update",
                     s->min_in_service, diff->current_count, diff->current_count == 1 ? "" : "s",
                     s->max_surge);
    }
  if (s->only == NULL)
    return TRUE;
  for (guint i = 0; i < stg_ranges_n (s->only); i++)
    {
      StgRange r = stg_ranges_get (s->only, i);
      if ((gint64) r.last >= limit)
        return fail (error, STG_ENGINE_ERROR_INVALID,
                     "request.settings.updateOnlyTheseInstances: instance %d is outside the job "
                     "(instances 0-%" G_GINT64_FORMAT ")", r.last, limit - 1);
    }
  return TRUE;
}

/* ---- building the recorded instructions --------------------------------------- */

static ApiRange *
range_new (gint32 first, gint32 last)
{
  return g_object_new (API_TYPE_RANGE, "first", first, "last", last, NULL);
}

static void
add_ranges (GHashTable *set, StgRanges *ranges)
{
  for (guint i = 0; i < stg_ranges_n (ranges); i++)
    {
      StgRange r = stg_ranges_get (ranges, i);
      g_hash_table_add (set, range_new (r.first, r.last));
    }
}

/* Groups instances by config: config id -> StgRanges. */
static GHashTable *
group_new (void)
{
  return g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                (GDestroyNotify) stg_ranges_free);
}

static void
group_add (GHashTable *groups, gint64 config, gint32 instance)
{
  StgRanges *r = g_hash_table_lookup (groups, &config);

  if (r == NULL)
    {
      r = stg_ranges_new ();
      g_hash_table_insert (groups, g_memdup2 (&config, sizeof config), r);
    }
  stg_ranges_add_one (r, instance);
}

/* Fills a set of ConfigGroups (or InstanceTaskConfigs) from @groups. */
static gboolean
fill_groups (StgEngine *e, GHashTable *groups, GHashTable *out, GType type, GError **error)
{
  GHashTableIter it;
  gpointer key, value;

  g_hash_table_iter_init (&it, groups);
  while (g_hash_table_iter_next (&it, &key, &value))
    {
      g_autoptr (ApiTaskConfig) config = stg_store_get_config (e->store, *(gint64 *) key, error);
      if (config == NULL)
        {
          stg_engine_wrap_error (error);
          return FALSE;
        }
      g_autoptr (GHashTable) ranges = g_hash_table_new_full (g_direct_hash, g_direct_equal,
                                                             g_object_unref, NULL);
      add_ranges (ranges, value);
      if (type == API_TYPE_CONFIG_GROUP)
        g_hash_table_add (out, g_object_new (type, "config", config, "instances", ranges, NULL));
      else
        g_hash_table_add (out, g_object_new (type, "task", config, "instances", ranges, NULL));
    }
  return TRUE;
}

static ApiJobUpdateInstructions *
build_instructions (StgEngine *e, const ApiJobUpdateRequest *request, ApiTaskConfig *task,
                    ApiJobUpdateSettings *settings, StgSettings *s, const StgDiff *diff,
                    GError **error)
{
  g_autoptr (GHashTable) initial = group_new ();
  g_autoptr (StgRanges) desired = stg_ranges_new ();

  for (guint i = 0; i < diff->changes->len; i++)
    {
      StgChange *c = &g_array_index (diff->changes, StgChange, i);
      if (c->from_config != 0)
        group_add (initial, c->from_config, c->instance);
    }
  for (guint i = 0; i < diff->unchanged->len; i++)
    {
      StgChange *c = &g_array_index (diff->unchanged, StgChange, i);
      group_add (initial, c->from_config, c->instance);
    }
  for (gint32 i = 0; i < request->instanceCount; i++)
    if (s->only == NULL || stg_ranges_contains (s->only, i))
      stg_ranges_add_one (desired, i);

  g_autoptr (ApiJobUpdateInstructions) ins = g_object_new (API_TYPE_JOB_UPDATE_INSTRUCTIONS, NULL);
  if (!fill_groups (e, initial, ins->initialState, API_TYPE_INSTANCE_TASK_CONFIG, error))
    return NULL;
  ins->__isset_initialState = TRUE;
  g_autoptr (GHashTable) ranges = g_hash_table_new_full (g_direct_hash, g_direct_equal,
                                                         g_object_unref, NULL);
  add_ranges (ranges, desired);
  g_autoptr (ApiInstanceTaskConfig) want = g_object_new (API_TYPE_INSTANCE_TASK_CONFIG, "task", task,
                                                         "instances", ranges, NULL);
  g_object_set (ins, "desiredState", want, "settings", settings, NULL);
  return g_steal_pointer (&ins);
}

/* ---- start --------------------------------------------------------------------- */

static StgUpdate *
find (StgEngine *e, const ApiJobUpdateKey *key, gint intended, GError **error)
{
  if (key == NULL || key->id == NULL)
    {
      fail (error, STG_ENGINE_ERROR_INVALID, "key.id is missing");
      return NULL;
    }
  StgUpdate *u = g_hash_table_lookup (e->updates, key->id);
  if (u != NULL && (key->job == NULL || !key->__isset_job || key->job->role == NULL ||
                    stg_job_key_equal (key->job, u->job)))
    return u;

  g_autoptr (GError) local = NULL;
  g_autoptr (StgUpdateRow) row = stg_store_get_update (e->store, key->id, &local);
  if (row == NULL || (key->__isset_job && key->job != NULL && key->job->role != NULL &&
                      !stg_job_key_equal (key->job, row->job)))
    {
      g_autofree gchar *job = key->__isset_job && key->job ? stg_job_key_to_string (key->job) : NULL;
      fail (error, STG_ENGINE_ERROR_NOT_FOUND, "no update %s%s%s", key->id, job ? " of " : "",
            job ? job : "");
      return NULL;
    }
  fail (error, STG_ENGINE_ERROR_STATE, "update %s is %s: %s -> %s is not allowed", key->id,
        stg_update_status_name (row->status), stg_update_status_name (row->status),
        stg_update_status_name (intended));
  return NULL;
}

/* ---- starting -------------------------------------------------------------- */

/* Records the update's per-instance rows. */
static gboolean
store_work (StgEngine *e, gint64 update_id, const StgDiff *diff, GError **error)
{
  g_autoptr (GArray) rows = g_array_sized_new (FALSE, TRUE, sizeof (StgUpdateInstanceRow),
                                               diff->changes->len);
  for (guint i = 0; i < diff->changes->len; i++)
    {
      StgChange *ch = &g_array_index (diff->changes, StgChange, i);
      StgUpdateInstanceRow row = { .instance_id = ch->instance,
                                   .initial_config_id = ch->from_config,
                                   .desired_config_id = ch->to_config };
      g_array_append_val (rows, row);
    }
  return stg_store_insert_update_instances (e->store, update_id,
                                            (StgUpdateInstanceRow *) rows->data, rows->len, error);
}

/* Builds the new update in memory (taking @c's settings) and sets it going
 * (inside the step). */
static void
activate (StgEngine *e, gint64 update_id, const gchar *uid, const gchar *user, gint status,
          gint64 now, gint64 job_id, Checked *c, const StgDiff *diff)
{
  StgUpdate *u = stg_update_new (e);
  if (c->job != NULL)
    {
      /* Its rehearsal's prediction, kept to be shown beside what it takes. */
      g_autoptr (ApiUpdateRehearsal) r = stg_rehearsal_build (e, c->key, &c->s, diff);
      u->predicted_ms = r->predictedMs;
    }
  u->id = update_id;
  u->uid = g_strdup (uid);
  u->job = stg_thrift_copy ((gpointer) c->key);
  u->job_id = job_id;
  u->user = g_strdup (user);
  u->status = status;
  u->created_ms = now;
  u->s = c->s;
  memset (&c->s, 0, sizeof c->s);
  for (guint i = 0; i < diff->changes->len; i++)
    {
      StgChange *ch = &g_array_index (diff->changes, StgChange, i);
      StgWork w = { .instance = ch->instance,
                    .from_config = ch->from_config,
                    .to_config = ch->to_config,
                    .state = STG_WORK_PENDING,
                    .batch = -1 };
      g_array_append_val (u->work, w);
      g_hash_table_insert (u->position, GINT_TO_POINTER (ch->instance), GUINT_TO_POINTER (i + 1));
    }
  for (guint i = 0; i < u->work->len; i++)
    g_array_index (u->work, StgWork, i).owner = u;
  stg_update_rebuild_order (u);
  u->batch_size = stg_strategy_first_size (&u->s);
  u->surge.next = stg_surge_first_id (diff);
  stg_engine_add_update (e, u);
  stg_update_track_health (u);
  stg_update_touch (u);
  stg_engine_announce (e, u->job, u->uid);
  stg_update_pump (u);
}

/* Refuses a second active update for @c's job. */
static gboolean
check_no_active (StgEngine *e, const Checked *c, ApiJobUpdateSummary **active_out, GError **error)
{
  StgUpdate *active = c->job != NULL ? stg_engine_update_for_job (e, c->job->id) : NULL;

  if (active == NULL)
    return TRUE;
  if (active_out != NULL)
    *active_out = stg_store_get_update_summary (e->store, active->id, NULL);
  g_autofree gchar *name = stg_job_key_to_string (c->key);
  return fail (error, STG_ENGINE_ERROR_ACTIVE_UPDATE,
               "job %s already has an active update (%s, %s)", name, active->uid,
               stg_update_status_name (active->status));
}

ApiJobUpdateKey *
stg_update_start (StgEngine *e, const ApiJobUpdateRequest *request, const gchar *user,
                  const gchar *message, StgUpdateStartHook hook, gpointer hook_data,
                  ApiJobUpdateSummary **active_out, GError **error)
{
  Checked c;
  StgDiff diff = { 0 };
  g_autoptr (GError) local = NULL;
  g_autoptr (ApiJobUpdateInstructions) ins = NULL;
  g_autofree gchar *uid = NULL;
  ApiJobUpdateKey *result = NULL;

  if (!check_request (e, request, TRUE, &c, error) || !check_no_active (e, &c, active_out, error))
    goto out;

  if (c.job != NULL)
    stg_engine_finish_starts (e, c.job->id);
  stg_engine_step_begin (e);
  gint64 job_id = c.job ? c.job->id : 0;
  gint64 config_id = 0;
  gint64 now = stg_clock_now_ms (e->clock);
  if (job_id == 0 &&
      !stg_store_create_job (e->store, c.key, user, 0, 0, now, &job_id, &local))
    goto store_failed;
  if (!stg_store_put_config (e->store, c.task, &config_id, NULL, &local))
    goto store_failed;
  if (!stg_diff_compute (e, job_id, config_id, request->instanceCount, c.s.only, c.s.restart, &diff,
                         &local))
    goto store_failed;
  if (!check_scope (e, &c.s, request->instanceCount, &diff, &local) ||
      !stg_quota_check_update (e, c.key, job_id, c.task, &diff, &local))
    goto refused;

  ins = build_instructions (e, request, c.task, c.settings, &c.s, &diff, &local);
  if (ins == NULL)
    goto store_failed;

  uid = g_uuid_string_random ();
  gboolean empty = diff.changes->len == 0;
  gint status = c.s.pulse_ms > 0 && !empty ? API_JOB_UPDATE_STATUS_ROLL_FORWARD_AWAITING_PULSE
                                           : API_JOB_UPDATE_STATUS_ROLLING_FORWARD;
  gint64 update_id = 0;
  if (!stg_store_insert_update (e->store, uid, c.key, user, status, now,
                                (ApiJobUpdateRequest *) request, ins, config_id, &update_id, &local) ||
      !stg_store_add_update_event (e->store, update_id, status, now, user, message, &local))
    goto store_failed;

  stg_engine_notice_update (e, uid, c.key, status, -1, user, message);
  if (empty)
    {
      if (!stg_store_set_update_status (e->store, update_id, API_JOB_UPDATE_STATUS_ROLLED_FORWARD,
                                        now, &local) ||
          !stg_store_add_update_event (e->store, update_id, API_JOB_UPDATE_STATUS_ROLLED_FORWARD,
                                       now, NULL, "no instance needed a change", &local))
        goto store_failed;
      stg_engine_notice_update (e, uid, c.key, API_JOB_UPDATE_STATUS_ROLLED_FORWARD, status, NULL,
                                "no instance needed a change");
    }
  else
    {
      if (!store_work (e, update_id, &diff, &local))
        goto store_failed;
      activate (e, update_id, uid, user, status, now, job_id, &c, &diff);
    }
  stg_engine_announce (e, c.key, uid);
  if (hook != NULL && !hook (e, uid, hook_data, &local))
    goto store_failed;
  if (!stg_engine_step_end (e, error))
    goto out;
  result = g_object_new (API_TYPE_JOB_UPDATE_KEY, "job", c.key, "id", uid, NULL);
  goto out;

refused:
  stg_engine_step_fail (e, NULL);
  stg_engine_step_end (e, NULL);
  g_propagate_error (error, g_steal_pointer (&local));
  goto out;

store_failed:
  stg_engine_step_fail (e, local);
  stg_engine_step_end (e, NULL);
  g_propagate_error (error, g_steal_pointer (&local));
  stg_engine_wrap_error (error);

out:
  stg_diff_clear (&diff);
  checked_clear (&c);
  return result;
}

/* ---- pause, resume, abort, roll back, pulse ------------------------------------------ */

gboolean
stg_engine_pause_update (StgEngine *e, const ApiJobUpdateKey *key, const gchar *user,
                         const gchar *message, GError **error)
{
  StgUpdate *u = find (e, key, API_JOB_UPDATE_STATUS_ROLL_FORWARD_PAUSED, error);
  if (u == NULL)
    return FALSE;
  gint to = u->back ? API_JOB_UPDATE_STATUS_ROLL_BACK_PAUSED : API_JOB_UPDATE_STATUS_ROLL_FORWARD_PAUSED;
  if (u->status == to)
    return TRUE;                            /* paused stays paused */
  if (!stg_update_transition_allowed (u->status, to))
    return fail (error, STG_ENGINE_ERROR_STATE, "cannot pause update %s: %s -> %s is not allowed",
                 u->uid, stg_update_status_name (u->status), stg_update_status_name (to));
  stg_engine_step_begin (e);
  stg_update_transition (u, to, user, message);
  return stg_engine_step_end (e, error);
}

gboolean
stg_engine_resume_update (StgEngine *e, const ApiJobUpdateKey *key, const gchar *user,
                          const gchar *message, GError **error)
{
  StgUpdate *u = find (e, key, API_JOB_UPDATE_STATUS_ROLLING_FORWARD, error);
  if (u == NULL)
    return FALSE;
  gint to = u->back ? API_JOB_UPDATE_STATUS_ROLLING_BACK : API_JOB_UPDATE_STATUS_ROLLING_FORWARD;
  if (u->status != API_JOB_UPDATE_STATUS_ROLL_FORWARD_PAUSED &&
      u->status != API_JOB_UPDATE_STATUS_ROLL_BACK_PAUSED)
    return fail (error, STG_ENGINE_ERROR_STATE, "cannot resume update %s: %s -> %s is not allowed",
                 u->uid, stg_update_status_name (u->status), stg_update_status_name (to));
  if (stg_update_pulse_expired (u))
    to = u->back ? API_JOB_UPDATE_STATUS_ROLL_BACK_AWAITING_PULSE
                 : API_JOB_UPDATE_STATUS_ROLL_FORWARD_AWAITING_PULSE;
  stg_engine_step_begin (e);
  stg_update_transition (u, to, user, message);
  stg_update_arm_pulse (u);
  stg_update_evaluate_all (u);
  return stg_engine_step_end (e, error);
}

gboolean
stg_engine_abort_update (StgEngine *e, const ApiJobUpdateKey *key, const gchar *user,
                         const gchar *message, GError **error)
{
  StgUpdate *u = find (e, key, API_JOB_UPDATE_STATUS_ABORTED, error);
  if (u == NULL)
    return FALSE;
  stg_engine_step_begin (e);
  stg_update_transition (u, API_JOB_UPDATE_STATUS_ABORTED, user, message);
  return stg_engine_step_end (e, error);
}

gboolean
stg_engine_rollback_update (StgEngine *e, const ApiJobUpdateKey *key, const gchar *user,
                            const gchar *message, GError **error)
{
  StgUpdate *u = find (e, key, API_JOB_UPDATE_STATUS_ROLLING_BACK, error);
  if (u == NULL)
    return FALSE;
  if (u->back)
    return fail (error, STG_ENGINE_ERROR_STATE,
                 "cannot roll back update %s: %s -> ROLLING_BACK is not allowed", u->uid,
                 stg_update_status_name (u->status));
  stg_engine_step_begin (e);
  stg_update_start_rollback (u, user, message);
  return stg_engine_step_end (e, error);
}

gboolean
stg_engine_pulse_update (StgEngine *e, const ApiJobUpdateKey *key, ApiJobUpdatePulseStatus *status,
                         GError **error)
{
  g_autoptr (GError) local = NULL;
  StgUpdate *u = find (e, key, API_JOB_UPDATE_STATUS_ROLLING_FORWARD, &local);

  if (u == NULL)
    {
      if (g_error_matches (local, STG_ENGINE_ERROR, STG_ENGINE_ERROR_STATE))
        {
          *status = API_JOB_UPDATE_PULSE_STATUS_FINISHED;   /* a terminal update */
          return TRUE;
        }
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  *status = API_JOB_UPDATE_PULSE_STATUS_OK;
  u->last_pulse_ms = stg_clock_now_ms (e->clock);
  /* A pulse that only refreshes the time lives in memory and costs no
   * write; only one that unblocks the update is a step. */
  if (u->status != API_JOB_UPDATE_STATUS_ROLL_FORWARD_AWAITING_PULSE &&
      u->status != API_JOB_UPDATE_STATUS_ROLL_BACK_AWAITING_PULSE)
    {
      stg_update_arm_pulse (u);
      return TRUE;
    }
  stg_engine_step_begin (e);
  stg_update_touch (u);
  stg_update_transition (u,
                         u->back ? API_JOB_UPDATE_STATUS_ROLLING_BACK
                                 : API_JOB_UPDATE_STATUS_ROLLING_FORWARD,
                         NULL, "pulse received");
  stg_update_arm_pulse (u);
  stg_update_evaluate_all (u);
  return stg_engine_step_end (e, error);
}

/* ---- reads ------------------------------------------------------------------------- */

/* The stored config equal to @task (checked), or 0. The config need not be
 * stored to compare: canonical hashes are. */
static gint64
stored_config (StgEngine *e, ApiTaskConfig *task)
{
  g_autoptr (GError) ignored = NULL;
  g_autofree gchar *hash = stg_thrift_hash (THRIFT_STRUCT (task), &ignored);

  return hash != NULL ? stg_store_find_config (e->store, hash, &ignored) : 0;
}

gint64
stg_update_stored_config (StgEngine *e, const ApiJobUpdateRequest *request)
{
  Checked c;
  gint64 id = 0;

  if (check_request (e, request, FALSE, &c, NULL))
    id = stored_config (e, c.task);
  checked_clear (&c);
  return id;
}

/* The instances @diff starts again (replaced, restarted) that the runtime
 * would move off their hosts under @task's constraints, into @r. */
static void
add_moves (StgEngine *e, gint64 job_id, const ApiTaskConfig *task, const StgDiff *diff,
           ApiGetJobUpdateDiffResult *r)
{
  g_autoptr (GArray) instances = g_array_new (FALSE, FALSE, sizeof (gint32));

  for (guint i = 0; i < diff->changes->len; i++)
    {
      const StgChange *ch = &g_array_index (diff->changes, StgChange, i);
      if (ch->from_config != 0 && ch->to_config != 0)
        g_array_append_val (instances, ch->instance);
    }
  g_autoptr (GPtrArray) moves = instances->len > 0
                                    ? stg_runtime_moves (e->runtime, job_id, task, instances)
                                    : NULL;
  if (moves != NULL && moves->len > 0)
    g_object_set (r, "moves", moves, NULL);
}

ApiGetJobUpdateDiffResult *
stg_engine_diff (StgEngine *e, const ApiJobUpdateRequest *request, gboolean rehearse,
                 GError **error)
{
  Checked c;
  StgDiff diff = { 0 };
  ApiGetJobUpdateDiffResult *result = NULL;
  g_autoptr (GHashTable) remove = group_new ();
  g_autoptr (GHashTable) update = group_new ();
  g_autoptr (GHashTable) unchanged = group_new ();
  g_autoptr (StgRanges) added = stg_ranges_new ();
  g_autoptr (ApiGetJobUpdateDiffResult) r = NULL;

  if (!check_request (e, request, FALSE, &c, error))
    goto out;
  /* Only an existing config can equal a current one. */
  gint64 want = stored_config (e, c.task);
  if (!stg_diff_compute (e, c.job ? c.job->id : 0, want > 0 ? want : -1, request->instanceCount,
                         c.s.only, c.s.restart, &diff, error) ||
      !check_scope (e, &c.s, request->instanceCount, &diff, error))
    goto out;

  for (guint i = 0; i < diff.changes->len; i++)
    {
      StgChange *ch = &g_array_index (diff.changes, StgChange, i);
      if (ch->from_config == 0)
        stg_ranges_add_one (added, ch->instance);
      else if (ch->to_config == 0)
        group_add (remove, ch->from_config, ch->instance);
      else
        group_add (update, ch->from_config, ch->instance);
    }
  /* As Aurora's JobDiff.compute: what lies outside the scope is unchanged. */
  for (guint i = 0; i < diff.unchanged->len; i++)
    {
      StgChange *ch = &g_array_index (diff.unchanged, StgChange, i);
      group_add (unchanged, ch->from_config, ch->instance);
    }
  for (guint i = 0; i < diff.outside->len; i++)
    {
      StgChange *ch = &g_array_index (diff.outside, StgChange, i);
      group_add (unchanged, ch->from_config, ch->instance);
    }

  r = g_object_new (API_TYPE_GET_JOB_UPDATE_DIFF_RESULT, NULL);
  if (!fill_groups (e, remove, r->remove, API_TYPE_CONFIG_GROUP, error) ||
      !fill_groups (e, update, r->update, API_TYPE_CONFIG_GROUP, error) ||
      !fill_groups (e, unchanged, r->unchanged, API_TYPE_CONFIG_GROUP, error))
    goto out;
  if (!stg_ranges_is_empty (added))
    {
      g_autoptr (GHashTable) ranges = g_hash_table_new_full (g_direct_hash, g_direct_equal,
                                                             g_object_unref, NULL);
      add_ranges (ranges, added);
      g_hash_table_add (r->add, g_object_new (API_TYPE_CONFIG_GROUP, "config", c.task,
                                              "instances", ranges, NULL));
    }
  r->__isset_add = r->__isset_remove = r->__isset_update = r->__isset_unchanged = TRUE;
  if (c.job != NULL && e->runtime != NULL)
    add_moves (e, c.job->id, c.task, &diff, r);
  if (rehearse)
    {
      g_autoptr (ApiUpdateRehearsal) rehearsal = stg_rehearsal_build (e, c.job ? c.key : NULL, &c.s,
                                                                      &diff);
      g_object_set (r, "rehearsal", rehearsal, NULL);
    }
  result = g_steal_pointer (&r);

out:
  stg_diff_clear (&diff);
  checked_clear (&c);
  return result;
}
