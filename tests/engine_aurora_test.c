/* engine_aurora_test.c: Check suite for what the engine takes over from
 * Aurora's scheduler: tiers (TaskConfig.tier checked, production following
 * it), the TaskConfig fields Stagger refuses by name, quotas (consumption
 * by pool and the refusals at createJob, addInstances and startJobUpdate),
 * createJob of a job whose instances have all ended, populateJobConfig,
 * and explicit reconciliation in batches of the size asked.
 * A fake clock and a scripted runtime drive a real store on a temporary
 * file (engine_fixture.c). */
#include "config.h"

#include <check.h>

#include <string.h>

#include "common/enums.h"
#include "common/jobkey.h"
#include "engine_fixture.h"

#define S(x) API_JOB_UPDATE_STATUS_##x

/* A config of the fixture's job in @tier (NULL: unset) asking for @cpus,
 * @ram and @disk (0: not asked). */
static ApiTaskConfig *
sized (const gchar *data, const gchar *tier, gdouble cpus, gint64 ram, gint64 disk)
{
  ApiTaskConfig *task = fx_config (data);

  if (tier != NULL)
    g_object_set (task, "tier", tier, NULL);
  if (cpus > 0)
    g_hash_table_add (task->resources, g_object_new (API_TYPE_RESOURCE, "numCpus", cpus, NULL));
  if (ram > 0)
    g_hash_table_add (task->resources, g_object_new (API_TYPE_RESOURCE, "ramMb", ram, NULL));
  if (disk > 0)
    g_hash_table_add (task->resources, g_object_new (API_TYPE_RESOURCE, "diskMb", disk, NULL));
  return task;
}

static ApiJobConfiguration *
job_of (ApiTaskConfig *task, gint32 count)
{
  return g_object_new (API_TYPE_JOB_CONFIGURATION, "key", task->job, "taskConfig", task,
                       "instanceCount", count, NULL);
}

/* createJob of @task on @count instances: NULL when done, else the error's
 * message (to free). */
static gchar *
create (ApiTaskConfig *task, gint32 count)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiJobConfiguration) job = job_of (task, count);

  if (stg_engine_create_job (fx.engine, job, "www", &error))
    {
      g_autoptr (StgJobRow) row = stg_store_get_job (fx.store, fx.key, NULL);
      fx.job_id = row != NULL ? row->id : 0;
      return NULL;
    }
  ck_assert_int_eq (error->domain, STG_ENGINE_ERROR);
  return g_strdup (error->message);
}

static void
set_quota (const gchar *role, gdouble cpus, gint64 ram, gint64 disk)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiResourceAggregate) quota = g_object_new (API_TYPE_RESOURCE_AGGREGATE, NULL);

  g_hash_table_add (quota->resources, g_object_new (API_TYPE_RESOURCE, "numCpus", cpus, NULL));
  g_hash_table_add (quota->resources, g_object_new (API_TYPE_RESOURCE, "ramMb", ram, NULL));
  g_hash_table_add (quota->resources, g_object_new (API_TYPE_RESOURCE, "diskMb", disk, NULL));
  ck_assert_msg (stg_engine_set_quota (fx.engine, role, quota, "root", &error), "setQuota: %s",
                 error ? error->message : "");
}

static StgQuotaInfo
quota_of (const gchar *role)
{
  g_autoptr (GError) error = NULL;
  StgQuotaInfo info;

  ck_assert_msg (stg_engine_get_quota (fx.engine, role, &info, &error), "getQuota: %s",
                 error ? error->message : "");
  return info;
}

#define assert_bag(bag, c, r, d) \
  do \
    { \
      ck_assert_double_eq_tol ((bag).cpus, c, 1e-9); \
      ck_assert_double_eq_tol ((bag).ram_mb, r, 1e-9); \
      ck_assert_double_eq_tol ((bag).disk_mb, d, 1e-9); \
    } \
  while (0)

#define assert_contains(text, part) \
  ck_assert_msg (strstr (text, part) != NULL, "'%s' does not say '%s'", text, part)

/* ---- tiers ------------------------------------------------------------------- */

