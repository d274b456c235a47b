"""partition_test.py: staggerd replicas, PostgreSQL and fleet hosts cut apart.

The test bed (tests/netbed.py): one network namespace for each of two
PostgreSQL servers (a primary and its synchronous standby; each replica
is given both, as libpq writes several hosts), one per staggerd replica
(three, --runtime=fleet, one lease), one per fleet host (a `podman
system service` listening on TCP in it), one for this test's client
calls, all on one bridge. A job of four instances (busybox httpd, host
networking, at most two per host) is updated again and again (`stagger
update start`, each call numbered in its message), and a host is drained
and opened now and then, while faults come at random moments, one after
another, from a seeded generator:

  leader-db     the leader cut from PostgreSQL
  leader-hosts  the leader cut from every host
  host-alone    one host cut from everyone, shorter than lost_after_secs
  asymmetric    a follower cut from every host while the leader is cut
                from PostgreSQL (a replica that reaches the database but
                no host may take over)
  one-way       the leader's packets to one host vanish (its answers do not)
  flapping      the leader's link to PostgreSQL or a host cut and healed
                every 0.2-1 s
  host-moved    a host cut from everyone until its instances were placed
                elsewhere, then healed
  db-outage     the leader cut from the hosts, and PostgreSQL stopped and
                started again during the cut
  failover      the primary PostgreSQL killed, frozen (SIGSTOP) or cut from
                the replicas, and its synchronous standby promoted, as an
                operator fails over; a killed old primary is sometimes
                started again, writable, for a few seconds, and a cut one
                is healed while still writable (the replicas must not use
                it); then it is rebuilt as the new primary's standby
                (twice in each round of kinds)

Everything is recorded (tests/partition_history.py): each client call and
its outcome, each fault, each leader change and each request a replica
sent to an engine with its epoch (from the replicas' debug logs), each
container event of each engine with its labels (the engine's event log).
Around each failover the store's updates are read from the primary
before and from the promoted server after (no update missing, none with
fewer events, none whose end changed), and a writable old primary must
get nothing from the replicas. Once every cut is healed and the job is
quiet, the checks of
partition_history.py run on the history, the store and the hosts; any
anomaly fails the test. The history is kept as
partition-SEED.jsonl in the current folder, with each replica's and
host's log (partition-SEED-NODE.log).

STG_PARTITION_FAULTS sets how many faults (default 5; `make partition`
runs 50), STG_PARTITION_SEED the seed (default 1; the schedule of faults
is the seed's, the moments the system reaches are not). Needs root, ip
and nsenter, podman, PostgreSQL 15.
"""
import datetime
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import traceback

import netbed
import partition_history
import stgtest

REPLICAS = ["r0", "r1", "r2"]
HOSTS = ["h0", "h1", "h2"]
DBS = ["db", "db2"]
NODES = {"db": 10, "db2": 11, "r0": 20, "r1": 21, "r2": 22, "h0": 30, "h1": 31, "h2": 32,
         "client": 40}
LEASE_MS = 2000
LOST_AFTER_S = 6
INSTANCES = 4
ENGINE_PORT = 2375
HTTP_PORT = 8081
JOB = "bed/www/prod/web"
IMAGE = "localhost/stgpart:1"
QUIET_S = 120          # an update or drain ends within this once healed
SETTLE_S = 240         # everything heals within this at the end

CONTAINERS_CONF = """[containers]
netns = "host"
default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
"""


def log(text):
    sys.stdout.write("%s %s\n" % (datetime.datetime.now().strftime("%H:%M:%S.%f")[:-3], text))
    sys.stdout.flush()


# ---- the parts ---------------------------------------------------------------------


