"""api_compat.py: a stock Thrift client (Debian's python3-thrift, stubs
generated now from thrift/stagger.thrift) drives a real staggerd three ways:
HTTP /api with the JSON protocol, HTTP /api with the binary protocol, and
framed binary over TCP. The same story runs on each: create a job, start an
update, pause, resume, read it back (summaries, details, diff), abort it,
kill the job. Then /api's HTTP rules: 405, 415, 413, 400, Accept
negotiation, and a daemon that keeps serving after bad messages.
"""
import http.client
import json
import sys

from thrift.protocol import TBinaryProtocol, TJSONProtocol
from thrift.transport import TSocket, TTransport

import stgtest

BINARY = "application/vnd.apache.thrift.binary"
JSON = "application/vnd.apache.thrift.json"


def client(mod, transport, protocol):
    return mod.Client(protocol(transport))


def job_config(t, name, count, command):
    key = t.JobKey(role="www", environment="prod", name=name)
    owner = t.Identity(user="www")
    task = t.TaskConfig(
        job=key, owner=owner, isService=True, priority=0, maxTaskFailures=1,
        resources={t.Resource(numCpus=0.25)},
        executorConfig=t.ExecutorConfig(name="stagger", data='{"command": "%s"}' % command))
    return t.JobConfiguration(key=key, owner=owner, taskConfig=task, instanceCount=count)


def story(r, t, c, label, name):
    """One job's life through one transport."""
    ok = t.ResponseCode.OK
    created = c.createJob(job_config(t, name, 4, "sleep 60"))
    r.check("%s: createJob" % label, created.responseCode == ok, created.details)
    r.check("%s: clusterName" % label, created.serverInfo.clusterName == "compat")
    again = c.createJob(job_config(t, name, 4, "sleep 60"))
    r.check("%s: createJob twice is refused" % label,
            again.responseCode == t.ResponseCode.INVALID_REQUEST, again.responseCode)

    jobs = c.getJobs("www")
    names = [j.key.name for j in jobs.result.getJobsResult.configs]
    r.check("%s: getJobs" % label, jobs.responseCode == ok and name in names, names)

    new = job_config(t, name, 4, "sleep 61")
    settings = t.JobUpdateSettings(updateGroupSize=1, minWaitInInstanceRunningMs=60000,
                                   rollbackOnFailure=True, maxPerInstanceFailures=0,
                                   maxFailedInstances=0)
    request = t.JobUpdateRequest(taskConfig=new.taskConfig, instanceCount=4, settings=settings)
    started = c.startJobUpdate(request, "compat " + label)
    r.check("%s: startJobUpdate" % label, started.responseCode == ok, started.details)
    key = started.result.startJobUpdateResult.key

    def status():
        q = t.JobUpdateQuery(key=key)
        d = c.getJobUpdateDetails(None, q)
        return d.result.getJobUpdateDetailsResult.detailsList[0].update.summary.state.status

    r.check("%s: rolling forward" % label, status() == t.JobUpdateStatus.ROLLING_FORWARD, status())
    paused = c.pauseJobUpdate(key, "hold on")
    r.check("%s: pauseJobUpdate" % label, paused.responseCode == ok, paused.details)
    r.check("%s: paused" % label, status() == t.JobUpdateStatus.ROLL_FORWARD_PAUSED, status())
    resumed = c.resumeJobUpdate(key, "go on")
    r.check("%s: resumeJobUpdate" % label, resumed.responseCode == ok, resumed.details)

    summaries = c.getJobUpdateSummaries(t.JobUpdateQuery(jobKey=new.key))
    found = [s.key.id for s in summaries.result.getJobUpdateSummariesResult.updateSummaries]
    r.check("%s: getJobUpdateSummaries" % label, key.id in found, found)
    details = c.getJobUpdateDetails(key, None)
    d = details.result.getJobUpdateDetailsResult.detailsList[0]
    r.check("%s: getJobUpdateDetails events" % label,
            [e.status for e in d.updateEvents][:3] == [t.JobUpdateStatus.ROLLING_FORWARD,
                                                         t.JobUpdateStatus.ROLL_FORWARD_PAUSED,
                                                         t.JobUpdateStatus.ROLLING_FORWARD],
            d.updateEvents)
    r.check("%s: the message is kept" % label, d.updateEvents[0].message == "compat " + label)

    diff = c.getJobUpdateDiff(t.JobUpdateRequest(taskConfig=job_config(t, name, 6, "sleep 62").taskConfig,
                                                 instanceCount=6, settings=settings))
    dr = diff.result.getJobUpdateDiffResult if diff.result else None

    def ids(groups):
        return sorted(i for g in groups for rg in g.instances for i in range(rg.first, rg.last + 1))

    # Instance 0 already runs the update's config, 1-3 the first one: two groups.
    r.check("%s: getJobUpdateDiff" % label,
            diff.responseCode == ok and ids(dr.add) == [4, 5] and ids(dr.update) == [0, 1, 2, 3]
            and len(dr.update) == 2 and not dr.remove and not dr.unchanged, diff)

    aborted = c.abortJobUpdate(key, "enough")
    r.check("%s: abortJobUpdate" % label, aborted.responseCode == ok, aborted.details)
    r.check("%s: aborted" % label, status() == t.JobUpdateStatus.ABORTED, status())

    tasks(r, t, c, label, name)

    killed = c.killTasks(new.key, None, "done")
    r.check("%s: killTasks" % label, killed.responseCode == ok, killed.details)


