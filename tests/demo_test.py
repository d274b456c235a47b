"""demo_test.py: scripts/demo, run twice in a row on this build (its own
data directory, ports the system picks, instances on 26200-26299), reaches
ROLLED_FORWARD both times: the README says "run it again for another
rollout", and the second run re-creates the job the first one killed.
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

def run_demo(r, data, n):
    env = dict(os.environ, STAGGER_DEMO_BUILD=stgtest.BUILDDIR, STAGGER_DEMO_DATA=data,
               STAGGER_DEMO_PORT="0", NO_COLOR="")
    demo = subprocess.Popen(["sh", os.path.join(stgtest.SRCDIR, "scripts", "demo"),
                             "--port-range=26200-26299"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    seen = []
    try:
        deadline = time.monotonic() + 120
        for line in demo.stdout:
            seen.append(line)
            if "Watch the rollout:" in line or time.monotonic() > deadline:
                break
        m = re.search(r"(http://127\.0\.0\.1:\d+)/#/update/www/prod/hello/(\S+)", "".join(seen))
        r.check("demo run %d starts a rollout" % n, m is not None, "".join(seen))
        if m is None:
            return
        p = subprocess.run([stgtest.program("stagger"), "--url", m.group(1),
                            "update", "wait", "local/www/prod/hello", "--id", m.group(2)],
                           capture_output=True, text=True, timeout=180)
        r.check("demo run %d rolls forward" % n, p.returncode == 0 and "ROLLED_FORWARD" in p.stdout,
                (p.returncode, p.stdout, p.stderr))
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
