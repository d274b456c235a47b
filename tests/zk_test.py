"""zk_test.py: ZooKeeper ServerSets with a real ZooKeeper (Debian's
zookeeper package, started here on a port of this suite, stopped after),
read as Aurora's tools read them (python3-kazoo), around a real staggerd
whose AuroraExecutor instances are run by stagger-thermos.

Checks: the leading staggerd is the one member of scheduler_path with
Aurora's JSON, and the stagger CLI finds it from a clusters file that
names only zk and scheduler_zk_path; a job of 3 announced instances has
exactly 3 members with Aurora's JSON (service endpoint the primary port,
every port and alias an additional endpoint, the shard); a member deleted
by someone else comes back (Aurora's e2e validate_serverset.py); a rolling
update with minInService 2 never has fewer than 2 members and ends with
every member new; kill -9 of staggerd leaves every instance's member in
place; ZooKeeper restarted with its data lost ends with every healthy
instance a member again, and the leader too; a failing update is rolled
back with 3 members at the end; kill one removes one member, kill all
removes every one; announce.zk_path refused without
allow_custom_serverset_path; bad [zookeeper] settings stop staggerd with
a message naming them. Ports 28700-28799.
"""
import glob
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException, NoNodeError

import aurora_e2e
import stgtest

PORTS = "28700-28749"
HA_PATH = "/stagger/ha/scheduler"
LEASE_MS = 1000
ZK_PORT = 28795
SCHEDULER_PATH = "/aurora/scheduler"
SERVERSET = "/aurora/vagrant/test/http_example"
DEADLINE = 60


class Staggerd(aurora_e2e.Staggerd):
    """aurora_e2e's staggerd with [zookeeper] set."""

    def __init__(self, zk, more=""):
        config = "[staggerd]\n" + ("instance_user = nobody\n" if os.geteuid() == 0 else "")
        config += ("[zookeeper]\nensemble = %s\nscheduler_path = %s\nsession_timeout_ms = 4000\n%s"
                   % (zk.ensemble, SCHEDULER_PATH, more))
        stgtest.Daemon.__init__(self, "--port-range=" + PORTS, "--thermos-runner=" + aurora_e2e.RUNNER,
                                "--cluster=" + aurora_e2e.CLUSTER, config=config)
        os.chmod(self.dir, 0o711)


def members(kz, path):
    """{name: JSON} of the ServerSet at @path; asked again while the test's
    own session is lost or expired (ZooKeeper's restarts)."""
    deadline = time.monotonic() + DEADLINE
    while True:
        try:
            return read_members(kz, path)
        except KazooException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def read_members(kz, path):
    if not kz.exists(path):
        return {}
    found = {}
    for child in kz.get_children(path):
        if child.startswith("member_"):
            try:
                data, _ = kz.get(path + "/" + child)
            except NoNodeError:  # gone since listed
                continue
            found[child] = json.loads(data)
    return found


def wait_members(kz, path, count, timeout=DEADLINE):
    """The members at @path once there are @count of them."""
    return aurora_e2e.wait_for("%d members at %s" % (count, path),
                               lambda: (lambda m: (m,) if len(m) == count else None)(
                                   members(kz, path)), timeout=timeout)[0]


def instance_ports(a, key):
    """{instance: {port name: number}} of the job's active tasks."""
    return {x.assignedTask.instanceId: dict(x.assignedTask.assignedPorts) for x in a.tasks(key)}


def expected_member(data, ports, instance, host):
    """Aurora's member JSON for an instance of @data with @ports assigned:
    the service endpoint its primary port; the ports its task uses and the
    announcer's aliases (Aurora's default: aurora, the primary port)
    additional endpoints; the shard."""
    announce = data["announce"]
    primary = announce.get("primary_port", "http")
    every = {n: ports[n] for n in aurora_e2e.client_ports(data)}
    for alias, target in announce.get("portmap", {"aurora": primary}).items():
        every[alias] = int(target) if str(target).isdigit() else every[target]
    return {"serviceEndpoint": {"host": host, "port": every.get(primary, 0)},
            "additionalEndpoints": {n: {"host": host, "port": p} for n, p in every.items()},
            "status": "ALIVE", "shard": instance}


def want_members(a, key, data, host):
    ports = instance_ports(a, key)
    return sorted((expected_member(data, ports[i], i, host) for i in ports),
                  key=lambda m: m["shard"])


