/* notice_private.h: the state changes the engine tells its notifier
 * (notice.c): queued inside a step, handed over before its commit, sent
 * once it is committed. Not for use outside src/engine/. Main-loop thread
 * only.
 */
#pragma once

#include "engine/engine.h"

/* Tells the notifier of @notice in the step's transaction, before its
 * commit (at once outside a step). */
void stg_engine_notice (StgEngine *engine, const StgNotice *notice);

/* An update's move to @status from @previous (-1: it was just started). */
void stg_engine_notice_update (StgEngine *engine, const gchar *uid, const ApiJobKey *job,
                               gint status, gint previous, const gchar *user, const gchar *message);

/* The step's notices, in order, to the notifier: inside its transaction,
 * once the rest of it is written and before the commit. */
void stg_engine_notices_keep (StgEngine *engine);

/* The step ended: the notifier sends its notices when @committed, else
 * forgets them (those not handed over are dropped). */
void stg_engine_notices_end (StgEngine *engine, gboolean committed);
