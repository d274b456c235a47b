/* engine_fixture.c: see engine_fixture.h. Test processes only. */
#include "config.h"

#include <glib/gstdio.h>

#include "common/enums.h"
#include "common/jobkey.h"
#include "engine_fixture.h"
#include "testutil.h"

Fx fx;

static void
open_all (void)
{
  g_autoptr (GError) error = NULL;

  fx.store = stg_store_open (fx.db, &error);
  ck_assert_msg (fx.store != NULL, "store: %s", error ? error->message : "");
  fx.rt = scripted_runtime_new (fx.clock, fx.store, 100);
  fx.engine = stg_engine_new (fx.store, fx.clock, scripted_runtime_base (fx.rt),
                              fx.custom_limits ? &fx.limits : NULL);
}

void
fx_setup (void)
{
  memset (&fx, 0, sizeof fx);
  fx.dir = stg_test_tmpdir ();
  fx.db = g_build_filename (fx.dir, "stagger.db", NULL);
  fx.clock = stg_clock_new_fake (T0);
  fx.key = stg_job_key_new ("www", "prod", "app");
  fx.min_running = G_MAXINT;
  open_all ();
}

static void
close_all (void)
{
  g_clear_pointer (&fx.engine, stg_engine_free);
  if (fx.rt != NULL)
    stg_runtime_free (scripted_runtime_base (fx.rt));
  fx.rt = NULL;
  g_clear_pointer (&fx.store, stg_store_close);
}

void
fx_teardown (void)
{
  close_all ();
  g_clear_pointer (&fx.clock, stg_clock_free);
  g_clear_object (&fx.key);
  stg_test_rmtree (fx.dir);
  g_clear_pointer (&fx.dir, g_free);
  g_clear_pointer (&fx.db, g_free);
}

void
fx_restart (void (*seed) (ScriptedRuntime *rt, gpointer data), gpointer data)
{
  g_autoptr (GError) error = NULL;

  close_all ();
  /* Timers of the old engine and runtime are gone with them. */
  g_assert_cmpuint (stg_clock_pending (fx.clock), ==, 0);
  open_all ();
  if (seed != NULL)
    seed (fx.rt, data);
  ck_assert_msg (stg_engine_recover (fx.engine, &error), "recover: %s", error ? error->message : "");
  stg_engine_check_invariants (fx.engine);
}

ApiTaskConfig *
fx_config (const gchar *data)
{
  g_autoptr (ApiExecutorConfig) exec = g_object_new (API_TYPE_EXECUTOR_CONFIG, "name", "stagger",
                                                     "data", data, NULL);
  g_autoptr (ApiIdentity) owner = g_object_new (API_TYPE_IDENTITY, "user", "www", NULL);
  return g_object_new (API_TYPE_TASK_CONFIG, "job", fx.key, "owner", owner, "isService", TRUE,
                       "executorConfig", exec, NULL);
}

void
fx_create_job (gint32 n)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiTaskConfig) task = fx_config ("v1");
  g_autoptr (ApiJobConfiguration) job = g_object_new (API_TYPE_JOB_CONFIGURATION, "key", fx.key,
                                                      "taskConfig", task, "instanceCount", n, NULL);

  ck_assert_msg (stg_engine_create_job (fx.engine, job, "www", &error), "create: %s",
                 error ? error->message : "");
  fx_run (1000);
  g_autoptr (StgJobRow) row = stg_store_get_job (fx.store, fx.key, &error);
  ck_assert_ptr_nonnull (row);
  fx.job_id = row->id;
  fx.v1 = fx_intent (0);
  ck_assert_uint_eq (scripted_runtime_running (fx.rt, fx.job_id), (guint) n);
  scripted_runtime_clear_log (fx.rt);
}

ApiJobUpdateRequest *
fx_request (const gchar *data, gint32 count)
{
  g_autoptr (ApiTaskConfig) task = fx_config (data);
  g_autoptr (ApiJobUpdateSettings) settings = g_object_new (API_TYPE_JOB_UPDATE_SETTINGS,
      "updateGroupSize", 1, "maxPerInstanceFailures", 0, "maxFailedInstances", 0,
      "minWaitInInstanceRunningMs", 1000, "rollbackOnFailure", TRUE, NULL);
  return g_object_new (API_TYPE_JOB_UPDATE_REQUEST, "taskConfig", task, "instanceCount", count,
                       "settings", settings, NULL);
}

ApiJobUpdateKey *
fx_start (ApiJobUpdateRequest *request)
{
  g_autoptr (GError) error = NULL;
  ApiJobUpdateKey *key = stg_engine_start_update (fx.engine, request, "alice", "go", NULL, &error);

  ck_assert_msg (key != NULL, "start: %s", error ? error->message : "");
  stg_engine_check_invariants (fx.engine);
  return key;
}

void
fx_run (gint64 ms)
{
  /* Small steps, so invariants are checked often. */
  for (gint64 done = 0; done < ms; done += 50)
    {
      stg_clock_advance (fx.clock, MIN (50, ms - done));
      stg_engine_check_invariants (fx.engine);
    }
}

