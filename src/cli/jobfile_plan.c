/* jobfile_plan.c: rollout plan files (stagger-plan(5)) into a RolloutPlan.
 *
 *   {"name": "pravega", "rollback_on_failure": true,
 *    "variables": {"version": "0.10"},
 *    "stages": [{"name": "bookkeeper", "job": "bookkeeper.json",
 *                "depends_on": [], "require_approval": false,
 *                "before": [GATE...], "after": [GATE...],
 *                "between_batches": [GATE...]}, ...]}
 *
 * A stage's job is a job file: a path (relative to the plan file's folder)
 * or the job file itself inline; what startJobUpdate would take for it is
 * the stage's request, its between_batches gates added to the job's own
 * batch_gates. Every job must be of one cluster, the plan's ("cluster",
 * when given). Plan variables ({{name}}, jobfile_vars.c) are filled in,
 * in the plan file and in each job file it names, before either is read.
 * Errors name the file, the JSON path and what was expected. Any thread.
 */
#include "config.h"

#include <string.h>

#include "cli/jobfile_private.h"

static const gchar *const plan_keys[] = { "name",   "cluster",   "rollback_on_failure",
                                          "stages", "variables", NULL };
static const gchar *const stage_keys[] = { "name",   "job",   "depends_on",      "require_approval",
                                           "before", "after", "between_batches", NULL };

void
stg_plan_file_free (StgPlanFile *file)
{
  if (file == NULL)
    return;
  g_free (file->file);
  g_free (file->cluster);
  g_clear_object (&file->plan);
  g_free (file);
}

/* The job file at @path with the plan's variables filled in. */
static StgJobFile *
load_job (const gchar *path, const gchar *owner, GHashTable *vars, GError **error)
{
  g_autofree gchar *text = NULL;

  if (!stg_jf_read_file (path, "a job file", &text, NULL, error))
    return NULL;
  g_autofree gchar *filled = stg_jf_substitute (path, text, vars, error);
  return filled ? stg_job_file_parse (path, filled, -1, owner, error) : NULL;
}

/* The stage's job: a path or an inline job file. */
static StgJobFile *
stage_job (const StgJfCtx *c, JsonObject *o, const gchar *where, const gchar *dir,
           const gchar *owner, GHashTable *vars, GError **error)
{
  g_autofree gchar *at = stg_jf_path (where, "job");
  JsonNode *node = json_object_get_member (o, "job");

  if (node == NULL)
    {
      stg_jf_fail (c, error, STG_JOB_FILE_ERROR_MISSING, at,
                   "missing: give the stage's job file, by path or inline");
      return NULL;
    }
  if (JSON_NODE_HOLDS_OBJECT (node))
    {
      g_autofree gchar *name = g_strdup_printf ("%s: %s", c->file, at);
      StgJfCtx inner = { name };
      return stg_jf_job (&inner, json_node_get_object (node), owner, error);
    }
  if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING &&
      json_node_get_string (node)[0] != '\0')
    {
      const gchar *path = json_node_get_string (node);
      g_autofree gchar *full = g_path_is_absolute (path) ? g_strdup (path)
                                                         : g_build_filename (dir, path, NULL);
      g_autoptr (GError) local = NULL;
      StgJobFile *jf = load_job (full, owner, vars, &local);
      if (jf == NULL)
        {
          stg_jf_fail (c, error, local->code, at, "%s", local->message);
          return NULL;
        }
      return jf;
    }
  g_autofree gchar *got = stg_jf_describe (node);
  stg_jf_fail (c, error, STG_JOB_FILE_ERROR_TYPE, at,
               "expected a job file's path or the job file itself (an object), got %s", got);
  return NULL;
}

/* "depends_on": names of earlier stages. */
static gboolean
depends_on (const StgJfCtx *c, JsonObject *o, const gchar *where, ApiRolloutPlan *plan,
            ApiRolloutStage *stage, GError **error)
{
  JsonArray *list = NULL;
  g_autofree gchar *at = stg_jf_path (where, "depends_on");

  if (!stg_jf_array (c, o, where, "depends_on", FALSE, &list, error))
    return FALSE;
  for (guint i = 0; list != NULL && i < json_array_get_length (list); i++)
    {
      JsonNode *e = json_array_get_element (list, i);
      g_autofree gchar *item = stg_jf_index (at, i);
      if (!JSON_NODE_HOLDS_VALUE (e) || json_node_get_value_type (e) != G_TYPE_STRING)
        {
          g_autofree gchar *got = stg_jf_describe (e);
          return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_TYPE, item,
                              "expected the name of an earlier stage, got %s", got);
        }
      const gchar *name = json_node_get_string (e);
      gboolean known = FALSE;
      for (guint k = 0; k < plan->stages->len && !known; k++)
        known = g_str_equal (((ApiRolloutStage *) plan->stages->pdata[k])->name, name);
      if (!known)
        return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, item,
                            "\"%s\" is not a stage listed before this one", name);
      g_ptr_array_add (stage->dependsOn, g_strdup (name));
    }
  return TRUE;
}

static gboolean
gates_of (const StgJfCtx *c, JsonObject *o, const gchar *where, const gchar *key,
          const gchar *cluster, GPtrArray *out, GError **error)
{
  JsonArray *list = NULL;
  g_autofree gchar *at = stg_jf_path (where, key);

  return stg_jf_array (c, o, where, key, FALSE, &list, error) &&
         stg_jf_gates (c, list, at, cluster, out, error);
}