def start_update(a, data, instances, group=1, min_in_service=None):
    t = a.t
    settings = t.JobUpdateSettings(
        updateGroupSize=group, maxPerInstanceFailures=0, maxFailedInstances=0,
        minWaitInInstanceRunningMs=0, rollbackOnFailure=True, waitForBatchCompletion=False,
        updateOnlyTheseInstances=None, blockIfNoPulsesAfterMs=None, slaAware=False,
        minInService=min_in_service,
        updateStrategy=t.JobUpdateStrategy(queueStrategy=t.QueueJobUpdateStrategy(groupSize=group)))
    request = t.JobUpdateRequest(taskConfig=a.task(data), instanceCount=instances, settings=settings,
                                 metadata=set())
    return a.ok(a.c.startJobUpdate(request, None), "startJobUpdate").startJobUpdateResult.key


class Watch:
    """Every count of members the ServerSet went through (a kazoo children
    watch), and the least of them."""

    def __init__(self, kz, path):
        self.counts = []
        self.lock = threading.Lock()
        self.active = True
        kz.ChildrenWatch(path, self.changed)

    def changed(self, children):
        with self.lock:
            if self.active:
                self.counts.append(len([c for c in children if c.startswith("member_")]))
        return self.active

    def stop(self):
        with self.lock:
            self.active = False
            return list(self.counts)


def client(zk):
    """A kazoo client of @zk, as Aurora's tools read ServerSets."""
    kz = KazooClient(zk.ensemble, connection_retry={"max_tries": -1, "max_delay": 1})
    kz.start(timeout=30)
    return kz


def cli_zk(d, cluster_file, *args):
    """The stagger CLI given only a zk-style clusters file (no URL)."""
    env = dict(os.environ, NO_COLOR="", XDG_CONFIG_HOME=cluster_file)
    for v in ("STAGGER_URL", "STAGGER_TOKEN", "STAGGER_CONFIG_DIR"):
        env.pop(v, None)
    p = subprocess.run([stgtest.program("stagger")] + list(args), capture_output=True, text=True,
                       timeout=60, env=env)
    return p.returncode, p.stdout + p.stderr


def leader_flows(r, zk, kz, d, config_home):
    found = wait_members(kz, SCHEDULER_PATH, 1)
    member = list(found.values())[0]
    endpoint = {"host": "127.0.0.1", "port": d.http_port}
    r.check("the leader is the one member of scheduler_path, with Aurora's JSON",
            member == {"serviceEndpoint": endpoint, "additionalEndpoints": {"http": endpoint},
                       "status": "ALIVE"}, member)
    metrics = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % d.http_port, timeout=30).read()
    r.check("/metrics: connected and announced",
            b"stagger_zookeeper_connected 1\n" in metrics
            and b"stagger_zookeeper_leader_announced 1\n" in metrics, metrics[-400:])
    code, out = cli_zk(d, config_home, "cluster", "status", "devcluster")
    r.check("stagger cluster status names the leader's member",
            code == 0 and "leader at %s: %s/member_" % (SCHEDULER_PATH, SCHEDULER_PATH) in out, out)
    code, out = cli_zk(d, config_home, "job", "list", "devcluster")
    r.check("stagger with a zk-style clusters file finds the leader", code == 0, out)
    code, out = cli_zk(d, config_home, "job", "list", "nopath")
    r.check("a zk-style cluster without scheduler_zk_path: a clear error",
            code != 0 and "scheduler_zk_path" in out, out)


