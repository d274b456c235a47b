"""aurora_compat.py: what Apache Aurora's own client sends, sent by a stock
python3-thrift client (stubs generated now from thrift/stagger.thrift) to a
real staggerd over HTTP /api with the JSON protocol (Aurora's older
clients), HTTP /api with the binary protocol (its current one: binary
content types, a Host header without the port) and framed binary TCP.

The shapes are those of the client's config/thrift.py and api/__init__.py:
getTierConfigs with no arguments, a TaskConfig with production and tier,
metadata, taskLinks = {}, an empty constraint set, an EMPTY MesosContainer
and resources with named ports; startJobUpdate with the client's update id
in its metadata. Each transport runs one story: quota refusal and
consumption, setQuota, populateJobConfig, an update (its metadata coming
back, a second start answered with the first's summary), updates and
addInstances refused for quota, killTasks of every instance then createJob
again, role summaries, pending reasons' query rules, cron refused, and each
field Stagger does not support refused by name. Then: who may call the
admin calls; the operators' AuroraAdmin calls (backups, a recovery staged,
read, changed and unloaded, reconciliation, pruneTasks) and the host
maintenance calls on the local host through every transport as an admin,
refused to a user of one role; a PENDING instance's
reason, a tiers file, and quotas, snapshots and backups on PostgreSQL.
"""
import hashlib
import hmac
import os
import secrets
import shutil
import socket
import sqlite3
import sys
import tempfile
import time
import uuid

from thrift.protocol import TBinaryProtocol, TJSONProtocol
from thrift.transport import TSocket, TTransport

import stgtest

BINARY = "application/vnd.apache.thrift.binary"
CLIENT_UPDATE_ID = "org.apache.aurora.client.update_id"
NO_CRON = "cron jobs are not supported by Stagger"
PORTS = "27100-27199"


class Clients:
    """The three ways to reach one staggerd."""

    def __init__(self, mod, d, headers=None):
        self.mod = mod
        self.d = d
        self.headers = headers or {}
        self.framed = []

    def http_json(self):
        transport = stgtest.HttpTransport(self.d.http_port, "application/x-thrift", "application/json",
                                          self.headers)
        return self.mod.Client(TJSONProtocol.TJSONProtocol(transport))

    def http_binary(self):
        headers = {"Host": "127.0.0.1", "User-Agent": "Aurora V2"}
        headers.update(self.headers)
        transport = stgtest.HttpTransport(self.d.http_port, BINARY, BINARY, headers)
        return self.mod.Client(TBinaryProtocol.TBinaryProtocol(transport))

    def tcp(self):
        framed = TTransport.TFramedTransport(TSocket.TSocket("127.0.0.1", self.d.thrift_port))
        framed.open()
        self.framed.append(framed)
        return self.mod.Client(TBinaryProtocol.TBinaryProtocol(framed))

    def all(self):
        return [("HTTP JSON", self.http_json()), ("HTTP binary", self.http_binary()),
                ("TCP", self.tcp())]

    def close(self):
        for f in self.framed:
            f.close()


def aurora_task(t, key, command, tier="preemptible", production=False, cpus=0.25, ram=64, disk=64,
                ports=("http",), metadata=None):
    """A TaskConfig as the client's convert() builds it (with the tier and
    production it backfills from getTierConfigs)."""
    resources = {t.Resource(numCpus=cpus), t.Resource(ramMb=ram), t.Resource(diskMb=disk)}
    resources |= {t.Resource(namedPort=p) for p in ports}
    return t.TaskConfig(
        job=key, owner=t.Identity(user="aurora"), isService=True, priority=0, maxTaskFailures=1,
        production=production, tier=tier, contactEmail=None,
        metadata={t.Metadata(key=k, value=v) for k, v in (metadata or {}).items()},
        resources=resources, taskLinks={}, constraints=set(),
        container=t.Container(mesos=t.MesosContainer(), docker=None),
        executorConfig=t.ExecutorConfig(name="stagger", data='{"command": "%s"}' % command))


def aurora_job(t, task, count, cron=None):
    return t.JobConfiguration(key=task.job, owner=t.Identity(user="aurora"), cronSchedule=cron,
                              cronCollisionPolicy=t.CronCollisionPolicy.KILL_EXISTING,
                              taskConfig=task, instanceCount=count)


def update_request(t, task, count, update_id):
    """startJobUpdate's request as the client's UpdaterConfig makes it."""
    settings = t.JobUpdateSettings(
        updateGroupSize=1, maxPerInstanceFailures=0, maxFailedInstances=0,
        minWaitInInstanceRunningMs=0, rollbackOnFailure=True, waitForBatchCompletion=False,
        updateOnlyTheseInstances=None, blockIfNoPulsesAfterMs=None, slaAware=False,
        updateStrategy=t.JobUpdateStrategy(queueStrategy=t.QueueJobUpdateStrategy(groupSize=1)))
    return t.JobUpdateRequest(taskConfig=task, instanceCount=count, settings=settings,
                              metadata={t.Metadata(key=CLIENT_UPDATE_ID, value=update_id)})


