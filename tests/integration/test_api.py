"""The read-only HTTP API of the real heatcurved on fixture trees: documents, history, errors, limits."""
import http.client
import json
import os
import signal
import socket
import threading
import time

import pytest

from conftest import fixture_path


def start_on(start_daemon, board, *extra):
    return start_on_root(start_daemon, fixture_path(board), *extra)


def start_on_root(start_daemon, root, *extra):
    return start_daemon("--sysfs-root", root, "--procfs-root", root, "--interval", "100ms", *extra)


def test_status_document(start_daemon):
    d = start_on(start_daemon, "rpi4")
    status, st = d.get("/api/v1/status")
    assert status == 200
    assert st["board"]["model"].startswith("Raspberry Pi 4")
    assert st["interval"] == "100ms" and st["interval_ms"] == 100
    assert st["sensors"]["temperatures"] >= 1 and st["sensors"]["failing"] == 0
    assert st["sensors"]["hottest"]["celsius"] > 0
    assert st["storage"]["ok"] is True and st["storage"]["state_dir"] == d.state_dir
    assert st["simulator"] is None and st["current_run"] is None


def test_sensors_matches_once(start_daemon, heatcurved_bin):
    import subprocess
    d = start_on(start_daemon, "rpi4")
    status, doc = d.get("/api/v1/sensors")
    assert status == 200
    root = fixture_path("rpi4")
    once = json.loads(subprocess.run([heatcurved_bin, "--once", "--sysfs-root", root, "--procfs-root", root],
                                     check=True, capture_output=True, text=True).stdout)
    # read_us: how long this process's last read took, not a property of the board
    strip = lambda doc: [{k: v for k, v in t.items() if k not in ("last_good_ms", "read_us")}
                         for t in doc["temperatures"]]
    assert strip(doc) == strip(once)
    assert doc["cpufreq"] == once["cpufreq"] and doc["board"] == once["board"]


def test_sensors_channels_are_every_reading_in_one_list(start_daemon, fixture_copy):
    """channels: the library's one list, its ids, kinds, units and values those of the other sections."""
    d = start_on(start_daemon, "rpi4")
    d.wait_for(lambda: d.get("/api/v1/sensors")[1]["load"]["ok"] and d.get("/api/v1/status")[1]["ticks"] > 2,
               what="two reads of the load")
    doc = d.get("/api/v1/sensors")[1]
    ch = doc["channels"]
    assert all(sorted(c) == ["id", "kind", "ok", "unit", "value"] for c in ch), ch
    temps, policies = doc["temperatures"], doc["cpufreq"]
    cpus = [f"load:cpu{i}" for i in range(len(doc["load"]["per_cpu"]))]
    assert [c["id"] for c in ch] == ([t["id"] for t in temps] + ["cpufreq:" + p["id"] for p in policies] +
                                     cpus + ["load:cpu", "undervoltage"])
    kinds = {c["id"]: (c["kind"], c["unit"]) for c in ch}
    assert kinds["thermal_zone0"] == ("temperature", "celsius") and kinds["load:cpu0"] == ("cpu_load", "fraction")
    assert kinds["cpufreq:policy0"] == ("frequency", "hz") and kinds["load:cpu"] == ("load", "fraction")
    assert kinds["undervoltage"] == ("power", "flag")
    values = {c["id"]: c["value"] for c in ch}
    assert all(values[t["id"]] == t["celsius"] for t in temps)
    assert values["cpufreq:policy0"] == policies[0]["cur_hz"] and values["undervoltage"] == 0
    assert all(c["ok"] for c in ch) and values["load:cpu"] is not None

    root = fixture_copy("rpi4")
    with open(os.path.join(root, "sys/class/thermal/thermal_zone0/temp"), "w") as f:
        f.write("garbage\n")
    d2 = start_on_root(start_daemon, root)
    d2.wait_for(lambda: d2.get("/api/v1/status")[1]["ticks"] > 0, what="a tick")
    zone = next(c for c in d2.get("/api/v1/sensors")[1]["channels"] if c["id"] == "thermal_zone0")
    assert zone == {"id": "thermal_zone0", "kind": "temperature", "unit": "celsius", "value": None, "ok": False}


def test_history_series_and_downsampling(start_daemon):
    d = start_on(start_daemon, "rpi4")
    d.wait_for(lambda: d.get("/api/v1/status")[1]["history"]["samples"] >= 12, what="12 samples")
    status, h = d.get("/api/v1/history?from=-1m&points=5")
    assert status == 200
    ids = [s["id"] for s in h["series"]]
    assert "thermal_zone0" in ids and "load:cpu" in ids
    assert any(i.startswith("cpufreq:") for i in ids)
    assert not any(i.startswith("load:cpu") and i != "load:cpu" for i in ids)
    assert 1 <= len(h["t_ms"]) <= 5
    assert h["t_ms"] == sorted(h["t_ms"])
    tz = next(s for s in h["series"] if s["id"] == "thermal_zone0")
    assert tz["unit"] == "celsius" and len(tz["mean"]) == len(h["t_ms"])
    for lo, mean, hi in zip(tz["min"], tz["mean"], tz["max"]):
        assert lo <= mean <= hi
    _, sensors = d.get("/api/v1/sensors")
    assert tz["mean"][-1] == pytest.approx(sensors["temperatures"][0]["celsius"], abs=0.01)

    status, one = d.get("/api/v1/history?sensors=thermal_zone0,load:cpu0&points=1")
    assert status == 200
    assert [s["id"] for s in one["series"]] == ["thermal_zone0", "load:cpu0"]
    assert len(one["t_ms"]) == 1


