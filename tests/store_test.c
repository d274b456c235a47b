/* store_test.c: Check suite for src/store: migrations, round trips of
 * configs, jobs, instances and task events, update queries and their
 * indexes, transactions and injected faults, and (store_notices_test.c)
 * webhook notices. The same tests run twice: on SQLite files, then on a
 * real PostgreSQL (tests/pgtest.h, one fresh database per test). */
#include "config.h"

#include <check.h>
#include <libpq-fe.h>
#include <sqlite3.h>
#include <glib/gstdio.h>
#include <string.h>

#include "common/jobkey.h"
#include "store/store.h"
#include "store/plans.h"
#include "pgtest.h"
#include "store_test.h"
#include "testutil.h"

static gchar *dir;
static gchar *db_path;      /* a SQLite file, or a PostgreSQL conninfo */
static StgTestPg *pg;       /* set while the PostgreSQL run goes on */

void
store_test_setup (void)
{
  g_autoptr (GError) error = NULL;

  dir = stg_test_tmpdir ();
  db_path = pg != NULL ? stg_test_pg_new_database (pg, &error)
                       : g_build_filename (dir, "stagger.db", NULL);
  ck_assert_msg (db_path != NULL, "%s", error ? error->message : "");
}

void
store_test_teardown (void)
{
  stg_test_rmtree (dir);
  g_clear_pointer (&dir, g_free);
  g_clear_pointer (&db_path, g_free);
}

StgStore *
store_test_open (void)
{
  g_autoptr (GError) error = NULL;
  StgStore *store = stg_store_open (db_path, &error);

  ck_assert_msg (store != NULL, "open: %s", error ? error->message : "");
  return store;
}

/* One SQL statement on PostgreSQL, on a connection of its own; the first
 * value of the result, if any, as an integer. */
static gint64
raw_pg (const gchar *sql, gboolean want_row)
{
  PGconn *conn = PQconnectdb (db_path);
  PGresult *res = PQexec (conn, sql);
  ExecStatusType status = PQresultStatus (res);
  gint64 n = -1;

  ck_assert_msg (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK, "%s: %s", sql,
                 PQerrorMessage (conn));
  if (want_row)
    {
      ck_assert_int_eq (PQntuples (res), 1);
      n = g_ascii_strtoll (PQgetvalue (res, 0, 0), NULL, 10);
    }
  PQclear (res);
  PQfinish (conn);
  return n;
}

/* Runs one SQL statement on the database directly, as another program would. */
static void
raw_sql (const gchar *sql)
{
  if (pg != NULL)
    {
      raw_pg (sql, FALSE);
      return;
    }
  sqlite3 *db = NULL;
  ck_assert_int_eq (sqlite3_open (db_path, &db), SQLITE_OK);
  ck_assert_int_eq (sqlite3_exec (db, sql, NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close (db);
}

static gint64
raw_count (const gchar *sql)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  gint64 n;

  if (pg != NULL)
    return raw_pg (sql, TRUE);
  ck_assert_int_eq (sqlite3_open (db_path, &db), SQLITE_OK);
  ck_assert_int_eq (sqlite3_prepare_v2 (db, sql, -1, &st, NULL), SQLITE_OK);
  ck_assert_int_eq (sqlite3_step (st), SQLITE_ROW);
  n = sqlite3_column_int64 (st, 0);
  sqlite3_finalize (st);
  sqlite3_close (db);
  return n;
}

static ApiTaskConfig *
make_config (const gchar *role, const gchar *name, const gchar *command)
{
  g_autoptr (ApiJobKey) key = stg_job_key_new (role, "prod", name);
  g_autoptr (ApiExecutorConfig) exec = g_object_new (API_TYPE_EXECUTOR_CONFIG,
                                                     "name", "stagger", "data", command, NULL);
  return g_object_new (API_TYPE_TASK_CONFIG, "job", key, "isService", TRUE,
                       "executorConfig", exec, NULL);
}

/* Stores the config of www/prod/@name running @command: its id (and its
 * version in *@version, nullable). */
static gint64
put (StgStore *store, const gchar *name, const gchar *command, gint *version)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiTaskConfig) c = make_config ("www", name, command);
  gint64 id = 0;

  ck_assert_msg (stg_store_put_config (store, c, &id, version, &error), "put: %s",
                 error ? error->message : "");
  return id;
}

/* ---- migrations ------------------------------------------------------------ */

/* Where each engine records the schema version. */
static const gchar *
version_sql (void)
{
  return pg != NULL ? "SELECT MAX(version) FROM stagger_schema" : "PRAGMA user_version";
}

START_TEST (migrations_apply_in_order_once)
{
  {
    g_autoptr (StgStore) store = store_test_open ();
    ck_assert_int_eq (stg_store_schema_version (store), stg_store_latest_schema_version ());
    ck_assert_int_ge (stg_store_latest_schema_version (), 1);
  }
  /* Mark the file so a second run of the migrations would be visible. */
  raw_sql ("INSERT INTO jobs (role, environment, name, created_ms) VALUES ('m', 'e', 'n', 1)");
  {
    g_autoptr (StgStore) store = store_test_open ();
    ck_assert_int_eq (stg_store_schema_version (store), stg_store_latest_schema_version ());
  }
  ck_assert_int_eq (raw_count ("SELECT COUNT(*) FROM jobs"), 1);
  ck_assert_int_eq (raw_count (version_sql ()), stg_store_latest_schema_version ());
  if (pg != NULL)
    return;
  ck_assert_int_eq (raw_count ("PRAGMA foreign_keys"), 0);   /* per connection: ours sets it */
  ck_assert_int_eq (raw_count ("SELECT COUNT(*) FROM pragma_journal_mode WHERE journal_mode = 'wal'"), 1);
}
END_TEST