START_TEST (tier_must_be_known)
{
  g_autoptr (ApiTaskConfig) gold = sized ("v1", "gold", 1, 0, 0);
  g_autofree gchar *unknown = create (gold, 1);
  ck_assert_ptr_nonnull (unknown);
  assert_contains (unknown, "description.taskConfig.tier: Invalid tier 'gold' in TaskConfig.");
  assert_contains (unknown, "preemptible, preferred, revocable");

  g_autoptr (ApiTaskConfig) odd = sized ("v1", "a b", 1, 0, 0);
  g_autofree gchar *illegal = create (odd, 1);
  ck_assert_ptr_nonnull (illegal);
  assert_contains (illegal, "Tier contains illegal characters: a b");

  /* The same check guards updates and diffs. */
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 1);
  g_object_set (r->taskConfig, "tier", "gold", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiJobUpdateKey) key = stg_engine_start_update (fx.engine, r, "alice", NULL, NULL,
                                                             &error);
  ck_assert_ptr_null (key);
  assert_contains (error->message, "request.taskConfig.tier: Invalid tier 'gold'");
  g_clear_error (&error);
  g_autoptr (ApiGetJobUpdateDiffResult) diff = stg_engine_diff (fx.engine, r, FALSE, &error);
  ck_assert_ptr_null (diff);
  assert_contains (error->message, "Invalid tier 'gold'");
}
END_TEST

START_TEST (tiers_from_a_file_replace_the_default)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (StgTiers) tiers = stg_tiers_parse (
      "{\"default\": \"gold\", \"tiers\": {\"gold\": {}, \"tin\": {\"preemptible\": true}}}", -1,
      &error);
  ck_assert_msg (tiers != NULL, "%s", error ? error->message : "");
  stg_engine_set_tiers (fx.engine, tiers);

  /* gold is the default and a production tier: a job without tier needs quota. */
  g_autoptr (ApiTaskConfig) plain = sized ("v1", NULL, 1, 0, 0);
  g_autofree gchar *refused = create (plain, 1);
  ck_assert_ptr_nonnull (refused);
  assert_contains (refused, "Insufficient resource quota: CPU quota exceeded by 1.00 core(s)");
  g_autoptr (ApiTaskConfig) tin = sized ("v1", "tin", 1, 0, 0);
  g_autofree gchar *fine = create (tin, 1);
  ck_assert_ptr_null (fine);
  g_autoptr (ApiTaskConfig) preferred = sized ("v2", "preferred", 1, 0, 0);
  g_autoptr (ApiJobUpdateRequest) r = fx_request ("v2", 1);
  g_object_set (r, "taskConfig", preferred, NULL);
  ck_assert_ptr_null (stg_engine_start_update (fx.engine, r, "alice", NULL, NULL, &error));
  assert_contains (error->message, "Invalid tier 'preferred'");
  stg_engine_set_tiers (fx.engine, NULL);
}
END_TEST

START_TEST (production_follows_the_tier)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiTaskConfig) task = sized ("v1", "preemptible", 1, 0, 0);
  g_object_set (task, "production", TRUE, NULL);
  g_autofree gchar *refused = create (task, 1);
  ck_assert_ptr_null (refused); /* preemptible: no quota needed, whatever production says */
  fx_run (1000);
  g_autoptr (ApiTaskConfig) stored = stg_store_get_config (fx.store, fx_intent (0), &error);
  ck_assert (stored->__isset_production);
  ck_assert (!(stored->production));

  /* Without production nor tier, the config is kept as sent (its hash too). */
  g_autoptr (ApiTaskConfig) bare = fx_config ("v1");
  g_autoptr (ApiJobConfiguration) job = job_of (bare, 1);
  g_autoptr (ApiTaskConfig) populated = stg_engine_populate_job (fx.engine, job, &error);
  ck_assert_ptr_nonnull (populated);
  ck_assert_str_eq (populated->tier, "preemptible");
  ck_assert (populated->__isset_production);
  ck_assert (!(populated->production));
  g_object_set (bare, "tier", "preferred", NULL);
  g_autoptr (ApiTaskConfig) prod = stg_engine_populate_job (fx.engine, job, &error);
  ck_assert (prod->production);
  ck_assert_str_eq (prod->tier, "preferred");
}
END_TEST

/* ---- fields refused by name -------------------------------------------------- */

