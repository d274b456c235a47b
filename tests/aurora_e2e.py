"""aurora_e2e.py: Apache Aurora's end-to-end test (test_end_to_end.sh in
Aurora's repository) replayed against a real staggerd that runs real
instances: every call is what the aurora client sends for the command the
script runs (its config/thrift.py convert() for the job, UpdaterConfig for
the update settings, restarter.py and instance_watcher.py for a restart),
through a stock python3-thrift client with the binary protocol over HTTP
POST /api, as the client at Aurora's HEAD talks. The executor data are the
files of tests/aurora/ (AuroraExecutor, which stagger-thermos runs).

The jobs' roles run as nobody when the tests run as root (instance_user),
as Aurora runs a role's tasks as its user. What the e2e script's jobs take
from its Vagrant box is replaced: Aurora's http_example.py by
tests/aurora/http_server.py, `python` by python3, the mktemp files its
--bind options name by files of a folder of this test, and the failing
shell health check `rm -f /etc/passwd` (which fails there because the
role's user may not) by a command that fails for anyone and harms nothing.

Flows: create and status, .thermos_profile, the batched restart, add-only
and kill-only updates (1 -> 3 -> 1 -> 3 instances), an update paused with a
message and resumed across a staggerd restart (instances adopted), a
failing shell health check rolled back, kill one then all then create
again, quota; ephemeral, daemon and final processes; a daemonizing process
that still gets SIGTERM on kill; the HTTP health check on a `health` port
that is an alias, and none (said by `stagger job status`) without one.
Ports 27600-27799.
"""
import getpass
import http.client
import json
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from thrift.protocol import TBinaryProtocol

import stgtest

BINARY = "application/vnd.apache.thrift.binary"
PORTS = "27600-27799"
CLUSTER = "devcluster"
ROLE = "vagrant"
MB = 1024 * 1024
DEADLINE = 120
RUNNER = stgtest.program("stagger-thermos")
SERVER = os.path.join(stgtest.SRCDIR, "tests", "aurora", "http_server.py")
STAGE = "cp /vagrant/src/test/sh/org/apache/aurora/e2e/http_example.py ."
BAD_CHECK = "rm -f /etc/passwd"


def wait_for(what, fn, timeout=DEADLINE):
    """fn() until it is truthy (polling); its value, or an error naming what."""
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.1)


def fixture(name, replace=()):
    """The executor data of tests/aurora/NAME.json, with (from, to) pairs
    replaced (each must be there)."""
    with open(os.path.join(stgtest.SRCDIR, "tests", "aurora", name + ".json")) as f:
        text = f.read()
    for old, new in replace:
        if old not in text:
            raise AssertionError("%s.json has no %r" % (name, old))
        text = text.replace(old, new)
    return json.loads(text)


def http_example(name="http_example_updated"):
    """One of the http_example jobs, as this host can run it."""
    return fixture(name, [(STAGE, "cp %s http_example.py" % SERVER), ("python ", "python3 ")])


def client_ports(data):
    """The named ports the client asks for (config/__init__.py ports()):
    the task's {{thermos.ports[...]}}, through the announcer's portmap, and
    the portmap's targets that are not numbers."""
    portmap = dict(data.get("announce", {}).get("portmap", {})) if "announce" in data else {}

    def resolve(name):
        seen = set()
        while name in portmap and name not in seen:
            seen.add(name)
            name = portmap[name]
        return name

    refs = set(re.findall(r"\{\{thermos\.ports\[([^\]]+)\]\}\}", json.dumps(data["task"])))
    names = {resolve(k) for k in portmap} | {resolve(r) for r in refs}
    return {n for n in names if not str(n).isdigit()}


