/* host_guard.c: a StgHostPolicy on one libsoup request's connections,
 * through the message's network events (see host_guard.h). Calls
 * common/host_policy.c. Main-loop thread only.
 */
#include "config.h"

#include "senders/host_guard.h"

struct _StgHostGuard
{
  SoupMessage *msg;
  StgHostPolicy *policy;
  gchar *refused; /* (nullable) */
};

/* A connection of the request is about to connect to an address its
 * host resolved to: one the policy refuses is closed before a byte goes
 * there, and the guard says why. */
static void
on_network_event (SoupMessage *msg, GSocketClientEvent event, GIOStream *connection, gpointer data)
{
  StgHostGuard *g = data;
  g_autoptr (GError) refused = NULL;

  if (event != G_SOCKET_CLIENT_CONNECTING || !G_IS_SOCKET_CONNECTION (connection))
    return;
  g_autoptr (GSocketAddress) remote =
      g_socket_connection_get_remote_address (G_SOCKET_CONNECTION (connection), NULL);
  const gchar *host = g_uri_get_host (soup_message_get_uri (msg));
  if (remote != NULL && G_IS_INET_SOCKET_ADDRESS (remote) &&
      stg_host_policy_check (g->policy, host,
                             g_inet_socket_address_get_address (G_INET_SOCKET_ADDRESS (remote)),
                             &refused))
    return;
  g_free (g->refused);
  g->refused = g_strdup_printf ("refused: %s", refused ? refused->message
                                                       : "the address to connect to is unknown");
  g_socket_close (g_socket_connection_get_socket (G_SOCKET_CONNECTION (connection)), NULL);
}

StgHostGuard *
stg_host_guard_new (SoupMessage *msg, StgHostPolicy *policy)
{
  StgHostGuard *g = g_new0 (StgHostGuard, 1);

  g->msg = g_object_ref (msg);
  g->policy = stg_host_policy_ref (policy);
  g_signal_connect (msg, "network-event", G_CALLBACK (on_network_event), g);
  return g;
}

void
stg_host_guard_free (StgHostGuard *g)
{
  if (g == NULL)
    return;
  g_signal_handlers_disconnect_by_data (g->msg, g);
  g_object_unref (g->msg);
  stg_host_policy_unref (g->policy);
  g_free (g->refused);
  g_free (g);
}

const gchar *
stg_host_guard_refused (const StgHostGuard *g)
{
  return g->refused;
}
