/* jobfile.c: StgJobFile: reading a job file, its top level, resources,
 * metadata and update_config, and building the JobConfiguration,
 * TaskConfig and JobUpdateSettings the API takes. The task and health
 * check sections are in jobfile_task.c. Pure; any thread.
 */
#include "config.h"

#include <string.h>

#include "cli/jobfile_private.h"
#include "common/json_check.h"

#define MAX_INSTANCES 100000
#define MAX_COUNT 1000000
/* Seconds that still fit an i32 of milliseconds. */
#define MAX_MS_SECS (G_MAXINT32 / 1000)
/* Digits an integer in a job file may have: json-glib wraps larger ones
 * silently, so they are refused before parsing. */
#define MAX_DIGITS 15

void
stg_job_file_free (StgJobFile *file)
{
  if (file == NULL)
    return;
  g_free (file->file);
  g_free (file->cluster);
  g_clear_object (&file->job);
  g_clear_object (&file->settings);
  g_free (file);
}

/* ---- reading -------------------------------------------------------------- */

/* Refuses numbers whose integer part has more digits than json-glib reads
 * exactly. Fractions and exponents are left to the range checks. */
static gboolean
check_numbers (const StgJfCtx *c, const gchar *text, gsize len, GError **error)
{
  gboolean in_string = FALSE;
  guint line = 1;

  for (gsize i = 0; i < len; i++)
    {
      gchar ch = text[i];
      if (ch == '\n')
        line++;
      if (in_string)
        {
          if (ch == '\\' && i + 1 < len)
            i++;
          else if (ch == '"')
            in_string = FALSE;
          continue;
        }
      if (ch == '"')
        {
          in_string = TRUE;
          continue;
        }
      if (!g_ascii_isdigit (ch))
        continue;
      gsize j = i;
      while (j < len && g_ascii_isdigit (text[j]))
        j++;
      gchar before = i > 0 ? text[i - 1] : ' ';
      gboolean integer_part = !(before == '.' || before == 'e' || before == 'E' || before == '+' ||
                                (before == '-' && i > 1 && (text[i - 2] == 'e' || text[i - 2] == 'E')));
      if (integer_part && j - i > MAX_DIGITS)
        {
          g_set_error (error, STG_JOB_FILE_ERROR, STG_JOB_FILE_ERROR_SYNTAX,
                       "%s:%u: a number with more than %d digits", c->file, line, MAX_DIGITS);
          return FALSE;
        }
      i = j - 1;
    }
  return TRUE;
}

typedef struct
{
  GHashTable *seen;          /* JsonObject* -> GHashTable of names */
  JsonObject *dup_object;    /* the first duplicate found */
  gchar *dup_name;
} Dups;

static void
on_member (JsonParser *parser, JsonObject *object, const gchar *name, gpointer user_data)
{
  Dups *d = user_data;
  GHashTable *names = g_hash_table_lookup (d->seen, object);
  (void) parser;

  if (names == NULL)
    {
      names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      g_hash_table_insert (d->seen, object, names);
    }
  if (!g_hash_table_add (names, g_strdup (name)) && d->dup_object == NULL)
    {
      d->dup_object = object;
      d->dup_name = g_strdup (name);
    }
}

/* The JSON path of @target inside @node, or NULL. */
static gchar *
find_object (JsonNode *node, JsonObject *target, const gchar *path)
{
  if (JSON_NODE_HOLDS_OBJECT (node))
    {
      JsonObject *o = json_node_get_object (node);
      if (o == target)
        return g_strdup (path);
      g_autoptr (GList) members = json_object_get_members (o);
      for (GList *l = members; l != NULL; l = l->next)
        {
          g_autofree gchar *child = stg_jf_path (path, l->data);
          gchar *found = find_object (json_object_get_member (o, l->data), target, child);
          if (found != NULL)
            return found;
        }
    }
  else if (JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *a = json_node_get_array (node);
      for (guint i = 0; i < json_array_get_length (a); i++)
        {
          g_autofree gchar *child = stg_jf_index (path, i);
          gchar *found = find_object (json_array_get_element (a, i), target, child);
          if (found != NULL)
            return found;
        }
    }
  return NULL;
}

