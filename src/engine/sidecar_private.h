/* sidecar_private.h: what the files of the sidecar sets' updates
 * (sidecar.c, sidecar_calls.c) offer each other and engine.c. Not for use
 * outside src/engine/. Main-loop thread only.
 */
#pragma once

#include "engine/engine.h"

/* Looks at the sidecar sets' updates on the next loop iteration (news of a
 * slot, a call, recovery). */
void stg_sidecars_news (StgEngine *engine);

/* Cancels the next look. */
void stg_sidecars_free (StgEngine *engine);

/* TRUE for the statuses of an update that goes, or went, back. */
gboolean stg_sidecar_status_goes_back (gint status);

/* Moves @row's update to @to (checked against the machine), saving the row
 * and an event (inside a transaction). */
gboolean stg_sidecar_transition (StgEngine *engine, StgSidecarSetRow *row, gint to,
                                 const gchar *user, const gchar *message, GError **error);

/* Starts the update of @row to its new @version, from the version new
 * pods get now (inside a transaction). */
gboolean stg_sidecar_begin (StgEngine *engine, StgSidecarSetRow *row, gint version,
                            const gchar *user, const gchar *message, GError **error);

/* What the runtime sees of the instances carrying sidecar @name (empty
 * without a runtime that runs pods). */
GArray *stg_sidecar_observe (StgEngine *engine, const gchar *name);

/* How many of a set's newest events its details show. */
guint stg_sidecar_events_shown (void);
