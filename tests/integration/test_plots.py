"""The SVG plots through the real heatcurved: a run, runs compared, the history; valid XML, deterministic, named 400s; rendered by Chromium."""
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import threading
import time
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
import zlib

import pytest

from conftest import fixture_path, start_tree, write_in_place

SVG_NS = "{http://www.w3.org/2000/svg}"
HEATCURVECTL = os.environ.get("HEATCURVECTL", "")


def fetch(d, path, header="Content-Type"):
    """(status, the header (content type), body bytes)"""
    try:
        with urllib.request.urlopen(d.url + path, timeout=20) as resp:
            return resp.status, resp.headers.get(header, ""), resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get(header, ""), e.read()


def parse_svg(body):
    """The root element; fails unless the body is well-formed SVG 1.1."""
    root = ET.fromstring(body)
    assert root.tag == SVG_NS + "svg" and root.get("version") == "1.1"
    return root


def texts(root):
    return [t.text or "" for t in root.iter(SVG_NS + "text")]


def xmllint_ok(body, tmp_path):
    """libxml2's own check too, when xmllint is installed."""
    if not shutil.which("xmllint"):
        return True
    f = tmp_path / "check.svg"
    f.write_bytes(body)
    return subprocess.run(["xmllint", "--noout", str(f)], capture_output=True).returncode == 0


def run_protocol(label):
    return {"label": label, "phases": [
        {"kind": "idle", "duration": "500ms"},
        {"kind": "stress", "duration": "1500ms", "load": {"type": "cpu", "workers": 1}},
        {"kind": "cooldown", "duration": "800ms"}]}


def finished_run(d, label):
    status, run = d.request("POST", "/api/v1/runs", body=run_protocol(label))
    assert status == 201, run
    d.wait_for(lambda: d.get(f"/api/v1/runs/{run['id']}")[1]["state"] in ("finished", "aborted"),
               timeout=60, what=f"run {run['id']} ends")
    return run["id"]


@pytest.fixture
def two_runs(start_daemon):
    d = start_tree(start_daemon, fixture_path("rpi4"))
    return d, [finished_run(d, "case <A> & fan"), finished_run(d, "case B")]


@pytest.mark.slow       # two recorded runs, 6 s
def test_run_plot(two_runs, tmp_path):
    d, (a, _) = two_runs
    status, ctype, body = fetch(d, f"/api/v1/runs/{a}/plot.svg")
    assert status == 200 and ctype.startswith("image/svg+xml"), (status, ctype, body[:200])
    root = parse_svg(body)
    assert xmllint_ok(body, tmp_path)
    words = " ".join(texts(root))
    assert "case <A> & fan" in words                   # escaped in the file, itself once parsed
    for needle in ("idle", "stress", "cooldown", "CPU MHz", "throttled", "safety limit", "temperature °C"):
        assert needle in words, needle
    assert fetch(d, f"/api/v1/runs/{a}/plot.svg")[2] == body      # deterministic
    status, _, small = fetch(d, f"/api/v1/runs/{a}/plot.svg?width=400&height=320")
    assert status == 200 and parse_svg(small).get("width") == "400"


def test_live_run_plot_follows_the_run(start_daemon):
    """A live run's plot is drawn again as its samples come (a short run's at
    every sample; a long one's once it has grown by a pixel's worth, unit-
    tested), says how many samples it shows, and is the same bytes once the
    run has ended and nothing changes."""
    d = start_tree(start_daemon, fixture_path("rpi4"))
    status, run = d.request("POST", "/api/v1/runs", body={"label": "live", "phases": [
        {"kind": "idle", "duration": "3s"}, {"kind": "cooldown", "duration": "1s"}]})
    assert status == 201, run
    rid = run["id"]
    samples = lambda: d.get(f"/api/v1/runs/{rid}")[1]["recording"]["samples"]
    d.wait_for(lambda: samples() >= 3, what="3 samples")
    status, n1, first = fetch(d, f"/api/v1/runs/{rid}/plot.svg", "Heatcurve-Run-Samples")
    assert status == 200 and 3 <= int(n1) <= samples()
    d.wait_for(lambda: samples() >= int(n1) + 2, what="2 samples more")
    status, n2, second = fetch(d, f"/api/v1/runs/{rid}/plot.svg", "Heatcurve-Run-Samples")
    assert status == 200 and int(n2) >= int(n1) + 2 and second != first
    d.wait_for(lambda: d.get(f"/api/v1/runs/{rid}")[1]["state"] == "finished", what="the run ends")
    total = samples()
    status, n3, last = fetch(d, f"/api/v1/runs/{rid}/plot.svg", "Heatcurve-Run-Samples")
    assert status == 200 and int(n3) == total and last not in (first, second)
    assert fetch(d, f"/api/v1/runs/{rid}/plot.svg", "Heatcurve-Run-Samples")[1:] == (n3, last)


