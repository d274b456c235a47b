/* sidecar_calls.c: the calls on sidecar sets: apply (a new set, or its
 * sidecar's new version rolled to the pods that carry it; revise, the web
 * page's apply, is one with a new image or executor data), pause, resume,
 * abort, rollback, the partition and delete, each checked and written in
 * one transaction before the runtime hears of it; and the sets as the API
 * shows them (summaries and details: the store's rows with what the
 * runtime sees of each instance now), and the role a change of a set
 * needs (one rule for the API and the web UI). The updates themselves move in
 * sidecar.c. Calls sidecar.c and errors.c. Main-loop thread only.
 */
#include "config.h"

#include <string.h>

#include "common/enums.h"
#include "engine/engine_private.h"
#include "engine/sidecar_private.h"

#define NAME_MAX_LEN 40
#define PATTERN_MAX_LEN 200
#define PORTS_MAX 16

/* ---- checks ---------------------------------------------------------------------- */

/* A name is lower-case words joined by "-", each starting with a letter
 * (so no name is another's NAME-1 or NAME-2 slot). */
static gboolean
check_name (const gchar *name, GError **error)
{
  gboolean ok = name != NULL && name[0] != '\0' && strlen (name) <= NAME_MAX_LEN;

  for (const gchar *p = name; ok && *p != '\0'; p++)
    ok = g_ascii_islower (*p) || (g_ascii_isdigit (*p) && p != name && p[-1] != '-') ||
         (*p == '-' && p != name && p[1] != '\0' && g_ascii_islower (p[1]));
  if (!ok)
    g_set_error (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID,
                 "sidecar set name \"%s\": lower-case words joined by \"-\", each starting with "
                 "a letter, at most %d characters (e.g. \"envoy-proxy\")",
                 name ? name : "", NAME_MAX_LEN);
  return ok;
}

static gboolean
check_pattern (const gchar *pattern, const gchar *what, GError **error)
{
  gboolean ok = pattern != NULL && pattern[0] != '\0' && strlen (pattern) <= PATTERN_MAX_LEN;

  for (const gchar *p = pattern; ok && *p != '\0'; p++)
    ok = g_ascii_isalnum (*p) || strchr ("_.-*?", *p) != NULL;
  if (!ok)
    g_set_error (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID,
                 "selector.%s \"%s\": a job key part, with * and ? as wildcards", what,
                 pattern ? pattern : "");
  return ok;
}

