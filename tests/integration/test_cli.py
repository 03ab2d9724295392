"""heatcurvectl against a running heatcurved: tables, runs, export, compare across daemons, errors."""
import json
import os
import subprocess

import pytest

from conftest import fixture_path, start_tree

HEATCURVECTL = os.environ.get("HEATCURVECTL", "")


@pytest.fixture
def ctl():
    if not HEATCURVECTL or not os.access(HEATCURVECTL, os.X_OK):
        pytest.skip("HEATCURVECTL is not set to the built client (run through meson test)")

    def run(d, *args, url=None, timeout=60):
        base = ["--url", url or d.url] if (url or d) else []
        return subprocess.run([HEATCURVECTL, *base, *args], capture_output=True, text=True, timeout=timeout)
    return run


def rows(text):
    return [line.split() for line in text.strip().splitlines() if line.strip()]


def test_status_and_sensors_tables(start_daemon, ctl):
    d = start_tree(start_daemon, fixture_path("rk3399-rockpro64"))
    r = ctl(d, "status")
    assert r.returncode == 0, r.stderr
    _, st = d.get("/api/v1/status")
    assert st["board"]["model"] in r.stdout and "run       none" in r.stdout
    r = ctl(d, "sensors")
    assert r.returncode == 0, r.stderr
    _, doc = d.get("/api/v1/sensors")
    table = {row[0]: row for row in rows(r.stdout)}
    for t in doc["temperatures"]:
        assert f"{t['celsius']:.1f}" in table[t["id"]]
    for p in doc["cpufreq"]:
        assert str(p["cur_hz"] // 1000000) in table[p["id"]]
    assert not any(line.endswith(" ") for line in r.stdout.splitlines())


def test_json_output_is_the_servers_document(start_daemon, ctl):
    d = start_tree(start_daemon, fixture_path("rpi4"))
    r = ctl(d, "--json", "sensors")
    assert r.returncode == 0
    mine = json.loads(r.stdout)
    _, theirs = d.get("/api/v1/sensors")
    assert mine["board"] == theirs["board"] and mine["cpufreq"] == theirs["cpufreq"]


def test_errors_are_one_line_and_non_zero(start_daemon, ctl, tmp_path):
    r = ctl(None, "status", url="http://127.0.0.1:1")
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "127.0.0.1:1" in r.stderr
    d = start_tree(start_daemon, fixture_path("rpi4"))
    for args, code, needle in ((["frobnicate"], 2, "unknown command"),
                               (["show", "abc"], 2, "run id"),
                               (["show", "42"], 1, "no run 42"),
                               (["run", "--stress", "cpu,colour=red"], 2, "colour"),
                               (["run", "--idle", "duration=5x"], 2, "duration=5x"),
                               (["run"], 2, "at least one phase"),
                               (["run", "--idle", "until=plateau"], 1, "phases[0].until")):
        r = ctl(d, *args)
        assert r.returncode == code, (args, r.stdout, r.stderr)
        assert r.stderr.startswith("heatcurvectl: ") and needle in r.stderr, (args, r.stderr)
        assert r.stderr.count("\n") == 1, r.stderr


def test_run_show_export_stop_delete(start_daemon, ctl):
    d = start_tree(start_daemon, fixture_path("rpi4"))
    r = ctl(d, "run", "--label", "alu case", "--ambient", "21.5", "--idle", "duration=1s",
            "--stress", "cpu,duration=2s,workers=1", "--cooldown", "duration=1s", "--wait")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("run 1 started") and r.stdout.strip().endswith("run 1 finished")
    assert "stress" in r.stdout and "ops/s" in r.stdout      # the live line showed the load
    r = ctl(d, "runs")
    assert r.returncode == 0
    header, first = rows(r.stdout)[:2]
    assert header[:3] == ["ID", "LABEL", "STATE"] and first[0] == "1" and "finished" in first
    r = ctl(d, "show", "1")
    assert r.returncode == 0
    assert '"alu case"' in r.stdout and "finished" in r.stdout
    _, doc = d.get("/api/v1/runs/1")
    ambient = [row for row in rows(r.stdout) if row[:2] == ["ambient", "°C"]][0]
    assert ambient[-1] == "21.5"
    assert [row[-1] for row in rows(r.stdout) if row and row[0] in ("idle", "cooldown")] == ["duration"] * 2
    r = ctl(d, "export", "1")
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert lines[0].startswith("time_ms,elapsed_s,phase,temp_c") and len(lines) == doc["recording"]["samples"] + 1
    r = ctl(d, "export", "1", "--format", "json")
    assert json.loads(r.stdout)["columns"][0] == "time_ms"

    r = ctl(d, "run", "--stress", "cpu,duration=10m,workers=1")
    assert r.returncode == 0 and "run 2 started" in r.stdout
    r = ctl(d, "watch", "--count", "2")
    assert r.returncode == 0 and r.stdout.count("run 2 stress") == 2
    r = ctl(d, "stop", "2")
    assert r.returncode == 0 and d.get("/api/v1/runs/2")[1]["state"] == "aborted"
    r = ctl(d, "delete", "2")
    assert r.returncode == 0 and d.get("/api/v1/runs/2")[0] == 404
    r = ctl(d, "delete", "2")
    assert r.returncode == 1 and "no run 2" in r.stderr


def test_compare_across_daemons(start_daemon, ctl):
    a = start_tree(start_daemon, fixture_path("rpi4"))
    b = start_tree(start_daemon, fixture_path("rk3399-rockpro64"))
    for d, label in ((a, "case A"), (b, "case B")):
        r = ctl(d, "run", "--label", label, "--idle", "duration=1s", "--stress", "cpu,duration=1s,workers=1",
                "--wait")
        assert r.returncode == 0, r.stderr
    r = ctl(a, "compare", "1", f"{b.url}/1")
    assert r.returncode == 0, r.stderr
    header = r.stdout.splitlines()[0]
    assert "case A (rpi4-20231109, #1)" in header
    _, bdoc = b.get("/api/v1/runs/1")
    assert f"case B ({bdoc['board']['hostname']}, #1)" in header
    baseline = [row for row in rows(r.stdout) if row[:2] == ["baseline", "°C"]][0]
    assert baseline[2] == f"{a.get('/api/v1/runs/1')[1]['metrics']['baseline_c']:.1f}"
    r = ctl(a, "--json", "compare", "1", f"{b.url}/1")
    docs = json.loads(r.stdout)
    assert [x["label"] for x in docs] == ["case A", "case B"]


def test_token_is_sent(start_daemon, ctl, tmp_path):
    token = tmp_path / "token"
    token.write_text("abc123\n")
    conf = tmp_path / "c.conf"
    conf.write_text(f"[daemon]\ntoken_file = {token}\n")
    d = start_tree(start_daemon, fixture_path("rpi4"), "--config", str(conf))
    r = ctl(d, "run", "--idle", "duration=1s")
    assert r.returncode == 1 and "Bearer" in r.stderr
    r = ctl(d, "--token-file", str(token), "run", "--idle", "duration=1s")
    assert r.returncode == 0, r.stderr
