"""Runs through the real heatcurved: protocol, safety aborts, crash recovery, full disks, auth, bad input."""
import csv
import json
import os
import signal
import subprocess
import time
import urllib.parse

import pytest

from conftest import fixture_path, start_tree, with_token, write_in_place

FAST = ["--interval", "100ms"]
HEATCURVECTL = os.environ.get("HEATCURVECTL", "")


def children_of(pid):
    """Pids whose parent is pid (the load workers of a daemon)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            out.append(int(entry))
    return out


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_gone(pids, timeout=3):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not any(alive(p) for p in pids):
            return True
        time.sleep(0.05)
    return not any(alive(p) for p in pids)


def post_run(d, body, **kw):
    return d.request("POST", "/api/v1/runs", body=body, **kw)


def wait_state(d, run_id, states=("finished", "aborted", "interrupted"), timeout=60):
    return d.wait_for(lambda: (lambda doc: doc if doc["state"] in states else None)(
        d.get(f"/api/v1/runs/{run_id}")[1]), timeout=timeout, what=f"run {run_id} in {states}")


def stress_phase(seconds="60s", **load):
    return {"kind": "stress", "duration": seconds, "load": {"type": "cpu", "workers": 1, **load}}


def test_safety_limit_aborts_the_load(start_daemon, fixture_copy):
    root = fixture_copy("rpi4")
    d = start_tree(start_daemon, root)
    status, run = post_run(d, {"safety_limit_c": 70, "phases": [stress_phase()]})
    assert status == 201, run
    assert run["safety_limit_c"] == 70
    d.wait_for(lambda: children_of(d.proc.pid), what="workers started")
    workers = children_of(d.proc.pid)
    write_in_place(os.path.join(root, "sys/class/thermal/thermal_zone0/temp"), "71500\n")
    done = wait_state(d, run["id"], timeout=10)
    assert done["state"] == "aborted"
    assert "safety limit" in done["abort_reason"] and "71.5" in done["abort_reason"]
    assert done["phases"][0]["end_reason"] == "aborted"
    assert wait_gone(workers), "workers outlived the safety abort"


def test_default_safety_limit_is_lowest_hot_trip_minus_5(start_daemon):
    d = start_tree(start_daemon, fixture_path("odroid-c2-3.14"))
    status, run = post_run(d, {"phases": [{"kind": "idle", "duration": "1s"}]})
    assert status == 201
    assert run["safety_limit_c"] == 85.0         # hot trip at 90 C
    wait_state(d, run["id"])


def test_sensor_loss_during_load_aborts(start_daemon, fixture_copy):
    root = fixture_copy("rpi4")
    d = start_tree(start_daemon, root)
    status, run = post_run(d, {"sensor": "thermal_zone0", "phases": [stress_phase()]})
    assert status == 201, run
    d.wait_for(lambda: children_of(d.proc.pid), what="workers started")
    workers = children_of(d.proc.pid)
    write_in_place(os.path.join(root, "sys/class/thermal/thermal_zone0/temp"), "garbage\n")
    done = wait_state(d, run["id"], timeout=10)
    assert done["state"] == "aborted" and "stopped answering" in done["abort_reason"]
    assert wait_gone(workers)


@pytest.mark.parametrize("load", [
    {"type": "cpu", "workers": 2, "method": "sqrt"},
    {"type": "cpu", "workers": 1, "method": "fma", "duty": 50},
    {"type": "memory", "workers": 1, "size": "8M"},
    {"type": "io", "size": "4M"},
    {"type": "command", "argv": ["sh", "-c", "sleep 100 & sleep 100"]},
])
def test_stop_ends_every_kind_of_load(start_daemon, load, tmp_path):
    if load["type"] == "command":
        d = with_token(lambda *a, **kw: start_tree(start_daemon, fixture_path("rpi4"), *a, **kw), tmp_path)
    else:
        d = start_tree(start_daemon, fixture_path("rpi4"))
    status, run = post_run(d, {"phases": [{"kind": "stress", "duration": "5m", "load": load}]})
    assert status == 201, run
    d.wait_for(lambda: children_of(d.proc.pid), what="workers started")
    time.sleep(0.5)
    workers = children_of(d.proc.pid)
    grandchildren = [g for w in workers for g in children_of(w)]
    status, doc = d.request("POST", f"/api/v1/runs/{run['id']}/stop")
    assert status == 200 and doc["state"] == "aborted" and doc["abort_reason"] == "stopped on request"
    assert doc["phases"][0]["end_reason"] == "stopped"
    assert wait_gone(workers + grandchildren), "load outlived the stop"
    if load["type"] != "command":
        assert doc["metrics"]["work_unit"] in ("ops", "bytes", "ios")
    status, again = d.request("POST", f"/api/v1/runs/{run['id']}/stop")
    assert status == 409


def test_one_run_at_a_time_and_delete(start_daemon):
    d = start_tree(start_daemon, fixture_path("rpi4"))
    status, run = post_run(d, {"phases": [{"kind": "idle", "duration": "5m"}]})
    assert status == 201
    status, body = post_run(d, {"phases": [{"kind": "idle", "duration": "1s"}]})
    assert status == 409 and body["error"]["code"] == "run_active"
    status, body = d.request("DELETE", f"/api/v1/runs/{run['id']}")
    assert status == 409
    d.request("POST", f"/api/v1/runs/{run['id']}/stop")
    status, _ = d.request("DELETE", f"/api/v1/runs/{run['id']}")
    assert status == 204
    assert d.get(f"/api/v1/runs/{run['id']}")[0] == 404
    assert not os.path.exists(os.path.join(d.state_dir, "runs", str(run["id"])))
    status, run2 = post_run(d, {"phases": [{"kind": "idle", "duration": "1s"}]})
    assert status == 201 and run2["id"] == run["id"] + 1
    wait_state(d, run2["id"])
    _, lst = d.get("/api/v1/runs")
    assert [r["id"] for r in lst["runs"]] == [run2["id"]]


@pytest.mark.slow       # waits 6.5 s for a flush
def test_kill_9_mid_run_marks_interrupted_and_keeps_samples(start_daemon, tmp_path):
    state = str(tmp_path / "state")
    root = fixture_path("rpi4")
    d = start_tree(start_daemon, root, state_dir=state)
    status, run = post_run(d, {"label": "crash", "phases": [stress_phase("10m")]})
    assert status == 201
    d.wait_for(lambda: children_of(d.proc.pid), what="workers started")
    workers = children_of(d.proc.pid)
    time.sleep(6.5)                                   # past one 5 s flush
    d.proc.send_signal(signal.SIGKILL)
    d.proc.wait()
    assert wait_gone(workers), "load workers outlived a kill -9 of the daemon"
    csv = os.path.join(state, "runs", str(run["id"]), "samples.csv")
    rows_on_disk = sum(1 for line in open(csv) if line.endswith("\n")) - 1
    assert rows_on_disk >= 30                         # 5 s of 100 ms samples at least
    d2 = start_tree(start_daemon, root, state_dir=state)
    status, doc = d2.get(f"/api/v1/runs/{run['id']}")
    assert status == 200
    assert doc["state"] == "interrupted" and "samples kept" in doc["abort_reason"]
    assert doc["recording"]["samples"] == rows_on_disk
    assert doc["phases"][0]["end_reason"] == "interrupted"
    assert doc["ended_ms"] is not None
    assert "interrupted" in d2.logs()
    # and a new run gets a new id
    status, run2 = post_run(d2, {"phases": [{"kind": "idle", "duration": "1s"}]})
    assert status == 201 and run2["id"] == run["id"] + 1


@pytest.fixture
def small_tmpfs(tmp_path):
    mnt = tmp_path / "small"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mnt)], capture_output=True)
    if r.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root): " + r.stderr.decode().strip())
    yield str(mnt)
    subprocess.run(["umount", "-l", str(mnt)])


def fill(directory):
    fd = os.open(os.path.join(directory, "filler"), os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(fd, b"\0" * 4096) > 0:
            pass
    except OSError:
        pass                     # ENOSPC: the disk is full, as wanted
    finally:
        os.close(fd)


def test_full_disk_ends_recording_with_clear_error(start_daemon, small_tmpfs):
    d = start_tree(start_daemon, fixture_path("rpi4"), state_dir=small_tmpfs)
    status, run = post_run(d, {"phases": [stress_phase("10m")]})
    assert status == 201
    d.wait_for(lambda: children_of(d.proc.pid), what="workers started")
    workers = children_of(d.proc.pid)
    fill(small_tmpfs)
    done = wait_state(d, run["id"], timeout=20)
    assert done["state"] == "aborted"
    assert "No space left on device" in done["recording"]["error"]
    assert done["recording"]["ok"] is False and "recording failed" in done["abort_reason"]
    assert wait_gone(workers)
    assert "recording stopped" in d.logs()
    # sampling and the API go on
    t1 = d.get("/api/v1/status")[1]["ticks"]
    d.wait_for(lambda: d.get("/api/v1/status")[1]["ticks"] > t1 + 3, what="ticks after ENOSPC")
    assert d.get("/api/v1/sensors")[0] == 200


def test_read_only_state_dir_refuses_runs_clearly(start_daemon, small_tmpfs):
    d = start_tree(start_daemon, fixture_path("rpi4"), state_dir=small_tmpfs)
    subprocess.run(["mount", "-o", "remount,ro", small_tmpfs], check=True)
    status, body = post_run(d, {"phases": [{"kind": "idle", "duration": "1s"}]})
    assert status in (500, 507)
    assert "Read-only file system" in body["error"]["message"]
    assert d.get("/api/v1/sensors")[0] == 200


def test_a_run_without_room_for_its_spare_is_refused(start_daemon, small_tmpfs):
    """With less free than the 64 KiB a run sets aside for its last run.json, a run is not started
    (it would end on a full disk and read as a crash after a restart): 507, nothing left behind."""
    d = start_tree(start_daemon, fixture_path("rpi4"), state_dir=small_tmpfs)
    fill(small_tmpfs)
    filler = os.path.join(small_tmpfs, "filler")
    os.truncate(filler, os.path.getsize(filler) - 40 * 1024)        # 40 KiB free
    status, body = post_run(d, {"phases": [stress_phase("10m")]})
    assert status == 507 and body["error"]["code"] == "storage", body
    assert "not enough free space" in body["error"]["message"] and "64 KiB" in body["error"]["message"], body
    assert os.listdir(os.path.join(small_tmpfs, "runs")) == []
    assert d.get("/api/v1/status")[1]["current_run"] is None and not children_of(d.proc.pid)
    os.unlink(filler)
    status, run = post_run(d, {"phases": [{"kind": "idle", "duration": "1s"}]})
    assert status == 201, run
    assert "run.json.spare" in os.listdir(os.path.join(small_tmpfs, "runs", str(run["id"])))


def test_a_chip_name_with_a_comma_and_a_quote_is_quoted_in_the_csv_and_askable(start_daemon, fixture_copy,
                                                                                tmp_path):
    """A hwmon chip named 'core,"x"' makes the id hwmon:core,"x"/temp1: samples.csv's header quotes it
    (RFC 4180), so header and rows have as many fields; the samples answer, heatcurvectl analyse and
    /api/v1/history?sensors= (the same quoting, percent-encoded) read it back."""
    root = fixture_copy("x86-laptop-coretemp")
    chip = os.path.realpath(os.path.join(root, "sys/class/hwmon/hwmon1"))
    with open(os.path.join(chip, "name"), "w") as f:
        f.write('core,"x"\n')
    sid = 'hwmon:core,"x"/temp1'
    state = tmp_path / "state"
    d = start_tree(start_daemon, root, state_dir=str(state))
    assert sid in [t["id"] for t in d.get("/api/v1/sensors")[1]["temperatures"]]
    status, run = post_run(d, {"phases": [{"kind": "idle", "duration": "1s"}]})
    assert status == 201, run
    wait_state(d, run["id"])
    path = state / "runs" / str(run["id"]) / "samples.csv"
    with open(path, newline="") as f:
        table = list(csv.reader(f))
    assert sid + "_c" in table[0] and all(len(row) == len(table[0]) for row in table[1:]), table[:2]
    assert '"hwmon:core,""x""/temp1_c"' in path.read_text().splitlines()[0]
    samples = d.get(f"/api/v1/runs/{run['id']}/samples")[1]
    assert samples["columns"] == table[0] and all(len(r) == len(table[0]) for r in samples["rows"])
    out = subprocess.run([HEATCURVECTL or "heatcurvectl", "analyse", str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    asked = '"hwmon:core,""x""/temp1",thermal_zone0'
    status, hist = d.get("/api/v1/history?points=10&sensors=" + urllib.parse.quote(asked, safe=""))
    assert status == 200, hist
    assert json.dumps(hist).count(json.dumps(sid)) >= 1 and "thermal_zone0" in json.dumps(hist)
    status, body = d.get("/api/v1/history?sensors=" + urllib.parse.quote(sid, safe=""))
    assert status == 400 and 'unknown sensor id \\"hwmon:core\\"' in json.dumps(body), body


def test_token_protects_mutating_requests(start_daemon, tmp_path):
    token = tmp_path / "token"
    token.write_text("s3cret-token\n")
    conf = tmp_path / "c.conf"
    conf.write_text(f"[daemon]\ntoken_file = {token}\n")
    d = start_tree(start_daemon, fixture_path("rpi4"), "--config", str(conf))
    body = {"phases": [{"kind": "idle", "duration": "1s"}]}
    status, err = post_run(d, body)
    assert status == 401 and err["error"]["code"] == "unauthorized"
    status, err = post_run(d, body, headers={"Authorization": "Bearer wrong"})
    assert status == 401
    status, run = post_run(d, body, headers={"Authorization": "Bearer s3cret-token"})
    assert status == 201
    assert d.request("POST", f"/api/v1/runs/{run['id']}/stop")[0] == 401
    assert d.request("DELETE", f"/api/v1/runs/{run['id']}")[0] == 401
    assert d.get(f"/api/v1/runs/{run['id']}")[0] == 200        # reading needs no token


@pytest.mark.parametrize("body,field", [
    (b"not json", "body"),
    ([], "body"),
    ({}, "phases"),
    ({"phases": []}, "phases"),
    ({"phases": [{"kind": "idle", "duration": "1s"}], "colour": "red"}, "colour"),
    ({"phases": [{"kind": "nap", "duration": "1s"}]}, "phases[0].kind"),
    ({"phases": [{"kind": "idle"}]}, "phases[0].duration"),
    ({"phases": [{"kind": "idle", "duration": "5x"}]}, "phases[0].duration"),
    ({"phases": [{"kind": "idle", "duration": "1s", "until": "stable"}]}, "phases[0].until"),
    ({"phases": [{"kind": "idle", "until": "plateau"}]}, "phases[0].until"),
    ({"phases": [{"kind": "stress", "until": "plateau", "min": "10m", "max": "5m"}]}, "phases[0].min"),
    ({"phases": [{"kind": "idle", "duration": "1s", "load": {"type": "cpu"}}]}, "phases[0].load"),
    ({"phases": [{"kind": "stress", "duration": "1s", "load": {"type": "gpu"}}]}, "phases[0].load.type"),
    ({"phases": [{"kind": "stress", "duration": "1s", "load": {"method": "magic"}}]}, "phases[0].load.method"),
    ({"phases": [{"kind": "stress", "duration": "1s", "load": {"duty": 0}}]}, "phases[0].load.duty"),
    ({"phases": [{"kind": "stress", "duration": "1s", "load": {"workers": 100000}}]}, "phases[0].load.workers"),
    ({"phases": [{"kind": "stress", "duration": "1s", "load": {"type": "command"}}]}, "phases[0].load.argv"),
    ({"phases": [{"kind": "stress", "duration": "1s", "load": {"type": "memory", "size": "lots"}}]}, "phases[0].load.size"),
    ({"phases": [{"kind": "idle", "duration": "1s"}], "ambient_c": "warm"}, "ambient_c"),
    ({"phases": [{"kind": "idle", "duration": "1s"}], "safety_limit_c": 500}, "safety_limit_c"),
    ({"phases": [{"kind": "idle", "duration": "1s"}], "sensor": "thermal_zone9"}, "sensor"),
    ({"phases": [{"kind": "idle", "duration": "1s"}], "label": "x" * 500}, "label"),
    ({"phases": [{"kind": "idle", "duration": "1s"}] * 17}, "phases"),
])
def test_bad_run_definitions_name_the_field(start_daemon, body, field):
    d = start_tree(start_daemon, fixture_path("rpi4"))
    status, err = post_run(d, body)
    assert status == 400, err
    assert err["error"]["message"].startswith(field + ":"), err
    _, lst = d.get("/api/v1/runs")
    assert lst["runs"] == []
    assert not os.path.exists(os.path.join(d.state_dir, "runs"))


@pytest.mark.slow       # two recorded runs, 6 s
def test_samples_json_and_compare(start_daemon):
    d = start_tree(start_daemon, fixture_path("rpi4"))
    ids = []
    for label in ("a", "b"):
        status, run = post_run(d, {"label": label, "phases": [
            {"kind": "idle", "duration": "1s"}, stress_phase("1s"), {"kind": "cooldown", "duration": "1s"}]})
        assert status == 201
        wait_state(d, run["id"])
        ids.append(run["id"])
    status, samples = d.get(f"/api/v1/runs/{ids[0]}/samples")
    assert status == 200
    assert samples["columns"][:3] == ["time_ms", "elapsed_s", "phase"]
    assert all(len(row) == len(samples["columns"]) for row in samples["rows"])
    assert {row[2] for row in samples["rows"]} == {"idle", "stress", "cooldown"}
    status, cmp = d.get(f"/api/v1/compare?runs={ids[0]},{ids[1]}&points=50")
    assert status == 200
    assert [r["label"] for r in cmp["runs"]] == ["a", "b"]
    c = cmp["curves"][0]
    assert c["id"] == ids[0] and len(c["t_s"]) == len(c["temp_c"]) <= 51
    assert min(c["t_s"]) < 0 <= max(c["t_s"])         # aligned on the load start
    for q, param in (("runs=", "runs"), ("runs=1,x", "runs"), ("runs=999", "runs"), ("runs=1&points=0", "points")):
        status, err = d.get("/api/v1/compare?" + q)
        assert status == 400 and err["error"]["message"].startswith(param + ":"), (q, err)


@pytest.fixture
def peer_netns():
    """A second host: a network namespace joined to this one by a veth pair (10.213.77.0/30)."""
    name = f"hc{os.getpid()}"
    host_if, peer_if = f"hch{os.getpid() % 100000}", f"hcp{os.getpid() % 100000}"
    cmds = [
        ["ip", "netns", "add", name],
        ["ip", "link", "add", host_if, "type", "veth", "peer", "name", peer_if],
        ["ip", "link", "set", peer_if, "netns", name],
        ["ip", "addr", "add", "10.213.77.1/30", "dev", host_if],
        ["ip", "link", "set", host_if, "up"],
        ["ip", "netns", "exec", name, "ip", "addr", "add", "10.213.77.2/30", "dev", peer_if],
        ["ip", "netns", "exec", name, "ip", "link", "set", peer_if, "up"],
    ]
    for c in cmds:
        r = subprocess.run(c, capture_output=True)
        if r.returncode != 0:
            subprocess.run(["ip", "link", "del", host_if], capture_output=True)
            subprocess.run(["ip", "netns", "del", name], capture_output=True)
            pytest.skip(f"cannot build a test network namespace ({' '.join(c)}): {r.stderr.decode().strip()}")
    yield name
    subprocess.run(["ip", "link", "del", host_if], capture_output=True)
    subprocess.run(["ip", "netns", "del", name], capture_output=True)


def test_without_token_only_loopback_may_change_state(start_daemon, peer_netns):
    from conftest import free_port
    root = fixture_path("rpi4")
    d = start_daemon("--sysfs-root", root, "--procfs-root", root, *FAST, "--listen", f"0.0.0.0:{free_port()}")
    url = f"http://10.213.77.1:{d.port}"              # this host, as the peer sees it

    def from_peer(*args):
        r = subprocess.run(["ip", "netns", "exec", peer_netns, "curl", "-s", "-m", "5", "-o", "-",
                            "-w", "\\n%{http_code}", *args], capture_output=True, text=True)
        body, _, code = r.stdout.rpartition("\n")
        return int(code or 0), body

    code, body = from_peer(url + "/api/v1/status")
    assert code == 200                                    # reading is open
    code, body = from_peer("-X", "POST", "-d", '{"phases":[{"kind":"idle","duration":"1s"}]}',
                           url + "/api/v1/runs")
    assert code == 403 and "loopback" in body
    assert d.get("/api/v1/runs")[1]["runs"] == []
    code, _ = from_peer("-X", "DELETE", url + "/api/v1/runs/1")
    assert code == 403


def test_metrics_are_unknown_not_zero_while_running(start_daemon):
    d = start_tree(start_daemon, fixture_path("rpi4"))
    status, run = post_run(d, {"ambient_c": 21.5, "phases": [{"kind": "idle", "duration": "1s"}, stress_phase("5m")]})
    assert status == 201
    m = run["metrics"]
    assert m["baseline_c"] is None and m["plateau_c"] is None and m["ambient_c"] == 21.5
    # after the idle phase the baseline is known
    doc = d.wait_for(lambda: (lambda doc: doc if doc["phase"] == "stress" else None)(
        d.get(f"/api/v1/runs/{run['id']}")[1]), what="stress phase")
    assert doc["metrics"]["baseline_c"] == 48.69        # the fixture reads 48.686 C
    assert doc["metrics"]["plateau_c"] is None
    d.request("POST", f"/api/v1/runs/{run['id']}/stop")


def test_sigterm_mid_run_stops_the_load_and_ends_the_run(start_daemon, tmp_path):
    state = str(tmp_path / "state")
    root = fixture_path("rpi4")
    d = start_tree(start_daemon, root, state_dir=state)
    status, run = post_run(d, {"phases": [stress_phase("10m", workers=2)]})
    assert status == 201
    d.wait_for(lambda: children_of(d.proc.pid), what="workers started")
    workers = children_of(d.proc.pid)
    time.sleep(1)                                   # some samples, not yet flushed
    d.signal(signal.SIGTERM)
    assert d.proc.wait(10) == 0
    assert wait_gone(workers), "load outlived the daemon's clean stop"
    d2 = start_tree(start_daemon, root, state_dir=state)
    doc = d2.get(f"/api/v1/runs/{run['id']}")[1]
    # a stop that is not the user's (systemctl restart, an upgrade): interrupted, not aborted
    assert doc["state"] == "interrupted"
    assert doc["abort_reason"] == ("heatcurved was stopped (SIGTERM: a stop, restart, upgrade or shutdown) "
                                   "during the run"), doc["abort_reason"]
    assert doc["phases"][0]["end_reason"] == "interrupted"
    csv = os.path.join(state, "runs", str(run["id"]), "samples.csv")
    rows_on_disk = sum(1 for line in open(csv) if line.endswith("\n")) - 1
    assert doc["recording"]["samples"] >= 5 and rows_on_disk == doc["recording"]["samples"]


def test_csv_answer_has_complete_rows_only(start_daemon, tmp_path):
    """A finished run's samples.csv that gained a power cut's NUL tail, or a torn row, is served
    without them: the CSV answer holds complete rows only, as the JSON one does."""
    state = tmp_path / "state"
    d = start_tree(start_daemon, fixture_path("rpi4"), state_dir=str(state))
    status, run = post_run(d, {"phases": [{"kind": "idle", "duration": "1s"}]})
    assert status == 201, run
    done = wait_state(d, run["id"], timeout=10)
    path = state / "runs" / str(run["id"]) / "samples.csv"
    whole = path.read_bytes()
    assert whole.endswith(b"\n") and b"\0" not in whole
    for tail in (b"\0" * 4096, b"1700000006000,6.0", b"1700000006000,6.0\0\0\0\n" + b"\0" * 5000):
        path.write_bytes(whole + tail)
        status, csv = d.get(f"/api/v1/runs/{run['id']}/samples?format=csv")
        assert status == 200 and csv.encode() == whole, tail[:20]
        assert len(csv.strip().splitlines()) == done["recording"]["samples"] + 1


def test_unreadable_newest_run_keeps_its_samples(start_daemon, tmp_path):
    """A run directory whose run.json was lost (a full disk, a power cut) keeps its id and its
    samples: it is rebuilt from them as interrupted, the damaged file moved aside, and a new run
    takes the next id."""
    state = tmp_path / "state"
    damaged = state / "runs" / "1"
    damaged.mkdir(parents=True)
    rows = "".join(f"{1700000000000 + i * 1000},{i}.000,{'idle' if i < 3 else 'stress'},{40 + i}.000,,,,0,,,\n"
                   for i in range(6))
    header = "time_ms,elapsed_s,phase,temp_c,hottest_c,freq_hz,max_allowed_hz,cooling_active,load,work_rate_per_s,work_unit\n"
    (damaged / "samples.csv").write_text(header + rows + "1700000006000,6.0")      # a torn last row
    (damaged / "run.json").write_text('{"id": 1, "state": "runn')                # cut short
    d = start_tree(start_daemon, fixture_path("rpi4"), state_dir=str(state))
    status, run = post_run(d, {"phases": [{"kind": "idle", "duration": "1s"}]})
    assert status == 201 and run["id"] == 2, run
    assert (damaged / "samples.csv").read_text() == header + rows                # the torn row cut off
    assert [p.name for p in damaged.iterdir() if p.name.startswith("run.json.corrupt-")]
    assert "rebuilt from samples.csv as interrupted" in d.logs()
    old = d.get("/api/v1/runs/1")[1]
    assert old["state"] == "interrupted" and "run.json was lost or damaged" in old["abort_reason"]
    assert [(p["kind"], p["started_ms"], p["ended_ms"]) for p in old["phases"]] == [
        ("idle", 1700000000000, 1700000003000), ("stress", 1700000003000, 1700000005000)]
    assert old["recording"]["samples"] == 6


def test_a_damaged_run_json_never_replaces_one_moved_aside_before(start_daemon, tmp_path):
    """run.json.corrupt-<unix seconds> may exist already (damaged twice within a second, or a
    clock set back): the new one gets a name of its own."""
    state = tmp_path / "state"
    damaged = state / "runs" / "1"
    damaged.mkdir(parents=True)
    header = "time_ms,elapsed_s,phase,temp_c,hottest_c,freq_hz,max_allowed_hz,cooling_active,load,work_rate_per_s,work_unit\n"
    (damaged / "samples.csv").write_text(header + "1700000000000,0.000,idle,40.000,,,,0,,,\n")
    (damaged / "run.json").write_text("{ damaged")
    now = int(time.time())
    taken = [damaged / f"run.json.corrupt-{s}" for s in range(now - 5, now + 120)]
    for name in taken:
        name.write_text("earlier")
    d = start_tree(start_daemon, fixture_path("rpi4"), state_dir=str(state))
    assert d.get("/api/v1/runs/1")[1]["state"] == "interrupted"
    assert all(name.read_text() == "earlier" for name in taken)
    new = [p for p in damaged.iterdir() if p.name.startswith("run.json.corrupt-") and p not in taken]
    assert len(new) == 1 and new[0].read_text() == "{ damaged", new


def test_a_huge_run_json_is_not_read_whole(start_daemon, tmp_path):
    """A run.json of 200 MB (not one heatcurved wrote) is refused by its size, without reading
    it: the run is rebuilt from its samples and the daemon's memory stays small."""
    state = tmp_path / "state"
    damaged = state / "runs" / "1"
    damaged.mkdir(parents=True)
    header = "time_ms,elapsed_s,phase,temp_c,hottest_c,freq_hz,max_allowed_hz,cooling_active,load,work_rate_per_s,work_unit\n"
    rows = "".join(f"{1700000000000 + i * 1000},{i}.000,idle,{40 + i}.000,,,,0,,,\n" for i in range(4))
    (damaged / "samples.csv").write_text(header + rows)
    with open(damaged / "run.json", "wb") as f:
        f.truncate(200 * 1024 * 1024)            # sparse: 200 MB of zeros that take no room
    d = start_tree(start_daemon, fixture_path("rpi4"), state_dir=str(state))
    old = d.get("/api/v1/runs/1")[1]
    assert old["state"] == "interrupted" and "larger than 1048576 bytes" in old["abort_reason"], old
    assert "larger than 1048576 bytes" in d.logs()
    with open(f"/proc/{d.proc.pid}/status") as f:
        hwm_kib = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
    assert hwm_kib < 64 * 1024, hwm_kib


