/*
 * stagger.thrift: Stagger's RPC interface.
 *
 * The job and job-update part is wire-compatible with Apache Aurora's scheduler API: every
 * struct, enum, service and method below keeps Aurora's name, field ids, types, enum values and
 * argument ids, so a client generated from Aurora's own IDL talks to staggerd unchanged.
 * Fields and calls Stagger has no use for are left out (never renumbered); readers skip them.
 * Stagger's own additions use field ids from 100 up, or methods of StaggerScheduler.
 *
 * Generated C lands in the build tree (src/gen/), prefixed Api/api_.
 */

namespace c_glib Api
namespace py stagger.api

/* Outcome of a call. A result accompanies OK only. */
enum ResponseCode {
  INVALID_REQUEST    = 0,
  OK                 = 1,
  ERROR              = 2,
  WARNING            = 3,
  AUTH_FAILED        = 4,
  JOB_UPDATING_ERROR = 5,
  ERROR_TRANSIENT    = 6
}

/* Kept for compatibility: the user part of the job owner. */
struct Identity {
  2: string user
}

/* Free-form key/value pairs attached to tasks and updates. */
struct Metadata {
  1: string key
  2: string value
}

/* Names a job: role (the account), environment, name. The cluster is not part of it: a
 * client checks it against ServerInfo.clusterName. */
struct JobKey {
  1: string role
  2: string environment
  3: string name
}

/* One instance of a job. */
struct InstanceKey {
  1: JobKey jobKey
  2: i32 instanceId
}

/* A file Mesos' fetcher would download into the sandbox; Stagger fetches nothing and refuses a
 * task that asks for one (kept so Aurora's clients can say it). */
struct MesosFetcherURI {
  1: string value
  2: optional bool extract
  3: optional bool cache
  4: optional string outputFile
}

/* What runs inside a task. Stagger's local runtime reads name "stagger" with JSON data. */
struct ExecutorConfig {
  1: string name
  2: string data
}

/* A host must carry one of these values of an attribute (or none of them, negated). */
struct ValueConstraint {
  1: bool negated
  2: set<string> values
}

/* At most this many active instances of the job per value of an attribute ("host": per host). */
struct LimitConstraint {
  1: i32 limit
}

/* Exactly one member is set. */
union TaskConstraint {
  1: ValueConstraint value
  2: LimitConstraint limit
}

/* Where a task may be placed: a constraint on the host attribute @name ("host" is the host's
 * own name). */
struct Constraint {
  1: string name
  2: TaskConstraint constraint
}

/* Access mode of a volume. */
enum Mode {
  RW = 1
  RO = 2
}

/* A host path mounted into a container. */
struct Volume {
  1: string containerPath
  2: string hostPath
  3: Mode mode
}

/* Images of Mesos' unified containerizer; kept for Aurora compatibility, never run. */
struct DockerImage {
  1: string name
  2: string tag
}

struct AppcImage {
  1: string name
  2: string imageId
}

union Image {
  1: DockerImage docker
  2: AppcImage appc
}

struct MesosContainer {
  1: optional Image image
  2: optional list<Volume> volumes
}

/* A parameter of the Docker engine for the container (e.g. name "env", value "A=1"). */
struct DockerParameter {
  1: string name
  2: string value
}

/* The container image a task runs in the fleet runtime. */
struct DockerContainer {
  1: string image
  2: optional list<DockerParameter> parameters
}

/* Exactly one member is set; the fleet runtime runs docker ones. */
union Container {
  1: MesosContainer mesos
  2: DockerContainer docker
}

/* One resource a task asks for; exactly one member is set. Stagger schedules no GPUs: a task
 * asking for numGpus is refused. */
union Resource {
  1: double numCpus
  2: i64 ramMb
  3: i64 diskMb
  4: string namedPort
  5: i64 numGpus
}

/* What to do with the tasks of a host that cannot be reached. Stagger counts them failed and
 * starts them again at once: reschedule true with no delay is accepted, anything else refused. */
struct PartitionPolicy {
  1: bool reschedule
  2: optional i64 delaySecs
}

/* The job's SLA: this percentage of its instances RUNNING for durationSecs each. */
struct PercentageSlaPolicy {
  1: double percentage
  2: i64 durationSecs
}

/* The job's SLA: this many of its instances RUNNING for durationSecs each. */
struct CountSlaPolicy {
  1: i64 count
  2: i64 durationSecs
}

/* The job's SLA, decided by a coordinator: statusKey of its JSON answer says whether an
 * instance may go. */
struct CoordinatorSlaPolicy {
  1: string coordinatorUrl
  2: string statusKey
}

/* Exactly one member is set. Stored with the task; the SLA is not enforced yet. */
union SlaPolicy {
  1: PercentageSlaPolicy percentageSlaPolicy
  2: CountSlaPolicy countSlaPolicy
  3: CoordinatorSlaPolicy coordinatorSlaPolicy
}

/* The configuration every instance of a job runs. */
struct TaskConfig {
  28: JobKey job
  17: Identity owner
   7: bool isService
  11: i32 priority
  13: i32 maxTaskFailures
  /* Follows the tier (its preemptible and revocable are both false) when set; Aurora's clients
   * set both. */
  18: optional bool production
  /* One of getTierConfigs' tiers; unset: the default tier. */
  30: optional string tier
  32: set<Resource> resources
  22: optional map<string, string> taskLinks
  23: optional string contactEmail
  25: optional ExecutorConfig executorConfig
  27: optional set<Metadata> metadata
  /* Aurora's ids and types; optional here so that configs written without them keep their
   * canonical encoding (and hash). */
  20: optional set<Constraint> constraints
  29: optional Container container
  /* Refused when not empty. */
  33: optional set<MesosFetcherURI> mesosFetcherUris
  34: optional PartitionPolicy partitionPolicy
  35: optional SlaPolicy slaPolicy
}

