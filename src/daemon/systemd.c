/* systemd.c: $STATE_DIRECTORY and sd_notify's protocol written by hand (a
 * datagram on a unix socket, "@" meaning the abstract namespace), so that
 * staggerd needs no libsystemd. Calls GLib and GIO only; the main thread.
 */
#include "config.h"

#include <gio/gio.h>
#include <gio/gunixsocketaddress.h>
#include <string.h>

#include "daemon/systemd.h"

gchar *
stg_systemd_default_data_dir (void)
{
  const gchar *state = g_getenv ("STATE_DIRECTORY");

  if (state != NULL && g_path_is_absolute (state))
    {
      const gchar *colon = strchr (state, ':');
      return colon ? g_strndup (state, (gsize) (colon - state)) : g_strdup (state);
    }
  return g_strdup (STG_DATA_DIR);
}

gboolean
stg_systemd_notify (const gchar *state, GError **error)
{
  const gchar *path = g_getenv ("NOTIFY_SOCKET");

  if (path == NULL || path[0] == '\0')
    return TRUE;
  if (path[0] != '/' && path[0] != '@')
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "NOTIFY_SOCKET=%s: expected an absolute path or @name", path);
      return FALSE;
    }
  g_autoptr (GSocketAddress) addr =
    path[0] == '@' ? g_unix_socket_address_new_with_type (path + 1, -1, G_UNIX_SOCKET_ADDRESS_ABSTRACT)
                   : g_unix_socket_address_new (path);
  g_autoptr (GSocket) socket = g_socket_new (G_SOCKET_FAMILY_UNIX, G_SOCKET_TYPE_DATAGRAM,
                                             G_SOCKET_PROTOCOL_DEFAULT, error);
  if (socket == NULL)
    return FALSE;
  if (g_socket_send_to (socket, addr, state, strlen (state), NULL, error) < 0)
    {
      g_prefix_error (error, "NOTIFY_SOCKET=%s: ", path);
      return FALSE;
    }
  return TRUE;
}
