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

#include "fleet_ha_fixture.h"

/* ---- a lead that is not proven -------------------------------------------------- */

typedef struct
{
  FhaEnv *e;
  const gchar *gone; /* a container id */
  gint64 next_us;    /* when to ask the engine again */
} Held;

static gboolean
held_or_gone (gpointer data)
{
  Held *h = data;

  if (fha_was_logged ("holding back requests"))
    return TRUE;
  if (g_get_monotonic_time () < h->next_us)
    return FALSE;
  h->next_us = g_get_monotonic_time () + 200 * 1000;
  g_autofree gchar *ps = fha_container_ids (h->e, 0, TRUE);
  return strstr (ps, h->gone) == NULL;
}

/* The leader loses its lock while it sits idle (a paused process), and
 * another replica takes over; then its engine asks it to kill an
 * instance. Its runtime sends nothing: the request waits for a proof of
 * the lead that never comes, and is dropped with the runtime. */
START_TEST (stale_leader_sends_nothing)
{
  FhaEnv *e = fha_env_new (1);

  e->rt = fha_runtime_new (e, e->store, 30);
  fha_make_job (e, 1, NULL);
  fha_wait_phase (e->rt, e->job, 0, STG_TASK_RUNNING);
  g_autofree gchar *id = fha_container_ids (e, 0, FALSE);
  ck_assert_uint_eq (strlen (id), 64);

  /* The leader stops proving its lead (paused); another replica takes
   * over once the server has ended the idle session. The runtime's loop
   * runs meanwhile (listings, checks). */
  g_clear_handle_id (&e->prover, g_source_remove);
  g_autoptr (GError) error = NULL;
  g_autoptr (StgStore) b = stg_store_open (e->conninfo, &error);
  FhaTakeover t = { b, 0, 0 };
  ck_assert_msg (stg_test_wait (fha_takes_over, &t, 30000), "no takeover");
  ck_assert_int_eq (t.epoch, 2);
  ck_assert_int_eq (stg_store_lead_left_ms (e->store), 0);

  ck_assert (stg_runtime_kill (e->rt, e->job, 0, &error));
  Held h = { e, id, 0 };
  ck_assert_msg (stg_test_wait (held_or_gone, &h, 30000), "neither held nor sent");
  g_autofree gchar *after = fha_container_ids (e, 0, FALSE);
  ck_assert_msg (strstr (after, id) != NULL, "the stale leader stopped container %.12s", id);
  ck_assert (fha_was_logged ("holding back requests to the hosts"));
  /* Its runtime ends (the replica restarts as a follower): nothing sent. */
  g_clear_pointer (&e->rt, stg_runtime_free);
  g_autofree gchar *still = fha_container_ids (e, 0, FALSE);
  ck_assert_str_eq (still, id);
  fha_env_free (e);
}
END_TEST

/* ---- an older leader's late container ----------------------------------------- */

/* @host's container @id's labels, as lines of a label file. */
static gchar *
label_file (FhaEnv *e, guint host, const gchar *id)
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
  FhaEnv *e;
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
  g_autofree gchar *ps = fha_container_ids (g->e, 0, TRUE);
  return strstr (ps, g->id) == NULL;
}

/* The port the late container's httpd listens on (host network): near
 * the top of the suite's range, which instances reach last. */
#define LATE_PORT 17198

static gboolean
port_closed (gpointer data)
{
  if (!stg_test_port_open ((guint16) GPOINTER_TO_UINT (data)))
    return TRUE;
  g_usleep (100 * 1000);
  return FALSE;
}

/* A new leader adopts what runs, then a container of the old leader's
 * epoch appears for the same instance and run (its create arrived late):
 * the new leader removes it and keeps the one it adopted. */
START_TEST (late_container_of_an_older_epoch_is_removed)
{
  FhaEnv *e = fha_env_new (1);
  g_autoptr (GError) error = NULL;

  e->rt = fha_runtime_new (e, e->store, 30);
  fha_make_job (e, 1, NULL);
  fha_wait_phase (e->rt, e->job, 0, STG_TASK_RUNNING);
  g_autofree gchar *adopted = fha_container_ids (e, 0, FALSE);
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
  FhaTakeover t = { b, 0, 0 };
  ck_assert_msg (stg_test_wait (fha_takes_over, &t, 30000), "no takeover");
  ck_assert_int_eq (t.epoch, 2);
  e->prover = g_timeout_add (LEASE_MS / 4, fha_prove, e);
  e->rt = fha_runtime_new (e, b, 30);
  fha_wait_phase (e->rt, e->job, 0, STG_TASK_RUNNING);

  ck_assert_msg (!stg_test_port_open (LATE_PORT),
                 "something already listens on %u (a process an earlier run left?)", LATE_PORT);
  /* The old leader's late create: same instance, same run, its epoch.
   * httpd, as a container's first process, ignores SIGTERM: a short stop
   * timeout lets the engine end it within the runtime's call timeout (a
   * removal still stopping it when the hosts go would leave it running). */
  g_autofree gchar *with = g_strconcat ("--label-file=", labels, NULL);
  g_autofree gchar *late = stg_test_podman_cli (e->fleet, e->fleet->hosts->pdata[0], "run",
                                                "--detach", "--name=late", "--network=host",
                                                "--stop-timeout=1", with, IMAGE, "httpd", "-f",
                                                "-p", G_STRINGIFY (LATE_PORT), "-h", "/www", NULL);
  g_strstrip (late);
  Gone g = { e, late, 0 };
  if (!stg_test_wait (container_gone, &g, 30000))
    {
      g_autofree gchar *tail = fha_logged_tail (700);
      ck_abort_msg ("the old epoch's late container %.12s is still there; logged: %s", late, tail);
    }
  g_autofree gchar *left = fha_container_ids (e, 0, TRUE);
  ck_assert_str_eq (left, adopted);
  fha_wait_phase (e->rt, e->job, 0, STG_TASK_RUNNING);
  fha_env_free (e);
  /* Its httpd went with it, and with the hosts nothing is left serving. */
  ck_assert_msg (stg_test_wait (port_closed, GUINT_TO_POINTER (LATE_PORT), 15000),
                 "the late container's httpd still listens on %u", LATE_PORT);
}
END_TEST

