"""Repeated runs through the real heatcurved: "repeat": N makes N runs of one label, linked as a series,
one after the other; "remount" waits for the user between them; a stop ends the series."""
import os
import subprocess
import time

import pytest

from conftest import fixture_path, start_tree, with_token

HEATCURVECTL = os.environ.get("HEATCURVECTL", "")


def definition(label, **extra):
    return {"label": label, "sensor": "thermal_zone0", "safety_limit_c": 95,
            "phases": [{"kind": "idle", "duration": "300ms"},
                       {"kind": "stress", "duration": "300ms", "load": {"type": "cpu", "workers": 1, "duty": 5}}],
            **extra}


def post_run(d, body):
    """POST a run, again while the last run's load is still stopping: (status, document)."""
    def attempt():
        status, doc = d.request("POST", "/api/v1/runs", body)
        return None if status == 409 and doc["error"]["code"] == "load_stopping" else (status, doc)
    return d.wait_for(attempt, what="the last run's load stopped")


def series(d, first):
    """The runs of the series of run `first`, by following repeat_next."""
    docs, rid = [], first
    while rid is not None:
        status, doc = d.get(f"/api/v1/runs/{rid}")
        assert status == 200, doc
        docs.append(doc)
        rid = doc["repeat_next"]
    return docs


def ended(d, rid):
    return d.wait_for(lambda: (lambda doc: doc if doc["state"] != "running" else None)(
        d.get(f"/api/v1/runs/{rid}")[1]), timeout=20, what=f"run {rid} ended")


def test_repeat_makes_a_series_of_runs_with_one_label(start_daemon):
    d = start_tree(start_daemon, fixture_path("rpi4"))
    status, run = d.request("POST", "/api/v1/runs", definition("case A", repeat=3))
    assert status == 201, run
    first = run["id"]
    assert (run["repeat_of"], run["repeat_index"], run["repeat_count"], run["remount"]) == (first, 1, 3, False)
    d.wait_for(lambda: len(series(d, first)) == 3 and series(d, first)[-1]["state"] == "finished",
               timeout=30, what="three runs finished")
    docs = series(d, first)
    assert [(r["label"], r["repeat_of"], r["repeat_index"], r["state"]) for r in docs] == \
        [("case A", first, i, "finished") for i in (1, 2, 3)]
    assert [r["repeat_waiting"] for r in docs] == [None] * 3
    ids = [r["id"] for r in docs]
    assert ids == sorted(ids)
    status, doc = d.get("/api/v1/compare?runs=" + ",".join(map(str, ids)))
    assert status == 200 and [(g["label"], g["n"]) for g in doc["groups"]] == [("case A", 3)], doc
    # a single run says nothing of series
    status, run = post_run(d, definition("single"))
    assert status == 201 and "repeat_of" not in run and "repeat_next" not in run, run
    # the links survive a restart
    ended(d, run["id"])
    d.stop()
    d2 = start_tree(start_daemon, fixture_path("rpi4"), state_dir=d.state_dir)
    assert [r["repeat_index"] for r in series(d2, first)] == [1, 2, 3]


def test_a_bad_repeat_is_refused(start_daemon):
    d = start_tree(start_daemon, fixture_path("rpi4"))
    for extra, field in (({"repeat": 0}, "repeat"), ({"repeat": 1.5}, "repeat"), ({"repeat": 21}, "repeat"),
                         ({"remount": True}, "remount"), ({"repeat": 2, "remount": "yes"}, "remount")):
        status, doc = d.request("POST", "/api/v1/runs", definition("x", **extra))
        assert status == 400 and doc["error"]["message"].startswith(field + ":"), (extra, doc)


