"""limits_compat.py: staggerd's limits against clients that hold on: 32
HTTP bodies and 32 TCP frames, each announced as 16 MiB and stalled half
way, keep staggerd's memory under 100 MiB while /health answers; large
unfinished frames and bodies, from one address or from several that fill
all but the reserve, refuse only their senders: a normal client's pulse
and read (from 127.0.0.2) are answered on TCP and over HTTP; 1,000
coordinators connecting over TCP at once are every one answered.
"""
import fcntl
import http.client
import os
import selectors
import socket
import struct
import sys
import termios
import time

from thrift.protocol import TBinaryProtocol
from thrift.transport import TTransport

import stgtest

MIB = 1024 * 1024


def rss_mib(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("inf")


def health(port):
    start = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/health")
    status = conn.getresponse().status
    conn.close()
    return status, (time.monotonic() - start) * 1000


def stall(sock, head, size):
    """Sends @head and @size bytes of body, as far as staggerd takes them."""
    try:
        sock.sendall(head)
        chunk = b"x" * MIB
        for _ in range(size // MIB):
            sock.sendall(chunk)
        return True
    except OSError:
        return False   # dropped: what the limit is for


def refused(socks, timeout):
    """The sockets of @socks that staggerd has closed or answered, once some
    are or @timeout seconds have passed."""
    sel = selectors.DefaultSelector()
    for s in socks:
        sel.register(s, selectors.EVENT_READ)
    done = set()
    deadline = time.monotonic() + timeout
    while not done and time.monotonic() < deadline:
        for key, _ in sel.select(timeout=0.2):
            done.add(key.fileobj)
    # What else is ready now counts too.
    for key, _ in sel.select(timeout=0.5):
        done.add(key.fileobj)
    sel.close()
    return done


def stalled_bodies(r, t, mod):
    # AddressSanitizer keeps freed memory in a quarantine (256 MiB by
    # default), which is the sanitizer's and not staggerd's: keep it small.
    os.environ["ASAN_OPTIONS"] = os.environ.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=8"
    d = stgtest.Daemon("--runtime=simulated")
    del os.environ["ASAN_OPTIONS"]
    socks = []
    try:
        before = rss_mib(d.proc.pid, "VmRSS")
        head = (b"POST /api HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-thrift\r\n"
                b"Content-Length: %d\r\n\r\n" % (16 * MIB))
        frame = struct.pack(">I", 16 * MIB)
        for i in range(32):
            for port, start in ((d.http_port, head), (d.thrift_port, frame)):
                s = socket.create_connection(("127.0.0.1", port), timeout=10)
                socks.append(s)
                stall(s, start, 8 * MIB)
        # A refused request ends: its connection is closed, or answered
        # (503) once its body was read to the end; a kept one waits for the
        # rest of its body and stays silent. The kernel may have taken a
        # refused one's bytes before staggerd looked at them, so wait (10 s
        # at most) until staggerd has refused some.
        kept = len(socks) - len(refused(socks, 10))
        status, ms = health(d.http_port)
        peak = rss_mib(d.proc.pid, "VmHWM")
        print("RSS before %.1f MiB, peak %.1f MiB; %d of 64 stalled requests kept; /health %.1f ms"
              % (before, peak, kept, ms))
        r.check("64 stalled 16 MiB requests keep RSS under 100 MiB", peak < 100, peak)
        r.check("/health answers meanwhile", status == 200, status)
        r.check("some requests were dropped", kept < 64, kept)
    finally:
        for s in socks:
            s.close()
        r.check("staggerd exits cleanly (stalled bodies)", d.stop() == 0)


def recv_exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed after %d of %d bytes" % (len(data), n))
        data += chunk
    return data


def tcp_call(mod, port, source, name, *args):
    """One call over framed TCP from @source; returns its Response."""
    buf = TTransport.TMemoryBuffer()
    getattr(mod.Client(TBinaryProtocol.TBinaryProtocol(buf)), "send_" + name)(*args)
    body = buf.getvalue()
    s = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))
    try:
        s.sendall(struct.pack(">I", len(body)) + body)
        size = struct.unpack(">I", recv_exact(s, 4))[0]
        reply = TTransport.TMemoryBuffer(recv_exact(s, size))
    finally:
        s.close()
    return getattr(mod.Client(TBinaryProtocol.TBinaryProtocol(reply)), "recv_" + name)()


