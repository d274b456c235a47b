/* rollout.c: helpers for tests that roll real instances through a real
 * staggerd (see rollout.h). Test processes only. */
#include "config.h"

#include "common/enums.h"
#include "rollout.h"

gchar *
stg_rollout_server_data (const gchar *args, const gchar *extra)
{
  g_autofree gchar *bin = stg_test_program ("stagger-example-server");
  return g_strdup_printf ("{\"argv\": [\"%s\", \"--port\", \"{{ports[http]}}\"%s],"
                          " \"health_check\": {\"http\": {\"endpoint\": \"/health\"},"
                          " \"initial_interval_secs\": 1, \"interval_secs\": 0.1}%s}",
                          bin, args ? args : "", extra ? extra : "");
}

void
stg_rollout_create_job (StgTestDaemon *d, const gchar *name, gint32 instances, const gchar *data)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiJobConfiguration) job = stg_test_job_full ("www", "prod", name, instances, data, "http");
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (GError) error = NULL;

  ck_assert_msg (api_aurora_scheduler_manager_if_create_job (API_AURORA_SCHEDULER_MANAGER_IF (c->client),
                                                             &r, job, &error),
                 "createJob: %s", error ? error->message : "");
  ck_assert_int_eq (r->responseCode, API_RESPONSE_CODE_OK);
}

GArray *
stg_rollout_instances (StgTestDaemon *d, const gchar *name)
{
  g_autofree gchar *path = g_strdup_printf ("/ui/api/job?role=www&environment=prod&name=%s", name);
  g_autofree gchar *body = NULL;
  GArray *out = g_array_new (FALSE, TRUE, sizeof (StgRolloutInstance));

  ck_assert_uint_eq (stg_test_http_get (d->http_port, path, &body), 200);
  g_autoptr (JsonNode) root = stg_test_parse_json (body);
  JsonArray *list = json_object_get_array_member (json_node_get_object (root), "instances");
  for (guint i = 0; i < json_array_get_length (list); i++)
    {
      JsonObject *o = json_array_get_object_element (list, i);
      StgRolloutInstance in = {
        .status = g_strdup (json_object_get_string_member (o, "status")),
        .pid = json_object_get_null_member (o, "pid")
                   ? 0
                   : (gint) json_object_get_int_member (o, "pid"),
        .port = json_object_get_null_member (o, "port")
                    ? 0
                    : (gint) json_object_get_int_member (o, "port"),
        .version = (gint) json_object_get_int_member (o, "version"),
        .failures = (gint) json_object_get_int_member (o, "failures"),
        .started_ms = json_object_get_null_member (o, "started_ms")
                          ? 0
                          : json_object_get_int_member (o, "started_ms"),
      };
      g_array_append_val (out, in);
    }
  return out;
}

void
stg_rollout_instances_free (GArray *a)
{
  for (guint i = 0; i < a->len; i++)
    g_free (g_array_index (a, StgRolloutInstance, i).status);
  g_array_unref (a);
}

typedef struct
{
  StgTestDaemon *d;
  const gchar *name;
  gint count;
  gint version;
} Want;

static gboolean
all_running (gpointer data)
{
  Want *w = data;
  GArray *a = stg_rollout_instances (w->d, w->name);
  gboolean ok = (gint) a->len == w->count;

  for (guint i = 0; ok && i < a->len; i++)
    {
      StgRolloutInstance *in = &g_array_index (a, StgRolloutInstance, i);
      ok = g_str_equal (in->status, "RUNNING") && in->pid > 0 && in->port > 0 &&
           (w->version == 0 || in->version == w->version);
    }
  stg_rollout_instances_free (a);
  if (!ok)
    g_usleep (50000);
  return ok;
}

void
stg_rollout_wait_running (StgTestDaemon *d, const gchar *name, gint count, gint version)
{
  Want w = { d, name, count, version };
  ck_assert_msg (stg_test_wait (all_running, &w, 30000),
                 "the %d instances of %s never all ran version %d", count, name, version);
}

ApiJobUpdateKey *
stg_rollout_start_update (StgTestDaemon *d, const gchar *name, gint32 count, const gchar *data,
                          gint32 group, gint32 watch_ms)
{
  g_autoptr (GError) error = NULL;
  ApiJobUpdateKey *key = stg_rollout_try_start_update (d, name, count, data, group, watch_ms, &error);

  ck_assert_msg (key != NULL, "startJobUpdate: %s", error ? error->message : "");
  return key;
}