static void
with_fetcher (ApiTaskConfig *t)
{
  g_hash_table_add (t->mesosFetcherUris,
                    g_object_new (API_TYPE_MESOS_FETCHER_U_R_I, "value", "http://x/a.tgz", NULL));
  t->__isset_mesosFetcherUris = TRUE;
}

static void
with_mesos_image (ApiTaskConfig *t)
{
  g_autoptr (ApiDockerImage) d = g_object_new (API_TYPE_DOCKER_IMAGE, "name", "a", "tag", "b",
                                               NULL);
  g_autoptr (ApiImage) image = g_object_new (API_TYPE_IMAGE, "docker", d, NULL);
  g_autoptr (ApiMesosContainer) m = g_object_new (API_TYPE_MESOS_CONTAINER, "image", image, NULL);
  g_autoptr (ApiContainer) c = g_object_new (API_TYPE_CONTAINER, "mesos", m, NULL);
  g_object_set (t, "container", c, NULL);
}

static void
with_mesos_volume (ApiTaskConfig *t)
{
  g_autoptr (ApiMesosContainer) m = g_object_new (API_TYPE_MESOS_CONTAINER, NULL);
  g_ptr_array_add (m->volumes, g_object_new (API_TYPE_VOLUME, "containerPath", "/a", "hostPath",
                                             "/b", "mode", API_MODE_RO, NULL));
  m->__isset_volumes = TRUE;
  g_autoptr (ApiContainer) c = g_object_new (API_TYPE_CONTAINER, "mesos", m, NULL);
  g_object_set (t, "container", c, NULL);
}

static void
with_gpu (ApiTaskConfig *t)
{
  g_hash_table_add (t->resources, g_object_new (API_TYPE_RESOURCE, "numGpus", (gint64) 1, NULL));
}

static void
with_two_cpus (ApiTaskConfig *t)
{
  g_hash_table_add (t->resources, g_object_new (API_TYPE_RESOURCE, "numCpus", 1.0, NULL));
  g_hash_table_add (t->resources, g_object_new (API_TYPE_RESOURCE, "numCpus", 2.0, NULL));
}

static void
with_partition (ApiTaskConfig *t, gboolean reschedule, gint64 delay)
{
  g_autoptr (ApiPartitionPolicy) p = g_object_new (API_TYPE_PARTITION_POLICY, "reschedule",
                                                   reschedule, "delaySecs", delay, NULL);
  g_object_set (t, "partitionPolicy", p, NULL);
}

static void
with_no_reschedule (ApiTaskConfig *t)
{
  with_partition (t, FALSE, 0);
}

static void
with_delay (ApiTaskConfig *t)
{
  with_partition (t, TRUE, 30);
}

static void
with_empty_sla (ApiTaskConfig *t)
{
  g_autoptr (ApiSlaPolicy) p = g_object_new (API_TYPE_SLA_POLICY, NULL);
  g_object_set (t, "slaPolicy", p, NULL);
}

static void
with_dedicated (ApiTaskConfig *t, const gchar *value)
{
  g_autoptr (ApiValueConstraint) v = g_object_new (API_TYPE_VALUE_CONSTRAINT, NULL);
  g_hash_table_add (v->values, g_strdup (value));
  g_autoptr (ApiTaskConstraint) tc = g_object_new (API_TYPE_TASK_CONSTRAINT, "value", v, NULL);
  g_hash_table_add (t->constraints, g_object_new (API_TYPE_CONSTRAINT, "name", "dedicated",
                                                  "constraint", tc, NULL));
  t->__isset_constraints = TRUE;
}

static void
with_other_dedicated (ApiTaskConfig *t)
{
  with_dedicated (t, "db/x");
}

static const struct
{
  void (*make) (ApiTaskConfig *t);
  const gchar *says;
} refusals[] = {
  { with_fetcher, "description.taskConfig.mesosFetcherUris: Stagger fetches no URIs" },
  { with_mesos_image, "description.taskConfig.container.mesos.image: Mesos containerizer images" },
  { with_mesos_volume,
    "description.taskConfig.container.mesos.volumes: Mesos containerizer volumes" },
  { with_gpu, "description.taskConfig.resources: numGpus: Stagger schedules no GPUs" },
  { with_two_cpus, "Multiple resource values are not supported for numCpus" },
  { with_no_reschedule, "description.taskConfig.partitionPolicy.reschedule:" },
  { with_delay, "description.taskConfig.partitionPolicy.delaySecs:" },
  { with_empty_sla, "description.taskConfig.slaPolicy: give exactly one of" },
  { with_other_dedicated, "Only db may use hosts dedicated for that role." },
};

