#!/usr/bin/env python3
"""Daemon CPU and memory with 0 and with 50 clients on GET /api/v1/events.

    bench/events.py [--seconds 60] [--clients 50] [--interval 1s] [--binary build/heatcurved]
                    [--fixture x86-laptop-coretemp] [--out bench/events-latest.md]

heatcurved samples a fixture tree; for each window the script reads the
daemon's utime+stime and VmRSS from /proc, and with clients it checks that
every client got every event. Loopback only; every wait is bounded.
"""
import argparse
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CLK_TCK = os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def status_kib(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


class Client:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.sendall(b"GET /api/v1/events HTTP/1.1\r\nHost: x\r\n\r\n")
        self.sock.setblocking(False)
        self.buf = b""
        self.ids = []
        self.bytes = 0

    def fileno(self):
        return self.sock.fileno()

    def feed(self):
        data = self.sock.recv(1 << 16)
        if not data:
            return False
        self.bytes += len(data)
        self.buf += data
        # ids are enough to check delivery; "\nid: N\n" never occurs inside JSON data
        *lines, self.buf = self.buf.split(b"\n")
        self.ids += [int(line[4:]) for line in lines if line.startswith(b"id: ")]
        return True


def window(pid, seconds, clients):
    sel = selectors.DefaultSelector()
    for c in clients:
        sel.register(c, selectors.EVENT_READ)
    cpu0, t0 = cpu_s(pid), time.monotonic()
    deadline = t0 + seconds
    closed = 0
    while time.monotonic() < deadline:
        if not clients:
            time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
            continue
        for key, _ in sel.select(timeout=0.5):
            if not key.fileobj.feed():
                sel.unregister(key.fileobj)
                closed += 1
    return cpu_s(pid) - cpu0, time.monotonic() - t0, status_kib(pid, "VmRSS"), closed


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--interval", default="1s")
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "heatcurved"))
    ap.add_argument("--fixture", default="x86-laptop-coretemp")
    ap.add_argument("--out", default=os.path.join(HERE, "events-latest.md"))
    a = ap.parse_args()
    tree = os.path.join(ROOT, "data", "boards", a.fixture)
    state = tempfile.mkdtemp(prefix="hc-events-bench-")
    conf = os.path.join(state, "bench.conf")
    with open(conf, "w") as f:
        f.write(f"[daemon]\nevent_clients = {min(100, a.clients + 1)}\n")
    port = free_port()
    log = open(os.path.join(state, "log"), "w")
    d = subprocess.Popen([a.binary, "--config", conf, "--listen", f"127.0.0.1:{port}",
                          "--state-dir", os.path.join(state, "s"), "--sysfs-root", tree,
                          "--procfs-root", tree, "--interval", a.interval], stdout=log, stderr=log)
    clients = []
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or d.poll() is not None:
                    sys.exit("heatcurved did not start; see " + log.name)
                time.sleep(0.1)
        time.sleep(2)
        idle_cpu, idle_t, idle_rss, _ = window(d.pid, a.seconds, [])
        clients = [Client(port) for _ in range(a.clients)]
        busy_cpu, busy_t, busy_rss, closed = window(d.pid, a.seconds, clients)
        hwm = status_kib(d.pid, "VmHWM")
    finally:
        for c in clients:
            c.sock.close()
        d.send_signal(signal.SIGTERM)
        try:
            d.wait(10)
        except subprocess.TimeoutExpired:
            d.kill()
        shutil.rmtree(state, ignore_errors=True)

    gaps = sum(1 for c in clients if c.ids and c.ids != list(range(c.ids[0], c.ids[0] + len(c.ids))))
    events = [len(c.ids) for c in clients]
    mib_s = sum(c.bytes for c in clients) / busy_t / 2**20
    rows = [
        ("clients", "0", str(a.clients)),
        ("window", f"{idle_t:.0f} s", f"{busy_t:.0f} s"),
        ("daemon CPU", f"{100 * idle_cpu / idle_t:.3f} % of a core", f"{100 * busy_cpu / busy_t:.3f} % of a core"),
        ("VmRSS at the end", f"{idle_rss} KiB", f"{busy_rss} KiB (VmHWM {hwm} KiB)"),
        ("events per client", "-", f"{min(events)}..{max(events)}, {gaps} with a gap, {closed} closed"),
        ("sent to clients", "-", f"{mib_s:.2f} MiB/s"),
    ]
    text = (f"# GET /api/v1/events: {a.clients} clients\n\n"
            f"`bench/events.py --seconds {a.seconds:g} --clients {a.clients} --interval {a.interval}"
            f" --fixture {a.fixture}` on {os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d')}\n\n"
            "| | idle | with clients |\n|---|---|---|\n" +
            "".join(f"| {r[0]} | {r[1]} | {r[2]} |\n" for r in rows))
    with open(a.out, "w") as f:
        f.write(text)
    print(text)
    return 1 if gaps or closed else 0


if __name__ == "__main__":
    sys.exit(main())
