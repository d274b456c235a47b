"""local_pending_test.py: what the local runtime cannot honour, said
through a real staggerd: instances its host's constraints rule out stay
PENDING with Aurora's reason in getPendingReason and `stagger job status`;
an instance waiting out its restart back-off is THROTTLED and
getPendingReason says for how long; a killed task stays, KILLED, for the
queries that ask for ended statuses until pruneTasks removes it; a docker
image is refused naming --runtime=fleet, through Thrift and the CLI. Instances' ports come from
19500-19549."""
import json
import os
import subprocess
import sys
import tempfile
import time

from thrift.protocol import TJSONProtocol

import stgtest

PORTS = "19500-19549"
CLUSTER = "local"


def task(t, name, command, constraints=(), docker=None):
    key = t.JobKey(role="www", environment="prod", name=name)
    return t.TaskConfig(
        job=key, owner=t.Identity(user="www"), isService=True, priority=0, maxTaskFailures=1,
        production=False, tier="preemptible",
        resources={t.Resource(numCpus=0.1), t.Resource(ramMb=16), t.Resource(diskMb=16)},
        constraints=set(constraints),
        container=t.Container(docker=t.DockerContainer(image=docker, parameters=[]))
        if docker else t.Container(mesos=t.MesosContainer()),
        executorConfig=t.ExecutorConfig(name="stagger", data=json.dumps({"command": command})))


def value(t, name, *values):
    return t.Constraint(name=name, constraint=t.TaskConstraint(
        value=t.ValueConstraint(negated=False, values=set(values))))


def limit(t, name, n):
    return t.Constraint(name=name, constraint=t.TaskConstraint(limit=t.LimitConstraint(limit=n)))


def create(t, c, config, count):
    job = t.JobConfiguration(key=config.job, owner=config.owner, taskConfig=config,
                             instanceCount=count)
    return c.createJob(job)


def message(resp):
    return " ".join(d.message for d in resp.details or [])


def cli(d, *args):
    argv = [stgtest.program("stagger"), "--url", "http://127.0.0.1:%d" % d.http_port] + list(args)
    env = dict(os.environ, NO_COLOR="")
    env.pop("STAGGER_URL", None)
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
    return p.returncode, p.stdout, p.stderr


def reasons(t, c):
    """getPendingReason for role www: task id -> reason."""
    resp = c.getPendingReason(t.TaskQuery(role="www"))
    if resp.responseCode != t.ResponseCode.OK:
        return {}
    return {p.taskId: p.reason for p in resp.result.getPendingReasonResult.reasons}


def held(r, t, c, d):
    ok = t.ResponseCode.OK
    r.check("a job pinned to another host is accepted",
            create(t, c, task(t, "pinned", "exec sleep 600",
                              [value(t, "host", "elsewhere.example")]), 1).responseCode == ok)
    r.check("a job of two with limit host:1 is accepted",
            create(t, c, task(t, "limited", "exec sleep 600", [limit(t, "host", 1)]), 2)
            .responseCode == ok)
    r.check("a job in zone a (this host's) is accepted",
            create(t, c, task(t, "zoned", "exec sleep 600", [value(t, "zone", "a")]), 1)
            .responseCode == ok)
    r.check("a crashing job is accepted",
            create(t, c, task(t, "crashy", "exit 3"), 1).responseCode == ok)

    def all_there():
        got = reasons(t, c)
        return got if len(got) == 3 and any("restarting in" in x for x in got.values()) else None

    got = stgtest.wait_until(all_there) or reasons(t, c)
    by_job = {k.split("-")[2]: v for k, v in got.items()}
    r.check("getPendingReason: the pinned instance, in Aurora's words",
            by_job.get("pinned") == "Constraint not satisfied: host", got)
    r.check("getPendingReason: the second instance of the limited job",
            by_job.get("limited") == "Limit not satisfied: host"
            and [k for k in got if k.startswith("www-prod-limited-1-")], got)
    r.check("getPendingReason: the back-off of the crashing one",
            by_job.get("crashy", "").startswith("restarting in ")
            and "back-off after" in by_job.get("crashy", ""), got)
    r.check("the zoned job runs", "zoned" not in by_job, got)

    tasks = c.getTasksWithoutConfigs(t.TaskQuery(role="www", jobName="crashy"))
    statuses = [x.status for x in tasks.result.scheduleStatusResult.tasks]
    r.check("the crashing instance shows as a task, THROTTLED or starting again",
            len(statuses) == 1 and statuses[0] in (t.ScheduleStatus.THROTTLED,
                                                  t.ScheduleStatus.STARTING,
                                                  t.ScheduleStatus.FAILED), statuses)

    code, out, err = cli(d, "job", "status", CLUSTER + "/www/prod/limited")
    r.check("job status says why the second instance waits",
            code == 0 and "PENDING" in out and "Limit not satisfied: host" in out, (code, out, err))
    code, out, err = cli(d, "job", "status", CLUSTER + "/www/prod/pinned")
    r.check("job status says why the pinned one waits",
            code == 0 and "Constraint not satisfied: host" in out, (code, out, err))

    c.killTasks(t.JobKey(role="www", environment="prod", name="limited"), {0}, "make room")
    got = stgtest.wait_until(lambda: "limited" not in {k.split("-")[2] for k in reasons(t, c)} or None)
    r.check("once instance 0 is killed, instance 1 starts", got, reasons(t, c))


