/* runtime_fixture.c: see runtime_fixture.h. Test processes only. */
#include "config.h"

#include "runtime_fixture.h"

Fx fx;

static void
on_notice (gpointer data, gint64 job_id, gint32 instance)
{
  (void) data;
  (void) job_id;
  (void) instance;
  fx.notices++;
}

/* (Re)makes the fixture's runtime with ports @min-@max. */
void
make_runtime (gint min, gint max)
{
  make_runtime_on (min, max, NULL);
}

void
make_runtime_on (gint min, gint max, GHashTable *attributes)
{
  g_autoptr (GError) error = NULL;
  StgLocalOptions o;

  g_clear_pointer (&fx.rt, stg_runtime_free);
  stg_local_options_init (&o);
  g_free (o.data_dir);
  o.data_dir = g_strdup (fx.dir);
  o.port_min = min;
  o.port_max = max;
  o.disk_interval_ms = fx.disk_interval_ms;
  o.attributes = attributes != NULL ? g_hash_table_ref (attributes) : NULL;
  fx.rt = stg_local_runtime_new (fx.store, fx.clock, &o, &error);
  stg_local_options_clear (&o);
  ck_assert_msg (fx.rt != NULL, "runtime: %s", error ? error->message : "");
  stg_runtime_set_listener (fx.rt, on_notice, NULL);
}

void
stg_rt_setup (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree gchar *db = NULL;

  memset (&fx, 0, sizeof fx);
  fx.dir = stg_test_tmpdir ();
  db = g_build_filename (fx.dir, "stagger.db", NULL);
  fx.store = stg_store_open (db, &error);
  ck_assert_ptr_nonnull (fx.store);
  fx.clock = stg_clock_new_real ();
  make_runtime (30000, 30999);
}

void
stg_rt_teardown (void)
{
  g_clear_pointer (&fx.rt, stg_runtime_free);
  stg_test_kill_instances (fx.dir);
  g_clear_pointer (&fx.clock, stg_clock_free);
  g_clear_pointer (&fx.store, stg_store_close);
  stg_test_rmtree (fx.dir);
  g_clear_pointer (&fx.dir, g_free);
}

/* ---- helpers ----------------------------------------------------------------- */

gchar *
server (void)
{
  return stg_test_program ("stagger-example-server");
}

/* A config of job www/prod/NAME with executor data @data and named ports
 * (space-separated, may be ""). */
ApiTaskConfig *
config (const gchar *name, const gchar *data, const gchar *ports, gboolean service)
{
  g_autoptr (ApiJobKey) key = stg_job_key_new ("www", "prod", name);
  g_autoptr (ApiExecutorConfig) exec = g_object_new (API_TYPE_EXECUTOR_CONFIG, "name", "stagger",
                                                     "data", data, NULL);
  ApiTaskConfig *t = g_object_new (API_TYPE_TASK_CONFIG, "job", key, "isService", service,
                                   "maxTaskFailures", 0, "executorConfig", exec, NULL);
  g_auto (GStrv) names = g_strsplit (ports, " ", -1);
  for (guint i = 0; names[i] != NULL; i++)
    if (names[i][0] != '\0')
      g_hash_table_add (t->resources,
                        g_object_new (API_TYPE_RESOURCE, "namedPort", names[i], NULL));
  t->__isset_resources = TRUE;
  return t;
}

/* Stores @t and a job of @n instances running it; returns the job id. */
gint64
make_job (ApiTaskConfig *t, gint32 n, gint64 *config_id)
{
  g_autoptr (GError) error = NULL;
  gint64 job_id = 0;

  ck_assert_msg (stg_runtime_validate (fx.rt, t, &error), "invalid: %s",
                 error ? error->message : "");
  ck_assert (stg_store_put_config (fx.store, t, config_id, NULL, &error));
  ck_assert (stg_store_create_job (fx.store, t->job, "www", *config_id, n, 0, &job_id, &error));
  return job_id;
}

gint64
add_config (ApiTaskConfig *t)
{
  g_autoptr (GError) error = NULL;
  gint64 id = 0;
  ck_assert_msg (stg_runtime_validate (fx.rt, t, &error), "invalid: %s",
                 error ? error->message : "");
  ck_assert (stg_store_put_config (fx.store, t, &id, NULL, &error));
  return id;
}

void
apply (gint64 job, gint32 i, gint64 config_id)
{
  g_autoptr (GError) error = NULL;

  ck_assert (stg_store_set_instance_config (fx.store, job, i, config_id, &error));
  ck_assert_msg (stg_runtime_apply (fx.rt, job, i, config_id, &error), "apply: %s",
                 error ? error->message : "");
}

typedef struct
{
  gint64 job;
  gint32 instance;
  StgTaskPhase phase;
  gint64 config;    /* 0: any */
  guint32 failures; /* at least */
} Want;

static gboolean
reached (gpointer data)
{
  Want *w = data;
  StgTaskObservation o;

  stg_runtime_observe (fx.rt, w->job, w->instance, &o);
  return o.phase == w->phase && (w->config == 0 || o.config_id == w->config) &&
         o.failures >= w->failures;
}

void
wait_for (gint64 job, gint32 i, StgTaskPhase phase, gint64 config, guint32 failures, guint ms)
{
  Want w = { job, i, phase, config, failures };
  StgTaskObservation o;

  if (!stg_test_wait (reached, &w, ms))
    {
      stg_runtime_observe (fx.rt, job, i, &o);
      ck_abort_msg ("instance %d: wanted %s (config %" G_GINT64_FORMAT ", failures >= %u), got %s "
                    "(config %" G_GINT64_FORMAT ", failures %u)",
                    i, stg_task_phase_name (phase), config, failures, stg_task_phase_name (o.phase),
                    o.config_id, o.failures);
    }
}

StgTaskObservation
observe (gint64 job, gint32 i)
{
  StgTaskObservation o;
  stg_runtime_observe (fx.rt, job, i, &o);
  return o;
}

/* The task events of an instance, as one string of "STATUS: message" lines. */
gchar *
events (gint64 job, gint32 i)
{
  g_autoptr (GPtrArray) list = stg_store_list_task_events (fx.store, job, i, 100, NULL);
  g_autoptr (GString) s = g_string_new (NULL);

  for (guint k = 0; list != NULL && k < list->len; k++)
    {
      ApiTaskEvent *e = list->pdata[k];
      g_string_append_printf (s, "%d: %s\n", e->status, e->__isset_message ? e->message : "");
    }
  return g_strdup (s->str);
}

gint
pid_of (gint64 job, gint32 i)
{
  return (gint) stg_local_runtime_pid (fx.rt, job, i);
}

/* A server config: HTTP-checked, quick checks. @extra: more argv, JSON. */
gchar *
server_data (const gchar *extra_argv, const gchar *extra)
{
  g_autofree gchar *bin = server ();
  return g_strdup_printf (
      "{\"argv\": [\"%s\", \"--port\", \"{{ports[http]}}\"%s],"
      " \"health_check\": {\"http\": {\"endpoint\": \"/health\"},"
      " \"initial_interval_secs\": 2, \"interval_secs\": 0.05, \"timeout_secs\": 1}%s}",
      bin, extra_argv ? extra_argv : "", extra ? extra : "");
}

static gboolean
quit_loop (gpointer loop)
{
  g_main_loop_quit (loop);
  return G_SOURCE_REMOVE;
}

/* Runs the main loop for @ms (things must keep happening meanwhile). */
void
spin (guint ms)
{
  g_autoptr (GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_timeout_add (ms, quit_loop, loop);
  g_main_loop_run (loop);
}
