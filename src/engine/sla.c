/* sla.c: SLA policies as Aurora's scheduler applies them (its SlaManager
 * and ConfigurationManager): the policy a task has (its own; a production
 * task without one has Aurora's default for the preferred tier, 95 % of
 * the job active over 30 minutes), the checks made when a job or an update
 * is submitted (and the warning an SLA-aware update with no policy gets),
 * whether one instance of a job may go down now, and the
 * waits of an SLA-aware update (JobUpdateSettings.slaAware).
 *
 * A task is active when it has been RUNNING (healthy) for the policy's
 * duration. A count or percentage policy holds when, without the instance
 * (and those already going down), enough of the job's tasks stay active;
 * it is skipped for non-production tasks (unless the limits say
 * otherwise) and for jobs with fewer tasks than min_required_instances. A
 * coordinator policy asks the coordinator over HTTP through the gate
 * runner seam (runtime/gates.h), sending the task as Aurora does
 * (sla_body.c): one question at a time per coordinator URL (Aurora's
 * lock), each within the coordinator timeout, asked again after a
 * back-off when the answer is no or none. Calls the store, the runtime,
 * the clock, the gate runner, sla_body.c, task_fields.c and step.c; a
 * waiting update is woken through engine->up. Main-loop thread only.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "common/error.h"
#include "common/jobkey.h"
#include "engine/engine_private.h"
#include "engine/sla_private.h"
#include "engine/step_private.h"
#include "engine/task_private.h"
#include "engine/update_private.h"
#include "engine/work_state.h"

#define bad(error, ...) stg_fail (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID, __VA_ARGS__)

/* Aurora's default SLA for the preferred tier, and a coordinator's status
 * key when the policy names none. */
#define DEFAULT_PERCENTAGE 95.0
#define DEFAULT_DURATION_SECS 1800
#define DEFAULT_STATUS_KEY "drain"

void
stg_sla_limits_init (StgEngineLimits *limits)
{
  limits->sla_min_instances = 20;
  limits->sla_max_duration_secs = 2 * 3600;
  limits->sla_non_production = FALSE;
  limits->sla_coordinator_timeout_ms = 60 * 1000;
  limits->sla_retry_min_ms = 60 * 1000;
  limits->sla_retry_max_ms = 5 * 60 * 1000;
}

ApiSlaPolicy *
stg_sla_policy_of (StgEngine *e, const ApiTaskConfig *task, const ApiSlaPolicy *fallback)
{
  if (task == NULL)
    return NULL;
  if (task->__isset_slaPolicy && task->slaPolicy != NULL)
    return g_object_ref (task->slaPolicy);
  if (fallback != NULL)
    return g_object_ref ((gpointer) fallback);
  if (!stg_task_is_production (e, task))
    return NULL;
  g_autoptr (ApiPercentageSlaPolicy) p = g_object_new (API_TYPE_PERCENTAGE_SLA_POLICY, "percentage",
                                                       DEFAULT_PERCENTAGE, "durationSecs",
                                                       (gint64) DEFAULT_DURATION_SECS, NULL);
  return g_object_new (API_TYPE_SLA_POLICY, "percentageSlaPolicy", p, NULL);
}

/* ---- checks at submission ------------------------------------------------------ */

gchar *
stg_engine_update_warning (StgEngine *e, const ApiJobUpdateRequest *request)
{
  const ApiJobUpdateSettings *s = request != NULL ? request->settings : NULL;
  const ApiTaskConfig *task = request != NULL ? request->taskConfig : NULL;

  if (s == NULL || !s->__isset_slaAware || !s->slaAware || task == NULL || task->job == NULL)
    return NULL;
  g_autoptr (ApiSlaPolicy) p = stg_sla_policy_of (e, task, NULL);
  if (p != NULL)
    return NULL;
  g_autofree gchar *job = stg_job_key_to_string (task->job);
  const gchar *tier = task->__isset_tier && task->tier ? task->tier
                                                       : stg_tiers_default_name (e->tiers);
  return g_strdup_printf ("the update is SLA-aware (slaAware) but job %s has no SLA policy, so "
                          "its instances go down without waiting for one: give the task a "
                          "slaPolicy, or a production tier for the default policy (its tier "
                          "'%s' is not production)",
                          job, tier);
}

