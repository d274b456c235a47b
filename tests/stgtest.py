"""stgtest.py: what Stagger's Python test suites share.

A result counter that prints "N passed, N failed", the build and source
trees (from STG_BUILDDIR and STG_SRCDIR, set by `make check`), Python stubs
generated at test time from thrift/stagger.thrift, and a real staggerd
started on free ports (--ready-file) and stopped with SIGTERM.
"""
import glob
import http.client
import json
import os
import pwd
import random
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import traceback

from thrift.transport import TTransport

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.environ.get("STG_SRCDIR", os.path.dirname(HERE))
BUILDDIR = os.environ.get("STG_BUILDDIR", os.getcwd())
THRIFT = os.environ.get("THRIFT", "thrift")


class Results:
    """Counts checks; each failure is printed with its reason."""

    def __init__(self, suite):
        self.suite = suite
        self.passed = 0
        self.failed = 0

    def check(self, name, cond, why=""):
        if cond:
            self.passed += 1
            print("PASS %s" % name)
        else:
            self.failed += 1
            print("FAIL %s%s" % (name, (": " + str(why)) if why else ""))
        sys.stdout.flush()
        return cond

    def run(self, name, fn, *args):
        """Runs fn(*args); an exception is a failure."""
        try:
            fn(*args)
        except Exception:  # noqa: BLE001 - any exception fails the case
            self.check(name, False, traceback.format_exc())

    def finish(self):
        print("%d passed, %d failed" % (self.passed, self.failed))
        return 0 if self.failed == 0 and self.passed > 0 else 1


def program(name):
    return os.path.join(BUILDDIR, name)


_stub_dir = None


def load_stubs():
    """Generates the Python stubs of thrift/stagger.thrift once and imports
    them; returns (ttypes, StaggerScheduler)."""
    global _stub_dir
    if _stub_dir is None:
        _stub_dir = tempfile.mkdtemp(prefix="stagger-py-")
        subprocess.check_call([THRIFT, "--gen", "py", "-out", _stub_dir,
                               os.path.join(SRCDIR, "thrift", "stagger.thrift")])
        sys.path.insert(0, _stub_dir)
    from stagger.api import StaggerScheduler, ttypes
    # Python 3's generated structs define __eq__ and so are unhashable; sets
    # of structs need a hash. Identity is enough to build and send them.
    for name in dir(ttypes):
        cls = getattr(ttypes, name)
        if isinstance(cls, type) and hasattr(cls, "thrift_spec") and cls.__hash__ is None:
            cls.__hash__ = object.__hash__
    return ttypes, StaggerScheduler


def cleanup_stubs():
    global _stub_dir
    if _stub_dir is not None:
        shutil.rmtree(_stub_dir, ignore_errors=True)
        _stub_dir = None


def kill_instances_under(folder):
    """Kills every instance whose sandbox is under folder (instances outlive
    staggerd by design)."""
    prefix = folder.rstrip("/") + "/"
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % pid, "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        for var in env:
            if var.startswith(b"STAGGER_SANDBOX=") and var[16:].decode(errors="replace").startswith(prefix):
                for target in (-int(pid), int(pid)):
                    try:
                        os.kill(target, signal.SIGKILL)
                    except OSError:
                        pass


class Daemon:
    """A staggerd on free ports in its own data directory."""

    def __init__(self, *args, config=None, binary=None):
        self.dir = tempfile.mkdtemp(prefix="stagger-pytest-")
        self.ready = os.path.join(self.dir, "ready.json")
        argv = [binary or program("staggerd"), "--data-dir=" + os.path.join(self.dir, "data"),
                "--http-port=0", "--thrift-port=0", "--ready-file=" + self.ready]
        if config is not None:
            path = os.path.join(self.dir, "staggerd.conf")
            with open(path, "w") as f:
                f.write(config)
            argv.append("--config=" + path)
        # As root (CI), the tests' instances run as root as they were
        # written to (staggerd refuses that unless told).
        if os.geteuid() == 0:
            argv.append("--allow-root-instances")
        argv.extend(args)
        self.log = open(os.path.join(self.dir, "staggerd.log"), "w+")
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while True:
            if os.path.exists(self.ready):
                with open(self.ready) as f:
                    info = json.load(f)
                self.http_port = info["http_port"]
                self.thrift_port = info["thrift_port"]
                break
            if self.proc.poll() is not None:
                self._give_up("staggerd exited early:\n" + self.output())
            if time.monotonic() > deadline:
                self.proc.kill()
                self.proc.wait()
                self._give_up("staggerd not ready after 30 s")
            time.sleep(0.01)

    def _give_up(self, why):
        """A staggerd that never became ready: its folder goes too."""
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        raise RuntimeError(why)

    def output(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def alive(self):
        return self.proc.poll() is None

    def kill_instances(self):
        """Instances outlive staggerd by design: kill those of this daemon."""
        kill_instances_under(self.dir)

    def stop_keeping_instances(self):
        """SIGTERM, as an upgrade stops staggerd: its instances go on (in a
        --data-dir given to it); returns the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        status = self.proc.returncode
        if status != 0:
            sys.stdout.write(self.output())
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        return status

    def stop(self):
        """SIGTERM, then its instances killed; returns the exit status."""
        status = self.stop_keeping_instances()
        self.kill_instances()
        return status


def wait_until(fn, timeout=60):
    """fn() until it is truthy or @timeout seconds pass, polling; its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.1)


