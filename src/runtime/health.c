/* health.c: StgHealth, the health checks of one instance.
 *
 * One check at a time: the first soon after start, then one every
 * interval_secs, each bounded by timeout_secs. While a Stagger task warms
 * up (its failures do not count yet), a failed check is tried again after
 * 5 ms, then twice as long each time up to interval_secs, so an instance
 * is seen healthy within a few ms of answering. A check in flight when the
 * StgHealth is freed is cancelled; its callback finds its Check detached and
 * only frees it. Main-loop thread only.
 */
#include "config.h"

#include <math.h>
#include <string.h>
#include <sys/wait.h>

#include "runtime/health.h"
#include "spawn/spawn.h"

#define FIRST_CHECK_MS 50 /* with no warm-up, where a failed first check counts */
#define WARM_CHECK_MS 5   /* the first retry while warming up, doubled each time */

struct _StgHealth
{
  StgHealthSpec spec;        /* strings owned */
  StgHealthTarget target;    /* strings owned; session referenced */
  StgHealthFunc func;
  gpointer data;
  gboolean healthy;
  gboolean failed;
  gint successes;
  gint failures;
  guint passed;              /* checks passed since it started */
  gint attempts;             /* aurora: checks so far, up to max_attempts + 1 */
  gint forgiving;            /* aurora: the first checks whose failures do not count */
  gint max_attempts;         /* aurora: the checks an instance has to become healthy */
  gint64 started_us;         /* monotonic */
  guint warm_ms;             /* the next retry while warming up (0: none) */
  guint timer;
  struct _Check *check;      /* in flight */
  gchar *last;
};

typedef struct _Check
{
  StgHealth *health;         /* NULL once the StgHealth is gone */
  GCancellable *cancel;
  guint timeout;
  gboolean timed_out;
  SoupMessage *msg;
  StgChild *proc;
} Check;

static void schedule (StgHealth *h, guint ms);

static void
check_free (Check *c)
{
  g_clear_handle_id (&c->timeout, g_source_remove);
  g_clear_object (&c->cancel);
  g_clear_object (&c->msg);
  g_clear_pointer (&c->proc, stg_child_free);
  g_free (c);
}

/* Whether a failed check counts: not while the instance warms up
 * (Stagger: the first initial_interval_secs; Aurora: the first checks). */
static gboolean
failure_counts (StgHealth *h)
{
  if (h->spec.aurora)
    return h->attempts > h->forgiving;
  return h->healthy ||
         g_get_monotonic_time () - h->started_us >= (gint64) (h->spec.initial_interval_secs * 1e6);
}

/* When to check again after a check: after a failure that did not count
 * while a Stagger task warms up, the warm-up's growing retry (never
 * longer than interval_secs); else interval_secs. */
static guint
next_check_ms (StgHealth *h, gboolean ok)
{
  guint interval = (guint) (h->spec.interval_secs * 1000);

  if (ok || h->healthy || h->warm_ms == 0 || failure_counts (h))
    return interval;
  guint ms = MIN (h->warm_ms, interval);
  h->warm_ms = MIN (h->warm_ms * 2, interval);
  return ms;
}

/* Aurora: an instance not healthy yet that can no longer get its
 * successes in a row within the checks it has left. */
static gboolean
too_late (StgHealth *h)
{
  gint left = h->max_attempts - h->attempts;

  return h->spec.aurora && !h->healthy && left > 1 &&
         h->spec.min_consecutive_successes - h->successes > left;
}

/* Ends the checks: failed for good. */
static void
give_up (StgHealth *h, const gchar *why)
{
  h->failed = TRUE;
  h->healthy = FALSE;
  h->func (h->data, FALSE, why);
}

/* Takes the outcome of a check. */
static void
result (StgHealth *h, gboolean ok, const gchar *why)
{
  if (h->target.counts != NULL && ok)
    h->target.counts->passed++;
  else if (h->target.counts != NULL)
    h->target.counts->failed++;
  g_free (h->last);
  h->last = g_strdup (why);
  if (h->attempts <= h->max_attempts)
    h->attempts++;
  if (ok)
    {
      h->failures = 0;
      h->successes++;
      h->passed++;
      if (!h->healthy && h->successes >= h->spec.min_consecutive_successes)
        {
          h->healthy = TRUE;
          schedule (h, (guint) (h->spec.interval_secs * 1000));
          h->func (h->data, TRUE, why);
          return;       /* @h may be gone now */
        }
    }
  else
    {
      h->successes = 0;
      if (failure_counts (h) && (too_late (h) || ++h->failures > h->spec.max_consecutive_failures))
        {
          give_up (h, why);
          return;       /* @h may be gone now */
        }
    }
  schedule (h, next_check_ms (h, ok));
}

static gboolean
on_timeout (gpointer data)
{
  Check *c = data;

  c->timeout = 0;
  c->timed_out = TRUE;
  g_cancellable_cancel (c->cancel);
  if (c->proc != NULL)
    stg_child_kill (c->proc);
  return G_SOURCE_REMOVE;
}