def quota_aggregate(t, cpus, ram, disk):
    return t.ResourceAggregate(resources={t.Resource(numCpus=cpus), t.Resource(ramMb=ram),
                                          t.Resource(diskMb=disk)})


def bag(aggregate):
    """(cpus, ram, disk) of a ResourceAggregate."""
    out = [0.0, 0, 0]
    for r in aggregate.resources:
        if r.numCpus is not None:
            out[0] += r.numCpus
        if r.ramMb is not None:
            out[1] += r.ramMb
        if r.diskMb is not None:
            out[2] += r.diskMb
    return tuple(out)


def message(resp):
    return "; ".join(d.message for d in resp.details or [])


def statuses(t, c, key):
    tasks = c.getTasksStatus(t.TaskQuery(jobKeys={key})).result.scheduleStatusResult.tasks
    return [x.status for x in sorted(tasks, key=lambda x: x.assignedTask.instanceId)]


def running(t, c, key, n):
    return stgtest.wait_until(lambda: statuses(t, c, key) == [t.ScheduleStatus.RUNNING] * n)


def update_status(t, c, key):
    found = c.getJobUpdateSummaries(t.JobUpdateQuery(key=key)).result.getJobUpdateSummariesResult
    return found.updateSummaries[0].state.status


# ---- one transport's story ---------------------------------------------------------------


def tiers(r, t, c, label):
    resp = c.getTierConfigs()
    tr = resp.result.getTierConfigResult if resp.result else None
    got = {tc.name: tc.settings for tc in tr.tiers} if tr else {}
    r.check("%s: getTierConfigs with no arguments: Aurora's default tiers" % label,
            resp.responseCode == t.ResponseCode.OK and tr.defaultTierName == "preemptible" and got == {
                "preferred": {"preemptible": "false", "revocable": "false"},
                "preemptible": {"preemptible": "true", "revocable": "false"},
                "revocable": {"preemptible": "true", "revocable": "true"}}, resp)


def quota_and_create(r, t, c, label, role, key):
    """A production job needs quota; its consumption shows."""
    ok, invalid = t.ResponseCode.OK, t.ResponseCode.INVALID_REQUEST
    prod = aurora_task(t, key, "sleep 300", tier="preferred", production=True, cpus=0.5)
    refused = c.createJob(aurora_job(t, prod, 2))
    r.check("%s: a production job without quota is refused, naming what is short" % label,
            refused.responseCode == invalid and message(refused).startswith(
                "Insufficient resource quota: CPU quota exceeded by 1.00 core(s); RAM quota "
                "exceeded by 128.00 MB; disk quota exceeded by 128.00 MB"), refused)
    set_ = c.setQuota(role, quota_aggregate(t, 1.5, 256, 256))
    r.check("%s: setQuota" % label, set_.responseCode == ok, set_)
    created = c.createJob(aurora_job(t, prod, 2))
    r.check("%s: createJob within the quota (empty MesosContainer, taskLinks {}, ports)" % label,
            created.responseCode == ok, created)
    r.check("%s: its instances run" % label, running(t, c, key, 2), statuses(t, c, key))
    q = c.getQuota(role)
    qr = q.result.getQuotaResult if q.result else None
    r.check("%s: getQuota: quota and production consumption" % label,
            q.responseCode == ok and bag(qr.quota) == (1.5, 256, 256)
            and bag(qr.prodSharedConsumption) == (1.0, 128, 128)
            and bag(qr.nonProdSharedConsumption) == (0.0, 0, 0)
            and bag(qr.prodDedicatedConsumption) == (0.0, 0, 0)
            and bag(qr.nonProdDedicatedConsumption) == (0.0, 0, 0), q)
    low = c.setQuota(role, quota_aggregate(t, 0.5, 256, 256))
    r.check("%s: setQuota below what runs is refused" % label,
            low.responseCode == invalid and "less than the current production reservation"
            in message(low), low)
    return prod


