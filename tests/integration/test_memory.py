"""Memory of the real heatcurved over large answers: bounded while made, given back after."""
import json
import os
import signal
import subprocess
import struct
import time
import urllib.request
import zlib

import pytest

from conftest import HEATCURVED, fixture_path, sanitized, start_tree, status_kib

HEATCURVECTL = os.environ.get("HEATCURVECTL", "")

SAMPLES = 10 * 1024              # ten full blocks, 1 s apart: 2 h 50 min
COLUMNS = 20


class Bits:
    """Most significant bit first, as history/codec.c writes its streams."""

    def __init__(self):
        self.value, self.n = 0, 0

    def put(self, v, n):
        self.value = (self.value << n) | (v & ((1 << n) - 1))
        self.n += n

    def explicit(self, d):
        """The '111 w[7] u[w]' symbol: u = zigzag(d) + 1 in w bits."""
        u = ((d << 1) ^ (d >> 63)) & ((1 << 64) - 1)
        u += 1
        self.put(7, 3)
        self.put(u.bit_length(), 7)
        self.put(u, u.bit_length())

    def bytes(self):
        pad = -self.n % 8
        return (self.value << pad).to_bytes((self.n + pad) // 8, "big")


def block_record(t0_ms, n, columns):
    """One record of history.bin: n samples 1 s apart, every column's values stepping by one."""
    times = Bits()
    times.explicit(1000)                    # the first delta; its delta-of-delta is 0 after
    for _ in range(n - 2):
        times.put(0, 1)
    streams = [times.bytes()]
    for c in range(columns):
        v, bits = Bits(), Bits()
        bits.put(1, 16)                     # step 1 centidegree
        prev = 0
        for i in range(n):
            value = 4000 + 100 * c + (i // 8) % 50
            if value == prev:
                bits.put(0, 1)
            else:
                bits.explicit(value - prev)
            prev = value
        streams.append(bits.bytes())
    ends, size = [], 0
    for s in streams:
        size += len(s)
        ends.append(size)
    payload = struct.pack("<IqqIIII", 0, t0_ms, t0_ms + 1000 * (n - 1), n, len(streams), size, 0)
    payload += struct.pack(f"<{len(ends)}I", *ends) + b"".join(streams)
    return struct.pack("<II", len(payload), zlib.crc32(payload)) + payload


def write_history(path, end_ms):
    head = b"HCHIST" + struct.pack("<HI", 2, COLUMNS)
    for c in range(COLUMNS):
        name = f"test:zone{c}".encode()
        head += bytes([0, len(name)]) + name           # kind 0: temperature
    out = head + struct.pack("<I", zlib.crc32(head))
    t0 = end_ms - 1000 * (SAMPLES - 1)
    for b in range(SAMPLES // 1024):
        out += block_record(t0 + 1000 * 1024 * b, 1024, COLUMNS)
    path.write_bytes(out + struct.pack("<II", 0, 0))


def test_large_history_answers_are_written_not_built(start_daemon, tmp_path):
    """Five 1000-point answers of 20 series, about 300 KB of JSON each. They are written
    as text, not built as a json-c tree (which took about 7 MB for one): while they are
    made, the daemon's peak grows by less than four times one answer's size. Afterwards
    its anonymous memory (heap, not code pages) is within 256 KiB of what it was before
    them. One answer is made first: the code that makes it was dropped from the page
    tables after start-up (see below), and is faulted back by it."""
    state = tmp_path / "state"
    state.mkdir()
    write_history(state / "history.bin", int(time.time() * 1000) - 1000)
    root = fixture_path("rpi4")
    d = start_daemon("--sysfs-root", root, "--procfs-root", root, "--interval", "1s", state_dir=str(state))
    pid = d.proc.pid
    if sanitized(pid):
        pytest.skip("AddressSanitizer keeps freed memory in its quarantine")
    _, st = d.get("/api/v1/status")
    assert st["history"]["samples"] >= SAMPLES, st["history"]
    query = "/api/v1/history?points=1000&from=-3h&sensors=" + ",".join(f"test:zone{c}" for c in range(COLUMNS))
    anon = status_kib(pid, "RssAnon")
    with urllib.request.urlopen(d.url + query, timeout=10) as resp:
        resp.read()
    wait_anon_back(pid, anon)
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")                    # resets VmHWM (Linux 4.0)
    rss = status_kib(pid, "VmRSS")
    for _ in range(5):
        with urllib.request.urlopen(d.url + query, timeout=10) as resp:
            raw = resp.read()
        body = json.loads(raw)
        assert len(body["t_ms"]) > 900 and len(body["series"]) == COLUMNS
    peak = status_kib(pid, "VmHWM")
    assert len(raw) > 200 * 1024, len(raw)
    assert (peak - rss) * 1024 < 4 * len(raw), (rss, peak, len(raw))
    wait_anon_back(pid, anon, peak)


def wait_anon_back(pid, anon, *why):
    """The heap is given back when the last answer is released, which is when the daemon
    sees the connection closed: after the client has read it, on a busy machine later.
    Waits up to 5 s for RssAnon to be within 256 KiB of anon."""
    for _ in range(50):
        after = status_kib(pid, "RssAnon")
        if after - anon <= 256:
            break
        time.sleep(0.1)
    assert after - anon <= 256, (anon, after, *why)


def code_kib(pid, name):
    """Resident kB of the executable file mappings of PID whose file name starts with
    name, None when there is none."""
    total, found, in_code = 0, False, False
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            fields = line.split()
            if "-" in fields[0] and len(fields) >= 5:         # a mapping's first line
                in_code = (len(fields) >= 6 and fields[1] == "r-xp"
                           and os.path.basename(fields[5]).startswith(name))
                found |= in_code
            elif in_code and fields[0] == "Rss:":
                total += int(fields[1])
    return total if found else None


def test_code_only_start_up_runs_is_not_kept_resident(start_daemon, tmp_path):
    """The configuration parser (libinih) runs at start-up and at a reload, never in
    the loop. After its first tick the daemon drops its read-only file pages from its
    page tables and the loop faults back what it runs: after start-up and a few answers
    the parser's code has no resident page, while the daemon's own code has. A reload
    runs the parser again, from the page cache."""
    conf = tmp_path / "heatcurved.conf"
    conf.write_text("[daemon]\ninterval = 100ms\n")
    root = fixture_path("rpi4")
    d = start_daemon("--config", str(conf), "--sysfs-root", root, "--procfs-root", root)
    pid = d.proc.pid
    if code_kib(pid, "libinih") is None:
        pytest.skip("libinih is not a shared library here")
    for path in ("/api/v1/sensors", "/metrics", "/", "/api/v1/history?from=-1m&points=60"):
        assert d.get(path)[0] == 200, path
    assert code_kib(pid, "libinih") == 0
    assert code_kib(pid, os.path.basename(HEATCURVED)) > 0
    conf.write_text("[daemon]\ninterval = 200ms\n")
    d.signal(signal.SIGHUP)
    d.wait_for(lambda: d.get("/api/v1/status")[1]["interval"] == "200ms", what="interval reloaded")
    assert code_kib(pid, "libinih") > 0


def long_run(start_daemon, state, rows):
    """A run of the given number of 1 Hz rows in state (a short run's samples.csv
    made long), and the daemon started again on it at 1 s: (daemon, run id)."""
    root = fixture_path("rpi4")
    d = start_daemon("--sysfs-root", root, "--procfs-root", root, "--interval", "100ms", state_dir=str(state))
    status, run = d.request("POST", "/api/v1/runs", body={"label": "long", "phases": [
        {"kind": "idle", "duration": "1s"}]})
    assert status == 201, run
    d.wait_for(lambda: d.get(f"/api/v1/runs/{run['id']}")[1]["state"] == "finished", what="the run ends")
    assert d.stop() == 0
    csv = state / "runs" / str(run["id"]) / "samples.csv"
    header, first = csv.read_text().splitlines()[:2]
    fields = first.split(",")
    t0 = int(fields[0])
    lines = [header]
    for k in range(rows):
        fields[0], fields[1] = str(t0 + 1000 * k), f"{k}.000"
        fields[3] = f"{40 + (k % 600) / 100:.3f}"
        lines.append(",".join(fields))
    csv.write_text("\n".join(lines) + "\n")
    return start_daemon("--sysfs-root", root, "--procfs-root", root, "--interval", "1s", state_dir=str(state)), \
        run["id"]


def test_drawing_a_day_long_run_gives_its_samples_back(start_daemon, tmp_path):
    """The plot of an ended run reads its whole samples.csv, a day at 1 Hz here: 86,400
    samples, several MB of arrays, read on a thread and freed once drawn. They are the
    plot's five columns, 36 bytes a sample: the peak while drawing is below 4.8 MB over the
    memory before (3.6 MB here; 6.1 MB when the run's ten were read first). Four drawings
    later (each width is drawn anew) the daemon's anonymous memory is within 512 KiB of
    what it was before them: the kept plots, not the samples."""
    d, rid = long_run(start_daemon, tmp_path / "state", 86400)
    pid = d.proc.pid
    if sanitized(pid):
        pytest.skip("AddressSanitizer keeps freed memory in its quarantine")
    anon, rss = status_kib(pid, "RssAnon"), status_kib(pid, "VmRSS")
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")                            # VmHWM starts again from VmRSS
    for width in range(700, 704):
        with urllib.request.urlopen(f"{d.url}/api/v1/runs/{rid}/plot.svg?width={width}", timeout=30) as resp:
            assert resp.headers["Heatcurve-Run-Samples"] == "86400"
            resp.read()
        if width == 700:
            assert status_kib(pid, "VmHWM") - rss < 4800, (rss, status_kib(pid, "VmHWM"))
    for _ in range(50):
        after = status_kib(pid, "RssAnon")
        if after - anon <= 512:
            break
        time.sleep(0.1)
    assert after - anon <= 512, (anon, after)


T0 = 1700000000000
LONG_ROWS = 300000              # 83 h at 1 Hz: more than a run keeps in memory (RUN_SERIES_MAX, 131,072)


def long_phase(k):
    """idle for the first 1,001 rows, a stress of 2 and a cooldown of 3 that every 4th row
    passes over, then stress"""
    return "idle" if k < 1001 else "stress" if k < 1003 else "cooldown" if k < 1006 else "stress"


def write_long_samples(run_dir, rows):
    """rows samples at 1 Hz from T0, in the phases of long_phase(); 40-46 C but one peak of
    90 C on a row that every 2nd, 4th ... does not take."""
    header = "time_ms,elapsed_s,phase,temp_c,hottest_c,freq_hz,max_allowed_hz,cooling_active,load," \
             "work_rate_per_s,work_unit\n"
    with open(run_dir / "samples.csv", "w") as f:
        f.write(header)
        for k in range(rows):
            temp = 90.0 if k == 150001 else 40 + (k % 600) / 100
            f.write(f"{T0 + 1000 * k},{k}.000,{long_phase(k)},{temp:.3f},,,,0,,,\n")


def test_a_long_run_is_recovered_in_bounded_memory(start_daemon, tmp_path):
    """A run longer than a run keeps in memory, found at the start with its run.json lost, then
    found again "running" (the daemon killed under it): it is rebuilt and recovered from every
    4th sample, no more than 131,072 in memory, while its rows, times, phases (one of 2 s
    among them) and peak are those of every row."""
    state = tmp_path / "state"
    run_dir = state / "runs" / "1"
    run_dir.mkdir(parents=True)
    write_long_samples(run_dir, LONG_ROWS)
    last = T0 + 1000 * (LONG_ROWS - 1)
    starts = [k for k in range(LONG_ROWS) if k == 0 or long_phase(k) != long_phase(k - 1)]
    want_phases = [(long_phase(k), T0 + 1000 * k, T0 + 1000 * end)
                   for k, end in zip(starts, starts[1:] + [LONG_ROWS - 1])]
    assert len(want_phases) == 4

    def check(d, why):
        status, doc = d.get("/api/v1/runs/1")
        assert status == 200 and doc["state"] == "interrupted", doc
        assert why in doc["abort_reason"] and f"{LONG_ROWS} samples kept" in doc["abort_reason"], doc
        assert doc["recording"]["samples"] == LONG_ROWS
        assert doc["created_ms"] == T0 and doc["ended_ms"] == last
        assert [(p["kind"], p["started_ms"], p["ended_ms"]) for p in doc["phases"]] == want_phases
        assert doc["metrics"]["peak_c"] == 90.0
        pid = d.proc.pid
        if not sanitized(pid):
            # 14.6 MB here; the series of all 300,000 took it to 25.1 MB
            assert status_kib(pid, "VmHWM") < 20 * 1024, status_kib(pid, "VmHWM")
        return doc

    d = start_tree(start_daemon, fixture_path("rpi4"), state_dir=str(state))
    doc = check(d, "run.json was lost or damaged")
    assert d.stop() == 0

    # the same run as a daemon killed under it leaves it
    running = json.loads((run_dir / "run.json").read_text())
    running.update(state="running", abort_reason=None, ended_ms=None)
    running["phases"][-1].update(ended_ms=None, end_reason=None)
    (run_dir / "run.json").write_text(json.dumps(running))
    d = start_tree(start_daemon, fixture_path("rpi4"), state_dir=str(state))
    check(d, "heatcurved stopped during the run")
    assert doc["metrics"]["baseline_c"] is not None


def test_an_answer_holds_a_bounded_number_of_samples(start_daemon, tmp_path):
    """Beyond 131,072 samples an answer keeps an even share of them: a run of
    140,000 rows is drawn from every other one, a comparison of it seven times
    from every eighth, and the curves of it eight times come from every
    sixteenth. Unbounded, those comparisons held a million samples, 60 MB and
    more; the daemon's peak resident memory grows by less than 32 MB."""
    d, rid = long_run(start_daemon, tmp_path / "state", 140_000)
    pid = d.proc.pid
    if sanitized(pid):
        pytest.skip("AddressSanitizer keeps freed memory in its quarantine")
    with urllib.request.urlopen(f"{d.url}/api/v1/runs/{rid}/plot.svg", timeout=30) as resp:
        assert resp.headers["Heatcurve-Run-Samples"] == "70000"
        resp.read()
    peak = status_kib(pid, "VmHWM")
    with urllib.request.urlopen(f"{d.url}/api/v1/compare.svg?runs={','.join([str(rid)] * 7)}", timeout=60) as resp:
        assert resp.status == 200 and b"<svg" in resp.read(1000)
    status, doc = d.get(f"/api/v1/compare?runs={','.join([str(rid)] * 8)}&points=10000", timeout=60)
    assert status == 200 and len(doc["curves"]) == 8, doc
    # every sixteenth of 140,000 rows: 8,750 samples, fewer than the 10,000 points asked
    assert [len(c["t_s"]) for c in doc["curves"]] == [8750] * 8
    assert status_kib(pid, "VmHWM") - peak < 32 * 1024, (peak, status_kib(pid, "VmHWM"))


def test_heatcurvectl_draws_a_long_run_as_the_daemon_in_bounded_memory(start_daemon, tmp_path):
    """heatcurvectl plot reads a run's samples.csv as it comes and keeps of it
    what the daemon keeps: the plot of a run of 140,000 rows is the daemon's,
    byte for byte, and the client's peak memory stays far below the file's
    (it parsed the whole run as JSON before: 139 MB for a day)."""
    if not (HEATCURVECTL and os.access(HEATCURVECTL, os.X_OK)):
        pytest.skip("no heatcurvectl")
    d, rid = long_run(start_daemon, tmp_path / "state", 140_000)
    with urllib.request.urlopen(f"{d.url}/api/v1/runs/{rid}/plot.svg", timeout=30) as resp:
        daemon_svg = resp.read()
    out, peak = tmp_path / "plot.svg", tmp_path / "peak"
    # GNU time reads the client's own peak: a child of this process would
    # count this process's memory, which it had until its exec
    p = subprocess.run(["/usr/bin/time", "-o", str(peak), "-f", "%M",
                        HEATCURVECTL, "--url", d.url, "plot", str(rid), "-o", str(out)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert out.read_bytes() == daemon_svg
    if not sanitized(d.proc.pid):      # the same build: AddressSanitizer's shadow memory counts
        assert int(peak.read_text().split()[-1]) < 48 * 1024, peak.read_text()
