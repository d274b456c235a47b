"""limits_compat.py: staggerd's limits against clients that hold on: 32
HTTP bodies and 32 TCP frames, each announced as 16 MiB and stalled half
way, keep staggerd's memory under 100 MiB while /health answers; 1,000
coordinators connecting over TCP at once are every one answered.
"""
import http.client
import os
import selectors
import socket
import struct
import sys
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
        kept = 0
        for i in range(32):
            for port, start in ((d.http_port, head), (d.thrift_port, frame)):
                s = socket.create_connection(("127.0.0.1", port), timeout=10)
                socks.append(s)
                kept += stall(s, start, 8 * MIB)
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
        r.run("coordinators", coordinators, r, t, mod)
    finally:
        stgtest.cleanup_stubs()
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