def plans(r, t, c, label, prefix):
    """A rollout plan of two jobs: started, read, approved, done, rolled back."""
    import time
    ok = t.ResponseCode.OK
    for n in ("a", "b"):
        created = c.createJob(job_config(t, prefix + n, 2, "sleep 60"))
        r.check("%s: createJob %s" % (label, n), created.responseCode == ok, created.details)
    strategy = t.JobUpdateStrategy(batchStrategy=t.BatchJobUpdateStrategy(groupSize=1))
    healthy = t.RolloutGate(name="a healthy", kind=t.RolloutGateKind.JOB_HEALTHY,
                            job=t.JobKey(role="www", environment="prod", name=prefix + "a"),
                            timeoutSecs=5, retries=3, retryIntervalSecs=0)
    settings = t.JobUpdateSettings(updateGroupSize=1, minWaitInInstanceRunningMs=0,
                                   rollbackOnFailure=True, maxPerInstanceFailures=0,
                                   maxFailedInstances=0, updateStrategy=strategy,
                                   batchGates=[healthy])

    def stage(n, deps, approval):
        new = job_config(t, prefix + n, 2, "sleep 61")
        return t.RolloutStage(name=n, dependsOn=deps, before=[healthy], after=[],
                              requireApproval=approval,
                              request=t.JobUpdateRequest(taskConfig=new.taskConfig,
                                                         instanceCount=2, settings=settings))

    plan = t.RolloutPlan(name=prefix + "plan", rollbackOnFailure=True,
                         stages=[stage("a", [], False), stage("b", ["a"], True)],
                         variables={"release": "61"})
    dry = c.getRolloutPlanDiff(plan)
    r.check("%s: getRolloutPlanDiff" % label,
            dry.responseCode == ok and
            [(s.name, s.changes, s.currentVersion)
             for s in dry.result.getRolloutPlanDiffResult.stages] == [("a", True, 1), ("b", True, 1)],
            dry)
    started = c.startRolloutPlan(plan, "compat " + label)
    r.check("%s: startRolloutPlan" % label, started.responseCode == ok, started.details)
    pid = started.result.startRolloutPlanResult.id

    def details():
        d = c.getRolloutPlanDetails(pid)
        return d.result.getRolloutPlanDetailsResult.details

    def wait(status):
        for _ in range(300):
            d = details()
            if d.summary.status == status:
                return d
            time.sleep(0.1)
        return details()

    d = wait(t.RolloutStatus.AWAITING_APPROVAL)
    r.check("%s: awaits approval" % label, d.summary.status == t.RolloutStatus.AWAITING_APPROVAL,
            d.summary)
    r.check("%s: the plan comes back as sent" % label,
            d.plan.stages[1].before[0].job.name == prefix + "a" and
            d.plan.stages[0].request.settings.batchGates[0].retries == 3, d.plan)
    approved = c.approveRolloutStage(pid, "b", "fine")
    r.check("%s: approveRolloutStage" % label, approved.responseCode == ok, approved.details)
    d = wait(t.RolloutStatus.DONE)
    r.check("%s: DONE" % label, d.summary.status == t.RolloutStatus.DONE, d.summary)
    r.check("%s: conditions, readiness, variables" % label,
            [(x.type, x.status, x.reason) for x in d.conditions] ==
            [("Progressing", "False", "Done"), ("Complete", "True", "Done"),
             ("Failed", "False", "Done")] and
            d.stages[0].readyInstances == d.stages[0].desiredInstances == 2 and
            d.stages[0].targetVersion == 2 and d.plan.variables == {"release": "61"}, d)
    r.check("%s: approved by" % label, d.stages[1].approvedBy is not None, d.stages[1])
    r.check("%s: gate results" % label,
            any(g.passed and g.gate == "a healthy" for g in d.gateResults), d.gateResults)
    listed = c.getRolloutPlans(t.RolloutPlanQuery(name=prefix + "plan", limit=5))
    r.check("%s: getRolloutPlans" % label,
            [(p.id, p.rollbackOnFailure) for p in listed.result.getRolloutPlansResult.plans]
            == [(pid, True)], listed)
    back = c.rollbackRolloutPlan(pid, "undo")
    r.check("%s: rollbackRolloutPlan" % label, back.responseCode == ok, back.details)
    d = wait(t.RolloutStatus.ROLLED_BACK)
    r.check("%s: ROLLED_BACK" % label, d.summary.status == t.RolloutStatus.ROLLED_BACK, d.summary)
    again = c.rollbackRolloutPlan(pid, "twice")
    r.check("%s: a second rollback is refused" % label,
            again.responseCode == t.ResponseCode.INVALID_REQUEST, again)
    missing = c.getRolloutPlanDetails("no-such-plan")
    r.check("%s: an unknown plan" % label,
            missing.responseCode == t.ResponseCode.INVALID_REQUEST, missing)
    for n in ("a", "b"):
        c.killTasks(t.JobKey(role="www", environment="prod", name=prefix + n), None, "done")