START_TEST (newer_database_refused)
{
  {
    g_autoptr (StgStore) store = store_test_open ();
    (void) store;
  }
  g_autofree gchar *bump = g_strdup_printf (pg != NULL ? "UPDATE stagger_schema SET version = %d"
                                                       : "PRAGMA user_version = %d",
                                            stg_store_latest_schema_version () + 1);
  raw_sql (bump);
  g_autoptr (GError) error = NULL;
  g_autoptr (StgStore) store = stg_store_open (db_path, &error);
  ck_assert_ptr_null (store);
  ck_assert (g_error_matches (error, STG_STORE_ERROR, STG_STORE_ERROR_NEWER));
  ck_assert_ptr_nonnull (strstr (error->message, "newer staggerd"));
  /* Untouched. */
  ck_assert_int_eq (raw_count (version_sql ()), stg_store_latest_schema_version () + 1);
}
END_TEST

START_TEST (pragmas_set)
{
  g_autoptr (StgStore) store = store_test_open ();
  g_autoptr (GError) error = NULL;
  gint64 config_id = put (store, "a", "x", NULL);

  /* Foreign keys are enforced on our connection. */
  ck_assert (!stg_store_set_instance_config (store, 4242, 0, config_id, &error));
  ck_assert_ptr_nonnull (error);
}
END_TEST

START_TEST (password_in_url_refused)
{
  static const gchar *const urls[] = {
    "postgresql://stagger:secret@127.0.0.1:18999/stagger",
    "host=127.0.0.1 port=18999 user=stagger password=secret dbname=stagger",
  };
  for (guint i = 0; i < G_N_ELEMENTS (urls); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (StgStore) store = stg_store_open (urls[i], &error);
      ck_assert_ptr_null (store);
      ck_assert_ptr_nonnull (strstr (error->message, "PGPASSWORD"));
      ck_assert_ptr_null (strstr (error->message, "secret"));
    }
}
END_TEST

/* ---- configs ------------------------------------------------------------------ */

START_TEST (configs_stored_once_and_numbered)
{
  g_autoptr (StgStore) store = store_test_open ();
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiTaskConfig) b = make_config ("www", "hello", "v2");
  gint va, va2, vb, vo;
  gint64 ia = put (store, "hello", "v1", &va);
  gint64 ia2 = put (store, "hello", "v1", &va2);
  gint64 ib = put (store, "hello", "v2", &vb);

  put (store, "other", "v1", &vo);
  ck_assert_int_eq (ia, ia2);
  ck_assert_int_eq (va, 1);
  ck_assert_int_eq (va2, 1);
  ck_assert_int_eq (vb, 2);
  ck_assert_int_eq (vo, 1);
  ck_assert_int_ne (ia, ib);
  ck_assert_int_eq (stg_store_config_version (store, ib), 2);

  g_autoptr (ApiTaskConfig) back = stg_store_get_config (store, ib, &error);
  ck_assert_ptr_nonnull (back);
  ck_assert (stg_thrift_equal (THRIFT_STRUCT (back), THRIFT_STRUCT (b)));
  ck_assert_str_eq (back->executorConfig->data, "v2");

  ck_assert_ptr_null (stg_store_get_config (store, 999, &error));
  ck_assert (g_error_matches (error, STG_STORE_ERROR, STG_STORE_ERROR_NOT_FOUND));
}
END_TEST

START_TEST (config_history_lists_versions)
{
  g_autoptr (StgStore) store = store_test_open ();
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiJobKey) key = stg_job_key_new ("www", "prod", "hist");
  gint64 i1 = put (store, "hist", "v1", NULL);
  gint64 job_id;

  put (store, "hist", "v2", NULL);
  put (store, "elsewhere", "v1", NULL);
  ck_assert (stg_store_create_job (store, key, "www", i1, 3, 1000, &job_id, &error));

  g_autoptr (GPtrArray) rows = stg_store_job_config_history (store, key, &error);
  ck_assert_msg (rows != NULL, "history: %s", error ? error->message : "");
  ck_assert_uint_eq (rows->len, 2);
  StgConfigVersionRow *a = rows->pdata[0], *b = rows->pdata[1];
  ck_assert_int_eq (a->version, 1);
  ck_assert_int_eq (a->instances_now, 3);
  ck_assert_int_eq (b->version, 2);
  ck_assert_int_eq (b->instances_now, 0);
  ck_assert_ptr_null (a->update_uid);
  ck_assert_str_eq (b->config->executorConfig->data, "v2");

  g_autoptr (ApiJobKey) none = stg_job_key_new ("www", "prod", "never");
  g_autoptr (GPtrArray) empty = stg_store_job_config_history (store, none, &error);
  ck_assert (empty != NULL && empty->len == 0);
}
END_TEST

START_TEST (damaged_config_reported)
{
  gint64 id;
  {
    g_autoptr (StgStore) store = store_test_open ();
    id = put (store, "hello", "v1", NULL);
  }
  raw_sql (pg != NULL ? "UPDATE task_configs SET blob = '\\x0c0001'::bytea"
                      : "UPDATE task_configs SET blob = x'0c0001'");
  g_autoptr (StgStore) store = store_test_open ();
  g_autoptr (GError) error = NULL;
  ck_assert_ptr_null (stg_store_get_config (store, id, &error));
  ck_assert (g_error_matches (error, STG_STORE_ERROR, STG_STORE_ERROR_CORRUPT));
}
END_TEST

/* ---- jobs and instances ------------------------------------------------------- */

