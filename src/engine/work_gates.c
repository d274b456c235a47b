/* work_gates.c: instance gates: the checks an update makes before each
 * instance changes and after it has been healthy for the watch time
 * (JobUpdateSettings.instanceGatesBefore/After), in both directions.
 *
 * A work item's gates run one after the other through gate.c, each with
 * its retries or its waitSecs; a gate's last attempt leaves its verdict in
 * the work item (StgWork.gate_verdict, gate_message) and notes the slot,
 * so the next news step's stg_work_evaluate (work.c) takes it up: records
 * it, moves on, or counts the failure as a failed health check would be
 * counted. The phases are drawn in work_state.h. Each gate of an
 * instance gets the instance's {{instance}} and {{ports[NAME]}} (and the
 * job's names, {{version}} the one it moves to) in its URL or command,
 * and a shell gate STAGGER_JOB, STAGGER_INSTANCE, STAGGER_FROM_VERSION,
 * STAGGER_TO_VERSION (the right way round when rolling back),
 * STAGGER_GATE_PHASE and STAGGER_DIRECTION. Calls step.c, gate.c, the
 * store and the runtime's templates. Main-loop thread only.
 */
#include "config.h"

#include <string.h>

#include "common/jobkey.h"
#include "common/templates.h"
#include "engine/engine_private.h"
#include "engine/gate_private.h"
#include "engine/settings_private.h"
#include "engine/step_private.h"
#include "engine/update_private.h"
#include "engine/work_state.h"

#define bad(error, ...) \
  (g_set_error (error, STG_ENGINE_ERROR, STG_ENGINE_ERROR_INVALID, __VA_ARGS__), FALSE)

#define MAX_INSTANCE_GATES 20

static const gchar *const phase_names[] = { "", "before", "after", "after" };

/* ---- checking ---------------------------------------------------------------------- */

/* @text with each {{...}} as "1": a URL with templates still reads as
 * one (the templates are checked against the task, and filled in, later). */
static gchar *
placeholders (const gchar *text)
{
  GString *out = g_string_new (NULL);

  for (const gchar *p = text; *p != '\0';)
    {
      const gchar *open = strstr (p, "{{");
      const gchar *close = open ? strstr (open + 2, "}}") : NULL;
      if (close == NULL)
        {
          g_string_append (out, p);
          break;
        }
      g_string_append_len (out, p, open - p);
      g_string_append_c (out, '1');
      p = close + 2;
    }
  return g_string_free (out, FALSE);
}

/* Checks @gate as any gate, its templates as placeholders. */
static gboolean
check_gate (const ApiRolloutGate *gate, const gchar *what, GError **error)
{
  if (gate == NULL)
    return stg_gate_check (NULL, what, error);
  g_autoptr (ApiRolloutGate) copy = stg_thrift_copy ((gpointer) gate);

  if (copy->__isset_url && copy->url != NULL)
    {
      g_autofree gchar *url = placeholders (copy->url);
      g_object_set (copy, "url", url, NULL);
    }
  return stg_gate_check (copy, what, error);
}

static gboolean
parse_list (GPtrArray *in, gboolean isset, const gchar *what, GPtrArray **out, GError **error)
{
  if (!isset || in == NULL || in->len == 0)
    return TRUE;
  if (in->len > MAX_INSTANCE_GATES)
    return bad (error, "%s has %u gates; at most %d", what, in->len, MAX_INSTANCE_GATES);
  *out = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < in->len; i++)
    {
      g_autofree gchar *field = g_strdup_printf ("%s[%u]", what, i);
      if (!check_gate (in->pdata[i], field, error))
        return FALSE;
      g_ptr_array_add (*out, g_object_ref (in->pdata[i]));
    }
  return TRUE;
}

gboolean
stg_work_gates_parse (const ApiJobUpdateSettings *in, const gchar *what, StgSettings *out,
                      GError **error)
{
  g_autofree gchar *before = g_strdup_printf ("%s.instanceGatesBefore", what);
  g_autofree gchar *after = g_strdup_printf ("%s.instanceGatesAfter", what);

  return parse_list (in->instanceGatesBefore, in->__isset_instanceGatesBefore, before,
                     &out->instance_gates[0], error) &&
         parse_list (in->instanceGatesAfter, in->__isset_instanceGatesAfter, after,
                     &out->instance_gates[1], error);
}

