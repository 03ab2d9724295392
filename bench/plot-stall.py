#!/usr/bin/env python3
"""How long the event loop stalls while an ended day-long run is drawn for the first time.

    bench/plot-stall.py [--rounds 9] [--trace [--no-status]] [BINARY ...]

For each binary (default build/heatcurved): heatcurved on the x86-laptop
fixture (15 temperatures) records a short run, which is then made a day long
(86,400 rows at 1 Hz, 21 MB of samples.csv) and the daemon started again on
it. Each round asks for the run's plot at a width not drawn before (so it is
never one of the kept plots) while a second connection asks for
/api/v1/status back to back; it prints the plot's time, the longest status
answer meanwhile (how long the loop was held), and RssAnon before the first
plot and after the last. Loopback only; every wait is bounded.

With --trace (root, perf and the syscalls tracepoints), perf records the
daemon's main thread entering and leaving epoll_wait on sd-event's epoll
fd, and the script prints the longest stretches between two waits: how
long each turn of the loop ran (wall time: a turn that waits for a core
counts too). With --no-status nothing else is asked meanwhile, so the turns
are the plots' own.
"""
import argparse
import http.client
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import threading
import time
import json
import re

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FIXTURE = os.path.join(ROOT, "data", "boards", "x86-laptop-coretemp")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(binary, state, port):
    p = subprocess.Popen([binary, "--sysfs-root", FIXTURE, "--procfs-root", FIXTURE, "--listen",
                          f"127.0.0.1:{port}", "--state-dir", state, "--interval", "1s", "--allow-root"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            if get(http.client.HTTPConnection("127.0.0.1", port, timeout=5), "/api/v1/status")[0] == 200:
                return p
        except OSError:
            time.sleep(0.1)
    p.kill()
    raise SystemExit(f"{binary} did not answer")


def get(conn, path, body=None):
    conn.request("POST" if body else "GET", path, body=body)
    r = conn.getresponse()
    return r.status, r.read()


def stop(p):
    p.terminate()
    p.wait(10)


def rss_anon(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("RssAnon:"))


def day_long_run(binary, state):
    """A real run recorded by binary, then its samples.csv made a day long: returns its id."""
    port = free_port()
    p = start(binary, state, port)
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    status, body = get(c, "/api/v1/runs", json.dumps({"label": "day", "phases": [
        {"kind": "idle", "duration": "2s"}, {"kind": "stress", "duration": "2s", "load": {"type": "cpu", "workers": 1}},
        {"kind": "cooldown", "duration": "2s"}]}).encode())
    assert status == 201, body
    rid = json.loads(body)["id"]
    for _ in range(300):
        if json.loads(get(c, f"/api/v1/runs/{rid}")[1])["state"] != "running":
            break
        time.sleep(0.1)
    stop(p)
    csv = os.path.join(state, "runs", str(rid), "samples.csv")
    lines = open(csv).read().splitlines()
    header, rows = lines[0], [r.split(",") for r in lines[1:]]
    t0 = int(rows[0][0])
    with open(csv, "w") as f:
        f.write(header + "\n")
        for k in range(86400):
            r = list(rows[k % len(rows)])
            r[0], r[1] = str(t0 + 1000 * k), f"{k}.000"
            r[2] = "idle" if k < 3600 else "stress" if k < 46800 else "cooldown"
            f.write(",".join(r) + "\n")
    return rid


def loop_turns(perf_data):
    """ms between leaving one epoll_wait on sd-event's fd and entering the next, longest last."""
    out = subprocess.run(["perf", "script", "-i", perf_data, "-F", "time,event,trace"], capture_output=True,
                         text=True, timeout=120).stdout.splitlines()
    enter = re.compile(r"([\d.]+):\s+syscalls:sys_enter_epoll_wait:.*epfd: 0x([0-9a-f]+).*timeout: 0x([0-9a-f]+)")
    leave = re.compile(r"([\d.]+):\s+syscalls:sys_exit_epoll_wait")
    # sd-event waits with a timeout (none, or until its next timer); MHD's own epoll is polled with 0
    loop_fd = next((m.group(2) for m in map(enter.search, out) if m and int(m.group(3), 16) != 0), None)
    turns, fd, left = [], None, None
    for line in out:
        m = enter.search(line)
        if m:
            fd = m.group(2)
            if fd == loop_fd and left is not None:
                turns.append((float(m.group(1)) - left) * 1000)
            continue
        m = leave.search(line)
        if m and fd == loop_fd:
            left = float(m.group(1))
    return sorted(turns)


def measure(binary, state, rid, rounds, trace, poll):
    port = free_port()
    p = start(binary, state, port)
    anon0 = rss_anon(p.pid)
    perf_data = os.path.join(os.path.dirname(state), "loop.perf")
    tracer = None
    if trace:
        tracer = subprocess.Popen(["perf", "record", "-q", "-o", perf_data, "-e", "syscalls:sys_enter_epoll_wait",
                                   "-e", "syscalls:sys_exit_epoll_wait", "-t", str(p.pid)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1)
    plots, worst = [], []
    for rnd in range(rounds):
        c1 = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        c2 = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        get(c2, "/api/v1/status")
        done, lat = threading.Event(), []

        def plot():
            t = time.monotonic()
            status, _ = get(c1, f"/api/v1/runs/{rid}/plot.svg?width={700 + rnd}")
            plots.append((time.monotonic() - t) * 1000 if status == 200 else float("nan"))
            done.set()
        th = threading.Thread(target=plot)
        th.start()
        for _ in range(20000 if poll else 0):   # bounded: a plot takes well under a minute
            if done.is_set():
                break
            t = time.monotonic()
            get(c2, "/api/v1/status")
            lat.append((time.monotonic() - t) * 1000)
        th.join(60)
        worst.append(max(lat) if lat else 0.0)
        time.sleep(0.3)
    time.sleep(1)
    anon1 = rss_anon(p.pid)
    if tracer:
        tracer.send_signal(2)
        tracer.wait(60)
    stop(p)
    status = (f"longest /api/v1/status meanwhile {statistics.median(worst):.1f} ms by the median "
              f"({min(worst):.1f}-{max(worst):.1f}); " if poll else "")
    print(f"{binary}: plot {statistics.median(plots):.1f} ms (median of {rounds}); {status}"
          f"RssAnon {anon0} kB before, {anon1} kB after")
    if tracer:
        turns = loop_turns(perf_data)
        print(f"    {len(turns)} turns of the loop; the {rounds} longest, ms: "
              + " ".join(f"{t:.1f}" for t in turns[-rounds:]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--trace", action="store_true", help="time the loop's turns with perf (root)")
    ap.add_argument("--no-status", action="store_true", help="draw only: no /api/v1/status asked meanwhile")
    ap.add_argument("binaries", nargs="*", default=[os.path.join(ROOT, "build", "heatcurved")])
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="plot-stall-")
    try:
        state = os.path.join(tmp, "state")
        rid = day_long_run(a.binaries[0], state)
        for b in a.binaries:
            copy = os.path.join(tmp, "copy")
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(state, copy)
            measure(b, copy, rid, a.rounds, a.trace, not a.no_status)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
