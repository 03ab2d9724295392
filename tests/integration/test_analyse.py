"""heatcurvectl analyse: a real recording replayed through a fixture thermal zone into a daemon run gives the run's own metrics offline; until: plateau on a replayed curve."""
import csv
import gzip
import json
import math
import os
import subprocess
import threading
import time

import pytest

from conftest import start_tree, with_token, write_in_place

HEATCURVECTL = os.environ.get("HEATCURVECTL", "")
DATA = os.path.join(os.path.dirname(__file__), "..", "data")
SPEEDUP = 10                    # 1 Hz recording replayed at the daemon's 100 ms interval


@pytest.fixture
def analyse():
    if not HEATCURVECTL or not os.access(HEATCURVECTL, os.X_OK):
        pytest.skip("HEATCURVECTL is not set to the built client (run through meson test)")

    def run(*args, input=None):
        return subprocess.run([HEATCURVECTL, "analyse", *args], input=input, capture_output=True, text=True,
                              timeout=60)
    return run


def recording_text(name):
    """A recording of tests/data, stored as NAME.gz: its text."""
    with gzip.open(os.path.join(DATA, name + ".gz"), "rt") as f:
        return f.read()


def recording(name, rows):
    return list(csv.DictReader(recording_text(name).splitlines()))[:rows]


class Replay(threading.Thread):
    """Writes one recorded temperature per daemon interval into the zone's temp file."""

    def __init__(self, path, temps_c):
        super().__init__(daemon=True)
        self.path, self.temps_c, self.stop = path, temps_c, threading.Event()

    def run(self):
        start = time.monotonic()
        for i, t in enumerate(self.temps_c):
            write_in_place(self.path, "%d\n" % round(t * 1000))
            if self.stop.wait(max(0.0, start + (i + 1) / SPEEDUP - time.monotonic())):
                return


@pytest.mark.slow       # replays 54 s of a recording
def test_replayed_recording_metrics_equal_analyse(start_daemon, fixture_copy, analyse, tmp_path):
    rows = recording("monipi-rpi4-cooled.csv", 541)        # 0-60 s idle, 300 s load, 180 s rest
    phases = [r["phase"] for r in rows]
    assert phases.count("idle") == 61 and phases.count("stress") == 300 and phases[-1] == "cooldown"
    root = fixture_copy("rpi4")
    zone = os.path.join(root, "sys/class/thermal/thermal_zone0/temp")
    write_in_place(zone, "%d\n" % round(float(rows[0]["temp_c"]) * 1000))
    # the command load (sleep) stands for a load without heating this machine; commands need a token
    d = with_token(lambda *a, **kw: start_tree(start_daemon, root, *a, **kw), tmp_path)
    replay = Replay(zone, [float(r["temp_c"]) for r in rows])
    status, run = d.request("POST", "/api/v1/runs", body={
        "label": "replay", "ambient_c": 21.5, "sensor": "thermal_zone0",
        "phases": [{"kind": "idle", "duration": "6s"},
                   {"kind": "stress", "duration": "30s", "load": {"type": "command", "argv": ["sleep", "1000"]}},
                   {"kind": "cooldown", "duration": "18s"}]})
    replay.start()
    try:
        assert status == 201, run
        done = d.wait_for(lambda: (lambda doc: doc if doc["state"] in ("finished", "aborted") else None)(
            d.get(f"/api/v1/runs/{run['id']}")[1]), timeout=120, what="the run to end")
    finally:
        replay.stop.set()
        replay.join()
    assert done["state"] == "finished", done["abort_reason"]
    metrics = done["metrics"]
    assert metrics["plateau_c"] is not None and metrics["tau_heat_s"] is not None, metrics
    # the prior comes from earlier runs of the label on this daemon, which a file has not: none here
    prior = {k: metrics.pop(k) for k in list(metrics) if k.startswith("tau_prior") or k == "prior_used"}
    assert prior["tau_prior_s"] is None and not prior["prior_used"], prior

    samples = os.path.join(d.state_dir, "runs", str(run["id"]), "samples.csv")
    offline = analyse("--json", "--ambient", "21.5", samples)
    assert offline.returncode == 0, offline.stderr
    got = json.loads(offline.stdout)
    assert {k: got[k] for k in metrics} == metrics
    assert got["predicted_plateau_c"] == metrics["plateau_c"]
    assert got["predicted_plateau_ci95_c"] == metrics["plateau_ci95_c"]

    # the same through the API's export, CSV and JSON
    for fmt in ("csv", "json"):
        status, body = d.get(f"/api/v1/runs/{run['id']}/samples?format={fmt}")
        assert status == 200
        exported = tmp_path / f"export.{fmt}"
        exported.write_text(body if isinstance(body, str) else json.dumps(body))
        r = analyse("--json", "--ambient", "21.5", str(exported))
        assert r.returncode == 0, r.stderr
        assert {k: v for k, v in json.loads(r.stdout).items() if k in metrics} == metrics, fmt

    table = analyse("--ambient", "21.5", samples)
    assert table.returncode == 0, table.stderr
    assert "plateau °C" in table.stdout and "predicted_plateau_c" in table.stdout


