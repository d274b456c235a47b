/* task.c: the job level of AuroraExecutor data: the keys of Aurora's
 * MesosJob (less update_config and instances, which the client leaves
 * out), the health check, the HTTP lifecycle, the announcer and the
 * container, with Aurora's defaults. The Thermos task is task_read.c's, the
 * ports ports.c's. Calls common/ and json-glib; any thread.
 */
#include "config.h"

#include <string.h>

#include "common/json_check.h"
#include "thermos/task_private.h"

static void
process_free (gpointer data)
{
  StgThermosProcess *p = data;

  g_free (p->name);
  g_free (p->cmdline);
  if (p->after != NULL)
    g_array_unref (p->after);
  g_free (p);
}

void
stg_thermos_job_free (StgThermosJob *job)
{
  if (job == NULL)
    return;
  g_free (job->role);
  g_free (job->environment);
  g_free (job->name);
  g_free (job->cluster);
  g_free (job->task.name);
  g_clear_pointer (&job->task.processes, g_ptr_array_unref);
  g_free (job->health.endpoint);
  g_free (job->health.expected_response);
  g_free (job->health.shell_command);
  g_free (job->lifecycle.port);
  g_free (job->lifecycle.graceful_shutdown_endpoint);
  g_free (job->lifecycle.shutdown_endpoint);
  g_free (job->primary_port);
  g_clear_pointer (&job->portmap, g_hash_table_unref);
  g_free (job->zk_path);
  g_free (job->image);
  g_strfreev (job->ports);
  g_clear_pointer (&job->port_refs, g_hash_table_unref);
  g_free (job);
}

/* The object member @key of @o (its type checked already), or NULL. */
static JsonObject *
member_object (JsonObject *o, const gchar *key)
{
  return json_object_has_member (o, key) ? json_object_get_object_member (o, key) : NULL;
}

static JsonArray *
member_array (JsonObject *o, const gchar *key)
{
  return json_object_has_member (o, key) ? json_object_get_array_member (o, key) : NULL;
}

/* ---- the health check ------------------------------------------------------------- */

static gboolean
read_health (StgThermosJob *job, JsonObject *o, GError **error)
{
  static const StgField fields[] = {
    STG_FIELD_CHECK ("health_checker", STG_FIELD_OBJECT),
    STG_FIELD_RANGE ("initial_interval_secs", STG_FIELD_NUMBER, StgThermosHealth,
                     initial_interval_secs, 0, 86400),
    STG_FIELD_RANGE ("interval_secs", STG_FIELD_NUMBER, StgThermosHealth, interval_secs, 0.001,
                     86400),
    STG_FIELD_RANGE ("timeout_secs", STG_FIELD_NUMBER, StgThermosHealth, timeout_secs, 0.001, 3600),
    STG_FIELD_RANGE ("max_consecutive_failures", STG_FIELD_INT, StgThermosHealth,
                     max_consecutive_failures, 0, G_MAXINT),
    STG_FIELD_RANGE ("min_consecutive_successes", STG_FIELD_INT, StgThermosHealth,
                     min_consecutive_successes, 0, G_MAXINT),
    { NULL },
  };
  static const StgField checker_fields[] = {
    STG_FIELD_CHECK ("http", STG_FIELD_OBJECT),
    STG_FIELD_CHECK ("shell", STG_FIELD_OBJECT),
    { NULL },
  };
  static const StgField http_fields[] = {
    STG_FIELD_ROW ("endpoint", STG_FIELD_STRING, StgThermosHealth, endpoint),
    STG_FIELD_ROW ("expected_response", STG_FIELD_STRING, StgThermosHealth, expected_response),
    STG_FIELD_RANGE ("expected_response_code", STG_FIELD_INT, StgThermosHealth,
                     expected_response_code, 0, 599),
    { NULL },
  };
  static const StgField shell_fields[] = {
    STG_FIELD_NEED ("shell_command", STG_FIELD_STRING, StgThermosHealth, shell_command),
    { NULL },
  };
  static const gchar checker_path[] = "health_check_config.health_checker";
  StgThermosHealth *h = &job->health;

  if (!stg_thermos_read (o, "health_check_config", fields, h, error))
    return FALSE;
  JsonObject *checker = member_object (o, "health_checker");
  if (checker == NULL)
    return TRUE; /* Aurora's default: HTTP */
  if (!stg_thermos_read (checker, checker_path, checker_fields, NULL, error))
    return FALSE;
  JsonObject *http = member_object (checker, "http");
  JsonObject *shell = member_object (checker, "shell");
  if (http == NULL && shell == NULL)
    return stg_thermos_bad (error, "%s: give http or shell", checker_path);
  if (http != NULL &&
      !stg_thermos_read (http, "health_check_config.health_checker.http", http_fields, h, error))
    return FALSE;
  if (h->endpoint[0] != '/')
    return stg_thermos_bad (error, "%s.http.endpoint must start with '/'", checker_path);
  if (!stg_thermos_template_scan (h->endpoint, "health_check_config.health_checker.http.endpoint",
                                  STG_THERMOS_SCOPE_MESOS, NULL, NULL, error))
    return FALSE;
  if (shell == NULL)
    return TRUE;
  /* Aurora's executor runs the shell check when both are given. */
  if (!stg_thermos_read (shell, "health_check_config.health_checker.shell", shell_fields, h, error))
    return FALSE;
  if (h->shell_command[0] == '\0')
    return stg_thermos_bad (error, "%s.shell.shell_command is empty", checker_path);
  h->kind = STG_THERMOS_HEALTH_SHELL;
  return TRUE;
}

