/* fleet_container.c: what the fleet runtime asks an engine to create for an
 * instance, and which task configs it can run.
 *
 * A container runs TaskConfig.container.docker.image with the executor
 * data's command (or argv) and environment, its named ports as host ports
 * (stable per instance, from the configured range, kept in the store) in
 * PORT_<NAME> and templates, numCpus and ramMb as limits, stop_timeout_secs
 * as the stop timeout, a few Docker parameters, and the labels adoption
 * reads. An AuroraExecutor task's container runs stagger-thermos instead,
 * from its bundle (scripts/thermos-bundle) mounted read-only, through the
 * bundle's own dynamic loader, with the task's JSON in its environment.
 * A pod's main container joins its anchor's namespace and volume; a task
 * whose named port a sidecar set that selects its job names too is
 * refused. Calls the store. Main-loop thread only.
 */
#include "config.h"

#include <string.h>

#include "common/templates.h"
#include "runtime/fleet/fleet_private.h"
#include "runtime/thermos_task.h"

/* Where an AuroraExecutor task's container finds the runner's bundle
 * (mounted read-only; its sandbox is STG_FLEET_SANDBOX), and the variable
 * its JSON comes in (which the runner unsets), at most STG_FLEET_TASK_MAX
 * bytes (an environment string's limit is 128 KiB). */
#define BUNDLE_AT "/.stagger-thermos"
#define STG_FLEET_TASK_ENV "STAGGER_THERMOS_TASK"
#define STG_FLEET_TASK_MAX (96 * 1024)

/* The Docker parameters the fleet runtime understands (Aurora passes them
 * to the docker command line; here they become fields of the request). */
static const gchar *const known_parameters[] = {
  "network", "env", "label", "volume", "ulimit", "user", "workdir", "hostname", "init", NULL
};

static const ApiDockerContainer *
docker_of (const ApiTaskConfig *config)
{
  if (!config->__isset_container || config->container == NULL || !config->container->__isset_docker)
    return NULL;
  return config->container->docker;
}

static gboolean
check_parameters (const ApiDockerContainer *docker, GError **error)
{
  for (guint i = 0; docker->__isset_parameters && i < docker->parameters->len; i++)
    {
      const ApiDockerParameter *p = docker->parameters->pdata[i];
      if (!g_strv_contains (known_parameters, p->name))
        {
          g_autofree gchar *known = g_strjoinv (", ", (gchar **) known_parameters);
          g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_INVALID,
                       "docker parameter \"%s\" is not supported by the fleet runtime (supported: %s)",
                       p->name, known);
          return FALSE;
        }
      if (g_str_equal (p->name, "label") && g_str_has_prefix (p->value, "org.stagger."))
        {
          g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_INVALID,
                       "docker parameter label \"%s\": labels org.stagger.* are Stagger's own", p->value);
          return FALSE;
        }
    }
  return TRUE;
}

/* An AuroraExecutor task runs in its image through the runner's bundle,
 * with the task's JSON in one environment variable. */
static gboolean
check_thermos (StgFleetRuntime *rt, const StgTaskSpec *spec, GError **error)
{
  const ApiTaskConfig *config = spec->config;

  if (rt->options.thermos_bundle == NULL)
    g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_INVALID,
                 "executorConfig.name: %s tasks run in containers with stagger-thermos's bundle, "
                 "and staggerd has none (thermos_bundle)",
                 STG_THERMOS_EXECUTOR_NAME);
  else if (strlen (config->executorConfig->data) > STG_FLEET_TASK_MAX)
    g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_INVALID,
                 "executorConfig.data: %zu bytes; the fleet runtime hands a task of at most %d "
                 "bytes to its container",
                 strlen (config->executorConfig->data), STG_FLEET_TASK_MAX);
  else if (rt->options.announcing && spec->thermos->announce)
    g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_INVALID,
                 "executorConfig.data: announce: the fleet runtime does not announce containers "
                 "in ZooKeeper yet (the local runtime does); remove the announce section or run "
                 "the job with the local runtime");
  else
    return TRUE;
  return FALSE;
}