def http_call(mod, port, source, name, *args):
    """One call over HTTP (/api, binary) from @source; returns its Response."""
    transport = stgtest.HttpTransport(port, "application/vnd.apache.thrift.binary", "application/vnd.apache.thrift.binary",
                                      source=source)
    return getattr(mod.Client(TBinaryProtocol.TBinaryProtocol(transport)), name)(*args)


def unread_by_server(server_port, sock):
    """Bytes sent on @sock that the server (127.0.0.1:@server_port) has not
    read yet, from /proc/net/tcp; None once its side is no longer open."""
    ip, port = sock.getsockname()
    local = "0100007F:%04X" % server_port
    remote = "%08X:%04X" % (struct.unpack("<I", socket.inet_aton(ip))[0], port)
    with open("/proc/net/tcp") as f:
        for line in f.read().splitlines()[1:]:
            p = line.split()
            if p[1] == local and p[2] == remote and p[3] == "01":  # ESTABLISHED
                return int(p[4].split(":")[1], 16)
    return None


def hold_frame(port, source, size):
    """A TCP connection from @source with a frame of @size bytes announced
    and all but its last byte sent; returns (socket, kept): kept once
    staggerd has read every byte and keeps the connection, not kept when it
    closes it."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30, source_address=(source, 0))
    try:
        s.sendall(struct.pack(">I", size) + b"x" * (size - 1))
    except OSError:
        return s, False
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        unread = unread_by_server(port, s)
        if unread is None:
            return s, False
        unsent = struct.unpack("i", fcntl.ioctl(s.fileno(), termios.TIOCOUTQ, b"\0" * 4))[0]
        if unread == 0 and unsent == 0:
            return s, True
        time.sleep(0.01)
    raise RuntimeError("staggerd neither read nor closed a frame from %s" % source)


def hold_body(port, source, size):
    """An HTTP request from @source announcing a body of @size bytes, all
    but its last byte sent."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30, source_address=(source, 0))
    head = (b"POST /api HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-thrift\r\n"
            b"Content-Length: %d\r\n\r\n" % size)
    stall(s, head + b"x" * (size - 1), 0)
    return s


def normal_client(r, t, mod, d, label, key):
    """A pulse and a read from 127.0.0.2 over TCP and HTTP, each answered OK."""
    ok = t.ResponseCode.OK
    for kind, call, port in (("TCP", tcp_call, d.thrift_port), ("HTTP", http_call, d.http_port)):
        for name, args in (("pulseJobUpdate", (key,)), ("getJobs", ("www",))):
            try:
                resp = call(mod, port, "127.0.0.2", name, *args)
                code, why = resp.responseCode, resp.details
            except Exception as e:  # refused, closed, or no answer
                code, why = None, repr(e)
            r.check("%s: a normal client's %s over %s is answered" % (label, name, kind),
                    code == ok, why)


def coordinated_update(t, mod, d):
    """A job and an update that waits for pulses; returns the update's key."""
    c = mod.Client(TBinaryProtocol.TBinaryProtocol(stgtest.HttpTransport(
        d.http_port, "application/vnd.apache.thrift.binary", "application/vnd.apache.thrift.binary")))
    key = t.JobKey(role="www", environment="prod", name="pulsed")

    def config(command):
        task = t.TaskConfig(job=key, owner=t.Identity(user="www"), isService=True, priority=0,
                            maxTaskFailures=1, resources={t.Resource(numCpus=0.25)},
                            executorConfig=t.ExecutorConfig(
                                name="stagger", data='{"command": "%s"}' % command))
        return t.JobConfiguration(key=key, owner=t.Identity(user="www"), taskConfig=task,
                                  instanceCount=2)

    created = c.createJob(config("sleep 60"))
    assert created.responseCode == t.ResponseCode.OK, created.details
    settings = t.JobUpdateSettings(updateGroupSize=1, minWaitInInstanceRunningMs=1000,
                                   blockIfNoPulsesAfterMs=600000)
    started = c.startJobUpdate(t.JobUpdateRequest(taskConfig=config("sleep 61").taskConfig,
                                                  instanceCount=2, settings=settings), "pulsed")
    assert started.responseCode == t.ResponseCode.OK, started.details
    return started.result.startJobUpdateResult.key