static gboolean
check_ports (GPtrArray *ports, GError **error)
{
  for (guint i = 0; ports != NULL && i < ports->len; i++)
    {
      const gchar *port = ports->pdata[i];
      gboolean ok = port != NULL && port[0] != '\0' && strlen (port) <= NAME_MAX_LEN &&
                    i < PORTS_MAX && g_strcmp0 (port, "probe") != 0;
      for (const gchar *p = port; ok && *p != '\0'; p++)
        ok = g_ascii_isalnum (*p) || *p == '_' || *p == '-';
      for (guint j = 0; ok && j < i; j++)
        ok = g_strcmp0 (ports->pdata[j], port) != 0;
      if (!ok)
        {
          g_set_error (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID,
                       "sidecar.ports: \"%s\": at most %d distinct names of letters, digits, _ "
                       "and -, none of them \"probe\"",
                       port ? port : "", PORTS_MAX);
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
check_settings (const ApiSidecarUpdateSettings *s, GError **error)
{
  const gchar *bad = s == NULL               ? "settings: give them"
                     : s->maxUnavailable < 1 ? "settings.maxUnavailable must be 1 or more"
                     : s->partition < 0      ? "settings.partition must be 0 or more"
                     : s->maxFailures < 0    ? "settings.maxFailures must be 0 or more"
                                             : NULL;
  if (bad != NULL)
    g_set_error (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID, "%s", bad);
  return bad == NULL;
}

static gboolean
check_set (StgEngine *e, const ApiSidecarSet *set, const ApiSidecar *previous, GError **error)
{
  const ApiSidecarSelector *sel = set->selector;
  const ApiSidecar *sc = set->sidecar;

  if (!check_name (set->name, error))
    return FALSE;
  if (sel == NULL || !check_pattern (sel->role, "role", error) ||
      !check_pattern (sel->environment, "environment", error) ||
      !check_pattern (sel->name, "name", error))
    {
      if (sel == NULL)
        g_set_error (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID,
                     "selector: give the patterns of the job keys it selects");
      return FALSE;
    }
  if (sc == NULL || sc->image == NULL || sc->image[0] == '\0')
    {
      g_set_error (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID,
                   "sidecar.image: give the image the sidecar runs");
      return FALSE;
    }
  if (!check_ports (sc->ports, error) || !check_settings (set->settings, error))
    return FALSE;
  if (e->runtime != NULL &&
      !stg_runtime_sidecar_validate (e->runtime, set->name, sc, previous, error))
    {
      stg_engine_wrap_error (error);
      return FALSE;
    }
  return TRUE;
}

/* The set named @name, or NULL: with @error set unless there is none and
 * @missing_ok. */
static StgSidecarSetRow *
find_set (StgEngine *e, const gchar *name, gboolean missing_ok, GError **error)
{
  g_autoptr (GError) local = NULL;
  StgSidecarSetRow *row = stg_store_get_sidecar_set (e->store, name ? name : "", &local);

  if (row == NULL &&
      !(missing_ok && g_error_matches (local, STG_STORE_ERROR, STG_STORE_ERROR_NOT_FOUND)))
    {
      g_propagate_error (error, g_steal_pointer (&local));
      stg_engine_wrap_error (error);
    }
  return row;
}

static gboolean
active (gint status)
{
  return status == API_JOB_UPDATE_STATUS_ROLLING_FORWARD ||
         status == API_JOB_UPDATE_STATUS_ROLLING_BACK ||
         status == API_JOB_UPDATE_STATUS_ROLL_FORWARD_PAUSED ||
         status == API_JOB_UPDATE_STATUS_ROLL_BACK_PAUSED;
}

/* Ends a transaction begun by a call: committed when @ok, else rolled
 * back (and @error wrapped); the sets are looked at again either way. */
static gboolean
finish (StgEngine *e, gboolean ok, GError **error)
{
  if (ok && stg_store_commit (e->store, error))
    {
      stg_sidecars_news (e);
      return TRUE;
    }
  stg_store_rollback (e->store);
  stg_engine_wrap_error (error);
  return FALSE;
}

/* ---- apply ----------------------------------------------------------------------- */

static void
take_selector_settings (StgSidecarSetRow *row, const ApiSidecarSet *set)
{
  g_free (row->role), row->role = g_strdup (set->selector->role);
  g_free (row->environment), row->environment = g_strdup (set->selector->environment);
  g_free (row->job), row->job = g_strdup (set->selector->name);
  g_clear_object (&row->settings);
  row->settings = g_object_ref (set->settings);
}

static gboolean
create_set (StgEngine *e, const ApiSidecarSet *set, const gchar *user, const gchar *message,
            GError **error)
{
  g_autoptr (StgSidecarSetRow) row = g_new0 (StgSidecarSetRow, 1);
  gint64 now = stg_clock_now_ms (e->clock);
  g_autofree gchar *m = g_strdup_printf ("version 1: pods made from now on carry it%s%s",
                                         message && *message ? ": " : "", message ? message : "");

  row->name = g_strdup (set->name);
  take_selector_settings (row, set);
  row->version = row->to_version = row->inject_version = 1;
  row->status = API_JOB_UPDATE_STATUS_ROLLED_FORWARD;
  row->status_ms = row->created_ms = now;
  row->reason = g_strdup (m);
  row->user = g_strdup (user ? user : "");
  return stg_store_insert_sidecar_set (e->store, row, error) &&
         stg_store_put_sidecar_version (e->store, row->id, 1, set->sidecar, user, now, error) &&
         stg_store_add_sidecar_event (e->store, row->id, now, row->status, NULL, 0, m, user, error);
}

/* A set that exists: its selector and settings taken, and its sidecar a
 * new version unless it is the one new pods get now. */
static gboolean
change_set (StgEngine *e, StgSidecarSetRow *row, const ApiSidecarSet *set, const gchar *user,
            const gchar *message, GError **error)
{
  g_autofree gchar *hash = stg_thrift_hash (THRIFT_STRUCT (set->sidecar), error);
  gint same = hash ? stg_store_find_sidecar_version (e->store, row->id, hash, error) : 0;

  if (hash == NULL || (error != NULL && *error != NULL))
    return FALSE;
  take_selector_settings (row, set);
  if (same != 0 && same == row->inject_version)
    {
      g_autofree gchar *m = g_strdup_printf ("selector and settings set, version %d kept%s%s", same,
                                             message && *message ? ": " : "",
                                             message ? message : "");
      return stg_store_set_sidecar_set (e->store, row, error) &&
             stg_store_add_sidecar_event (e->store, row->id, stg_clock_now_ms (e->clock),
                                          row->status, NULL, 0, m, user, error);
    }
  if (active (row->status))
    {
      g_set_error (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_ACTIVE_UPDATE,
                   "sidecar set %s has an update that is %s (version %d to %d): wait for it, or "
                   "abort it, before applying a new version",
                   row->name, stg_update_status_name (row->status), row->from_version,
                   row->to_version);
      return FALSE;
    }
  if (same != 0)
    return stg_sidecar_begin (e, row, same, user, message, error); /* an earlier version again */
  gint version = row->version + 1;
  return stg_store_put_sidecar_version (e->store, row->id, version, set->sidecar, user,
                                        stg_clock_now_ms (e->clock), error) &&
         stg_sidecar_begin (e, row, version, user, message, error);
}

gboolean
stg_engine_apply_sidecar_set (StgEngine *e, const ApiSidecarSet *set, const gchar *user,
                              const gchar *message, GError **error)
{
  g_autoptr (StgSidecarSetRow) row = find_set (e, set->name, TRUE, error);
  g_autoptr (ApiSidecar) previous = NULL;

  if (row == NULL && error != NULL && *error != NULL)
    return FALSE;
  if (row != NULL &&
      (previous = stg_store_get_sidecar_version (e->store, row->name, row->inject_version,
                                                 error)) == NULL)
    {
      stg_engine_wrap_error (error);
      return FALSE;
    }
  if (!check_set (e, set, previous, error))
    return FALSE;
  if (!stg_store_begin (e->store, error))
    return finish (e, FALSE, error);
  gboolean ok = row == NULL ? create_set (e, set, user, message, error)
                            : change_set (e, row, set, user, message, error);
  return finish (e, ok, error);
}

gboolean
stg_engine_sidecar_revise (StgEngine *e, const gchar *name, const gchar *image,
                           const gchar *executor_data, const gchar *user, const gchar *message,
                           GError **error)
{
  g_autoptr (StgSidecarSetRow) row = find_set (e, name, FALSE, error);
  g_autoptr (ApiSidecar) sidecar = row != NULL
                                       ? stg_store_get_sidecar_version (e->store, row->name,
                                                                        row->inject_version, error)
                                       : NULL;

  if (sidecar == NULL)
    {
      if (row != NULL)
        stg_engine_wrap_error (error);
      return FALSE;
    }
  if (image != NULL)
    g_object_set (sidecar, "image", image, NULL);
  if (executor_data != NULL)
    g_object_set (sidecar, "executorData", executor_data, NULL);
  g_autoptr (ApiSidecarSelector) selector = g_object_new (API_TYPE_SIDECAR_SELECTOR, "role",
                                                          row->role, "environment",
                                                          row->environment, "name", row->job, NULL);
  g_autoptr (ApiSidecarSet) set = g_object_new (API_TYPE_SIDECAR_SET, "name", row->name, "selector",
                                                selector, "sidecar", sidecar, "settings",
                                                row->settings, NULL);
  return stg_engine_apply_sidecar_set (e, set, user, message, error);
}

/* ---- controls -------------------------------------------------------------------- */

/* The status @what moves an update in @status to, or -1 with @error. */
static gint
control_target (const StgSidecarSetRow *row, StgSidecarControl what, GError **error)
{
  gint s = row->status;
  gint to = -1;

  switch (what)
    {
    case STG_SIDECAR_PAUSE:
      to = s == API_JOB_UPDATE_STATUS_ROLLING_FORWARD ? API_JOB_UPDATE_STATUS_ROLL_FORWARD_PAUSED
           : s == API_JOB_UPDATE_STATUS_ROLLING_BACK  ? API_JOB_UPDATE_STATUS_ROLL_BACK_PAUSED
                                                      : -1;
      break;
    case STG_SIDECAR_RESUME:
      to = s == API_JOB_UPDATE_STATUS_ROLL_FORWARD_PAUSED ? API_JOB_UPDATE_STATUS_ROLLING_FORWARD
           : s == API_JOB_UPDATE_STATUS_ROLL_BACK_PAUSED  ? API_JOB_UPDATE_STATUS_ROLLING_BACK
                                                          : -1;
      break;
    case STG_SIDECAR_ABORT:
      to = active (s) ? API_JOB_UPDATE_STATUS_ABORTED : -1;
      break;
    case STG_SIDECAR_ROLLBACK:
      to = stg_sidecar_transition_allowed (s, API_JOB_UPDATE_STATUS_ROLLING_BACK)
               ? API_JOB_UPDATE_STATUS_ROLLING_BACK
               : -1;
      if (to >= 0 && row->from_version == 0)
        {
          g_set_error (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_STATE,
                       "sidecar set %s is on its first version: there is none to roll back to "
                       "(delete the set to take the sidecar out of the pods)",
                       row->name);
          return -1;
        }
      break;
    }
  if (to < 0)
    g_set_error (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_STATE,
                 "the update of sidecar set %s is %s: there is nothing to %s", row->name,
                 stg_update_status_name (s),
                 what == STG_SIDECAR_PAUSE    ? "pause"
                 : what == STG_SIDECAR_RESUME ? "resume"
                 : what == STG_SIDECAR_ABORT  ? "abort"
                                              : "roll back");
  return to;
}

gboolean
stg_engine_sidecar_control (StgEngine *e, const gchar *name, StgSidecarControl what,
                            const gchar *user, const gchar *message, GError **error)
{
  g_autoptr (StgSidecarSetRow) row = find_set (e, name, FALSE, error);
  gint to = row != NULL ? control_target (row, what, error) : -1;

  if (to < 0)
    return FALSE;
  if (!stg_store_begin (e->store, error))
    return finish (e, FALSE, error);
  g_autofree gchar *m = g_strdup_printf ("%s by %s%s%s", stg_update_status_name (to),
                                         user ? user : "(anonymous)",
                                         message && *message ? ": " : "", message ? message : "");
  return finish (e, stg_sidecar_transition (e, row, to, user, m, error), error);
}

gboolean
stg_engine_sidecar_partition (StgEngine *e, const gchar *name, gint32 partition, const gchar *user,
                              const gchar *message, GError **error)
{
  g_autoptr (StgSidecarSetRow) row = find_set (e, name, FALSE, error);

  if (row == NULL)
    return FALSE;
  if (partition < 0)
    {
      g_set_error (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID,
                   "partition must be 0 or more");
      return FALSE;
    }
  if (!stg_store_begin (e->store, error))
    return finish (e, FALSE, error);
  g_autofree gchar *m = g_strdup_printf ("partition %d (was %d)%s%s", partition,
                                         row->settings->partition, message && *message ? ": " : "",
                                         message ? message : "");
  g_object_set (row->settings, "partition", partition, NULL);
  gboolean ok = stg_store_set_sidecar_set (e->store, row, error) &&
                stg_store_add_sidecar_event (e->store, row->id, stg_clock_now_ms (e->clock),
                                             row->status, NULL, 0, m, user, error);
  return finish (e, ok, error);
}

gboolean
stg_engine_delete_sidecar_set (StgEngine *e, const gchar *name, const gchar *user,
                               const gchar *message, GError **error)
{
  g_autoptr (StgSidecarSetRow) row = find_set (e, name, FALSE, error);

  if (row == NULL)
    return FALSE;
  g_autoptr (GArray) obs = stg_sidecar_observe (e, row->name);
  if (!stg_store_begin (e->store, error))
    return finish (e, FALSE, error);
  if (!finish (e, stg_store_delete_sidecar_set (e->store, row->id, error), error))
    return FALSE;
  g_message ("engine: sidecar set %s deleted by %s%s%s; it leaves %u pods", row->name,
             user ? user : "(anonymous)", message && *message ? ": " : "", message ? message : "",
             obs->len);
  for (guint i = 0; i < obs->len; i++)
    {
      const StgSidecarObservation *o = &g_array_index (obs, StgSidecarObservation, i);
      g_autoptr (GError) refused = NULL;
      if (!stg_runtime_sidecar_apply (e->runtime, o->job_id, o->instance, row->name, 0, &refused))
        g_message ("engine: sidecar set %s, %s/%d: %s", row->name, o->job, o->instance,
                   refused->message);
    }
  return TRUE;
}

/* ---- what the sets look like ------------------------------------------------------- */

static gint
target_of (const StgSidecarSetRow *row)
{
  return stg_sidecar_status_goes_back (row->status) ? row->from_version : row->to_version;
}

static ApiSidecarSetSummary *
summary_of (const StgSidecarSetRow *row, GArray *obs)
{
  g_autoptr (ApiSidecarSelector) sel = g_object_new (API_TYPE_SIDECAR_SELECTOR, "role", row->role,
                                                     "environment", row->environment, "name",
                                                     row->job, NULL);
  gint updated = 0;

  for (guint i = 0; i < obs->len; i++)
    {
      const StgSidecarObservation *o = &g_array_index (obs, StgSidecarObservation, i);
      updated += o->version == target_of (row) && o->phase == STG_TASK_RUNNING;
    }
  return g_object_new (API_TYPE_SIDECAR_SET_SUMMARY, "name", row->name, "selector", sel, "version",
                       row->version, "fromVersion", row->from_version, "toVersion", row->to_version,
                       "status", row->status, "sinceMs", row->status_ms, "reason", row->reason,
                       "settings", row->settings, "instances", (gint) obs->len, "updated", updated,
                       "user", row->user, "createdTimestampMs", row->created_ms, "injectVersion",
                       row->inject_version, NULL);
}

GPtrArray *
stg_engine_sidecar_sets (StgEngine *e, GError **error)
{
  g_autoptr (GPtrArray) rows = stg_store_list_sidecar_sets (e->store, error);
  GPtrArray *out = g_ptr_array_new_with_free_func (g_object_unref);

  if (rows == NULL)
    {
      stg_engine_wrap_error (error);
      g_ptr_array_unref (out);
      return NULL;
    }
  for (guint i = 0; i < rows->len; i++)
    {
      StgSidecarSetRow *row = rows->pdata[i];
      g_autoptr (GArray) obs = stg_sidecar_observe (e, row->name);
      g_ptr_array_add (out, summary_of (row, obs));
    }
  return out;
}

static gint
schedule_status (StgTaskPhase phase)
{
  switch (phase)
    {
    case STG_TASK_RUNNING:
      return API_SCHEDULE_STATUS_RUNNING;
    case STG_TASK_STARTING:
      return API_SCHEDULE_STATUS_STARTING;
    case STG_TASK_KILLING:
      return API_SCHEDULE_STATUS_KILLING;
    case STG_TASK_FAILED:
      return API_SCHEDULE_STATUS_FAILED;
    case STG_TASK_FINISHED:
      return API_SCHEDULE_STATUS_FINISHED;
    case STG_TASK_ABSENT:
    case STG_TASK_PENDING:
    default:
      return API_SCHEDULE_STATUS_PENDING;
    }
}

static ApiSidecarInstance *
instance_of (const StgSidecarObservation *o, gboolean held)
{
  g_auto (GStrv) parts = g_strsplit (o->job, "/", 3);
  g_autoptr (ApiJobKey) job = g_object_new (API_TYPE_JOB_KEY, "role", parts[0], "environment",
                                            parts[0] && parts[1] ? parts[1] : "", "name",
                                            parts[0] && parts[1] && parts[2] ? parts[2] : "", NULL);
  g_autoptr (ApiInstanceKey) key = g_object_new (API_TYPE_INSTANCE_KEY, "jobKey", job, "instanceId",
                                                 o->instance, NULL);
  ApiSidecarInstance *si = g_object_new (API_TYPE_SIDECAR_INSTANCE, "instance", key, "host",
                                         o->host ? o->host : "", "version", o->version,
                                         "wantVersion", o->want, "status",
                                         schedule_status (o->phase), "failures", (gint) o->failures,
                                         "reason", o->cause ? o->cause : "", "heldBack", held,
                                         NULL);
  for (guint i = 0; i < o->n_slots; i++)
    g_ptr_array_add (si->slots,
                     g_object_new (API_TYPE_SIDECAR_SLOT, "name", o->slots[i].name, "version",
                                   o->slots[i].version, "containerId",
                                   o->slots[i].container_id ? o->slots[i].container_id : "",
                                   "serving", o->slots[i].serving, NULL));
  return si;
}

const gchar *
stg_sidecar_role_needed (const gchar *role)
{
  return role != NULL && strpbrk (role, "*?") == NULL ? role : NULL;
}

gboolean
stg_engine_sidecar_role (StgEngine *e, const gchar *name, gchar **role, GError **error)
{
  g_autoptr (StgSidecarSetRow) row = find_set (e, name, FALSE, error);

  *role = row != NULL ? g_strdup (stg_sidecar_role_needed (row->role)) : NULL;
  return row != NULL;
}

ApiSidecarSetDetails *
stg_engine_sidecar_set_details (StgEngine *e, const gchar *name, GError **error)
{
  g_autoptr (StgSidecarSetRow) row = find_set (e, name, FALSE, error);
  g_autoptr (GPtrArray) versions = NULL, events = NULL;

  if (row == NULL)
    return NULL;
  if ((versions = stg_store_list_sidecar_versions (e->store, row->id, error)) == NULL ||
      (events = stg_store_list_sidecar_events (e->store, row->id, stg_sidecar_events_shown (),
                                               error)) == NULL)
    {
      stg_engine_wrap_error (error);
      return NULL;
    }
  g_autoptr (GArray) obs = stg_sidecar_observe (e, row->name);
  g_autoptr (ApiSidecarSetSummary) summary = summary_of (row, obs);
  ApiSidecarSetDetails *d = g_object_new (API_TYPE_SIDECAR_SET_DETAILS, "summary", summary, NULL);
  guint held = stg_sidecar_status_goes_back (row->status)
                   ? 0
                   : MIN ((guint) MAX (row->settings->partition, 0), obs->len);
  for (guint i = 0; i < versions->len; i++)
    g_ptr_array_add (d->versions, g_object_ref (versions->pdata[i]));
  for (guint i = 0; i < obs->len; i++)
    g_ptr_array_add (d->instances, instance_of (&g_array_index (obs, StgSidecarObservation, i),
                                                i >= obs->len - held));
  for (guint i = 0; i < events->len; i++)
    g_ptr_array_add (d->events, g_object_ref (events->pdata[i]));
  return d;
}
