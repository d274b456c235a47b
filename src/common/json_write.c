/* json_write.c: a JSON writer for json-glib trees that prints doubles in
 * their shortest round-trip form. Owns nothing beyond the text it returns;
 * calls GLib and json-glib only. Plain functions, any thread.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "common/json_write.h"

gchar *
stg_json_format_double (gchar *buf, gdouble value)
{
  if (!isfinite (value))
    {
      g_strlcpy (buf, "null", G_ASCII_DTOSTR_BUF_SIZE);
      return buf;
    }
  for (gint digits = 1; digits <= 17; digits++)
    {
      gchar format[8];
      g_snprintf (format, sizeof format, "%%.%dg", digits);
      g_ascii_formatd (buf, G_ASCII_DTOSTR_BUF_SIZE, format, value);
      if (g_ascii_strtod (buf, NULL) == value)
        break;
    }
  if (strpbrk (buf, ".eE") == NULL)
    g_strlcat (buf, ".0", G_ASCII_DTOSTR_BUF_SIZE);
  return buf;
}

static void
write_string (GString *out, const gchar *s)
{
  g_string_append_c (out, '"');
  for (const guchar *p = (const guchar *) s; *p != '\0'; p++)
    switch (*p)
      {
      case '"': g_string_append (out, "\\\""); break;
      case '\\': g_string_append (out, "\\\\"); break;
      case '\b': g_string_append (out, "\\b"); break;
      case '\f': g_string_append (out, "\\f"); break;
      case '\n': g_string_append (out, "\\n"); break;
      case '\r': g_string_append (out, "\\r"); break;
      case '\t': g_string_append (out, "\\t"); break;
      default:
        if (*p < 0x20 || *p == 0x7f)
          g_string_append_printf (out, "\\u%04x", *p);
        else
          g_string_append_c (out, (gchar) *p);
      }
  g_string_append_c (out, '"');
}

static void
write_value (GString *out, JsonNode *node)
{
  gchar buf[G_ASCII_DTOSTR_BUF_SIZE];

  switch (json_node_get_value_type (node))
    {
    case G_TYPE_INT64:
      g_string_append_printf (out, "%" G_GINT64_FORMAT, json_node_get_int (node));
      break;
    case G_TYPE_DOUBLE:
      g_string_append (out, stg_json_format_double (buf, json_node_get_double (node)));
      break;
    case G_TYPE_BOOLEAN:
      g_string_append (out, json_node_get_boolean (node) ? "true" : "false");
      break;
    case G_TYPE_STRING:
      write_string (out, json_node_get_string (node));
      break;
    default:
      g_string_append (out, "null");
      break;
    }
}

static void
newline (GString *out, gboolean pretty, guint depth)
{
  if (!pretty)
    return;
  g_string_append_c (out, '\n');
  for (guint i = 0; i < depth; i++)
    g_string_append (out, "  ");
}

static void write_node (GString *out, JsonNode *node, gboolean pretty, guint depth);

static void
write_object (GString *out, JsonObject *o, gboolean pretty, guint depth)
{
  g_autoptr (GList) members = json_object_get_members (o);

  g_string_append_c (out, '{');
  for (GList *l = members; l != NULL; l = l->next)
    {
      newline (out, pretty, depth + 1);
      write_string (out, l->data);
      g_string_append (out, pretty ? " : " : ":");
      write_node (out, json_object_get_member (o, l->data), pretty, depth + 1);
      if (l->next != NULL)
        g_string_append_c (out, ',');
    }
  if (members != NULL)
    newline (out, pretty, depth);
  g_string_append_c (out, '}');
}

static void
write_array (GString *out, JsonArray *a, gboolean pretty, guint depth)
{
  guint n = json_array_get_length (a);

  g_string_append_c (out, '[');
  for (guint i = 0; i < n; i++)
    {
      newline (out, pretty, depth + 1);
      write_node (out, json_array_get_element (a, i), pretty, depth + 1);
      if (i + 1 < n)
        g_string_append_c (out, ',');
    }
  if (n > 0)
    newline (out, pretty, depth);
  g_string_append_c (out, ']');
}

static void
write_node (GString *out, JsonNode *node, gboolean pretty, guint depth)
{
  if (node == NULL)
    {
      g_string_append (out, "null");
      return;
    }
  switch (json_node_get_node_type (node))
    {
    case JSON_NODE_OBJECT:
      write_object (out, json_node_get_object (node), pretty, depth);
      break;
    case JSON_NODE_ARRAY:
      write_array (out, json_node_get_array (node), pretty, depth);
      break;
    case JSON_NODE_VALUE:
      write_value (out, node);
      break;
    case JSON_NODE_NULL:
    default:
      g_string_append (out, "null");
      break;
    }
}

gchar *
stg_json_write (JsonNode *node, gboolean pretty, gsize *length)
{
  GString *out = g_string_new (NULL);

  write_node (out, node, pretty, 0);
  if (length != NULL)
    *length = out->len;
  return g_string_free (out, FALSE);
}