def tasks(r, t, c, label, name):
    """getTasksStatus, getTasksWithoutConfigs and getConfigSummary."""
    ok = t.ResponseCode.OK

    def query(**kw):
        resp = c.getTasksStatus(t.TaskQuery(role="www", jobName=name, **kw))
        r.check("%s: getTasksStatus %s" % (label, kw), resp.responseCode == ok, resp.details)
        return resp.result.scheduleStatusResult.tasks

    every = query()
    r.check("%s: four tasks, in instance order" % label,
            [x.assignedTask.instanceId for x in every] == [0, 1, 2, 3], every)
    r.check("%s: tasks are running" % label,
            all(x.status == t.ScheduleStatus.RUNNING for x in every), [x.status for x in every])
    r.check("%s: task ids name the job" % label,
            every[0].assignedTask.taskId.startswith("www-prod-%s-0-" % name), every[0].assignedTask.taskId)
    r.check("%s: events come along" % label, len(every[0].taskEvents) >= 1)
    r.check("%s: configs come along" % label,
            "sleep" in every[1].assignedTask.task.executorConfig.data)
    picked = query(instanceIds={1, 3})
    r.check("%s: by instance" % label, [x.assignedTask.instanceId for x in picked] == [1, 3])
    r.check("%s: by status" % label, query(statuses={t.ScheduleStatus.FINISHED}) == [])
    paged = query(offset=1, limit=2)
    r.check("%s: offset and limit" % label, [x.assignedTask.instanceId for x in paged] == [1, 2])
    r.check("%s: by task id" % label,
            [x.assignedTask.instanceId for x in query(taskIds={every[2].assignedTask.taskId})] == [2])
    other = c.getTasksStatus(t.TaskQuery(role="nobody"))
    r.check("%s: another role has none" % label, other.result.scheduleStatusResult.tasks == [])
    bare = c.getTasksWithoutConfigs(t.TaskQuery(jobKeys={t.JobKey(role="www", environment="prod", name=name)}))
    bt = bare.result.scheduleStatusResult.tasks
    r.check("%s: getTasksWithoutConfigs" % label,
            bare.responseCode == ok and len(bt) == 4 and bt[0].assignedTask.task.executorConfig.data == "",
            bare)

    summary = c.getConfigSummary(t.JobKey(role="www", environment="prod", name=name))
    groups = summary.result.configSummaryResult.summary.groups if summary.result else []
    covered = sorted(i for g in groups for rg in g.instances for i in range(rg.first, rg.last + 1))
    r.check("%s: getConfigSummary" % label, summary.responseCode == ok and covered == [0, 1, 2, 3], summary)
    missing = c.getConfigSummary(t.JobKey(role="www", environment="prod", name="nosuchjob"))
    r.check("%s: getConfigSummary of no job" % label,
            missing.responseCode == t.ResponseCode.INVALID_REQUEST, missing)
    bad = c.getConfigSummary(t.JobKey(role="w w", environment="prod", name=name))
    r.check("%s: a bad key names the field" % label,
            bad.responseCode == t.ResponseCode.INVALID_REQUEST and "role" in bad.details[0].message, bad)


