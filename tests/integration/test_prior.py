"""A board's time constant learned from its earlier runs: on a simulated board heated only by its own
runs' loads (load_source = own, tau 8 s, sampled every 200 ms), the second run of a label reports the
time constant of the first as its prior, uses it, and its until: plateau stops no later."""
import pytest

from test_runs import post_run, wait_state

pytestmark = pytest.mark.slow   # two runs of about a minute each

AMBIENT_C = 25.0
DUTY = 20                       # % of every CPU: 20 % of the full-load rise, 30 C


def run_def(label):
    return {"label": label, "ambient_c": AMBIENT_C, "phases": [
        {"kind": "idle", "duration": "3s"},
        {"kind": "stress", "until": "plateau", "max": "80s", "window": "5s", "tolerance": 1.0,
         "load": {"type": "cpu", "duty": DUTY}},
        {"kind": "cooldown", "duration": "20s"}]}


def stress_seconds(run):
    p = run["phases"][1]
    return (p["ended_ms"] - p["started_ms"]) / 1000, p["end_reason"]


def test_second_run_of_a_label_uses_the_first_ones_time_constant(start_daemon, tmp_path):
    conf = tmp_path / "sim.conf"
    conf.write_text(f"[simulate]\nambient = {AMBIENT_C}\ntau = 8s\nrise = {30 * 100 / DUTY}\nquantize = no\n"
                    "load_source = own\n")
    d = start_daemon("--config", str(conf), "--simulate", "--interval", "200ms")
    status, first = post_run(d, run_def("case"))
    assert status == 201, first
    first = wait_state(d, first["id"], timeout=120)
    assert first["state"] == "finished", first
    m1 = first["metrics"]
    assert m1["tau_prior_s"] is None and m1["tau_prior_runs"] is None and m1["prior_used"] is None, m1
    taus = [t for t in (m1["tau_heat_s"], m1["tau_cool_s"]) if t is not None]
    assert taus and all(4 <= t <= 16 for t in taus), m1
    took1, why1 = stress_seconds(first)
    assert why1 == "plateau", first["phases"]

    status, second = post_run(d, run_def("case"))
    assert status == 201, second
    second = wait_state(d, second["id"], timeout=120)
    assert second["state"] == "finished", second
    m2 = second["metrics"]
    assert m2["tau_prior_runs"] == [first["id"]], m2
    assert min(taus) - 0.1 <= m2["tau_prior_s"] <= max(taus) + 0.1, (m2, taus)
    assert m2["tau_prior_low_s"] < m2["tau_prior_s"] < m2["tau_prior_high_s"], m2
    assert m2["prior_used"] is True, (m2, stress_seconds(second), took1)
    took2, why2 = stress_seconds(second)
    # the checks run once a second: the same second counts as no later
    assert why2 == "plateau" and took2 <= took1 + 1.0, (took1, took2)

    # another label learns nothing from these
    status, other = post_run(d, {**run_def("other"), "phases": [{"kind": "idle", "duration": "1s"}]})
    assert status == 201, other
    other = wait_state(d, other["id"], timeout=30)
    assert other["metrics"]["tau_prior_s"] is None and other["metrics"]["prior_used"] is None
