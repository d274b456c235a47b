/* gates.h: the gate seam: one attempt of an HTTP or shell gate, and one
 * question to an SLA coordinator (an HTTP POST under the same rules).
 *
 * The engine decides when a gate runs, how long an attempt may take and how
 * often it is tried (gate.c in the engine); a StgGateRunner only makes one
 * attempt and says whether it passed, with a message in words. The real
 * runner (gates.c) GETs the URL with libsoup and reads a JSONPath's value
 * from the answer, or runs the command with /bin/sh in a process group of
 * its own, as the user the job's role runs its instances as. Tests use a
 * scripted runner. Main-loop thread only.
 *
 * Contract: @done is called exactly once, on the main loop and never from
 * inside run(), unless @cancel is cancelled first: then it is never called
 * and whatever the attempt started (a request, a process group) is stopped.
 */
#pragma once

#include <gio/gio.h>

#include "common/host_policy.h"
#include "common/thrift_glue.h"
#include "spawn/identity.h"

G_BEGIN_DECLS

typedef void (*StgGateDone) (gpointer data, gboolean passed, const gchar *message);

typedef struct _StgGateRunner StgGateRunner;

/* One question to an SLA coordinator (Aurora's CoordinatorSlaPolicy):
 * may task @task_key (CLUSTER/ROLE/ENV/NAME/INSTANCE) go down now? */
typedef struct
{
  const gchar *url;        /* the coordinator's */
  const gchar *status_key; /* the member of its JSON answer that says yes (true) or no */
  const gchar *task_key;   /* sent as ?task=, as Aurora's scheduler does */
  const gchar *body;       /* the JSON object POSTed */
} StgCoordinatorAsk;

typedef struct
{
  /* One attempt of @gate (HTTP or SHELL) for a job of @role; a shell gate
   * gets @env (nullable, NAME=VALUE) besides PATH, HOME and LANG. */
  void (*run) (StgGateRunner *runner, const ApiRolloutGate *gate, const gchar *role,
               const gchar *const *env, GCancellable *cancel, StgGateDone done, gpointer data);
  void (*free) (StgGateRunner *runner);
  /* (nullable) One question to a coordinator: POSTs @ask->body to
   * @ask->url with ?task=TASK_KEY; passed when the answer is HTTP 200 with
   * a JSON object whose member @ask->status_key is true. */
  void (*ask) (StgGateRunner *runner, const StgCoordinatorAsk *ask, GCancellable *cancel,
               StgGateDone done, gpointer data);
} StgGateRunnerOps;

/* Every runner starts with this header. */
struct _StgGateRunner
{
  const StgGateRunnerOps *ops;
};

static inline void
stg_gate_runner_run (StgGateRunner *runner, const ApiRolloutGate *gate, const gchar *role,
                     const gchar *const *env, GCancellable *cancel, StgGateDone done, gpointer data)
{
  runner->ops->run (runner, gate, role, env, cancel, done, data);
}

/* Asks a coordinator (see StgGateRunnerOps.ask; the contract of run()).
 * A runner without coordinators answers no, saying so. */
void stg_gate_runner_ask (StgGateRunner *runner, const StgCoordinatorAsk *ask, GCancellable *cancel,
                          StgGateDone done, gpointer data);

void stg_gate_runner_free (StgGateRunner *runner);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgGateRunner, stg_gate_runner_free)

/* The real runner. Shell gates of a role in @role_users (role ->
 * StgIdentity*; nullable, referenced) run as that user, others as
 * @default_user (nullable: staggerd's own user; copied), as the local
 * runtime runs instances. HTTP gates connect where @hosts allows
 * (nullable: the default policy, which refuses link-local and metadata
 * addresses; referenced); a refused connection fails the attempt with
 * the reason. */
StgGateRunner *stg_gate_runner_new (GHashTable *role_users, const StgIdentity *default_user,
                                    StgHostPolicy *hosts);

/* TRUE when @op is a relation an HTTP gate compares with: <, <=, ==, !=,
 * >=, >. */
gboolean stg_gate_relation_known (const gchar *op);

/* The most of an HTTP gate's answer that is read. */
#define STG_GATE_MAX_BODY (1024 * 1024)

G_END_DECLS