/* Once the ports are known: HTTP checks need a port named "health", and
 * the shell command may name only the task's ports. */
static gboolean
settle_health (StgThermosJob *job, GError **error)
{
  static const gchar where[] = "health_check_config.health_checker.shell.shell_command";
  StgThermosHealth *h = &job->health;

  if (h->kind == STG_THERMOS_HEALTH_HTTP && !stg_thermos_job_has_port (job, "health"))
    h->kind = STG_THERMOS_HEALTH_NONE; /* as Aurora: no health port, no HTTP check */
  if (h->kind != STG_THERMOS_HEALTH_SHELL)
    return TRUE;
  g_autoptr (GHashTable) named = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  StgThermosPortNote note = { named, where };
  if (!stg_thermos_template_scan (h->shell_command, where, STG_THERMOS_SCOPE_ALL,
                                  stg_thermos_note_port, &note, error))
    return FALSE;
  GHashTableIter it;
  gpointer name;
  g_hash_table_iter_init (&it, named);
  while (g_hash_table_iter_next (&it, &name, NULL))
    if (!stg_thermos_job_has_port (job, name))
      return stg_thermos_bad (error,
                              "%s: template {{thermos.ports[%s]}} names port '%s', which "
                              "the task does not ask for (only the processes' templates and the "
                              "announcer's portmap ask for ports)",
                              where, (gchar *) name, (gchar *) name);
  return TRUE;
}

/* ---- the lifecycle, the announcer, the container ------------------------------------- */

static gboolean
read_lifecycle (StgThermosJob *job, JsonObject *o, GError **error)
{
  static const StgField fields[] = {
    STG_FIELD_CHECK ("http", STG_FIELD_OBJECT),
    { NULL },
  };
  static const StgField http_fields[] = {
    STG_FIELD_ROW ("port", STG_FIELD_STRING, StgThermosLifecycle, port),
    STG_FIELD_ROW ("graceful_shutdown_endpoint", STG_FIELD_STRING, StgThermosLifecycle,
                   graceful_shutdown_endpoint),
    STG_FIELD_ROW ("shutdown_endpoint", STG_FIELD_STRING, StgThermosLifecycle, shutdown_endpoint),
    STG_FIELD_RANGE ("graceful_shutdown_wait_secs", STG_FIELD_INT, StgThermosLifecycle,
                     graceful_shutdown_wait_secs, 0, 86400),
    STG_FIELD_RANGE ("shutdown_wait_secs", STG_FIELD_INT, StgThermosLifecycle, shutdown_wait_secs,
                     0, 86400),
    { NULL },
  };
  StgThermosLifecycle *l = &job->lifecycle;

  if (!stg_thermos_read (o, "lifecycle", fields, NULL, error))
    return FALSE;
  JsonObject *http = member_object (o, "http");
  if (http == NULL)
    return TRUE; /* Aurora's DisableLifecycle */
  if (!stg_thermos_read (http, "lifecycle.http", http_fields, l, error))
    return FALSE;
  const gchar *endpoints[] = { l->graceful_shutdown_endpoint, l->shutdown_endpoint };
  const gchar *names[] = { "graceful_shutdown_endpoint", "shutdown_endpoint" };
  for (guint i = 0; i < G_N_ELEMENTS (endpoints); i++)
    {
      g_autofree gchar *where = g_strconcat ("lifecycle.http.", names[i], NULL);
      if (endpoints[i][0] != '/')
        return stg_thermos_bad (error, "%s must start with '/'", where);
      if (!stg_thermos_template_scan (endpoints[i], where, STG_THERMOS_SCOPE_MESOS, NULL, NULL,
                                      error))
        return FALSE;
    }
  l->enabled = TRUE; /* until the ports show that its port is not the task's */
  return TRUE;
}

