/* health.h: health checks of one running instance, on the main loop.
 *
 * StgHealth runs HTTP checks (libsoup, asynchronous) or shell checks (a
 * child process with a timeout) every interval, and reports a change:
 * healthy after min_consecutive_successes successes in a row; unhealthy
 * after more than max_consecutive_failures failures in a row, where failures
 * during the first initial_interval_secs do not count. Without a check, an
 * instance is healthy as soon as it runs.
 *
 * With StgHealthSpec.aurora, as Aurora's executor counts (its
 * health_checker.py), in checks rather than seconds: the failures of the
 * first ceil(initial_interval_secs / interval_secs) checks do not count;
 * an instance not healthy after that many checks plus
 * max_consecutive_failures plus min_consecutive_successes has failed, and
 * so has one that can no longer get its successes in the checks left; a
 * snooze file in the sandbox (.healthchecksnooze) passes every check while
 * it exists; an HTTP check passes when the body (empty for a status of 400
 * or more) is expected_response, unless that is empty, and the status is
 * expected_response_code, unless that is 0. min_consecutive_successes 0
 * then means what it means there: the first passing check. Main-loop thread
 * only.
 */
#pragma once

#include <libsoup/soup.h>

#include "runtime/executor.h"
#include "spawn/cgroup.h"
#include "spawn/identity.h"

G_BEGIN_DECLS

typedef struct _StgHealth StgHealth;

/* How many health checks passed and failed, for /metrics: whoever builds
 * the runtime owns one and hands it to the runtime's options (and to the
 * metrics). Main-loop thread only. */
typedef struct
{
  guint64 passed;
  guint64 failed;
} StgHealthCounts;

/* @healthy TRUE: it became healthy; FALSE: it failed for good (@why says
 * how, e.g. the last response). Called at most once with FALSE. */
typedef void (*StgHealthFunc) (gpointer data, gboolean healthy, const gchar *why);

/* Shell checks that run elsewhere (e.g. inside a container): @run starts
 * @argv and calls @done once; @finish gives its exit status, or FALSE with
 * @error when it could not run. */
typedef void (*StgHealthRun) (gpointer data, const gchar *const *argv, GCancellable *cancel,
                              GAsyncReadyCallback done, gpointer done_data);
typedef gboolean (*StgHealthRunFinish) (gpointer data, GAsyncResult *result, gint *status, GError **error);

typedef struct
{
  SoupSession *session;      /* shared, for HTTP checks */
  gchar *url;                /* HTTP: the full URL to GET */
  gchar **shell_argv;        /* shell: the command */
  gchar **envp;
  gchar *cwd;
  StgHealthRun run;          /* (nullable) shell checks run through this, not here */
  StgHealthRunFinish run_finish;
  gpointer run_data;
  const StgIdentity *identity; /* (nullable) shell checks run as this user; borrowed */
  StgCgroups *cgroups;         /* (nullable) shell checks join group @cgroup of these; borrowed */
  gchar *cgroup;               /* (nullable) the instance's control group */
  StgHealthCounts *counts;     /* (nullable) each check's outcome is counted here; borrowed */
  gchar *no_answer;            /* (nullable) HTTP: what an unanswered check says first (what
                                * was asked and where to read about it) */
  gchar *snooze_file;          /* (nullable) with spec.aurora: checks pass while it exists */
} StgHealthTarget;

/* Starts checking. @already_healthy: an adopted instance known to be
 * healthy starts out healthy (no new initial interval). */
StgHealth *stg_health_new (const StgHealthSpec *spec, const StgHealthTarget *target,
                           gboolean already_healthy, StgHealthFunc func, gpointer data);
void stg_health_free (StgHealth *health);

/* How many checks passed since @health started (a round that passed one
 * ended a run of failures). */
guint stg_health_passed (const StgHealth *health);

G_END_DECLS
