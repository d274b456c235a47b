/* client.h: the CLI's Thrift client of staggerd's /api.
 *
 * StgCliClient resolves where to connect (connect.h), speaks Thrift binary
 * over HTTP(S) (http_client_transport.h), and turns every answer
 * into a Response or a GError: transport trouble, a daemon that serves
 * another cluster than the command names, and any response code but OK
 * (WARNING is OK with its details printed). One wrapper per API call.
 * One thread: the process's main thread.
 */
#pragma once

#include <json-glib/json-glib.h>

#include "cli/cli.h"
#include "cli/connect.h"
#include "common/jobkey.h"
#include "common/ranges.h"

G_BEGIN_DECLS

typedef struct _StgCliClient StgCliClient;

/* A client for a command about @cluster (nullable: any); a cluster name
 * that is not one is STG_CLI_ERROR_USAGE. */
StgCliClient *stg_cli_client_new (StgCli *cli, const gchar *cluster, GError **error);
/* Closes the connection and frees @client (NULL is fine). */
void stg_cli_client_free (StgCliClient *client);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgCliClient, stg_cli_client_free)

/* Where @client talks to and as whom (owned by @client). */
const StgCliTarget *stg_cli_client_target (StgCliClient *client);

/* The cluster the daemon said it serves (NULL before any answer). */
const gchar *stg_cli_client_cluster (StgCliClient *client);

/* Parses a command line's job @text (cluster/role/env/name, and with
 * @allow_instances "/0-1,3") into *@path and connects to its cluster,
 * checking that the daemon serves it. */
StgCliClient *stg_cli_client_for_job (StgCli *cli, const gchar *text, gboolean allow_instances,
                                      StgJobPath **path, GError **error);

/* Waits (up to @timeout_ms) until update @id changes after change number
 * *@seq, which it then sets to the newest (-1: answers at once with the
 * current one). FALSE with @error when the daemon cannot say, e.g. an
 * older daemon without the long poll. */
gboolean stg_cli_client_wait_update (StgCliClient *c, const gchar *id, gint64 *seq,
                                     guint timeout_ms, GError **error);

/* The calls. Each returns the OK (or WARNING) Response, or NULL with
 * @error set. */

/* getJobSummary: the jobs of @role (nullable or "": every role). */
ApiResponse *stg_cli_get_job_summary (StgCliClient *c, const gchar *role, GError **error);
/* getJobConfigHistory: the configurations @job has had, oldest first. */
ApiResponse *stg_cli_get_job_config_history (StgCliClient *c, ApiJobKey *job, GError **error);
/* getTaskLogs: up to @max bytes of an instance's stdout (@err: stderr)
 * from @offset (negative: from the end); with @process (nullable), that
 * process's of an AuroraExecutor task, of its run @run (-1: its newest). */
ApiResponse *stg_cli_get_task_logs (StgCliClient *c, ApiInstanceKey *instance, gboolean err,
                                    gint64 offset, gint32 max, const gchar *process, gint run,
                                    GError **error);
/* getTasksStatus: the tasks @query matches, with their events. */
/* getQuota: @role's quota and consumption. */
ApiResponse *stg_cli_get_quota (StgCliClient *c, const gchar *role, GError **error);
/* setQuota (AuroraAdmin): replaces @role's quota. */
ApiResponse *stg_cli_set_quota (StgCliClient *c, const gchar *role, ApiResourceAggregate *quota,
                                GError **error);
/* AuroraAdmin's backups and recovery: performBackup, listBackups,
 * stageRecovery (backup @id), queryRecovery and deleteRecoveryTasks (the
 * staged backup's tasks @query matches), commitRecovery, unloadRecovery. */
ApiResponse *stg_cli_perform_backup (StgCliClient *c, GError **error);
ApiResponse *stg_cli_list_backups (StgCliClient *c, GError **error);
ApiResponse *stg_cli_stage_recovery (StgCliClient *c, const gchar *id, GError **error);
ApiResponse *stg_cli_query_recovery (StgCliClient *c, ApiTaskQuery *query, GError **error);
ApiResponse *stg_cli_delete_recovery_tasks (StgCliClient *c, ApiTaskQuery *query, GError **error);
ApiResponse *stg_cli_commit_recovery (StgCliClient *c, GError **error);
ApiResponse *stg_cli_unload_recovery (StgCliClient *c, GError **error);
/* AuroraAdmin's triggerExplicitTaskReconciliation (or, @implicit,
 * triggerImplicitTaskReconciliation) and pruneTasks. */
ApiResponse *stg_cli_reconcile (StgCliClient *c, gboolean implicit, gint32 batch_size,
                                GError **error);
ApiResponse *stg_cli_prune_tasks (StgCliClient *c, ApiTaskQuery *query, GError **error);
/* AuroraAdmin's maintenance call @call ("startMaintenance", "drainHosts",
 * "slaDrainHosts" with @policy and @timeout_secs, "maintenanceStatus" or
 * "endMaintenance") of @hosts. */
ApiResponse *stg_cli_maintenance (StgCliClient *c, const gchar *call, ApiHosts *hosts,
                                  ApiSlaPolicy *policy, gint64 timeout_secs, GError **error);
/* getTierConfigs: the tiers and the default one. */
ApiResponse *stg_cli_get_tier_configs (StgCliClient *c, GError **error);
/* getHosts: the fleet runtime's hosts. */
ApiResponse *stg_cli_get_hosts (StgCliClient *c, GError **error);
/* drainHost: drains @host (or, !@drain, opens it again). */
ApiResponse *stg_cli_drain_host (StgCliClient *c, const gchar *host, gboolean drain,
                                 GError **error);
