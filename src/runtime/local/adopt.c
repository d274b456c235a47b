/* adopt.c: the local runtime's start-up after a daemon that died: every
 * process this data dir's runtime made is found by the marker in its
 * environment (STG_LOCAL_MARK), the one the store expects per slot is
 * adopted (a hot upgrade's pair included: the hand-over is undone, or
 * finished when the old version is gone) with the processes its run
 * started in sessions of their own (an AuroraExecutor task's), the rest
 * are stopped, and what ended while nobody watched is judged by why it
 * ended. And reconciliation, the same comparison while running: a run
 * whose process is gone has ended; a marked process no slot expects is
 * stopped. Calls the store, process.c and run.c; main-loop thread only
 * (adoption once, before the engine recovers).
 */
#include "config.h"

#include <signal.h>
#include <string.h>

#include "runtime/local/local_private.h"
#include "spawn/process.h"

#define ORPHAN_WAIT_MS 3000

/* This data dir's marked processes: "JOB:INSTANCE:RUN" -> GPtrArray of
 * StgMarkedProcess (borrowed from @marked). A run is one process, except
 * an AuroraExecutor task's: its runner, and each process of the task in a
 * session of its own, with the same mark. */
static GHashTable *
ours (StgLocalRuntime *rt, GPtrArray *marked)
{
  GHashTable *found = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                             (GDestroyNotify) g_ptr_array_unref);

  for (guint i = 0; i < marked->len; i++)
    {
      StgMarkedProcess *p = marked->pdata[i];
      g_auto (GStrv) parts = g_strsplit (p->mark, ":", 4);
      if (g_strv_length (parts) != 4 || !g_str_equal (parts[3], rt->mark_dir))
        continue;
      g_autofree gchar *key = g_strjoin (":", parts[0], parts[1], parts[2], NULL);
      GPtrArray *run = g_hash_table_lookup (found, key);
      if (run == NULL)
        g_hash_table_insert (found, g_steal_pointer (&key), run = g_ptr_array_new ());
      g_ptr_array_add (run, p);
    }
  return found;
}

/* The run's first process among @run's: the one whose parent is none of
 * them (a runner's processes are its children, or its orphans, which it
 * reaps); NULL when that is not one process. */
static StgMarkedProcess *
first_of (GPtrArray *run)
{
  StgMarkedProcess *first = NULL;

  for (guint i = 0; i < run->len; i++)
    {
      StgMarkedProcess *p = run->pdata[i];
      gboolean child = FALSE;
      for (guint k = 0; k < run->len && !child; k++)
        child = ((StgMarkedProcess *) run->pdata[k])->pid == p->parent;
      if (!child && first != NULL)
        return NULL;
      if (!child)
        first = p;
    }
  return first;
}

/* Takes run @run_id of @slot out of @found: the recorded @pid when it is
 * still the same process, else, when no pid was recorded yet (a daemon
 * that died between the intent and the fork's end), the run's marked
 * first process. A recorded process that is gone leaves what it started
 * in @found, to be stopped. */
static gboolean
take (GHashTable *found, Slot *slot, gint64 run_id, gint64 pid, gint64 pid_start, StgRunFacts *out)
{
  g_autofree gchar *key = g_strdup_printf ("%" G_GINT64_FORMAT ":%d:%" G_GINT64_FORMAT,
                                           slot->base.key.job_id, slot->base.key.instance, run_id);
  GPtrArray *run = g_hash_table_lookup (found, key);
  StgMarkedProcess *p = run != NULL && pid <= 0 ? first_of (run) : NULL;

  if (run_id <= 0)
    return FALSE;
  out->run_id = run_id;
  out->pid = pid;
  out->pid_start = pid_start;
  if (pid > 0 && stg_process_is ((GPid) pid, pid_start))
    {
      g_hash_table_remove (found, key);
      return TRUE;
    }
  if (p == NULL)
    return FALSE;
  out->pid = p->pid;
  out->pid_start = p->start_time;
  g_hash_table_remove (found, key);
  return TRUE;
}

/* Kills every process of @found: no slot expects it. */
static void
kill_orphans (GHashTable *found)
{
  GHashTableIter it;
  gpointer value;

  g_hash_table_iter_init (&it, found);
  while (g_hash_table_iter_next (&it, NULL, &value))
    for (guint i = 0; i < ((GPtrArray *) value)->len; i++)
      {
        StgMarkedProcess *p = ((GPtrArray *) value)->pdata[i];
        g_message ("runtime: stopping pid %d (%s): no instance expects it", (int) p->pid, p->mark);
        stg_process_signal_group (p->pid, SIGKILL);
      }
}

/* Stops every process of @found and waits a little for them to go, so a
 * start that follows finds their ports free. */
