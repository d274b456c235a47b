/* local_disk.c: the local runtime's disk limit. Every disk interval
 * (StgLocalOptions.disk_interval_ms, 60 s unless told, as Thermos samples
 * a sandbox), the sandbox of each run whose task reserves disk (diskMb, or
 * an AuroraExecutor task's resources.disk) is walked (disk_usage.c), and a
 * run that uses more than it reserved fails in the words of Aurora's
 * resource manager; it counts like any failed run.
 *
 * The walks run in GTask worker threads on copies (a path, a key, a run
 * id), at most DISK_WALKS at once, never two of one sandbox; the rest wait
 * in a queue. The verdict is reached back on the main-loop thread, where
 * the run is looked up again by its key and number (it may be gone). When
 * the runtime is freed its cancellable stops the walks, and their
 * callbacks touch nothing of it.
 */
#include "config.h"

#include "runtime/local/disk_usage.h"
#include "runtime/local/local_private.h"

/* Sandboxes walked at once, whatever the number of instances. */
#define DISK_WALKS 2

/* One sandbox to walk: copies, so the run may go meanwhile. */
typedef struct
{
  StgSlotKey key;
  gint64 run_id;
  gchar *sandbox;
} DiskSample;

static void
disk_sample_free (gpointer data)
{
  DiskSample *s = data;

  g_free (s->sandbox);
  g_free (s);
}

/* The disk @run's task reserves in bytes; 0: it is not limited. */
static gint64
disk_reserved (const Run *run)
{
  gdouble cpus;
  gint64 ram, disk;

  stg_local_reserved (run, &cpus, &ram, &disk);
  return disk;
}

/* Worker thread: walks the sandbox of the task's DiskSample. */
static void
walk_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  const DiskSample *s = data;
  GError *error = NULL;
  gint64 used = stg_disk_usage (s->sandbox, cancellable, &error);

  (void) source;
  if (used < 0)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, g_memdup2 (&used, sizeof used), g_free);
}

/* Judges run @s of what the walk found: @used bytes. */
static void
disk_judge (StgLocalRuntime *rt, const DiskSample *s, gint64 used)
{
  Slot *slot = (Slot *) stg_slots_find (rt->slots, s->key.job_id, s->key.instance);
  Run *run = NULL;

  if (slot != NULL && slot->run != NULL && slot->run->id == s->run_id)
    run = slot->run;
  else if (slot != NULL && slot->next != NULL && slot->next->id == s->run_id)
    run = slot->next;
  if (run == NULL)
    return;
  gint64 reserved = disk_reserved (run);
  run->disk_used = used;
  g_debug ("runtime: %s holds %" G_GINT64_FORMAT " bytes of %" G_GINT64_FORMAT, s->sandbox, used,
           reserved);
  if (reserved <= 0 || used <= reserved || run->stopping || run->failed)
    return;
  /* Aurora's resource manager's words, two spaces and all. */
  g_autofree gchar *why = g_strdup_printf ("Disk limit exceeded.  Reserved %" G_GINT64_FORMAT
                                           " bytes vs used %" G_GINT64_FORMAT " bytes.",
                                           reserved, used);
  g_message ("runtime: instance %d of %s/%s/%s, run %" G_GINT64_FORMAT ": %s",
             slot->base.key.instance, slot->base.job->role, slot->base.job->environment,
             slot->base.job->name, run->id, why);
  stg_run_fail (run, why);
}

static void disk_pump (StgLocalRuntime *rt);

/* Main-loop thread: a walk ended. @data is the runtime, unless the walk
 * was cancelled (the runtime is gone). */
static void
on_walked (GObject *source, GAsyncResult *result, gpointer data)
{
  GTask *task = G_TASK (result);
  StgLocalRuntime *rt = data;
  g_autoptr (GError) error = NULL;

  (void) source;
  if (g_cancellable_is_cancelled (g_task_get_cancellable (task)))
    return;
  const DiskSample *s = g_task_get_task_data (task);
  g_autofree gint64 *used = g_task_propagate_pointer (task, &error);
  rt->disk_walks--;
  if (used != NULL)
    disk_judge (rt, s, *used);
  else
    g_debug ("runtime: disk use of %s: %s", s->sandbox, error->message);
  g_hash_table_remove (rt->disk_busy, s->sandbox);
  disk_pump (rt);
}

/* Starts queued walks, up to DISK_WALKS at once. */
static void
disk_pump (StgLocalRuntime *rt)
{
  while (rt->disk_walks < DISK_WALKS && !g_queue_is_empty (&rt->disk_queue))
    {
      DiskSample *s = g_queue_pop_head (&rt->disk_queue);
      g_autoptr (GTask) task = g_task_new (NULL, rt->disk_cancel, on_walked, rt);
      g_task_set_task_data (task, s, disk_sample_free);
      g_task_set_name (task, "disk usage");
      rt->disk_walks++;
      g_task_run_in_thread (task, walk_thread);
    }
}

/* Queues a walk of @run's sandbox, when its task reserves disk and no
 * walk of that sandbox is queued or under way. */
static void
disk_queue_run (StgLocalRuntime *rt, const Run *run)
{
  if (run == NULL || run->stopping || run->pid <= 0 || disk_reserved (run) <= 0 ||
      g_hash_table_contains (rt->disk_busy, run->sandbox))
    return;
  DiskSample *s = g_new0 (DiskSample, 1);
  s->key = run->slot->base.key;
  s->run_id = run->id;
  s->sandbox = g_strdup (run->sandbox);
  g_hash_table_add (rt->disk_busy, g_strdup (run->sandbox));
  g_queue_push_tail (&rt->disk_queue, s);
}

static gboolean
on_disk_timer (gpointer data)
{
  StgLocalRuntime *rt = data;
  GHashTableIter it;
  gpointer value;

  stg_slots_iter_init (rt->slots, &it);
  while (g_hash_table_iter_next (&it, NULL, &value))
    {
      const Slot *slot = value;
      disk_queue_run (rt, slot->run);
      disk_queue_run (rt, slot->next);
    }
  disk_pump (rt);
  return G_SOURCE_CONTINUE;
}

void
stg_local_disk_start (StgLocalRuntime *rt)
{
  g_queue_init (&rt->disk_queue);
  rt->disk_busy = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  rt->disk_cancel = g_cancellable_new ();
  rt->disk_timer = g_timeout_add (rt->options.disk_interval_ms, on_disk_timer, rt);
}

void
stg_local_disk_stop (StgLocalRuntime *rt)
{
  g_clear_handle_id (&rt->disk_timer, g_source_remove);
  if (rt->disk_cancel != NULL)
    g_cancellable_cancel (rt->disk_cancel);
  g_clear_object (&rt->disk_cancel);
  g_queue_clear_full (&rt->disk_queue, disk_sample_free);
  g_clear_pointer (&rt->disk_busy, g_hash_table_unref);
}