/* Parses @text as JSON, refusing duplicate keys; returns the root. */
static JsonNode *
parse_json (const StgJfCtx *c, const gchar *text, gsize len, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) local = NULL;
  Dups d = { g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) g_hash_table_unref), NULL, NULL };

  if (!g_utf8_validate (text, (gssize) len, NULL))
    {
      g_hash_table_unref (d.seen);
      g_set_error (error, STG_JOB_FILE_ERROR, STG_JOB_FILE_ERROR_SYNTAX, "%s: not UTF-8 text", c->file);
      return NULL;
    }
  if (!stg_json_check_depth (text, (gssize) len, STG_JSON_NESTING_MAX, &local))
    {
      g_hash_table_unref (d.seen);
      g_set_error (error, STG_JOB_FILE_ERROR, STG_JOB_FILE_ERROR_SYNTAX, "%s: %s", c->file,
                   local->message);
      return NULL;
    }
  g_signal_connect (parser, "object-member", G_CALLBACK (on_member), &d);
  gboolean ok = json_parser_load_from_data (parser, text, (gssize) len, &local);
  g_hash_table_unref (d.seen);
  g_autofree gchar *dup_name = d.dup_name;
  if (!ok)
    {
      /* json-glib says "<data>:LINE:COL: Parse error: ..." */
      if (g_str_has_prefix (local->message, "<data>:"))
        g_set_error (error, STG_JOB_FILE_ERROR, STG_JOB_FILE_ERROR_SYNTAX, "%s%s", c->file,
                     local->message + strlen ("<data>"));
      else
        g_set_error (error, STG_JOB_FILE_ERROR, STG_JOB_FILE_ERROR_SYNTAX, "%s: %s", c->file,
                     local->message);
      return NULL;
    }
  JsonNode *root = json_parser_get_root (parser);
  if (root == NULL)
    {
      g_set_error (error, STG_JOB_FILE_ERROR, STG_JOB_FILE_ERROR_SYNTAX, "%s: the file is empty", c->file);
      return NULL;
    }
  if (dup_name != NULL)
    {
      g_autofree gchar *where = find_object (root, d.dup_object, "");
      g_autofree gchar *path = stg_jf_path (where, dup_name);
      stg_jf_fail (c, error, STG_JOB_FILE_ERROR_DUPLICATE_KEY, path, "key given twice");
      return NULL;
    }
  return json_node_copy (root);
}

/* ---- the top level ----------------------------------------------------------- */

static gboolean
key_part (const StgJfCtx *c, JsonObject *top, const gchar *key, gchar **out, GError **error)
{
  if (!stg_jf_string (c, top, "", key, TRUE, out, error))
    return FALSE;
  if (!stg_job_key_part_valid (*out))
    return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, key,
                        "\"%s\" may hold only letters, digits, '.', '_' and '-' (at most %d)",
                        *out, STG_JOB_KEY_PART_MAX);
  return TRUE;
}

