/* fleet_private.h: what the fleet runtime's files share (fleet.c: slots
 * and the runtime's operations; fleet_container.c: container specs and
 * validation; fleet_sync.c: watching hosts and adoption). Not for use
 * outside src/runtime/fleet*.c. Main-loop thread only.
 */
#pragma once

#include <libsoup/soup.h>

#include "runtime/docker.h"
#include "runtime/executor.h"
#include "runtime/fleet.h"
#include "runtime/health.h"
#include "runtime/slot.h"
#include "runtime/spec_cache.h"

G_BEGIN_DECLS

/* Container labels. */
#define STG_FLEET_LABEL_MARKER "org.stagger.marker"   /* this data directory's marker */
#define STG_FLEET_LABEL_JOB_ID "org.stagger.job-id"
#define STG_FLEET_LABEL_JOB "org.stagger.job"         /* role/environment/name */
#define STG_FLEET_LABEL_INSTANCE "org.stagger.instance"
#define STG_FLEET_LABEL_RUN "org.stagger.run"
#define STG_FLEET_LABEL_CONFIG_ID "org.stagger.config-id"
#define STG_FLEET_LABEL_CONFIG "org.stagger.config"   /* the config's canonical hash */
#define STG_FLEET_LABEL_EPOCH "org.stagger.epoch"     /* the leader's epoch that created it */

/* The container id of a slot adopted while its host did not answer. */
#define STG_FLEET_UNKNOWN_CONTAINER "unknown"

typedef struct _StgFleetRuntime StgFleetRuntime;

typedef struct
{
  StgFleetRuntime *rt;
  const StgFleetHostConfig *config; /* borrowed from rt->options */
  StgDocker *docker;
  gboolean reachable;
  gint64 unreachable_since_ms;
  gchar *last_error;
  guint failed_lists;             /* listings in a row that got no answer */
  gboolean draining;
  gboolean reconciling;           /* answers again: nothing placed until its strays are gone */
  GHashTable *removing;           /* ids of the strays being removed */
  gboolean listing;               /* a poll is in flight */
  gint64 list_sent_us;            /* when it was sent (monotonic) */
  GCancellable *cancel;
  guint slots;                    /* slots placed here */
} Host;

/* What the slot is doing with its container. */
typedef enum
{
  OP_IDLE,
  OP_STOPPING, /* stop, then remove */
  OP_STARTING, /* create (the image pulled first when the host lacks it), then start */
  OP_HOOK,     /* an update hook runs in the container */
} SlotOp;

typedef struct _FleetHook FleetHook;

typedef struct
{
  StgSlot base; /* the instance: key, job, want, phase, failures... (slot.h) */
  StgFleetRuntime *rt;
  Host *host;                     /* NULL until placed */
  gboolean killing;               /* remove the slot once its container is gone */
  gboolean restart;               /* stop and start the same config */
  gboolean finished;              /* a non-service task ended well: leave it */
  gboolean dead;                  /* the container failed: remove it, start anew after not_before_ms */
  gint64 not_before_ms;           /* monotonic ms */
  guint stop_timeout_secs;
  gint64 started_us;              /* when its container last started (monotonic) */
  gchar *container_id;            /* NULL: no container */
  gchar *stop_sent;               /* (nullable) the container a stop went to, its answer unknown */
  gint64 container_config;        /* the config the container runs */
  SlotOp op;                      /* what it does with its container; base.cancel cancels it */
  gboolean pulled;                /* this start pulled its image already */
  gchar *pulling;                 /* (nullable) the image being pulled */
  StgHealth *health;
  gboolean confirming; /* a failed check waits for the engine's word (fleet.c) */
  gboolean suspect;    /* checks failed while the engine answered: a second
                                   * failure in a row counts */
  guint retry_timer;
  FleetHook *hook;   /* (nullable) the hook in flight */
  gint64 pre_passed; /* the config whose pre_update hook passed here */
  gint64 pre_failed; /* ... or failed (not run again until applied again) */
} Slot;

struct _StgFleetRuntime
{
  StgRuntime base;
  StgStore *store;                /* borrowed */
  StgClock *clock;                /* borrowed */
  StgFleetRuntimeOptions options; /* owned copy */
  gchar *marker;
  GPtrArray *hosts;               /* Host*, in name order */
  StgSlots *slots;                /* Slot*, by key */
  SoupSession *session;           /* HTTP health checks */
  guint poll_timer;
  gboolean holding; /* requests to hosts wait: the lead is not proven */
};