gint
fx_status (ApiJobUpdateKey *key)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (StgUpdateRow) row = stg_store_get_update (fx.store, key->id, &error);

  ck_assert_msg (row != NULL, "update: %s", error ? error->message : "");
  return row->status;
}

gint64
fx_update_id (ApiJobUpdateKey *key)
{
  g_autoptr (StgUpdateRow) row = stg_store_get_update (fx.store, key->id, NULL);
  ck_assert_ptr_nonnull (row);
  return row->id;
}

gint64
fx_desired (ApiJobUpdateKey *key)
{
  g_autoptr (StgUpdateRow) row = stg_store_get_update (fx.store, key->id, NULL);
  ck_assert_ptr_nonnull (row);
  return row->desired_config_id;
}

gchar *
fx_update_events (ApiJobUpdateKey *key)
{
  g_autoptr (GPtrArray) events = stg_store_list_update_events (fx.store, fx_update_id (key), NULL);
  g_autoptr (GString) s = g_string_new (NULL);

  for (guint i = 0; i < events->len; i++)
    g_string_append_printf (s, "%s%s", i ? " " : "",
                            stg_update_status_name (((ApiJobUpdateEvent *) events->pdata[i])->status));
  return g_strdup (s->str);
}

gchar *
fx_instance_events (ApiJobUpdateKey *key)
{
  g_autoptr (GPtrArray) events = stg_store_list_instance_events (fx.store, fx_update_id (key), 0,
                                                                 NULL, NULL);
  g_autoptr (GString) s = g_string_new (NULL);

  for (guint i = 0; i < events->len; i++)
    {
      ApiJobInstanceUpdateEvent *e = events->pdata[i];
      g_string_append_printf (s, "%s%d:%s", i ? " " : "", e->instanceId,
                              stg_update_action_name (e->action) + strlen ("INSTANCE_"));
    }
  return g_strdup (s->str);
}

gchar *
fx_take_log (void)
{
  gchar *text = scripted_runtime_log_text (fx.rt);
  scripted_runtime_clear_log (fx.rt);
  return text;
}

gint64
fx_intent (gint32 i)
{
  StgInstanceRow row;
  if (!stg_store_get_instance (fx.store, fx.job_id, i, &row, NULL))
    return 0;
  return row.config_id;
}

static void
count_running (gpointer data)
{
  (void) data;
  gint n = (gint) scripted_runtime_running (fx.rt, fx.job_id);
  fx.min_running = MIN (fx.min_running, n);
}

void
fx_watch_running (void)
{
  fx.min_running = G_MAXINT;
  scripted_runtime_on_change (fx.rt, count_running, NULL);
}

gchar *
fx_expect_applies (const gchar *ids, gint64 config)
{
  g_auto (GStrv) parts = g_strsplit (ids, " ", -1);
  g_autoptr (GString) s = g_string_new (NULL);

  for (guint i = 0; parts[i] != NULL; i++)
    g_string_append_printf (s, "%sapply %s %" G_GINT64_FORMAT, i ? ", " : "", parts[i], config);
  return g_strdup (s->str);
}

void
fx_set_strategy_batch (ApiJobUpdateRequest *r, gint32 size, gboolean autopause)
{
  g_autoptr (ApiBatchJobUpdateStrategy) b = g_object_new (API_TYPE_BATCH_JOB_UPDATE_STRATEGY,
                                                          "groupSize", size, "autopauseAfterBatch",
                                                          autopause, NULL);
  g_autoptr (ApiJobUpdateStrategy) st = g_object_new (API_TYPE_JOB_UPDATE_STRATEGY, "batchStrategy",
                                                      b, NULL);
  g_object_set (r->settings, "updateStrategy", st, NULL);
}

void
fx_set_strategy_queue (ApiJobUpdateRequest *r, gint32 size)
{
  g_autoptr (ApiQueueJobUpdateStrategy) q = g_object_new (API_TYPE_QUEUE_JOB_UPDATE_STRATEGY,
                                                          "groupSize", size, NULL);
  g_autoptr (ApiJobUpdateStrategy) st = g_object_new (API_TYPE_JOB_UPDATE_STRATEGY, "queueStrategy",
                                                      q, NULL);
  g_object_set (r->settings, "updateStrategy", st, NULL);
}

void
fx_set_strategy_variable (ApiJobUpdateRequest *r, const gint32 *sizes, guint n, gboolean autopause)
{
  g_autoptr (GArray) list = g_array_new (FALSE, FALSE, sizeof (gint32));
  g_array_append_vals (list, sizes, n);
  g_autoptr (ApiVariableBatchJobUpdateStrategy) v =
      g_object_new (API_TYPE_VARIABLE_BATCH_JOB_UPDATE_STRATEGY, "groupSizes", list,
                    "autopauseAfterBatch", autopause, NULL);
  g_autoptr (ApiJobUpdateStrategy) st = g_object_new (API_TYPE_JOB_UPDATE_STRATEGY,
                                                      "varBatchStrategy", v, NULL);
  g_object_set (r->settings, "updateStrategy", st, NULL);
}
