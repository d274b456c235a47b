/* jobfile_fleet.c: a job file's placement keys for the fleet runtime, named
 * the way Aurora's job configuration names them: "container" (Aurora's
 * Container with a Docker member: image and parameters) and "constraints"
 * ({"host": "limit:1", "zone": "a,b", "rack": "!r1"}, Aurora's forms), into
 * TaskConfig.container and TaskConfig.constraints. Uses the generated code
 * only. Any thread.
 */
#include "config.h"

#include <string.h>

#include "cli/jobfile_private.h"
#include "common/thrift_glue.h"

static const gchar *const container_keys[] = { "docker", "mesos", NULL };
static const gchar *const docker_keys[] = { "image", "parameters", NULL };
static const gchar *const parameter_keys[] = { "name", "value", NULL };

/* "parameters": [{"name": "env", "value": "A=1"}, ...] into @docker. */
static gboolean
docker_parameters (const StgJfCtx *c, JsonObject *docker_obj, ApiDockerContainer *docker, GError **error)
{
  JsonArray *params = NULL;

  if (!stg_jf_array (c, docker_obj, "container.docker", "parameters", FALSE, &params, error))
    return FALSE;
  for (guint i = 0; params != NULL && i < json_array_get_length (params); i++)
    {
      JsonNode *e = json_array_get_element (params, i);
      g_autofree gchar *where = stg_jf_index ("container.docker.parameters", i);
      g_autofree gchar *name = NULL, *value = NULL;
      if (!JSON_NODE_HOLDS_OBJECT (e))
        {
          g_autofree gchar *got = stg_jf_describe (e);
          return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_TYPE, where,
                              "expected an object with name and value, got %s", got);
        }
      JsonObject *o = json_node_get_object (e);
      if (!stg_jf_check_keys (c, o, where, parameter_keys, error) ||
          !stg_jf_string (c, o, where, "name", TRUE, &name, error) ||
          !stg_jf_string (c, o, where, "value", TRUE, &value, error))
        return FALSE;
      g_ptr_array_add (docker->parameters,
                       g_object_new (API_TYPE_DOCKER_PARAMETER, "name", name, "value", value, NULL));
      docker->__isset_parameters = TRUE;
    }
  return TRUE;
}

/* "container": {"docker": {"image": ..., "parameters": [...]}}. */
static gboolean
container (const StgJfCtx *c, JsonObject *top, ApiTaskConfig *task, GError **error)
{
  JsonObject *obj = NULL, *docker_obj = NULL;
  g_autofree gchar *image = NULL;

  if (!stg_jf_object (c, top, "", "container", FALSE, &obj, error))
    return FALSE;
  if (obj == NULL)
    return TRUE;
  if (!stg_jf_check_keys (c, obj, "container", container_keys, error))
    return FALSE;
  if (json_object_has_member (obj, "mesos"))
    return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, "container.mesos",
                        "Mesos containers are not supported: use \"docker\" with an image");
  if (!stg_jf_object (c, obj, "container", "docker", TRUE, &docker_obj, error) ||
      !stg_jf_check_keys (c, docker_obj, "container.docker", docker_keys, error) ||
      !stg_jf_string (c, docker_obj, "container.docker", "image", TRUE, &image, error))
    return FALSE;
  g_autoptr (ApiDockerContainer) docker = g_object_new (API_TYPE_DOCKER_CONTAINER, "image", image, NULL);
  if (!docker_parameters (c, docker_obj, docker, error))
    return FALSE;
  g_autoptr (ApiContainer) box = g_object_new (API_TYPE_CONTAINER, "docker", docker, NULL);
  g_object_set (task, "container", box, NULL);
  return TRUE;
}

/* One constraint in Aurora's string form: "limit:N", "a,b" or "!a,b". */
static ApiConstraint *
constraint (const StgJfCtx *c, const gchar *name, const gchar *text, GError **error)
{
  g_autofree gchar *where = stg_jf_path ("constraints", name);
  g_autoptr (ApiTaskConstraint) tc = NULL;

  if (g_str_has_prefix (text, "limit:"))
    {
      gint64 limit = 0;
      if (!g_ascii_string_to_signed (text + strlen ("limit:"), 10, 1, G_MAXINT32, &limit, NULL))
        {
          stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, where,
                       "\"%s\": a limit is \"limit:N\" with N a whole number from 1", text);
          return NULL;
        }
      g_autoptr (ApiLimitConstraint) lc = g_object_new (API_TYPE_LIMIT_CONSTRAINT, "limit", (gint32) limit, NULL);
      tc = g_object_new (API_TYPE_TASK_CONSTRAINT, "limit", lc, NULL);
    }
  else
    {
      gboolean negated = text[0] == '!';
      g_auto (GStrv) values = g_strsplit (text + (negated ? 1 : 0), ",", -1);
      g_autoptr (ApiValueConstraint) vc = g_object_new (API_TYPE_VALUE_CONSTRAINT, "negated", negated, NULL);
      for (guint i = 0; values[i] != NULL; i++)
        {
          if (values[i][0] == '\0')
            {
              stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, where,
                           "\"%s\": expected \"limit:N\", or values separated by commas "
                           "(\"!\" first to avoid them), with no empty value", text);
              return NULL;
            }
          g_hash_table_add (vc->values, g_strdup (values[i]));
        }
      vc->__isset_values = TRUE;
      tc = g_object_new (API_TYPE_TASK_CONSTRAINT, "value", vc, NULL);
    }
  return g_object_new (API_TYPE_CONSTRAINT, "name", name, "constraint", tc, NULL);
}

/* "constraints": {"host": "limit:1", "zone": "a,b", ...}. */
static gboolean
constraints (const StgJfCtx *c, JsonObject *top, ApiTaskConfig *task, GError **error)
{
  JsonObject *obj = NULL;

  if (!stg_jf_object (c, top, "", "constraints", FALSE, &obj, error))
    return FALSE;
  if (obj == NULL)
    return TRUE;
  g_autoptr (GList) names = json_object_get_members (obj);
  for (GList *l = names; l != NULL; l = l->next)
    {
      JsonNode *v = json_object_get_member (obj, l->data);
      g_autofree gchar *where = stg_jf_path ("constraints", l->data);
      if (!JSON_NODE_HOLDS_VALUE (v) || json_node_get_value_type (v) != G_TYPE_STRING)
        {
          g_autofree gchar *got = stg_jf_describe (v);
          return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_TYPE, where,
                              "expected a string (\"limit:N\" or \"a,b\"), got %s", got);
        }
      ApiConstraint *one = constraint (c, l->data, json_node_get_string (v), error);
      if (one == NULL)
        return FALSE;
      g_hash_table_add (task->constraints, one);
      task->__isset_constraints = TRUE;
    }
  return TRUE;
}

gboolean
stg_jf_placement (const StgJfCtx *c, JsonObject *top, ApiTaskConfig *task, GError **error)
{
  return container (c, top, task, error) && constraints (c, top, task, error);
}