/* Resources added up: one numCpus, one ramMb and one diskMb. */
struct ResourceAggregate {
  4: set<Resource> resources
}

/* Cron collision policies; Stagger runs no cron jobs but keeps the field's type. */
enum CronCollisionPolicy {
  KILL_EXISTING = 0,
  CANCEL_NEW    = 1,
  RUN_OVERLAP   = 2
}

/* A job: its key, its task configuration and how many instances run it (ids 0..N-1). */
struct JobConfiguration {
  9: JobKey key
  7: Identity owner
  4: optional string cronSchedule
  5: CronCollisionPolicy cronCollisionPolicy
  6: TaskConfig taskConfig
  8: i32 instanceCount
}

/* Task counts of a job by kind of state. */
struct JobStats {
  1: i32 activeTaskCount
  2: i32 finishedTaskCount
  3: i32 failedTaskCount
  4: i32 pendingTaskCount
}

struct JobSummary {
  1: JobConfiguration job
  2: JobStats stats
  3: optional i64 nextCronRunMs
}

/* Instance ids first..last, both included. */
struct Range {
  1: i32 first
  2: i32 last
}

/* The instances that run one configuration. */
struct ConfigGroup {
  1: TaskConfig config
  3: set<Range> instances
}

struct ConfigSummary {
  1: JobKey key
  2: set<ConfigGroup> groups
}

/* A job's task configuration as createJob would take it, with tier and production filled in. */
struct PopulateJobResult {
  2: TaskConfig taskConfig
}

/* A role's quota and what its jobs consume of it, split by production (the tier's) and by pool
 * (dedicated: a task with a "dedicated" constraint). Only production tasks of the shared pool
 * need quota. */
struct GetQuotaResult {
  1: ResourceAggregate quota
  2: optional ResourceAggregate prodSharedConsumption
  3: optional ResourceAggregate nonProdSharedConsumption
  4: optional ResourceAggregate prodDedicatedConsumption
  5: optional ResourceAggregate nonProdDedicatedConsumption
}

/* Life cycle of a task. Values are Aurora's, including states Stagger never enters. */
enum ScheduleStatus {
  INIT        = 11,
  THROTTLED   = 16,
  PENDING     = 0,
  ASSIGNED    = 9,
  STARTING    = 1,
  RUNNING     = 2,
  FINISHED    = 3,
  PREEMPTING  = 13,
  RESTARTING  = 12,
  DRAINING    = 17,
  FAILED      = 4,
  KILLED      = 5,
  KILLING     = 6,
  LOST        = 7,
  PARTITIONED = 18
}

/* A change of a task's status, with the time (ms since the epoch) and why. */
struct TaskEvent {
  1: i64 timestamp
  2: ScheduleStatus status
  3: optional string message
  4: optional string scheduler
}

/* A task placed on a host: its id, where, what it runs and on which ports. */
struct AssignedTask {
  1: string taskId
  2: string slaveId
  3: string slaveHost
  4: TaskConfig task
  5: map<string, i32> assignedPorts
  6: i32 instanceId
}

struct ScheduledTask {
  1: AssignedTask assignedTask
  2: ScheduleStatus status
  3: i32 failureCount
  6: i32 timesPartitioned
  4: list<TaskEvent> taskEvents
  5: string ancestorId
}

struct ScheduleStatusResult {
  1: list<ScheduledTask> tasks
}

struct GetJobsResult {
  1: set<JobConfiguration> configs
}

/* The jobs of a role (cron jobs: always 0, Stagger runs none). */
struct RoleSummary {
  1: string role
  2: i32 jobCount
  3: i32 cronJobCount
}

/* Why a PENDING task has not started, in words. */
struct PendingReason {
  1: string taskId
  2: string reason
}

/* A task filter; every term that is set must match. */
struct TaskQuery {
  14: optional string role
   9: optional string environment
   2: optional string jobName
   4: optional set<string> taskIds
   5: optional set<ScheduleStatus> statuses
   7: optional set<i32> instanceIds
  10: optional set<string> slaveHosts
  11: optional set<JobKey> jobKeys
  12: optional i32 offset
  13: optional i32 limit
}

/* Life cycle of a job update. */
enum JobUpdateStatus {
  ROLLING_FORWARD             = 0,
  ROLLING_BACK                = 1,
  ROLL_FORWARD_PAUSED         = 2,
  ROLL_BACK_PAUSED            = 3,
  ROLLED_FORWARD              = 4,
  ROLLED_BACK                 = 5,
  ABORTED                     = 6,
  ERROR                       = 7,
  FAILED                      = 8,
  ROLL_FORWARD_AWAITING_PULSE = 9,
  ROLL_BACK_AWAITING_PULSE    = 10
}

/* What an update did to one instance. */
enum JobUpdateAction {
  INSTANCE_UPDATED         = 1,
  INSTANCE_ROLLED_BACK     = 2,
  INSTANCE_UPDATING        = 3,
  INSTANCE_ROLLING_BACK    = 4,
  INSTANCE_UPDATE_FAILED   = 5,
  INSTANCE_ROLLBACK_FAILED = 6
}

/* Answer to pulseJobUpdate: the update is still active (OK) or has ended (FINISHED). */
enum JobUpdatePulseStatus {
  OK       = 1,
  FINISHED = 2
}

/* Names one update of one job. */
struct JobUpdateKey {
  1: JobKey job
  2: string id
}

/* Up to groupSize instances change at once; the next starts as soon as one finishes. */
struct QueueJobUpdateStrategy {
  1: i32 groupSize
}

/* Instances change in groups of groupSize; a group starts when the previous one is done. */
struct BatchJobUpdateStrategy {
  1: i32 groupSize
  2: bool autopauseAfterBatch
}

/* Like Batch, with the group sizes given in order and the last one repeated. */
struct VariableBatchJobUpdateStrategy {
  1: list<i32> groupSizes
  2: bool autopauseAfterBatch
}