@pytest.mark.slow       # waits for the plateau, about 50 s
def test_until_plateau_stops_when_the_interval_is_within_tolerance(start_daemon, fixture_copy, tmp_path):
    # a heating curve, 40 -> 60 C with tau 8 s, noise 0.1 C, written at the daemon's 100 ms interval
    import random
    rnd = random.Random(33)
    temps = [40.0] * 50 + [60 - 20 * math.exp(-k / 10 / 8) + rnd.gauss(0, 0.1) for k in range(1200)]
    root = fixture_copy("rpi4")
    zone = os.path.join(root, "sys/class/thermal/thermal_zone0/temp")
    write_in_place(zone, "40000\n")
    d = with_token(lambda *a, **kw: start_tree(start_daemon, root, *a, **kw), tmp_path)
    replay = Replay(zone, temps)
    status, run = d.request("POST", "/api/v1/runs", body={
        "label": "plateau", "sensor": "thermal_zone0",
        "phases": [{"kind": "idle", "duration": "5s"},
                   {"kind": "stress", "until": "plateau", "max": "100s", "tolerance": 0.5,
                    "load": {"type": "command", "argv": ["sleep", "1000"]}}]})
    replay.start()
    try:
        assert status == 201, run
        done = d.wait_for(lambda: (lambda doc: doc if doc["state"] in ("finished", "aborted") else None)(
            d.get(f"/api/v1/runs/{run['id']}")[1]), timeout=180, what="the run to end")
    finally:
        replay.stop.set()
        replay.join()
    assert done["state"] == "finished", done["abort_reason"]
    stress = done["phases"][1]
    assert stress["tolerance"] == 0.5
    assert stress["end_reason"] == "plateau", stress
    assert (stress["ended_ms"] - stress["started_ms"]) / 1000 < 95, stress
    m = done["metrics"]
    assert abs(m["plateau_c"] - 60) <= 0.5, m
    assert m["plateau_low_c"] <= 60.1 and m["plateau_high_c"] >= 59.9, m
    # plateau_ci95_c, kept for older clients, is the larger half of the interval
    half = max(m["plateau_high_c"] - m["plateau_c"], m["plateau_c"] - m["plateau_low_c"])
    assert abs(m["plateau_ci95_c"] - half) < 0.02, m
    assert m["t90_heat_s"] is not None and m["tau_heat_s"] is not None, m


