/* fleet_logs.c: StgRuntimeOps.read_log of the fleet runtime. An instance's
 * output is its container's as the host's engine keeps it (the logs call,
 * stdout or stderr). An AuroraExecutor process's own output is the file
 * its runner writes in the sandbox inside the container,
 * .logs/PROCESS/RUN/stdout or stderr, fetched with the archive call; its
 * newest run is the one the runner's state file (.thermos_state.json)
 * names. The API answers getTaskLogs at once, so a read waits for the
 * engine's answers: they come through a client of its own on a context of
 * its own, iterated here for at most LOGS_TIMEOUT_SECS a call, and nothing
 * of the main loop runs meanwhile. Nothing is read of a host that does not
 * answer now (no read waits for it). Main-loop thread only.
 */
#include "config.h"

#include <string.h>

#include "common/json_check.h"
#include "runtime/fleet/fleet_private.h"
#include "runtime/thermos_task.h"

/* The longest a read waits for a host's engine. */
#define LOGS_TIMEOUT_SECS 10

/* A client of one host's engine for one read, on a context of its own
 * (the thread's default while it is open). */
typedef struct
{
  const StgFleetHostConfig *host;
  GMainContext *context;
  StgDocker *docker;
} Engine;

static void
engine_close (Engine *e)
{
  if (e->docker != NULL)
    {
      stg_docker_free (e->docker);
      while (g_main_context_pending (e->context))
        g_main_context_iteration (e->context, FALSE);
    }
  if (e->context != NULL)
    {
      g_main_context_pop_thread_default (e->context);
      g_main_context_unref (e->context);
    }
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Engine, engine_close)

static gboolean
engine_open (Engine *e, const StgFleetHostConfig *host, guint timeout_secs, GError **error)
{
  StgDockerTls tls = { host->tls_cert, host->tls_key, host->tls_ca };

  e->host = host;
  e->context = g_main_context_new ();
  g_main_context_push_thread_default (e->context);
  e->docker = stg_docker_new (host->endpoint, &tls, timeout_secs, error);
  return e->docker != NULL;
}

static void
on_done (GObject *source G_GNUC_UNUSED, GAsyncResult *result, gpointer data)
{
  *(GAsyncResult **) data = g_object_ref (result);
}

/* Iterates the engine's context until the call that reports to on_done
 * in *@result has finished; its result. */
static GAsyncResult *
engine_wait (Engine *e, GAsyncResult **result)
{
  while (*result == NULL)
    g_main_context_iteration (e->context, TRUE);
  return *result;
}

/* The regular file @path of container @id; the engine's errors are
 * prefixed with the host's name. */
static GBytes *
engine_file (Engine *e, const gchar *id, const gchar *path, GError **error)
{
  g_autoptr (GAsyncResult) result = NULL;

  stg_docker_archive_async (e->docker, id, path, NULL, on_done, &result);
  GBytes *file = stg_docker_archive_finish (e->docker, engine_wait (e, &result), error);
  if (file == NULL)
    g_prefix_error (error, "host %s: ", e->host->name);
  return file;
}

/* Whether the engine says container @id no longer exists. */
static gboolean
engine_lacks (Engine *e, const gchar *id)
{
  g_autoptr (GAsyncResult) result = NULL;
  g_autoptr (GError) error = NULL;

  stg_docker_inspect_async (e->docker, id, NULL, on_done, &result);
  JsonNode *node = stg_docker_inspect_finish (e->docker, engine_wait (e, &result), &error);

  g_clear_pointer (&node, json_node_unref);
  return g_error_matches (error, STG_DOCKER_ERROR, STG_DOCKER_ERROR_NOT_FOUND);
}

/* What container @id wrote to stdout (or stderr, @err). */
static GBytes *
container_output (Engine *e, const gchar *id, gboolean err, GError **error)
{
  g_autoptr (GAsyncResult) result = NULL;

  stg_docker_logs_async (e->docker, id, -1, err ? STG_DOCKER_STDERR : STG_DOCKER_STDOUT, NULL,
                         on_done, &result);
  gchar *text = stg_docker_logs_finish (e->docker, engine_wait (e, &result), error);
  if (text == NULL)
    {
      g_prefix_error (error, "host %s: ", e->host->name);
      return NULL;
    }
  return g_bytes_new_take (text, strlen (text));
}

/* The newest run of @process that the runner's state file @state names,
 * or -1 when it names none (the process has not started yet). */
static gint
newest_run (GBytes *state, const gchar *process)
{
  gsize len = 0;
  const gchar *text = g_bytes_get_data (state, &len);
  g_autoptr (JsonParser) parser = json_parser_new ();

  if (text == NULL || !stg_json_load (parser, text, (gssize) len, NULL))
    return -1;
  JsonNode *root = json_parser_get_root (parser);
  JsonObject *o = JSON_NODE_HOLDS_OBJECT (root) ? json_node_get_object (root) : NULL;
  JsonNode *list = o != NULL ? json_object_get_member (o, "processes") : NULL;
  JsonArray *processes = list != NULL && JSON_NODE_HOLDS_ARRAY (list) ? json_node_get_array (list)
                                                                      : NULL;

  for (guint i = 0; processes != NULL && i < json_array_get_length (processes); i++)
    {
      JsonNode *node = json_array_get_element (processes, i);
      JsonObject *p = JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
      JsonNode *name = p != NULL ? json_object_get_member (p, "name") : NULL;
      JsonNode *run = p != NULL ? json_object_get_member (p, "run") : NULL;
      if (name != NULL && run != NULL && json_node_get_value_type (name) == G_TYPE_STRING &&
          json_node_get_value_type (run) == G_TYPE_INT64 &&
          g_strcmp0 (json_node_get_string (name), process) == 0)
        return (gint) CLAMP (json_node_get_int (run), -1, G_MAXINT);
    }
  return -1;
}