START_TEST (unsupported_fields_are_refused_by_name)
{
  g_autoptr (ApiTaskConfig) task = fx_config ("v1");
  refusals[_i].make (task);
  g_autofree gchar *refused = create (task, 1);
  ck_assert_msg (refused != NULL, "case %d was accepted", _i);
  assert_contains (refused, refusals[_i].says);
  g_autoptr (GError) error = NULL;
  ck_assert_ptr_null (stg_store_get_job (fx.store, fx.key, &error));
}
END_TEST

START_TEST (what_aurora_clients_send_is_accepted)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiTaskConfig) task = fx_config ("v1");
  /* An empty MesosContainer is the client's "no container". */
  g_autoptr (ApiMesosContainer) m = g_object_new (API_TYPE_MESOS_CONTAINER, NULL);
  m->__isset_volumes = TRUE; /* volumes = [] */
  g_autoptr (ApiContainer) c = g_object_new (API_TYPE_CONTAINER, "mesos", m, NULL);
  /* A production tier (an SLA policy needs one) in a dedicated pool (no
   * quota needed). */
  g_object_set (task, "container", c, "tier", "preferred", "production", TRUE, NULL);
  with_partition (task, TRUE, 0);
  with_dedicated (task, "www");
  g_autoptr (ApiCoordinatorSlaPolicy) coordinator = g_object_new (API_TYPE_COORDINATOR_SLA_POLICY,
                                                                  "coordinatorUrl",
                                                                  "http://127.0.0.1:9/sla",
                                                                  "statusKey", "drain", NULL);
  g_autoptr (ApiSlaPolicy) sla = g_object_new (API_TYPE_SLA_POLICY, "coordinatorSlaPolicy",
                                               coordinator, NULL);
  g_object_set (task, "slaPolicy", sla, NULL);
  g_autofree gchar *refused = create (task, 2);
  ck_assert_msg (refused == NULL, "refused: %s", refused);
  fx_run (1000);
  g_autoptr (ApiTaskConfig) stored = stg_store_get_config (fx.store, fx_intent (0), &error);
  ck_assert (stored->__isset_slaPolicy);
  ck_assert_str_eq (stored->slaPolicy->coordinatorSlaPolicy->statusKey, "drain");
  ck_assert (stored->partitionPolicy->reschedule);
}
END_TEST

/* ---- quotas ------------------------------------------------------------------ */

START_TEST (production_needs_quota)
{
  g_autoptr (ApiTaskConfig) prod = sized ("v1", "preferred", 1, 256, 512);
  g_autofree gchar *refused = create (prod, 2);
  ck_assert_ptr_nonnull (refused);
  assert_contains (refused, "Insufficient resource quota: CPU quota exceeded by 2.00 core(s); RAM "
                            "quota exceeded by 512.00 MB; disk quota exceeded by 1024.00 MB");
  assert_contains (refused, "role www");

  set_quota ("www", 2, 512, 1000);
  g_autofree gchar *disk = create (prod, 2);
  ck_assert_ptr_nonnull (disk);
  assert_contains (disk, "Insufficient resource quota: disk quota exceeded by 24.00 MB");
  ck_assert_ptr_null (strstr (disk, "CPU quota exceeded"));

  set_quota ("www", 2, 512, 1024);
  g_autofree gchar *fits = create (prod, 2);
  ck_assert_ptr_null (fits);
  fx_run (1000);
  StgQuotaInfo info = quota_of ("www");
  assert_bag (info.quota, 2, 512, 1024);
  assert_bag (info.consumption[STG_QUOTA_PROD_SHARED], 2, 512, 1024);
  assert_bag (info.consumption[STG_QUOTA_NONPROD_SHARED], 0, 0, 0);
  /* Other roles are not touched. */
  StgQuotaInfo other = quota_of ("db");
  assert_bag (other.quota, 0, 0, 0);
  assert_bag (other.consumption[STG_QUOTA_PROD_SHARED], 0, 0, 0);

  /* Quota is the role's, whatever the job. */
  g_autoptr (ApiJobKey) key2 = stg_job_key_new ("www", "prod", "other");
  g_autoptr (ApiTaskConfig) more = sized ("v1", "preferred", 0.5, 0, 0);
  g_object_set (more, "job", key2, NULL);
  g_autofree gchar *over = create (more, 1);
  ck_assert_ptr_nonnull (over);
  assert_contains (over, "CPU quota exceeded by 0.50 core(s)");
}
END_TEST

