/* leadership.c: the follower's retries and the leader's heartbeat.
 *
 * A follower tries the store's leadership lock every tick; when the
 * database cannot be reached it says so once, reconnects each tick, and
 * says when it is back. A leader reads the leader row each tick: a failed
 * read (lost connection, so maybe lost lock) or another epoch there ends
 * its leadership at once, and reading its own epoch there proves its lead
 * (store.h, stg_store_lead_left_ms). A follower that takes over starts
 * leading (on_lead) from an idle callback, not from inside the tick, so
 * the tick goes on proving the lead, and keeping the database session
 * from idling out, while the new leader adopts what runs (which waits on
 * the hosts, for longer than a lease when one does not answer). A replica
 * that finds the schema newer than it knows (another replica has been
 * upgraded and migrated it) refuses to lead, says so once, and writes
 * nothing, not even that it is alive, until the schema is one it knows:
 * it goes on redirecting to the leader. Calls the store only; main-loop
 * thread only.
 */
#include "config.h"

#include "daemon/leadership.h"

struct _StgLeadership
{
  StgStore *store;           /* borrowed */
  gchar *holder;
  gchar *url;
  guint lease_ms;
  gint64 forget_ms; /* replicas not seen this long are forgotten */
  StgLeadershipFunc on_lead;
  StgLeadershipFunc on_lost;
  gpointer data;
  guint timer;
  guint lead_idle; /* on_lead, about to run */
  gboolean leading;
  gboolean refusing;         /* the schema is newer than this build knows */
  gboolean refusal_said;     /* ... and the log says so */
  gboolean unreachable;      /* the last attempt could not reach the database */
  gchar *unreachable_why;    /* ... why, as last said */
  gint64 started_ms;
};

/* Says in the store that this replica is alive (for `stagger cluster
 * status`); a failure shows in the next attempt to lead or prove it. */
static void
say_alive (StgLeadership *l)
{
  g_autoptr (GError) error = NULL;

  if (l->unreachable || l->refusing || stg_store_in_transaction (l->store))
    return;
  if (!stg_store_replica_seen (l->store, l->holder, l->url, l->lease_ms, l->started_ms,
                               g_get_real_time () / 1000, &error))
    g_debug ("ha: %s", error->message);
}

/* The leader forgets the replicas gone for longer than forget_ms, each
 * with a line in the log (what `stagger cluster status` no longer
 * shows). */
static void
forget_gone (StgLeadership *l)
{
  g_autoptr (GError) error = NULL;
  gint64 now_ms = g_get_real_time () / 1000;

  if (stg_store_in_transaction (l->store))
    return;
  g_autoptr (GPtrArray) gone = stg_store_forget_replicas (l->store, now_ms - l->forget_ms, &error);
  if (gone == NULL)
    {
      g_debug ("ha: %s", error->message);
      return;
    }
  for (guint i = 0; i < gone->len; i++)
    {
      StgReplicaRow *r = gone->pdata[i];
      g_message ("ha: forgot replica %s at %s: not seen for %" G_GINT64_FORMAT
                 " s (forget_replicas_secs)",
                 r->holder, r->url, (now_ms - r->seen_ms) / 1000);
    }
}

/* Says the database cannot be reached, once per reason. */
static void
note_unreachable (StgLeadership *l, const GError *error)
{
  if (!l->unreachable || g_strcmp0 (l->unreachable_why, error->message) != 0)
    g_warning ("ha: cannot reach the database (%s); retrying every %u ms", error->message,
               MAX (l->lease_ms / 4, 100u));
  g_free (l->unreachable_why);
  l->unreachable_why = g_strdup (error->message);
  l->unreachable = TRUE;
}

/* Says, once, that this replica will not lead on a newer schema. */
static void
note_refusal (StgLeadership *l, const GError *error)
{
  if (!l->refusal_said)
    g_warning ("ha: refusing to lead: %s", error->message);
  l->refusing = l->refusal_said = TRUE;
  l->unreachable = FALSE;
}

