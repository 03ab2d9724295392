"""A run exported as one file by one heatcurved and imported into another: round trip,
comparison on one daemon, and every way a hostile or broken file is refused without a trace."""
import json
import math
import os
import socket
import threading
import time

import pytest

from conftest import fixture_path, sanitized, with_token
from test_cli import HEATCURVECTL, board, ctl, run_short  # noqa: F401 (ctl is a fixture)


def finished_run(d, label):
    status, run = d.request("POST", "/api/v1/runs", {
        "label": label, "ambient_c": 21.5,
        "phases": [{"kind": "idle", "duration": "1s"},
                   {"kind": "stress", "duration": "2s", "load": {"type": "cpu", "workers": 1}},
                   {"kind": "cooldown", "duration": "1s"}]})
    assert status == 201, run
    d.wait_for(lambda: d.get(f"/api/v1/runs/{run['id']}")[1]["state"] == "finished", timeout=30,
               what="the run's end")
    return run["id"]


def run_dirs(d):
    root = os.path.join(d.state_dir, "runs")
    return sorted(os.listdir(root)) if os.path.isdir(root) else []


@pytest.mark.slow       # two recorded runs on two boards, 9 s
def test_export_import_round_trip_and_compare_on_one_daemon(start_daemon):
    a = board(start_daemon, "rpi4")
    b = board(start_daemon, "rk3399-rockpro64")
    ida = finished_run(a, "case A")
    finished_run(b, "case B")
    status, doc = a.get(f"/api/v1/runs/{ida}/export")
    assert status == 200
    assert doc["format"] == "heatcurve-run" and doc["format_version"] == 1
    _, original = a.get(f"/api/v1/runs/{ida}")
    assert doc["run"] == {**original, "live": None}
    _, csv = a.get(f"/api/v1/runs/{ida}/samples?format=csv")
    assert doc["samples_csv"] == csv

    status, imported = b.request("POST", "/api/v1/runs/import", doc)
    assert status == 201, imported
    assert imported["id"] == 2 and imported["imported"]["id"] == ida
    assert imported["label"] == "case A" and imported["board"] == original["board"]
    assert imported["state"] == "finished" and imported["phases"] == original["phases"]
    assert imported["recording"]["samples"] == original["recording"]["samples"]
    # its metrics are computed again here, from the same samples: the same numbers
    for key, value in original["metrics"].items():
        got = imported["metrics"][key]
        if isinstance(value, float) and isinstance(got, float):
            assert math.isclose(got, value, rel_tol=1e-3, abs_tol=1e-3), (key, got, value)
        else:
            assert got == value, (key, got, value)
    # it is a run like any other there: samples, plot, comparison with B's own, survives a restart
    assert b.get("/api/v1/runs/2/samples?format=csv")[1] == csv
    status, svg = b.get("/api/v1/compare.svg?runs=1,2")
    assert status == 200 and "case A" in svg and "case B" in svg
    status, cmp = b.get("/api/v1/compare?runs=1,2")
    assert status == 200 and [r["label"] for r in cmp["runs"]] == ["case B", "case A"]
    b.stop()
    b2 = start_daemon("--sysfs-root", fixture_path("rk3399-rockpro64"), "--procfs-root",
                      fixture_path("rk3399-rockpro64"), state_dir=b.state_dir)
    _, again = b2.get("/api/v1/runs/2")
    assert again["imported"] == imported["imported"] and again["metrics"] == imported["metrics"]
    # exported again from there, it is the same file but for where it has been
    _, doc2 = b2.get("/api/v1/runs/2/export")
    assert doc2["samples_csv"] == doc["samples_csv"]


def test_export_refuses_what_is_not_an_ended_run(start_daemon):
    d = board(start_daemon, "rpi4")
    assert d.get("/api/v1/runs/7/export")[0] == 404
    status, run = d.request("POST", "/api/v1/runs", {"phases": [{"kind": "idle", "duration": "1h"}]})
    assert status == 201
    status, body = d.get(f"/api/v1/runs/{run['id']}/export")
    assert status == 409 and "running" in body["error"]["message"]
    assert d.request("POST", f"/api/v1/runs/{run['id']}/export")[0] == 405
    assert d.get("/api/v1/runs/import")[0] == 405


def mangled(doc, **changes):
    out = json.loads(json.dumps(doc))
    for path, value in changes.items():
        node = out
        keys = path.split("__")
        for k in keys[:-1]:
            node = node[k]
        if value is KeyError:
            del node[keys[-1]]
        else:
            node[keys[-1]] = value
    return out


