"""partition_checker_test.py: the partition campaign's checker must fail.

tests/partition_history.py judges a partition run; a checker that finds
nothing proves nothing. Each case here feeds it a small history with one
known anomaly (an old leader acting after a takeover, an update lost,
doubled or ended badly, two containers for one instance...) and expects
exactly that one to be reported; a clean history must give none.
"""
import sys

import partition_history as ph
import stgtest


def leader(t, epoch):
    return {"kind": "leader", "t": t, "epoch": epoch, "replica": "r%d" % epoch}


def action(t, epoch, method="POST", path="/containers/create?name=x"):
    return {"kind": "action", "t": t, "epoch": epoch, "replica": "r%d" % epoch,
            "method": method, "path": path, "host": "h0"}


def engine(t, status, epoch, name="c"):
    return {"kind": "engine", "t": t, "host": "h0", "status": status, "container": "ab" * 32,
            "name": name, "labels": {"org.stagger.epoch": str(epoch)}}


def call(n, outcome, detail=""):
    return {"kind": "call", "op": "update", "t": 10.0 + n, "start": 9.0 + n, "call": n,
            "outcome": outcome, "detail": detail}


def update(uid, n, status=ph.ROLLED_FORWARD, active=False):
    return {"id": uid, "call": n, "status": status, "active": active}


INSTANCES = [{"instance": 0, "run": 2, "config": 5}, {"instance": 1, "run": 1, "config": 5}]


def container(instance, run, host="h0", state="running", config=5, cid=None):
    return {"host": host, "id": cid or ("%02d" % (instance * 10 + run)) * 32, "state": state,
            "instance": instance, "run": run, "config": config}


CONTAINERS = [container(0, 2), container(1, 1, host="h1")]

CLEAN = [leader(1.0, 1), action(1.5, 1), engine(1.6, "create", 1), engine(1.7, "start", 1),
         leader(5.0, 2), engine(5.1, "died", 1), action(5.5, 2), engine(5.6, "create", 2),
         call(1, "ok"), call(2, "fail", "another update is active"), call(3, "unknown")]
UPDATES = [update(1, 1), update(2, 3)]


def drain(t, op, outcome, host="h1"):
    return {"kind": "call", "op": op, "t": t, "start": t - 1, "call": 9, "host": host,
            "outcome": outcome, "detail": ""}


def anomalies(records=None, updates=None, instances=None, containers=None, drained=(), db=0):
    return ph.check([dict(r) for r in (CLEAN if records is None else records)],
                    UPDATES if updates is None else updates,
                    INSTANCES if instances is None else instances,
                    CONTAINERS if containers is None else containers, drained, db)


def expect_one(r, name, found, words):
    r.check(name, len(found) == 1 and all(w in found[0] for w in words), found)