static gboolean
metadata (const StgJfCtx *c, JsonObject *top, ApiTaskConfig *task, GError **error)
{
  JsonNode *node = json_object_get_member (top, "metadata");

  if (node == NULL)
    return TRUE;
  if (JSON_NODE_HOLDS_OBJECT (node))
    {
      /* {"team": "web"}: one pair per member. */
      JsonObject *o = json_node_get_object (node);
      g_autoptr (GList) names = json_object_get_members (o);
      for (GList *l = names; l != NULL; l = l->next)
        {
          JsonNode *v = json_object_get_member (o, l->data);
          g_autofree gchar *where = stg_jf_path ("metadata", l->data);
          if (!JSON_NODE_HOLDS_VALUE (v) || json_node_get_value_type (v) != G_TYPE_STRING)
            {
              g_autofree gchar *got = stg_jf_describe (v);
              return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_TYPE, where, "expected a string, got %s", got);
            }
          g_hash_table_add (task->metadata, g_object_new (API_TYPE_METADATA, "key", l->data,
                                                          "value", json_node_get_string (v), NULL));
        }
    }
  else if (JSON_NODE_HOLDS_ARRAY (node))
    {
      /* Aurora's form: [{"key": "team", "value": "web"}, ...]. */
      JsonArray *a = json_node_get_array (node);
      for (guint i = 0; i < json_array_get_length (a); i++)
        {
          JsonNode *e = json_array_get_element (a, i);
          g_autofree gchar *where = stg_jf_index ("metadata", i);
          g_autofree gchar *k = NULL, *v = NULL;
          if (!JSON_NODE_HOLDS_OBJECT (e))
            {
              g_autofree gchar *got = stg_jf_describe (e);
              return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_TYPE, where,
                                  "expected an object with key and value, got %s", got);
            }
          JsonObject *o = json_node_get_object (e);
          if (!stg_jf_check_keys (c, o, where, stg_jf_metadata_keys, error) ||
              !stg_jf_string (c, o, where, "key", TRUE, &k, error) ||
              !stg_jf_string (c, o, where, "value", TRUE, &v, error))
            return FALSE;
          g_hash_table_add (task->metadata, g_object_new (API_TYPE_METADATA, "key", k, "value", v, NULL));
        }
    }
  else
    {
      g_autofree gchar *got = stg_jf_describe (node);
      return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_TYPE, "metadata",
                          "expected an object of strings or an array of {key, value}, got %s", got);
    }
  task->__isset_metadata = g_hash_table_size (task->metadata) > 0;
  return TRUE;
}

static gboolean
port_name_valid (const gchar *name)
{
  if (name[0] == '\0' || strlen (name) > 64)
    return FALSE;
  for (const gchar *p = name; *p != '\0'; p++)
    if (!(g_ascii_isalnum (*p) || *p == '_' || *p == '-'))
      return FALSE;
  return TRUE;
}

static void
add_resource (ApiTaskConfig *task, const gchar *member, ...)
{
  va_list ap;

  va_start (ap, member);
  ApiResource *r = API_RESOURCE (g_object_new_valist (API_TYPE_RESOURCE, member, ap));
  va_end (ap);
  g_hash_table_add (task->resources, r);
  task->__isset_resources = TRUE;
}

GStrv
stg_jf_port_names (const StgJfCtx *c, JsonArray *list, const gchar *where, GError **error)
{
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; list != NULL && i < json_array_get_length (list); i++)
    {
      JsonNode *e = json_array_get_element (list, i);
      g_autofree gchar *at = stg_jf_index (where, i);
      if (!JSON_NODE_HOLDS_VALUE (e) || json_node_get_value_type (e) != G_TYPE_STRING)
        {
          g_autofree gchar *got = stg_jf_describe (e);
          stg_jf_fail (c, error, STG_JOB_FILE_ERROR_TYPE, at, "expected a port name, got %s", got);
          return NULL;
        }
      const gchar *name = json_node_get_string (e);
      if (!port_name_valid (name))
        {
          stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, at,
                       "\"%s\" is not a port name (letters, digits, '_' and '-', at most 64)",
                       name);
          return NULL;
        }
      for (guint j = 0; j < names->len; j++)
        if (strcmp (names->pdata[j], name) == 0)
          {
            stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, at, "port \"%s\" is named twice",
                         name);
            return NULL;
          }
      g_ptr_array_add (names, g_strdup (name));
    }
  g_ptr_array_add (names, NULL);
  return (GStrv) g_ptr_array_free (g_steal_pointer (&names), FALSE);
}

