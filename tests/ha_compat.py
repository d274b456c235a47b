"""ha_compat.py: replicas on a real PostgreSQL, seen from outside.

Two staggerd replicas share one PostgreSQL started here. A stock Thrift
client (Debian's python3-thrift: THttpClient with TJSONProtocol, as
Aurora's own client talks) sent to the follower gets a 307 whose Location
is the leader's /api; THttpClient does not follow redirects itself, so the
test follows it the way any HTTP client does and the same call succeeds
there. The follower's framed TCP port answers with ERROR_TRANSIENT naming
the leader. The CLI, given the cluster's replicas in a clusters file (one
of them down), finds the leader by itself, before and after the leader is
killed. Ports 19000-19299.
"""
import json
import os
import shutil
import signal
import sys
import tempfile

from thrift.protocol import TBinaryProtocol, TJSONProtocol
from thrift.transport import THttpClient, TSocket, TTransport

import stgtest

LEASE_MS = 2000
BOUND_S = 10


def wait_leader(replicas):
    return stgtest.wait_leader(replicas, BOUND_S)


def stock_http_client(mod, url):
    transport = THttpClient.THttpClient(url)
    return transport, mod.Client(TJSONProtocol.TJSONProtocol(transport))


def redirect(r, t, mod, leader, follower):
    transport, c = stock_http_client(mod, follower.url + "/api")
    try:
        c.getJobSummary("")
        r.check("follower: a stock client's call is not served there", False)
    except Exception:  # noqa: BLE001 - the body is the redirect's text, not Thrift
        pass
    r.check("follower: 307 to a stock HTTP JSON client", transport.code == 307, transport.code)
    location = transport.headers.get("Location")
    r.check("follower: Location is the leader's /api", location == leader.url + "/api", location)
    transport, c = stock_http_client(mod, location)
    answer = c.getJobSummary("")
    r.check("leader: the same call succeeds at Location", answer.responseCode == t.ResponseCode.OK,
            answer.details)


def framed(r, t, mod, leader, follower):
    sock = TSocket.TSocket("127.0.0.1", follower.thrift_port)
    transport = TTransport.TFramedTransport(sock)
    c = mod.Client(TBinaryProtocol.TBinaryProtocol(transport))
    transport.open()
    try:
        answer = c.getJobSummary("")
    finally:
        transport.close()
    r.check("follower TCP: ERROR_TRANSIENT", answer.responseCode == t.ResponseCode.ERROR_TRANSIENT,
            answer.responseCode)
    message = answer.details[0].message if answer.details else ""
    r.check("follower TCP: the error names the leader", leader.url in message, message)


def cli(env, *args):
    return stgtest.run_cli(env, *args)


def job_file(tmp):
    path = os.path.join(tmp, "web.json")
    with open(path, "w") as f:
        json.dump({"cluster": "ha", "role": "www", "environment": "prod", "name": "web",
                   "instances": 2, "task": {"argv": ["sleep", "60"]}}, f)
    return path


def clusters(r, replicas, pg):
    tmp = tempfile.mkdtemp(prefix="stg-ha-cli-")
    os.makedirs(os.path.join(tmp, "stagger"))
    dead = "http://127.0.0.1:%d" % stgtest.free_port(19200, 19250)
    dead2 = "http://127.0.0.1:%d" % stgtest.free_port(19250, 19300)
    with open(os.path.join(tmp, "stagger", "clusters.json"), "w") as f:
        json.dump({"ha": [dead] + [x.url for x in replicas], "gone": [dead, dead2],
                   "typo": [replicas[0].url, "http//nowhere"]}, f)
    env = dict(os.environ, XDG_CONFIG_HOME=tmp)
    env.pop("STAGGER_URL", None)

    code, out, err = cli(env, "job", "create", "ha/www/prod/web", job_file(tmp))
    r.check("cli: job create finds the leader past a dead replica", code == 0, err)
    code, out, err = cli(env, "cluster", "status", "ha")
    r.check("cli: cluster status", code == 0 and "leader" in out and "PostgreSQL" in out, out + err)

    leader = wait_leader(replicas)
    leader.daemon.proc.send_signal(signal.SIGKILL)
    leader.daemon.proc.wait()
    survivor = wait_leader([x for x in replicas if x is not leader])
    r.check("takeover: the other replica leads", survivor is not leader)
    code, out, err = cli(env, "job", "list", "ha")
    r.check("cli: after the kill, the new leader answers", code == 0 and "ha/www/prod/web" in out,
            out + err)

    code, out, err = cli(env, "job", "list", "gone")
    r.check("cli: no replica answers: exit 4, each named",
            code == 4 and dead in err and dead2 in err, (code, err))
    code, out, err = cli(env, "job", "list", "typo")
    r.check("cli: a bad URL among the replicas: exit 3", code == 3 and "http//nowhere" in err,
            (code, err))
    shutil.rmtree(tmp, ignore_errors=True)
    code, out, err = cli(env, "cluster", "status", "bad/name")
    r.check("cli: a bad cluster name is a usage error", code == 2, (code, err))


def main():
    r = stgtest.Results("ha_compat")
    t, mod = stgtest.load_stubs()
    pg = stgtest.Postgres(range(19000, 19100))
    replicas = []
    try:
        for low in (19100, 19150):
            replicas.append(stgtest.Replica(pg, stgtest.free_port(low, low + 50), LEASE_MS))
        leader = wait_leader(replicas)
        follower = next(x for x in replicas if x is not leader)
        r.run("redirect", redirect, r, t, mod, leader, follower)
        r.run("framed", framed, r, t, mod, leader, follower)
        r.run("clusters file", clusters, r, replicas, pg)
    finally:
        stgtest.stop_replicas(replicas)
        pg.close()
        stgtest.cleanup_stubs()
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
