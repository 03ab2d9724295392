"""heatcurvectl against a running heatcurved: tables, runs, export, compare across daemons, errors."""
import http.server
import json
import os
import re
import signal
import subprocess
import threading
import time
import urllib.request

import pytest

from conftest import fixture_path, import_busy_copy, start_tree, write_in_place

HEATCURVECTL = os.environ.get("HEATCURVECTL", "")


@pytest.fixture
def ctl():
    """ctl(daemon, *args, url=None, env=None) -> CompletedProcess; --url goes first unless url=False."""
    if not HEATCURVECTL or not os.access(HEATCURVECTL, os.X_OK):
        pytest.skip("HEATCURVECTL is not set to the built client (run through meson test)")

    def run(d, *args, url=None, env=None, timeout=60):
        base = [] if url is False else ["--url", url or d.url] if (url or d) else []
        full_env = dict(os.environ)
        full_env.pop("HEATCURVE_URL", None)
        full_env.update(env or {})
        return subprocess.run([HEATCURVECTL, *base, *args], capture_output=True, text=True,
                              timeout=timeout, env=full_env)
    return run


def board(start_daemon, name, *extra):
    """heatcurved on a fixture tree, sampling every 100 ms."""
    root = fixture_path(name)
    return start_daemon("--sysfs-root", root, "--procfs-root", root, "--interval", "100ms", *extra)


def rows(text):
    return [line.split() for line in text.strip().splitlines() if line.strip()]


def row_starting(text, *words):
    found = [row for row in rows(text) if row[:len(words)] == list(words)]
    assert found, f"no row starting with {words!r} in:\n{text}"
    return found[0]


def assert_no_trailing_spaces(text):
    assert not any(line.endswith(" ") for line in text.splitlines()), text


def assert_one_line_error(r, code, needle):
    assert r.returncode == code, (r.returncode, r.stdout, r.stderr)
    assert r.stderr.startswith("heatcurvectl: ") and needle in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1, r.stderr


def run_short(ctl, d, label, *phases):
    """A run with second-long phases, waited for; returns the CompletedProcess."""
    args = phases or ("--idle", "duration=1s", "--stress", "cpu,duration=2s,workers=1", "--cooldown", "duration=1s")
    r = ctl(d, "run", "--label", label, "--ambient", "21.5", *args, "--wait")
    assert r.returncode == 0, (r.stdout, r.stderr)
    return r


class FakeDaemon:
    """A server answering every GET with a fixed status and body (what a broken daemon might send)."""

    def __init__(self, status, body, ctype="application/json"):
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_daemon():
    made = []

    def make(status, body, ctype="application/json"):
        made.append(FakeDaemon(status, body, ctype))
        return made[-1]
    yield make
    for f in made:
        f.close()


def test_status_says_when_the_history_was_damaged(start_daemon, ctl, tmp_path):
    state = tmp_path / "state-damaged"
    state.mkdir()
    (state / "history.bin").write_bytes(b"not a history file\n" * 10)
    root = fixture_path("rpi4")
    d = start_daemon("--sysfs-root", root, "--procfs-root", root, state_dir=str(state))
    r = ctl(d, "status")
    assert r.returncode == 0, r.stderr
    _, st = d.get("/api/v1/status")
    moved = st["storage"]["history_recovered"]["moved_to"]
    line = [line for line in r.stdout.splitlines() if line.startswith("history ")]
    assert line and moved in line[0] and "damaged at start" in line[0], r.stdout


def test_status_and_sensors_tables(start_daemon, ctl):
    d = board(start_daemon, "rk3399-rockpro64")
    r = ctl(d, "status")
    assert r.returncode == 0, r.stderr
    _, st = d.get("/api/v1/status")
    assert st["board"]["model"] in r.stdout and st["board"]["hostname"] in r.stdout
    hot = st["sensors"]["hottest"]
    assert row_starting(r.stdout, "hottest")[1:] == [hot["id"], f"{hot['celsius']:.1f}", "°C"]
    assert row_starting(r.stdout, "run") == ["run", "none"]
    assert row_starting(r.stdout, "storage") == ["storage", "ok"]
    assert "history " not in r.stdout
    assert_no_trailing_spaces(r.stdout)

    r = ctl(d, "sensors")
    assert r.returncode == 0, r.stderr
    _, doc = d.get("/api/v1/sensors")
    table = {row[0]: row for row in rows(r.stdout)}
    assert table["SENSOR"] == ["SENSOR", "TYPE/LABEL", "°C", "STATE"]
    for t in doc["temperatures"]:
        assert t["ok"] and table[t["id"]][-2:] == [f"{t['celsius']:.1f}", "ok"], table[t["id"]]
    for p in doc["cpufreq"]:
        assert str(round(p["cur_hz"] / 1e6)) == table[p["id"]][2]
    assert_no_trailing_spaces(r.stdout)
    # the columns line up: every row of the first table puts °C at the same offset
    lines = r.stdout.splitlines()
    first_table = lines[:lines.index("")]
    offset = first_table[0].index("°C")
    for line, t in zip(first_table[1:], doc["temperatures"]):
        assert line[offset:].startswith(f"{t['celsius']:.1f}"), (line, offset)


