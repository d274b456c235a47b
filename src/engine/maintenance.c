/* maintenance.c: host maintenance as Aurora's MaintenanceController does
 * it, over the hosts Stagger knows: the fleet runtime's, or this machine
 * by its name for the local runtime.
 *
 * A host's mode, kept in the store (store/maintenance.c) with the drain
 * asked of it, moves so, each arrow naming the function that takes it:
 *
 *   NONE --[stg_engine_start_maintenance]--> SCHEDULED
 *   any --[stg_engine_drain_hosts: drainHosts, slaDrainHosts;
 *          stg_engine_drain_host: drainHost]--> DRAINING
 *   DRAINING --[pass: nothing of the host runs]--> DRAINED
 *   any --[stg_engine_end_maintenance; stg_engine_drain_host (!drain)]--> NONE
 *
 * DRAINING and DRAINED close the host in the runtime (drain_host):
 * nothing new is placed there, and an instance that starts again starts
 * elsewhere (fleet) or waits for the host to open (local). A drain with a
 * request (drainHosts, slaDrainHosts) moves the host's instances off: a
 * pass, every maintenance_poll_ms and at once after a call, restarts each
 * instance of the host whose SLA lets it go (its task's policy, else the
 * request's default, else the preferred tier's: sla.c), and every one of
 * them once the request's timeout has passed (drainHosts: at once).
 * drainHost's DRAINING has no request: `stagger host drain` moves the
 * instances itself. A job with an update under way keeps its instances
 * until the update ends. Why an instance still waits for its SLA is kept
 * in memory with the drain (Drain.waits) and read back as the host's
 * slaWait by maintenanceStatus and getHosts. Calls the store, the
 * runtime, the clock and sla.c. Main-loop thread only.
 */
#include "config.h"

#include "common/error.h"
#include "common/jobkey.h"
#include "common/strings.h"
#include "engine/engine_private.h"
#include "engine/sla_private.h"
#include "engine/task_private.h"
#include "engine/update_private.h"

#define M(x) API_MAINTENANCE_MODE_##x

/* What the engine keeps of a DRAINING host's drain, in memory. */
typedef struct
{
  GHashTable *moving;  /* StgSlotKey*: restarted to move off, still on the host */
  GHashTable *allowed; /* StgSlotKey*: a coordinator said it may go */
  GHashTable *noted;   /* StgSlotKey*: its wait is logged */
  GHashTable *waits;   /* StgSlotKey* -> gchar*: why it waits for its SLA now */
  StgSlaAsk *ask;      /* (nullable) the question to a coordinator under way */
  StgSlotKey asked;    /* whom it is about */
  gchar *asked_url;    /* (nullable) the coordinator asked */
  gchar *host;         /* the host drained */
  StgEngine *engine;
} Drain;

/* Host maintenance's memory (engine->maintenance). */
struct _StgMaintenance
{
  GHashTable *drains; /* host -> its DRAINING drain's memory (Drain*) */
  guint timer;        /* the next pass over DRAINING hosts */
};

static void
drain_free (gpointer data)
{
  Drain *d = data;

  stg_sla_ask_free (d->ask);
  g_hash_table_unref (d->moving);
  g_hash_table_unref (d->allowed);
  g_hash_table_unref (d->noted);
  g_hash_table_unref (d->waits);
  g_free (d->asked_url);
  g_free (d->host);
  g_free (d);
}

static GHashTable *
key_set (void)
{
  return g_hash_table_new_full (stg_slot_key_hash, stg_slot_key_equal, g_free, NULL);
}

static Drain *
drain_of (StgEngine *e, const gchar *host)
{
  Drain *d = g_hash_table_lookup (e->maintenance->drains, host);

  if (d == NULL)
    {
      d = g_new0 (Drain, 1);
      d->engine = e;
      d->host = g_strdup (host);
      d->moving = key_set ();
      d->allowed = key_set ();
      d->noted = key_set ();
      d->waits = g_hash_table_new_full (stg_slot_key_hash, stg_slot_key_equal, g_free, g_free);
      g_hash_table_insert (e->maintenance->drains, g_strdup (host), d);
    }
  return d;
}

