/* http_guard.h: which browsers' requests the HTTP server serves at all.
 *
 * Two checks run before any route sees a request. The Host header must
 * name this server (an IP address, "localhost" or a configured name), so a
 * DNS-rebinding page cannot reach it under its own host name. A request
 * that can change state (any method but GET, HEAD and OPTIONS) must come
 * from the daemon's own origin or a configured one: a browser's Origin
 * header says where the calling page came from, and Sec-Fetch-Site says
 * whether it was cross-site when Origin is absent. Clients that are not
 * browsers send neither and pass. Pure functions; any thread.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The headers every HTTP response carries: no framing, no sniffing, and a
 * content policy that allows only the server's own scripts and styles. */
#define STG_HTTP_GUARD_CSP \
  "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; " \
  "form-action 'self'; frame-ancestors 'none'"

typedef struct
{
  const gchar *const *names;   /* (nullable) host names besides IPs and localhost; "*" is any */
  const gchar *const *origins; /* (nullable) extra origins allowed to change state, e.g.
                                * "https://ops.example.com" */
  gboolean tls;                /* the server's own origin is https:// */
} StgHttpGuard;

/* Checks @host (the Host header, nullable: HTTP/1.0 clients may omit it)
 * against the names @guard accepts. */
gboolean stg_http_guard_host (const StgHttpGuard *guard, const gchar *host, GError **error);

/* Checks that a @method request with @origin and @fetch_site (the Origin
 * and Sec-Fetch-Site headers, each nullable) may change state: safe
 * methods always pass; otherwise the origin must be the server's own
 * (scheme and @host) or one of @guard's. */
gboolean stg_http_guard_origin (const StgHttpGuard *guard, const gchar *method, const gchar *host,
                                const gchar *origin, const gchar *fetch_site, GError **error);

G_END_DECLS