def test_live_run_is_drawn_from_its_memory(start_daemon):
    """A live run is drawn from the series it keeps, not by reading its
    samples.csv again (a day's file took 84 ms on the event loop): with the
    file moved away, its plot and its comparison curve still show every
    sample. The numbers are the file's to the last bit (unit-tested)."""
    d = start_tree(start_daemon, fixture_path("rpi4"))
    status, run = d.request("POST", "/api/v1/runs", body={"label": "kept", "phases": [
        {"kind": "idle", "duration": "10m"}]})
    assert status == 201, run
    rid = run["id"]
    samples = lambda: d.get(f"/api/v1/runs/{rid}")[1]["recording"]["samples"]
    d.wait_for(lambda: samples() >= 5, what="5 samples")
    csv = os.path.join(d.state_dir, "runs", str(rid), "samples.csv")
    os.rename(csv, csv + ".away")
    try:
        n = samples()
        status, shown, svg = fetch(d, f"/api/v1/runs/{rid}/plot.svg", "Heatcurve-Run-Samples")
        assert status == 200 and int(shown) >= n >= 5
        # the temperature curve: a point a sample, as long as the run is shorter than the plot is wide
        longest = max(p.get("d").count(" L") + 1 for p in parse_svg(svg).iter(SVG_NS + "path"))
        assert longest >= n, longest
        status, doc = d.get(f"/api/v1/compare?runs={rid}&points=1000")
        assert status == 200 and len(doc["curves"][0]["t_s"]) >= n, doc
    finally:
        os.rename(csv + ".away", csv)
    d.wait_for(lambda: samples() > n, what="a sample more")
    assert d.request("POST", f"/api/v1/runs/{rid}/stop")[0] in (200, 202)
    d.wait_for(lambda: d.get(f"/api/v1/runs/{rid}")[1]["state"] != "running", what="the run ends")
    # ended, it is read from its file again, which the daemon kept writing
    total = samples()
    status, shown, _ = fetch(d, f"/api/v1/runs/{rid}/plot.svg", "Heatcurve-Run-Samples")
    assert status == 200 and int(shown) == total > n


@pytest.mark.slow       # two recorded runs, 6 s
def test_compare_and_history_plots(two_runs, tmp_path):
    d, (a, b) = two_runs
    for q in (f"runs={a},{b}", f"runs={a},{b}&y=rise", f"runs={b}&width=700&height=500"):
        status, ctype, body = fetch(d, "/api/v1/compare.svg?" + q)
        assert status == 200 and ctype.startswith("image/svg+xml"), (q, body[:300])
        words = " ".join(texts(parse_svg(body)))
        assert xmllint_ok(body, tmp_path)
        # rise mode: the table's rises, as the curves (not the plateaus)
        diff = "Δ rise" if "y=rise" in q else "Δ plateau"
        assert "case B" in words and diff in words, words
        assert ("Δ plateau" in words) == ("y=rise" not in q), words
    status, ctype, body = fetch(d, "/api/v1/history.svg?from=-1m&width=800&height=500")
    assert status == 200 and ctype.startswith("image/svg+xml")
    root = parse_svg(body)
    assert root.get("width") == "800" and root.get("height") == "500"
    words = " ".join(texts(root))
    assert "thermal_zone0" in words and "temperature °C" in words and "CPU MHz" in words
    status, _, body = fetch(d, "/api/v1/history.svg?sensors=thermal_zone0")
    assert status == 200 and "CPU MHz" not in " ".join(texts(parse_svg(body)))


def svg_group(root, cls):
    return next((g for g in root.iter(SVG_NS + "g") if g.get("class") == cls), None)