def test_full_disk_abort_reason_survives_a_restart(start_daemon, small_tmpfs):
    """A run aborted by a full disk keeps that reason across a restart of the daemon, with the
    disk still full and after it has room again; it does not become "heatcurved stopped
    during the run"."""
    d = start_tree(start_daemon, fixture_path("rpi4"), state_dir=small_tmpfs)
    status, run = post_run(d, {"phases": [stress_phase("10m")]})
    assert status == 201
    d.wait_for(lambda: children_of(d.proc.pid), what="workers started")
    fill(small_tmpfs)
    done = wait_state(d, run["id"], timeout=20)
    assert done["state"] == "aborted" and "No space left on device" in done["abort_reason"], done
    run_dir = os.path.join(small_tmpfs, "runs", str(run["id"]))
    assert sorted(os.listdir(run_dir)) == ["run.json", "samples.csv"]      # the room set aside was used
    d.stop()
    d2 = start_tree(start_daemon, fixture_path("rpi4"), state_dir=small_tmpfs)       # still full
    again = d2.get(f"/api/v1/runs/{run['id']}")[1]
    assert again["state"] == "aborted" and again["abort_reason"] == done["abort_reason"], again
    d2.stop()
    os.unlink(os.path.join(small_tmpfs, "filler"))
    d3 = start_tree(start_daemon, fixture_path("rpi4"), state_dir=small_tmpfs)
    again = d3.get(f"/api/v1/runs/{run['id']}")[1]
    assert again["state"] == "aborted" and again["abort_reason"] == done["abort_reason"], again
    with open(os.path.join(small_tmpfs, "runs", str(run["id"]), "run.json")) as f:
        assert json.load(f)["abort_reason"] == done["abort_reason"]