START_TEST (other_pools_need_none_and_are_counted)
{
  g_autoptr (ApiTaskConfig) free_tier = sized ("v1", NULL, 1, 100, 0);
  ck_assert_ptr_null (create (free_tier, 3));
  g_autoptr (ApiJobKey) key2 = stg_job_key_new ("www", "prod", "db");
  g_autoptr (ApiTaskConfig) dedicated = sized ("v1", "preferred", 2, 0, 10);
  g_object_set (dedicated, "job", key2, NULL);
  with_dedicated (dedicated, "www/db");
  ck_assert_ptr_null (create (dedicated, 2));
  fx_run (1000);
  StgQuotaInfo info = quota_of ("www");
  assert_bag (info.consumption[STG_QUOTA_NONPROD_SHARED], 3, 300, 0);
  assert_bag (info.consumption[STG_QUOTA_PROD_DEDICATED], 4, 0, 20);
  assert_bag (info.consumption[STG_QUOTA_PROD_SHARED], 0, 0, 0);
  assert_bag (info.consumption[STG_QUOTA_NONPROD_DEDICATED], 0, 0, 0);
}
END_TEST

START_TEST (add_instances_within_quota)
{
  g_autoptr (GError) error = NULL;
  set_quota ("www", 3, 1000, 1000);
  g_autoptr (ApiTaskConfig) prod = sized ("v1", "preferred", 1, 100, 0);
  ck_assert_ptr_null (create (prod, 2));
  fx_run (1000);
  ck_assert (!(stg_engine_add_instances (fx.engine, fx.key, 0, 2, "www", &error)));
  assert_contains (error->message,
                   "Insufficient resource quota: CPU quota exceeded by 1.00 core(s)");
  g_clear_error (&error);
  ck_assert_msg (stg_engine_add_instances (fx.engine, fx.key, 0, 1, "www", &error), "%s",
                 error ? error->message : "");
  fx_run (1000);
  StgQuotaInfo info = quota_of ("www");
  assert_bag (info.consumption[STG_QUOTA_PROD_SHARED], 3, 300, 0);
}
END_TEST

START_TEST (an_update_counts_the_larger_of_its_two_sides)
{
  g_autoptr (GError) error = NULL;
  set_quota ("www", 4, 1000, 1000);
  g_autoptr (ApiTaskConfig) prod = sized ("v1", "preferred", 1, 300, 0);
  ck_assert_ptr_null (create (prod, 2));
  fx_run (1000);

  /* 2 x 2 cores > 4 with the other job: refused, naming CPU only. */
  g_autoptr (ApiJobKey) key2 = stg_job_key_new ("www", "prod", "side");
  g_autoptr (ApiTaskConfig) side = sized ("v1", "preferred", 0.5, 0, 0);
  g_object_set (side, "job", key2, NULL);
  ck_assert_ptr_null (create (side, 1));
  fx_run (1000);
  g_autoptr (ApiJobUpdateRequest) big = fx_request ("v2", 2);
  g_autoptr (ApiTaskConfig) two = sized ("v2", "preferred", 2, 100, 0);
  g_object_set (big, "taskConfig", two, NULL);
  ck_assert_ptr_null (stg_engine_start_update (fx.engine, big, "alice", NULL, NULL, &error));
  assert_contains (error->message,
                   "Insufficient resource quota: CPU quota exceeded by 0.50 core(s)");
  ck_assert_ptr_null (strstr (error->message, "RAM quota"));
  /* What is this job's and what is the other jobs' is told apart. */
  assert_contains (error->message, "during the update this job counts 4.00 CPU, 600 MB RAM, "
                                   "0 MB disk there, the role's other jobs 0.50 CPU, 0 MB RAM, "
                                   "0 MB disk");
  g_clear_error (&error);

  /* Without the other job it fits: during the update the job counts
   * max(2 x 1, 2 x 2) cores and max(600, 200) MB of RAM. */
  ck_assert (stg_engine_kill_instances (fx.engine, key2, NULL, "www", NULL, &error));
  fx_run (1000);
  g_autoptr (ApiJobUpdateKey) key = fx_start (big);
  StgQuotaInfo during = quota_of ("www");
  assert_bag (during.consumption[STG_QUOTA_PROD_SHARED], 4, 600, 0);
  fx_run (10000);
  ck_assert_int_eq (fx_status (key), S (ROLLED_FORWARD));
  StgQuotaInfo after = quota_of ("www");
  assert_bag (after.consumption[STG_QUOTA_PROD_SHARED], 4, 200, 0);
}
END_TEST