/* The templates of @text (nullable), checked against the task's ports;
 * {{cluster}} has no value here. */
static gboolean
check_text (const gchar *text, const gchar *const *ports, const gchar *what, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autofree gchar *checked = NULL;

  if (text == NULL)
    return TRUE;
  if (strstr (text, "{{cluster}}") != NULL)
    return bad (error, "%s: an instance gate has no {{cluster}} (write the cluster's name)", what);
  checked = stg_template_expand (text, NULL, ports, &local);
  if (checked == NULL)
    return bad (error, "%s: %s", what, local->message);
  return TRUE;
}

gboolean
stg_work_gates_check_task (const StgSettings *s, const ApiTaskConfig *task, GError **error)
{
  g_auto (GStrv) ports = stg_task_port_names (task);

  for (guint p = 0; p < 2; p++)
    for (guint i = 0; s->instance_gates[p] != NULL && i < s->instance_gates[p]->len; i++)
      {
        const ApiRolloutGate *g = s->instance_gates[p]->pdata[i];
        g_autofree gchar *what = g_strdup_printf ("request.settings.instanceGates%s[%u]",
                                                  p == 0 ? "Before" : "After", i);
        if (!check_text (g->__isset_url ? g->url : NULL, (const gchar *const *) ports, what,
                         error) ||
            !check_text (g->__isset_command ? g->command : NULL, (const gchar *const *) ports, what,
                         error))
          return FALSE;
      }
  return TRUE;
}

/* ---- running ----------------------------------------------------------------------- */

static GPtrArray *
phase_gates (StgUpdate *u, gint phase)
{
  return u->s.instance_gates[phase == STG_WORK_GATES_BEFORE ? 0 : 1];
}

/* The versions @w moves from and to in @u's direction. */
static void
versions (StgUpdate *u, StgWork *w, gint *from, gint *to)
{
  StgStore *store = u->engine->store;
  gint64 a = u->back ? w->to_config : w->from_config;
  gint64 b = u->back ? w->from_config : w->to_config;

  *from = a != 0 ? stg_store_config_version (store, a) : 0;
  *to = b != 0 ? stg_store_config_version (store, b) : 0;
}

/* @gate with the instance's templates expanded; NULL with *@why. */
static ApiRolloutGate *
expanded (StgUpdate *u, StgWork *w, const ApiRolloutGate *gate, gint to, gchar **why)
{
  g_autoptr (ApiRolloutGate) copy = stg_thrift_copy ((gpointer) gate);
  g_autoptr (GHashTable) ports = stg_store_list_ports (u->engine->store, u->job, w->instance, NULL);
  StgTemplateVars vars = { .instance = w->instance,
                           .cluster = "",
                           .role = u->job->role,
                           .environment = u->job->environment,
                           .name = u->job->name,
                           .version = to,
                           .ports = ports };
  g_autoptr (GError) error = NULL;

  if (copy->__isset_url && copy->url != NULL)
    {
      g_autofree gchar *url = stg_template_expand (copy->url, &vars, NULL, &error);
      if (url == NULL)
        goto failed;
      g_object_set (copy, "url", url, NULL);
    }
  if (copy->__isset_command && copy->command != NULL)
    {
      g_autofree gchar *command = stg_template_expand (copy->command, &vars, NULL, &error);
      if (command == NULL)
        goto failed;
      g_object_set (copy, "command", command, NULL);
    }
  return g_steal_pointer (&copy);

failed:
  *why = g_strdup_printf ("cannot fill in the gate's templates: %s", error->message);
  return NULL;
}

static void
on_result (gpointer data, guint attempt, gboolean passed, gboolean last, const gchar *message)
{
  StgWork *w = data;
  StgUpdate *u = w->owner;
  const ApiRolloutGate *g = phase_gates (u, w->gates)->pdata[w->gates_passed];

  g_debug ("engine: update %s: instance %d: %s gate '%s' attempt %u %s: %s", u->uid, w->instance,
           phase_names[w->gates], g->name, attempt, passed ? "passed" : "failed", message);
  g_free (w->gate_message);
  w->gate_message = g_strdup_printf ("%s gate '%s' %s (attempt %u): %s", phase_names[w->gates],
                                     g->name, passed ? "passed" : "failed", attempt, message);
  g_free (w->gate_said);
  w->gate_said = g_strdup_printf ("%s said %s", g->name, message);
  if (!last)
    return;
  g_clear_pointer (&w->gate_run, stg_gate_run_free);
  w->gate_verdict = passed ? 1 : -1;
  stg_engine_note (u->engine, u->job_id, w->instance);
}

