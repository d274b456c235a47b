/* client.c: StgCliClient: the HTTP transport, the binary protocol and the
 * generated client, and the checks every answer goes through. Owns them
 * all. One thread: the process's main thread.
 */
#include "config.h"

#include <gio/gio.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "cli/client_private.h"
#include "common/enums.h"
#include "common/binary_protocol.h"
#include "common/json_check.h"
#include "cli/http_client_transport.h"

struct _StgCliClient
{
  StgCli *cli;
  gchar *cluster;                   /* (nullable) what the command names */
  gchar *served;                    /* (nullable) what the daemon says it serves */
  gchar *run;                       /* (nullable) whose change numbers update waits hold */
  StgCliTarget *target;
  ThriftTransport *transport;
  ThriftProtocol *protocol;
  ApiStaggerSchedulerClient *client;
};

void
stg_cli_client_free (StgCliClient *c)
{
  if (c == NULL)
    return;
  g_clear_object (&c->client);
  g_clear_object (&c->protocol);
  g_clear_object (&c->transport);
  stg_cli_target_free (c->target);
  g_free (c->cluster);
  g_free (c->served);
  g_free (c->run);
  g_free (c);
}

static gboolean
is_loopback (const gchar *url)
{
  g_autoptr (GUri) uri = g_uri_parse (url, G_URI_FLAGS_NONE, NULL);
  const gchar *host = uri ? g_uri_get_host (uri) : NULL;

  if (host == NULL)
    return FALSE;
  if (g_ascii_strcasecmp (host, "localhost") == 0)
    return TRUE;
  g_autoptr (GInetAddress) addr = g_inet_address_new_from_string (host);
  return addr != NULL && g_inet_address_get_is_loopback (addr);
}

StgCliClient *
stg_cli_client_new (StgCli *cli, const gchar *cluster, GError **error)
{
  g_autoptr (StgCliClient) c = NULL;
  StgCliSources sources;
  StgHttpClientOptions options;

  if (cluster != NULL && !stg_job_key_part_valid (cluster))
    {
      g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_USAGE, "bad cluster name '%s'", cluster);
      return NULL;
    }
  c = g_new0 (StgCliClient, 1);
  c->cli = cli;
  c->cluster = g_strdup (cluster);
  stg_cli_sources_init (&sources);
  sources.url_options = (const gchar *const *) cli->urls;
  sources.leader_wait_option = cli->leader_wait;
  sources.user_option = cli->user;
  sources.cluster = cluster;
  c->target = stg_cli_target_resolve (&sources, error);
  stg_cli_sources_clear (&sources);
  if (c->target == NULL)
    return NULL;

  if ((c->target->user != NULL || c->target->token != NULL) &&
      g_str_has_prefix (c->target->api_url, "http:") && !is_loopback (c->target->api_url))
    stg_cli_warn (cli, "credentials go in the clear to %s; use https", c->target->base_url);

  stg_http_client_options_init (&options);
  options.user = c->target->user;
  options.password = c->target->password;
  options.token = c->target->token;
  options.ca_file = c->target->ca_file;
  options.claimed_user = g_get_user_name ();
  StgHttpClientTransport *t = stg_http_client_transport_new (c->target->api_url, &options, error);
  if (t == NULL)
    return NULL;
  /* Several replicas: the first that answers sends every request on to
   * the leader, and through a takeover the others are asked in turn. */
  stg_http_client_transport_set_replicas (t, (const gchar *const *) c->target->replicas,
                                          c->target->leader_wait_ms);
  if (c->target->zk_ensemble != NULL)
    stg_http_client_transport_set_finder (t, stg_cli_target_refind, c->target);
  c->transport = THRIFT_TRANSPORT (t);
  c->protocol = stg_binary_protocol_new (c->transport);
  c->client = g_object_new (API_TYPE_STAGGER_SCHEDULER_CLIENT, "input_protocol", c->protocol,
                            "output_protocol", c->protocol, NULL);
  if (!thrift_transport_open (c->transport, error))
    return NULL;
  return g_steal_pointer (&c);
}

/* Points the target at @base (the leader a redirect named): its pages and
 * its /api. */
