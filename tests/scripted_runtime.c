/* scripted_runtime.c: ScriptedRuntime, a runtime for engine tests (see
 * scripted_runtime.h). Test processes only. */
#include "config.h"

#include "scripted_runtime.h"

typedef struct
{
  StgSlot base; /* phase, config, failures, cause... (src/runtime/slot.h) */
  ScriptedRuntime *rt;
  guint timer;          /* the pending change */
  gint pending;         /* what the pending change does: 0 none, 1 settle a start, 2 finish a kill */
} Slot;

struct _ScriptedRuntime
{
  StgRuntime base;
  StgClock *clock;
  StgStore *store;
  gint64 delay_ms;
  StgSlots *slots;        /* Slot* */
  GHashTable *causes;     /* instance -> gchar*: the cause a failure of it reports */
  GHashTable *behave;     /* "instance:config" -> behaviour + 1 */
  GHashTable *delays;     /* instance -> delay + 1 */
  GPtrArray *log;
  GPtrArray *notices; /* gint64[2]: slots waiting to be announced */
  guint notice_timer;
  void (*on_change) (gpointer);
  gpointer on_change_data;
};

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

/* Announces a change of a slot on the next timer (StgSlotClass.announce). */
static void
announce (StgRuntime *base, gint64 job_id, gint32 instance)
{
  ScriptedRuntime *rt = (ScriptedRuntime *) base;
  gint64 *n = g_new (gint64, 2);

  n[0] = job_id;
  n[1] = instance;
  g_ptr_array_add (rt->notices, n);
  if (rt->notice_timer == 0)
    rt->notice_timer = stg_clock_add_timer (rt->clock, 0, flush_notices, rt);
  if (rt->on_change != NULL)
    rt->on_change (rt->on_change_data);
}

static void
slot_init (StgSlot *base)
{
  ((Slot *) base)->rt = (ScriptedRuntime *) stg_slots_runtime (base->table);
}

static void
slot_clear (StgSlot *base)
{
  Slot *s = (Slot *) base;

  stg_clock_cancel_timer (s->rt->clock, s->timer);
}

/* Its slots are made from the store like a real runtime's; their phases
 * are not recorded there (a step's commits are counted in the tests)... */
static const StgSlotClass scripted_slot_class = {
  .name = "scripted",
  .size = sizeof (Slot),
  .init = slot_init,
  .clear = slot_clear,
  .announce = announce,
};

static void
no_facts (const StgSlot *slot G_GNUC_UNUSED, StgInstanceRow *row G_GNUC_UNUSED)
{
}

/* ...unless asked (scripted_runtime_set_recording): then their TaskEvents
 * are, as a real runtime's, for what reads them (an update's timeline). */
static const StgSlotClass recorded_slot_class = {
  .name = "scripted",
  .size = sizeof (Slot),
  .init = slot_init,
  .clear = slot_clear,
  .facts = no_facts,
  .announce = announce,
};

static gboolean recording;

void
scripted_runtime_set_recording (gboolean on)
{
  recording = on;
}

static Slot *
slot_get (ScriptedRuntime *rt, gint64 job_id, gint32 instance, GError **error)
{
  return (Slot *) stg_slots_get (rt->slots, job_id, instance, error);
}

static Slot *
slot_find (ScriptedRuntime *rt, gint64 job_id, gint32 instance)
{
  return (Slot *) stg_slots_find (rt->slots, job_id, instance);
}

/* Shows @phase of @config, with the ScheduleStatus that goes with it. */
static void
show (Slot *s, StgTaskPhase phase, gint64 config)
{
  static const gint status[] = {
    [STG_TASK_ABSENT] = API_SCHEDULE_STATUS_INIT,
    [STG_TASK_PENDING] = API_SCHEDULE_STATUS_PENDING,
    [STG_TASK_STARTING] = API_SCHEDULE_STATUS_STARTING,
    [STG_TASK_RUNNING] = API_SCHEDULE_STATUS_RUNNING,
    [STG_TASK_KILLING] = API_SCHEDULE_STATUS_KILLING,
    [STG_TASK_FAILED] = API_SCHEDULE_STATUS_FAILED,
    [STG_TASK_FINISHED] = API_SCHEDULE_STATUS_FINISHED,
  };

  stg_slot_set_phase (&s->base, phase, config, status[phase], NULL);
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
  gint64 config = s->base.config_id;

  s->timer = 0;
  s->pending = 0;
  if (pending == 2)
    {
      stg_slot_remove (&s->base); /* gone: its instance row too */
      return;
    }
  switch (behaviour (rt, s->base.key.instance, config))
    {
    case SCRIPT_HEALTHY:
      stg_slot_healthy (&s->base, config, stg_clock_now_ms (rt->clock), NULL);
      break;
    case SCRIPT_CRASH:
      stg_slot_count_failure (&s->base, NULL);
      stg_slot_set_cause (&s->base,
                          g_hash_table_lookup (rt->causes, GINT_TO_POINTER (s->base.key.instance)));
      show (s, STG_TASK_FAILED, config);
      break;
    case SCRIPT_HANG:
      break;
    case SCRIPT_FINISH:
      show (s, STG_TASK_FINISHED, config);
      break;
    }
}

/* Shows @phase of @config now, and what @pending says after the delay. */
static void
begin (Slot *s, StgTaskPhase phase, gint64 config, gint pending)
{
  ScriptedRuntime *rt = s->rt;

  stg_clock_cancel_timer (rt->clock, s->timer);
  s->pending = pending;
  s->timer = stg_clock_add_timer (rt->clock, delay_of (rt, s->base.key.instance), settle, s);
  show (s, phase, config);
}

