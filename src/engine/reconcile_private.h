/* reconcile_private.h: what reconcile.c, the runtime's reconciliation in
 * batches, offers engine.c. Not for use outside src/engine/. Main-loop
 * thread only.
 */
#pragma once

#include "engine/engine_private.h"

/* Drops the batches not yet reconciled (at engine free). */
void stg_reconcile_free (StgEngine *engine);