static void
set_base (StgCliClient *c, const gchar *base, gsize len)
{
  g_free (c->target->base_url);
  c->target->base_url = g_strndup (base, len);
  g_free (c->target->api_url);
  c->target->api_url = g_strconcat (c->target->base_url, "/api", NULL);
}

/* A Thrift call that a follower redirected moved the transport to the
 * leader: the target's pages follow it. */
static void
follow_transport (StgCliClient *c)
{
  const gchar *now = stg_http_client_transport_url (STG_HTTP_CLIENT_TRANSPORT (c->transport));

  if (g_strcmp0 (now, c->target->api_url) != 0 && g_str_has_suffix (now, "/api"))
    set_base (c, now, strlen (now) - strlen ("/api"));
}

const StgCliTarget *
stg_cli_client_target (StgCliClient *c)
{
  follow_transport (c);
  return c->target;
}

const gchar *
stg_cli_client_cluster (StgCliClient *c)
{
  return c->served;
}

/* ---- answers ------------------------------------------------------------- */

static gchar *
details (ApiResponse *r)
{
  g_autoptr (GString) s = g_string_new (NULL);

  for (guint i = 0; r->details != NULL && i < r->details->len; i++)
    {
      ApiResponseDetail *d = r->details->pdata[i];
      if (d->message == NULL || d->message[0] == '\0')
        continue;
      if (s->len > 0)
        g_string_append (s, "; ");
      g_string_append (s, d->message);
    }
  if (s->len == 0)
    g_string_append (s, "no details given");
  return g_string_free (g_steal_pointer (&s), FALSE);
}

/* Why a call that did not complete failed, with a hint where one helps. */
static void
call_failed (StgCliClient *c, const gchar *method, GError *local, GError **error)
{
  const gchar *from = c->target->url_from;

  if (local == NULL)
    {
      g_set_error (error, STG_HTTP_CLIENT_ERROR, STG_HTTP_CLIENT_ERROR_BAD_REPLY,
                   "%s to %s failed", method, c->target->api_url);
      return;
    }
  if (local->domain == STG_HTTP_CLIENT_ERROR)
    {
      switch ((StgHttpClientError) local->code)
        {
        case STG_HTTP_CLIENT_ERROR_UNREACHABLE:
          g_set_error (error, local->domain, local->code,
                       "%s\nIs staggerd running there? The URL came from %s; choose another "
                       "with --url, STAGGER_URL or a clusters file.", local->message, from);
          return;
        case STG_HTTP_CLIENT_ERROR_STATUS:
          if (stg_http_client_transport_last_status (STG_HTTP_CLIENT_TRANSPORT (c->transport)) == 404)
            {
              g_set_error (error, local->domain, local->code,
                           "%s\nThe server at %s does not serve Stagger's API at /api (the URL "
                           "came from %s).", local->message, c->target->base_url, from);
              return;
            }
          break;
        case STG_HTTP_CLIENT_ERROR_TLS:
          g_set_error (error, local->domain, local->code,
                       "%s\nTo trust a private CA, set STAGGER_CA_FILE or \"ca_file\" in the "
                       "clusters file.", local->message);
          return;
        default:
          break;
        }
      g_propagate_error (error, g_error_copy (local));
      return;
    }
  if (local->domain == THRIFT_APPLICATION_EXCEPTION_ERROR)
    {
      g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_FAILED,
                   "the daemon could not handle %s: %s", method, local->message);
      return;
    }
  g_set_error (error, STG_HTTP_CLIENT_ERROR, STG_HTTP_CLIENT_ERROR_BAD_REPLY,
               "the reply to %s from %s cannot be read: %s", method, c->target->api_url,
               local->message);
}