def populate(r, t, c, label, key):
    ok = t.ResponseCode.OK
    plain = aurora_task(t, key, "sleep 300", tier=None, production=False)
    resp = c.populateJobConfig(aurora_job(t, plain, 1))
    got = resp.result.populateJobResult.taskConfig if resp.result else None
    r.check("%s: populateJobConfig fills in the default tier" % label,
            resp.responseCode == ok and got.tier == "preemptible" and got.production is False
            and got.job == key, resp)
    wrong = aurora_task(t, key, "sleep 300", tier="preferred", production=False)
    resp = c.populateJobConfig(aurora_job(t, wrong, 1))
    got = resp.result.populateJobResult.taskConfig if resp.result else None
    r.check("%s: populateJobConfig: production follows the tier" % label,
            resp.responseCode == ok and got.production is True, resp)
    bad = c.populateJobConfig(aurora_job(t, aurora_task(t, key, "sleep 1", tier="gold"), 1))
    r.check("%s: populateJobConfig checks as createJob does" % label,
            bad.responseCode == t.ResponseCode.INVALID_REQUEST
            and "Invalid configuration: description.taskConfig.tier: Invalid tier 'gold'"
            in message(bad), bad)


def update(r, t, c, label, role, key, prod):
    ok, invalid = t.ResponseCode.OK, t.ResponseCode.INVALID_REQUEST
    new = aurora_task(t, key, "sleep 301", tier="preferred", production=True, cpus=0.5)
    first = str(uuid.uuid4())
    started = c.startJobUpdate(update_request(t, new, 2, first), "aurora update start")
    sr = started.result.startJobUpdateResult if started.result else None
    r.check("%s: startJobUpdate with the client's update id" % label,
            started.responseCode == ok and sr.updateSummary is not None
            and {(m.key, m.value) for m in sr.updateSummary.metadata} == {(CLIENT_UPDATE_ID, first)},
            started)
    again = c.startJobUpdate(update_request(t, new, 2, str(uuid.uuid4())), "retried")
    ar = again.result.startJobUpdateResult if again.result else None
    r.check("%s: a second start is answered with the active update's summary and metadata" % label,
            again.responseCode == invalid and ar is not None and ar.key.id == sr.key.id
            and [m.value for m in ar.updateSummary.metadata if m.key == CLIENT_UPDATE_ID] == [first],
            again)
    summaries = c.getJobUpdateSummaries(t.JobUpdateQuery(jobKey=key))
    listed = summaries.result.getJobUpdateSummariesResult.updateSummaries
    r.check("%s: the metadata is kept with the update" % label,
            [(m.key, m.value) for s in listed for m in (s.metadata or [])] == [(CLIENT_UPDATE_ID, first)],
            listed)
    done = stgtest.wait_until(lambda: update_status(t, c, sr.key) == t.JobUpdateStatus.ROLLED_FORWARD)
    r.check("%s: the update rolls forward" % label, done, update_status(t, c, sr.key))

    grow = c.startJobUpdate(update_request(t, new, 4, str(uuid.uuid4())), "grow")
    r.check("%s: an update beyond the quota is refused" % label,
            grow.responseCode == invalid
            and "Insufficient resource quota: CPU quota exceeded by 0.50 core(s)" in message(grow),
            grow)
    add = c.addInstances(t.InstanceKey(jobKey=key, instanceId=0), 2)
    r.check("%s: addInstances beyond the quota is refused" % label,
            add.responseCode == invalid and "CPU quota exceeded by 0.50 core(s)" in message(add), add)
    one = c.addInstances(t.InstanceKey(jobKey=key, instanceId=0), 1)
    r.check("%s: addInstances within the quota" % label, one.responseCode == ok, one)
    r.check("%s: three run" % label, running(t, c, key, 3), statuses(t, c, key))
    return sr.key


def kill_and_create(r, t, c, label, key, prod, update_key):
    """aurora job killall, then aurora job create: the client waits until
    every task is terminal (its JobMonitor), then creates."""
    ok = t.ResponseCode.OK
    killed = c.killTasks(key, None, "killall")
    r.check("%s: killTasks of every instance" % label, killed.responseCode == ok, killed)
    terminal = {t.ScheduleStatus.FAILED, t.ScheduleStatus.FINISHED, t.ScheduleStatus.KILLED,
                t.ScheduleStatus.LOST}
    r.check("%s: every task ends" % label,
            stgtest.wait_until(lambda: all(s in terminal for s in statuses(t, c, key))),
            statuses(t, c, key))
    created = c.createJob(aurora_job(t, prod, 2))
    r.check("%s: createJob once every task has ended" % label, created.responseCode == ok, created)
    r.check("%s: the new instances run" % label, running(t, c, key, 2), statuses(t, c, key))
    history = c.getJobUpdateSummaries(t.JobUpdateQuery(jobKey=key))
    ids = [s.key.id for s in history.result.getJobUpdateSummariesResult.updateSummaries]
    r.check("%s: the job's update history stays" % label, update_key.id in ids, ids)
    twice = c.createJob(aurora_job(t, prod, 2))
    r.check("%s: createJob of a running job is still refused" % label,
            twice.responseCode == t.ResponseCode.INVALID_REQUEST and "already exists" in message(twice),
            twice)


