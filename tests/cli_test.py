"""cli_test.py: the stagger command against a real staggerd with real
instances (stagger-example-server): every command's happy path, its
errors and exit codes, update start --wait to ROLLED_FORWARD and
ROLLED_BACK, pause/resume/abort, a coordinated update kept going by
update pulse --every, update timeline, update start --dry-run (a
rehearsal with a prediction), plan files (variables, instance gates, a dry run),
credentials, quotas and tiers, a job file's SLA policy with an SLA-aware
update, and the admin commands.
"""
import json
import os
import pwd
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import stgtest


def job_file(tmp, name, greeting, extra_argv=(), count=3, update=None, task=None):
    conf = {
        "cluster": "local", "role": "www", "environment": "prod", "name": name,
        "instances": count,
        "resources": {"cpu": 0.1, "ports": ["http"]},
        "task": {"argv": [stgtest.program("stagger-example-server"), "--port", "{{ports[http]}}"]
                 + list(extra_argv), "env": {"GREETING": greeting}},
        "health_check_config": {"health_checker": {"http": {"endpoint": "/health"}},
                                "initial_interval_secs": 1, "interval_secs": 0.2},
        "update_config": {"batch_size": 1, "watch_secs": 1, "rollback_on_failure": True},
    }
    conf["update_config"].update(update or {})
    conf["task"].update(task or {})
    path = os.path.join(tmp, "%s-%s.json" % (name, abs(hash(greeting + str(extra_argv) + str(update)))))
    with open(path, "w") as f:
        json.dump(conf, f)
    return path


class Cli:
    def __init__(self, port, env=None):
        self.url = "http://127.0.0.1:%d" % port
        self.env = dict(os.environ, NO_COLOR="")
        self.env.pop("STAGGER_URL", None)
        self.env.pop("STAGGER_TOKEN", None)
        self.env.update(env or {})

    def __call__(self, *args, url=True, timeout=120):
        argv = [stgtest.program("stagger")] + (["--url", self.url] if url else []) + list(args)
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=self.env)
        return p.returncode, p.stdout, p.stderr

    def background(self, *args):
        argv = [stgtest.program("stagger"), "--url", self.url] + list(args)
        return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=self.env)


def wait_running(cli, key, count, deadline=30):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        code, out, _ = cli("--json", "job", "status", key)
        if code == 0:
            tasks = json.loads(out)["tasks"]
            if len(tasks) == count and all(t["status"] == "RUNNING" for t in tasks):
                return True
        time.sleep(0.2)
    return False


def jobs_and_updates(r, cli, tmp):
    key = "local/www/prod/web"
    v1 = job_file(tmp, "web", "one")
    code, out, err = cli("job", "create", key, v1)
    r.check("job create", code == 0 and "created local/www/prod/web with 3 instances" in out, err)
    r.check("instances come up", wait_running(cli, key, 3))
    code, out, err = cli("job", "status", key)
    r.check("job status is a table", code == 0 and out.count("RUNNING") == 3 and "http=" in out, out + err)
    r.check("no colour on a pipe", "\033[" not in out)
    row = out.splitlines()[1].split()
    r.check("job status shows health, version and pid",
            row[2] == "yes" and row[4] == "1" and row[5].isdigit(), out)
    code, out, _ = cli("job", "status", key + "/1-2")
    r.check("job status of some instances", code == 0 and out.count("RUNNING") == 2, out)
    code, out, _ = cli("job", "list")
    r.check("job list", code == 0 and "local/www/prod/web" in out, out)
    code, out, _ = cli("job", "inspect", v1)
    r.check("job inspect needs no daemon", code == 0 and json.loads(out)["cluster"] == "local", out)

    v2 = job_file(tmp, "web", "two")
    code, out, _ = cli("job", "diff", key, v2)
    r.check("job diff", code == 0 and "update:    0-2" in out and '+ task.env: {"GREETING":"two"}' in out, out)
    code, out, err = cli("update", "start", key, v2, "--wait", "--message", "to two")
    r.check("update start --wait rolls forward (exit 0)", code == 0 and "ROLLED_FORWARD" in out, out + err)
    r.check("one line per event on a pipe", out.count("INSTANCE_UPDATED") == 3, out)
    code, out, _ = cli("update", "info", key)
    r.check("update info", code == 0 and "progress:  3 of 3 instances" in out
            and "ROLLED_FORWARD" in out and "to two" in out, out)
    code, out, _ = cli("--json", "update", "info", key)
    r.check("update info --json", code == 0 and json.loads(out)["update"]["summary"]["state"]["status"]
            == "ROLLED_FORWARD", out)
    code, out, _ = cli("update", "list", "--status", "ROLLED_FORWARD")
    r.check("update list --status", code == 0 and "local/www/prod/web" in out, out)
    code, out, _ = cli("update", "list", "local/nobody")
    r.check("update list of another role", code == 0 and "no updates" in out, out)
    me = pwd.getpwuid(os.getuid()).pw_name
    code, out, err = cli("update", "list", "--user", me)
    r.check("without auth, update list --user finds the updates this user started",
            code == 0 and "local/www/prod/web" in out, out + err)
    code, out, _ = cli("update", "info", key)
    r.check("update info names the claimed user", "by %s (unauthenticated)" % me in out, out)

    # A canary on instance 0 only, then the broken version rolls back.
    v3 = job_file(tmp, "web", "three")
    code, out, err = cli("update", "start", key + "/0", v3, "--wait")
    r.check("a canary of instance 0", code == 0, out + err)
    code, out, _ = cli("job", "diff", key, v3)
    r.check("the canary left two configs", "update:    1-2" in out and "unchanged: 0" in out, out)
    broken = job_file(tmp, "web", "broken", ["--unhealthy"])
    code, out, err = cli("update", "start", key, broken, "--wait")
    r.check("a failing update rolls back (exit 10)", code == 10 and "ROLLED_BACK" in out, (code, out, err))
    code, out, _ = cli("update", "info", key)
    r.check("update info shows each instance's cause",
            re.search(r"^\d+ +INSTANCE_ROLLED_BACK +.*did not stay up", out, re.M), out)
    r.check("still running after the rollback", wait_running(cli, key, 3))

    # Pause, resume, abort.
    slow = job_file(tmp, "web", "slow", update={"watch_secs": 30})
    code, out, err = cli("update", "start", key, slow)
    r.check("update start", code == 0 and out.startswith("started update "), out + err)
    code, out, _ = cli("update", "pause", key, "--message", "hold on")
    r.check("update pause", code == 0 and out.startswith("paused update"), out)
    code, out, _ = cli("update", "resume", key)
    r.check("update resume", code == 0, out)
    code, out, _ = cli("update", "abort", key)
    r.check("update abort", code == 0, out)
    code, out, _ = cli("update", "wait", key)
    r.check("update wait on an aborted update exits 11", code == 11 and "ABORTED" in out, (code, out))
    code, _, err = cli("update", "pause", key)
    r.check("pausing with no active update is not found (6)", code == 6 and "no active update" in err, err)

    # A coordinated update goes on only while pulsed.
    co = job_file(tmp, "web", "pulsed", update={"pulse_interval_secs": 2, "watch_secs": 2})
    code, out, err = cli("update", "start", key, co)
    r.check("a coordinated update starts", code == 0, err)
    time.sleep(3)
    code, out, _ = cli("--json", "update", "info", key)
    r.check("without pulses it waits", json.loads(out)["update"]["summary"]["state"]["status"]
            == "ROLL_FORWARD_AWAITING_PULSE", out)
    # Pulsed for a moment, then left alone: it blocks again.
    first = cli.background("update", "pulse", key, "--every", "1")
    time.sleep(1.5)
    first.kill()
    first.communicate()
    end = time.monotonic() + 10
    status = ""
    while time.monotonic() < end:
        status = json.loads(cli("--json", "update", "info", key)[1])["update"]["summary"]["state"]["status"]
        if status in ("ROLL_FORWARD_AWAITING_PULSE", "ROLLED_FORWARD"):
            break
        time.sleep(0.2)
    r.check("when the pulses stop it blocks", status == "ROLL_FORWARD_AWAITING_PULSE", status)
    pulser = cli.background("update", "pulse", key, "--every", "1")
    code, out, err = cli("update", "wait", key)
    r.check("pulsed, it rolls forward", code == 0, (code, out, err))
    try:
        pout, _ = pulser.communicate(timeout=30)
        r.check("update pulse --every stops when the update ends",
                pulser.returncode == 0 and "FINISHED" in pout, pout)
    except subprocess.TimeoutExpired:
        pulser.kill()
        r.check("update pulse --every stops when the update ends", False)

    code, out, _ = cli("job", "restart", key + "/2", "--watch-secs", "1", "--wait")
    r.check("job restart of one instance", code == 0, out)
    code, out, _ = cli("job", "kill", key)
    r.check("job kill", code == 0, out)
    end = time.monotonic() + 30
    while time.monotonic() < end and cli("job", "status", key)[0] != 6:
        time.sleep(0.2)
    r.check("a killed job is gone (6)", cli("job", "status", key)[0] == 6)


