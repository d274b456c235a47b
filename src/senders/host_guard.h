/* host_guard.h: a StgHostPolicy applied to the connections of one libsoup
 * request that staggerd makes itself (an HTTP gate, a webhook): each
 * connection, the first or one a redirect needs, is judged by the address
 * it is about to connect to (what its host name resolved to) and closed
 * before a byte goes out when the policy refuses it. Main-loop thread
 * only.
 */
#pragma once

#include <libsoup/soup.h>

#include "common/host_policy.h"

G_BEGIN_DECLS

typedef struct _StgHostGuard StgHostGuard;

/* Watches @msg's connections (@msg and @policy referenced). */
StgHostGuard *stg_host_guard_new (SoupMessage *msg, StgHostPolicy *policy);
void stg_host_guard_free (StgHostGuard *guard);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (StgHostGuard, stg_host_guard_free)

/* Why a connection was refused ("refused: ..."), or NULL when none was. */
const gchar *stg_host_guard_refused (const StgHostGuard *guard);

G_END_DECLS