def reads(r, t, c, label, role, key):
    ok, invalid = t.ResponseCode.OK, t.ResponseCode.INVALID_REQUEST
    summary = c.getRoleSummary()
    found = {s.role: (s.jobCount, s.cronJobCount)
             for s in summary.result.roleSummaryResult.summaries} if summary.result else {}
    r.check("%s: getRoleSummary" % label, summary.responseCode == ok and found.get(role) == (1, 0),
            summary)
    with_status = c.getPendingReason(t.TaskQuery(role=role, statuses={t.ScheduleStatus.RUNNING}))
    r.check("%s: getPendingReason refuses statuses" % label,
            with_status.responseCode == invalid and "Statuses is not supported" in message(with_status),
            with_status)
    with_hosts = c.getPendingReason(t.TaskQuery(role=role, slaveHosts={"x"}))
    r.check("%s: getPendingReason refuses slaveHosts" % label,
            with_hosts.responseCode == invalid and "SlaveHosts are not supported" in message(with_hosts),
            with_hosts)
    none = c.getPendingReason(t.TaskQuery(jobKeys={key}))
    r.check("%s: getPendingReason: nothing pending" % label,
            none.responseCode == ok and none.result.getPendingReasonResult.reasons == set(), none)


def cron(r, t, c, label, key):
    invalid = t.ResponseCode.INVALID_REQUEST
    job = aurora_job(t, aurora_task(t, key, "sleep 1"), 1, cron="*/5 * * * *")
    for name, resp in (("scheduleCronJob", c.scheduleCronJob(job)),
                       ("replaceCronTemplate", c.replaceCronTemplate(job)),
                       ("descheduleCronJob", c.descheduleCronJob(key)),
                       ("startCronJob", c.startCronJob(key))):
        r.check("%s: %s is refused" % (label, name),
                resp.responseCode == invalid and message(resp) == "%s: %s" % (name, NO_CRON), resp)
    created = c.createJob(job)
    r.check("%s: createJob with a cronSchedule is refused naming it" % label,
            created.responseCode == invalid
            and "description.cronSchedule: %s" % NO_CRON in message(created), created)


def unsupported(r, t, c, label, key):
    """Each field Stagger cannot honour is refused, naming it."""
    invalid = t.ResponseCode.INVALID_REQUEST

    def changed(**fields):
        task = aurora_task(t, key, "sleep 300")
        for name, value in fields.items():
            setattr(task, name, value)
        return task

    gpu = aurora_task(t, key, "sleep 300")
    gpu.resources.add(t.Resource(numGpus=1))
    cases = [
        ("mesosFetcherUris", changed(mesosFetcherUris={t.MesosFetcherURI(value="http://x/a.tgz")})),
        ("container.mesos.image", changed(container=t.Container(mesos=t.MesosContainer(
            image=t.Image(docker=t.DockerImage(name="busybox", tag="latest")))))),
        ("container.mesos.volumes", changed(container=t.Container(mesos=t.MesosContainer(
            volumes=[t.Volume(containerPath="/a", hostPath="/b", mode=t.Mode.RO)])))),
        ("resources: numGpus", gpu),
        ("partitionPolicy.reschedule", changed(partitionPolicy=t.PartitionPolicy(reschedule=False))),
        ("partitionPolicy.delaySecs", changed(partitionPolicy=t.PartitionPolicy(reschedule=True,
                                                                               delaySecs=60))),
        ("tier: Invalid tier 'gold'", changed(tier="gold")),
        ("slaPolicy: Tier 'preemptible' does not support SlaPolicy.",
         changed(slaPolicy=t.SlaPolicy(countSlaPolicy=t.CountSlaPolicy(count=1, durationSecs=60)))),
        ("slaPolicy: Job with fewer than 20 instances cannot have Percentage/Count SlaPolicy.",
         changed(tier="preferred", production=True,
                 slaPolicy=t.SlaPolicy(countSlaPolicy=t.CountSlaPolicy(count=1, durationSecs=60)))),
    ]
    for name, task in cases:
        resp = c.createJob(aurora_job(t, task, 1))
        r.check("%s: %s is refused by name" % (label, name),
                resp.responseCode == invalid and "description.taskConfig.%s" % name in message(resp),
                resp)
    fine = changed(partitionPolicy=t.PartitionPolicy(reschedule=True, delaySecs=0),
                   container=t.Container(mesos=t.MesosContainer(volumes=[])),
                   tier="preferred", production=True,
                   slaPolicy=t.SlaPolicy(coordinatorSlaPolicy=t.CoordinatorSlaPolicy(
                       coordinatorUrl="http://127.0.0.1:9/sla", statusKey="drain")))
    fine.job = key
    diff = c.getJobUpdateDiff(t.JobUpdateRequest(taskConfig=fine, instanceCount=1,
                                                 settings=t.JobUpdateSettings(updateGroupSize=1)))
    r.check("%s: Stagger's own partition policy, an empty volume list and an SLA policy pass"
            % label, diff.responseCode == t.ResponseCode.OK, diff)