union JobUpdateStrategy {
  1: QueueJobUpdateStrategy queueStrategy
  2: BatchJobUpdateStrategy batchStrategy
  3: VariableBatchJobUpdateStrategy varBatchStrategy
}

/* Stagger: a check that gates a rollout plan's stage, the batches of an update, or each of its
 * instances. An attempt must pass within timeoutSecs (default 30); a failed attempt is made again
 * up to retries times (default 0), retryIntervalSecs apart (default 10), or, with waitSecs, as
 * often as it takes until waitSecs have passed since the first attempt. */
enum RolloutGateKind {
  HTTP        = 1,   /* GET url: the answer's status is expectStatus (default 200) and, with
                        jsonPath, the JSONPath's first value (a number, or a string holding one)
                        stands in relation compare (<, <=, ==, !=, >=, >) to threshold */
  SHELL       = 2,   /* /bin/sh -c command on staggerd's host exits with status 0 */
  JOB_HEALTHY = 3    /* every instance of job is running and healthy */
}

struct RolloutGate {
  1: string name
  2: RolloutGateKind kind
  3: optional string url
  4: optional i32 expectStatus
  5: optional string jsonPath
  6: optional string compare
  7: optional double threshold
  8: optional string command
  9: optional JobKey job
  10: optional i32 timeoutSecs
  11: optional i32 retries
  12: optional i32 retryIntervalSecs
  /* Stagger: try again (retryIntervalSecs apart) until the gate passes or this long has passed
     since its first attempt (1-86400; retries is then ignored). */
  100: optional i32 waitSecs
}

/* How an update proceeds and when it gives up. */
struct JobUpdateSettings {
  /* Older form of the strategy: group size, with waitForBatchCompletion choosing Batch. */
  1: i32 updateGroupSize
  /* Failures one instance may have before it counts as failed. */
  2: i32 maxPerInstanceFailures
  /* Failed instances the update tolerates before it stops rolling forward. */
  3: i32 maxFailedInstances
  /* How long a changed instance must stay running and healthy before it counts (the watch). */
  5: i32 minWaitInInstanceRunningMs
  6: bool rollbackOnFailure
  /* Only these instances take part; all of them when unset. */
  7: set<Range> updateOnlyTheseInstances
  8: bool waitForBatchCompletion
  /* Coordinated update: progress only within this long after the last pulse. */
  9: optional i32 blockIfNoPulsesAfterMs
  10: optional bool slaAware
  11: optional JobUpdateStrategy updateStrategy

  /* Stagger: an instance not healthy this long after work on it began has failed (0 = off). */
  100: optional i64 maxInstanceStartMs
  /* Stagger: each completed batch multiplies the next batch size by this, rounded up. */
  101: optional double growthFactor
  /* Stagger: at least this many instances stay running and healthy at every moment. */
  102: optional i32 minInService
  /* Stagger: a fixed wait after each completed batch. */
  103: optional i64 pauseBetweenBatchesMs
  /* Stagger: restart the instances in scope that already run the update's config, batch by
     batch, as any other change (a rolling restart). */
  104: optional bool restartInstances
  /* Stagger: checks made after each batch but the last, in order, before the next batch
     starts (batch strategies only); one that fails fails the update, which then rolls back
     when rollbackOnFailure. */
  105: optional list<RolloutGate> batchGates
  /* Stagger: extra instances of the new config the update may run beyond the job's count
     (new instance slots with their own ports and sandboxes), so that minInService may equal
     the instance count; they go away as the update finishes, rolls back or ends. */
  110: optional i32 maxSurge
  /* Stagger: maxSurge as a percent of the instances the update touches, rounded up. */
  111: optional double maxSurgePercent
  /* Stagger: the largest batch a growthFactor may grow to (0 = no cap). */
  112: optional i32 maxBatchSize
  /* Stagger: maxFailedInstances as a percent of the instances the update touches, rounded
     down; give one or the other. */
  113: optional double maxFailedInstancesPercent
  /* Stagger: maxPerInstanceFailures as a percent of the instances the update touches,
     rounded down; give one or the other. */
  114: optional double maxPerInstanceFailuresPercent
  /* Stagger: an update still rolling forward this long after it started fails (and rolls
     back when rollbackOnFailure); 0 = no deadline. */
  115: optional i64 updateDeadlineMs
  /* Stagger: checks made before each instance changes, in order, in both directions (the
     runtime is told nothing until they pass), and after it has been healthy for the watch time
     (it counts as done only once they pass). An instance gate that fails (or does not pass
     within its waitSecs) is a failure of that instance, as a failed health check is: it counts
     toward maxPerInstanceFailures and maxFailedInstances. Shell gates get STAGGER_JOB,
     STAGGER_INSTANCE, STAGGER_FROM_VERSION, STAGGER_TO_VERSION, STAGGER_GATE_PHASE and
     STAGGER_DIRECTION; {{instance}} and {{ports[NAME]}} in a URL or command are the instance's.
     (ids 120-129 are this branch's) */
  120: optional list<RolloutGate> instanceGatesBefore
  121: optional list<RolloutGate> instanceGatesAfter
}

/* Stagger: one condition of an update, a rollout plan or a stage, as Kubernetes controllers
 * report them: type Progressing, Complete or Failed; status "True", "False" or "Unknown"; reason
 * a code from the documented list (stagger(1), CONDITIONS); lastTransitionTimeMs when status
 * last changed. */
struct Condition {
  1: string type
  2: string status
  3: string reason
  4: string message
  5: i64 lastTransitionTimeMs
}

/* A change of an update's status. */
struct JobUpdateEvent {
  1: JobUpdateStatus status
  2: i64 timestampMs
  3: optional string user
  4: optional string message
}