static gboolean
read_announce (StgThermosJob *job, JsonObject *o, GError **error)
{
  static const StgField fields[] = {
    STG_FIELD_ROW ("primary_port", STG_FIELD_STRING, StgThermosJob, primary_port),
    STG_FIELD_CHECK ("portmap", STG_FIELD_STRMAP),
    STG_FIELD_ROW ("zk_path", STG_FIELD_STRING, StgThermosJob, zk_path),
    { NULL },
  };

  job->announce = TRUE;
  if (!stg_thermos_read (o, "announce", fields, job, error))
    return FALSE;
  if (job->zk_path != NULL && job->zk_path[0] != '/')
    return stg_thermos_bad (error,
                            "announce.zk_path: '%s' is not a ZooKeeper path (it starts "
                            "with '/')",
                            job->zk_path);
  JsonObject *portmap = member_object (o, "portmap");
  if (portmap == NULL)
    {
      /* Aurora's default: {'aurora': '{{primary_port}}'} */
      g_hash_table_insert (job->portmap, g_strdup ("aurora"), g_strdup (job->primary_port));
      return TRUE;
    }
  g_autoptr (GList) keys = json_object_get_members (portmap);
  for (GList *l = keys; l != NULL; l = l->next)
    g_hash_table_insert (job->portmap, g_strdup (l->data),
                         g_strdup (json_object_get_string_member (portmap, l->data)));
  return TRUE;
}

typedef struct
{
  gchar *image;
  gchar *name;
  gchar *tag;
} Image;

static void
image_clear (Image *c)
{
  g_free (c->image);
  g_free (c->name);
  g_free (c->tag);
}

/* Docker: { image, parameters }, at @path. */
static gboolean
read_docker (StgThermosJob *job, JsonObject *o, const gchar *path, GError **error)
{
  static const StgField fields[] = {
    STG_FIELD_NEED ("image", STG_FIELD_STRING, Image, image),
    STG_FIELD_CHECK ("parameters", STG_FIELD_ARRAY),
    { NULL },
  };
  Image c = { NULL };

  if (!stg_thermos_read (o, path, fields, &c, error))
    {
      image_clear (&c);
      return FALSE;
    }
  job->container = STG_THERMOS_CONTAINER_DOCKER;
  job->image = g_steal_pointer (&c.image);
  image_clear (&c);
  JsonArray *parameters = member_array (o, "parameters");
  if (parameters != NULL && json_array_get_length (parameters) > 0)
    return stg_thermos_refuse (error, "%s.parameters: Docker parameters are not supported", path);
  return TRUE;
}