def story(r, t, c, label, n):
    role = "aurora%d" % n
    key = t.JobKey(role=role, environment="prod", name="hello")
    tiers(r, t, c, label)
    prod = quota_and_create(r, t, c, label, role, key)
    populate(r, t, c, label, key)
    update_key = update(r, t, c, label, role, key, prod)
    kill_and_create(r, t, c, label, key, prod, update_key)
    reads(r, t, c, label, role, key)
    cron(r, t, c, label, t.JobKey(role=role, environment="prod", name="nightly"))
    unsupported(r, t, c, label, t.JobKey(role=role, environment="prod", name="odd"))
    c.killTasks(key, None, "done")


def stories(r, t, mod):
    d = stgtest.Daemon("--port-range=" + PORTS)
    clients = Clients(mod, d)
    try:
        for n, (label, c) in enumerate(clients.all()):
            story(r, t, c, label, n)
        c = clients.http_json()
        c.setQuota("snapshotted", quota_aggregate(t, 1, 2, 3))
        snap = c.snapshot()
        r.check("snapshot (SQLite): the write-ahead log checkpointed",
                snap.responseCode == t.ResponseCode.OK and "checkpointed the write-ahead log"
                in message(snap), snap)
        # The database file alone, copied now, holds the last commit.
        copy = os.path.join(d.dir, "copy.db")
        shutil.copyfile(os.path.join(d.dir, "data", "stagger.db"), copy)
        with sqlite3.connect(copy) as db:
            rows = db.execute("SELECT COUNT(*) FROM quotas WHERE role = 'snapshotted'").fetchone()
        r.check("snapshot: the database file holds the last commit", rows == (1,), rows)
    finally:
        clients.close()
        r.check("staggerd exits cleanly (stories)", d.stop() == 0)


# ---- who may call the admin calls --------------------------------------------------------


def token_digest(token):
    salt = secrets.token_hex(16)
    return "token:%s:%s" % (salt, hmac.new(salt.encode(), token.encode(), hashlib.sha256).hexdigest())


def admin_calls(r, t, mod):
    admin_token, www_token = secrets.token_hex(16), secrets.token_hex(16)
    config = ("[users]\nroot = %s *\nalice = %s aurora\n"
              % (token_digest(admin_token), token_digest(www_token)))
    d = stgtest.Daemon("--runtime=simulated", config=config)
    try:
        auth, ok = t.ResponseCode.AUTH_FAILED, t.ResponseCode.OK
        alice = Clients(mod, d, {"Authorization": "Bearer " + www_token}).http_json()
        root = Clients(mod, d, {"Authorization": "Bearer " + admin_token}).http_binary()
        anon = Clients(mod, d).http_json()
        refused = alice.setQuota("aurora", quota_aggregate(t, 1, 1, 1))
        r.check("setQuota by a user of one role is AUTH_FAILED",
                refused.responseCode == auth and "every role" in message(refused), refused)
        snap = alice.snapshot()
        r.check("snapshot by a user of one role is AUTH_FAILED", snap.responseCode == auth, snap)
        r.check("setQuota by a user of every role",
                root.setQuota("aurora", quota_aggregate(t, 1, 1, 1)).responseCode == ok)
        r.check("snapshot by a user of every role", root.snapshot().responseCode == ok)
        q = anon.getQuota("aurora")
        r.check("getQuota is a read", q.responseCode == ok
                and bag(q.result.getQuotaResult.quota) == (1.0, 1, 1), q)
        bad = root.setQuota("aurora", t.ResourceAggregate(resources={t.Resource(numCpus=1.0)}))
        r.check("setQuota of one resource is refused",
                bad.responseCode == t.ResponseCode.INVALID_REQUEST
                and "exactly: numCpus, ramMb, diskMb" in message(bad), bad)
        neg = root.setQuota("aurora", quota_aggregate(t, -1.0, 1, 1))
        r.check("a negative quota is refused",
                neg.responseCode == t.ResponseCode.INVALID_REQUEST and "Negative" in message(neg), neg)
        tcp = Clients(mod, d).tcp()
        r.check("the TCP port (read-only with users) may not setQuota",
                tcp.setQuota("aurora", quota_aggregate(t, 2, 2, 2)).responseCode == auth)
    finally:
        r.check("staggerd exits cleanly (admin)", d.stop() == 0)


# ---- the operators' calls through every transport ---------------------------------------


