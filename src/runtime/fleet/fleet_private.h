/* fleet_private.h: what the fleet runtime's files share (fleet.c: slots
 * and the runtime's operations; fleet_container.c: container specs and
 * validation; fleet_sync.c: watching hosts and adoption;
 * fleet_health.c: the main container's checks; fleet_anchor.c,
 * fleet_pod.c, fleet_pod_spec.c and fleet_sidecar*.c: pods and their
 * sidecars). Not for use outside src/runtime/fleet/. Main-loop thread
 * only.
 */
#pragma once

#include <libsoup/soup.h>

#include "runtime/fleet/docker.h"
#include "runtime/executor.h"
#include "runtime/fleet/fleet.h"
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
/* A pod's containers: its anchor, the task's (main) and each sidecar's. */
#define STG_FLEET_LABEL_ROLE "org.stagger.role"         /* anchor, main, sidecar; none: no pod */
#define STG_FLEET_LABEL_SIDECAR "org.stagger.sidecar"   /* the sidecar set */
#define STG_FLEET_LABEL_SLOT "org.stagger.sidecar-slot" /* 1 or 2 (a cold sidecar: 1) */
#define STG_FLEET_LABEL_VERSION "org.stagger.sidecar-version" /* 0: the empty image */

/* Where each container of a pod finds the pod's shared volume (the
 * anchor's socket and its copy of stagger-anchor). */
#define STG_FLEET_POD_DIR "/.stagger"

/* Where an AuroraExecutor task's runner keeps its sandbox in a container
 * (Aurora's place for it): its state file and .logs/PROCESS/RUN/. */
#define STG_FLEET_SANDBOX "/mnt/mesos/sandbox"

/* The container id of a slot adopted while its host did not answer. */
#define STG_FLEET_UNKNOWN_CONTAINER "unknown"

typedef struct _StgFleetRuntime StgFleetRuntime;
typedef struct _Pod Pod; /* fleet_pod.c */
typedef struct _Box Box; /* fleet_sidecar_private.h: one sidecar of a pod */

/* Whether a host has the anchor image (fleet_anchor.c). */
typedef enum
{
  ANCHOR_UNKNOWN, /* not imported by this staggerd yet */
  ANCHOR_IMPORTING,
  ANCHOR_READY,
} AnchorState;

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
  AnchorState anchor;             /* the anchor image on this host */
  GPtrArray *anchor_waiting;      /* Slot*: pods waiting for it */
} Host;

/* What a slot is doing with its container: one state, changed only by
 * stg_fleet_set_state along these arrows (its table is fleet_slot.c's;
 * a change the table lacks aborts a build that checks invariants):
 *
 *   IDLE --[start, stg_fleet_create_main, stg_fleet_pod_start]--> STARTING
 *   IDLE --[stg_fleet_hook_start]--> HOOK
 *   IDLE --[stg_fleet_container_failed, stg_fleet_container_finished, an
 *            exit seen by fleet_sync.c]--> DEAD
 *   IDLE --[stop_remove, stg_fleet_pod_teardown: stg_fleet_begin_stop]--> STOPPING
 *   DEAD --[stop_remove: stg_fleet_begin_stop]--> STOPPING_DEAD
 *   STARTING, HOOK, STOPPING --[the call ended or failed: stg_fleet_settle]--> IDLE
 *   STOPPING_DEAD --[its stop got no answer: stg_fleet_settle]--> DEAD
 *   STOPPING, STOPPING_DEAD --[on_removed: the container is gone]--> IDLE
 *   any --[stg_fleet_slot_lost: its host is gone]--> IDLE
 */
typedef enum
{
  FLEET_IDLE,          /* nothing in flight: a container that serves, or none */
  FLEET_STARTING,      /* create (the image pulled first when the host lacks it), then start */
  FLEET_HOOK,          /* an update hook runs in the container */
  FLEET_DEAD,          /* the container ended or failed: to be removed, nothing in flight */
  FLEET_STOPPING,      /* stop, then remove, a live container */
  FLEET_STOPPING_DEAD, /* stop, then remove, a dead one */
} FleetState;

typedef struct _FleetHook FleetHook;

typedef struct _Slot Slot;

