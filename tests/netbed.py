"""netbed.py: network namespaces for the partition tests, and cuts between them.

A Bed makes one network namespace per node (PostgreSQL, each staggerd
replica, each fleet host, the test's own client) and a switch namespace
holding a bridge; each node has one veth pair, its end `eth0` in the
node, the other end a port of the bridge. Addresses come from
10.233.0.0/24, which exists only inside these namespaces: nothing is
added to the namespace the test runs in (no link, address, route or
firewall rule).

Every node knows every other node's MAC address as a permanent neighbour
entry and never uses ARP. A cut from A to B replaces, in A's namespace,
B's entry with a MAC address no port has: A's packets to B then vanish on
the bridge, without an error, as on a real network that splits (TCP
retransmits, then times out). Cuts are one-way; a cut both ways is two.
Cuts are counted, so overlapping faults compose.

Namespaces are named stgpart-PID-NODE, PID being the test process's;
Bed.sweep() (run at every start) removes what a killed run left: the
processes in its namespaces, the namespaces, and its folder
/tmp/stgpart-PID. Processes run in a node with Bed.popen/Bed.run, which
enter only its network namespace (nsenter --net), so the mounts and
cgroups podman and PostgreSQL need are the machine's. The test's own
sockets are opened inside the client node with Bed.connect.

Needs root and Debian's iproute2 (ip) and util-linux (nsenter).
"""
import contextlib
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import threading
import time

PREFIX = "stgpart-"
SUBNET = "10.233.0."
NOWHERE = "02:53:54:ff:ff:ff"  # a MAC address no port has
CLONE_NEWNET = 0x40000000

_libc = ctypes.CDLL(None, use_errno=True)


def _setns(fd):
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, "setns: " + os.strerror(err))


def _ip(*args, check=True):
    p = subprocess.run(("ip",) + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if check and p.returncode != 0:
        raise RuntimeError("ip %s: %s" % (" ".join(args), p.stderr.strip()))
    return p.stdout


def _alive(pid):
    """True when process @pid runs a partition test (not a reused pid)."""
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return b"partition" in f.read()
    except OSError:
        return False


def _kill_netns_processes(ns):
    """SIGKILL every process whose network namespace is @ns, until none is left."""
    for _ in range(50):
        pids = [int(p) for p in _ip("netns", "pids", ns, check=False).split()]
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)


def unmount_under(folder):
    """Unmounts, deepest first, what is mounted under @folder (podman's overlays)."""
    with open("/proc/self/mountinfo") as f:
        points = [line.split()[4] for line in f]
    for point in sorted((p for p in points if p.startswith(folder + "/")), reverse=True):
        subprocess.run(["umount", "-l", point], stderr=subprocess.DEVNULL)


def sweep(keep_pid=None):
    """Removes the namespaces and folders of partition runs whose process is gone."""
    listing = _ip("netns", "list", check=False)
    for line in listing.splitlines():
        name = line.split()[0] if line.split() else ""
        if not name.startswith(PREFIX):
            continue
        pid = name[len(PREFIX):].split("-")[0]
        if not pid.isdigit() or int(pid) == keep_pid or _alive(int(pid)):
            continue
        _kill_netns_processes(name)
        _ip("netns", "del", name, check=False)
    for entry in os.listdir("/tmp"):
        pid = entry[len(PREFIX):]
        if entry.startswith(PREFIX) and pid.isdigit() and int(pid) != keep_pid and not _alive(int(pid)):
            folder = os.path.join("/tmp", entry)
            unmount_under(folder)
            shutil.rmtree(folder, ignore_errors=True)


class Node:
    def __init__(self, bed, name, index):
        self.name = name
        self.ns = bed.prefix + name
        self.address = SUBNET + str(index)
        self.mac = "02:53:54:00:00:%02x" % index