/* The last step of every call. */
static ApiResponse *
finish (StgCliClient *c, const gchar *method, gboolean ok, ApiResponse *response, GError *local,
        GError **error)
{
  g_autoptr (ApiResponse) r = response;

  if (!ok)
    {
      call_failed (c, method, local, error);
      return NULL;
    }
  const gchar *served = r->serverInfo ? r->serverInfo->clusterName : NULL;
  if (served != NULL && served[0] != '\0')
    {
      g_free (c->served);
      c->served = g_strdup (served);
      if (c->cluster != NULL && strcmp (c->cluster, served) != 0)
        {
          g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_CONFIG,
                       "%s serves the cluster '%s', not '%s' (the URL came from %s)",
                       c->target->base_url, served, c->cluster, c->target->url_from);
          return NULL;
        }
    }
  g_autofree gchar *text = details (r);
  switch (r->responseCode)
    {
    case API_RESPONSE_CODE_OK:
      return g_steal_pointer (&r);
    case API_RESPONSE_CODE_WARNING:
      stg_cli_warn (c->cli, "%s: %s", method, text);
      return g_steal_pointer (&r);
    case API_RESPONSE_CODE_AUTH_FAILED:
      g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_AUTH, "%s answered AUTH_FAILED: %s%s", method,
                   text, c->target->credentials_from ? "" : " (no credentials were given)");
      return NULL;
    default:
      g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_FAILED, "%s answered %s: %s", method,
                   stg_response_code_name (r->responseCode), text);
      return NULL;
    }
}

#define RO(c) API_READ_ONLY_SCHEDULER_IF ((c)->client)
#define RW(c) API_AURORA_SCHEDULER_MANAGER_IF ((c)->client)

ApiStaggerSchedulerIf *
stg_cli_client_if (StgCliClient *c)
{
  return API_STAGGER_SCHEDULER_IF (c->client);
}

ApiResponse *
stg_cli_client_finish (StgCliClient *c, const gchar *method, gboolean ok, ApiResponse *response,
                       GError *local, GError **error)
{
  return finish (c, method, ok, response, local, error);
}

ApiResponse *
stg_cli_get_job_summary (StgCliClient *c, const gchar *role, GError **error)
{
  CALL_BEGIN = api_read_only_scheduler_if_get_job_summary (RO (c), &r, role ? role : "", &local);
  return finish (c, "getJobSummary", ok, r, local, error);
}

ApiResponse *
stg_cli_get_job_config_history (StgCliClient *c, ApiJobKey *job, GError **error)
{
  CALL_BEGIN = api_stagger_scheduler_if_get_job_config_history (API_STAGGER_SCHEDULER_IF (
                                                                    c->client),
                                                                &r, job, &local);
  return finish (c, "getJobConfigHistory", ok, r, local, error);
}

ApiResponse *
stg_cli_get_task_logs (StgCliClient *c, ApiInstanceKey *instance, gboolean err, gint64 offset,
                       gint32 max, const gchar *process, gint run, GError **error)
{
  CALL_BEGIN = api_stagger_scheduler_if_get_task_logs (API_STAGGER_SCHEDULER_IF (c->client), &r,
                                                       instance, err, offset, max,
                                                       process != NULL ? process : "", run, &local);
  return finish (c, "getTaskLogs", ok, r, local, error);
}

ApiResponse *
stg_cli_get_hosts (StgCliClient *c, GError **error)
{
  CALL_BEGIN = api_stagger_scheduler_if_get_hosts (API_STAGGER_SCHEDULER_IF (c->client), &r,
                                                   &local);
  return finish (c, "getHosts", ok, r, local, error);
}

ApiResponse *
stg_cli_drain_host (StgCliClient *c, const gchar *host, gboolean drain, GError **error)
{
  CALL_BEGIN = api_stagger_scheduler_if_drain_host (API_STAGGER_SCHEDULER_IF (c->client), &r, host,
                                                    drain, &local);
  return finish (c, "drainHost", ok, r, local, error);
}

ApiResponse *
stg_cli_get_quota (StgCliClient *c, const gchar *role, GError **error)
{
  CALL_BEGIN = api_read_only_scheduler_if_get_quota (RO (c), &r, role, &local);
  return finish (c, "getQuota", ok, r, local, error);
}

ApiResponse *
stg_cli_set_quota (StgCliClient *c, const gchar *role, ApiResourceAggregate *quota, GError **error)
{
  CALL_BEGIN = api_aurora_admin_if_set_quota (API_AURORA_ADMIN_IF (c->client), &r, role, quota,
                                              &local);
  return finish (c, "setQuota", ok, r, local, error);
}

#define AA(c) API_AURORA_ADMIN_IF ((c)->client)