def test_new_run_never_writes_through_a_planted_entry(start_daemon, tmp_path):
    """A symlink (or anything) planted at runs/<next id> is not taken for the new run's directory:
    the run is refused with 409 and the link's target is left as it was."""
    state = tmp_path / "state"
    d = start_tree(start_daemon, fixture_path("rpi4"), state_dir=str(state))
    status, run = post_run(d, {"phases": [{"kind": "idle", "duration": "1s"}]})
    assert status == 201 and run["id"] == 1
    wait_state(d, 1)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (state / "runs" / "2").symlink_to(elsewhere)
    status, body = post_run(d, {"phases": [{"kind": "idle", "duration": "1s"}]})
    assert status == 409 and body["error"]["code"] == "exists", body
    assert "runs/2" in body["error"]["message"] and "move it away" in body["error"]["message"]
    assert list(elsewhere.iterdir()) == [] and (state / "runs" / "2").is_symlink()
    assert d.get("/api/v1/status")[1]["current_run"] is None
    (state / "runs" / "2").unlink()
    status, run = post_run(d, {"phases": [{"kind": "idle", "duration": "1s"}]})
    assert status == 201 and run["id"] == 2, run


def test_delete_refuses_symlinks_and_foreign_files(start_daemon, tmp_path):
    state = tmp_path / "state"
    d = start_tree(start_daemon, fixture_path("rpi4"), state_dir=str(state))
    ids = []
    for _ in range(2):
        status, run = post_run(d, {"phases": [{"kind": "idle", "duration": "1s"}]})
        assert status == 201
        wait_state(d, run["id"])
        ids.append(run["id"])
    # a run directory replaced by a symlink to somewhere else: nothing there is touched
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "run.json").write_text("precious")
    (elsewhere / "samples.csv").write_text("precious")
    run_dir = state / "runs" / str(ids[0])
    for f in run_dir.iterdir():
        f.unlink()
    run_dir.rmdir()
    run_dir.symlink_to(elsewhere)
    status, body = d.request("DELETE", f"/api/v1/runs/{ids[0]}")
    assert status == 409 and body["error"]["code"] == "run_files", body
    assert "not a directory (a symbolic link?)" in body["error"]["message"], body
    assert (elsewhere / "run.json").read_text() == "precious" and (elsewhere / "samples.csv").exists()
    # a file someone else put in a run directory: all or nothing, the run stays whole and listed
    (state / "runs" / str(ids[1]) / "notes.txt").write_text("mine")
    status, body = d.request("DELETE", f"/api/v1/runs/{ids[1]}")
    assert status == 409 and '"notes.txt", which heatcurved did not write' in body["error"]["message"], body
    assert sorted(p.name for p in (state / "runs" / str(ids[1])).iterdir()) == ["notes.txt", "run.json", "samples.csv"]
    assert d.get(f"/api/v1/runs/{ids[1]}")[0] == 200
    (state / "runs" / str(ids[1]) / "notes.txt").unlink()
    assert d.request("DELETE", f"/api/v1/runs/{ids[1]}")[0] == 204
    assert not (state / "runs" / str(ids[1])).exists()