def post(port, body, headers, method="POST"):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request(method, "/api", body, headers)
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, resp.getheader("Content-Type"), data


def encoded_get_jobs(mod, protocol):
    buf = TTransport.TMemoryBuffer()
    mod.Client(protocol(buf)).send_getJobs("www")
    return buf.getvalue()


def http_rules(r, mod, port):
    jobs_json = encoded_get_jobs(mod, TJSONProtocol.TJSONProtocol)
    jobs_binary = encoded_get_jobs(mod, TBinaryProtocol.TBinaryProtocol)

    status, _, _ = post(port, None, {}, method="GET")
    r.check("GET /api is 405", status == 405, status)
    status, _, _ = post(port, jobs_json, {"Content-Type": "text/plain"})
    r.check("text/plain is 415", status == 415, status)
    status, _, _ = post(port, jobs_json, {})
    r.check("no Content-Type is 415", status == 415, status)
    for ctype in ("application/x-thrift", "application/json", JSON,
                  "application/json; charset=utf-8"):
        status, rtype, data = post(port, jobs_json, {"Content-Type": ctype})
        r.check("%s is read as JSON, answered in JSON" % ctype,
                status == 200 and rtype == JSON and data.startswith(b"[1,"), (status, rtype))
    status, rtype, data = post(port, jobs_binary, {"Content-Type": BINARY, "Accept": BINARY})
    r.check("binary in, binary out", status == 200 and rtype == BINARY and data[:2] == b"\x80\x01",
            (status, rtype))
    status, rtype, data = post(port, jobs_binary, {"Content-Type": BINARY})
    r.check("binary in, JSON out without Accept", status == 200 and rtype == JSON, (status, rtype))
    status, rtype, _ = post(port, jobs_json, {"Content-Type": JSON, "Accept": "text/html, " + BINARY})
    r.check("Accept naming binary among others", status == 200 and rtype == BINARY, (status, rtype))

    # An unknown method is answered with an application exception (this
    # once sent the processor round in circles).
    unknown = jobs_binary.replace(b"getJobs", b"\x98etJobs")
    status, rtype, data = post(port, unknown, {"Content-Type": BINARY, "Accept": BINARY})
    r.check("an unknown method gets an exception", status == 200 and data[:4] == b"\x80\x01\x00\x03",
            (status, data[:40]))
    status, _, _ = post(port, b"not thrift at all", {"Content-Type": JSON})
    r.check("garbage is 400", status == 400, status)
    status, _, _ = post(port, jobs_binary[:-3], {"Content-Type": BINARY})
    r.check("a truncated binary call is answered", status in (200, 400), status)
    status, rtype, data = post(port, jobs_json[:-5], {"Content-Type": JSON})
    r.check("a truncated JSON call is answered", status in (200, 400), status)
    status, _, _ = post(port, b"", {"Content-Type": JSON})
    r.check("an empty body is 400", status == 400, status)
    status, _, _ = post(port, b"[" * 5000, {"Content-Type": JSON})
    r.check("deep nesting is 400", status == 400, status)
    status, _, _ = post(port, b"x" * (64 * 1024), {"Content-Type": JSON})
    r.check("a body over the limit is 413", status == 413, status)
    status, rtype, _ = post(port, jobs_json, {"Content-Type": JSON})
    r.check("still serving after bad messages", status == 200 and rtype == JSON, status)


