"""A board with a power meter (an INA219 on the supply): its watts as a channel, in /metrics and the
history, and in a run's samples and metrics (mean power under load, thermal resistance)."""
import csv
import io
import subprocess

import pytest

from conftest import fixture_path, promtool_check_metrics, start_tree
from test_runs import post_run, wait_state

METER = "power:ina219/power1"


def test_power_meter_is_a_channel_a_gauge_and_a_history_series(start_daemon):
    d = start_tree(start_daemon, fixture_path("rpi4-ina219"))
    channels = {c["id"]: c for c in d.get("/api/v1/sensors")[1]["channels"]}
    assert channels[METER] == {"id": METER, "kind": "power_draw", "unit": "watts", "value": 5.095, "ok": True}
    metrics = d.get("/metrics")[1]
    assert f'heatcurve_power_watts{{sensor="{METER}"}} 5.095\n' in metrics
    assert f'heatcurve_sensor_ok{{sensor="{METER}"}} 1\n' in metrics
    promtool_check_metrics(metrics)
    doc = d.wait_for(lambda: (lambda doc: doc if any(s["id"] == METER and any(v is not None for v in s["mean"])
                                                     for s in doc["series"]) else None)(
        d.get("/api/v1/history?from=-1m&points=10")[1]), what="the power draw in the history")
    series = next(s for s in doc["series"] if s["id"] == METER)
    assert series["kind"] == "power_draw" and series["unit"] == "watts"
    assert {v for v in series["mean"] if v is not None} == {5.1}    # 2 decimals, as kept
    status, svg = d.request("GET", "/api/v1/history.svg?from=-1m")
    assert status == 200 and METER not in svg                       # no watts on a panel of degrees


def test_board_without_a_meter_has_no_power_column(start_daemon):
    d = start_tree(start_daemon, fixture_path("rpi4"))
    assert not [c for c in d.get("/api/v1/sensors")[1]["channels"] if c["kind"] == "power_draw"]
    assert "heatcurve_power_watts" not in d.get("/metrics")[1]
    status, run = post_run(d, {"phases": [{"kind": "idle", "duration": "1s"}]})
    assert status == 201, run
    wait_state(d, run["id"])
    text = d.get(f"/api/v1/runs/{run['id']}/samples?format=csv")[1]
    assert "power_w" not in text.splitlines()[0]


def test_run_on_a_board_with_a_meter_has_power_and_thermal_resistance(start_daemon, tmp_path):
    conf = tmp_path / "sim.conf"
    # power_load = 0: the meter keeps the fixture's 5.095 W whatever the load, so every sample reads it
    conf.write_text("[simulate]\nboard = rpi4-ina219\nambient = 25\ntau = 1s\nrise = 40\nquantize = no\n"
                    "load_source = own\npower_load = 0\n")
    state = str(tmp_path / "state")
    d = start_daemon("--config", str(conf), "--simulate", "--interval", "100ms", state_dir=state)
    status, run = post_run(d, {"label": "metered", "ambient_c": 25,
                               "phases": [{"kind": "idle", "duration": "1s"},
                                          {"kind": "stress", "duration": "6s", "load": {"type": "cpu", "workers": 1}},
                                          {"kind": "cooldown", "duration": "1s"}]})
    assert status == 201, run
    done = wait_state(d, run["id"], timeout=30)
    assert done["state"] == "finished", done
    m = done["metrics"]
    assert m["power_mean_w"] == 5.095
    assert m["rise_over_ambient_c"] is not None and m["rise_over_ambient_c"] > 5, m
    assert abs(m["thermal_resistance_c_per_w"] - m["rise_over_ambient_c"] / 5.095) < 0.002, m
    rows = list(csv.DictReader(io.StringIO(d.get(f"/api/v1/runs/{run['id']}/samples?format=csv")[1])))
    assert rows and all(r["power_w"] == "5.095" for r in rows)
    # read back from samples.csv after a restart: the same metrics
    d.stop()
    d = start_daemon("--config", str(conf), "--simulate", "--interval", "100ms", state_dir=state)
    again = d.get(f"/api/v1/runs/{run['id']}")[1]["metrics"]
    assert again["power_mean_w"] == 5.095
    assert again["thermal_resistance_c_per_w"] == m["thermal_resistance_c_per_w"]


def meter_watts(d):
    return next(c["value"] for c in d.get("/api/v1/sensors")[1]["channels"] if c["id"] == METER)


def test_simulated_meter_follows_the_load(start_daemon, tmp_path):
    """The simulated INA219 reads power_idle (as the fixture: 5.095 W) + power_load x the commanded load:
    4 workers (the Pi 4's CPUs) at duty 50 are half the board, 2 W more with power_load = 4."""
    conf = tmp_path / "sim.conf"
    conf.write_text("[simulate]\nboard = rpi4-ina219\nambient = 25\ntau = 1s\nrise = 40\nquantize = no\n"
                    "load_source = own\npower_load = 4\n")
    d = start_daemon("--config", str(conf), "--simulate", "--interval", "200ms")
    assert "power 5.1 W idle + 4.0 W at full load)" in d.logs()
    assert meter_watts(d) == 5.095
    status, run = post_run(d, {"label": "half", "ambient_c": 25,
                               "phases": [{"kind": "idle", "duration": "1s"},
                                          {"kind": "stress", "duration": "3s", "load": {"type": "cpu", "duty": 50}}]})
    assert status == 201, run
    d.wait_for(lambda: meter_watts(d) == 7.095, timeout=10, what="the meter at 5.095 + 4 x 0.5 W")
    assert f'heatcurve_power_watts{{sensor="{METER}"}} 7.095\n' in d.get("/metrics")[1]
    done = wait_state(d, run["id"], timeout=30)
    assert done["state"] == "finished", done
    d.wait_for(lambda: meter_watts(d) == 5.095, timeout=5, what="the meter back at idle")
    rows = list(csv.DictReader(io.StringIO(d.get(f"/api/v1/runs/{run['id']}/samples?format=csv")[1])))
    # Each tick steps the simulator with the load the run commanded after the previous sample, so every
    # sample of a phase reads that phase's draw: the mean under load is 7.095 W to the 3 decimals kept.
    assert {(r["phase"], r["power_w"]) for r in rows} == {("idle", "5.095"), ("stress", "7.095")}, rows
    m = done["metrics"]
    assert m["power_mean_w"] == pytest.approx(5.095 + 4 * 0.5, abs=0.001), m
    assert m["rise_over_ambient_c"] is not None and m["rise_over_ambient_c"] > 5, m
    assert m["thermal_resistance_c_per_w"] == pytest.approx(m["rise_over_ambient_c"] / m["power_mean_w"],
                                                            rel=0.002), m


def test_bad_power_load_is_refused(heatcurved_bin, tmp_path):
    conf = tmp_path / "bad.conf"
    conf.write_text("[simulate]\nboard = rpi4-ina219\npower_load = -1\n")
    r = subprocess.run([heatcurved_bin, "--config", str(conf), "--simulate", "--check-config"],
                       capture_output=True, text=True, timeout=10)
    assert r.returncode != 0
    assert f'{conf}:3: [simulate] power_load: "-1" is out of range (0..1000)' in r.stdout + r.stderr