static gboolean
check_duration (StgEngine *e, const gchar *kind, gint64 secs, const gchar *what, GError **error)
{
  if (secs < 0)
    return bad (error, "%s.slaPolicy: %s: durationSecs must not be negative, not %" G_GINT64_FORMAT,
                what, kind, secs);
  if (secs > e->limits.sla_max_duration_secs)
    return bad (error,
                "%s.slaPolicy: %s: durationSecs=%" G_GINT64_FORMAT
                " must be less than cluster-wide maximum of %" G_GINT64_FORMAT " secs.",
                what, kind, secs, e->limits.sla_max_duration_secs);
  return TRUE;
}

static gboolean
check_count (StgEngine *e, const ApiCountSlaPolicy *p, gint32 instances, const gchar *what,
             GError **error)
{
  if (p->count < 0)
    return bad (error, "%s.slaPolicy: CountSlaPolicy: count must not be negative", what);
  if ((gint64) instances - p->count < 1)
    return bad (error,
                "%s.slaPolicy: Current CountSlaPolicy: count=%" G_GINT64_FORMAT
                " will not allow any instances to be killed. Must be less than instanceCount=%d.",
                what, p->count, instances);
  return check_duration (e, "CountSlaPolicy", p->durationSecs, what, error);
}

static gboolean
check_percentage (StgEngine *e, const ApiPercentageSlaPolicy *p, gint32 instances,
                  const gchar *what, GError **error)
{
  if (!isfinite (p->percentage) || p->percentage < 0 || p->percentage > 100)
    return bad (error, "%s.slaPolicy: PercentageSlaPolicy: percentage must be from 0 to 100", what);
  if (instances - instances * (p->percentage / 100.0) < 1)
    return bad (error,
                "%s.slaPolicy: Current PercentageSlaPolicy: percentage=%f will not allow any "
                "instances to be killed. Must be less than %f.",
                what, p->percentage, (gdouble) (instances - 1) / instances * 100.0);
  return check_duration (e, "PercentageSlaPolicy", p->durationSecs, what, error);
}

static gboolean
check_coordinator (const ApiCoordinatorSlaPolicy *p, const gchar *what, GError **error)
{
  g_autoptr (GUri) uri = p->coordinatorUrl ? g_uri_parse (p->coordinatorUrl, G_URI_FLAGS_NONE, NULL)
                                           : NULL;

  if (uri == NULL || g_uri_get_host (uri) == NULL || g_uri_get_host (uri)[0] == '\0' ||
      (g_ascii_strcasecmp (g_uri_get_scheme (uri), "http") != 0 &&
       g_ascii_strcasecmp (g_uri_get_scheme (uri), "https") != 0))
    return bad (error,
                "%s.slaPolicy: CoordinatorSlaPolicy: coordinatorUrl '%s' is not an http:// or "
                "https:// URL",
                what, p->coordinatorUrl ? p->coordinatorUrl : "");
  return TRUE;
}