def errors(r, cli, tmp, port):
    bad = os.path.join(tmp, "typo.json")
    with open(bad, "w") as f:
        f.write('{"cluster": "local", "role": "www", "environment": "prod", "name": "x", '
                '"instances": 1, "task": {"command": "sleep 9"}, "update_confg": {}}')
    code, _, err = cli("job", "create", "local/www/prod/x", bad)
    r.check("an unknown key is a config error (3) naming the closest",
            code == 3 and "update_confg" in err and "update_config" in err, err)
    good = job_file(tmp, "x", "x")
    code, _, err = cli("job", "create", "local/www/prod/other", good)
    r.check("a key that is not the file's (3)", code == 3, err)
    code, _, err = cli("job", "create", "elsewhere/www/prod/x", job_file(tmp, "x", "y"))
    r.check("a cluster that is not the file's (3)", code == 3, err)
    code, _, err = cli("--url", "http://127.0.0.1:1", "job", "list", url=False)
    r.check("an unreachable daemon (4) says where", code == 4 and "127.0.0.1:1" in err, err)
    for wait in ("-1", "-5", "4000"):
        code, _, err = cli("--leader-wait", wait, "job", "list")
        r.check("--leader-wait %s is a usage error (2) naming it" % wait,
                code == 2 and "leader wait" in err.replace("-", " "), err)
    code, out, err = cli("--leader-wait", "0", "job", "list")
    r.check("--leader-wait 0 still asks the one replica", code == 0, err)
    bad_env = Cli(port, {"STAGGER_LEADER_WAIT": "soon"})
    code, _, err = bad_env("job", "list")
    r.check("a bad STAGGER_LEADER_WAIT is refused, named",
            code != 0 and "STAGGER_LEADER_WAIT='soon'" in err, err)
    code, _, err = cli("job", "status", "local/www/prod/nothing")
    r.check("no such job (6)", code == 6, err)
    code, _, err = cli("job", "status", "not-a-key")
    r.check("a bad key is a usage error (2)", code == 2, err)
    code, _, err = cli("job", "frobnicate")
    r.check("an unknown command (2) with a suggestion", code == 2, err)
    code, _, err = cli("update", "strat", "local/www/prod/x")
    r.check("a near miss is suggested", code == 2 and "start" in err, err)
    code, out, _ = cli("update", "start", "--help")
    r.check("--help tells the truth", code == 0 and "--wait" in out and "CONFIG" in out, out)
    code, out, _ = cli("--help", url=False)
    r.check("stagger --help lists the commands", code == 0 and "update wait" in out and "job create" in out, out)


def plan_files(r, cli, tmp):
    """Plan variables and instance gates as the CLI reads them, and a dry run
    of a plan whose job does not exist yet."""
    job = job_file(tmp, "vx", "{{greeting}}", update={"instance_gates": {"after": [
        {"name": "up", "http": "http://127.0.0.1:{{ports[http]}}/health", "wait_secs": 30}]}})
    plan = os.path.join(tmp, "vars.json")

    def write(variables):
        with open(plan, "w") as f:
            json.dump({"name": "vars", "variables": variables,
                       "stages": [{"name": "vx", "job": job}]}, f)

    write({"greeting": None})
    code, _, err = cli("plan", "diff", plan)
    r.check("a variable without a value is a config error (3) naming it",
            code == 3 and "variable greeting has no value" in err, err)
    code, _, err = cli("plan", "diff", plan, "--set", "greeting")
    r.check("--set without = is a usage error (2)", code == 2 and "NAME=VALUE" in err, err)
    code, _, err = cli("plan", "diff", plan, "--set", "greting=hi")
    r.check("--set of a variable the plan does not declare (3)",
            code == 3 and "declares no variable greting" in err, err)
    code, out, err = cli("--json", "plan", "diff", plan, "--set", 'greeting=say "hi"')
    stages = json.loads(out)["stages"] if code == 0 else []
    r.check("a value with quotes fills in; a new job would change",
            code == 0 and len(stages) == 1 and stages[0]["changes"] and
            stages[0]["currentVersion"] == 0, out + err)
    r.check("... and its rehearsal: the batches of its update, nothing measured yet",
            code == 0 and len(stages[0]["diff"]["rehearsal"]["batches"]) > 0
            and stages[0]["diff"]["rehearsal"]["predictedMs"] == -1, out)
    write({"greeting": "hello"})
    with open(job) as f:
        text = f.read()
    with open(job, "w") as f:
        f.write(text.replace("{{greeting}}", "{{greting}}"))
    code, _, err = cli("plan", "diff", plan)
    r.check("a {{name}} that is no variable (3) is named",
            code == 3 and "{{greting}} is not a variable of the plan" in err, err)
    r.check("... with the closest variable, and no --set that would be refused",
            "did you mean {{greeting}}?" in err and "--set greting" not in err
            and 'declare greting under "variables"' in err, err)
    both = job_file(tmp, "vy", "x", update={"instance_gates": {"before": [
        {"name": "b", "shell": "true", "retries": 2, "wait_secs": 5}]}})
    code, _, err = cli("job", "inspect", both)
    r.check("retries and wait_secs together (3)", code == 3 and "not both" in err, err)
    code, out, err = cli("job", "inspect", job_file(tmp, "vz", "x", update={"instance_gates": {
        "before": [{"name": "b", "shell": "test -f /ok", "wait_secs": 5}]}}))
    gates = json.loads(out)["settings"].get("instanceGatesBefore", []) if code == 0 else []
    r.check("instance gates go to instanceGatesBefore",
            len(gates) == 1 and gates[0]["waitSecs"] == 5 and gates[0]["command"] == "test -f /ok",
            out + err)


