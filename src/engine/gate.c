/* gate.c: gates as the engine runs them: checked when a request names
 * them, then tried attempt by attempt on the engine's clock.
 *
 * A StgGateRun makes the first attempt on the next loop iteration (never
 * inside a step), gives each attempt timeoutSecs (then cancels it: a gate
 * that hangs fails as timed out), and after a failed attempt waits
 * retryIntervalSecs before the next, up to 1 + retries attempts, or, with
 * waitSecs, until the next attempt would begin past waitSecs after the
 * first (the last failure then says it did not pass in time). Shell
 * gates get the environment their owner gives (STAGGER_JOB, the versions
 * moved from and to, ...). Every
 * attempt's result goes to the owner (a plan's stage, or an update between
 * batches), which records it as an event. HTTP and shell attempts go
 * through the StgGateRunner seam; "every instance of job X healthy" is
 * answered here from the store and the runtime. Main-loop thread only.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "common/enums.h"
#include "common/error.h"
#include "common/jobkey.h"
#include "engine/engine_private.h"
#include "engine/gate_private.h"

#define bad(error, ...) stg_fail (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID, __VA_ARGS__)

/* ---- checking a gate --------------------------------------------------------- */

static gboolean
check_http (const ApiRolloutGate *g, const gchar *what, GError **error)
{
  if (!g->__isset_url || g->url == NULL || g->url[0] == '\0')
    return bad (error, "%s.url is missing (an HTTP gate GETs it)", what);
  g_autoptr (GUri) uri = g_uri_parse (g->url, G_URI_FLAGS_NONE, NULL);
  if (uri == NULL || g_uri_get_host (uri) == NULL || g_uri_get_host (uri)[0] == '\0' ||
      (g_ascii_strcasecmp (g_uri_get_scheme (uri), "http") != 0 &&
       g_ascii_strcasecmp (g_uri_get_scheme (uri), "https") != 0))
    return bad (error, "%s.url '%s' is not an http:// or https:// URL", what, g->url);
  if (g->__isset_expectStatus && (g->expectStatus < 100 || g->expectStatus > 599))
    return bad (error, "%s.expectStatus must be an HTTP status (100-599), not %d", what,
                g->expectStatus);
  gboolean has_path = g->__isset_jsonPath && g->jsonPath != NULL && g->jsonPath[0] != '\0';
  if (has_path)
    {
      g_autoptr (JsonPath) path = json_path_new ();
      g_autoptr (GError) local = NULL;
      if (!json_path_compile (path, g->jsonPath, &local))
        return bad (error, "%s.jsonPath '%s' is not a JSONPath: %s", what, g->jsonPath,
                    local->message);
    }
  if (g->__isset_compare && g->compare != NULL && g->compare[0] != '\0')
    {
      if (!stg_gate_relation_known (g->compare))
        return bad (error, "%s.compare must be one of <, <=, ==, !=, >=, >, not '%s'", what,
                    g->compare);
      if (!has_path)
        return bad (error, "%s.compare needs a jsonPath: the value it compares", what);
    }
  if (g->__isset_threshold && !has_path)
    return bad (error, "%s.threshold needs a jsonPath: the value it is compared with", what);
  if (g->__isset_threshold && !isfinite (g->threshold))
    return bad (error, "%s.threshold must be a finite number", what);
  return TRUE;
}

gboolean
stg_gate_check (const ApiRolloutGate *g, const gchar *what, GError **error)
{
  if (g == NULL)
    return bad (error, "%s is missing", what);
  if (g->name == NULL || g->name[0] == '\0' || strlen (g->name) > 200 ||
      !g_utf8_validate (g->name, -1, NULL))
    return bad (error, "%s.name must be 1 to 200 characters of UTF-8", what);
  switch (g->kind)
    {
    case API_ROLLOUT_GATE_KIND_HTTP:
      if (!check_http (g, what, error))
        return FALSE;
      break;
    case API_ROLLOUT_GATE_KIND_SHELL:
      if (!g->__isset_command || g->command == NULL || g->command[0] == '\0')
        return bad (error, "%s.command is missing (a shell gate runs it with /bin/sh -c)", what);
      if (strlen (g->command) > 65536)
        return bad (error, "%s.command is longer than 65536 bytes", what);
      break;
    case API_ROLLOUT_GATE_KIND_JOB_HEALTHY:
      {
        g_autofree gchar *field = g_strdup_printf ("%s.job", what);
        g_autoptr (GError) local = NULL;
        if (!g->__isset_job || !stg_job_key_check (g->job, field, &local))
          return bad (error, "%s", local ? local->message : "job is missing");
        break;
      }
    default:
      return bad (error, "%s.kind must be HTTP, SHELL or JOB_HEALTHY, not %d", what, g->kind);
    }
  if (g->__isset_timeoutSecs && (g->timeoutSecs < 1 || g->timeoutSecs > 3600))
    return bad (error, "%s.timeoutSecs must be between 1 and 3600, not %d", what, g->timeoutSecs);
  if (g->__isset_retries && (g->retries < 0 || g->retries > 10000))
    return bad (error, "%s.retries must be between 0 and 10000, not %d", what, g->retries);
  if (g->__isset_retryIntervalSecs && (g->retryIntervalSecs < 0 || g->retryIntervalSecs > 3600))
    return bad (error, "%s.retryIntervalSecs must be between 0 and 3600, not %d", what,
                g->retryIntervalSecs);
  if (g->__isset_waitSecs && (g->waitSecs < 1 || g->waitSecs > 86400))
    return bad (error, "%s.waitSecs must be between 1 and 86400, not %d", what, g->waitSecs);
  return TRUE;
}

