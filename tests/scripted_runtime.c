/* scripted_runtime.c: ScriptedRuntime, a runtime for engine tests (see
 * scripted_runtime.h). Test processes only. */
#include "config.h"

#include "scripted_runtime.h"

typedef struct
{
  ScriptedRuntime *rt;
  gint64 job_id;
  gint32 instance;
  StgTaskObservation obs;
  guint timer;          /* the pending change */
  gint pending;         /* what the pending change does: 0 none, 1 settle a start, 2 finish a kill */
  gchar *cause;         /* (nullable) obs.cause: why the last run failed */
} Slot;

struct _ScriptedRuntime
{
  StgRuntime base;
  StgClock *clock;
  StgStore *store;
  gint64 delay_ms;
  GHashTable *slots;      /* StgSlotKey* -> Slot* */
  GHashTable *causes;     /* instance -> gchar*: the cause a failure of it reports */
  GHashTable *behave;     /* "instance:config" -> behaviour + 1 */
  GHashTable *delays;     /* instance -> delay + 1 */
  GPtrArray *log;
  GPtrArray *notices;     /* Slot* waiting to be announced */
  guint notice_timer;
  void (*on_change) (gpointer);
  gpointer on_change_data;
};

static Slot *
slot_get (ScriptedRuntime *rt, gint64 job_id, gint32 instance, gboolean create)
{
  StgSlotKey key = { job_id, instance };
  Slot *s = g_hash_table_lookup (rt->slots, &key);

  if (s == NULL && create)
    {
      s = g_new0 (Slot, 1);
      s->rt = rt;
      s->job_id = job_id;
      s->instance = instance;
      s->obs.phase = STG_TASK_ABSENT;
      g_hash_table_insert (rt->slots, stg_slot_key_new (job_id, instance), s);
    }
  return s;
}

static void
flush_notices (gpointer data)
{
  ScriptedRuntime *rt = data;
  g_autoptr (GPtrArray) notices = rt->notices;

  rt->notice_timer = 0;
  rt->notices = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < notices->len; i++)
    {
      gint64 *n = notices->pdata[i];
      stg_runtime_notify (&rt->base, n[0], (gint32) n[1]);
    }
}

/* Records a change of @s and announces it on the next timer. */
static void
changed (Slot *s)
{
  ScriptedRuntime *rt = s->rt;
  gint64 *n = g_new (gint64, 2);

  s->obs.phase_since_ms = stg_clock_now_ms (rt->clock);
  n[0] = s->job_id;
  n[1] = s->instance;
  g_ptr_array_add (rt->notices, n);
  if (rt->notice_timer == 0)
    rt->notice_timer = stg_clock_add_timer (rt->clock, 0, flush_notices, rt);
  if (rt->on_change != NULL)
    rt->on_change (rt->on_change_data);
}

static ScriptBehaviour
behaviour (ScriptedRuntime *rt, gint32 instance, gint64 config)
{
  g_autofree gchar *exact = g_strdup_printf ("%d:%" G_GINT64_FORMAT, instance, config);
  g_autofree gchar *any = g_strdup_printf ("%d:0", instance);
  gpointer b = g_hash_table_lookup (rt->behave, exact);

  if (b == NULL)
    b = g_hash_table_lookup (rt->behave, any);
  return b ? (ScriptBehaviour) (GPOINTER_TO_INT (b) - 1) : SCRIPT_HEALTHY;
}

static gint64
delay_of (ScriptedRuntime *rt, gint32 instance)
{
  gpointer d = g_hash_table_lookup (rt->delays, GINT_TO_POINTER (instance));
  return d ? GPOINTER_TO_INT (d) - 1 : rt->delay_ms;
}

