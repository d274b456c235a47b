/* plan_stage.c: what a rollout plan's stage does to its job: whether its
 * update would change anything, moving it on to its approval, its gates or
 * its update, starting that update (with a hook that writes the stage in
 * the update's own transaction) and the one that takes it back to the
 * job's configuration from before the plan, and watching them end. Calls
 * plan_state.c, control.c and jobs.c. Main-loop thread only.
 */
#include "config.h"

#include "common/enums.h"
#include "common/jobkey.h"
#include "engine/plan_private.h"
#include "engine/update_private.h"

/* Whether @request would change its job: 1 yes, 0 no, -1 @error. */
static gint
would_change (StgEngine *e, const ApiJobUpdateRequest *request, GError **error)
{
  g_autoptr (ApiGetJobUpdateDiffResult) diff = stg_engine_diff (e, request, FALSE, error);

  if (diff == NULL)
    return -1;
  return g_hash_table_size (diff->add) + g_hash_table_size (diff->remove) +
                     g_hash_table_size (diff->update) >
                 0
             ? 1
             : 0;
}

void
stg_stage_advance (StgStage *s)
{
  gint status = s->row.status;

  /* A job that already runs what the stage asks for: done at once, with
   * neither approval nor gates (an error is the stage's start's to say). */
  if (status == S (PENDING) && would_change (s->plan->engine, s->spec->request, NULL) == 0)
    {
      stg_stage_set (s, S (DONE), STG_REASON_ALREADY_CURRENT, NULL,
                     "its job already runs this configuration");
      return;
    }
  if (status == S (PENDING) && s->spec->requireApproval && s->row.approved_by == NULL)
    {
      stg_stage_set (s, S (AWAITING_APPROVAL), NULL, NULL,
                     "waiting for an approval (stagger plan approve)");
      return;
    }
  if ((status == S (PENDING) || status == S (AWAITING_APPROVAL)) && stg_gates_any (s->spec->before))
    {
      s->row.gates_passed = 0;
      g_autofree gchar *why = stg_stage_waiting_reason (s);
      stg_stage_set (s, S (WAITING_FOR_GATE), NULL, NULL, why);
      return;
    }
  s->want_start = TRUE;
}

/* The update @uid's status (and its last message, nullable): from memory
 * while it is active, else from the store. -1 when it cannot be read. */
static gint
update_status (StgEngine *e, const gchar *uid, gchar **message)
{
  StgUpdate *u = g_hash_table_lookup (e->updates, uid);
  g_autoptr (GError) error = NULL;

  *message = NULL;
  if (u != NULL)
    return u->status;
  g_autoptr (StgUpdateRow) row = stg_store_get_update (e->store, uid, &error);
  if (row == NULL)
    {
      *message = g_strdup (error->message);
      return -1;
    }
  /* Why it ended: the message of the turn it took last (rolling back,
   * failing, aborted), else its last message. */
  g_autoptr (GPtrArray) events = stg_store_list_update_events (e->store, row->id, NULL);
  for (guint pass = 0; pass < 2 && *message == NULL; pass++)
    for (guint i = events ? events->len : 0; i > 0; i--)
      {
        ApiJobUpdateEvent *ev = events->pdata[i - 1];
        gboolean turn = ev->status == API_JOB_UPDATE_STATUS_ROLLING_BACK ||
                        ev->status == API_JOB_UPDATE_STATUS_FAILED ||
                        ev->status == API_JOB_UPDATE_STATUS_ABORTED ||
                        ev->status == API_JOB_UPDATE_STATUS_ERROR;
        if ((pass == 1 || turn) && ev->__isset_message && ev->message != NULL &&
            ev->message[0] != '\0')
          {
            *message = g_strdup (ev->message);
            break;
          }
      }
  return row->status;
}