def credentials(r, tmp):
    h = subprocess.run([stgtest.program("staggerd"), "--hash-password"], input="s3cret\n",
                       capture_output=True, text=True, check=True).stdout.strip()
    d = stgtest.Daemon("--runtime=simulated", config="[users]\nalice = %s www\n" % h)
    try:
        cli = Cli(d.http_port)
        conf = job_file(tmp, "authed", "a")
        code, _, err = cli("job", "create", "local/www/prod/authed", conf)
        r.check("a change without credentials is refused (5)", code == 5, err)
        code, out, err = cli("--auth-user", "alice:s3cret", "job", "create", "local/www/prod/authed", conf)
        r.check("--auth-user USER:PASSWORD", code == 0, err)
        code, _, err = cli("--auth-user", "alice:wrong", "job", "list")
        r.check("a wrong password (5)", code == 5, err)
        tok = Cli(d.http_port, {"STAGGER_TOKEN": "s3cret"})
        code, out, err = tok("update", "start", "local/www/prod/authed", job_file(tmp, "authed", "b"))
        r.check("STAGGER_TOKEN as a Bearer token", code == 0, err)
        # update list --user is the filter (as in Aurora's client), not credentials.
        code, out, err = tok("update", "list", "--user", "alice")
        r.check("update list --user filters by who started it", code == 0 and "authed" in out
                and "alice" in out, out + err)
        code, out, err = tok("update", "list", "--user", "bob")
        r.check("update list --user of someone else", code == 0 and "no updates" in out, out + err)
    finally:
        r.check("staggerd exits cleanly (auth)", d.stop() == 0)


def version_of_configure():
    with open(os.path.join(stgtest.SRCDIR, "configure.ac")) as f:
        for line in f:
            if line.startswith("AC_INIT("):
                return line.split(",")[1].strip(" []")
    return None


def small_fixes(r, tmp):
    """--version, --auth-user, --id not found, killall, update start's
    summary and URL, and doubles in their shortest form."""
    code, out, _ = Cli(0)("--version", url=False)
    r.check("stagger --version is Stagger's", code == 0 and out.strip() == "stagger " + version_of_configure(),
            out)
    code, out, _ = Cli(0)("update", "list", "--help", url=False)
    r.check("--help lists --user and --auth-user once each",
            code == 0 and out.count("--user=") == 1 and out.count("--auth-user=") == 1, out)
    code, _, err = Cli(0)("job", "killall", "local/www/prod/x", url=False)
    r.check("job killall is refused with job kill (2)", code == 2 and "job kill" in err, err)
    code, out, _ = Cli(0)("job", "inspect", job_file(tmp, "dbl", "d"), url=False)
    r.check("job inspect prints 0.1, not 0.10000000000000001",
            code == 0 and '"numCpus" : 0.1\n' in out and "0000000" not in out, out)
    d = stgtest.Daemon("--runtime=simulated")
    try:
        cli = Cli(d.http_port)
        key = "local/www/prod/small"
        code, _, err = cli("job", "create", key, job_file(tmp, "small", "one"))
        r.check("job create (small fixes)", code == 0, err)
        code, out, err = cli("update", "start", key, job_file(tmp, "small", "two",
                                                               update={"growth_factor": 1.1}))
        r.check("update start prints the diff summary", code == 0 and "update:    0-2" in out
                and "unchanged: -" in out, out + err)
        url = "%s/#/update/www/prod/small/" % cli.url
        r.check("update start prints the update page's URL", url in out, out)
        uid = out.split(url)[-1].split()[0] if url in out else ""
        code, _, err = cli("update", "info", key, "--id", "nope")
        r.check("update info --id nope exits 6", code == 6 and "nope" in err, (code, err))
        code, out, err = cli("update", "info", key, "--id", uid)
        r.check("update info --id of a real update", code == 0 and uid in out, out + err)
        code, out, _ = cli("--json", "update", "info", key)
        r.check("--json prints 1.1, not 1.1000000000000001",
                code == 0 and re.search(r'"growthFactor" : 1\.1\s', out) and "0000000" not in out, out)
        page = urllib.request.urlopen("%s/ui/api/update?role=www&environment=prod&name=small&id=%s"
                                      % (cli.url, uid), timeout=30).read().decode()
        r.check("the web UI's update data prints 1.1, not 1.1000000000000001",
                ":1.1," in page and "0000000" not in page, page[:3000])
        clusters_file(r, tmp, cli.url)
        constraints_note(r, tmp, cli)
        plan_not_reached(r, tmp, cli)
        update_info_settings(r, tmp, cli)
    finally:
        r.check("staggerd exits cleanly (small fixes)", d.stop() == 0)


def constraints_note(r, tmp, cli):
    """#31: a change of the placement constraints alone says that the
    instances will be replaced, in job diff and update start."""
    key = "local/www/prod/placed"
    v1 = job_file(tmp, "placed", "p")
    with open(v1) as f:
        conf = json.load(f)
    conf["constraints"] = {"host": "limit:1"}
    v2 = os.path.join(tmp, "placed-v2.json")
    with open(v2, "w") as f:
        json.dump(conf, f)
    code, _, err = cli("job", "create", key, v1)
    r.check("job create (placed)", code == 0, err)
    note = "constraints changed: instances will be replaced"
    code, out, err = cli("job", "diff", key, v2)
    r.check("job diff says the constraints replace the instances", code == 0 and note in out
            and "+ constraints:" in out, out + err)
    code, out, err = cli("job", "diff", key, v1)
    r.check("... and says nothing of the kind without such a change", code == 0 and note not in out,
            out + err)
    code, out, err = cli("update", "start", key, v2)
    r.check("update start says so too", code == 0 and note in out, out + err)


def update_info_settings(r, tmp, cli):
    """update info shows every setting the update runs with, a percent
    failure allowance as a percent."""
    key = "local/www/prod/settled"
    code, _, err = cli("job", "create", key, job_file(tmp, "settled", "one", count=4))
    r.check("job create (settled)", code == 0, err)
    code, out, err = cli("update", "start", key, job_file(tmp, "settled", "two", count=4, update={
        "max_total_failures": "20%", "max_per_shard_failures": 2, "growth_factor": 2,
        "max_batch_size": 4, "min_in_service": 1, "pause_between_batches_secs": 5,
        "max_surge": "25%", "update_deadline_secs": 600, "sla_aware": True,
        "max_instance_start_secs": 30, "update_strategy": {"batch": {"batch_size": 1}}}))
    r.check("update start (settled)", code == 0, out + err)
    code, out, err = cli("update", "info", key)
    for what, text in (("the percent failure allowance", "20% of the instances touched may fail"),
                       ("the strategy", "batches of 1"),
                       ("the growth factor and the largest batch", "each batch 2x the one before, up to 4"),
                       ("the failures per instance", "2 allowed per instance"),
                       ("min in service", "at least 1 in service"),
                       ("the surge", "surge of 25% of the instances touched"),
                       ("the pause between batches", "5s between batches"),
                       ("the deadline", "deadline 10m 0s"),
                       ("the start limit", "healthy within 30s"),
                       ("SLA-awareness", "SLA-aware")):
        r.check("update info shows %s" % what, code == 0 and text in out, out + err)
    r.check("... and no count of 0 failed instances", "0 failed instances" not in out
            and "not SLA-aware" not in out, out)