/* Reads "resources" into @task; *@ports gets the declared port names. */
static gboolean
resources (const StgJfCtx *c, JsonObject *top, ApiTaskConfig *task, GStrv *ports, GError **error)
{
  JsonObject *res = NULL;
  JsonArray *port_list = NULL;
  gdouble cpu = 0;
  gint64 ram = 0, disk = 0;
  gboolean has_cpu = FALSE, has_ram = FALSE, has_disk = FALSE;

  if (!stg_jf_object (c, top, "", "resources", FALSE, &res, error))
    return FALSE;
  if (res != NULL &&
      (!stg_jf_check_keys (c, res, "resources", stg_jf_resources_keys, error) ||
       !stg_jf_number (c, res, "resources", "cpu", 0, FALSE, 1e6, &cpu, &has_cpu, error) ||
       !stg_jf_int (c, res, "resources", "ram_mb", 0, G_MAXINT32, &ram, &has_ram, error) ||
       !stg_jf_int (c, res, "resources", "disk_mb", 0, G_MAXINT32, &disk, &has_disk, error) ||
       !stg_jf_array (c, res, "resources", "ports", FALSE, &port_list, error)))
    return FALSE;
  if (has_cpu)
    add_resource (task, "numCpus", cpu, NULL);
  if (has_ram)
    add_resource (task, "ramMb", ram, NULL);
  if (has_disk)
    add_resource (task, "diskMb", disk, NULL);
  *ports = stg_jf_port_names (c, port_list, "resources.ports", error);
  for (guint i = 0; *ports != NULL && (*ports)[i] != NULL; i++)
    add_resource (task, "namedPort", (*ports)[i], NULL);
  return *ports != NULL;
}

/* ---- update_config ---------------------------------------------------------------- */

static gboolean
strategy (const StgJfCtx *c, JsonObject *uc, gint32 *group, gboolean *wait,
          ApiJobUpdateStrategy *out, GError **error)
{
  static const gchar *path = "update_config.update_strategy";
  JsonObject *s = NULL, *q = NULL, *b = NULL, *v = NULL;
  gint64 size = 1;
  gboolean autopause = FALSE;

  if (!stg_jf_object (c, uc, "update_config", "update_strategy", FALSE, &s, error))
    return FALSE;
  if (s == NULL)
    {
      /* Aurora's older form: batch_size, and wait_for_batch_completion
       * choosing a batch over a queue. */
      if (*wait)
        {
          g_autoptr (ApiBatchJobUpdateStrategy) bs = g_object_new (API_TYPE_BATCH_JOB_UPDATE_STRATEGY,
              "groupSize", *group, "autopauseAfterBatch", FALSE, NULL);
          g_object_set (out, "batchStrategy", bs, NULL);
        }
      else
        {
          g_autoptr (ApiQueueJobUpdateStrategy) qs = g_object_new (API_TYPE_QUEUE_JOB_UPDATE_STRATEGY,
              "groupSize", *group, NULL);
          g_object_set (out, "queueStrategy", qs, NULL);
        }
      return TRUE;
    }

  if (*wait)
    return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, "update_config.wait_for_batch_completion",
                        "cannot be combined with update_strategy; use {\"batch\": {...}} instead");
  if (*group > 1)
    return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, "update_config.batch_size",
                        "cannot be combined with update_strategy; set the batch size inside it");
  if (!stg_jf_check_keys (c, s, path, stg_jf_strategy_keys, error) ||
      !stg_jf_object (c, s, path, "queue", FALSE, &q, error) ||
      !stg_jf_object (c, s, path, "batch", FALSE, &b, error) ||
      !stg_jf_object (c, s, path, "variable_batch", FALSE, &v, error))
    return FALSE;
  if ((q != NULL) + (b != NULL) + (v != NULL) != 1)
    return stg_jf_fail (c, error, q || b || v ? STG_JOB_FILE_ERROR_VALUE : STG_JOB_FILE_ERROR_MISSING,
                        path, "expected exactly one of queue, batch, variable_batch");

  if (q != NULL)
    {
      if (!stg_jf_check_keys (c, q, "update_config.update_strategy.queue", stg_jf_queue_keys, error) ||
          !stg_jf_int (c, q, "update_config.update_strategy.queue", "batch_size", 1, MAX_INSTANCES,
                       &size, NULL, error))
        return FALSE;
      g_autoptr (ApiQueueJobUpdateStrategy) qs = g_object_new (API_TYPE_QUEUE_JOB_UPDATE_STRATEGY,
          "groupSize", (gint32) size, NULL);
      g_object_set (out, "queueStrategy", qs, NULL);
      *group = (gint32) size;
      *wait = FALSE;
      return TRUE;
    }
  if (b != NULL)
    {
      static const gchar *bpath = "update_config.update_strategy.batch";
      if (!stg_jf_check_keys (c, b, bpath, stg_jf_batch_keys, error) ||
          !stg_jf_int (c, b, bpath, "batch_size", 1, MAX_INSTANCES, &size, NULL, error) ||
          !stg_jf_bool (c, b, bpath, "autopause_after_batch", &autopause, NULL, error))
        return FALSE;
      g_autoptr (ApiBatchJobUpdateStrategy) bs = g_object_new (API_TYPE_BATCH_JOB_UPDATE_STRATEGY,
          "groupSize", (gint32) size, "autopauseAfterBatch", autopause, NULL);
      g_object_set (out, "batchStrategy", bs, NULL);
      *group = (gint32) size;
      *wait = TRUE;
      return TRUE;
    }

  static const gchar *vpath = "update_config.update_strategy.variable_batch";
  JsonArray *sizes = NULL;
  if (!stg_jf_check_keys (c, v, vpath, stg_jf_variable_batch_keys, error) ||
      !stg_jf_array (c, v, vpath, "batch_sizes", TRUE, &sizes, error) ||
      !stg_jf_bool (c, v, vpath, "autopause_after_batch", &autopause, NULL, error))
    return FALSE;
  g_autofree gchar *spath = stg_jf_path (vpath, "batch_sizes");
  if (json_array_get_length (sizes) == 0)
    return stg_jf_fail (c, error, STG_JOB_FILE_ERROR_VALUE, spath, "expected at least one batch size");
  g_autoptr (ApiVariableBatchJobUpdateStrategy) vs =
    g_object_new (API_TYPE_VARIABLE_BATCH_JOB_UPDATE_STRATEGY, "autopauseAfterBatch", autopause, NULL);
  for (guint i = 0; i < json_array_get_length (sizes); i++)
    {
      g_autofree gchar *where = stg_jf_index (spath, i);
      gint64 n = 0;
      if (!stg_jf_int_value (c, json_array_get_element (sizes, i), where, 1, MAX_INSTANCES, &n, error))
        return FALSE;
      gint32 n32 = (gint32) n;
      g_array_append_val (vs->groupSizes, n32);
    }
  vs->__isset_groupSizes = TRUE;
  g_object_set (out, "varBatchStrategy", vs, NULL);
  *group = g_array_index (vs->groupSizes, gint32, 0);
  *wait = TRUE;
  return TRUE;
}