START_TEST (jobs_round_trip)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiJobKey) key = stg_job_key_new ("www", "prod", "hello");
  gint64 job_id, config_id;

  {
    g_autoptr (StgStore) store = store_test_open ();
    config_id = put (store, "hello", "v1", NULL);
    ck_assert (stg_store_create_job (store, key, "alice", config_id, 3, 1234, &job_id, &error));
    ck_assert (!stg_store_create_job (store, key, "bob", config_id, 1, 1, &job_id, &error));
    ck_assert (g_error_matches (error, STG_STORE_ERROR, STG_STORE_ERROR_EXISTS));
    ck_assert_str_eq (error->message, "job www/prod/hello already exists");
    g_clear_error (&error);
  }
  /* Survives closing and reopening. */
  g_autoptr (StgStore) store = store_test_open ();
  g_autoptr (StgJobRow) job = stg_store_get_job (store, key, &error);
  ck_assert_ptr_nonnull (job);
  ck_assert_int_eq (job->id, job_id);
  ck_assert_str_eq (job->owner, "alice");
  ck_assert_int_eq (job->created_ms, 1234);
  ck_assert_int_eq (job->instance_count, 3);

  g_autoptr (GArray) rows = stg_store_list_instances (store, job_id, &error);
  ck_assert_uint_eq (rows->len, 3);
  for (guint i = 0; i < 3; i++)
    {
      StgInstanceRow *r = &g_array_index (rows, StgInstanceRow, i);
      ck_assert_int_eq (r->instance_id, (gint) i);
      ck_assert_int_eq (r->config_id, config_id);
      ck_assert_int_eq (r->status, API_SCHEDULE_STATUS_PENDING);
    }

  StgInstanceRow facts = g_array_index (rows, StgInstanceRow, 1);
  facts.status = API_SCHEDULE_STATUS_RUNNING;
  facts.pid = 4321;
  facts.pid_start = 99;
  facts.run_id = 2;
  facts.run_config_id = config_id;
  facts.failure_count = 1;
  facts.status_ms = 555;
  ck_assert (stg_store_set_instance_facts (store, job_id, &facts, &error));
  StgInstanceRow back;
  ck_assert (stg_store_get_instance (store, job_id, 1, &back, &error));
  ck_assert_int_eq (back.pid, 4321);
  ck_assert_int_eq (back.pid_start, 99);
  ck_assert_int_eq (back.status, API_SCHEDULE_STATUS_RUNNING);
  ck_assert_int_eq (back.run_config_id, config_id);
  ck_assert_int_eq (back.failure_count, 1);

  g_autoptr (GArray) statuses = stg_store_count_statuses (store, job_id, &error);
  ck_assert_uint_eq (statuses->len, 2);
  g_autoptr (GArray) configs = stg_store_count_configs (store, job_id, &error);
  ck_assert_uint_eq (configs->len, 1);
  ck_assert_int_eq (g_array_index (configs, StgCount, 0).count, 3);

  ck_assert (stg_store_delete_instance (store, job_id, 2, &error));
  ck_assert (!stg_store_get_instance (store, job_id, 2, &back, &error));
  ck_assert (g_error_matches (error, STG_STORE_ERROR, STG_STORE_ERROR_NOT_FOUND));
  g_clear_error (&error);

  g_autoptr (ApiJobKey) key2 = stg_job_key_new ("aaa", "prod", "first");
  gint64 job2;
  ck_assert (stg_store_create_job (store, key2, "", config_id, 1, 1, &job2, &error));
  g_autoptr (GPtrArray) all = stg_store_list_jobs (store, NULL, &error);
  ck_assert_msg (all != NULL, "%s", error ? error->message : "");
  ck_assert_uint_eq (all->len, 2);
  ck_assert_str_eq (((StgJobRow *) all->pdata[0])->key->role, "aaa");
  g_autoptr (GPtrArray) www = stg_store_list_jobs (store, "www", &error);
  ck_assert_uint_eq (www->len, 1);

  ck_assert (stg_store_delete_job (store, job_id, &error));
  g_autoptr (StgJobRow) gone = stg_store_get_job (store, key, &error);
  ck_assert_ptr_null (gone);
  ck_assert_int_eq (raw_count ("SELECT COUNT(*) FROM instances WHERE job_id = 1"), 0);
}
END_TEST

START_TEST (task_events_newest_kept)
{
  g_autoptr (StgStore) store = store_test_open ();
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiJobKey) key = stg_job_key_new ("www", "prod", "hello");
  gint64 job_id, config_id;

  config_id = put (store, "hello", "v1", NULL);
  ck_assert (stg_store_create_job (store, key, "", config_id, 1, 0, &job_id, &error));
  for (gint i = 0; i < 10; i++)
    ck_assert (stg_store_add_task_event (store, job_id, 0, 100 + i, i % 3,
                                         i == 9 ? "last one" : NULL, &error));
  g_autoptr (GPtrArray) events = stg_store_list_task_events (store, job_id, 0, 4, &error);
  ck_assert_uint_eq (events->len, 4);
  ApiTaskEvent *first = events->pdata[0];
  ApiTaskEvent *last = events->pdata[3];
  ck_assert_int_eq (first->timestamp, 106);
  ck_assert_int_eq (last->timestamp, 109);
  ck_assert (last->__isset_message);
  ck_assert_str_eq (last->message, "last one");
  ck_assert (!first->__isset_message);
}
END_TEST

