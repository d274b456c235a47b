"""partition_history.py: what a partition run recorded, and the checks on it.

A History is a list of records, each a dict with a "kind" and a time "t"
(seconds since the Unix epoch, this machine's clock, which every process
of the test bed shares), kept in memory and written as JSON lines:

  call     a client call: op (update, drain, undrain), its arguments, the
           outcome ("ok", "fail" with a clear error, "unknown" when the
           client could not tell: a timeout, a lost connection), detail
  fault    a fault injected or healed (name, targets, phase start/heal)
  leader   a replica took the lead: epoch, replica, t (when, by its log)
  action   a request a replica sent to a host's engine that changes
           something (create, start, stop, remove, exec, pull): epoch,
           replica, host, method, path
  engine   what a host's engine did (its event log): host, status
           (create, start, died, remove...), container id and name, and
           the container's labels (the epoch that ordered its creation)
  db       the store's updates around a failover (phase before: read from
           the primary; after: from the promoted server): {id: [status,
           active, events]}
  old-primary  an old primary back and writable for a while: its
           leadership epoch at the start and end, and how many replicas'
           signs of life it got meanwhile

check() compares it with the final state (read once everything is healed
and quiet) and returns the anomalies, each a short sentence; none is a
pass. The checks, after Jepsen's way of judging a distributed system:

  1. one leader at a time: no action of epoch e is sent after epoch e+1
     took over, and no engine creates or starts a container of epoch e
     after epoch e+1's first action; the database's events of an older
     epoch never follow one of a newer epoch (counted by the caller);
  2. updates: every update a call was told was started exists, once; one
     the client was told failed does not; no call's update exists twice;
     every update ended, and ended ROLLED_FORWARD, unless an instance of it
     was lost with a host that a fault kept away for the grace period;
  3. the end: every instance has exactly one container, running, of the
     run and config the store records; no other container of ours;
  4. every call's outcome is knowable: ok, a clear error, or (unknown)
     found afterwards in the store or not, but never unexplained; a
     host's drain state is what its last call left;
  5. failovers: every update read from the primary before is on the
     promoted server after, with no fewer events and the same end if it
     had ended; an old primary that came back writable got no write.

Pure functions on plain data, so tests/partition_checker_test.py can feed
it histories that must fail.
"""
import json
import re
import threading
import time

ROLLED_FORWARD = 4
TERMINAL = {4: "ROLLED_FORWARD", 5: "ROLLED_BACK", 6: "ABORTED", 7: "ERROR", 8: "FAILED"}


class History:
    def __init__(self, path=None):
        self.records = []
        self.lock = threading.Lock()
        self.file = open(path, "w") if path else None

    def add(self, kind, **fields):
        fields["kind"] = kind
        fields.setdefault("t", time.time())
        with self.lock:
            self.records.append(fields)
            if self.file:
                self.file.write(json.dumps(fields, sort_keys=True) + "\n")
                self.file.flush()
        return fields

    def of(self, kind):
        with self.lock:
            return [r for r in self.records if r["kind"] == kind]

    def close(self):
        if self.file:
            self.file.close()
            self.file = None


def takeovers(records):
    """epoch -> when it took the lead (the earliest report of it)."""
    out = {}
    for r in records:
        if r["kind"] == "leader":
            out[r["epoch"]] = min(r["t"], out.get(r["epoch"], r["t"]))
    return out


def first_actions(records):
    """epoch -> its first action (sent, or seen done by an engine)."""
    out = {}
    for r in records:
        e = r.get("epoch") if r["kind"] == "action" else container_epoch(r)
        if r["kind"] in ("action", "engine") and e:
            out[e] = min(r["t"], out.get(e, r["t"]))
    return out


def container_epoch(record):
    try:
        return int(record.get("labels", {}).get("org.stagger.epoch", "0"))
    except ValueError:
        return 0


def _next_after(table, epoch):
    """The time of the first epoch after @epoch in @table, or None."""
    later = [t for e, t in table.items() if e > epoch]
    return min(later) if later else None