def operator_story(r, t, c, label, auth_failed_client):
    """Backups, a recovery staged and unloaded, reconciliation and
    pruneTasks, by an admin through @c; a user of one role is refused."""
    ok, invalid = t.ResponseCode.OK, t.ResponseCode.INVALID_REQUEST
    if auth_failed_client is not None:
        for name, call in [("performBackup", lambda x: x.performBackup()),
                           ("listBackups", lambda x: x.listBackups()),
                           ("stageRecovery", lambda x: x.stageRecovery("scheduler-backup-1")),
                           ("unloadRecovery", lambda x: x.unloadRecovery()),
                           ("triggerImplicitTaskReconciliation",
                            lambda x: x.triggerImplicitTaskReconciliation()),
                           ("pruneTasks", lambda x: x.pruneTasks(t.TaskQuery()))]:
            resp = call(auth_failed_client)
            r.check("%s: %s by a user of one role is AUTH_FAILED" % (label, name),
                    resp.responseCode == t.ResponseCode.AUTH_FAILED
                    and "every role" in message(resp), resp)
    backup = c.performBackup()
    r.check("%s: performBackup" % label, backup.responseCode == ok
            and message(backup).startswith("backup scheduler-backup-"), backup)
    backup_id = message(backup).split(" ")[1]
    listed = c.listBackups()
    r.check("%s: listBackups names it" % label, listed.responseCode == ok
            and backup_id in listed.result.listBackupsResult.backups, listed)
    nothing = c.queryRecovery(t.TaskQuery())
    r.check("%s: queryRecovery with nothing staged" % label, nothing.responseCode == invalid
            and "no backup is staged" in message(nothing), nothing)
    bad = c.stageRecovery("../stagger.db")
    r.check("%s: stageRecovery of a path is refused" % label, bad.responseCode == invalid, bad)
    staged = c.stageRecovery(backup_id)
    r.check("%s: stageRecovery" % label, staged.responseCode == ok, staged)
    again = c.stageRecovery(backup_id)
    r.check("%s: one backup staged at a time" % label, again.responseCode == invalid
            and "staged already" in message(again), again)
    tasks = c.queryRecovery(t.TaskQuery(role="ops"))
    r.check("%s: queryRecovery reads the staged backup" % label, tasks.responseCode == ok
            and sorted(x.assignedTask.instanceId for x in tasks.result.queryRecoveryResult.tasks)
            == [0, 1], tasks)
    deleted = c.deleteRecoveryTasks(t.TaskQuery(role="ops", instanceIds={1}))
    r.check("%s: deleteRecoveryTasks" % label, deleted.responseCode == ok
            and "deleted 1 task" in message(deleted), deleted)
    left = c.queryRecovery(t.TaskQuery(role="ops"))
    r.check("%s: the deleted task is gone from the staged backup" % label,
            [x.assignedTask.instanceId for x in left.result.queryRecoveryResult.tasks] == [0], left)
    r.check("%s: unloadRecovery" % label, c.unloadRecovery().responseCode == ok)
    r.check("%s: the live store keeps both tasks" % label,
            len(c.getTasksStatus(t.TaskQuery(role="ops")).result.scheduleStatusResult.tasks) == 2)
    explicit = c.triggerExplicitTaskReconciliation(t.ExplicitReconciliationSettings(batchSize=10))
    r.check("%s: triggerExplicitTaskReconciliation" % label, explicit.responseCode == ok
            and "nothing to compare" in message(explicit), explicit)
    zero = c.triggerExplicitTaskReconciliation(t.ExplicitReconciliationSettings(batchSize=0))
    r.check("%s: a batch size of 0 is refused" % label, zero.responseCode == invalid
            and message(zero) == "Batch size must be greater than zero.", zero)
    r.check("%s: triggerImplicitTaskReconciliation" % label,
            c.triggerImplicitTaskReconciliation().responseCode == ok)
    running = c.pruneTasks(t.TaskQuery(statuses={t.ScheduleStatus.RUNNING}))
    r.check("%s: pruneTasks of RUNNING tasks is refused" % label, running.responseCode == invalid
            and message(running) == "Tasks in non-terminal state cannot be pruned.", running)
    pruned = c.pruneTasks(t.TaskQuery(role="ops"))
    r.check("%s: pruneTasks leaves running tasks" % label, pruned.responseCode == ok
            and "pruned 0 ended tasks" in message(pruned), pruned)


def operator_calls(r, t, mod):
    admin_token, www_token = secrets.token_hex(16), secrets.token_hex(16)
    config = ("[staggerd]\ntcp_trusted = true\n[users]\nroot = %s *\nalice = %s aurora\n"
              % (token_digest(admin_token), token_digest(www_token)))
    d = stgtest.Daemon("--runtime=simulated", config=config)
    clients = Clients(mod, d, {"Authorization": "Bearer " + admin_token})
    try:
        alice = Clients(mod, d, {"Authorization": "Bearer " + www_token}).http_json()
        key = t.JobKey(role="ops", environment="prod", name="web")
        created = clients.tcp().createJob(aurora_job(t, aurora_task(t, key, "sleep 300"), 2))
        r.check("operators: a job to back up", created.responseCode == t.ResponseCode.OK, created)
        for label, c in clients.all():
            operator_story(r, t, c, "operators, " + label, alice if label == "HTTP JSON" else None)
    finally:
        clients.close()
        r.check("staggerd exits cleanly (operators)", d.stop() == 0)