def port_free(port):
    """True when a listening socket could bind 127.0.0.1:port now."""
    s = socket.socket()
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def free_port(low, high):
    """A port of low..high-1 that is free now."""
    for port in range(low, high):
        if port_free(port):
            return port
    raise RuntimeError("no free port in %d-%d" % (low, high))


def health(port):
    """What a staggerd's /health on 127.0.0.1:port says ("" if nothing)."""
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        conn.request("GET", "/health")
        resp = conn.getresponse()
        body = resp.read().decode().strip()
        conn.close()
    except OSError:
        return ""
    return body if resp.status == 200 else ""


class Replica:
    """A staggerd replica of the cluster "ha" on a PostgreSQL, the simulated
    runtime, its HTTP port given."""

    def __init__(self, pg, port, lease_ms, config=None, binary=None, conninfo=None, args=()):
        self.port = port
        self.url = "http://127.0.0.1:%d" % port
        self.daemon = Daemon("--store=" + (conninfo or pg.conninfo()), "--http-port=%d" % port,
                             "--advertise-url=" + self.url, "--lease-ms=%d" % lease_ms,
                             "--runtime=simulated", "--cluster=ha", *args, config=config,
                             binary=binary)
        self.thrift_port = self.daemon.thrift_port


def wait_leader(replicas, bound_s):
    """The one replica of `replicas` that says it leads, within bound_s."""
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        leaders = [r for r in replicas if r.daemon.alive() and health(r.port) == "leader"]
        if len(leaders) == 1:
            return leaders[0]
        time.sleep(0.02)
    raise RuntimeError("no single leader within %d s" % bound_s)


def stop_replicas(replicas):
    """Stops the replicas still alive; cleans up after those killed."""
    for x in replicas:
        if x.daemon.alive():
            x.daemon.stop()
        else:
            x.daemon.log.close()
            shutil.rmtree(x.daemon.dir, ignore_errors=True)


LOCK_HOLDER = "stg-lock-holder"


def hold_lock(pg):
    """A psql session that takes the leaders' advisory lock (waiting for
    it): no replica can lead while it lives (release_lock ends it)."""
    argv = [os.path.join(pg.bindir, "psql"), "-X", "-q", "-At", "-h", pg.dir, "-p", str(pg.port),
            "-U", "stagger", "-d", "postgres"]
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, text=True,
                         env=dict(os.environ, PGAPPNAME=LOCK_HOLDER))
    p.stdin.write("SELECT pg_advisory_lock(7566183001);\n")
    p.stdin.flush()
    return p


def lock_held(pg):
    """TRUE once hold_lock's session holds the lock."""
    return pg.sql("SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
                  "WHERE l.locktype = 'advisory' AND l.granted AND a.application_name = '%s'"
                  % LOCK_HOLDER)[0][0] == "1"


def release_lock(holder):
    """Ends hold_lock's session, which frees the lock."""
    holder.stdin.close()
    try:
        holder.wait(timeout=10)
    except subprocess.TimeoutExpired:
        holder.kill()
        holder.wait()


def schema_versions():
    """The numbers of the schema's migrations (schema/NNN_*.sql), in order."""
    names = glob.glob(os.path.join(SRCDIR, "schema", "[0-9][0-9][0-9]_*.sql"))
    return sorted({int(os.path.basename(n)[:3]) for n in names})