def test_the_recording_itself_and_errors(analyse, tmp_path):
    text = recording_text("monipi-rpi4-cooled.csv")
    r = analyse("--json", "-", input=text)
    assert r.returncode == 0, r.stderr
    m = json.loads(r.stdout)
    assert m["baseline_c"] == 35.0 and m["peak_c"] == 57.0
    assert m["fit_model"] in ("exp1", "exp2") and m["tau_heat_s"] > 0
    assert m["regulated_c"] is None         # a cooled Pi 4 at 57 C: its plateau is its cooling's
    # the load given in seconds instead of the phase column: the same first load
    r2 = analyse("--json", "--time", "elapsed_s", "--temp", "temp_c", "--load-start", "60.5", "--load-end", "360.5",
                 "-", input=text)
    assert r2.returncode == 0, r2.stderr
    m2 = json.loads(r2.stdout)
    assert m2["plateau_c"] == m["plateau_c"] and m2["tau_heat_s"] == m["tau_heat_s"]

    iso = tmp_path / "iso.csv"
    with open(iso, "w") as f:
        f.write("Timestamp;CPU Temp (millidegrees)\n")
        for i in range(300):
            f.write("2024-05-01T12:%02d:%02d+02:00;%d\n" % (i // 60, i % 60, 40000 + round(15000 * (1 - 0.97 ** i))))
    r = analyse("--json", str(iso))
    assert r.returncode == 0, r.stderr
    assert abs(json.loads(r.stdout)["plateau_c"] - 55.0) < 0.05

    # a board held at the Pi firmware's 80 C, no clock recorded: possibly regulated
    held = tmp_path / "held.csv"
    with open(held, "w") as f:
        f.write("time_s,temp_c\n")
        for i in range(900):
            f.write("%d,%.1f\n" % (i, min(80.0, 50 + 45 * (1 - math.exp(-i / 150)))))
    r = analyse("--json", str(held))
    assert r.returncode == 0, r.stderr
    m = json.loads(r.stdout)
    assert m["regulated_c"] == 80.0 and m["throttled_fraction"] is None, m
    table = analyse(str(held))
    assert "held by throttling at °C" in table.stdout, table.stdout
    # ... which it says instead of a plateau
    [plateau_row] = [line for line in table.stdout.splitlines() if line.startswith("plateau °C ")]
    assert plateau_row.split(None, 2)[2] == "possibly regulated at 80.0 °C (flat at a firmware limit, no clock " \
        "recorded)", table.stdout
    # real recordings (tests/data/PROVENANCE.md): Pi 3Bs with no case top, or a closed acrylic one,
    # sit at the firmware's 80 C under load; a fan-cooled Pi 4 in the same test does not, nor a bare one (72 C)
    for name, held_at in (("stressberry-rpi3b-naked.csv", 80.6), ("stressberry-rpi3b-acrylic.csv", 81.7),
                          ("stressberry-rpi4b-icetower-fan-on.csv", None), ("stressberry-rpi4b-stock.csv", None)):
        r = analyse("--json", "-", input=recording_text(name))
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["regulated_c"] == held_at, (name, r.stdout)

    # a power column (named with --power, in W): the case's thermal resistance, °C/W over ambient
    power = tmp_path / "power.csv"
    with open(power, "w") as f:
        f.write("time_s,temp_c,watts\n")
        for i in range(600):
            f.write("%d,%.2f,%.2f\n" % (i, 45 + 20 * (1 - math.exp(-i / 60)), 5.0 + 0.2 * (i % 2)))
    r = analyse("--json", "--power", "watts", "--ambient", "25", str(power))
    assert r.returncode == 0, r.stderr
    m = json.loads(r.stdout)
    assert m["power_mean_w"] == pytest.approx(5.1, abs=0.001)
    assert m["thermal_resistance_c_per_w"] == pytest.approx(m["rise_over_ambient_c"] / 5.1, abs=0.002)
    r = analyse("--power", "volts", str(power))
    assert r.returncode == 1 and 'no column "volts"' in r.stderr, r.stderr

    cases = [
        ("time,temp\n1,40\n2,41\n2,42\n3,43\n", [], ":4: time 2 is not after"),
        ("time,temp\n1,40\nsoon,41\n", [], ":3: time \"soon\""),
        ("time,temp\n1,40\n2,41\n3,42\n", [], "3 samples with a temperature"),
        ("time,temp\n1,40\n2,41\n3,42\n4,43\n", ["--temp", "cpu"], ":1: no column \"cpu\""),
        ("when,temp\n1,40\n", [], ":1: no time column"),
        ("time,temp,phase\n1,40,idle\n2,41,warm\n", [], ":3: phase \"warm\""),
    ]
    for i, (text, args, needle) in enumerate(cases):
        bad = tmp_path / f"bad{i}.csv"
        bad.write_text(text)
        r = analyse(*args, str(bad))
        assert r.returncode == 1 and needle in r.stderr and r.stderr.count("\n") == 1, (text, r.stderr)
    r = analyse("--phase", "phase", "--load-start", "3", str(iso))
    assert r.returncode == 2 and "exclude" in r.stderr


@pytest.mark.slow       # writes and reads 2,000,000 rows (40 MB), 2 s; longer under ASan
def test_a_long_recording_is_read_a_row_at_a_time(analyse, tmp_path):
    """Two million rows are read a line at a time into at most 131,072 samples (every 2nd,
    4th ... beyond, as a run keeps them): the peak memory stays small whatever the length."""
    path = tmp_path / "long.csv"
    n, spike = 2000000, 1000001         # one row that is not kept: its peak counts all the same
    with open(path, "w") as f:
        f.write("time_s,temp_c,phase\n")
        for start, end, phase in ((0, n // 5, "idle"), (n // 5, 3 * n // 5, "stress"), (3 * n // 5, n, "cooldown")):
            f.writelines(f"{i / 10:.1f},{40 + (20 * (1 - math.exp((n // 5 - i) / (n / 20))) if phase == 'stress' else 0):.3f},"
                         f"{phase}\n" if i != spike else f"{i / 10:.1f},70.000,{phase}\n" for i in range(start, end))
    proc = subprocess.Popen([HEATCURVECTL, "analyse", "--json", str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    out, err = proc.stdout.read(), proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)       # its own peak, not the test's other children's
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stdout.close()
    proc.stderr.close()
    assert proc.returncode == 0, err
    # 2,000,000 rows as text cells took 365 MB; now the kept samples, 6 MB (AddressSanitizer's
    # shadow and quarantine aside)
    with open(HEATCURVECTL, "rb") as f:
        if b"libasan" not in f.read():
            assert usage.ru_maxrss < 64 * 1024, f"peak {usage.ru_maxrss} KiB for {os.path.getsize(path) // 1024} KiB"
    m = json.loads(out)
    assert m["baseline_c"] == pytest.approx(40, abs=0.01) and m["peak_c"] == 70
    assert m["tau_heat_s"] == pytest.approx(10000, rel=0.01)