/* ---- hosts seen from the API, and draining (fleet_drain.c) ------------------- */

/* StgRuntimeOps.hosts and .drain_host. */
GPtrArray *stg_fleet_hosts (StgRuntime *base);
gboolean stg_fleet_drain_host (StgRuntime *base, const gchar *name, gboolean drain, GError **error);

/* Marks the hosts the store says are drained. */
gboolean stg_fleet_load_drained (StgFleetRuntime *rt, GError **error);

/* A slot about to start with no container on a drained host leaves it:
 * TRUE when it did (it is then placed anew). */
gboolean stg_fleet_leave_drained (Slot *slot);

/* ---- watching hosts (fleet_sync.c) ------------------------------------------- */

/* StgRuntimeOps.reconcile: every host's containers listed now. */
gboolean stg_fleet_reconcile (StgRuntime *base, gboolean implicit, gchar **summary, GError **error);

/* ---- slots (fleet.c) --------------------------------------------------------- */

Host *stg_fleet_host (StgFleetRuntime *rt, const gchar *name);

/* The index of the host @slot would be placed on now, never @without
 * (nullable), nor an unreachable or draining host; -1 and *@why when
 * none fits. */
gint stg_fleet_choose_host (Slot *slot, Host *without, gchar **why);
void stg_fleet_set_host (Slot *slot, Host *host);

/* Changes what observe reports, records a TaskEvent with @message, saves
 * the slot's facts and announces the change. */
void stg_fleet_set_phase (Slot *slot, StgTaskPhase phase, gint status, const gchar *message);

/* The slot's container is healthy: RUNNING, recorded with @message. */
void stg_fleet_healthy (Slot *slot, const gchar *message);

/* A non-service task's container exited with status 0: FINISHED, the
 * container removed, nothing started again until a new config is applied. */
void stg_fleet_container_finished (Slot *slot, const gchar *why);

/* The slot's container ended or failed (@why in words): counted, then
 * restarted after a back-off unless the slot goes away. */
void stg_fleet_container_failed (Slot *slot, const gchar *why);

/* The slot's host has not answered for the grace period: the slot is LOST
 * (a failure), forgets its container and host, and is placed anew. */
void stg_fleet_slot_lost (Slot *slot);

/* Moves the slot toward what it should run (one op at a time). */
void stg_fleet_drive (Slot *slot);

/* Starts health checks of the slot's container. */
void stg_fleet_watch (Slot *slot, gboolean already_healthy);

/* ---- containers (fleet_container.c) -------------------------------------- */

/* The create request for @slot running @config_id as run @run_id, and the
 * container's name. */
JsonNode *stg_fleet_container_spec (Slot *slot, gint64 config_id, gint64 run_id, gchar **name,
                                    GError **error);

/* @config_id's pre_update (or, !@pre, post_update) hook as the argv to
 * exec in @slot's container (templates expanded), and its timeout; NULL
 * without @error when the config has no such hook. */
gchar **stg_fleet_hook_argv (Slot *slot, gint64 config_id, gboolean pre, gdouble *timeout_secs,
                             GError **error);

/* ---- update hooks in containers (fleet_hooks.c) ----------------------------- */

/* Runs @config_id's pre_update (@pre) or post_update hook in the slot's
 * container; FALSE when there is none to run (then nothing happened).
 * While it runs the slot's op is OP_HOOK; when it ends the slot goes on
 * (pre: replaced, or left running with the failure counted; post: RUNNING,
 * or failed). */
gboolean stg_fleet_hook_start (Slot *slot, gint64 config_id, gboolean pre);

/* Forgets the hook in flight (the slot is being freed or loses its
 * container). */
void stg_fleet_hook_drop (Slot *slot);

/* What the health checks of @slot's container running @config_id need:
 * its parsed spec, the URL of its HTTP checks and its shell check's
 * command, templates filled in (*@url, *@command: owned, NULL when it has
 * none). NULL with @error when the config cannot be read. */
StgTaskSpec *stg_fleet_health_parts (Slot *slot, gint64 config_id, gchar **url, gchar **command,
                                     GError **error);

/* The runtime's validate(). */
gboolean stg_fleet_validate (StgRuntime *base, const ApiTaskConfig *config, GError **error);

G_END_DECLS