static ApiJobUpdateSettings *
update_settings (const StgJfCtx *c, JsonObject *top, const gchar *cluster, GError **error)
{
  JsonObject *uc = NULL;
  JsonArray *gates = NULL;
  gint64 batch = 1, watch = 45, per_shard = 0, total = 0, pulse = 0, min_in = 0, pause = 0, start = 0;
  gboolean rollback = TRUE, wait = FALSE, has_pulse = FALSE, has_growth = FALSE, has_min = FALSE;
  gboolean has_pause = FALSE, has_start = FALSE, has_deadline = FALSE, sla_aware = FALSE;
  gboolean has_sla = FALSE;
  gint64 surge = 0, max_batch = 0, deadline = 0;
  gdouble growth = 1.0, surge_pct = -1.0, total_pct = -1.0, per_shard_pct = -1.0;
  static const gchar *p = "update_config";

  if (!stg_jf_object (c, top, "", "update_config", FALSE, &uc, error))
    return NULL;
  g_autoptr (JsonObject) empty = json_object_new ();
  if (uc == NULL)
    uc = empty;
  if (!stg_jf_check_keys (c, uc, p, stg_jf_update_keys, error) ||
      !stg_jf_int (c, uc, p, "batch_size", 1, MAX_INSTANCES, &batch, NULL, error) ||
      !stg_jf_int (c, uc, p, "watch_secs", 0, MAX_MS_SECS, &watch, NULL, error) ||
      !stg_jf_count_or_percent (c, uc, p, "max_per_shard_failures", 0, MAX_COUNT, &per_shard,
                                &per_shard_pct, error) ||
      !stg_jf_count_or_percent (c, uc, p, "max_total_failures", 0, MAX_COUNT, &total, &total_pct,
                                error) ||
      !stg_jf_count_or_percent (c, uc, p, "max_surge", 0, MAX_INSTANCES, &surge, &surge_pct,
                                error) ||
      !stg_jf_int (c, uc, p, "max_batch_size", 1, MAX_INSTANCES, &max_batch, NULL, error) ||
      !stg_jf_int (c, uc, p, "update_deadline_secs", 1, MAX_MS_SECS, &deadline, &has_deadline,
                   error) ||
      !stg_jf_bool (c, uc, p, "rollback_on_failure", &rollback, NULL, error) ||
      !stg_jf_bool (c, uc, p, "wait_for_batch_completion", &wait, NULL, error) ||
      !stg_jf_int (c, uc, p, "pulse_interval_secs", 1, MAX_MS_SECS, &pulse, &has_pulse, error) ||
      !stg_jf_number (c, uc, p, "growth_factor", 1.0, TRUE, 1000.0, &growth, &has_growth, error) ||
      !stg_jf_int (c, uc, p, "min_in_service", 0, MAX_INSTANCES, &min_in, &has_min, error) ||
      !stg_jf_int (c, uc, p, "pause_between_batches_secs", 0, MAX_MS_SECS, &pause, &has_pause,
                   error) ||
      !stg_jf_int (c, uc, p, "max_instance_start_secs", 0, MAX_MS_SECS, &start, &has_start,
                   error) ||
      !stg_jf_bool (c, uc, p, "sla_aware", &sla_aware, &has_sla, error) ||
      !stg_jf_array (c, uc, p, "batch_gates", FALSE, &gates, error))
    return NULL;

  gint32 group = (gint32) batch;
  g_autoptr (ApiJobUpdateStrategy) strat = g_object_new (API_TYPE_JOB_UPDATE_STRATEGY, NULL);
  if (!strategy (c, uc, &group, &wait, strat, error))
    return NULL;

  ApiJobUpdateSettings *s = g_object_new (API_TYPE_JOB_UPDATE_SETTINGS,
      "updateGroupSize", group,
      "maxPerInstanceFailures", (gint32) per_shard,
      "maxFailedInstances", (gint32) total,
      "minWaitInInstanceRunningMs", (gint32) (watch * 1000),
      "rollbackOnFailure", rollback,
      "waitForBatchCompletion", wait,
      "updateStrategy", strat,
      NULL);
  if (has_pulse)
    g_object_set (s, "blockIfNoPulsesAfterMs", (gint32) (pulse * 1000), NULL);
  if (has_growth)
    g_object_set (s, "growthFactor", growth, NULL);
  if (has_min)
    g_object_set (s, "minInService", (gint32) min_in, NULL);
  if (has_pause)
    g_object_set (s, "pauseBetweenBatchesMs", (gint64) (pause * 1000), NULL);
  if (has_start)
    g_object_set (s, "maxInstanceStartMs", (gint64) (start * 1000), NULL);
  if (surge > 0)
    g_object_set (s, "maxSurge", (gint32) surge, NULL);
  if (surge_pct >= 0.0)
    g_object_set (s, "maxSurgePercent", surge_pct, NULL);
  if (total_pct >= 0.0)
    g_object_set (s, "maxFailedInstancesPercent", total_pct, NULL);
  if (per_shard_pct >= 0.0)
    g_object_set (s, "maxPerInstanceFailuresPercent", per_shard_pct, NULL);
  if (max_batch > 0)
    g_object_set (s, "maxBatchSize", (gint32) max_batch, NULL);
  if (has_deadline)
    g_object_set (s, "updateDeadlineMs", (gint64) (deadline * 1000), NULL);
  if (has_sla)
    g_object_set (s, "slaAware", sla_aware, NULL);
  if (gates != NULL)
    {
      g_autoptr (GPtrArray) list = g_ptr_array_new_with_free_func (g_object_unref);
      if (!stg_jf_gates (c, gates, "update_config.batch_gates", cluster, list, error))
        {
          g_object_unref (s);
          return NULL;
        }
      g_object_set (s, "batchGates", list, NULL);
    }
  if (!stg_jf_instance_gates (c, uc, cluster, s, error))
    {
      g_object_unref (s);
      return NULL;
    }
  return s;
}

