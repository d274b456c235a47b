/* fleet_fixture.h: what the fleet suites that run staggerd on podman
 * hosts share: the hosts (tests/podman_hosts.c) with the test images and
 * a config file naming them, a container job on the hosts' network, and
 * the job's tasks' event messages. Test processes only; blocking calls.
 */
#pragma once

#include "podman_hosts.h"
#include "testutil.h"

G_BEGIN_DECLS

#define STG_FLEET_IMAGE_V1 "localhost/stagger-test:1"
#define STG_FLEET_IMAGE_V2 "localhost/stagger-test:2"

typedef struct
{
  StgTestPodman *fleet;
  gchar *data_dir; /* staggerd's */
  gchar *conf;     /* its config file: [fleet] and one [host NAME] per host */
} StgFleetEnv;

/* @n podman hosts with both test images (@programs, nullable, copied into
 * their /bin), and a config file naming them (poll_interval_ms = 200). */
StgFleetEnv *stg_fleet_env_new (guint n, const gchar *const *programs);
void stg_fleet_env_free (StgFleetEnv *env);

/* The job www/prod/@name: @count instances of @image running the executor
 * data @data with named @ports (space-separated, nullable), on the host's
 * network; @volume (nullable) is a bind "HOST_PATH:PATH". */
ApiJobConfiguration *stg_fleet_job (const gchar *name, gint32 count, const gchar *image,
                                    const gchar *data, const gchar *ports, const gchar *volume);

/* createJob; asserts OK. */
void stg_fleet_create_job (StgTestDaemon *d, ApiJobConfiguration *job);

/* applySidecarSet of "proxy" selecting www/prod/@job ("*": every job
 * of www/prod), running @sidecar, one instance at a time, @max_failures
 * failed starts each, rolled back on failure; the response. */
ApiResponse *stg_fleet_apply_proxy (StgTestDaemon *d, const gchar *job, ApiSidecar *sidecar,
                                    gint max_failures);

/* The first detail's message of @r ("" when none). */
const gchar *stg_fleet_detail (ApiResponse *r);

/* Every event message of role www's tasks (of its job @job; NULL: all),
 * one a line ("instance N: ..."). */
gchar *stg_fleet_task_messages (StgTestDaemon *d, const gchar *job);

G_END_DECLS