def check_one_leader(records):
    anomalies = []
    took = takeovers(records)
    first = first_actions(records)
    epochs = sorted(took)
    for a, b in zip(epochs, epochs[1:]):
        if b != a + 1:
            anomalies.append("epochs %d to %d: no replica was seen taking epochs in between" % (a, b))
    for r in records:
        if r["kind"] == "action":
            after = _next_after(took, r["epoch"])
            if after is not None and r["t"] >= after:
                anomalies.append("%s (epoch %d) sent %s %s to %s at %.3f, %.3f s after a newer "
                                 "epoch took over" % (r["replica"], r["epoch"], r["method"],
                                                      r["path"], r["host"], r["t"], r["t"] - after))
        elif r["kind"] == "engine" and r["status"] in ("create", "start"):
            e = container_epoch(r)
            after = _next_after(first, e)
            if e and after is not None and r["t"] >= after:
                anomalies.append("%s: %s of container %s (epoch %d) at %.3f, %.3f s after a newer "
                                 "epoch's first action" % (r["host"], r["status"], r["name"], e,
                                                           r["t"], r["t"] - after))
    return anomalies


def host_away(records, host, start, end, lost_after):
    """Whether a fault cut @host from the replicas for at least @lost_after seconds
    at some time between @start and @end."""
    open_at = {}
    for r in sorted((r for r in records if r["kind"] == "fault"), key=lambda r: r["t"]):
        if not any(host in pair for pair in r.get("cut", [])):
            continue
        key = (r["name"], tuple(map(tuple, r.get("cut", []))))
        if r["phase"] == "start":
            open_at[key] = r["t"]
        elif key in open_at:
            began = open_at.pop(key)
            if r["t"] - began >= lost_after and began <= end and r["t"] >= start - lost_after:
                return True
    return False


def explained_end(records, u, lost_after):
    """An update may end FAILED or ROLLED_BACK when an instance of it was lost with a
    host that a fault really kept away for the grace period (an instance lost
    counts as its failure, as in Aurora)."""
    m = re.search(r"lost: host (\S+) has not answered", u.get("reason", ""))
    return (u["status"] in (5, 8) and m is not None and lost_after is not None
            and host_away(records, m.group(1), u["start"], u["end"], lost_after))


def check_updates(records, updates, lost_after=None):
    """@updates: the store's updates, each {"id", "call", "status", "active", "start",
    "end", "reason"} (call: the number the client's message gave it, or None; reason:
    its last event's message)."""
    anomalies = []
    by_call = {}
    for u in updates:
        by_call.setdefault(u["call"], []).append(u)
    for r in records:
        if r["kind"] != "call" or r["op"] != "update":
            continue
        found = by_call.get(r["call"], [])
        if len(found) > 1:
            anomalies.append("call %d: %d updates (%s)" % (r["call"], len(found),
                                                            ", ".join(str(u["id"]) for u in found)))
        if r["outcome"] == "ok" and not found:
            anomalies.append("call %d: the client was told the update started, and there is "
                             "none" % r["call"])
        if r["outcome"] == "fail" and found:
            anomalies.append("call %d: the client was told it failed (%s), yet update %s exists"
                             % (r["call"], r["detail"], found[0]["id"]))
        r["resolved"] = "happened" if found else "did not happen"
    for u in updates:
        if u["active"]:
            anomalies.append("update %s (call %s) never ended" % (u["id"], u["call"]))
        elif u["status"] != ROLLED_FORWARD and not explained_end(records, u, lost_after):
            anomalies.append("update %s (call %s) ended %s: %s" % (
                u["id"], u["call"], TERMINAL.get(u["status"], str(u["status"])),
                u.get("reason", "")))
    return anomalies