def test_history_keeps_loads_to_a_jiffy(start_daemon, fixture_copy, tmp_path):
    """A load over a 100 ms tick is busy over about ten jiffies a CPU: the
    ring keeps it to one jiffy of its row's total (a tenth for one CPU, a
    fortieth for the four of rpi4's total), whatever the total's jitter;
    and to the new jiffy once a reload sets another interval."""
    root = fixture_copy("rpi4")
    stat = os.path.join(root, "proc", "stat")
    with open(stat) as f:
        rest = [line for line in f if not line.startswith("cpu")]
    conf = tmp_path / "heatcurve.conf"
    conf.write_text("[daemon]\ninterval = 100ms\n")
    stop = threading.Event()

    def tick_counters():            # a third busy, on every CPU; same width, written in place
        fd = os.open(stat, os.O_WRONLY)
        try:
            for n in range(3000):
                if stop.wait(0.03):
                    break
                busy, idle = 1000000 + n, 3000000 + 2 * n
                rows = [f"cpu  {4 * busy} 0 0 {4 * idle} 0 0 0 0 0 0\n"]
                rows += [f"cpu{c} {busy} 0 0 {idle} 0 0 0 0 0 0\n" for c in range(4)]
                os.pwrite(fd, "".join(rows + rest).encode(), 0)
        finally:
            os.close(fd)

    def check(since, steps):
        status, h = d.get(f"/api/v1/history?from={since}&points=10000&sensors=load:cpu,load:cpu0,load:cpu3")
        assert status == 200
        for series, step in zip(h["series"], steps):
            values = [v for v in series["mean"] if v is not None]
            assert values, series["id"]
            for v in values:
                assert v / step == pytest.approx(round(v / step), abs=1e-6), (series["id"], step, v)
            # a third, to the step: not 0.333 as at 0.1 %
            assert round(round(1 / 3 / step) * step, 6) in [round(v, 6) for v in values], (series["id"], values)

    samples = lambda: d.get("/api/v1/status")[1]["history"]["samples"]
    writer = threading.Thread(target=tick_counters)
    writer.start()
    try:
        d = start_daemon("--sysfs-root", root, "--procfs-root", root, "--config", str(conf))
        d.wait_for(lambda: samples() >= 20, what="20 samples")
        check("-1m", (0.025, 0.1, 0.1))
        conf.write_text("[daemon]\ninterval = 200ms\n")
        d.signal(signal.SIGHUP)
        n = samples()
        d.wait_for(lambda: samples() >= n + 15, what="15 samples after the reload")
        check("-1s", (0.0125, 0.05, 0.05))      # 20 jiffies a CPU, 80 for the four
    finally:
        stop.set()
        writer.join()


def tick_times(d, n, timeout=15):
    """The times of the next n ticks, from the sensors document polled every 20 ms."""
    seen = [d.get("/api/v1/sensors")[1]["time_ms"]]
    deadline = time.monotonic() + timeout
    while len(seen) <= n and time.monotonic() < deadline:
        time.sleep(0.02)
        t = d.get("/api/v1/sensors")[1]["time_ms"]
        if t != seen[-1]:
            seen.append(t)
    assert len(seen) > n, f"only {len(seen) - 1} ticks in {timeout} s: {seen}"
    return seen[1:]