/* ---- the whole file ------------------------------------------------------------ */

/* The "stagger" executor's task: metadata, resources, the task and its
 * health check into @task. */
static gboolean
stagger_task (const StgJfCtx *c, JsonObject *top, JsonObject *task_obj, JsonObject *health,
              ApiTaskConfig *task, GError **error)
{
  g_auto (GStrv) ports = NULL;

  if (!metadata (c, top, task, error) || !resources (c, top, task, &ports, error))
    return FALSE;
  g_autofree gchar *data = stg_jf_executor_data (c, task_obj, health, ports, error);
  if (data == NULL)
    return FALSE;
  g_autoptr (ApiExecutorConfig) exec = g_object_new (API_TYPE_EXECUTOR_CONFIG, "name", "stagger",
                                                     "data", data, NULL);
  g_object_set (task, "executorConfig", exec, NULL);
  return TRUE;
}

static StgJobFile *
build (const StgJfCtx *c, JsonObject *top, const gchar *owner, GError **error)
{
  g_autofree gchar *cluster = NULL, *role = NULL, *environment = NULL, *name = NULL;
  g_autofree gchar *tier = NULL, *contact = NULL;
  gint64 instances = 1, max_failures = 1, priority = 0;
  gboolean service = TRUE;
  JsonObject *task_obj = NULL, *health = NULL;
  gboolean aurora = json_object_has_member (top, "aurora_task");

  if (!stg_jf_check_keys (c, top, "", stg_jf_top_keys, error) ||
      !key_part (c, top, "cluster", &cluster, error) || !key_part (c, top, "role", &role, error) ||
      !key_part (c, top, "environment", &environment, error) ||
      !key_part (c, top, "name", &name, error) ||
      !stg_jf_int (c, top, "", "instances", 1, MAX_INSTANCES, &instances, NULL, error) ||
      !stg_jf_bool (c, top, "", "service", &service, NULL, error) ||
      !stg_jf_int (c, top, "", "max_task_failures", -1, MAX_COUNT, &max_failures, NULL, error) ||
      !stg_jf_int (c, top, "", "priority", G_MININT32, G_MAXINT32, &priority, NULL, error) ||
      !stg_jf_string (c, top, "", "tier", FALSE, &tier, error) ||
      !stg_jf_string (c, top, "", "contact", FALSE, &contact, error) ||
      !stg_jf_object (c, top, "", "task", !aurora, &task_obj, error) ||
      !stg_jf_object (c, top, "", "health_check_config", FALSE, &health, error))
    return NULL;

  g_autoptr (ApiJobKey) key = stg_job_key_new (role, environment, name);
  g_autoptr (ApiIdentity) task_owner = g_object_new (API_TYPE_IDENTITY, "user", role, NULL);
  g_autoptr (ApiTaskConfig) task = g_object_new (API_TYPE_TASK_CONFIG,
      "job", key, "owner", task_owner, "isService", service,
      "priority", (gint32) priority, "maxTaskFailures", (gint32) max_failures, NULL);
  if (tier != NULL)
    g_object_set (task, "tier", tier, NULL);
  if (contact != NULL)
    g_object_set (task, "contactEmail", contact, NULL);
  if (!stg_jf_placement (c, top, task, error) || !stg_jf_sla_policy (c, top, task, error))
    return NULL;
  if (aurora && !stg_jf_aurora_task (c, top, key, cluster, task, error))
    return NULL;
  if (!aurora && !stagger_task (c, top, task_obj, health, task, error))
    return NULL;

  g_autoptr (ApiJobUpdateSettings) settings = update_settings (c, top, cluster, error);
  if (settings == NULL)
    return NULL;

  g_autoptr (ApiIdentity) job_owner = g_object_new (API_TYPE_IDENTITY,
      "user", owner != NULL ? owner : role, NULL);
  StgJobFile *file = g_new0 (StgJobFile, 1);
  file->file = g_strdup (c->file);
  file->cluster = g_steal_pointer (&cluster);
  file->job = g_object_new (API_TYPE_JOB_CONFIGURATION,
      "key", key, "owner", job_owner,
      "cronCollisionPolicy", API_CRON_COLLISION_POLICY_KILL_EXISTING,
      "taskConfig", task, "instanceCount", (gint32) instances, NULL);
  file->settings = g_steal_pointer (&settings);
  return file;
}

