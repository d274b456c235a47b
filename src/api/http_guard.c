/* http_guard.c: Host and Origin checks against DNS rebinding and
 * cross-site requests (see http_guard.h). Calls only GLib; any thread.
 */
#include "config.h"

#include <gio/gio.h>
#include <string.h>

#include "api/http_guard.h"

/* The host part of a Host header: "[::1]:8081" -> "::1", "a.b:80" -> "a.b". */
static gchar *
host_name (const gchar *host)
{
  if (host[0] == '[')
    {
      const gchar *end = strchr (host, ']');
      return end ? g_strndup (host + 1, (gsize) (end - host - 1)) : g_strdup (host);
    }
  const gchar *colon = strchr (host, ':');
  if (colon != NULL && strchr (colon + 1, ':') == NULL)
    return g_strndup (host, (gsize) (colon - host));
  return g_strdup (host);
}

static gboolean
listed (const gchar *const *list, const gchar *value)
{
  for (guint i = 0; list != NULL && list[i] != NULL; i++)
    if (g_ascii_strcasecmp (list[i], value) == 0 || g_str_equal (list[i], "*"))
      return TRUE;
  return FALSE;
}

gboolean
stg_http_guard_host (const StgHttpGuard *guard, const gchar *host, GError **error)
{
  if (host == NULL)
    return TRUE;
  g_autofree gchar *name = host_name (host);
  if (g_hostname_is_ip_address (name) || g_ascii_strcasecmp (name, "localhost") == 0 ||
      listed (guard->names, name))
    return TRUE;
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
               "Host '%s' is not a name of this server (add it to http_names)", name);
  return FALSE;
}

gboolean
stg_http_guard_origin (const StgHttpGuard *guard, const gchar *method, const gchar *host,
                       const gchar *origin, const gchar *fetch_site, GError **error)
{
  if (g_str_equal (method, "GET") || g_str_equal (method, "HEAD") || g_str_equal (method, "OPTIONS"))
    return TRUE;
  if (origin != NULL)
    {
      g_autofree gchar *own = host ? g_strconcat (guard->tls ? "https://" : "http://", host, NULL) : NULL;
      if ((own != NULL && g_ascii_strcasecmp (origin, own) == 0) || listed (guard->origins, origin))
        return TRUE;
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                   "requests from origin '%s' may not change anything here (see allowed_origins)",
                   origin);
      return FALSE;
    }
  if (fetch_site != NULL && !g_str_equal (fetch_site, "same-origin") && !g_str_equal (fetch_site, "none"))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                   "%s requests may not change anything here", fetch_site);
      return FALSE;
    }
  return TRUE;
}