gboolean
stg_sla_check_task (StgEngine *e, const ApiTaskConfig *task, gint32 instances, const gchar *what,
                    GError **error)
{
  const ApiSlaPolicy *p = task->__isset_slaPolicy ? task->slaPolicy : NULL;

  if (p == NULL)
    return TRUE;
  if (p->__isset_percentageSlaPolicy + p->__isset_countSlaPolicy +
          p->__isset_coordinatorSlaPolicy !=
      1)
    return bad (error,
                "%s.slaPolicy: give exactly one of percentageSlaPolicy, countSlaPolicy and "
                "coordinatorSlaPolicy",
                what);
  if (!e->limits.sla_non_production && !stg_task_is_production (e, task))
    return bad (error, "%s.slaPolicy: Tier '%s' does not support SlaPolicy.", what,
                task->__isset_tier && task->tier ? task->tier : stg_tiers_default_name (e->tiers));
  if (p->__isset_coordinatorSlaPolicy)
    return check_coordinator (p->coordinatorSlaPolicy, what, error);
  if (instances < e->limits.sla_min_instances)
    return bad (error,
                "%s.slaPolicy: Job with fewer than %d instances cannot have Percentage/Count "
                "SlaPolicy.",
                what, e->limits.sla_min_instances);
  if (p->__isset_countSlaPolicy)
    return check_count (e, p->countSlaPolicy, instances, what, error);
  return check_percentage (e, p->percentageSlaPolicy, instances, what, error);
}

/* ---- count and percentage ------------------------------------------------------- */

gboolean
stg_sla_holds (StgEngine *e, gint64 job_id, gint32 instance, const ApiSlaPolicy *p,
               gboolean production, GHashTable *leaving, gchar **why, gint64 *recheck_ms)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) rows = stg_store_list_instances (e->store, job_id, &error);
  gint64 now = stg_clock_now_ms (e->clock);
  gboolean count = p->__isset_countSlaPolicy;
  gint64 duration_ms = 1000 * (count ? p->countSlaPolicy->durationSecs
                                     : p->percentageSlaPolicy->durationSecs);
  guint total = 0, active = 0;

  *recheck_ms = 0;
  if (rows == NULL)
    {
      *why = g_strdup_printf ("cannot read the job's instances: %s", error->message);
      return FALSE;
    }
  if (!production && !e->limits.sla_non_production)
    {
      *why = g_strdup ("not a production task: its SLA is not checked");
      return TRUE;
    }
  for (guint i = 0; i < rows->len; i++)
    {
      gint32 id = g_array_index (rows, StgInstanceRow, i).instance_id;
      StgTaskObservation obs = { 0 };
      if (e->runtime != NULL)
        stg_runtime_observe (e->runtime, job_id, id, &obs);
      if (obs.phase == STG_TASK_ABSENT || obs.phase == STG_TASK_FINISHED)
        continue;
      total++;
      if (id == instance || obs.phase != STG_TASK_RUNNING ||
          (leaving != NULL && g_hash_table_contains (leaving, GINT_TO_POINTER (id))))
        continue;
      if (now - obs.healthy_since_ms >= duration_ms)
        active++;
      else if (*recheck_ms == 0 || obs.healthy_since_ms + duration_ms < *recheck_ms)
        *recheck_ms = obs.healthy_since_ms + duration_ms; /* active from then on */
    }
  if (total < (guint) e->limits.sla_min_instances)
    {
      *why = g_strdup_printf ("the job has %u active tasks, fewer than %d: its SLA is not checked",
                              total, e->limits.sla_min_instances);
      return TRUE;
    }
  /* As Aurora: a policy that would let no instance go lets one go. */
  gboolean holds;
  g_autofree gchar *need = NULL;
  if (count)
    {
      gint64 required = p->countSlaPolicy->count;
      if ((gint64) total - required < 1)
        required = (gint64) total - 1;
      holds = (gint64) active >= required;
      need = g_strdup_printf ("its count policy needs %" G_GINT64_FORMAT, required);
    }
  else
    {
      gdouble required = p->percentageSlaPolicy->percentage;
      if ((gint64) ((1 - required / 100.0) * total) < 1)
        required = (gdouble) (total - 1) / total * 100.0;
      holds = (gdouble) active / total * 100.0 >= required;
      gchar number[G_ASCII_DTOSTR_BUF_SIZE];
      need = g_strdup_printf ("its percentage policy needs %s %%",
                              g_ascii_formatd (number, sizeof number, "%.4g", required));
    }
  *why = g_strdup_printf ("%u of %u tasks would stay active (RUNNING for %" G_GINT64_FORMAT
                          " s) without instance %d; %s",
                          active, total, duration_ms / 1000, instance, need);
  return holds;
}

