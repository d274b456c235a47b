/* sidecar.c: the updates of sidecar sets: a set's new version rolled
 * across the pods that carry it, as OpenKruise's SidecarSet does it (at
 * most maxUnavailable instances at a time, a partition that keeps the last
 * instances on the old version, pause, abort, rollback), never touching
 * the pods' main containers.
 *
 * The engine keeps no per-instance state of these updates: each look
 * (look_at_set) reads the set's row and what the runtime sees of every
 * instance that carries the sidecar (stg_runtime_sidecars: the version
 * serving, the one asked for, its phase, its failed starts), decides,
 * records the events and the status in one transaction, and only then asks
 * the runtime (which records each ask before acting on it). A restarted
 * staggerd therefore goes on from where the runtime stands; the set's row
 * is all there is to recover.
 *
 * An update's status (JobUpdateStatus), each arrow with its function:
 *
 *   (a new version) --[stg_sidecar_begin]--> ROLLING_FORWARD, or
 *            ROLL_FORWARD_PAUSED with settings.paused
 *   ROLLING_FORWARD --[look_at_set: every instance outside the partition
 *            serves to_version, healthy]--> ROLLED_FORWARD
 *   ROLLED_FORWARD --[look_at_set: an instance outside the partition (it
 *            was lowered) does not run to_version]--> ROLLING_FORWARD
 *   ROLLING_FORWARD --[look_at_set: an instance failed more than
 *            maxFailures starts]--> ROLLING_BACK (rollbackOnFailure), else FAILED
 *   ROLLING_BACK --[look_at_set: every instance serves from_version,
 *            healthy]--> ROLLED_BACK
 *   ROLLING_BACK --[look_at_set: an instance failed more than maxFailures
 *            starts]--> FAILED
 *   ROLLING_FORWARD, ROLL_FORWARD_PAUSED, ROLLED_FORWARD, ABORTED, FAILED
 *            --[rollback: stg_engine_sidecar_control]--> ROLLING_BACK
 *   ROLLING_FORWARD, ROLLING_BACK --[pause: stg_sidecar_transition]--> the
 *            PAUSED of the direction --[resume]--> back to it
 *   ROLLING_*, ROLL_*_PAUSED --[abort: stg_sidecar_transition]--> ABORTED
 *
 * Invariants (check_row): inject_version is from_version once
 * the update goes back (ROLLING_BACK, ROLL_BACK_PAUSED, ROLLED_BACK) and
 * to_version while it goes forward (an abort keeps it); from_version and
 * to_version differ (an update may go to an earlier version's sidecar
 * again) and are at most version, the newest; a rollback needs a
 * from_version. Main-loop thread only.
 */
#include "config.h"

#include "common/enums.h"
#include "engine/engine_private.h"
#include "engine/sidecar_private.h"

/* Looks again this often while an update moves, besides the runtime's news. */
#define LOOK_AGAIN_MS 1000
/* Events of a set the details show. */
#define EVENTS_SHOWN 500

/* ---- the machine --------------------------------------------------------------- */

static const struct
{
  gint from;
  gint to[5];
} transitions[] = {
  { API_JOB_UPDATE_STATUS_ROLLING_FORWARD,
    { API_JOB_UPDATE_STATUS_ROLLED_FORWARD, API_JOB_UPDATE_STATUS_ROLLING_BACK,
      API_JOB_UPDATE_STATUS_FAILED, API_JOB_UPDATE_STATUS_ROLL_FORWARD_PAUSED,
      API_JOB_UPDATE_STATUS_ABORTED } },
  { API_JOB_UPDATE_STATUS_ROLL_FORWARD_PAUSED,
    { API_JOB_UPDATE_STATUS_ROLLING_FORWARD, API_JOB_UPDATE_STATUS_ROLLING_BACK,
      API_JOB_UPDATE_STATUS_ABORTED, -1, -1 } },
  { API_JOB_UPDATE_STATUS_ROLLED_FORWARD,
    { API_JOB_UPDATE_STATUS_ROLLING_FORWARD, API_JOB_UPDATE_STATUS_ROLLING_BACK, -1, -1, -1 } },
  { API_JOB_UPDATE_STATUS_ROLLING_BACK,
    { API_JOB_UPDATE_STATUS_ROLLED_BACK, API_JOB_UPDATE_STATUS_FAILED,
      API_JOB_UPDATE_STATUS_ROLL_BACK_PAUSED, API_JOB_UPDATE_STATUS_ABORTED, -1 } },
  { API_JOB_UPDATE_STATUS_ROLL_BACK_PAUSED,
    { API_JOB_UPDATE_STATUS_ROLLING_BACK, API_JOB_UPDATE_STATUS_ABORTED, -1, -1, -1 } },
  { API_JOB_UPDATE_STATUS_ABORTED, { API_JOB_UPDATE_STATUS_ROLLING_BACK, -1, -1, -1, -1 } },
  { API_JOB_UPDATE_STATUS_FAILED, { API_JOB_UPDATE_STATUS_ROLLING_BACK, -1, -1, -1, -1 } },
};

