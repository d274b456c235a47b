"""ha_schema_test.py: which replica changes the schema of a shared
PostgreSQL store, and what one does that finds a schema it does not know.

- migrate: on an empty database, with the leadership lock held by another
  session, a new replica follows and leaves the database empty (a follower
  never migrates under a leader); once the lock is free it leads, and only
  then migrates, to the newest schema it knows, and serves.
- newer: the schema is made newer than this build knows (as a newer
  replica would have migrated it, while it leads); a replica started then
  follows and redirects to the leader, writes nothing (not even that it is
  alive), and when the leader is killed refuses to lead, says so once, with
  both versions, and leaves the epoch alone; once the schema is one it
  knows again, it leads within a lease or two.
Ports 19800-19849.
"""
import http.client
import os
import re
import signal
import sys
import time

import stgtest

LEASE_MS = 1000
BOUND_S = 20


def latest_schema():
    return stgtest.schema_versions()[-1]


def schema_version(pg):
    rows = pg.sql("SELECT COALESCE(MAX(version), 0) FROM stagger_schema "
                  "WHERE to_regclass('stagger_schema') IS NOT NULL")
    return int(rows[0][0]) if rows else 0


def has_table(pg, name):
    return pg.sql("SELECT to_regclass('%s') IS NOT NULL" % name)[0][0] == "t"


def redirect(port):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("GET", "/ui/")
    resp = conn.getresponse()
    resp.read()
    conn.close()
    return resp.status, resp.getheader("Location") or ""


def migrate(r, pg, replicas):
    holder = stgtest.hold_lock(pg)
    try:
        if not r.check("the lock is held elsewhere",
                       stgtest.wait_until(lambda: stgtest.lock_held(pg), timeout=BOUND_S)):
            return
        a = stgtest.Replica(pg, stgtest.free_port(19810, 19820), LEASE_MS)
        replicas.append(a)
        time.sleep(3 * LEASE_MS / 1000)
        r.check("a replica that cannot lead follows", stgtest.health(a.port) == "follower",
                stgtest.health(a.port))
        r.check("... and has not migrated the database",
                schema_version(pg) == 0 and not has_table(pg, "jobs"),
                (schema_version(pg), a.daemon.output()[-800:]))
    finally:
        stgtest.release_lock(holder)
    r.check("with the lock free it leads",
            stgtest.wait_until(lambda: stgtest.health(a.port) == "leader", timeout=BOUND_S),
            a.daemon.output()[-800:])
    r.check("... having migrated to the newest schema",
            schema_version(pg) == latest_schema() and has_table(pg, "jobs"),
            (schema_version(pg), latest_schema()))
    out = a.daemon.output()
    first_migration = out.find("schema migrated from version 0 to %d" % latest_schema())
    r.check("... after it won the lock, not before",
            0 <= out.find("following") < first_migration, out[-1500:])
    env = dict(os.environ, STAGGER_URL=a.url)
    code, _, err = stgtest.run_cli(env, "job", "list", "ha")
    r.check("... and serves", code == 0, err)


def newer(r, pg, replicas):
    leader = stgtest.wait_leader(replicas, BOUND_S)
    ahead = latest_schema() + 1
    pg.sql("INSERT INTO stagger_schema (version) VALUES (%d)" % ahead)
    epoch = pg.sql("SELECT epoch FROM stagger_leader")[0][0]
    b = stgtest.Replica(pg, stgtest.free_port(19820, 19830), LEASE_MS)
    replicas.append(b)
    status, location = redirect(b.port)
    r.check("a replica on a newer schema redirects to the leader",
            status in (302, 307) and location.startswith(leader.url), (status, location))
    r.check("... and is not listed as alive (it writes nothing)",
            pg.sql("SELECT count(*) FROM stagger_replicas WHERE url = '%s'" % b.url)[0][0] == "0",
            pg.sql("SELECT holder, url FROM stagger_replicas"))
    leader.daemon.proc.send_signal(signal.SIGKILL)
    leader.daemon.proc.wait()
    time.sleep(5 * LEASE_MS / 1000)
    r.check("with the leader gone it still follows", stgtest.health(b.port) == "follower",
            stgtest.health(b.port))
    out = b.daemon.output()
    r.check("... refusing to lead, said once, naming both versions",
            out.count("refusing to lead") == 1 and
            re.search(r"schema version %d, but this staggerd \([^)]*\) knows only up to version %d"
                      % (ahead, latest_schema()), out) is not None, out[-1500:])
    r.check("... the epoch untouched",
            pg.sql("SELECT epoch FROM stagger_leader")[0][0] == epoch)
    r.check("... the schema untouched", schema_version(pg) == ahead)
    pg.sql("DELETE FROM stagger_schema WHERE version = %d" % ahead)
    r.check("once the schema is one it knows, it leads",
            stgtest.wait_until(lambda: stgtest.health(b.port) == "leader", timeout=BOUND_S),
            b.daemon.output()[-800:])
    r.check("... and lists itself alive again",
            stgtest.wait_until(lambda: pg.sql("SELECT count(*) FROM stagger_replicas WHERE "
                                              "url = '%s'" % b.url)[0][0] == "1",
                               timeout=BOUND_S))


def main():
    r = stgtest.Results("ha_schema_test")
    pg = stgtest.Postgres(range(19800, 19810))
    replicas = []
    try:
        r.run("migrate", migrate, r, pg, replicas)
        r.run("newer", newer, r, pg, replicas)
    finally:
        stgtest.stop_replicas(replicas)
        pg.close()
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
