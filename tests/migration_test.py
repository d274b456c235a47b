"""migration_test.py: a store left by each earlier schema version, with
representative data in it, migrated to this build's schema, answers the
same reads. Once on SQLite, once on PostgreSQL.

A real staggerd (simulated runtime) fills a reference store through the
CLI: a job whose configuration went through an update rolled forward and
one paused halfway, one rolled back, one aborted, a killed job's ended
tasks, a role's quota and a rollout plan; host maintenance (the fleet
runtime's) is written directly, one host in the table that migration 016
replaced. Then, for each earlier schema version V (the numbers in
schema/): tests/store_at leaves a new store at V, the reference's rows go
into it (the tables and columns V has, as V's staggerd would have written
them), and store_at migrates it to the newest version. Every copied row
must read back unchanged, the host drained in the old table must be
DRAINED; a staggerd started on the store must answer the CLI's reads
(jobs, updates with their events, configuration histories, the quota,
plans) exactly as on the reference, and the paused update, resumed, must
end ROLLED_FORWARD.
Ports 19850-19899 (PostgreSQL 19850-19859).
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

import stgtest

JOB = "mig/www/prod/"


def versions():
    """The schema versions before the newest, and the newest."""
    numbers = stgtest.schema_versions()
    return numbers[:-1], numbers[-1]


def store_at(location, version):
    p = subprocess.run([stgtest.program("tests/store_at"), location, str(version)],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise RuntimeError("store_at %s: %s" % (version, p.stderr.strip()))
    return int(p.stdout)


class Sqlite:
    """Stores as SQLite files in a folder."""

    name = "SQLite"

    def __init__(self, tmp):
        self.tmp = tmp

    def data_dir(self, label):
        return os.path.join(self.tmp, label)

    def location(self, label):
        return os.path.join(self.data_dir(label), "stagger.db")

    def daemon_args(self, label):
        return ["--data-dir=" + self.data_dir(label)]

    def create(self, label):
        os.makedirs(self.data_dir(label), mode=0o700)

    def sql(self, label, query):
        db = sqlite3.connect(self.location(label))
        try:
            db.executescript(query)
        finally:
            db.close()

    def shape(self, label):
        """{table: its columns, comma-separated} of a store."""
        db = sqlite3.connect(self.location(label))
        try:
            tables = [r[0] for r in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND "
                "name NOT LIKE 'sqlite_%' ORDER BY rowid")]
            return {t: ", ".join('"%s"' % r[1] for r in db.execute("PRAGMA table_info(%s)" % t))
                    for t in tables}
        finally:
            db.close()

    def copy(self, source, target):
        """The rows of source's tables that target has, in target's
        columns; target's shape."""
        shape = self.shape(target)
        db = sqlite3.connect(self.location(target), isolation_level=None)
        try:
            db.execute("ATTACH ? AS ref", (self.location(source),))
            db.execute("BEGIN")
            for t, cols in shape.items():
                db.execute("DELETE FROM main.%s" % t)
                db.execute("INSERT INTO main.%s (%s) SELECT %s FROM ref.%s" % (t, cols, cols, t))
            db.execute("COMMIT")
        finally:
            db.close()
        return shape

    def rows(self, label, table, cols):
        db = sqlite3.connect(self.location(label))
        try:
            return db.execute("SELECT %s FROM %s ORDER BY %s" % (
                cols, table, ", ".join(str(i + 1) for i in range(len(cols.split(", ")))))).fetchall()
        finally:
            db.close()