/* ---- the hosts Stagger knows ---------------------------------------------------- */

/* The runtime's hosts (ApiFleetHostStatus*), or NULL: then this machine
 * is the one host, when the runtime can drain it. */
static GPtrArray *
fleet_hosts (StgEngine *e, GError **error)
{
  g_autoptr (GError) local = NULL;

  if (e->runtime == NULL)
    return stg_fail (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID,
                     "this staggerd has no runtime and no hosts"),
           NULL;
  GPtrArray *hosts = stg_runtime_hosts (e->runtime, &local);
  if (hosts == NULL && e->runtime->ops->drain_host == NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local));
      stg_engine_wrap_error (error);
    }
  return hosts;
}

/* The names of the hosts Stagger knows (a set of strings). */
static GHashTable *
known_hosts (StgEngine *e, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autoptr (GPtrArray) hosts = fleet_hosts (e, &local);
  GHashTable *names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  if (local != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local));
      g_hash_table_unref (names);
      return NULL;
    }
  if (hosts == NULL)
    g_hash_table_add (names, g_strdup (g_get_host_name ()));
  for (guint i = 0; hosts != NULL && i < hosts->len; i++)
    g_hash_table_add (names, g_strdup (((ApiFleetHostStatus *) hosts->pdata[i])->name));
  return names;
}

/* The instances on @host now (StgSlotKey): those the fleet placed there,
 * or on this machine those that run or stop. */