gboolean
stg_sidecar_transition_allowed (gint from, gint to)
{
  for (guint i = 0; i < G_N_ELEMENTS (transitions); i++)
    if (transitions[i].from == from)
      for (guint j = 0; j < G_N_ELEMENTS (transitions[i].to); j++)
        if (transitions[i].to[j] == to)
          return TRUE;
  return FALSE;
}

gboolean
stg_sidecar_status_goes_back (gint status)
{
  return status == API_JOB_UPDATE_STATUS_ROLLING_BACK ||
         status == API_JOB_UPDATE_STATUS_ROLL_BACK_PAUSED ||
         status == API_JOB_UPDATE_STATUS_ROLLED_BACK;
}

#ifdef STG_CHECK_INVARIANTS
/* Asserts the invariants of a set's row (see the top). */
static void
check_row (const StgSidecarSetRow *row)
{
  gint inject = stg_sidecar_status_goes_back (row->status) ? row->from_version : row->to_version;

  g_assert_cmpint (row->to_version, !=, row->from_version);
  g_assert_cmpint (row->to_version, <=, row->version);
  g_assert_cmpint (row->from_version, <=, row->version);
  if (row->status != API_JOB_UPDATE_STATUS_ABORTED)
    g_assert_cmpint (row->inject_version, ==, inject);
  if (stg_sidecar_status_goes_back (row->status))
    g_assert_cmpint (row->from_version, >, 0);
}
#endif

gboolean
stg_sidecar_transition (StgEngine *e, StgSidecarSetRow *row, gint to, const gchar *user,
                        const gchar *message, GError **error)
{
  if (!stg_engine_transition_ok (stg_sidecar_transition_allowed (row->status, to), "sidecar set",
                                 row->name, stg_update_status_name (row->status),
                                 stg_update_status_name (to)))
    {
      g_set_error (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_STATE,
                   "the update of sidecar set %s is %s: it cannot become %s", row->name,
                   stg_update_status_name (row->status), stg_update_status_name (to));
      return FALSE;
    }
  row->status = to;
  row->status_ms = stg_clock_now_ms (e->clock);
  g_free (row->reason);
  row->reason = g_strdup (message ? message : "");
  if (to == API_JOB_UPDATE_STATUS_ROLLING_BACK)
    row->inject_version = row->from_version;
#ifdef STG_CHECK_INVARIANTS
  check_row (row);
#endif
  return stg_store_set_sidecar_set (e->store, row, error) &&
         stg_store_add_sidecar_event (e->store, row->id, row->status_ms, to, NULL, 0, message, user,
                                      error);
}

/* ---- looking at a set ----------------------------------------------------------- */

/* What one look decided: the instances to ask, and a status to take. */
typedef struct
{
  GArray *ask; /* guint: indexes into the observations */
  gint to;     /* -1: the status stays */
  gchar *why;
} Decision;

static void
decision_clear (Decision *d)
{
  g_clear_pointer (&d->ask, g_array_unref);
  g_free (d->why);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Decision, decision_clear)

static gboolean
serves (const StgSidecarObservation *o, gint version)
{
  return o->want == version && o->version == version && o->phase == STG_TASK_RUNNING;
}

/* Decides what @row's update does next over @obs (its instances, in
 * order). Pure. */
