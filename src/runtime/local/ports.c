/* ports.c: stable named ports and listening sockets for the local runtime.
 *
 * Each (job, instance, port name) gets a port from the configured range the
 * first time it needs one; the store keeps it, so the instance finds the
 * same port after a replace or a restart of the daemon. A port that is busy
 * on this host when it is handed out is skipped, and a role keeps at most
 * max_ports_per_role ports (so one role cannot take the whole range).
 * Main-loop thread only.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "runtime/local/local_private.h"

/* TRUE when nothing listens on @port here (tries to bind it). */
static gboolean
port_free (StgLocalRuntime *rt, gint port)
{
  struct sockaddr_in sa = { 0 };
  gint fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  gboolean free_ = FALSE;

  if (fd < 0)
    return FALSE;
  sa.sin_family = AF_INET;
  sa.sin_port = htons ((guint16) port);
  if (inet_pton (AF_INET, rt->options.bind, &sa.sin_addr) != 1)
    sa.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  free_ = bind (fd, (struct sockaddr *) &sa, sizeof sa) == 0;
  close (fd);
  return free_;
}

/* Whether @slot's role may keep one more port (for port @name). */
static gboolean
within_quota (StgLocalRuntime *rt, Slot *slot, const gchar *name, GError **error)
{
  gint64 held = stg_store_count_role_ports (rt->store, slot->base.job->role, error);

  if (held < 0)
    return FALSE;
  if (held < rt->options.max_ports_per_role)
    return TRUE;
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_NO_SPACE,
               "role %s already keeps %" G_GINT64_FORMAT " ports, its quota (max_ports_per_role); "
               "no port for '%s'",
               slot->base.job->role, held, name);
  return FALSE;
}

GHashTable *
stg_local_ports (StgLocalRuntime *rt, Slot *slot, gchar **names, GError **error)
{
  g_autoptr (GHashTable) ports = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (guint i = 0; names[i] != NULL; i++)
    {
      g_autoptr (GError) local = NULL;
      gint port = stg_store_get_port (rt->store, slot->base.job, slot->base.key.instance, names[i],
                                      &local);
      if (local != NULL)
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return NULL;
        }
      if (port == 0 && !within_quota (rt, slot, names[i], error))
        return NULL;
      for (gint p = rt->options.port_min; port == 0 && p <= rt->options.port_max; p++)
        {
          if (stg_store_port_used (rt->store, p, NULL) || !port_free (rt, p))
            continue;
          if (stg_store_put_port (rt->store, slot->base.job, slot->base.key.instance, names[i], p,
                                  &local))
            port = p;
          else if (!g_error_matches (local, STG_STORE_ERROR, STG_STORE_ERROR_EXISTS))
            {
              g_propagate_error (error, g_steal_pointer (&local));
              return NULL;
            }
          g_clear_error (&local);
        }
      if (port == 0)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_NO_SPACE,
                       "no free port left in %d-%d for port '%s'", rt->options.port_min,
                       rt->options.port_max, names[i]);
          return NULL;
        }
      g_hash_table_insert (ports, g_strdup (names[i]), GINT_TO_POINTER (port));
    }
  return g_steal_pointer (&ports);
}

gint
stg_local_listen (StgLocalRuntime *rt, gint port, GError **error)
{
  struct sockaddr_in sa = { 0 };
  gint one = 1;
  gint fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

  if (fd < 0)
    goto fail;
  setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sa.sin_family = AF_INET;
  sa.sin_port = htons ((guint16) port);
  if (inet_pton (AF_INET, rt->options.bind, &sa.sin_addr) != 1)
    sa.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  if (bind (fd, (struct sockaddr *) &sa, sizeof sa) != 0 || listen (fd, 1024) != 0)
    goto fail;
  return fd;

fail:
  {
    int saved = errno;
    if (fd >= 0)
      close (fd);
    g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "cannot listen on port %d: %s",
                 port, g_strerror (saved));
    return -1;
  }
}

gint
stg_local_socket_port (gint fd)
{
  struct sockaddr_in sa = { 0 };
  socklen_t len = sizeof sa;

  if (getsockname (fd, (struct sockaddr *) &sa, &len) != 0)
    return 0;
  return ntohs (sa.sin_port);
}
