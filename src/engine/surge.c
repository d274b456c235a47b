/* surge.c: an update's surge instances (maxSurge): extra instances of the
 * config the current direction moves to, in new instance slots beyond the
 * job's count, so that capacity holds while instances are replaced.
 *
 * While a direction has instances to replace, up to maxSurge surge
 * instances run its config (the update's config forward, the previous one
 * while rolling back). When the direction turns, new surge instances of
 * the other config start, and those of the config left behind go once the
 * new ones are all up (for that while, up to twice maxSurge run). They
 * count as in service for minInService like any healthy instance of the
 * job. A surge instance fails as an instance does (more than
 * maxPerInstanceFailures failed runs, or not healthy within
 * maxInstanceStartMs): it is removed, counts as a failed instance, and
 * another takes its place while the failure threshold allows. Once the
 * direction's work is done they are removed, and the update finishes only
 * when they are gone. An update that ends otherwise (aborted, failed)
 * removes them as it ends; until they are gone they are leftovers that the
 * engine watches. Their rows (update_surge) are written with each step, so
 * a restarted staggerd knows them all. Calls step.c, the store and the
 * runtime. Main-loop thread only.
 */
#include "config.h"

#include "engine/engine_private.h"
#include "engine/settings_private.h"
#include "engine/step_private.h"
#include "engine/surge_private.h"
#include "engine/update_private.h"
#include "engine/work_state.h"

/* ---- what a direction wants ---------------------------------------------------- */

static gboolean
direction_done (StgUpdate *u)
{
  return u->cursor >= u->order->len && g_hash_table_size (u->active) == 0;
}

/* How many surge instances the current direction wants, and their config:
 * maxSurge, at most one per instance it replaces (one running a config
 * before and after), none once its work is done. */
static guint
wanted (StgUpdate *u, gint64 *config)
{
  guint replaces = 0;

  *config = 0;
  if (u->s.max_surge <= 0 || direction_done (u))
    return 0;
  for (guint i = 0; i < u->order->len; i++)
    {
      StgWork *w = &g_array_index (u->work, StgWork, g_array_index (u->order, guint, i));
      gint64 target = u->back ? w->from_config : w->to_config;
      gint64 source = u->back ? w->to_config : w->from_config;
      if (target == 0 || source == 0)
        continue;
      if (*config == 0)
        *config = target;
      if (++replaces >= (guint) u->s.max_surge)
        break;
    }
  return MIN (replaces, (guint) u->s.max_surge);
}

/* ---- one surge instance ---------------------------------------------------------- */

/* Forgets the row of surge instance @instance of job @job_id (inside a
 * step); FALSE when the step failed. */
static gboolean
delete_row (StgEngine *e, gint64 job_id, gint32 instance)
{
  GError *error = NULL;

  if (stg_engine_step_ok (e))
    stg_engine_step_check (e, stg_store_delete_surge (e->store, job_id, instance, &error), &error);
  return stg_engine_step_ok (e);
}

static void
touch (StgUpdate *u, StgSurge *s)
{
  s->dirty = TRUE;
  stg_update_touch (u);
}

/* Asks the runtime for what @s should be: its config (stored first, as any
 * intent), or gone. */
static void
ask (StgUpdate *u, StgSurge *s)
{
  StgEngine *e = u->engine;
  GError *error = NULL;

  s->asked = TRUE;
  if (s->config == 0)
    {
      stg_engine_queue (e, STG_ACT_KILL, u->job_id, s->instance, 0, u->uid);
      return;
    }
  s->started_ms = stg_clock_now_ms (e->clock);
  touch (u, s);
  if (stg_engine_step_ok (e))
    stg_engine_step_check (e,
                           stg_store_set_instance_config (e->store, u->job_id, s->instance,
                                                          s->config, &error),
                           &error);
  stg_engine_queue (e, STG_ACT_APPLY, u->job_id, s->instance, s->config, u->uid);
}

/* Asks the runtime to remove @s. */
static void
remove_one (StgUpdate *u, StgSurge *s)
{
  s->config = 0;
  touch (u, s);
  ask (u, s);
}

static void
on_surge_timer (gpointer data)
{
  StgUpdate *u = data;

  u->surge.timer = 0;
  for (guint i = 0; i < u->surge.list->len; i++)
    stg_engine_note (u->engine, u->job_id, g_array_index (u->surge.list, StgSurge, i).instance);
}

/* The next maxInstanceStartMs deadline of a starting surge instance. */
static void
arm_timer (StgUpdate *u)
{
  StgClock *clock = u->engine->clock;
  gint64 due = G_MAXINT64;

  stg_clock_cancel_timer (clock, u->surge.timer);
  u->surge.timer = 0;
  if (u->s.max_start_ms <= 0)
    return;
  for (guint i = 0; i < u->surge.list->len; i++)
    {
      StgSurge *s = &g_array_index (u->surge.list, StgSurge, i);
      StgTaskObservation obs = { 0 };
      stg_runtime_observe (u->engine->runtime, u->job_id, s->instance, &obs);
      if (s->config != 0 && obs.phase != STG_TASK_RUNNING)
        due = MIN (due, s->started_ms + u->s.max_start_ms);
    }
  if (due != G_MAXINT64)
    u->surge.timer = stg_clock_add_timer (clock, MAX (0, due - stg_clock_now_ms (clock)),
                                          on_surge_timer, u);
}