/* ---- the database goes away -------------------------------------------------- */

static gboolean
end_sessions (gpointer data)
{
  FhaEnv *e = data;
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
  FhaEnv *e;
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
  if (fha_was_logged ("cannot watch instance 0 of www/prod/web yet") || o.failures > 0 ||
      o.phase != STG_TASK_RUNNING)
    return TRUE;
  if (g_get_monotonic_time () < k->next_us)
    return FALSE;
  k->next_us = g_get_monotonic_time () + 200 * 1000;
  g_autofree gchar *ps = fha_container_ids (k->e, 0, FALSE);
  return strstr (ps, k->id) == NULL;
}

/* A new leader adopts a running container, and its database connection
 * ends just then (PostgreSQL restarted, a network cut): it cannot read
 * the task config (_i 0), or the instance's ports (_i 1: the config was
 * read before), to watch the container. The database failed, not the
 * instance: the container keeps running. */
START_TEST (unreadable_config_stops_nothing)
{
  FhaEnv *e = fha_env_new (1);
  g_autoptr (GError) error = NULL;

  e->rt = fha_runtime_new (e, e->store, 30);
  fha_make_job (e, 1, NULL);
  fha_wait_phase (e->rt, e->job, 0, STG_TASK_RUNNING);
  g_autofree gchar *id = fha_container_ids (e, 0, FALSE);

  /* A new leader, whose store has read no config yet. */
  g_clear_handle_id (&e->prover, g_source_remove);
  g_clear_pointer (&e->rt, stg_runtime_free);
  g_clear_pointer (&e->store, stg_store_close);
  StgStore *b = stg_store_open (e->conninfo, &error);
  ck_assert_msg (b != NULL, "%s", error ? error->message : "");
  e->store = b;
  FhaTakeover t = { b, 0, 0 };
  ck_assert_msg (stg_test_wait (fha_takes_over, &t, 30000), "no takeover");
  if (_i == 1)
    {
      g_autoptr (ApiTaskConfig) read = stg_store_get_config (b, e->config, &error);
      ck_assert_msg (read != NULL, "%s", error ? error->message : "");
    }
  /* Its session ends while it lists the hosts, before it watches (at the
   * listing's first turn of the loop: a default idle could come after
   * an engine quick to answer). */
  g_idle_add_full (G_PRIORITY_HIGH, end_sessions, e, NULL);
  e->rt = fha_runtime_new (e, b, 30);
  Kept k = { e, id, 0 };
  ck_assert_msg (stg_test_wait (unwatched_or_judged, &k, 30000), "neither unwatched nor judged");
  StgTaskObservation o;
  stg_runtime_observe (e->rt, e->job, 0, &o);
  ck_assert_msg (o.failures == 0 && o.phase == STG_TASK_RUNNING, "judged %s, %u failures: %s",
                 stg_task_phase_name (o.phase), o.failures, o.cause);
  g_autofree gchar *after = fha_container_ids (e, 0, FALSE);
  ck_assert_msg (strstr (after, id) != NULL, "container %.12s was stopped", id);
  /* A port the database could not give is the database's error. */
  ck_assert_msg (!fha_was_logged ("no free port left") && !fha_was_logged ("over the top"),
                 "a database error reported as no free port");
  fha_env_free (e);
}
END_TEST

/* ---- a host out of reach ------------------------------------------------------ */

/* The pid of every process of @host's container @id (its init and what
 * it started). */
static GArray *
container_pids (FhaEnv *e, guint host, const gchar *id)
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
  FhaEnv *e = fha_env_new (1);
  StgTestPodmanHost *h0 = e->fleet->hosts->pdata[0];
  StgTaskObservation o;

  e->rt = fha_runtime_new (e, e->store, 60);
  fha_make_job (e, 1, NULL);
  fha_wait_phase (e->rt, e->job, 0, STG_TASK_RUNNING);
  g_autofree gchar *id = fha_container_ids (e, 0, FALSE);
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
  fha_wait_phase (e->rt, e->job, 0, STG_TASK_RUNNING);
  stg_runtime_observe (e->rt, e->job, 0, &o);
  ck_assert_uint_eq (o.failures, 0);
  g_autofree gchar *after = fha_container_ids (e, 0, FALSE);
  ck_assert_str_eq (after, id);
  fha_env_free (e);
}
END_TEST