/* A running stage's update, forward or back, has ended? */
void
stg_stage_watch (StgStage *s)
{
  StgEngine *e = s->plan->engine;
  gboolean back = s->row.status == S (ROLLING_BACK);
  const gchar *uid = back ? s->row.rollback_uid : s->row.update_uid;
  g_autofree gchar *message = NULL;

  if (back && (uid == NULL || uid[0] == '\0'))
    {
      /* The job did not exist before the plan: back means gone. */
      g_autoptr (GError) error = NULL;
      g_autoptr (StgJobRow) job = stg_store_get_job (e->store, s->job, &error);
      if (job == NULL && g_error_matches (error, STG_STORE_ERROR, STG_STORE_ERROR_NOT_FOUND))
        stg_stage_set (s, S (ROLLED_BACK), STG_REASON_JOB_REMOVED, NULL,
                       "its job, which did not exist before the plan, is gone");
      return;
    }
  gint status = update_status (e, uid, &message);
  if (status >= 0 && stg_update_status_is_active (status))
    return;
  if (status == API_JOB_UPDATE_STATUS_ROLLED_FORWARD)
    {
      if (back)
        {
          g_autofree gchar *why = g_strdup_printf ("update %s took it back to its configuration "
                                                   "from before the plan",
                                                   uid);
          stg_stage_set (s, S (ROLLED_BACK), NULL, NULL, why);
        }
      else if (stg_gates_any (s->spec->after))
        {
          s->row.gates_passed = 0;
          g_autofree gchar *why = stg_stage_waiting_reason (s);
          stg_stage_set (s, S (WAITING_FOR_GATE), NULL, NULL, why);
        }
      else
        {
          g_autofree gchar *why = g_strdup_printf ("update %s rolled forward", uid);
          stg_stage_set (s, S (DONE), NULL, NULL, why);
        }
      return;
    }
  g_autofree gchar *why = g_strdup_printf ("update %s ended %s%s%s", uid,
                                           status >= 0 ? stg_update_status_name (status) : "unread",
                                           message ? ": " : "", message ? message : "");
  if (back)
    stg_stage_set (s, S (FAILED), STG_REASON_ROLLBACK_FAILED, NULL, why);
  else
    stg_stage_failed (s, STG_REASON_UPDATE_FAILED, why);
}

/* What a start hook returns: FALSE when the stage's rows were not written. */
static gboolean
hook_result (StgStage *s, GError **error)
{
  if (stg_engine_step_ok (s->plan->engine))
    return TRUE;
  g_set_error_literal (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_FAILED,
                       "the stage could not be stored");
  return FALSE;
}

static gboolean
started_forward (StgEngine *e, const gchar *uid, gpointer data, GError **error)
{
  StgStage *s = data;
  (void) e;

  g_free (s->row.update_uid);
  s->row.update_uid = g_strdup (uid);
  s->row.gates_passed = 0;
  g_autofree gchar *why = g_strdup_printf ("update %s", uid);
  stg_stage_set (s, S (ROLLING_FORWARD), NULL, NULL, why);
  return hook_result (s, error);
}

static gboolean
started_back (StgEngine *e, const gchar *uid, gpointer data, GError **error)
{
  StgStage *s = data;
  (void) e;

  g_free (s->row.rollback_uid);
  s->row.rollback_uid = g_strdup (uid);
  s->row.rolled = TRUE;
  g_autofree gchar *why = g_strdup_printf ("update %s takes it back", uid);
  stg_stage_set (s, S (ROLLING_BACK), NULL, NULL, why);
  return hook_result (s, error);
}

/* What the job ran before the plan: the config most of its instances
 * should run, and how many it had (0 and 0 when it did not exist). */