/* Detaches the finished check; returns its health or NULL if gone. */
static StgHealth *
finish_check (Check *c)
{
  StgHealth *h = c->health;

  if (h != NULL)
    h->check = NULL;
  return h;
}

/* Aurora's HttpSignaler: the body (an error status has none), then the
 * status, each when expected. */
static gboolean
aurora_http_ok (const StgHealthSpec *spec, guint status, const gchar *body)
{
  const gchar *want = spec->expected_response;

  return (want[0] == '\0' || g_ascii_strcasecmp (body, want) == 0) &&
         (spec->expected_response_code == 0 || (gint) status == spec->expected_response_code);
}

static void
on_http (GObject *source, GAsyncResult *res, gpointer data)
{
  Check *c = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) body = soup_session_send_and_read_finish (SOUP_SESSION (source), res, &error);
  StgHealth *h = finish_check (c);
  g_autofree gchar *why = NULL;
  gboolean ok = FALSE;

  if (h != NULL)
    {
      if (body == NULL)
        why = g_strdup_printf ("%s%sno answer from %s: %s",
                               h->target.no_answer ? h->target.no_answer : "",
                               h->target.no_answer ? ": " : "", h->target.url,
                               c->timed_out ? "timed out" : error->message);
      else
        {
          guint status = soup_message_get_status (c->msg);
          gsize n = 0;
          const gchar *data_ = g_bytes_get_data (body, &n);
          g_autofree gchar *text = g_strndup (data_ ? data_ : "", MIN (n, 200));
          g_strstrip (text);
          if (h->spec.aurora)
            ok = aurora_http_ok (&h->spec, status, status >= 400 ? "" : text);
          else if (h->spec.expected_response_code != 0)
            ok = (gint) status == h->spec.expected_response_code;
          else
            ok = g_ascii_strcasecmp (text, g_strstrip (h->spec.expected_response)) == 0;
          why = g_strdup_printf ("%s answered %u \"%s\"", h->target.url, status, text);
        }
      result (h, ok, why);
    }
  check_free (c);
}

static void
on_shell (gpointer data, gint status)
{
  Check *c = data;
  StgHealth *h = finish_check (c);

  if (h != NULL)
    {
      g_autofree gchar *why = NULL;
      gboolean ok = FALSE;
      if (c->timed_out)
        why = g_strdup_printf ("the health command took longer than %g s", h->spec.timeout_secs);
      else
        {
          g_autofree gchar *how = stg_spawn_describe (status);
          ok = WIFEXITED (status) && WEXITSTATUS (status) == 0;
          why = g_strdup_printf ("the health command %s", how);
        }
      result (h, ok, why);
    }
  check_free (c);
}

/* A shell check run elsewhere (StgHealthTarget.run) has ended. */
static void
on_run (GObject *source G_GNUC_UNUSED, GAsyncResult *res, gpointer data)
{
  Check *c = data;
  StgHealth *h = finish_check (c);

  if (h != NULL)
    {
      g_autoptr (GError) error = NULL;
      g_autofree gchar *why = NULL;
      gint code = -1;
      gboolean ran = h->target.run_finish (h->target.run_data, res, &code, &error);
      if (c->timed_out)
        why = g_strdup_printf ("the health command took longer than %g s", h->spec.timeout_secs);
      else if (!ran)
        why = g_strdup_printf ("the health command failed: %s", error->message);
      else
        why = g_strdup_printf ("the health command exited with status %d", code);
      result (h, ran && code == 0 && !c->timed_out, why);
    }
  check_free (c);
}

static gboolean
run_check (gpointer data)
{
  StgHealth *h = data;

  h->timer = 0;
  if (h->spec.aurora && !h->healthy && h->attempts > h->max_attempts)
    {
      give_up (h, "not enough successful health checks in time");
      return G_SOURCE_REMOVE;
    }
  if (h->target.snooze_file != NULL && g_file_test (h->target.snooze_file, G_FILE_TEST_EXISTS))
    {
      result (h, TRUE, "health checks are snoozed (.healthchecksnooze)");
      return G_SOURCE_REMOVE;
    }
  Check *c = g_new0 (Check, 1);
  c->health = h;
  c->cancel = g_cancellable_new ();
  c->timeout = g_timeout_add ((guint) (h->spec.timeout_secs * 1000), on_timeout, c);
  h->check = c;

  if (h->spec.kind == STG_HEALTH_HTTP)
    {
      c->msg = soup_message_new ("GET", h->target.url);
      if (c->msg == NULL)
        {
          h->check = NULL;
          check_free (c);
          result (h, FALSE, "the health check URL is not valid");
          return G_SOURCE_REMOVE;
        }
      soup_session_send_and_read_async (h->target.session, c->msg, G_PRIORITY_DEFAULT, c->cancel,
                                        on_http, c);
      return G_SOURCE_REMOVE;
    }

  if (h->target.run != NULL)
    {
      h->target.run (h->target.run_data, (const gchar *const *) h->target.shell_argv, c->cancel, on_run, c);
      return G_SOURCE_REMOVE;
    }
  g_autoptr (GError) error = NULL;
  GArray *join = h->target.cgroup == NULL
                     ? g_array_new (FALSE, FALSE, sizeof (gint))
                     : stg_cgroup_open_procs (h->target.cgroups, h->target.cgroup, &error);
  StgSpawnRequest req = {
    .argv = (const gchar *const *) h->target.shell_argv,
    .envp = (const gchar *const *) h->target.envp,
    .cwd = h->target.cwd,
    .identity = h->target.identity,
    .group = STG_SPAWN_GROUP,
    .join = join != NULL ? (const gint *) join->data : NULL,
    .n_join = join != NULL ? join->len : 0,
  };
  c->proc = join != NULL ? stg_child_spawn (&req, on_shell, c, &error) : NULL;
  if (join != NULL)
    stg_cgroup_close_procs (join);
  if (c->proc == NULL)
    {
      h->check = NULL;
      check_free (c);
      g_autofree gchar *why = g_strdup_printf ("cannot run the health command: %s", error->message);
      result (h, FALSE, why);
      return G_SOURCE_REMOVE;
    }
  return G_SOURCE_REMOVE;
}