class Postgres:
    """Stores as schemas of one PostgreSQL database (search_path in the
    conninfo), so one session can copy between them."""

    name = "PostgreSQL"

    def __init__(self, tmp):
        self.tmp = tmp
        self.pg = stgtest.Postgres(range(19850, 19860))

    def data_dir(self, label):
        return os.path.join(self.tmp, "pg-" + label)

    def location(self, label):
        return self.pg.conninfo() + " options='-csearch_path=%s'" % label

    def daemon_args(self, label):
        return ["--data-dir=" + self.data_dir(label), "--store=" + self.location(label)]

    def create(self, label):
        os.makedirs(self.data_dir(label), mode=0o700)
        self.pg.sql("CREATE SCHEMA %s" % label)

    def sql(self, label, query):
        self.pg.sql("SET search_path = %s; %s" % (label, query))

    def shape(self, label):
        """As Sqlite.shape; the schema version (a table here) is not data."""
        shape = {}
        for t, c in self.pg.sql("SELECT table_name, column_name FROM information_schema.columns "
                                "WHERE table_schema = '%s' AND table_name <> 'stagger_schema' "
                                "ORDER BY table_name, ordinal_position" % label):
            c = '"%s"' % c
            shape[t] = shape[t] + ", " + c if t in shape else c
        return shape

    def copy(self, source, target):
        shape = self.shape(target)
        script = ["SET session_replication_role = replica"]
        for t, cols in shape.items():
            script.append("DELETE FROM %s.%s" % (target, t))
            script.append("INSERT INTO %s.%s (%s) SELECT %s FROM %s.%s"
                          % (target, t, cols, cols, source, t))
        for t, c in self.pg.sql("SELECT table_name, column_name FROM information_schema.columns "
                                "WHERE table_schema = '%s' AND is_identity = 'YES'" % target):
            script.append("SELECT setval(pg_get_serial_sequence('%s.%s', '%s'), "
                          "COALESCE(MAX(%s), 0) + 1, false) FROM %s.%s"
                          % (target, t, c, c, target, t))
        self.pg.sql("BEGIN; %s; COMMIT" % "; ".join(script))
        return shape

    def rows(self, label, table, cols):
        return self.pg.sql("SELECT %s FROM %s.%s ORDER BY %s" % (
            cols, label, table, ", ".join(str(i + 1) for i in range(len(cols.split(", "))))))

    def close(self):
        self.pg.close()


def job_file(tmp, name, version, instances=3, update=None):
    path = os.path.join(tmp, "%s-%d.json" % (name, version))
    config = {"batch_size": 3, "watch_secs": 0}
    config.update(update or {})
    with open(path, "w") as f:
        json.dump({"cluster": "mig", "role": "www", "environment": "prod", "name": name,
                   "instances": instances,
                   "task": {"argv": ["sleep", "600"], "env": {"VERSION": str(version)}},
                   "update_config": config}, f)
    return path


def cli(daemon, *args, ok=(0,)):
    env = dict(os.environ, STAGGER_URL="http://127.0.0.1:%d" % daemon.http_port)
    code, out, err = stgtest.run_cli(env, *args)
    if code not in ok:
        raise RuntimeError("stagger %s: exit %d: %s" % (" ".join(args), code, err.strip()))
    return out


def start(store, label):
    return stgtest.Daemon("--runtime=simulated", "--cluster=mig", *store.daemon_args(label))


def fill(store, tmp):
    """The reference store, filled through a real staggerd."""
    store.create("ref")
    d = start(store, "ref")
    try:
        cli(d, "job", "create", JOB + "web", job_file(tmp, "web", 1))
        cli(d, "update", "start", JOB + "web", job_file(tmp, "web", 2), "--wait")
        cli(d, "update", "start", JOB + "web",
            job_file(tmp, "web", 3, update={"watch_secs": 3}))
        cli(d, "update", "pause", JOB + "web")
        cli(d, "job", "create", JOB + "api", job_file(tmp, "api", 1, 2))
        cli(d, "update", "start", JOB + "api", job_file(tmp, "api", 2, 2, {"watch_secs": 2}))
        cli(d, "update", "rollback", JOB + "api")
        cli(d, "update", "wait", JOB + "api", ok=range(256))
        cli(d, "job", "create", JOB + "db", job_file(tmp, "db", 1, 1))
        cli(d, "update", "start", JOB + "db", job_file(tmp, "db", 2, 1, {"watch_secs": 60}))
        cli(d, "update", "abort", JOB + "db")
        cli(d, "job", "create", JOB + "batch", job_file(tmp, "batch", 1, 2))
        cli(d, "job", "kill", JOB + "batch")
        cli(d, "quota", "set", "mig/www", "4", "4096", "10000")
        plan = os.path.join(tmp, "plan.json")
        with open(plan, "w") as f:
            json.dump({"name": "svc-rollout",
                       "stages": [{"name": "svc", "job": job_file(tmp, "svc", 1, 2)}]}, f)
        cli(d, "plan", "start", plan)
        cli(d, "plan", "wait", "mig/svc-rollout")
    finally:
        if d.stop() != 0:
            raise RuntimeError("the reference staggerd did not stop cleanly")
    # The fleet runtime's maintenance, which the simulated runtime has not.
    store.sql("ref", "INSERT INTO fleet_drained_hosts (host) VALUES ('old-drained'); "
                     "INSERT INTO host_maintenance (host, mode, since_ms) VALUES "
                     "('old-drained', 3, 0), ('scheduled', 1, 1796000000000)")