START_TEST (set_quota_checks_what_it_gets)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiResourceAggregate) two = g_object_new (API_TYPE_RESOURCE_AGGREGATE, NULL);
  g_hash_table_add (two->resources, g_object_new (API_TYPE_RESOURCE, "numCpus", 1.0, NULL));
  g_hash_table_add (two->resources, g_object_new (API_TYPE_RESOURCE, "ramMb", (gint64) 1, NULL));
  ck_assert (!(stg_engine_set_quota (fx.engine, "www", two, NULL, &error)));
  assert_contains (error->message, "Quota resources must be exactly: numCpus, ramMb, diskMb");
  g_clear_error (&error);
  g_hash_table_add (two->resources, g_object_new (API_TYPE_RESOURCE, "diskMb", (gint64) -1, NULL));
  ck_assert (!(stg_engine_set_quota (fx.engine, "www", two, NULL, &error)));
  assert_contains (error->message, "Negative values");
  g_clear_error (&error);
  ck_assert (!(stg_engine_set_quota (fx.engine, "w w", two, NULL, &error)));
  assert_contains (error->message, "ownerRole");
  g_clear_error (&error);

  set_quota ("www", 2, 100, 100);
  g_autoptr (ApiTaskConfig) prod = sized ("v1", "preferred", 1, 50, 0);
  ck_assert_ptr_null (create (prod, 2));
  fx_run (1000);
  g_autoptr (ApiResourceAggregate) less = g_object_new (API_TYPE_RESOURCE_AGGREGATE, NULL);
  g_hash_table_add (less->resources, g_object_new (API_TYPE_RESOURCE, "numCpus", 1.5, NULL));
  g_hash_table_add (less->resources, g_object_new (API_TYPE_RESOURCE, "ramMb", (gint64) 100, NULL));
  g_hash_table_add (less->resources, g_object_new (API_TYPE_RESOURCE, "diskMb", (gint64) 0, NULL));
  ck_assert (!(stg_engine_set_quota (fx.engine, "www", less, NULL, &error)));
  assert_contains (error->message, "less than the current production reservation");
  assert_contains (error->message, "CPU quota exceeded by 0.50 core(s)");
  StgQuotaInfo info = quota_of ("www");
  assert_bag (info.quota, 2, 100, 100);
}
END_TEST

/* ---- createJob once every instance has ended --------------------------------- */

/* Marks instance @i of the job FINISHED, as a runtime does when a task that
 * is not a service exits 0. */
static void
finish (gint32 i)
{
  g_autoptr (GError) error = NULL;
  StgInstanceRow row;

  ck_assert (stg_store_get_instance (fx.store, fx.job_id, i, &row, &error));
  row.status = API_SCHEDULE_STATUS_FINISHED;
  ck_assert (stg_store_set_instance_facts (fx.store, fx.job_id, &row, &error));
}

