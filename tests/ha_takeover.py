"""ha_takeover.py: clients through a takeover, three replicas on a real
PostgreSQL started here.

The leader is killed (SIGKILL) while:
- the CLI, given all three replicas in a clusters file, runs `job list`
  in a loop: every call succeeds (the CLI tries the other replicas and
  waits for the election instead of giving up);
- `update start --wait` follows an update: it exits with the update's
  true outcome (ROLLED_FORWARD, 0), finished by the new leader;
- a probe connects every few milliseconds to the followers' HTTP and
  Thrift ports: the one that takes the lead never refuses a connection
  (it keeps its listeners);
- `stagger cluster status` asked with the dead leader first in the list
  answers, during the election and after; it shows the dead leader gone
  within a lease (and a second), then not at all once it has been gone
  for forget_replicas_secs, which the new leader logs.
Then, with the leadership lock held by another session after the next
leader is killed, the CLI waits --leader-wait and says that an election
is under way; once the lock is free it finds the new leader, given the
replicas by --url once each.
Last, the leader is killed again and again (STG_TAKEOVER_KILLS times, 2
here, 5 in a minute under `make soak-ha`), each killed replica started
again: a CLI loop calling every 50 ms never fails, and `update start
--wait`, begun before the first kill, lives through all of them and exits
with the update's outcome.
Ports 19750-19799.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import stgtest

LEASE_MS = 3000
FORGET_S = 12
BOUND_S = 15


def wait_leader(replicas):
    return stgtest.wait_leader(replicas, BOUND_S)


def cli(env, *args):
    return stgtest.run_cli(env, *args)


def kill(replica):
    replica.daemon.proc.send_signal(signal.SIGKILL)
    replica.daemon.proc.wait()


def job_file(tmp, version, name="web", instances=3):
    path = os.path.join(tmp, "%s-%d.json" % (name, version))
    with open(path, "w") as f:
        json.dump({"cluster": "ha", "role": "www", "environment": "prod", "name": name,
                   "instances": instances, "task": {"argv": ["sleep", "600"],
                                                    "env": {"VERSION": str(version)}},
                   "update_config": {"batch_size": 1, "watch_secs": 2}}, f)
    return path


def clusters_env(tmp, urls):
    os.makedirs(os.path.join(tmp, "stagger"), exist_ok=True)
    with open(os.path.join(tmp, "stagger", "clusters.json"), "w") as f:
        json.dump({"ha": urls}, f)
    env = dict(os.environ, XDG_CONFIG_HOME=tmp)
    env.pop("STAGGER_URL", None)
    return env


class Probe(threading.Thread):
    """Connects to each port every few milliseconds; counts refusals."""

    def __init__(self, ports):
        super().__init__(daemon=True)
        self.ports = ports
        self.refused = {p: 0 for p in ports}
        self.tries = 0
        self.halt = threading.Event()

    def run(self):
        while not self.halt.is_set():
            for port in self.ports:
                s = socket.socket()
                s.settimeout(2)
                try:
                    s.connect(("127.0.0.1", port))
                except ConnectionRefusedError:
                    self.refused[port] += 1
                except OSError:
                    pass
                finally:
                    s.close()
            self.tries += 1
            time.sleep(0.003)


class Loop(threading.Thread):
    """Runs `stagger job list ha` until told to stop, `pause` seconds
    apart; keeps every failure."""

    def __init__(self, env, pause=0):
        super().__init__(daemon=True)
        self.env = env
        self.pause = pause
        self.calls = 0
        self.failures = []
        self.halt = threading.Event()

    def run(self):
        while not self.halt.is_set():
            code, out, err = cli(self.env, "job", "list", "ha")
            self.calls += 1
            if code != 0 or "ha/www/prod/web" not in out:
                self.failures.append((code, err.strip()))
            self.halt.wait(self.pause)


def takeover(r, replicas, tmp):
    leader = wait_leader(replicas)
    followers = [x for x in replicas if x is not leader]
    # The dead leader first: every client starts where it can no longer be.
    env = clusters_env(tmp, [leader.url] + [x.url for x in followers])
    code, out, err = cli(env, "job", "create", "ha/www/prod/web", job_file(tmp, 1))
    r.check("job create", code == 0, err)

    waiter = subprocess.Popen([stgtest.program("stagger"), "update", "start", "ha/www/prod/web",
                               job_file(tmp, 2), "--wait"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    stgtest.wait_until(lambda: cli(env, "update", "list", "ha")[1].count(
        "ROLLING_FORWARD") > 0, timeout=20)
    loops = [Loop(env) for _ in range(3)]
    probe = Probe([p for x in followers for p in (x.port, x.thrift_port)])
    for loop in loops:
        loop.start()
    probe.start()
    time.sleep(0.5)
    code, out, err = cli(env, "--json", "cluster", "status", "ha")
    before_kill = [x for x in json.loads(out).get("replicas", []) if x["url"] == leader.url] \
        if code == 0 else (code, err)
    kill(leader)
    killed = time.monotonic()
    killed_ms = time.time() * 1000

    # During the election, and after it: cluster status from any replica.
    status = []
    while not any(stgtest.health(x.port) == "leader" for x in followers) and \
            time.monotonic() - killed < BOUND_S:
        status.append(cli(env, "cluster", "status", "ha"))
    status.append(cli(env, "cluster", "status", "ha"))
    failed = [s for s in status if s[0] != 0]
    r.check("cluster status answers during the election and after", not failed,
            failed[:2])
    survivor = wait_leader(followers)
    r.check("takeover: another replica leads", survivor is not leader)

    failed_status = []  # (exit, stderr) of cluster status calls that failed

    def dead_leader_line():
        """The killed leader's line in cluster status ("" once it is not
        listed), or None when the call failed: a failed call lists nothing
        and says nothing of it."""
        code, out, err = cli(env, "cluster", "status", "ha")
        if code != 0:
            failed_status.append((code, err.strip()[-300:]))
            return None
        return next((line for line in out.splitlines() if leader.url in line), "")

    seen = []  # (the answering replica's now_ms, the killed leader's role, its seen_ms)

    def dead_leader_gone():
        code, out, err = cli(env, "--json", "cluster", "status", "ha")
        status = json.loads(out) if code == 0 else {}
        listed = [x for x in status.get("replicas", []) if x["url"] == leader.url]
        for x in listed:
            seen.append((status["now_ms"], x["role"], x["seen_ms"]))
        # Gone, or already forgotten (a slow CLI on a loaded machine can
        # miss the window between the two; "late" below still holds it to
        # being gone within a lease whenever it was listed).
        return (seen and seen[-1][1] == "gone") or (code == 0 and not listed)

    gone = stgtest.wait_until(dead_leader_gone, timeout=BOUND_S)
    r.check("cluster status: the killed leader is gone", gone, seen[-3:])
    # By the answering replica's clock, not the CLI's latency under load.
    late = [(t - killed_ms, role) for t, role, _ in seen
            if t - killed_ms > LEASE_MS + 500 and role != "gone"]
    r.check("... from a lease after the kill on (and half a second)", not late, late)
    time.sleep(1.0)
    for loop in loops:
        loop.halt.set()
    probe.halt.set()
    for loop in loops:
        loop.join(timeout=120)
    probe.join(timeout=10)

    calls = sum(loop.calls for loop in loops)
    failures = [f for loop in loops for f in loop.failures]
    r.check("CLI loops: calls made across the kill", calls >= 10, calls)
    r.check("CLI loops: every call succeeded", not failures, (len(failures), failures[:2]))
    refused = {p: n for p, n in probe.refused.items() if n}
    r.check("probe: ran often", probe.tries > 50, probe.tries)
    r.check("probe: the new leader never refused a connection",
            refused.get(survivor.port, 0) == 0 and refused.get(survivor.thrift_port, 0) == 0,
            refused)

    try:
        out, err = waiter.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        waiter.kill()
        out, err = waiter.communicate()
    r.check("update start --wait followed the update to ROLLED_FORWARD (exit 0)",
            waiter.returncode == 0 and "ROLLED_FORWARD" in out, (waiter.returncode, out[-400:],
                                                                  err[-400:]))
    code, out, err = cli(env, "update", "list", "ha")
    r.check("the update did end ROLLED_FORWARD", "ROLLED_FORWARD" in out, out + err)

    forgotten = stgtest.wait_until(lambda: dead_leader_line() == "", timeout=BOUND_S)
    r.check("cluster status: the killed leader forgotten after forget_replicas_secs",
            forgotten and time.monotonic() - killed > FORGET_S - 1,
            (time.monotonic() - killed, dead_leader_line(), failed_status[-2:],
             # how long before the kill the killed leader last said it was alive
             [killed_ms - last for _, _, last in seen[-1:]],
             # its row just before the kill
             before_kill))
    # The leader then: the survivor, unless a loaded machine moved the lead on.
    logs = [x.daemon.output() for x in followers if x.daemon.alive()]
    r.check("... which the leader logged", any("ha: forgot replica" in o for o in logs),
            survivor.daemon.output()[-600:])


def election(r, replicas, pg, tmp):
    alive = [x for x in replicas if x.daemon.alive()]
    leader = wait_leader(alive)
    follower = next(x for x in alive if x is not leader)
    env = clusters_env(tmp, [x.url for x in replicas])
    holder = stgtest.hold_lock(pg)
    try:
        kill(leader)
        if not r.check("the lock is held elsewhere",
                       stgtest.wait_until(lambda: stgtest.lock_held(pg), timeout=BOUND_S)):
            return
        started = time.monotonic()
        code, out, err = cli(env, "--leader-wait", "1", "job", "list", "ha")
        r.check("no leader: exit 4 after the wait", code == 4 and time.monotonic() - started < 10,
                (code, err))
        r.check("no leader: the message says an election is under way",
                "election is under way" in err and "Is staggerd running" not in err, err)
        code, out, err = cli(env, "--leader-wait", "0", "cluster", "status", "ha")
        r.check("no leader: cluster status still answers", code == 0 and follower.url in out,
                (code, out, err))
    finally:
        stgtest.release_lock(holder)
    code, out, err = cli(env, "--url", leader.url, "--url", follower.url, "job", "list")
    r.check("lock free: --url once per replica finds the new leader",
            code == 0 and "ha/www/prod/web" in out, (code, out, err))


def replica(pg, port):
    """A replica of this suite (its lease, forget_replicas_secs) on `port`."""
    return stgtest.Replica(pg, port, LEASE_MS,
                           "[staggerd]\nforget_replicas_secs = %d\n" % FORGET_S)


def restart(pg, replicas, i):
    """replicas[i], killed, started again on its port (its old folder gone)."""
    old = replicas[i]
    old.daemon.log.close()
    shutil.rmtree(old.daemon.dir, ignore_errors=True)
    replicas[i] = replica(pg, old.port)


def kills(r, replicas, pg, tmp):
    """STG_TAKEOVER_KILLS leader kills (2 here; `make soak-ha` 5), each
    killed replica started again: a CLI loop, one call every 50 ms for the
    whole time (a minute when soaking), never fails, and `update start
    --wait`, begun before the first kill, exits with the update's outcome
    after living through every kill."""
    n = int(os.environ.get("STG_TAKEOVER_KILLS", "2"))
    span_s = 60 if n >= 5 else 8 * n + 4
    for i, x in enumerate(replicas):
        if not x.daemon.alive():
            restart(pg, replicas, i)
    env = clusters_env(tmp, [x.url for x in replicas])
    code, _, err = cli(env, "job", "create", "ha/www/prod/kills",
                       job_file(tmp, 1, "kills", 4 * n + 2))
    r.check("job create", code == 0, err)
    started = time.monotonic()
    waiter = subprocess.Popen([stgtest.program("stagger"), "update", "start", "ha/www/prod/kills",
                               job_file(tmp, 2, "kills", 4 * n + 2), "--wait"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    loop = Loop(env, pause=0.05)
    loop.start()
    survived = 0
    try:
        for k in range(n):
            time.sleep(max(0, started + 4 + 8 * k - time.monotonic()))
            leader = wait_leader(replicas)
            if waiter.poll() is None:
                survived += 1
            kill(leader)
            wait_leader([x for x in replicas if x is not leader])
            restart(pg, replicas, replicas.index(leader))
        time.sleep(max(0, started + span_s - time.monotonic()))
    finally:
        loop.halt.set()
        loop.join(timeout=120)
    try:
        out, err = waiter.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        waiter.kill()
        out, err = waiter.communicate()
    r.check("CLI loop every 50 ms through %d leader kills in %.0f s: %d calls, every one "
            "succeeded" % (n, time.monotonic() - started, loop.calls),
            not loop.failures and loop.calls >= span_s * 2,
            (loop.calls, len(loop.failures), loop.failures[:2]))
    r.check("update start --wait lived through every kill", survived == n, survived)
    r.check("... and exited with the update's outcome, ROLLED_FORWARD (0)",
            waiter.returncode == 0 and "ROLLED_FORWARD" in out,
            (waiter.returncode, out[-400:], err[-400:]))


def main():
    r = stgtest.Results("ha_takeover")
    pg = stgtest.Postgres(range(19750, 19760))
    replicas = []
    tmp = tempfile.mkdtemp(prefix="stg-ha-takeover-")
    try:
        for low in (19760, 19770, 19780):
            replicas.append(replica(pg, stgtest.free_port(low, low + 10)))
        r.run("takeover", takeover, r, replicas, tmp)
        r.run("election", election, r, replicas, pg, tmp)
        r.run("kills", kills, r, replicas, pg, tmp)
    finally:
        stgtest.stop_replicas(replicas)
        pg.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
