/* local_slot.c: what runs, adoption and the disk limit ask of a slot:
 * its phase shown from its serving run, its failures counted with the
 * run's last words, its listening sockets closed, a start held back by a
 * drain, the constraints or the pace; and the calls back into local.c
 * (StgLocalCalls: what follows a run's end, releasing held starts), which
 * local.c registers, so the files below it never call it. Main-loop
 * thread only.
 */
#include "config.h"

#include <unistd.h>

#include "runtime/local/local_private.h"

void
stg_local_crash_point (StgLocalRuntime *rt, const gchar *name)
{
  if (rt->crash_at != NULL && g_str_equal (rt->crash_at, name))
    {
      g_message ("runtime: stopping dead at %s (STAGGER_TEST_CRASH_AT)", name);
      _exit (99);
    }
}

void
stg_local_count_failure (Slot *slot, const Run *run, const gchar *why)
{
  g_autofree gchar *tail = run != NULL ? stg_local_stderr_tail (run, 5) : NULL;
  g_autofree gchar *cause = tail != NULL
                                ? g_strdup_printf ("%s; last lines of stderr:\n%s", why, tail)
                                : g_strdup (why);

  stg_slot_count_failure (&slot->base, cause);
}

void
stg_local_show_run (Slot *slot, const gchar *message)
{
  const Run *r = slot->run;

  g_assert (r != NULL);
  stg_slot_set_phase (&slot->base, r->healthy ? STG_TASK_RUNNING : STG_TASK_STARTING, r->config_id,
                      r->healthy ? API_SCHEDULE_STATUS_RUNNING : API_SCHEDULE_STATUS_STARTING,
                      message);
}

void
stg_local_close_sockets (Slot *slot)
{
  if (slot->sockets == NULL)
    return;
  for (guint i = 0; i < slot->sockets->len; i++)
    close (g_array_index (slot->sockets, gint, i));
  g_clear_pointer (&slot->sockets, g_array_unref);
}

/* ---- paced starts --------------------------------------------------------------- */

/* Why @slot may not start @spec now, or NULL: the host is drained, its
 * constraints (Aurora's words, which getPendingReason gives), or the pace. */
static gchar *
hold_reason (Slot *slot, const StgTaskSpec *spec)
{
  StgLocalRuntime *rt = slot->rt;

  if (rt->drained)
    return g_strdup_printf ("waiting to start: host %s is drained for maintenance", rt->host);
  gchar *veto = stg_local_veto (slot, spec);
  if (veto != NULL)
    return veto;
  if (rt->starting >= rt->options.max_concurrent_starts)
    return g_strdup_printf ("waiting to start: %u instances are starting on this host "
                            "(max_concurrent_starts)",
                            rt->starting);
  return NULL;
}

gboolean
stg_local_start_held (Slot *slot, const StgTaskSpec *spec, gboolean from_update)
{
  StgLocalRuntime *rt = slot->rt;
  g_autofree gchar *why = hold_reason (slot, spec);

  if (why == NULL)
    {
      g_clear_pointer (&slot->held, g_free);
      return FALSE;
    }
  if (slot->queued == 0)
    g_queue_push_tail (&rt->waiting, slot);
  slot->queued = spec->config_id;
  slot->queued_update = from_update;
  /* Held again for the same reason: nothing new to record. */
  if (slot->base.phase == STG_TASK_PENDING && slot->base.config_id == spec->config_id &&
      g_strcmp0 (slot->held, why) == 0)
    return TRUE;
  g_free (slot->held);
  slot->held = g_strdup (why);
  stg_slot_set_phase (&slot->base, STG_TASK_PENDING, spec->config_id, API_SCHEDULE_STATUS_PENDING,
                      why);
  return TRUE;
}

void
stg_local_start_done (Run *run)
{
  StgLocalRuntime *rt = run->slot->rt;

  if (!run->counted)
    return;
  run->counted = FALSE;
  g_assert (rt->starting > 0);
  rt->starting--;
  stg_local_release_waiting (rt);
}

void
stg_local_after_exit (Slot *slot, Run *run, gboolean success, const gchar *message)
{
  slot->rt->calls->after_exit (slot, run, success, message);
}

void
stg_local_start_replacement (Slot *slot)
{
  slot->rt->calls->start_replacement (slot);
}

void
stg_local_release_waiting (StgLocalRuntime *rt)
{
  rt->calls->release_waiting (rt);
}
