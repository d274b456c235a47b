"""image_ha.py IMAGE: three staggerd replicas from the container image, on
a PostgreSQL started here, survive a kill -9 of the leader's container.

Run by scripts/package-check after it has built IMAGE; podman is
$STAGGER_PODMAN (package-check's own storage), the containers on the
host's network. The replicas (simulated runtime, cluster "ha") elect one
leader; the image's own CLI (run in a follower's container, given every
replica with --url) creates a job and starts an update of six instances,
one at a time; the leader's container
is killed with SIGKILL mid-update; another replica must lead within a
lease or two and the update end ROLLED_FORWARD. Every container is
removed at the end. Prints "N passed, N failed". Ports 15150-15179
(PostgreSQL 15150-15159).
"""
import json
import os
import shlex
import subprocess
import sys
import shutil
import tempfile

import stgtest

LEASE_MS = 2000
BOUND_S = 30
PORTS = (15170, 15172, 15174)


def podman(*args, check=True):
    argv = shlex.split(os.environ.get("STAGGER_PODMAN", "podman")) + list(args)
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    if check and p.returncode != 0:
        raise RuntimeError("podman %s: %s" % (" ".join(args[:2]), p.stderr.strip()))
    return p.stdout


def replica(image, pg, port):
    name = "stagger-image-ha-%d" % port
    url = "http://127.0.0.1:%d" % port
    podman("run", "-d", "--init", "--network", "host", "--name", name, image,
           "--bind", "127.0.0.1", "--http-port", str(port), "--thrift-port", str(port + 1),
           "--store", pg.conninfo(), "--advertise-url", url, "--lease-ms", str(LEASE_MS),
           "--runtime", "simulated", "--cluster", "ha")
    return name, port, url


def cli(runner, replicas, *args):
    """stagger ARGS in the container `runner`, given every replica:
    (exit status, stdout, stderr)."""
    urls = [a for x in replicas for a in ("--url", x[2])]
    argv = shlex.split(os.environ.get("STAGGER_PODMAN", "podman")) + [
        "exec", "-e", "STAGGER_LEADER_WAIT=30", runner, "/usr/bin/stagger"] + urls + list(args)
    p = subprocess.run(argv, capture_output=True, text=True, timeout=180)
    return p.returncode, p.stdout, p.stderr


def leader_of(replicas, alive):
    def one():
        leaders = [x for x in replicas if x[0] in alive and stgtest.health(x[1]) == "leader"]
        return leaders[0] if len(leaders) == 1 else None
    return stgtest.wait_until(one, timeout=BOUND_S)


def run(r, image, pg, tmp):
    replicas = [replica(image, pg, port) for port in PORTS]
    alive = {x[0] for x in replicas}
    try:
        leader = leader_of(replicas, alive)
        r.check("three replicas from the image elect one leader", leader is not None,
                [stgtest.health(x[1]) for x in replicas])
        if leader is None:
            return
        r.check("the others follow", stgtest.wait_until(
            lambda: sorted(stgtest.health(x[1]) for x in replicas) ==
            ["follower", "follower", "leader"], timeout=BOUND_S),
            [stgtest.health(x[1]) for x in replicas])
        runner = next(x[0] for x in replicas if x is not leader)
        job = "ha/www/prod/web"
        for v in (1, 2):
            path = os.path.join(tmp, "web-%d.json" % v)
            with open(path, "w") as f:
                json.dump({"cluster": "ha", "role": "www", "environment": "prod", "name": "web",
                           "instances": 6,
                           "task": {"argv": ["sleep", "600"], "env": {"VERSION": str(v)}},
                           "update_config": {"batch_size": 1, "watch_secs": 2}}, f)
            os.chmod(path, 0o644)
            podman("cp", path, "%s:/tmp/web-%d.json" % (runner, v))
        code, _, err = cli(runner, replicas, "job", "create", job, "/tmp/web-1.json")
        r.check("job create through the replicas (from a follower's container)", code == 0, err)
        code, _, err = cli(runner, replicas, "update", "start", job, "/tmp/web-2.json")
        r.check("update start", code == 0, err)
        r.check("an instance is updated", stgtest.wait_until(
            lambda: "INSTANCE_UPDATED" in cli(runner, replicas, "update", "info", job)[1],
            timeout=60))
        podman("kill", "--signal", "KILL", leader[0])
        alive.discard(leader[0])
        after = leader_of(replicas, alive)
        r.check("after kill -9 of the leader's container another replica leads",
                after is not None and after is not leader,
                [stgtest.health(x[1]) for x in replicas])
        code, out, err = cli(runner, replicas, "update", "wait", job)
        r.check("the update ends ROLLED_FORWARD under the new leader",
                code == 0 and "ROLLED_FORWARD" in cli(runner, replicas, "update", "info", job)[1],
                (code, out, err))
    finally:
        for x in replicas:
            if x[0] in alive and r.failed:
                sys.stdout.write(podman("logs", x[0], check=False)[-2000:])
            podman("rm", "-f", "-t", "0", x[0], check=False)


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: image_ha.py IMAGE\n")
        return 2
    r = stgtest.Results("image_ha")
    tmp = tempfile.mkdtemp(prefix="stagger-image-ha-")
    pg = stgtest.Postgres(range(15150, 15160))
    try:
        r.run("replicas", run, r, sys.argv[1], pg, tmp)
    finally:
        pg.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