def origins(r, t, mod, port):
    """Host and Origin: DNS rebinding and cross-site calls are refused before
    any route runs; every answer carries the security headers."""
    create = TTransport.TMemoryBuffer()
    mod.Client(TJSONProtocol.TJSONProtocol(create)).send_createJob(job_config(t, "forged", 1, "sleep 60"))
    body = create.getvalue()

    def call(headers):
        h = {"Content-Type": JSON}
        h.update(headers)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("POST", "/api", body, h)
        resp = conn.getresponse()
        resp.read()
        conn.close()
        return resp

    for label, headers in (("a foreign Host (DNS rebinding)", {"Host": "evil.example:%d" % port}),
                           ("a foreign Origin", {"Origin": "http://evil.example"}),
                           ("Origin null", {"Origin": "null"}),
                           ("Sec-Fetch-Site: cross-site", {"Sec-Fetch-Site": "cross-site"}),
                           ("Sec-Fetch-Site: same-site", {"Sec-Fetch-Site": "same-site"})):
        resp = call(headers)
        r.check("%s is 403" % label, resp.status == 403, resp.status)
    c = client(mod, stgtest.HttpTransport(port, JSON, JSON), TJSONProtocol.TJSONProtocol)
    jobs = c.getJobs("www").result.getJobsResult.configs
    r.check("nothing was created", "forged" not in [j.key.name for j in jobs])
    resp = call({"Host": "localhost:%d" % port, "Origin": "http://localhost:%d" % port,
                 "Sec-Fetch-Site": "same-origin"})
    r.check("our own origin may call", resp.status == 200, resp.status)
    r.check("X-Frame-Options: DENY", resp.getheader("X-Frame-Options") == "DENY")
    r.check("X-Content-Type-Options: nosniff", resp.getheader("X-Content-Type-Options") == "nosniff")
    r.check("a CSP without framing", "frame-ancestors 'none'" in (resp.getheader("Content-Security-Policy") or ""))
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", "/nowhere")
    resp = conn.getresponse()
    resp.read()
    conn.close()
    r.check("a 404 carries the headers too", resp.status == 404 and resp.getheader("X-Frame-Options") == "DENY")


def claimed_user(r, t, mod, port):
    """Without auth, the user a client claims (X-Stagger-User) is what the
    update's events record, marked unauthenticated."""
    c = client(mod, stgtest.HttpTransport(port, JSON, JSON, {"X-Stagger-User": "alice"}),
               TJSONProtocol.TJSONProtocol)
    created = c.createJob(job_config(t, "claimed", 1, "sleep 60"))
    r.check("claimed: createJob", created.responseCode == t.ResponseCode.OK, created.details)
    new = job_config(t, "claimed", 1, "sleep 61")
    request = t.JobUpdateRequest(taskConfig=new.taskConfig, instanceCount=1,
                                 settings=t.JobUpdateSettings(updateGroupSize=1,
                                                              minWaitInInstanceRunningMs=60000))
    started = c.startJobUpdate(request, "as alice")
    key = started.result.startJobUpdateResult.key
    details = c.getJobUpdateDetails(key, None).result.getJobUpdateDetailsResult.detailsList[0]
    r.check("the claimed user is recorded, marked unauthenticated",
            details.updateEvents[0].user == "alice (unauthenticated)"
            and details.update.summary.user == "alice (unauthenticated)", details.updateEvents)
    odd = client(mod, stgtest.HttpTransport(port, JSON, JSON, {"X-Stagger-User": "a b"}),
                 TJSONProtocol.TJSONProtocol)
    paused = odd.pauseJobUpdate(key, "odd name")
    events = c.getJobUpdateDetails(key, None).result.getJobUpdateDetailsResult.detailsList[0].updateEvents
    r.check("a claimed name that is not a user name is not recorded",
            paused.responseCode == t.ResponseCode.OK and "a b" not in str(events[-1].user), events)
    c.abortJobUpdate(key, "done")