static GArray *
host_instances (StgEngine *e, const gchar *host, GError **error)
{
  g_autoptr (GArray) out = g_array_new (FALSE, FALSE, sizeof (StgSlotKey));
  g_autoptr (GError) local = NULL;
  g_autoptr (GPtrArray) hosts = fleet_hosts (e, &local);
  g_autoptr (GPtrArray) jobs = stg_store_list_jobs (e->store, NULL, error);

  if (local != NULL || jobs == NULL)
    {
      if (local != NULL)
        g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  for (guint i = 0; hosts != NULL && i < hosts->len; i++)
    {
      ApiFleetHostStatus *h = hosts->pdata[i];
      for (guint k = 0; g_str_equal (h->name, host) && k < h->instances->len; k++)
        {
          ApiInstanceKey *ik = h->instances->pdata[k];
          for (guint j = 0; j < jobs->len; j++)
            if (stg_job_key_equal (((StgJobRow *) jobs->pdata[j])->key, ik->jobKey))
              g_array_append_vals (out,
                                   &(StgSlotKey){ ((StgJobRow *) jobs->pdata[j])->id,
                                                  ik->instanceId },
                                   1);
        }
    }
  for (guint j = 0; hosts == NULL && j < jobs->len; j++)
    {
      gint64 job_id = ((StgJobRow *) jobs->pdata[j])->id;
      g_autoptr (GArray) rows = stg_store_list_instances (e->store, job_id, error);
      if (rows == NULL)
        return NULL;
      for (guint i = 0; i < rows->len; i++)
        {
          StgTaskObservation obs = { 0 };
          gint32 id = g_array_index (rows, StgInstanceRow, i).instance_id;
          stg_runtime_observe (e->runtime, job_id, id, &obs);
          if (obs.phase == STG_TASK_STARTING || obs.phase == STG_TASK_RUNNING ||
              obs.phase == STG_TASK_KILLING)
            g_array_append_vals (out, &(StgSlotKey){ job_id, id }, 1);
        }
    }
  return g_steal_pointer (&out);
}

/* ---- modes ------------------------------------------------------------------------ */

/* @host's row, or NULL (NONE). */
static StgMaintenanceRow *
row_of (GPtrArray *rows, const gchar *host)
{
  for (guint i = 0; rows != NULL && i < rows->len; i++)
    if (g_str_equal (((StgMaintenanceRow *) rows->pdata[i])->host, host))
      return rows->pdata[i];
  return NULL;
}

/* Why instances of @host's drain wait for their SLA, one line each
 * (NULL when none do). */
static gchar *
sla_waits (StgEngine *e, const gchar *host)
{
  Drain *d = g_hash_table_lookup (e->maintenance->drains, host);
  g_autoptr (GPtrArray) lines = g_ptr_array_new ();
  GHashTableIter it;
  gpointer why;

  if (d == NULL || g_hash_table_size (d->waits) == 0)
    return NULL;
  g_hash_table_iter_init (&it, d->waits);
  while (g_hash_table_iter_next (&it, NULL, &why))
    g_ptr_array_add (lines, why);
  g_ptr_array_sort (lines, stg_compare_string_ptrs);
  g_ptr_array_add (lines, NULL);
  return g_strjoinv ("\n", (gchar **) lines->pdata);
}

const gchar *
stg_engine_sla_wait (StgEngine *e, gint64 job_id, gint32 instance)
{
  StgSlotKey k = { .job_id = job_id, .instance = instance };
  GHashTableIter it;
  gpointer value;

  g_hash_table_iter_init (&it, e->maintenance->drains);
  while (g_hash_table_iter_next (&it, NULL, &value))
    {
      const gchar *why = g_hash_table_lookup (((Drain *) value)->waits, &k);
      if (why != NULL)
        return why;
    }
  return NULL;
}

static ApiHostStatus *
status_new (const gchar *host, gint mode)
{
  return g_object_new (API_TYPE_HOST_STATUS, "host", host, "mode", mode, NULL);
}

/* Sets @host's mode (NONE: no row), and opens or closes it in the runtime
 * to match. */
static gboolean
set_mode (StgEngine *e, const gchar *host, gint mode, ApiHostMaintenanceRequest *request,
          GError **error)
{
  gint64 now = stg_clock_now_ms (e->clock);
  gboolean closed = mode == M (DRAINING) || mode == M (DRAINED);

  if (!(mode == M (NONE) ? stg_store_end_maintenance (e->store, host, error)
                         : stg_store_set_maintenance (e->store, host, mode, request, now, error)) ||
      !stg_runtime_drain_host (e->runtime, host, closed, error))
    {
      stg_engine_wrap_error (error);
      return FALSE;
    }
  if (mode != M (DRAINING))
    g_hash_table_remove (e->maintenance->drains, host);
  return TRUE;
}

static void arm (StgEngine *e, gint64 delay_ms);

/* Puts each host of @hosts that Stagger knows in @mode with @request
 * (nullable); the statuses after (ApiHostStatus*). */
static GPtrArray *
set_modes (StgEngine *e, GHashTable *hosts, gint mode, ApiHostMaintenanceRequest *request,
           const gchar *user, GError **error)
{
  g_autoptr (GHashTable) known = known_hosts (e, error);
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func (g_object_unref);
  GHashTableIter it;
  gpointer name;

  if (known == NULL)
    return NULL;
  g_hash_table_iter_init (&it, hosts);
  while (g_hash_table_iter_next (&it, &name, NULL))
    {
      if (!g_hash_table_contains (known, name))
        continue; /* as Aurora: unknown hosts are left out */
      if (request != NULL)
        g_object_set (request, "host", name, NULL);
      if (!set_mode (e, name, mode, request, error))
        return NULL;
      g_message ("engine: host %s in maintenance mode %s, by %s", (const gchar *) name,
                 mode == M (NONE)        ? "NONE"
                 : mode == M (SCHEDULED) ? "SCHEDULED"
                                         : "DRAINING",
                 user ? user : "(anonymous)");
      g_ptr_array_add (out, status_new (name, mode));
    }
  if (mode == M (DRAINING))
    arm (e, 0); /* a first pass now: an empty host is DRAINED at once */
  return g_steal_pointer (&out);
}

GPtrArray *
stg_engine_start_maintenance (StgEngine *e, GHashTable *hosts, const gchar *user, GError **error)
{
  return set_modes (e, hosts, M (SCHEDULED), NULL, user, error);
}

GPtrArray *
stg_engine_end_maintenance (StgEngine *e, GHashTable *hosts, const gchar *user, GError **error)
{
  return set_modes (e, hosts, M (NONE), NULL, user, error);
}

GPtrArray *
stg_engine_drain_hosts (StgEngine *e, GHashTable *hosts, const ApiSlaPolicy *policy,
                        gint64 timeout_secs, const gchar *user, GError **error)
{
  if (timeout_secs < 0)
    return stg_fail (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID,
                     "timeoutSecs must not be negative, not %" G_GINT64_FORMAT, timeout_secs),
           NULL;
  /* drainHosts: no SLA, no wait (Aurora's zero-percent policy and no
   * timeout). An empty policy leaves each task's own, or its tier's. */
  g_autoptr (ApiSlaPolicy) none = g_object_new (API_TYPE_SLA_POLICY, NULL);
  g_autoptr (ApiHostMaintenanceRequest) request =
      g_object_new (API_TYPE_HOST_MAINTENANCE_REQUEST, "host", "", "defaultSlaPolicy",
                    policy ? policy : none, "timeoutSecs", policy ? timeout_secs : (gint64) 0,
                    "createdTimestampMs", stg_clock_now_ms (e->clock), NULL);
  if (policy != NULL && (policy->__isset_countSlaPolicy + policy->__isset_percentageSlaPolicy +
                         policy->__isset_coordinatorSlaPolicy) > 1)
    return stg_fail (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID,
                     "defaultSlaPolicy: give at most one of percentageSlaPolicy, countSlaPolicy "
                     "and coordinatorSlaPolicy"),
           NULL;
  return set_modes (e, hosts, M (DRAINING), request, user, error);
}

GPtrArray *
stg_engine_maintenance_status (StgEngine *e, GHashTable *hosts, GError **error)
{
  g_autoptr (GHashTable) known = known_hosts (e, error);
  g_autoptr (GPtrArray) rows = known ? stg_store_list_maintenance (e->store, error) : NULL;
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func (g_object_unref);
  GHashTableIter it;
  gpointer name;

  if (rows == NULL)
    {
      stg_engine_wrap_error (error);
      return NULL;
    }
  g_hash_table_iter_init (&it, hosts);
  while (g_hash_table_iter_next (&it, &name, NULL))
    if (g_hash_table_contains (known, name))
      {
        StgMaintenanceRow *row = row_of (rows, name);
        ApiHostStatus *status = status_new (name, row ? row->mode : M (NONE));
        g_autofree gchar *wait = sla_waits (e, name);
        if (wait != NULL)
          g_object_set (status, "slaWait", wait, NULL);
        g_ptr_array_add (out, status);
      }
  return g_steal_pointer (&out);
}

gboolean
stg_engine_drain_host (StgEngine *e, const gchar *name, gboolean drain, const gchar *user,
                       GError **error)
{
  g_autoptr (GHashTable) one = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) known = known_hosts (e, error);

  if (known == NULL)
    return FALSE;
  if (!g_hash_table_contains (known, name))
    return stg_fail (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_NOT_FOUND, "no host %s", name);
  g_hash_table_add (one, (gpointer) name);
  /* By hand: DRAINING with no request, the instances moved by the caller. */
  g_autoptr (GPtrArray) done = set_modes (e, one, drain ? M (DRAINING) : M (NONE), NULL, user,
                                          error);
  return done != NULL;
}