ApiResponse *
stg_cli_perform_backup (StgCliClient *c, GError **error)
{
  CALL_BEGIN = api_aurora_admin_if_perform_backup (AA (c), &r, &local);
  return finish (c, "performBackup", ok, r, local, error);
}

ApiResponse *
stg_cli_list_backups (StgCliClient *c, GError **error)
{
  CALL_BEGIN = api_aurora_admin_if_list_backups (AA (c), &r, &local);
  return finish (c, "listBackups", ok, r, local, error);
}

ApiResponse *
stg_cli_stage_recovery (StgCliClient *c, const gchar *id, GError **error)
{
  CALL_BEGIN = api_aurora_admin_if_stage_recovery (AA (c), &r, id, &local);
  return finish (c, "stageRecovery", ok, r, local, error);
}

ApiResponse *
stg_cli_query_recovery (StgCliClient *c, ApiTaskQuery *query, GError **error)
{
  CALL_BEGIN = api_aurora_admin_if_query_recovery (AA (c), &r, query, &local);
  return finish (c, "queryRecovery", ok, r, local, error);
}

ApiResponse *
stg_cli_delete_recovery_tasks (StgCliClient *c, ApiTaskQuery *query, GError **error)
{
  CALL_BEGIN = api_aurora_admin_if_delete_recovery_tasks (AA (c), &r, query, &local);
  return finish (c, "deleteRecoveryTasks", ok, r, local, error);
}

ApiResponse *
stg_cli_commit_recovery (StgCliClient *c, GError **error)
{
  CALL_BEGIN = api_aurora_admin_if_commit_recovery (AA (c), &r, &local);
  return finish (c, "commitRecovery", ok, r, local, error);
}

ApiResponse *
stg_cli_unload_recovery (StgCliClient *c, GError **error)
{
  CALL_BEGIN = api_aurora_admin_if_unload_recovery (AA (c), &r, &local);
  return finish (c, "unloadRecovery", ok, r, local, error);
}

ApiResponse *
stg_cli_reconcile (StgCliClient *c, gboolean implicit, gint32 batch_size, GError **error)
{
  g_autoptr (ApiExplicitReconciliationSettings) settings =
      g_object_new (API_TYPE_EXPLICIT_RECONCILIATION_SETTINGS, NULL);
  if (batch_size > 0)
    g_object_set (settings, "batchSize", batch_size, NULL);
  CALL_BEGIN = implicit
                   ? api_aurora_admin_if_trigger_implicit_task_reconciliation (AA (c), &r, &local)
                   : api_aurora_admin_if_trigger_explicit_task_reconciliation (AA (c), &r, settings,
                                                                               &local);
  return finish (c,
                 implicit ? "triggerImplicitTaskReconciliation"
                          : "triggerExplicitTaskReconciliation",
                 ok, r, local, error);
}

ApiResponse *
stg_cli_prune_tasks (StgCliClient *c, ApiTaskQuery *query, GError **error)
{
  CALL_BEGIN = api_aurora_admin_if_prune_tasks (AA (c), &r, query, &local);
  return finish (c, "pruneTasks", ok, r, local, error);
}

ApiResponse *
stg_cli_maintenance (StgCliClient *c, const gchar *call, ApiHosts *hosts, ApiSlaPolicy *policy,
                     gint64 timeout_secs, GError **error)
{
  ApiAuroraAdminIf *aa = AA (c);
  CALL_BEGIN = g_str_equal (call, "startMaintenance")
                   ? api_aurora_admin_if_start_maintenance (aa, &r, hosts, &local)
               : g_str_equal (call, "drainHosts")
                   ? api_aurora_admin_if_drain_hosts (aa, &r, hosts, &local)
               : g_str_equal (call, "slaDrainHosts")
                   ? api_aurora_admin_if_sla_drain_hosts (aa, &r, hosts, policy, timeout_secs,
                                                          &local)
               : g_str_equal (call, "endMaintenance")
                   ? api_aurora_admin_if_end_maintenance (aa, &r, hosts, &local)
                   : api_aurora_admin_if_maintenance_status (aa, &r, hosts, &local);
  return finish (c, call, ok, r, local, error);
}