def limits(r, t, mod):
    d = stgtest.Daemon("--runtime=simulated",
                       config="[staggerd]\nmax_instances_per_job = 5\n"
                              "http_names = stagger.example, other.example\n"
                              "allowed_origins = https://ops.example\n")
    try:
        named = post(d.http_port, encoded_get_jobs(mod, TJSONProtocol.TJSONProtocol),
                     {"Content-Type": JSON, "Host": "Stagger.example", "Origin": "https://ops.example"})
        r.check("http_names and allowed_origins are honoured", named[0] == 200, named[0])
        other = post(d.http_port, encoded_get_jobs(mod, TJSONProtocol.TJSONProtocol),
                     {"Content-Type": JSON, "Host": "stagger.example", "Origin": "https://dev.example"})
        r.check("other origins still are not", other[0] == 403, other[0])
        c = client(mod, stgtest.HttpTransport(d.http_port, JSON, JSON), TJSONProtocol.TJSONProtocol)
        big = c.createJob(job_config(t, "big", 6, "sleep 60"))
        r.check("max_instances_per_job is enforced", big.responseCode == t.ResponseCode.INVALID_REQUEST
                and "5" in big.details[0].message, big.details)
        r.check("and the limit itself is fine",
                c.createJob(job_config(t, "big", 5, "sleep 60")).responseCode == t.ResponseCode.OK)
    finally:
        r.check("staggerd exits cleanly (limits)", d.stop() == 0)


def deep_nesting(r, t, mod):
    """Executor data and web UI bodies nested 100,000 deep (json-glib's
    recursion once overflowed the stack on them) are clean refusals on every
    route, and the daemon serves on."""
    d = stgtest.Daemon("--port-range=26100-26199")
    deep = "[" * 100000 + "]" * 100000
    try:
        json_client = client(mod, stgtest.HttpTransport(d.http_port, JSON, JSON), TJSONProtocol.TJSONProtocol)
        ok = json_client.createJob(job_config(t, "deep", 1, "sleep 60"))
        r.check("deep: a job to diff against", ok.responseCode == t.ResponseCode.OK, ok.details)
        settings = t.JobUpdateSettings(updateGroupSize=1)
        config = job_config(t, "deep", 1, "sleep 60")
        config.taskConfig.executorConfig.data = deep
        sock = TSocket.TSocket("127.0.0.1", d.thrift_port)
        framed = TTransport.TFramedTransport(sock)
        framed.open()
        routes = [("HTTP JSON", json_client),
                  ("HTTP binary", client(mod, stgtest.HttpTransport(d.http_port, BINARY, BINARY),
                                         TBinaryProtocol.TBinaryProtocol)),
                  ("TCP", client(mod, framed, TBinaryProtocol.TBinaryProtocol))]
        for label, c in routes:
            diff = c.getJobUpdateDiff(t.JobUpdateRequest(taskConfig=config.taskConfig, instanceCount=1,
                                                         settings=settings))
            r.check("deep: getJobUpdateDiff over %s is INVALID_REQUEST" % label,
                    diff.responseCode == t.ResponseCode.INVALID_REQUEST
                    and "nested deeper" in diff.details[0].message, diff.details)
        framed.close()
        config.key.name = config.taskConfig.job.name = "deeper"
        created = json_client.createJob(config)
        r.check("deep: createJob is INVALID_REQUEST",
                created.responseCode == t.ResponseCode.INVALID_REQUEST, created.details)
        status, body = webui_post(d.http_port, "/ui/api/update/pause", deep.encode())
        r.check("deep: a web UI control body is 400", status == 400 and b"nested deeper" in body,
                (status, body[:200]))
        conn = http.client.HTTPConnection("127.0.0.1", d.http_port, timeout=30)
        conn.request("GET", "/health")
        r.check("deep: still serving", conn.getresponse().status == 200 and d.alive())
        conn.close()
    finally:
        r.check("staggerd exits cleanly (deep nesting)", d.stop() == 0)