START_TEST (quotas_round_trip)
{
  g_autoptr (StgStore) store = store_test_open ();
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiResourceAggregate) none = stg_store_get_quota (store, "www", &error);
  ck_assert_ptr_null (none);
  ck_assert_ptr_null (error);

  g_autoptr (ApiResourceAggregate) q = g_object_new (API_TYPE_RESOURCE_AGGREGATE, NULL);
  g_hash_table_add (q->resources, g_object_new (API_TYPE_RESOURCE, "numCpus", 2.5, NULL));
  g_hash_table_add (q->resources, g_object_new (API_TYPE_RESOURCE, "ramMb", (gint64) 4096, NULL));
  q->__isset_resources = TRUE;
  ck_assert (stg_store_set_quota (store, "www", q, &error));
  g_hash_table_add (q->resources, g_object_new (API_TYPE_RESOURCE, "diskMb", (gint64) 10, NULL));
  ck_assert (stg_store_set_quota (store, "www", q, &error));
  ck_assert (stg_store_set_quota (store, "db", q, &error));
  g_autoptr (ApiResourceAggregate) back = stg_store_get_quota (store, "www", &error);
  ck_assert_ptr_nonnull (back);
  ck_assert (stg_thrift_equal (THRIFT_STRUCT (back), THRIFT_STRUCT (q)));
  ck_assert_int_eq (raw_count ("SELECT COUNT(*) FROM quotas"), 2);
}
END_TEST

START_TEST (snapshot_says_what_it_did)
{
  g_autoptr (StgStore) store = store_test_open ();
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiTaskConfig) c = make_config ("www", "hello", "v1");
  gint64 config_id;

  ck_assert (stg_store_put_config (store, c, &config_id, NULL, &error));
  g_autofree gchar *what = stg_store_snapshot (store, &error);
  ck_assert_msg (what != NULL, "%s", error ? error->message : "");
  if (pg != NULL)
    ck_assert_ptr_nonnull (strstr (what, "PostgreSQL's own means"));
  else
    {
      ck_assert_ptr_nonnull (strstr (what, "checkpointed the write-ahead log"));
      /* The log is empty: the main file holds the commit. */
      g_autofree gchar *wal = g_strconcat (db_path, "-wal", NULL);
      GStatBuf st;
      ck_assert (g_stat (wal, &st) != 0 || st.st_size == 0);
    }
}
END_TEST

START_TEST (task_events_of_gone_instances_deleted)
{
  g_autoptr (StgStore) store = store_test_open ();
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiJobKey) key = stg_job_key_new ("www", "prod", "hello");
  gint64 job_id, config_id;
  guint deleted = 0;

  config_id = put (store, "hello", "v1", NULL);
  ck_assert (stg_store_create_job (store, key, "", config_id, 3, 0, &job_id, &error));
  for (gint32 i = 0; i < 3; i++)
    ck_assert (stg_store_add_task_event (store, job_id, i, 100, 2, NULL, &error));
  ck_assert (stg_store_delete_instance (store, job_id, 2, &error));
  /* Instance 2 is gone: only its history goes. */
  ck_assert (stg_store_delete_task_events (store, job_id, -1, &deleted, &error));
  ck_assert_uint_eq (deleted, 1);
  ck_assert (stg_store_delete_task_events (store, job_id, 0, &deleted, &error));
  ck_assert_uint_eq (deleted, 2);
  g_autoptr (GPtrArray) kept = stg_store_list_task_events (store, job_id, 1, 10, &error);
  ck_assert_uint_eq (kept->len, 1);
}
END_TEST

/* Job @key of @n instances, its last one FINISHED in run 2; its id. */
static gint64
job_with_finished (StgStore *store, const ApiJobKey *key, gint32 n)
{
  g_autoptr (GError) error = NULL;
  gint64 job_id, config_id = put (store, key->name, "v1", NULL);
  StgInstanceRow row = { .instance_id = n - 1,
                         .status = API_SCHEDULE_STATUS_FINISHED,
                         .run_id = 2 };

  ck_assert (stg_store_create_job (store, key, "", config_id, n, 0, &job_id, &error));
  ck_assert (stg_store_set_instance_facts (store, job_id, &row, &error));
  return job_id;
}

/* An instance that ends keeps its task, KILLED (a FINISHED one stays
 * FINISHED), the newest STG_STORE_ENDED_PER_JOB of a job, until old
 * events go or they are pruned; a job that is gone keeps them too. */
START_TEST (ended_tasks_kept_and_bounded)
{
  g_autoptr (StgStore) store = store_test_open ();
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiJobKey) key = stg_job_key_new ("www", "prod", "hello");
  const gint32 n = STG_STORE_ENDED_PER_JOB + 5;
  gint64 job_id = job_with_finished (store, key, n);
  guint deleted = 0;

  for (gint32 i = 0; i < n; i++)
    ck_assert_msg (stg_store_end_instance (store, job_id, i, 1000 + i, &error), "end: %s",
                   error ? error->message : "");
  ck_assert (stg_store_delete_job (store, job_id, &error));
  g_autoptr (GPtrArray) ended = stg_store_list_ended_tasks (store, "www", &error);
  ck_assert_uint_eq (ended->len, STG_STORE_ENDED_PER_JOB);
  const ApiScheduledTask *first = ended->pdata[0];
  ck_assert_int_eq (first->assignedTask->instanceId, 5); /* the oldest five went */
  ck_assert_int_eq (first->status, API_SCHEDULE_STATUS_KILLED);
  const ApiScheduledTask *last = ended->pdata[ended->len - 1];
  ck_assert_int_eq (last->status, API_SCHEDULE_STATUS_FINISHED);
  ck_assert_str_eq (first->assignedTask->task->job->name, "hello");
  g_autoptr (GPtrArray) others = stg_store_list_ended_tasks (store, "db", &error);
  ck_assert_uint_eq (others->len, 0);

  /* Old events go, and the tasks that ended as long ago. */
  ck_assert (stg_store_prune (store, 0, 1000 + 50, 1000, &deleted, &error));
  g_autoptr (GPtrArray) newer = stg_store_list_ended_tasks (store, NULL, &error);
  ck_assert_uint_eq (newer->len, (guint) n - 50);
  deleted = 0;
  ck_assert (stg_store_delete_ended_tasks (store, key, 60, &deleted, &error));
  ck_assert_uint_eq (deleted, 1);
  ck_assert (stg_store_delete_ended_tasks (store, key, -1, &deleted, &error));
  ck_assert_uint_eq (deleted, (guint) n - 50);
}
END_TEST

