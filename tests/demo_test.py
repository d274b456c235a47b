"""demo_test.py: scripts/demo, run twice in a row on this build (its own
data directory, ports the system picks, instances on 26200-26299), reaches
ROLLED_FORWARD both times: the README says "run it again for another
rollout", and the second run re-creates the job the first one killed.
While the first run's staggerd serves, a run beside it starts the next
rollout there and exits; the first run still stops everything.
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import types

import stgtest

ROLLOUT = re.compile(r"(http://127\.0\.0\.1:\d+)/#/update/www/prod/hello/(\S+)")


def demo_env(data):
    return dict(os.environ, STAGGER_DEMO_BUILD=stgtest.BUILDDIR, STAGGER_DEMO_DATA=data,
                STAGGER_DEMO_PORT="0", NO_COLOR="")


def demo_argv():
    return ["sh", os.path.join(stgtest.SRCDIR, "scripts", "demo"), "--port-range=26200-26299"]


def rolls_forward(r, what, url, update_id):
    p = subprocess.run([stgtest.program("stagger"), "--url", url,
                        "update", "wait", "local/www/prod/hello", "--id", update_id],
                       capture_output=True, text=True, timeout=180)
    r.check(what, p.returncode == 0 and "ROLLED_FORWARD" in p.stdout,
            (p.returncode, p.stdout, p.stderr))


def run_beside(r, data, url):
    """scripts/demo again while the first run's staggerd at url serves data."""
    p = subprocess.run(demo_argv(), env=demo_env(data), capture_output=True, text=True,
                       timeout=180)
    r.check("a run beside the first exits at once, done", p.returncode == 0 and
            "already serves" in p.stdout, (p.returncode, p.stdout, p.stderr))
    m = ROLLOUT.search(p.stdout)
    r.check("a run beside the first rolls out on its staggerd",
            m is not None and m.group(1) == url, p.stdout)
    if m is not None:
        rolls_forward(r, "the rollout beside rolls forward", url, m.group(2))


def run_demo(r, data, n):
    demo = subprocess.Popen(demo_argv(), env=demo_env(data), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    seen = []
    try:
        deadline = time.monotonic() + 120
        for line in demo.stdout:
            seen.append(line)
            if "Watch the rollout:" in line or time.monotonic() > deadline:
                break
        m = ROLLOUT.search("".join(seen))
        r.check("demo run %d starts a rollout" % n, m is not None, "".join(seen))
        if m is None:
            return
        rolls_forward(r, "demo run %d rolls forward" % n, m.group(1), m.group(2))
        if n == 1:
            run_beside(r, data, m.group(1))
    finally:
        if demo.poll() is None:
            os.killpg(demo.pid, signal.SIGTERM)
        try:
            rest, _ = demo.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(demo.pid, signal.SIGKILL)
            rest, _ = demo.communicate()
        r.check("demo run %d stops cleanly" % n, demo.returncode == 0, "".join(seen) + (rest or ""))


def main():
    r = stgtest.Results("demo_test")
    with tempfile.TemporaryDirectory(prefix="stagger-demo-") as tmp:
        data = os.path.join(tmp, "var")
        try:
            r.run("first run", run_demo, r, data, 1)
            r.run("second run", run_demo, r, data, 2)
        finally:
            # Whatever a failed run left behind.
            stgtest.Daemon.kill_instances(types.SimpleNamespace(dir=tmp))
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