static gboolean
report_running (gpointer data)
{
  StgHealth *h = data;

  h->timer = 0;
  h->healthy = TRUE;
  h->func (h->data, TRUE, "running");
  return G_SOURCE_REMOVE;
}

static void
schedule (StgHealth *h, guint ms)
{
  g_clear_handle_id (&h->timer, g_source_remove);
  h->timer = g_timeout_add (MAX (ms, 1u), run_check, h);
}

StgHealth *
stg_health_new (const StgHealthSpec *spec, const StgHealthTarget *target, gboolean already_healthy,
                StgHealthFunc func, gpointer data)
{
  StgHealth *h = g_new0 (StgHealth, 1);

  h->spec = *spec;
  h->spec.endpoint = g_strdup (spec->endpoint);
  h->spec.expected_response = g_strdup (spec->expected_response ? spec->expected_response : "");
  h->spec.shell_command = g_strdup (spec->shell_command);
  h->target.session = target->session ? g_object_ref (target->session) : NULL;
  h->target.url = g_strdup (target->url);
  h->target.no_answer = g_strdup (target->no_answer);
  h->target.shell_argv = g_strdupv (target->shell_argv);
  h->target.envp = g_strdupv (target->envp);
  h->target.cwd = g_strdup (target->cwd);
  h->target.run = target->run;
  h->target.run_finish = target->run_finish;
  h->target.run_data = target->run_data;
  h->target.identity = target->identity;
  h->target.cgroups = target->cgroups;
  h->target.cgroup = g_strdup (target->cgroup);
  h->target.counts = target->counts;
  h->target.snooze_file = spec->aurora ? g_strdup (target->snooze_file) : NULL;
  if (spec->aurora)
    {
      h->forgiving = (gint) ceil (spec->initial_interval_secs / spec->interval_secs);
      h->max_attempts = h->forgiving + spec->max_consecutive_failures +
                        spec->min_consecutive_successes;
    }
  else
    h->max_attempts = G_MAXINT - 1;
  h->func = func;
  h->data = data;
  h->started_us = g_get_monotonic_time ();
  h->healthy = already_healthy;

  if (spec->kind == STG_HEALTH_NONE)
    {
      if (!already_healthy)
        h->timer = g_idle_add (report_running, h);
    }
  else if (already_healthy)
    schedule (h, (guint) (spec->interval_secs * 1000));
  else
    {
      /* A Stagger task that warms up is looked at at once, and again soon
       * while it does not answer; without a warm-up (or for Aurora's
       * counted attempts) the first check leaves it time to start. */
      gboolean warms = !spec->aurora && spec->initial_interval_secs * 1000 > FIRST_CHECK_MS;
      h->warm_ms = warms ? WARM_CHECK_MS * 2 : 0;
      schedule (h, warms ? WARM_CHECK_MS : FIRST_CHECK_MS);
    }
  return h;
}

guint
stg_health_passed (const StgHealth *h)
{
  return h->passed;
}

void
stg_health_free (StgHealth *h)
{
  if (h == NULL)
    return;
  g_clear_handle_id (&h->timer, g_source_remove);
  if (h->check != NULL)
    {
      Check *c = h->check;
      c->health = NULL;
      g_cancellable_cancel (c->cancel);
      if (c->proc != NULL)
        stg_child_kill (c->proc);
    }
  g_clear_object (&h->target.session);
  g_free (h->target.url);
  g_free (h->target.no_answer);
  g_strfreev (h->target.shell_argv);
  g_strfreev (h->target.envp);
  g_free (h->target.cwd);
  g_free (h->target.snooze_file);
  g_free (h->target.cgroup);
  g_free (h->spec.endpoint);
  g_free (h->spec.expected_response);
  g_free (h->spec.shell_command);
  g_free (h->last);
  g_free (h);
}