def plan_not_reached(r, tmp, cli):
    """update start of a job that an active plan has yet to update is
    refused, naming the plan, unless --force."""
    key = "local/www/prod/planned"
    code, _, err = cli("job", "create", key, job_file(tmp, "planned", "one"))
    r.check("job create (planned)", code == 0, err)
    plan = os.path.join(tmp, "held.json")
    with open(plan, "w") as f:
        json.dump({"name": "held", "stages": [{"name": "s", "job": job_file(tmp, "planned", "two"),
                                               "require_approval": True}]}, f)
    code, out, err = cli("plan", "start", plan)
    r.check("plan start (held)", code == 0, out + err)
    three = job_file(tmp, "planned", "three")
    code, _, err = cli("update", "start", key, three)
    r.check("update start of a job a plan has yet to reach: exit 1, naming the plan",
            code == 1 and "rollout plan held (" in err and "has not reached it yet" in err
            and "--force" in err, (code, err))
    code, out, err = cli("update", "start", key, three, "--force")
    r.check("... and --force starts it", code == 0 and "started update" in out, (code, out, err))
    code, out, err = cli("plan", "abort", "held")
    r.check("plan abort (held)", code == 0, out + err)


def clusters_file(r, tmp, url):
    """#31: commands that name no cluster use the clusters file's only
    cluster; with several, they say which to name."""
    xdg = os.path.join(tmp, "xdg")
    os.makedirs(os.path.join(xdg, "stagger"), exist_ok=True)
    path = os.path.join(xdg, "stagger", "clusters.json")
    with open(path, "w") as f:
        json.dump({"local": url}, f)
    one = Cli(1, {"XDG_CONFIG_HOME": xdg})
    for args in (("job", "list"), ("update", "list")):
        code, out, err = one(*args, url=False)
        r.check("%s without a cluster uses the file's only cluster" % " ".join(args),
                code == 0 and "local/www/prod/small" in out, (code, out, err))
    code, out, err = one("cluster", "status", url=False)
    r.check("cluster status without a cluster asks the file's cluster",
            "127.0.0.1:8081" not in out + err and url in out + err, (code, out, err))
    with open(path, "w") as f:
        json.dump({"local": url, "prod": "http://127.0.0.1:1"}, f)
    code, out, err = one("job", "list", url=False)
    r.check("with several clusters, a usage error names them and the file",
            code == 2 and "local, prod" in err and path in err, (code, err))
    code, out, err = one("job", "list", "local", url=False)
    r.check("... and naming one works", code == 0 and "local/www/prod/small" in out, (code, out, err))


def update_controls(r, tmp):
    """The job file's update controls for large jobs: max_surge, max_batch_size,
    the failure allowances as counts or percents, update_deadline_secs, and
    clear errors for bad values."""
    cli = Cli(0)
    path = job_file(tmp, "ctl", "c", update={
        "max_surge": "25%", "max_batch_size": 8, "max_total_failures": "10%",
        "max_per_shard_failures": 2, "update_deadline_secs": 600, "min_in_service": 3})
    code, out, err = cli("job", "inspect", path, url=False)
    s = json.loads(out)["settings"] if code == 0 else {}
    r.check("job inspect sends the update controls",
            s.get("maxSurgePercent") == 25 and s.get("maxBatchSize") == 8
            and s.get("maxFailedInstancesPercent") == 10 and s.get("maxPerInstanceFailures") == 2
            and s.get("updateDeadlineMs") == 600000 and "maxSurge" not in s, out + err)
    path = job_file(tmp, "ctl", "d", update={"max_surge": 2, "max_per_shard_failures": "1.5%"})
    code, out, err = cli("job", "inspect", path, url=False)
    s = json.loads(out)["settings"] if code == 0 else {}
    r.check("max_surge as a count, max_per_shard_failures as a percent",
            s.get("maxSurge") == 2 and s.get("maxPerInstanceFailuresPercent") == 1.5, out + err)
    for bad, what in (({"max_surge": "150%"}, "update_config.max_surge"),
                      ({"max_total_failures": "ten"}, "update_config.max_total_failures"),
                      ({"max_batch_size": 0}, "update_config.max_batch_size"),
                      ({"update_deadline_secs": -1}, "update_config.update_deadline_secs"),
                      ({"max_surges": 1}, "max_surge")):
        path = job_file(tmp, "ctl", "bad" + str(bad), update=bad)
        code, _, err = cli("job", "inspect", path, url=False)
        r.check("a bad %s is refused by name" % list(bad)[0], code != 0 and what in err, err)


def task_ids(cli, key):
    """instance -> its task id, which names the run: a new process, a new id."""
    code, out, _ = cli("--json", "job", "status", key)
    tasks = json.loads(out)["tasks"] if code == 0 else []
    return {t["assignedTask"]["instanceId"]: t["assignedTask"]["taskId"] for t in tasks}


def down_spans(tasks, since_ms):
    """(from, to) of each time an instance was not RUNNING after since_ms,
    from its task events."""
    spans = []
    for t in tasks:
        start = None
        for ev in sorted(t.get("taskEvents", []), key=lambda e: e["timestamp"]):
            if ev["timestamp"] < since_ms:
                continue
            if ev["status"] != "RUNNING" and start is None:
                start = ev["timestamp"]
            elif ev["status"] == "RUNNING" and start is not None:
                spans.append((start, ev["timestamp"]))
                start = None
        if start is not None:
            spans.append((start, float("inf")))
    return spans


def most_at_once(spans):
    """The most spans open at one moment (one that ends as another starts
    does not overlap it)."""
    most = now = 0
    for _, step in sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans]):
        now += step
        most = max(most, now)
    return most