def ended(t, c, name, statuses):
    resp = c.getTasksWithoutConfigs(t.TaskQuery(role="www", jobName=name, statuses=statuses))
    return [x for x in resp.result.scheduleStatusResult.tasks
            if x.status in (t.ScheduleStatus.KILLED, t.ScheduleStatus.FINISHED,
                            t.ScheduleStatus.FAILED, t.ScheduleStatus.LOST)]


def killed_tasks_stay(r, t, c):
    """Aurora keeps terminal tasks until they are pruned."""
    every = set(t.ScheduleStatus._VALUES_TO_NAMES)
    killed = t.ScheduleStatus.KILLED
    got = stgtest.wait_until(lambda: ended(t, c, "limited", every))
    r.check("the killed instance's task stays, KILLED, when every status is asked for",
            len(got) == 1 and got[0].assignedTask.instanceId == 0
            and got[0].assignedTask.taskId.startswith("www-prod-limited-0-")
            and got[0].taskEvents[-1].status == killed, got)
    c.killTasks(t.JobKey(role="www", environment="prod", name="pinned"), None, "done")
    got = stgtest.wait_until(lambda: ended(t, c, "pinned", {killed}))
    r.check("a job killed whole keeps its killed task, PENDING when killed",
            len(got) == 1 and got[0].status == killed
            and any(e.status == t.ScheduleStatus.PENDING for e in got[0].taskEvents), got)
    active = c.getTasksWithoutConfigs(t.TaskQuery(role="www", jobName="pinned"))
    r.check("a query without statuses shows only what the job has",
            active.result.scheduleStatusResult.tasks == [], active)
    pruned = c.pruneTasks(t.TaskQuery(role="www", statuses={killed}))
    r.check("pruneTasks removes them", pruned.responseCode == t.ResponseCode.OK
            and ended(t, c, "pinned", every) == [] and ended(t, c, "limited", every) == [],
            (pruned, ended(t, c, "limited", every)))


def docker(r, t, c, d, tmp):
    resp = create(t, c, task(t, "boxed", "exec sleep 600", docker="nginx:1.25"), 1)
    r.check("createJob with a docker image is refused, naming --runtime=fleet",
            resp.responseCode == t.ResponseCode.INVALID_REQUEST
            and "--runtime=fleet" in message(resp) and "nginx:1.25" in message(resp), resp)
    path = os.path.join(tmp, "boxed.json")
    with open(path, "w") as f:
        json.dump({"cluster": CLUSTER, "role": "www", "environment": "prod", "name": "boxed",
                   "instances": 1, "task": {"command": "exec sleep 600"},
                   "container": {"docker": {"image": "nginx:1.25"}}}, f)
    code, out, err = cli(d, "job", "create", CLUSTER + "/www/prod/boxed", path)
    r.check("stagger job create with a docker image fails, naming --runtime=fleet",
            code != 0 and "--runtime=fleet" in err, (code, out, err))


def main():
    r = stgtest.Results("local_pending_test")
    t, mod = stgtest.load_stubs()
    d = None
    try:
        with tempfile.TemporaryDirectory(prefix="stagger-pending-") as tmp:
            d = stgtest.Daemon("--port-range=" + PORTS,
                               config="[staggerd]\nhost_attributes = zone=a\n")
            transport = stgtest.HttpTransport(d.http_port, "application/x-thrift",
                                              "application/json")
            c = mod.Client(TJSONProtocol.TJSONProtocol(transport))
            r.run("held", held, r, t, c, d)
            r.run("killed tasks stay", killed_tasks_stay, r, t, c)
            r.run("docker", docker, r, t, c, d, tmp)
    finally:
        if d is not None:
            r.check("staggerd exits cleanly", d.stop() == 0)
            d.kill_instances()
        stgtest.cleanup_stubs()
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
