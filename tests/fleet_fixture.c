/* fleet_fixture.c: podman hosts, jobs and events for the fleet suites
 * (see fleet_fixture.h). Test processes only.
 */
#include "config.h"

#include <check.h>

#include "fleet_fixture.h"

StgFleetEnv *
stg_fleet_env_new (guint n, const gchar *const *programs)
{
  StgFleetEnv *e = g_new0 (StgFleetEnv, 1);
  g_autoptr (GString) conf = g_string_new ("[fleet]\npoll_interval_ms = 200\n"
                                           "call_timeout_secs = 120\n");
  g_autoptr (GError) error = NULL;

  e->fleet = stg_test_podman_start (n);
  stg_test_podman_import_with (e->fleet, STG_FLEET_IMAGE_V1, "1", programs);
  stg_test_podman_import_with (e->fleet, STG_FLEET_IMAGE_V2, "2", programs);
  for (guint i = 0; i < e->fleet->hosts->len; i++)
    {
      StgTestPodmanHost *h = e->fleet->hosts->pdata[i];
      g_string_append_printf (conf, "[host %s]\nendpoint = %s\naddress = 127.0.0.1\n", h->name,
                              h->endpoint);
    }
  e->data_dir = stg_test_tmpdir ();
  e->conf = g_build_filename (e->data_dir, "staggerd.conf", NULL);
  ck_assert (g_file_set_contents (e->conf, conf->str, -1, &error));
  return e;
}

void
stg_fleet_env_free (StgFleetEnv *e)
{
  stg_test_podman_stop (e->fleet);
  stg_test_rmtree (e->data_dir);
  g_free (e->data_dir);
  g_free (e->conf);
  g_free (e);
}

static void
add_parameter (ApiDockerContainer *docker, const gchar *name, const gchar *value)
{
  g_autoptr (ApiDockerParameter) p = g_object_new (API_TYPE_DOCKER_PARAMETER, "name", name, "value",
                                                   value, NULL);

  g_ptr_array_add (docker->parameters, g_object_ref (p));
  docker->__isset_parameters = TRUE;
}

ApiJobConfiguration *
stg_fleet_job (const gchar *name, gint32 count, const gchar *image, const gchar *data,
               const gchar *ports, const gchar *volume)
{
  ApiJobConfiguration *job = stg_test_job_full ("www", "prod", name, count, data, ports);
  g_autoptr (ApiDockerContainer) docker = g_object_new (API_TYPE_DOCKER_CONTAINER, "image", image,
                                                        NULL);

  add_parameter (docker, "network", "host");
  if (volume != NULL)
    add_parameter (docker, "volume", volume);
  g_autoptr (ApiContainer) box = g_object_new (API_TYPE_CONTAINER, "docker", docker, NULL);
  g_object_set (job->taskConfig, "container", box, NULL);
  return job;
}

void
stg_fleet_create_job (StgTestDaemon *d, ApiJobConfiguration *job)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (GError) error = NULL;

  ck_assert (
      api_aurora_scheduler_manager_if_create_job (API_AURORA_SCHEDULER_MANAGER_IF (c->client), &r,
                                                  job, &error));
  ck_assert_msg (r->responseCode == API_RESPONSE_CODE_OK, "createJob: %s",
                 r->details && r->details->len
                     ? ((ApiResponseDetail *) r->details->pdata[0])->message
                     : "");
}

gchar *
stg_fleet_task_messages (StgTestDaemon *d, const gchar *job)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiTaskQuery) q = g_object_new (API_TYPE_TASK_QUERY, "role", "www", NULL);
  g_autoptr (ApiResponse) r = g_object_new (API_TYPE_RESPONSE, NULL);
  GString *out = g_string_new (NULL);

  if (job != NULL)
    g_object_set (q, "jobName", job, NULL);
  ck_assert (api_read_only_scheduler_if_get_tasks_status (API_READ_ONLY_SCHEDULER_IF (c->client),
                                                          &r, q, NULL));
  GPtrArray *tasks = r->result->scheduleStatusResult->tasks;
  for (guint i = 0; i < tasks->len; i++)
    {
      ApiScheduledTask *t = tasks->pdata[i];
      for (guint j = 0; j < t->taskEvents->len; j++)
        {
          ApiTaskEvent *ev = t->taskEvents->pdata[j];
          g_string_append_printf (out, "instance %d: %s\n", t->assignedTask->instanceId,
                                  ev->message ? ev->message : "");
        }
    }
  return g_string_free (out, FALSE);
}

ApiResponse *
stg_fleet_apply_proxy (StgTestDaemon *d, const gchar *job, ApiSidecar *sidecar, gint max_failures)
{
  g_autoptr (StgTestClient) c = stg_test_client_new (d->thrift_port);
  g_autoptr (ApiSidecarSelector) sel = g_object_new (API_TYPE_SIDECAR_SELECTOR, "role", "www",
                                                     "environment", "prod", "name", job, NULL);
  g_autoptr (ApiSidecarUpdateSettings) settings = g_object_new (API_TYPE_SIDECAR_UPDATE_SETTINGS,
                                                                "maxUnavailable", 1, "partition", 0,
                                                                "maxFailures", max_failures,
                                                                "rollbackOnFailure", TRUE, "paused",
                                                                FALSE, NULL);
  g_autoptr (ApiSidecarSet) set = g_object_new (API_TYPE_SIDECAR_SET, "name", "proxy", "selector",
                                                sel, "sidecar", sidecar, "settings", settings,
                                                NULL);
  ApiResponse *r = g_object_new (API_TYPE_RESPONSE, NULL);
  g_autoptr (GError) error = NULL;

  ck_assert_msg (api_stagger_scheduler_if_apply_sidecar_set (c->client, &r, set, "test", &error),
                 "applySidecarSet: %s", error ? error->message : "");
  return r;
}

const gchar *
stg_fleet_detail (ApiResponse *r)
{
  return r->details && r->details->len ? ((ApiResponseDetail *) r->details->pdata[0])->message : "";
}