def one_address_holds_its_share(r, t, mod):
    """Three frames and three bodies of 16 MiB minus a byte from 127.0.0.1:
    its share (one largest message) is all it gets; others are answered."""
    d = stgtest.Daemon("--runtime=simulated")
    socks = []
    try:
        key = coordinated_update(t, mod, d)
        kept = 0
        for _ in range(3):
            s, open_ = hold_frame(d.thrift_port, "127.0.0.1", 16 * MIB)
            socks.append(s)
            kept += open_
        for _ in range(3):
            socks.append(hold_body(d.http_port, "127.0.0.1", 16 * MIB))
        r.check("one address: one of its 16 MiB frames is kept, the others refused", kept == 1,
                kept)
        normal_client(r, t, mod, d, "one address", key)
        status, _ = health(d.http_port)
        r.check("one address: /health answers", status == 200, status)
    finally:
        for s in socks:
            s.close()
        r.check("staggerd exits cleanly (one address)", d.stop() == 0)


def large_senders_leave_the_reserve(r, t, mod):
    """Four addresses fill all of the budget but its reserve with large
    frames (48 MiB, 1 MiB of it reserved: 4 x 11.75 MiB); a fifth large one
    is refused, and small messages from elsewhere still get in."""
    d = stgtest.Daemon("--runtime=simulated")
    socks = []
    try:
        key = coordinated_update(t, mod, d)
        share = (48 - 1) * MIB // 4
        kept = 0
        for source in ("127.0.0.1", "127.0.0.3", "127.0.0.4", "127.0.0.5"):
            s, open_ = hold_frame(d.thrift_port, source, share)
            socks.append(s)
            kept += open_
        r.check("reserve: four large frames fill all but the reserve", kept == 4, kept)
        s, open_ = hold_frame(d.thrift_port, "127.0.0.6", MIB)
        socks.append(s)
        r.check("reserve: a fifth large frame finds no room", not open_)
        normal_client(r, t, mod, d, "reserve", key)
    finally:
        for s in socks:
            s.close()
        r.check("staggerd exits cleanly (reserve)", d.stop() == 0)


def get_jobs_frame(mod):
    buf = TTransport.TMemoryBuffer()
    mod.Client(TBinaryProtocol.TBinaryProtocol(buf)).send_getJobs("www")
    body = buf.getvalue()
    return struct.pack(">I", len(body)) + body


def coordinators(r, t, mod, count=1000):
    d = stgtest.Daemon("--runtime=simulated")
    sel = selectors.DefaultSelector()
    frame = get_jobs_frame(mod)
    answered = 0
    try:
        for i in range(count):
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", d.thrift_port))
            sel.register(s, selectors.EVENT_WRITE, [frame, b""])
        deadline = time.monotonic() + 120
        while len(sel.get_map()) > 0 and time.monotonic() < deadline:
            for key, events in sel.select(timeout=1):
                s, state = key.fileobj, key.data
                try:
                    if events & selectors.EVENT_WRITE:
                        sent = s.send(state[0])
                        state[0] = state[0][sent:]
                        if not state[0]:
                            sel.modify(s, selectors.EVENT_READ, state)
                        continue
                    data = s.recv(65536)
                except OSError:
                    data = b""
                state[1] += data
                size = struct.unpack(">I", state[1][:4])[0] if len(state[1]) >= 4 else -1
                if data == b"" or len(state[1]) >= size + 4:
                    answered += size >= 0 and len(state[1]) >= size + 4
                    sel.unregister(s)
                    s.close()
        print("%d of %d coordinators answered" % (answered, count))
        r.check("%d coordinators over TCP, every one answered" % count, answered == count, answered)
    finally:
        for key in list(sel.get_map().values()):
            key.fileobj.close()
        r.check("staggerd exits cleanly (coordinators)", d.stop() == 0)


def main():
    r = stgtest.Results("limits_compat")
    t, mod = stgtest.load_stubs()
    try:
        r.run("stalled bodies", stalled_bodies, r, t, mod)
        r.run("one address holds its share", one_address_holds_its_share, r, t, mod)
        r.run("large senders leave the reserve", large_senders_leave_the_reserve, r, t, mod)
        r.run("coordinators", coordinators, r, t, mod)
    finally:
        stgtest.cleanup_stubs()
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