/* What the "stagger" executor may not ask of a container. */
static gboolean
check_stagger (const StgExecutorSpec *spec, GError **error)
{
  const gchar *refused = spec->hot_upgrade
                             ? "hot_upgrade is refused for a task: its container is replaced "
                               "whole; a program upgraded hot beside the task is a sidecar set's "
                               "(stagger-sidecar(5))"
                         : spec->workdir != NULL ? "workdir is not supported by the fleet runtime; "
                                                   "use the docker parameter workdir"
                                                 : NULL;
  if (refused != NULL)
    {
      g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_INVALID, "%s", refused);
      return FALSE;
    }
  return TRUE;
}

/* Checks that task config @config, of a job some sidecar sets select, can
 * be a pod with them (no named port of both). */
static gboolean
pod_check_task (StgFleetRuntime *rt, const ApiTaskConfig *config, GError **error)
{
  g_autoptr (GPtrArray) sets = NULL;

  if (config->job == NULL || rt->anchor_image == NULL ||
      (sets = stg_store_list_sidecar_sets (rt->store, NULL)) == NULL)
    return TRUE;
  g_auto (GStrv) task_ports = stg_task_port_names (config);
  for (guint i = 0; i < sets->len; i++)
    {
      StgSidecarSetRow *set = sets->pdata[i];
      g_autoptr (ApiSidecar) sidecar = stg_fleet_set_selects (set, config->job)
                                           ? stg_store_get_sidecar_version (rt->store, set->name,
                                                                            set->inject_version,
                                                                            NULL)
                                           : NULL;
      const gchar *shared = sidecar != NULL ? stg_fleet_shared_port (sidecar, task_ports) : NULL;
      if (shared != NULL)
        {
          g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_INVALID,
                       "named port %s is also sidecar set %s's, which goes into this job's pods: "
                       "give the task's port another name",
                       shared, set->name);
          return FALSE;
        }
    }
  return TRUE;
}

gboolean
stg_fleet_validate (StgRuntime *base, const ApiTaskConfig *config, GError **error)
{
  const ApiDockerContainer *docker = docker_of (config);

  g_autoptr (StgTaskSpec) spec = stg_task_spec_check ((ApiTaskConfig *) config, error);

  if (spec == NULL)
    return FALSE;
  if (docker == NULL || docker->image == NULL || docker->image[0] == '\0')
    {
      g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_INVALID,
                   "the fleet runtime runs containers: the task config needs container.docker.image");
      return FALSE;
    }
  if (!check_parameters (docker, error) ||
      !stg_fleet_check_constraints (config->__isset_constraints ? config->constraints : NULL, error))
    return FALSE;
  if (spec->thermos != NULL)
    return check_thermos ((StgFleetRuntime *) base, spec, error);
  return check_stagger (spec->exec, error) &&
         pod_check_task ((StgFleetRuntime *) base, config, error);
}

/* ---- ports ------------------------------------------------------------------- */

/* The slot's named ports: kept in the store, handed out once from the
 * range (never two slots on one port, whatever their hosts). */
GHashTable *
stg_fleet_slot_ports (Slot *slot, gchar **names, GError **error)
{
  StgFleetRuntime *rt = slot->rt;
  g_autoptr (GHashTable) ports = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (guint i = 0; names[i] != NULL; i++)
    {
      g_autoptr (GError) failed = NULL;
      gint port = stg_store_get_port (rt->store, slot->base.job, slot->base.key.instance, names[i],
                                      &failed);
      for (gint p = rt->options.port_min; port == 0 && failed == NULL && p <= rt->options.port_max;
           p++)
        if (!stg_store_port_used (rt->store, p, NULL) &&
            stg_store_put_port (rt->store, slot->base.job, slot->base.key.instance, names[i], p,
                                &failed))
          port = p;
        else if (g_error_matches (failed, STG_STORE_ERROR, STG_STORE_ERROR_EXISTS))
          g_clear_error (&failed); /* taken meanwhile: the next */
      if (failed != NULL)
        {
          /* The database, not the ports: the caller tells them apart. */
          g_propagate_error (error, g_steal_pointer (&failed));
          return NULL;
        }
      if (port == 0)
        {
          g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_FAILED,
                       "no free port left in %d-%d for port %s", rt->options.port_min, rt->options.port_max,
                       names[i]);
          return NULL;
        }
      g_hash_table_insert (ports, g_strdup (names[i]), GINT_TO_POINTER (port));
    }
  return g_steal_pointer (&ports);
}

