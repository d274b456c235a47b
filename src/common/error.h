/* error.h: failing with a formatted GError in one statement.
 *
 * The one printf-to-GError helper; modules wrap it in a short macro with
 * their own domain and code. Pure; any thread.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Sets @error (when not NULL) to a new error of @domain and @code whose
 * message is @format expanded, and returns FALSE, so a failing function can
 * end with `return stg_fail (...)`. */
gboolean stg_fail (GError **error, GQuark domain, gint code, const gchar *format, ...)
    G_GNUC_PRINTF (4, 5);

G_END_DECLS