def instance_flows(r, t, mod, zk, kz, d, shared, config_home):
    a = aurora_e2e.Aurora(t, mod, d)
    base = aurora_e2e.http_example("http_example")
    updated = aurora_e2e.http_example("http_example_updated")
    # Healthy after 2 checks a second apart (the fixture asks 15, 2 s apart).
    updated["health_check_config"].update(min_consecutive_successes=2, interval_secs=1.0)
    bad = aurora_e2e.http_example("http_example_bad_healthcheck")
    bad["health_check_config"]["health_checker"]["shell"]["shell_command"] = \
        "ls %s/no/such/file" % shared
    key = a.key(base)
    host = os.uname().nodename

    a.ok(a.create_job(base, 3), "createJob")
    a.wait_running(key, 3)
    found = wait_members(kz, SERVERSET, 3)
    want = want_members(a, key, base, host)
    got = sorted(found.values(), key=lambda m: m.get("shard", -1))
    r.check("3 announced instances: exactly 3 members with Aurora's JSON", got == want,
            (got, want))
    def state_members():
        states = []
        for path in glob.glob(os.path.join(d.dir, "data", "sandboxes", "*", "*", "*",
                                           ".thermos_state.json")):
            with open(path) as f:
                states.append(json.load(f))
        return sorted(x["announce"].get("member", "").rsplit("/", 1)[-1] for x in states
                      if x["state"] == "ACTIVE")

    # A runner writes its state file just after ZooKeeper answers its
    # create: the file may lag the member by a moment.
    try:
        announced = aurora_e2e.wait_for("the state files", lambda: state_members() == sorted(found)
                                        and state_members(), timeout=10)
    except AssertionError:
        announced = state_members()
    r.check("each runner's state file names its member", announced == sorted(found),
            (announced, sorted(found)))
    code, out = cli_zk(d, config_home, "job", "status", "devcluster/vagrant/test/http_example")
    r.check("stagger job status through the zk-style cluster, the instances announced",
            code == 0 and out.count("RUNNING") == 3 and "announces it in ZooKeeper" in out, out)
    endpoints = ["%s:%d" % (m["serviceEndpoint"]["host"], m["serviceEndpoint"]["port"])
                 for m in want]
    rows = [line for line in out.splitlines() if "RUNNING" in line]
    r.check("job status: an ANNOUNCED column, each instance's row with its endpoint",
            "ANNOUNCED" in out and len(rows) == 3
            and all(e in row for e, row in zip(endpoints, rows)), (endpoints, out))
    page = json.load(urllib.request.urlopen(
        "http://127.0.0.1:%d/ui/api/job?role=vagrant&environment=test&name=http_example"
        % d.http_port, timeout=30))
    said = sorted((i["announce"] or {}).get("member") or "" for i in page["instances"])
    r.check("the job's page has each instance's member, as ZooKeeper has it",
            said == sorted(SERVERSET + "/" + m for m in found), (said, sorted(found)))

    # validate_serverset.py: a member deleted by someone else comes back.
    gone = sorted(found)[0]
    kz.delete(SERVERSET + "/" + gone)
    back = wait_members(kz, SERVERSET, 3, timeout=15)
    r.check("a member deleted by someone else is made again", gone not in back, sorted(back))

    # A rolling update, one at a time, minInService 2.
    before = set(wait_members(kz, SERVERSET, 3))
    watch = Watch(kz, SERVERSET)
    u = start_update(a, updated, 3, group=1, min_in_service=2)
    r.check("update with minInService 2: ROLLED_FORWARD", a.wait_update(u) == "ROLLED_FORWARD")
    after = wait_members(kz, SERVERSET, 3)
    counts = watch.stop()
    r.check("the update never had fewer than 2 members", counts and min(counts) >= 2, counts)
    r.check("after the update every member is new", not (set(after) & before),
            (sorted(before), sorted(after)))
    want = want_members(a, key, updated, host)
    got = sorted(after.values(), key=lambda m: m.get("shard", -1))
    r.check("the new version's endpoints are announced", got == want, (got, want))

    # kill -9 of staggerd: the instances' members stay; the leader's goes
    # with its session and comes back with the next staggerd.
    before = dict(after)
    watch = Watch(kz, SERVERSET)
    d.restart(signal.SIGKILL)
    a = aurora_e2e.Aurora(t, mod, d)
    a.wait_running(key, 3)
    time.sleep(5)  # longer than the session timeout of the killed one
    counts = watch.stop()
    r.check("kill -9 of staggerd: every instance's member stays, untouched",
            members(kz, SERVERSET) == before and set(counts) == {3}, (counts, members(kz, SERVERSET)))
    leader = wait_members(kz, SCHEDULER_PATH, 1)
    r.check("the next staggerd is the leader's member",
            list(leader.values())[0]["serviceEndpoint"]["port"] == d.http_port, leader)

    # ZooKeeper restarted where no client finds it for longer than any
    # session's timeout: every session expires and its members go; then
    # back where the clients look: every member is made again.
    zk.stop()
    zk.start(port=ZK_PORT + 1)
    aside = KazooClient("127.0.0.1:%d" % (ZK_PORT + 1))
    aside.start(timeout=30)
    try:
        gone = aurora_e2e.wait_for("the sessions to expire", lambda: not members(aside, SERVERSET)
                                   and not members(aside, SCHEDULER_PATH), timeout=40)
    finally:
        aside.stop()
        aside.close()
    zk.stop()
    zk.start()
    r.check("ZooKeeper away longer than the sessions: the members went", gone)
    again = wait_members(kz, SERVERSET, 3, timeout=DEADLINE)
    r.check("ZooKeeper back: every healthy instance is a member again",
            sorted(m["shard"] for m in again.values()) == [0, 1, 2], again)
    r.check("... and the leader too", len(wait_members(kz, SCHEDULER_PATH, 1)) == 1)
    code, out = cli_zk(d, config_home, "job", "status", "devcluster/vagrant/test/http_example")
    r.check("the CLI finds the leader again", code == 0 and "RUNNING" in out, out)

    # ZooKeeper back with its data lost: it refuses sessions that saw newer
    # transactions; the clients open new ones and every member is back.
    zk.stop()
    zk.start(fresh=True)
    kz.stop()  # refused too: kazoo would ask with its old session forever
    kz.close()
    kz = client(zk)
    again = wait_members(kz, SERVERSET, 3, timeout=DEADLINE)
    r.check("ZooKeeper back without its data: every healthy instance is a member again",
            sorted(m["shard"] for m in again.values()) == [0, 1, 2], again)
    r.check("... and the leader too", len(wait_members(kz, SCHEDULER_PATH, 1)) == 1)

    # A failing update rolled back: 3 members at the end.
    u = start_update(a, bad, 3, group=1)
    r.check("a failing update: ROLLED_BACK", a.wait_update(u) == "ROLLED_BACK")
    r.check("after the rollback: 3 members", len(wait_members(kz, SERVERSET, 3)) == 3)

    # kill one, then all.
    a.kill(key, {1})
    left = wait_members(kz, SERVERSET, 2)
    r.check("kill one: its member is gone",
            sorted(m["shard"] for m in left.values()) == [0, 2], left)
    a.kill(key)
    r.check("kill all: no member is left", wait_members(kz, SERVERSET, 0) == {})

    # announce.zk_path without allow_custom_serverset_path: refused.
    custom = dict(base, name="custom_path")
    custom["announce"] = dict(base["announce"], zk_path="/elsewhere/custom")
    resp = a.create_job(custom, 1)
    why = " ".join(x.message for x in resp.details or [])
    r.check("announce.zk_path refused at submission, naming allow_custom_serverset_path",
            resp.responseCode == t.ResponseCode.INVALID_REQUEST
            and "allow_custom_serverset_path" in why, why)
    kz.stop()  # the client made after ZooKeeper lost its data
    kz.close()