def reads(d, tables):
    """What the CLI reads from a staggerd, as JSON: plans and the quota only
    when the store had them (`tables`)."""
    out = {}
    wanted = [("job", "list", "mig"), ("update", "list", "mig")]
    if "rollout_plans" in tables:
        wanted += [("plan", "list", "mig"), ("plan", "status", "mig/svc-rollout")]
    if "quotas" in tables:
        wanted.append(("quota", "get", "mig/www"))
    for args in wanted:
        out[" ".join(args)] = json.loads(cli(d, "--json", *args))
    for name in ("web", "api", "db", "svc"):
        for args in (("update", "info", JOB + name), ("job", "history", JOB + name)):
            out[" ".join(args)] = json.loads(cli(d, "--json", *args))
    return out


# Fields of the reads that a later schema added (the version that did),
# compared from that version on: written by that version's staggerd only.
ADDED = {15: "reasonCode"}


def without(value, key):
    if isinstance(value, dict):
        return {k: without(x, key) for k, x in value.items() if k != key}
    if isinstance(value, list):
        return [without(x, key) for x in value]
    return value


def first_difference(a, b, path=""):
    if type(a) is not type(b):
        return "%s: %r != %r" % (path, a, b)
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return "%s.%s: only on one side" % (path, k)
            d = first_difference(a[k], b[k], path + "." + k)
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return "%s: %d items != %d" % (path, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, "%s[%d]" % (path, i))
            if d:
                return d
        return None
    return None if a == b else "%s: %r != %r" % (path, a, b)


def engine(r, store, tmp):
    older, latest = versions()
    fill(store, tmp)
    shapes = {latest: store.shape("ref")}
    for v in older:
        label = "v%d" % v
        store.create(label)
        at = store_at(store.location(label), v)
        r.check("%s: a store at schema %d" % (store.name, v), at == v, at)
        shapes[v] = store.copy("ref", label)
        at = store_at(store.location(label), "latest")
        r.check("%s %d: migrated to %d" % (store.name, v, latest), at == latest, at)
        lost = [t for t, cols in sorted(shapes[v].items())
                if store.rows(label, t, cols) != store.rows("ref", t, cols)]
        r.check("%s %d: every row reads back unchanged (%d tables)"
                % (store.name, v, len(shapes[v])), not lost, lost)
        if "fleet_drained_hosts" in shapes[v]:
            hosts = store.rows(label, "host_maintenance", "host, mode")
            r.check("%s %d: the host drained in the old table is DRAINED" % (store.name, v),
                    [tuple(x) for x in hosts if x[0] == "old-drained"] in
                    ([("old-drained", 3)], [("old-drained", "3")]), hosts)
    d = start(store, "ref")
    try:
        expected = reads(d, shapes[latest])
    finally:
        d.stop()
    r.check("%s: the reference reads as filled" % store.name,
            expected["update info " + JOB + "web"]["update"]["summary"]["state"]["status"]
            == "ROLL_FORWARD_PAUSED", expected["update info " + JOB + "web"])
    for v in older:
        d = start(store, "v%d" % v)
        try:
            got = reads(d, shapes[v])
            want = {k: x for k, x in expected.items() if k in got}
            for since, key in ADDED.items():
                if v < since:
                    got, want = without(got, key), without(want, key)
            r.check("%s %d: staggerd answers the CLI's %d reads as on the reference"
                    % (store.name, v, len(got)), got == want, first_difference(got, want))
            cli(d, "update", "resume", JOB + "web")
            out = cli(d, "--json", "update", "wait", JOB + "web", ok=range(256))
            r.check("%s %d: the paused update, resumed, ends ROLLED_FORWARD" % (store.name, v),
                    "ROLLED_FORWARD" in out, out[-400:])
        finally:
            r.check("%s %d: staggerd stops cleanly" % (store.name, v), d.stop() == 0)


def main():
    r = stgtest.Results("migration_test")
    tmp = tempfile.mkdtemp(prefix="stagger-migration-")
    try:
        r.run("sqlite", engine, r, Sqlite(tmp), tmp)
        pg = Postgres(tmp)
        try:
            r.run("postgresql", engine, r, pg, tmp)
        finally:
            pg.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