/* ---- a host that comes back --------------------------------------------------- */

/* Another config of the job (a new environment variable): its id. */
static gint64
second_config (FhaEnv *e)
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
engine_events (FhaEnv *e, guint host)
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
  FhaEnv *e = fha_env_new (2);
  StgTestPodmanHost *h0 = e->fleet->hosts->pdata[0];
  g_autoptr (GError) error = NULL;

  e->rt = fha_runtime_new (e, e->store, 1);
  fha_make_job (e, 1, "z0");
  fha_wait_phase (e->rt, e->job, 0, STG_TASK_RUNNING);
  g_autofree gchar *old = fha_container_ids (e, 0, FALSE);
  gint64 v2 = second_config (e);

  stg_test_podman_host_down (h0);
  Judged j = { e->rt, e->job };
  ck_assert_msg (stg_test_wait (lost, &j, 30000), "the instance was not lost with its host");
  stg_test_podman_host_up (e->fleet, h0);
  ck_assert_msg (stg_test_wait (host_answers, e->rt, 30000), "host0 never answered again");
  ck_assert (stg_store_set_instance_config (e->store, e->job, 0, v2, &error));
  ck_assert_msg (stg_runtime_apply (e->rt, e->job, 0, v2, &error), "%s", error->message);
  fha_wait_phase (e->rt, e->job, 0, STG_TASK_RUNNING);

  g_autofree gchar *now = fha_container_ids (e, 0, FALSE);
  ck_assert_str_ne (now, old);
  g_autofree gchar *events = engine_events (e, 0);
  g_autofree gchar *removed = g_strdup_printf ("remove %s", old);
  g_autofree gchar *created = g_strdup_printf ("create %s", now);
  const gchar *r = strstr (events, removed), *c = strstr (events, created);
  ck_assert_msg (r != NULL && c != NULL && r < c,
                 "the new container was created before the old one was removed:\n%s", events);
  fha_env_free (e);
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
  FhaEnv *e = fha_env_new (1);
  StgTestPodmanHost *h0 = e->fleet->hosts->pdata[0];
  g_autoptr (GError) error = NULL;

  e->rt = fha_runtime_new (e, e->store, 60);
  fha_make_job (e, 1, NULL);
  fha_wait_phase (e->rt, e->job, 0, STG_TASK_RUNNING);
  g_autofree gchar *old = fha_container_ids (e, 0, FALSE);
  gint64 v2 = second_config (e);

  g_clear_pointer (&e->rt, stg_runtime_free);
  stg_test_podman_host_down (h0);
  e->rt = fha_runtime_new (e, e->store, 60);
  ck_assert (stg_store_set_instance_config (e->store, e->job, 0, v2, &error));
  ck_assert_msg (stg_runtime_apply (e->rt, e->job, 0, v2, &error), "%s", error->message);
  stg_test_podman_host_up (e->fleet, h0);
  Runs w = { e->rt, e->job, v2 };
  ck_assert_msg (stg_test_wait (runs_config, &w, 60000),
                 "the new config was never applied once the host answered");
  g_autofree gchar *now = fha_container_ids (e, 0, FALSE);
  ck_assert_str_ne (now, old);
  fha_env_free (e);
}
END_TEST

/* A replacement's stop outlasts the call's timeout (the container
 * ignores SIGTERM: the engine kills it after stop_timeout_secs), as a
 * stop whose answer a cut loses: the container's exit that a listing
 * then shows is this replica's doing, not a failure of the instance. */
START_TEST (exit_of_a_container_stopped_unanswered_counts_nothing)
{
  FhaEnv *e = fha_env_new (1);
  g_autoptr (GError) error = NULL;

  e->rt = fha_runtime_new (e, e->store, 60);
  fha_make_job_running (e, 1, NULL,
                        "{\"argv\": [\"sh\", \"-c\", \"trap '' TERM; httpd -f -p "
                        "{{ports[http]}} -h /www\"], \"stop_timeout_secs\": 6," HTTP_CHECKED);
  fha_wait_phase (e->rt, e->job, 0, STG_TASK_RUNNING);
  gint64 v2 = second_config (e);
  ck_assert (stg_store_set_instance_config (e->store, e->job, 0, v2, &error));
  ck_assert_msg (stg_runtime_apply (e->rt, e->job, 0, v2, &error), "%s", error->message);
  Runs w = { e->rt, e->job, v2 };
  ck_assert_msg (stg_test_wait (runs_config, &w, 60000), "the new config never ran");
  StgTaskObservation o;
  stg_runtime_observe (e->rt, e->job, 0, &o);
  ck_assert_msg (o.failures == 0, "counted %u failures: %s", o.failures, o.cause);
  fha_env_free (e);
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
  return fha_run (fleet_ha_suite ());
}