/* Something an update did to one instance. */
struct JobInstanceUpdateEvent {
  1: i32 instanceId
  2: i64 timestampMs
  3: JobUpdateAction action
  4: optional string message
}

/* A configuration and the instances that run it. */
struct InstanceTaskConfig {
  1: TaskConfig task
  2: set<Range> instances
}

struct JobUpdateState {
  1: JobUpdateStatus status
  2: i64 createdTimestampMs
  3: i64 lastModifiedTimestampMs
}

struct JobUpdateSummary {
  5: JobUpdateKey key
  3: string user
  4: JobUpdateState state
  6: optional set<Metadata> metadata
}

/* Where an update started from and where it goes. */
struct JobUpdateInstructions {
  1: set<InstanceTaskConfig> initialState
  2: InstanceTaskConfig desiredState
  3: JobUpdateSettings settings
}

struct JobUpdate {
  1: JobUpdateSummary summary
  2: JobUpdateInstructions instructions
}

struct JobUpdateDetails {
  1: JobUpdate update
  2: list<JobUpdateEvent> updateEvents
  3: list<JobInstanceUpdateEvent> instanceEvents
  /* Stagger: its conditions (Progressing, Complete, Failed). */
  100: optional list<Condition> conditions
}

/* Asks for a job to run taskConfig on instanceCount instances. */
struct JobUpdateRequest {
  1: TaskConfig taskConfig
  2: i32 instanceCount
  3: JobUpdateSettings settings
  4: optional set<Metadata> metadata
  /* Stagger: startJobUpdate refuses a job that an active rollout plan has yet to update (its
     stage has not started its update): the plan would then find the job elsewhere than where
     it was planned from. True starts the update anyway; the plan's stage fails if this update
     is still active when the plan gets there. Ignored in a rollout plan's stages. */
  100: optional bool overridePlan
}

/* An update filter; every term that is set must match. */
struct JobUpdateQuery {
  2: string role
  8: JobUpdateKey key
  3: JobKey jobKey
  4: string user
  5: set<JobUpdateStatus> updateStatuses
  6: i32 offset
  7: i32 limit
}

struct RoleSummaryResult {
  1: set<RoleSummary> summaries
}

struct JobSummaryResult {
  1: set<JobSummary> summaries
}

struct GetPendingReasonResult {
  1: set<PendingReason> reasons
}

struct ConfigSummaryResult {
  1: ConfigSummary summary
}

struct StartJobUpdateResult {
  1: JobUpdateKey key
  /* When refused because the job has an active update: that update. */
  2: optional JobUpdateSummary updateSummary
}

struct GetJobUpdateSummariesResult {
  1: list<JobUpdateSummary> updateSummaries
}

struct GetJobUpdateDetailsResult {
  1: JobUpdateDetails details
  2: list<JobUpdateDetails> detailsList
}

struct PulseJobUpdateResult {
  1: JobUpdatePulseStatus status
}

/* Stagger: an instance an update moves off its host, which breaks the
 * new config's constraints (one tightened), counting the job's other
 * instances there: it stops there and starts on a host that keeps them. */
struct InstanceMove {
  1: i32 instanceId
  2: string host               /* the host it leaves */
  3: string constraint         /* what it breaks there: "limit:host=2", "zone in {a}", "dedicated" */
  4: optional string toHost    /* where it would go now; unset: no host fits, it would wait PENDING */
}

/* Stagger: one batch of a rehearsed update (getJobUpdateDiff). */
struct RehearsalBatch {
  1: list<i32> instances      /* in the order they would start */
  2: i32 atOnce               /* how many would be down at once (minInService can hold it below the batch) */
  3: i64 limitMs              /* its slowest instance's expected start-to-healthy plus the watch time */
  4: i64 predictedMs          /* its expected time, overhead included; -1: not known (a queue's batches overlap) */
}

/* Stagger: what an update would do before it starts, and how long it would take, from the
 * start-to-healthy times measured in the job's last finished update. Nothing is started. */
struct UpdateRehearsal {
  1: list<RehearsalBatch> batches
  2: i64 limitMs              /* the sum of the batches' limits: no rollout in these batches is faster */
  3: i64 predictedMs          /* -1: nothing measured yet (no earlier update of the job finished) */
  4: string basis             /* where the numbers come from */
  5: list<string> notes       /* what the prediction leaves out: pauses until resumed, pulses, gates */
  6: string strategy          /* "batch", "queue" or "variable" */
  7: optional string measuredIn  /* the update whose times were used */
}

/* What an update would do, instance range by instance range. */
struct GetJobUpdateDiffResult {
  1: set<ConfigGroup> add
  2: set<ConfigGroup> remove
  3: set<ConfigGroup> update
  4: set<ConfigGroup> unchanged
  /* Stagger: the updated instances that move off their hosts (runtimes of several hosts). */
  100: optional list<InstanceMove> moves
  /* Stagger: the batches it would run and their predicted times (a rehearsal). */
  101: optional UpdateRehearsal rehearsal
}

/* A tier and its settings ("preemptible", "revocable": "true" or "false"). */
struct TierConfig {
  1: string name
  2: map<string, string> settings
}

struct GetTierConfigResult {
  1: string defaultTierName
  2: set<TierConfig> tiers
}

/* Backups the scheduler can recover from (listBackups): their ids, the file names in the backup
 * folder. */
struct ListBackupsResult {
  1: set<string> backups
}

/* A host's maintenance: NONE (in service), SCHEDULED (maintenance is coming; still in service),
 * DRAINING (nothing new is placed on it; its instances move off, or stop on the local host),
 * DRAINED (nothing of it runs). */
enum MaintenanceMode {
  NONE      = 1,
  SCHEDULED = 2,
  DRAINING  = 3,
  DRAINED   = 4
}

/* A host Stagger knows (the fleet runtime's, or the local host by its name) and its mode. */
struct HostStatus {
  1: string host
  2: MaintenanceMode mode
  100: optional string slaWait         /* a DRAINING host: why instances still wait for their
                                        * SLA before they leave (one line each) */
}