static void
decide (const StgSidecarSetRow *row, GArray *obs, Decision *d)
{
  gboolean back = row->status == API_JOB_UPDATE_STATUS_ROLLING_BACK;
  gint target = back ? row->from_version : row->to_version;
  const ApiSidecarUpdateSettings *s = row->settings;
  guint n = obs->len, held = back ? 0 : (guint) MIN ((guint) MAX (s->partition, 0), n);
  guint unavailable = 0, pending = 0;

  d->ask = g_array_new (FALSE, FALSE, sizeof (guint));
  d->to = -1;
  for (guint i = 0; i < n; i++)
    unavailable += g_array_index (obs, StgSidecarObservation, i).phase != STG_TASK_RUNNING;
  for (guint k = 0; k < n - held; k++)
    {
      guint i = back ? n - 1 - k : k;
      const StgSidecarObservation *o = &g_array_index (obs, StgSidecarObservation, i);
      /* Once rolled forward, only an instance asked for another version
       * (one the partition held back) is still to move. */
      if (serves (o, target) ||
          (row->status == API_JOB_UPDATE_STATUS_ROLLED_FORWARD && o->want == target))
        continue;
      pending++;
      if (o->want == target && (gint) o->failures > s->maxFailures &&
          row->status != API_JOB_UPDATE_STATUS_ROLLED_FORWARD)
        {
          d->to = !back && s->rollbackOnFailure ? API_JOB_UPDATE_STATUS_ROLLING_BACK
                                                : API_JOB_UPDATE_STATUS_FAILED;
          d->why = g_strdup_printf ("%s/%d failed %u starts of version %d (at most %d allowed): %s",
                                    o->job, o->instance, o->failures, target, s->maxFailures,
                                    o->cause ? o->cause : "no cause given");
          g_array_set_size (d->ask, 0);
          return;
        }
      if (o->want == target)
        continue; /* on its way */
      if (o->phase == STG_TASK_RUNNING && unavailable >= (guint) MAX (s->maxUnavailable, 1))
        continue;
      unavailable += o->phase == STG_TASK_RUNNING;
      g_array_append_val (d->ask, i);
    }
  if (pending == 0 && row->status != API_JOB_UPDATE_STATUS_ROLLED_FORWARD)
    {
      d->to = back ? API_JOB_UPDATE_STATUS_ROLLED_BACK : API_JOB_UPDATE_STATUS_ROLLED_FORWARD;
      d->why = held > 0 ? g_strdup_printf ("%u of %u instances held back by the partition", held, n)
               : n == 0 ? g_strdup ("no instance carries it yet: pods made from now on get it")
                        : g_strdup_printf ("%u instances on version %d", n, target);
    }
  else if (pending > 0 && row->status == API_JOB_UPDATE_STATUS_ROLLED_FORWARD)
    {
      d->to = API_JOB_UPDATE_STATUS_ROLLING_FORWARD;
      d->why = g_strdup_printf ("%u instances to move to version %d", pending, target);
    }
}

/* Records @d for @row in one transaction; FALSE when it was not stored
 * (nothing is asked then). */
static gboolean
record (StgEngine *e, StgSidecarSetRow *row, GArray *obs, const Decision *d, GError **error)
{
  gint64 now = stg_clock_now_ms (e->clock);
  gint target = row->status == API_JOB_UPDATE_STATUS_ROLLING_BACK ? row->from_version
                                                                  : row->to_version;

  if (!stg_store_begin (e->store, error))
    return FALSE;
  gboolean ok = d->to < 0 || stg_sidecar_transition (e, row, d->to, NULL, d->why, error);
  for (guint k = 0; ok && k < d->ask->len; k++)
    {
      const StgSidecarObservation *o = &g_array_index (obs, StgSidecarObservation,
                                                       g_array_index (d->ask, guint, k));
      g_autofree gchar *m = g_strdup_printf ("asked to run version %d (serving version %d)", target,
                                             o->version);
      ok = stg_store_add_sidecar_event (e->store, row->id, now, row->status, o->job, o->instance, m,
                                        NULL, error);
    }
  if (ok && stg_store_commit (e->store, error))
    return TRUE;
  stg_store_rollback (e->store);
  return FALSE;
}