/* What the files below fleet.c, fleet_pod.c and fleet_sidecar.c call back
 * up for: fleet.c registers them (rt->calls) and fleet_slot.c and
 * fleet_box.c call through them, so no file calls one above it. */
typedef struct
{
  void (*drive) (Slot *slot);                                /* fleet.c: stg_fleet_drive */
  void (*container_failed) (Slot *slot, const gchar *why);   /* stg_fleet_container_failed */
  void (*container_finished) (Slot *slot, const gchar *why); /* stg_fleet_container_finished */
  void (*slot_lost) (Slot *slot);                            /* stg_fleet_slot_lost */
  void (*create_main) (Slot *slot);                          /* stg_fleet_create_main */
  void (*create_anchor) (Slot *slot); /* fleet_pod.c: the anchor image is on the host */
  void (*box_drive) (Box *box);       /* fleet_sidecar.c: stg_fleet_box_drive */
} FleetCalls;

struct _Slot
{
  StgSlot base; /* the instance: key, job, want, phase, failures... (slot.h) */
  StgFleetRuntime *rt;
  Host *host;                     /* NULL until placed */
  gchar *moving;                  /* (nullable) why it left its host, which broke its
                                   * config's constraints (stg_fleet_leave_broken):
                                   * Aurora's words and the host, until placed again */
  gboolean killing;               /* remove the slot once its container is gone */
  gboolean restart;               /* stop and start the same config */
  gboolean done;                  /* a non-service task ended well, or failed its last
                                   * allowed time (stg_fleet_runs_again): leave it */
  FleetState state;               /* what it does with its container; base.cancel cancels it */
  gint64 not_before_ms;           /* monotonic ms: a dead container's slot starts anew then */
  guint stop_timeout_secs;
  gint64 started_us;              /* when its container last started (monotonic) */
  gchar *container_id;            /* NULL: no container */
  gchar *stop_sent;               /* (nullable) the container a stop went to, its answer unknown */
  gint64 container_config;        /* the config the container runs */
  gboolean pulled;                /* this start pulled its image already */
  gchar *pulling;                 /* (nullable) the image being pulled */
  StgHealth *health;
  gboolean confirming; /* a failed check waits for the engine's word (fleet.c) */
  gboolean suspect;    /* checks failed while the engine answered: a second
                                   * round that passes none counts */
  guint retry_timer;
  FleetHook *hook;   /* (nullable) the hook in flight */
  gint64 post_from;  /* the config the container post_owed replaces (STAGGER_FROM_VERSION) */
  gint64 pre_passed; /* the config whose pre_update hook passed here */
  gint64 pre_failed; /* ... or failed (not run again until applied again) */
  Pod *pod;          /* (nullable) its containers are a pod: an anchor, the task's
                        (container_id) and its sidecars' */
  gboolean waits_sidecars; /* its main container is healthy, its pod's sidecars not yet */
};

struct _StgFleetRuntime
{
  StgRuntime base;
  const FleetCalls *calls;        /* fleet.c's, pods' and sidecars', for the files below */
  StgStore *store;                /* borrowed */
  StgClock *clock;                /* borrowed */
  StgFleetRuntimeOptions options; /* owned copy */
  gchar *marker;
  GPtrArray *hosts;               /* Host*, in name order */
  StgSlots *slots;                /* Slot*, by key */
  SoupSession *session;           /* HTTP health checks */
  guint poll_timer;
  gboolean holding;    /* requests to hosts wait: the lead is not proven */
  GBytes *anchor_tar;  /* (nullable) the anchor image as a tar archive */
  gchar *anchor_image; /* (nullable) its name:tag on the hosts */
  gchar *anchor_error; /* (nullable) why there is none: no pods then */
  gboolean anchor_warned; /* the log said so (once a pod was asked for) */
};