ApiResponse *stg_cli_get_tasks_status (StgCliClient *c, ApiTaskQuery *query, GError **error);
/* getJobUpdateSummaries: the updates @query matches, newest first. */
ApiResponse *stg_cli_get_job_update_summaries (StgCliClient *c, ApiJobUpdateQuery *query,
                                               GError **error);
/* getJobUpdateDetails: one update with its instructions and events. */
ApiResponse *stg_cli_get_job_update_details (StgCliClient *c, ApiJobUpdateKey *key, GError **error);
/* getJobUpdateDiff: what @request would add, remove, update and keep. */
ApiResponse *stg_cli_get_job_update_diff (StgCliClient *c, ApiJobUpdateRequest *request,
                                          GError **error);
/* createJob: creates @job and starts its instances. */
ApiResponse *stg_cli_create_job (StgCliClient *c, ApiJobConfiguration *job, GError **error);
/* killTasks: stops @key's instances @ids, with @message (nullable) saying
 * why. @ids: set<i32> (gint32* elements); empty means every instance. */
ApiResponse *stg_cli_kill_tasks (StgCliClient *c, ApiJobKey *key, GHashTable *ids,
                                 const gchar *message, GError **error);
/* startJobUpdate: starts @request, recording @message (nullable). */
ApiResponse *stg_cli_start_job_update (StgCliClient *c, ApiJobUpdateRequest *request,
                                       const gchar *message, GError **error);

typedef enum
{
  STG_CLI_UPDATE_PAUSE,
  STG_CLI_UPDATE_RESUME,
  STG_CLI_UPDATE_ABORT,
  STG_CLI_UPDATE_ROLLBACK,
} StgCliUpdateAction;

/* pauseJobUpdate, resumeJobUpdate, abortJobUpdate or rollbackJobUpdate
 * (@action) of @key, recording @message (nullable). */
ApiResponse *stg_cli_control_job_update (StgCliClient *c, StgCliUpdateAction action,
                                         ApiJobUpdateKey *key, const gchar *message,
                                         GError **error);
/* startRolloutPlan: starts @plan, recording @message (nullable). */
ApiResponse *stg_cli_start_rollout_plan (StgCliClient *c, ApiRolloutPlan *plan,
                                         const gchar *message, GError **error);
/* getRolloutPlans: the plans @query matches, newest first. */
ApiResponse *stg_cli_get_rollout_plans (StgCliClient *c, ApiRolloutPlanQuery *query,
                                        GError **error);
/* getRolloutPlanDetails: plan @id, its stages, events and gate attempts. */
ApiResponse *stg_cli_get_rollout_plan_details (StgCliClient *c, const gchar *id, GError **error);
/* pause-, resume-, abort- or rollbackRolloutPlan (@action) of plan @id. */
ApiResponse *stg_cli_control_rollout_plan (StgCliClient *c, StgCliUpdateAction action,
                                           const gchar *id, const gchar *message, GError **error);
/* Sidecar sets: applySidecarSet, getSidecarSets, getSidecarSetDetails, the
 * controls of a set's update (pauseSidecarUpdate ... rollbackSidecarUpdate,
 * by @action), setSidecarPartition and deleteSidecarSet; @message nullable. */
ApiResponse *stg_cli_apply_sidecar_set (StgCliClient *c, ApiSidecarSet *set, const gchar *message,
                                        GError **error);
ApiResponse *stg_cli_get_sidecar_sets (StgCliClient *c, GError **error);
ApiResponse *stg_cli_get_sidecar_set_details (StgCliClient *c, const gchar *name, GError **error);
ApiResponse *stg_cli_control_sidecar_set (StgCliClient *c, StgCliUpdateAction action,
                                          const gchar *name, const gchar *message, GError **error);
ApiResponse *stg_cli_set_sidecar_partition (StgCliClient *c, const gchar *name, gint32 partition,
                                            const gchar *message, GError **error);
ApiResponse *stg_cli_delete_sidecar_set (StgCliClient *c, const gchar *name, const gchar *message,
                                         GError **error);
/* getRolloutPlanDiff: what each stage of @plan would do now (a dry run). */
ApiResponse *stg_cli_get_rollout_plan_diff (StgCliClient *c, ApiRolloutPlan *plan, GError **error);
/* approveRolloutStage: lets @stage (nullable: every one awaiting) of plan
 * @id go on. */
ApiResponse *stg_cli_approve_rollout_stage (StgCliClient *c, const gchar *id, const gchar *stage,
                                            const gchar *message, GError **error);

/* pulseJobUpdate: lets the coordinated update @key go on for an interval. */
ApiResponse *stg_cli_pulse_job_update (StgCliClient *c, ApiJobUpdateKey *key, GError **error);

/* GET @path (e.g. "/cluster") of the daemon: its JSON object, or NULL
 * with @error. */
JsonNode *stg_cli_client_get_json (StgCliClient *c, const gchar *path, GError **error);

/* What staggerd's web UI knows of a job ({"instances": [{"id", "pid",
 * "version", ...}]}), or NULL when it cannot say (another scheduler, no
 * web UI): for details the Thrift API does not carry. */
JsonNode *stg_cli_client_ui_job (StgCliClient *c, const ApiJobKey *key);

/* A set<i32> of @ranges' ids, as the generated code holds it. */
GHashTable *stg_cli_id_set (StgRanges *ranges);

/* A TaskQuery for the job of @path and its instances (all when it names
 * none). */
ApiTaskQuery *stg_cli_task_query (const StgJobPath *path);

G_END_DECLS