def main():
    r = stgtest.Results("partition_checker_test")
    r.check("a clean history has no anomaly", anomalies() == [], anomalies())
    expect_one(r, "an old epoch's request after a takeover",
               anomalies(CLEAN + [action(5.2, 1, "DELETE", "/containers/x")]),
               ["epoch 1", "DELETE", "after a newer epoch took over"])
    expect_one(r, "an old epoch's container created after the new epoch's first action",
               anomalies(CLEAN + [engine(5.7, "create", 1, "late")]),
               ["late", "epoch 1", "first action"])
    r.check("an old epoch's container created before the new epoch acted is fine",
            anomalies(CLEAN + [engine(5.3, "create", 1, "early")]) == [])
    expect_one(r, "a leader change nobody saw",
               anomalies(CLEAN + [leader(9.0, 4)]), ["epochs 2 to 4"])
    expect_one(r, "database events out of epoch order", anomalies(db=3), ["3 database events"])
    expect_one(r, "an update the client was told started, lost",
               anomalies(updates=[update(2, 3)]), ["call 1", "there is none"])
    expect_one(r, "an update doubled",
               anomalies(updates=UPDATES + [update(3, 1)]), ["call 1: 2 updates"])
    expect_one(r, "an update the client was told failed, done anyway",
               anomalies(updates=UPDATES + [update(3, 2)]), ["call 2", "told it failed"])
    expect_one(r, "an update rolled back",
               anomalies(updates=[update(1, 1, status=5), update(2, 3)]), ["ROLLED_BACK"])
    lost = dict(update(1, 1, status=8), start=20.0, end=40.0,
                reason="failure threshold reached: ...; last: lost: host h1 has not answered "
                       "for 6 s (timed out)")
    away = [{"kind": "fault", "t": 21.0, "name": "host-moved", "phase": "start",
             "cut": [["h1", "r0"], ["r0", "h1"]]},
            {"kind": "fault", "t": 29.0, "name": "host-moved", "phase": "heal",
             "cut": [["h1", "r0"], ["r0", "h1"]]}]
    r.check("an update failed by an instance lost with a host kept away is fine",
            ph.check(CLEAN + away, [lost, update(2, 3)], INSTANCES, CONTAINERS, (), 0, 6) == [])
    short = [dict(away[0]), dict(away[1], t=24.0)]
    found = ph.check(CLEAN + short, [lost, update(2, 3)], INSTANCES, CONTAINERS, (), 0, 6)
    expect_one(r, "an update failed by a loss no fault explains", found, ["ended FAILED"])
    expect_one(r, "an update that never ended",
               anomalies(updates=[update(1, 1, status=0, active=True), update(2, 3)]),
               ["never ended"])
    expect_one(r, "an instance with two containers",
               anomalies(containers=CONTAINERS + [container(0, 2, host="h2", cid="ff" * 32)]),
               ["instance 0 has 2 containers"])
    expect_one(r, "an instance with none", anomalies(containers=CONTAINERS[:1]),
               ["instance 1 has 0 containers"])
    expect_one(r, "an instance running another run than the store's",
               anomalies(containers=[container(0, 1), CONTAINERS[1]]), ["instance 0", "run 2"])
    expect_one(r, "an instance whose container has exited",
               anomalies(containers=[container(0, 2, state="exited"), CONTAINERS[1]]),
               ["instance 0", "exited"])
    expect_one(r, "a container of an instance the store does not have",
               anomalies(containers=CONTAINERS + [container(7, 1)]), ["instance 7"])
    drains = [drain(20, "drain", "ok"), drain(30, "undrain", "ok")]
    r.check("a host drained and opened again is open", anomalies(CLEAN + drains) == [])
    expect_one(r, "a host left drained after an undrain that was ok",
               anomalies(CLEAN + drains, drained=["h1"]), ["host h1", "store has it drained"])
    r.check("an undrain that failed leaves the host drained",
            anomalies(CLEAN + drains[:1] + [drain(30, "undrain", "fail")], drained=["h1"]) == [])
    r.check("an undrain of unknown outcome is as the store says",
            anomalies(CLEAN + drains[:1] + [drain(30, "undrain", "unknown")],
                      drained=["h1"]) == [])
    expect_one(r, "a call whose outcome nobody can read",
               anomalies(CLEAN + [drain(40, "drain", "unclear", host="h2")], drained=["h2"]),
               ["nobody can read"])
    # Failovers: the updates read before from the primary, after from the promoted one.
    seen = {"1": [ph.ROLLED_FORWARD, 0, 9], "2": [0, 1, 4]}
    failover = [{"kind": "db", "t": 40.0, "phase": "before", "old": "db", "updates": seen},
                {"kind": "db", "t": 42.0, "phase": "after", "old": "db",
                 "updates": {"1": [ph.ROLLED_FORWARD, 0, 9], "2": [0, 1, 6]}}]
    r.check("a failover that kept every update (one moved on) is fine",
            anomalies(CLEAN + failover) == [], anomalies(CLEAN + failover))

    def after(updates):
        return CLEAN + [failover[0], dict(failover[1], updates=updates)]
    expect_one(r, "an update gone in a failover",
               anomalies(after({"1": [ph.ROLLED_FORWARD, 0, 9]})), ["update 2 is gone"])
    expect_one(r, "an update that went back in a failover",
               anomalies(after({"1": [ph.ROLLED_FORWARD, 0, 9], "2": [0, 1, 3]})),
               ["update 2 went back", "4 events to 3"])
    expect_one(r, "an ended update active again after a failover",
               anomalies(after({"1": [0, 1, 9], "2": [0, 1, 4]})),
               ["update 1 had ended ROLLED_FORWARD"])
    old = {"kind": "old-primary", "t": 45.0, "server": "db", "epoch_before": [["3"]],
           "epoch_after": [["3"]], "alive": 0}
    r.check("an old primary left alone is fine", anomalies(CLEAN + [old]) == [])
    expect_one(r, "an old primary whose epoch moved",
               anomalies(CLEAN + [dict(old, epoch_after=[["4"]])]), ["old primary db"])
    expect_one(r, "an old primary with a replica's sign of life",
               anomalies(CLEAN + [dict(old, alive=1)]), ["1 signs of life"])
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