/* The local runtime's one host: this machine, under the name the
 * maintenance calls take, with the instances that run or stop on it. */
static GPtrArray *
this_host (StgEngine *e, GError **error)
{
  const gchar *name = g_get_host_name ();
  g_autoptr (GArray) keys = host_instances (e, name, error);
  g_autoptr (GPtrArray) jobs = keys ? stg_store_list_jobs (e->store, NULL, error) : NULL;

  if (jobs == NULL)
    return NULL;
  g_autoptr (ApiFleetHostStatus) h = g_object_new (API_TYPE_FLEET_HOST_STATUS, "name", name,
                                                   "endpoint", "", "address", name, "reachable",
                                                   TRUE, "lastError", "", "drainBlocked", "",
                                                   "slaWait", "", NULL);
  for (guint i = 0; i < keys->len; i++)
    {
      StgSlotKey *k = &g_array_index (keys, StgSlotKey, i);
      for (guint j = 0; j < jobs->len; j++)
        if (((StgJobRow *) jobs->pdata[j])->id == k->job_id)
          g_ptr_array_add (h->instances, g_object_new (API_TYPE_INSTANCE_KEY, "jobKey",
                                                       ((StgJobRow *) jobs->pdata[j])->key,
                                                       "instanceId", k->instance, NULL));
    }
  GPtrArray *hosts = g_ptr_array_new_with_free_func (g_object_unref);
  g_ptr_array_add (hosts, g_steal_pointer (&h));
  return hosts;
}