def webui_post(port, path, body):
    """POSTs @body to a web UI control with the session's CSRF token."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", "/ui/api/session")
    resp = conn.getresponse()
    session = json.loads(resp.read())
    headers = {"Content-Type": "application/json", "X-Stagger-CSRF": session["csrf"]}
    cookie = resp.getheader("Set-Cookie")
    if cookie:
        headers["Cookie"] = cookie.split(";")[0]
    conn.request("POST", path, body, headers)
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, data


def cached_reads(r, t, mod, port):
    """Update queries repeated with nothing changed are answered from the
    reply cache: each answer still carries its own call's sequence id, and
    a change (a new update) shows in the next answer."""
    writer = client(mod, stgtest.HttpTransport(port, JSON, JSON), TJSONProtocol.TJSONProtocol)
    job = job_config(t, "cached", 2, "sleep 60")
    r.check("cached: createJob", writer.createJob(job).responseCode == t.ResponseCode.OK)
    query = t.JobUpdateQuery(jobKey=job.key)
    for proto, ctype, label in ((TBinaryProtocol.TBinaryProtocol, BINARY, "binary"),
                                (TJSONProtocol.TJSONProtocol, JSON, "json")):
        def ask(seqid):
            out = TTransport.TMemoryBuffer()
            c = mod.Client(proto(out))
            c._seqid = seqid
            c.send_getJobUpdateSummaries(query)
            status, _, data = post(port, out.getvalue(), {"Content-Type": ctype, "Accept": ctype})
            _, _, got = proto(TTransport.TMemoryBuffer(data)).readMessageBegin()
            answer = mod.Client(proto(TTransport.TMemoryBuffer(data))).recv_getJobUpdateSummaries()
            ids = [u.key.id for u in answer.result.getJobUpdateSummariesResult.updateSummaries]
            return status, got, sorted(ids)

        first = ask(11)
        second = ask(12)
        r.check("cached %s: answers carry their own sequence id" % label,
                (first[0], first[1], second[0], second[1]) == (200, 11, 200, 12), (first, second))
        r.check("cached %s: the same answer twice" % label, first[2] == second[2], (first, second))
        new = job_config(t, "cached", 2, "sleep %d" % (70 + len(first[2])))
        settings = t.JobUpdateSettings(updateGroupSize=2, minWaitInInstanceRunningMs=1000)
        started = writer.startJobUpdate(t.JobUpdateRequest(taskConfig=new.taskConfig, instanceCount=2,
                                                           settings=settings), "cached " + label)
        r.check("cached %s: startJobUpdate" % label, started.responseCode == t.ResponseCode.OK,
                started.details)
        if started.responseCode != t.ResponseCode.OK:
            return
        writer.abortJobUpdate(started.result.startJobUpdateResult.key, "next")
        third = ask(13)
        r.check("cached %s: a change shows at once" % label,
                third[1] == 13 and started.result.startJobUpdateResult.key.id in third[2], third)


def main():
    r = stgtest.Results("api_compat")
    t, mod = stgtest.load_stubs()
    d = stgtest.Daemon("--cluster=compat", "--runtime=simulated", "--max-frame-size=32768")
    try:
        r.run("HTTP JSON", story, r, t,
              client(mod, stgtest.HttpTransport(d.http_port, JSON, JSON), TJSONProtocol.TJSONProtocol),
              "http-json", "viajson")
        r.run("HTTP binary", story, r, t,
              client(mod, stgtest.HttpTransport(d.http_port, BINARY, BINARY), TBinaryProtocol.TBinaryProtocol),
              "http-binary", "viabinary")
        sock = TSocket.TSocket("127.0.0.1", d.thrift_port)
        framed = TTransport.TFramedTransport(sock)
        framed.open()
        r.run("TCP", story, r, t, client(mod, framed, TBinaryProtocol.TBinaryProtocol), "tcp", "viatcp")
        r.run("TCP plans", plans, r, t, client(mod, framed, TBinaryProtocol.TBinaryProtocol),
              "tcp plans", "tcpplan")
        framed.close()
        r.run("HTTP JSON plans", plans, r, t,
              client(mod, stgtest.HttpTransport(d.http_port, JSON, JSON), TJSONProtocol.TJSONProtocol),
              "http-json plans", "jsonplan")
        r.run("HTTP rules", http_rules, r, mod, d.http_port)
        r.run("origins", origins, r, t, mod, d.http_port)
        r.run("claimed user", claimed_user, r, t, mod, d.http_port)
        r.run("limits", limits, r, t, mod)
        r.run("deep nesting", deep_nesting, r, t, mod)
        r.run("cached reads", cached_reads, r, t, mod, d.http_port)
    finally:
        r.check("staggerd exits cleanly", d.stop() == 0)
        stgtest.cleanup_stubs()
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