def test_json_output_is_the_servers_document(start_daemon, ctl):
    d = board(start_daemon, "rpi4")
    r = ctl(d, "--json", "sensors")
    assert r.returncode == 0, r.stderr
    mine = json.loads(r.stdout)
    _, theirs = d.get("/api/v1/sensors")
    assert mine.keys() == theirs.keys()
    assert mine["board"] == theirs["board"] and mine["cpufreq"] == theirs["cpufreq"]
    assert [t["id"] for t in mine["temperatures"]] == [t["id"] for t in theirs["temperatures"]]
    # options also after the command, and paths are not escaped ("\/")
    r = ctl(d, "status", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["storage"]["state_dir"] == d.state_dir and "\\/" not in r.stdout


def test_url_from_the_environment(start_daemon, ctl):
    d = board(start_daemon, "rpi4")
    r = ctl(None, "status", url=False, env={"HEATCURVE_URL": d.url + "/"})
    assert r.returncode == 0, r.stderr
    assert "Raspberry Pi 4" in r.stdout
    r = ctl(None, "--url", d.url, "status", url=False, env={"HEATCURVE_URL": "http://127.0.0.1:1"})
    assert r.returncode == 0, r.stderr


def test_help_and_version(ctl):
    r = ctl(None, "--help")
    assert r.returncode == 0 and "compare" in r.stdout and "cmd is split on spaces" in r.stdout
    r = ctl(None, "--version")
    assert r.returncode == 0 and r.stdout.startswith("heatcurvectl ")


def test_connection_refused_names_the_url(ctl):
    r = ctl(None, "status", url="http://127.0.0.1:1")
    assert_one_line_error(r, 1, "http://127.0.0.1:1/api/v1/status")


def test_usage_errors(start_daemon, ctl, tmp_path):
    d = board(start_daemon, "rpi4")
    for args, code, needle in ((["frobnicate"], 2, 'unknown command "frobnicate"'),
                               ([], 2, "no command"),
                               (["--frob", "status"], 2, "unknown option --frob"),
                               (["runs", "--frob"], 2, "runs: unknown option --frob"),
                               (["run", "--label"], 2, "--label needs a value"),
                               (["status", "extra"], 2, 'unexpected argument "extra"'),
                               (["show", "abc"], 2, "run id"),
                               (["show", "42"], 1, "no run 42"),
                               (["watch", "--count", "0"], 2, "--count"),
                               (["export", "1", "--format", "xml"], 2, "csv, json or run"),
                               (["compare", "http://127.0.0.1:1/"], 2, "does not end in /ID"),
                               (["--token-file", str(tmp_path / "none"), "status"], 1, "none"),
                               (["run", "--stress", "cpu,colour=red"], 2, 'phases[0]): unknown key "colour"'),
                               (["run", "--idle", "duration=1s", "--stress", "cpu,max=5x"], 2,
                                "--stress (phases[1]): max=5x is not a duration"),
                               (["run", "--idle", "duration=5x"], 2, "duration=5x"),
                               (["run", "--cooldown", "until=baseline,until=stable"], 2, '"until" given twice'),
                               (["run", "--stress", "cpu,workers=four"], 2, "workers=four is not a whole number"),
                               (["run", "--stress", "until=plateau,cpu"], 2, '"cpu" must come first'),
                               (["run", "--idle", "cpu"], 2, '"cpu" is not key=value'),
                               (["run", "--ambient", "warm", "--idle", "duration=1s"], 2, "--ambient needs a number"),
                               (["run"], 2, "at least one phase")):
        r = ctl(d, *args)
        assert_one_line_error(r, code, needle)


def test_server_side_validation_message(start_daemon, ctl):
    d = board(start_daemon, "rpi4")
    r = ctl(d, "run", "--idle", "until=plateau")
    assert_one_line_error(r, 1, "phases[0].until")
    assert "HTTP 400" in r.stderr


def test_malformed_answers(ctl, fake_daemon):
    f = fake_daemon(200, b'{"board": {"model": "x"')
    r = ctl(None, "status", url=f.url)
    assert_one_line_error(r, 1, "not JSON")
    f = fake_daemon(200, b'{"runs": []} trailing')
    assert_one_line_error(ctl(None, "runs", url=f.url), 1, "not JSON")
    f = fake_daemon(200, b'{"runs": 5}')
    assert_one_line_error(ctl(None, "runs", url=f.url), 1, '"runs" list')
    f = fake_daemon(500, b"<html>oops</html>", "text/html")
    assert_one_line_error(ctl(None, "sensors", url=f.url), 1, "HTTP 500")
    f = fake_daemon(503, b'{"error": {"code": "busy", "message": "try later"}}')
    assert_one_line_error(ctl(None, "show", "1", url=f.url), 1, "try later")
    # documents with odd shapes print dashes, not crashes
    f = fake_daemon(200, b'{"id": 1, "phases": 3, "metrics": [], "board": null}')
    r = ctl(None, "show", "1", url=f.url)
    assert r.returncode == 0, r.stderr
    assert row_starting(r.stdout, "baseline", "°C")[-1] == "-"


def test_watch_without_a_run_shows_the_hottest_sensor(start_daemon, ctl):
    d = board(start_daemon, "rpi4")
    _, st = d.get("/api/v1/status")
    hot = st["sensors"]["hottest"]
    r = ctl(d, "watch", "--count", "2")
    assert r.returncode == 0, r.stderr
    # then a sparkline: the history so far and the readings, a flat line drawn at mid height,
    # no throttling mark
    lines = r.stdout.splitlines()
    assert len(lines) == 2, r.stdout
    for line in lines:
        assert re.fullmatch(f"no run  hottest {hot['id']} {hot['celsius']:.1f} °C ▅+", line), line


@pytest.mark.slow       # two recorded runs, 6 s
def test_run_show_export_stop_delete(start_daemon, ctl):
    d = board(start_daemon, "rpi4")
    r = run_short(ctl, d, "alu case")
    lines = r.stdout.splitlines()
    assert lines[0] == "run 1 started" and lines[-1].startswith("run 1 finished after ")
    live = [line for line in lines if line.startswith("run 1 stress 2/3 ")]
    assert live and "ops/s" in " ".join(live) and "hottest 48." in live[0]
    # the fixture's CPU runs below its allowed maximum: throttled under load, marked
    # in the line and in the sparkline ("!" when not on a terminal); idle is not marked
    assert all(" MHz throttled " in line for line in live), live
    spark = live[-1].split(" °C ")[1].split()[0]
    assert spark.endswith("!"), live[-1]
    idle = [line for line in lines if line.startswith("run 1 idle 1/3 ")]
    assert idle and not any("throttled" in line or "!" in line for line in idle), idle

    r = ctl(d, "runs")
    assert r.returncode == 0, r.stderr
    header, first = rows(r.stdout)[:2]
    assert header[:3] == ["ID", "LABEL", "STATE"]
    assert first[:4] == ["1", "alu", "case", "finished"]
    _, doc = d.get("/api/v1/runs/1")
    assert first[-5] == f"{doc['metrics']['baseline_c']:.1f}"
    assert_no_trailing_spaces(r.stdout)
    r = ctl(d, "--json", "runs")
    assert json.loads(r.stdout) == d.get("/api/v1/runs")[1]

    r = ctl(d, "show", "1")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith('run 1 "alu case": finished')
    assert row_starting(r.stdout, "ambient", "°C")[-1] == "21.5"
    assert row_starting(r.stdout, "baseline", "°C")[-1] == f"{doc['metrics']['baseline_c']:.1f}"
    assert [row[-1] for row in rows(r.stdout) if row and row[0] in ("idle", "stress", "cooldown")] == \
        [p["end_reason"] for p in doc["phases"]] == ["duration"] * 3
    # every metric has a row (the work unit goes with the work rates), null shown as "-"
    metrics = {k: v for k, v in doc["metrics"].items() if k != "work_unit"}
    table = r.stdout.split("\n\n")[-1].splitlines()
    assert len(table) == len(metrics), table
    assert sum(line.endswith(" -") for line in table) == sum(v is None for v in metrics.values())
    assert row_starting(r.stdout, "fit", "model")[-1] == (doc["metrics"]["fit_model"] or "-")
    assert row_starting(r.stdout, "work", "rate", "start")[-1] == doc["metrics"]["work_unit"] + "/s"
    assert_no_trailing_spaces(r.stdout)
    r = ctl(d, "show", "1", "--json")
    assert json.loads(r.stdout) == doc

    r = ctl(d, "export", "1")
    assert r.returncode == 0, r.stderr
    status, csv = d.get("/api/v1/runs/1/samples?format=csv")
    assert status == 200 and r.stdout == csv
    lines = r.stdout.splitlines()
    assert lines[0].startswith("time_ms,elapsed_s,phase,temp_c") and len(lines) == doc["recording"]["samples"] + 1
    r = ctl(d, "export", "1", "--format", "json")
    assert json.loads(r.stdout)["columns"][0] == "time_ms"

    r = ctl(d, "run", "--stress", "cpu,duration=10m,workers=1")
    assert r.returncode == 0 and r.stdout == "run 2 started\n", r.stderr
    r = ctl(d, "status")
    line = [line for line in r.stdout.splitlines() if line.startswith("run ")][0]
    assert line.startswith("run      2 ") and "phase stress," in line, line
    r = ctl(d, "watch", "--count", "2")
    assert r.returncode == 0 and r.stdout.count("run 2 stress 1/1 ") == 2, r.stdout
    r = ctl(d, "delete", "2")
    assert_one_line_error(r, 1, "HTTP 409")
    r = ctl(d, "stop", "2")
    assert r.returncode == 0 and r.stdout.startswith("run 2 stopped"), r.stderr
    assert d.get("/api/v1/runs/2")[1]["state"] == "aborted"
    r = ctl(d, "delete", "2")
    assert r.returncode == 0 and r.stdout == "run 2 deleted\n"
    assert d.get("/api/v1/runs/2")[0] == 404
    assert_one_line_error(ctl(d, "delete", "2"), 1, "no run 2")
    assert_one_line_error(ctl(d, "stop", "2"), 1, "no run 2")


def test_run_wait_exit_status(start_daemon, ctl):
    d = board(start_daemon, "rpi4")
    p = subprocess.Popen([HEATCURVECTL, "--url", d.url, "run", "--stress", "cpu,duration=10m,workers=1", "--wait"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    d.wait_for(lambda: (d.get("/api/v1/status")[1]["current_run"] or {}).get("id") == 1, what="run 1")
    assert d.request("POST", "/api/v1/runs/1/stop")[0] == 200
    out, err = p.communicate(timeout=20)
    assert p.returncode == 3, (out, err)
    assert out.splitlines()[-1].startswith("run 1 aborted after ")

    # Ctrl-C while waiting: the client says the run goes on, and it does
    p = subprocess.Popen([HEATCURVECTL, "--url", d.url, "run", "--stress", "cpu,duration=10m,workers=1", "--wait"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    d.wait_for(lambda: (d.get("/api/v1/status")[1]["current_run"] or {}).get("id") == 2, what="run 2")
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=20)
    assert p.returncode == 130 and err.count("\n") == 1 and "heatcurvectl stop 2" in err, (out, err)
    assert d.get("/api/v1/runs/2")[1]["state"] == "running"
    r = ctl(d, "--json", "stop", "2")
    assert r.returncode == 0 and json.loads(r.stdout)["id"] == 2


def test_run_sends_the_phases_in_command_line_order(start_daemon, ctl):
    d = board(start_daemon, "rpi4")
    r = ctl(d, "--json", "run", "--label", "order", "--notes", "n", "--safety-limit", "80", "--sensor", "thermal_zone0",
            "--cooldown", "duration=1h", "--stress", "memory,size=1M,duration=1h,workers=1",
            "--idle", "until=stable,min=1m,max=2h")
    assert r.returncode == 0, r.stderr
    run = json.loads(r.stdout)
    assert [p["kind"] for p in run["phases"]] == ["cooldown", "stress", "idle"]
    assert run["phases"][1]["load"]["type"] == "memory" and run["phases"][1]["load"]["size"] == 1 << 20
    assert run["phases"][2]["until"] == "stable" and run["phases"][2]["max"] == "2h"
    assert run["notes"] == "n" and run["safety_limit_c"] == 80 and run["sensor"] == "thermal_zone0"
    assert ctl(d, "stop", str(run["id"])).returncode == 0


@pytest.mark.slow       # a recorded run on each of two daemons, 6 s
def test_compare_across_daemons(start_daemon, ctl):
    a = board(start_daemon, "rpi4")
    b = board(start_daemon, "rk3399-rockpro64")
    for d, label in ((a, "case A"), (b, "case B")):
        run_short(ctl, d, label, "--idle", "duration=1s", "--stress", "cpu,duration=1s,workers=1")
    r = ctl(a, "compare", "1", f"{b.url}/1")
    assert r.returncode == 0, r.stderr
    _, adoc = a.get("/api/v1/runs/1")
    _, bdoc = b.get("/api/v1/runs/1")
    header = r.stdout.splitlines()[0]
    assert f"case A ({adoc['board']['hostname']}, #1)" in header
    assert f"case B ({bdoc['board']['hostname']}, #1)" in header
    assert header.rstrip().endswith("Δ vs 1st")
    baseline = row_starting(r.stdout, "baseline", "°C")
    ab, bb = adoc['metrics']['baseline_c'], bdoc['metrics']['baseline_c']
    # each other run's value, then its difference from the first run's
    assert baseline[2:] == [f"{ab:.1f}", f"{bb:.1f}", f"{bb - ab:+.1f}"]
    assert_no_trailing_spaces(r.stdout)
    r = ctl(a, "--json", "compare", "1", f"{b.url}/1")
    doc = json.loads(r.stdout)          # the document GET /api/v1/compare answers
    assert doc["runs"] == [adoc, bdoc]
    assert [c["id"] for c in doc["curves"]] == [1, 1]
    assert [g["label"] for g in doc["groups"]] == ["case A", "case B"]
    assert [(v["a"], v["b"]) for v in doc["verdicts"]] == [("case A", "case B")]
    r = ctl(a, "compare", "1", f"{b.url}/7")
    assert_one_line_error(r, 1, "no run 7")


def test_token_is_sent(start_daemon, ctl, tmp_path):
    token = tmp_path / "token"
    token.write_text("abc123\n")
    conf = tmp_path / "c.conf"
    conf.write_text(f"[daemon]\ntoken_file = {token}\n")
    d = board(start_daemon, "rpi4", "--config", str(conf))
    r = ctl(d, "run", "--idle", "duration=1s")
    assert_one_line_error(r, 1, "Bearer")
    r = ctl(d, "--token", "wrong", "run", "--idle", "duration=1s")
    assert_one_line_error(r, 1, "token (HTTP 401")
    r = ctl(d, "--token-file", str(token), "run", "--idle", "duration=1m")
    assert r.returncode == 0, r.stderr
    r = ctl(d, "stop", "1", "--token", "abc123")
    assert r.returncode == 0, r.stderr


def test_alerts_lists_rules_fans_and_transitions(start_daemon, fixture_copy, ctl, tmp_path):
    root = fixture_copy("rpi4")
    zone = os.path.join(root, "sys/class/thermal/thermal_zone0/temp")
    write_in_place(zone, "45000\n")
    conf = tmp_path / "a.conf"
    conf.write_text("[alert soc]\nsensor = thermal_zone0\nwarn = 60\ncrit = trip:critical-10\n\n"
                    "[fan case]\nsensor = thermal_zone0\non = 62\noff = 50\ngpio = gpiochip9:1\n")
    d = start_tree(start_daemon, root, "--config", str(conf))
    write_in_place(zone, "63000\n")
    d.wait_for(lambda: d.get("/api/v1/alerts")[1]["rules"][0]["state"] == "warn", what="warn")
    r = ctl(d, "alerts")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["RULE", "STATE", "SINCE", "SENSOR", "°C", "WARN", "°C", "CRIT", "°C", "GPIO"]
    soc = lines[1].split()
    assert soc[0] == "soc" and soc[1] == "warn" and soc[4] == "thermal_zone0" and soc[5:8] == ["63.0", "60.0", "80.0"]
    assert soc[8] == "-"                                # no line
    assert any(line.startswith("FAN") and line.split()[-1] == "GPIO" for line in lines)
    assert any(line.split()[:2] == ["case", "on"] for line in lines)
    # no chip 9 here: the fan is on in the daemon's mind only, and the table says so
    assert [line.split()[-1] for line in lines if line.startswith("case ")] == ["no"]
    assert any(line.startswith("fan case: gpio gpiochip9:1: ") for line in lines), lines
    assert max(len(line) for line in lines if not line.startswith("fan case: gpio")) <= 80, lines
    assert any("ok -> warn" in line and "thermal_zone0" in line for line in lines)
    # transitions a second apart are told apart: times to the second
    assert re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$", " ".join(soc[2:4])), soc
    assert any(re.search(r" \d\d:\d\d:\d\d .*ok -> warn", line) for line in lines), lines
    r = ctl(d, "alerts", "--json")
    assert json.loads(r.stdout)["rules"][0]["name"] == "soc"
    r = ctl(d, "alerts", "extra")
    assert r.returncode == 2 and "unexpected argument" in r.stderr


def test_alerts_say_whether_each_gpio_line_is_driven(ctl, fake_daemon):
    """GPIO: yes where the line is held and its last setting took, no where not, - without a line
    (gpio_driven of /api/v1/alerts); within 80 columns."""
    rule = {"name": "soc", "state": "crit", "since_ms": 1700000000000, "sensor": "thermal_zone0",
            "value_sensor": "thermal_zone0", "value_c": 86.5, "warn_c": 70.0, "crit_c": 85.0}
    doc = {"rules": [dict(rule, gpio="gpiochip0:17", gpio_driven=True, gpio_error=None),
                     dict(rule, name="gpu", state="ok", gpio="gpiochip0:18", gpio_driven=False,
                          gpio_error="gpiochip0:18: Permission denied"),
                     dict(rule, name="ddr", state="ok", gpio=None, gpio_driven=None, gpio_error=None)],
           "fans": [{"name": "case", "on": True, "since_ms": 1700000000000, "value_sensor": "thermal_zone0",
                     "value_c": 86.5, "gpio": "gpiochip0:4", "gpio_driven": True, "gpio_error": None}],
           "transitions": []}
    f = fake_daemon(200, json.dumps(doc).encode())
    r = ctl(None, "alerts", url=f.url)
    assert r.returncode == 0, r.stderr
    rows = {line.split()[0]: line.split() for line in r.stdout.splitlines() if line.strip()}
    assert rows["RULE"][-1] == "GPIO" and rows["FAN"][-1] == "GPIO"
    assert rows["soc"][-1] == "yes" and rows["gpu"][-1] == "no" and rows["ddr"][-1] == "-"
    assert rows["case"][-1] == "yes"
    assert "rule gpu: gpio gpiochip0:18: gpiochip0:18: Permission denied" in r.stdout
    assert max(len(line) for line in r.stdout.splitlines()) <= 80, r.stdout


def test_a_disturbed_run_is_flagged_in_runs_show_and_compare(start_daemon, ctl):
    """A run whose idle phase was busy with other programs says so in every table, not only
    in its document: runs (QUALITY), show (quality line naming the metrics), compare (a row)."""
    d = board(start_daemon, "rpi4")
    status, run = d.request("POST", "/api/v1/runs", {"label": "clean",
                                                     "phases": [{"kind": "idle", "duration": "2s"}]})
    assert status == 201, run
    d.wait_for(lambda: d.get("/api/v1/runs/1")[1]["state"] == "finished", what="the run's end")
    import_busy_copy(d, 1)             # a cron job during the idle phase: 60 % of the CPUs

    r = ctl(d, "runs")
    assert r.returncode == 0, r.stderr
    table = rows(r.stdout)
    assert table[0][:4] == ["ID", "LABEL", "STATE", "QUALITY"]
    assert {row[0]: row[3] for row in table[1:]} == {"1": "ok", "2": "disturbed"}, r.stdout
    r = ctl(d, "show", "2")
    assert r.returncode == 0 and "quality  disturbed: " in r.stdout and "baseline_c disturbed" in r.stdout, r.stdout
    assert "quality  ok\n" in ctl(d, "show", "1").stdout
    r = ctl(d, "compare", "1", "2")
    assert r.returncode == 0, r.stderr
    assert row_starting(r.stdout, "quality")[1:] == ["ok", "disturbed"], r.stdout

    # and in the plots: the title, the hatched phase and its key, the compare legend
    r = ctl(d, "plot", "2")
    assert r.returncode == 0, r.stderr
    assert "<title>busy</title>" in r.stdout and re.search(r">busy — [^<]* — disturbed</text>", r.stdout), r.stdout[:600]
    assert r.stdout.count('fill="url(#disturbed)"') == 3, r.stdout     # the phase in both panels, the key
    assert ">disturbed phase</text>" in r.stdout and ">quality: disturbed</text>" in r.stdout
    with urllib.request.urlopen(d.url + "/api/v1/runs/2/plot.svg", timeout=20) as resp:
        assert resp.read().decode() == r.stdout                          # the daemon draws the same
    clean = ctl(d, "plot", "1").stdout
    assert "disturbed" not in clean and "quality:" not in clean
    r = ctl(d, "plot", "1", "2")
    assert r.returncode == 0, r.stderr
    assert ">busy — disturbed: plateau" in r.stdout and ">clean: plateau" in r.stdout, r.stdout


def test_watch_shows_every_field_at_80_columns(start_daemon, ctl, tmp_path):
    """In an 80x24 terminal (a real tmux pane) the live line goes on two lines between fields
    rather than losing load, work rate and plateau off the right edge."""
    import shutil
    tmux = shutil.which("tmux")
    if not tmux:
        pytest.skip("tmux is not installed (Debian package tmux)")
    d = board(start_daemon, "rpi4")
    status, run = d.request("POST", "/api/v1/runs", {"phases": [
        {"kind": "idle", "duration": "1s"},
        {"kind": "stress", "duration": "20s", "load": {"type": "cpu", "workers": 1}}]})
    assert status == 201, run
    sock = str(tmp_path / "tmux.sock")
    cmd = f"{HEATCURVECTL} --url {d.url} watch {run['id']}; sleep 30"
    subprocess.run([tmux, "-S", sock, "new-session", "-d", "-x", "80", "-y", "24", "-s", "w", cmd], check=True)
    try:
        screen = ""
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            screen = subprocess.run([tmux, "-S", sock, "capture-pane", "-p", "-t", "w"],
                                    capture_output=True, text=True).stdout
            if " stress " in screen and "plateau" in screen:
                break
            time.sleep(0.2)
        lines = [line for line in screen.splitlines() if line.strip()]
        assert len(lines) == 2, screen                   # the live line, on two: nothing else left over
        text = " ".join(lines)
        for field in ("run 1 stress 2/2", "temp ", "hottest ", " MHz", "load ", "work ", "plateau "):
            assert field in text, (field, screen)
        assert all(len(line) <= 80 for line in screen.splitlines()), screen
    finally:
        subprocess.run([tmux, "-S", sock, "kill-server"], capture_output=True)


def capture_watch(tmux, sock, cmd, ready, timeout=15):
    """The 80x24 tmux pane running cmd, once ready(screen) holds (or at the timeout)."""
    subprocess.run([tmux, "-S", sock, "new-session", "-d", "-x", "80", "-y", "24", "-s", "w", cmd], check=True)
    screen = ""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        screen = subprocess.run([tmux, "-S", sock, "capture-pane", "-p", "-t", "w"],
                                capture_output=True, text=True).stdout
        if ready(screen):
            break
        time.sleep(0.2)
    return screen


def test_watch_shows_alert_states_at_80_columns(start_daemon, fixture_copy, ctl, tmp_path):
    """A word per rule that is not ok, on the live line of a run and of the board; at 80 columns
    it goes on a line of its own rather than off the edge."""
    import shutil
    tmux = shutil.which("tmux")
    if not tmux:
        pytest.skip("tmux is not installed (Debian package tmux)")
    root = fixture_copy("rpi4")
    write_in_place(os.path.join(root, "sys/class/thermal/thermal_zone0/temp"), "75000\n")
    conf = tmp_path / "a.conf"
    conf.write_text("[alert soc_temperature]\nsensor = thermal_zone0\nwarn = 60\ncrit = 70\n\n"
                    "[alert board_enclosure]\nsensor = thermal_zone0\nwarn = 70\ncrit = 90\n\n"
                    "[alert cool]\nsensor = thermal_zone0\nwarn = 95\ncrit = 99\n")
    d = start_tree(start_daemon, root, "--config", str(conf))
    d.wait_for(lambda: len(d.get("/api/v1/status")[1]["active_alerts"]) == 2, what="two alerts")
    r = ctl(d, "watch", "--count", "1")
    assert r.returncode == 0 and r.stdout.rstrip("\n").endswith("  alert soc_temperature crit  alert board_enclosure warn"), r.stdout
    status, run = d.request("POST", "/api/v1/runs", {"phases": [
        {"kind": "idle", "duration": "1s"},
        {"kind": "stress", "duration": "20s", "load": {"type": "cpu", "workers": 1}}]})
    assert status == 201, run
    sock = str(tmp_path / "tmux.sock")
    try:
        screen = capture_watch(tmux, sock, f"{HEATCURVECTL} --url {d.url} watch {run['id']}; sleep 30",
                               lambda s: " stress " in s and "plateau" in s and "board_enclosure warn" in s)
        lines = [line for line in screen.splitlines() if line.strip()]
        assert len(lines) == 3, screen                   # too wide for two lines: a third, between fields
        text = " ".join(lines)
        for field in ("run 1 stress 2/2", "temp ", "hottest ", " MHz", "load ", "work ", "plateau ",
                      "alert soc_temperature crit", "alert board_enclosure warn"):
            assert field in text, (field, screen)
        assert "alert cool" not in text
        assert all(len(line) <= 80 for line in screen.splitlines()), screen
    finally:
        subprocess.run([tmux, "-S", sock, "kill-server"], capture_output=True)


@pytest.mark.slow      # the simulated board rises for about 10 s before the plateau is known
def test_watch_shows_the_plateau_interval_as_show_does(start_daemon, ctl, tmp_path):
    """The predicted plateau with the ends of its interval, "61.5 (60.9–62.3)", not ± its larger
    half (the interval is not symmetric), and still every field within an 80x24 tmux pane."""
    import shutil
    conf = tmp_path / "sim.conf"
    conf.write_text("[simulate]\nboard = rpi4\nambient = 25\ntau = 3s\nrise = 150\nquantize = no\n"
                    "load_source = own\n")
    d = start_daemon("--config", str(conf), "--simulate", "--interval", "200ms")
    # the live plateau is an until=plateau phase's: min keeps it going once known
    status, run = d.request("POST", "/api/v1/runs", {"phases": [
        {"kind": "idle", "duration": "2s"},
        {"kind": "stress", "until": "plateau", "min": "40s", "max": "60s", "load": {"type": "cpu", "duty": 20}}]})
    assert status == 201, run

    def live():
        return d.get(f"/api/v1/runs/{run['id']}")[1]["live"]

    def known(x):
        low, high = x["predicted_plateau_low_c"], x["predicted_plateau_high_c"]
        return low is not None and high - low < 2.0
    d.wait_for(lambda: known(live()), timeout=40, what="a predicted plateau known within 2 °C")
    shape = re.compile(r"\bplateau (\d+\.\d) \((\d+\.\d)–(\d+\.\d)\)")
    r = ctl(d, "watch", "--count", "1")
    assert r.returncode == 0 and "±" not in r.stdout, r.stdout
    m = shape.search(r.stdout)
    assert m, r.stdout
    low, plateau, high = float(m[2]), float(m[1]), float(m[3])
    assert low <= plateau <= high and high - low < 3.0, r.stdout
    assert abs(plateau - live()["predicted_plateau_c"]) < 2.0, (r.stdout, live())
    tmux = shutil.which("tmux")
    if not tmux:
        pytest.skip("tmux is not installed (Debian package tmux)")
    sock = str(tmp_path / "tmux.sock")
    try:
        screen = capture_watch(tmux, sock, f"{HEATCURVECTL} --url {d.url} watch {run['id']}; sleep 30",
                               lambda s: shape.search(s) is not None)
        text = " ".join(line for line in screen.splitlines() if line.strip())
        assert shape.search(text) and "±" not in text, screen
        for field in ("run 1 stress 2/2", "temp ", "hottest ", " MHz", "load ", "work "):
            assert field in text, (field, screen)
        assert all(len(line) <= 80 for line in screen.splitlines()), screen
    finally:
        subprocess.run([tmux, "-S", sock, "kill-server"], capture_output=True)


def test_watch_sparkline_starts_from_the_history(start_daemon, ctl):
    """watch started on a board that has been sampling shows the minutes before it, not one cell."""
    d = board(start_daemon, "rpi4")
    d.wait_for(lambda: d.get("/api/v1/status")[1]["history"]["samples"] >= 60, timeout=15,
               what="6 s of history at 100 ms")
    r = ctl(d, "watch", "--count", "1")
    assert r.returncode == 0, r.stderr
    spark = r.stdout.split(" °C ", 1)[1].strip()
    assert len([c for c in spark if c in "▁▂▃▄▅▆▇█"]) >= 2, r.stdout