def maintenance_story(r, t, c, label, key, host):
    """Aurora's maintenance calls on the local host: SCHEDULED, a drain that
    stops its instances, DRAINED, then NONE and the instances back."""
    m = t.MaintenanceMode
    hosts = t.Hosts(hostNames={host, "no-such-host"})

    def modes(resp, result):
        return {s.host: s.mode for s in getattr(resp.result, result).statuses}

    started = c.startMaintenance(hosts)
    r.check("%s: startMaintenance, unknown hosts left out" % label,
            started.responseCode == t.ResponseCode.OK
            and modes(started, "startMaintenanceResult") == {host: m.SCHEDULED}, started)
    status = c.maintenanceStatus(hosts)
    r.check("%s: maintenanceStatus" % label,
            modes(status, "maintenanceStatusResult") == {host: m.SCHEDULED}, status)
    drained = c.slaDrainHosts(t.Hosts(hostNames={host}), t.SlaPolicy(), 600) \
        if label.endswith("TCP") else c.drainHosts(t.Hosts(hostNames={host}))
    r.check("%s: a drain" % label, drained.responseCode == t.ResponseCode.OK
            and modes(drained, "drainHostsResult") == {host: m.DRAINING}, drained)
    r.check("%s: the host is DRAINED once its instances have stopped" % label,
            stgtest.wait_until(lambda: modes(c.maintenanceStatus(hosts),
                                                "maintenanceStatusResult") == {host: m.DRAINED}))
    r.check("%s: its instances wait, PENDING" % label,
            statuses(t, c, key) == [t.ScheduleStatus.PENDING] * 2, statuses(t, c, key))
    ended = c.endMaintenance(hosts)
    r.check("%s: endMaintenance" % label, ended.responseCode == t.ResponseCode.OK
            and modes(ended, "endMaintenanceResult") == {host: m.NONE}, ended)
    r.check("%s: the instances run again" % label, running(t, c, key, 2))


def maintenance_calls(r, t, mod):
    admin_token, www_token = secrets.token_hex(16), secrets.token_hex(16)
    config = ("[staggerd]\ntcp_trusted = true\n[maintenance]\npolling_interval_secs = 1\n"
              "[users]\nroot = %s *\nalice = %s aurora\n"
              % (token_digest(admin_token), token_digest(www_token)))
    d = stgtest.Daemon("--port-range=" + PORTS, config=config)
    clients = Clients(mod, d, {"Authorization": "Bearer " + admin_token})
    host = socket.gethostname()
    try:
        alice = Clients(mod, d, {"Authorization": "Bearer " + www_token}).http_json()
        for name, call in [("startMaintenance", lambda: alice.startMaintenance(t.Hosts({host}))),
                           ("drainHosts", lambda: alice.drainHosts(t.Hosts({host}))),
                           ("slaDrainHosts",
                            lambda: alice.slaDrainHosts(t.Hosts({host}), t.SlaPolicy(), 1)),
                           ("maintenanceStatus", lambda: alice.maintenanceStatus(t.Hosts({host}))),
                           ("endMaintenance", lambda: alice.endMaintenance(t.Hosts({host})))]:
            resp = call()
            r.check("maintenance: %s by a user of one role is AUTH_FAILED" % name,
                    resp.responseCode == t.ResponseCode.AUTH_FAILED, resp)
        key = t.JobKey(role="ops", environment="prod", name="held")
        created = clients.tcp().createJob(aurora_job(t, aurora_task(t, key, "sleep 300", ports=()),
                                                     2))
        r.check("maintenance: a job on the local host", created.responseCode == t.ResponseCode.OK,
                created)
        r.check("maintenance: it runs", running(t, clients.tcp(), key, 2))
        for label, c in clients.all():
            maintenance_story(r, t, c, "maintenance, " + label, key, host)
        clients.tcp().killTasks(key, None, "done")
    finally:
        clients.close()
        r.check("staggerd exits cleanly (maintenance)", d.stop() == 0)
        d.kill_instances()


# ---- a PENDING instance, and a tiers file -------------------------------------------------


TIERS = ('{"default": "batch", "tiers": {"batch": {"preemptible": true}, '
         '"gold": {"preemptible": false, "revocable": false}}}')


