/* json_fields.c: one loop that reads a JSON object's members through a
 * table of fields (see json_fields.h). Calls GLib and json-glib only. Pure;
 * any thread.
 */
#include "config.h"

#include <math.h>

#include "common/error.h"
#include "common/json_fields.h"

G_DEFINE_QUARK (stg-json-fields-error-quark, stg_json_fields_error)

/* "path.key", or "key" when @path is empty (a new string). */
static gchar *
path_key (const gchar *path, const gchar *key)
{
  return *path == '\0' ? g_strdup (key) : g_strconcat (path, ".", key, NULL);
}

gchar *
stg_json_path_index (const gchar *path, guint index)
{
  return g_strdup_printf ("%s[%u]", path, index);
}

gchar *
stg_json_describe (JsonNode *node)
{
  if (JSON_NODE_HOLDS_OBJECT (node))
    return g_strdup ("an object");
  if (JSON_NODE_HOLDS_ARRAY (node))
    return g_strdup ("an array");
  if (JSON_NODE_HOLDS_NULL (node))
    return g_strdup ("null");
  switch (json_node_get_value_type (node))
    {
    case G_TYPE_STRING:
      return g_strdup ("a string");
    case G_TYPE_BOOLEAN:
      return g_strdup (json_node_get_boolean (node) ? "true" : "false");
    default:
      {
        gchar buf[G_ASCII_DTOSTR_BUF_SIZE];
        return g_strdup_printf ("the number %s",
                                g_ascii_dtostr (buf, sizeof buf, json_node_get_double (node)));
      }
    }
}

static const StgField *
field_of (const StgField *fields, const gchar *key)
{
  for (const StgField *f = fields; f->key != NULL; f++)
    if (g_str_equal (f->key, key))
      return f;
  return NULL;
}

static gboolean
unknown_key (const StgField *fields, const gchar *where, GError **error)
{
  g_autoptr (GString) known = g_string_new (NULL);

  for (const StgField *f = fields; f->key != NULL; f++)
    if (f->kind != STG_FIELD_REFUSED)
      g_string_append_printf (known, "%s%s", known->len > 0 ? ", " : "", f->key);
  return stg_fail (error, STG_JSON_FIELDS_ERROR, STG_JSON_FIELDS_ERROR_INVALID,
                   "%s: unknown key (known here: %s)", where, known->str);
}

static gboolean
wrong (JsonNode *node, const gchar *where, const gchar *expected, GError **error)
{
  g_autofree gchar *got = stg_json_describe (node);

  return stg_fail (error, STG_JSON_FIELDS_ERROR, STG_JSON_FIELDS_ERROR_INVALID,
                   "%s must be %s, not %s", where, expected, got);
}

static gboolean
holds (JsonNode *node, GType type)
{
  return JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == type;
}

/* A number of @f's range; whole when @whole. */
static gboolean
read_number (const StgField *f, JsonNode *node, const gchar *where, gboolean whole, gdouble *out,
             GError **error)
{
  if (!holds (node, G_TYPE_INT64) && !holds (node, G_TYPE_DOUBLE))
    return wrong (node, where, whole ? "a whole number" : "a number", error);
  gdouble v = holds (node, G_TYPE_INT64) ? (gdouble) json_node_get_int (node)
                                         : json_node_get_double (node);
  if (whole && (v != floor (v) || !isfinite (v)))
    return wrong (node, where, "a whole number", error);
  gdouble min = f->min, max = f->max;
  if (min == 0 && max == 0)
    {
      min = f->kind == STG_FIELD_INT     ? G_MININT
            : f->kind == STG_FIELD_INT64 ? -9.0e15
                                         : -G_MAXDOUBLE;
      max = f->kind == STG_FIELD_INT ? G_MAXINT : f->kind == STG_FIELD_INT64 ? 9.0e15 : G_MAXDOUBLE;
    }
  if (!(v >= min && v <= max))
    return stg_fail (error, STG_JSON_FIELDS_ERROR, STG_JSON_FIELDS_ERROR_INVALID,
                     "%s must be between %.15g and %.15g, not %.15g", where, min, max, v);
  *out = v;
  return TRUE;
}