START_TEST (ended_task_keeps_its_end)
{
  g_autoptr (StgStore) store = store_test_open ();
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiJobKey) key = stg_job_key_new ("www", "prod", "batch");
  gint64 job_id = job_with_finished (store, key, 1);

  ck_assert (stg_store_add_task_event (store, job_id, 0, 10, API_SCHEDULE_STATUS_FINISHED, "done",
                                       &error));
  ck_assert (stg_store_end_instance (store, job_id, 0, 20, &error));
  g_autoptr (GPtrArray) ended = stg_store_list_ended_tasks (store, NULL, &error);
  ck_assert_uint_eq (ended->len, 1);
  const ApiScheduledTask *task = ended->pdata[0];
  ck_assert_int_eq (task->status, API_SCHEDULE_STATUS_FINISHED);
  ck_assert_str_eq (task->assignedTask->taskId, "www-prod-batch-0-2");
  ck_assert_uint_eq (task->taskEvents->len, 1);
  StgInstanceRow gone;
  ck_assert (!stg_store_get_instance (store, job_id, 0, &gone, NULL));
}
END_TEST

START_TEST (maintenance_round_trip)
{
  g_autoptr (StgStore) store = store_test_open ();
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiCountSlaPolicy) count = g_object_new (API_TYPE_COUNT_SLA_POLICY, "count",
                                                      (gint64) 2, "durationSecs", (gint64) 60,
                                                      NULL);
  g_autoptr (ApiSlaPolicy) policy = g_object_new (API_TYPE_SLA_POLICY, "countSlaPolicy", count,
                                                  NULL);
  g_autoptr (ApiHostMaintenanceRequest) req = g_object_new (API_TYPE_HOST_MAINTENANCE_REQUEST,
                                                            "host", "b", "defaultSlaPolicy", policy,
                                                            "timeoutSecs", (gint64) 600,
                                                            "createdTimestampMs", (gint64) 5, NULL);

  ck_assert (stg_store_set_maintenance (store, "b", API_MAINTENANCE_MODE_DRAINING, req, 7, &error));
  ck_assert (
      stg_store_set_maintenance (store, "a", API_MAINTENANCE_MODE_SCHEDULED, NULL, 8, &error));
  g_autoptr (GPtrArray) rows = stg_store_list_maintenance (store, &error);
  ck_assert_uint_eq (rows->len, 2);
  StgMaintenanceRow *a = rows->pdata[0], *b = rows->pdata[1];
  ck_assert_str_eq (a->host, "a");
  ck_assert_int_eq (a->mode, API_MAINTENANCE_MODE_SCHEDULED);
  ck_assert_ptr_null (a->request);
  ck_assert_int_eq (b->mode, API_MAINTENANCE_MODE_DRAINING);
  ck_assert_int_eq (b->since_ms, 7);
  ck_assert (stg_thrift_equal (THRIFT_STRUCT (b->request), THRIFT_STRUCT (req)));
  /* DRAINED drops the request; ending removes the row. */
  ck_assert (stg_store_set_maintenance (store, "b", API_MAINTENANCE_MODE_DRAINED, NULL, 9, &error));
  ck_assert (stg_store_end_maintenance (store, "a", &error));
  g_autoptr (GPtrArray) after = stg_store_list_maintenance (store, &error);
  ck_assert_uint_eq (after->len, 1);
  ck_assert_int_eq (((StgMaintenanceRow *) after->pdata[0])->mode, API_MAINTENANCE_MODE_DRAINED);
  ck_assert_ptr_null (((StgMaintenanceRow *) after->pdata[0])->request);
}
END_TEST

/* Plans by name, or all of them, newest first: on PostgreSQL too, where
 * an untyped NULL parameter once failed the query. */
START_TEST (plans_listed_by_name)
{
  g_autoptr (StgStore) store = store_test_open ();
  g_autoptr (GError) error = NULL;
  const gchar *blob = pg != NULL ? "'\\x00'" : "X'00'";

  for (gint i = 0; i < 3; i++)
    {
      g_autofree gchar *sql = g_strdup_printf (
          "INSERT INTO rollout_plans (uid, name, \"user\", status, active, since_ms, "
          "created_ms, plan) VALUES ('u%d', '%s', 'me', 1, 1, %d, %d, %s)",
          i, i == 1 ? "other" : "web", i, i, blob);
      raw_sql (sql);
    }
  g_autoptr (GPtrArray) web = stg_store_list_plans (store, "web", FALSE, 0, 0, &error);
  ck_assert_msg (web != NULL, "%s", error ? error->message : "");
  ck_assert_uint_eq (web->len, 2);
  ck_assert_str_eq (((StgPlanRow *) web->pdata[0])->uid, "u2");
  ck_assert_str_eq (((StgPlanRow *) web->pdata[1])->uid, "u0");
  g_autoptr (GPtrArray) all = stg_store_list_plans (store, NULL, FALSE, 0, 0, &error);
  ck_assert_msg (all != NULL, "%s", error ? error->message : "");
  ck_assert_uint_eq (all->len, 3);
  g_autoptr (GPtrArray) none = stg_store_list_plans (store, "nothing", FALSE, 0, 0, &error);
  ck_assert_uint_eq (none->len, 0);
}
END_TEST