/* ---- running a gate ---------------------------------------------------------- */

struct _StgGateRun
{
  StgEngine *engine;
  ApiRolloutGate *gate;
  gchar *role;
  gchar **env; /* (nullable) what a shell gate gets */
  StgGateResultFunc func;
  gpointer data;
  gint64 first_ms;      /* when the first attempt began */
  guint attempt;        /* the attempt under way or last made, from 1 */
  guint timer;          /* the next attempt, or the attempt's timeout */
  GCancellable *cancel; /* (nullable) the attempt in the runner */
};

static void attempt (gpointer data);

static gint
timeout_secs (const ApiRolloutGate *g)
{
  return g->__isset_timeoutSecs && g->timeoutSecs > 0 ? g->timeoutSecs : STG_GATE_TIMEOUT_SECS;
}

static gboolean
waits (const ApiRolloutGate *g)
{
  return g->__isset_waitSecs && g->waitSecs > 0;
}

guint
stg_gate_attempts_allowed (const ApiRolloutGate *g)
{
  if (waits (g))
    return 0;
  return 1 + (guint) (g->__isset_retries && g->retries > 0 ? g->retries : 0);
}

/* The attempt ended: reports it, and arms the next one when it failed and
 * attempts (or time, with waitSecs) are left. The owner may free @run
 * inside its callback. */
static void
report (StgGateRun *run, gboolean passed, const gchar *message)
{
  const ApiRolloutGate *g = run->gate;
  gint64 wait = (g->__isset_retryIntervalSecs ? g->retryIntervalSecs
                                              : STG_GATE_RETRY_INTERVAL_SECS) *
                1000LL;
  gint64 now = stg_clock_now_ms (run->engine->clock);
  gboolean last = passed || (waits (g) ? now + wait > run->first_ms + g->waitSecs * 1000LL
                                       : run->attempt >= stg_gate_attempts_allowed (g));
  g_autofree gchar *late = !passed && last && waits (g)
                               ? g_strdup_printf ("did not pass within %d s: %s", g->waitSecs,
                                                  message)
                               : NULL;

  stg_clock_cancel_timer (run->engine->clock, run->timer);
  run->timer = 0;
  g_clear_object (&run->cancel);
  if (!last)
    run->timer = stg_clock_add_timer (run->engine->clock, wait, attempt, run);
  run->func (run->data, run->attempt, passed, last, late ? late : message);
}

static void
on_done (gpointer data, gboolean passed, const gchar *message)
{
  report (data, passed, message);
}

static void
on_timeout (gpointer data)
{
  StgGateRun *run = data;

  run->timer = 0;
  g_cancellable_cancel (run->cancel); /* the runner reports nothing now */
  g_autofree gchar *why = g_strdup_printf ("timed out after %d s", timeout_secs (run->gate));
  report (run, FALSE, why);
}

/* "Every instance of job X is running and healthy", from the runtime. */
static gboolean
job_healthy (StgEngine *e, const ApiJobKey *key, gchar **message)
{
  g_autofree gchar *name = stg_job_key_to_string (key);
  g_autoptr (GError) error = NULL;
  g_autoptr (StgJobRow) job = stg_store_get_job (e->store, key, &error);

  if (job == NULL)
    {
      *message = g_strdup_printf ("job %s does not exist", name);
      return FALSE;
    }
  g_autoptr (GArray) rows = stg_store_list_instances (e->store, job->id, &error);
  if (rows == NULL)
    {
      *message = g_strdup_printf ("cannot read job %s: %s", name, error->message);
      return FALSE;
    }
  if (rows->len == 0 || e->runtime == NULL)
    {
      *message = g_strdup_printf ("job %s has no instance running", name);
      return FALSE;
    }
  guint healthy = 0;
  gint32 first_bad = -1;
  StgTaskPhase bad_phase = STG_TASK_ABSENT;
  for (guint i = 0; i < rows->len; i++)
    {
      StgInstanceRow *r = &g_array_index (rows, StgInstanceRow, i);
      StgTaskObservation obs = { 0 };
      stg_runtime_observe (e->runtime, job->id, r->instance_id, &obs);
      if (obs.phase == STG_TASK_RUNNING && obs.config_id == r->config_id)
        healthy++;
      else if (first_bad < 0)
        {
          first_bad = r->instance_id;
          bad_phase = obs.phase;
        }
    }
  if (first_bad < 0)
    {
      *message = g_strdup_printf ("%u of %u instances of %s healthy", healthy, rows->len, name);
      return TRUE;
    }
  *message = g_strdup_printf ("%u of %u instances of %s healthy; instance %d is %s", healthy,
                              rows->len, name, first_bad, stg_task_phase_name (bad_phase));
  return FALSE;
}