/* Mesos: { image: AppcImage | DockerImage, volumes }. */
static gboolean
read_mesos (StgThermosJob *job, JsonObject *o, GError **error)
{
  static const StgField fields[] = {
    STG_FIELD_CHECK ("image", STG_FIELD_OBJECT),
    STG_FIELD_CHECK ("volumes", STG_FIELD_ARRAY),
    { NULL },
  };
  static const StgField image_fields[] = {
    STG_FIELD_NEED ("name", STG_FIELD_STRING, Image, name),
    STG_FIELD_NEED ("tag", STG_FIELD_STRING, Image, tag),
    STG_FIELD_NO ("image_id", "AppC images are not supported (Docker images are)"),
    { NULL },
  };
  Image c = { NULL };

  if (!stg_thermos_read (o, "container", fields, NULL, error))
    return FALSE;
  JsonArray *volumes = member_array (o, "volumes");
  if (volumes != NULL && json_array_get_length (volumes) > 0)
    return stg_thermos_refuse (error, "container.volumes: the Mesos containerizer's volumes are "
                                      "not supported");
  JsonObject *image = member_object (o, "image");
  gboolean ok = image == NULL ||
                stg_thermos_read (image, "container.image", image_fields, &c, error);
  if (ok)
    {
      job->container = STG_THERMOS_CONTAINER_MESOS;
      if (image != NULL)
        job->image = g_strconcat (c.name, ":", c.tag, NULL);
    }
  image_clear (&c);
  return ok;
}

/* Container { docker }, Docker { image, parameters } or Mesos { image,
 * volumes }: Aurora's Choice, told apart by its keys. */
static gboolean
read_container (StgThermosJob *job, JsonObject *o, GError **error)
{
  static const StgField wrapper[] = {
    { "docker", STG_FIELD_OBJECT, STG_FIELD_SKIP, 0, 0, TRUE },
    { NULL },
  };

  if (json_object_has_member (o, "docker"))
    return stg_thermos_read (o, "container", wrapper, NULL, error) &&
           read_docker (job, member_object (o, "docker"), "container.docker", error);
  JsonNode *image = json_object_get_member (o, "image");
  if (image != NULL && JSON_NODE_HOLDS_VALUE (image))
    return read_docker (job, o, "container", error);
  return read_mesos (job, o, error);
}

/* ---- the job ---------------------------------------------------------------------- */

typedef struct
{
  gchar *role, *environment, *name, *cluster, *cron_policy, *executor;
  gboolean service;
  JsonObject *task, *announce, *health, *lifecycle, *container;
} Top;

static void
top_clear (Top *t)
{
  g_free (t->role);
  g_free (t->environment);
  g_free (t->name);
  g_free (t->cluster);
  g_free (t->cron_policy);
  g_free (t->executor);
}

/* The keys only the scheduler uses (it has them from the TaskConfig too):
 * checked for their types. */
static gboolean
read_scheduler_keys (JsonObject *o, const Top *t, GError **error)
{
  static const StgField metadata_fields[] = {
    { "key", STG_FIELD_STRING, STG_FIELD_SKIP, 0, 0, TRUE },
    { "value", STG_FIELD_STRING, STG_FIELD_SKIP, 0, 0, TRUE },
    { NULL },
  };
  static const StgField partition_fields[] = {
    STG_FIELD_CHECK ("reschedule", STG_FIELD_BOOL),
    { "delay_secs", STG_FIELD_INT, STG_FIELD_SKIP, 0, G_MAXINT },
    { NULL },
  };
  static const StgField sla_fields[] = {
    { "percentage", STG_FIELD_NUMBER, STG_FIELD_SKIP, 0, 100 },
    { "count", STG_FIELD_INT, STG_FIELD_SKIP, 0, G_MAXINT },
    { "duration_secs", STG_FIELD_INT, STG_FIELD_SKIP, 0, G_MAXINT },
    STG_FIELD_CHECK ("coordinator_url", STG_FIELD_STRING),
    STG_FIELD_CHECK ("status_key", STG_FIELD_STRING),
    { NULL },
  };
  static const StgField executor_fields[] = {
    STG_FIELD_ROW ("name", STG_FIELD_STRING, Top, executor),
    STG_FIELD_CHECK ("data", STG_FIELD_STRING),
    { NULL },
  };
  static const gchar *const policies[] = { "KILL_EXISTING", "CANCEL_NEW", "RUN_OVERLAP", NULL };
  JsonArray *metadata = member_array (o, "metadata");
  JsonObject *executor = member_object (o, "executor_config");
  JsonObject *partition = member_object (o, "partition_policy");
  JsonObject *sla = member_object (o, "sla_policy");
  g_autofree gchar *executor_name = NULL;
  Top names = { 0 };

  for (guint i = 0; metadata != NULL && i < json_array_get_length (metadata); i++)
    {
      g_autofree gchar *path = stg_json_path_index ("metadata", i);
      JsonObject *m = stg_thermos_element_object (metadata, "metadata", i, error);
      if (m == NULL || !stg_thermos_read (m, path, metadata_fields, NULL, error))
        return FALSE;
    }
  if (t->cron_policy != NULL && !g_strv_contains (policies, t->cron_policy))
    return stg_thermos_bad (error,
                            "cron_collision_policy: '%s' is none of KILL_EXISTING, "
                            "CANCEL_NEW, RUN_OVERLAP",
                            t->cron_policy);
  gboolean read = executor == NULL ||
                  stg_thermos_read (executor, "executor_config", executor_fields, &names, error);
  executor_name = g_steal_pointer (&names.executor); /* read or not, it is ours */
  if (!read)
    return FALSE;
  if (executor_name != NULL && !g_str_equal (executor_name, STG_THERMOS_EXECUTOR_NAME))
    return stg_thermos_bad (error, "executor_config.name is '%s', but this is the data of '%s'",
                            executor_name, STG_THERMOS_EXECUTOR_NAME);
  return (partition == NULL ||
          stg_thermos_read (partition, "partition_policy", partition_fields, NULL, error)) &&
         (sla == NULL || stg_thermos_read (sla, "sla_policy", sla_fields, NULL, error));
}