def rolling_restart(r, cli, tmp):
    """job restart rolls through batches with health gating, as Aurora's
    client does: every instance gets a new process, never more than a
    batch down at once, and the update ends ROLLED_FORWARD."""
    key = "local/www/prod/restarted"
    r.check("create", cli("job", "create", key, job_file(tmp, "restarted", "hi", count=6))[0] == 0)
    r.check("six running", wait_running(cli, key, 6))
    before = task_ids(cli, key)
    since_ms = int(time.time() * 1000)
    proc = cli.background("job", "restart", key, "--batch-size", "2", "--watch-secs", "1", "--wait")
    out, err = proc.communicate()
    r.check("job restart --wait ends ROLLED_FORWARD (0)",
            proc.returncode == 0 and "ROLLED_FORWARD" in out, (proc.returncode, out, err))
    after = task_ids(cli, key)
    r.check("every instance has a new process",
            len(after) == 6 and all(after[i] != before.get(i) for i in after), (before, after))
    # How many were down at once, from the instances' own events (a poll
    # of job status can miss short stops on a loaded machine).
    code, status, _ = cli("--json", "job", "status", key)
    most_down = most_at_once(down_spans(json.loads(status)["tasks"], since_ms)) if code == 0 else -1
    r.check("at most a batch (2) down at once", 1 <= most_down <= 2, "most down: %d" % most_down)
    code, out, _ = cli("update", "info", key)
    r.check("the restart is an update of the job", code == 0 and "ROLLED_FORWARD" in out, out)
    code, _, err = cli("job", "restart", "local/www/prod/nosuchjob")
    r.check("restart of a job that does not exist: 6", code == 6 and "no job" in err, (code, err))
    code, _, err = cli("job", "restart", key, "--batch-size", "0")
    r.check("a batch of 0 is a usage error (2)", code == 2, (code, err))
    r.check("kill", cli("job", "kill", key)[0] == 0)


def update_timeline(r, cli, tmp):
    """update timeline: an update of four instances in batches of two, as
    JSON (two batches, each work's phases and time to healthy, a physical
    limit within the time taken) and drawn in text that fits the width
    asked, with the same times to healthy; bad arguments refused."""
    key = "local/www/prod/timed"
    r.check("create", cli("job", "create", key, job_file(tmp, "timed", "t1", count=4))[0] == 0)
    r.check("four running", wait_running(cli, key, 4))
    update = {"batch_size": 2, "wait_for_batch_completion": True}
    code, out, err = cli("update", "start", key, job_file(tmp, "timed", "t2", count=4,
                                                          update=update), "--wait")
    r.check("the update rolls forward", code == 0 and "ROLLED_FORWARD" in out, out + err)
    code, out, err = cli("--json", "update", "timeline", key)
    t = json.loads(out) if code == 0 else {}
    works = t.get("instances", [])
    batches = t.get("batches", [])
    r.check("--json: two batches of two, in order",
            [(b["batch"], b["back"], b["instances"]) for b in batches]
            == [(0, False, 2), (1, False, 2)], out + err)
    r.check("--json: each instance updated in its batch, timed from start to healthy",
            sorted((w["instance"], w["batch"], w["outcome"]) for w in works)
            == [(0, 0, "updated"), (1, 0, "updated"), (2, 1, "updated"), (3, 1, "updated")]
            and all(w["healthy_ms"] is not None and w["healthy_ms"] > 0 for w in works), out)
    r.check("--json: each work starts, then is healthy for the watch time",
            all([p["phase"] for p in w["phases"]][-2:] == ["starting", "healthy"]
                and w["phases"][-1]["to_ms"] - w["phases"][-1]["from_ms"] >= 1000
                for w in works), out)
    r.check("--json: the physical limit is the batches' slowest to healthy plus the watch, "
            "within the time taken",
            t.get("limit_ms") == sum(max(w["healthy_ms"] for w in works if w["batch"] == b)
                                     + 1000 for b in (0, 1))
            and 0 < t["limit_ms"] <= t["to_ms"] - t["from_ms"], out)
    code, out, err = cli("update", "timeline", key, "--width", "70")
    lines = out.splitlines()
    rows = [line for line in lines if re.match(r"^\d\s+\d\s+\|", line)]
    r.check("text: the time taken beside the physical limit, a row per batch and per instance",
            code == 0 and "took " in out and "times its physical limit" in out and len(rows) == 4
            and all("=" in row for row in rows), out + err)
    drawn = rows + [line for line in lines if line.startswith(". waiting")]
    r.check("text: every instance row and the key fit the width asked",
            len(drawn) == 5 and all(len(line) <= 70 for line in drawn), drawn)
    said = {int(row.split()[0]): row.split("|")[-1].split()[-2] for row in rows}
    r.check("text: the same times to healthy as --json",
            said == {w["instance"]: "%.1f" % (w["healthy_ms"] / 1000.0) for w in works},
            (said, works))
    code, out, err = cli("update", "timeline", key, "--by", "batch")
    r.check("--by batch: the batches only",
            code == 0 and "BATCH" in out and "PHASES OVER TIME" not in out
            and not re.search(r"^\d\s+\d\s+\|", out, re.M), out + err)
    code, _, err = cli("update", "timeline", key, "--by", "host")
    r.check("--by host: a usage error (2)", code == 2 and "--by" in err, err)
    code, _, err = cli("update", "timeline", key, "--id", "no-such-update")
    r.check("an update that does not exist: 6", code == 6 and "no-such-update" in err, err)
    r.check("kill", cli("job", "kill", key)[0] == 0)


def update_rehearsal(r, cli, tmp):
    """update start --dry-run: the batches an update would run, before
    anything is measured (limits of the watch time, no prediction) and
    after (each instance's start to healthy from the last update); nothing
    is started by it; the update then started keeps its prediction, which
    its timeline shows beside the time it took, within 25 % of it (tried
    up to three times: a loaded machine can slow one run)."""
    key = "local/www/prod/rehearsed"
    update = {"batch_size": 2, "wait_for_batch_completion": True}

    def conf(greeting):
        return job_file(tmp, "rehearsed", greeting, count=4, update=update)

    r.check("create", cli("job", "create", key, conf("r0"))[0] == 0)
    r.check("four running", wait_running(cli, key, 4))
    code, out, err = cli("--json", "update", "start", "--dry-run", key, conf("r1"))
    blind = json.loads(out).get("rehearsal", {}) if code == 0 else {}
    r.check("--json --dry-run: two batches of two, limits of the watch time, no prediction",
            [b["instances"] for b in blind.get("batches", [])] == [[0, 1], [2, 3]]
            and blind.get("limitMs") == 2000 and blind.get("predictedMs") == -1
            and "measuredIn" not in blind, out + err)
    code, out, err = cli("update", "list", "local/www")
    r.check("a dry run starts nothing", code == 0 and "rehearsed" not in out, out + err)
    code, out, err = cli("update", "start", "--wait", key, conf("r1"))
    r.check("the first update rolls forward", code == 0 and "ROLLED_FORWARD" in out, out + err)
    first = re.search(r"started update (\S+)", out)
    within = []
    for attempt in range(3):
        greeting = "r%d" % (attempt + 2)
        code, out, err = cli("--json", "update", "start", "-n", key, conf(greeting))
        seen = json.loads(out).get("rehearsal", {}) if code == 0 else {}
        if attempt == 0:
            r.check("--dry-run after an update: measured in it, a prediction above the limit",
                    first is not None and seen.get("measuredIn") == first.group(1)
                    and seen.get("limitMs", 0) > 2000
                    and seen.get("predictedMs", 0) >= seen.get("limitMs"), out + err)
            code, text, err = cli("update", "start", "--dry-run", key, conf(greeting))
            r.check("text: the diff, a line per batch, the prediction beside the limit",
                    code == 0 and "nothing is started" in text and "update:    0-3" in text
                    and "batch 1   2 instances (0-1)" in text and "predicted " in text
                    and "physical limit" in text and "measured in update" in text, text + err)
        code, out, err = cli("update", "start", "--wait", key, conf(greeting))
        code, tl, err = cli("--json", "update", "timeline", key)
        t = json.loads(tl) if code == 0 else {}
        took = t.get("to_ms", 0) - t.get("from_ms", 0)
        if attempt == 0:
            r.check("the update keeps the prediction it started with",
                    t.get("predicted_ms") == seen.get("predictedMs"), (t.get("predicted_ms"), seen))
            code, text, _ = cli("update", "timeline", key, "--by", "batch")
            r.check("update timeline shows it", code == 0 and "when it started" in text, text)
        within.append((seen.get("predictedMs"), took))
        if seen.get("predictedMs", -1) > 0 and abs(took - seen["predictedMs"]) <= 0.25 * took:
            break
    r.check("a repeated update takes within 25 % of its prediction", any(
        p is not None and p > 0 and abs(took - p) <= 0.25 * took for p, took in within), within)
    code, _, err = cli("update", "start", "--dry-run", key, os.path.join(tmp, "no-such.json"))
    r.check("--dry-run of a file that does not exist: 3", code == 3 and "no-such.json" in err,
            (code, err))
    r.check("kill", cli("job", "kill", key)[0] == 0)


