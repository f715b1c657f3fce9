#!/usr/bin/env python3
"""Hostile clients against a running `supercolumn serve`, over loopback only.

Each attack runs against a fresh server process on the same data directory; meanwhile a
normal client connects, starts up and runs a query every 200 ms. Printed per attack: the
server's peak resident memory (VmHWM) and the normal client's slowest round trip during the
attack and after it. Also pages a 200,000-row partition at page sizes 10, 100 and 5,000 and
prints the time per page at the start and the end, and the peak memory.

    cargo build --release -p supercolumn-tools
    python3 scripts/attacks.py target/release/supercolumn [ATTACKS]

ATTACKS (optional) is a comma-separated list of attack numbers (1,2,3,4,8) to run alone,
without the paging figures.

Every loop is bounded in count and time; it sends traffic to 127.0.0.1 only.
"""

import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

HOST = "127.0.0.1"
QUERY, STARTUP, READY, RESULT, PREPARE, ERROR = 0x07, 0x01, 0x02, 0x08, 0x09, 0x00


def frame(stream, opcode, body, flags=0):
    return struct.pack(">BBhBi", 4, flags, stream, opcode, len(body)) + body


def string_map(pairs):
    b = struct.pack(">H", len(pairs))
    for k, v in pairs:
        for s in (k, v):
            s = s.encode()
            b += struct.pack(">H", len(s)) + s
    return b


def query_body(q, page_size=None, state=None):
    q = q.encode()
    flags = (0x04 if page_size else 0) | (0x08 if state else 0)
    b = struct.pack(">i", len(q)) + q + struct.pack(">HB", 1, flags)
    if page_size:
        b += struct.pack(">i", page_size)
    if state:
        b += struct.pack(">i", len(state)) + state
    return b


def read_frame(s):
    h = recv_exact(s, 9)
    if h is None:
        return None
    _, flags, stream, opcode, length = struct.unpack(">BBhBi", h)
    body = recv_exact(s, length)
    return (opcode, stream, body)


