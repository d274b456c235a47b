/* rollout.h: helpers for tests that drive real rollouts through a real
 * staggerd: jobs of stagger-example-server instances, what the web UI's
 * JSON says of them, updates started and watched over Thrift, and rollout
 * plans started over Thrift. Every job is www/prod/NAME with one named
 * port, "http" (a plan's stages name their role). Test processes only. */
#pragma once

#include "testutil.h"

G_BEGIN_DECLS

/* Executor data for the example server: @args are more argv entries (JSON,
 * each with its leading comma), @extra more members of the object. */
gchar *stg_rollout_server_data (const gchar *args, const gchar *extra);

/* createJob of @instances instances running @data; asserts OK. */
void stg_rollout_create_job (StgTestDaemon *d, const gchar *name, gint32 instances, const gchar *data);

/* What the web UI's JSON says of one instance. */
typedef struct
{
  gchar *status;
  gint pid;
  gint port;
  gint version;
  gint failures;
  gint64 started_ms; /* when it became healthy; 0 when it is not running */
} StgRolloutInstance;

/* The job's instances (GArray of StgRolloutInstance); free with
 * stg_rollout_instances_free(). */
GArray *stg_rollout_instances (StgTestDaemon *d, const gchar *name);
void stg_rollout_instances_free (GArray *instances);

/* Waits until all @count instances run, healthy, config version @version
 * (0: any); fails the test after 30 s. */
void stg_rollout_wait_running (StgTestDaemon *d, const gchar *name, gint count, gint version);

/* startJobUpdate to @data with the Batch strategy (groups of @group), a
 * watch time of @watch_ms, no failure allowed and rollback on failure. */
ApiJobUpdateKey *stg_rollout_start_update (StgTestDaemon *d, const gchar *name, gint32 count,
                                           const gchar *data, gint32 group, gint32 watch_ms);

/* The same, but NULL with @error when the call gets no answer (the
 * daemon died while handling it). */
ApiJobUpdateKey *stg_rollout_try_start_update (StgTestDaemon *d, const gchar *name, gint32 count,
                                               const gchar *data, gint32 group, gint32 watch_ms,
                                               GError **error);

/* The settings stg_rollout_start_update sends (a new object). */
ApiJobUpdateSettings *stg_rollout_batch_settings (gint32 group, gint32 watch_ms);

/* startJobUpdate to @data with @settings as they are; NULL with @error
 * when the call gets no answer. */
ApiJobUpdateKey *stg_rollout_try_start_update_with (StgTestDaemon *d, const gchar *name,
                                                    gint32 count, const gchar *data,
                                                    ApiJobUpdateSettings *settings, GError **error);

/* startJobUpdate of @request as it is; asserts OK (NULL with @error when
 * the call gets no answer). */
ApiJobUpdateKey *stg_rollout_try_start_request (StgTestDaemon *d, ApiJobUpdateRequest *request,
                                                GError **error);

/* The key of the one update of role www; asserts there is exactly one. */
ApiJobUpdateKey *stg_rollout_only_update (StgTestDaemon *d);

ApiJobUpdateDetails *stg_rollout_details (StgTestDaemon *d, ApiJobUpdateKey *key);

/* Waits (90 s at most) for the update to end; returns its status. */
gint stg_rollout_wait_terminal (StgTestDaemon *d, ApiJobUpdateKey *key);
/* The same, waiting @timeout_ms at most. */
gint stg_rollout_wait_terminal_for (StgTestDaemon *d, ApiJobUpdateKey *key, guint timeout_ms);

/* The first and last time of @action for @instance in @det, or -1. */
void stg_rollout_action_times (ApiJobUpdateDetails *det, gint instance, gint action, gint64 *first,
                               gint64 *last);

/* createJob of @role/prod/@name, @instances instances running "sleep 60";
 * asserts OK. */
void stg_rollout_create_plain_job (StgTestDaemon *d, const gchar *role, const gchar *name,
                                   gint32 instances);

/* A rollout plan's stage moving @role/prod/@job (@count instances) to the
 * command "sleep 61" in batches of one with a watch time of 100 ms, after
 * the stages named in @deps (space-separated, nullable); for daemons with
 * --runtime=simulated. */
ApiRolloutStage *stg_rollout_plan_stage (const gchar *name, const gchar *role, const gchar *job,
                                         gint32 count, const gchar *deps);

/* startRolloutPlan of @plan over Thrift; asserts OK and returns the id. */
gchar *stg_rollout_start_plan (StgTestDaemon *d, ApiRolloutPlan *plan);

G_END_DECLS
