/* fleet_ha_fixture.c: what fleet_ha_test's cases share (see
 * fleet_ha_fixture.h): the leading store, the hosts, the runtime, the job,
 * the captured log and main(). Test process, main thread. */
#include "config.h"

#include <string.h>

#include "fleet_ha_fixture.h"

static StgTestPg *pg;

/* What was logged during a test, for it to read (GIO's threads log too). */
static GString *logged;
G_LOCK_DEFINE_STATIC (logged);

static GLogWriterOutput
capture (GLogLevelFlags level, const GLogField *fields, gsize n_fields, gpointer data)
{
  G_LOCK (logged);
  for (gsize i = 0; logged != NULL && i < n_fields; i++)
    if (g_str_equal (fields[i].key, "MESSAGE") && fields[i].length < 0)
      g_string_append_printf (logged, "%s\n", (const gchar *) fields[i].value);
  G_UNLOCK (logged);
  return g_log_writer_default (level, fields, n_fields, data);
}

/* TRUE when @text was logged during this test. */
gboolean
fha_was_logged (const gchar *text)
{
  G_LOCK (logged);
  gboolean found = strstr (logged->str, text) != NULL;
  G_UNLOCK (logged);
  return found;
}

gchar *
fha_logged_tail (gsize max)
{
  g_autoptr (GString) tail = g_string_new (NULL);

  G_LOCK (logged);
  g_auto (GStrv) lines = g_strsplit (logged->str, "\n", -1);
  G_UNLOCK (logged);
  for (gint i = (gint) g_strv_length (lines) - 1; i >= 0 && tail->len < max; i--)
    if (g_str_has_prefix (lines[i], "fleet:"))
      {
        g_string_prepend (tail, " | ");
        g_string_prepend (tail, lines[i]);
      }
  if (tail->len > max)
    g_string_erase (tail, 0, tail->len - max);
  return g_string_free (g_steal_pointer (&tail), FALSE);
}

static StgStore *
leading_store (const gchar *conninfo, const gchar *holder, gint64 *epoch)
{
  g_autoptr (GError) error = NULL;
  StgStore *store = stg_store_open (conninfo, &error);

  ck_assert_msg (store != NULL, "%s", error ? error->message : "");
  ck_assert_msg (stg_store_try_lead (store, holder, "http://x", LEASE_MS, g_get_real_time () / 1000,
                                     epoch, &error),
                 "%s leads not: %s", holder, error ? error->message : "another leads");
  return store;
}

gboolean
fha_prove (gpointer data)
{
  FhaEnv *e = data;
  StgLeaderInfo info = { 0 };

  (void) stg_store_leader (e->store, &info, NULL);
  stg_leader_info_clear (&info);
  return G_SOURCE_CONTINUE;
}

/* @n podman hosts (attribute zone=z0, z1...), a database, a store that
 * leads on it and proves it every quarter lease. */
FhaEnv *
fha_env_new (guint n)
{
  FhaEnv *e = g_new0 (FhaEnv, 1);
  g_autoptr (GError) error = NULL;
  gint64 epoch = 0;

  e->fleet = stg_test_podman_start (n);
  stg_test_podman_import (e->fleet, IMAGE, "1");
  e->dir = stg_test_tmpdir ();
  e->conninfo = stg_test_pg_new_database (pg, &error);
  ck_assert_msg (e->conninfo != NULL, "%s", error ? error->message : "");
  e->clock = stg_clock_new_real ();
  e->store = leading_store (e->conninfo, "a:1", &epoch);
  ck_assert_int_eq (epoch, 1);
  logged = g_string_new (NULL);
  e->prover = g_timeout_add (LEASE_MS / 4, fha_prove, e);
  return e;
}

void
fha_env_free (FhaEnv *e)
{
  g_clear_handle_id (&e->prover, g_source_remove);
  g_clear_pointer (&e->rt, stg_runtime_free);
  g_clear_pointer (&e->store, stg_store_close);
  g_clear_pointer (&e->clock, stg_clock_free);
  stg_test_podman_stop (e->fleet);
  stg_test_rmtree (e->dir);
  g_free (e->dir);
  g_free (e->conninfo);
  g_free (e);
  G_LOCK (logged);
  g_string_free (logged, TRUE);
  logged = NULL;
  G_UNLOCK (logged);
}

/* A fleet runtime over @store, on every host of @e; a host that does not
 * answer for @lost_after_s is lost. */
StgRuntime *
fha_runtime_new (FhaEnv *e, StgStore *store, guint lost_after_s)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autoptr (GString) text = g_string_new ("[fleet]\npoll_interval_ms = 200\n"
                                           "call_timeout_secs = 3\n");
  StgFleetRuntimeOptions o = {
    .data_dir = e->dir, .cluster = (gchar *) "local", .port_min = 17100, .port_max = 17199
  };

  g_string_append_printf (text, "lost_after_secs = %u\n", lost_after_s);
  for (guint i = 0; i < e->fleet->hosts->len; i++)
    {
      StgTestPodmanHost *h = e->fleet->hosts->pdata[i];
      g_string_append_printf (text,
                              "[host %s]\nendpoint = %s\naddress = 127.0.0.1\n"
                              "attributes = zone=z%u\n",
                              h->name, h->endpoint, i);
    }
  ck_assert (g_key_file_load_from_data (kf, text->str, -1, G_KEY_FILE_NONE, NULL));
  stg_fleet_options_init (&o.fleet);
  ck_assert_msg (stg_fleet_options_load (&o.fleet, kf, &error), "%s", error->message);
  StgRuntime *rt = stg_fleet_runtime_new (store, e->clock, &o, &error);
  stg_fleet_options_clear (&o.fleet);
  ck_assert_msg (rt != NULL, "%s", error ? error->message : "");
  ck_assert_msg (stg_fleet_runtime_adopt (rt, &error), "adopt: %s", error ? error->message : "");
  return rt;
}