struct Hosts {
  1: set<string> hostNames
}

/* A drain as it was asked for: the policy for tasks that have none, and when it stops waiting
 * for their SLA (timeoutSecs after createdTimestampMs). */
struct HostMaintenanceRequest {
  1: string host
  2: SlaPolicy defaultSlaPolicy
  3: i64 timeoutSecs
  4: i64 createdTimestampMs
}

/* The hosts the maintenance calls changed or looked at (unknown hosts are left out). */
struct StartMaintenanceResult {
  1: set<HostStatus> statuses
}

struct DrainHostsResult {
  1: set<HostStatus> statuses
}

struct MaintenanceStatusResult {
  1: set<HostStatus> statuses
}

struct EndMaintenanceResult {
  1: set<HostStatus> statuses
}

/* How an explicit reconciliation goes: batchSize, when set, must be more than 0. */
struct ExplicitReconciliationSettings {
  1: optional i32 batchSize
}

/* The tasks of the staged backup a query matched (queryRecovery). */
struct QueryRecoveryResult {
  1: set<ScheduledTask> tasks
}

struct ServerInfo {
  1: string clusterName
  3: string statsUrlPrefix
}

/* The payload of a Response; one member is set. */
/* Stagger: one configuration a job has had, numbered per job. */
struct JobConfigVersion {
  1: i32 version
  2: TaskConfig config
  3: i64 createdTimestampMs
  4: optional string updateId     /* the first update that moved the job to it */
  5: optional string user         /* who started that update */
  6: i32 instancesOnIt            /* the job's instances that should run it now */
}

/* Stagger: a piece of an instance's output. */
struct GetTaskLogsResult {
  1: binary data
  2: i64 nextOffset     /* where the next read goes on */
  3: i64 size           /* the output's size now */
  /* An AuroraExecutor task's processes, in its order (their output is read
   * by naming one). */
  100: optional list<string> processes
  101: optional i32 processRun    /* with a process: the run read (from 0) */
}

/* Stagger: one host of the fleet runtime, as staggerd sees it now. */
struct FleetHostStatus {
  1: string name
  2: string endpoint                   /* its engine's API */
  3: string address                    /* where its instances are reached */
  4: map<string, string> attributes    /* zone, rack, ... */
  5: bool reachable
  6: i64 unreachableSinceMs            /* 0 while reachable */
  7: string lastError                  /* its engine's last error; "" when none */
  8: bool draining                     /* nothing new is placed on it */
  9: list<InstanceKey> instances       /* the instances placed on it */
  10: string drainBlocked              /* why some of its instances could not start on the
                                        * other hosts now ("" when all could): a drain would
                                        * wait on them */
  11: MaintenanceMode mode             /* its maintenance (NONE, SCHEDULED, DRAINING, DRAINED) */
  12: string slaWait                   /* a DRAINING host: why instances still wait for their
                                        * SLA before they leave, one line each ("" when none) */
}

struct GetHostsResult {
  1: list<FleetHostStatus> hosts
}

struct GetJobConfigHistoryResult {
  1: list<JobConfigVersion> versions   /* oldest first */
}


/* Stagger: where a rollout plan, or one of its stages, stands. A plan that moves forward shows
 * ROLLING_FORWARD while a stage's update runs, else WAITING_FOR_GATE or AWAITING_APPROVAL when
 * its stages wait for that; PAUSED is a plan's only. */
enum RolloutStatus {
  PENDING           = 0,
  WAITING_FOR_GATE  = 1,
  AWAITING_APPROVAL = 2,
  ROLLING_FORWARD   = 3,
  DONE              = 4,
  FAILED            = 5,
  ROLLING_BACK      = 6,
  ROLLED_BACK       = 7,
  ABORTED           = 8,
  PAUSED            = 9
}

/* Stagger: one stage of a rollout plan: one job update, exactly as startJobUpdate takes it
 * (gates between its batches in request.settings.batchGates), started once every stage named
 * in dependsOn is DONE. */
struct RolloutStage {
  1: string name
  2: JobUpdateRequest request
  3: list<string> dependsOn
  4: list<RolloutGate> before        /* a failure fails the stage before anything changes */
  5: list<RolloutGate> after         /* a failure fails the stage, which is rolled back */
  6: bool requireApproval            /* waits for approveRolloutStage before its gates */
}

/* Stagger: several job updates in an order (a DAG of stages), with gates. */
struct RolloutPlan {
  1: string name
  2: list<RolloutStage> stages
  /* When a stage fails, the stages already done go back to their jobs' configurations
     from before the plan, in reverse dependency order. */
  3: bool rollbackOnFailure = true
  /* The plan variables the plan file was read with (name -> value), for the record. */
  100: optional map<string, string> variables
}

struct RolloutPlanSummary {
  1: string id
  2: string name
  3: RolloutStatus status
  4: i64 sinceMs                  /* when status last changed */
  5: string reason                /* why, in words ("" when there is nothing to say) */
  6: string user                  /* who started it */
  7: i64 createdTimestampMs
  8: i32 stageCount
  9: i32 stagesDone
  10: bool rollbackOnFailure
  100: string reasonCode          /* why, as a code (stagger(1), CONDITIONS) */
}

/* Stagger: an instance of a stage's job that is not ready, and why. */
struct UnreadyInstance {
  1: i32 instanceId
  2: ScheduleStatus status
  3: string reason
}