GPtrArray *
stg_engine_hosts (StgEngine *e, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autoptr (GPtrArray) hosts = fleet_hosts (e, &local);

  if (hosts == NULL && local == NULL)
    hosts = this_host (e, &local);
  g_autoptr (GPtrArray) rows = hosts ? stg_store_list_maintenance (e->store, &local) : NULL;
  if (rows == NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local));
      stg_engine_wrap_error (error);
      return NULL;
    }
  for (guint i = 0; i < hosts->len; i++)
    {
      ApiFleetHostStatus *h = hosts->pdata[i];
      StgMaintenanceRow *row = row_of (rows, h->name);
      g_autofree gchar *wait = sla_waits (e, h->name);
      g_object_set (h, "mode", row ? row->mode : M (NONE), "slaWait", wait ? wait : "", NULL);
    }
  return g_steal_pointer (&hosts);
}

/* ---- moving instances off ----------------------------------------------------------- */

/* Instance @k of @job waits for its SLA (@why): kept for readers
 * (stg_engine_sla_wait), logged the first time. */
static void
note_wait (Drain *d, const StgSlotKey *k, const ApiJobKey *job, const gchar *why)
{
  g_autofree gchar *name = stg_job_key_to_string (job);
  gchar *text = g_strdup_printf ("instance %d of %s waits for its SLA: %s", k->instance, name, why);

  if (g_hash_table_add (d->noted, stg_slot_key_new (k->job_id, k->instance)))
    g_message ("engine: drain of %s: %s", d->host, text);
  g_hash_table_replace (d->waits, stg_slot_key_new (k->job_id, k->instance), text);
}

static void
on_coordinator (gpointer data, gboolean yes, const gchar *message)
{
  Drain *d = data;
  StgEngine *e = d->engine;

  g_clear_pointer (&d->ask, stg_sla_ask_free);
  if (yes)
    {
      g_hash_table_add (d->allowed, stg_slot_key_new (d->asked.job_id, d->asked.instance));
      arm (e, 0);
      return;
    }
  g_info ("engine: drain: instance %d of job %" G_GINT64_FORMAT " waits: its coordinator said %s",
          d->asked.instance, d->asked.job_id, message);
  g_autoptr (StgJobRow) job = stg_store_get_job_by_id (e->store, d->asked.job_id, NULL);
  if (job != NULL)
    {
      g_autofree gchar *why = g_strdup_printf ("its coordinator %s said %s", d->asked_url, message);
      note_wait (d, &d->asked, job->key, why);
    }
}

/* The instances of job @job_id in @d->moving, as ids (leaving the job). */
static GHashTable *
leaving_of (Drain *d, gint64 job_id)
{
  GHashTable *ids = g_hash_table_new (NULL, NULL);
  GHashTableIter it;
  gpointer key;

  g_hash_table_iter_init (&it, d->moving);
  while (g_hash_table_iter_next (&it, &key, NULL))
    if (((StgSlotKey *) key)->job_id == job_id)
      g_hash_table_add (ids, GINT_TO_POINTER (((StgSlotKey *) key)->instance));
  return ids;
}