START_TEST (backups_stage_commit_and_install)
{
  g_autoptr (StgStore) store = store_test_open ();
  g_autoptr (GError) error = NULL;
  g_autofree gchar *backups_dir = g_build_filename (dir, "backups", NULL);
  g_autoptr (StgBackups) b = stg_backups_new (store, db_path, backups_dir);

  if (pg != NULL)
    {
      /* PostgreSQL's own backups apply: every call says so. */
      ck_assert_ptr_null (stg_backups_write (b, 0, &error));
      ck_assert (g_error_matches (error, STG_STORE_ERROR, STG_STORE_ERROR_UNSUPPORTED));
      ck_assert_ptr_nonnull (strstr (error->message, "its own backups apply"));
      g_clear_error (&error);
      ck_assert (!stg_backups_stage (b, "scheduler-backup-1", &error));
      ck_assert (g_error_matches (error, STG_STORE_ERROR, STG_STORE_ERROR_UNSUPPORTED));
      return;
    }
  g_autoptr (ApiJobKey) key = stg_job_key_new ("www", "prod", "hello");
  gint64 job_id, config_id = put (store, "hello", "v1", NULL);
  ck_assert (stg_store_create_job (store, key, "", config_id, 2, 0, &job_id, &error));
  /* Two in one second: the second gets "-2". */
  g_autofree gchar *one = stg_backups_write (b, 86400 * 1000, &error);
  g_autofree gchar *two = stg_backups_write (b, 86400 * 1000, &error);
  ck_assert_str_eq (one, "scheduler-backup-1970-01-02-00-00-00");
  ck_assert_str_eq (two, "scheduler-backup-1970-01-02-00-00-00-2");
  ck_assert (stg_store_delete_job (store, job_id, &error));
  guint removed = 0;
  ck_assert (stg_backups_prune (b, 1, &removed, &error));
  ck_assert_uint_eq (removed, 1);
  g_autoptr (GPtrArray) left = stg_backups_list (b, &error);
  ck_assert_uint_eq (left->len, 1);
  ck_assert_str_eq (left->pdata[0], two);

  ck_assert (!stg_backups_stage (b, "../stagger.db", &error));
  ck_assert (g_error_matches (error, STG_STORE_ERROR, STG_STORE_ERROR_INVALID));
  g_clear_error (&error);
  ck_assert (!stg_backups_stage (b, one, &error)); /* pruned */
  ck_assert (g_error_matches (error, STG_STORE_ERROR, STG_STORE_ERROR_NOT_FOUND));
  g_clear_error (&error);
  ck_assert_msg (stg_backups_stage (b, two, &error), "%s", error ? error->message : "");
  StgStore *staged = stg_backups_staged (b, NULL, &error);
  g_autoptr (StgJobRow) there = stg_store_get_job (staged, key, &error);
  ck_assert_int_eq (there->instance_count, 2);
  ck_assert (stg_backups_commit (b, &error));
  ck_assert_ptr_null (stg_backups_staged (b, NULL, NULL));

  /* The next opening of the store finds the backup in place. */
  g_clear_pointer (&store, stg_store_close);
  gboolean installed = FALSE;
  ck_assert (stg_store_install_recovered (db_path, &installed, &error));
  ck_assert (installed);
  g_autoptr (StgStore) again = store_test_open ();
  g_autoptr (StgJobRow) back = stg_store_get_job (again, key, &error);
  ck_assert_ptr_nonnull (back);
  ck_assert (stg_store_install_recovered (db_path, &installed, &error));
  ck_assert (!installed);
}
END_TEST

/* ---- transactions --------------------------------------------------------------- */

START_TEST (transactions_nest_and_roll_back)
{
  g_autoptr (StgStore) store = store_test_open ();
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiJobKey) k1 = stg_job_key_new ("www", "prod", "one");
  g_autoptr (ApiJobKey) k2 = stg_job_key_new ("www", "prod", "two");
  gint64 config_id, job;
  guint64 commits;

  config_id = put (store, "hello", "v1", NULL);
  commits = stg_store_commit_count (store);

  ck_assert (stg_store_begin (store, &error));
  ck_assert (stg_store_create_job (store, k1, "", config_id, 2, 0, &job, &error));
  ck_assert (stg_store_begin (store, &error));
  ck_assert (stg_store_create_job (store, k2, "", config_id, 2, 0, &job, &error));
  stg_store_rollback (store);   /* only the inner level */
  ck_assert (stg_store_commit (store, &error));
  ck_assert_uint_eq (stg_store_commit_count (store), commits + 1);

  g_autoptr (StgJobRow) one = stg_store_get_job (store, k1, NULL);
  g_autoptr (StgJobRow) two = stg_store_get_job (store, k2, NULL);
  ck_assert_ptr_nonnull (one);
  ck_assert_ptr_null (two);
}
END_TEST