JsonNode *
stg_jf_parse_object (const StgJfCtx *c, const gchar *text, gsize len, GError **error)
{
  if (len > STG_JOB_FILE_MAX_SIZE)
    {
      g_set_error (error, STG_JOB_FILE_ERROR, STG_JOB_FILE_ERROR_READ,
                   "%s: larger than %d bytes; is it the right file?", c->file,
                   STG_JOB_FILE_MAX_SIZE);
      return NULL;
    }
  if (!check_numbers (c, text, len, error))
    return NULL;
  g_autoptr (JsonNode) root = parse_json (c, text, len, error);
  if (root == NULL)
    return NULL;
  if (!JSON_NODE_HOLDS_OBJECT (root))
    {
      g_autofree gchar *got = stg_jf_describe (root);
      stg_jf_fail (c, error, STG_JOB_FILE_ERROR_TYPE, "",
                   "expected a JSON object at the top level, got %s", got);
      return NULL;
    }
  return g_steal_pointer (&root);
}

StgJobFile *
stg_jf_job (const StgJfCtx *c, JsonObject *top, const gchar *owner, GError **error)
{
  return build (c, top, owner, error);
}

StgJobFile *
stg_job_file_parse (const gchar *name, const gchar *text, gssize len, const gchar *owner,
                    GError **error)
{
  StgJfCtx c = { name };
  g_autoptr (JsonNode) root = stg_jf_parse_object (&c, text, len < 0 ? strlen (text) : (gsize) len,
                                                   error);

  if (root == NULL)
    return NULL;
  return build (&c, json_node_get_object (root), owner, error);
}