/* Fills @info->processes from the config the slot's container runs; FALSE
 * with @error when @process is not one of them. */
static gboolean
task_processes (Slot *slot, const gchar *process, StgLogInfo *info, GError **error)
{
  gint64 config_id = slot->container_config != 0 ? slot->container_config : slot->base.config_id;
  g_autoptr (ApiTaskConfig) config = config_id != 0
                                         ? stg_store_get_config (slot->rt->store, config_id, NULL)
                                         : NULL;
  g_autoptr (StgTaskSpec) spec = config != NULL ? stg_task_spec_new (config, config_id, NULL)
                                                : NULL;

  return stg_thermos_task_log_processes (spec != NULL ? spec->thermos : NULL,
                                         slot->base.key.instance, process, info, error);
}

/* The file .logs/PROCESS/RUN/stdout (or stderr) of the slot's container:
 * of run @q->run, or of the newest (in @info->run). */
static GBytes *
process_output (Engine *e, Slot *slot, const StgLogQuery *q, StgLogInfo *info, GError **error)
{
  const gchar *id = slot->container_id;
  const gchar *name = q->err ? "stderr" : "stdout";
  gint32 instance = slot->base.key.instance;
  g_autoptr (GError) local = NULL;
  g_autoptr (GBytes) state = NULL;
  GBytes *file = NULL;

  info->run = q->run;
  if (q->run < 0)
    {
      state = engine_file (e, id, STG_FLEET_SANDBOX "/.thermos_state.json", &local);
      info->run = state != NULL ? newest_run (state, q->process) : -1;
    }
  if (info->run >= 0)
    {
      g_autofree gchar *run = g_strdup_printf ("%d", info->run);
      g_autofree gchar *path = g_build_filename (STG_FLEET_SANDBOX, ".logs", q->process, run, name,
                                                 NULL);
      file = engine_file (e, id, path, &local);
    }
  if (file != NULL)
    return file;
  if (local != NULL && !g_error_matches (local, STG_DOCKER_ERROR, STG_DOCKER_ERROR_NOT_FOUND))
    g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_FAILED,
                 "reading process %s's %s of instance %d: %s", q->process, name, instance,
                 local->message);
  else if (local != NULL && engine_lacks (e, id))
    g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_NOT_FOUND,
                 "instance %d's container %s is gone from host %s, and its sandbox with it",
                 instance, id, e->host->name);
  else
    g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_NOT_FOUND,
                 "instance %d's process %s has no %s%s yet", instance, q->process, name,
                 info->run >= 0 ? " of that run" : "");
  return NULL;
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

/* What the slot's container wrote, or its process @q->process did. */
static GBytes *
read_output (StgFleetRuntime *rt, Slot *slot, const StgLogQuery *q, StgLogInfo *info,
             GError **error)
{
  guint timeout_secs = rt->options.fleet.call_timeout_secs;
  g_auto (Engine) e = { 0 };
  g_autoptr (GError) local = NULL;

  timeout_secs = timeout_secs == 0 ? LOGS_TIMEOUT_SECS : MIN (timeout_secs, LOGS_TIMEOUT_SECS);
  if (engine_open (&e, slot->host->config, timeout_secs, &local))
    {
      if (q->process != NULL)
        return process_output (&e, slot, q, info, error);
      GBytes *text = container_output (&e, slot->container_id, q->err, &local);
      if (text != NULL)
        return text;
    }
  g_set_error (error, STG_RUNTIME_ERROR,
               g_error_matches (local, STG_DOCKER_ERROR, STG_DOCKER_ERROR_NOT_FOUND)
                   ? STG_RUNTIME_ERROR_NOT_FOUND
                   : STG_RUNTIME_ERROR_FAILED,
               "reading the output of instance %d: %s", slot->base.key.instance, local->message);
  return NULL;
}

GBytes *
stg_fleet_read_log (StgRuntime *base, gint64 job_id, gint32 instance, const StgLogQuery *q,
                    StgLogInfo *info, GError **error)
{
  StgFleetRuntime *rt = (StgFleetRuntime *) base;
  Slot *slot = (Slot *) stg_slots_find (rt->slots, job_id, instance);

  if (slot != NULL && !task_processes (slot, q->process, info, error))
    return NULL;
  slot = slot_with_container (rt, job_id, instance, error);
  if (slot == NULL)
    return NULL;
  g_autoptr (GBytes) all = read_output (rt, slot, q, info, error);
  if (all == NULL)
    return NULL;
  gint64 size = (gint64) g_bytes_get_size (all);
  gint64 from = q->offset < 0 ? MAX (size + q->offset, 0) : MIN (q->offset, size);
  gsize got = (gsize) MIN ((gint64) q->max, size - from);
  info->next = from + (gint64) got;
  info->size = size;
  return g_bytes_new_from_bytes (all, (gsize) from, got);
}