def test_delete_of_a_partly_written_run_answers_409_and_keeps_everything(start_daemon, tmp_path):
    """A run folder that is not only the files heatcurved writes (one of its names taken by a
    folder, a FIFO, a link) is a conflict: 409 naming it, every file kept, the run still listed.
    Its run.json gone or damaged, the rest is still a run's own files: it goes (204)."""
    state = tmp_path / "state"
    d = start_tree(start_daemon, fixture_path("rpi4"), state_dir=str(state))
    ids = []
    for _ in range(4):
        status, run = post_run(d, {"phases": [{"kind": "idle", "duration": "1s"}]})
        assert status == 201
        wait_state(d, run["id"])
        ids.append(run["id"])
    runs = state / "runs"
    odd = {ids[0]: lambda p: p.mkdir(), ids[1]: lambda p: os.mkfifo(p),
           ids[2]: lambda p: p.symlink_to(tmp_path / "elsewhere")}
    names = {ids[0]: "run.json.tmp", ids[1]: "samples.csv.tmp", ids[2]: "run.json.spare"}
    for i, make in odd.items():
        make(runs / str(i) / names[i])
        before = sorted(p.name for p in (runs / str(i)).iterdir())
        status, body = d.request("DELETE", f"/api/v1/runs/{i}")
        assert status == 409 and body["error"]["code"] == "run_files", body
        assert f'"{names[i]}", which heatcurved did not write (or not as a file)' in body["error"]["message"]
        assert sorted(p.name for p in (runs / str(i)).iterdir()) == before
        assert d.get(f"/api/v1/runs/{i}")[0] == 200
    # run.json damaged, a stale .tmp beside it: still only its own files
    (runs / str(ids[3]) / "run.json").write_text('{"id": 4, "sta')
    (runs / str(ids[3]) / "run.json.tmp").write_text("half")
    assert d.request("DELETE", f"/api/v1/runs/{ids[3]}")[0] == 204
    assert not (runs / str(ids[3])).exists()
    # its folder gone already: nothing left to lose, the entry goes
    for p in (runs / str(ids[0])).iterdir():
        p.rmdir() if p.is_dir() else p.unlink()
    (runs / str(ids[0])).rmdir()
    assert d.request("DELETE", f"/api/v1/runs/{ids[0]}")[0] == 204
    assert d.get(f"/api/v1/runs/{ids[0]}")[0] == 404
    assert [r["id"] for r in d.get("/api/v1/runs")[1]["runs"]] == [ids[2], ids[1]]