class Host:
    """A podman service in its node, with its own storage; the engine API on TCP."""

    def __init__(self, bed, name, image_tar):
        self.bed = bed
        self.name = name
        self.address = bed.node(name).address
        self.root = os.path.join(bed.dir, name)
        self.tmp = os.path.join(self.root, "tmp")
        os.makedirs(self.tmp)
        self.env = dict(os.environ, CONTAINERS_CONF=os.path.join(bed.dir, "containers.conf"),
                        TMPDIR=self.tmp)
        self.podman(["import", "--quiet", image_tar, IMAGE])
        self.log = open(os.path.join(self.root, "service.log"), "w")
        self.service = bed.popen(name, self.argv(["system", "service", "--time=0",
                                                  "tcp://%s:%d" % (self.address, ENGINE_PORT)]),
                                 stdout=self.log, stderr=subprocess.STDOUT, env=self.env)
        deadline = time.monotonic() + 60
        while self.engine("GET", "/_ping", timeout=2)[0] != 200:
            if self.service.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("podman service on %s did not start" % name)
            time.sleep(0.1)

    def argv(self, args):
        return ["podman", "--root=" + os.path.join(self.root, "storage"),
                "--runroot=" + os.path.join(self.root, "r"), "--tmpdir=" + self.tmp,
                "--runtime=runc", "--cgroup-manager=cgroupfs", "--events-backend=file"] + args

    def podman(self, args):
        subprocess.run(self.argv(args), env=self.env, check=True, stdout=subprocess.DEVNULL)

    def engine(self, method, path, timeout=10):
        """One request to the engine from the client node: (status, JSON or None)."""
        try:
            sock = self.bed.connect("client", self.address, ENGINE_PORT, timeout)
        except OSError:
            return 0, None
        try:
            sock.sendall(("%s /v1.41%s HTTP/1.0\r\nHost: engine\r\n\r\n" % (method, path)).encode())
            data = b""
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
        except OSError:
            return 0, None
        finally:
            sock.close()
        head, _, body = data.partition(b"\r\n\r\n")
        match = re.match(rb"HTTP/1\.\d (\d+)", head)
        try:
            return (int(match.group(1)) if match else 0), (json.loads(body) if body else None)
        except ValueError:
            return (int(match.group(1)) if match else 0), None

    def containers(self):
        """Every container with Stagger's labels, or None when the engine does not answer."""
        status, listing = self.engine("GET", "/containers/json?all=true&filters=%7B%22label%22%3A"
                                      "%5B%22org.stagger.marker%22%5D%7D")
        return listing if status == 200 else None

    def events(self):
        """The engine's container events (its event log), oldest first."""
        out = []
        path = os.path.join(self.tmp, "events", "events.log")
        with open(path) as f:
            for line in f:
                try:
                    e = json.loads(line)
                except ValueError:
                    continue
                if e.get("Type") == "container":
                    out.append(e)
        return out

    def stop(self):
        if self.service.poll() is None:
            for c in self.containers() or []:
                self.engine("DELETE", "/containers/%s?force=true" % c["Id"], timeout=30)
            self.service.send_signal(signal.SIGTERM)
            try:
                self.service.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.service.kill()
                self.service.wait()
        with_storage = subprocess.run(self.argv(["rm", "--all", "--force", "--time=0"]),
                                      env=self.env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL)
        del with_storage
        self.log.close()


class Replica:
    """A staggerd in its node; its log says when it led and what it sent to engines."""

    def __init__(self, bed, name, conninfo, conf, data_dir):
        self.bed = bed
        self.name = name
        self.address = bed.node(name).address
        self.url = "http://%s:%d" % (self.address, HTTP_PORT)
        self.log_path = os.path.join(bed.dir, name + ".log")
        self.log = open(self.log_path, "w")
        argv = [stgtest.program("staggerd"), "--data-dir=" + data_dir, "--store=" + conninfo,
                "--bind=" + self.address, "--http-port=%d" % HTTP_PORT, "--thrift-port=8082",
                "--advertise-url=" + self.url, "--lease-ms=%d" % LEASE_MS, "--runtime=fleet",
                "--config=" + conf, "--port-range=20000-20999", "--cluster=bed", "--verbose",
                "--allow-root-instances"]
        self.proc = bed.popen(name, argv, stdout=self.log, stderr=subprocess.STDOUT)

    def health(self):
        """"leader", "follower", or "" when it does not answer within a second."""
        try:
            sock = self.bed.connect("client", self.address, HTTP_PORT, 1)
        except OSError:
            return ""
        try:
            sock.sendall(("GET /health HTTP/1.0\r\nHost: %s:%d\r\n\r\n"
                          % (self.address, HTTP_PORT)).encode())
            data = b""
            while True:
                chunk = sock.recv(4096)
                if not chunk:
                    break
                data += chunk
        except OSError:
            return ""
        finally:
            sock.close()
        return data.partition(b"\r\n\r\n")[2].decode(errors="replace").strip()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode


LINE = re.compile(r"^(?:\(staggerd:\d+\): )?stagger-(\w+): (\d\d):(\d\d):(\d\d)\.(\d\d\d): (.*)$")


def log_lines(path, day):
    """(time, level, text) of each line of a staggerd log; @day: the run's first day,
    as a date (a time earlier than the one before moves to the next day)."""
    out = []
    base = datetime.datetime.combine(day, datetime.time())
    last = None
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.match(line.rstrip("\n"))
            if not m:
                continue
            t = (base + datetime.timedelta(hours=int(m.group(2)), minutes=int(m.group(3)),
                                           seconds=int(m.group(4)),
                                           milliseconds=int(m.group(5)))).timestamp()
            if last is not None and t < last - 43200:
                base += datetime.timedelta(days=1)
                t += 86400
            last = t
            out.append((t, m.group(1), m.group(6)))
    return out


# ---- the campaign ----------------------------------------------------------------------


class Campaign:
    def __init__(self, seed, faults):
        self.seed = seed
        self.n_faults = faults
        self.rng = random.Random(seed)
        self.history = partition_history.History("partition-%d.jsonl" % seed)
        self.stop_workload = threading.Event()
        self.day = datetime.date.today()
        self.bed = None
        self.servers = {}        # "db", "db2": their Postgres
        self.primary = "db"      # the one that takes writes
        self.hosts = []
        self.replicas = []
        self.pg_down = False
        self.errors = []

    # ---- setting up -------------------------------------------------------------------

    def start(self):
        self.bed = netbed.Bed(NODES)
        d = self.bed.dir
        with open(os.path.join(d, "containers.conf"), "w") as f:
            f.write(CONTAINERS_CONF)
        image_tar = self.build_image()
        pg = stgtest.Postgres([5432], address=self.bed.node("db").address,
                              trusted=netbed.SUBNET + "0/24", parent=d,
                              wrap=lambda argv: self.bed.argv("db", argv))
        self.servers = {"db": pg}
        self.servers["db2"] = pg.standby([5432], address=self.bed.node("db2").address,
                                         wrap=lambda argv: self.bed.argv("db2", argv))
        self.make_synchronous()
        conninfo = "host=%s port=5432,5432 user=stagger dbname=postgres" % ",".join(
            self.bed.node(n).address for n in DBS)
        log("PostgreSQL: %s" % conninfo)
        for name in HOSTS:
            self.hosts.append(Host(self.bed, name, image_tar))
        log("podman services on %s" % ", ".join(h.address for h in self.hosts))
        conf = os.path.join(d, "staggerd.conf")
        with open(conf, "w") as f:
            f.write("[fleet]\npoll_interval_ms = 500\nlost_after_secs = %d\n"
                    "call_timeout_secs = 5\n" % LOST_AFTER_S)
            for h in self.hosts:
                f.write("\n[host %s]\nendpoint = tcp://%s:%d\naddress = %s\n"
                        % (h.name, h.address, ENGINE_PORT, h.address))
        # The same data directory path on every replica, as on machines of
        # their own: the containers' marker is made from it.
        data_dir = os.path.join(d, "data")
        for name in REPLICAS:
            self.replicas.append(Replica(self.bed, name, conninfo, conf, data_dir))
        os.makedirs(os.path.join(d, "config", "stagger"))
        with open(os.path.join(d, "config", "stagger", "clusters.json"), "w") as f:
            json.dump({"bed": [r.url for r in self.replicas]}, f)
        self.wait_leader(30)
        log("replicas up; %s leads" % self.leader().name)

    @property
    def pg(self):
        """The PostgreSQL that takes writes now."""
        return self.servers.get(self.primary)

    def standby_name(self):
        return [n for n in DBS if n != self.primary][0]

    def make_synchronous(self):
        """Makes the primary wait for its standby at each commit, once it streams."""
        self.pg.sql("ALTER SYSTEM SET synchronous_standby_names = '*'")
        self.pg.sql("SELECT pg_reload_conf()")
        if not stgtest.wait_until(lambda: self.pg.sql(
                "SELECT sync_state FROM pg_stat_replication") == [["sync"]], timeout=60):
            raise RuntimeError("the standby does not stream synchronously")

    def build_image(self):
        root = os.path.join(self.bed.dir, "image")
        os.makedirs(os.path.join(root, "bin"))
        os.makedirs(os.path.join(root, "tmp"))
        shutil.copy("/bin/busybox", os.path.join(root, "bin", "busybox"))
        for applet in ("sh", "httpd", "mkdir", "echo", "sleep"):
            os.symlink("busybox", os.path.join(root, "bin", applet))
        tar = os.path.join(self.bed.dir, "image.tar")
        subprocess.run(["tar", "-C", root, "-cf", tar, "."], check=True)
        return tar

    def job_file(self, version):
        path = os.path.join(self.bed.dir, "web-%d.json" % version)
        job = {
            "cluster": "bed", "role": "www", "environment": "prod", "name": "web",
            "instances": INSTANCES,
            "resources": {"cpu": 0.1, "ram_mb": 32, "ports": ["http"]},
            "container": {"docker": {"image": IMAGE,
                                     "parameters": [{"name": "network", "value": "host"}]}},
            "constraints": {"host": "limit:2"},
            "task": {
                "command": "mkdir -p /www && echo ok > /www/health && echo \"$VERSION\" > "
                           "/www/version && exec httpd -f -p {{ports[http]}} -h /www",
                "env": {"VERSION": str(version)},
                "stop_timeout_secs": 2,
            },
            "health_check_config": {
                "health_checker": {"http": {"endpoint": "/health", "expected_response": "ok"}},
                "initial_interval_secs": 1, "interval_secs": 1, "max_consecutive_failures": 3,
            },
            "update_config": {"batch_size": 2, "watch_secs": 2, "rollback_on_failure": True,
                              "max_per_shard_failures": 5, "max_total_failures": 4},
        }
        with open(path, "w") as f:
            json.dump(job, f)
        return path

    # ---- who leads ----------------------------------------------------------------------

    def leader(self):
        """The replica that says it leads (the first, should several say so), or None."""
        for r in self.replicas:
            if r.health() == "leader":
                return r
        return None

    def wait_leader(self, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            r = self.leader()
            if r is not None:
                return r
            time.sleep(0.2)
        raise RuntimeError("no replica leads after %d s" % seconds)

    # ---- client calls -----------------------------------------------------------------------

    def stagger(self, args, timeout=90):
        env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(self.bed.dir, "config"), NO_COLOR="1")
        argv = self.bed.argv("client", [stgtest.program("stagger")] + args)
        try:
            p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            return None, "the CLI did not end within %d s" % timeout
        return p.returncode, p.stdout.strip()

    def call(self, op, args, **fields):
        """One CLI call, recorded with its outcome: ok (exit 0), fail (the daemon
        refused: exit 1), unknown (no answer: exit 4, or no end), else unclear."""
        t0 = time.time()
        code, out = self.stagger(args)
        outcome = {0: "ok", 1: "fail", 4: "unknown", None: "unknown"}.get(code, "unclear")
        self.history.add("call", op=op, start=t0, t=time.time(), outcome=outcome, exit=code,
                         detail=out[-400:], **fields)
        log("call %s %s: %s (%s)" % (op, fields, outcome, out.splitlines()[-1] if out else ""))
        return outcome

    def sql(self, query):
        """Rows from the store, waiting while PostgreSQL is down."""
        deadline = time.monotonic() + 60
        while True:
            try:
                return self.pg.sql(query)
            except (RuntimeError, subprocess.TimeoutExpired):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)

    def active_updates(self):
        return int(self.sql("SELECT count(*) FROM updates WHERE active = 1")[0][0])

    def wait_quiet(self, seconds):
        """Until no update is active; FALSE after @seconds."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.active_updates() == 0:
                return True
            time.sleep(0.5)
        return False

    # ---- the workload -------------------------------------------------------------------------

    def workload(self):
        n = 0
        try:
            self.call("create", ["job", "create", JOB, self.job_file(0)], call=0)
            self.wait_quiet(QUIET_S)
            while not self.stop_workload.is_set():
                n += 1
                if n % 4 == 0:
                    host = HOSTS[(n // 4) % len(HOSTS)]
                    self.call("drain", ["host", "drain", "--watch-secs=3", "bed/" + host],
                              call=n, host=host)
                    self.wait_quiet(QUIET_S)
                    self.call("undrain", ["host", "undrain", "bed/" + host], call=n, host=host)
                else:
                    self.call("update", ["update", "start", "-m", "call %d" % n, JOB,
                                         self.job_file(n)], call=n, version=n)
                    self.wait_quiet(QUIET_S)
        except Exception:  # noqa: BLE001 - reported as the run's error
            self.errors.append("workload: " + traceback.format_exc())

    # ---- faults -------------------------------------------------------------------------------

    def both(self, a, bs):
        return [(a, b) for b in bs] + [(b, a) for b in bs]

    def hold(self, lo, hi):
        time.sleep(self.rng.uniform(lo, hi))

    def fault(self, name, leader):
        """Injects fault @name (the current leader: @leader) and heals it; returns what
        it cut, for the record."""
        rng = self.rng
        others = [r for r in REPLICAS if r != leader]
        if name == "leader-db":
            cut = self.both(leader, [self.primary])
            self.cut_for(name, cut, 3, 8)
        elif name == "leader-hosts":
            cut = self.both(leader, HOSTS)
            self.cut_for(name, cut, 3, 10)
        elif name == "host-alone":
            cut = self.both(rng.choice(HOSTS), REPLICAS)
            self.cut_for(name, cut, 2, LOST_AFTER_S - 2)
        elif name == "asymmetric":
            cut = self.both(rng.choice(others), HOSTS) + self.both(leader, [self.primary])
            self.cut_for(name, cut, 4, 10)
        elif name == "one-way":
            cut = [(leader, rng.choice(HOSTS))]
            self.cut_for(name, cut, 3, 8)
        elif name == "flapping":
            cut = self.both(leader, [rng.choice([self.primary] + HOSTS)])
            self.history.add("fault", name=name, phase="start", cut=cut)
            end = time.monotonic() + rng.uniform(5, 10)
            while time.monotonic() < end:
                self.bed.cut(cut)
                self.hold(0.2, 1.0)
                self.bed.heal(cut)
                self.hold(0.2, 1.0)
            self.history.add("fault", name=name, phase="heal", cut=cut)
        elif name == "host-moved":
            cut = self.both(rng.choice(HOSTS), REPLICAS)
            self.cut_for(name, cut, LOST_AFTER_S + 4, LOST_AFTER_S + 8)
        elif name == "db-outage":
            cut = self.both(leader, HOSTS)
            self.bed.cut(cut)
            self.history.add("fault", name=name, phase="start", cut=cut)
            self.hold(0.5, 2)
            self.history.add("fault", name="postgresql-stopped", phase="start")
            self.pg_down = True
            self.pg.stop()
            self.hold(2, 6)
            self.pg.start()
            self.pg_down = False
            self.history.add("fault", name="postgresql-stopped", phase="heal")
            self.hold(0.5, 3)
            self.bed.heal(cut)
            self.history.add("fault", name=name, phase="heal", cut=cut)
        elif name == "failover":
            cut = self.failover(rng.choice(["kill", "freeze", "cut"]))
        else:
            raise ValueError(name)
        return cut

    # ---- failing over to the standby ----------------------------------------------------

    def updates_seen(self):
        """Each update in the store, as {id: [status, active, events]}."""
        rows = self.sql("SELECT u.id, u.status, u.active, (SELECT count(*) FROM update_events e "
                        "WHERE e.update_id = u.id) FROM updates u")
        return {uid: [int(st), int(act), int(n)] for uid, st, act, n in rows}

    def failover(self, how):
        """The primary dies (@how: kill, freeze or cut), the standby is promoted, a
        replica leads on it, and the old primary is rebuilt as its standby; returns
        what was cut."""
        old, new = self.primary, self.standby_name()
        old_pg, new_pg = self.servers[old], self.servers[new]
        cut = self.both(old, REPLICAS) if how == "cut" else []
        before = self.updates_seen()
        epoch = int(self.sql("SELECT epoch FROM stagger_leader")[0][0])
        self.history.add("fault", name="failover", phase="start", how=how, old=old, new=new,
                         cut=cut)
        self.history.add("db", phase="before", old=old, updates=before)
        frozen = []
        if how == "kill":
            old_pg.stop("immediate")
        elif how == "freeze":
            frozen = old_pg.processes()
            for pid in frozen:
                os.kill(pid, signal.SIGSTOP)
        else:
            self.bed.cut(cut)
        self.hold(0.5, 2)  # an operator makes sure the primary is gone
        new_pg.promote()
        promoted = time.monotonic()
        self.primary = new
        # Alone until the old one is rebuilt: commits must not wait for it.
        new_pg.sql("ALTER SYSTEM SET synchronous_standby_names = ''")
        new_pg.sql("SELECT pg_reload_conf()")
        if not stgtest.wait_until(lambda: int(self.sql(
                "SELECT epoch FROM stagger_leader")[0][0]) > epoch, timeout=60):
            raise RuntimeError("no replica led on the promoted server within 60 s")
        leader = self.wait_leader(60)
        log("failover (%s): %s promoted, %s leads %.2f s after the promotion"
            % (how, new, leader.name, time.monotonic() - promoted))
        self.history.add("db", phase="after", old=old, updates=self.updates_seen(),
                         took=time.monotonic() - promoted)
        back = how == "cut" or (how == "kill" and self.rng.random() < 0.5)
        if how == "kill" and back:
            old_pg.start()  # as an operator who forgot it: writable, on the old timeline
        if how == "cut":
            self.bed.heal(cut)
        if back:
            since = int(time.time() * 1000)
            old_epoch = old_pg.sql("SELECT epoch FROM stagger_leader")
            self.hold(3, 6)
            self.history.add("old-primary", server=old, epoch_before=old_epoch,
                             epoch_after=old_pg.sql("SELECT epoch FROM stagger_leader"),
                             alive=int(old_pg.sql(
                                 "SELECT count(*) FROM stagger_replicas WHERE seen_ms >= %d"
                                 % since)[0][0]))
        for pid in frozen:
            os.kill(pid, signal.SIGKILL)
        if not frozen:
            try:
                old_pg.stop("immediate")
            except subprocess.CalledProcessError:
                pass  # down already
        old_pg.follow(new_pg)
        self.make_synchronous()
        self.history.add("fault", name="failover", phase="heal", how=how, old=old, new=new,
                         cut=cut)
        return cut

    def cut_for(self, name, cut, lo, hi):
        self.bed.cut(cut)
        self.history.add("fault", name=name, phase="start", cut=cut)
        self.hold(lo, hi)
        self.bed.heal(cut)
        self.history.add("fault", name=name, phase="heal", cut=cut)

    KINDS = ["leader-db", "leader-hosts", "host-alone", "asymmetric", "one-way", "flapping",
             "host-moved", "db-outage", "failover"]
    ROUND = KINDS + ["failover"]  # one round of faults

    def schedule(self):
        """The seed's faults: every kind once (failovers twice) in a shuffled round,
        round after round."""
        out = []
        while len(out) < self.n_faults:
            kinds = list(self.ROUND)
            self.rng.shuffle(kinds)
            out += kinds
        return out[:self.n_faults]

    def nemesis(self):
        for i, name in enumerate(self.schedule()):
            self.hold(1, 5)  # a random moment of the update or drain under way
            leader = self.wait_leader(60)
            log("fault %d of %d: %s (%s leads)" % (i + 1, self.n_faults, name, leader.name))
            self.fault(name, leader.name)
            self.wait_leader(60)
            self.hold(2, 5)

    # ---- the end ---------------------------------------------------------------------------

    def settle(self):
        """Heals everything, lets the workload end, and waits until the job is whole."""
        self.bed.heal_all()
        if self.pg_down:
            self.pg.start()
        self.stop_workload.set()
        self.workload_thread.join(timeout=QUIET_S + 120)
        deadline = time.monotonic() + SETTLE_S
        while time.monotonic() < deadline:
            if self.active_updates() == 0 and not self.end_anomalies():
                return True
            time.sleep(1)
        return False

    def store_instances(self):
        rows = self.sql("SELECT i.instance_id, i.run_id, COALESCE(i.run_config_id, 0) FROM "
                        "instances i JOIN jobs j ON j.id = i.job_id ORDER BY i.instance_id")
        return [{"instance": int(a), "run": int(b), "config": int(c)} for a, b, c in rows]

    def host_containers(self):
        out = []
        for h in self.hosts:
            listing = h.containers()
            if listing is None:
                out.append({"host": h.name, "id": "?", "state": "engine not answering",
                            "instance": -1, "run": -1, "config": -1})
                continue
            for c in listing:
                labels = c.get("Labels") or {}
                out.append({"host": h.name, "id": c["Id"], "state": c.get("State", ""),
                            "instance": int(labels.get("org.stagger.instance", -1)),
                            "run": int(labels.get("org.stagger.run", -1)),
                            "config": int(labels.get("org.stagger.config-id", -1))})
        return out

    def end_anomalies(self):
        return partition_history.check_end(self.store_instances(), self.host_containers())

    def store_updates(self):
        rows = self.sql("SELECT u.id, u.status, u.active, u.created_ms, u.modified_ms, "
                        "COALESCE((SELECT e.message FROM update_events e WHERE e.update_id = u.id "
                        "ORDER BY e.id LIMIT 1), ''), COALESCE((SELECT e.message FROM "
                        "update_events e WHERE e.update_id = u.id ORDER BY e.id DESC LIMIT 1), '') "
                        "FROM updates u ORDER BY u.id")
        out = []
        for uid, status, active, created, modified, message, last in rows:
            m = re.match(r"call (\d+)$", message)
            out.append({"id": int(uid), "status": int(status), "active": int(active) == 1,
                        "call": int(m.group(1)) if m else None, "message": message,
                        "start": int(created) / 1000.0, "end": int(modified) / 1000.0,
                        "reason": last})
        return out

    def db_epoch_violations(self):
        n = 0
        for table in ("update_events", "instance_events"):
            n += int(self.sql("SELECT count(*) FROM %s a WHERE EXISTS (SELECT 1 FROM %s b WHERE "
                              "b.id < a.id AND b.epoch > a.epoch)" % (table, table))[0][0])
        return n

    def collect(self):
        """The replicas' leader changes and engine requests, the engines' events."""
        sent = re.compile(r"fleet: epoch (\d+): (\w+) (\S+) on (\S+)$")
        led = re.compile(r"ha: leading as (\S+) with epoch (\d+)$")
        for r in self.replicas:
            for t, _, text in log_lines(r.log_path, self.day):
                m = sent.match(text)
                if m and int(m.group(1)) > 0:
                    self.history.add("action", t=t, replica=r.name, epoch=int(m.group(1)),
                                     method=m.group(2), path=m.group(3), host=m.group(4))
                m = led.match(text)
                if m:
                    self.history.add("leader", t=t, replica=r.name, epoch=int(m.group(2)))
        for h in self.hosts:
            for e in h.events():
                self.history.add("engine", t=e["Time"] and parse_time(e["Time"]), host=h.name,
                                 status=e.get("Status", ""), container=e.get("ID", ""),
                                 name=e.get("Name", ""), labels=e.get("Attributes") or {})

    def report(self, anomalies):
        faults = [r for r in self.history.of("fault")
                  if r["phase"] == "start" and r["name"] in self.KINDS]
        leaders = sorted(self.history.of("leader"), key=lambda r: r["t"])
        calls = self.history.of("call")
        log("seed %d: %d faults, %d leader changes (epochs %s), %d calls (%s)" % (
            self.seed, len(faults), max(len(leaders) - 1, 0),
            ",".join(str(r["epoch"]) for r in leaders), len(calls),
            ", ".join("%s %d" % (o, sum(1 for c in calls if c["outcome"] == o))
                      for o in ("ok", "fail", "unknown"))))
        for name in self.KINDS:
            log("  %-13s %d" % (name, sum(1 for f in faults if f["name"] == name)))
        for a in anomalies:
            log("ANOMALY " + a)

    def run(self, r):
        try:
            self.start()
            self.workload_thread = threading.Thread(target=self.workload, daemon=True)
            self.workload_thread.start()
            self.nemesis()
            settled = self.settle()
            r.check("the job is whole again once everything is healed", settled,
                    "; ".join(self.end_anomalies()))
            self.collect()
            drained = [row[0] for row in self.sql("SELECT host FROM fleet_drained_hosts")]
            anomalies = partition_history.check(
                self.history.records, self.store_updates(), self.store_instances(),
                self.host_containers(), drained, self.db_epoch_violations(), LOST_AFTER_S)
            self.report(anomalies)
            r.check("no anomaly in the history (seed %d)" % self.seed, not anomalies,
                    "\n".join(anomalies))
            r.check("the workload ran without error", not self.errors, "\n".join(self.errors))
        finally:
            self.close(r)

    def close(self, r):
        self.stop_workload.set()
        if self.bed is not None:
            self.bed.heal_all()
        for rep in self.replicas:
            code = rep.stop()
            if code not in (0, None):
                with open(rep.log_path, errors="replace") as f:
                    tail = f.read()[-3000:]
                r.check("%s exits 0" % rep.name, False, "exit %s:\n%s" % (code, tail))
        for h in self.hosts:
            h.stop()
        for name, pg in self.servers.items():
            shutil.copy(os.path.join(pg.dir, "log"), "partition-%d-%s.log" % (self.seed, name))
            try:
                pg.close()
            except subprocess.CalledProcessError:
                shutil.rmtree(pg.dir, ignore_errors=True)  # stopped already
        self.history.close()
        if self.bed is not None:
            # The logs stay beside the history, for whoever reads a failure.
            for name in REPLICAS + HOSTS:
                for suffix in (".log", "/service.log"):
                    path = os.path.join(self.bed.dir, name + suffix)
                    if os.path.exists(path):
                        shutil.copy(path, "partition-%d-%s.log" % (self.seed, name))
            self.bed.close()


def parse_time(text):
    """The engine's RFC 3339 time with nanoseconds, as seconds since the epoch."""
    m = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$", text)
    if not m:
        return 0.0
    base = datetime.datetime.fromisoformat(m.group(1) + (m.group(3).replace("Z", "+00:00")))
    return base.timestamp() + float("0." + (m.group(2) or "0"))


def main():
    r = stgtest.Results("partition_test")
    seed = int(os.environ.get("STG_PARTITION_SEED", "1"))
    faults = int(os.environ.get("STG_PARTITION_FAULTS", "5"))
    log("partition campaign: seed %d, %d faults" % (seed, faults))
    r.run("partition campaign", Campaign(seed, faults).run, r)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