/* ---- the create request ------------------------------------------------------- */

void
stg_fleet_json_string (JsonBuilder *b, const gchar *name, const gchar *value)
{
  json_builder_set_member_name (b, name);
  json_builder_add_string_value (b, value);
}

static void G_GNUC_PRINTF (2, 3)
add_printf (JsonBuilder *b, const gchar *format, ...)
{
  va_list ap;

  va_start (ap, format);
  g_autofree gchar *text = g_strdup_vprintf (format, ap);
  va_end (ap);
  json_builder_add_string_value (b, text);
}

gchar *
stg_fleet_port_var (const gchar *name)
{
  g_autofree gchar *up = g_ascii_strup (name, -1);

  for (gchar *p = up; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p))
      *p = '_';
  return g_strconcat ("PORT_", up, NULL);
}

/* Env: the executor's (expanded), the ports, the instance and version, and
 * "env" parameters. */
static gboolean
add_env (JsonBuilder *b, const StgTaskSpec *task, const StgTemplateVars *vars, gchar **names,
         const ApiDockerContainer *docker, GError **error)
{
  const StgExecutorSpec *spec = task->exec;

  json_builder_set_member_name (b, "Env");
  json_builder_begin_array (b);
  if (task->thermos != NULL)
    add_printf (b, "%s=%s", STG_FLEET_TASK_ENV, task->config->executorConfig->data);
  for (guint i = 0; spec->env != NULL && spec->env[i] != NULL; i++)
    {
      g_autofree gchar *e = stg_template_expand (spec->env[i], vars, NULL, error);
      if (e == NULL)
        return FALSE;
      json_builder_add_string_value (b, e);
    }
  for (guint i = 0; names[i] != NULL; i++)
    {
      g_autofree gchar *var = stg_fleet_port_var (names[i]);
      gint port = GPOINTER_TO_INT (g_hash_table_lookup (vars->ports, names[i]));
      add_printf (b, "%s=%d", var, port);
      if (i == 0)
        add_printf (b, "PORT=%d", port);
    }
  add_printf (b, "STAGGER_INSTANCE=%d", vars->instance);
  add_printf (b, "STAGGER_VERSION=%d", vars->version);
  for (guint i = 0; docker->__isset_parameters && i < docker->parameters->len; i++)
    {
      const ApiDockerParameter *p = docker->parameters->pdata[i];
      if (g_str_equal (p->name, "env"))
        json_builder_add_string_value (b, p->value);
    }
  json_builder_end_array (b);
  return TRUE;
}

/* An AuroraExecutor task's command: its runner from the bundle mounted
 * at BUNDLE_AT, through the bundle's own dynamic loader (nothing of the
 * image's libraries), in Aurora's sandbox of a container. */
static void
add_runner (JsonBuilder *b, const StgThermosVars *vars, GHashTable *assigned)
{
  const gchar *tail[] = { "--task-env", STG_FLEET_TASK_ENV, NULL };
  g_auto (GStrv) argv = stg_thermos_task_argv (BUNDLE_AT "/stagger-thermos", STG_FLEET_SANDBOX,
                                               vars, assigned, tail);

  json_builder_set_member_name (b, "Entrypoint");
  json_builder_begin_array (b);
  json_builder_add_string_value (b, BUNDLE_AT "/lib/ld.so");
  json_builder_end_array (b);
  json_builder_set_member_name (b, "Cmd");
  json_builder_begin_array (b);
  json_builder_add_string_value (b, "--library-path");
  json_builder_add_string_value (b, BUNDLE_AT "/lib");
  for (guint i = 0; argv[i] != NULL; i++)
    json_builder_add_string_value (b, argv[i]);
  json_builder_end_array (b);
}