/* ---- coordinators ------------------------------------------------------------------- */

struct _StgSlaAsk
{
  StgEngine *engine;
  gchar *url; /* in engine->sla_busy while asked */
  gchar *task_key;
  gchar *status_key;
  gchar *body;          /* (nullable) */
  gchar *failed;        /* (nullable) why there is no body: the answer is no */
  GCancellable *cancel; /* (nullable) the question in the runner */
  gboolean holds;       /* its URL is in engine->sla_busy: no answer yet */
  guint timer;          /* the timeout, or the start */
  StgSlaAnswerFunc func;
  gpointer data;
};

void
stg_sla_ask_free (StgSlaAsk *ask)
{
  if (ask == NULL)
    return;
  stg_clock_cancel_timer (ask->engine->clock, ask->timer);
  if (ask->cancel != NULL)
    g_cancellable_cancel (ask->cancel);
  if (ask->holds)
    g_hash_table_remove (ask->engine->sla_busy, ask->url);
  g_clear_object (&ask->cancel);
  g_free (ask->url);
  g_free (ask->task_key);
  g_free (ask->status_key);
  g_free (ask->body);
  g_free (ask->failed);
  g_free (ask);
}

/* The answer: the coordinator is free again; the owner may free @ask. */
static void
answer (StgSlaAsk *ask, gboolean yes, const gchar *message)
{
  stg_clock_cancel_timer (ask->engine->clock, ask->timer);
  ask->timer = 0;
  g_hash_table_remove (ask->engine->sla_busy, ask->url);
  ask->holds = FALSE;
  g_clear_object (&ask->cancel);
  ask->func (ask->data, yes, message);
}

static void
on_answer (gpointer data, gboolean yes, const gchar *message)
{
  answer (data, yes, message);
}

static void
on_timeout (gpointer data)
{
  StgSlaAsk *ask = data;
  g_autofree gchar *why = g_strdup_printf ("no answer within %" G_GINT64_FORMAT " s",
                                           ask->engine->limits.sla_coordinator_timeout_ms / 1000);

  ask->timer = 0;
  g_cancellable_cancel (ask->cancel); /* the runner reports nothing now */
  answer (ask, FALSE, why);
}

/* Timer: the question goes out (never inside the caller's step). */
static void
on_start (gpointer data)
{
  StgSlaAsk *ask = data;
  StgEngine *e = ask->engine;
  StgCoordinatorAsk q = { ask->url, ask->status_key, ask->task_key, ask->body };

  ask->timer = 0;
  if (e->gates == NULL)
    {
      answer (ask, FALSE, "this staggerd asks no SLA coordinators");
      return;
    }
  if (ask->body == NULL)
    {
      answer (ask, FALSE, ask->failed);
      return;
    }
  ask->cancel = g_cancellable_new ();
  ask->timer = stg_clock_add_timer (e->clock, e->limits.sla_coordinator_timeout_ms, on_timeout,
                                    ask);
  stg_gate_runner_ask (e->gates, &q, ask->cancel, on_answer, ask);
}

