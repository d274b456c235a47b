/* task_lines.c: a task config as readable lines, and the notes on a change
 * (see task_lines.h). Pure; any thread.
 */
#include "config.h"

#include <string.h>

#include "common/json_check.h"
#include "common/json_write.h"
#include "common/task_lines.h"
#include "common/thrift_json.h"

GPtrArray *
stg_task_lines (ApiTaskConfig *config)
{
  GPtrArray *lines = g_ptr_array_new_with_free_func (g_free);

  if (config == NULL)
    return lines;
  g_autoptr (JsonNode) n = stg_thrift_to_json (config);
  JsonObject *o = json_node_get_object (n);
  g_autoptr (GList) members = json_object_get_members (o);

  members = g_list_sort (members, (GCompareFunc) g_strcmp0);
  for (GList *l = members; l != NULL; l = l->next)
    {
      if (g_str_equal (l->data, "job") || g_str_equal (l->data, "owner"))
        continue;
      /* The executor's data is JSON itself: one line per member. */
      g_autoptr (JsonParser) p = json_parser_new ();
      if (g_str_equal (l->data, "executorConfig") && config->executorConfig != NULL &&
          stg_json_load (p, config->executorConfig->data, -1, NULL) &&
          JSON_NODE_HOLDS_OBJECT (json_parser_get_root (p)))
        {
          JsonObject *data = json_node_get_object (json_parser_get_root (p));
          g_autoptr (GList) keys = g_list_sort (json_object_get_members (data),
                                                (GCompareFunc) g_strcmp0);
          g_ptr_array_add (lines, g_strdup_printf ("executorConfig.name: \"%s\"",
                                                   config->executorConfig->name));
          for (GList *k = keys; k != NULL; k = k->next)
            {
              g_autofree gchar *v = stg_json_write (json_object_get_member (data, k->data), FALSE,
                                                    NULL);
              g_ptr_array_add (lines, g_strdup_printf ("task.%s: %s", (gchar *) k->data, v));
            }
          continue;
        }
      g_autofree gchar *v = stg_json_write (json_object_get_member (o, l->data), FALSE, NULL);
      g_ptr_array_add (lines, g_strdup_printf ("%s: %s", (gchar *) l->data, v));
    }
  return lines;
}

/* The line of @field in @lines, or NULL. */
static const gchar *
line_of (GPtrArray *lines, const gchar *field)
{
  gsize n = strlen (field);

  for (guint i = 0; i < lines->len; i++)
    if (strncmp (lines->pdata[i], field, n) == 0 && ((gchar *) lines->pdata[i])[n] == ':')
      return lines->pdata[i];
  return NULL;
}

GPtrArray *
stg_task_change_notes (ApiTaskConfig *old, ApiTaskConfig *new)
{
  GPtrArray *notes = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) a = stg_task_lines (old);
  g_autoptr (GPtrArray) b = stg_task_lines (new);

  /* As in Aurora, placement is part of the config: instances move. */
  if (old != NULL && new != NULL &&
      g_strcmp0 (line_of (a, "constraints"), line_of (b, "constraints")) != 0)
    g_ptr_array_add (notes, g_strdup ("constraints changed: instances will be replaced"));
  return notes;
}