def test_history_plot_marks_trips_runs_alerts_and_throttling(start_daemon, fixture_copy, tmp_path):
    """Trip lines, a run's start and end with its label, an alert's change, the throttled stretch;
    a frequency that does not change is a strip, not a panel."""
    root = fixture_copy("rpi4")                 # critical trip 90 °C, 600 of 1500 MHz, load 0
    cur = os.path.join(root, "sys/devices/system/cpu/cpufreq/policy0/scaling_cur_freq")
    conf = tmp_path / "alert.conf"
    conf.write_text("[alert soc]\nsensor = thermal_zone0\nwarn = 40\ncrit = 45\n")
    write_in_place(cur, "1500000\n")
    write_in_place(os.path.join(root, "sys/class/thermal/thermal_zone0/temp"), "75000\n")
    d = start_tree(start_daemon, root, "--config", str(conf))
    d.wait_for(lambda: d.get("/api/v1/status")[1]["active_alerts"], timeout=10, what="the alert")
    time.sleep(0.5)
    root_svg = parse_svg(fetch(d, "/api/v1/history.svg?from=-1m")[2])
    words = " ".join(texts(root_svg))
    assert "CPU MHz 1500" in words and "cpufreq:policy0: unchanged" in words, words
    assert "critical 90.0 °C" in words and "off scale" not in words, words     # the trip, on scale
    alerts = svg_group(root_svg, "alerts")
    assert alerts is not None and "soc crit 75.0 °C" in [t.text for t in alerts.iter(SVG_NS + "title")]
    assert svg_group(root_svg, "throttled") is None

    run = finished_run(d, "marked")
    write_in_place(cur, "1000000\n")          # below the maximum: throttled where the load allows
    time.sleep(1)
    write_in_place(cur, "1500000\n")
    time.sleep(0.5)
    root_svg = parse_svg(fetch(d, "/api/v1/history.svg?from=-1m&sensors=thermal_zone0,cpufreq:policy0")[2])
    words = " ".join(texts(root_svg))
    assert f"#{run} marked" in words and "throttled" in words, words
    assert "unchanged" not in words and "CPU MHz" in words
    runs = svg_group(root_svg, "runs")
    assert [t.text for t in runs.iter(SVG_NS + "text")] == [f"#{run} marked"]
    assert len(list(runs.iter(SVG_NS + "line"))) == 2        # its start and its end
    shaded = [r for g in root_svg.iter(SVG_NS + "g") if g.get("class") == "throttled" for r in g.iter(SVG_NS + "rect")]
    assert len(shaded) == 2                                 # the stretch, over both panels
    assert 0 < float(shaded[0].get("width")) < 400
    # with the load shown, an idle board at a low clock is not throttled
    root_svg = parse_svg(fetch(d, "/api/v1/history.svg?from=-1m")[2])
    assert svg_group(root_svg, "throttled") is None


@pytest.mark.slow       # two recorded runs, 6 s
def test_compare_legend_above_the_curves_and_rise_from_zero(two_runs):
    """The legend sits over no curve: above the plot area, no box in it; a rise's axis takes in 0."""
    d, (a, b) = two_runs
    for q in (f"runs={a},{b}", f"runs={a},{b}&y=rise"):
        root = parse_svg(fetch(d, "/api/v1/compare.svg?" + q)[2])
        top = float(next(r for r in root.iter(SVG_NS + "rect") if r.get("fill") == "none").get("y"))
        legend = [t for t in root.iter(SVG_NS + "text") if (t.text or "").startswith(("case <A> & fan: ", "case B: "))]
        assert len(legend) == 2 and all(float(t.get("y")) < top for t in legend), q
        assert not any(r.get("fill") == "#ffffff" and float(r.get("y")) >= top for r in root.iter(SVG_NS + "rect")), q
    ticks = [float(t.text) for t in root.iter(SVG_NS + "text")
             if t.get("text-anchor") == "end" and re.fullmatch(r"-?\d+(\.\d+)?", t.text or "")]
    assert ticks and min(ticks) <= 0, ticks