def pending_and_tiers(r, t, mod):
    tmp = tempfile.mkdtemp(prefix="stagger-tiers-")
    path = os.path.join(tmp, "tiers.json")
    with open(path, "w") as f:
        f.write(TIERS)
    d = stgtest.Daemon("--port-range=" + PORTS, "--tier-config=" + path,
                       config="[staggerd]\nmax_concurrent_starts = 1\n")
    try:
        c = Clients(mod, d).http_json()
        tr = c.getTierConfigs().result.getTierConfigResult
        r.check("getTierConfigs answers the tiers file",
                tr.defaultTierName == "batch" and {x.name for x in tr.tiers} == {"batch", "gold"}, tr)
        key = t.JobKey(role="aurora", environment="prod", name="slow")
        # A check that fails without counting for ten minutes: the first
        # instance stays STARTING and holds the one start allowed at once.
        task = aurora_task(t, key, "sleep 600", tier="batch")
        task.executorConfig.data = ('{"command": "sleep 600", "health_check": {"shell": '
                                    '{"shell_command": "false"}, "initial_interval_secs": 600}}')
        preferred = c.createJob(aurora_job(t, aurora_task(t, key, "sleep 1", tier="preferred"), 1))
        r.check("a tier the file does not name is refused",
                preferred.responseCode == t.ResponseCode.INVALID_REQUEST
                and "Invalid tier 'preferred'" in message(preferred), preferred)
        created = c.createJob(aurora_job(t, task, 2))
        r.check("createJob in the file's tier", created.responseCode == t.ResponseCode.OK, created)

        def reasons():
            resp = c.getPendingReason(t.TaskQuery(role="aurora", jobName="slow"))
            return resp.result.getPendingReasonResult.reasons if resp.result else set()

        found = stgtest.wait_until(reasons)
        r.check("getPendingReason: the waiting instance and why",
                len(found) == 1 and next(iter(found)).taskId.startswith("aurora-prod-slow-1-")
                and "max_concurrent_starts" in next(iter(found)).reason, found)
        c.killTasks(key, None, "done")
    finally:
        r.check("staggerd exits cleanly (pending)", d.stop() == 0)
    with open(path, "w") as f:
        f.write('{"default": "none", "tiers": {"batch": {}}}')
    try:
        stgtest.Daemon("--tier-config=" + path).stop()
        r.check("a bad tiers file stops staggerd", False)
    except RuntimeError as e:
        r.check("a bad tiers file stops staggerd, naming the file and the key",
                path in str(e) and "default is 'none'" in str(e), e)
    os.unlink(path)
    os.rmdir(tmp)


def postgresql(r, t, mod):
    pg = stgtest.Postgres(range(19300, 19350))
    d = None
    try:
        d = stgtest.Daemon("--runtime=simulated", "--store=" + pg.conninfo())
        c = Clients(mod, d).tcp()
        r.check("PostgreSQL: setQuota", c.setQuota("aurora", quota_aggregate(t, 3, 30, 300))
                .responseCode == t.ResponseCode.OK)
        q = c.getQuota("aurora")
        r.check("PostgreSQL: getQuota", bag(q.result.getQuotaResult.quota) == (3.0, 30, 300), q)
        snap = c.snapshot()
        r.check("PostgreSQL: snapshot says the database's own backups apply",
                snap.responseCode == t.ResponseCode.OK and "PostgreSQL's own means" in message(snap),
                snap)
        for name, call in [("performBackup", lambda: c.performBackup()),
                           ("listBackups", lambda: c.listBackups()),
                           ("stageRecovery", lambda: c.stageRecovery("scheduler-backup-1")),
                           ("queryRecovery", lambda: c.queryRecovery(t.TaskQuery())),
                           ("deleteRecoveryTasks", lambda: c.deleteRecoveryTasks(t.TaskQuery())),
                           ("commitRecovery", lambda: c.commitRecovery()),
                           ("unloadRecovery", lambda: c.unloadRecovery())]:
            resp = call()
            r.check("PostgreSQL: %s says the database's own backups apply" % name,
                    resp.responseCode == t.ResponseCode.INVALID_REQUEST
                    and "the store is PostgreSQL: its own backups apply" in message(resp), resp)
    finally:
        if d is not None:
            r.check("staggerd exits cleanly (PostgreSQL)", d.stop() == 0)
        pg.close()


def main():
    r = stgtest.Results("aurora_compat")
    t, mod = stgtest.load_stubs()
    try:
        r.run("stories", stories, r, t, mod)
        r.run("admin", admin_calls, r, t, mod)
        r.run("operators", operator_calls, r, t, mod)
        r.run("maintenance", maintenance_calls, r, t, mod)
        r.run("pending", pending_and_tiers, r, t, mod)
        r.run("postgresql", postgresql, r, t, mod)
    finally:
        stgtest.cleanup_stubs()
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