def test_remount_waits_for_continue_and_a_stop_ends_the_series(start_daemon):
    d = start_tree(start_daemon, fixture_path("rpi4"))
    status, run = d.request("POST", "/api/v1/runs", definition("case B", repeat=3, remount=True))
    assert status == 201, run
    first = run["id"]
    d.wait_for(lambda: d.get(f"/api/v1/runs/{first}")[1]["repeat_waiting"] == "remount", timeout=20,
               what="the series waits for a remount")
    status, doc = d.request("POST", "/api/v1/runs", definition("other"))
    assert status == 409, doc               # the series has the board
    status, page = d.get("/")                # the dashboard's run view offers the same
    assert status == 200 and 'class="continue"' in page
    status, doc = d.request("POST", f"/api/v1/runs/{first}/continue")
    assert status == 200, doc
    d.wait_for(lambda: len(series(d, first)) == 2, timeout=20, what="the second run started")
    second = series(d, first)[1]["id"]
    ended(d, second)
    d.wait_for(lambda: d.get(f"/api/v1/runs/{second}")[1]["repeat_waiting"] == "remount", timeout=20,
               what="the series waits again")
    status, doc = d.request("POST", f"/api/v1/runs/{second}/stop")
    assert status == 200, doc
    status, doc = d.get(f"/api/v1/runs/{second}")
    assert doc["repeat_waiting"] is None and doc["repeat_next"] is None, doc
    status, doc = d.request("POST", f"/api/v1/runs/{second}/continue")
    assert status == 409, doc
    status, doc = post_run(d, definition("other"))
    assert status == 201, doc