ApiJobUpdateSettings *
stg_rollout_batch_settings (gint32 group, gint32 watch_ms)
{
  /* Batches: each one waits for the one before it to be done. */
  g_autoptr (ApiBatchJobUpdateStrategy) batch = g_object_new (API_TYPE_BATCH_JOB_UPDATE_STRATEGY,
                                                              "groupSize", group, NULL);
  g_autoptr (ApiJobUpdateStrategy) strategy = g_object_new (API_TYPE_JOB_UPDATE_STRATEGY,
                                                            "batchStrategy", batch, NULL);
  return g_object_new (API_TYPE_JOB_UPDATE_SETTINGS, "updateGroupSize", group,
                       "minWaitInInstanceRunningMs", watch_ms, "rollbackOnFailure", TRUE,
                       "maxPerInstanceFailures", 0, "maxFailedInstances", 0, "updateStrategy",
                       strategy, NULL);
}

ApiJobUpdateKey *
stg_rollout_try_start_update (StgTestDaemon *d, const gchar *name, gint32 count, const gchar *data,
                              gint32 group, gint32 watch_ms, GError **error)
{
  g_autoptr (ApiJobUpdateSettings) settings = stg_rollout_batch_settings (group, watch_ms);
  return stg_rollout_try_start_update_with (d, name, count, data, settings, error);
}

ApiJobUpdateKey *
stg_rollout_try_start_update_with (StgTestDaemon *d, const gchar *name, gint32 count,
                                   const gchar *data, ApiJobUpdateSettings *settings,
                                   GError **error)
{
  g_autoptr (ApiJobConfiguration) job = stg_test_job_full ("www", "prod", name, count, data,
                                                           "http");
  g_autoptr (ApiJobUpdateRequest) request = g_object_new (API_TYPE_JOB_UPDATE_REQUEST,
      "taskConfig", job->taskConfig, "instanceCount", count, "settings", settings, NULL);

  return stg_rollout_try_start_request (d, request, error);
}

ApiJobUpdateKey *
stg_rollout_try_start_request (StgTestDaemon *d, ApiJobUpdateRequest *request, GError **error)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);

  if (!api_aurora_scheduler_manager_if_start_job_update (API_AURORA_SCHEDULER_MANAGER_IF (c->client),
                                                         &r, request, "test", error))
    return NULL;
  ck_assert_msg (r->responseCode == API_RESPONSE_CODE_OK, "startJobUpdate: %s",
                 r->details->len ? ((ApiResponseDetail *) r->details->pdata[0])->message : "");
  return g_object_ref (r->result->startJobUpdateResult->key);
}

ApiJobUpdateKey *
stg_rollout_only_update (StgTestDaemon *d)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (ApiJobUpdateQuery) q = g_object_new (API_TYPE_JOB_UPDATE_QUERY, "role", "www", NULL);

  ck_assert (api_read_only_scheduler_if_get_job_update_summaries (API_READ_ONLY_SCHEDULER_IF (c->client),
                                                                  &r, q, &error));
  ck_assert_int_eq (r->responseCode, API_RESPONSE_CODE_OK);
  GPtrArray *list = r->result->getJobUpdateSummariesResult->updateSummaries;
  ck_assert_uint_eq (list->len, 1);
  return g_object_ref (((ApiJobUpdateSummary *) list->pdata[0])->key);
}

ApiJobUpdateDetails *
stg_rollout_details (StgTestDaemon *d, ApiJobUpdateKey *key)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (GError) error = NULL;
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (ApiJobUpdateQuery) q = g_object_new (API_TYPE_JOB_UPDATE_QUERY, "key", key, NULL);
  g_autoptr (ApiJobUpdateKey) none = g_object_new (API_TYPE_JOB_UPDATE_KEY, NULL);

  ck_assert (api_read_only_scheduler_if_get_job_update_details (API_READ_ONLY_SCHEDULER_IF (c->client),
                                                                &r, none, q, &error));
  ck_assert_int_eq (r->responseCode, API_RESPONSE_CODE_OK);
  ck_assert_uint_eq (r->result->getJobUpdateDetailsResult->detailsList->len, 1);
  return g_object_ref (r->result->getJobUpdateDetailsResult->detailsList->pdata[0]);
}