/* Counts @n failures of @s (@why); past the allowance the surge instance
 * has failed: it goes, and counts as a failed instance. */
static void
count_failure (StgUpdate *u, StgSurge *s, gint n, const gchar *why)
{
  s->failures += n;
  touch (u, s);
  if (s->failures <= u->s.max_per_instance_failures)
    {
      ask (u, s);
      return;
    }
  u->surge.failed++;
  u->batch_failed = TRUE;
  g_free (u->last_failure);
  u->last_failure = g_strdup_printf ("surge instance %d: %s", s->instance, why);
  g_autofree gchar *event = g_strdup_printf ("surge instance %d failed %d time%s; last: %s",
                                             s->instance, s->failures, s->failures == 1 ? "" : "s",
                                             why);
  stg_update_note_event (u, event);
  remove_one (u, s);
}

/* Forgets surge instance @i of @u: it is gone. */
static void
forget (StgUpdate *u, guint i)
{
  StgEngine *e = u->engine;

  delete_row (e, u->job_id, g_array_index (u->surge.list, StgSurge, i).instance);
  g_array_remove_index (u->surge.list, i);
  stg_update_touch (u);
  stg_engine_announce (e, u->job, u->uid);
}

/* Looks at surge instance @i against what the runtime sees. */
static void
evaluate (StgUpdate *u, guint i)
{
  StgEngine *e = u->engine;
  StgSurge *s = &g_array_index (u->surge.list, StgSurge, i);
  StgTaskObservation obs = { 0 };

  if (e->runtime == NULL)
    return;
  stg_runtime_observe (e->runtime, u->job_id, s->instance, &obs);
  if (s->config == 0)
    {
      if (obs.phase == STG_TASK_ABSENT)
        forget (u, i);
      else if (!s->asked)
        ask (u, s);
      return;
    }
  if (obs.phase != STG_TASK_ABSENT && (gint64) obs.failures > s->seen_failures)
    {
      gint n = (gint) ((gint64) obs.failures - s->seen_failures);
      s->seen_failures = obs.failures;
      g_autofree gchar *why = g_strdup_printf ("did not stay up%s%s", obs.cause ? ": " : "",
                                               obs.cause ? obs.cause : "");
      count_failure (u, s, n, why);
    }
  else if (obs.phase == STG_TASK_FINISHED && obs.config_id == s->config)
    count_failure (u, s, 1, "exited");
  else if (obs.phase != STG_TASK_RUNNING && u->s.max_start_ms > 0 &&
           stg_clock_now_ms (e->clock) >= s->started_ms + u->s.max_start_ms)
    {
      g_autofree gchar *why = g_strdup_printf ("not healthy within %" G_GINT64_FORMAT " ms",
                                               u->s.max_start_ms);
      stg_engine_queue (e, STG_ACT_RESTART, u->job_id, s->instance, s->config, u->uid);
      count_failure (u, s, 1, why);
    }
  else if (!s->asked || obs.phase == STG_TASK_ABSENT)
    ask (u, s);
}

/* ---- the update's surge ----------------------------------------------------------- */

gint32
stg_surge_first_id (const StgDiff *diff)
{
  gint32 next = 0;
  const GArray *sets[] = { diff->changes, diff->unchanged, diff->outside };

  for (guint k = 0; k < G_N_ELEMENTS (sets); k++)
    for (guint i = 0; sets[k] != NULL && i < sets[k]->len; i++)
      next = MAX (next, g_array_index (sets[k], StgChange, i).instance + 1);
  return MAX (next, (gint32) diff->current_count);
}

/* Starts a new surge instance running @config. */
static void
add (StgUpdate *u, gint64 config)
{
  StgSurge s = { .instance = u->surge.next++, .config = config };
  StgTaskObservation obs = { 0 };

  stg_runtime_observe (u->engine->runtime, u->job_id, s.instance, &obs);
  s.seen_failures = obs.phase == STG_TASK_ABSENT ? 0 : obs.failures;
  g_array_append_val (u->surge.list, s);
  StgSurge *added = &g_array_index (u->surge.list, StgSurge, u->surge.list->len - 1);
  g_autofree gchar *event = g_strdup_printf ("surge instance %d starts", added->instance);
  stg_update_note_event (u, event);
  ask (u, added);
}

