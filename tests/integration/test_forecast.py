"""Forecasts through the real heatcurved: an alert rule's forecast state on a zone that heats like a
board under a load, and the forecast of a run in progress."""
import json
import math
import os
import re
import stat
import subprocess
import threading
import time
import urllib.request

import pytest

from conftest import promtool_check_metrics, start_tree, write_in_place
from test_dashboard import page  # noqa: F401  (the headless Chromium of the dashboard's tests)

ZONE = "sys/class/thermal/thermal_zone0/temp"


def set_zone(root, celsius):
    write_in_place(os.path.join(root, ZONE), f"{int(round(celsius * 1000))}\n")


def rule(d, name):
    return next(r for r in d.get("/api/v1/alerts")[1]["rules"] if r["name"] == name)


class Heater:
    """Writes T = base + rise (1 - e^{-t/tau}) to the zone, to 0.1 C, every 100 ms."""

    def __init__(self, root, base, rise, tau):
        self.root, self.base, self.rise, self.tau = root, base, rise, tau
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        t0 = time.monotonic()
        while not self.stop.is_set():
            t = time.monotonic() - t0
            set_zone(self.root, round(self.base + self.rise * (1 - math.exp(-t / self.tau)), 1))
            time.sleep(0.1)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


@pytest.mark.slow       # a 20 s rise
def test_forecast_alert_before_warn(start_daemon, fixture_copy, tmp_path):
    root = fixture_copy("rpi4")
    out = tmp_path / "hook-out"
    out.mkdir()
    hook = tmp_path / "hook.sh"
    hook.write_text(f'#!/bin/sh\nenv | grep ^HEATCURVE_ | sort > "{out}/.$HEATCURVE_STATE"\n'
                    f'mv "{out}/.$HEATCURVE_STATE" "{out}/$HEATCURVE_STATE"\n')
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    conf = tmp_path / "alerts.conf"
    conf.write_text(f"[alert soc]\nsensor = thermal_zone0\nwarn = 70\ncrit = 90\nhysteresis = 2\n"
                    f"forecast = 5m\nexec = {hook}\n")
    set_zone(root, 45)
    d = start_tree(start_daemon, root, "--config", str(conf))
    assert rule(d, "soc")["state"] == "ok" and rule(d, "soc")["forecast_s"] == 300
    time.sleep(1)
    # heads for 85 C with tau 20 s: warn at 70 C comes 19.6 s after the start, the forecast
    # after half a time constant
    with Heater(root, 45, 40, 20):
        seen = d.wait_for(lambda: (lambda r: r if r["state"] in ("forecast", "warn") else None)(rule(d, "soc")),
                          timeout=25, what="forecast state")
        assert seen["state"] == "forecast", seen
        assert seen["eta_s"] is not None and seen["eta_level_c"] == 70
        active = d.get("/api/v1/status")[1]["active_alerts"]
        assert active[0]["state"] == "forecast" and active[0]["level_c"] == 70 and active[0]["eta_s"] >= 0
        d.wait_for(lambda: rule(d, "soc")["state"] == "warn", timeout=20, what="warn state")
    trans = d.get("/api/v1/alerts")[1]["transitions"]
    assert [(t["previous"], t["state"]) for t in trans] == [("ok", "forecast"), ("forecast", "warn")], trans
    fc, warn = trans
    assert fc["value_c"] < 70 and fc["threshold_c"] == 70 and "eta_s" not in warn
    took = (warn["time_ms"] - fc["time_ms"]) / 1000
    print(f"forecast at {fc['value_c']} C said {fc['eta_s']} s to warn; it took {took} s")
    assert abs(took - fc["eta_s"]) <= 0.25 * fc["eta_s"], (took, fc)
    d.wait_for(lambda: (out / "forecast").exists(), what="hook ran for forecast")
    env = dict(line.split("=", 1) for line in (out / "forecast").read_text().split())
    assert env["HEATCURVE_STATE"] == "forecast" and float(env["HEATCURVE_ETA_S"]) == pytest.approx(fc["eta_s"], abs=0.5)
    assert env["HEATCURVE_THRESHOLD_C"] == "70.000"
    d.wait_for(lambda: (out / "warn").exists(), what="hook ran for warn")
    assert "HEATCURVE_ETA_S=" not in (out / "warn").read_text()
    log = d.logs()
    assert f"STATE=forecast PREVIOUS=ok TEMP_C={fc['value_c']:.3f} ETA_S=" in log
    assert "Alert soc: forecast, thermal_zone0 at " in log and "(reaches 70.0 C in about " in log
    metrics = d.get("/metrics")[1]
    assert 'heatcurve_alert_state{alert="soc",sensor="thermal_zone0",state="forecast"} 0\n' in metrics
    assert 'heatcurve_alert_state{alert="soc",sensor="thermal_zone0",state="warn"} 1\n' in metrics