static void
attempt (gpointer data)
{
  StgGateRun *run = data;
  StgEngine *e = run->engine;
  const ApiRolloutGate *g = run->gate;

  run->timer = 0;
  if (run->attempt++ == 0)
    run->first_ms = stg_clock_now_ms (e->clock);
  if (g->kind == API_ROLLOUT_GATE_KIND_JOB_HEALTHY)
    {
      g_autofree gchar *message = NULL;
      gboolean ok = job_healthy (e, g->job, &message);
      report (run, ok, message);
      return;
    }
  if (e->gates == NULL)
    {
      report (run, FALSE, "this staggerd runs no HTTP or shell gates");
      return;
    }
  run->cancel = g_cancellable_new ();
  run->timer = stg_clock_add_timer (e->clock, timeout_secs (g) * 1000LL, on_timeout, run);
  stg_gate_runner_run (e->gates, g, run->role, (const gchar *const *) run->env, run->cancel,
                       on_done, run);
}

StgGateRun *
stg_gate_run_start (StgEngine *engine, const ApiRolloutGate *gate, const gchar *role,
                    const gchar *const *env, StgGateResultFunc func, gpointer data)
{
  StgGateRun *run = g_new0 (StgGateRun, 1);

  run->engine = engine;
  run->gate = g_object_ref ((gpointer) gate);
  run->role = g_strdup (role);
  run->env = g_strdupv ((gchar **) env);
  run->func = func;
  run->data = data;
  run->timer = stg_clock_add_timer (engine->clock, 0, attempt, run);
  return run;
}

void
stg_gate_run_free (StgGateRun *run)
{
  if (run == NULL)
    return;
  stg_clock_cancel_timer (run->engine->clock, run->timer);
  if (run->cancel != NULL)
    g_cancellable_cancel (run->cancel);
  g_clear_object (&run->cancel);
  g_object_unref (run->gate);
  g_free (run->role);
  g_strfreev (run->env);
  g_free (run);
}

gchar **
stg_gate_environ (const ApiJobKey *job, gint from_version, gint to_version)
{
  gchar **env = NULL;
  g_autofree gchar *name = stg_job_key_to_string (job);
  g_autofree gchar *from = g_strdup_printf ("%d", from_version);
  g_autofree gchar *to = g_strdup_printf ("%d", to_version);

  env = g_environ_setenv (env, "STAGGER_JOB", name, TRUE);
  env = g_environ_setenv (env, "STAGGER_FROM_VERSION", from, TRUE);
  env = g_environ_setenv (env, "STAGGER_TO_VERSION", to, TRUE);
  return env;
}

gchar *
stg_gate_describe (const ApiRolloutGate *g)
{
  switch (g->kind)
    {
    case API_ROLLOUT_GATE_KIND_HTTP:
      if (g->__isset_jsonPath && g->jsonPath != NULL && g->jsonPath[0] != '\0')
        {
          /* The threshold as the job file wrote it, whatever staggerd's locale. */
          gchar number[G_ASCII_DTOSTR_BUF_SIZE];
          g_ascii_formatd (number, sizeof number, "%g", g->__isset_threshold ? g->threshold : 0);
          return g_strdup_printf ("GET %s: %s %s %s", g->url, g->jsonPath,
                                  g->__isset_compare && g->compare ? g->compare : "==", number);
        }
      return g_strdup_printf ("GET %s: HTTP %d", g->url,
                              g->__isset_expectStatus && g->expectStatus > 0 ? g->expectStatus
                                                                             : 200);
    case API_ROLLOUT_GATE_KIND_SHELL:
      return g_strdup_printf ("sh -c %s", g->command);
    case API_ROLLOUT_GATE_KIND_JOB_HEALTHY:
      {
        g_autofree gchar *job = stg_job_key_to_string (g->job);
        return g_strdup_printf ("every instance of %s healthy", job);
      }
    default:
      return g_strdup (stg_gate_kind_name (g->kind));
    }
}