START_TEST (create_again_after_every_instance_ended)
{
  g_autoptr (GError) error = NULL;
  fx_create_job (3);
  g_autoptr (ApiJobUpdateRequest) v2 = fx_request ("v2", 3);
  g_autoptr (ApiJobUpdateKey) done = fx_start (v2);
  fx_run (10000);
  ck_assert_int_eq (fx_status (done), S (ROLLED_FORWARD));

  /* Running instances: the job exists. */
  g_autoptr (ApiTaskConfig) v3 = fx_config ("v3");
  g_autofree gchar *running = create (v3, 2);
  ck_assert_ptr_nonnull (running);
  assert_contains (running, "job www/prod/app already exists: instance 0 is");

  finish (0);
  finish (1);
  g_autofree gchar *one_left = create (v3, 2);
  assert_contains (one_left, "instance 2 is");
  finish (2);
  scripted_runtime_clear_log (fx.rt);
  g_autofree gchar *again = create (v3, 2);
  ck_assert_msg (again == NULL, "refused: %s", again);
  fx_run (1000);
  gint64 v3_id = fx_intent (0);
  g_autofree gchar *log = fx_take_log ();
  g_autofree gchar *want = g_strdup_printf ("apply 0 %" G_GINT64_FORMAT
                                            ", apply 1 %" G_GINT64_FORMAT ", kill 2",
                                            v3_id, v3_id);
  ck_assert_str_eq (log, want);
  ck_assert_int_eq (fx_intent (1), v3_id);
  ck_assert_int_eq (fx_intent (2), 0);
  /* The job's history stays: its update and its numbered configurations. */
  g_autoptr (StgUpdateRow) row = stg_store_get_update (fx.store, done->id, &error);
  ck_assert_ptr_nonnull (row);
  g_autoptr (GPtrArray) versions = stg_store_job_config_history (fx.store, fx.key, &error);
  ck_assert_uint_eq (versions->len, 3);
}
END_TEST

START_TEST (create_again_after_a_full_kill)
{
  g_autoptr (GError) error = NULL;
  fx_create_job (2);
  ck_assert (stg_engine_kill_instances (fx.engine, fx.key, NULL, "www", "bye", &error));
  /* Still stopping (the scripted runtime takes its delay). */
  g_autoptr (ApiTaskConfig) v1 = fx_config ("v1");
  g_autofree gchar *stopping = create (v1, 2);
  ck_assert_ptr_nonnull (stopping);
  assert_contains (stopping, "already exists");
  fx_run (1000);
  g_autofree gchar *again = create (v1, 2);
  ck_assert_msg (again == NULL, "refused: %s", again);
  fx_run (1000);
  g_autoptr (StgJobRow) job = stg_store_get_job (fx.store, fx.key, &error);
  ck_assert_ptr_nonnull (job);
  ck_assert_int_eq (job->instance_count, 2);
  ck_assert_uint_eq (scripted_runtime_running (fx.rt, job->id), 2);
}
END_TEST

/* Between the runtime removing a killed job's last instance and the engine
 * removing the job, the job has a row and no instance: createJob takes it
 * over (this once answered "already exists" to `aurora job killall`
 * followed by `aurora job create`). */
START_TEST (create_again_while_the_job_row_outlives_its_instances)
{
  g_autoptr (GError) error = NULL;
  fx_create_job (2);
  gint64 job_id = fx.job_id;
  for (gint32 i = 0; i < 2; i++)
    ck_assert (stg_store_delete_instance (fx.store, job_id, i, &error));
  g_autoptr (ApiTaskConfig) v1 = fx_config ("v1");
  g_autofree gchar *again = create (v1, 2);
  ck_assert_msg (again == NULL, "refused: %s", again);
  ck_assert_int_eq (fx.job_id, job_id);
  fx_run (1000);
  g_autoptr (StgJobRow) job = stg_store_get_job (fx.store, fx.key, &error);
  ck_assert_ptr_nonnull (job);
  ck_assert_int_eq (job->id, job_id);
  ck_assert_int_eq (job->instance_count, 2);
}
END_TEST

START_TEST (create_refuses_cron)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiTaskConfig) task = fx_config ("v1");
  g_autoptr (ApiJobConfiguration) job = job_of (task, 1);
  g_object_set (job, "cronSchedule", "* * * * *", NULL);
  ck_assert (!(stg_engine_create_job (fx.engine, job, "www", &error)));
  assert_contains (error->message,
                   "description.cronSchedule: cron jobs are not supported by Stagger");
  g_clear_error (&error);
  ck_assert_ptr_null (stg_engine_populate_job (fx.engine, job, &error));
  assert_contains (error->message, "cronSchedule");
}
END_TEST

/* ---- reconciliation ------------------------------------------------------------ */

