/* host_policy.h: where requests staggerd makes itself may go.
 *
 * HTTP gates (and, later, calls to coordinators) are requests staggerd
 * makes from its own host on behalf of whoever started a plan, so they
 * could reach what only that host reaches. A StgHostPolicy judges each
 * connection by the host its URL names and the address it is about to
 * connect to (what the name resolved to, not the name):
 *
 *   - with allowed patterns ([gates] allowed_hosts), the host must match a
 *     name pattern (a host name, '*' for any run of characters:
 *     "*.example.com") or the address an address pattern (an IP address
 *     or a CIDR block: "10.0.0.0/8", "fd00::/8");
 *   - whatever the patterns, a link-local or cloud metadata address
 *     (169.254.0.0/16, fe80::/10, fd00:ec2::254, 100.100.100.200) is
 *     refused unless an address pattern covers it.
 *
 * An IPv4 address written as IPv6 (::ffff:169.254.169.254) is judged as
 * the IPv4 address. Immutable once made and reference counted, so a
 * request in flight can keep it; any thread.
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define STG_HOST_POLICY_ERROR (stg_host_policy_error_quark ())
GQuark stg_host_policy_error_quark (void);
typedef enum
{
  STG_HOST_POLICY_ERROR_INVALID, /* a pattern that means nothing */
  STG_HOST_POLICY_ERROR_REFUSED, /* a connection the policy does not allow */
} StgHostPolicyError;

typedef struct _StgHostPolicy StgHostPolicy;

/* A policy allowing @patterns (NULL or empty: any host but the refused
 * addresses); NULL with @error for a pattern that is neither a host name
 * pattern nor an address or CIDR block. @what names the setting in
 * messages ("[gates] allowed_hosts"). */
StgHostPolicy *stg_host_policy_new (const gchar *const *patterns, const gchar *what,
                                    GError **error);
StgHostPolicy *stg_host_policy_ref (StgHostPolicy *policy);
void stg_host_policy_unref (StgHostPolicy *policy);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgHostPolicy, stg_host_policy_unref)

/* TRUE when a connection for @host (as the URL names it) to @address is
 * allowed; FALSE with @error (STG_HOST_POLICY_ERROR_REFUSED) saying why
 * otherwise. */
gboolean stg_host_policy_check (const StgHostPolicy *policy, const gchar *host,
                                GInetAddress *address, GError **error);

G_END_DECLS