static void
stop_orphans (GHashTable *found)
{
  GHashTableIter it;
  gpointer value;

  kill_orphans (found);
  for (gint waited = 0; waited < ORPHAN_WAIT_MS; waited += 10)
    {
      gboolean alive = FALSE;
      g_hash_table_iter_init (&it, found);
      while (g_hash_table_iter_next (&it, NULL, &value) && !alive)
        for (guint i = 0; i < ((GPtrArray *) value)->len && !alive; i++)
          {
            StgMarkedProcess *p = ((GPtrArray *) value)->pdata[i];
            alive = stg_process_is (p->pid, p->start_time);
          }
      if (!alive)
        return;
      g_usleep (10000);
    }
}

/* Adopts @facts as the slot's run and goes on with what it was doing:
 * a stop that was asked for is asked again for the same reason. */
static void
adopt_run (Slot *slot, const StgRunFacts *facts, const StgInstanceRow *row)
{
  g_autoptr (GError) error = NULL;
  Run *run = stg_run_adopt (slot, facts, &error);

  if (run == NULL)
    {
      g_warning ("runtime: cannot adopt pid %" G_GINT64_FORMAT ": %s", facts->pid, error->message);
      return;
    }
  slot->base.healthy_since_ms = run->healthy_since_ms;
  StopReason reason = run->id == row->run_id ? (StopReason) row->stop_reason : STOP_NONE;
  if (reason == STOP_KILL || (reason == STOP_NONE && row->status == API_SCHEDULE_STATUS_KILLING))
    {
      /* A kill was under way: finish it. */
      stg_runtime_kill (&slot->rt->base, slot->base.key.job_id, slot->base.key.instance, NULL);
      return;
    }
  g_autofree gchar *m = g_strdup_printf ("adopted by a new staggerd (pid %d)", (int) run->pid);
  if (reason != STOP_NONE)
    {
      /* A replace, restart or failure was stopping it: it goes on. */
      run->stopping = reason;
      stg_run_stop (run);
      stg_slot_set_phase (&slot->base, STG_TASK_KILLING, run->config_id,
                          API_SCHEDULE_STATUS_KILLING, m);
      return;
    }
  stg_local_show_run (slot, m);
}

/* Nothing of the slot runs: judged by why it ended. */
static void
judge_gone (Slot *slot, const StgInstanceRow *row)
{
  StopReason reason = (StopReason) row->stop_reason;
  gint64 ran = row->run_config_id ? row->run_config_id : row->config_id;

  if (row->status == API_SCHEDULE_STATUS_FINISHED)
    return;
  if (row->status == API_SCHEDULE_STATUS_FAILED && row->pid == 0 && row->run_config_id == 0)
    {
      /* Its run ended and was judged (counted, FAILED; no start since):
       * what follows is what follows a failure, another start only while
       * it may run again. */
      stg_slot_assume (&slot->base, STG_TASK_FAILED, row->status);
      slot->base.config_id = row->config_id;
      stg_local_after_exit (slot, NULL, FALSE, NULL);
      return;
    }
  if (reason == STOP_KILL || (reason == STOP_NONE && row->status == API_SCHEDULE_STATUS_KILLING))
    {
      stg_slot_set_phase (&slot->base, STG_TASK_ABSENT, 0, API_SCHEDULE_STATUS_KILLED,
                          "stopped while staggerd was not running");
      stg_slot_remove (&slot->base);
      return;
    }
  if ((reason == STOP_NONE && row->pid > 0) || reason == STOP_FAILED)
    {
      /* It died on its own, or was failing: a failed run, restarted
       * after the back-off. */
      if (reason == STOP_NONE)
        {
          stg_local_count_failure (slot, NULL, "exited while staggerd was not running");
        }
      stg_slot_set_phase (&slot->base, STG_TASK_FAILED, ran, API_SCHEDULE_STATUS_FAILED,
                          "exited while staggerd was not running");
      slot->base.post_owed = row->config_id != ran ? row->config_id : 0;
      stg_local_after_exit (slot, NULL, FALSE, NULL);
      return;
    }
  /* Stopped for a replace or a restart as asked, or never started (the
   * intent was written, the fork not made): not a failure. */
  gboolean replacing = reason == STOP_REPLACE || row->config_id != ran;
  if (replacing)
    slot->base.post_owed = row->config_id;
  stg_run_start_config (slot, row->config_id, FALSE, replacing);
}

/* One slot: adopt what the store expects of it, or judge what is gone. */
static void
adopt_slot (Slot *slot, const StgInstanceRow *row, StgRunFacts *cur, gboolean has_cur,
            StgRunFacts *next, gboolean has_next)
{
  if (has_cur && has_next)
    {
      /* A hot upgrade was under way: undone. The old version serves, and
       * the new one is asked for again. */
      g_message ("runtime: instance %d: stopping the unfinished new version (pid %" G_GINT64_FORMAT
                 ")",
                 slot->base.key.instance, next->pid);
      stg_process_signal_group ((GPid) next->pid, SIGKILL);
    }
  else if (has_next)
    {
      /* The old version was gone: the new one serves (the hand-over is
       * finished). */
      next->config_id = row->next_config_id;
      next->healthy_since_ms = 0;
      adopt_run (slot, next, row);
      return;
    }
  if (has_cur)
    {
      cur->config_id = row->run_config_id ? row->run_config_id : row->config_id;
      cur->healthy_since_ms = row->status == API_SCHEDULE_STATUS_RUNNING ? MAX (row->status_ms, 1) : 0;
      adopt_run (slot, cur, row);
      return;
    }
  judge_gone (slot, row);
}