def test_bad_run_files_are_refused_and_leave_nothing(start_daemon):
    a = board(start_daemon, "rpi4")
    finished_run(a, "source")
    _, doc = a.get("/api/v1/runs/1/export")
    csv = doc["samples_csv"]
    header, *lines = csv.splitlines(keepends=True)
    b = board(start_daemon, "rpi4")
    cases = [
        (b"not json", "bad_json", "not valid JSON"),
        (json.dumps(doc).encode() + b" trailing", "bad_json", "more after"),
        (mangled(doc, format="other"), "bad_request", "format"),
        (mangled(doc, format_version=2), "bad_request", "format_version: 2"),
        (mangled(doc, run=KeyError), "bad_request", "run: missing"),
        (mangled(doc, run__state="running"), "bad_request", "only an ended run"),
        (mangled(doc, run__phases=[]), "bad_request", "run.phases"),
        (mangled(doc, run__id=-3), "bad_request", "run.id"),
        (mangled(doc, run__notes="n" * 4097), "bad_request", "run.notes: longer than 4096 characters"),
        (mangled(doc, run__label="\u00e9" * 1000), "bad_request", "run.label: longer than 127 characters"),
        (mangled(doc, run__label=7), "bad_request", "run.label: must be a string"),
        (mangled(doc, samples_csv=KeyError), "bad_request", "samples_csv: missing"),
        (mangled(doc, samples_csv=csv[:-1]), "bad_request", "whole line"),
        (mangled(doc, samples_csv=csv.replace("\n", "\u0000", 1)), "bad_request", "NUL"),
        (mangled(doc, samples_csv="when,what\n1,2\n"), "bad_request", "header"),
        (mangled(doc, samples_csv=header + lines[0]), "bad_request", "fewer than two"),
        (mangled(doc, samples_csv=header + lines[1] + lines[0]), "bad_request", "elapsed_s"),
        (mangled(doc, samples_csv=header + lines[0] + "1,2\n"), "bad_request", "line 3"),
        (mangled(doc, samples_csv=header + lines[0] + lines[1].replace(",idle,", ",lunch,", 1)
                 .replace(",stress,", ",lunch,", 1)), "bad_request", "phase"),
    ]
    for body, code, words in cases:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        status, answer = b.request("POST", "/api/v1/runs/import", raw)
        assert status == 400, (words, status, answer)
        assert answer["error"]["code"] == code and words in answer["error"]["message"], (words, answer)
    assert run_dirs(b) == [] and b.get("/api/v1/runs")[1]["runs"] == []
    # and the next good one gets the first id, as if nothing had come before
    status, run = b.request("POST", "/api/v1/runs/import", doc)
    assert status == 201 and run["id"] == 1 and run_dirs(b) == ["1"]


def test_import_needs_the_right_to_change_state_and_a_bounded_body(start_daemon, tmp_path):
    a = board(start_daemon, "rpi4")
    finished_run(a, "source")
    _, doc = a.get("/api/v1/runs/1/export")
    b = with_token(board, tmp_path, start_daemon, "rpi4")
    headers, b.headers = b.headers, {}
    status, answer = b.request("POST", "/api/v1/runs/import", doc)
    assert status == 401, answer
    # without the token a body over 64 KiB is refused from its Content-Length, before it is read
    big = b" " * 100000 + json.dumps(doc).encode()          # notes are capped as in POST /runs
    status, answer = b.request("POST", "/api/v1/runs/import", big)
    assert status == 413 and "65536" in answer["error"]["message"]
    b.headers = headers
    status, answer = b.request("POST", "/api/v1/runs/import", big)
    assert status == 201, answer
    # a trusted client may send up to 32 MiB, not more: refused from the headers alone
    with socket.create_connection(("127.0.0.1", b.port), timeout=10) as s:
        s.sendall(b"POST /api/v1/runs/import HTTP/1.1\r\nHost: x\r\nAuthorization: " +
                  headers["Authorization"].encode() + b"\r\nContent-Length: %d\r\n\r\n" % (32 * 1024 * 1024 + 1))
        answer = b""
        while b"}}" not in answer:
            chunk = s.recv(4096)
            if not chunk:
                break
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 413") and str(32 * 1024 * 1024).encode() in answer, answer


