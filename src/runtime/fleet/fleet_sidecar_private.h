/* fleet_sidecar_private.h: what the files of a pod's sidecars share
 * (fleet_box.c: the box, its versions, records and failures;
 * fleet_sidecar.c: driving it;
 * fleet_sidecar_members.c: its containers on the host;
 * fleet_sidecar_health.c: their checks and the hand-over;
 * fleet_sidecar_ops.c: the runtime's operations on sidecars). Not for use
 * outside src/runtime/fleet/fleet_box.c and fleet_sidecar*.c. Main-loop thread only.
 */
#pragma once

#include "runtime/fleet/fleet_private.h"

G_BEGIN_DECLS

/* One container slot of a box. */
typedef struct
{
  gchar *id;         /* (nullable) its container */
  gint version;      /* what it runs; 0: the empty image */
  gint from;         /* the version serving when it was made (0: none) */
  gint64 started_us; /* when it started (monotonic); 0: not started */
  gboolean healthy;  /* its checks passed, and its hook when it took over */
  gboolean dead;     /* exited or failed: to be removed */
  gboolean suspect;  /* a round of its checks failed while it ran: the next
                      * round that passes none fails it (stg_fleet_confirm) */
} Member;

struct _Box
{
  Slot *slot;
  gchar *name;
  gint known; /* the version hot, activation and ports were read from; 0: none */
  gboolean hot;
  gboolean activation;
  gchar **ports; /* its sidecar's named ports (and its probes') */
  gchar **held;  /* those the anchor holds; NULL: none */
  Member m[2];
  gint want;        /* the version asked for; 0: leaving the pod */
  gint serving;     /* the member serving; -1: none */
  guint32 failures; /* failed starts of @want */
  gint backoff_ms;
  gint64 not_before_ms; /* monotonic */
  gchar *cause;
  gboolean clearing; /* the pod goes */
  gboolean busy;     /* an engine call in flight ... */
  guint calling;     /* ... about this member */
  gboolean pulled;   /* the image of the member being made was pulled already */
  StgHealth *health;
  gint watched;    /* the member @health checks (NULL while the engine is
                    * asked about its failed checks); -1 */
  FleetExec *hook; /* the migration hook in flight */
  gint hook_member;
  guint retry_timer;
  GCancellable *cancel; /* cancelled when the box is freed */
};

/* ---- the box (fleet_box.c) ------------------------------------------------------- */

/* @sidecar's executor data, parsed with its ports. */
StgExecutorSpec *stg_fleet_box_parse (const ApiSidecar *sidecar, GError **error);

/* Version @version of the box's sidecar and its executor data parsed. */
gboolean stg_fleet_box_load (Box *box, gint version, ApiSidecar **sidecar, StgExecutorSpec **spec,
                             GError **error);

/* Records @format as an event of the instance, about the sidecar. */
void stg_fleet_box_note (Box *box, const gchar *format, ...) G_GNUC_PRINTF (2, 3);

/* Why the box does not serve what it is asked to (NULL: nothing to say). */
void stg_fleet_box_set_cause (Box *box, const gchar *why);

/* The engine hears of it (runtime.h's listener). */
void stg_fleet_box_changed (Box *box);

/* The name of member @k's container slot (NAME, NAME-1, NAME-2), in @buf. */
const gchar *stg_fleet_box_slot_label (const Box *box, guint k, gchar buf[64]);

/* Reads what version @version of the box's sidecar is (hot, socket
 * activation, its ports) unless known already; FALSE with @error when it
 * cannot be read. */
gboolean stg_fleet_box_learn (Box *box, gint version, GError **error);

/* No migration hook in flight. */
void stg_fleet_box_drop_hook (Box *box);

/* No health checks in flight. */
void stg_fleet_box_stop_watching (Box *box);

/* No health checks and no migration hook of member @k in flight. */
void stg_fleet_box_unwatch (Box *box, guint k);

/* Member @k failed (@why): a real version's failure is counted and waited
 * out; the slot that serves, when another, keeps serving. */
void stg_fleet_box_member_failed (Box *box, guint k, const gchar *why);

/* Drives the box again in @ms. */
void stg_fleet_box_retry_in (Box *box, gint ms);

/* ---- its containers (fleet_sidecar_members.c) ------------------------------------ */

/* Creates and starts member @k running @version (0: the empty image). */
void stg_fleet_box_create_member (Box *box, guint k, gint version);

/* Stops member @k (its version's stop timeout: it finishes what it has)
 * and removes it. */
void stg_fleet_box_remove_member (Box *box, guint k);

/* ---- checks and hand-over (fleet_sidecar_health.c) ------------------------------- */

/* Checks member @k (@healthy: known healthy already, e.g. adopted); once
 * healthy, a member that is not serving takes over. */
void stg_fleet_box_watch (Box *box, guint k, gboolean healthy);

G_END_DECLS
