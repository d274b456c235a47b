/* strings.h: sorting arrays of strings the one way GLib's sort functions
 * want it (they hand the comparator pointers to the elements, not the
 * elements). Pure; any thread.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Compares two elements of an array of strings, for g_ptr_array_sort and
 * qsort: @a and @b point to the `gchar *` (NULL sorts first). */
gint stg_compare_string_ptrs (gconstpointer a, gconstpointer b);

G_END_DECLS