ApiResponse *
stg_cli_get_tier_configs (StgCliClient *c, GError **error)
{
  CALL_BEGIN = api_read_only_scheduler_if_get_tier_configs (RO (c), &r, &local);
  return finish (c, "getTierConfigs", ok, r, local, error);
}

#define SS(c) API_STAGGER_SCHEDULER_IF ((c)->client)

ApiResponse *
stg_cli_start_rollout_plan (StgCliClient *c, ApiRolloutPlan *plan, const gchar *message,
                            GError **error)
{
  CALL_BEGIN = api_stagger_scheduler_if_start_rollout_plan (SS (c), &r, plan,
                                                            message ? message : "", &local);
  return finish (c, "startRolloutPlan", ok, r, local, error);
}

ApiResponse *
stg_cli_get_rollout_plans (StgCliClient *c, ApiRolloutPlanQuery *query, GError **error)
{
  CALL_BEGIN = api_stagger_scheduler_if_get_rollout_plans (SS (c), &r, query, &local);
  return finish (c, "getRolloutPlans", ok, r, local, error);
}

ApiResponse *
stg_cli_get_rollout_plan_details (StgCliClient *c, const gchar *id, GError **error)
{
  CALL_BEGIN = api_stagger_scheduler_if_get_rollout_plan_details (SS (c), &r, id, &local);
  return finish (c, "getRolloutPlanDetails", ok, r, local, error);
}

ApiResponse *
stg_cli_get_rollout_plan_diff (StgCliClient *c, ApiRolloutPlan *plan, GError **error)
{
  CALL_BEGIN = api_stagger_scheduler_if_get_rollout_plan_diff (SS (c), &r, plan, &local);
  return finish (c, "getRolloutPlanDiff", ok, r, local, error);
}

ApiResponse *
stg_cli_control_rollout_plan (StgCliClient *c, StgCliUpdateAction action, const gchar *id,
                              const gchar *message, GError **error)
{
  const gchar *m = message ? message : "";
  CALL_BEGIN = FALSE;
  const gchar *method = "pauseRolloutPlan";
  switch (action)
    {
    case STG_CLI_UPDATE_PAUSE:
      ok = api_stagger_scheduler_if_pause_rollout_plan (SS (c), &r, id, m, &local);
      break;
    case STG_CLI_UPDATE_RESUME:
      method = "resumeRolloutPlan";
      ok = api_stagger_scheduler_if_resume_rollout_plan (SS (c), &r, id, m, &local);
      break;
    case STG_CLI_UPDATE_ABORT:
      method = "abortRolloutPlan";
      ok = api_stagger_scheduler_if_abort_rollout_plan (SS (c), &r, id, m, &local);
      break;
    case STG_CLI_UPDATE_ROLLBACK:
      method = "rollbackRolloutPlan";
      ok = api_stagger_scheduler_if_rollback_rollout_plan (SS (c), &r, id, m, &local);
      break;
    }
  return finish (c, method, ok, r, local, error);
}

ApiResponse *
stg_cli_approve_rollout_stage (StgCliClient *c, const gchar *id, const gchar *stage,
                               const gchar *message, GError **error)
{
  CALL_BEGIN = api_stagger_scheduler_if_approve_rollout_stage (SS (c), &r, id, stage ? stage : "",
                                                               message ? message : "", &local);
  return finish (c, "approveRolloutStage", ok, r, local, error);
}

ApiResponse *
stg_cli_get_tasks_status (StgCliClient *c, ApiTaskQuery *query, GError **error)
{
  CALL_BEGIN = api_read_only_scheduler_if_get_tasks_status (RO (c), &r, query, &local);
  return finish (c, "getTasksStatus", ok, r, local, error);
}

ApiResponse *
stg_cli_get_job_update_summaries (StgCliClient *c, ApiJobUpdateQuery *query, GError **error)
{
  CALL_BEGIN = api_read_only_scheduler_if_get_job_update_summaries (RO (c), &r, query, &local);
  return finish (c, "getJobUpdateSummaries", ok, r, local, error);
}