static const StgField job_fields[] = {
  STG_FIELD_NEED ("name", STG_FIELD_STRING, Top, name),
  STG_FIELD_NEED ("role", STG_FIELD_STRING, Top, role),
  STG_FIELD_NEED ("environment", STG_FIELD_STRING, Top, environment),
  STG_FIELD_NEED ("cluster", STG_FIELD_STRING, Top, cluster),
  STG_FIELD_NEED ("task", STG_FIELD_OBJECT, Top, task),
  STG_FIELD_ROW ("announce", STG_FIELD_OBJECT, Top, announce),
  STG_FIELD_ROW ("health_check_config", STG_FIELD_OBJECT, Top, health),
  STG_FIELD_ROW ("lifecycle", STG_FIELD_OBJECT, Top, lifecycle),
  STG_FIELD_ROW ("container", STG_FIELD_OBJECT, Top, container),
  STG_FIELD_ROW ("service", STG_FIELD_BOOL, Top, service),
  STG_FIELD_ROW ("cron_collision_policy", STG_FIELD_STRING, Top, cron_policy),
  STG_FIELD_CHECK ("metadata", STG_FIELD_ARRAY),
  STG_FIELD_CHECK ("contact", STG_FIELD_STRING),
  STG_FIELD_CHECK ("tier", STG_FIELD_STRING),
  STG_FIELD_CHECK ("constraints", STG_FIELD_STRMAP),
  STG_FIELD_CHECK ("task_links", STG_FIELD_STRMAP),
  STG_FIELD_CHECK ("production", STG_FIELD_BOOL),
  STG_FIELD_CHECK ("enable_hooks", STG_FIELD_BOOL),
  STG_FIELD_CHECK ("priority", STG_FIELD_INT),
  { "max_task_failures", STG_FIELD_INT, STG_FIELD_SKIP, -1, G_MAXINT },
  STG_FIELD_CHECK ("executor_config", STG_FIELD_OBJECT),
  STG_FIELD_CHECK ("partition_policy", STG_FIELD_OBJECT),
  STG_FIELD_CHECK ("sla_policy", STG_FIELD_OBJECT),
  STG_FIELD_NO ("cron_schedule", "cron jobs are not supported"),
  STG_FIELD_NO ("update_config", "update settings travel with the update, not in the executor "
                                 "data (the aurora client leaves them out)"),
  STG_FIELD_NO ("instances", "the instance count is the job's, not the executor's (the aurora "
                             "client leaves it out)"),
  STG_FIELD_NO ("instance", "this is the MesosTaskInstance form of executor data, which Stagger "
                            "does not read (the aurora client sends the job form)"),
  { NULL },
};