StgJobFile *
stg_job_file_load (const gchar *path, const gchar *owner, GError **error)
{
  g_autofree gchar *text = NULL;
  gsize len = 0;

  if (!stg_jf_read_file (path, "a job file", &text, &len, error))
    return NULL;
  return stg_job_file_parse (path, text, (gssize) len, owner, error);
}

/* ---- using it ------------------------------------------------------------------- */

gchar *
stg_job_file_key_string (StgJobFile *file)
{
  const ApiJobKey *k = file->job->key;

  return g_strdup_printf ("%s/%s/%s/%s", file->cluster, k->role, k->environment, k->name);
}

gboolean
stg_job_file_check_key (StgJobFile *file, const StgJobPath *path, GError **error)
{
  if (g_strcmp0 (file->cluster, path->cluster) == 0 && stg_job_key_equal (file->job->key, path->key))
    return TRUE;
  g_autofree gchar *in_file = stg_job_file_key_string (file);
  g_autofree gchar *key = stg_job_key_to_string (path->key);
  g_set_error (error, STG_JOB_FILE_ERROR, STG_JOB_FILE_ERROR_MISMATCH,
               "%s describes the job %s, not %s/%s as the command line says", file->file, in_file,
               path->cluster, key);
  return FALSE;
}

void
stg_job_file_add_ranges (GHashTable *set, StgRanges *ranges)
{
  for (guint i = 0; ranges != NULL && i < stg_ranges_n (ranges); i++)
    {
      StgRange r = stg_ranges_get (ranges, i);
      g_hash_table_add (set, g_object_new (API_TYPE_RANGE, "first", r.first, "last", r.last, NULL));
    }
}

ApiJobUpdateRequest *
stg_job_file_update_request (StgJobFile *file, StgRanges *instances)
{
  g_autoptr (ApiJobUpdateSettings) settings = stg_thrift_copy (file->settings);

  if (instances != NULL)
    {
      stg_job_file_add_ranges (settings->updateOnlyTheseInstances, instances);
      settings->__isset_updateOnlyTheseInstances = TRUE;
    }
  return g_object_new (API_TYPE_JOB_UPDATE_REQUEST,
                       "taskConfig", file->job->taskConfig,
                       "instanceCount", file->job->instanceCount,
                       "settings", settings, NULL);
}
