#!/usr/bin/env python3
"""pg_failover_test: staggerd on a PostgreSQL primary with a synchronous
standby (streaming replication, synchronous_standby_names '*'), every
replica given both servers in one URL (host=a,b port=p,q). The primary
dies in the middle of an update and the standby is promoted, as an
operator fails over. Checked:
  - the replicas find the promoted standby and one of them leads again,
    within seconds of the promotion, under a higher epoch;
  - a job whose creation was acknowledged just before the primary died is
    there after (synchronous commit: nothing acknowledged is lost);
  - the update in flight ends ROLLED_FORWARD, each instance updated once,
    in order, none going back, and `stagger update start --wait`, started
    before the failover, follows it to that end (exit 0);
  - the old primary started again (writable, still on timeline 1) once
    every replica uses the promoted server: a replica that joins uses the
    promoted server too, says the old one is behind, and nothing of the
    cluster is written to the old one;
  - the promoted server stopped too, leaving only the old primary: the
    replicas, which used timeline 2, refuse it and say why; none leads.
Ports 28600-28699.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import stgtest

LEASE_MS = 3000
BOUND_S = 20


class Servers:
    """Both servers in one libpq conninfo, the primary first."""

    def __init__(self, *servers):
        self.servers = servers

    def conninfo(self):
        return ("host=%s port=%s user=stagger dbname=postgres"
                % (",".join("127.0.0.1" for _ in self.servers),
                   ",".join(str(s.port) for s in self.servers)))


def cli(env, *args):
    return stgtest.run_cli(env, *args)


def job_file(tmp, version, name="web"):
    path = os.path.join(tmp, "%s-%d.json" % (name, version))
    with open(path, "w") as f:
        json.dump({"cluster": "ha", "role": "www", "environment": "prod", "name": name,
                   "instances": 4, "task": {"argv": ["sleep", "600"],
                                            "env": {"VERSION": str(version)}},
                   "update_config": {"batch_size": 1, "watch_secs": 2}}, f)
    return path


def epoch(pg):
    rows = pg.sql("SELECT epoch FROM stagger_leader")
    return int(rows[0][0]) if rows else 0


def failover(r, primary, standby, replicas, tmp):
    urls = [a for x in replicas for a in ("--url", x.url)]
    env = dict(os.environ)
    env.pop("STAGGER_URL", None)
    stgtest.wait_leader(replicas, BOUND_S)
    before = epoch(primary)
    code, out, err = cli(env, *urls, "job", "create", "ha/www/prod/web", job_file(tmp, 1))
    r.check("job create", code == 0, err)
    waiter = subprocess.Popen([stgtest.program("stagger")] + urls +
                              ["update", "start", "ha/www/prod/web", job_file(tmp, 2), "--wait"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    r.check("the update reaches its second instance", stgtest.wait_until(
        lambda: re.search(r"(?m)^1\s+INSTANCE_UPDATING",
                          cli(env, *urls, "update", "info", "ha/www/prod/web")[1]),
        timeout=30))
    # Acknowledged just before the primary dies.
    code, out, err = cli(env, *urls, "job", "create", "ha/www/prod/last", job_file(tmp, 1, "last"))
    r.check("a job created just before the failover", code == 0, err)

    primary.stop("immediate")
    died = time.monotonic()
    standby.promote()
    promoted = time.monotonic()
    # Until the replicas notice, the old leader may still say it leads.
    r.check("one replica leads on the promoted server",
            stgtest.wait_until(lambda: epoch(standby) > before, timeout=BOUND_S),
            [x.daemon.output()[-600:] for x in replicas])
    leader = stgtest.wait_leader(replicas, BOUND_S)
    r.check("... which says which server it uses",
            "127.0.0.1:%d, timeline 2" % standby.port in leader.daemon.output(),
            leader.daemon.output()[-800:])
    print("failover: the primary died, the standby was promoted %.2f s later, and a replica "
          "led again %.2f s after the promotion" % (promoted - died, time.monotonic() - promoted),
          flush=True)
    listed = []

    def job_listed():
        listed[:] = cli(env, *urls, "job", "list", "ha")
        return listed[0] == 0 and "ha/www/prod/last" in listed[1]
    r.check("the acknowledged job is there after the failover",
            stgtest.wait_until(job_listed, timeout=BOUND_S), listed)

    try:
        out, err = waiter.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        waiter.kill()
        out, err = waiter.communicate()
    r.check("update start --wait followed it to ROLLED_FORWARD (exit 0)",
            waiter.returncode == 0 and "ROLLED_FORWARD" in out,
            (waiter.returncode, out[-600:], err[-600:]))
    events = re.findall(r"instance (\d+) (INSTANCE_[A-Z_]+)", out)
    order = [int(i) for i, e in events if e == "INSTANCE_UPDATED"]
    r.check("each instance updated once, in order", order == [0, 1, 2, 3], out)
    r.check("no instance went back", not any("ROLL" in e for _, e in events), events)
    code, out, err = cli(env, *urls, "update", "list", "ha")
    r.check("the update is ROLLED_FORWARD", code == 0 and "ROLLED_FORWARD" in out, out + err)


def old_primary_back(r, primary, standby, replicas, tmp):
    on_new = "127.0.0.1:%d, timeline 2" % standby.port
    r.check("every replica uses the promoted server", stgtest.wait_until(
        lambda: all(on_new in x.daemon.output() for x in replicas), timeout=BOUND_S),
        [x.daemon.output()[-400:] for x in replicas])
    primary.start()  # as an operator who forgot it: writable, on timeline 1
    old_epoch = epoch(primary)
    joined = stgtest.Replica(Servers(primary, standby), stgtest.free_port(28660, 28670), LEASE_MS)
    replicas.append(joined)
    out = joined.daemon.output()
    r.check("a replica that joins uses the promoted server",
            "timeline 2" in out and "127.0.0.1:%d, timeline 2" % standby.port in out, out[-800:])
    r.check("... and says the old primary is behind",
            "127.0.0.1:%d takes writes too, on timeline 1" % primary.port in out, out[-800:])
    env = dict(os.environ)
    env.pop("STAGGER_URL", None)
    code, out, err = cli(env, "--url", joined.url, "job", "list", "ha")
    r.check("... and answers from it", code == 0 and "ha/www/prod/last" in out, out + err)

    # Only the old primary left.
    standby.stop("immediate")
    time.sleep(LEASE_MS / 1000.0 * 2)
    outs = [x.daemon.output() for x in replicas if x.daemon.alive()]
    r.check("the replicas refuse the old primary and say why",
            outs and all("behind timeline 2 this staggerd used before" in o for o in outs),
            outs)
    leaders = [x for x in replicas if x.daemon.alive() and stgtest.health(x.port) == "leader"]
    r.check("none leads on it", not leaders, [x.url for x in leaders])
    r.check("nothing was written to the old primary", epoch(primary) == old_epoch,
            (old_epoch, epoch(primary)))
    r.check("... not even a replica's sign of life",
            primary.sql("SELECT count(*) FROM stagger_replicas WHERE seen_ms > "
                        "(extract(epoch from now()) * 1000 - 2000)")[0][0] == "0")


def main():
    r = stgtest.Results("pg_failover_test")
    tmp = tempfile.mkdtemp(prefix="stg-pg-failover-")
    primary = stgtest.Postgres(range(28600, 28610))
    standby = None
    replicas = []
    try:
        standby = primary.standby(range(28610, 28620))
        primary.sql("ALTER SYSTEM SET synchronous_standby_names = '*'")
        primary.sql("SELECT pg_reload_conf()")
        r.check("the standby streams synchronously",
                stgtest.wait_until(lambda: primary.sql(
                    "SELECT sync_state FROM pg_stat_replication") == [["sync"]], timeout=30),
                primary.sql("SELECT * FROM pg_stat_replication"))
        both = Servers(primary, standby)
        for low in (28620, 28630):
            replicas.append(stgtest.Replica(both, stgtest.free_port(low, low + 10), LEASE_MS))
        r.run("failover", failover, r, primary, standby, replicas, tmp)
        r.run("old primary back", old_primary_back, r, primary, standby, replicas, tmp)
    finally:
        stgtest.stop_replicas(replicas)
        for pg in (standby, primary):
            if pg is not None:
                try:
                    pg.close()
                except Exception:  # stopped already
                    shutil.rmtree(pg.dir, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
