"""GET /metrics of the real heatcurved: promtool on every fixture board, the same values as the JSON API, a real Prometheus."""
import json
import os
import re
import shutil
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from conftest import FIXTURES_DIR, fixture_path, free_port, start_tree, write_in_place

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

BOARDS = sorted(b for b in os.listdir(FIXTURES_DIR) if os.path.isdir(os.path.join(FIXTURES_DIR, b, "sys")))

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?')


def unescape(v):
    return re.sub(r'\\(.)', lambda m: "\n" if m.group(1) == "n" else m.group(1), v)


def parse(text):
    """[(name, {label: value}, float)] of an exposition; asserts every line is well-formed."""
    out = []
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        assert m, f"not a sample line: {line!r}"
        labels = {k: unescape(v) for k, v in LABEL.findall(m.group(3) or "")}
        out.append((m.group(1), labels, float(m.group(4))))
    return out


def metrics(d):
    status, body = d.get("/metrics")
    assert status == 200, body
    return parse(body)


def values(samples, name, **match):
    return [v for n, l, v in samples if n == name and all(l.get(k) == w for k, w in match.items())]


def promtool():
    path = shutil.which("promtool")
    if not path:
        pytest.skip("promtool is not installed (Debian package prometheus; make deps installs it)")
    return path


@pytest.mark.parametrize("board", BOARDS)
def test_promtool_accepts_every_board(start_daemon, board):
    tool = promtool()
    d = start_tree(start_daemon, fixture_path(board))
    d.wait_for(lambda: d.get("/api/v1/status")[1]["ticks"] >= 2, what="two ticks")
    req = urllib.request.Request(d.url + "/metrics")
    with urllib.request.urlopen(req, timeout=10) as resp:
        assert resp.status == 200
        assert resp.headers["Content-Type"] == CONTENT_TYPE
        body = resp.read()
    r = subprocess.run([tool, "check", "metrics"], input=body, capture_output=True, timeout=60)
    assert r.returncode == 0, f"promtool check metrics on {board}:\n{r.stdout.decode()}{r.stderr.decode()}"
    text = body.decode()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            assert f"# HELP {line.split()[2]} " in text, line


@pytest.mark.parametrize("board", BOARDS)
def test_every_temperature_of_the_api_with_the_same_value(start_daemon, board):
    d = start_tree(start_daemon, fixture_path(board))
    _, doc = d.get("/api/v1/sensors")
    samples = metrics(d)
    temps = {l["sensor"]: (l, v) for n, l, v in samples if n == "heatcurve_temperature_celsius"}
    assert len(doc["temperatures"]) >= 1
    for t in doc["temperatures"]:
        assert t["ok"], t                                   # fixture boards read fine
        labels, value = temps.pop(t["id"])
        assert value == t["celsius"], (t["id"], value, t["celsius"])
        assert labels["source"] == t["source"]
        assert labels["type"] == (t.get("type") or "")
        assert labels["chip"] == (t.get("chip") or "")
        assert labels["label"] == (t["label"] or "")
        assert values(samples, "heatcurve_sensor_ok", sensor=t["id"]) == [1]
        trips = [x for x in t["trips"] if x["celsius"] is not None]
        for x in trips:
            assert values(samples, "heatcurve_trip_point_celsius", sensor=t["id"], trip=str(x["index"]),
                          type=x["type"]) == [x["celsius"]]
        assert len(values(samples, "heatcurve_trip_point_celsius", sensor=t["id"])) == len(trips)
        if t.get("crit_celsius") is not None:
            assert values(samples, "heatcurve_temperature_crit_celsius", sensor=t["id"]) == [t["crit_celsius"]]
    assert temps == {}, "temperatures in /metrics that the API does not have"
    for c in doc["cooling_devices"]:
        assert values(samples, "heatcurve_cooling_device_cur_state", device=c["id"], type=c["type"]) == [c["cur_state"]]
        assert values(samples, "heatcurve_cooling_device_max_state", device=c["id"]) == [c["max_state"]]
    for p in doc["cpufreq"]:
        assert values(samples, "heatcurve_cpu_scaling_frequency_hertz", policy=p["id"]) == [p["cur_hz"]]
        assert values(samples, "heatcurve_cpu_frequency_max_hertz", policy=p["id"]) == [p["max_hz"]]
        assert values(samples, "heatcurve_cpu_scaling_frequency_max_hertz", policy=p["id"]) == [p["scaling_max_hz"]]
        assert values(samples, "heatcurve_cpu_throttled", policy=p["id"]) == [0]
    n_cpus = len(doc["load"]["per_cpu"])
    assert len(values(samples, "heatcurve_cpu_load_ratio")) in (0, n_cpus)   # none before two reads