START_TEST (explicit_reconciliation_goes_in_batches)
{
  g_autofree gchar *summary = NULL;
  g_autoptr (GError) error = NULL;

  fx_create_job (5);
  /* Batches of 2, 5 s apart, as Aurora's TaskReconciler sends them. */
  ck_assert (stg_engine_reconcile (fx.engine, FALSE, 2, &summary, &error));
  ck_assert_msg (strstr (summary, "5 tasks in 3 batches of at most 2") != NULL, "%s", summary);
  g_autofree gchar *first = fx_take_log ();
  ck_assert_str_eq (first, "reconcile 0;1");
  fx_run (4999);
  g_autofree gchar *none = fx_take_log ();
  ck_assert_str_eq (none, "");
  fx_run (1);
  g_autofree gchar *second = fx_take_log ();
  ck_assert_str_eq (second, "reconcile 2;3");
  fx_run (5000);
  g_autofree gchar *third = fx_take_log ();
  ck_assert_str_eq (third, "reconcile 4");
  fx_run (60000);
  g_autofree gchar *after = fx_take_log ();
  ck_assert_str_eq (after, "");

  /* No batch size: Aurora's default (1000), all at once; implicit: once. */
  g_clear_pointer (&summary, g_free);
  ck_assert (stg_engine_reconcile (fx.engine, FALSE, 0, &summary, &error));
  g_autofree gchar *all = fx_take_log ();
  ck_assert_str_eq (all, "reconcile 0;1;2;3;4");
  g_clear_pointer (&summary, g_free);
  ck_assert (stg_engine_reconcile (fx.engine, TRUE, 0, &summary, &error));
  g_autofree gchar *implicit = fx_take_log ();
  ck_assert_str_eq (implicit, "reconcile implicit");
  ck_assert (!stg_engine_reconcile (fx.engine, FALSE, -1, &summary, &error));
}
END_TEST

/* Batches still to go when the engine stops are dropped with it. */
START_TEST (pending_batches_end_with_the_engine)
{
  g_autofree gchar *summary = NULL;
  g_autoptr (GError) error = NULL;

  fx_create_job (3);
  ck_assert (stg_engine_reconcile (fx.engine, FALSE, 1, &summary, &error));
  g_autofree gchar *first = fx_take_log ();
  ck_assert_str_eq (first, "reconcile 0");
  /* fx_teardown frees the engine with two batches queued. */
}
END_TEST

static Suite *
aurora_suite (void)
{
  Suite *s = suite_create ("engine_aurora");
  TCase *tc;

#define CASE(name) \
  tc = tcase_create (name); \
  tcase_set_timeout (tc, 60); \
  tcase_add_checked_fixture (tc, fx_setup, fx_teardown); \
  suite_add_tcase (s, tc)

  CASE ("tiers");
  tcase_add_test (tc, tier_must_be_known);
  tcase_add_test (tc, tiers_from_a_file_replace_the_default);
  tcase_add_test (tc, production_follows_the_tier);

  CASE ("fields");
  tcase_add_loop_test (tc, unsupported_fields_are_refused_by_name, 0, G_N_ELEMENTS (refusals));
  tcase_add_test (tc, what_aurora_clients_send_is_accepted);

  CASE ("quotas");
  tcase_add_test (tc, production_needs_quota);
  tcase_add_test (tc, other_pools_need_none_and_are_counted);
  tcase_add_test (tc, add_instances_within_quota);
  tcase_add_test (tc, an_update_counts_the_larger_of_its_two_sides);
  tcase_add_test (tc, set_quota_checks_what_it_gets);

  CASE ("create");
  tcase_add_test (tc, create_again_after_every_instance_ended);
  tcase_add_test (tc, create_again_after_a_full_kill);
  tcase_add_test (tc, create_again_while_the_job_row_outlives_its_instances);
  tcase_add_test (tc, create_refuses_cron);

  CASE ("reconciliation");
  tcase_add_test (tc, explicit_reconciliation_goes_in_batches);
  tcase_add_test (tc, pending_batches_end_with_the_engine);

#undef CASE
  return s;
}

int
main (void)
{
  SRunner *sr = srunner_create (aurora_suite ());
  srunner_run_all (sr, CK_NORMAL);
  int failed = srunner_ntests_failed (sr);
  srunner_free (sr);
  return failed == 0 ? 0 : 1;
}
