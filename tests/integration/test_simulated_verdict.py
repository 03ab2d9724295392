"""The verdict end to end on the simulator: two simulated boards (two daemons whose boards are heated
only by their own runs' loads, load_source = own), one case each rising 30 and 26 °C over ambient with
tau 8 s, sampled every 200 ms. heatcurvectl run --on starts three repeats on both at once, and
heatcurvectl compare --json, given the six runs' URLs grouped by LABEL=, names the second cooler,
conclusive, with an interval around the true 4 °C narrower than 2 °C."""
import json
import os
import subprocess

import pytest

pytestmark = pytest.mark.slow   # three runs of a minute each, one after the other: about 4 minutes

HEATCURVECTL = os.environ.get("HEATCURVECTL", "")
AMBIENT_C = 25.0
DUTY = 20                       # % of every CPU: the boards are heated by 20 % of their full-load rise
RISES = {"A": 30.0, "B": 26.0}  # over ambient, as the runs see them


def simulated_board(start_daemon, tmp_path, name, rise):
    conf = tmp_path / f"{name}.conf"
    conf.write_text(f"[simulate]\nambient = {AMBIENT_C}\ntau = 8s\nrise = {rise * 100 / DUTY}\n"
                    "quantize = no\nload_source = own\n")
    return start_daemon("--config", str(conf), "--simulate", "--interval", "200ms",
                        state_dir=str(tmp_path / f"state-{name}"))


def test_two_simulated_cases_repeated_three_times_give_a_conclusive_verdict(start_daemon, tmp_path):
    if not (HEATCURVECTL and os.access(HEATCURVECTL, os.X_OK)):
        pytest.skip("HEATCURVECTL is not set to the built client (run through meson test)")
    boards = {name: simulated_board(start_daemon, tmp_path, name, rise) for name, rise in RISES.items()}
    urls = [boards[name].url for name in RISES]
    r = subprocess.run([HEATCURVECTL, "--url", urls[0], "run", "--on", ",".join(urls), "--label", "case",
                        "--ambient", str(AMBIENT_C), "--idle", "duration=6s",
                        "--stress", f"cpu,duration=48s,duty={DUTY}", "--repeat", "3", "--wait"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, (r.stdout, r.stderr)
    sources = []
    for name, d in boards.items():
        status, runs = d.get("/api/v1/runs")
        runs = runs["runs"] if isinstance(runs, dict) else runs
        assert [(x["state"], x["repeat_index"]) for x in reversed(runs)] == [("finished", i) for i in (1, 2, 3)]
        sources += [f"{name}={d.url}/api/v1/runs/{x['id']}" for x in reversed(runs)]
    r = subprocess.run([HEATCURVECTL, "--url", urls[0], "--json", "compare", *sources],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [(g["label"], g["n"]) for g in doc["groups"]] == [("A", 3), ("B", 3)]
    for g in doc["groups"]:
        rise = g["metrics"]["rise_over_ambient_c"]
        assert rise["mean"] == pytest.approx(RISES[g["label"]], abs=0.5), (g["label"], rise)
    [v] = doc["verdicts"]
    why = (v, [(g["label"], g["metrics"]["rise_over_ambient_c"]) for g in doc["groups"]])
    assert (v["a"], v["b"], v["metric"]) == ("A", "B", "rise_over_ambient_c"), why
    assert v["conclusive"] and v["cooler"] == "B" and not v["equivalent"], why
    assert v["low_c"] <= -4.0 <= v["high_c"], why
    assert v["high_c"] - v["low_c"] < 2.0, why
