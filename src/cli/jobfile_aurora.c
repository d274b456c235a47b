/* jobfile_aurora.c: a job file's "aurora_task": Aurora's job as the aurora
 * client sends it (the data of executor AuroraExecutor, which
 * stagger-thermos runs; stagger-job(5), AURORA TASKS), inline or in a file
 * named relative to the job file. It is checked with libstg_thermos and
 * becomes the TaskConfig's fields as the client's config/thrift.py
 * convert() makes them: isService, maxTaskFailures, priority, production,
 * tier, contactEmail, metadata, resources (CPUs, RAM and disk in MiB, the
 * named ports the task asks for) and executorConfig. Pure; any thread.
 */
#include "config.h"

#include "cli/jobfile_private.h"
#include "common/json_check.h"
#include "thermos/task.h"

#define MIB (1024 * 1024)

/* What an aurora_task says itself, which the job file may then not. */
static const gchar *const said_by_aurora[] = { "task",
                                               "health_check_config",
                                               "resources",
                                               "service",
                                               "max_task_failures",
                                               "priority",
                                               "tier",
                                               "contact",
                                               "metadata",
                                               NULL };

/* The aurora_task's text: the file it names (relative to the job file),
 * or the inline object written out. */
static gchar *
aurora_text (const StgJfCtx *c, JsonNode *node, GError **error)
{
  g_autoptr (GError) local = NULL;
  gchar *text = NULL;
  gsize len = 0;

  if (JSON_NODE_HOLDS_OBJECT (node))
    return json_to_string (node, FALSE);
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    {
      g_autofree gchar *got = stg_jf_describe (node);
      stg_jf_fail (c, error, STG_JOB_FILE_ERROR_TYPE, "aurora_task",
                   "expected Aurora's job (an object) or the file that holds it, got %s", got);
      return NULL;
    }
  g_autofree gchar *dir = g_path_get_dirname (c->file);
  const gchar *name = json_node_get_string (node);
  g_autofree gchar *path = g_path_is_absolute (name) ? g_strdup (name)
                                                     : g_build_filename (dir, name, NULL);
  if (!g_file_get_contents (path, &text, &len, &local))
    stg_jf_fail (c, error, STG_JOB_FILE_ERROR_READ, "aurora_task", "%s", local->message);
  else if (len > STG_JOB_FILE_MAX_SIZE)
    stg_jf_fail (c, error, STG_JOB_FILE_ERROR_READ, "aurora_task", "%s: larger than %d bytes", path,
                 STG_JOB_FILE_MAX_SIZE);
  else
    return text;
  g_free (text);
  return NULL;
}

/* The job's key and cluster in the aurora_task are the job file's. */
static gboolean
same_job (const StgJfCtx *c, const StgThermosJob *job, const ApiJobKey *key, const gchar *cluster,
          GError **error)
{
  const gchar *mine[] = { key->role, key->environment, key->name, cluster };
  const gchar *theirs[] = { job->role, job->environment, job->name, job->cluster };
  const gchar *names[] = { "role", "environment", "name", "cluster" };

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    if (!g_str_equal (mine[i], theirs[i]))
      {
        g_autofree gchar *where = stg_jf_path ("aurora_task", names[i]);
        return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_MISMATCH, where,
                            "'%s', but the job file's %s is '%s'", theirs[i], names[i], mine[i]);
      }
  return TRUE;
}

/* The fields only the scheduler reads (libstg_thermos checked their
 * types): priority, production, tier, contact, metadata. */
static void
scheduler_fields (JsonObject *o, ApiTaskConfig *task)
{
  JsonArray *metadata = json_object_has_member (o, "metadata")
                            ? json_object_get_array_member (o, "metadata")
                            : NULL;

  g_object_set (task, "maxTaskFailures",
                (gint32) json_object_get_int_member_with_default (o, "max_task_failures", 1),
                "priority", (gint32) json_object_get_int_member_with_default (o, "priority", 0),
                "production", json_object_get_boolean_member_with_default (o, "production", FALSE),
                NULL);
  if (json_object_has_member (o, "tier"))
    g_object_set (task, "tier", json_object_get_string_member (o, "tier"), NULL);
  if (json_object_has_member (o, "contact"))
    g_object_set (task, "contactEmail", json_object_get_string_member (o, "contact"), NULL);
  for (guint i = 0; metadata != NULL && i < json_array_get_length (metadata); i++)
    {
      JsonObject *m = json_array_get_object_element (metadata, i);
      g_hash_table_add (task->metadata,
                        g_object_new (API_TYPE_METADATA, "key",
                                      json_object_get_string_member (m, "key"), "value",
                                      json_object_get_string_member (m, "value"), NULL));
    }
  task->__isset_metadata = TRUE;
}

/* CPUs, RAM and disk (in MiB, as the client divides) and the named ports
 * the task asks for; the client's refusals of empty resources too. */
static gboolean
task_resources (const StgJfCtx *c, const StgThermosJob *job, ApiTaskConfig *task, GError **error)
{
  const StgThermosTask *t = &job->task;

  if (t->cpu <= 0 || t->ram / MIB <= 0 || t->disk / MIB <= 0)
    return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, "aurora_task.task.resources",
                        "cpu, ram and disk must be positive (ram and disk at least 1 MiB), as "
                        "Aurora's client requires");
  if (t->gpu > 0)
    return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, "aurora_task.task.resources.gpu",
                        "GPUs are not supported");
  g_hash_table_add (task->resources, g_object_new (API_TYPE_RESOURCE, "numCpus", t->cpu, NULL));
  g_hash_table_add (task->resources, g_object_new (API_TYPE_RESOURCE, "ramMb", t->ram / MIB, NULL));
  g_hash_table_add (task->resources,
                    g_object_new (API_TYPE_RESOURCE, "diskMb", t->disk / MIB, NULL));
  for (guint i = 0; job->ports[i] != NULL; i++)
    g_hash_table_add (task->resources,
                      g_object_new (API_TYPE_RESOURCE, "namedPort", job->ports[i], NULL));
  task->__isset_resources = TRUE;
  return TRUE;
}

gboolean
stg_jf_aurora_task (const StgJfCtx *c, JsonObject *top, const ApiJobKey *key, const gchar *cluster,
                    ApiTaskConfig *task, GError **error)
{
  g_autoptr (GError) local = NULL;

  for (guint i = 0; said_by_aurora[i] != NULL; i++)
    if (json_object_has_member (top, said_by_aurora[i]))
      return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, said_by_aurora[i],
                          "a job with an aurora_task takes this from it (Aurora's job)");
  g_autofree gchar *text = aurora_text (c, json_object_get_member (top, "aurora_task"), error);
  if (text == NULL)
    return FALSE;
  g_autoptr (StgThermosJob) job = stg_thermos_job_parse (text, -1, &local);
  if (job == NULL)
    return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, "aurora_task", "%s", local->message);
  if (!same_job (c, job, key, cluster, error) || !task_resources (c, job, task, error))
    return FALSE;
  g_autoptr (JsonParser) parser = json_parser_new ();
  if (!stg_json_load (parser, text, -1, error))
    return FALSE;
  scheduler_fields (json_node_get_object (json_parser_get_root (parser)), task);
  g_autoptr (ApiExecutorConfig) exec = g_object_new (API_TYPE_EXECUTOR_CONFIG, "name",
                                                     STG_THERMOS_EXECUTOR_NAME, "data", text, NULL);
  g_object_set (task, "isService", job->service, "executorConfig", exec, NULL);
  return TRUE;
}