/* Job www/prod/web: @n instances of @data's command (an executor
 * config), HTTP-checked, on hosts of zone @zone only (NULL: any). */
void
fha_make_job_running (FhaEnv *e, gint32 n, const gchar *zone, const gchar *data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiJobConfiguration) job = stg_test_job_full ("www", "prod", "web", n, data, "http");
  ApiTaskConfig *task = job->taskConfig;
  g_autoptr (ApiDockerParameter) net = g_object_new (API_TYPE_DOCKER_PARAMETER, "name", "network",
                                                     "value", "host", NULL);
  g_autoptr (ApiDockerContainer) docker = g_object_new (API_TYPE_DOCKER_CONTAINER, "image", IMAGE,
                                                        NULL);
  g_ptr_array_add (docker->parameters, g_object_ref (net));
  docker->__isset_parameters = TRUE;
  g_autoptr (ApiContainer) box = g_object_new (API_TYPE_CONTAINER, "docker", docker, NULL);
  g_object_set (task, "container", box, NULL);
  if (zone != NULL)
    {
      g_autoptr (ApiValueConstraint) v = g_object_new (API_TYPE_VALUE_CONSTRAINT, NULL);
      g_hash_table_add (v->values, g_strdup (zone));
      g_autoptr (ApiTaskConstraint) tc = g_object_new (API_TYPE_TASK_CONSTRAINT, "value", v, NULL);
      g_hash_table_add (task->constraints,
                        g_object_new (API_TYPE_CONSTRAINT, "name", "zone", "constraint", tc, NULL));
      task->__isset_constraints = TRUE;
    }
  ck_assert_msg (stg_runtime_validate (e->rt, task, &error), "%s", error ? error->message : "");
  ck_assert (stg_store_put_config (e->store, task, &e->config, NULL, &error));
  ck_assert (stg_store_create_job (e->store, task->job, "www", e->config, n, 0, &e->job, &error));
  for (gint32 i = 0; i < n; i++)
    ck_assert_msg (stg_runtime_apply (e->rt, e->job, i, e->config, &error), "%s", error->message);
}

/* ... of busybox httpd, stopped within a second. */
void
fha_make_job (FhaEnv *e, gint32 n, const gchar *zone)
{
  fha_make_job_running (
      e, n, zone,
      "{\"argv\": [\"httpd\", \"-f\", \"-p\", \"{{ports[http]}}\", \"-h\", \"/www\"],"
      " \"stop_timeout_secs\": 1," HTTP_CHECKED);
}

typedef struct
{
  StgRuntime *rt;
  gint64 job;
  gint32 instance;
  StgTaskPhase phase;
} Want;

static gboolean
reached (gpointer data)
{
  Want *w = data;
  StgTaskObservation o;

  stg_runtime_observe (w->rt, w->job, w->instance, &o);
  return o.phase == w->phase;
}

void
fha_wait_phase (StgRuntime *rt, gint64 job, gint32 i, StgTaskPhase phase)
{
  Want w = { rt, job, i, phase };
  StgTaskObservation o;

  if (!stg_test_wait (reached, &w, 60000))
    {
      stg_runtime_observe (rt, job, i, &o);
      ck_abort_msg ("instance %d: wanted %s, got %s", i, stg_task_phase_name (phase),
                    stg_task_phase_name (o.phase));
    }
}

/* The ids of @host's containers of job www/prod/web ("all" with exited
 * ones), one a line. */
gchar *
fha_container_ids (FhaEnv *e, guint host, gboolean all)
{
  gchar *ps = stg_test_podman_cli (e->fleet, e->fleet->hosts->pdata[host], "ps", "--quiet",
                                   "--no-trunc", all ? "--all" : "--filter=status=running",
                                   "--filter=label=org.stagger.job=www/prod/web", NULL);
  return g_strstrip (ps);
}

/* One try (every 100 ms) to take over from an idle leader. */
gboolean
fha_takes_over (gpointer data)
{
  FhaTakeover *t = data;
  g_autoptr (GError) error = NULL;

  if (g_get_monotonic_time () < t->next_us)
    return FALSE;
  t->next_us = g_get_monotonic_time () + 100 * 1000;
  if (stg_store_try_lead (t->store, "b:2", "http://b", LEASE_MS, 0, &t->epoch, &error))
    return TRUE;
  ck_assert_msg (error == NULL, "%s", error ? error->message : "");
  return FALSE;
}

int
fha_run (Suite *suite)
{
  g_autoptr (GError) error = NULL;
  gchar *scope = stg_test_scope_begin ();
  SRunner *sr = srunner_create (suite);
  int failed = 1;

  g_log_set_writer_func (capture, NULL, NULL);

  pg = stg_test_pg_start (&error);
  if (pg == NULL)
    g_printerr ("fleet_ha_test: cannot start PostgreSQL: %s\n", error->message);
  else
    {
      srunner_run_all (sr, CK_NORMAL);
      failed = srunner_ntests_failed (sr);
    }
  srunner_free (sr);
  g_clear_pointer (&pg, stg_test_pg_free);
  stg_test_podman_purge (scope);
  stg_test_scope_end (scope);
  return failed == 0 ? 0 : 1;
}
