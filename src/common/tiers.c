/* tiers.c: StgTiers: Aurora's tier configuration, parsed from its JSON
 * form (the built-in default is parsed from the same text Aurora ships).
 * Calls only GLib and json-glib. Any thread.
 */
#include "config.h"

#include <json-glib/json-glib.h>
#include <string.h>

#include "common/error.h"
#include "common/jobkey.h"
#include "common/json_check.h"
#include "common/tiers.h"

G_DEFINE_QUARK (stg-tiers-error-quark, stg_tiers_error)

struct _StgTiers
{
  gchar *default_name;
  GPtrArray *tiers; /* StgTier*, sorted by name */
};

/* Aurora's src/main/resources/org/apache/aurora/scheduler/tiers.json. */
static const gchar default_json[] =
    "{\"default\": \"preemptible\", \"tiers\": {"
    "\"preferred\": {\"preemptible\": false, \"revocable\": false},"
    "\"preemptible\": {\"preemptible\": true, \"revocable\": false},"
    "\"revocable\": {\"preemptible\": true, \"revocable\": true}}}";

#define bad(error, ...) stg_fail (error, STG_TIERS_ERROR, STG_TIERS_ERROR_INVALID, __VA_ARGS__)

static void
tier_free (StgTier *tier)
{
  g_free (tier->name);
  g_free (tier);
}

void
stg_tiers_free (StgTiers *tiers)
{
  if (tiers == NULL)
    return;
  g_free (tiers->default_name);
  g_ptr_array_unref (tiers->tiers);
  g_free (tiers);
}

static gint
compare_tiers (gconstpointer a, gconstpointer b)
{
  return strcmp ((*(StgTier *const *) a)->name, (*(StgTier *const *) b)->name);
}

/* One tier's traits: {"preemptible": BOOL, "revocable": BOOL}, each
 * false when missing (as Aurora reads them). */
static StgTier *
parse_tier (const gchar *name, JsonNode *node, GError **error)
{
  /* Aurora checks tier names and job key parts with one pattern. */
  if (!stg_job_key_part_valid (name))
    {
      bad (error, "tiers: '%s' is not a tier name (letters, digits, '_', '-', '.')", name);
      return NULL;
    }
  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      bad (error, "tiers.%s must be an object", name);
      return NULL;
    }
  g_autoptr (GList) members = json_object_get_members (json_node_get_object (node));
  g_autofree StgTier *tier = g_new0 (StgTier, 1);
  for (GList *l = members; l != NULL; l = l->next)
    {
      JsonNode *value = json_object_get_member (json_node_get_object (node), l->data);
      gboolean *slot = g_str_equal (l->data, "preemptible") ? &tier->preemptible
                       : g_str_equal (l->data, "revocable") ? &tier->revocable
                                                            : NULL;
      if (slot == NULL)
        {
          bad (error, "tiers.%s: unknown key '%s' (known: preemptible, revocable)", name,
               (const gchar *) l->data);
          return NULL;
        }
      if (!JSON_NODE_HOLDS_VALUE (value) || json_node_get_value_type (value) != G_TYPE_BOOLEAN)
        {
          bad (error, "tiers.%s.%s must be true or false", name, (const gchar *) l->data);
          return NULL;
        }
      *slot = json_node_get_boolean (value);
    }
  tier->name = g_strdup (name);
  return g_steal_pointer (&tier);
}

/* The members of the top object: "default" and "tiers". */
static gboolean
parse_top (StgTiers *tiers, JsonObject *top, GError **error)
{
  g_autoptr (GList) members = json_object_get_members (top);

  for (GList *l = members; l != NULL; l = l->next)
    if (!g_str_equal (l->data, "default") && !g_str_equal (l->data, "tiers"))
      return bad (error, "unknown key '%s' (known: default, tiers)", (const gchar *) l->data);
  JsonNode *def = json_object_get_member (top, "default");
  if (def == NULL || !JSON_NODE_HOLDS_VALUE (def) ||
      json_node_get_value_type (def) != G_TYPE_STRING || json_node_get_string (def)[0] == '\0')
    return bad (error, "default must name the default tier");
  JsonNode *list = json_object_get_member (top, "tiers");
  if (list == NULL || !JSON_NODE_HOLDS_OBJECT (list) ||
      json_object_get_size (json_node_get_object (list)) == 0)
    return bad (error, "tiers must be an object of at least one tier");
  g_autoptr (GList) names = json_object_get_members (json_node_get_object (list));
  for (GList *l = names; l != NULL; l = l->next)
    {
      StgTier *tier = parse_tier (l->data,
                                  json_object_get_member (json_node_get_object (list), l->data),
                                  error);
      if (tier == NULL)
        return FALSE;
      g_ptr_array_add (tiers->tiers, tier);
    }
  g_ptr_array_sort (tiers->tiers, compare_tiers);
  tiers->default_name = g_strdup (json_node_get_string (def));
  if (stg_tiers_lookup (tiers, tiers->default_name) == NULL)
    return bad (error, "default is '%s', which is not one of the tiers", tiers->default_name);
  return TRUE;
}

StgTiers *
stg_tiers_parse (const gchar *json, gssize len, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) local = NULL;

  if (!stg_json_check_depth (json, len, STG_JSON_NESTING_MAX, &local) ||
      !json_parser_load_from_data (parser, json, len, &local))
    {
      bad (error, "not JSON: %s", local->message);
      return NULL;
    }
  JsonNode *root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      bad (error, "expected a JSON object {\"default\": ..., \"tiers\": {...}}");
      return NULL;
    }
  g_autoptr (StgTiers) tiers = g_new0 (StgTiers, 1);
  tiers->tiers = g_ptr_array_new_with_free_func ((GDestroyNotify) tier_free);
  if (!parse_top (tiers, json_node_get_object (root), error))
    return NULL;
  return g_steal_pointer (&tiers);
}

StgTiers *
stg_tiers_load (const gchar *path, GError **error)
{
  g_autofree gchar *text = NULL;
  gsize len = 0;

  if (!g_file_get_contents (path, &text, &len, error))
    return NULL;
  StgTiers *tiers = stg_tiers_parse (text, (gssize) len, error);
  if (tiers == NULL)
    g_prefix_error (error, "%s: ", path);
  return tiers;
}

StgTiers *
stg_tiers_new_default (void)
{
  g_autoptr (GError) error = NULL;
  StgTiers *tiers = stg_tiers_parse (default_json, -1, &error);

  /* The built-in text always parses: anything else is a bug. */
  g_assert_no_error (error);
  return tiers;
}

const gchar *
stg_tiers_default_name (const StgTiers *tiers)
{
  return tiers->default_name;
}

guint
stg_tiers_count (const StgTiers *tiers)
{
  return tiers->tiers->len;
}

const StgTier *
stg_tiers_get (const StgTiers *tiers, guint index)
{
  g_return_val_if_fail (index < tiers->tiers->len, NULL);
  return tiers->tiers->pdata[index];
}

const StgTier *
stg_tiers_lookup (const StgTiers *tiers, const gchar *name)
{
  for (guint i = 0; name != NULL && i < tiers->tiers->len; i++)
    if (g_str_equal (((StgTier *) tiers->tiers->pdata[i])->name, name))
      return tiers->tiers->pdata[i];
  return NULL;
}

gboolean
stg_tier_is_production (const StgTier *tier)
{
  return !tier->preemptible && !tier->revocable;
}