@pytest.mark.slow       # a run on a full disk, 5 s
def test_run_json_written_when_the_disk_has_room_again(start_daemon, small_tmpfs):
    """A run aborted by a full disk keeps its first reason: run.json is written once there is room.
    (Here without the room a run sets aside for it, as when the disk was too full for that.)"""
    d = start_tree(start_daemon, fixture_path("rpi4"), state_dir=small_tmpfs)
    status, run = post_run(d, {"phases": [stress_phase("10m")]})
    assert status == 201
    d.wait_for(lambda: children_of(d.proc.pid), what="workers started")
    os.unlink(os.path.join(small_tmpfs, "runs", str(run["id"]), "run.json.spare"))
    fill(small_tmpfs)
    done = wait_state(d, run["id"], timeout=20)
    assert done["state"] == "aborted"
    path = os.path.join(small_tmpfs, "runs", str(run["id"]), "run.json")
    assert '"running"' in open(path).read()         # the disk is full: not written yet
    os.unlink(os.path.join(small_tmpfs, "filler"))
    d.wait_for(lambda: '"aborted"' in open(path).read(), timeout=15, what="run.json written after all")
    d.stop()
    d2 = start_tree(start_daemon, fixture_path("rpi4"), state_dir=small_tmpfs)
    again = d2.get(f"/api/v1/runs/{run['id']}")[1]
    assert again["state"] == "aborted" and again["abort_reason"] == done["abort_reason"]