/* One look at set @row's update; TRUE when it still moves. */
static gboolean
look_at_set (StgEngine *e, StgSidecarSetRow *row)
{
  g_autoptr (GError) error = NULL;
  g_auto (Decision) d = { 0 };

  if (row->status != API_JOB_UPDATE_STATUS_ROLLING_FORWARD &&
      row->status != API_JOB_UPDATE_STATUS_ROLLING_BACK &&
      row->status != API_JOB_UPDATE_STATUS_ROLLED_FORWARD)
    return FALSE;
  g_autoptr (GArray) obs = stg_runtime_sidecars (e->runtime, row->name, &error);
  if (obs == NULL)
    {
      g_warning ("engine: sidecar set %s: %s", row->name, error->message);
      return FALSE;
    }
  decide (row, obs, &d);
  if ((d.to >= 0 || d.ask->len > 0) && !record (e, row, obs, &d, &error))
    {
      g_warning ("engine: sidecar set %s: %s (tried again)", row->name, error->message);
      return TRUE;
    }
  if (d.to >= 0)
    g_message ("engine: sidecar set %s: %s (%s)", row->name, stg_update_status_name (row->status),
               d.why);
  gint target = row->status == API_JOB_UPDATE_STATUS_ROLLING_BACK ? row->from_version
                                                                  : row->to_version;
  for (guint k = 0; k < d.ask->len; k++)
    {
      const StgSidecarObservation *o = &g_array_index (obs, StgSidecarObservation,
                                                       g_array_index (d.ask, guint, k));
      g_autoptr (GError) refused = NULL;
      if (!stg_runtime_sidecar_apply (e->runtime, o->job_id, o->instance, row->name, target,
                                      &refused))
        g_message ("engine: sidecar set %s, %s/%d: %s", row->name, o->job, o->instance,
                   refused->message);
    }
  return row->status == API_JOB_UPDATE_STATUS_ROLLING_BACK ||
         row->status == API_JOB_UPDATE_STATUS_ROLLING_FORWARD;
}

static void
on_look (gpointer data)
{
  StgEngine *e = data;
  g_autoptr (GError) error = NULL;
  gboolean moving = FALSE;

  e->sidecar_timer = 0;
  if (e->runtime == NULL)
    return;
  g_autoptr (GPtrArray) rows = stg_store_list_sidecar_sets (e->store, &error);
  if (rows == NULL)
    {
      g_warning ("engine: cannot read the sidecar sets: %s", error->message);
      moving = TRUE;
    }
  for (guint i = 0; rows != NULL && i < rows->len; i++)
    moving |= look_at_set (e, rows->pdata[i]);
  if (moving)
    e->sidecar_timer = stg_clock_add_timer (e->clock, LOOK_AGAIN_MS, on_look, e);
}

void
stg_sidecars_news (StgEngine *e)
{
  stg_clock_cancel_timer (e->clock, e->sidecar_timer);
  e->sidecar_timer = stg_clock_add_timer (e->clock, 0, on_look, e);
}

void
stg_sidecars_free (StgEngine *e)
{
  stg_clock_cancel_timer (e->clock, e->sidecar_timer);
  e->sidecar_timer = 0;
}

/* ---- what the calls share ------------------------------------------------------ */

gboolean
stg_sidecar_begin (StgEngine *e, StgSidecarSetRow *row, gint version, const gchar *user,
                   const gchar *message, GError **error)
{
  gboolean paused = row->settings->paused;
  g_autofree gchar *m = g_strdup_printf ("version %d, from version %d%s%s%s", version,
                                         row->inject_version, paused ? " (paused)" : "",
                                         message && *message ? ": " : "", message ? message : "");

  row->from_version = row->inject_version;
  row->to_version = version;
  row->inject_version = version;
  row->version = MAX (row->version, version);
  row->status = paused ? API_JOB_UPDATE_STATUS_ROLL_FORWARD_PAUSED
                       : API_JOB_UPDATE_STATUS_ROLLING_FORWARD;
  row->status_ms = stg_clock_now_ms (e->clock);
  g_free (row->reason);
  row->reason = g_strdup (m);
#ifdef STG_CHECK_INVARIANTS
  check_row (row);
#endif
  return stg_store_set_sidecar_set (e->store, row, error) &&
         stg_store_add_sidecar_event (e->store, row->id, row->status_ms, row->status, NULL, 0, m,
                                      user, error);
}

GArray *
stg_sidecar_observe (StgEngine *e, const gchar *name)
{
  GArray *obs = e->runtime != NULL ? stg_runtime_sidecars (e->runtime, name, NULL) : NULL;

  if (obs == NULL)
    {
      obs = g_array_new (FALSE, TRUE, sizeof (StgSidecarObservation));
      g_array_set_clear_func (obs, stg_sidecar_observation_clear);
    }
  return obs;
}

guint
stg_sidecar_events_shown (void)
{
  return EVENTS_SHOWN;
}