def test_check_config_names_a_bad_forecast(heatcurved_bin, tmp_path):
    conf = tmp_path / "c.conf"
    for text, where, words in [
            ("[alert a]\nsensor = hottest\nwarn = 70\nforecast = soon\n", 4,
             '[alert a] forecast: "soon" is not a duration up to 1h (e.g. 10s, 2m)'),
            ("[alert a]\nsensor = hottest\nlost = yes\nforecast = 5m\n", 1,
             "[alert a] forecast: needs warn or crit, the level it forecasts")]:
        conf.write_text(text)
        r = subprocess.run([heatcurved_bin, "--check-config", "--config", str(conf)], capture_output=True, text=True)
        out = r.stdout + r.stderr
        assert r.returncode != 0 and f"{conf}:{where}:" in out and words in out, out
    conf.write_text("[alert a]\nsensor = hottest\nwarn = 70\nforecast = 5m\ngpio_forecast = no\n")
    r = subprocess.run([heatcurved_bin, "--check-config", "--config", str(conf)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_run_forecast_only_under_load(start_daemon, fixture_copy):
    """The live run has a forecast object in a stress phase (its values null while the curve is
    flat), none in the others; /status shows the same."""
    root = fixture_copy("rpi4")
    d = start_tree(start_daemon, root)
    status, run = d.request("POST", "/api/v1/runs", {"phases": [
        {"kind": "idle", "duration": "2s"},
        {"kind": "stress", "duration": "2s", "load": {"type": "cpu", "workers": 1}}]})
    assert status == 201, run
    doc = d.get(f"/api/v1/runs/{run['id']}")[1]
    assert doc["phase"] == "idle" and doc["live"]["forecast"] is None
    assert d.get("/api/v1/status")[1]["current_run"]["forecast"] is None
    doc = d.wait_for(lambda: (lambda x: x if x["phase"] == "stress" else None)(d.get(f"/api/v1/runs/{run['id']}")[1]),
                     what="stress phase")
    assert doc["live"]["forecast"] == {"plateau_c": None, "eta_s": None, "tolerance_c": 0.5}
    assert d.get("/api/v1/status")[1]["current_run"]["forecast"]["tolerance_c"] == 0.5
    done = d.wait_for(lambda: (lambda x: x if x["state"] != "running" else None)(d.get(f"/api/v1/runs/{run['id']}")[1]),
                      what="the run's end")
    assert done["live"] is None and "forecast" not in done


@pytest.mark.slow       # a 20 s stress phase
def test_run_forecast_on_a_heating_zone(start_daemon, fixture_copy):
    """Under a stress phase on a zone heading for 85 C (tau 8 s), the run document, /metrics and
    the event stream tell where it settles and when that is known within 0.5 C."""
    root = fixture_copy("rpi4")
    set_zone(root, 45)
    d = start_tree(start_daemon, root)
    status, run = d.request("POST", "/api/v1/runs", {"phases": [
        {"kind": "idle", "duration": "1s"},
        {"kind": "stress", "duration": "20s", "load": {"type": "cpu", "workers": 1}}]})
    assert status == 201, run
    rid = run["id"]
    d.wait_for(lambda: d.get(f"/api/v1/runs/{rid}")[1]["phase"] == "stress", what="stress phase")
    stream = urllib.request.urlopen(d.url + "/api/v1/events", timeout=30)
    with Heater(root, 45, 40, 8):
        t0 = time.monotonic()
        fc = d.wait_for(lambda: (lambda f: f if f["plateau_c"] is not None and time.monotonic() - t0 > 12 else None)(
            d.get(f"/api/v1/runs/{rid}")[1]["live"]["forecast"]), timeout=15, what="a forecast")
        elapsed = time.monotonic() - t0
        # known within 0.5 C when 40 e^{-t/8} < 0.5: 35 s after the start
        assert fc["plateau_c"] == pytest.approx(85, abs=2), fc
        assert fc["eta_s"] == pytest.approx(35 - elapsed, abs=0.25 * (35 - elapsed) + 1), (fc, elapsed)
        metrics = d.get("/metrics")[1]
        assert f'heatcurve_run_forecast_plateau_celsius{{run_id="{rid}"}} ' in metrics
        assert f'heatcurve_run_forecast_eta_seconds{{run_id="{rid}"}} ' in metrics
        promtool_check_metrics(metrics)
        told, event, deadline = [], None, time.monotonic() + 10
        while time.monotonic() < deadline and not (told and told[-1]["plateau_c"] == pytest.approx(85, abs=2)):
            line = stream.readline().decode()
            assert line, "stream closed"
            if line.startswith("event: "):
                event = line[7:].strip()
            elif line.startswith("data: ") and event == "forecast":
                told.append(json.loads(line[6:]))
        assert told and told[-1]["plateau_c"] == pytest.approx(85, abs=2), told
        assert told[-1]["run"] == rid and told[-1]["tolerance_c"] == 0.5 and told[-1]["eta_s"] > 0
    stream.close()



@pytest.mark.slow       # a browser, and a 10 s rise
def test_dashboard_alerts_card_tells_the_forecast(page, start_daemon, fixture_copy, tmp_path):
    """The Alerts card words a forecast alert: "soc forecast (thermal_zone0 reaches 70.0 °C in about 9 s)"."""
    root = fixture_copy("rpi4")
    conf = tmp_path / "alerts.conf"
    conf.write_text("[alert soc]\nsensor = thermal_zone0\nwarn = 70\nforecast = 5m\n")
    set_zone(root, 45)
    d = start_tree(start_daemon, root, "--config", str(conf))
    page.open(d.url)
    page.wait(lambda: page.text("#alerts") == "none", what="no alert shown")
    with Heater(root, 45, 40, 20):
        page.wait(lambda: re.fullmatch(r"soc forecast \(thermal_zone0 reaches 70\.0 °C in about \d+ s\)",
                                       page.text("#alerts") or ""), timeout=25, what="the forecast on the card")
    assert page.problems() == []