def test_a_last_worker_killed_aborts_the_run(start_daemon):
    d = start_tree(start_daemon, fixture_path("rpi4"))
    status, run = post_run(d, {"phases": [stress_phase("20s")]})
    assert status == 201, run
    workers = d.wait_for(lambda: children_of(d.proc.pid), what="worker started")
    os.kill(workers[0], signal.SIGKILL)
    done = wait_state(d, run["id"], timeout=10)
    assert done["state"] == "aborted" and done["abort_reason"] == "the cpu load ended by itself (signal 9)"


def test_a_command_that_ends_by_itself_aborts_the_run(start_daemon, tmp_path):
    d = with_token(lambda *a, **kw: start_tree(start_daemon, fixture_path("rpi4"), *a, **kw), tmp_path)
    status, run = post_run(d, {"phases": [{"kind": "stress", "duration": "20s",
                                           "load": {"type": "command", "argv": ["sh", "-c", "exit 3"]}}]})
    assert status == 201, run
    done = wait_state(d, run["id"], timeout=10)
    assert done["state"] == "aborted" and done["abort_reason"] == "the command load ended by itself (exit status 3)"


def test_a_command_that_cannot_run_is_refused_before_the_run(start_daemon, tmp_path):
    d = with_token(lambda *a, **kw: start_tree(start_daemon, fixture_path("rpi4"), *a, **kw), tmp_path)
    status, body = post_run(d, {"phases": [{"kind": "stress", "duration": "5s",
                                            "load": {"type": "command", "argv": ["/nonexistent/x"]}}]})
    assert status == 400
    assert body["error"]["message"] == 'phases[0].load.argv[0]: "/nonexistent/x" is not an executable file'
    assert d.get("/api/v1/runs")[1]["runs"] == []


@pytest.mark.slow       # three loads back to back, 6 s
def test_back_to_back_loads_each_stop_on_their_own(start_daemon):
    """The first load's kill timer must not fire on the second one."""
    d = start_tree(start_daemon, fixture_path("rpi4"))
    status, run = post_run(d, {"phases": [
        {"kind": "stress", "duration": "2s", "load": {"type": "cpu", "workers": 1}},
        {"kind": "stress", "duration": "3s", "load": {"type": "memory", "workers": 1, "size": "8M"}},
        {"kind": "idle", "duration": "1s"}]})
    assert status == 201, run
    done = wait_state(d, run["id"], timeout=30)
    assert done["state"] == "finished", done["abort_reason"]
    assert "killing it" not in d.logs()
    _, samples = d.get(f"/api/v1/runs/{run['id']}/samples")
    cols = samples["columns"]
    phase, rate, unit = cols.index("phase"), cols.index("work_rate_per_s"), cols.index("work_unit")
    memory = [row for row in samples["rows"] if row[unit] == "bytes"]
    # the memory load worked through its whole phase (a sample every 100 ms for 3 s): a rate in
    # every row, and work done in its last half second (a tick on a busy machine may see none)
    assert len(memory) >= 20 and all(row[phase] == "stress" for row in memory)
    assert all(row[rate] is not None for row in memory), memory
    assert sum(row[rate] for row in memory[-5:]) > 0, memory[-5:]


