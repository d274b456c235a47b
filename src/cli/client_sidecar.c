/* client_sidecar.c: the calls of sidecar sets (client.h), through
 * client.c's client and its checks of every answer. One thread: the
 * process's main thread.
 */
#include "config.h"

#include "cli/client_private.h"

ApiResponse *
stg_cli_control_sidecar_set (StgCliClient *c, StgCliUpdateAction action, const gchar *name,
                             const gchar *message, GError **error)
{
  const gchar *m = message ? message : "";
  CALL_BEGIN = FALSE;
  const gchar *method = "pauseSidecarUpdate";
  switch (action)
    {
    case STG_CLI_UPDATE_PAUSE:
      ok = api_stagger_scheduler_if_pause_sidecar_update (stg_cli_client_if (c), &r, name, m,
                                                          &local);
      break;
    case STG_CLI_UPDATE_RESUME:
      method = "resumeSidecarUpdate";
      ok = api_stagger_scheduler_if_resume_sidecar_update (stg_cli_client_if (c), &r, name, m,
                                                           &local);
      break;
    case STG_CLI_UPDATE_ABORT:
      method = "abortSidecarUpdate";
      ok = api_stagger_scheduler_if_abort_sidecar_update (stg_cli_client_if (c), &r, name, m,
                                                          &local);
      break;
    case STG_CLI_UPDATE_ROLLBACK:
      method = "rollbackSidecarUpdate";
      ok = api_stagger_scheduler_if_rollback_sidecar_update (stg_cli_client_if (c), &r, name, m,
                                                             &local);
      break;
    }
  return stg_cli_client_finish (c, method, ok, r, local, error);
}

ApiResponse *
stg_cli_apply_sidecar_set (StgCliClient *c, ApiSidecarSet *set, const gchar *message,
                           GError **error)
{
  CALL_BEGIN = api_stagger_scheduler_if_apply_sidecar_set (stg_cli_client_if (c), &r, set,
                                                           message ? message : "", &local);
  return stg_cli_client_finish (c, "applySidecarSet", ok, r, local, error);
}

ApiResponse *
stg_cli_get_sidecar_sets (StgCliClient *c, GError **error)
{
  CALL_BEGIN = api_stagger_scheduler_if_get_sidecar_sets (stg_cli_client_if (c), &r, &local);
  return stg_cli_client_finish (c, "getSidecarSets", ok, r, local, error);
}

ApiResponse *
stg_cli_get_sidecar_set_details (StgCliClient *c, const gchar *name, GError **error)
{
  CALL_BEGIN = api_stagger_scheduler_if_get_sidecar_set_details (stg_cli_client_if (c), &r, name,
                                                                 &local);
  return stg_cli_client_finish (c, "getSidecarSetDetails", ok, r, local, error);
}

ApiResponse *
stg_cli_set_sidecar_partition (StgCliClient *c, const gchar *name, gint32 partition,
                               const gchar *message, GError **error)
{
  CALL_BEGIN = api_stagger_scheduler_if_set_sidecar_partition (stg_cli_client_if (c), &r, name,
                                                               partition, message ? message : "",
                                                               &local);
  return stg_cli_client_finish (c, "setSidecarPartition", ok, r, local, error);
}

ApiResponse *
stg_cli_delete_sidecar_set (StgCliClient *c, const gchar *name, const gchar *message,
                            GError **error)
{
  CALL_BEGIN = api_stagger_scheduler_if_delete_sidecar_set (stg_cli_client_if (c), &r, name,
                                                            message ? message : "", &local);
  return stg_cli_client_finish (c, "deleteSidecarSet", ok, r, local, error);
}