def run_cli(env, *args, timeout=60):
    """stagger ARGS with env: (exit status, stdout, stderr)."""
    p = subprocess.run([program("stagger")] + list(args), env=env, capture_output=True,
                       text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


class Postgres:
    """A real PostgreSQL 15 (Debian's initdb and pg_ctl, or $STG_PG_BINDIR)
    in a temporary directory, on 127.0.0.1 and a free port of `ports`, with
    trust auth for the user "stagger". Run as nobody when we are root,
    since postgres refuses root. Its database is "postgres".

    Elsewhere: on `address` (its clients from `trusted`, a CIDR block,
    trusted too), under `parent` (a folder), with every command of
    PostgreSQL's run through `wrap` (argv -> argv: e.g. in another
    network namespace). Its unix socket is in its folder, whatever the
    address (sql() uses it)."""

    def __init__(self, ports, address="127.0.0.1", trusted=None, parent=None, wrap=None):
        self.bindir = os.environ.get("STG_PG_BINDIR", "/usr/lib/postgresql/15/bin")
        self.address = address
        self.wrap = wrap or (lambda argv: argv)
        self.dir = tempfile.mkdtemp(prefix="stg-pg-", dir=parent)
        self.data = os.path.join(self.dir, "data")
        if os.geteuid() == 0:
            nobody = pwd.getpwnam("nobody")
            os.chown(self.dir, nobody.pw_uid, nobody.pw_gid)
        self._run("initdb", "-D", self.data, "-U", "stagger", "-A", "trust", "-E", "UTF8",
                  "--no-sync", "--locale=C")
        if trusted:
            with open(os.path.join(self.data, "pg_hba.conf"), "a") as f:
                f.write("host all all %s trust\n" % trusted)
        candidates = [p for p in ports if address != "127.0.0.1" or port_free(p)]
        random.shuffle(candidates)
        for self.port in candidates[:8]:
            try:
                self.start()
                return
            except subprocess.CalledProcessError:
                continue
        raise RuntimeError("PostgreSQL would not start on any port of %r:\n%s" % (ports, self.log()))

    def _run(self, prog, *args):
        argv = [os.path.join(self.bindir, prog)] + list(args)
        if os.geteuid() == 0:
            argv = ["runuser", "-u", "nobody", "--"] + argv
        subprocess.run(self.wrap(argv), cwd=self.dir, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)

    def start(self):
        opts = ("-p %d -c listen_addresses=%s -c unix_socket_directories=%s -c fsync=off"
                % (self.port, self.address, self.dir))
        self._run("pg_ctl", "start", "-w", "-t", "60", "-D", self.data, "-l",
                  os.path.join(self.dir, "log"), "-o", opts)

    def stop(self, mode="fast"):
        """Stops the server (fast: sessions are ended; immediate: as a crash)
        and keeps its data."""
        self._run("pg_ctl", "stop", "-w", "-m", mode, "-D", self.data)

    def standby(self, ports, address=None, wrap=None):
        """A streaming standby of this server (pg_basebackup -R), in a
        folder of its own beside this one's, on a free port of `ports`
        (on `address` and through `wrap`, by default this one's),
        started; promote() makes it a primary."""
        s = object.__new__(Postgres)
        s.bindir = self.bindir
        s.address = address or self.address
        s.wrap = wrap or self.wrap
        s.dir = tempfile.mkdtemp(prefix="stg-pg-", dir=os.path.dirname(self.dir))
        s.data = os.path.join(s.dir, "data")
        if os.geteuid() == 0:
            nobody = pwd.getpwnam("nobody")
            os.chown(s.dir, nobody.pw_uid, nobody.pw_gid)
        s.follow(self, ports)
        return s

    def follow(self, primary, ports=None):
        """Makes this server a streaming standby of @primary from a new base
        backup of it, its own data thrown away (as an operator rebuilds an
        old primary), and starts it: on its port, or a free one of
        `ports`."""
        shutil.rmtree(self.data, ignore_errors=True)
        self._run("pg_basebackup", "-D", self.data, "-h", primary.dir, "-p", str(primary.port),
                  "-U", "stagger", "-R", "-X", "stream", "--no-sync")
        if ports is None:
            self.start()
            return
        for self.port in [p for p in ports if self.address != "127.0.0.1" or port_free(p)][:8]:
            try:
                self.start()
                return
            except subprocess.CalledProcessError:
                continue
        raise RuntimeError("the standby would not start on any port of %r:\n%s"
                           % (ports, self.log()))

    def processes(self):
        """The server's processes: the postmaster first, then its children."""
        try:
            with open(os.path.join(self.data, "postmaster.pid")) as f:
                main = int(f.readline())
        except (OSError, ValueError):
            return []
        out = [main]
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open("/proc/%s/stat" % entry) as f:
                        fields = f.read().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                if int(fields[1]) == main:
                    out.append(int(entry))
        return out

    def promote(self):
        """Makes this standby a primary (on a new timeline), as an operator
        fails over."""
        self._run("pg_ctl", "promote", "-w", "-t", "60", "-D", self.data)

    def conninfo(self):
        return "host=%s port=%d user=stagger dbname=postgres" % (self.address, self.port)

    def sql(self, query):
        """Runs @query over the unix socket; its rows, each a list of text fields."""
        argv = [os.path.join(self.bindir, "psql"), "-X", "-q", "-At", "-F", "\t", "-h", self.dir,
                "-p", str(self.port), "-U", "stagger", "-d", "postgres", "-v", "ON_ERROR_STOP=1",
                "-c", query]
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=30)
        if p.returncode != 0:
            raise RuntimeError("psql: %s" % p.stderr.strip())
        return [line.split("\t") for line in p.stdout.splitlines()]

    def log(self):
        try:
            with open(os.path.join(self.dir, "log")) as f:
                return f.read()
        except OSError:
            return ""

    def close(self):
        try:
            self.stop()
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