@pytest.mark.slow       # two recorded runs, 6 s
def test_dark_theme(two_runs, tmp_path):
    """theme=dark: the same drawing in dark neutrals, the curves in the same colours; light is the default."""
    d, (a, b) = two_runs
    for path in (f"/api/v1/runs/{a}/plot.svg", f"/api/v1/compare.svg?runs={a},{b}", "/api/v1/history.svg?from=-1m"):
        sep = "&" if "?" in path else "?"
        light = fetch(d, path)[2]
        assert fetch(d, path + sep + "theme=light")[2] == light or "history" in path, path
        status, ctype, dark = fetch(d, path + sep + "theme=dark")
        assert status == 200 and ctype.startswith("image/svg+xml"), (path, dark[:300])
        root = parse_svg(dark)
        assert xmllint_ok(dark, tmp_path)
        assert root.find(SVG_NS + "rect").get("fill") == "#17181b", path         # the background
        assert b'"#ffffff"' in light and b'"#ffffff"' not in dark and b'"#333333"' not in dark, path
        assert texts(root) == texts(parse_svg(light)) or "history" in path, path
        assert b'"#0072B2"' in dark, path                                      # the first curve's colour
    # the run plot's cache holds the light one: asked again, still light
    assert b'"#ffffff"' in fetch(d, f"/api/v1/runs/{a}/plot.svg")[2]


def test_history_plot_of_any_time_range_is_bounded(start_daemon):
    """Ranges no history has, up to the largest time the API takes: an answer, a few ticks, no hang."""
    d = start_tree(start_daemon, fixture_path("rpi4"))
    far = 9_000_000_000_000_000_000
    for q in ("from=0", f"from=0&to={far}", f"from={far - 10_000}&to={far}", f"from={far - 86_400_000}&to={far}"):
        status, _, body = fetch(d, "/api/v1/history.svg?" + q)
        assert status == 200, (q, body[:300])
        lines = parse_svg(body).iter(SVG_NS + "line")
        assert sum(1 for _ in lines) < 200, q
    assert d.get("/api/v1/status")[0] == 200


BAD_REQUESTS = [
    ("/api/v1/runs/{a}/plot.svg?width=10", "width"),
    ("/api/v1/runs/{a}/plot.svg?height=abc", "height"),
    ("/api/v1/runs/{a}/plot.svg?colour=red", "colour"),
    ("/api/v1/compare.svg", "runs"),
    ("/api/v1/compare.svg?runs={a},x", "runs"),
    ("/api/v1/compare.svg?runs=999", "runs"),
    ("/api/v1/compare.svg?runs={a},{a},{a},{a},{a},{a},{a},{a}", "runs"),
    ("/api/v1/compare.svg?runs={a}&y=kelvin", "y"),
    ("/api/v1/compare.svg?runs={a},{a},{a},{a},{a},{a},{a}&height=320", "height"),
    ("/api/v1/history.svg?sensors=nope", "sensors"),
    ("/api/v1/history.svg?from=yesterday", "from"),
    ("/api/v1/history.svg?points=5", "points"),
    ("/api/v1/history.svg?width=99999", "width"),
    ("/api/v1/runs/{a}/plot.svg?theme=black", "theme"),
    ("/api/v1/compare.svg?runs={a}&theme=", "theme"),
    ("/api/v1/history.svg?theme=Dark", "theme"),
]


@pytest.mark.slow       # two recorded runs, 6 s
def test_bad_plot_requests_name_the_parameter(two_runs):
    d, (a, _) = two_runs
    for path, param in BAD_REQUESTS:
        status, _, body = fetch(d, path.format(a=a))
        assert status == 400, (path, status, body[:300])
        assert json.loads(body)["error"]["message"].startswith(param + ":"), (path, body)


class Pending:
    """A GET sent on a thread of its own: (status, Heatcurve-Run-Samples, body) in .result once answered."""

    def __init__(self, d, path):
        self.result = None
        self.thread = threading.Thread(target=self._get, args=(d, path), daemon=True)
        self.thread.start()

    def _get(self, d, path):
        try:
            self.result = fetch(d, path, "Heatcurve-Run-Samples")
        except OSError as e:
            self.result = e

    def wait(self, timeout=30):
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "no answer"
        return self.result


def ticks(d):
    return d.get("/api/v1/status")[1]["ticks"]


def samples_behind_fifo(d, rid):
    """samples.csv of run rid swapped for a named pipe: (its path, the file's content). A read of it waits
    for a writer, and then for what the writer writes."""
    csv = os.path.join(d.state_dir, "runs", str(rid), "samples.csv")
    with open(csv, "rb") as f:
        content = f.read()
    os.rename(csv, csv + ".kept")
    os.mkfifo(csv)
    return csv, content


