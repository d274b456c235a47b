/* sla_body.c: what an SLA coordinator is sent, as Aurora's scheduler sends
 * it (SlaManager.coordinatorAllows): the instance's whole ScheduledTask in
 * Thrift's simple JSON (assigned task with its id, host, ports, instance
 * and config; status; task events) as "taskConfig", its task key as
 * "task", and the question's parameters. Calls the store (the task's
 * rows), the runtime (the host the instance runs on) and common (the
 * JSON). Main-loop thread only.
 */
#include "config.h"

#include <json-glib/json-glib.h>

#include "common/jobkey.h"
#include "common/json_write.h"
#include "common/thrift_json.h"
#include "engine/engine_private.h"
#include "engine/sla_private.h"

/* As many task events as the task read methods give. */
#define MAX_TASK_EVENTS 50

/* The host instance @instance of @key runs on: the runtime's, else this
 * machine (the local runtime's one host). */
static gchar *
host_of (StgEngine *e, const ApiJobKey *key, gint32 instance)
{
  g_autoptr (GPtrArray) hosts = e->runtime ? stg_runtime_hosts (e->runtime, NULL) : NULL;

  for (guint i = 0; hosts != NULL && i < hosts->len; i++)
    {
      ApiFleetHostStatus *h = hosts->pdata[i];
      for (guint k = 0; k < h->instances->len; k++)
        {
          ApiInstanceKey *ik = h->instances->pdata[k];
          if (ik->instanceId == instance && stg_job_key_equal (ik->jobKey, key))
            return g_strdup (h->name);
        }
    }
  return g_strdup (g_get_host_name ());
}

/* The instance's ScheduledTask, or NULL with @error. */
static ApiScheduledTask *
task_of (StgEngine *e, gint64 job_id, const ApiJobKey *key, gint32 instance, const gchar *host,
         GError **error)
{
  StgInstanceRow row;

  if (!stg_store_get_instance (e->store, job_id, instance, &row, error))
    return NULL;
  g_autoptr (ApiTaskConfig) config =
      stg_store_get_config (e->store, row.run_config_id ? row.run_config_id : row.config_id, error);
  if (config == NULL)
    return NULL;
  g_autofree gchar *where = host ? g_strdup (host) : host_of (e, key, instance);
  return stg_store_scheduled_task (e->store, key, job_id, &row, config, where, MAX_TASK_EVENTS,
                                   error);
}

gchar *
stg_sla_ask_body (StgEngine *e, gint64 job_id, const ApiJobKey *key, gint32 instance,
                  const gchar *host, const gchar *task_key, gint64 countdown_ms, GError **error)
{
  g_autoptr (ApiScheduledTask) task = task_of (e, job_id, key, instance, host, error);

  if (task == NULL)
    {
      stg_engine_wrap_error (error);
      return NULL;
    }
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "taskConfig");
  json_builder_add_value (b, stg_thrift_to_simple_json (task));
  json_builder_set_member_name (b, "task");
  json_builder_add_string_value (b, task_key);
  if (countdown_ms >= 0)
    {
      /* Aurora's parameters are strings. */
      g_autofree gchar *text = g_strdup_printf ("%" G_GINT64_FORMAT, countdown_ms);
      json_builder_set_member_name (b, "forceMaintenanceCountdownMs");
      json_builder_add_string_value (b, text);
    }
  json_builder_end_object (b);
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  return stg_json_write (root, FALSE, NULL);
}