static gboolean
record_prior (StgStage *s, GError **error)
{
  StgEngine *e = s->plan->engine;
  g_autoptr (GError) local = NULL;
  g_autoptr (StgJobRow) job = stg_store_get_job (e->store, s->job, &local);

  s->row.prior_config_id = 0;
  s->row.prior_count = 0;
  s->row.prior_known = TRUE;
  if (job == NULL)
    {
      if (g_error_matches (local, STG_STORE_ERROR, STG_STORE_ERROR_NOT_FOUND))
        return TRUE;
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  gint64 best = 0;
  if (!stg_store_main_config (e->store, job->id, &best, error))
    return FALSE;
  s->row.prior_config_id = best;
  s->row.prior_count = best != 0 ? job->instance_count : 0;
  return TRUE;
}

/* After a refused or failed start: the stage fails, unless the store
 * failed. Returns FALSE when the store failed: the caller reloads the
 * plan, which tries again. */
static gboolean
start_refused (StgStage *s, const gchar *what, GError *error)
{
  StgPlan *p = s->plan;

  if (g_error_matches (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_FAILED))
    {
      g_warning ("engine: plan %s stage %s: %s: %s", p->row.uid, s->row.name, what, error->message);
      return FALSE;
    }
  g_autofree gchar *why = g_strdup_printf ("%s: %s", what, error->message);
  if (s->row.status == S (ROLLING_BACK) || s->want_back)
    {
      s->row.rolled = TRUE;
      stg_stage_set (s, S (FAILED), STG_REASON_ROLLBACK_FAILED, NULL, why);
    }
  else
    stg_stage_failed (s, STG_REASON_UPDATE_REFUSED, why);
  return stg_plan_commit (p);
}

/* Starts @s's update (outside any step). FALSE when the store failed. */
gboolean
stg_stage_start (StgStage *s)
{
  StgPlan *p = s->plan;
  StgEngine *e = p->engine;
  g_autoptr (GError) error = NULL;
  ApiJobUpdateRequest *request = s->spec->request;

  s->want_start = FALSE;
  gint change = would_change (e, request, &error);
  if (change < 0)
    return start_refused (s, "its update cannot start", error);
  if (change == 0)
    {
      stg_stage_set (s, S (DONE), STG_REASON_ALREADY_CURRENT, NULL,
                     "its job already runs this configuration");
      return stg_plan_commit (p);
    }
  if (!record_prior (s, &error))
    return start_refused (s, "its job cannot be read", error);
  g_autofree gchar *message = stg_stage_message (s, "");
  g_autoptr (ApiJobUpdateKey) key = stg_update_start (e, request, p->row.user, message,
                                                      started_forward, s, NULL, &error);
  if (key == NULL)
    return start_refused (s, "its update cannot start", error);
  return TRUE;
}

/* Starts taking @s back to its job's configuration from before the plan
 * (outside any step). FALSE when the store failed. */
gboolean
stg_stage_start_back (StgStage *s)
{
  StgPlan *p = s->plan;
  StgEngine *e = p->engine;
  g_autoptr (GError) error = NULL;
  g_autofree gchar *message = stg_stage_message (s, ", going back");

  s->want_back = FALSE;
  if (!s->row.prior_known || s->row.prior_config_id == 0)
    {
      /* The job did not exist before the plan: remove it. */
      s->row.rolled = TRUE;
      g_free (s->row.rollback_uid);
      s->row.rollback_uid = g_strdup ("");
      g_autofree gchar *name = stg_job_key_to_string (s->job);
      g_autofree gchar *why = g_strdup_printf ("removing job %s, which did not exist before the "
                                               "plan",
                                               name);
      stg_stage_set (s, S (ROLLING_BACK), NULL, NULL, why);
      if (!stg_plan_commit (p))
        return FALSE;
      if (!stg_engine_kill_instances (e, s->job, NULL, p->row.user, message, &error))
        return start_refused (s, "its job cannot be removed", error);
      return TRUE;
    }

  g_autoptr (ApiTaskConfig) config = stg_store_get_config (e->store, s->row.prior_config_id,
                                                           &error);
  if (config == NULL)
    {
      stg_engine_wrap_error (&error);
      return start_refused (s, "its configuration from before the plan cannot be read", error);
    }
  /* The stage's own settings, for all of the job, with no gates. */
  g_autoptr (ApiJobUpdateRequest) request = stg_thrift_copy (s->spec->request);
  g_autoptr (ApiJobUpdateSettings) settings = stg_thrift_copy (request->settings);
  settings->__isset_batchGates = FALSE;
  g_hash_table_remove_all (settings->updateOnlyTheseInstances);
  settings->__isset_restartInstances = FALSE;
  settings->restartInstances = FALSE;
  g_object_set (request, "taskConfig", config, "instanceCount", s->row.prior_count, "settings",
                settings, NULL);

  gint change = would_change (e, request, &error);
  if (change < 0)
    return start_refused (s, "it cannot go back", error);
  if (change == 0)
    {
      s->row.rolled = TRUE;
      stg_stage_set (s, S (ROLLED_BACK), NULL, NULL,
                     "its job already runs its configuration from before the plan");
      return stg_plan_commit (p);
    }
  g_autoptr (ApiJobUpdateKey) key = stg_update_start (e, request, p->row.user, message,
                                                      started_back, s, NULL, &error);
  if (key == NULL)
    return start_refused (s, "it cannot go back", error);
  return TRUE;
}