/* A pod's own (fleet_pod.c makes and frees it; drawn at its top). */
struct _Pod
{
  gchar *anchor_id;  /* (nullable) */
  gint64 started_us; /* when the anchor started (monotonic) */
  gboolean ready;    /* the anchor serves its socket */
  guint tries;
  GError *unready; /* (nullable) why the last readiness check failed */
  guint ready_timer;
  GPtrArray *boxes; /* Box*, by sidecar name */
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

/* ---- instances' output (fleet_logs.c) ----------------------------------------- */

/* StgRuntimeOps.read_log: the container's stdout or stderr, as its engine
 * keeps it, or, with a process, that AuroraExecutor process's file in the
 * sandbox inside the container. */
GBytes *stg_fleet_read_log (StgRuntime *base, gint64 job_id, gint32 instance,
                            const StgLogQuery *query, StgLogInfo *info, GError **error);

/* ---- watching hosts (fleet_sync.c) ------------------------------------------- */

/* StgRuntimeOps.reconcile: every host's containers listed now; with
 * @tasks, the hosts those slots are on. */
gboolean stg_fleet_reconcile (StgRuntime *base, gboolean implicit, GHashTable *tasks,
                              gchar **summary, GError **error);

/* ---- slots (fleet_slot.c; fleet.c behind FleetCalls) ------------------------ */

Host *stg_fleet_host (StgFleetRuntime *rt, const gchar *name);

/* The index of the host @slot would be placed on now, never @without
 * (nullable), nor an unreachable or draining host; -1 and *@why when
 * none fits. */
gint stg_fleet_choose_host (Slot *slot, Host *without, gchar **why);
void stg_fleet_set_host (Slot *slot, Host *host);

/* A slot about to start with no container on a host that breaks the
 * constraints of the config it is to run (they tightened since it was
 * placed), counting the job's other instances there, leaves it: TRUE when
 * it did (noted; it is then placed anew, PENDING with Aurora's words
 * while no host fits). */
gboolean stg_fleet_leave_broken (Slot *slot);

/* StgRuntimeOps.moves: the starts' judgement of stg_fleet_leave_broken,
 * made ahead for `stagger job diff`. */
GPtrArray *stg_fleet_moves (StgRuntime *base, gint64 job_id, const ApiTaskConfig *config,
                            const GArray *instances);

/* Moves the slot to state @to (FleetState's arrows). */
void stg_fleet_set_state (Slot *slot, FleetState to);

/* The engine call in flight ended (as it went, or not at all): STARTING,
 * HOOK and STOPPING become IDLE, STOPPING_DEAD becomes DEAD. */
void stg_fleet_settle (Slot *slot);

/* A stop, then a remove, of the slot's container begins: IDLE becomes
 * STOPPING, DEAD becomes STOPPING_DEAD. */
void stg_fleet_begin_stop (Slot *slot);

/* An engine call is in flight for the slot's container (STARTING, HOOK,
 * STOPPING, STOPPING_DEAD). */
gboolean stg_fleet_busy (const Slot *slot);

/* The slot's container ended or failed and is to be removed (DEAD,
 * STOPPING_DEAD). */
gboolean stg_fleet_dead (const Slot *slot);

/* The config a slot reports: its container's, else the one it is to run
 * (observe shows a change of either at once, not with the next phase). */
gint64 stg_fleet_shown_config (const Slot *slot);

/* Drives the slot again in @ms. */
void stg_fleet_retry_in (Slot *slot, guint ms);

/* Changes what observe reports, records a TaskEvent with @message, saves
 * the slot's facts and announces the change. */
void stg_fleet_set_phase (Slot *slot, StgTaskPhase phase, gint status, const gchar *message);

/* The slot's container is healthy: RUNNING, recorded with @message. */
void stg_fleet_healthy (Slot *slot, const gchar *message);

/* A non-service task's container exited with status 0: FINISHED, the
 * container removed, nothing started again until a new config is applied. */
void stg_fleet_container_finished (Slot *slot, const gchar *why);

/* Whether the slot starts again after a failure of config @config_id
 * (stg_slot_runs_again; a config that cannot be read: it does). */
gboolean stg_fleet_runs_again (Slot *slot, gint64 config_id);

/* The slot's container ended or failed (@why in words): counted, then
 * restarted after a back-off unless the slot goes away. */
void stg_fleet_container_failed (Slot *slot, const gchar *why);

/* The slot's host has not answered for the grace period: the slot is LOST
 * (a failure), forgets its container and host, and is placed anew. */
void stg_fleet_slot_lost (Slot *slot);

/* Moves the slot toward what it should run (one op at a time). */
void stg_fleet_drive (Slot *slot);

/* Starts health checks of the slot's container (fleet_health.c). */
void stg_fleet_watch (Slot *slot, gboolean already_healthy);

/* A sidecar of the pod began to serve: a slot waiting for its sidecars
 * may be healthy now (fleet_health.c). */
void stg_fleet_pod_sidecar_serves (Slot *slot);

/* The engine's word on a container whose health checks failed
 * (stg_fleet_confirm). */
typedef struct
{
  const gchar *container; /* the container asked about */
  const gchar *why;       /* how its checks failed */
  const gchar *excuse;    /* (nullable) why the failure does not count (the checks go on);
                           * NULL: it counts */
  gboolean suspect;       /* it runs and a round of checks failed: the next
                           * round that passes none counts */
} FleetCheckWord;

typedef void (*FleetConfirmFunc) (gpointer data, const FleetCheckWord *word);

/* Asks @host's engine about @container, whose checks failed (@why), and
 * calls @func with its word, unless @cancel was cancelled: no answer from
 * the engine either counts nothing (the host's grace period decides); a
 * container that runs gets a second round of checks unless @suspect (the
 * round before failed too); any other word counts. The main container and
 * each sidecar container are judged so (fleet_health.c). */
void stg_fleet_confirm (Host *host, const gchar *container, const gchar *why, gboolean suspect,
                        GCancellable *cancel, FleetConfirmFunc func, gpointer data);

/* StgHealthTarget.run_finish of shell checks run through the exec API
 * (fleet_health.c). */
gboolean stg_fleet_exec_check_finish (gpointer data, GAsyncResult *result, gint *status,
                                      GError **error);

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

/* A command run in a container with a time limit, through the engine's
 * exec, with @env (nullable) over the container's environment: @done
 * gets its exit code and output, or an error when it could not run or
 * ran out of time (G_IO_ERROR_TIMED_OUT); called once, never after
 * stg_fleet_exec_drop. */
typedef void (*StgFleetExecDone) (gpointer data, gint code, const gchar *output,
                                  const GError *error);
typedef struct _FleetExec FleetExec;
FleetExec *stg_fleet_exec (StgDocker *docker, const gchar *id, const gchar *const *argv,
                           const gchar *const *env, gdouble timeout_secs, StgFleetExecDone done,
                           gpointer data);
void stg_fleet_exec_drop (FleetExec *exec);

/* What an exec's outcome means, in words ("post_update hook exited with
 * status 1"), @name naming it. */
gchar *stg_fleet_exec_outcome (const gchar *name, gint code, const GError *error);

/* Runs @config_id's pre_update (@pre) or post_update hook in the slot's
 * container, with the environment a local hook gets (STAGGER_INSTANCE,
 * STAGGER_VERSION, STAGGER_HOOK, STAGGER_FROM_VERSION and
 * STAGGER_TO_VERSION: the versions moved from and to, on a rollback
 * too); FALSE when there is none to run (then nothing happened).
 * While it runs the slot is in state HOOK; when it ends the slot goes on
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

/* Creates the slot's main container (its run's, slot->container_config)
 * and starts it (fleet.c); a pod's once its anchor serves. */
void stg_fleet_create_main (Slot *slot);

/* A step of the slot's start failed (@what, with @error): retried when the
 * host did not answer, else the container failed (fleet.c). */
void stg_fleet_start_failed (Slot *slot, const gchar *what, const GError *error);

/* Ends a create call made for @slot and asks its engine to start the
 * container it made (@started gets the start's result, with @slot):
 * returns the new container's id (owned); NULL when the create failed
 * (@error set) or was cancelled (nothing set: touch nothing). */
gchar *stg_fleet_start_created (Slot *slot, GAsyncResult *result, GAsyncReadyCallback started,
                                GError **error);

/* Drives the slot again a little later (an engine call to try again). */
void stg_fleet_retry_later (Slot *slot);

/* The slot's named ports for @names (kept in the store, handed out once
 * from the port range), name -> port (fleet_container.c). */
GHashTable *stg_fleet_slot_ports (Slot *slot, gchar **names, GError **error);

/* "PORT_NAME" for port @name (fleet_container.c). */
gchar *stg_fleet_port_var (const gchar *name);

/* Adds member @name with string @value to the object @b builds. */
void stg_fleet_json_string (JsonBuilder *b, const gchar *name, const gchar *value);

/* Adds the labels every container of run @run_id of @slot has (marker,
 * job, instance, run) to the object @b builds. */
void stg_fleet_base_labels (JsonBuilder *b, Slot *slot, gint64 run_id);

/* The value of the last docker parameter @name of @config's container, or
 * NULL (fleet_container.c). */
const gchar *stg_fleet_parameter (const ApiTaskConfig *config, const gchar *name);

/* Whether sidecar set @set selects @job (fleet_container.c). */
gboolean stg_fleet_set_selects (const StgSidecarSetRow *set, const ApiJobKey *job);

/* The name of a port both @sidecar and @task_ports name, or NULL
 * (fleet_container.c). */
const gchar *stg_fleet_shared_port (const ApiSidecar *sidecar, gchar **task_ports);

/* Network mode, volumes and the like of the main container of a pod, added
 * to the HostConfig @b builds (fleet_container.c). */
void stg_fleet_pod_main_host_config (Slot *slot, JsonBuilder *b);

/* ---- the anchor image (fleet_anchor.c) ----------------------------------------- */

/* Reads stagger-anchor at @path and makes the anchor image of it (a tar
 * of the one program) for the hosts; on failure pods are refused, saying
 * why and how to give staggerd one (rt->anchor_error), but not yet: a
 * staggerd that makes no pod does not need it. */
void stg_fleet_anchor_load (StgFleetRuntime *rt, const gchar *path);

/* A pod was asked for (@what, in words) with no anchor image: warns, the
 * first time, and returns why there is none and what to do
 * (rt->anchor_error). */
const gchar *stg_fleet_anchor_missing (StgFleetRuntime *rt, const gchar *what);

/* Calls stg_fleet_pod_create_anchor (@slot) once the slot's host has the
 * anchor image (imported on first use); FALSE when it cannot have it
 * (then the start failed, said so). */
void stg_fleet_anchor_ensure (Slot *slot);

/* The host lost the image (a create found none): imported again next time. */
void stg_fleet_anchor_lost (Host *host);

/* @slot no longer waits for its host's import (it is being freed). */
void stg_fleet_anchor_forget (Slot *slot);

/* ---- pods (fleet_pod.c) -------------------------------------------------------- */

/* Whether the slot's next run is a pod (a sidecar set selects its job and
 * pods can be made); makes its Pod and its sidecars' boxes then. */
gboolean stg_fleet_pod_plan (Slot *slot);

/* Starts the slot's pod: the anchor (image imported first when needed),
 * then the main container once the anchor serves (state STARTING). */
void stg_fleet_pod_start (Slot *slot);

/* The anchor image is on the slot's host: creates and starts the anchor. */
void stg_fleet_pod_create_anchor (Slot *slot);

/* The pod's main container started: its sidecars start. */
void stg_fleet_pod_main_started (Slot *slot);

/* Takes the pod apart, sidecars first, then (the caller) the main
 * container, then the anchor: TRUE while something is still in the way of
 * the caller (a sidecar's containers being removed, or, without a main
 * container, the anchor being removed, state STOPPING). FALSE once
 * only the main container is left, or nothing (the pod is freed then). */
gboolean stg_fleet_pod_teardown (Slot *slot);

/* Forgets the pod (its host is lost, or the slot freed): no engine call. */
void stg_fleet_pod_drop (Slot *slot);

/* Sees that the pod's containers listed on its host (@by_id: Id ->
 * JsonObject*, from a listing sent at @sent_us) are running: a gone anchor
 * fails the slot, a gone sidecar container fails that sidecar. */
void stg_fleet_pod_check (Slot *slot, GHashTable *by_id, gint64 sent_us);

/* Adoption: container @c (role anchor or sidecar) of @slot's current run. */
void stg_fleet_pod_adopt_member (Slot *slot, JsonObject *c);

/* Adoption: the slot's main container (role main) is its pod's. */
void stg_fleet_pod_adopt_main (Slot *slot);

/* Adoption is over: checks the pod found for @slot against the store's
 * facts of its sidecars (@rows: StgPodSidecarRow), and drives it. */
void stg_fleet_pod_adopted (Slot *slot, GArray *rows);



/* ---- container specs of a pod (fleet_pod_spec.c) ------------------------------- */

/* The create request of @slot's anchor, and the container's name. */
JsonNode *stg_fleet_anchor_spec (Slot *slot, gchar **name, GError **error);

/* One container of a sidecar in a pod, as a create request makes it. */
typedef struct
{
  const gchar *set;            /* the sidecar set's name */
  const ApiSidecar *sidecar;   /* (nullable: the empty image) the version's sidecar */
  const StgExecutorSpec *spec; /* (nullable: the empty image) its executor data, parsed */
  gboolean hot;                /* the sidecar has two slots */
  gboolean activation;         /* the anchor holds its ports' sockets */
  guint index;                 /* its slot: 0 (NAME-1, or NAME), 1 (NAME-2) */
  gint version;                /* what it runs; 0: the empty image */
  gint alt;                    /* what the other slot runs (or the serving one, for the
                                 new version: STAGGER_VERSION_ALT) */
} StgFleetMember;

/* The create request of @member of @slot's pod, and the container's name. */
JsonNode *stg_fleet_member_spec (Slot *slot, const StgFleetMember *member, gchar **name,
                                 GError **error);

/* The pod's named ports (the task's, its sidecars', their probes'): name ->
 * port, or NULL with @error. */
GHashTable *stg_fleet_pod_ports (Slot *slot, GError **error);

/* ---- sidecars in pods (fleet_sidecar*.c) ---------------------------------------- */

/* A box for sidecar @name of the slot's pod, asked to run @version. */
Box *stg_fleet_box_new (Slot *slot, const gchar *name, gint version);
void stg_fleet_box_free (Box *box);

/* The box's sidecar set. */
const gchar *stg_fleet_box_name (const Box *box);

/* Every named port the box needs in the pod (its sidecar's, its probes'),
 * NULL-terminated. */
gchar **stg_fleet_box_port_names (const Box *box);

/* The ports whose listening sockets the anchor holds for the box (its
 * sidecar's, when socket-activated), NULL-terminated (NULL: none). */
const gchar *const *stg_fleet_box_held_ports (const Box *box);

/* The box's phase as the sidecar's observation shows it: RUNNING when it
 * serves the version asked for, healthy; FAILED while it waits out a
 * back-off; PENDING with no container; else STARTING. */
StgTaskPhase stg_fleet_box_phase (const Box *box);

/* The name of the port of @set's probe socket in slot @index. */
gchar *stg_fleet_probe_port_name (const gchar *set, guint index);

/* The pod's box of sidecar @name, or NULL. */
Box *stg_fleet_pod_box (Slot *slot, const gchar *name);

/* Whether every sidecar of the pod serves the version it is asked for. */
gboolean stg_fleet_pod_serving (Slot *slot);

/* Records what the box is asked to run and which of its slots serves. */
void stg_fleet_box_save (Box *box);

/* Moves the box toward what it should run (one engine call at a time):
 * fleet_sidecar.c's stg_fleet_sidecar_drive, through FleetCalls. */
void stg_fleet_box_drive (Box *box);
void stg_fleet_sidecar_drive (Box *box);

/* The pod goes: the box removes its containers; TRUE while it still has
 * some (it drives the slot again once they are gone). */
gboolean stg_fleet_box_clear (Box *box);

/* Checks the box's containers in a listing (see stg_fleet_pod_check). */
void stg_fleet_box_check (Box *box, GHashTable *by_id, gint64 sent_us);

/* Adoption: container @c is member (label slot) of the box. */
void stg_fleet_box_adopt_member (Box *box, JsonObject *c);

/* Adoption is over: @row (nullable) is what the store knows of the box. */
void stg_fleet_box_adopted (Box *box, const StgPodSidecarRow *row);

/* StgRuntimeOps.sidecar_validate, .sidecars and .sidecar_apply. */
gboolean stg_fleet_sidecar_validate (StgRuntime *base, const gchar *name, const ApiSidecar *sidecar,
                                     const ApiSidecar *previous, GError **error);
GArray *stg_fleet_sidecars (StgRuntime *base, const gchar *name);
gboolean stg_fleet_sidecar_apply (StgRuntime *base, gint64 job_id, gint32 instance,
                                  const gchar *name, gint version, GError **error);

G_END_DECLS