def test_heatcurvectl_run_repeat_remount_asks_on_stdin(start_daemon):
    if not (HEATCURVECTL and os.access(HEATCURVECTL, os.X_OK)):
        pytest.skip("HEATCURVECTL is not set to the built client (run through meson test)")
    d = start_tree(start_daemon, fixture_path("rpi4"))
    r = subprocess.run([HEATCURVECTL, "--url", d.url, "run", "--label", "case C", "--sensor", "thermal_zone0",
                        "--safety-limit", "95", "--idle", "duration=300ms", "--stress", "cpu,duration=300ms,duty=5",
                        "--repeat", "2", "--remount"], input="\n", capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert "Remount the case, then press Enter to start run 2 of 2" in r.stderr
    status, runs = d.get("/api/v1/runs")
    labels = [x["label"] for x in (runs["runs"] if isinstance(runs, dict) else runs)]
    assert labels.count("case C") == 2, runs
    assert r.stdout.count("started") == 2, r.stdout
    last = max(x["id"] for x in (runs["runs"] if isinstance(runs, dict) else runs))
    show = subprocess.run([HEATCURVECTL, "--url", d.url, "show", str(last)], capture_output=True, text=True,
                          timeout=30)
    assert f"series   run 2 of 2, the first is run {last - 1}" in show.stdout, show.stdout


def test_heatcurvectl_run_on_other_daemons(start_daemon, tmp_path):
    """run --on starts the run on each daemon named, with the token the tokens file has for it, and with
    --wait follows them all, then groups their runs as compare does."""
    if not (HEATCURVECTL and os.access(HEATCURVECTL, os.X_OK)):
        pytest.skip("HEATCURVECTL is not set to the built client (run through meson test)")
    plain = start_tree(start_daemon, fixture_path("rpi4"))
    locked = with_token(lambda *a, **kw: start_tree(start_daemon, fixture_path("rpi4"), *a, **kw), tmp_path)
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{locked.url} t0ken-for-tests\n")
    tokens.chmod(0o600)
    r = subprocess.run([HEATCURVECTL, "--url", "http://127.0.0.1:1", "run", "--on", f"{plain.url},{locked.url}",
                        "--label", "case D", "--sensor", "thermal_zone0", "--safety-limit", "95",
                        "--idle", "duration=300ms", "--stress", "cpu,duration=300ms,duty=5", "--repeat", "2",
                        "--wait"], capture_output=True, text=True, timeout=90,
                       env={**os.environ, "HEATCURVE_TOKENS_FILE": str(tokens)})
    assert r.returncode == 0, (r.stdout, r.stderr)
    for d in (plain, locked):
        status, runs = d.get("/api/v1/runs")
        runs = runs["runs"] if isinstance(runs, dict) else runs
        assert [(x["label"], x["state"]) for x in runs] == [("case D", "finished")] * 2, runs
    group = [line.split() for line in r.stdout.splitlines() if line.startswith(("group ", "runs "))]
    assert group == [["group", "case", "D"], ["runs", "4"]], r.stdout


def test_start_at_holds_the_run_until_that_second(start_daemon):
    """"start_at": the run waits, on the event loop, for that wall-clock time; one too far ahead or in
    the past is refused."""
    d = start_tree(start_daemon, fixture_path("rpi4"))
    now = int(time.time() * 1000)
    for at, msg in ((now - 5000, "in the past"), (now + 120000, "ahead"), ("tomorrow", "ISO 8601")):
        status, body = d.request("POST", "/api/v1/runs", body={"start_at": at, "phases": [{"kind": "idle", "duration": "1s"}]})
        assert status == 400 and "start_at" in body["error"]["message"] and msg in body["error"]["message"], body
    at = (now + 2500) // 1000 * 1000
    iso = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at // 1000)) + "Z"
    status, run = d.request("POST", "/api/v1/runs", body={"start_at": iso, "phases": [{"kind": "idle", "duration": "1s"}]})
    assert status == 201, run
    assert run["state"] == "waiting" and run["start_at_ms"] == at and run["started_ms"] is None, run
    done = d.wait_for(lambda: (lambda doc: doc if doc["state"] == "finished" else None)(
        d.get(f"/api/v1/runs/{run['id']}")[1]), timeout=15, what="the run started at start_at and finished")
    assert 0 <= done["started_ms"] - at <= 100, (done["started_ms"], at)


def test_run_on_starts_every_board_on_the_same_second(start_daemon):
    """run --on: every daemon's first phase starts on the same wall-clock second, start_at."""
    if not (HEATCURVECTL and os.access(HEATCURVECTL, os.X_OK)):
        pytest.skip("HEATCURVECTL is not set to the built client (run through meson test)")
    boards = [start_tree(start_daemon, fixture_path("rpi4")) for _ in range(2)]
    before = time.time() * 1000
    r = subprocess.run([HEATCURVECTL, "--url", boards[0].url, "run", "--on", ",".join(b.url for b in boards),
                        "--label", "side by side", "--idle", "duration=1s"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, (r.stdout, r.stderr)
    docs = []
    for b in boards:
        run = b.get("/api/v1/runs")[1]
        run = (run["runs"] if isinstance(run, dict) else run)[0]
        docs.append(b.wait_for(lambda: (lambda doc: doc if doc["state"] == "finished" else None)(
            b.get(f"/api/v1/runs/{run['id']}")[1]), timeout=15, what="the run finished"))
    at = docs[0]["start_at_ms"]
    assert at % 1000 == 0 and at >= before + 2000, (at, before)
    assert all(doc["start_at_ms"] == at for doc in docs), docs
    started = [doc["started_ms"] for doc in docs]
    assert abs(started[0] - started[1]) < 1000, started
    assert all(0 <= s - at <= 100 for s in started), (started, at)      # the tick is 100 ms


def test_a_waiting_run_can_be_stopped_and_survives_a_restart(start_daemon, tmp_path):
    """A run waiting for start_at is the live run: another is refused, stop ends it, and a daemon stopped
    while it waits ends it as interrupted, read back after the restart."""
    state = str(tmp_path / "state")
    d = start_tree(start_daemon, fixture_path("rpi4"), state_dir=state)
    body = {"start_at": int(time.time() * 1000) + 30000, "phases": [{"kind": "idle", "duration": "1s"}]}
    status, run = d.request("POST", "/api/v1/runs", body=body)
    assert status == 201 and run["state"] == "waiting", run
    status, other = d.request("POST", "/api/v1/runs", body={"phases": [{"kind": "idle", "duration": "1s"}]})
    assert status == 409, other
    status, _ = d.request("POST", f"/api/v1/runs/{run['id']}/stop")
    assert status == 200
    done = d.get(f"/api/v1/runs/{run['id']}")[1]
    assert done["state"] == "aborted" and done["started_ms"] is None and done["start_at_ms"] == body["start_at"], done
    status, run = d.request("POST", "/api/v1/runs", body=body)
    assert status == 201 and run["state"] == "waiting", run
    assert d.stop() == 0
    d = start_tree(start_daemon, fixture_path("rpi4"), state_dir=state)
    again = d.get(f"/api/v1/runs/{run['id']}")[1]
    assert again["state"] == "interrupted" and again["start_at_ms"] == body["start_at"], again