def test_ticks_fall_on_the_wall_clock_grid(start_daemon, tmp_path):
    """Samples are taken on whole multiples of the interval on the wall clock (at 1 s, on the
    second), whenever the daemon started, and again after a reload that sets another interval:
    the reload comes at a third of a 300 ms slot, so ticks that kept its phase would be 100 ms
    or more off the grid. The first tick on a grid comes at least half an interval after the
    one before it."""
    conf = tmp_path / "heatcurve.conf"
    conf.write_text("[daemon]\ninterval = 1s\n")
    root = fixture_path("rpi4")
    d = start_daemon("--sysfs-root", root, "--procfs-root", root, "--config", str(conf))

    def on_grid(times, interval):           # a loaded machine may wake one tick late
        off = [t % interval for t in times]
        assert sum(o < 75 for o in off) >= len(off) - 1, (interval, times, off)
        assert all(b - a >= interval // 2 for a, b in zip(times, times[1:])), times

    on_grid(tick_times(d, 3), 1000)
    conf.write_text("[daemon]\ninterval = 300ms\n")
    time.sleep((0.1 - time.time() % 0.3) % 0.3)
    d.signal(signal.SIGHUP)
    d.wait_for(lambda: d.get("/api/v1/status")[1]["interval_ms"] == 300, what="the reload")
    on_grid(tick_times(d, 6), 300)


@pytest.mark.parametrize("query,param", [
    ("from=abc", "from"),
    ("from=12x", "from"),
    ("to=-5q", "to"),
    ("from=2000&to=1000", "to"),
    ("points=0", "points"),
    ("points=10001", "points"),
    ("points=1e3", "points"),
    ("points=", "points"),
    ("sensors=nope", "sensors"),
    ("sensors=thermal_zone0,,load:cpu", "sensors"),
    ("pionts=5", "pionts"),
])
def test_history_bad_parameters(start_daemon, query, param):
    d = start_on(start_daemon, "rpi4")
    status, body = d.get("/api/v1/history?" + query)
    assert status == 400
    assert body["error"]["code"] == "bad_parameter"
    assert body["error"]["message"].startswith(param + ":"), body


def test_not_found_and_method_not_allowed(start_daemon):
    d = start_on(start_daemon, "rpi4")
    status, body = d.get("/api/v1/nothing")
    assert status == 404 and body["error"]["code"] == "not_found"
    status, body = d.request("POST", "/api/v1/sensors", body=b"{}")
    assert status == 405 and body["error"]["code"] == "method_not_allowed"
    status, body = d.request("DELETE", "/api/v1/status")
    assert status == 405


def raw_request(port, data, timeout=5):
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        chunks = []
        try:
            while True:
                c = s.recv(65536)
                if not c:
                    break
                chunks.append(c)
        except (ConnectionResetError, socket.timeout):
            pass
    return b"".join(chunks)


@pytest.mark.slow       # waits out a 5 s socket timeout
def test_oversized_requests_are_refused_and_daemon_survives(start_daemon):
    d = start_on(start_daemon, "rpi4")
    # a header block larger than the per-connection limit
    resp = raw_request(d.port, b"GET /api/v1/status HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 40000 + b"\r\n\r\n")
    assert resp == b"" or int(resp.split()[1]) in (400, 413, 414, 431)
    # a URL longer than the limit
    resp = raw_request(d.port, b"GET /api/v1/history?sensors=" + b"x" * 40000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    assert resp == b"" or int(resp.split()[1]) in (400, 413, 414, 431)
    # a body over the cap on a path that takes none
    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=5)
    conn.request("POST", "/api/v1/sensors", body=b"x" * (200 * 1024))
    assert conn.getresponse().status == 413
    conn.close()
    # garbage that is not HTTP at all
    raw_request(d.port, b"\x00\xff garbage \r\n\r\n")
    status, _ = d.get("/api/v1/status")
    assert status == 200


def test_many_connections_do_not_take_it_down(start_daemon, burner):
    d = start_on(start_daemon, "rpi4")
    burner()        # a busy machine makes the closes straddle MHD runs, as on a small board
    for _ in range(5):
        socks = []
        for _ in range(200):        # more than the connection limit
            try:
                socks.append(socket.create_connection(("127.0.0.1", d.port), timeout=2))
            except OSError:
                break
        for s in socks:
            s.close()
        d.wait_for(lambda: d.get("/api/v1/status", timeout=2)[0] == 200, timeout=5,
                   what="status after a connection flood")


def test_history_survives_restart(start_daemon, tmp_path):
    state = str(tmp_path / "keep")
    root = fixture_path("rpi4")
    d = start_daemon("--sysfs-root", root, "--procfs-root", root, "--interval", "100ms", state_dir=state)
    d.wait_for(lambda: d.get("/api/v1/status")[1]["history"]["samples"] >= 10, what="10 samples")
    assert d.stop() == 0
    assert os.path.getsize(os.path.join(state, "history.bin")) > 0
    d2 = start_daemon("--sysfs-root", root, "--procfs-root", root, "--interval", "100ms", state_dir=state)
    _, st = d2.get("/api/v1/status")
    assert st["history"]["samples"] >= 10
    assert st["history"]["oldest_ms"] < st["started_ms"]


def test_sigterm_stops_cleanly(start_daemon):
    d = start_on(start_daemon, "rpi4")
    d.signal(signal.SIGTERM)
    assert d.proc.wait(10) == 0


def test_history_answer_size_is_bounded(start_daemon):
    """Duplicate ids are refused, and points x series is capped, so no GET can ask for a huge answer."""
    d = start_on(start_daemon, "rk3588-rock-5b")
    status, body = d.get("/api/v1/history?sensors=thermal_zone0,load:cpu,thermal_zone0")
    assert status == 400 and body["error"]["message"] == 'sensors: "thermal_zone0" is listed twice'
    ids = [t["id"] for t in d.get("/api/v1/sensors")[1]["temperatures"]] + ["load:cpu"]
    ids += [f"load:cpu{i}" for i in range(8)]
    assert len(ids) > 20
    status, body = d.get("/api/v1/history?points=10000&sensors=" + ",".join(ids))
    assert status == 400 and body["error"]["message"].startswith(
        f"points: 10000 points of {len(ids)} series are more than 200000 values"), body
    status, ok = d.get("/api/v1/history?points=10000&sensors=" + ",".join(ids[:20]))
    assert status == 200 and len(ok["series"]) == 20
