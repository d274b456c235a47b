"""leak_check_test.py: scripts/leak-check, which scripts/test runs after the
suites: a stray process carrying the run's mark, one working in a test
folder and one listening on a test port (with no mark, as a container's
process) are each named with its pid and command line, and it exits 1; a
process of another run is left out; with them gone it passes. Every
process it starts is ended (port 17880).
"""
import os
import socket
import subprocess
import sys
import tempfile

import stgtest

PORT = 17880
RUN = "leak-check-test-%d" % os.getpid()


def leak_check(*args):
    p = subprocess.run([sys.executable, os.path.join(stgtest.SRCDIR, "scripts", "leak-check"),
                        "--run", RUN, "--grace", "0.5"] + list(args),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    return p.returncode, p.stdout


def stray(env_extra, cwd=None, argv=None):
    """A process with our environment (our mark replaced by env_extra's)."""
    env = {k: v for k, v in os.environ.items() if k != "STAGGER_TEST_RUN"}
    env.update(env_extra)
    return subprocess.Popen(argv or ["sleep", "300"], env=env, cwd=cwd)


def listener():
    """A process with no mark listening on PORT, as a container's would."""
    code = ("import socket, time\n"
            "s = socket.socket()\n"
            "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
            "s.bind(('127.0.0.1', %d))\n"
            "s.listen()\n"
            "time.sleep(300)\n" % PORT)
    p = stray({}, argv=[sys.executable, "-c", code])
    return p


def end(*procs):
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait()


def strays_named(r):
    with tempfile.TemporaryDirectory(prefix="stagger-leak-") as tmp:
        marked = stray({"STAGGER_TEST_RUN": RUN})
        other = stray({"STAGGER_TEST_RUN": RUN + "-other"})
        inside = stray({}, cwd=tmp)
        try:
            code, out = leak_check("--under", tmp)
            r.check("a marked stray fails the check", code == 1, out)
            r.check("it is named with pid and command line",
                    "pid %d still alive (carries STAGGER_TEST_RUN=%s): sleep 300"
                    % (marked.pid, RUN) in out, out)
            r.check("a stray working in a test folder is named",
                    "pid %d still alive (works in %s" % (inside.pid, tmp) in out, out)
            r.check("another run's process is left out", "pid %d " % other.pid not in out, out)
        finally:
            end(marked, other, inside)
        code, out = leak_check("--under", tmp)
        r.check("with the strays gone it passes", code == 0 and out == "", out)


def port_named(r):
    p = listener()
    try:
        r.check("the listener started", p.poll() is None and wait_listening(), "")
        code, out = leak_check("--ports", "%d-%d" % (PORT, PORT))
        r.check("an unmarked process on a test port fails the check",
                code == 1 and "pid %d still alive (listens on port %d)" % (p.pid, PORT) in out, out)
    finally:
        end(p)
    code, out = leak_check("--ports", "%d-%d" % (PORT, PORT))
    r.check("with the port closed it passes", code == 0, out)


def wait_listening():
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", PORT), timeout=1).close()
            return True
        except OSError:
            subprocess.run(["sleep", "0.1"])
    return False


def main():
    r = stgtest.Results("leak_check_test")
    r.run("strays named", strays_named, r)
    r.run("port named", port_named, r)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