START_TEST (injected_commit_failure_leaves_nothing)
{
  g_autoptr (StgStore) store = store_test_open ();
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiJobKey) k = stg_job_key_new ("www", "prod", "one");
  gint64 config_id, job;

  config_id = put (store, "hello", "v1", NULL);
  stg_store_fail_commit (store, 2);
  ck_assert (stg_store_begin (store, &error));
  ck_assert (stg_store_commit (store, &error));           /* the first passes */
  ck_assert (!stg_store_create_job (store, k, "", config_id, 5, 0, &job, &error));
  ck_assert (g_error_matches (error, STG_STORE_ERROR, STG_STORE_ERROR_INJECTED));
  ck_assert (!stg_store_in_transaction (store));
  g_autoptr (StgJobRow) row = stg_store_get_job (store, k, NULL);
  ck_assert_ptr_null (row);
  ck_assert_int_eq (raw_count ("SELECT COUNT(*) FROM instances"), 0);
  /* And the next one works. */
  g_clear_error (&error);
  ck_assert (stg_store_create_job (store, k, "", config_id, 5, 0, &job, &error));
}
END_TEST

/* ---- update queries ---------------------------------------------------------------- */

static void
insert_update (const gchar *uid, const gchar *role, const gchar *name, const gchar *user,
               gint status, gint64 created)
{
  const gchar *blob = pg != NULL ? "'\\x00'::bytea" : "x'00'";
  g_autofree gchar *sql = g_strdup_printf (
      "INSERT INTO updates (uid, role, environment, name, \"user\", status, active, created_ms, "
      "modified_ms, request, instructions) VALUES ('%s', '%s', 'prod', '%s', '%s', %d, %d, %"
      G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %s, %s)",
      uid, role, name, user, status, status <= 3 || status >= 9, created, created + 1,
      blob, blob);
  raw_sql (sql);
}

static GPtrArray *
query (StgStore *store, ApiJobUpdateQuery *q)
{
  g_autoptr (GError) error = NULL;
  GPtrArray *out = stg_store_query_update_summaries (store, q, &error);
  ck_assert_msg (out != NULL, "query: %s", error ? error->message : "");
  return out;
}

/* One query of the four updates below, and what it finds: @count
 * summaries, the first ones @ids (space-separated, newest first). */
typedef struct
{
  const gchar *what;
  const gchar *role, *job, *user, *key; /* NULL: no such filter (job: a name of www/prod) */
  gint statuses[3];                     /* -1 ends them */
  gint offset, limit;                   /* 0: not set */
  guint count;
  const gchar *ids;
} QueryCase;

static const QueryCase query_cases[] = {
  { "by role", .role = "www", .statuses = { -1 }, .count = 3 },
  { "by job", .job = "hello", .statuses = { -1 }, .count = 2, .ids = "u2" },
  { "by user", .user = "alice", .statuses = { -1 }, .count = 2 },
  /* ROLLING_FORWARD is 0: a value the generated reader used to drop. */
  { "by status",
    .statuses = { API_JOB_UPDATE_STATUS_ABORTED, API_JOB_UPDATE_STATUS_ROLLING_FORWARD, -1 },
    .count = 2 },
  { "a page", .statuses = { -1 }, .offset = 1, .limit = 2, .count = 2, .ids = "u3 u2" },
  { "by key", .job = "hello", .key = "u1", .statuses = { -1 }, .count = 1 },
};

static ApiJobUpdateQuery *
query_of (const QueryCase *c)
{
  ApiJobUpdateQuery *q = g_object_new (API_TYPE_JOB_UPDATE_QUERY, NULL);
  g_autoptr (ApiJobKey) job = c->job ? stg_job_key_new ("www", "prod", c->job) : NULL;

  if (c->role != NULL)
    g_object_set (q, "role", c->role, NULL);
  if (c->user != NULL)
    g_object_set (q, "user", c->user, NULL);
  if (c->key != NULL)
    {
      g_autoptr (ApiJobUpdateKey) key = g_object_new (API_TYPE_JOB_UPDATE_KEY, "job", job, "id",
                                                      c->key, NULL);
      g_object_set (q, "key", key, NULL);
    }
  else if (job != NULL)
    g_object_set (q, "jobKey", job, NULL);
  for (guint i = 0; c->statuses[i] != -1; i++)
    {
      g_hash_table_add (q->updateStatuses, GINT_TO_POINTER (c->statuses[i]));
      q->__isset_updateStatuses = TRUE;
    }
  if (c->offset != 0)
    g_object_set (q, "offset", c->offset, NULL);
  if (c->limit != 0)
    g_object_set (q, "limit", c->limit, NULL);
  return q;
}

START_TEST (update_queries_filter_page_and_order)
{
  {
    g_autoptr (StgStore) store = store_test_open ();
    (void) store;
  }
  insert_update ("u1", "www", "hello", "alice", API_JOB_UPDATE_STATUS_ROLLED_FORWARD, 100);
  insert_update ("u2", "www", "hello", "bob", API_JOB_UPDATE_STATUS_ROLLED_BACK, 200);
  insert_update ("u3", "www", "other", "alice", API_JOB_UPDATE_STATUS_ABORTED, 300);
  insert_update ("u4", "db", "pg", "carol", API_JOB_UPDATE_STATUS_ROLLING_FORWARD, 400);
  g_autoptr (StgStore) store = store_test_open ();

  g_autoptr (GPtrArray) all = query (store, NULL);
  ck_assert_uint_eq (all->len, 4);
  ApiJobUpdateSummary *newest = all->pdata[0];
  ck_assert_str_eq (newest->key->id, "u4");
  ck_assert_str_eq (newest->key->job->name, "pg");
  ck_assert_str_eq (newest->user, "carol");
  ck_assert_int_eq (newest->state->status, API_JOB_UPDATE_STATUS_ROLLING_FORWARD);
  ck_assert_int_eq (newest->state->createdTimestampMs, 400);
  ck_assert_int_eq (newest->state->lastModifiedTimestampMs, 401);

  for (guint i = 0; i < G_N_ELEMENTS (query_cases); i++)
    {
      const QueryCase *c = &query_cases[i];
      g_autoptr (ApiJobUpdateQuery) q = query_of (c);
      g_autoptr (GPtrArray) found = query (store, q);
      g_auto (GStrv) ids = g_strsplit (c->ids ? c->ids : "", " ", -1);
      ck_assert_msg (found->len == c->count, "%s: %u found", c->what, found->len);
      for (guint k = 0; ids[k] != NULL && ids[k][0] != '\0'; k++)
        ck_assert_msg (g_str_equal (((ApiJobUpdateSummary *) found->pdata[k])->key->id, ids[k]),
                       "%s: %s is not #%u", c->what, ids[k], k);
    }
}
END_TEST