/* Whether instance @k may leave the host now under its SLA (@remaining_ms
 * before the drain stops waiting). */
static gboolean
sla_lets_go (StgEngine *e, Drain *d, const ApiHostMaintenanceRequest *request, const StgSlotKey *k,
             gint64 remaining_ms)
{
  StgInstanceRow row;
  g_autoptr (GError) error = NULL;
  g_autoptr (StgJobRow) job = stg_store_get_job_by_id (e->store, k->job_id, NULL);

  if (job == NULL || !stg_store_get_instance (e->store, k->job_id, k->instance, &row, &error))
    return TRUE; /* gone already */
  g_autoptr (ApiTaskConfig) task = stg_store_get_config (e->store, row.config_id, NULL);
  const ApiSlaPolicy *fallback = request->defaultSlaPolicy;
  gboolean has_fallback = fallback != NULL && (fallback->__isset_countSlaPolicy ||
                                               fallback->__isset_percentageSlaPolicy ||
                                               fallback->__isset_coordinatorSlaPolicy);
  g_autoptr (ApiSlaPolicy) p = stg_sla_policy_of (e, task, has_fallback ? fallback : NULL);
  if (p == NULL)
    return TRUE;
  if (p->__isset_coordinatorSlaPolicy)
    {
      if (g_hash_table_remove (d->allowed, k))
        return TRUE;
      if (!g_hash_table_contains (d->waits, k))
        {
          g_autofree gchar *why = g_strdup_printf ("its coordinator %s has yet to answer",
                                                   p->coordinatorSlaPolicy->coordinatorUrl);
          note_wait (d, k, job->key, why);
        }
      if (d->ask == NULL)
        {
          d->asked = *k;
          g_free (d->asked_url);
          d->asked_url = g_strdup (p->coordinatorSlaPolicy->coordinatorUrl);
          d->ask = stg_sla_ask (e, k->job_id, job->key, k->instance, d->host,
                                p->coordinatorSlaPolicy, remaining_ms, on_coordinator, d);
        }
      return FALSE;
    }
  g_autoptr (GHashTable) leaving = leaving_of (d, k->job_id);
  g_autofree gchar *why = NULL;
  gint64 recheck = 0;
  if (stg_sla_holds (e, k->job_id, k->instance, p, stg_task_is_production (e, task), leaving, &why,
                     &recheck))
    return TRUE;
  note_wait (d, k, job->key, why);
  return FALSE;
}

/* One pass over a DRAINING host: DRAINED once nothing of it runs; else,
 * with a request, each instance that may go is restarted to move off. */