struct RolloutStageState {
  1: string name
  2: JobKey job
  3: RolloutStatus status
  4: i64 sinceMs
  5: string reason
  6: list<string> dependsOn
  7: optional JobUpdateKey update            /* the update that moves it forward */
  8: optional JobUpdateKey rollbackUpdate    /* the update that took it back */
  9: bool requireApproval
  10: optional string approvedBy
  11: i32 currentVersion     /* the configuration (JobConfigVersion.version) most of the job's
                                instances should run now; 0: none. Once the plan has ended,
                                this and the fields below as they were when the stage (or
                                the plan) ended */
  12: i32 desiredVersion     /* the one the stage moves to (before its update starts, the one
                                its job file makes); 0: not stored yet */
  13: i32 previousVersion    /* the one from before the plan, which a rollback returns to;
                                0: not recorded yet, or the job did not exist */
  14: list<RolloutGate> before
  15: list<RolloutGate> after
  16: list<RolloutGate> batchGates
  17: i32 gatesPassed        /* of the gates the stage waits for now */
  100: list<Condition> conditions
  101: string reasonCode
  102: i32 readyInstances    /* running and healthy on the configuration it moves its job to now */
  103: i32 desiredInstances  /* how many instances it wants the job to have */
  104: list<UnreadyInstance> unready   /* the others, each with why */
  105: i32 targetVersion     /* the version it moves its job to now: desiredVersion, or
                                previousVersion once it goes back (where a rollback ended);
                                readyInstances counts, before its update starts, the
                                instances on the one the job runs */
}

/* A change of a plan's or a stage's status, or an approval. */
struct RolloutEvent {
  1: i64 timestampMs
  2: optional string stage   /* unset: the plan's own */
  3: RolloutStatus status
  4: optional string user
  5: optional string message
  100: optional string reasonCode
}

/* One attempt of one gate. */
struct RolloutGateResult {
  1: i64 timestampMs
  2: string stage
  3: string phase            /* before or after */
  4: string gate
  5: i32 attempt             /* 1, 2, ... */
  6: bool passed
  7: string message
}

struct RolloutPlanDetails {
  1: RolloutPlanSummary summary
  2: list<RolloutStageState> stages
  3: list<RolloutEvent> events           /* oldest first */
  4: list<RolloutGateResult> gateResults /* oldest first */
  5: RolloutPlan plan                    /* as it was started */
  100: list<Condition> conditions        /* the plan's own */
}

/* A filter of plans; every term that is set must match. */
struct RolloutPlanQuery {
  1: optional string name
  2: optional bool activeOnly
  3: i32 offset
  4: i32 limit               /* 0: 100 */
}

struct StartRolloutPlanResult {
  1: string id
}

struct GetRolloutPlansResult {
  1: list<RolloutPlanSummary> plans     /* newest first */
}

struct GetRolloutPlanDetailsResult {
  1: RolloutPlanDetails details
}

/* Stagger: what one stage of a plan would do to its job now (a dry run). */
struct RolloutStageDiff {
  1: string name
  2: JobKey job
  3: bool changes                  /* its update would change the job */
  4: GetJobUpdateDiffResult diff   /* instance range by instance range */
  5: i32 currentVersion            /* the version most of the job's instances run; 0: none */
}

struct GetRolloutPlanDiffResult {
  1: list<RolloutStageDiff> stages
}

/* Stagger: which jobs a sidecar set goes into: shell-style patterns (* and ?) on each part of
 * the job key; a job is selected when all three match. */
struct SidecarSelector {
  1: string role = "*"
  2: string environment = "*"
  3: string name = "*"
}

/* Stagger: one version of a sidecar, the container each selected instance of the fleet
 * runtime runs beside its task in the instance's pod. */
struct Sidecar {
  1: string image
  /* The "stagger" executor's data, as a task has it: command or argv, env, health_check,
   * stop_timeout_secs, hooks (post_update only: a hot upgrade's migration hook, run in the
   * new version once it is healthy) and hot_upgrade (two container slots, NAME-1 and NAME-2,
   * the idle one on the empty image). */
  2: string executorData
  3: list<string> ports           /* its named ports, beside the task's in the pod */
  /* The pod's anchor holds the listening sockets of its ports and hands them to each
   * version (LISTEN_FDS, LISTEN_FDNAMES); needs hot_upgrade and a port. */
  4: bool socketActivation
}

/* Stagger: how a sidecar set's new version goes to the instances that carry it. */
struct SidecarUpdateSettings {
  1: i32 maxUnavailable = 1    /* instances whose sidecar is being updated or is not running, at most */
  2: i32 partition = 0         /* the last N instances (by job key, then instance) keep the old version */
  3: i32 maxFailures = 2       /* failed starts of the new version an instance may have; one more
                                  fails the update */
  4: bool rollbackOnFailure = true
  5: bool paused               /* start paused (resumeSidecarUpdate goes on) */
}

/* Stagger: a sidecar declared once, injected into every pod of the jobs it selects. */
struct SidecarSet {
  1: string name
  2: SidecarSelector selector
  3: Sidecar sidecar
  4: SidecarUpdateSettings settings
}

/* Stagger: one container of a sidecar in a pod. */
struct SidecarSlot {
  1: string name          /* NAME, or NAME-1 and NAME-2 of a hot sidecar */
  2: i32 version          /* 0: the empty image */
  3: string containerId   /* "" when it has none */
  4: bool serving
}

/* Stagger: a sidecar in one instance's pod, as the runtime sees it now. */
struct SidecarInstance {
  1: InstanceKey instance
  2: string host
  3: i32 version           /* the version serving; 0: none */
  4: i32 wantVersion       /* the version it is asked to run */
  5: ScheduleStatus status /* RUNNING once wantVersion serves and is healthy */
  6: i32 failures          /* failed starts of wantVersion */
  7: string reason         /* why it is not RUNNING, or its last failure */
  8: list<SidecarSlot> slots
  9: bool heldBack         /* kept on the old version by the partition */
}

struct SidecarVersion {
  1: i32 version
  2: Sidecar sidecar
  3: i64 createdTimestampMs
  4: string user
}

struct SidecarEvent {
  1: i64 timestampMs
  2: JobUpdateStatus status      /* of the update, after the event */
  3: optional InstanceKey instance
  4: string message
  5: optional string user
}

