/* read.c: what every file of the executor-data parser reads with: the
 * error domain of libstg_thermos, table reads (common/json_fields.h) whose
 * errors are put in it, and an array's elements as objects. Calls common/
 * and json-glib only; any thread.
 */
#include "config.h"

#include "thermos/task_private.h"

G_DEFINE_QUARK (stg-thermos-error-quark, stg_thermos_error)

gboolean
stg_thermos_read (JsonObject *object, const gchar *path, const StgField *fields, gpointer dest,
                  GError **error)
{
  g_autoptr (GError) local = NULL;

  if (stg_json_fields_read (object, path, fields, dest, &local))
    return TRUE;
  if (g_error_matches (local, STG_JSON_FIELDS_ERROR, STG_JSON_FIELDS_ERROR_REFUSED))
    return stg_thermos_refuse (error, "%s", local->message);
  return stg_thermos_bad (error, "%s", local->message);
}

JsonObject *
stg_thermos_element_object (JsonArray *array, const gchar *path, guint i, GError **error)
{
  JsonNode *node = json_array_get_element (array, i);

  if (JSON_NODE_HOLDS_OBJECT (node))
    return json_node_get_object (node);
  g_autofree gchar *got = stg_json_describe (node);
  stg_thermos_bad (error, "%s[%u] must be an object, not %s", path, i, got);
  return NULL;
}
