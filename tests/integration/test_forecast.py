"""Forecasts through the real heatcurved: an alert rule's forecast state on a zone that heats like a
board under a load, and the forecast of a run in progress."""
import math
import os
import stat
import threading
import time

import pytest

from conftest import start_tree, write_in_place

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
