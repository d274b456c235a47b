"""packaging_test.py: what a system install adds. staggerd.service passes
systemd-analyze verify (when systemd-analyze is there); staggerd tells
$NOTIFY_SOCKET it is ready (Type=notify) and keeps its data in
$STATE_DIRECTORY when no --data-dir is given; without either its default
data dir is absolute; the bash completion offers every command that
stagger --help lists, and each command's options; every program and
manual page states configure's version (config.h's PACKAGE_VERSION).
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import stgtest


def unit_verifies(r, tmp):
    unit = os.path.join(stgtest.BUILDDIR, "packaging", "staggerd.service")
    with open(unit) as f:
        text = f.read()
    r.check("the unit is Type=notify with StateDirectory=stagger",
            "Type=notify" in text and "StateDirectory=stagger" in text and "@sbindir@" not in text, text)
    if shutil.which("systemd-analyze") is None:
        print("NOTE systemd-analyze is not installed: the unit is not verified")
        return
    # ExecStart must name an executable for verify: use the build tree's.
    local = os.path.join(tmp, "staggerd.service")
    with open(local, "w") as f:
        f.write(re.sub(r"^ExecStart=\S+", "ExecStart=" + stgtest.program("staggerd"), text, flags=re.M))
    p = subprocess.run(["systemd-analyze", "verify", "--man=no", local], capture_output=True, text=True)
    r.check("systemd-analyze verify staggerd.service", p.returncode == 0 and "staggerd.service" not in p.stderr,
            p.stdout + p.stderr)


def debian_files(r, tmp):
    """The Debian package's settings file starts staggerd as shipped, its
    drop-in verifies with the unit, and its changelog is at this version."""
    debian = os.path.join(stgtest.SRCDIR, "packaging", "debian")
    with open(os.path.join(debian, "staggerd.conf")) as f:
        d = stgtest.Daemon("--runtime=simulated", config=f.read())
    r.check("staggerd starts with the package's staggerd.conf", d.alive(), d.output())
    output = d.output()
    r.check("... and exits cleanly", d.stop() == 0, output)
    with open(os.path.join(debian, "changelog")) as f:
        top = f.readline()
    r.check("the Debian changelog is at configure's version",
            re.match(r"stagger \(%s-\d+\) " % re.escape(configure_version()), top) is not None, top)
    if shutil.which("systemd-analyze") is None:
        print("NOTE systemd-analyze is not installed: the Debian drop-in is not verified")
        return
    units = os.path.join(tmp, "units")
    os.makedirs(os.path.join(units, "staggerd.service.d"))
    staggerd = stgtest.program("staggerd")
    with open(os.path.join(stgtest.BUILDDIR, "packaging", "staggerd.service")) as f:
        unit = re.sub(r"^ExecStart=\S+", "ExecStart=" + staggerd, f.read(), flags=re.M)
    with open(os.path.join(units, "staggerd.service"), "w") as f:
        f.write(unit)
    with open(os.path.join(debian, "staggerd.service.d", "debian.conf")) as f:
        dropin = f.read()
    r.check("the drop-in runs staggerd as stagger with /etc/stagger/staggerd.conf",
            "User=stagger" in dropin and "DynamicUser=no" in dropin
            and "--config /etc/stagger/staggerd.conf" in dropin, dropin)
    with open(os.path.join(units, "staggerd.service.d", "debian.conf"), "w") as f:
        f.write(dropin.replace("ExecStart=/usr/sbin/staggerd", "ExecStart=" + staggerd))
    p = subprocess.run(["systemd-analyze", "verify", "--man=no", "staggerd.service"], capture_output=True,
                       text=True, env=dict(os.environ, SYSTEMD_UNIT_PATH=units + ":"))
    r.check("systemd-analyze verify staggerd.service with the Debian drop-in",
            p.returncode == 0 and units not in p.stderr, p.stdout + p.stderr)


def notify_and_state_directory(r, tmp):
    state = os.path.join(tmp, "state")
    os.mkdir(state)
    path = os.path.join(tmp, "notify")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(30)
    env = dict(os.environ, NOTIFY_SOCKET=path, STATE_DIRECTORY=state)
    proc = subprocess.Popen([stgtest.program("staggerd"), "--http-port=0", "--thrift-port=0",
                             "--runtime=simulated"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        try:
            message = sock.recv(4096).decode()
        except socket.timeout:
            message = ""
        r.check("staggerd sends READY=1 to $NOTIFY_SOCKET", message == "READY=1", message)
        r.check("staggerd keeps its data in $STATE_DIRECTORY",
                os.path.exists(os.path.join(state, "stagger.db")), os.listdir(state))
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
        r.check("staggerd exits cleanly (notify)", proc.returncode == 0, (proc.returncode, out))
        sock.close()
    p = subprocess.run([stgtest.program("staggerd"), "--help"], capture_output=True, text=True)
    m = re.search(r"--data-dir=DIR.*\(default: \$STATE_DIRECTORY, else (\S+)\)", p.stdout)
    r.check("the default data dir is absolute", m is not None and os.path.isabs(m.group(1)), p.stdout)


def complete(words):
    """What the completion offers for the command line @words (the last
    word is the one being completed)."""
    script = os.path.join(stgtest.SRCDIR, "packaging", "stagger.bash")
    line = " ".join("'%s'" % w for w in words)
    code = 'source "%s"; COMP_WORDS=(%s); COMP_CWORD=%d; _stagger; echo "${COMPREPLY[*]}"' % (
        script, line, len(words) - 1)
    return subprocess.run(["bash", "-c", code], capture_output=True, text=True).stdout.split()


def completion(r, tmp):
    helptext = subprocess.run([stgtest.program("stagger"), "--help"], capture_output=True, text=True).stdout
    groups = ["job", "update", "plan", "task", "host", "cluster", "quota", "tier", "admin"]
    listed = re.findall(r"^  (%s) (\w+)" % "|".join(groups), helptext, re.M)
    r.check("stagger --help lists commands", len(listed) > 10, helptext)
    r.check("stagger --help lists every group", sorted({g for g, _ in listed}) == sorted(groups),
            helptext)
    r.check("the groups complete", complete(["stagger", ""]) == groups, complete(["stagger", ""]))
    for group in groups:
        offered = complete(["stagger", group, ""])
        wanted = [c for g, c in listed if g == group]
        r.check("every %s command completes" % group, sorted(offered) == sorted(wanted), (offered, wanted))
    r.check("update list completes --user and --auth-user",
            {"--user", "--auth-user"} <= set(complete(["stagger", "update", "list", "--"])))
    r.check("options after a global option",
            "--wait" in complete(["stagger", "--url", "http://x", "update", "start", "--w"]))
    # Each command's options, as its --help lists them.
    for group, command in listed:
        text = subprocess.run([stgtest.program("stagger"), group, command, "--help"],
                              capture_output=True, text=True).stdout
        options = set(re.findall(r"^\s+(?:-\w, )?(--[\w-]+)", text, re.M))
        offered = set(complete(["stagger", group, command, "--"]))
        r.check("%s %s completes its options" % (group, command), options <= offered,
                sorted(options - offered))


def configure_version():
    with open(os.path.join(stgtest.BUILDDIR, "config.h")) as f:
        return re.search(r'^#define PACKAGE_VERSION "([^"]+)"', f.read(), re.M).group(1)


def one_version(r, tmp):
    """#31: staggerd printed the version of a library's headers."""
    version = configure_version()
    for name in ("staggerd", "stagger", "stagger-thermos"):
        p = subprocess.run([stgtest.program(name), "--version"], capture_output=True, text=True)
        r.check("%s --version says %s" % (name, version),
                p.returncode == 0 and p.stdout.strip() == "%s %s" % (name, version), p.stdout + p.stderr)
    mandir = os.path.join(stgtest.SRCDIR, "man")
    pages = sorted(f for f in os.listdir(mandir) if re.search(r"\.[1-8]$", f))
    r.check("there are manual pages", len(pages) >= 5, pages)
    for page in pages:
        with open(os.path.join(mandir, page)) as f:
            th = f.readline()
        r.check("%s is Stagger %s" % (page, version), '"Stagger %s"' % version in th, th)


def main():
    r = stgtest.Results("packaging_test")
    with tempfile.TemporaryDirectory(prefix="stagger-pkg-") as tmp:
        r.run("unit", unit_verifies, r, tmp)
        r.run("notify", notify_and_state_directory, r, tmp)
        r.run("completion", completion, r, tmp)
        r.run("version", one_version, r, tmp)
        r.run("debian", debian_files, r, tmp)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