def served_version(cli, key, instance=0):
    """The config version instance @instance of @key serves (/version)."""
    code, out, _ = cli("--json", "job", "status", key)
    for t in json.loads(out)["tasks"] if code == 0 else []:
        if t["assignedTask"]["instanceId"] == instance:
            port = t["assignedTask"]["assignedPorts"]["http"]
            with urllib.request.urlopen("http://127.0.0.1:%d/version" % port, timeout=10) as resp:
                return resp.read().decode().strip()
    return None


def history_and_revert(r, cli, tmp):
    """job history lists the stored configurations; job revert updates the
    job back to one (the one before the current by default)."""
    key = "local/www/prod/undone"
    r.check("create v1", cli("job", "create", key, job_file(tmp, "undone", "one", count=2))[0] == 0)
    r.check("v1 runs", wait_running(cli, key, 2))
    for g in ("two", "three"):
        code, out, err = cli("update", "start", key, job_file(tmp, "undone", g, count=2), "--wait")
        r.check("update to %s" % g, code == 0, (out, err))
    code, out, _ = cli("job", "history", key)
    lines = [l for l in out.splitlines() if l[:1].isdigit()]
    r.check("history lists three versions", len(lines) == 3, out)
    r.check("the third is current", "3 (current)" in out and "task.env" in lines[-1], out)
    code, out, _ = cli("--json", "job", "history", key)
    versions = json.loads(out)["versions"] if code == 0 else []
    r.check("history --json", [v["version"] for v in versions] == [1, 2, 3]
            and versions[2]["instancesOnIt"] == 2, out)

    code, out, err = cli("job", "revert", key, "--wait")
    r.check("revert goes back to version 2", code == 0 and "version 2" in out, (out, err))
    r.check("version 2 serves", served_version(cli, key) == "2", served_version(cli, key))
    r.check("history marks 2 current", "2 (current)" in cli("job", "history", key)[1])
    code, out, err = cli("job", "revert", key, "--to-version", "1", "--wait")
    r.check("revert --to-version 1", code == 0, (out, err))
    r.check("version 1 serves", served_version(cli, key) == "1", served_version(cli, key))
    code, _, err = cli("job", "revert", key, "--to-version", "7")
    r.check("a version that does not exist: 6", code == 6 and "no version 7" in err, (code, err))
    code, _, err = cli("job", "revert", key)
    r.check("nothing before version 1: 1", code == 1 and "nothing before it" in err, (code, err))
    code, _, err = cli("job", "history", "local/www/prod/neverwas")
    r.check("history of a job that never was: 6", code == 6, (code, err))
    r.check("kill", cli("job", "kill", key)[0] == 0)


def task_logs(r, cli, tmp):
    """task logs shows an instance's output: all of it, --stderr, --tail
    and --follow (which ends 0 on SIGINT); a missing instance is 6."""
    key = "local/www/prod/talker"
    conf = {"cluster": "local", "role": "www", "environment": "prod", "name": "talker", "instances": 1,
            "task": {"command": "for i in 1 2 3 4 5; do echo line $i; done; echo oops >&2; "
                                "while [ ! -f more ]; do sleep 0.1; done; echo after; exec sleep 60"}}
    path = os.path.join(tmp, "talker.json")
    with open(path, "w") as f:
        json.dump(conf, f)
    r.check("create", cli("job", "create", key, path)[0] == 0)
    r.check("running", wait_running(cli, key, 1))
    end = time.monotonic() + 20
    out = ""
    while time.monotonic() < end and "line 5" not in out:
        code, out, err = cli("task", "logs", key + "/0")
        time.sleep(0.1)
    r.check("task logs prints stdout", code == 0 and out == "".join("line %d\n" % i for i in range(1, 6)),
            (code, out, err))
    code, out, err = cli("task", "logs", key + "/0", "--stderr")
    r.check("--stderr", code == 0 and out == "oops\n", (code, out, err))
    code, out, err = cli("task", "logs", key + "/0", "--tail", "2")
    r.check("--tail 2", code == 0 and out == "line 4\nline 5\n", (code, out, err))

    follower = cli.background("task", "logs", key + "/0", "--tail", "1", "--follow")
    time.sleep(1)
    # The instance waits for a file named "more" in its own run folder.
    runs = []
    for root, dirs, files in os.walk(cli.data_dir):
        if "stdout" in files and "line 1" in open(os.path.join(root, "stdout")).read():
            runs.append(root)
    r.check("found the instance's run folder", len(runs) == 1, runs)
    if runs:
        open(os.path.join(runs[0], "more"), "w").close()
    # Once the instance has written it, --follow gets it within a second.
    end = time.monotonic() + 20
    while runs and time.monotonic() < end and "after" not in open(os.path.join(runs[0], "stdout")).read():
        time.sleep(0.1)
    time.sleep(1.5)
    follower.send_signal(2)
    seen, _ = follower.communicate(timeout=10)
    r.check("--follow prints what comes later", seen.startswith("line 5\n") and "after\n" in seen, seen)
    r.check("--follow ends 0 on SIGINT", follower.returncode == 0, follower.returncode)

    code, _, err = cli("task", "logs", key + "/9")
    r.check("an instance that does not exist: 6", code == 6 and "no instance 9" in err, (code, err))
    code, _, err = cli("task", "logs", key)
    r.check("no instance named: 2", code == 2, (code, err))
    r.check("kill", cli("job", "kill", key)[0] == 0)