class Bed:
    """The namespaces of one run; @nodes maps a node's name to its address's last byte."""

    def __init__(self, nodes):
        if os.geteuid() != 0:
            raise RuntimeError("the partition tests need root (network namespaces)")
        for tool in ("ip", "nsenter"):
            if shutil.which(tool) is None:
                raise RuntimeError("%s is missing: run scripts/install-deps.sh" % tool)
        sweep(keep_pid=os.getpid())
        self.prefix = "%s%d-" % (PREFIX, os.getpid())
        self.dir = "/tmp/%s%d" % (PREFIX, os.getpid())
        os.makedirs(self.dir, exist_ok=True)
        self.nodes = {name: Node(self, name, index) for name, index in nodes.items()}
        self.switch = self.prefix + "switch"
        self.cuts = {}  # (from, to) -> how many faults cut it
        self.lock = threading.Lock()
        self.made = []
        try:
            self._build()
        except Exception:
            self.close()
            raise

    def _add_ns(self, ns):
        _ip("netns", "add", ns)
        self.made.append(ns)
        _ip("-n", ns, "link", "set", "lo", "up")

    def _build(self):
        self._add_ns(self.switch)
        _ip("-n", self.switch, "link", "add", "name", "sw0", "type", "bridge")
        _ip("-n", self.switch, "link", "set", "sw0", "up")
        for i, node in enumerate(self.nodes.values()):
            port = "p%d" % i
            self._add_ns(node.ns)
            _ip("-n", self.switch, "link", "add", "name", port, "type", "veth", "peer", "name",
                "eth0", "netns", node.ns)
            _ip("-n", self.switch, "link", "set", port, "master", "sw0", "up")
            _ip("-n", node.ns, "link", "set", "eth0", "address", node.mac, "arp", "off", "up")
            _ip("-n", node.ns, "addr", "add", node.address + "/24", "dev", "eth0")
        for node in self.nodes.values():
            for other in self.nodes.values():
                if other is not node:
                    self._neigh(node, other, other.mac)

    def _neigh(self, node, other, mac):
        _ip("-n", node.ns, "neigh", "replace", other.address, "lladdr", mac, "nud", "permanent",
            "dev", "eth0")

    def node(self, name):
        return self.nodes[name]

    # ---- cuts --------------------------------------------------------------------

    def cut(self, pairs):
        """Cuts each (from, to) of @pairs (node names): from's packets to `to` vanish."""
        with self.lock:
            for a, b in pairs:
                self.cuts[(a, b)] = self.cuts.get((a, b), 0) + 1
                if self.cuts[(a, b)] == 1:
                    self._neigh(self.nodes[a], self.nodes[b], NOWHERE)

    def heal(self, pairs):
        """Undoes one cut of each (from, to) of @pairs."""
        with self.lock:
            for a, b in pairs:
                n = self.cuts.get((a, b), 0)
                if n == 0:
                    raise RuntimeError("healing %s -> %s, which is not cut" % (a, b))
                self.cuts[(a, b)] = n - 1
                if n == 1:
                    self._neigh(self.nodes[a], self.nodes[b], self.nodes[b].mac)

    def heal_all(self):
        with self.lock:
            for (a, b), n in self.cuts.items():
                if n > 0:
                    self._neigh(self.nodes[a], self.nodes[b], self.nodes[b].mac)
            self.cuts.clear()

    def is_cut(self, a, b):
        with self.lock:
            return self.cuts.get((a, b), 0) > 0

    # ---- processes and sockets in a node -----------------------------------------------

    def argv(self, node, argv):
        return ["nsenter", "--net=/run/netns/" + self.nodes[node].ns, "--"] + list(argv)

    def popen(self, node, argv, **kwargs):
        return subprocess.Popen(self.argv(node, argv), **kwargs)

    def run(self, node, argv, **kwargs):
        return subprocess.run(self.argv(node, argv), **kwargs)

    @contextlib.contextmanager
    def inside(self, node):
        """This thread's network namespace is @node's for the block."""
        own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        target = os.open("/run/netns/" + self.nodes[node].ns, os.O_RDONLY)
        try:
            _setns(target)
            try:
                yield
            finally:
                _setns(own)
        finally:
            os.close(own)
            os.close(target)

    def connect(self, node, address, port, timeout):
        """A TCP connection from inside @node to @address:@port."""
        with self.inside(node):
            return socket.create_connection((address, port), timeout=timeout)

    # ---- the end ---------------------------------------------------------------------

    def close(self):
        """Kills what still runs in the namespaces, removes them and the folder."""
        for ns in reversed(self.made):
            _kill_netns_processes(ns)
            _ip("netns", "del", ns, check=False)
        self.made = []
        unmount_under(self.dir)
        shutil.rmtree(self.dir, ignore_errors=True)