typedef struct
{
  StgTestDaemon *d;
  ApiJobUpdateKey *key;
  gint status;
} Terminal;

static gboolean
is_terminal (gpointer data)
{
  Terminal *t = data;
  g_autoptr (ApiJobUpdateDetails) det = stg_rollout_details (t->d, t->key);

  t->status = det->update->summary->state->status;
  if (stg_update_status_is_active (t->status))
    {
      g_usleep (100000);
      return FALSE;
    }
  return TRUE;
}

gint
stg_rollout_wait_terminal (StgTestDaemon *d, ApiJobUpdateKey *key)
{
  return stg_rollout_wait_terminal_for (d, key, 90000);
}

gint
stg_rollout_wait_terminal_for (StgTestDaemon *d, ApiJobUpdateKey *key, guint timeout_ms)
{
  Terminal t = { d, key, 0 };
  ck_assert_msg (stg_test_wait (is_terminal, &t, timeout_ms), "the update is still %s",
                 stg_update_status_name (t.status));
  return t.status;
}

/* The first and last time of @action for @instance, or -1. */
void
stg_rollout_action_times (ApiJobUpdateDetails *det, gint instance, gint action, gint64 *first, gint64 *last)
{
  *first = *last = -1;
  for (guint i = 0; i < det->instanceEvents->len; i++)
    {
      ApiJobInstanceUpdateEvent *ev = det->instanceEvents->pdata[i];
      if (ev->instanceId != instance || (gint) ev->action != action)
        continue;
      if (*first < 0 || ev->timestampMs < *first)
        *first = ev->timestampMs;
      if (ev->timestampMs > *last)
        *last = ev->timestampMs;
    }
}

ApiRolloutStage *
stg_rollout_plan_stage (const gchar *name, const gchar *role, const gchar *job, gint32 count,
                        const gchar *deps)
{
  g_autoptr (ApiJobConfiguration) config = stg_test_job (role, "prod", job, count, "sleep 61");
  g_autoptr (ApiBatchJobUpdateStrategy) batch = g_object_new (API_TYPE_BATCH_JOB_UPDATE_STRATEGY,
                                                              "groupSize", 1, NULL);
  g_autoptr (ApiJobUpdateStrategy) strategy = g_object_new (API_TYPE_JOB_UPDATE_STRATEGY,
                                                            "batchStrategy", batch, NULL);
  g_autoptr (ApiJobUpdateSettings) settings = g_object_new (API_TYPE_JOB_UPDATE_SETTINGS,
                                                            "updateGroupSize", 1,
                                                            "minWaitInInstanceRunningMs", 100,
                                                            "updateStrategy", strategy, NULL);
  g_autoptr (ApiJobUpdateRequest) req = g_object_new (API_TYPE_JOB_UPDATE_REQUEST, "taskConfig",
                                                      config->taskConfig, "instanceCount", count,
                                                      "settings", settings, NULL);
  ApiRolloutStage *stage = g_object_new (API_TYPE_ROLLOUT_STAGE, "name", name, "request", req,
                                         NULL);
  g_auto (GStrv) names = g_strsplit (deps ? deps : "", " ", -1);
  for (guint i = 0; names[i] != NULL; i++)
    if (names[i][0] != '\0')
      g_ptr_array_add (stage->dependsOn, g_strdup (names[i]));
  return stage;
}

gchar *
stg_rollout_start_plan (StgTestDaemon *d, ApiRolloutPlan *plan)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (GError) error = NULL;

  ck_assert (
      api_stagger_scheduler_if_start_rollout_plan (c->client, &r, plan, "<b>go</b>", &error));
  ck_assert_msg (r->responseCode == API_RESPONSE_CODE_OK, "startRolloutPlan: %s",
                 r->details->len ? ((ApiResponseDetail *) r->details->pdata[0])->message : "");
  return g_strdup (r->result->startRolloutPlanResult->id);
}

void
stg_rollout_create_plain_job (StgTestDaemon *d, const gchar *role, const gchar *name,
                              gint32 instances)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiJobConfiguration) job = stg_test_job (role, "prod", name, instances, "sleep 60");
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (GError) error = NULL;

  ck_assert (
      api_aurora_scheduler_manager_if_create_job (API_AURORA_SCHEDULER_MANAGER_IF (c->client), &r,
                                                  job, &error));
  ck_assert_int_eq (r->responseCode, API_RESPONSE_CODE_OK);
}
