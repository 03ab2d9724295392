#!/usr/bin/env python3
"""history-writes.py — what heatcurved's history saves write to the disk a day, from /proc/PID/io.

A full 24 h ring of the simulated board's columns (bench/history-fill, the daemon's own file
format and column ids) is put in a state directory; heatcurved --simulate loads it at start and
runs at the defaults (interval 1s, history 24h, history_save 5m) for MINUTES. After each save
(storage.history_saved_ms in /api/v1/status changes) the daemon's write_bytes is read from
/proc/PID/io: the bytes its saves had the kernel write back (whole pages), the measure of what
an SD card is written. With --baseline OLD, an older heatcurved runs beside it on a copy of the
same file, so both figures come from the same minutes of the same machine.

The simulator's own tree (the board's sysfs, rewritten at every tick) is put on a tmpfs
(TMPDIR=/dev/shm), as a real board's /sys is no disk; the daemon writes nothing else meanwhile,
so write_bytes between two saves is what the save wrote.

A day is extrapolated from the saves seen: the first save after a start writes the file whole
(both versions); the mean of the later ones times the saves of a day, plus, where saves append,
the whole rewrite that comes once the samples the ring dropped outnumber those in it (once per
`history` period: once a day at the defaults), costed as the first save.

Usage: bench/history-writes.py [--minutes 25] [--save 5m] [--board odroid-c2-3.14]
                               [--build build] [--baseline OLD_HEATCURVED] [--tmp /var/tmp]
`ninja -C build bench` first (bench/history-fill). write_bytes counts only what reaches a block
device: --tmp must not be a tmpfs."""
import argparse
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
os.environ.setdefault("HEATCURVE_BOARDS_DIR", os.path.join(SRC, "data", "boards"))
KINDS = {0: "temp", 1: "freq", 2: "load"}
DAY_S = 86400
RING = 86400            # samples: history 24h at interval 1s
SIM_TMP = "/dev/shm"    # a tmpfs: the simulator's tree is not counted


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def status(url):
    try:
        with urllib.request.urlopen(url + "/api/v1/status", timeout=5) as r:
            return json.loads(r.read())
    except OSError:
        return None


def write_bytes(pid):
    with open(f"/proc/{pid}/io") as f:
        for line in f:
            if line.startswith("write_bytes:"):
                return int(line.split()[1])
    raise RuntimeError("no write_bytes in /proc/%d/io" % pid)


def seconds(duration):
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}
    for u in sorted(units, key=len, reverse=True):
        if duration.endswith(u):
            return float(duration[:-len(u)]) * units[u]
    raise ValueError(duration)


class Daemon:
    def __init__(self, name, binary, state, conf):
        self.name, self.binary, self.state, self.conf = name, binary, state, conf
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(os.path.join(state, "..", name + ".log"), "w")
        self.proc = None

    def start(self):
        # The simulated board's sysfs tree, which the daemon writes at every tick, goes to a
        # tmpfs (TMPDIR), as a board's /sys is no disk: write_bytes is then the history's.
        env = dict(os.environ, TMPDIR=SIM_TMP)
        self.proc = subprocess.Popen([self.binary, "--config", self.conf, "--state-dir", self.state,
                                      "--listen", f"127.0.0.1:{self.port}"],
                                     stdout=self.log, stderr=subprocess.STDOUT, env=env)
        for _ in range(100):
            if status(self.url):
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        raise RuntimeError(f"{self.name} did not come up, see {self.log.name}")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def file_columns(path):
    """The column ids and kinds in a history.bin header (history/file.c)."""
    with open(path, "rb") as f:
        data = f.read(12)
        if data[:6] != b"HCHIST":
            raise RuntimeError(f"{path}: not a history file")
        (n,) = struct.unpack_from("<I", data, 8)
        cols = []
        for _ in range(n):
            kind, size = f.read(2)
            cols.append(f"{f.read(size).decode()}:{KINDS[kind]}")
        return cols


def write_conf(path, args):
    with open(path, "w") as f:
        f.write(f"[daemon]\nhistory_save = {args.save}\nsimulate = yes\n[simulate]\nboard = {args.board}\n")


