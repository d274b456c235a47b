/* json_check.c: a bound on JSON nesting, checked in one flat pass before
 * the text reaches json-glib (whose recursive parser would otherwise
 * overflow the stack on deep input), and json-glib's parser behind it.
 * Calls GLib and json-glib only; any thread.
 */
#include "config.h"

#include <string.h>

#include "common/json_check.h"

G_DEFINE_QUARK (stg-json-check-error-quark, stg_json_check_error)

gboolean
stg_json_check_depth (const gchar *text, gssize len, guint max_depth, GError **error)
{
  if (text == NULL)
    return TRUE;
  gsize n = len < 0 ? strlen (text) : (gsize) len;
  guint depth = 0;
  gboolean in_string = FALSE;

  for (gsize i = 0; i < n; i++)
    {
      gchar c = text[i];
      if (in_string)
        {
          if (c == '\\')
            i++; /* the escaped character never ends the string */
          else if (c == '"')
            in_string = FALSE;
          continue;
        }
      if (c == '"')
        in_string = TRUE;
      else if (c == '{' || c == '[')
        {
          if (++depth > max_depth)
            {
              g_set_error (error, STG_JSON_CHECK_ERROR, STG_JSON_CHECK_ERROR_TOO_DEEP,
                           "JSON nested deeper than %u levels (at byte %" G_GSIZE_FORMAT ")",
                           max_depth, i);
              return FALSE;
            }
        }
      else if ((c == '}' || c == ']') && depth > 0)
        depth--;
    }
  return TRUE;
}

gboolean
stg_json_load (JsonParser *parser, const gchar *text, gssize len, GError **error)
{
  if (!stg_json_check_depth (text, len, STG_JSON_NESTING_MAX, error) ||
      !json_parser_load_from_data (parser, text != NULL ? text : "", text != NULL ? len : 0, error))
    return FALSE;
  if (json_parser_get_root (parser) == NULL)
    {
      g_set_error (error, STG_JSON_CHECK_ERROR, STG_JSON_CHECK_ERROR_FAILED, "no JSON value");
      return FALSE;
    }
  return TRUE;
}