gboolean
stg_leadership_try (StgLeadership *l)
{
  g_autoptr (GError) error = NULL;
  gint64 epoch = 0;

  if (l->leading)
    return TRUE;
  if (l->unreachable && !stg_store_reconnect (l->store, &error))
    {
      note_unreachable (l, error);
      return FALSE;
    }
  if (!stg_store_try_lead (l->store, l->holder, l->url, l->lease_ms, g_get_real_time () / 1000,
                           &epoch, &error))
    {
      if (g_error_matches (error, STG_STORE_ERROR, STG_STORE_ERROR_NEWER))
        note_refusal (l, error);
      else if (error != NULL)
        note_unreachable (l, error);
      else if (l->unreachable)
        {
          g_message ("ha: the database is back; following");
          l->unreachable = FALSE;
        }
      return FALSE;
    }
  if (l->unreachable)
    g_message ("ha: the database is back");
  l->unreachable = FALSE;
  l->refusing = l->refusal_said = FALSE;
  l->leading = TRUE;
  g_message ("ha: leading as %s with epoch %" G_GINT64_FORMAT, l->holder, epoch);
  return TRUE;
}

static gboolean
start_leading (gpointer data)
{
  StgLeadership *l = data;

  l->lead_idle = 0;
  l->on_lead (l->data);
  return G_SOURCE_REMOVE;
}

static gboolean
tick (gpointer data)
{
  StgLeadership *l = data;
  g_autoptr (GError) error = NULL;

  say_alive (l);
  if (!l->leading)
    {
      if (stg_leadership_try (l))
        l->lead_idle = g_idle_add (start_leading, l);
      return G_SOURCE_CONTINUE;
    }
  if (stg_store_in_transaction (l->store))
    return G_SOURCE_CONTINUE;
  StgLeaderInfo info = { 0 };
  gboolean ok = stg_store_leader (l->store, &info, &error);
  gint64 epoch = info.epoch;
  stg_leader_info_clear (&info);
  if (ok && epoch == stg_store_epoch (l->store))
    {
      forget_gone (l);
      return G_SOURCE_CONTINUE;
    }
  if (ok)
    g_warning ("ha: replica of epoch %" G_GINT64_FORMAT " took over from ours (%" G_GINT64_FORMAT
               "): stepping down", epoch, stg_store_epoch (l->store));
  else
    g_warning ("ha: lost the database while leading (%s): stepping down", error->message);
  l->leading = FALSE;
  l->unreachable = TRUE;
  l->on_lost (l->data);
  return G_SOURCE_CONTINUE;
}

StgLeadership *
stg_leadership_new (StgStore *store, const gchar *holder, const gchar *url, guint lease_ms,
                    gint64 forget_ms, StgLeadershipFunc on_lead, StgLeadershipFunc on_lost,
                    gpointer data)
{
  StgLeadership *l = g_new0 (StgLeadership, 1);

  l->store = store;
  l->holder = g_strdup (holder);
  l->url = g_strdup (url);
  l->lease_ms = lease_ms;
  l->forget_ms = forget_ms;
  l->on_lead = on_lead;
  l->on_lost = on_lost;
  l->data = data;
  l->started_ms = g_get_real_time () / 1000;
  l->refusing = stg_store_schema_version (store) > stg_store_latest_schema_version ();
  /* Listed from the start, not from the first tick: a replica killed
   * before its first tick (a busy start) would never have been listed. */
  say_alive (l);
  l->timer = g_timeout_add (MAX (lease_ms / 4, 100u), tick, l);
  return l;
}

void
stg_leadership_free (StgLeadership *l)
{
  if (l == NULL)
    return;
  g_clear_handle_id (&l->timer, g_source_remove);
  g_clear_handle_id (&l->lead_idle, g_source_remove);
  g_free (l->holder);
  g_free (l->url);
  g_free (l->unreachable_why);
  g_free (l);
}

gboolean
stg_leadership_leading (StgLeadership *l)
{
  return l->leading;
}