gboolean
stg_local_runtime_adopt (StgRuntime *base, GError **error)
{
  StgLocalRuntime *rt = (StgLocalRuntime *) base;
  g_autoptr (GArray) rows = stg_store_list_all_instances (rt->store, error);

  if (rows == NULL)
    return FALSE;
  g_autoptr (GPtrArray) marked = stg_process_find_marked (STG_LOCAL_MARK);
  g_autoptr (GHashTable) found = ours (rt, marked);
  g_autoptr (GArray) cur = g_array_sized_new (FALSE, TRUE, sizeof (StgRunFacts), rows->len);
  g_autoptr (GArray) next = g_array_sized_new (FALSE, TRUE, sizeof (StgRunFacts), rows->len);
  g_autofree gboolean *has = g_new0 (gboolean, 2 * rows->len + 1);
  g_array_set_size (cur, rows->len);
  g_array_set_size (next, rows->len);

  /* First what each slot expects, so that what nobody expects is stopped
   * before anything starts. */
  for (guint i = 0; i < rows->len; i++)
    {
      StgSlotRow *s = &g_array_index (rows, StgSlotRow, i);
      Slot *slot = (Slot *) stg_slots_get (rt->slots, s->job_id, s->row.instance_id, NULL);
      if (slot == NULL)
        continue;
      has[2 * i] = take (found, slot, s->row.run_id, s->row.pid, s->row.pid_start,
                         &g_array_index (cur, StgRunFacts, i));
      has[2 * i + 1] = take (found, slot, s->row.next_run_id, s->row.next_pid, s->row.next_pid_start,
                             &g_array_index (next, StgRunFacts, i));
    }
  stop_orphans (found);
  for (guint i = 0; i < rows->len; i++)
    {
      StgSlotRow *s = &g_array_index (rows, StgSlotRow, i);
      Slot *slot = (Slot *) stg_slots_find (rt->slots, s->job_id, s->row.instance_id);
      if (slot != NULL)
        adopt_slot (slot, &s->row, &g_array_index (cur, StgRunFacts, i), has[2 * i],
                    &g_array_index (next, StgRunFacts, i), has[2 * i + 1]);
    }
  return TRUE;
}

/* ---- reconciliation --------------------------------------------------------------- */

/* The processes of @found's runs. */
static guint
processes_in (GHashTable *found)
{
  GHashTableIter it;
  gpointer value;
  guint n = 0;

  g_hash_table_iter_init (&it, found);
  while (g_hash_table_iter_next (&it, NULL, &value))
    n += ((GPtrArray *) value)->len;
  return n;
}

gboolean
stg_local_reconcile (StgRuntime *base, gboolean implicit, GHashTable *tasks, gchar **summary,
                     GError **error)
{
  StgLocalRuntime *rt = (StgLocalRuntime *) base;
  g_autoptr (GPtrArray) marked = stg_process_find_marked (STG_LOCAL_MARK);
  g_autoptr (GHashTable) found = ours (rt, marked);
  g_autoptr (GPtrArray) lost = g_ptr_array_new ();
  guint looked = 0, marks = processes_in (found);
  GHashTableIter it;
  gpointer value;

  (void) error;
  /* Each slot's runs: found by their mark, or still the recorded process. */
  stg_slots_iter_init (rt->slots, &it);
  while (g_hash_table_iter_next (&it, NULL, &value))
    {
      Slot *slot = value;
      Run *runs[] = { slot->run, slot->next };
      if (tasks != NULL && !g_hash_table_contains (tasks, &slot->base.key))
        continue; /* another batch's */
      for (guint i = 0; i < G_N_ELEMENTS (runs); i++)
        {
          Run *run = runs[i];
          if (run == NULL || run->pid <= 0)
            continue;
          looked++;
          g_autofree gchar *key = g_strdup_printf ("%" G_GINT64_FORMAT ":%d:%" G_GINT64_FORMAT,
                                                   slot->base.key.job_id, slot->base.key.instance,
                                                   run->id);
          if (!g_hash_table_remove (found, key) && !stg_process_is (run->pid, run->pid_start))
            g_ptr_array_add (lost, run);
        }
    }
  if (implicit)
    {
      guint strays = processes_in (found);
      kill_orphans (found);
      *summary = g_strdup_printf ("local: %u process%s with this staggerd's mark in /proc; %u "
                                  "that no instance expects stopped",
                                  marks, marks == 1 ? "" : "es", strays);
      return TRUE;
    }
  for (guint i = 0; i < lost->len; i++)
    stg_run_lost (lost->pdata[i]);
  *summary = g_strdup_printf ("local: %u instance process%s looked for in /proc; %u gone (ended "
                              "now)",
                              looked, looked == 1 ? "" : "es", lost->len);
  return TRUE;
}