@pytest.mark.slow       # a recorded run, exported and imported, 5 s
def test_heatcurvectl_export_run_and_import(start_daemon, ctl, tmp_path):
    a = board(start_daemon, "rpi4")
    b = board(start_daemon, "rk3399-rockpro64")
    run_short(ctl, a, "alu case")
    f = tmp_path / "run1.json"
    r = ctl(a, "export", "1", "--format", "run")
    assert r.returncode == 0, r.stderr
    f.write_text(r.stdout)
    assert json.loads(r.stdout)["run"]["label"] == "alu case"
    r = ctl(b, "import", str(f))
    assert r.returncode == 0, r.stderr
    _, run = a.get("/api/v1/runs/1")
    assert r.stdout == f"run 1 imported (run 1 of {run['board']['hostname']})\n"
    r = ctl(b, "show", "1")
    assert r.returncode == 0 and r.stdout.startswith('run 1 "alu case": finished'), r.stdout
    # the offline analysis reads the same file
    r = ctl(None, "analyse", str(f), url=False)
    assert r.returncode == 0 and "plateau" in r.stdout, r.stderr
    # errors are one clear line
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "heatcurve-run", "format_version": 9}')
    r = ctl(b, "import", str(bad))
    assert r.returncode == 1 and "format_version: 9" in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr
    r = ctl(b, "import", str(tmp_path / "missing.json"))
    assert r.returncode == 1 and "No such file" in r.stderr