static gboolean
sr_apply (StgRuntime *base, gint64 job_id, gint32 instance, gint64 config, GError **error)
{
  ScriptedRuntime *rt = (ScriptedRuntime *) base;

  g_ptr_array_add (rt->log, g_strdup_printf ("apply %d %" G_GINT64_FORMAT, instance, config));
  Slot *s = slot_get (rt, job_id, instance, error);
  if (s == NULL)
    return FALSE;
  if (s->base.config_id == config && s->pending == 1)
    return TRUE;                                     /* already on its way */
  if (s->base.config_id == config && s->base.phase == STG_TASK_RUNNING)
    return TRUE;                                     /* already there */
  begin (s, STG_TASK_STARTING, config, 1);
  return TRUE;
}

static gboolean
sr_kill (StgRuntime *base, gint64 job_id, gint32 instance, GError **error)
{
  ScriptedRuntime *rt = (ScriptedRuntime *) base;
  Slot *s = slot_find (rt, job_id, instance);
  (void) error;

  g_ptr_array_add (rt->log, g_strdup_printf ("kill %d", instance));
  if (s == NULL || (s->base.phase == STG_TASK_ABSENT && s->pending != 1))
    return TRUE;
  begin (s, STG_TASK_KILLING, s->base.config_id, 2);
  return TRUE;
}

static gboolean
sr_restart (StgRuntime *base, gint64 job_id, gint32 instance, GError **error)
{
  ScriptedRuntime *rt = (ScriptedRuntime *) base;
  Slot *s = slot_find (rt, job_id, instance);
  (void) error;

  g_ptr_array_add (rt->log, g_strdup_printf ("restart %d", instance));
  if (s == NULL || s->base.config_id == 0)
    return TRUE;
  begin (s, STG_TASK_STARTING, s->base.config_id, 1);
  return TRUE;
}

static void
sr_observe (StgRuntime *base, gint64 job_id, gint32 instance, StgTaskObservation *out)
{
  Slot *s = slot_find ((ScriptedRuntime *) base, job_id, instance);

  stg_slot_observe (s != NULL ? &s->base : NULL, out);
}

static void
sr_free (StgRuntime *base)
{
  ScriptedRuntime *rt = (ScriptedRuntime *) base;

  stg_clock_cancel_timer (rt->clock, rt->notice_timer);
  stg_slots_free (rt->slots);
  g_hash_table_unref (rt->causes);
  g_hash_table_unref (rt->behave);
  g_hash_table_unref (rt->delays);
  g_ptr_array_unref (rt->log);
  g_ptr_array_unref (rt->notices);
  g_free (rt);
}

static gint
by_int (gconstpointer a, gconstpointer b)
{
  return *(const gint *) a - *(const gint *) b;
}

/* Logs the batch's instances; finds nothing gone. */
static gboolean
sr_reconcile (StgRuntime *base, gboolean implicit, GHashTable *tasks, gchar **summary,
              GError **error)
{
  ScriptedRuntime *rt = (ScriptedRuntime *) base;
  g_autoptr (GArray) ids = g_array_new (FALSE, FALSE, sizeof (gint));
  g_autoptr (GString) text = g_string_new (implicit ? "reconcile implicit" : "reconcile ");
  GHashTableIter it;
  gpointer key;
  (void) error;

  if (tasks != NULL)
    g_hash_table_iter_init (&it, tasks);
  while (tasks != NULL && g_hash_table_iter_next (&it, &key, NULL))
    g_array_append_val (ids, ((StgSlotKey *) key)->instance);
  g_array_sort (ids, by_int);
  for (guint i = 0; i < ids->len; i++)
    g_string_append_printf (text, "%s%d", i ? ";" : "", g_array_index (ids, gint, i));
  g_ptr_array_add (rt->log, g_strdup (text->str));
  *summary = g_strdup_printf ("%u looked at", ids->len);
  return TRUE;
}

static const StgRuntimeOps scripted_ops = {
  .reconcile = sr_reconcile,
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
  rt->slots = stg_slots_new (&rt->base, store, clock,
                             recording ? &recorded_slot_class : &scripted_slot_class);
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

/* The slot (job @job_id, @instance) of a test, which must exist. */
static Slot *
test_slot (ScriptedRuntime *rt, gint64 job_id, gint32 instance)
{
  g_autoptr (GError) error = NULL;
  Slot *s = slot_get (rt, job_id, instance, &error);

  if (s == NULL)
    g_error ("scripted runtime: %s", error->message);
  return s;
}

void
scripted_runtime_seed (ScriptedRuntime *rt, gint64 job_id, gint32 instance, gint64 config,
                       gint64 since_ms)
{
  Slot *s = test_slot (rt, job_id, instance);

  /* Found running by a restarted daemon: nothing is announced. */
  stg_slot_assume (&s->base, STG_TASK_RUNNING, API_SCHEDULE_STATUS_RUNNING);
  s->base.config_id = config;
  s->base.healthy_since_ms = since_ms;
  s->base.phase_since_ms = since_ms;
}

void
scripted_runtime_set (ScriptedRuntime *rt, gint64 job_id, gint32 instance, StgTaskPhase phase,
                      gint64 config, guint32 failures)
{
  Slot *s = test_slot (rt, job_id, instance);

  stg_clock_cancel_timer (rt->clock, s->timer);
  s->timer = 0;
  s->pending = 0;
  s->base.failures = failures;
  if (phase == STG_TASK_RUNNING)
    s->base.healthy_since_ms = stg_clock_now_ms (rt->clock);
  show (s, phase, config);
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

  stg_slots_iter_init (rt->slots, &it);
  while (g_hash_table_iter_next (&it, NULL, &value))
    {
      Slot *s = value;
      n += s->base.key.job_id == job_id && s->base.phase == STG_TASK_RUNNING;
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
