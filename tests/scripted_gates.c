/* scripted_gates.c: the scripted gate runner of the engine's Check suites
 * (see scripted_gates.h). Test processes only. */
#include "config.h"

#include <string.h>

#include "scripted_gates.h"

struct _ScriptedGates
{
  StgGateRunner parent;
  StgClock *clock;
  GHashTable *scripts; /* name -> GQueue of gchar* */
  GHashTable *envs;    /* name -> the environment of its last attempt (GStrv) */
  GHashTable *counts;  /* name -> attempts (GUINT_TO_POINTER) */
  GHashTable *rules;   /* name -> "VAR=VALUE": it fails whenever its environment says so */
  GPtrArray *log;
  GPtrArray *pending; /* Attempt* */
};

typedef struct
{
  ScriptedGates *g;
  GCancellable *cancel;
  StgGateDone done;
  gpointer data;
  gboolean passed;
  gchar *message;
  guint timer;
} Attempt;

static void
attempt_free (gpointer data)
{
  Attempt *a = data;
  stg_clock_cancel_timer (a->g->clock, a->timer);
  g_object_unref (a->cancel);
  g_free (a->message);
  g_free (a);
}

void
scripted_gates_sweep (ScriptedGates *g)
{
  for (guint i = g->pending->len; i > 0; i--)
    if (g_cancellable_is_cancelled (((Attempt *) g->pending->pdata[i - 1])->cancel))
      g_ptr_array_remove_index (g->pending, i - 1);
}

static void
answer (gpointer data)
{
  Attempt *a = data;
  ScriptedGates *g = a->g;
  guint idx;

  a->timer = 0;
  if (g_ptr_array_find (g->pending, a, &idx))
    g_ptr_array_steal_index_fast (g->pending, idx);
  if (!g_cancellable_is_cancelled (a->cancel))
    a->done (a->data, a->passed, a->message);
  attempt_free (a);
}

static void
gates_run (StgGateRunner *runner, const ApiRolloutGate *gate, const gchar *role,
           const gchar *const *env, GCancellable *cancel, StgGateDone done, gpointer data)
{
  ScriptedGates *g = (ScriptedGates *) runner;
  GQueue *q = g_hash_table_lookup (g->scripts, gate->name);
  g_autofree gchar *script = q ? g_queue_pop_head (q) : NULL;
  Attempt *a = g_new0 (Attempt, 1);
  (void) role;

  scripted_gates_sweep (g);
  g_ptr_array_add (g->log, g_strdup (gate->name));
  g_hash_table_insert (g->envs, g_strdup (gate->name), g_strdupv ((gchar **) env));
  g_hash_table_insert (g->counts, g_strdup (gate->name),
                       GUINT_TO_POINTER (scripted_gates_attempts (g, gate->name) + 1));
  a->g = g;
  a->cancel = g_object_ref (cancel);
  a->done = done;
  a->data = data;
  g_ptr_array_add (g->pending, a);
  const gchar *rule = g_hash_table_lookup (g->rules, gate->name);
  if (rule != NULL && env != NULL && g_strv_contains (env, rule))
    {
      g_free (script);
      script = g_strdup_printf ("fail:%s", rule);
    }
  if (script != NULL && g_str_equal (script, "hang"))
    return;
  a->passed = script == NULL || g_str_has_prefix (script, "pass");
  a->message = g_strdup (script && strchr (script, ':') ? strchr (script, ':') + 1 : "ok");
  a->timer = stg_clock_add_timer (g->clock, 100, answer, a);
}

static void
gates_free (StgGateRunner *runner)
{
  (void) runner; /* the ScriptedGates owns it */
}

static const StgGateRunnerOps gates_ops = { gates_run, gates_free };

static void
queue_free (gpointer q)
{
  g_queue_free_full (q, g_free);
}

ScriptedGates *
scripted_gates_new (StgClock *clock)
{
  ScriptedGates *g = g_new0 (ScriptedGates, 1);

  g->parent.ops = &gates_ops;
  g->clock = clock;
  g->scripts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, queue_free);
  g->envs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_strfreev);
  g->counts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g->rules = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g->log = g_ptr_array_new_with_free_func (g_free);
  g->pending = g_ptr_array_new_with_free_func (attempt_free);
  return g;
}

StgGateRunner *
scripted_gates_runner (ScriptedGates *g)
{
  return &g->parent;
}

void
scripted_gates_free (ScriptedGates *g)
{
  if (g == NULL)
    return;
  g_hash_table_unref (g->scripts);
  g_hash_table_unref (g->envs);
  g_hash_table_unref (g->counts);
  g_hash_table_unref (g->rules);
  g_ptr_array_unref (g->log);
  g_ptr_array_unref (g->pending);
  g_free (g);
}

void
scripted_gates_script (ScriptedGates *g, const gchar *name, const gchar *outcome)
{
  GQueue *q = g_hash_table_lookup (g->scripts, name);
  if (q == NULL)
    {
      q = g_queue_new ();
      g_hash_table_insert (g->scripts, g_strdup (name), q);
    }
  g_queue_push_tail (q, g_strdup (outcome));
}

void
scripted_gates_fail_when (ScriptedGates *g, const gchar *name, const gchar *var, const gchar *value)
{
  g_hash_table_insert (g->rules, g_strdup (name), g_strdup_printf ("%s=%s", var, value));
}

gchar *
scripted_gates_log (ScriptedGates *g)
{
  g_ptr_array_add (g->log, NULL);
  gchar *text = g_strjoinv (" ", (gchar **) g->log->pdata);
  g_ptr_array_set_size (g->log, 0);
  return text;
}

const gchar *
scripted_gates_env (ScriptedGates *g, const gchar *name, const gchar *var)
{
  gchar **env = g_hash_table_lookup (g->envs, name);
  return env ? g_environ_getenv (env, var) : NULL;
}

guint
scripted_gates_attempts (ScriptedGates *g, const gchar *name)
{
  return GPOINTER_TO_UINT (g_hash_table_lookup (g->counts, name));
}