StgSlaAsk *
stg_sla_ask (StgEngine *e, gint64 job_id, const ApiJobKey *key, gint32 instance, const gchar *host,
             const ApiCoordinatorSlaPolicy *policy, gint64 countdown_ms, StgSlaAnswerFunc func,
             gpointer data)
{
  g_autoptr (GError) error = NULL;

  if (g_hash_table_contains (e->sla_busy, policy->coordinatorUrl))
    return NULL;
  StgSlaAsk *ask = g_new0 (StgSlaAsk, 1);
  ask->engine = e;
  ask->url = g_strdup (policy->coordinatorUrl);
  ask->task_key = g_strdup_printf ("%s/%s/%s/%s/%d",
                                   e->limits.cluster ? e->limits.cluster : "local", key->role,
                                   key->environment, key->name, instance);
  ask->status_key = g_strdup (policy->statusKey && policy->statusKey[0] ? policy->statusKey
                                                                        : DEFAULT_STATUS_KEY);
  ask->body = stg_sla_ask_body (e, job_id, key, instance, host, ask->task_key, countdown_ms,
                                &error);
  if (ask->body == NULL)
    ask->failed = g_strdup_printf ("cannot say which task asks: %s", error->message);
  ask->func = func;
  ask->data = data;
  g_hash_table_add (e->sla_busy, g_strdup (ask->url));
  ask->holds = TRUE;
  ask->timer = stg_clock_add_timer (e->clock, 0, on_start, ask);
  return ask;
}

/* ---- an SLA-aware update's waits ------------------------------------------------------ */

/* An event of @u's, inside the step. */
void
stg_update_sla_clear (StgUpdate *u)
{
  StgSlaWait *w = &u->sla;

  stg_clock_cancel_timer (u->engine->clock, w->timer);
  g_clear_pointer (&w->ask, stg_sla_ask_free);
  g_clear_pointer (&w->said, g_free);
  memset (w, 0, sizeof *w);
}

static void
on_wait_timer (gpointer data)
{
  StgUpdate *u = data;

  u->sla.timer = 0;
  u->engine->up.wake (u);
}

static void
arm (StgUpdate *u, gint64 delay_ms)
{
  StgClock *clock = u->engine->clock;

  stg_clock_cancel_timer (clock, u->sla.timer);
  u->sla.timer = stg_clock_add_timer (clock, MAX (delay_ms, 1), on_wait_timer, u);
}

/* Work item @idx waits for its SLA (@why): the first time, an event. */
static void
waits (StgUpdate *u, guint idx, const gchar *why)
{
  StgWork *w = &g_array_index (u->work, StgWork, idx);

  if (u->sla.noted)
    return;
  u->sla.noted = TRUE;
  g_autofree gchar *text = g_strdup_printf ("instance %d waits for its SLA: %s", w->instance, why);
  stg_update_note_event (u, text);
}

/* Work item @idx may go: after a wait, an event says so. */
static gboolean
goes (StgUpdate *u, guint idx, const gchar *why)
{
  StgWork *w = &g_array_index (u->work, StgWork, idx);

  if (u->sla.idx1 == idx + 1 && u->sla.noted)
    {
      gint64 waited = stg_clock_now_ms (u->engine->clock) - u->sla.since_ms;
      g_autofree gchar *text = g_strdup_printf ("instance %d: its SLA holds (%s); it goes after "
                                                "waiting %" G_GINT64_FORMAT " s",
                                                w->instance, why, waited / 1000);
      stg_update_note_event (u, text);
    }
  if (u->sla.idx1 == idx + 1)
    stg_update_sla_clear (u);
  return TRUE;
}

static void
on_coordinator (gpointer data, gboolean yes, const gchar *message)
{
  StgUpdate *u = data;
  StgEngine *e = u->engine;
  StgSlaWait *w = &u->sla;

  g_clear_pointer (&w->ask, stg_sla_ask_free);
  g_free (w->said);
  w->said = g_strdup (message);
  w->allowed = yes;
  w->asked++;
  if (!yes)
    {
      /* Asked again later, each time later, up to the longest wait. */
      gint64 delay = e->limits.sla_retry_min_ms;
      for (guint i = 1; i < w->asked && delay < e->limits.sla_retry_max_ms; i++)
        delay *= 2;
      arm (u, MIN (delay, e->limits.sla_retry_max_ms));
    }
  e->up.wake (u); /* the refusal's event, or the instance goes */
}