class Aurora:
    """The aurora client's calls, binary protocol over HTTP POST /api."""

    def __init__(self, t, mod, daemon):
        self.t = t
        transport = stgtest.HttpTransport(daemon.http_port, BINARY, BINARY,
                                          {"Host": "127.0.0.1", "User-Agent": "Aurora V2"})
        self.c = mod.Client(TBinaryProtocol.TBinaryProtocol(transport))
        self.active = {t.ScheduleStatus.ASSIGNED, t.ScheduleStatus.PENDING, t.ScheduleStatus.RUNNING,
                       t.ScheduleStatus.STARTING, t.ScheduleStatus.KILLING, t.ScheduleStatus.RESTARTING,
                       t.ScheduleStatus.DRAINING, t.ScheduleStatus.PREEMPTING, t.ScheduleStatus.THROTTLED}

    def ok(self, resp, what):
        if resp.responseCode != self.t.ResponseCode.OK:
            raise AssertionError("%s: %s %s" % (what, resp.responseCode,
                                                [d.message for d in resp.details or []]))
        return resp.result

    def key(self, data):
        return self.t.JobKey(role=data["role"], environment=data["environment"], name=data["name"])

    def task(self, data):
        """TaskConfig as convert() builds it (tier and production as the
        client backfills them from getTierConfigs)."""
        t = self.t
        res = data["task"]["resources"]
        resources = {t.Resource(numCpus=res["cpu"]), t.Resource(ramMb=res["ram"] // MB),
                     t.Resource(diskMb=res["disk"] // MB)}
        resources |= {t.Resource(namedPort=p) for p in client_ports(data)}
        return t.TaskConfig(
            job=self.key(data), owner=t.Identity(user=getpass.getuser()), isService=data["service"],
            priority=data["priority"], maxTaskFailures=data["max_task_failures"],
            production=data["production"], tier="preemptible", contactEmail=data.get("contact"),
            metadata=set(), resources=resources, taskLinks={}, constraints=set(),
            container=t.Container(mesos=t.MesosContainer(), docker=None),
            executorConfig=t.ExecutorConfig(name="AuroraExecutor", data=json.dumps(data)))

    def create_job(self, data, instances=1):
        t = self.t
        job = t.JobConfiguration(key=self.key(data), owner=t.Identity(user=getpass.getuser()),
                                 cronSchedule=None,
                                 cronCollisionPolicy=t.CronCollisionPolicy.KILL_EXISTING,
                                 taskConfig=self.task(data), instanceCount=instances)
        return self.c.createJob(job)

    def tasks(self, key, statuses=None, instances=None):
        q = self.t.TaskQuery(jobKeys={key}, statuses=statuses if statuses is not None else self.active,
                             instanceIds=instances)
        return self.ok(self.c.getTasksWithoutConfigs(q), "getTasksWithoutConfigs") \
            .scheduleStatusResult.tasks

    def statuses(self, key):
        return {x.assignedTask.instanceId: self.t.ScheduleStatus._VALUES_TO_NAMES[x.status]
                for x in self.tasks(key)}

    def wait_running(self, key, count):
        """wait_until_task_counts: @count instances RUNNING, none else."""
        return wait_for("%d RUNNING instances of %s" % (count, key.name),
                        lambda: (lambda s: s if len(s) == count and
                                 set(s.values()) <= {"RUNNING"} else None)(self.statuses(key)))

    def start_update(self, data, instances=1, message=None):
        """startJobUpdate as `aurora update start` sends it for the
        http_example jobs' UpdateConfig(watch_secs=0, batch_size=2)."""
        t = self.t
        settings = t.JobUpdateSettings(
            updateGroupSize=2, maxPerInstanceFailures=0, maxFailedInstances=0,
            minWaitInInstanceRunningMs=0, rollbackOnFailure=True, waitForBatchCompletion=False,
            updateOnlyTheseInstances=None, blockIfNoPulsesAfterMs=None, slaAware=False,
            updateStrategy=t.JobUpdateStrategy(queueStrategy=t.QueueJobUpdateStrategy(groupSize=2)))
        request = t.JobUpdateRequest(
            taskConfig=self.task(data), instanceCount=instances, settings=settings,
            metadata={t.Metadata(key="org.apache.aurora.client.update_id",
                                 value=str(time.monotonic_ns()))})
        return self.ok(self.c.startJobUpdate(request, message), "startJobUpdate").startJobUpdateResult.key

    def update_status(self, key):
        details = self.ok(self.c.getJobUpdateDetails(key, None), "getJobUpdateDetails") \
            .getJobUpdateDetailsResult.detailsList
        return self.t.JobUpdateStatus._VALUES_TO_NAMES[details[0].update.summary.state.status]

    def active_update(self, job):
        """`aurora update list JOB --status active`: the one active update."""
        q = self.t.JobUpdateQuery(jobKey=job, updateStatuses={
            self.t.JobUpdateStatus.ROLLING_FORWARD, self.t.JobUpdateStatus.ROLLING_BACK,
            self.t.JobUpdateStatus.ROLL_FORWARD_PAUSED, self.t.JobUpdateStatus.ROLL_BACK_PAUSED,
            self.t.JobUpdateStatus.ROLL_FORWARD_AWAITING_PULSE,
            self.t.JobUpdateStatus.ROLL_BACK_AWAITING_PULSE})
        found = self.ok(self.c.getJobUpdateSummaries(q), "getJobUpdateSummaries") \
            .getJobUpdateSummariesResult.updateSummaries
        return (found[0].key, self.t.JobUpdateStatus._VALUES_TO_NAMES[found[0].state.status]) \
            if found else (None, None)

    def wait_update(self, key):
        """`aurora update wait`: until the update is no longer active."""
        return wait_for("update %s to end" % key.id, lambda: (lambda s: s if s in (
            "ROLLED_FORWARD", "ROLLED_BACK", "ABORTED", "ERROR", "FAILED") else None)(
                self.update_status(key)), timeout=2 * DEADLINE)

    def kill(self, key, instances=None):
        """`aurora job kill[all] --no-batching`: killTasks, then wait until
        none of them is active."""
        self.ok(self.c.killTasks(key, instances, None), "killTasks")
        wait_for("the kill of %s" % key.name,
                 lambda: not self.tasks(key, instances=instances), timeout=2 * DEADLINE)

    def restart(self, key, batch_size=2, watch_secs=1):
        """`aurora job restart --batch-size=2`: restarter.py's batches, each
        watched as instance_watcher.py watches them (RUNNING, and the same
        task id, for watch_secs); the failed ones."""
        t = self.t
        instances = sorted(x.assignedTask.instanceId for x in self.tasks(key))
        failed = set()
        while instances:
            batch, instances = instances[:batch_size], instances[batch_size:]
            self.ok(self.c.restartShards(key, set(batch)), "restartShards")
            seen, since = {}, {}
            deadline = time.monotonic() + DEADLINE
            pending = set(batch)
            while pending and time.monotonic() < deadline:
                now = time.monotonic()
                for task in self.tasks(key, {t.ScheduleStatus.RUNNING}, set(pending)):
                    i, tid = task.assignedTask.instanceId, task.assignedTask.taskId
                    if seen.setdefault(i, tid) != tid:
                        failed.add(i)
                        pending.discard(i)
                    elif now > since.setdefault(i, now) + watch_secs:
                        pending.discard(i)
                time.sleep(0.2)
            failed |= pending
        return failed


class Staggerd(stgtest.Daemon):
    """A staggerd whose roles' tasks run as nobody (when root), that can be
    restarted on the same data directory."""

    def __init__(self):
        config = "[staggerd]\ninstance_user = nobody\n" if os.geteuid() == 0 else None
        super().__init__("--port-range=" + PORTS, "--thermos-runner=" + RUNNER,
                         "--cluster=" + CLUSTER, config=config)
        os.chmod(self.dir, 0o711)  # the role's user reaches its sandboxes

    def restart(self, sig=signal.SIGTERM):
        """Stops staggerd with @sig (its instances go on) and starts another
        on the same data directory."""
        self.proc.send_signal(sig)
        self.proc.wait(timeout=60)
        status = self.proc.returncode
        os.unlink(self.ready)
        argv = [a for a in self.proc.args]
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT)
        wait_for("staggerd to be ready again", lambda: os.path.exists(self.ready), timeout=30)
        with open(self.ready) as f:
            info = json.load(f)
        self.http_port = info["http_port"]
        self.thrift_port = info["thrift_port"]
        return status

    def task_processes(self):
        """Pids of the processes still running for this daemon's instances
        (found by STAGGER_SANDBOX, which stagger-thermos passes on)."""
        prefix = (self.dir + "/").encode()
        found = []
        for pid in os.listdir("/proc"):
            try:
                with open("/proc/%s/environ" % pid, "rb") as f:
                    env = f.read().split(b"\0")
            except OSError:
                continue
            if any(v.startswith(b"STAGGER_SANDBOX=" + prefix) for v in env):
                found.append(int(pid))
        return found


def logs(a, mod, key, instance, process=None, stderr=False):
    """getTaskLogs of an instance, or of one process of its task."""
    t = a.t
    resp = a.c.getTaskLogs(t.InstanceKey(jobKey=key, instanceId=instance), stderr, 0, 65536,
                           process or "", -1)
    return a.ok(resp, "getTaskLogs").getTaskLogsResult


def ui_json(d, path):
    """GET @path of the web UI's JSON."""
    conn = http.client.HTTPConnection("127.0.0.1", d.http_port, timeout=30)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        body = resp.read()
        if resp.status != 200:
            raise AssertionError("GET %s: %d %s" % (path, resp.status, body[:200]))
        return json.loads(body)
    finally:
        conn.close()


def cli(d, *args):
    """The stagger CLI against @d: (exit code, output)."""
    env = dict(os.environ, NO_COLOR="")
    env.pop("STAGGER_URL", None)
    env.pop("STAGGER_TOKEN", None)
    p = subprocess.run([stgtest.program("stagger"), "--url", "http://127.0.0.1:%d" % d.http_port]
                       + list(args), capture_output=True, text=True, timeout=60, env=env)
    return p.returncode, p.stdout + p.stderr


def catches_sigterm(fragment):
    """A process whose command line holds @fragment and that handles
    SIGTERM (SigCgt in /proc/PID/status), or None."""
    for pid in os.listdir("/proc"):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                if fragment not in f.read():
                    continue
            with open("/proc/%s/status" % pid) as f:
                caught = [int(l.split()[1], 16) for l in f if l.startswith("SigCgt:")]
        except (OSError, ValueError):
            continue
        if caught and caught[0] & (1 << (signal.SIGTERM - 1)):
            return int(pid)
    return None


def http_example_flows(r, t, mod, d, shared):
    """test_http_example: the http_example job through the script's steps."""
    a = Aurora(t, mod, d)
    base, updated = http_example("http_example"), http_example("http_example_updated")
    bad = http_example("http_example_bad_healthcheck")
    bad["health_check_config"]["health_checker"]["shell"]["shell_command"] = \
        "ls %s/no/such/file" % shared
    key = a.key(base)
    path = "%s/%s/%s/%s" % (CLUSTER, key.role, key.environment, key.name)

    # test_create, test_job_status
    a.ok(a.create_job(base), "createJob")
    a.wait_running(key, 1)
    jobs = a.ok(a.c.getJobs(ROLE), "getJobs").getJobsResult.configs
    r.check("job list: the job is there", any(j.key.name == key.name for j in jobs))
    code, out = cli(d, "job", "status", path)
    r.check("job status: RUNNING, healthy, HTTP check on port health",
            code == 0 and "RUNNING" in out and "health check: HTTP GET /health on port health" in out,
            out)
    task = a.tasks(key)[0]
    ports = dict(task.assignedTask.assignedPorts)
    r.check("the client's ports are assigned", set(ports) == {"http", "tcp", "health"}, ports)

    # test_thermos_profile (.logs/read_env/0/stdout) and the ports' templates
    read_env = logs(a, mod, key, 0, "read_env")
    r.check("thermos profile: read_env printed hello", read_env.data == b"hello\n", read_env)
    r.check("getTaskLogs lists the task's processes",
            read_env.processes == ["setup_env", "read_env", "echo_ports", "verify_command_escaping",
                                   "stage_server", "run_server"] and read_env.processRun == 0,
            read_env)
    echo = logs(a, mod, key, 0, "echo_ports").data.decode()
    r.check("templates: ports and the alias", echo == "tcp port: %d; http port: %d; alias: %d; "
            "health: %d\n" % (ports["tcp"], ports["http"], ports["http"], ports["health"]), echo)
    code, out = cli(d, "task", "logs", path + "/0", "--process", "read_env")
    r.check("stagger task logs --process read_env", code == 0 and out == "hello\n", out)
    code, out = cli(d, "task", "logs", path + "/0", "--process", "nosuch")
    r.check("task logs of an unknown process: not found, naming the processes",
            code != 0 and "read_env" in out, out)
    q = "role=%s&environment=%s&name=%s" % (key.role, key.environment, key.name)
    view = ui_json(d, "/ui/api/instance?%s&instance=0&process=read_env" % q)
    r.check("web UI: the instance view shows a process's output and the processes",
            view["stdout_tail"] == "hello\n" and view["processes"] == read_env.processes, view)
    page = ui_json(d, "/ui/api/job?" + q)
    r.check("web UI: the job's health check in words",
            (page["health_check"] or "").startswith("HTTP GET /health on port health"),
            page["health_check"])
    runner = logs(a, mod, key, 0, stderr=True).data.decode()
    r.check("the instance's own output is its runner's", "stagger-thermos" in runner, runner)

    # test_restart: batches of restartShards, each watched
    before = a.tasks(key)[0].assignedTask.taskId
    failed = a.restart(key)
    after = a.tasks(key)[0].assignedTask.taskId
    r.check("restart: no instance failed, a new task", not failed and after != before,
            (failed, before, after))

    # test_update_add_only_kill_only: 3, 1, 3 instances, then killall
    for count in (3, 1, 3):
        u = a.start_update(base, count)
        r.check("add/kill only to %d: rolling forward" % count,
                a.active_update(key)[1] == "ROLLING_FORWARD")
        r.check("add/kill only to %d: ROLLED_FORWARD" % count, a.wait_update(u) == "ROLLED_FORWARD")
        a.wait_running(key, count)

    # kill one, then all, then create again (test_kill, killall + create)
    a.kill(key, {1})
    r.check("kill one: instances 0 and 2 left", a.statuses(key) == {0: "RUNNING", 2: "RUNNING"},
            a.statuses(key))
    a.kill(key)
    r.check("killall: no process of the job is left", not d.task_processes(), d.task_processes())
    a.ok(a.create_job(base), "createJob after killall")
    a.wait_running(key, 1)
    r.check("create again: running", True)

    # staggerd killed with SIGKILL: the next one adopts the runner, and
    # every process of the task (each in a session of its own) goes on.
    wait_for("the server to run", lambda: len(d.task_processes()) >= 2)
    before = sorted(d.task_processes())
    d.restart(signal.SIGKILL)
    a = Aurora(t, mod, d)
    a.wait_running(key, 1)
    r.check("adopted after kill -9: the same processes run, none stopped",
            sorted(d.task_processes()) == before, (before, sorted(d.task_processes())))

    # test_update: paused with a message, staggerd restarted, resumed
    u = a.start_update(updated)
    r.check("update: ROLLING_FORWARD", a.active_update(key)[1] == "ROLLING_FORWARD")
    a.ok(a.c.snapshot(), "snapshot")
    d.restart()
    a = Aurora(t, mod, d)
    r.check("update: ROLLING_FORWARD after a restart", a.active_update(key)[1] == "ROLLING_FORWARD")
    a.ok(a.c.pauseJobUpdate(u, "hello"), "pauseJobUpdate")
    r.check("update: ROLL_FORWARD_PAUSED", a.active_update(key)[1] == "ROLL_FORWARD_PAUSED")
    a.ok(a.c.resumeJobUpdate(u, None), "resumeJobUpdate")
    r.check("update: ROLLING_FORWARD again", a.active_update(key)[1] == "ROLLING_FORWARD")
    r.check("update: ROLLED_FORWARD", a.wait_update(u) == "ROLLED_FORWARD")
    details = a.ok(a.c.getJobUpdateDetails(u, None), "details").getJobUpdateDetailsResult.detailsList[0]
    r.check("the pause's message is recorded",
            any(e.message == "hello" for e in details.updateEvents), details.updateEvents)
    a.wait_running(key, 1)

    # test_update_fail: the base config, then a failing shell check rolled back
    u = a.start_update(base)
    r.check("update to the base config: ROLLED_FORWARD", a.wait_update(u) == "ROLLED_FORWARD")
    u = a.start_update(bad)
    r.check("failing health check: ROLLED_BACK", a.wait_update(u) == "ROLLED_BACK")
    a.wait_running(key, 1)
    u = a.start_update(updated)
    r.check("update again: ROLLED_FORWARD", a.wait_update(u) == "ROLLED_FORWARD")

    # test_kill, test_quota
    a.kill(key)
    r.check("kill: nothing of the job runs", not d.task_processes(), d.task_processes())
    quota = a.ok(a.c.getQuota(ROLE), "getQuota").getQuotaResult
    r.check("quota get answers", quota.quota is not None, quota)


def ephemeral_daemon_with_final(r, t, mod, d, shared):
    """test_ephemeral_daemon_with_final: main waits for the stop file, the
    final process removes it; the ephemeral daemon is stopped at the end."""
    a = Aurora(t, mod, d)
    stop_file = os.path.join(shared, "stop_file")
    data = fixture("ephemeral_daemon_with_final", [("/tmp/tmp.stop_file", stop_file)])
    key = a.key(data)
    path = "%s/%s/%s/%s" % (CLUSTER, key.role, key.environment, key.name)
    a.ok(a.create_job(data), "createJob ephemeral_daemon_with_final")
    a.wait_running(key, 1)
    code, out = cli(d, "job", "status", path)
    r.check("no health port: job status says there is no HTTP check",
            code == 0 and "health check: none: the task has no port named 'health'" in out, out)
    with open(stop_file, "w"):
        pass
    wait_for("the final process to remove the stop file", lambda: not os.path.exists(stop_file))
    done = wait_for("the task to finish", lambda: [x for x in a.tasks(key, {
        t.ScheduleStatus.FINISHED, t.ScheduleStatus.FAILED})] or None)
    r.check("the task FINISHED", done[0].status == t.ScheduleStatus.FINISHED, done[0])
    r.check("main said OK", logs(a, mod, key, 0, "main").data == b"main OK\n")
    r.check("final said OK", logs(a, mod, key, 0, "final").data == b"final OK\n")
    eph = logs(a, mod, key, 0, "ephemeral_daemon").data
    r.check("the ephemeral daemon ran", eph == b"ephemeral daemon started\n", eph)
    r.check("nothing of the task is left", not d.task_processes(), d.task_processes())


def daemonizing_process(r, t, mod, d, shared):
    """test_daemonizing_process: a process that forks twice and leaves its
    session still gets SIGTERM when the job is killed."""
    a = Aurora(t, mod, d)
    term_file = os.path.join(shared, "term_file")
    data = fixture("test_daemonizing_process", [("/tmp/tmp.term_file", term_file),
                                                ("python ./daemon.py", "python3 ./daemon.py")])
    key = a.key(data)
    with open(term_file, "w"):
        pass
    os.chmod(term_file, 0o666)
    a.ok(a.create_job(data), "createJob daemonize")
    a.wait_running(key, 1)
    daemon = wait_for("the daemon to handle SIGTERM", lambda: catches_sigterm(b"./daemon.py"))

    def parent_comm():
        with open("/proc/%d/stat" % daemon) as f:
            parent = int(f.read().rsplit(")", 1)[1].split()[1])
        with open("/proc/%d/comm" % parent) as f:
            return f.read().strip()
    # The middle process (python3) may still be on its way out on a loaded
    # machine: the daemon is the runner's once that exit is done.
    comm = parent_comm()
    deadline = time.monotonic() + DEADLINE
    while comm != "stagger-thermos" and time.monotonic() < deadline:
        time.sleep(0.1)
        comm = parent_comm()
    r.check("the daemon is an orphan the runner reaps", comm == "stagger-thermos", comm)
    a.kill(key)
    wait_for("the daemon's SIGTERM handler to remove the term file",
             lambda: not os.path.exists(term_file))
    r.check("the daemonized process got SIGTERM", not os.path.exists(term_file))
    r.check("no process of the task is left", not d.task_processes(), d.task_processes())


def health_alias(r, t, mod, d, shared):
    """The HTTP check goes to the port named health, here an alias of
    http (announce.portmap): the server answers /health on http's port."""
    a = Aurora(t, mod, d)
    data = http_example("http_example")
    data["name"] = "http_alias"
    data["announce"]["portmap"] = {"alias": "http", "health": "http"}
    for p in data["task"]["processes"]:
        p["cmdline"] = p["cmdline"].replace("{{thermos.ports[health]}}", "{{thermos.ports[http]}}") \
            .replace("http_example.py {{thermos.ports[http]}}", "http_example.py {{thermos.ports[tcp]}}")
    key = a.key(data)
    r.check("alias: the client asks for no port named health",
            client_ports(data) == {"http", "tcp"}, client_ports(data))
    a.ok(a.create_job(data), "createJob http_alias")
    a.wait_running(key, 1)
    task = a.tasks(key)[0]
    http = task.assignedTask.assignedPorts["http"]
    healthy = [e.message for e in task.taskEvents if e.status == t.ScheduleStatus.RUNNING]
    r.check("healthy by GET /health on http's port (the alias health)",
            any(":%d/health" % http in m for m in healthy), task.taskEvents)
    a.kill(key)


def bad_input(r, t, mod, d, shared):
    """What the runner cannot run is refused at submission, createJob and
    startJobUpdate alike, with INVALID_REQUEST and a message that names
    the key."""
    a = Aurora(t, mod, d)
    base = http_example("http_example")
    base["name"] = "bad_input"

    def variant(change):
        data = json.loads(json.dumps(base))
        change(data)
        return data

    def order(*orders):
        return lambda data: data["task"].__setitem__("constraints",
                                                     [{"order": list(o)} for o in orders])

    cases = [
        ("malformed task JSON", None, "executorConfig.data: not valid JSON"),
        ("an order naming an unknown process", variant(order(["setup_env", "nosuch"])),
         "executorConfig.data: task.constraints[0].order[1]: no process is named 'nosuch'"),
        ("an order forming a cycle",
         variant(order(["setup_env", "read_env"], ["read_env", "setup_env"])),
         "executorConfig.data: task.constraints: the order constraints form a cycle"),
        ("a health command naming a port the task does not ask for",
         variant(lambda data: data["health_check_config"].__setitem__(
             "health_checker", {"shell": {"shell_command": "true {{thermos.ports[nope]}}"}})),
         "health_check_config.health_checker.shell.shell_command: template "
         "{{thermos.ports[nope]}} names port 'nope', which the task does not ask for"),
        ("cron", variant(lambda data: data.__setitem__("cron_schedule", "* * * * *")),
         "executorConfig.data: cron_schedule: cron jobs are not supported"),
    ]
    for what, data, says in cases:
        task = a.task(base if data is None else data)
        if data is None:
            task.executorConfig.data = '{"name": '
        for call in ("createJob", "startJobUpdate"):
            if call == "createJob":
                job = t.JobConfiguration(key=task.job, owner=task.owner, taskConfig=task,
                                         cronCollisionPolicy=t.CronCollisionPolicy.KILL_EXISTING,
                                         instanceCount=1)
                resp = a.c.createJob(job)
            else:
                settings = t.JobUpdateSettings(updateGroupSize=1, maxPerInstanceFailures=0,
                                               maxFailedInstances=0, minWaitInInstanceRunningMs=0,
                                               rollbackOnFailure=True)
                resp = a.c.startJobUpdate(t.JobUpdateRequest(taskConfig=task, instanceCount=1,
                                                             settings=settings), None)
            text = " ".join(x.message for x in resp.details or [])
            r.check("%s: %s refused naming the key" % (what, call),
                    resp.responseCode == t.ResponseCode.INVALID_REQUEST and says in text,
                    (resp.responseCode, text))

    # The TaskConfig's named ports must hold what the task needs.
    task = a.task(base)
    task.resources = {x for x in task.resources if x.namedPort != "tcp"}
    job = t.JobConfiguration(key=task.job, owner=task.owner, taskConfig=task,
                             cronCollisionPolicy=t.CronCollisionPolicy.KILL_EXISTING,
                             instanceCount=1)
    resp = a.c.createJob(job)
    text = " ".join(x.message for x in resp.details or [])
    r.check("a template naming a port the task does not ask for: refused naming the key",
            resp.responseCode == t.ResponseCode.INVALID_REQUEST and
            "task.processes[2].cmdline needs port 'tcp', which the task does not ask for" in text,
            (resp.responseCode, text))


def example_hello_world(r, t, mod, d, shared):
    """examples/aurora/: the hello_world tutorial's job created by `stagger
    job create` from its job file, whose aurora_task is the tutorial's task
    as the aurora client sends it (here with the program where this tree
    has it)."""
    a = Aurora(t, mod, d)
    src = os.path.join(stgtest.SRCDIR, "examples", "aurora")
    with open(os.path.join(src, "hello_world.json")) as f:
        task = f.read().replace("/vagrant/hello_world.py", os.path.join(src, "hello_world.py"))
    with open(os.path.join(shared, "hello_world.json"), "w") as f:
        f.write(task)
    shutil.copy(os.path.join(src, "hello_world_job.json"), shared)
    path = "devcluster/www-data/devel/hello_world"
    code, out = cli(d, "job", "create", path, os.path.join(shared, "hello_world_job.json"))
    r.check("stagger job create of the tutorial's job", code == 0, out)
    key = t.JobKey(role="www-data", environment="devel", name="hello_world")
    a.wait_running(key, 1)
    md5 = cli(d, "task", "logs", path + "/0", "--process", "fetch_package")[1]
    r.check("fetch_package printed the program's MD5 sum",
            md5 == "8a76df6586b20ba7c199891ce2448dd0\n", md5)
    hello = wait_for("hello_world to say hello", lambda: (lambda out: out if "Hello world!" in out
                     else None)(cli(d, "task", "logs", path + "/0", "--process", "hello_world")[1]))
    r.check("hello_world says hello", hello.startswith("Hello world! It is"), hello)
    code, out = cli(d, "job", "status", path)
    r.check("job status: no health port, no HTTP check", "health check: none" in out, out)
    a.kill(key)

    # Job files whose aurora_task cannot be: refused naming the key.
    with open(os.path.join(src, "hello_world_job.json")) as f:
        good = json.load(f)
    bad_task = json.loads(task)
    bad_task["task"]["constraints"] = [{"order": ["hello_world", "nosuch"]}]
    cases = [("task", dict(good, task={"command": "true"}),
              "task: a job with an aurora_task takes this from it"),
             ("role", dict(good, aurora_task=dict(json.loads(task), role="other")),
              "aurora_task.role: 'other', but the job file's role is 'www-data'"),
             ("order", dict(good, aurora_task=bad_task),
              "aurora_task: task.constraints[0].order[1]: no process is named 'nosuch'")]
    for what, content, says in cases:
        name = os.path.join(shared, "bad_%s.json" % what)
        with open(name, "w") as f:
            json.dump(content, f)
        code, out = cli(d, "job", "create", path, name)
        r.check("job file with a bad aurora_task (%s): refused" % what, code != 0 and says in out,
                out)


def main():
    r = stgtest.Results("aurora_e2e")
    t, mod = stgtest.load_stubs()
    shared = tempfile.mkdtemp(prefix="stagger-e2e-")
    os.chmod(shared, 0o777)  # the role's user writes and removes its files
    d = Staggerd()
    try:
        for name, flow in (("http_example", http_example_flows),
                           ("ephemeral_daemon_with_final", ephemeral_daemon_with_final),
                           ("daemonizing_process", daemonizing_process),
                           ("health_alias", health_alias),
                           ("bad_input", bad_input),
                           ("example_hello_world", example_hello_world)):
            r.run(name, flow, r, t, mod, d, shared)
    finally:
        status = d.stop()
        r.check("staggerd stopped cleanly", status == 0, status)
        shutil.rmtree(shared, ignore_errors=True)
        stgtest.cleanup_stubs()
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