static gboolean
add_cmd (JsonBuilder *b, const StgExecutorSpec *spec, const StgTemplateVars *vars, GError **error)
{
  json_builder_set_member_name (b, "Cmd");
  json_builder_begin_array (b);
  if (spec->command != NULL)
    {
      g_autofree gchar *cmd = stg_template_expand (spec->command, vars, NULL, error);
      if (cmd == NULL)
        return FALSE;
      json_builder_add_string_value (b, "/bin/sh");
      json_builder_add_string_value (b, "-c");
      json_builder_add_string_value (b, cmd);
    }
  for (guint i = 0; spec->command == NULL && spec->argv != NULL && spec->argv[i] != NULL; i++)
    {
      g_autofree gchar *arg = stg_template_expand (spec->argv[i], vars, NULL, error);
      if (arg == NULL)
        return FALSE;
      json_builder_add_string_value (b, arg);
    }
  json_builder_end_array (b);
  return TRUE;
}

void
stg_fleet_base_labels (JsonBuilder *b, Slot *slot, gint64 run_id)
{
  g_autofree gchar *job_id = g_strdup_printf ("%" G_GINT64_FORMAT, slot->base.key.job_id);
  g_autofree gchar *instance = g_strdup_printf ("%d", slot->base.key.instance);
  g_autofree gchar *run = g_strdup_printf ("%" G_GINT64_FORMAT, run_id);
  g_autofree gchar *epoch = g_strdup_printf ("%" G_GINT64_FORMAT,
                                             stg_store_epoch (slot->rt->store));
  g_autofree gchar *job = g_strdup_printf ("%s/%s/%s", slot->base.job->role,
                                           slot->base.job->environment, slot->base.job->name);

  stg_fleet_json_string (b, STG_FLEET_LABEL_MARKER, slot->rt->marker);
  stg_fleet_json_string (b, STG_FLEET_LABEL_JOB_ID, job_id);
  stg_fleet_json_string (b, STG_FLEET_LABEL_JOB, job);
  stg_fleet_json_string (b, STG_FLEET_LABEL_INSTANCE, instance);
  stg_fleet_json_string (b, STG_FLEET_LABEL_RUN, run);
  stg_fleet_json_string (b, STG_FLEET_LABEL_EPOCH, epoch);
}

static void
add_labels (JsonBuilder *b, Slot *slot, gint64 config_id, gint64 run_id, const gchar *hash,
            const ApiDockerContainer *docker)
{
  g_autofree gchar *config = g_strdup_printf ("%" G_GINT64_FORMAT, config_id);

  json_builder_set_member_name (b, "Labels");
  json_builder_begin_object (b);
  for (guint i = 0; docker->__isset_parameters && i < docker->parameters->len; i++)
    {
      const ApiDockerParameter *p = docker->parameters->pdata[i];
      const gchar *eq = strchr (p->value, '=');
      if (g_str_equal (p->name, "label"))
        {
          g_autofree gchar *k = eq ? g_strndup (p->value, (gsize) (eq - p->value)) : g_strdup (p->value);
          stg_fleet_json_string (b, k, eq ? eq + 1 : "");
        }
    }
  stg_fleet_base_labels (b, slot, run_id);
  stg_fleet_json_string (b, STG_FLEET_LABEL_CONFIG_ID, config);
  stg_fleet_json_string (b, STG_FLEET_LABEL_CONFIG, hash);
  if (slot->pod != NULL)
    stg_fleet_json_string (b, STG_FLEET_LABEL_ROLE, "main");
  json_builder_end_object (b);
}

/* The value of the last parameter @name, or NULL. */
static const gchar *
parameter (const ApiDockerContainer *docker, const gchar *name)
{
  if (docker == NULL)
    return NULL;
  const gchar *value = NULL;

  for (guint i = 0; docker->__isset_parameters && i < docker->parameters->len; i++)
    if (g_str_equal (((ApiDockerParameter *) docker->parameters->pdata[i])->name, name))
      value = ((ApiDockerParameter *) docker->parameters->pdata[i])->value;
  return value;
}

const gchar *
stg_fleet_parameter (const ApiTaskConfig *config, const gchar *name)
{
  return parameter (docker_of (config), name);
}

