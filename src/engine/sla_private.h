/* sla_private.h: questions to SLA coordinators: what sla.c offers
 * maintenance.c (a drain's questions) and what sla_body.c, the body of a
 * question, offers sla.c. Not for use outside src/engine/. Main-loop
 * thread only.
 */
#pragma once

#include "engine/engine_private.h"

/* The JSON object Aurora's scheduler POSTs to a coordinator about instance
 * @instance of job @job_id (@key), whose task key is @task_key:
 * "taskConfig", the instance's ScheduledTask in Thrift's simple JSON (on
 * @host, nullable: where the runtime says it runs); "task", @task_key; and
 * "forceMaintenanceCountdownMs" when @countdown_ms is not negative (a
 * drain's time left). NULL when the instance cannot be read. */
gchar *stg_sla_ask_body (StgEngine *engine, gint64 job_id, const ApiJobKey *key, gint32 instance,
                         const gchar *host, const gchar *task_key, gint64 countdown_ms,
                         GError **error);

/* A coordinator's answer: @yes the instance may go; @message in words.
 * Called once, on the main loop, outside steps; the owner may free the
 * question inside. */
typedef void (*StgSlaAnswerFunc) (gpointer data, gboolean yes, const gchar *message);

/* Asks @policy's coordinator whether instance @instance of job @job_id
 * (@key), on @host (nullable: where the runtime says), may go
 * (@countdown_ms: forceMaintenanceCountdownMs, or negative), from the next
 * iteration; NULL when the coordinator answers another question now (one
 * question at a time per coordinator URL, as Aurora's lock). */
StgSlaAsk *stg_sla_ask (StgEngine *engine, gint64 job_id, const ApiJobKey *key, gint32 instance,
                        const gchar *host, const ApiCoordinatorSlaPolicy *policy,
                        gint64 countdown_ms, StgSlaAnswerFunc func, gpointer data);
/* Stops a question (no answer comes after). */
void stg_sla_ask_free (StgSlaAsk *ask);