struct SidecarSetSummary {
  1: string name
  2: SidecarSelector selector
  3: i32 version                   /* the newest */
  4: i32 fromVersion               /* the last update moves from this version (0: none) */
  5: i32 toVersion                 /* ... to this one */
  6: JobUpdateStatus status        /* of the last update (ROLLED_FORWARD once all is done) */
  7: i64 sinceMs
  8: string reason
  9: SidecarUpdateSettings settings
  10: i32 instances                /* instances that carry it */
  11: i32 updated                  /* of those, running the version the update moves to */
  12: string user
  13: i64 createdTimestampMs
  14: i32 injectVersion            /* the version new pods get */
}

struct SidecarSetDetails {
  1: SidecarSetSummary summary
  2: list<SidecarVersion> versions   /* oldest first */
  3: list<SidecarInstance> instances /* by job key, then instance */
  4: list<SidecarEvent> events       /* oldest first */
}

struct GetSidecarSetsResult {
  1: list<SidecarSetSummary> sets
}

struct GetSidecarSetDetailsResult {
  1: SidecarSetDetails details
}

union Result {
   1: PopulateJobResult populateJobResult
   3: ScheduleStatusResult scheduleStatusResult
   4: GetJobsResult getJobsResult
   5: GetQuotaResult getQuotaResult
   6: ListBackupsResult listBackupsResult
   7: StartMaintenanceResult startMaintenanceResult
   8: DrainHostsResult drainHostsResult
   9: QueryRecoveryResult queryRecoveryResult
  10: MaintenanceStatusResult maintenanceStatusResult
  11: EndMaintenanceResult endMaintenanceResult
  17: RoleSummaryResult roleSummaryResult
  18: JobSummaryResult jobSummaryResult
  20: ConfigSummaryResult configSummaryResult
  21: GetPendingReasonResult getPendingReasonResult
  22: StartJobUpdateResult startJobUpdateResult
  23: GetJobUpdateSummariesResult getJobUpdateSummariesResult
  24: GetJobUpdateDetailsResult getJobUpdateDetailsResult
  25: PulseJobUpdateResult pulseJobUpdateResult
  26: GetJobUpdateDiffResult getJobUpdateDiffResult
  27: GetTierConfigResult getTierConfigResult
  /* Stagger's own results, past Aurora's ids. */
  100: GetJobConfigHistoryResult getJobConfigHistoryResult
  101: GetTaskLogsResult getTaskLogsResult
  102: GetHostsResult getHostsResult
  103: StartRolloutPlanResult startRolloutPlanResult
  104: GetRolloutPlansResult getRolloutPlansResult
  105: GetRolloutPlanDetailsResult getRolloutPlanDetailsResult
  106: GetRolloutPlanDiffResult getRolloutPlanDiffResult
  110: GetSidecarSetsResult getSidecarSetsResult
  111: GetSidecarSetDetailsResult getSidecarSetDetailsResult
}

struct ResponseDetail {
  1: string message
}

/* Every call answers with one of these. */
struct Response {
  1: ResponseCode responseCode
  5: ServerInfo serverInfo
  3: optional Result result
  6: list<ResponseDetail> details
}

/* Calls that change nothing. */
service ReadOnlyScheduler {
  Response getRoleSummary()
  Response getJobSummary(1: string role)
  Response getTasksStatus(1: TaskQuery query)
  Response getTasksWithoutConfigs(1: TaskQuery query)
  /* The PENDING tasks matching query (no statuses, no slaveHosts), each with why. */
  Response getPendingReason(1: TaskQuery query)
  Response getConfigSummary(1: JobKey job)
  Response getJobs(1: string ownerRole)
  Response getQuota(1: string ownerRole)
  /* Checks description as createJob would and answers its task configuration populated. */
  Response populateJobConfig(1: JobConfiguration description)
  Response getJobUpdateSummaries(1: JobUpdateQuery jobUpdateQuery)
  Response getJobUpdateDetails(1: JobUpdateKey key, 2: JobUpdateQuery query)
  Response getJobUpdateDiff(1: JobUpdateRequest request)
  Response getTierConfigs()
}

/* Calls that change jobs and updates. */
service AuroraSchedulerManager extends ReadOnlyScheduler {
  /* Also once every task of an existing job has ended (FINISHED, FAILED, KILLED, LOST). */
  Response createJob(1: JobConfiguration description)
  /* The four cron calls answer INVALID_REQUEST: Stagger runs no cron jobs. */
  Response scheduleCronJob(1: JobConfiguration description)
  Response descheduleCronJob(4: JobKey job)
  Response startCronJob(4: JobKey job)
  Response restartShards(5: JobKey job, 3: set<i32> shardIds)
  Response killTasks(4: JobKey job, 5: set<i32> instances, 6: string message)
  Response addInstances(3: InstanceKey key, 4: i32 count)
  Response replaceCronTemplate(1: JobConfiguration config)
  Response startJobUpdate(1: JobUpdateRequest request, 3: string message)
  Response pauseJobUpdate(1: JobUpdateKey key, 3: string message)
  Response resumeJobUpdate(1: JobUpdateKey key, 3: string message)
  Response abortJobUpdate(1: JobUpdateKey key, 3: string message)
  Response rollbackJobUpdate(1: JobUpdateKey key, 2: string message)
  Response pulseJobUpdate(1: JobUpdateKey key)
}