def custom_path_flows(r, t, mod, zk, kz):
    """allow_custom_serverset_path: the task's own zk_path is its ServerSet."""
    d = Staggerd(zk, "allow_custom_serverset_path = true\n")
    try:
        a = aurora_e2e.Aurora(t, mod, d)
        custom = aurora_e2e.http_example("http_example")
        custom["announce"] = dict(custom["announce"], zk_path="/elsewhere/custom")
        key = a.key(custom)
        a.ok(a.create_job(custom, 1), "createJob custom path")
        a.wait_running(key, 1)
        found = wait_members(kz, "/elsewhere/custom", 1)
        r.check("with allow_custom_serverset_path the task is announced at its zk_path",
                [m["shard"] for m in found.values()] == [0], found)
        a.kill(key)
        r.check("... and leaves it when killed", wait_members(kz, "/elsewhere/custom", 0) == {})
    finally:
        r.check("the second staggerd stopped cleanly", d.stop() == 0)


def ha_flows(r, zk, kz, config_home):
    """3 replicas on PostgreSQL: after each leader kill the ServerSet names
    the new leader within a second of its taking over, and the CLI given
    only a zk-style clusters file follows it."""
    pg = stgtest.Postgres(range(28750, 28760))
    replicas = []
    config = "[zookeeper]\nensemble = %s\nscheduler_path = %s\n" % (zk.ensemble, HA_PATH)
    try:
        for low in (28760, 28763, 28766):
            replicas.append(stgtest.Replica(pg, stgtest.free_port(low, low + 3), LEASE_MS, config))
        with open(os.path.join(config_home, "stagger", "clusters.json"), "w") as f:
            json.dump([{"name": "ha", "zk": "127.0.0.1", "zk_port": ZK_PORT,
                        "scheduler_zk_path": HA_PATH}], f)
        leader = stgtest.wait_leader(replicas, 30)
        for kill in range(3):
            named = wait_members(kz, HA_PATH, 1)
            port = list(named.values())[0]["serviceEndpoint"]["port"]
            r.check("kill %d: the ServerSet names the leader" % kill, port == leader.port,
                    (port, leader.port))
            code, out = cli_zk(None, config_home, "cluster", "status", "ha")
            r.check("kill %d: the CLI with a zk-style clusters file reaches the leader" % kill,
                    code == 0 and "leader" in out, out)
            leader.daemon.proc.kill()
            leader.daemon.proc.wait()
            alive = [x for x in replicas if x.daemon.alive()]
            if not alive:
                break
            leader = stgtest.wait_leader(alive, 30)
            led = time.monotonic()
            seen = aurora_e2e.wait_for("the new leader in the ServerSet", lambda: (
                lambda m: m if [v["serviceEndpoint"]["port"] for v in m.values()] == [leader.port]
                else None)(members(kz, HA_PATH)), timeout=30)
            late = time.monotonic() - led
            r.check("kill %d: the new leader alone is named within 1 s of leading (%.3f s)"
                    % (kill, late), late <= 1.0 and len(seen) == 1, (late, seen))
    finally:
        stgtest.stop_replicas(replicas)
        pg.close()