def check_end(instances, containers):
    """@instances: the store's, each {"instance", "run", "config"}; @containers: every
    container of ours on every host, each {"host", "id", "state", "instance", "run",
    "config"} (labels read as ints)."""
    anomalies = []
    by_instance = {}
    for c in containers:
        by_instance.setdefault(c["instance"], []).append(c)
    for i in instances:
        mine = by_instance.pop(i["instance"], [])
        where = ", ".join("%s:%s run %s %s" % (c["host"], c["id"][:12], c["run"], c["state"])
                          for c in mine)
        if len(mine) != 1:
            anomalies.append("instance %d has %d containers (%s)" % (i["instance"], len(mine),
                                                                     where or "none"))
            continue
        c = mine[0]
        if c["state"] != "running" or c["run"] != i["run"] or c["config"] != i["config"]:
            anomalies.append("instance %d: the store says run %d of config %d, the host runs %s"
                             % (i["instance"], i["run"], i["config"], where))
    for instance, left in sorted(by_instance.items()):
        anomalies.append("%d container(s) of instance %s, which the store does not have" % (
            len(left), instance))
    return anomalies


def check_drains(records, drained):
    """@drained: the hosts the store has drained at the end. Each host's drain state
    is its last drain or undrain call's when that one was ok, the one before it when
    it failed; an unknown one is resolved by the store."""
    anomalies = []
    state = {}
    for r in sorted((r for r in records if r["kind"] == "call" and r["op"] in
                     ("drain", "undrain")), key=lambda r: r["t"]):
        want = r["op"] == "drain"
        before = state.get(r["host"], False)
        if r["outcome"] == "ok":
            state[r["host"]] = want
        elif r["outcome"] == "fail":
            state[r["host"]] = before
        else:
            state[r["host"]] = None  # either, as the store says
            r["resolved"] = "happened" if (r["host"] in drained) == want else "did not happen"
    for host, want in sorted(state.items()):
        if want is not None and want != (host in drained):
            anomalies.append("host %s: the calls left it %s, the store has it %s" % (
                host, "drained" if want else "open", "drained" if host in drained else "open"))
    return anomalies


def check_calls(records):
    anomalies = []
    for r in records:
        if r["kind"] == "call" and r["outcome"] not in ("ok", "fail", "unknown"):
            anomalies.append("call %s (%s): an outcome nobody can read: %s" % (
                r.get("call"), r["op"], r.get("detail")))
    return anomalies


def check_failovers(records):
    """Around each failover, the updates read from the primary before ("db" records,
    phase before) and from the promoted server after (phase after): none missing,
    none with fewer events, none whose end changed (synchronous replication loses
    nothing acknowledged). A writable old primary ("old-primary" records) got no
    write: its epoch unchanged, no replica's sign of life."""
    anomalies = []
    before = None
    for r in records:
        if r["kind"] == "old-primary":
            if r["epoch_before"] != r["epoch_after"] or r["alive"]:
                anomalies.append("the old primary %s, writable again, was written to (epoch %s "
                                 "to %s, %d signs of life)" % (r["server"], r["epoch_before"],
                                                              r["epoch_after"], r["alive"]))
        if r["kind"] != "db":
            continue
        if r["phase"] == "before":
            before = r
            continue
        if before is None:
            continue
        for uid, (status, active, events) in sorted(before["updates"].items()):
            now = r["updates"].get(uid)
            if now is None:
                anomalies.append("failover from %s: update %s is gone" % (r["old"], uid))
            elif now[2] < events:
                anomalies.append("failover from %s: update %s went back from %d events to %d"
                                 % (r["old"], uid, events, now[2]))
            elif not active and (now[0], now[1]) != (status, active):
                anomalies.append("failover from %s: update %s had ended %s, now %s (active %d)"
                                 % (r["old"], uid, TERMINAL.get(status, status),
                                    TERMINAL.get(now[0], now[0]), now[1]))
        before = None
    return anomalies


def check(records, updates, instances, containers, drained=(), db_epoch_violations=0,
          lost_after=None):
    anomalies = check_one_leader(records)
    anomalies += check_failovers(records)
    if db_epoch_violations:
        anomalies.append("%d database events of an older epoch after a newer one" %
                         db_epoch_violations)
    anomalies += check_updates(records, updates, lost_after)
    anomalies += check_drains(records, set(drained))
    anomalies += check_end(instances, containers)
    anomalies += check_calls(records)
    return anomalies
