"""beside_test.py: staggerd run from a build tree finds its helper programs
beside its own binary, with no option: stagger-thermos (an AuroraExecutor
job is accepted) and stagger-anchor (the fleet runtime loads it), also
from libtool's `.libs` folder (the helpers in its parent); and a helper
that is missing is refused with the option that names it (--thermos-runner;
--anchor, when a sidecar set asks for pods). Instances' ports 17900-17929; every daemon is stopped and its
instances killed.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import stgtest

PORTS = "--port-range=17900-17929"


def aurora_job(tmp):
    """A job file of an AuroraExecutor job that sleeps (its task beside it)."""
    with open(os.path.join(stgtest.SRCDIR, "examples", "aurora", "hello_world.json")) as f:
        task = json.load(f)
    task["task"]["processes"] = [dict(task["task"]["processes"][0], name="nap",
                                      cmdline="sleep 300")]
    task["task"]["constraints"] = []
    with open(os.path.join(tmp, "nap.json"), "w") as f:
        json.dump(task, f)
    path = os.path.join(tmp, "nap_job.json")
    with open(path, "w") as f:
        json.dump({"cluster": "devcluster", "role": "www-data", "environment": "devel",
                   "name": "hello_world", "instances": 1, "aurora_task": "nap.json"}, f)
    return path


def daemon(binary_dir, *args, config=None):
    """A stgtest.Daemon whose staggerd is the one in binary_dir."""
    saved = stgtest.BUILDDIR
    stgtest.BUILDDIR = binary_dir
    try:
        return stgtest.Daemon(*args, config=config)
    finally:
        stgtest.BUILDDIR = saved


def create(d, job):
    argv = [stgtest.program("stagger"), "--url", "http://127.0.0.1:%d" % d.http_port,
            "job", "create", "devcluster/www-data/devel/hello_world", job]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, NO_COLOR=""))
    return p.returncode, p.stdout + p.stderr


def stop(d):
    subprocess.run([stgtest.program("stagger"), "--url", "http://127.0.0.1:%d" % d.http_port,
                    "job", "kill", "devcluster/www-data/devel/hello_world"],
                   capture_output=True, timeout=60)
    d.stop()


def thermos_beside(r, tmp):
    job = aurora_job(tmp)
    d = daemon(stgtest.BUILDDIR, "--cluster=devcluster", PORTS)
    try:
        code, out = create(d, job)
        r.check("a build tree's staggerd runs AuroraExecutor jobs with no --thermos-runner",
                code == 0, out)
    finally:
        stop(d)
    d = daemon(stgtest.BUILDDIR, "--cluster=devcluster", PORTS,
               "--thermos-runner=" + os.path.join(tmp, "none", "stagger-thermos"))
    try:
        code, out = create(d, job)
        r.check("a missing stagger-thermos is refused naming --thermos-runner",
                code != 0 and "--thermos-runner" in out, out)
    finally:
        stop(d)


def thermos_beside_libs(r, tmp):
    """libtool's layout: staggerd in .libs/, the helpers in its parent."""
    libs = os.path.join(tmp, "tree", ".libs")
    os.makedirs(libs)
    shutil.copy2(stgtest.program("staggerd"), libs)
    os.symlink(stgtest.program("stagger-thermos"), os.path.join(tmp, "tree", "stagger-thermos"))
    d = daemon(libs, "--cluster=devcluster", PORTS)
    try:
        code, out = create(d, aurora_job(tmp))
        r.check("a staggerd in .libs finds stagger-thermos in the folder above", code == 0, out)
    finally:
        stop(d)


FLEET = ("[staggerd]\nruntime = fleet\n\n[host h0]\nendpoint = unix:///nonexistent/podman.sock\n"
         "address = 127.0.0.1\n")


def apply_sidecar_set(d):
    """stagger sidecar apply of the example sidecar set: a pod asked for."""
    argv = [stgtest.program("stagger"), "--url", "http://127.0.0.1:%d" % d.http_port,
            "sidecar", "apply", os.path.join(stgtest.SRCDIR, "examples", "fleet-proxy.json")]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, NO_COLOR=""))
    return p.returncode, p.stdout + p.stderr


def anchor_beside(r, tmp):
    """Pods need stagger-anchor: a sidecar set asks for them."""
    d = daemon(stgtest.BUILDDIR, PORTS, config=FLEET)
    try:
        code, out = apply_sidecar_set(d)
        log = d.output()
        r.check("a build tree's staggerd loads the stagger-anchor beside it",
                "stagger-anchor" not in out and "stagger-anchor" not in log, out + log)
    finally:
        d.stop()
    d = daemon(stgtest.BUILDDIR, PORTS, "--anchor=" + os.path.join(tmp, "none", "stagger-anchor"),
               config=FLEET)
    try:
        code, out = apply_sidecar_set(d)
        r.check("a missing stagger-anchor is refused naming --anchor",
                code != 0 and "cannot use stagger-anchor" in out and "--anchor" in out, out)
    finally:
        d.stop()


def main():
    r = stgtest.Results("beside_test")
    with tempfile.TemporaryDirectory(prefix="stagger-beside-") as tmp:
        r.run("stagger-thermos beside staggerd", thermos_beside, r, tmp)
        r.run("stagger-thermos beside .libs", thermos_beside_libs, r, tmp)
        r.run("stagger-anchor beside staggerd", anchor_beside, r, tmp)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
