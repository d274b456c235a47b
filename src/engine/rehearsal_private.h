/* rehearsal_private.h: the rehearsal of an update (rehearsal.c), which
 * control.c attaches to the diff it answers getJobUpdateDiff with. */
#pragma once

#include "engine/settings_private.h"

G_BEGIN_DECLS

/* The batches moving job @key (nullable: a new job) by @diff under @s
 * (its percents resolved) would run, and their predicted times from the
 * job's last finished update. Reads the store; starts nothing. */
ApiUpdateRehearsal *stg_rehearsal_build (StgEngine *engine, const ApiJobKey *key,
                                         const StgSettings *s, const StgDiff *diff);

/* Drops the measurements rehearsals keep per job (at the engine's end). */
void stg_rehearsal_forget (StgEngine *engine);

G_END_DECLS
