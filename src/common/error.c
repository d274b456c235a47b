/* error.c: the one printf-to-GError helper (see error.h).
 *
 * Calls GLib only. Pure; any thread.
 */
#include "config.h"

#include "common/error.h"

gboolean
stg_fail (GError **error, GQuark domain, gint code, const gchar *format, ...)
{
  va_list ap;

  va_start (ap, format);
  g_propagate_error (error, g_error_new_valist (domain, code, format, ap));
  va_end (ap);
  return FALSE;
}