ApiResponse *
stg_cli_get_job_update_details (StgCliClient *c, ApiJobUpdateKey *key, GError **error)
{
  /* The update is named by key; the query stays empty. */
  g_autoptr (ApiJobUpdateQuery) query = g_object_new (API_TYPE_JOB_UPDATE_QUERY, NULL);
  CALL_BEGIN = api_read_only_scheduler_if_get_job_update_details (RO (c), &r, key, query, &local);
  return finish (c, "getJobUpdateDetails", ok, r, local, error);
}

ApiResponse *
stg_cli_get_job_update_diff (StgCliClient *c, ApiJobUpdateRequest *request, GError **error)
{
  CALL_BEGIN = api_read_only_scheduler_if_get_job_update_diff (RO (c), &r, request, &local);
  return finish (c, "getJobUpdateDiff", ok, r, local, error);
}

ApiResponse *
stg_cli_create_job (StgCliClient *c, ApiJobConfiguration *job, GError **error)
{
  CALL_BEGIN = api_aurora_scheduler_manager_if_create_job (RW (c), &r, job, &local);
  return finish (c, "createJob", ok, r, local, error);
}

ApiResponse *
stg_cli_kill_tasks (StgCliClient *c, ApiJobKey *key, GHashTable *ids, const gchar *message,
                    GError **error)
{
  CALL_BEGIN = api_aurora_scheduler_manager_if_kill_tasks (RW (c), &r, key, ids,
                                                           message ? message : "", &local);
  return finish (c, "killTasks", ok, r, local, error);
}

ApiResponse *
stg_cli_start_job_update (StgCliClient *c, ApiJobUpdateRequest *request, const gchar *message,
                          GError **error)
{
  CALL_BEGIN = api_aurora_scheduler_manager_if_start_job_update (RW (c), &r, request,
                                                                 message ? message : "", &local);
  return finish (c, "startJobUpdate", ok, r, local, error);
}

ApiResponse *
stg_cli_control_job_update (StgCliClient *c, StgCliUpdateAction action, ApiJobUpdateKey *key,
                            const gchar *message, GError **error)
{
  const gchar *m = message ? message : "";
  const gchar *method = NULL;
  CALL_BEGIN = FALSE;

  switch (action)
    {
    case STG_CLI_UPDATE_PAUSE:
      method = "pauseJobUpdate";
      ok = api_aurora_scheduler_manager_if_pause_job_update (RW (c), &r, key, m, &local);
      break;
    case STG_CLI_UPDATE_RESUME:
      method = "resumeJobUpdate";
      ok = api_aurora_scheduler_manager_if_resume_job_update (RW (c), &r, key, m, &local);
      break;
    case STG_CLI_UPDATE_ABORT:
      method = "abortJobUpdate";
      ok = api_aurora_scheduler_manager_if_abort_job_update (RW (c), &r, key, m, &local);
      break;
    case STG_CLI_UPDATE_ROLLBACK:
    default:
      method = "rollbackJobUpdate";
      ok = api_aurora_scheduler_manager_if_rollback_job_update (RW (c), &r, key, m, &local);
      break;
    }
  return finish (c, method, ok, r, local, error);
}

ApiResponse *
stg_cli_pulse_job_update (StgCliClient *c, ApiJobUpdateKey *key, GError **error)
{
  CALL_BEGIN = api_aurora_scheduler_manager_if_pulse_job_update (RW (c), &r, key, &local);
  return finish (c, "pulseJobUpdate", ok, r, local, error);
}

/* Makes a cheap read so that the daemon's cluster is known to match before
 * anything is changed. */
static gboolean
verify_cluster (StgCliClient *c, const ApiJobKey *key, GError **error)
{
  g_autoptr (ApiJobUpdateQuery) q = g_object_new (API_TYPE_JOB_UPDATE_QUERY,
                                                  "jobKey", key, "limit", 1, NULL);
  g_autoptr (ApiResponse) r = stg_cli_get_job_update_summaries (c, q, error);

  return r != NULL;
}

GHashTable *
stg_cli_id_set (StgRanges *ranges)
{
  GHashTable *set = g_hash_table_new_full (g_int_hash, g_int_equal, g_free, NULL);

  for (guint i = 0; ranges != NULL && i < stg_ranges_n (ranges); i++)
    {
      StgRange r = stg_ranges_get (ranges, i);
      for (gint32 id = r.first; id <= r.last; id++)
        {
          gint32 *p = g_new (gint32, 1);
          *p = id;
          g_hash_table_add (set, p);
        }
    }
  return set;
}