def descendants(pid):
    out, todo = [], [pid]
    while todo:
        kids = children_of(todo.pop())
        out += kids
        todo += kids
    return out


def test_a_command_that_leaves_its_group_is_killed_too(start_daemon, tmp_path):
    """A child of the command that calls setsid() is no longer in the command's process group;
    it must not outlive the phase."""
    d = with_token(lambda *a, **kw: start_tree(start_daemon, fixture_path("rpi4"), *a, **kw), tmp_path)
    status, run = post_run(d, {"phases": [{"kind": "stress", "duration": "5m", "load": {
        "type": "command", "argv": ["sh", "-c", "setsid sleep 301 & setsid sh -c 'sleep 302 & sleep 303' & sleep 300"]}}]})
    assert status == 201, run
    d.wait_for(lambda: len(descendants(d.proc.pid)) >= 6, what="the command and its children started")
    time.sleep(0.3)
    everyone = descendants(d.proc.pid)
    status, _ = d.request("POST", f"/api/v1/runs/{run['id']}/stop")
    assert status == 200
    assert wait_gone(everyone, timeout=5), [p for p in everyone if alive(p)]


@pytest.mark.parametrize("raw,message", [
    (b'{"phases": [{"kind": "idle", "duration": "1s"}]} trailing', "body: more after the JSON value (at byte 49)"),
    (b'{"phases": [{"kind": "idle", "duration": "1s"}]}{"phases": []}', "body: more after the JSON value (at byte 48)"),
    (b'{"phases": [{"kind": "idle", "duration": "1s"}], "label": "a\\u0000b"}', "label: must not contain a NUL character"),
    (b'{"phases": [{"kind": "idle", "duration": "1s"}], "label": "caf\xe9"}', "label: is not valid UTF-8"),
    (b'{"phases": [{"kind": "stress", "duration": "1s", "load": {"workers": 0.5}}]}',
     "phases[0].load.workers: 0.5 is not a whole number"),
    # json-c keeps the last of two equal keys: a body that says two things is refused instead
    (b'{"label": "a", "phases": [{"kind": "idle", "duration": "1s"}], "label": "b"}', "label: duplicate field"),
    (b'{"label": "a", "\\u006cabel": "b", "phases": [{"kind": "idle", "duration": "1s"}]}',
     "label: duplicate field"),
    (b'{"phases": [{"kind": "idle", "duration": "1s"}, {"kind": "idle", "duration": "1s", "duration": "1h"}]}',
     "phases[1].duration: duplicate field"),
    (b'{"phases": [{"kind": "stress", "duration": "1s", "load": {"type": "cpu", "workers": 1, "workers": 4}}]}',
     "phases[0].load.workers: duplicate field"),
    (b'{"phases": [{"kind": "idle", "duration": "1s"}], "phases": [{"kind": "stress", "duration": "1h"}]}',
     "phases: duplicate field"),
])
def test_request_bodies_taken_exactly(start_daemon, raw, message):
    d = start_tree(start_daemon, fixture_path("rpi4"))
    status, err = post_run(d, raw)
    assert status == 400 and err["error"]["message"] == message, err
    assert d.get("/api/v1/runs")[1]["runs"] == []
    # whitespace after the value is fine
    status, run = post_run(d, b'{"phases": [{"kind": "idle", "duration": "1s"}]}\r\n  ')
    assert status == 201, run


def test_status_shows_paths_to_trusted_clients_only(start_daemon, tmp_path):
    token = tmp_path / "token"
    token.write_text("s3cret-token\n")
    conf = tmp_path / "c.conf"
    conf.write_text(f"[daemon]\ntoken_file = {token}\n")
    d = start_daemon("--config", str(conf), "--simulate", "--interval", "100ms")
    _, anon = d.get("/api/v1/status")
    assert anon["storage"]["state_dir"] is None and anon["simulator"]["sysfs_root"] is None
    assert d.state_dir not in json.dumps(anon)
    _, mine = d.get("/api/v1/status", headers={"Authorization": "Bearer s3cret-token"})
    assert mine["storage"]["state_dir"] == d.state_dir and mine["simulator"]["sysfs_root"]


@pytest.mark.slow       # a run with a 5 s idle phase
def test_ambient_from_a_configured_sensor(start_daemon, fixture_copy, tmp_path):
    """With [runs] ambient_sensor, the room's sensor is followed and its idle median is the
    run's ambient, unless the run gives one."""
    root = fixture_copy("rk3399-rockpro64")
    conf = tmp_path / "c.conf"
    conf.write_text("[runs]\nambient_sensor = thermal_zone1\n")
    zone1 = os.path.join(root, "sys/class/thermal/thermal_zone1/temp")
    d = start_tree(start_daemon, root, "--config", str(conf))
    stop = {"go": True}
    import threading

    def wobble():                        # 21, 22, 23 ... around a median of 22
        i = 0
        while stop["go"]:
            write_in_place(zone1, f"{21000 + (i % 3) * 1000}\n")
            i += 1
            time.sleep(0.05)
    t = threading.Thread(target=wobble)
    t.start()
    try:
        status, run = post_run(d, {"phases": [{"kind": "idle", "duration": "3s"},
                                              {"kind": "cooldown", "duration": "1s"}]})
        assert status == 201, run
        done = wait_state(d, run["id"])
        status, given = post_run(d, {"ambient_c": 19.5, "phases": [{"kind": "idle", "duration": "1s"}]})
        assert status == 201
        given = wait_state(d, given["id"])
    finally:
        stop["go"] = False
        t.join()
    assert done["ambient_sensor"] == "thermal_zone1" and done["ambient_c"] == 22.0, done["ambient_c"]
    assert done["metrics"]["ambient_c"] == 22.0
    assert given["ambient_c"] == 19.5
    conf.write_text("[runs]\nambient_sensor = thermal_zone7\n")
    d.signal(signal.SIGHUP)
    d.wait_for(lambda: "Reloaded" in d.logs(), what="reload")
    status, err = post_run(d, {"phases": [{"kind": "idle", "duration": "1s"}]})
    assert status == 400 and err["error"]["message"].startswith('ambient_sensor: "thermal_zone7"'), err


def test_command_loads_need_a_token(start_daemon):
    """Without a token any local account could run a program as the daemon's user (root, when
    heatcurved runs as root): command loads are refused; the other loads are not."""
    d = start_tree(start_daemon, fixture_path("rpi4"))
    status, err = post_run(d, {"phases": [{"kind": "stress", "duration": "1s",
                                           "load": {"type": "command", "argv": ["true"]}}]})
    assert status == 403 and err["error"]["message"].startswith("phases[0].load: a command load needs a token"), err
    assert d.get("/api/v1/runs")[1]["runs"] == []
    status, run = post_run(d, {"phases": [stress_phase("1s")]})
    assert status == 201, run