def wait_on_fifo(d, fifo, content, path):
    """The answer to GET path, asked while its samples are read from fifo:
    the daemon goes on ticking and answering meanwhile, the answer waits
    until content is written. (status, Heatcurve-Run-Samples, body)."""
    w = os.open(fifo, os.O_RDWR)        # a writer, so that the daemon's open does not wait
    try:
        pending = Pending(d, path)
        t0 = ticks(d)
        d.wait_for(lambda: ticks(d) >= t0 + 5, what="5 ticks while the samples are read")
        assert d.get("/api/v1/sensors")[0] == 200
        assert pending.result is None, pending.result
        os.write(w, content)
    finally:
        os.close(w)
    return pending.wait()


@pytest.mark.slow       # two recorded runs behind a pipe, 9 s
def test_ended_run_is_read_off_the_event_loop(start_daemon):
    """An ended run's plot reads its samples.csv on a thread: with the file a
    pipe nobody writes yet, ticks and other answers go on, the plot waits,
    and once the samples come it is the plot of those samples. A comparison
    waits the same way."""
    d = start_tree(start_daemon, fixture_path("rpi4"), "--interval", "200ms")
    a, b = finished_run(d, "slow card"), finished_run(d, "other")
    total = d.get(f"/api/v1/runs/{a}")[1]["recording"]["samples"]
    fifo, content = samples_behind_fifo(d, a)
    try:
        status, shown, svg = wait_on_fifo(d, fifo, content, f"/api/v1/runs/{a}/plot.svg")
        assert status == 200 and int(shown) == total, (status, shown)
        parse_svg(svg)
        status, _, cmp_svg = wait_on_fifo(d, fifo, content, f"/api/v1/compare.svg?runs={b},{a}")
        assert status == 200, cmp_svg
        assert "slow card" in " ".join(texts(parse_svg(cmp_svg)))
        status, _, body = wait_on_fifo(d, fifo, content, f"/api/v1/compare?runs={a},{b}")
        doc = json.loads(body)
        assert status == 200 and [c["id"] for c in doc["curves"]] == [a, b], doc
        assert len(doc["curves"][0]["t_s"]) == total, doc["curves"][0]
    finally:
        os.unlink(fifo)
        os.rename(fifo + ".kept", fifo)
    # the samples the pipe gave are the file's: the client draws the same bytes from them
    if HEATCURVECTL and os.access(HEATCURVECTL, os.X_OK):
        assert ctl(d, "plot", str(a)).stdout == svg


def open_files(pid):
    """The paths the process has open."""
    paths = set()
    fds = f"/proc/{pid}/fd"
    for fd in os.listdir(fds):
        try:
            paths.add(os.readlink(os.path.join(fds, fd)))
        except FileNotFoundError:       # closed meanwhile
            pass
    return paths


@pytest.mark.slow       # four recorded runs, 13 s
def test_run_deleted_while_its_samples_are_read(start_daemon):
    """A run deleted while its plot or a comparison waits for its samples:
    the answer says the run is gone (404 for its plot, 400 naming "runs" for
    a comparison), as it would have before the read."""
    d = start_tree(start_daemon, fixture_path("rpi4"), "--interval", "200ms")
    keep = finished_run(d, "kept")
    for path, status, code in (("/api/v1/runs/{a}/plot.svg", 404, "not_found"),
                               ("/api/v1/compare.svg?runs={keep},{a}", 400, "bad_parameter"),
                               ("/api/v1/compare?runs={a},{keep}", 400, "bad_parameter")):
        a = finished_run(d, "deleted")
        fifo = os.path.join(d.state_dir, "runs", str(a), "samples.csv")
        with open(fifo, "rb") as f:
            content = f.read()
        os.unlink(fifo)
        os.mkfifo(fifo)
        w = os.open(fifo, os.O_RDWR)    # a writer, so that the daemon's open does not wait
        try:
            pending = Pending(d, path.format(a=a, keep=keep))
            d.wait_for(lambda: fifo in open_files(d.proc.pid), what="the daemon reading the samples")
            # the FIFO, still open in the daemon, leaves the run's folder: a DELETE
            # refuses what is not a file of its own, and the read goes on unhindered
            os.rename(fifo, os.path.join(d.state_dir, f"samples-{a}.fifo"))
            with open(fifo, "wb") as f:
                f.write(content)
            assert d.request("DELETE", f"/api/v1/runs/{a}")[0] == 204
            assert pending.result is None, pending.result
            os.write(w, content)
        finally:
            os.close(w)
        got, _, body = pending.wait()
        error = json.loads(body)["error"]
        assert (got, error["code"]) == (status, code) and f"no run {a}" in error["message"], (path, got, body)
    assert d.get(f"/api/v1/runs/{keep}")[0] == 200
    assert "ERROR" not in d.logs()