class ZooKeeper:
    """A ZooKeeper server (Debian's zookeeper package) on @port of
    127.0.0.1, its data in a temporary directory; stop() ends it (the
    data kept for start()), close() removes everything. @tick_ms is
    ZooKeeper's tick: sessions time out between 2 and 20 ticks."""

    JAR = "/usr/share/java/zookeeper.jar"

    def __init__(self, port, tick_ms=500):
        self.port = port
        self.tick_ms = tick_ms
        self.dir = tempfile.mkdtemp(prefix="stagger-zk-")
        self.proc = None
        self.log = open(os.path.join(self.dir, "zookeeper.log"), "a")
        self.start()

    @property
    def ensemble(self):
        return "127.0.0.1:%d" % self.port

    def start(self, port=None, fresh=False):
        """Starts the server (on @port for once: where no client looks, so
        that their sessions expire; on an empty data directory when @fresh:
        every node and session lost) and waits until it answers."""
        port = port or self.port
        data = os.path.join(self.dir, "data")
        if fresh:
            shutil.rmtree(data, ignore_errors=True)
        os.makedirs(data, exist_ok=True)
        self.proc = subprocess.Popen(
            ["java", "-Xmx256m", "-Dzookeeper.admin.enableServer=false",
             "-Dzookeeper.4lw.commands.whitelist=ruok", "-cp", self.JAR,
             "org.apache.zookeeper.server.ZooKeeperServerMain", str(port), data,
             str(self.tick_ms)], stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("zookeeper exited:\n" + self.output())
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                    s.sendall(b"ruok")
                    if s.recv(16) == b"imok":
                        return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError("zookeeper did not answer within 60 s:\n" + self.output())

    def output(self):
        self.log.flush()
        with open(self.log.name) as f:
            return f.read()[-4000:]

    def stop(self, sig=signal.SIGTERM):
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, sig)
            except OSError:
                pass
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.proc = None

    def close(self):
        self.stop(signal.SIGKILL)
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class HttpTransport(TTransport.TTransportBase):
    """One POST to /api per message, with the headers we choose, from the
    local address @source when given (e.g. 127.0.0.2)."""

    def __init__(self, port, content_type, accept, headers=None, tls=False, source=None):
        self.port = port
        self.tls = tls
        self.source = (source, 0) if source else None
        self.headers = {"Content-Type": content_type, "Accept": accept}
        self.headers.update(headers or {})
        self.out = bytearray()
        self.inbuf = TTransport.TMemoryBuffer(b"")
        self.reply_type = None

    def isOpen(self):
        return True

    def open(self):
        pass

    def close(self):
        pass

    def write(self, buf):
        self.out += buf

    def read(self, sz):
        return self.inbuf.read(sz)

    def flush(self):
        if self.tls:
            conn = http.client.HTTPSConnection("127.0.0.1", self.port, timeout=30,
                                               context=ssl._create_unverified_context(),
                                               source_address=self.source)
        else:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30,
                                              source_address=self.source)
        conn.request("POST", "/api", bytes(self.out), self.headers)
        resp = conn.getresponse()
        body = resp.read()
        self.reply_type = resp.getheader("Content-Type")
        conn.close()
        self.out = bytearray()
        if resp.status != 200:
            raise RuntimeError("HTTP %d: %r" % (resp.status, body[:200]))
        self.inbuf = TTransport.TMemoryBuffer(body)