static void
settle (gpointer data)
{
  Slot *s = data;
  ScriptedRuntime *rt = s->rt;
  gint pending = s->pending;

  s->timer = 0;
  s->pending = 0;
  if (pending == 2)
    {
      g_autoptr (GError) error = NULL;
      s->obs.phase = STG_TASK_ABSENT;
      s->obs.config_id = 0;
      s->obs.failures = 0;
      if (!stg_store_delete_instance (rt->store, s->job_id, s->instance, &error))
        g_error ("scripted runtime: %s", error->message);
      changed (s);
      return;
    }
  switch (behaviour (rt, s->instance, s->obs.config_id))
    {
    case SCRIPT_HEALTHY:
      s->obs.phase = STG_TASK_RUNNING;
      s->obs.healthy_since_ms = stg_clock_now_ms (rt->clock);
      break;
    case SCRIPT_CRASH:
      s->obs.phase = STG_TASK_FAILED;
      s->obs.failures++;
      g_free (s->cause);
      s->cause = g_strdup (g_hash_table_lookup (rt->causes, GINT_TO_POINTER (s->instance)));
      s->obs.cause = s->cause;
      break;
    case SCRIPT_HANG:
      return;
    case SCRIPT_FINISH:
      s->obs.phase = STG_TASK_FINISHED;
      break;
    }
  changed (s);
}

static void
begin (Slot *s, gint pending)
{
  ScriptedRuntime *rt = s->rt;

  stg_clock_cancel_timer (rt->clock, s->timer);
  s->pending = pending;
  s->timer = stg_clock_add_timer (rt->clock, delay_of (rt, s->instance), settle, s);
  changed (s);
}

static gboolean
sr_apply (StgRuntime *base, gint64 job_id, gint32 instance, gint64 config, GError **error)
{
  ScriptedRuntime *rt = (ScriptedRuntime *) base;
  Slot *s = slot_get (rt, job_id, instance, TRUE);
  (void) error;

  g_ptr_array_add (rt->log, g_strdup_printf ("apply %d %" G_GINT64_FORMAT, instance, config));
  if (s->obs.config_id == config && s->pending == 1)
    return TRUE;                                     /* already on its way */
  if (s->obs.config_id == config && s->obs.phase == STG_TASK_RUNNING)
    return TRUE;                                     /* already there */
  s->obs.config_id = config;
  s->obs.phase = STG_TASK_STARTING;
  begin (s, 1);
  return TRUE;
}

static gboolean
sr_kill (StgRuntime *base, gint64 job_id, gint32 instance, GError **error)
{
  ScriptedRuntime *rt = (ScriptedRuntime *) base;
  Slot *s = slot_get (rt, job_id, instance, TRUE);
  (void) error;

  g_ptr_array_add (rt->log, g_strdup_printf ("kill %d", instance));
  if (s->obs.phase == STG_TASK_ABSENT && s->pending != 1)
    return TRUE;
  s->obs.phase = STG_TASK_KILLING;
  begin (s, 2);
  return TRUE;
}

static gboolean
sr_restart (StgRuntime *base, gint64 job_id, gint32 instance, GError **error)
{
  ScriptedRuntime *rt = (ScriptedRuntime *) base;
  Slot *s = slot_get (rt, job_id, instance, TRUE);
  (void) error;

  g_ptr_array_add (rt->log, g_strdup_printf ("restart %d", instance));
  if (s->obs.config_id == 0)
    return TRUE;
  s->obs.phase = STG_TASK_STARTING;
  begin (s, 1);
  return TRUE;
}

static void
sr_observe (StgRuntime *base, gint64 job_id, gint32 instance, StgTaskObservation *out)
{
  Slot *s = slot_get ((ScriptedRuntime *) base, job_id, instance, FALSE);

  if (s == NULL)
    {
      memset (out, 0, sizeof *out);
      out->phase = STG_TASK_ABSENT;
      return;
    }
  *out = s->obs;
}

static void
slot_free (gpointer p)
{
  Slot *s = p;
  stg_clock_cancel_timer (s->rt->clock, s->timer);
  g_free (s->cause);
  g_free (s);
}

static void
sr_free (StgRuntime *base)
{
  ScriptedRuntime *rt = (ScriptedRuntime *) base;

  stg_clock_cancel_timer (rt->clock, rt->notice_timer);
  g_hash_table_unref (rt->slots);
  g_hash_table_unref (rt->causes);
  g_hash_table_unref (rt->behave);
  g_hash_table_unref (rt->delays);
  g_ptr_array_unref (rt->log);
  g_ptr_array_unref (rt->notices);
  g_free (rt);
}