/* Starts trying the phase's current gate. */
static void
try_gate (StgUpdate *u, StgWork *w)
{
  const ApiRolloutGate *g = phase_gates (u, w->gates)->pdata[w->gates_passed];
  g_autofree gchar *why = NULL;
  gint from = 0, to = 0;

  versions (u, w, &from, &to);
  w->gate_verdict = 0;
  g_autoptr (ApiRolloutGate) gate = expanded (u, w, g, to, &why);
  if (gate == NULL)
    {
      g_free (w->gate_message);
      w->gate_message = g_strdup_printf ("%s gate '%s' failed: %s", phase_names[w->gates], g->name,
                                         why);
      g_free (w->gate_said);
      w->gate_said = g_strdup_printf ("%s said %s", g->name, why);
      w->gate_verdict = -1;
      stg_engine_note (u->engine, u->job_id, w->instance);
      return;
    }
  g_auto (GStrv) env = stg_gate_environ (u->job, from, to);
  g_autofree gchar *instance = g_strdup_printf ("%d", w->instance);
  env = g_environ_setenv (env, "STAGGER_INSTANCE", instance, TRUE);
  env = g_environ_setenv (env, "STAGGER_GATE_PHASE", phase_names[w->gates], TRUE);
  env = g_environ_setenv (env, "STAGGER_DIRECTION", u->back ? "rollback" : "forward", TRUE);
  w->gate_run = stg_gate_run_start (u->engine, gate, u->job->role, (const gchar *const *) env,
                                    on_result, w);
}

gboolean
stg_work_gates_begin (StgUpdate *u, guint idx, StgWorkGates phase)
{
  StgWork *w = &g_array_index (u->work, StgWork, idx);
  GPtrArray *gates = phase_gates (u, phase);
  gint64 leaving = u->back ? w->to_config : w->from_config;
  gint64 target = u->back ? w->from_config : w->to_config;

  stg_work_gates_stop (w);
  if (gates == NULL || gates->len == 0 || (phase == STG_WORK_GATES_BEFORE && leaving == 0) ||
      (phase != STG_WORK_GATES_BEFORE && target == 0))
    return FALSE;
  w->owner = u;
  w->gates = phase;
  w->gates_passed = 0;
  stg_update_touch (u); /* the progress says which instances wait for their before gates */
  try_gate (u, w);
  return TRUE;
}

gboolean
stg_work_gates_next (StgUpdate *u, guint idx)
{
  StgWork *w = &g_array_index (u->work, StgWork, idx);

  if (++w->gates_passed >= phase_gates (u, w->gates)->len)
    return FALSE;
  try_gate (u, w);
  return TRUE;
}

void
stg_work_gates_resume (StgUpdate *u, guint idx)
{
  StgWork *w = &g_array_index (u->work, StgWork, idx);

  if (w->gate_run == NULL && w->gate_verdict == 0 &&
      (w->gates == STG_WORK_GATES_BEFORE || w->gates == STG_WORK_GATES_AFTER))
    {
      w->owner = u;
      try_gate (u, w);
    }
}

void
stg_work_gates_stop (StgWork *w)
{
  g_clear_pointer (&w->gate_run, stg_gate_run_free);
  g_clear_pointer (&w->gate_message, g_free);
  g_clear_pointer (&w->gate_said, g_free);
  w->gates = STG_WORK_GATES_NONE;
  w->gates_passed = 0;
  w->gate_verdict = 0;
}

gchar **
stg_update_gates_environ (StgUpdate *u)
{
  gint from = 0, to = 0;

  for (guint i = 0; i < u->work->len && (from == 0 || to == 0); i++)
    {
      StgWork *w = &g_array_index (u->work, StgWork, i);
      gint a = 0, b = 0;
      versions (u, w, &a, &b);
      from = from ? from : a;
      to = to ? to : b;
    }
  return stg_gate_environ (u->job, from, to);
}