/* The operators' calls; each needs a user of every role. */
service AuroraAdmin extends AuroraSchedulerManager {
  /* Replaces the role's quota (exactly numCpus, ramMb and diskMb, none negative, none below
   * what the role's production jobs of the shared pool consume now). */
  Response setQuota(1: string ownerRole, 2: ResourceAggregate quota)
  /* Backups and recovery, as Aurora's (SQLite only; on PostgreSQL each answers INVALID_REQUEST
   * saying that the database's own backups apply). performBackup writes a copy of the store
   * into the backup folder now; listBackups names the copies. stageRecovery loads one into a
   * staging copy (one at a time), which queryRecovery reads and deleteRecoveryTasks changes;
   * commitRecovery makes it the store and staggerd restarts itself to load it; unloadRecovery
   * drops it. */
  Response performBackup()
  Response listBackups()
  Response stageRecovery(1: string backupId)
  Response queryRecovery(1: TaskQuery query)
  Response deleteRecoveryTasks(1: TaskQuery query)
  Response commitRecovery()
  Response unloadRecovery()
  /* Makes the store durable now and says how (SQLite: a checkpoint of its write-ahead log). */
  Response snapshot()
  /* The runtime compares what runs with the store now. Explicit: each instance the store knows
   * is looked for (the local runtime in /proc, the fleet's on its hosts); one that is gone has
   * ended. Implicit: what runs with this staggerd's mark but no instance expects is stopped.
   * The answer's details say what was found. */
  Response triggerExplicitTaskReconciliation(1: ExplicitReconciliationSettings settings)
  Response triggerImplicitTaskReconciliation()
  /* Removes ended tasks the query matches (statuses, when given, must all be terminal: FINISHED,
   * FAILED, KILLED, LOST; unset: all of them): ended instances, and the task events of instances
   * the job no longer has. A job with an active update keeps its tasks. */
  Response pruneTasks(1: TaskQuery query)
  /* Host maintenance, as Aurora's: startMaintenance puts hosts in SCHEDULED; drainHosts puts them
   * in DRAINING and moves their instances off at once (the fleet's to other hosts; the local
   * host's are stopped until its maintenance ends), DRAINED once nothing of them runs;
   * slaDrainHosts does it within each job's SLA (its own policy, else defaultSlaPolicy, else the
   * preferred tier's default), without it after timeoutSecs; maintenanceStatus says where hosts
   * stand; endMaintenance puts them back in NONE. Each answers the hosts it knows. */
  Response startMaintenance(1: Hosts hosts)
  Response drainHosts(1: Hosts hosts)
  Response maintenanceStatus(1: Hosts hosts)
  Response endMaintenance(1: Hosts hosts)
  Response slaDrainHosts(1: Hosts hosts, 2: SlaPolicy defaultSlaPolicy, 3: i64 timeoutSecs)
}

/* Stagger's own calls, beside Aurora's. */
service StaggerScheduler extends AuroraAdmin {
  /* The configurations @job has had (a read: the read-only port serves it). */
  Response getJobConfigHistory(1: JobKey job)
  /* Up to maxBytes (at most 65536) of an instance's stdout (stderr: its
   * stderr) from byte offset (negative: that many bytes before the end), as
   * the runtime keeps it: the current run's output (a read). With process
   * (not empty): that process's of an AuroraExecutor task, of its run
   * processRun (from 0; -1 or absent: its newest). */
  Response getTaskLogs(1: InstanceKey instance, 2: bool stderr, 3: i64 offset, 4: i32 maxBytes,
                       100: string process, 101: i32 processRun = -1)
  /* The fleet runtime's hosts (a read); other runtimes have none. */
  Response getHosts()
  /* drain: place nothing new on @host, and start instances that restart
   * there elsewhere (kept across restarts): its maintenance mode is DRAINING, then DRAINED;
   * !drain: place there again (mode NONE, as endMaintenance). Moving the instances off is a
   * rolling restart of them (what `stagger host drain` starts). Needs a user allowed every
   * role. */
  Response drainHost(1: string host, 2: bool drain)

  /* Rollout plans. Starting one, and each call that changes one, needs a user allowed the
   * roles of all its jobs. */
  Response startRolloutPlan(1: RolloutPlan plan, 2: string message)
  Response getRolloutPlans(1: RolloutPlanQuery query)
  Response getRolloutPlanDetails(1: string id)
  /* Starts nothing new and pauses the stages' updates; resume goes on. */
  Response pauseRolloutPlan(1: string id, 2: string message)
  Response resumeRolloutPlan(1: string id, 2: string message)
  /* Stops: the stages' updates are aborted, nothing is rolled back. */
  Response abortRolloutPlan(1: string id, 2: string message)
  /* Rolls back the stages' running updates, then every stage that changed its job, in
   * reverse dependency order, each to its job's configuration from before the plan. */
  Response rollbackRolloutPlan(1: string id, 2: string message)
  /* Lets stage (every stage waiting for approval, when stage is "") go on. */
  Response approveRolloutStage(1: string id, 2: string stage, 3: string message)
  /* What each stage of @plan would do to its job now, checked as startRolloutPlan checks it,
   * starting nothing (a read). */
  Response getRolloutPlanDiff(1: RolloutPlan plan)

  /* Sidecar sets (the fleet runtime). Each call that changes one needs a user allowed the
   * role its selector names (every role when that is a pattern). applySidecarSet creates the
   * set, or makes its sidecar a new version rolled to the instances under settings (refused
   * while an update of it is active); a changed selector applies to pods made from now on. */
  Response applySidecarSet(1: SidecarSet sidecarSet, 2: string message)
  Response getSidecarSets()
  Response getSidecarSetDetails(1: string name)
  Response pauseSidecarUpdate(1: string name, 2: string message)
  Response resumeSidecarUpdate(1: string name, 2: string message)
  /* Starts no more instances; those updating finish. */
  Response abortSidecarUpdate(1: string name, 2: string message)
  /* Every instance moved to the update's version goes back to the one before it. */
  Response rollbackSidecarUpdate(1: string name, 2: string message)
  Response setSidecarPartition(1: string name, 2: i32 partition, 3: string message)
  /* Removes the set and its containers from every pod (the pods stay). */
  Response deleteSidecarSet(1: string name, 2: string message)
}