def test_daemon_families(start_daemon):
    d = start_tree(start_daemon, fixture_path("rpi4"))
    d.wait_for(lambda: d.get("/api/v1/status")[1]["ticks"] >= 3, what="three ticks")
    _, st = d.get("/api/v1/status")
    samples = metrics(d)
    [(_, build, _)] = [s for s in samples if s[0] == "heatcurve_build_info"]
    assert build == {"version": st["version"]}
    assert values(samples, "heatcurve_board_info", model=st["board"]["model"], hostname=st["board"]["hostname"]) == [1]
    assert values(samples, "heatcurve_start_time_seconds") == [st["started_ms"] / 1000]
    assert values(samples, "heatcurve_sampling_interval_seconds") == [0.1]
    [ticks] = values(samples, "heatcurve_ticks_total")
    assert ticks >= st["ticks"] >= 3
    [read] = values(samples, "heatcurve_sensors_read_duration_seconds")
    assert 0 < read < 0.1
    assert values(samples, "heatcurve_run_running") == [0]
    assert not values(samples, "heatcurve_run_info")


def test_failing_sensor(start_daemon, fixture_copy):
    root = fixture_copy("rpi4")
    temp = os.path.join(root, "sys/class/thermal/thermal_zone0/temp")
    d = start_tree(start_daemon, root)
    write_in_place(temp, "garbage\n")
    d.wait_for(lambda: values(metrics(d), "heatcurve_sensor_ok", sensor="thermal_zone0") == [0],
               what="thermal_zone0 failing in /metrics")
    samples = metrics(d)
    assert not values(samples, "heatcurve_temperature_celsius", sensor="thermal_zone0")
    assert values(samples, "heatcurve_sensor_ok", sensor="hwmon:cpu_thermal/temp1") == [1]
    [errors] = values(samples, "heatcurve_sensor_read_errors_total", sensor="thermal_zone0")
    assert errors >= 1
    d.wait_for(lambda: values(metrics(d), "heatcurve_sensor_read_errors_total", sensor="thermal_zone0")[0] > errors,
               what="the error counter going up")
    write_in_place(temp, "51234\n")
    d.wait_for(lambda: values(metrics(d), "heatcurve_temperature_celsius", sensor="thermal_zone0") == [51.234],
               what="thermal_zone0 back")
    [after] = values(metrics(d), "heatcurve_sensor_read_errors_total", sensor="thermal_zone0")
    assert after > errors                                  # a counter does not go back


def test_run_in_progress(start_daemon):
    d = start_tree(start_daemon, fixture_path("rpi4"))
    status, run = d.request("POST", "/api/v1/runs", body={
        "label": 'fan "B"\\2', "phases": [{"kind": "idle", "duration": "30s"}]})
    assert status == 201, run
    samples = metrics(d)
    assert values(samples, "heatcurve_run_running") == [1]
    assert values(samples, "heatcurve_run_info", run_id=str(run["id"]), label='fan "B"\\2', phase="idle") == [1]
    assert values(samples, "heatcurve_run_start_time_seconds", run_id=str(run["id"])) == [run["created_ms"] / 1000]
    assert not values(samples, "heatcurve_run_work_rate_per_second")     # no load while idle
    status, _ = d.request("POST", f"/api/v1/runs/{run['id']}/stop")
    assert status == 200
    samples = metrics(d)
    assert values(samples, "heatcurve_run_running") == [0]
    assert not values(samples, "heatcurve_run_info")


def test_methods(start_daemon):
    d = start_tree(start_daemon, fixture_path("rpi4"))
    status, body = d.request("HEAD", "/metrics")
    assert status == 200 and body == ""
    status, body = d.request("POST", "/metrics", body=b"")
    assert status == 405 and body["error"]["code"] == "method_not_allowed"


# ---- a real Prometheus scraping the simulated board ----

