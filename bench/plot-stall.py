#!/usr/bin/env python3
"""How long the event loop stalls while an ended day-long run is drawn for the first time.

    bench/plot-stall.py [--rounds 9] [BINARY ...]

For each binary (default build/heatcurved): heatcurved on the x86-laptop
fixture (15 temperatures) records a short run, which is then made a day long
(86,400 rows at 1 Hz, 21 MB of samples.csv) and the daemon started again on
it. Each round asks for the run's plot at a width not drawn before (so it is
never one of the kept plots) while a second connection asks for
/api/v1/status back to back; it prints the plot's time, the longest status
answer meanwhile (how long the loop was held), and RssAnon before the first
plot and after the last. Loopback only; every wait is bounded.
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

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "x86-laptop-coretemp")


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


def measure(binary, state, rid, rounds):
    port = free_port()
    p = start(binary, state, port)
    anon0 = rss_anon(p.pid)
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
        for _ in range(20000):          # bounded: a plot takes well under a minute
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
    stop(p)
    print(f"{binary}: plot {statistics.median(plots):.1f} ms (median of {rounds}); longest /api/v1/status "
          f"meanwhile {statistics.median(worst):.1f} ms by the median ({min(worst):.1f}-{max(worst):.1f}); "
          f"RssAnon {anon0} kB before, {anon1} kB after")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=9)
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
            measure(b, copy, rid, a.rounds)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
