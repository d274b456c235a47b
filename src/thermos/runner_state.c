/* runner_state.c: the state file, .thermos_state.json in the sandbox: the
 * task's state and each process's (its state, run number, pid, start and
 * stop times, exit status), for staggerd and `stagger task logs` to read.
 * Written whole after every change, through a temporary file renamed over
 * the old one (g_file_set_contents_full). The format is in
 * stagger-thermos(8). Main-loop thread only.
 */
#include "config.h"

#include <unistd.h>

#include <json-glib/json-glib.h>

#include "common/json_write.h"
#include "thermos/runner.h"
#include "common/strings.h"

#define STATE_VERSION 1

static const gchar *const stage_names[] = { "ACTIVE",  "CLEANING", "FINALIZING",
                                            "SUCCESS", "FAILED",   "KILLED" };
static const gchar *const run_state_names[] = { "WAITING", "RUNNING", "SUCCESS", "FAILED",
                                                "KILLED" };

const gchar *
stg_runner_stage_name (StgRunnerStage stage)
{
  return stage_names[stage];
}

static const gchar *
run_state_name (StgRunState state)
{
  return run_state_names[state];
}

static void
add_time (JsonBuilder *b, const gchar *name, gint64 us)
{
  json_builder_set_member_name (b, name);
  if (us == 0)
    json_builder_add_null_value (b);
  else
    json_builder_add_double_value (b, (gdouble) us / G_USEC_PER_SEC);
}

static void
add_int (JsonBuilder *b, const gchar *name, gint64 value)
{
  json_builder_set_member_name (b, name);
  json_builder_add_int_value (b, value);
}

static void
add_string (JsonBuilder *b, const gchar *name, const gchar *value)
{
  json_builder_set_member_name (b, name);
  json_builder_add_string_value (b, value);
}

static void
add_bool (JsonBuilder *b, const gchar *name, gboolean value)
{
  json_builder_set_member_name (b, name);
  json_builder_add_boolean_value (b, value);
}

static void
add_process (JsonBuilder *b, const StgRunnerProc *p)
{
  json_builder_begin_object (b);
  add_string (b, "name", p->spec->name);
  add_string (b, "state", run_state_name (p->state));
  add_int (b, "run", p->run);
  add_int (b, "runs", p->runs);
  add_int (b, "pid", p->pid);
  add_time (b, "start_time", p->start_time);
  add_time (b, "stop_time", p->stop_time);
  json_builder_set_member_name (b, "exit_status");
  if (p->exit_status < 0)
    json_builder_add_null_value (b);
  else
    json_builder_add_int_value (b, p->exit_status);
  json_builder_set_member_name (b, "signal");
  if (p->signal == 0)
    json_builder_add_null_value (b);
  else
    json_builder_add_int_value (b, p->signal);
  add_bool (b, "daemon", p->spec->daemon);
  add_bool (b, "ephemeral", p->spec->ephemeral);
  add_bool (b, "final", p->spec->final);
  json_builder_end_object (b);
}

/* "announce": the ServerSet, the member (while it is one), what it holds
 * (Aurora's member JSON: the endpoints) and what went wrong last (while
 * something is wrong). */
static void
add_announce (JsonBuilder *b, StgServerSet *set)
{
  const gchar *member = stg_serverset_member (set);
  const gchar *problem = stg_serverset_problem (set);
  g_autoptr (JsonNode) data = json_from_string (stg_serverset_data (set), NULL);

  json_builder_set_member_name (b, "announce");
  json_builder_begin_object (b);
  add_string (b, "path", stg_serverset_path (set));
  if (member != NULL)
    add_string (b, "member", member);
  if (data != NULL)
    {
      json_builder_set_member_name (b, "data");
      json_builder_add_value (b, g_steal_pointer (&data));
    }
  if (problem != NULL && stg_serverset_wanted (set))
    add_string (b, "problem", problem);
  json_builder_end_object (b);
}

static JsonNode *
state_json (StgRunner *r)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (GPtrArray) ports = g_ptr_array_new ();
  GHashTableIter it;
  gpointer name;

  json_builder_begin_object (b);
  add_int (b, "version", STATE_VERSION);
  add_string (b, "task_id", r->task_id);
  add_string (b, "task", r->job->task.name);
  add_int (b, "instance", r->vars.instance);
  add_string (b, "hostname", r->hostname);
  add_string (b, "user", r->user);
  add_int (b, "runner_pid", getpid ());
  add_time (b, "launch_time", r->launch_time);
  add_string (b, "state", stg_runner_stage_name (r->stage));
  json_builder_set_member_name (b, "ports");
  json_builder_begin_object (b);
  g_hash_table_iter_init (&it, r->ports);
  while (g_hash_table_iter_next (&it, &name, NULL))
    g_ptr_array_add (ports, name);
  g_ptr_array_sort (ports, stg_compare_string_ptrs);
  for (guint i = 0; i < ports->len; i++)
    add_int (b, ports->pdata[i], GPOINTER_TO_INT (g_hash_table_lookup (r->ports, ports->pdata[i])));
  json_builder_end_object (b);
  json_builder_set_member_name (b, "processes");
  json_builder_begin_array (b);
  for (guint i = 0; i < r->n_procs; i++)
    add_process (b, &r->procs[i]);
  json_builder_end_array (b);
  if (r->announcer != NULL)
    add_announce (b, r->announcer);
  json_builder_end_object (b);
  return json_builder_get_root (b);
}

void
stg_runner_announce_changed (StgServerSet *set, gpointer runner)
{
  g_autoptr (GError) error = NULL;

  (void) set;
  if (!stg_runner_state_write (runner, &error))
    g_warning ("cannot write the state file: %s", error->message);
}

gboolean
stg_runner_state_write (StgRunner *r, GError **error)
{
  g_autoptr (JsonNode) root = state_json (r);
  gsize length = 0;
  g_autofree gchar *text = stg_json_write (root, TRUE, &length);
  g_autofree gchar *path = g_build_filename (r->sandbox, STG_RUNNER_STATE_FILE, NULL);

  /* A temporary file renamed over the old one. */
  return g_file_set_contents_full (path, text, (gssize) length, G_FILE_SET_CONTENTS_CONSISTENT,
                                   0644, error);
}