/* The coordinator's verdict on work item @idx, asking when nobody has. */
static gboolean
coordinator_may (StgUpdate *u, guint idx, const ApiCoordinatorSlaPolicy *c)
{
  StgSlaWait *w = &u->sla;
  StgWork *work = &g_array_index (u->work, StgWork, idx);
  g_autofree gchar *said = w->said ? g_strdup_printf ("coordinator %s said %s", c->coordinatorUrl,
                                                      w->said)
                                   : NULL;

  if (w->allowed)
    return goes (u, idx, said);
  if (said != NULL)
    waits (u, idx, said);
  if (w->ask == NULL && w->timer == 0)
    {
      w->ask = stg_sla_ask (u->engine, u->job_id, u->job, work->instance, NULL, c, -1,
                            on_coordinator, u);
      if (w->ask == NULL) /* it answers another question now */
        arm (u, u->engine->limits.sla_retry_min_ms);
    }
  return FALSE;
}

/* The config whose policy guards work item @idx: forward, the update's
 * desired one; back, the instance's initial one (Aurora's rule). */
static gint64
policy_config (StgUpdate *u, StgWork *w)
{
  if (u->back)
    return w->from_config;
  for (guint i = 0; w->to_config == 0 && i < u->work->len; i++)
    if (g_array_index (u->work, StgWork, i).to_config != 0)
      return g_array_index (u->work, StgWork, i).to_config;
  return w->to_config;
}

gboolean
stg_update_sla_may_start (StgUpdate *u, guint idx)
{
  StgEngine *e = u->engine;
  StgWork *w = &g_array_index (u->work, StgWork, idx);
  StgTaskObservation obs = { 0 };
  g_autoptr (GError) error = NULL;

  if (!u->s.sla_aware || e->runtime == NULL)
    return TRUE;
  if (u->sla.idx1 != 0 && u->sla.idx1 != idx + 1)
    stg_update_sla_clear (u); /* another instance's turn now */
  /* Only a task that runs counts against the SLA when it goes. */
  stg_runtime_observe (e->runtime, u->job_id, w->instance, &obs);
  if (obs.phase != STG_TASK_RUNNING && obs.phase != STG_TASK_STARTING)
    return goes (u, idx, "the instance does not run");
  gint64 config = policy_config (u, w);
  g_autoptr (ApiTaskConfig) task = config ? stg_store_get_config (e->store, config, &error) : NULL;
  g_autoptr (ApiSlaPolicy) p = stg_sla_policy_of (e, task, NULL);
  if (p == NULL)
    return goes (u, idx, "no SLA policy");
  if (u->sla.idx1 == 0)
    {
      u->sla.idx1 = idx + 1;
      u->sla.since_ms = stg_clock_now_ms (e->clock);
    }
  if (p->__isset_coordinatorSlaPolicy)
    return coordinator_may (u, idx, p->coordinatorSlaPolicy);

  /* Those in flight go down (or come up) now: they are not active. */
  g_autoptr (GHashTable) leaving = g_hash_table_new (NULL, NULL);
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init (&it, u->active);
  while (g_hash_table_iter_next (&it, &key, NULL))
    g_hash_table_add (leaving,
                      GINT_TO_POINTER (
                          g_array_index (u->work, StgWork, GPOINTER_TO_UINT (key)).instance));
  g_autofree gchar *why = NULL;
  gint64 recheck = 0;
  if (stg_sla_holds (e, u->job_id, w->instance, p, stg_task_is_production (e, task), leaving, &why,
                     &recheck))
    return goes (u, idx, why);
  waits (u, idx, why);
  /* Time alone makes a task active; runtime news wakes the update too. */
  arm (u, recheck > 0 ? recheck - stg_clock_now_ms (e->clock) : e->limits.sla_retry_min_ms);
  return FALSE;
}