static ApiRolloutStage *
stage (const StgJfCtx *c, JsonObject *o, const gchar *where, const gchar *dir, const gchar *owner,
       GHashTable *vars, ApiRolloutPlan *plan, gchar **cluster, GError **error)
{
  g_autofree gchar *name = NULL;
  gboolean approval = FALSE;

  if (!stg_jf_check_keys (c, o, where, stage_keys, error) ||
      !stg_jf_string (c, o, where, "name", TRUE, &name, error) ||
      !stg_jf_bool (c, o, where, "require_approval", &approval, NULL, error))
    return NULL;
  for (guint k = 0; k < plan->stages->len; k++)
    if (g_str_equal (((ApiRolloutStage *) plan->stages->pdata[k])->name, name))
      {
        g_autofree gchar *at = stg_jf_path (where, "name");
        stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, at, "two stages are named \"%s\"", name);
        return NULL;
      }
  g_autoptr (StgJobFile) jf = stage_job (c, o, where, dir, owner, vars, error);
  if (jf == NULL)
    return NULL;
  if (*cluster == NULL)
    *cluster = g_strdup (jf->cluster);
  else if (strcmp (*cluster, jf->cluster) != 0)
    {
      g_autofree gchar *at = stg_jf_path (where, "job");
      g_autofree gchar *key = stg_job_file_key_string (jf);
      stg_jf_fail (c, error, STG_JOB_FILE_ERROR_MISMATCH, at,
                   "job %s is of cluster %s, but the plan's is %s: a plan updates jobs of one "
                   "cluster",
                   key, jf->cluster, *cluster);
      return NULL;
    }
  g_autoptr (ApiJobUpdateRequest) request = stg_job_file_update_request (jf, NULL);
  g_autoptr (ApiRolloutStage) s = g_object_new (API_TYPE_ROLLOUT_STAGE, "name", name, "request",
                                                request, "requireApproval", approval, NULL);
  g_autoptr (GPtrArray) between = g_ptr_array_new_with_free_func (g_object_unref);
  ApiJobUpdateSettings *settings = s->request->settings;
  if (settings->__isset_batchGates && settings->batchGates != NULL)
    for (guint i = 0; i < settings->batchGates->len; i++)
      g_ptr_array_add (between, g_object_ref (settings->batchGates->pdata[i]));
  if (!depends_on (c, o, where, plan, s, error) ||
      !gates_of (c, o, where, "before", *cluster, s->before, error) ||
      !gates_of (c, o, where, "after", *cluster, s->after, error) ||
      !gates_of (c, o, where, "between_batches", *cluster, between, error))
    return NULL;
  if (between->len > 0)
    g_object_set (settings, "batchGates", between, NULL);
  return g_steal_pointer (&s);
}

static StgPlanFile *
build (const StgJfCtx *c, JsonObject *top, const gchar *dir, const gchar *owner, GHashTable *vars,
       GError **error)
{
  g_autofree gchar *name = NULL, *cluster = NULL;
  gboolean rollback = TRUE;
  JsonArray *stages = NULL;

  if (!stg_jf_check_keys (c, top, "", plan_keys, error) ||
      !stg_jf_string (c, top, "", "name", TRUE, &name, error) ||
      !stg_jf_string (c, top, "", "cluster", FALSE, &cluster, error) ||
      !stg_jf_bool (c, top, "", "rollback_on_failure", &rollback, NULL, error) ||
      !stg_jf_array (c, top, "", "stages", TRUE, &stages, error))
    return NULL;
  if (json_array_get_length (stages) == 0)
    {
      stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, "stages", "a plan needs at least one stage");
      return NULL;
    }
  g_autoptr (ApiRolloutPlan) plan = g_object_new (API_TYPE_ROLLOUT_PLAN, "name", name,
                                                  "rollbackOnFailure", rollback, NULL);
  if (g_hash_table_size (vars) > 0)
    g_object_set (plan, "variables", vars, NULL);
  for (guint i = 0; i < json_array_get_length (stages); i++)
    {
      JsonNode *e = json_array_get_element (stages, i);
      g_autofree gchar *where = stg_jf_index ("stages", i);
      if (!JSON_NODE_HOLDS_OBJECT (e))
        {
          g_autofree gchar *got = stg_jf_describe (e);
          stg_jf_fail (c, error, STG_JOB_FILE_ERROR_TYPE, where,
                       "expected a stage (an object with a name and a job), got %s", got);
          return NULL;
        }
      ApiRolloutStage *s = stage (c, json_node_get_object (e), where, dir, owner, vars, plan,
                                  &cluster, error);
      if (s == NULL)
        return NULL;
      g_ptr_array_add (plan->stages, s);
    }
  StgPlanFile *file = g_new0 (StgPlanFile, 1);
  file->file = g_strdup (c->file);
  file->cluster = g_steal_pointer (&cluster);
  file->plan = g_steal_pointer (&plan);
  return file;
}

StgPlanFile *
stg_plan_file_load (const gchar *path, const gchar *owner, GHashTable *set, GError **error)
{
  g_autofree gchar *text = NULL;
  gsize len = 0;
  StgJfCtx c = { path };

  if (!stg_jf_read_file (path, "a plan file", &text, &len, error))
    return NULL;
  /* Read once for its variables, then again with them filled in. */
  g_autoptr (JsonNode) raw = stg_jf_parse_object (&c, text, len, error);
  if (raw == NULL)
    return NULL;
  g_autoptr (GHashTable) vars = stg_jf_plan_variables (&c, json_node_get_object (raw), set, error);
  g_autofree gchar *filled = vars ? stg_jf_substitute (path, text, vars, error) : NULL;
  g_autoptr (JsonNode) root = filled ? stg_jf_parse_object (&c, filled, strlen (filled), error)
                                     : NULL;
  if (root == NULL)
    return NULL;
  g_autofree gchar *dir = g_path_get_dirname (path);
  return build (&c, json_node_get_object (root), dir, owner, vars, error);
}