def recv_exact(s, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def ready(port, compression=None, timeout=10):
    s = socket.create_connection((HOST, port), timeout=timeout)
    opts = [("CQL_VERSION", "3.4.5")] + ([("COMPRESSION", compression)] if compression else [])
    s.sendall(frame(0, STARTUP, string_map(opts)))
    f = read_frame(s)
    assert f and f[0] == READY, f
    return s


def run(port, q):
    s = ready(port)
    s.sendall(frame(1, QUERY, query_body(q)))
    f = read_frame(s)
    s.close()
    return f


def paging_state(body):
    kind, flags, _ = struct.unpack(">iii", body[:12])
    if kind == 2 and flags & 0x02:
        n = struct.unpack(">i", body[12:16])[0]
        return body[16 : 16 + n]
    return None


class Server:
    def __init__(self, binary, data):
        self.proc = subprocess.Popen(
            [binary, "--data", data, "serve", "--listen", f"{HOST}:0"],
            stderr=subprocess.PIPE,
            text=True,
        )
        # Log lines may come first; the port is on the line that says the server is up.
        line = self.proc.stderr.readline()
        while line and not line.startswith("supercolumn: serving CQL"):
            line = self.proc.stderr.readline()
        self.port = int(line.rsplit(":", 1)[1])
        threading.Thread(target=lambda: [None for _ in self.proc.stderr], daemon=True).start()

    def peak_rss_mib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def probe(port, stop, worst):
    """The normal client: connect, start up, query, every 200 ms; records the slowest."""
    while not stop.is_set():
        t = time.monotonic()
        try:
            f = run(port, "SELECT key FROM system.local")
            ok = f is not None and f[0] == RESULT
        except OSError:
            ok = False
        took = time.monotonic() - t
        worst.append(took if ok else float("inf"))
        time.sleep(0.2)


def attack_lz4_freeze(port):
    socks = [ready(port, "lz4") for _ in range(16)]
    size = 16 << 20
    for s in socks:
        s.sendall(struct.pack(">BBhBi", 4, 1, 1, QUERY, size))
    time.sleep(0.5)
    body = struct.pack(">i", size) + bytes(size - 4)
    for s in socks:
        try:
            s.sendall(body)
        except OSError:
            pass
    time.sleep(3)
    return socks


def attack_no_read(port):
    socks = []
    q = frame(1, QUERY, query_body("SELECT * FROM atk.wide WHERE k = 1"))
    for _ in range(3):
        s = ready(port)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.settimeout(5)
        try:
            s.sendall(q * 4000)
        except OSError:
            pass
        socks.append(s)
    time.sleep(12)
    return socks


def attack_paged_pipeline(port):
    s = ready(port)
    q = frame(1, QUERY, query_body("SELECT * FROM atk.big WHERE k = 1", page_size=10))
    s.sendall(q * 200)
    for _ in range(200):
        read_frame(s)
    return [s]


def attack_prepared(port):
    s = ready(port)
    ints = ",".join(str(i) for i in range(9000))
    for n in range(4400):
        q = f"SELECT * FROM atk.wide WHERE k = {n} AND c IN ({ints})".encode()
        s.sendall(frame(1, PREPARE, struct.pack(">i", len(q)) + q))
        read_frame(s)
    return [s]


def attack_idle(port):
    socks = []
    for _ in range(2048):
        try:
            socks.append(socket.create_connection((HOST, port), timeout=5))
        except OSError:
            break
    time.sleep(8)
    return socks


def load(port):
    from cassandra.cluster import Cluster
    from cassandra.concurrent import execute_concurrent_with_args

    cluster = Cluster([HOST], port=port)
    session = cluster.connect()
    session.execute(
        "CREATE KEYSPACE IF NOT EXISTS atk WITH replication = "
        "{'class': 'SimpleStrategy', 'replication_factor': 1}"
    )
    session.execute("CREATE TABLE IF NOT EXISTS atk.wide (k int, c int, v blob, PRIMARY KEY (k, c))")
    session.execute("CREATE TABLE IF NOT EXISTS atk.big (k int, c int, v blob, PRIMARY KEY (k, c))")
    wide = session.prepare("INSERT INTO atk.wide (k, c, v) VALUES (1, ?, ?)")
    execute_concurrent_with_args(session, wide, [(c, bytes(1000)) for c in range(1000)], concurrency=64)
    big = session.prepare("INSERT INTO atk.big (k, c, v) VALUES (1, ?, ?)")
    execute_concurrent_with_args(session, big, [(c, bytes(100)) for c in range(200_000)], concurrency=128)
    cluster.shutdown()


def page_through(port, size):
    s = ready(port)
    state, times = None, []
    while True:
        t = time.monotonic()
        s.sendall(frame(1, QUERY, query_body("SELECT * FROM atk.big WHERE k = 1", size, state)))
        opcode, _, body = read_frame(s)
        times.append(time.monotonic() - t)
        assert opcode == RESULT, body
        state = paging_state(body)
        if state is None:
            break
    s.close()
    return times


def main():
    data = tempfile.mkdtemp(prefix="attacks-")
    try:
        run_all(sys.argv[1], data)
    finally:
        shutil.rmtree(data, ignore_errors=True)


def run_all(binary, data):
    only = set(sys.argv[2].split(",")) if len(sys.argv) > 2 else None
    server = Server(binary, data)
    print("loading 1,000 1 KB rows and a 200,000-row partition ...", flush=True)
    load(server.port)
    server.stop()

    attacks = [
        ("1 LZ4 claims fill the request budget", attack_lz4_freeze),
        ("2 three clients never read 4,000 1 MB answers", attack_no_read),
        ("3 200 pipelined first pages (10 rows) of 200k rows", attack_paged_pipeline),
        ("4 4,400 distinct 52 KB prepared statements", attack_prepared),
        ("8 2,048 connections that never send STARTUP", attack_idle),
    ]
    print(f"{'attack':55} {'peak RSS':>10} {'worst during':>13} {'worst after':>12}")
    for name, attack in attacks:
        if only is not None and name.split()[0] not in only:
            continue
        server = Server(binary, data)
        stop, during = threading.Event(), []
        t = threading.Thread(target=probe, args=(server.port, stop, during))
        t.start()
        started = time.monotonic()
        socks = attack(server.port)
        stop.set()
        t.join()
        peak = server.peak_rss_mib()
        for s in socks:
            s.close()
        time.sleep(1)
        after = []
        for _ in range(5):
            t0 = time.monotonic()
            f = run(server.port, "SELECT key FROM system.local")
            after.append(time.monotonic() - t0 if f and f[0] == RESULT else float("inf"))
        server.stop()
        print(
            f"{name:55} {peak:8.0f} MiB {max(during) * 1000:10.0f} ms {max(after) * 1000:9.0f} ms"
            f"   ({len(during)} probes in {time.monotonic() - started:.0f} s)",
            flush=True,
        )

    if only is not None:
        return
    print("\npaging the 200,000-row partition (one connection, reads every page):")
    print(f"{'page size':>9} {'pages':>7} {'first 10% ms/page':>18} {'last 10% ms/page':>17} {'peak RSS':>9}")
    for size in (10, 100, 5000):
        server = Server(binary, data)
        times = page_through(server.port, size)
        tenth = max(1, len(times) // 10)
        first = sum(times[:tenth]) / tenth * 1000
        last = sum(times[-tenth:]) / tenth * 1000
        print(f"{size:9} {len(times):7} {first:18.3f} {last:17.3f} {server.peak_rss_mib():6.0f} MiB", flush=True)
        server.stop()


if __name__ == "__main__":
    main()
