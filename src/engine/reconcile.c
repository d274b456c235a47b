/* reconcile.c: the runtime's reconciliation as Aurora's TaskReconciler
 * asks for it. Implicit: the runtime once, over everything. Explicit: the
 * tasks started somewhere (every slot the runtime has, but those not yet
 * started: Aurora's SLAVE_ASSIGNED_STATES) in batches of the size given
 * (Aurora's default: 1000), the first now and each next one
 * RECONCILE_INTERVAL_MS after the one before (Aurora's
 * -reconciliation_explicit_batch_interval). Owns the batches still to go
 * (engine->reconcile). Calls the store, the runtime and the clock.
 * Main-loop thread only.
 */
#include "config.h"

#include "common/error.h"
#include "engine/reconcile_private.h"

#define DEFAULT_BATCH_SIZE 1000
#define RECONCILE_INTERVAL_MS (5 * 1000)

typedef struct _StgReconcile StgReconcile;

struct _StgReconcile
{
  GQueue batches; /* GHashTable* (StgSlotKey* set) still to go, next first */
  guint timer;    /* the next batch's */
};

static GHashTable *
key_set (void)
{
  return g_hash_table_new_full (stg_slot_key_hash, stg_slot_key_equal, g_free, NULL);
}

void
stg_reconcile_free (StgEngine *e)
{
  StgReconcile *r = e->reconcile;

  if (r == NULL)
    return;
  stg_clock_cancel_timer (e->clock, r->timer);
  g_queue_clear_full (&r->batches, (GDestroyNotify) g_hash_table_unref);
  g_free (r);
  e->reconcile = NULL;
}

/* Every started task, in batches of @size (GHashTable* sets). */
static GPtrArray *
batches_of (StgEngine *e, gint32 size, guint *tasks, GError **error)
{
  g_autoptr (GPtrArray) jobs = stg_store_list_jobs (e->store, NULL, error);
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func ((GDestroyNotify) g_hash_table_unref);

  *tasks = 0;
  for (guint j = 0; jobs != NULL && j < jobs->len; j++)
    {
      gint64 job_id = ((StgJobRow *) jobs->pdata[j])->id;
      g_autoptr (GArray) rows = stg_store_list_instances (e->store, job_id, error);
      if (rows == NULL)
        return NULL;
      for (guint i = 0; i < rows->len; i++)
        {
          const StgInstanceRow *row = &g_array_index (rows, StgInstanceRow, i);
          StgTaskObservation obs = { 0 };
          stg_runtime_observe (e->runtime, job_id, row->instance_id, &obs);
          if (obs.phase == STG_TASK_ABSENT || obs.phase == STG_TASK_PENDING)
            continue;
          if (*tasks % (guint) size == 0)
            g_ptr_array_add (out, key_set ());
          g_hash_table_add (out->pdata[out->len - 1], stg_slot_key_new (job_id, row->instance_id));
          (*tasks)++;
        }
    }
  return jobs != NULL ? g_steal_pointer (&out) : NULL;
}

static void
on_batch (gpointer data)
{
  StgEngine *e = data;
  StgReconcile *r = e->reconcile;
  g_autoptr (GHashTable) batch = g_queue_pop_head (&r->batches);
  g_autoptr (GError) error = NULL;
  g_autofree gchar *summary = NULL;

  r->timer = g_queue_is_empty (&r->batches)
                 ? 0
                 : stg_clock_add_timer (e->clock, RECONCILE_INTERVAL_MS, on_batch, e);
  if (!stg_runtime_reconcile (e->runtime, FALSE, batch, &summary, &error))
    g_warning ("engine: explicit reconciliation of %u tasks: %s", g_hash_table_size (batch),
               error->message);
  else
    g_message ("engine: explicit reconciliation of %u tasks: %s", g_hash_table_size (batch),
               summary);
}

/* An explicit reconciliation: the first batch now, the others queued. */
static gboolean
reconcile_explicit (StgEngine *e, gint32 batch_size, gchar **summary, GError **error)
{
  guint tasks = 0;
  g_autoptr (GPtrArray) batches = batches_of (e, batch_size, &tasks, error);
  g_autofree gchar *first = NULL;

  if (batches == NULL)
    {
      stg_engine_wrap_error (error);
      return FALSE;
    }
  if (batches->len == 0)
    g_ptr_array_add (batches, key_set ()); /* still a pass: nothing placed */
  if (!stg_runtime_reconcile (e->runtime, FALSE, batches->pdata[0], &first, error))
    {
      stg_engine_wrap_error (error);
      return FALSE;
    }
  if (e->reconcile == NULL)
    e->reconcile = g_new0 (StgReconcile, 1);
  for (guint i = 1; i < batches->len; i++)
    g_queue_push_tail (&e->reconcile->batches, g_hash_table_ref (batches->pdata[i]));
  if (e->reconcile->timer == 0 && !g_queue_is_empty (&e->reconcile->batches))
    e->reconcile->timer = stg_clock_add_timer (e->clock, RECONCILE_INTERVAL_MS, on_batch, e);
  *summary = g_strdup_printf ("%u task%s in %u batch%s of at most %d, %d s apart; the first: %s",
                              tasks, tasks == 1 ? "" : "s", batches->len,
                              batches->len == 1 ? "" : "es", batch_size,
                              RECONCILE_INTERVAL_MS / 1000, first);
  return TRUE;
}

/* The runtime's error as the engine's (NOT_FOUND or INVALID). */
gboolean
stg_engine_reconcile (StgEngine *e, gboolean implicit, gint32 batch_size, gchar **summary,
                      GError **error)
{
  if (e->runtime == NULL)
    return stg_fail (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID,
                     "this staggerd has no runtime to reconcile");
  if (!implicit && batch_size < 0)
    return stg_fail (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID,
                     "Batch size must be greater than zero.");
  if (!implicit &&
      !reconcile_explicit (e, batch_size > 0 ? batch_size : DEFAULT_BATCH_SIZE, summary, error))
    return FALSE;
  if (implicit && !stg_runtime_reconcile (e->runtime, TRUE, NULL, summary, error))
    {
      stg_engine_wrap_error (error);
      return FALSE;
    }
  g_message ("engine: %s reconciliation: %s", implicit ? "implicit" : "explicit", *summary);
  return TRUE;
}
