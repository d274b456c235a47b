/* fleet_ha_test.c: the fleet runtime of a replica that leads on
 * PostgreSQL, in this process, against real podman services
 * (tests/podman_hosts.c): what it does when its lead, its database or a
 * host goes away, and when an older leader's or a returning host's
 * containers show up. Host ports handed to containers come from
 * 17100-17199. Test process, main thread. */
#include "config.h"

#include <check.h>
#include <libpq-fe.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "pgtest.h"
#include "podman_hosts.h"
#include "runtime/fleet.h"
#include "testutil.h"

#define IMAGE "localhost/stagger-test:1"
#define LEASE_MS 2000

static StgTestPg *pg;

typedef struct
{
  StgTestPodman *fleet;
  gchar *dir;      /* the data directory */
  gchar *conninfo; /* a fresh database */
  StgClock *clock;
  StgStore *store;
  StgRuntime *rt;
  gint64 job;
  gint64 config;
  guint prover; /* proves the lead, as the leadership's tick does */
} Env;

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
static gboolean
was_logged (const gchar *text)
{
  G_LOCK (logged);
  gboolean found = strstr (logged->str, text) != NULL;
  G_UNLOCK (logged);
  return found;
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

static gboolean
prove (gpointer data)
{
  Env *e = data;
  StgLeaderInfo info = { 0 };

  (void) stg_store_leader (e->store, &info, NULL);
  stg_leader_info_clear (&info);
  return G_SOURCE_CONTINUE;
}

/* @n podman hosts (attribute zone=z0, z1...), a database, a store that
 * leads on it and proves it every quarter lease. */
static Env *
env_new (guint n)
{
  Env *e = g_new0 (Env, 1);
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
  e->prover = g_timeout_add (LEASE_MS / 4, prove, e);
  return e;
}

static void
env_free (Env *e)
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
static StgRuntime *
runtime_new (Env *e, StgStore *store, guint lost_after_s)
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
static void
make_job_running (Env *e, gint32 n, const gchar *zone, const gchar *data)
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

/* The end of a job's executor config: its HTTP health check. */
#define HTTP_CHECKED \
  " \"health_check\": {\"http\": {\"endpoint\": \"/health\"}, \"timeout_secs\": 1," \
  " \"initial_interval_secs\": 0.5, \"interval_secs\": 0.3, \"max_consecutive_failures\": 1}}"

/* ... of busybox httpd, stopped within a second. */
static void
make_job (Env *e, gint32 n, const gchar *zone)
{
  make_job_running (e, n, zone,
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

static void
wait_phase (StgRuntime *rt, gint64 job, gint32 i, StgTaskPhase phase)
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
static gchar *
container_ids (Env *e, guint host, gboolean all)
{
  gchar *ps = stg_test_podman_cli (e->fleet, e->fleet->hosts->pdata[host], "ps", "--quiet",
                                   "--no-trunc", all ? "--all" : "--filter=status=running",
                                   "--filter=label=org.stagger.job=www/prod/web", NULL);
  return g_strstrip (ps);
}

/* ---- a lead that is not proven -------------------------------------------------- */

typedef struct
{
  Env *e;
  const gchar *gone; /* a container id */
  gint64 next_us;    /* when to ask the engine again */
} Held;

static gboolean
held_or_gone (gpointer data)
{
  Held *h = data;

  if (was_logged ("holding back requests"))
    return TRUE;
  if (g_get_monotonic_time () < h->next_us)
    return FALSE;
  h->next_us = g_get_monotonic_time () + 200 * 1000;
  g_autofree gchar *ps = container_ids (h->e, 0, TRUE);
  return strstr (ps, h->gone) == NULL;
}

typedef struct
{
  StgStore *store;
  gint64 epoch;
  gint64 next_us; /* when to try again */
} Takeover;

/* One try (every 100 ms) to take over from an idle leader. */
static gboolean
takes_over (gpointer data)
{
  Takeover *t = data;
  g_autoptr (GError) error = NULL;

  if (g_get_monotonic_time () < t->next_us)
    return FALSE;
  t->next_us = g_get_monotonic_time () + 100 * 1000;
  if (stg_store_try_lead (t->store, "b:2", "http://b", LEASE_MS, 0, &t->epoch, &error))
    return TRUE;
  ck_assert_msg (error == NULL, "%s", error ? error->message : "");
  return FALSE;
}

/* The leader loses its lock while it sits idle (a paused process), and
 * another replica takes over; then its engine asks it to kill an
 * instance. Its runtime sends nothing: the request waits for a proof of
 * the lead that never comes, and is dropped with the runtime. */
START_TEST (stale_leader_sends_nothing)
{
  Env *e = env_new (1);

  e->rt = runtime_new (e, e->store, 30);
  make_job (e, 1, NULL);
  wait_phase (e->rt, e->job, 0, STG_TASK_RUNNING);
  g_autofree gchar *id = container_ids (e, 0, FALSE);
  ck_assert_uint_eq (strlen (id), 64);

  /* The leader stops proving its lead (paused); another replica takes
   * over once the server has ended the idle session. The runtime's loop
   * runs meanwhile (listings, checks). */
  g_clear_handle_id (&e->prover, g_source_remove);
  g_autoptr (GError) error = NULL;
  g_autoptr (StgStore) b = stg_store_open (e->conninfo, &error);
  Takeover t = { b, 0, 0 };
  ck_assert_msg (stg_test_wait (takes_over, &t, 30000), "no takeover");
  ck_assert_int_eq (t.epoch, 2);
  ck_assert_int_eq (stg_store_lead_left_ms (e->store), 0);

  ck_assert (stg_runtime_kill (e->rt, e->job, 0, &error));
  Held h = { e, id, 0 };
  ck_assert_msg (stg_test_wait (held_or_gone, &h, 30000), "neither held nor sent");
  g_autofree gchar *after = container_ids (e, 0, FALSE);
  ck_assert_msg (strstr (after, id) != NULL, "the stale leader stopped container %.12s", id);
  ck_assert (was_logged ("holding back requests to the hosts"));
  /* Its runtime ends (the replica restarts as a follower): nothing sent. */
  g_clear_pointer (&e->rt, stg_runtime_free);
  g_autofree gchar *still = container_ids (e, 0, FALSE);
  ck_assert_str_eq (still, id);
  env_free (e);
}
END_TEST

/* ---- an older leader's late container ----------------------------------------- */

/* @host's container @id's labels, as lines of a label file. */
static gchar *
label_file (Env *e, guint host, const gchar *id)
{
  g_autofree gchar *json = stg_test_podman_cli (e->fleet, e->fleet->hosts->pdata[host], "inspect",
                                                "--format", "{{json .Config.Labels}}", id, NULL);
  g_autoptr (JsonNode) node = stg_test_parse_json (json);
  JsonObject *labels = json_node_get_object (node);
  g_autoptr (GString) lines = g_string_new (NULL);
  g_autoptr (GList) keys = json_object_get_members (labels);

  for (GList *l = keys; l != NULL; l = l->next)
    g_string_append_printf (lines, "%s=%s\n", (gchar *) l->data,
                            json_object_get_string_member (labels, l->data));
  gchar *path = g_build_filename (e->dir, "labels", NULL);
  ck_assert (g_file_set_contents (path, lines->str, -1, NULL));
  return path;
}

typedef struct
{
  Env *e;
  const gchar *id;
  gint64 next_us;
} Gone;

static gboolean
container_gone (gpointer data)
{
  Gone *g = data;

  if (g_get_monotonic_time () < g->next_us)
    return FALSE;
  g->next_us = g_get_monotonic_time () + 200 * 1000;
  g_autofree gchar *ps = container_ids (g->e, 0, TRUE);
  return strstr (ps, g->id) == NULL;
}

/* A new leader adopts what runs, then a container of the old leader's
 * epoch appears for the same instance and run (its create arrived late):
 * the new leader removes it and keeps the one it adopted. */
START_TEST (late_container_of_an_older_epoch_is_removed)
{
  Env *e = env_new (1);
  g_autoptr (GError) error = NULL;

  e->rt = runtime_new (e, e->store, 30);
  make_job (e, 1, NULL);
  wait_phase (e->rt, e->job, 0, STG_TASK_RUNNING);
  g_autofree gchar *adopted = container_ids (e, 0, FALSE);
  g_autofree gchar *labels = label_file (e, 0, adopted);
  g_autofree gchar *text = NULL;
  ck_assert (g_file_get_contents (labels, &text, NULL, NULL));
  ck_assert_ptr_nonnull (strstr (text, "org.stagger.epoch=1\n"));

  /* The leader goes (its containers stay); another takes over. */
  g_clear_handle_id (&e->prover, g_source_remove);
  g_clear_pointer (&e->rt, stg_runtime_free);
  g_clear_pointer (&e->store, stg_store_close);
  StgStore *b = stg_store_open (e->conninfo, &error);
  ck_assert_msg (b != NULL, "%s", error ? error->message : "");
  e->store = b;
  Takeover t = { b, 0, 0 };
  ck_assert_msg (stg_test_wait (takes_over, &t, 30000), "no takeover");
  ck_assert_int_eq (t.epoch, 2);
  e->prover = g_timeout_add (LEASE_MS / 4, prove, e);
  e->rt = runtime_new (e, b, 30);
  wait_phase (e->rt, e->job, 0, STG_TASK_RUNNING);

  /* The old leader's late create: same instance, same run, its epoch. */
  g_autofree gchar *with = g_strconcat ("--label-file=", labels, NULL);
  g_autofree gchar *late = stg_test_podman_cli (e->fleet, e->fleet->hosts->pdata[0], "run",
                                                "--detach", "--name=late", "--network=host", with,
                                                IMAGE, "httpd", "-f", "-p", "17199", "-h", "/www",
                                                NULL);
  g_strstrip (late);
  Gone g = { e, late, 0 };
  ck_assert_msg (stg_test_wait (container_gone, &g, 30000),
                 "the old epoch's late container %.12s is still there", late);
  g_autofree gchar *left = container_ids (e, 0, TRUE);
  ck_assert_str_eq (left, adopted);
  wait_phase (e->rt, e->job, 0, STG_TASK_RUNNING);
  env_free (e);
}
END_TEST

/* ---- the database goes away -------------------------------------------------- */

static gboolean
end_sessions (gpointer data)
{
  Env *e = data;
  PGconn *conn = PQconnectdb (e->conninfo);
  PGresult *res = PQexec (conn, "SELECT pg_terminate_backend (pid) FROM pg_stat_activity "
                                "WHERE datname = current_database () AND pid <> pg_backend_pid ()");

  ck_assert_int_eq (PQresultStatus (res), PGRES_TUPLES_OK);
  PQclear (res);
  PQfinish (conn);
  return G_SOURCE_REMOVE;
}

typedef struct
{
  Env *e;
  const gchar *id;
  gint64 next_us;
} Kept;

/* The runtime said it cannot watch the container yet, or judged it. */
static gboolean
unwatched_or_judged (gpointer data)
{
  Kept *k = data;
  StgTaskObservation o;

  stg_runtime_observe (k->e->rt, k->e->job, 0, &o);
  if (was_logged ("cannot watch instance 0 of www/prod/web yet") || o.failures > 0 ||
      o.phase != STG_TASK_RUNNING)
    return TRUE;
  if (g_get_monotonic_time () < k->next_us)
    return FALSE;
  k->next_us = g_get_monotonic_time () + 200 * 1000;
  g_autofree gchar *ps = container_ids (k->e, 0, FALSE);
  return strstr (ps, k->id) == NULL;
}

/* A new leader adopts a running container, and its database connection
 * ends just then (PostgreSQL restarted, a network cut): it cannot read
 * the task config (_i 0), or the instance's ports (_i 1: the config was
 * read before), to watch the container. The database failed, not the
 * instance: the container keeps running. */
START_TEST (unreadable_config_stops_nothing)
{
  Env *e = env_new (1);
  g_autoptr (GError) error = NULL;

  e->rt = runtime_new (e, e->store, 30);
  make_job (e, 1, NULL);
  wait_phase (e->rt, e->job, 0, STG_TASK_RUNNING);
  g_autofree gchar *id = container_ids (e, 0, FALSE);

  /* A new leader, whose store has read no config yet. */
  g_clear_handle_id (&e->prover, g_source_remove);
  g_clear_pointer (&e->rt, stg_runtime_free);
  g_clear_pointer (&e->store, stg_store_close);
  StgStore *b = stg_store_open (e->conninfo, &error);
  ck_assert_msg (b != NULL, "%s", error ? error->message : "");
  e->store = b;
  Takeover t = { b, 0, 0 };
  ck_assert_msg (stg_test_wait (takes_over, &t, 30000), "no takeover");
  if (_i == 1)
    {
      g_autoptr (ApiTaskConfig) read = stg_store_get_config (b, e->config, &error);
      ck_assert_msg (read != NULL, "%s", error ? error->message : "");
    }
  /* Its session ends while it lists the hosts, before it watches (at the
   * listing's first turn of the loop: a default idle could come after
   * an engine quick to answer). */
  g_idle_add_full (G_PRIORITY_HIGH, end_sessions, e, NULL);
  e->rt = runtime_new (e, b, 30);
  Kept k = { e, id, 0 };
  ck_assert_msg (stg_test_wait (unwatched_or_judged, &k, 30000), "neither unwatched nor judged");
  StgTaskObservation o;
  stg_runtime_observe (e->rt, e->job, 0, &o);
  ck_assert_msg (o.failures == 0 && o.phase == STG_TASK_RUNNING, "judged %s, %u failures: %s",
                 stg_task_phase_name (o.phase), o.failures, o.cause);
  g_autofree gchar *after = container_ids (e, 0, FALSE);
  ck_assert_msg (strstr (after, id) != NULL, "container %.12s was stopped", id);
  /* A port the database could not give is the database's error. */
  ck_assert_msg (!was_logged ("no free port left") && !was_logged ("over the top"),
                 "a database error reported as no free port");
  env_free (e);
}
END_TEST

/* ---- a host out of reach ------------------------------------------------------ */

/* The pid of every process of @host's container @id (its init and what
 * it started). */
static GArray *
container_pids (Env *e, guint host, const gchar *id)
{
  g_autofree gchar *out = stg_test_podman_cli (e->fleet, e->fleet->hosts->pdata[host], "inspect",
                                               "--format", "{{.State.Pid}}", id, NULL);
  GArray *pids = g_array_new (FALSE, FALSE, sizeof (gint));
  gint init = atoi (out);

  ck_assert_int_gt (init, 0);
  g_array_append_val (pids, init);
  for (guint i = 0; i < pids->len; i++)
    {
      gint pid = g_array_index (pids, gint, i);
      g_autofree gchar *path = g_strdup_printf ("/proc/%d/task/%d/children", pid, pid);
      g_autofree gchar *text = NULL;
      g_auto (GStrv) kids = NULL;
      if (!g_file_get_contents (path, &text, NULL, NULL))
        continue;
      kids = g_strsplit (g_strstrip (text), " ", -1);
      for (guint k = 0; kids[k] != NULL; k++)
        if (atoi (kids[k]) > 0)
          g_array_append_val (pids, (gint){ atoi (kids[k]) });
    }
  return pids;
}

static void
signal_all (GArray *pids, gint sig)
{
  for (guint i = 0; i < pids->len; i++)
    kill (g_array_index (pids, gint, i), sig);
}

typedef struct
{
  StgRuntime *rt;
  gint64 job;
} Judged;

static gboolean
judged (gpointer data)
{
  Judged *j = data;
  StgTaskObservation o;

  stg_runtime_observe (j->rt, j->job, 0, &o);
  return o.failures > 0 || (o.cause != NULL && strstr (o.cause, "not counted") != NULL);
}

/* The instance stops answering its health checks and its host's engine
 * stops answering too (this replica is cut off from the host): nothing is
 * counted, nothing restarted; once both answer again it is RUNNING, the
 * same container, no failure. */
START_TEST (unanswered_check_on_an_unanswering_host_counts_nothing)
{
  Env *e = env_new (1);
  StgTestPodmanHost *h0 = e->fleet->hosts->pdata[0];
  StgTaskObservation o;

  e->rt = runtime_new (e, e->store, 60);
  make_job (e, 1, NULL);
  wait_phase (e->rt, e->job, 0, STG_TASK_RUNNING);
  g_autofree gchar *id = container_ids (e, 0, FALSE);
  g_autoptr (GArray) pids = container_pids (e, 0, id);

  stg_test_podman_host_down (h0);
  signal_all (pids, SIGSTOP);
  Judged j = { e->rt, e->job };
  ck_assert_msg (stg_test_wait (judged, &j, 30000), "the failed checks were never judged");
  stg_runtime_observe (e->rt, e->job, 0, &o);
  ck_assert_msg (o.failures == 0, "counted %u failures: %s", o.failures, o.cause);
  ck_assert_int_eq (o.phase, STG_TASK_RUNNING);

  signal_all (pids, SIGCONT);
  stg_test_podman_host_up (e->fleet, h0);
  wait_phase (e->rt, e->job, 0, STG_TASK_RUNNING);
  stg_runtime_observe (e->rt, e->job, 0, &o);
  ck_assert_uint_eq (o.failures, 0);
  g_autofree gchar *after = container_ids (e, 0, FALSE);
  ck_assert_str_eq (after, id);
  env_free (e);
}
END_TEST

/* ---- a host that comes back --------------------------------------------------- */

/* Another config of the job (a new environment variable): its id. */
static gint64
second_config (Env *e)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiTaskConfig) task = stg_store_get_config (e->store, e->config, &error);
  gint64 id = 0;

  ck_assert_msg (task != NULL, "%s", error ? error->message : "");
  g_autofree gchar *data = g_strdup (task->executorConfig->data);
  g_autofree gchar *more = g_strconcat ("{\"env\": {\"V\": \"2\"}, ", data + 1, NULL);
  g_object_set (task->executorConfig, "data", more, NULL);
  ck_assert (stg_store_put_config (e->store, task, &id, NULL, &error));
  ck_assert_int_ne (id, e->config);
  return id;
}

static gboolean
host_answers (gpointer data)
{
  StgRuntime *rt = data;
  g_autoptr (GPtrArray) hosts = stg_runtime_hosts (rt, NULL);

  return hosts != NULL && ((ApiFleetHostStatus *) hosts->pdata[0])->reachable;
}

static gboolean
lost (gpointer data)
{
  Judged *j = data;
  StgTaskObservation o;

  stg_runtime_observe (j->rt, j->job, 0, &o);
  return o.phase == STG_TASK_PENDING && o.failures > 0;
}

/* @host's container events, in order, one "STATUS ID" a line. */
static gchar *
engine_events (Env *e, guint host)
{
  return stg_test_podman_cli (e->fleet, e->fleet->hosts->pdata[host], "events", "--stream=false",
                              "--filter=type=container", "--format={{.Status}} {{.ID}}", NULL);
}

/* An instance that may only run on host0 is lost with it and waits;
 * host0 answers again, still running the old container; a new config
 * comes at once. The old container is removed before the new one is
 * created there, never beside it. */
START_TEST (returning_host_is_reconciled_before_use)
{
  Env *e = env_new (2);
  StgTestPodmanHost *h0 = e->fleet->hosts->pdata[0];
  g_autoptr (GError) error = NULL;

  e->rt = runtime_new (e, e->store, 1);
  make_job (e, 1, "z0");
  wait_phase (e->rt, e->job, 0, STG_TASK_RUNNING);
  g_autofree gchar *old = container_ids (e, 0, FALSE);
  gint64 v2 = second_config (e);

  stg_test_podman_host_down (h0);
  Judged j = { e->rt, e->job };
  ck_assert_msg (stg_test_wait (lost, &j, 30000), "the instance was not lost with its host");
  stg_test_podman_host_up (e->fleet, h0);
  ck_assert_msg (stg_test_wait (host_answers, e->rt, 30000), "host0 never answered again");
  ck_assert (stg_store_set_instance_config (e->store, e->job, 0, v2, &error));
  ck_assert_msg (stg_runtime_apply (e->rt, e->job, 0, v2, &error), "%s", error->message);
  wait_phase (e->rt, e->job, 0, STG_TASK_RUNNING);

  g_autofree gchar *now = container_ids (e, 0, FALSE);
  ck_assert_str_ne (now, old);
  g_autofree gchar *events = engine_events (e, 0);
  g_autofree gchar *removed = g_strdup_printf ("remove %s", old);
  g_autofree gchar *created = g_strdup_printf ("create %s", now);
  const gchar *r = strstr (events, removed), *c = strstr (events, created);
  ck_assert_msg (r != NULL && c != NULL && r < c,
                 "the new container was created before the old one was removed:\n%s", events);
  env_free (e);
}
END_TEST

typedef struct
{
  StgRuntime *rt;
  gint64 job;
  gint64 config;
} Runs;

static gboolean
runs_config (gpointer data)
{
  Runs *w = data;
  StgTaskObservation o;

  stg_runtime_observe (w->rt, w->job, 0, &o);
  return o.phase == STG_TASK_RUNNING && o.config_id == w->config;
}

/* A new leader adopts while host0 does not answer (its instance is taken
 * as the store says), and a new config comes for the instance before
 * host0 answers again: once it answers, the container found there is
 * replaced by the new config's. */
START_TEST (config_applied_while_its_host_is_away_is_applied_when_it_answers)
{
  Env *e = env_new (1);
  StgTestPodmanHost *h0 = e->fleet->hosts->pdata[0];
  g_autoptr (GError) error = NULL;

  e->rt = runtime_new (e, e->store, 60);
  make_job (e, 1, NULL);
  wait_phase (e->rt, e->job, 0, STG_TASK_RUNNING);
  g_autofree gchar *old = container_ids (e, 0, FALSE);
  gint64 v2 = second_config (e);

  g_clear_pointer (&e->rt, stg_runtime_free);
  stg_test_podman_host_down (h0);
  e->rt = runtime_new (e, e->store, 60);
  ck_assert (stg_store_set_instance_config (e->store, e->job, 0, v2, &error));
  ck_assert_msg (stg_runtime_apply (e->rt, e->job, 0, v2, &error), "%s", error->message);
  stg_test_podman_host_up (e->fleet, h0);
  Runs w = { e->rt, e->job, v2 };
  ck_assert_msg (stg_test_wait (runs_config, &w, 60000),
                 "the new config was never applied once the host answered");
  g_autofree gchar *now = container_ids (e, 0, FALSE);
  ck_assert_str_ne (now, old);
  env_free (e);
}
END_TEST

/* A replacement's stop outlasts the call's timeout (the container
 * ignores SIGTERM: the engine kills it after stop_timeout_secs), as a
 * stop whose answer a cut loses: the container's exit that a listing
 * then shows is this replica's doing, not a failure of the instance. */
START_TEST (exit_of_a_container_stopped_unanswered_counts_nothing)
{
  Env *e = env_new (1);
  g_autoptr (GError) error = NULL;

  e->rt = runtime_new (e, e->store, 60);
  make_job_running (e, 1, NULL,
                    "{\"argv\": [\"sh\", \"-c\", \"trap '' TERM; httpd -f -p {{ports[http]}} -h "
                    "/www\"], \"stop_timeout_secs\": 6," HTTP_CHECKED);
  wait_phase (e->rt, e->job, 0, STG_TASK_RUNNING);
  gint64 v2 = second_config (e);
  ck_assert (stg_store_set_instance_config (e->store, e->job, 0, v2, &error));
  ck_assert_msg (stg_runtime_apply (e->rt, e->job, 0, v2, &error), "%s", error->message);
  Runs w = { e->rt, e->job, v2 };
  ck_assert_msg (stg_test_wait (runs_config, &w, 60000), "the new config never ran");
  StgTaskObservation o;
  stg_runtime_observe (e->rt, e->job, 0, &o);
  ck_assert_msg (o.failures == 0, "counted %u failures: %s", o.failures, o.cause);
  env_free (e);
}
END_TEST

static Suite *
fleet_ha_suite (void)
{
  Suite *s = suite_create ("fleet_ha");
  TCase *tc;

  tc = tcase_create ("leader");
  tcase_set_timeout (tc, 300);
  tcase_add_test (tc, stale_leader_sends_nothing);
  tcase_add_test (tc, late_container_of_an_older_epoch_is_removed);
  tcase_add_loop_test (tc, unreadable_config_stops_nothing, 0, 2);
  suite_add_tcase (s, tc);

  tc = tcase_create ("hosts");
  tcase_set_timeout (tc, 300);
  tcase_add_test (tc, unanswered_check_on_an_unanswering_host_counts_nothing);
  tcase_add_test (tc, returning_host_is_reconciled_before_use);
  tcase_add_test (tc, config_applied_while_its_host_is_away_is_applied_when_it_answers);
  tcase_add_test (tc, exit_of_a_container_stopped_unanswered_counts_nothing);
  suite_add_tcase (s, tc);
  return s;
}

int
main (void)
{
  g_autoptr (GError) error = NULL;
  gchar *scope = stg_test_scope_begin ();
  SRunner *sr = srunner_create (fleet_ha_suite ());
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
