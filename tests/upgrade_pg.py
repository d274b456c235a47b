"""upgrade_pg.py OLD_STAGGERD: the PostgreSQL half of scripts/upgrade-check.

STG_BUILDDIR names the new build; OLD_STAGGERD is the previous release's
staggerd, which upgrade-check built from the git history. On a PostgreSQL
started here:
- one staggerd (the local runtime, six example servers in batches of two)
  is stopped mid-update (SIGTERM, as a package upgrade does) and the new
  one started on the same store and data: the update ends ROLLED_FORWARD
  and every instance is on its second run (none restarted by the upgrade);
- three replicas (simulated runtime) are upgraded as staggerd(8)
  UPGRADING says while an update is under way: each follower stopped and
  started again as the new version, then the leader stopped so that an
  upgraded follower takes over, then the old leader started as the new
  version. The update ends ROLLED_FORWARD with each instance updated
  once, every replica runs the new version and exactly one leads.
Prints "N passed, N failed"; exits 1 on a failure. Ports 15200-15279
(PostgreSQL 15200-15209), instances 15300-15399.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request

import stgtest

LEASE_MS = 2000
BOUND_S = 30


def version_of(binary):
    return subprocess.run([binary, "--version"], capture_output=True, text=True,
                          check=True).stdout.split()[-1]


def cli(url, *args, ok=(0,)):
    code, out, err = stgtest.run_cli(dict(os.environ), "--url", url, *args)
    if code not in ok:
        raise RuntimeError("stagger %s: exit %d: %s" % (" ".join(args), code, err.strip()))
    return out


def runs(url, job):
    """The run number of each of the job's tasks (taskId's last part)."""
    tasks = json.loads(cli(url, "--json", "job", "status", job))["tasks"]
    return sorted(int(t["assignedTask"]["taskId"].rsplit("-", 1)[1]) for t in tasks)


def wait_instance_updated(url, job):
    return stgtest.wait_until(
        lambda: "INSTANCE_UPDATED" in cli(url, "update", "info", job, ok=range(256)), timeout=60)


def built_version(url):
    with urllib.request.urlopen(url + "/metrics", timeout=10) as resp:
        for line in resp.read().decode().splitlines():
            if line.startswith("stagger_build_info{"):
                return line.split('version="', 1)[1].split('"', 1)[0]
    return ""


def local_job(tmp, greeting):
    path = os.path.join(tmp, "local-%s.json" % greeting)
    server = stgtest.program("stagger-example-server")
    with open(path, "w") as f:
        json.dump({"cluster": "local", "role": "www", "environment": "prod", "name": "upgrade",
                   "instances": 6,
                   "resources": {"cpu": 0.1, "ram_mb": 32, "ports": ["http"]},
                   "task": {"argv": [server, "--port", "{{ports[http]}}"],
                            "env": {"GREETING": greeting}},
                   "health_check_config": {
                       "health_checker": {"http": {"endpoint": "/health",
                                                   "expected_response": "ok"}},
                       "initial_interval_secs": 1, "interval_secs": 0.5},
                   "update_config": {"batch_size": 2, "watch_secs": 2,
                                     "max_per_shard_failures": 0, "max_total_failures": 0,
                                     "rollback_on_failure": True}}, f)
    return path


def one_replica(r, pg, old, tmp):
    """One staggerd on PostgreSQL, replaced mid-update."""
    pg.sql("CREATE DATABASE single")
    conninfo = pg.conninfo().replace("dbname=postgres", "dbname=single")
    data = os.path.join(tmp, "single")
    port = stgtest.free_port(15220, 15230)
    url = "http://127.0.0.1:%d" % port
    job = "local/www/prod/upgrade"
    args = ("--store=" + conninfo, "--data-dir=" + data, "--http-port=%d" % port,
            "--port-range=15300-15399")
    d = stgtest.Daemon(*args, binary=old)
    try:
        cli(url, "job", "create", job, local_job(tmp, "one"))
        r.check("the job runs under the old release",
                stgtest.wait_until(lambda: cli(url, "job", "status", job).count("RUNNING") == 6,
                                   timeout=60), cli(url, "job", "status", job))
        cli(url, "update", "start", job, local_job(tmp, "two"))
        r.check("an instance is updated under the old release", wait_instance_updated(url, job))
        r.check("... and the update is not over",
                "ROLLED_FORWARD" not in cli(url, "update", "info", job))
        r.check("the old release stops cleanly on SIGTERM", d.stop_keeping_instances() == 0)
        d = stgtest.Daemon(*args)
        code, _, err = stgtest.run_cli(dict(os.environ), "--url", url, "update", "wait", job)
        r.check("under the new one the update ends ROLLED_FORWARD",
                code == 0 and "ROLLED_FORWARD" in cli(url, "update", "info", job), err)
        got = runs(url, job)
        r.check("every instance is on its second run", got == [2] * 6, got)
        r.check("/metrics names the new version",
                built_version(url) == version_of(stgtest.program("staggerd")), built_version(url))
        cli(url, "job", "kill", job)
    finally:
        d.stop()
        stgtest.kill_instances_under(data)


def replicas_upgraded(r, pg, old, tmp):
    """Three replicas upgraded one by one, the leader last."""
    pg.sql("CREATE DATABASE ha")
    conninfo = pg.conninfo().replace("dbname=postgres", "dbname=ha")
    ports = [stgtest.free_port(low, low + 10) for low in (15240, 15250, 15260)]
    dirs = [os.path.join(tmp, "replica-%d" % i) for i in range(3)]
    new_version = version_of(stgtest.program("staggerd"))

    def start(i, binary):
        return stgtest.Replica(pg, ports[i], LEASE_MS, binary=binary, conninfo=conninfo,
                               args=("--data-dir=" + dirs[i],))

    replicas = [start(i, old) for i in range(3)]
    try:
        leader = stgtest.wait_leader(replicas, BOUND_S)
        job = "ha/www/prod/web"
        path = os.path.join(tmp, "ha-%d.json")
        for v in (1, 2):
            with open(path % v, "w") as f:
                json.dump({"cluster": "ha", "role": "www", "environment": "prod",
                           "name": "web", "instances": 6,
                           "task": {"argv": ["sleep", "600"], "env": {"VERSION": str(v)}},
                           "update_config": {"batch_size": 1, "watch_secs": 2}}, f)
        cli(leader.url, "job", "create", job, path % 1)
        cli(leader.url, "update", "start", job, path % 2)
        r.check("an instance is updated under the old release",
                wait_instance_updated(leader.url, job))
        for i, x in enumerate(replicas):
            if x is leader:
                continue
            x.daemon.stop()
            replicas[i] = start(i, None)
            r.check("follower %d upgraded follows" % i,
                    stgtest.wait_until(lambda: stgtest.health(replicas[i].port) == "follower",
                                       timeout=BOUND_S), stgtest.health(replicas[i].port))
        r.check("the update is not over before the leader's turn",
                "ROLLED_FORWARD" not in cli(leader.url, "update", "info", job))
        i = replicas.index(leader)
        leader.daemon.stop()
        upgraded = [x for x in replicas if x is not leader]
        r.check("an upgraded follower takes over",
                stgtest.wait_leader(upgraded, BOUND_S) in upgraded)
        replicas[i] = start(i, None)
        url = stgtest.wait_leader(replicas, BOUND_S).url
        code, _, err = stgtest.run_cli(dict(os.environ), "--url", url, "update", "wait", job)
        r.check("the update ends ROLLED_FORWARD",
                code == 0 and "ROLLED_FORWARD" in cli(url, "update", "info", job), err)
        events = json.loads(cli(url, "--json", "update", "info", job))["instanceEvents"]
        updated = sorted(e["instanceId"] for e in events if e["action"] == "INSTANCE_UPDATED")
        r.check("every instance updated once", updated == list(range(6)), updated)
        versions = [built_version(x.url) for x in replicas]
        r.check("every replica runs the new version", versions == [new_version] * 3, versions)
        leaders = [x for x in replicas if stgtest.health(x.port) == "leader"]
        r.check("exactly one leads", len(leaders) == 1, [stgtest.health(x.port) for x in replicas])
    finally:
        stgtest.stop_replicas(replicas)


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: upgrade_pg.py OLD_STAGGERD\n")
        return 2
    old = os.path.realpath(sys.argv[1])
    r = stgtest.Results("upgrade_pg")
    tmp = tempfile.mkdtemp(prefix="stagger-upgrade-pg-")
    os.chmod(tmp, 0o755)
    pg = stgtest.Postgres(range(15200, 15210))
    try:
        r.run("one replica", one_replica, r, pg, old, tmp)
        r.run("replicas", replicas_upgraded, r, pg, old, tmp)
    finally:
        pg.close()
        stgtest.kill_instances_under(tmp)
        shutil.rmtree(tmp, ignore_errors=True)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
