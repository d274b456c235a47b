"""fleet_demo_test.py: scripts/fleet-demo, the README's "Getting started on
several hosts" step by step, on this build: three Podman hosts, a
registry on loopback the hosts pull the example's image from, staggerd
with the fleet runtime, examples/fleet-web.json created and rolled to
fleet-web-v2.json, a host drained (each move watched for the job's
watch_secs) and opened again, examples/fleet-proxy.json's proxy put beside
each instance, and everything removed at the end, its processes included
(ports 26300-26499).
"""
import importlib.machinery
import importlib.util
import os
import re
import subprocess
import sys
import tempfile

import stgtest

PORTS = (26300, 26499)


def leak_check():
    """scripts/leak-check as a module: its /proc readers."""
    path = os.path.join(stgtest.SRCDIR, "scripts", "leak-check")
    loader = importlib.machinery.SourceFileLoader("leak_check", path)
    spec = importlib.util.spec_from_loader("leak_check", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def mounts_under(path):
    with open("/proc/mounts") as f:
        return [line.split()[1] for line in f if line.split()[1].startswith(path + "/")]


def processes_left(path):
    """(pid, command line) of every process whose command line names path
    or that listens on one of the demo's ports (a container's)."""
    lc = leak_check()
    inodes = lc.listening_inodes([PORTS])
    found = []
    for pid in lc.alive_pids():
        line = lc.cmdline(pid)
        if pid != os.getpid() and (path in line or lc.sockets_of(pid, inodes)):
            found.append((pid, line[:200]))
    return found


def demo(r):
    with tempfile.TemporaryDirectory(prefix="sf-", dir="/tmp") as tmp:
        folder = os.path.join(tmp, "d")
        env = dict(os.environ, STAGGER_DEMO_BUILD=stgtest.BUILDDIR, STAGGER_FLEET_DIR=folder,
                   STAGGER_FLEET_PORT="26310", STAGGER_FLEET_REGISTRY_PORT="26390", NO_COLOR="")
        p = subprocess.run(["sh", os.path.join(stgtest.SRCDIR, "scripts", "fleet-demo"),
                            "--port-range=26400-26499"], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=900)
        out = p.stdout
        # The end says why: the step that failed and staggerd's last lines.
        tail = "\n".join(out.splitlines()[-60:])
        r.check("fleet-demo exits 0", p.returncode == 0, tail)
        r.check("three hosts, up", len(re.findall(r"^host\d\s+up\s", out, re.M)) >= 3, tail)
        r.check("six instances running, spread over the hosts",
                all("healthy on host%d" % i in out for i in range(3))
                and len(re.findall(r"^\d\s+RUNNING\s", out, re.M)) == 6, tail)
        r.check("the update rolls forward", "ROLLED_FORWARD" in out
                and "hello from version 2" in out, tail)
        r.check("the drain moves host2's instances",
                "moving instances" in out and "off host2" in out
                and re.search(r"^host2\s+up, draining\s+0\s", out, re.M) is not None, tail)
        r.check("the drain watches each moved instance for the job's watch_secs",
                "each watched 5 s (the job's watch_secs)" in out, tail)
        r.check("host2 is opened again", "host host2 is open" in out, tail)
        # examples/fleet-proxy.json, with the proxy make check builds.
        if os.path.exists(os.path.join(stgtest.BUILDDIR, "tests", "stg-test-proxy")):
            pod = r"^www/prod/fleet-web/\d\s+host\d\s+1\s+1\s+RUNNING\s.*proxy-\d=1\*"
            r.check("the sidecar set example puts a proxy in every pod",
                    "sidecar set proxy: " in out and "fleet-demo: done" in out
                    and len(re.findall(pod, out, re.M)) == 6, tail)
        r.check("fleet-demo removes what it made",
                not os.path.exists(folder) and not mounts_under(folder), tail)
        # Its podman services, registry and staggerd end with it.
        left = processes_left(folder + "/")
        r.check("fleet-demo leaves no process behind", not left, left)
        for pid, _ in left:
            try:
                os.kill(pid, 9)
            except OSError:
                pass


def main():
    r = stgtest.Results("fleet_demo_test")
    r.run("fleet demo", demo, r)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