gboolean
stg_surge_pump (StgUpdate *u)
{
  gint64 config = 0;
  guint want = wanted (u, &config);
  guint live = 0, ready = 0;

  /* Those of the direction's config, up to what it wants; more go. */
  for (guint i = 0; i < u->surge.list->len; i++)
    {
      StgSurge *s = &g_array_index (u->surge.list, StgSurge, i);
      if (s->config == 0 || s->config != config)
        continue;
      if (live < want)
        {
          StgTaskObservation obs = { 0 };
          stg_runtime_observe (u->engine->runtime, u->job_id, s->instance, &obs);
          live++;
          ready += obs.phase == STG_TASK_RUNNING && obs.config_id == config;
        }
      else
        remove_one (u, s);
    }
  for (; live < want; live++)
    add (u, config);
  /* Those of the other config (the direction turned) stay until the new
   * ones are all up, so that the turn takes no capacity away. */
  for (guint i = 0; i < u->surge.list->len; i++)
    {
      StgSurge *s = &g_array_index (u->surge.list, StgSurge, i);
      if (s->config != 0 && s->config != config && ready >= want)
        remove_one (u, s);
    }
  arm_timer (u);
  return u->surge.list->len == 0;
}

gboolean
stg_surge_on_instance (StgUpdate *u, gint32 instance)
{
  for (guint i = 0; i < u->surge.list->len; i++)
    if (g_array_index (u->surge.list, StgSurge, i).instance == instance)
      {
        evaluate (u, i);
        return TRUE;
      }
  return FALSE;
}

void
stg_surge_evaluate_all (StgUpdate *u)
{
  /* evaluate may forget the one it looks at: go from the end. */
  for (guint i = u->surge.list->len; i > 0; i--)
    evaluate (u, i - 1);
}

void
stg_surge_release (StgUpdate *u)
{
  StgEngine *e = u->engine;

  for (guint i = 0; i < u->surge.list->len; i++)
    {
      StgSurge *s = &g_array_index (u->surge.list, StgSurge, i);
      StgTaskObservation obs = { 0 };
      if (e->runtime != NULL)
        stg_runtime_observe (e->runtime, u->job_id, s->instance, &obs);
      if (obs.phase == STG_TASK_ABSENT)
        {
          /* Already gone: nothing to wait for. */
          s->dirty = FALSE;
          delete_row (e, u->job_id, s->instance);
          continue;
        }
      if (s->config != 0 || !s->asked)
        remove_one (u, s);
      g_hash_table_add (e->leftover_surge, stg_slot_key_new (u->job_id, s->instance));
    }
}

gboolean
stg_surge_load (StgUpdate *u, GError **error)
{
  g_autoptr (GArray) rows = stg_store_list_surge (u->engine->store, u->id, error);

  if (rows == NULL)
    return FALSE;
  for (guint i = 0; i < rows->len; i++)
    {
      StgSurgeRow *r = &g_array_index (rows, StgSurgeRow, i);
      StgSurge s = { .instance = r->instance_id,
                     .config = r->config_id,
                     .failures = r->failures,
                     .seen_failures = r->baseline,
                     .started_ms = r->started_ms,
                     /* The runtime may not have heard of it before the restart. */
                     .asked = FALSE };
      g_array_append_val (u->surge.list, s);
      u->surge.next = MAX (u->surge.next, r->instance_id + 1);
    }
  return TRUE;
}

/* Whether an active update has row id @update_id. */
static gboolean
update_is_active (StgEngine *e, gint64 update_id)
{
  GHashTableIter it;
  gpointer value;

  g_hash_table_iter_init (&it, e->updates);
  while (g_hash_table_iter_next (&it, NULL, &value))
    if (((StgUpdate *) value)->id == update_id)
      return TRUE;
  return FALSE;
}

gboolean
stg_surge_recover_leftovers (StgEngine *e, GError **error)
{
  g_autoptr (GArray) rows = stg_store_list_surge (e->store, 0, error);

  if (rows == NULL)
    {
      stg_engine_wrap_error (error);
      return FALSE;
    }
  stg_engine_step_begin (e);
  for (guint i = 0; i < rows->len; i++)
    {
      StgSurgeRow *r = &g_array_index (rows, StgSurgeRow, i);
      if (update_is_active (e, r->update_id))
        continue;
      StgSlotKey key = { r->job_id, r->instance_id };
      g_hash_table_add (e->leftover_surge, stg_slot_key_new (r->job_id, r->instance_id));
      stg_surge_leftover_news (e, r->job_id, r->instance_id);
      if (!g_hash_table_contains (e->leftover_surge, &key))
        continue; /* already gone: forgotten */
      g_info ("engine: removing surge instance %d of an ended update", r->instance_id);
      stg_engine_queue (e, STG_ACT_KILL, r->job_id, r->instance_id, 0, NULL);
    }
  return stg_engine_step_end (e, error);
}

void
stg_surge_leftover_news (StgEngine *e, gint64 job_id, gint32 instance)
{
  StgSlotKey key = { job_id, instance };
  StgTaskObservation obs = { 0 };

  if (!g_hash_table_contains (e->leftover_surge, &key))
    return;
  if (e->runtime != NULL)
    stg_runtime_observe (e->runtime, job_id, instance, &obs);
  if (obs.phase != STG_TASK_ABSENT)
    return;
  if (delete_row (e, job_id, instance))
    g_hash_table_remove (e->leftover_surge, &key);
}