def test_loads_as_root_need_allow_root(start_daemon, tmp_path):
    """As root, a load would run as root too: a run with one is refused (403, naming the key)
    unless [runs] allow_root = yes; a run without a load is no such risk and starts. The
    setting is read again at a reload."""
    if os.geteuid() != 0:
        pytest.skip("heatcurved does not run as root here: there is nothing to refuse")
    conf = tmp_path / "c.conf"
    conf.write_text("[daemon]\ninterval = 100ms\n")
    d = start_tree(start_daemon, fixture_path("rpi4"), "--config", str(conf), allow_root=False)
    for load in ({"type": "cpu", "workers": 1}, {"type": "memory", "size": "1M"}, {"type": "io", "size": "1M"}):
        status, err = post_run(d, {"phases": [{"kind": "idle", "duration": "1s"},
                                              {"kind": "stress", "duration": "1s", "load": load}]})
        assert status == 403, err
        message = err["error"]["message"]
        assert message.startswith("phases[1].load: heatcurved runs as root") and \
            "[runs] allow_root = yes" in message, message
    assert d.get("/api/v1/runs")[1]["runs"] == [] and not children_of(d.proc.pid)
    status, run = post_run(d, {"phases": [{"kind": "idle", "duration": "1s"}]})
    assert status == 201, run
    wait_state(d, run["id"])

    conf.write_text("[daemon]\ninterval = 100ms\n[runs]\nallow_root = yes\n")
    d.signal(signal.SIGHUP)
    d.wait_for(lambda: "Reloaded" in d.logs(), what="reload")
    status, run = post_run(d, {"phases": [stress_phase("1s")]})
    assert status == 201, run
    assert wait_state(d, run["id"])["state"] == "finished"


def test_heatcurvectl_shows_why_a_load_is_refused_as_root(start_daemon):
    if os.geteuid() != 0:
        pytest.skip("heatcurved does not run as root here: there is nothing to refuse")
    if not HEATCURVECTL or not os.access(HEATCURVECTL, os.X_OK):
        pytest.skip("HEATCURVECTL is not set to the built client (run through meson test)")
    d = start_tree(start_daemon, fixture_path("rpi4"), allow_root=False)
    r = subprocess.run([HEATCURVECTL, "--url", d.url, "run", "--stress", "cpu,duration=1s,workers=1"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and r.stdout == "", r
    line = r.stderr.strip()
    assert "\n" not in line and line.startswith("heatcurvectl: phases[0].load: heatcurved runs as root"), line
    assert "[runs] allow_root = yes" in line and line.endswith(f"(HTTP 403 from POST {d.url}/api/v1/runs)"), line


@pytest.mark.slow       # five runs and an import, about 7 s
def test_retention_keeps_the_newest_runs_and_what_it_cannot_delete(start_daemon, tmp_path):
    """[runs] keep: the oldest ended runs go as new ones end; a run folder holding someone else's
    file is kept and said once; keep_for drops a run ended long ago; the newest always stays."""
    state = tmp_path / "state"
    conf = tmp_path / "keep.conf"
    conf.write_text("[runs]\nkeep = 2\n")
    d = start_tree(start_daemon, fixture_path("rpi4"), "--config", str(conf), state_dir=str(state))
    idle = {"phases": [{"kind": "idle", "duration": "1s"}]}
    dirs = lambda: sorted(int(p.name) for p in (state / "runs").iterdir())
    for n in range(1, 4):
        status, run = post_run(d, idle)
        assert status == 201 and run["id"] == n, run
        wait_state(d, n, timeout=10)
    assert dirs() == [2, 3] and [r["id"] for r in d.get("/api/v1/runs")[1]["runs"]] in ([3, 2], [2, 3])
    assert "Run 1 deleted: past [runs] keep/keep_for" in d.logs()
    (state / "runs" / "2" / "notes.txt").write_text("mine")
    for n in (4, 5):
        assert post_run(d, idle)[0] == 201
        wait_state(d, n, timeout=10)
    # run 2 cannot go (a file heatcurved did not write): said once, kept, counted as kept
    assert 2 in dirs() and 5 in dirs() and 3 not in dirs(), dirs()
    assert d.logs().count("Run 2 is past [runs] keep/keep_for but is kept") == 1
    assert (state / "runs" / "2" / "notes.txt").read_text() == "mine"

    # keep_for: a run that ended two days ago goes when the next one ends, the newest never
    _, doc = d.get("/api/v1/runs/5/export")
    doc["run"]["created_ms"] -= 2 * 86400 * 1000
    doc["run"]["ended_ms"] -= 2 * 86400 * 1000
    conf.write_text("[runs]\nkeep_for = 1d\n")
    d2 = start_tree(start_daemon, fixture_path("rpi4"), "--config", str(conf), state_dir=str(tmp_path / "s2"))
    status, old = d2.request("POST", "/api/v1/runs/import", doc)
    assert status == 201 and old["id"] == 1, old
    assert [r["id"] for r in d2.get("/api/v1/runs")[1]["runs"]] == [1]     # the newest stays
    assert post_run(d2, idle)[0] == 201
    wait_state(d2, 2, timeout=10)
    assert d2.get("/api/v1/runs/1")[0] == 404 and d2.get("/api/v1/runs/2")[0] == 200


def test_unfinished_writes_are_cleared_at_start(start_daemon, tmp_path):
    """A kill -9 during an import's fsync leaves runs/<id>/samples.csv.tmp and nothing else: the
    next start removes it and the empty folder, says so, and never reuses the id. A stale .tmp
    beside a whole run goes too, and DELETE of such a run is not refused for it."""
    state = tmp_path / "state"
    d = start_tree(start_daemon, fixture_path("rpi4"), state_dir=str(state))
    status, run = post_run(d, {"phases": [{"kind": "idle", "duration": "1s"}]})
    assert status == 201
    wait_state(d, run["id"], timeout=10)
    d.stop()
    cut = state / "runs" / "2"
    cut.mkdir()
    (cut / "samples.csv.tmp").write_bytes(b"time_ms,elapsed_s\n" + b"1,0\n" * 100000)
    (state / "runs" / "1" / "samples.csv.tmp").write_text("half")
    d2 = start_tree(start_daemon, fixture_path("rpi4"), state_dir=str(state))
    assert not cut.exists() and f"{cut} held no run, only an unfinished write; removed" in d2.logs()
    assert not (state / "runs" / "1" / "samples.csv.tmp").exists()
    status, run = post_run(d2, {"phases": [{"kind": "idle", "duration": "1s"}]})
    assert status == 201 and run["id"] == 3, run
    wait_state(d2, 3, timeout=10)
    (state / "runs" / "3" / "samples.csv.tmp").write_text("a write cut short")
    assert d2.request("DELETE", "/api/v1/runs/3")[0] == 204
    assert not (state / "runs" / "3").exists()