def vm_kib(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise AssertionError(f"no {key} for {pid}")


@pytest.mark.slow       # writes and reads 200,000 rows, 6 s
def test_samples_as_json_are_streamed_not_built_in_memory(start_daemon):
    """A long run's samples as JSON and as a run file: the same values as the CSV, and the
    daemon's memory does not grow with the file (the whole document as a tree would take ten
    times the file)."""
    d = board(start_daemon, "rpi4")
    finished_run(d, "long")
    d.stop()
    path = os.path.join(d.state_dir, "runs", "1", "samples.csv")
    with open(path) as f:
        header, *rows = f.read().splitlines()
    last = rows[-1].split(",")
    t0, e0 = int(last[0]), float(last[1])
    with open(path, "a") as f:         # 200,000 more rows: a 55 h run at 1 Hz
        for i in range(1, 200001):
            last[0], last[1] = str(t0 + i * 1000), f"{e0 + i:.3f}"
            f.write(",".join(last) + "\n")
    size_kib = os.path.getsize(path) // 1024
    root = fixture_path("rpi4")
    d = start_daemon("--sysfs-root", root, "--procfs-root", root, state_dir=d.state_dir)
    before = vm_kib(d.proc.pid, "VmHWM")
    status, doc = d.get("/api/v1/runs/1/samples", timeout=120)
    assert status == 200 and len(doc["rows"]) == len(rows) + 200000
    grew = vm_kib(d.proc.pid, "VmHWM") - before
    assert grew < size_kib // 4, f"peak memory grew {grew} KiB for a {size_kib} KiB file"
    # the run file too is made as it is sent
    status, run_file = d.get("/api/v1/runs/1/export", timeout=120)
    assert status == 200 and run_file["run"]["id"] == 1
    grew = vm_kib(d.proc.pid, "VmHWM") - before
    assert grew < size_kib // 4, f"peak memory grew {grew} KiB for a {size_kib} KiB file"
    # the same values as the CSV, cell for cell (numbers as numbers, empty as null)
    _, csv = d.get("/api/v1/runs/1/samples?format=csv", timeout=120)
    assert run_file["samples_csv"] == csv
    lines = csv.splitlines()
    assert doc["columns"] == lines[0].split(",")
    for i in (0, 1, len(rows) - 1, len(rows), len(lines) - 2):
        cells = lines[i + 1].split(",")
        want = [None if c == "" else c for c in cells]
        got = [v if v is None or isinstance(v, str) else json.dumps(v) for v in doc["rows"][i]]
        assert [float(a) if a and a[0] in "-0123456789" else a for a in got] == \
            [float(b) if b and b[0] in "-0123456789" else b for b in want], i


def test_firmware_throttling_counts_in_imported_run_and_offline(start_daemon, ctl, tmp_path):
    """A Pi's run where cpufreq showed the full clock while the firmware throttled:
    throttled_fraction follows the firmware, in the daemon and in analyse alike."""
    a = board(start_daemon, "rpi4")
    ida = finished_run(a, "undervolted")
    _, doc = a.get(f"/api/v1/runs/{ida}/export")
    lines = doc["samples_csv"].splitlines()
    header = lines[0].split(",")
    assert header[11:14] == ["t_since_load_s", "firmware_arm_hz", "firmware_throttled"], header
    rows = [line.split(",") for line in lines[1:]]
    assert all(r[12] == "" and r[13] == "" for r in rows)      # no firmware on this tree: unknown
    stress = [r for r in rows if r[2] == "stress"]
    assert len(stress) >= 4
    for i, r in enumerate(stress):
        r[5] = r[6]                                             # cpufreq: the full clock throughout
        r[12], r[13] = ("600000000", "1") if i % 2 else ("1500000000", "0")
    doc["samples_csv"] = "\n".join(",".join(r) for r in [header] + rows) + "\n"
    want = sum(1 for i in range(len(stress)) if i % 2) / len(stress)

    status, imported = a.request("POST", "/api/v1/runs/import", doc)
    assert status == 201, imported
    assert imported["metrics"]["throttled_fraction"] == pytest.approx(want, abs=1e-4)
    f = tmp_path / "run.json"
    f.write_text(json.dumps(doc))
    r = ctl(None, "analyse", "--json", str(f), url=False)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["throttled_fraction"] == pytest.approx(want, abs=1e-4)


def long_run_file(doc, size):
    """doc with size bytes of short samples rows: idle, stress, then cooldown, rising and falling."""
    header = doc["samples_csv"].split("\n", 1)[0]
    rows, total, i = [header], len(header) + 1, 0
    phases = ("idle", "stress", "cooldown")
    n = size // 30
    while total < size:
        phase = phases[min(3 * i // n, 2)]
        temp = 40 + (20 - 60 * abs(i - n / 2) / n if phase == "stress" else 0)
        row = f"{1700000000000 + i * 10},{i / 100:.3f},{phase},{temp:.3f},,,,0,,,"
        rows.append(row)
        total += len(row) + 1
        i += 1
    return {**doc, "samples_csv": "\n".join(rows) + "\n"}, i


@pytest.mark.slow       # a 30 MiB body of a million rows, 10 s
def test_a_large_import_is_held_to_the_series_cap(start_daemon):
    """The rows of an imported run are kept as a live run's are: at most RUN_SERIES_MAX of them
    in memory, every 2nd, 4th ... past it; the daemon answers others meanwhile."""
    a = board(start_daemon, "rpi4")
    finished_run(a, "source")
    _, doc = a.get("/api/v1/runs/1/export")
    big, n_rows = long_run_file(doc, 30 * 1024 * 1024)
    body = json.dumps(big).encode()
    before = vm_kib(a.proc.pid, "VmHWM")
    waits, done = [], threading.Event()

    def poll():
        while not done.is_set():
            t = time.monotonic()
            assert a.get("/api/v1/status", timeout=30)[0] == 200
            waits.append(time.monotonic() - t)
            time.sleep(0.05)

    poller = threading.Thread(target=poll)
    poller.start()
    try:
        status, run = a.request("POST", "/api/v1/runs/import", body, timeout=120)
    finally:
        done.set()
        poller.join()
    grew = vm_kib(a.proc.pid, "VmHWM") - before
    print(f"import of {len(body)} bytes, {n_rows} rows: VmHWM grew {grew} KiB, "
          f"longest /status {max(waits):.3f} s")
    assert status == 201, run
    assert run["recording"]["samples"] == n_rows
    assert run["metrics"]["peak_c"] == pytest.approx(60, abs=0.1)
    if not sanitized(a.proc.pid):      # AddressSanitizer keeps freed memory in its quarantine
        assert grew < 64 * 1024, f"peak memory grew {grew} KiB for a {len(body) // 1024} KiB import"
    # written as sent: the file reads back whole
    status, csv = a.get(f"/api/v1/runs/{run['id']}/samples?format=csv", timeout=120)
    assert status == 200 and csv == big["samples_csv"]


@pytest.mark.slow       # a 3 MiB import sent at 200 KiB/s, 16 s
def test_a_slow_import_has_the_time_its_size_needs(start_daemon):
    """The whole-request deadline grows with the Content-Length (1 s per 256 KiB on top of
    10 s): an import on a slow link is answered, where 10 s for the whole body cut it."""
    a = board(start_daemon, "rpi4")
    finished_run(a, "source")
    _, doc = a.get("/api/v1/runs/1/export")
    body = json.dumps(long_run_file(doc, 3 * 1024 * 1024)[0]).encode()
    rate, step = 200 * 1024, 0.1
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", a.port), timeout=30) as s:
        s.sendall(b"POST /api/v1/runs/import HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body))
        for at in range(0, len(body), int(rate * step)):
            s.sendall(body[at:at + int(rate * step)])
            time.sleep(max(0.0, started + (at + rate * step) / rate - time.monotonic()))
        took = time.monotonic() - started
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
    assert took > 12, f"sent in {took:.1f} s: not slower than the fixed deadline"
    assert answer.startswith(b"HTTP/1.1 201"), answer[:300]
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["recording"]["samples"] > 70000