static void
pass_host (StgEngine *e, const StgMaintenanceRow *row)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) on_host = host_instances (e, row->host, &error);

  if (on_host == NULL)
    {
      g_warning ("engine: drain of %s: %s", row->host, error->message);
      return;
    }
  if (on_host->len == 0)
    {
      g_message ("engine: host %s is DRAINED", row->host);
      if (!set_mode (e, row->host, M (DRAINED), NULL, &error))
        g_warning ("engine: host %s: %s", row->host, error->message);
      return;
    }
  if (row->request == NULL)
    return; /* drained by hand: the caller moves the instances */
  Drain *d = drain_of (e, row->host);
  g_autoptr (GHashTable) still = key_set ();
  for (guint i = 0; i < on_host->len; i++)
    {
      StgSlotKey *k = &g_array_index (on_host, StgSlotKey, i);
      g_hash_table_add (still, stg_slot_key_new (k->job_id, k->instance));
    }
  /* What has left is no longer moving. */
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init (&it, d->moving);
  while (g_hash_table_iter_next (&it, &key, NULL))
    if (!g_hash_table_contains (still, key))
      g_hash_table_iter_remove (&it);
  g_hash_table_iter_init (&it, d->waits);
  while (g_hash_table_iter_next (&it, &key, NULL))
    if (!g_hash_table_contains (still, key))
      g_hash_table_iter_remove (&it);

  gint64 deadline = row->request->createdTimestampMs + row->request->timeoutSecs * 1000;
  gint64 remaining = deadline - stg_clock_now_ms (e->clock);
  for (guint i = 0; i < on_host->len; i++)
    {
      StgSlotKey *k = &g_array_index (on_host, StgSlotKey, i);
      if (g_hash_table_contains (d->moving, k) || stg_engine_update_for_job (e, k->job_id) != NULL)
        continue;
      if (remaining > 0 && !sla_lets_go (e, d, row->request, k, remaining))
        continue;
      g_message ("engine: drain of %s: moving instance %d of job %" G_GINT64_FORMAT " off%s",
                 row->host, k->instance, k->job_id, remaining > 0 ? "" : " (no SLA wait)");
      g_hash_table_add (d->moving, stg_slot_key_new (k->job_id, k->instance));
      g_hash_table_remove (d->noted, k);
      g_hash_table_remove (d->waits, k);
      if (!stg_runtime_restart (e->runtime, k->job_id, k->instance, &error))
        {
          g_warning ("engine: drain of %s: instance %d: %s", row->host, k->instance,
                     error->message);
          g_clear_error (&error);
        }
    }
}

/* Timer: a pass over every DRAINING host; again later while one is. */
static void
on_pass (gpointer data)
{
  StgEngine *e = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) rows = stg_store_list_maintenance (e->store, &error);
  gboolean draining = FALSE;

  e->maintenance->timer = 0;
  if (rows == NULL)
    {
      g_warning ("engine: hosts in maintenance: %s", error->message);
      arm (e, e->limits.maintenance_poll_ms);
      return;
    }
  for (guint i = 0; i < rows->len; i++)
    if (((StgMaintenanceRow *) rows->pdata[i])->mode == M (DRAINING))
      {
        pass_host (e, rows->pdata[i]);
        draining = TRUE;
      }
  if (draining)
    arm (e, e->limits.maintenance_poll_ms);
}

static void
arm (StgEngine *e, gint64 delay_ms)
{
  if (e->runtime == NULL)
    return;
  stg_clock_cancel_timer (e->clock, e->maintenance->timer);
  e->maintenance->timer = stg_clock_add_timer (e->clock, delay_ms, on_pass, e);
}

gboolean
stg_engine_recover_hosts (StgEngine *e, GError **error)
{
  g_autoptr (GPtrArray) rows = stg_store_list_maintenance (e->store, error);
  gboolean draining = FALSE;

  if (rows == NULL)
    return FALSE;
  for (guint i = 0; i < rows->len && e->runtime != NULL; i++)
    {
      StgMaintenanceRow *row = rows->pdata[i];
      g_autoptr (GError) local = NULL;
      gboolean closed = row->mode == M (DRAINING) || row->mode == M (DRAINED);
      draining = draining || row->mode == M (DRAINING);
      /* A host that is gone from the configuration keeps its row. */
      if (!stg_runtime_drain_host (e->runtime, row->host, closed, &local))
        g_warning ("engine: host %s in maintenance: %s", row->host, local->message);
    }
  if (draining)
    arm (e, e->limits.maintenance_poll_ms);
  return TRUE;
}

void
stg_maintenance_init (StgEngine *e)
{
  e->maintenance = g_new0 (StgMaintenance, 1);
  e->maintenance->drains = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, drain_free);
}

void
stg_maintenance_free (StgEngine *e)
{
  if (e->maintenance == NULL)
    return;
  stg_clock_cancel_timer (e->clock, e->maintenance->timer);
  g_clear_pointer (&e->maintenance->drains, g_hash_table_unref);
  g_clear_pointer (&e->maintenance, g_free);
}