def full_ring(tmp, args, binary, fill):
    """A 24 h history.bin of the columns the daemon records on this board."""
    probe = os.path.join(tmp, "probe")
    os.makedirs(probe)
    conf = os.path.join(tmp, "probe.conf")
    write_conf(conf, args)
    d = Daemon("probe", binary, probe, conf)
    d.start()
    time.sleep(3)
    d.stop()
    cols = file_columns(os.path.join(probe, "history.bin"))
    out = os.path.join(tmp, "full.bin")
    end_ms = int(time.time() * 1000) - 1000
    subprocess.run([fill, "write", out, str(RING), str(end_ms)] + cols, check=True, stdout=subprocess.DEVNULL)
    return out, cols


def measure(daemons, minutes):
    """Per daemon: (seconds since start, write_bytes) after each save."""
    seen = {d.name: [] for d in daemons}
    last = {d.name: None for d in daemons}
    start = time.monotonic()
    base = {d.name: write_bytes(d.proc.pid) for d in daemons}
    while time.monotonic() - start < minutes * 60:
        for d in daemons:
            st = status(d.url)
            saved = st and st["storage"]["history_saved_ms"]
            if saved and saved != last[d.name]:
                last[d.name] = saved
                seen[d.name].append((time.monotonic() - start, write_bytes(d.proc.pid) - base[d.name]))
        time.sleep(1)
    return seen


def report(name, points, save_s, args):
    if len(points) < 2:
        print(f"{name}: {len(points)} save(s) seen, too few; run longer")
        return
    deltas = [b - a for (_, a), (_, b) in zip([(0, 0)] + points, points)]
    first, later = deltas[0], deltas[1:]
    mean = sum(later) / len(later)
    per_day = DAY_S / save_s
    appends = mean < first / 4
    rewrites = (DAY_S / seconds("24h")) if appends else 0       # whole again once per history period
    daily = mean * per_day + rewrites * first
    print(f"{name}: first save {first / 1024:.0f} KiB (whole file), later saves {len(later)}: "
          f"mean {mean / 1024:.1f} KiB, min {min(later) / 1024:.1f}, max {max(later) / 1024:.1f}; "
          f"a day at one save every {args.save}: {daily / 1e6:.2f} MB"
          + (f" ({per_day:.0f} x {mean / 1024:.1f} KiB + {rewrites:.0f} whole rewrite)" if appends
             else f" ({per_day:.0f} x {mean / 1024:.1f} KiB)"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=25)
    ap.add_argument("--save", default="5m")
    ap.add_argument("--board", default="odroid-c2-3.14")
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("--baseline", help="an older heatcurved, measured beside this one")
    ap.add_argument("--tmp", default="/var/tmp")
    args = ap.parse_args()
    binary = os.path.join(args.build, "heatcurved")
    fill = os.path.join(args.build, "bench", "history-fill")
    tmp = tempfile.mkdtemp(prefix="heatcurve-writes-", dir=args.tmp)
    daemons = []
    try:
        full, cols = full_ring(tmp, args, binary, fill)
        print(f"board {args.board}: {len(cols)} columns ({' '.join(cols)}); full 24 h ring "
              f"{os.path.getsize(full) / 1024:.0f} KiB; {args.minutes:g} min, save every {args.save}")
        runs = [("heatcurved", binary)] + ([("baseline", args.baseline)] if args.baseline else [])
        for name, path in runs:
            state = os.path.join(tmp, name)
            os.makedirs(state)
            shutil.copy(full, os.path.join(state, "history.bin"))
            conf = os.path.join(tmp, name + ".conf")
            write_conf(conf, args)
            daemons.append(Daemon(name, path, state, conf))
        for d in daemons:
            d.start()
        seen = measure(daemons, args.minutes)
        for d in daemons:
            report(d.name, seen[d.name], seconds(args.save), args)
            print(f"  {d.name}: history.bin {os.path.getsize(os.path.join(d.state, 'history.bin')) / 1024:.0f} KiB "
                  f"at the end; saves at s {', '.join(f'{t:.0f}' for t, _ in seen[d.name])}")
    finally:
        for d in daemons:
            d.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