StgCliClient *
stg_cli_client_for_job (StgCli *cli, const gchar *text, gboolean allow_instances, StgJobPath **path,
                        GError **error)
{
  *path = stg_job_path_parse (text, allow_instances, error);
  if (*path == NULL)
    return NULL;
  g_autoptr (StgCliClient) c = stg_cli_client_new (cli, (*path)->cluster, error);
  if (c == NULL || !verify_cluster (c, (*path)->key, error))
    return NULL;
  return g_steal_pointer (&c);
}

JsonNode *
stg_cli_client_get_json (StgCliClient *c, const gchar *path, GError **error)
{
  follow_transport (c);
  g_autofree gchar *url = g_strconcat (c->target->base_url, path, NULL);
  g_autoptr (GBytes) body = stg_http_client_transport_get (STG_HTTP_CLIENT_TRANSPORT (c->transport),
                                                           url, NULL, error);
  /* A follower sent us to the leader, or another replica answered: every
   * request goes there now (the transport moved). */
  follow_transport (c);
  g_autoptr (JsonParser) parser = json_parser_new ();
  gsize len = 0;
  const gchar *data = body ? g_bytes_get_data (body, &len) : NULL;

  if (data == NULL)
    return NULL;
  if (!stg_json_load (parser, data, (gssize) len, NULL) ||
      !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    {
      g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_FAILED, "%s: not a JSON object", url);
      return NULL;
    }
  return json_node_copy (json_parser_get_root (parser));
}

JsonNode *
stg_cli_client_ui_job (StgCliClient *c, const ApiJobKey *key)
{
  g_autofree gchar *role = g_uri_escape_string (key->role, NULL, FALSE);
  g_autofree gchar *env = g_uri_escape_string (key->environment, NULL, FALSE);
  g_autofree gchar *name = g_uri_escape_string (key->name, NULL, FALSE);
  g_autofree gchar *path = g_strdup_printf ("/ui/api/job?role=%s&environment=%s&name=%s", role, env,
                                            name);

  return stg_cli_client_get_json (c, path, NULL);
}

gboolean
stg_cli_client_wait_update (StgCliClient *c, const gchar *id, gint64 *seq, guint timeout_ms,
                            GError **error)
{
  g_autofree gchar *escaped = g_uri_escape_string (id, NULL, FALSE);
  g_autofree gchar *run = c->run != NULL ? g_uri_escape_string (c->run, NULL, FALSE) : NULL;
  /* The change number is the answering leader's own count (named by its
   * run): one that took over answers a number of its predecessor's at
   * once. */
  g_autofree gchar *path = g_strdup_printf ("/ui/api/wait?update=%s&since=%" G_GINT64_FORMAT
                                            "&timeout_ms=%u%s%s",
                                            escaped, *seq, timeout_ms, run ? "&run=" : "",
                                            run ? run : "");
  g_autoptr (JsonNode) root = stg_cli_client_get_json (c, path, error);

  if (root == NULL)
    return FALSE;
  JsonObject *o = json_node_get_object (root);
  if (!json_object_has_member (o, "seq"))
    {
      g_set_error (error, STG_CLI_ERROR, STG_CLI_ERROR_FAILED, "%s: not a change number", path);
      return FALSE;
    }
  const gchar *now = json_object_get_string_member_with_default (o, "run", NULL);
  if (g_strcmp0 (now, c->run) != 0)
    {
      g_free (c->run);
      c->run = g_strdup (now);
    }
  *seq = json_object_get_int_member (o, "seq");
  return TRUE;
}

ApiTaskQuery *
stg_cli_task_query (const StgJobPath *path)
{
  ApiTaskQuery *q = g_object_new (API_TYPE_TASK_QUERY, NULL);

  g_hash_table_add (q->jobKeys, g_object_ref (path->key));
  q->__isset_jobKeys = TRUE;
  if (path->instances != NULL)
    {
      g_autoptr (GHashTable) ids = stg_cli_id_set (path->instances);
      g_object_set (q, "instanceIds", ids, NULL);
    }
  return q;
}