/* Ulimits from "ulimit" parameters: "nofile=1024:2048". */
static void
add_ulimits (JsonBuilder *b, const ApiDockerContainer *docker)
{
  json_builder_set_member_name (b, "Ulimits");
  json_builder_begin_array (b);
  for (guint i = 0; docker->__isset_parameters && i < docker->parameters->len; i++)
    {
      const ApiDockerParameter *p = docker->parameters->pdata[i];
      g_auto (GStrv) kv = g_str_equal (p->name, "ulimit") ? g_strsplit_set (p->value, "=:", 3) : NULL;
      if (kv == NULL || kv[0] == NULL || kv[1] == NULL)
        continue;
      json_builder_begin_object (b);
      stg_fleet_json_string (b, "Name", kv[0]);
      json_builder_set_member_name (b, "Soft");
      json_builder_add_int_value (b, g_ascii_strtoll (kv[1], NULL, 10));
      json_builder_set_member_name (b, "Hard");
      json_builder_add_int_value (b, g_ascii_strtoll (kv[2] ? kv[2] : kv[1], NULL, 10));
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

/* The host config; the main container of @pod (nullable) joins its
 * anchor's network namespace and volume, and the anchor publishes the
 * ports. The task's CPU and RAM and @max_pids (0: none) limit it. */
static void
add_host_config (JsonBuilder *b, Slot *pod, const ApiTaskConfig *config,
                 const ApiDockerContainer *docker, GHashTable *ports, gchar **names,
                 const gchar *bundle, gint64 max_pids)
{
  const gchar *network = parameter (docker, "network");
  const gchar *init = parameter (docker, "init");
  GHashTableIter it;
  gpointer r;

  json_builder_set_member_name (b, "HostConfig");
  json_builder_begin_object (b);
  if (pod != NULL)
    stg_fleet_pod_main_host_config (pod, b);
  else if (network != NULL)
    stg_fleet_json_string (b, "NetworkMode", network);
  json_builder_set_member_name (b, "Init");
  json_builder_add_boolean_value (b, init == NULL || g_strcmp0 (init, "false") != 0);
  if (max_pids > 0)
    {
      json_builder_set_member_name (b, "PidsLimit");
      json_builder_add_int_value (b, max_pids);
    }
  g_hash_table_iter_init (&it, config->resources);
  while (g_hash_table_iter_next (&it, &r, NULL))
    {
      const ApiResource *res = r;
      if (res->__isset_numCpus)
        {
          json_builder_set_member_name (b, "NanoCpus");
          json_builder_add_int_value (b, (gint64) (res->numCpus * 1e9));
        }
      if (res->__isset_ramMb)
        {
          json_builder_set_member_name (b, "Memory");
          json_builder_add_int_value (b, res->ramMb * 1024 * 1024);
        }
    }
  if (pod == NULL && g_strcmp0 (network, "host") != 0)
    {
      /* The container listens on the same number it is reached at. */
      json_builder_set_member_name (b, "PortBindings");
      json_builder_begin_object (b);
      for (guint i = 0; names[i] != NULL; i++)
        {
          gint port = GPOINTER_TO_INT (g_hash_table_lookup (ports, names[i]));
          g_autofree gchar *key = g_strdup_printf ("%d/tcp", port);
          g_autofree gchar *host_port = g_strdup_printf ("%d", port);
          json_builder_set_member_name (b, key);
          json_builder_begin_array (b);
          json_builder_begin_object (b);
          stg_fleet_json_string (b, "HostPort", host_port);
          json_builder_end_object (b);
          json_builder_end_array (b);
        }
      json_builder_end_object (b);
    }
  json_builder_set_member_name (b, "Binds");
  json_builder_begin_array (b);
  if (bundle != NULL)
    add_printf (b, "%s:%s:ro", bundle, BUNDLE_AT);
  for (guint i = 0; docker->__isset_parameters && i < docker->parameters->len; i++)
    if (g_str_equal (((ApiDockerParameter *) docker->parameters->pdata[i])->name, "volume"))
      json_builder_add_string_value (b, ((ApiDockerParameter *) docker->parameters->pdata[i])->value);
  json_builder_end_array (b);
  add_ulimits (b, docker);
  json_builder_end_object (b);
}

/* What a slot's run of one config is made of: the config parsed, its
 * named ports and the template variables over them (an AuroraExecutor
 * task's: Thermos's, over every port, aliases included). */
typedef struct
{
  StgTaskSpec *spec;
  GHashTable *ports;
  StgTemplateVars vars;
  GHashTable *all;      /* AuroraExecutor: every port name with its number */
  StgThermosRunVars tv; /* AuroraExecutor: Thermos's templates */
} RunParts;

static void
run_parts_clear (RunParts *p)
{
  g_clear_pointer (&p->spec, stg_task_spec_free);
  g_clear_pointer (&p->ports, g_hash_table_unref);
  g_clear_pointer (&p->all, g_hash_table_unref);
  stg_thermos_run_vars_clear (&p->tv);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (RunParts, run_parts_clear)

/* @slot's run @run_id of @config_id. */
static gboolean
run_parts (Slot *slot, gint64 config_id, gint64 run_id, RunParts *p, GError **error)
{
  StgFleetRuntime *rt = slot->rt;
  g_autoptr (ApiTaskConfig) config = stg_store_get_config (rt->store, config_id, error);

  if (config == NULL || (p->spec = stg_task_spec_new (config, config_id, error)) == NULL ||
      (p->ports = stg_fleet_slot_ports (slot, p->spec->port_names, error)) == NULL)
    return FALSE;
  p->vars = stg_slot_template_vars (&slot->base, rt->options.cluster,
                                    stg_store_config_version (rt->store, config_id), p->ports);
  if (p->spec->thermos == NULL)
    return TRUE;
  p->all = stg_thermos_job_resolve_ports (p->spec->thermos, p->ports, error);
  if (p->all == NULL)
    return FALSE;
  stg_thermos_run_vars_init (&p->tv, slot->base.job, slot->base.key.instance, run_id,
                             slot->host != NULL ? slot->host->config->name : NULL, NULL, p->all);
  return TRUE;
}

gchar **
stg_fleet_hook_argv (Slot *slot, gint64 config_id, gboolean pre, gdouble *timeout_secs,
                     GError **error)
{
  g_auto (RunParts) p = { 0 };

  if (!run_parts (slot, config_id, slot->base.run_id, &p, error))
    return NULL;
  const StgHookSpec *hook = pre ? &p.spec->exec->pre_update : &p.spec->exec->post_update;
  if (hook->command == NULL)
    return NULL;
  g_autofree gchar *command = stg_template_expand (hook->command, &p.vars, NULL, error);
  if (command == NULL)
    return NULL;
  *timeout_secs = hook->timeout_secs;
  gchar *argv[] = { (gchar *) "/bin/sh", (gchar *) "-c", command, NULL };
  return g_strdupv (argv);
}

JsonNode *
stg_fleet_container_spec (Slot *slot, gint64 config_id, gint64 run_id, gchar **name, GError **error)
{
  g_auto (RunParts) parts = { 0 };

  if (!run_parts (slot, config_id, run_id, &parts, error))
    return NULL;
  ApiTaskConfig *config = parts.spec->config;
  const ApiDockerContainer *docker = docker_of (config);
  gchar **names = parts.spec->port_names;
  StgExecutorSpec *spec = parts.spec->exec;
  g_autofree gchar *hash = stg_thrift_hash (THRIFT_STRUCT (config), NULL);
  gboolean thermos = parts.spec->thermos != NULL;

  if (docker == NULL)
    {
      g_set_error (error, STG_RUNTIME_ERROR, STG_RUNTIME_ERROR_INVALID, "the task config names no docker image");
      return NULL;
    }
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  stg_fleet_json_string (b, "Image", docker->image);
  if (thermos)
    add_runner (b, &parts.tv.vars, parts.ports);
  else if (!add_cmd (b, spec, &parts.vars, error))
    return NULL;
  if (!add_env (b, parts.spec, &parts.vars, names, docker, error))
    return NULL;
  add_labels (b, slot, config_id, run_id, hash ? hash : "", docker);
  json_builder_set_member_name (b, "StopTimeout");
  json_builder_add_int_value (b, (gint64) (spec->stop_timeout_secs + 0.999));
  if (parameter (docker, "user") != NULL)
    stg_fleet_json_string (b, "User", parameter (docker, "user"));
  if (parameter (docker, "workdir") != NULL)
    stg_fleet_json_string (b, "WorkingDir", parameter (docker, "workdir"));
  if (parameter (docker, "hostname") != NULL && slot->pod == NULL)
    stg_fleet_json_string (b, "Hostname", parameter (docker, "hostname"));
  add_host_config (b, slot->pod != NULL ? slot : NULL, config, docker, parts.ports, names,
                   thermos ? slot->rt->options.thermos_bundle : NULL, slot->rt->options.max_pids);
  json_builder_end_object (b);
  *name = g_strdup_printf ("stagger-%.12s-%s.%s.%s-%d-%" G_GINT64_FORMAT, slot->rt->marker,
                           slot->base.job->role, slot->base.job->environment, slot->base.job->name,
                           slot->base.key.instance, run_id);
  return json_builder_get_root (b);
}

/* The port HTTP checks go to: an AuroraExecutor task's "health" (after
 * its aliases); else "health", else "http", else the first, as the local
 * runtime does. 0: none. */
static gint
health_port (const RunParts *p)
{
  gchar **names = p->spec->port_names;

  if (p->spec->thermos != NULL)
    return stg_thermos_task_health_port (p->spec->thermos, p->all);
  if (names[0] == NULL)
    return 0;
  const gchar *which = g_strv_contains ((const gchar *const *) names, "health") ? "health"
                       : g_strv_contains ((const gchar *const *) names, "http") ? "http"
                                                                                : names[0];
  return GPOINTER_TO_INT (g_hash_table_lookup (p->ports, which));
}

StgTaskSpec *
stg_fleet_health_parts (Slot *slot, gint64 config_id, gchar **url, gchar **command, GError **error)
{
  g_auto (RunParts) p = { 0 };

  if (!run_parts (slot, config_id, slot->base.run_id, &p, error))
    return NULL;
  const StgHealthSpec *h = &p.spec->exec->health;
  gint port = h->kind == STG_HEALTH_HTTP ? health_port (&p) : 0;
  const StgThermosJob *job = p.spec->thermos;
  g_autofree gchar *endpoint = job != NULL ? stg_thermos_template_expand (h->endpoint, "endpoint",
                                                                          STG_THERMOS_SCOPE_MESOS,
                                                                          &p.tv.vars, NULL)
                                           : g_strdup (h->endpoint);
  *url = port > 0 && endpoint != NULL
             ? g_strdup_printf ("http://%s:%d%s", slot->host->config->address, port, endpoint)
             : NULL;
  if (h->kind == STG_HEALTH_SHELL)
    *command = job != NULL ? stg_thermos_task_health_command (job, &p.tv.vars, NULL)
                           : g_strdup (h->shell_command);
  return g_steal_pointer (&p.spec);
}

/* ---- pods' main containers ------------------------------------------------- */

gboolean
stg_fleet_set_selects (const StgSidecarSetRow *set, const ApiJobKey *job)
{
  return g_pattern_match_simple (set->role, job->role) &&
         g_pattern_match_simple (set->environment, job->environment) &&
         g_pattern_match_simple (set->job, job->name);
}

/* The name of a port both @sidecar and @task_ports name, or NULL. */
const gchar *
stg_fleet_shared_port (const ApiSidecar *sidecar, gchar **task_ports)
{
  for (guint i = 0; sidecar->ports != NULL && i < sidecar->ports->len; i++)
    if (g_strv_contains ((const gchar *const *) task_ports, sidecar->ports->pdata[i]))
      return sidecar->ports->pdata[i];
  return NULL;
}

void
stg_fleet_pod_main_host_config (Slot *slot, JsonBuilder *b)
{
  g_autofree gchar *mode = g_strconcat ("container:", slot->pod->anchor_id, NULL);

  stg_fleet_json_string (b, "NetworkMode", mode);
  json_builder_set_member_name (b, "VolumesFrom");
  json_builder_begin_array (b);
  json_builder_add_string_value (b, slot->pod->anchor_id);
  json_builder_end_array (b);
}