/* Aurora's defaults for what the data leaves out. */
static StgThermosJob *
job_new (void)
{
  StgThermosJob *job = g_new0 (StgThermosJob, 1);

  job->task.processes = g_ptr_array_new_with_free_func (process_free);
  job->task.max_failures = 1;
  job->task.finalization_wait = 30;
  job->health.endpoint = g_strdup ("/health");
  job->health.expected_response = g_strdup ("ok");
  job->health.initial_interval_secs = 15;
  job->health.interval_secs = 10;
  job->health.timeout_secs = 1;
  job->health.min_consecutive_successes = 1;
  job->health.kind = STG_THERMOS_HEALTH_HTTP;
  job->lifecycle.port = g_strdup ("health");
  job->lifecycle.graceful_shutdown_endpoint = g_strdup ("/quitquitquit");
  job->lifecycle.shutdown_endpoint = g_strdup ("/abortabortabort");
  job->lifecycle.graceful_shutdown_wait_secs = 5;
  job->lifecycle.shutdown_wait_secs = 5;
  job->primary_port = g_strdup ("http");
  job->portmap = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  job->port_refs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  return job;
}

static gboolean
read_job (StgThermosJob *job, JsonObject *o, GError **error)
{
  Top t = { 0 };
  gboolean ok = stg_thermos_read (o, "", job_fields, &t, error) &&
                read_scheduler_keys (o, &t, error);

  if (ok)
    {
      job->role = g_steal_pointer (&t.role);
      job->environment = g_steal_pointer (&t.environment);
      job->name = g_steal_pointer (&t.name);
      job->cluster = g_steal_pointer (&t.cluster);
      job->service = t.service;
      ok = stg_thermos_read_task (job, t.task, error) &&
           (t.announce == NULL || read_announce (job, t.announce, error)) &&
           (t.health == NULL || read_health (job, t.health, error)) &&
           (t.lifecycle == NULL || read_lifecycle (job, t.lifecycle, error)) &&
           (t.container == NULL || read_container (job, t.container, error)) &&
           stg_thermos_ports_settle (job, error) && settle_health (job, error);
    }
  if (ok && t.lifecycle == NULL)
    job->lifecycle.enabled = FALSE;
  if (ok && job->lifecycle.enabled)
    job->lifecycle.enabled = stg_thermos_job_has_port (job, job->lifecycle.port);
  top_clear (&t);
  return ok;
}

StgThermosJob *
stg_thermos_job_parse (const gchar *data, gssize length, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) local = NULL;
  g_autoptr (StgThermosJob) job = job_new ();

  if (data == NULL)
    {
      stg_thermos_bad (error, "no executor data");
      return NULL;
    }
  if (!stg_json_check_depth (data, length, STG_JSON_NESTING_MAX, &local) ||
      !json_parser_load_from_data (parser, data, length, &local))
    {
      stg_thermos_bad (error, "not valid JSON: %s", local->message);
      return NULL;
    }
  JsonNode *root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      stg_thermos_bad (error, "the executor data must be a JSON object (Aurora's job)");
      return NULL;
    }
  if (!read_job (job, json_node_get_object (root), error))
    return NULL;
  return g_steal_pointer (&job);
}

gint
stg_thermos_job_stop_secs (const StgThermosJob *job)
{
  const StgThermosLifecycle *l = &job->lifecycle;
  gint lifecycle = l->enabled ? 2 * STG_THERMOS_LIFECYCLE_POST_SECS +
                                    l->graceful_shutdown_wait_secs + l->shutdown_wait_secs
                              : 0;

  return lifecycle + STG_THERMOS_PREEMPTION_WAIT_SECS + STG_THERMOS_REAP_WAIT_SECS;
}

const gchar *
stg_thermos_exit_meaning (gint status)
{
  switch (status)
    {
    case STG_RUNNER_EXIT_SUCCESS:
      return "the task succeeded";
    case STG_RUNNER_EXIT_FAILED:
      return "the task failed";
    case STG_RUNNER_EXIT_KILLED:
      return "the task was stopped";
    case STG_RUNNER_EXIT_USAGE:
      return "the runner was started with a wrong command line";
    case STG_RUNNER_EXIT_INVALID:
      return "the runner refused the task or its ports";
    case STG_RUNNER_EXIT_INTERNAL:
      return "the runner could not work";
    default:
      return NULL;
    }
}