def parse_metrics(text):
    """Prometheus text exposition -> {(name, frozenset(labels)): value}; raises on a bad line."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)', line)
        if m is None:
            raise ValueError("not an exposition line: %r" % line)
        labels = frozenset(re.findall(r'(\w+)="([^"]*)"', m.group(2) or ""))
        out[(m.group(1), labels)] = float(m.group(3))
    return out


def metrics(r, tmp):
    """/metrics after a small rollout: Prometheus text that agrees with what happened."""
    d = stgtest.Daemon("--port-range=22000-22099")
    try:
        cli = Cli(d.http_port)
        key = "local/www/prod/measured"
        r.check("create", cli("job", "create", key, job_file(tmp, "measured", "one", count=2))[0] == 0)
        r.check("running", wait_running(cli, key, 2))
        r.check("update", cli("update", "start", key, job_file(tmp, "measured", "two", count=2),
                              "--wait")[0] == 0)
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % d.http_port, timeout=10) as resp:
            ctype = resp.headers.get("Content-Type")
            text = resp.read().decode()
        r.check("text format 0.0.4", ctype.startswith("text/plain; version=0.0.4"), ctype)
        m = parse_metrics(text)

        def get(name, **labels):
            return m.get((name, frozenset(labels.items())), None)
        r.check("one startJobUpdate", get("stagger_rpc_duration_seconds_count", method="startJobUpdate") == 1,
                text)
        r.check("one createJob", get("stagger_rpc_duration_seconds_count", method="createJob") == 1)
        r.check("+Inf bucket is the count",
                get("stagger_rpc_duration_seconds_bucket", method="createJob", le="+Inf") == 1)
        r.check("one update ROLLED_FORWARD", get("stagger_updates", status="ROLLED_FORWARD") == 1)
        r.check("two instances RUNNING", get("stagger_instances", status="RUNNING") == 2)
        r.check("transitions counted", (get("stagger_instance_transitions_total") or 0) >= 4)
        r.check("health checks counted", (get("stagger_health_checks_total", outcome="passed") or 0) > 0)
        r.check("store commits counted", (get("stagger_store_commits_total") or 0) > 0)
        version = version_of_configure()
        r.check("build info names staggerd's version", get("stagger_build_info", version=version) == 1,
                [k for k in m if k[0] == "stagger_build_info"])
        with urllib.request.urlopen("http://127.0.0.1:%d/ui/api/session" % d.http_port, timeout=10) as resp:
            session = json.loads(resp.read().decode())
        r.check("the web UI's session names the same version", session.get("version") == version, session)
        code = urllib.request.urlopen(urllib.request.Request(
            "http://127.0.0.1:%d/metrics" % d.http_port, method="HEAD"), timeout=10).status
        r.check("HEAD /metrics", code == 200, code)
    finally:
        r.check("staggerd exits cleanly", d.stop() == 0)


def quotas_and_tiers(r, tmp):
    """stagger quota get|set and stagger tiers, against a job in a
    production tier (which needs quota)."""
    d = stgtest.Daemon("--runtime=simulated")
    try:
        cli = Cli(d.http_port)
        path = job_file(tmp, "prod", "hi", count=2)
        with open(path) as f:
            conf = json.load(f)
        conf["tier"] = "preferred"
        conf["resources"].update({"cpu": 0.5, "ram_mb": 64, "disk_mb": 32})
        with open(path, "w") as f:
            json.dump(conf, f)
        code, _, err = cli("job", "create", "local/www/prod/prod", path)
        r.check("a production job without quota: exit 1, naming what is short",
                code == 1 and "Insufficient resource quota: CPU quota exceeded by 1.00 core(s)" in err,
                (code, err))
        code, out, err = cli("quota", "set", "local/www", "1.5", "1GB", "64")
        r.check("quota set", code == 0 and "1024 MB RAM" in out, (code, out, err))
        code, out, err = cli("job", "create", "local/www/prod/prod", path)
        r.check("the job fits now", code == 0, (code, out, err))
        code, out, err = cli("quota", "get", "www")
        row = [l for l in out.splitlines() if l.startswith("used: production, shared pool")]
        r.check("quota get shows the quota and what the job uses",
                code == 0 and re.search(r"quota .*1\.50\s+1024 MB\s+64 MB", out) is not None
                and row and re.search(r"1\.00\s+128 MB\s+64 MB", row[0]) is not None, out)
        code, out, _ = cli("--json", "quota", "get", "local/www")
        got = json.loads(out) if code == 0 else {}
        r.check("quota get --json is getQuota's result", "prodSharedConsumption" in got, out)
        code, _, err = cli("quota", "set", "www", "0.5", "1G", "1G")
        r.check("quota set below what runs: exit 1",
                code == 1 and "less than the current production reservation" in err, (code, err))
        code, _, err = cli("quota", "set", "www", "1", "lots", "1G")
        r.check("a bad size: exit 2", code == 2 and "bad RAM 'lots'" in err, (code, err))
        code, _, err = cli("quota", "get", "w w")
        r.check("a bad role: exit 2", code == 2, (code, err))
        code, out, _ = cli("tiers")
        r.check("stagger tiers lists Aurora's tiers",
                code == 0 and "preemptible (default)" in out and "preferred" in out
                and "revocable" in out, out)
        code, out, _ = cli("--json", "tier", "list")
        r.check("tier list --json", code == 0 and json.loads(out)["defaultTierName"] == "preemptible",
                out)
    finally:
        r.check("staggerd exits cleanly (quotas)", d.stop() == 0)


def wait_output(cli, args, text, deadline=30):
    """The output of cli(*args) once it has @text in it (else the last one)."""
    end = time.monotonic() + deadline
    while True:
        code, out, err = cli(*args)
        if (code == 0 and text in out) or time.monotonic() >= end:
            return code, out, err
        time.sleep(0.2)


def local_host(r, cli, tmp):
    """stagger hosts names the local runtime's one host, the name host
    maintenance takes; an SLA drain of it says why it waits."""
    name = socket.gethostname()
    code, out, err = cli("hosts")
    r.check("stagger hosts names this machine", code == 0 and name in out.split(), (code, out, err))
    code, out, err = cli("host", "maintenance", "status", name)
    r.check("host maintenance takes that name", code == 0 and "NONE" in out, (code, out, err))

    key = "local/www/prod/held"
    path = job_file(tmp, "held", "hi", count=1)
    with open(path) as f:
        conf = json.load(f)
    conf["tier"] = "preferred"
    conf["sla_policy"] = {"coordinator_url": "http://127.0.0.1:19450/sla"}
    with open(path, "w") as f:
        json.dump(conf, f)
    code, _, err = cli("quota", "set", "local/www", "10", "1GB", "1GB")
    r.check("quota for the held job", code == 0, err)
    code, _, err = cli("job", "create", key, path)
    r.check("a job whose coordinator never answers", code == 0, err)
    r.check("it runs", wait_running(cli, key, 1))
    code, _, err = cli("host", "maintenance", "sla-drain", name)
    r.check("an SLA drain of this machine", code == 0, (code, err))
    why = ("instance 0 of www/prod/held waits for its SLA: its coordinator "
           "http://127.0.0.1:19450/sla")
    code, out, err = wait_output(cli, ("host", "maintenance", "status", name), why)
    r.check("host maintenance status says why the drain waits",
            code == 0 and "DRAINING" in out and "%s: %s" % (name, why) in out, (code, out, err))
    code, out, err = cli("hosts")
    r.check("stagger hosts says it too", code == 0 and why in out, (code, out, err))
    code, out, err = cli("job", "status", key)
    r.check("job status says it for the instance", code == 0 and "drain: " + why in out,
            (code, out, err))
    code, out, err = cli("host", "maintenance", "end", name)
    r.check("maintenance ends", code == 0 and "NONE" in out and why not in out, (code, out, err))
    code, _, err = cli("job", "kill", key)
    r.check("the held job is killed", code == 0, err)


def sla_and_admin(r, tmp):
    """A job file's sla_policy and update_config.sla_aware, and stagger
    admin backup|backups|restore --dry-run|reconcile|prune."""
    d = stgtest.Daemon("--runtime=simulated",
                       config="[sla]\nmin_required_instances = 2\nretry_min_secs = 1\n"
                              "retry_max_secs = 1\n")
    try:
        cli = Cli(d.http_port)
        code, _, err = cli("quota", "set", "local/www", "10", "1GB", "1GB")
        r.check("quota for the production job", code == 0, err)
        path = job_file(tmp, "sla", "hi", count=3, update={"sla_aware": True})
        with open(path) as f:
            conf = json.load(f)
        conf["tier"] = "preferred"
        conf["sla_policy"] = {"count": 3, "duration_secs": 1}
        with open(path, "w") as f:
            json.dump(conf, f)
        code, _, err = cli("job", "create", "local/www/prod/sla", path)
        r.check("an SLA that lets no instance go: exit 1, Aurora's message",
                code == 1 and "Current CountSlaPolicy: count=3 will not allow any instances to be "
                "killed. Must be less than instanceCount=3." in err, (code, err))
        conf["sla_policy"] = {"count": 2, "coordinator_url": "http://x/"}
        with open(path, "w") as f:
            json.dump(conf, f)
        code, _, err = cli("job", "create", "local/www/prod/sla", path)
        r.check("an sla_policy of two kinds: exit 3",
                code == 3 and "sla_policy: give exactly one of count, percentage and "
                "coordinator_url" in err, (code, err))
        conf["sla_policy"] = {"count": 2, "duration_secs": 1}
        with open(path, "w") as f:
            json.dump(conf, f)
        code, out, err = cli("job", "create", "local/www/prod/sla", path)
        r.check("a job with a count SLA", code == 0, (code, out, err))
        code, out, _ = cli("job", "inspect", path)
        r.check("job inspect shows the SLA policy and sla_aware",
                code == 0 and '"countSlaPolicy"' in out and '"slaAware" : true' in out, out)
        conf["task"]["env"]["GREETING"] = "hello"
        with open(path, "w") as f:
            json.dump(conf, f)
        code, out, err = cli("update", "start", "--wait", "local/www/prod/sla", path, timeout=180)
        r.check("an SLA-aware update finishes", code == 0 and "ROLLED_FORWARD" in out,
                (code, out, err))
        r.check("an SLA-aware update with a policy is not warned of it",
                "no SLA policy" not in err, err)
        nopol = job_file(tmp, "nopol", "hi", count=1, update={"sla_aware": True})
        code, out, err = cli("job", "create", "local/www/prod/nopol", nopol)
        r.check("a job of the default tier, no SLA policy", code == 0, (code, out, err))
        nopol = job_file(tmp, "nopol", "hello", count=1, update={"sla_aware": True})
        code, out, err = cli("update", "start", "--wait", "local/www/prod/nopol", nopol,
                             timeout=120)
        r.check("an SLA-aware update of a job with no SLA policy is warned of it",
                code == 0 and "warning:" in err and "SLA-aware" in err
                and "www/prod/nopol has no SLA policy" in err and "slaPolicy" in err
                and "tier 'preemptible'" in err, (code, out, err))
        code, out, _ = cli("update", "info", "local/www/prod/sla")
        r.check("update info says when it waited for the SLA",
                code == 0 and "waits for its SLA" in out and "its count policy needs 2" in out, out)

        code, out, err = cli("admin", "backup")
        r.check("admin backup", code == 0 and out.startswith("backup scheduler-backup-"),
                (code, out, err))
        backup_id = out.split()[1] if code == 0 else ""
        code, out, _ = cli("admin", "backups")
        r.check("admin backups lists it", code == 0 and backup_id in out.split(), out)
        code, out, err = cli("admin", "restore", "--dry-run", "--delete", "local/www/prod/sla/2",
                             backup_id)
        r.check("admin restore --dry-run: staged, changed, unloaded",
                code == 0 and "deleted 1 task from the staged backup" in out
                and "local/www/prod/sla: 2 tasks" in out and "dry run" in out, (code, out, err))
        code, _, err = cli("admin", "restore", "scheduler-backup-1999-01-01-00-00-00")
        r.check("admin restore of no such backup: exit 1", code == 1 and "no backup" in err,
                (code, err))
        code, out, _ = cli("admin", "reconcile", "--implicit")
        r.check("admin reconcile", code == 0 and "nothing to compare" in out, out)
        code, out, err = cli("admin", "reconcile", "--batch-size", "2")
        r.check("admin reconcile --batch-size: batches of at most 2",
                code == 0 and re.search(r"\d+ tasks? in \d+ batch(es)? of at most 2,", out)
                is not None, (code, out, err))
        code, _, err = cli("admin", "reconcile", "--batch-size", "0")
        r.check("admin reconcile --batch-size 0: exit 2, said why",
                code == 2 and "greater than zero" in err, (code, err))
        code, _, err = cli("admin", "reconcile", "--implicit", "--batch-size", "5")
        r.check("admin reconcile --implicit --batch-size: exit 2",
                code == 2 and "explicit" in err, (code, err))
        code, out, _ = cli("admin", "prune", "local/www")
        r.check("admin prune", code == 0 and "pruned 0 ended tasks" in out, out)
        code, _, err = cli("admin", "prune", "local/www/prod")
        r.check("admin prune of a bad scope: exit 2", code == 2, (code, err))
    finally:
        r.check("staggerd exits cleanly (sla and admin)", d.stop() == 0)


def main():
    r = stgtest.Results("cli_test")
    with tempfile.TemporaryDirectory(prefix="stagger-cli-") as tmp:
        d = stgtest.Daemon("--port-range=21000-21999")
        try:
            cli = Cli(d.http_port)
            cli.data_dir = os.path.join(d.dir, "data")
            r.run("jobs and updates", jobs_and_updates, r, cli, tmp)
            r.run("errors", errors, r, cli, tmp, d.http_port)
            r.run("plan files", plan_files, r, cli, tmp)
            r.run("rolling restart", rolling_restart, r, cli, tmp)
            r.run("update timeline", update_timeline, r, cli, tmp)
            r.run("update rehearsal", update_rehearsal, r, cli, tmp)
            r.run("history and revert", history_and_revert, r, cli, tmp)
            r.run("task logs", task_logs, r, cli, tmp)
            r.run("local host", local_host, r, cli, tmp)
        finally:
            r.check("staggerd exits cleanly", d.stop() == 0)
        r.run("credentials", credentials, r, tmp)
        r.run("quotas and tiers", quotas_and_tiers, r, tmp)
        r.run("sla and admin", sla_and_admin, r, tmp)
        r.run("small fixes", small_fixes, r, tmp)
        r.run("update controls", update_controls, r, tmp)
        r.run("metrics", metrics, r, tmp)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
