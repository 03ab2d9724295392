#!/usr/bin/env python3
"""soak.py — heatcurved on the simulated board for a while, with everything at once: runs back to
back, SIGHUPs, a history that wraps, clients that connect, abort and drop, and kill -9 now and
then (each followed by a restart on the same state directory). At the end every run's samples on
disk are counted against what its run.json says it wrote, no load worker may be left, and the
daemon's RSS and open fds must not have grown. Loopback only; every loop is bounded in time.

Usage: bench/soak.py [SECONDS] [HEATCURVED]   (default 300 s, build/heatcurved)
Prints a summary and exits 1 when something was lost or leaked."""
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 300
BINARY = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "..", "build", "heatcurved")
KILL_EVERY = max(10.0, SECONDS / 6)        # a kill -9 about six times a run
HUP_EVERY = 3.0
# A build run in place finds the simulated boards in the source tree.
os.environ.setdefault("HEATCURVE_BOARDS_DIR", os.path.join(os.path.dirname(__file__), "..", "data", "boards"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(url, method="GET", body=None, timeout=5):
    req = urllib.request.Request(url, data=json.dumps(body).encode() if body else None, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except OSError:
        return 0, b""


def proc_value(pid, key):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        return None


def fds(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def descendants(pid):
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/task/{p}/children") as f:
                kids = [int(x) for x in f.read().split()]
        except OSError:
            kids = []
        out += kids
        todo += kids
    return out


class Daemon:
    def __init__(self, state, conf, port):
        self.state, self.conf, self.port = state, conf, port
        self.url = f"http://127.0.0.1:{port}"
        self.proc = None
        self.log = open(os.path.join(os.path.dirname(state), "daemon.log"), "a")

    def start(self):
        self.proc = subprocess.Popen([BINARY, "--config", self.conf, "--simulate", "--interval", "100ms",
                                      "--listen", f"127.0.0.1:{self.port}", "--state-dir", self.state],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if request(self.url + "/api/v1/status", timeout=1)[0] == 200:
                return
            time.sleep(0.05)
        raise SystemExit("soak: heatcurved did not come up")


def clients(url, stop, counts):
    """Requests of every kind, some cut off mid-way; bounded by `stop`."""
    paths = ["/api/v1/status", "/api/v1/sensors", "/api/v1/history?points=100", "/api/v1/runs",
             "/api/v1/alerts", "/metrics", "/api/v1/nothing"]
    host, port = "127.0.0.1", int(url.rsplit(":", 1)[1])
    while not stop.is_set():
        if random.random() < 0.2:
            try:               # a client that drops the connection half-way through its request
                with socket.create_connection((host, port), timeout=1) as s:
                    s.sendall(b"GET /api/v1/sensors HTTP/1.1\r\nHost: x\r\n")
                counts["dropped"] += 1
            except OSError:
                pass
        else:
            status, _ = request(url + random.choice(paths), timeout=2)
            counts["requests"] += 1
            counts["failed"] += status == 0
        time.sleep(0.02)


def quiesce(d):
    """The daemon's open fds once nothing is going on: no client, no run, its load gone. What a
    running load or a request in flight holds comes and goes; a leak stays in this count."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        status, body = request(d.url + "/api/v1/status")
        if status != 200:
            return None
        run = json.loads(body)["current_run"]
        if run is None and not descendants(d.proc.pid):
            break
        if run is not None:
            request(d.url + f"/api/v1/runs/{run['id']}/stop", "POST", {})
        time.sleep(0.2)
    # a client that hung up half-way through its headers is let go at the request deadline
    # (10 s, web/http.h), the others at once
    time.sleep(11.0)
    return fds(d.proc.pid)


def main():
    tmp = tempfile.mkdtemp(prefix="heatcurve-soak-")
    state, conf = os.path.join(tmp, "state"), os.path.join(tmp, "soak.conf")
    with open(conf, "w") as f:     # a history that wraps within the soak, saved often
        f.write("[daemon]\nhistory = 1m\nhistory_save = 10s\n[simulate]\ntau = 3s\nrise = 20\n")
        if os.geteuid() == 0:      # as root, runs with a load are refused unless allowed
            f.write("[runs]\nallow_root = yes\n")
    d = Daemon(state, conf, free_port())
    d.start()
    counts = {"requests": 0, "failed": 0, "dropped": 0, "runs": 0, "kills": 0, "hups": 0}
    stop = threading.Event()
    rss, nfds, started = [], [], time.monotonic()
    workers_seen = set()
    t = threading.Thread(target=clients, args=(d.url, stop, counts))
    t.start()
    next_kill, next_hup = started + KILL_EVERY, started + HUP_EVERY
    try:
        while time.monotonic() - started < SECONDS:
            status, body = request(d.url + "/api/v1/status")
            if status == 200 and json.loads(body)["current_run"] is None:
                status, _ = request(d.url + "/api/v1/runs", "POST", {"phases": [
                    {"kind": "idle", "duration": "1s"},
                    {"kind": "stress", "duration": "2s", "load": {"type": "cpu", "workers": 1}},
                    {"kind": "cooldown", "duration": "1s"}]})
                counts["runs"] += status == 201
            workers_seen.update(descendants(d.proc.pid))
            if time.monotonic() >= next_hup:
                d.proc.send_signal(signal.SIGHUP)
                counts["hups"] += 1
                next_hup += HUP_EVERY
            if time.monotonic() >= next_kill:
                d.proc.kill()
                d.proc.wait()
                counts["kills"] += 1
                d.start()
                next_kill += KILL_EVERY
            r, n = proc_value(d.proc.pid, "VmRSS"), fds(d.proc.pid)
            if r and n:
                rss.append((time.monotonic() - started, r, d.proc.pid))
                nfds.append((time.monotonic() - started, n, d.proc.pid))
            time.sleep(0.5)
    finally:
        stop.set()
        t.join()
        quiet_fds = quiesce(d)
        d.proc.send_signal(signal.SIGTERM)
        d.proc.wait(15)
    time.sleep(1.5)             # PR_SET_PDEATHSIG and the kill timer: workers go within a second
    left = [p for p in workers_seen if os.path.exists(f"/proc/{p}") and
            open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"]

    lost = []
    runs_dir = os.path.join(state, "runs")
    for rid in sorted(os.listdir(runs_dir), key=int) if os.path.isdir(runs_dir) else []:
        with open(os.path.join(runs_dir, rid, "run.json")) as f:
            doc = json.load(f)
        with open(os.path.join(runs_dir, rid, "samples.csv")) as f:
            rows = sum(1 for line in f if line.endswith("\n")) - 1
        if doc["recording"]["samples"] != rows or doc["state"] == "running":
            lost.append((rid, doc["state"], doc["recording"]["samples"], rows))
    states = {}
    for rid in os.listdir(runs_dir) if os.path.isdir(runs_dir) else []:
        with open(os.path.join(runs_dir, rid, "run.json")) as f:
            s = json.load(f)["state"]
        states[s] = states.get(s, 0) + 1

    # growth within the last incarnation: its first third against its last third
    last_pid = rss[-1][2] if rss else None
    mine = [v for _, v, p in rss if p == last_pid]
    fdm = [v for _, v, p in nfds if p == last_pid]
    third = max(1, len(mine) // 3)
    rss_growth = (max(mine[-third:]) - max(mine[:third])) if mine else 0
    # fds: a running load and requests in flight come and go (about ten of them), so the count
    # at rest at the end is compared with the least the same daemon had open at any moment
    fd_growth = (quiet_fds - min(fdm)) if fdm and quiet_fds is not None else 0
    print(f"soak: {SECONDS:.0f} s; {counts['runs']} runs ({', '.join(f'{v} {k}' for k, v in sorted(states.items()))}), "
          f"{counts['kills']} kill -9 + restart, {counts['hups']} SIGHUP, {counts['requests']} requests "
          f"({counts['failed']} refused or cut by a kill), {counts['dropped']} dropped mid-request")
    print(f"soak: VmRSS {min(v for _, v, _ in rss)}..{max(v for _, v, _ in rss)} KiB, last daemon grew "
          f"{rss_growth} KiB; open fds {min(v for _, v, _ in nfds)}..{max(v for _, v, _ in nfds)}, "
          f"last daemon at rest {quiet_fds} against its least {min(fdm) if fdm else '-'}")
    print(f"soak: samples on disk against run.json: {len(lost)} runs differ; load workers left: {len(left)}")
    bad = lost or left or quiet_fds is None or fd_growth > 2 or rss_growth > 4096 or not counts["runs"]
    if quiet_fds is None:
        print("soak: the daemon did not answer at the end")
    if not counts["runs"]:
        print("soak: no run started (see the daemon log)")
    for item in lost:
        print(f"soak: run {item[0]} ({item[1]}): run.json says {item[2]} samples, samples.csv has {item[3]}")
    print("soak: " + ("FAILED" if bad else "ok") + f"; state and log in {tmp}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