class Prometheus:
    """prometheus on a loopback port with its own config and data directory; killed at the end."""

    def __init__(self, tmp_path, target, interval="1s"):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        cfg = tmp_path / "prometheus.yml"
        cfg.write_text(
            "global:\n"
            f"  scrape_interval: {interval}\n"
            f"  scrape_timeout: {interval}\n"
            "scrape_configs:\n"
            "  - job_name: heatcurve\n"
            f"    static_configs: [{{targets: ['{target}']}}]\n")
        self.log = open(tmp_path / "prometheus.log", "w+")
        self.proc = subprocess.Popen(
            ["prometheus", f"--config.file={cfg}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{self.port}", "--storage.tsdb.retention.time=1h"],
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    def logs(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()[-4000:]

    def api(self, path, **params):
        url = f"{self.url}/api/v1/{path}?" + urllib.parse.urlencode(params)
        with urllib.request.urlopen(url, timeout=5) as resp:
            doc = json.load(resp)
        assert doc["status"] == "success", doc
        return doc["data"]

    def query(self, q):
        return self.api("query", query=q)["result"]

    def wait_query(self, q, timeout=60):
        """The first non-empty answer to q, polling for at most timeout seconds."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"prometheus exited with {self.proc.returncode}:\n{self.logs()}")
            try:
                last = self.query(q)
                if last:
                    return last
            except urllib.error.HTTPError as e:
                raise AssertionError(f"{q}: {e}: {e.read().decode(errors='replace')}")
            except OSError as e:
                last = e
            time.sleep(0.5)
        raise AssertionError(f"no answer to {q} within {timeout}s; last={last!r}\n{self.logs()}")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


@pytest.fixture
def prometheus(tmp_path):
    if not shutil.which("prometheus"):
        pytest.skip("prometheus is not installed (Debian package prometheus; make deps installs it)")
    started = []

    def start(target):
        p = Prometheus(tmp_path, target)
        started.append(p)
        return p
    yield start
    for p in started:
        p.stop()


@pytest.mark.slow       # a real Prometheus scraping for 10 s
def test_prometheus_scrapes_the_simulated_board(start_daemon, prometheus):
    d = start_daemon("--simulate", "--interval", "100ms")
    prom = prometheus(f"127.0.0.1:{d.port}")
    # a light load, so the run's families are there too (one worker, 10 % duty)
    status, run = d.request("POST", "/api/v1/runs", body={"label": "fleet", "phases": [
        {"kind": "stress", "duration": "2m", "load": {"type": "cpu", "workers": 1, "duty": 10}}]})
    assert status == 201, run

    [target] = prom.wait_query('up{job="heatcurve"} == 1')
    assert target["metric"]["instance"] == f"127.0.0.1:{d.port}"

    # The temperature Prometheus stored is one the daemon reported meanwhile.
    [temp] = prom.wait_query('heatcurve_temperature_celsius{sensor="thermal_zone0"}')
    assert temp["metric"]["type"] == "soc_thermal" and temp["metric"]["source"] == "thermal"
    value = float(temp["value"][1])
    _, hist = d.get("/api/v1/history?from=-60s&sensors=thermal_zone0&points=1")
    [series] = hist["series"]
    assert series["min"][0] <= value <= series["max"][0], (value, series)
    _, doc = d.get("/api/v1/sensors")
    assert abs(doc["temperatures"][0]["celsius"] - value) < 5      # the model moves slowly (tau 60 s)

    # rate() of a counter, once scrapes cover the whole window (before, rate()
    # extrapolates from a part of it): the daemon ticks every 100 ms.
    prom.wait_query("count_over_time(heatcurve_ticks_total[5s]) >= 5", timeout=60)
    [rate] = prom.query("rate(heatcurve_ticks_total[5s])")
    assert 7 <= float(rate["value"][1]) <= 11, rate
    [errors] = prom.query("rate(heatcurve_sensor_read_errors_total{sensor=\"thermal_zone0\"}[5s])")
    assert float(errors["value"][1]) == 0

    [t] = prom.api("targets")["activeTargets"]
    assert t["health"] == "up" and t["lastError"] == "", t

    dashboard_queries_answer(prom, f"127.0.0.1:{d.port}")
    [work] = prom.wait_query(f'heatcurve_run_work_rate_per_second{{run_id="{run["id"]}"}}')
    assert float(work["value"][1]) > 0 and work["metric"]["unit"] == "ops"
    d.request("POST", f"/api/v1/runs/{run['id']}/stop")


# ---- the Grafana fleet dashboard ----

DASHBOARD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "contrib", "grafana",
                         "heatcurve-fleet.json")

# Filters that are empty on a healthy, unthrottled board: (panel title, refId).
MAY_BE_EMPTY = {("Sensor read errors", "A"), ("Throttling and cooling", "B")}


def dashboard():
    with open(DASHBOARD) as f:
        return json.load(f)


def dashboard_targets(dash):
    """(panel title, refId, expr) of every query, rows' collapsed panels included."""
    def walk(panels):
        for p in panels:
            yield from walk(p.get("panels", []))
            for t in p.get("targets", []):
                yield p["title"], t["refId"], t["expr"]
    return list(walk(dash["panels"]))


def substitute(expr, instance):
    """The PromQL Grafana sends for one board."""
    # a regex match gets the value regex-escaped, and then escaped as a PromQL string
    value = re.escape(instance).replace("\\", "\\\\") if '=~"$instance"' in expr else instance
    return expr.replace("$__rate_interval", "10s").replace("$instance", value).replace("$job", "heatcurve")


def dashboard_queries_answer(prom, instance):
    """Every panel query returns data from a real Prometheus scraping one board."""
    prom.wait_query(f'count_over_time(heatcurve_ticks_total{{instance="{instance}"}}[10s]) >= 5')
    for title, ref, expr in dashboard_targets(dashboard()):
        q = substitute(expr, instance)
        if (title, ref) in MAY_BE_EMPTY:
            prom.query(q)                   # valid PromQL, answered
        else:
            prom.wait_query(q, timeout=20)


def test_grafana_dashboard_is_well_formed():
    dash = dashboard()
    assert dash["title"] and dash["uid"] and dash["schemaVersion"] >= 30
    variables = {v["name"]: v for v in dash["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
    assert variables["instance"]["multi"] and variables["instance"]["includeAll"]
    assert "heatcurve_build_info" in variables["instance"]["definition"]
    rows = [p for p in dash["panels"] if p["type"] == "row"]
    assert [r["title"] for r in rows if r.get("repeat") == "instance"] == ["$instance"]    # one row per board
    ids = [p["id"] for p in dash["panels"]]
    assert len(ids) == len(set(ids))
    after_repeat = False
    for p in dash["panels"]:
        g = p["gridPos"]
        assert 0 <= g["x"] and g["x"] + g["w"] <= 24 and g["h"] > 0, p["title"]
        after_repeat = after_repeat or p.get("repeat") == "instance"
        for t in p.get("targets", []):
            ds = t["datasource"]
            assert ds == {"type": "prometheus", "uid": "${datasource}"}, p["title"]
            # inside the repeated row a panel shows its own board only
            if after_repeat and p["type"] != "row":
                assert 'instance="$instance"' in t["expr"], (p["title"], t["expr"])
    assert len(dashboard_targets(dash)) >= 15


def test_grafana_dashboard_queries_parse(tmp_path):
    """promtool parses every query (as a recording rule), also the ones a healthy board leaves empty."""
    tool = promtool()
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": f"heatcurve_dashboard:q{i}", "expr": substitute(expr, "board:8080")}
        for i, (_, _, expr) in enumerate(dashboard_targets(dashboard()))]}]}
    path = tmp_path / "rules.yml"
    path.write_text(json.dumps(rules))              # JSON is YAML
    r = subprocess.run([tool, "check", "rules", str(path)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


# ---- the example alerting rules ----

ALERTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "contrib", "prometheus")
GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden", "prometheus")


def test_alert_rules():
    """promtool checks the rules and runs their unit tests; every family they use is exported."""
    tool = promtool()
    for args in (["check", "rules", "heatcurve-alerts.yml"], ["test", "rules", "heatcurve-alerts.test.yml"]):
        r = subprocess.run([tool, *args], cwd=ALERTS, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, f"promtool {' '.join(args)}:\n{r.stdout}{r.stderr}"
    exported = set()
    for name in os.listdir(GOLDEN):
        with open(os.path.join(GOLDEN, name)) as f:
            exported |= {line.split()[2] for line in f if line.startswith("# TYPE ")}
    # the Pi firmware's families need /dev/vcio, which no fixture tree can hold: declared is enough
    with open(os.path.join(ALERTS, "..", "..", "web", "prometheus.c")) as f:
        firmware = set(re.findall(r'"(heatcurve_firmware_[a-z_]+)", "gauge"', f.read()))
    assert firmware
    with open(os.path.join(ALERTS, "heatcurve-alerts.yml")) as f:
        used = set(re.findall(r"heatcurve_[a-z_]+", f.read()))
    assert used and used <= exported | firmware, used - exported - firmware
