/* scheduled_task.c: one instance as Aurora's ScheduledTask, put together
 * from the store's rows: its task id (ROLE-ENV-NAME-INSTANCE-RUN), the host
 * it runs on, its named ports, its status and newest task events. The
 * task read methods (api/handler_tasks.c) answer with it and an SLA
 * coordinator is sent it (engine/sla_body.c). Main-loop thread only.
 */
#include "config.h"

#include "common/jobkey.h"
#include "store/store_private.h"

ApiScheduledTask *
stg_store_scheduled_task (StgStore *store, const ApiJobKey *key, gint64 job_id,
                          const StgInstanceRow *row, ApiTaskConfig *config, const gchar *host,
                          guint max_events, GError **error)
{
  g_autoptr (GHashTable) ports = stg_store_list_ports (store, key, row->instance_id, error);
  g_autoptr (GPtrArray) events = ports
                                     ? stg_store_list_task_events (store, job_id, row->instance_id,
                                                                   max_events, error)
                                     : NULL;
  if (events == NULL)
    return NULL;

  g_autofree gchar *task_id = stg_job_key_task_id (key, row->instance_id, row->run_id);
  g_autoptr (ApiAssignedTask) assigned = g_object_new (API_TYPE_ASSIGNED_TASK, "taskId", task_id,
                                                       "slaveId", "local", "slaveHost", host,
                                                       "task", config, "instanceId",
                                                       row->instance_id, NULL);
  GHashTableIter it;
  gpointer name, port;
  g_hash_table_iter_init (&it, ports);
  while (g_hash_table_iter_next (&it, &name, &port))
    {
      gint32 *value = g_new (gint32, 1);
      *value = GPOINTER_TO_INT (port);
      g_hash_table_insert (assigned->assignedPorts, g_strdup (name), value);
    }
  ApiScheduledTask *task = g_object_new (API_TYPE_SCHEDULED_TASK, "assignedTask", assigned,
                                         "status", row->status, "failureCount", row->failure_count,
                                         "ancestorId", "", NULL);
  for (guint i = 0; i < events->len; i++)
    g_ptr_array_add (task->taskEvents, g_object_ref (events->pdata[i]));
  return task;
}