def raw_get(d, path):
    """A connection with a GET sent on it, the answer not read."""
    sock = socket.create_connection(("127.0.0.1", d.port), timeout=10)
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    return sock


def raw_status(sock):
    """The status of the answer on sock, 0 when it closed without one."""
    data = b""
    try:
        while chunk := sock.recv(4096):
            data += chunk
    except OSError:
        pass
    sock.close()
    return int(data.split()[1]) if data.startswith(b"HTTP/1.1 ") else 0


def test_read_waiting_for_a_client_gone_or_a_stopping_daemon(start_daemon):
    """A client that hangs up while its plot's samples are read, more reads
    than the daemon takes at once (503), and SIGTERM with reads still
    stuck: nothing is lost or leaked, and the daemon stops at once."""
    d = start_tree(start_daemon, fixture_path("rpi4"))
    a = finished_run(d, "stuck")
    csv, _ = samples_behind_fifo(d, a)
    w = os.open(csv, os.O_RDWR)         # a writer that never writes: the reads never end
    try:
        socks = [raw_get(d, f"/api/v1/runs/{a}/plot.svg?width={600 + i}") for i in range(4)]
        # answered after the loop took the four requests in
        assert d.get("/api/v1/status")[0] == 200
        status, _, body = fetch(d, f"/api/v1/runs/{a}/plot.svg?width=700")
        assert status == 503 and json.loads(body)["error"]["code"] == "busy", body
        socks.pop().close()
        assert d.get("/api/v1/status")[0] == 200
        started = time.monotonic()
        assert d.stop() == 0
        assert time.monotonic() - started < 5
        assert [raw_status(s) for s in socks] in ([503] * 3, [0] * 3), "answers at stop"
        assert "ERROR" not in d.logs()
    finally:
        os.close(w)
        os.unlink(csv)
        os.rename(csv + ".kept", csv)


def test_unreadable_samples_are_an_error_not_an_empty_plot(start_daemon):
    """A run's samples.csv that cannot be read (a directory in its place here; a failing card
    on a board) gives its plot and a comparison with it a 500 that says which run, not a plot
    without samples; nothing of it is kept, and once the file is back the plot is drawn."""
    d = start_tree(start_daemon, fixture_path("rpi4"))
    rid = finished_run(d, "bad card")
    csv = os.path.join(d.state_dir, "runs", str(rid), "samples.csv")
    os.rename(csv, csv + ".kept")
    os.mkdir(csv)
    for path in (f"/api/v1/runs/{rid}/plot.svg", f"/api/v1/compare.svg?runs={rid},{rid}"):
        status, _, body = fetch(d, path)
        assert status == 500, (path, status, body)
        assert json.loads(body)["error"]["message"].startswith(f"cannot read the samples of run {rid}: "), body
    os.rmdir(csv)
    os.rename(csv + ".kept", csv)
    status, samples, body = fetch(d, f"/api/v1/runs/{rid}/plot.svg", "Heatcurve-Run-Samples")
    assert status == 200 and int(samples) == d.get(f"/api/v1/runs/{rid}")[1]["recording"]["samples"], samples
    parse_svg(body)


def test_plot_of_unknown_run_is_404(start_daemon):
    d = start_tree(start_daemon, fixture_path("rpi4"))
    assert fetch(d, "/api/v1/runs/7/plot.svg")[0] == 404
    assert fetch(d, "/api/v1/runs/7/plot.svgx")[0] == 404
    assert d.request("POST", "/api/v1/history.svg")[0] == 405


