/* json_write.h: JSON text from a json-glib tree, with doubles in their
 * shortest form that reads back the same (0.1, not 0.10000000000000001,
 * which is what JsonGenerator prints). Used by the CLI's --json and the web
 * UI's JSON data. Plain functions, any thread.
 */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* Writes @value into @buf (at least G_ASCII_DTOSTR_BUF_SIZE bytes) in the
 * fewest digits that g_ascii_strtod() reads back as @value, always with a
 * '.' or an exponent so that readers keep it a double ("1.0"). Non-finite
 * values, which JSON cannot hold, are written as "null". Returns @buf. */
gchar *stg_json_format_double (gchar *buf, gdouble value);

/* @node as JSON text: compact, or with @pretty an indent of two spaces per
 * level (json-glib's layout). *@length (nullable) gets the text's length. */
gchar *stg_json_write (JsonNode *node, gboolean pretty, gsize *length);

G_END_DECLS