/* The planner uses an index for each filter shape. */
START_TEST (update_queries_use_indexes)
{
  {
    g_autoptr (StgStore) store = store_test_open ();
    (void) store;
  }
  static const gchar *const shapes[] = {
    ("SELECT uid FROM updates WHERE 1 AND role = 'a' AND environment = 'b' AND name = 'c' "
     "ORDER BY created_ms DESC, id DESC LIMIT 10"),
    "SELECT uid FROM updates WHERE 1 AND role = 'a' ORDER BY created_ms DESC, id DESC LIMIT 10",
    "SELECT uid FROM updates WHERE 1 AND user = 'a' ORDER BY created_ms DESC, id DESC LIMIT 10",
    "SELECT uid FROM updates WHERE 1 AND status IN (1) ORDER BY created_ms DESC, id DESC LIMIT 10",
    "SELECT uid FROM updates WHERE 1 ORDER BY created_ms DESC, id DESC LIMIT 10",
  };
  sqlite3 *db = NULL;
  ck_assert_int_eq (sqlite3_open (db_path, &db), SQLITE_OK);
  for (guint i = 0; i < G_N_ELEMENTS (shapes); i++)
    {
      g_autofree gchar *sql = g_strconcat ("EXPLAIN QUERY PLAN ", shapes[i], NULL);
      sqlite3_stmt *st = NULL;
      g_autoptr (GString) plan = g_string_new (NULL);
      ck_assert_int_eq (sqlite3_prepare_v2 (db, sql, -1, &st, NULL), SQLITE_OK);
      while (sqlite3_step (st) == SQLITE_ROW)
        g_string_append_printf (plan, "%s; ", sqlite3_column_text (st, 3));
      sqlite3_finalize (st);
      ck_assert_msg (strstr (plan->str, "INDEX updates_by_") != NULL,
                     "no index for: %s\nplan: %s", shapes[i], plan->str);
      ck_assert_msg (strstr (plan->str, "TEMP B-TREE") == NULL,
                     "sorts for: %s\nplan: %s", shapes[i], plan->str);
    }
  sqlite3_close (db);
}
END_TEST

/* The suite; the query-plan test only where the plans are SQLite's. */
static Suite *
store_suite (const gchar *name, gboolean sqlite)
{
  Suite *s = suite_create (name);
  TCase *tc;

  tc = tcase_create ("migrations");
  tcase_add_checked_fixture (tc, store_test_setup, store_test_teardown);
  tcase_add_test (tc, migrations_apply_in_order_once);
  tcase_add_test (tc, newer_database_refused);
  tcase_add_test (tc, pragmas_set);
  tcase_add_test (tc, password_in_url_refused);
  suite_add_tcase (s, tc);

  tc = tcase_create ("rows");
  tcase_add_checked_fixture (tc, store_test_setup, store_test_teardown);
  tcase_add_test (tc, configs_stored_once_and_numbered);
  tcase_add_test (tc, damaged_config_reported);
  tcase_add_test (tc, config_history_lists_versions);
  tcase_add_test (tc, jobs_round_trip);
  tcase_add_test (tc, task_events_newest_kept);
  tcase_add_test (tc, quotas_round_trip);
  tcase_add_test (tc, snapshot_says_what_it_did);
  tcase_add_test (tc, task_events_of_gone_instances_deleted);
  tcase_add_test (tc, ended_tasks_kept_and_bounded);
  tcase_add_test (tc, ended_task_keeps_its_end);
  tcase_add_test (tc, maintenance_round_trip);
  tcase_add_test (tc, plans_listed_by_name);
  tcase_add_test (tc, backups_stage_commit_and_install);
  suite_add_tcase (s, tc);

  tc = tcase_create ("transactions");
  tcase_add_checked_fixture (tc, store_test_setup, store_test_teardown);
  tcase_add_test (tc, transactions_nest_and_roll_back);
  tcase_add_test (tc, injected_commit_failure_leaves_nothing);
  suite_add_tcase (s, tc);

  tc = tcase_create ("updates");
  tcase_add_checked_fixture (tc, store_test_setup, store_test_teardown);
  tcase_add_test (tc, update_queries_filter_page_and_order);
  if (sqlite)
    tcase_add_test (tc, update_queries_use_indexes);
  suite_add_tcase (s, tc);

  suite_add_tcase (s, store_notices_tcase ());
  return s;
}

int
main (void)
{
  g_autoptr (GError) error = NULL;
  SRunner *sr = srunner_create (store_suite ("store (SQLite)", TRUE));
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);

  pg = stg_test_pg_start (&error);
  if (pg == NULL)
    {
      g_printerr ("store_test: cannot start PostgreSQL: %s\n", error->message);
      return 1;
    }
  sr = srunner_create (store_suite ("store (PostgreSQL)", FALSE));
  srunner_run_all (sr, CK_NORMAL);
  failed += srunner_ntests_failed (sr);
  srunner_free (sr);
  g_clear_pointer (&pg, stg_test_pg_free);
  return failed == 0 ? 0 : 1;
}
