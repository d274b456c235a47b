"""fleet_demo_test.py: scripts/fleet-demo, the README's "Getting started on
several hosts" step by step, on this build: three Podman hosts, a
registry on loopback the hosts pull the example's image from, staggerd
with the fleet runtime, examples/fleet-web.json created and rolled to
fleet-web-v2.json, a host drained (each move watched for the job's
watch_secs) and opened again, and everything removed at the end, its
processes included (ports 26300-26499).
"""
import os
import re
import subprocess
import sys
import tempfile

import stgtest


def mounts_under(path):
    with open("/proc/mounts") as f:
        return [line.split()[1] for line in f if line.split()[1].startswith(path + "/")]


def processes_naming(path):
    """(pid, command line) of every process whose command line names path."""
    found = []
    for pid in os.listdir("/proc"):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        if pid.isdigit() and int(pid) != os.getpid() and path in cmdline:
            found.append((int(pid), cmdline))
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
        r.check("fleet-demo removes what it made",
                not os.path.exists(folder) and not mounts_under(folder), tail)
        # Its podman services, registry and staggerd end with it.
        left = processes_naming(folder + "/")
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
