/* sla_private.h: SLA policies (sla.c): checking a task's policy, whether
 * one holds, an SLA-aware update's wait (StgSlaWait, kept in its
 * StgUpdate), and questions to SLA coordinators: what sla.c offers
 * maintenance.c (a drain's questions) and what sla_body.c, the body of a
 * question, offers sla.c. Not for use outside src/engine/. Main-loop
 * thread only.
 */
#pragma once

#include "engine/engine.h"

typedef struct _StgUpdate StgUpdate;
typedef struct _StgSlaAsk StgSlaAsk;

/* An SLA-aware update's wait for the SLA of its next instance (sla.c);
 * memory only: a restarted update checks again. */
typedef struct
{
  guint idx1;       /* the work item waiting, +1; 0: none */
  gint64 since_ms;  /* when it began to wait */
  gboolean noted;   /* the wait is recorded as an event */
  guint timer;      /* the next look */
  StgSlaAsk *ask;   /* (nullable) the question to its coordinator under way */
  guint asked;      /* questions answered so far */
  gboolean allowed; /* the coordinator said it may go */
  gchar *said;      /* (nullable) the coordinator's last answer */
} StgSlaWait;

/* The SLA limits' defaults (Aurora's). */
void stg_sla_limits_init (StgEngineLimits *limits);

/* Checks @task's slaPolicy as Aurora does for a job of @instances
 * instances: one kind, a production tier (unless sla_non_production), a
 * count or percentage only for jobs of sla_min_instances or more that
 * still lets one instance go, a duration within sla_max_duration_secs, a
 * coordinator's http(s) URL. Field names are prefixed with @what. */
gboolean stg_sla_check_task (StgEngine *engine, const ApiTaskConfig *task, gint32 instances,
                             const gchar *what, GError **error);

/* The policy that guards @task's instances (a new reference): its own,
 * else @fallback (nullable), else for a production task Aurora's default
 * for the preferred tier (95 % over 1800 s); NULL: none. */
ApiSlaPolicy *stg_sla_policy_of (StgEngine *engine, const ApiTaskConfig *task,
                                 const ApiSlaPolicy *fallback);

/* Count or percentage policy @policy: whether instance @instance of job
 * @job_id may go down now, the instances in @leaving (nullable; ids as
 * pointers) going down too; *@why says how the count stands, and
 * *@recheck_ms (0: never) when time alone may change the answer. */
gboolean stg_sla_holds (StgEngine *engine, gint64 job_id, gint32 instance,
                        const ApiSlaPolicy *policy, gboolean production, GHashTable *leaving,
                        gchar **why, gint64 *recheck_ms);

/* An SLA-aware update: whether work item @idx may start now (its instance
 * goes down only within its SLA); when not, it waits (an event says so
 * once, a timer or an answer wakes the update). */
gboolean stg_update_sla_may_start (StgUpdate *u, guint idx);

/* Forgets @u's wait (its timer and question): the update stops, turns
 * or retires. */
void stg_update_sla_clear (StgUpdate *u);

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
