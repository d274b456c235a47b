/* fleet_logs.c: StgRuntimeOps.read_log of the fleet runtime, an
 * instance's output as its container's engine keeps it (the logs call,
 * stdout or stderr). The API answers getTaskLogs at once, so a read waits
 * for the engine's answer: it goes through a client of its own on a
 * context of its own, iterated here for at most LOGS_TIMEOUT_SECS, and
 * nothing of the main loop runs meanwhile. Per-process logs of an
 * AuroraExecutor task stay in its container's sandbox and are not served;
 * nor is anything of a host that does not answer now (no read waits for it).
 * Main-loop thread only.
 */
#include "config.h"

#include <string.h>

#include "runtime/fleet_private.h"

/* The longest a read waits for a host's engine. */
#define LOGS_TIMEOUT_SECS 10

typedef struct
{
  gboolean done;
  gchar *text; /* (nullable) */
  GError *error;
} LogsWait;

static void
on_logs (GObject *source G_GNUC_UNUSED, GAsyncResult *result, gpointer data)
{
  LogsWait *w = data;

  w->text = stg_docker_logs_finish (NULL, result, &w->error);
  w->done = TRUE;
}

/* What container @id on @host wrote to stdout (or stderr, @err), asked of
 * its engine through a client made for this one read. */
static gchar *
container_output (const StgFleetHostConfig *host, const gchar *id, gboolean err, guint timeout_secs,
                  GError **error)
{
  g_autoptr (GMainContext) context = g_main_context_new ();
  StgDockerTls tls = { host->tls_cert, host->tls_key, host->tls_ca };
  LogsWait w = { 0 };

  g_main_context_push_thread_default (context);
  StgDocker *docker = stg_docker_new (host->endpoint, &tls, timeout_secs, error);
  if (docker != NULL)
    {
      stg_docker_logs_async (docker, id, -1, err ? STG_DOCKER_STDERR : STG_DOCKER_STDOUT, NULL,
                             on_logs, &w);
      while (!w.done)
        g_main_context_iteration (context, TRUE);
      stg_docker_free (docker);
      while (g_main_context_pending (context))
        g_main_context_iteration (context, FALSE);
    }
  g_main_context_pop_thread_default (context);
  if (docker == NULL)
    return NULL;
  if (w.text == NULL)
    g_propagate_prefixed_error (error, w.error, "host %s: ", host->name);
  return w.text;
}

/* The slot with a container to read, or an error saying why there is none. */
static Slot *
slot_with_container (StgFleetRuntime *rt, gint64 job_id, gint32 instance, GError **error)
{
  Slot *slot = (Slot *) stg_slots_find (rt->slots, job_id, instance);

  if (slot == NULL)
    g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_NOT_FOUND, "no instance %d", instance);
  else if (slot->host == NULL || slot->container_id == NULL ||
           g_strcmp0 (slot->container_id, STG_FLEET_UNKNOWN_CONTAINER) == 0)
    g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_NOT_FOUND,
                 "instance %d has no container now", instance);
  else if (!slot->host->reachable)
    g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_FAILED,
                 "instance %d's host %s does not answer now", instance, slot->host->config->name);
  else
    return slot;
  return NULL;
}

GBytes *
stg_fleet_read_log (StgRuntime *base, gint64 job_id, gint32 instance, const StgLogQuery *q,
                    StgLogInfo *info, GError **error)
{
  StgFleetRuntime *rt = (StgFleetRuntime *) base;
  g_autoptr (GError) local = NULL;

  if (q->process != NULL)
    {
      g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_INVALID,
                   "the fleet runtime serves an instance's container output only: the output of "
                   "process %s stays in the sandbox inside its container",
                   q->process);
      return NULL;
    }
  Slot *slot = slot_with_container (rt, job_id, instance, error);
  if (slot == NULL)
    return NULL;
  guint timeout_secs = rt->options.fleet.call_timeout_secs;
  timeout_secs = timeout_secs == 0 ? LOGS_TIMEOUT_SECS : MIN (timeout_secs, LOGS_TIMEOUT_SECS);
  g_autofree gchar *text = container_output (slot->host->config, slot->container_id, q->err,
                                             timeout_secs, &local);
  if (text == NULL)
    {
      g_set_error (error, STG_RUNTIME_ERROR,
                   g_error_matches (local, STG_DOCKER_ERROR, STG_DOCKER_ERROR_NOT_FOUND)
                       ? STG_RUNTIME_ERROR_NOT_FOUND
                       : STG_RUNTIME_ERROR_FAILED,
                   "reading the output of instance %d: %s", instance, local->message);
      return NULL;
    }
  gint64 size = (gint64) strlen (text);
  gint64 from = q->offset < 0 ? MAX (size + q->offset, 0) : MIN (q->offset, size);
  gsize got = (gsize) MIN ((gint64) q->max, size - from);
  info->next = from + (gint64) got;
  info->size = size;
  return g_bytes_new (text + from, got);
}
