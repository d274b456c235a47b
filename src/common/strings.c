/* strings.c: sorting arrays of strings; see strings.h. Pure; any thread. */
#include "config.h"

#include "common/strings.h"

gint
stg_compare_string_ptrs (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(const gchar *const *) a, *(const gchar *const *) b);
}