static const StgRuntimeOps scripted_ops = {
  .apply = sr_apply,
  .kill = sr_kill,
  .restart = sr_restart,
  .observe = sr_observe,
  .validate = NULL,
  .free = sr_free,
};

ScriptedRuntime *
scripted_runtime_new (StgClock *clock, StgStore *store, gint64 delay_ms)
{
  ScriptedRuntime *rt = g_new0 (ScriptedRuntime, 1);

  rt->base.ops = &scripted_ops;
  rt->clock = clock;
  rt->store = store;
  rt->delay_ms = delay_ms;
  rt->slots = g_hash_table_new_full (stg_slot_key_hash, stg_slot_key_equal, g_free, slot_free);
  rt->causes = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  rt->behave = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  rt->delays = g_hash_table_new (NULL, NULL);
  rt->log = g_ptr_array_new_with_free_func (g_free);
  rt->notices = g_ptr_array_new_with_free_func (g_free);
  return rt;
}

StgRuntime *
scripted_runtime_base (ScriptedRuntime *rt)
{
  return &rt->base;
}

void
scripted_runtime_behave (ScriptedRuntime *rt, gint32 instance, gint64 config,
                         ScriptBehaviour behaviour)
{
  g_hash_table_insert (rt->behave, g_strdup_printf ("%d:%" G_GINT64_FORMAT, instance, config),
                       GINT_TO_POINTER (behaviour + 1));
}

void
scripted_runtime_delay (ScriptedRuntime *rt, gint32 instance, gint64 delay_ms)
{
  g_hash_table_insert (rt->delays, GINT_TO_POINTER (instance), GINT_TO_POINTER ((gint) delay_ms + 1));
}

void
scripted_runtime_seed (ScriptedRuntime *rt, gint64 job_id, gint32 instance, gint64 config,
                       gint64 since_ms)
{
  Slot *s = slot_get (rt, job_id, instance, TRUE);

  s->obs.phase = STG_TASK_RUNNING;
  s->obs.config_id = config;
  s->obs.healthy_since_ms = since_ms;
  s->obs.phase_since_ms = since_ms;
}

void
scripted_runtime_set (ScriptedRuntime *rt, gint64 job_id, gint32 instance, StgTaskPhase phase,
                      gint64 config, guint32 failures)
{
  Slot *s = slot_get (rt, job_id, instance, TRUE);

  stg_clock_cancel_timer (rt->clock, s->timer);
  s->timer = 0;
  s->pending = 0;
  s->obs.phase = phase;
  s->obs.config_id = config;
  s->obs.failures = failures;
  if (phase == STG_TASK_RUNNING)
    s->obs.healthy_since_ms = stg_clock_now_ms (rt->clock);
  changed (s);
}

GPtrArray *
scripted_runtime_log (ScriptedRuntime *rt)
{
  return rt->log;
}

gchar *
scripted_runtime_log_text (ScriptedRuntime *rt)
{
  g_autoptr (GString) s = g_string_new (NULL);

  for (guint i = 0; i < rt->log->len; i++)
    g_string_append_printf (s, "%s%s", i ? ", " : "", (const gchar *) rt->log->pdata[i]);
  return g_strdup (s->str);
}

void
scripted_runtime_clear_log (ScriptedRuntime *rt)
{
  g_ptr_array_set_size (rt->log, 0);
}

guint
scripted_runtime_running (ScriptedRuntime *rt, gint64 job_id)
{
  GHashTableIter it;
  gpointer value;
  guint n = 0;

  g_hash_table_iter_init (&it, rt->slots);
  while (g_hash_table_iter_next (&it, NULL, &value))
    {
      Slot *s = value;
      n += s->job_id == job_id && s->obs.phase == STG_TASK_RUNNING;
    }
  return n;
}

void
scripted_runtime_on_change (ScriptedRuntime *rt, void (*func) (gpointer), gpointer data)
{
  rt->on_change = func;
  rt->on_change_data = data;
}

void
scripted_runtime_cause (ScriptedRuntime *rt, gint32 instance, const gchar *cause)
{
  g_hash_table_insert (rt->causes, GINT_TO_POINTER (instance), g_strdup (cause));
}