def bad_settings(r, zk):
    for text, word in (("ensemble = nohost\n", "host:port"),
                       ("ensemble = %s\nscheduler_path = relative\n" % zk.ensemble, "ZooKeeper path"),
                       ("scheduler_path = /a\n", "needs [zookeeper] ensemble"),
                       ("ensemble = %s\nauth_config = /no/such/file\n" % zk.ensemble, "auth file"),
                       ("ensemble = %s\ncolour = blue\n" % zk.ensemble, "unknown key 'colour'")):
        tmp = tempfile.mkdtemp(prefix="stagger-zkconf-")
        path = os.path.join(tmp, "staggerd.conf")
        with open(path, "w") as f:
            f.write("[zookeeper]\n" + text)
        p = subprocess.run([stgtest.program("staggerd"), "--config=" + path,
                            "--data-dir=" + os.path.join(tmp, "data"), "--http-port=0",
                            "--thrift-port=0"], capture_output=True, text=True, timeout=30)
        r.check("[zookeeper] %s: refused at start" % text.strip().split("\n")[-1],
                p.returncode != 0 and word in p.stderr, p.stderr)
        subprocess.run(["rm", "-rf", tmp])


def main():
    # kazoo says every lost connection of the ZooKeeper restarts here.
    logging.getLogger("kazoo").setLevel(logging.CRITICAL)
    r = stgtest.Results("zk_test")
    t, mod = stgtest.load_stubs()
    shared = tempfile.mkdtemp(prefix="stagger-zk-shared-")
    os.chmod(shared, 0o777)
    config_home = tempfile.mkdtemp(prefix="stagger-zk-config-")
    zk = stgtest.ZooKeeper(ZK_PORT)
    kz = client(zk)
    d = None
    try:
        os.makedirs(os.path.join(config_home, "stagger"))
        with open(os.path.join(config_home, "stagger", "clusters.json"), "w") as f:
            json.dump([{"name": "devcluster", "zk": "127.0.0.1", "zk_port": ZK_PORT,
                        "scheduler_zk_path": SCHEDULER_PATH},
                       {"name": "nopath", "zk": "127.0.0.1", "zk_port": ZK_PORT}], f)
        r.run("bad settings", bad_settings, r, zk)
        d = Staggerd(zk)
        r.run("leader", leader_flows, r, zk, kz, d, config_home)
        r.run("instances", instance_flows, r, t, mod, zk, kz, d, shared, config_home)
        kz.stop()  # its session is the data-less ZooKeeper's refusal
        kz.close()
        kz = client(zk)
        log = d.output()
        status = d.stop()
        d = None
        r.check("staggerd stopped cleanly", status == 0, status)
        # Its session closed: at once, not after the session timeout.
        r.check("a stopped staggerd is no member of scheduler_path",
                wait_members(kz, SCHEDULER_PATH, 0, timeout=2) == {},
                [line for line in log.splitlines() if "zookeeper" in line])
        r.run("custom paths", custom_path_flows, r, t, mod, zk, kz)
        r.run("three replicas", ha_flows, r, zk, kz, config_home)
    finally:
        if d is not None:
            d.stop()
        kz.stop()
        kz.close()
        zk.close()
        subprocess.run(["rm", "-rf", shared, config_home])
        stgtest.cleanup_stubs()
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