def png_non_white(path):
    """Share of pixels that are not white in an 8-bit RGB(A) PNG, without PIL."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height, ctype = 8, b"", 0, 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, ctype = struct.unpack(">IIBB", chunk[:10])
            assert depth == 8 and ctype in (2, 6), (depth, ctype)
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    bpp = 4 if ctype == 6 else 3
    raw, stride = zlib.decompress(idat), width * bpp
    prev, non_white = bytearray(stride), 0
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        non_white += sum(1 for x in range(0, stride, bpp) if min(line[x:x + 3]) < 235)
        prev = line
    return non_white / (width * height)


def chromium_screenshot(svg_path, png_path):
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        pytest.skip("chromium is not installed (Debian package chromium; make deps installs it)")
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
           f"--screenshot={png_path}", "--window-size=1000,700", f"file://{svg_path}"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                           env={**os.environ, "HOME": os.path.dirname(png_path)})
    except subprocess.TimeoutExpired:
        pytest.skip("chromium did not finish a screenshot within 120 s")
    if not os.path.exists(png_path):
        pytest.skip(f"chromium cannot start here (exit {p.returncode}): {p.stderr[-500:]}")


@pytest.mark.slow       # a browser
def test_plots_render_in_chromium(two_runs, tmp_path):
    d, (a, b) = two_runs
    for name, path, legend in (("run", f"/api/v1/runs/{a}/plot.svg", "heat-up fit"),
                               ("compare", f"/api/v1/compare.svg?runs={a},{b}", "case B")):
        status, _, body = fetch(d, path)
        assert status == 200
        assert legend in " ".join(texts(parse_svg(body)))
        svg, png = tmp_path / f"{name}.svg", tmp_path / f"{name}.png"
        svg.write_bytes(body)
        chromium_screenshot(str(svg), str(png))
        share = png_non_white(str(png))
        assert 0.01 < share < 0.9, f"{name}: {share:.3f} of the pixels are not white"


def ctl(d, *args):
    if not HEATCURVECTL or not os.access(HEATCURVECTL, os.X_OK):
        pytest.skip("HEATCURVECTL is not set to the built client (run through meson test)")
    env = {k: v for k, v in os.environ.items() if k != "HEATCURVE_URL"}
    return subprocess.run([HEATCURVECTL, "--url", d.url, *args], capture_output=True, timeout=60, env=env)


@pytest.mark.slow       # two recorded runs, 6 s
def test_heatcurvectl_plot_draws_what_the_daemon_draws(two_runs, tmp_path):
    """The same core code on both sides: the client's SVG is the daemon's, byte for byte."""
    d, (a, b) = two_runs
    out = tmp_path / "a.svg"
    p = ctl(d, "plot", str(a), "-o", str(out))
    assert p.returncode == 0, p.stderr
    assert out.read_bytes() == fetch(d, f"/api/v1/runs/{a}/plot.svg")[2]
    p = ctl(d, "plot", str(a), str(b))
    assert p.returncode == 0, p.stderr
    assert p.stdout == fetch(d, f"/api/v1/compare.svg?runs={a},{b}")[2]
    p = ctl(d, "plot", "--rise", str(a), str(b), f"--output={out}")
    assert p.returncode == 0, p.stderr
    assert out.read_bytes() == fetch(d, f"/api/v1/compare.svg?runs={a},{b}&y=rise")[2]
    # a run given by URL is fetched from that daemon and says where it came from
    p = ctl(d, "plot", str(a), f"{d.url}/{b}")
    assert p.returncode == 0, p.stderr
    words = " ".join(texts(parse_svg(p.stdout)))
    assert f"case B ({d.url.split('://')[1]})" in words
    assert ctl(d, "plot").returncode == 2
    assert ctl(d, "plot", "x").returncode == 2
    p = ctl(d, "plot", "999")
    assert p.returncode == 1 and b"404" in p.stderr, p.stderr


@pytest.mark.slow       # two recorded runs, 6 s
def test_samples_csv_counts_seconds_since_the_load_started(two_runs):
    """t_since_load_s: empty before the load, then elapsed_s minus the load start; the file stays a plain CSV."""
    import csv
    import io
    d, (a, _) = two_runs
    with urllib.request.urlopen(f"{d.url}/api/v1/runs/{a}/samples?format=csv", timeout=20) as resp:
        rows = list(csv.DictReader(io.StringIO(resp.read().decode())))
    assert rows and "t_since_load_s" in rows[0]
    assert all(len(r) == len(rows[0]) and None not in r for r in rows)     # every row as wide as the header
    doc = d.get(f"/api/v1/runs/{a}")[1]
    load_start = (doc["phases"][1]["started_ms"] - doc["created_ms"]) / 1000
    for r in rows:
        if r["phase"] == "idle":
            assert r["t_since_load_s"] == "", r
        else:
            assert float(r["t_since_load_s"]) == pytest.approx(float(r["elapsed_s"]) - load_start, abs=0.002), r
    first = next(r for r in rows if r["phase"] == "stress")
    assert 0 <= float(first["t_since_load_s"]) < 1.0