static gboolean
read_member (const StgField *f, JsonNode *node, const gchar *where, gpointer dest, GError **error)
{
  gpointer slot = f->offset == STG_FIELD_SKIP ? NULL : G_STRUCT_MEMBER_P (dest, f->offset);
  gdouble v = 0;

  switch (f->kind)
    {
    case STG_FIELD_STRING:
      if (!holds (node, G_TYPE_STRING))
        return wrong (node, where, "a string", error);
      if (slot != NULL)
        {
          g_free (*(gchar **) slot);
          *(gchar **) slot = g_strdup (json_node_get_string (node));
        }
      return TRUE;
    case STG_FIELD_INT:
    case STG_FIELD_INT64:
    case STG_FIELD_NUMBER:
      if (!read_number (f, node, where, f->kind != STG_FIELD_NUMBER, &v, error))
        return FALSE;
      if (slot != NULL && f->kind == STG_FIELD_INT)
        *(gint *) slot = (gint) v;
      else if (slot != NULL && f->kind == STG_FIELD_INT64)
        *(gint64 *) slot = (gint64) v;
      else if (slot != NULL)
        *(gdouble *) slot = v;
      return TRUE;
    case STG_FIELD_BOOL:
      if (!holds (node, G_TYPE_BOOLEAN))
        return wrong (node, where, "true or false", error);
      if (slot != NULL)
        *(gboolean *) slot = json_node_get_boolean (node);
      return TRUE;
    case STG_FIELD_ARRAY:
      if (!JSON_NODE_HOLDS_ARRAY (node))
        return wrong (node, where, "an array", error);
      if (slot != NULL)
        *(JsonArray **) slot = json_node_get_array (node);
      return TRUE;
    case STG_FIELD_OBJECT:
    case STG_FIELD_STRMAP:
      if (!JSON_NODE_HOLDS_OBJECT (node))
        return wrong (node, where,
                      f->kind == STG_FIELD_STRMAP ? "an object of strings" : "an object", error);
      if (f->kind == STG_FIELD_STRMAP)
        {
          g_autoptr (GList) keys = json_object_get_members (json_node_get_object (node));
          for (GList *l = keys; l != NULL; l = l->next)
            {
              JsonNode *value = json_object_get_member (json_node_get_object (node), l->data);
              g_autofree gchar *at = path_key (where, l->data);
              if (!holds (value, G_TYPE_STRING))
                return wrong (value, at, "a string", error);
            }
        }
      if (slot != NULL)
        *(JsonObject **) slot = json_node_get_object (node);
      return TRUE;
    case STG_FIELD_REFUSED:
    default:
      return stg_fail (error, STG_JSON_FIELDS_ERROR, STG_JSON_FIELDS_ERROR_REFUSED, "%s: %s", where,
                       f->why);
    }
}

gboolean
stg_json_fields_read (JsonObject *object, const gchar *path, const StgField *fields, gpointer dest,
                      GError **error)
{
  g_autoptr (GList) members = json_object_get_members (object);

  g_return_val_if_fail (object != NULL && path != NULL && fields != NULL, FALSE);
  for (GList *l = members; l != NULL; l = l->next)
    {
      g_autofree gchar *where = path_key (path, l->data);
      const StgField *f = field_of (fields, l->data);
      if (f == NULL)
        return unknown_key (fields, where, error);
      if (!read_member (f, json_object_get_member (object, l->data), where, dest, error))
        return FALSE;
    }
  for (const StgField *f = fields; f->key != NULL; f++)
    if (f->required && !json_object_has_member (object, f->key))
      {
        g_autofree gchar *where = path_key (path, f->key);
        return stg_fail (error, STG_JSON_FIELDS_ERROR, STG_JSON_FIELDS_ERROR_INVALID,
                         "%s is missing", where);
      }
  return TRUE;
}
