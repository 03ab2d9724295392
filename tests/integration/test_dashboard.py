"""The dashboard at / through the real heatcurved, in a real headless Chromium driven by Debian's
chromium-driver and python3-selenium: sensors, the live chart, runs, a run page, compare, the
start-a-run form with its token prompt, the stop button, server-sent events."""
import json
import os
import copy
import html
import math
import re
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request

import pytest

from conftest import HEATCURVED, Daemon, import_busy_copy, start_tree, with_token, write_in_place

pytestmark = pytest.mark.slow      # every test drives a browser

PAGE_FILES = ("/", "/dashboard.css", "/dashboard.js")
PAGE_BUDGET = 56 * 1024         # bytes of the three files together: the board serves them
                                # (40 KiB until the phone layout, forecasts and plot marks; 13.6 KB gzipped then)
ZONE = "sys/class/thermal/thermal_zone0/temp"
TOKEN = "t0ken-for-tests"       # what conftest.with_token configures


def events_endpoint_missing():
    """Whether this build answers GET /api/v1/events with 404 (a daemon is started to ask)."""
    if not HEATCURVED or not os.access(HEATCURVED, os.X_OK):
        return False            # every test here skips anyway, through heatcurved_bin
    base = tempfile.mkdtemp(prefix="heatcurve-events-probe-")
    try:
        d = Daemon(["--simulate"], os.path.join(base, "state"))
        try:
            with urllib.request.urlopen(d.url + "/api/v1/events", timeout=5):
                return False    # a stream: the headers are enough
        except urllib.error.HTTPError as e:
            return e.code == 404
        except OSError:
            return False        # headers too slow to come: there is something
        finally:
            d.stop()
    finally:
        shutil.rmtree(base, ignore_errors=True)


EVENTS_MISSING = events_endpoint_missing()


def fetch(d, path, method="GET"):
    """(status, headers, body bytes)"""
    req = urllib.request.Request(d.url + path, method=method)
    try:
        with urllib.request.urlopen(req, timeout=20) as resp:
            return resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def short_run(label, stress="1500ms"):
    return {"label": label, "phases": [
        {"kind": "idle", "duration": "500ms"},
        {"kind": "stress", "duration": stress, "load": {"type": "cpu", "workers": 1}},
        {"kind": "cooldown", "duration": "800ms"}]}


def run_state(d, run_id):
    return d.get(f"/api/v1/runs/{run_id}")[1]["state"]


def finished_run(d, label):
    status, run = d.request("POST", "/api/v1/runs", body=short_run(label))
    assert status == 201, run
    d.wait_for(lambda: run_state(d, run["id"]) != "running", timeout=60, what=f"run {run['id']} ends")
    assert run_state(d, run["id"]) == "finished"
    return run["id"]


class Page:
    """One Chromium tab, with every console message and request it made since open()."""

    def __init__(self, driver, tmp_path):
        self.d = driver
        self.tmp_path = tmp_path
        self.base = ""
        self.console, self.requests = [], {}

    def drain(self):
        self.console += self.d.get_log("browser")
        for entry in self.d.get_log("performance"):
            msg = json.loads(entry["message"])["message"]
            p, method = msg["params"], msg["method"]
            if method == "Network.requestWillBeSent":
                req = p["request"]
                self.requests[p["requestId"]] = {"url": req["url"], "method": req["method"],
                                                 "status": None, "failed": None}
            elif method == "Network.responseReceived" and p["requestId"] in self.requests:
                self.requests[p["requestId"]]["status"] = p["response"]["status"]
            elif method == "Network.loadingFailed" and p["requestId"] in self.requests:
                # a request the page itself dropped (an image replaced while
                # loading, a stream closed by leaving) did not fail
                if not p.get("canceled"):
                    self.requests[p["requestId"]]["failed"] = p["errorText"]

    def open(self, base, fragment=""):
        self.drain()            # what the browser did before is not the page's
        self.console, self.requests, self.base = [], {}, base
        self.d.get(base + "/" + fragment)

    def problems(self, allowed=()):
        """Console errors and failed requests; allowed: (method, path, status or error text) expected."""
        self.drain()
        bad = []
        expected = lambda r: any(r["method"] == m and r["url"].split("?")[0] == self.base + p and
                                 (r["status"] == s or r["failed"] == s) for m, p, s in allowed)
        for r in self.requests.values():
            if r["url"].startswith(("http:", "https:", "ws:", "wss:")) and not r["url"].startswith(self.base + "/"):
                bad.append(f"request outside the daemon: {r['url']}")       # the page must work offline
            elif (r["failed"] or (r["status"] or 0) >= 400) and not expected(r):
                bad.append(f"{r['method']} {r['url']}: {r['failed'] or r['status']}")
        for e in self.console:
            if e["level"] != "SEVERE":
                continue
            # a failed request shows up in the console too: it was judged above
            if e.get("source") == "network" and any(expected(r) and r["url"] in e["message"]
                                                    for r in self.requests.values()):
                continue
            bad.append(f"console: {e['message']}")
        return bad

    def seen(self, method, path_prefix):
        self.drain()
        return [r for r in self.requests.values()
                if r["method"] == method and r["url"].startswith(self.base + path_prefix)]

    def js(self, script, *args):
        return self.d.execute_script(script, *args)

    def text(self, sel):
        return self.js("const e = document.querySelector(arguments[0]); return e ? e.textContent : null;", sel)

    def visible(self, sel):
        return self.js("const e = document.querySelector(arguments[0]); return !!e && e.offsetParent !== null;", sel)

    def el(self, sel):
        return self.d.find_element("css selector", sel)

    def attr(self, sel, name):
        """An attribute read in the page in one step: a row redrawn every sample leaves no stale element."""
        return self.js("const e = document.querySelector(arguments[0]); return e ? e.getAttribute(arguments[1]) : null;",
                       sel, name)

    def wait(self, predicate, timeout=15, what="condition"):
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            last = predicate()
            if last:
                return last
            time.sleep(0.1)
        raise AssertionError(f"timed out after {timeout}s waiting for {what}; last={last!r}; "
                             f"problems={self.problems()}")

    def plot(self, sel, pattern=""):
        """The API URL of the plot an <img> shows, once one whose URL matches is loaded; its natural size."""
        def shown():
            p = self.js("const i = document.querySelector(arguments[0]);"
                        "return i && !i.hidden && i.complete && i.naturalWidth > 0 && i.dataset.url ?"
                        " [i.dataset.url, i.naturalWidth, i.naturalHeight] : null;", sel)
            return p if p and re.search(pattern, p[0]) else None
        return self.wait(shown, what=f"plot {sel} shown ({pattern or 'any'})")

    def select(self, sel, value):
        from selenium.webdriver.support.ui import Select
        select = Select(self.el(sel))
        for i, option in enumerate(select.options):        # an option's value is its text when it has none
            if option.get_property("value") == value:
                return select.select_by_index(i)
        raise AssertionError(f"{sel} has no option {value}")

    def type(self, sel, text):
        e = self.el(sel)
        e.clear()
        e.send_keys(text)

    def shot(self, name):
        path = self.tmp_path / name
        self.d.save_screenshot(str(path))
        art = os.environ.get("HEATCURVE_ARTIFACTS")
        if art:
            os.makedirs(art, exist_ok=True)
            shutil.copy(path, os.path.join(art, name))
        return path


@pytest.fixture
def page(tmp_path, heatcurved_bin):
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("python3-selenium is not installed (make deps-test installs it)")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_exe = shutil.which("chromedriver") or "/usr/lib/chromium/chromedriver"
    if not chromium:
        pytest.skip("chromium is not installed (Debian package chromium)")
    if not os.access(driver_exe, os.X_OK):
        pytest.skip("chromedriver is not installed (Debian package chromium-driver)")
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    home = tmp_path / "chromium-home"
    home.mkdir()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,1000", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--disable-default-apps",
                "--disable-extensions", "--hide-scrollbars", f"--user-data-dir={home / 'profile'}",
                # anything but loopback goes to a closed port: the page must not need the network
                "--proxy-server=http://127.0.0.1:9"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    service = Service(executable_path=driver_exe, env={**os.environ, "HOME": str(home)})
    driver = webdriver.Chrome(service=service, options=opts)
    try:
        driver.set_page_load_timeout(30)
        driver.set_script_timeout(30)
        yield Page(driver, tmp_path)
    finally:
        driver.quit()


def test_page_files_are_served(start_daemon):
    """No browser needed: types, headers, HEAD, 405, 404, and the size budget."""
    d = start_daemon("--simulate")
    total = 0
    for path, ctype in zip(PAGE_FILES, ("text/html; charset=utf-8", "text/css; charset=utf-8",
                                        "text/javascript; charset=utf-8")):
        status, headers, body = fetch(d, path)
        assert status == 200 and headers["Content-Type"] == ctype, (path, status, headers)
        assert "default-src 'none'" in headers["Content-Security-Policy"]
        assert headers["X-Content-Type-Options"] == "nosniff"
        total += len(body)
        status, headers, head = fetch(d, path, "HEAD")
        assert status == 200 and head == b"" and int(headers["Content-Length"]) == len(body), path
        status, _, err = fetch(d, path, "POST")
        assert status == 405 and "only GET, HEAD" in json.loads(err)["error"]["message"], (path, err)
    assert total < PAGE_BUDGET, f"the page is {total} bytes"
    _, _, html = fetch(d, "/")
    refs = re.findall(rb'<(?:script|link|img)[^>]* (?:src|href)="([^"]*)"', html)
    assert sorted(refs) == [b"/dashboard.css", b"/dashboard.js", b"data:,"], refs     # nothing from elsewhere
    assert fetch(d, "/dashboard.jsx")[0] == 404 and fetch(d, "/index.html")[0] == 404


def fetch_if_none_match(d, path, etag):
    req = urllib.request.Request(d.url + path, headers={"If-None-Match": etag})
    try:
        with urllib.request.urlopen(req, timeout=20) as resp:
            return resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as e:         # urllib takes 304 for an error
        return e.code, e.headers, e.read()


def test_page_files_are_kept_and_revalidated(start_daemon):
    """The page's files carry an ETag of their bytes: a browser keeps them and gets 304s; live data never."""
    d = start_daemon("--simulate")
    tags = set()
    for path in PAGE_FILES:
        status, headers, body = fetch(d, path)
        etag = headers["ETag"]
        assert status == 200 and re.fullmatch(r'"[0-9a-f]{20}"', etag) and headers["Cache-Control"] == "no-cache"
        tags.add(etag)
        status, headers, body = fetch_if_none_match(d, path, etag)
        assert status == 304 and body == b"" and headers["ETag"] == etag, (path, status)
        assert "default-src 'none'" in headers["Content-Security-Policy"]
        # a list, a weak form, "*": as browsers and proxies send them
        for header in (f'"0", {etag}', f"W/{etag}", "*"):
            assert fetch_if_none_match(d, path, header)[0] == 304, header
        status, _, again = fetch_if_none_match(d, path, '"' + "0" * 20 + '"')
        assert status == 200 and len(again) > 0    # another build's files: sent whole
    assert len(tags) == len(PAGE_FILES)
    status, headers, _ = fetch(d, "/api/v1/sensors")
    assert status == 200 and headers["Cache-Control"] == "no-store" and "ETag" not in headers


def test_live_view_shows_the_sensors(page, start_daemon, tmp_path):
    conf = tmp_path / "slow.conf"
    conf.write_text("[simulate]\ntau = 1h\n")         # a board that hardly moves while the test reads it
    d = start_daemon("--config", str(conf), "--simulate", "--interval", "200ms")
    page.open(d.url)
    sensors = d.get("/api/v1/sensors")[1]
    for t in sensors["temperatures"]:
        row = f'#sensors tr[data-id="{t["id"]}"]'
        cell = page.wait(lambda: page.text(row + " td.temp"), what=f"row of {t['id']}")
        assert abs(float(cell) - t["celsius"]) <= 1, (cell, t)
        trips = page.text(row + " td:nth-of-type(2)")
        assert all(f"{p['type']} {p['celsius']:.0f}" in trips for p in t["trips"]), trips
        assert page.text(row + " td:nth-of-type(3)") == "ok"
    assert re.fullmatch(r"\d+\.\d °C thermal_zone0", page.text("#hottest")), page.text("#hottest")
    for p in sensors["cpufreq"]:
        assert page.text(f'#cpufreq tr[data-id="{p["id"]}"] td.freq') == str(round(p["cur_hz"] / 1e6))
    assert re.fullmatch(r"\d+(\.\d)? %", page.text("#load")), page.text("#load")
    page.wait(lambda: page.text("#alerts") == "none", what="no alert shown")      # from /api/v1/status
    page.wait(lambda: "Hardkernel ODROID-C2" in page.text("#board"), what="the board named")
    url, width, _ = page.plot("#chart")
    assert url.startswith("/api/v1/history.svg?from=-15m&to=now&width=") and f"width={width}&" in url
    if EVENTS_MISSING:
        page.wait(lambda: page.text("#live").startswith("live updates unavailable"), what="no live updates said")
    else:
        page.wait(lambda: page.text("#live") == "live", what="the pill says live")
    page.wait(lambda: page.visible("#runs-empty"), what="no runs yet said")
    assert page.problems(
        [("GET", "/api/v1/events", 404)] if EVENTS_MISSING else []) == []
    page.shot("dashboard-live.png")
    # a reload revalidates the kept files (304) and the page works as before
    page.open(d.url)
    page.wait(lambda: page.text(f'#sensors tr[data-id="{sensors["temperatures"][0]["id"]}"] td.temp'),
              what="the sensors after a reload")
    assert [r["status"] for r in page.seen("GET", "/dashboard.js")] == [304]
    assert page.problems(
        [("GET", "/api/v1/events", 404)] if EVENTS_MISSING else []) == []


def test_without_live_updates_the_page_still_works(page, start_daemon):
    """The events stream refused (blocked in the browser): data from the plain GETs, and a word about it."""
    d = start_daemon("--simulate", "--interval", "200ms")
    run = finished_run(d, "before the page")
    page.d.execute_cdp_cmd("Network.enable", {})
    page.d.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*/api/v1/events*"]})
    page.open(d.url)
    page.wait(lambda: page.text("#live").startswith("live updates unavailable"), what="the pill says so")
    page.wait(lambda: re.fullmatch(r"\d+\.\d", page.text('#sensors tr[data-id="thermal_zone0"] td.temp') or ""),
              what="the temperature from GET /api/v1/sensors")
    page.wait(lambda: page.text(f'#runs tr[data-id="{run}"] td.state') == "finished", what="the run list")
    page.plot("#chart")
    assert page.problems([("GET", "/api/v1/events", "net::ERR_BLOCKED_BY_CLIENT")]) == []


def test_live_0_gives_a_finished_page_for_pictures(start_daemon, tmp_path):
    """?live=0 opens no event stream: headless Chromium's --virtual-time-budget then ends with the
    page filled in (with the stream open it never ends), for scripts that take pictures of it."""
    import subprocess
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        pytest.skip("chromium is not installed (Debian package chromium)")
    d = start_daemon("--simulate", "--interval", "200ms")
    args = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=5000",
            "--dump-dom", d.url + "/?live=0"]
    r = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    assert 'data-id="thermal_zone0"' in r.stdout and "not live (live=0)" in r.stdout, r.stdout[-2000:]
    assert not [line for line in d.logs().splitlines() if "/api/v1/events" in line]


def fill_phase(page, n, kind, duration, workers=None):
    li = f"#phases li:nth-child({n}) "
    page.select(li + "[name=kind]", kind)
    page.select(li + "[name=end]", "duration")
    page.type(li + "[name=duration]", duration)
    if workers is not None:
        page.select(li + "[name=type]", "cpu")
        page.type(li + "[name=workers]", str(workers))


def test_run_from_the_form_with_the_token_prompt(page, start_daemon, tmp_path):
    d = with_token(start_daemon, tmp_path, "--simulate", "--interval", "200ms")
    page.open(d.url, "#/new")
    page.type("#run-form [name=label]", "form <run>")
    page.type("#run-form [name=ambient_c]", "21.5")
    fill_phase(page, 1, "idle", "2 parsecs")
    fill_phase(page, 2, "stress", "3s", workers=1)
    fill_phase(page, 3, "cooldown", "2s")
    page.el("#run-form button[type=submit]").click()

    # 401: the page asks for the token; a wrong one is refused in words
    page.wait(lambda: page.visible("#auth"), what="the token prompt")
    assert "Authorization: Bearer" in page.text("#auth-why")
    assert page.text("#run-form .error").startswith("Error 401 (unauthorized)")
    page.type("#auth [name=token]", "wrong")
    page.el("#auth button[type=submit]").click()
    page.wait(lambda: page.visible("#auth") and "wrong bearer token" in page.text("#auth-why"),
              what="the wrong token refused")
    page.type("#auth [name=token]", TOKEN)
    page.el("#auth button[type=submit]").click()

    # the daemon's 400 names the field, and the page shows it
    page.wait(lambda: "phases[0].duration" in (page.text("#run-form .error") or ""), what="the 400 shown")
    assert page.text("#run-form .error").startswith("Error 400 (bad_request)") and not page.visible("#auth")
    assert d.get("/api/v1/runs")[1]["runs"] == []

    fill_phase(page, 1, "idle", "2s")
    page.el("#run-form button[type=submit]").click()     # the token is kept for the tab: no prompt
    page.wait(lambda: page.js("return location.hash") == "#/runs/1", what="the run page")
    run = d.get("/api/v1/runs/1")[1]
    assert run["label"] == "form <run>" and run["ambient_c"] == 21.5
    assert [(p["kind"], p["duration"]) for p in run["phases"]] == [("idle", "2s"), ("stress", "3s"), ("cooldown", "2s")]
    assert run["phases"][1]["load"]["workers"] == 1
    page.wait(lambda: page.text("#run-title") == "Run #1 form <run>", what="the run title")
    page.plot("#run-plot", r"^/api/v1/runs/1/plot\.svg\?")       # while it runs too
    d.wait_for(lambda: run_state(d, 1) != "running", timeout=60, what="run 1 ends")
    assert run_state(d, 1) == "finished"
    if EVENTS_MISSING:
        page.el("#refresh").click()
    page.wait(lambda: page.text("#run-state").startswith("finished"), what="finished on the run page")
    assert not page.visible("#view-run .stop")
    assert page.problems([("POST", "/api/v1/runs", 401), ("POST", "/api/v1/runs", 400)]) == []

    # opened afresh, the plot is the ended run's: the same bytes as fetched here
    page.open(d.url, "#/runs/1")
    url, width, height = page.plot("#run-plot")
    assert url.startswith("/api/v1/runs/1/plot.svg?width=") and (width, height) == tuple(
        int(x) for x in re.search(r"width=(\d+)&height=(\d+)", url).groups())
    svg = fetch(d, url)[2].decode()
    assert "form &lt;run&gt;" in svg and "stress" in svg
    metrics = d.get("/api/v1/runs/1")[1]["metrics"]
    assert page.text('#run-metrics tr[data-id="peak_c"] td').startswith(f"{metrics['peak_c']:.1f} °C")
    assert page.text('#run-metrics tr[data-id="ambient_c"] td') == "21.5 °C"
    rows = page.js("return [...document.querySelectorAll('#run-phases tbody tr')]"
                   ".map(r => [...r.cells].slice(1, 4).map(c => c.textContent));")
    assert rows == [["idle", "2s", "—"], ["stress", "3s", "cpu × 1 sqrt"], ["cooldown", "2s", "—"]], rows
    for sel, ctype in (("#run-csv", "text/csv"), ("#run-json", "application/json")):
        href = page.el(sel).get_attribute("href")
        status, headers, body = fetch(d, href[len(d.url):])
        assert status == 200 and headers["Content-Type"].startswith(ctype) and body, (sel, href)
    assert page.el("#run-csv").get_attribute("href") == d.url + "/api/v1/runs/1/samples?format=csv"
    page.shot("dashboard-run.png")

    page.el('nav a[data-view="live"]').click()
    page.wait(lambda: page.text('#runs tr[data-id="1"] td.state') == "finished", what="the run in the list")
    assert page.text('#runs tr[data-id="1"] th') == "#1 form <run>"
    assert page.problems() == []


def test_stop_button(page, start_daemon):
    d = start_daemon("--simulate", "--interval", "200ms")
    status, run = d.request("POST", "/api/v1/runs", body=short_run("long one", stress="10m"))
    assert status == 201
    page.open(d.url)
    page.wait(lambda: page.visible("#current .stop") and "long one" in page.text("#current"),
              what="the running run and its stop button")
    page.el("#current .stop").click()
    d.wait_for(lambda: run_state(d, run["id"]) != "running", timeout=20, what="the run stops")
    assert run_state(d, run["id"]) == "aborted"
    page.wait(lambda: not page.visible("#current"), what="no run running any more")
    assert page.text(f'#runs tr[data-id="{run["id"]}"] td.state').startswith("aborted")
    page.open(d.url, f"#/runs/{run['id']}")
    page.wait(lambda: (page.text("#run-state") or "").startswith("aborted"), what="aborted on its page")
    assert not page.visible("#view-run .stop")
    assert page.problems() == []


def test_compare_page(page, start_daemon):
    d = start_daemon("--simulate", "--interval", "200ms")
    a, b = finished_run(d, "case A"), finished_run(d, "case B")
    page.open(d.url, "#/compare")
    page.wait(lambda: page.js("return document.querySelectorAll('#compare-runs input').length") == 2,
              what="both runs offered")
    assert page.visible("#compare-hint") and not page.visible("#compare-plot")
    for run_id in (a, b):
        page.el(f'#compare-runs input[value="{run_id}"]').click()
    url, width, _ = page.plot("#compare-plot", r"runs=\d+,\d+")
    ids = re.match(r"/api/v1/compare\.svg\?runs=([\d,]+)&width=\d+&height=\d+$", url)
    assert ids and sorted(map(int, ids.group(1).split(","))) == [a, b], url
    svg = fetch(d, url)[2].decode()
    assert "case A" in svg and "case B" in svg and "rise °C" not in svg
    page.el("#rise").click()
    url = page.plot("#compare-plot", "&y=rise&")[0]
    assert re.match(r"/api/v1/compare\.svg\?runs=\d+,\d+&y=rise&width=\d+&height=\d+$", url), url
    svg = fetch(d, url)[2].decode()
    assert "case A" in svg and "case B" in svg and "rise °C" in svg
    # the groups' table shows the rises first, and no plateau temperatures
    heads = "return [...document.querySelectorAll('#groups tbody th')].map(c => c.textContent)"
    page.wait(lambda: (page.js(heads) or [""])[0].startswith("Rise over"), what="the rises first")
    assert "Plateau °C" not in page.js(heads), page.js(heads)
    hash_ = page.js("return location.hash")
    assert re.fullmatch(r"#/compare\?runs=\d,\d&y=rise", hash_), hash_
    page.shot("dashboard-compare.png")
    assert page.problems() == []
    # the address keeps the choice: opened again, the same plot
    page.open(d.url, hash_)
    page.plot("#compare-plot", r"runs=\d+,\d+&y=rise&")
    assert page.js("return document.querySelectorAll('#compare-runs input:checked').length") == 2
    assert page.el("#rise").is_selected() and page.problems() == []


def synthetic_run(template, label, rise, tau=12.5, idle_c=48.0):
    """An export of template (a run of this daemon) with its samples made up: a minute idle, then
    a first-order rise of rise °C and the cooling back, both with time constant tau, at 1 Hz."""
    doc = copy.deepcopy(template)
    run, (header, row) = doc["run"], doc["samples_csv"].splitlines()[:2]
    t0, cols = run["phases"][0]["started_ms"], header.split(",")
    spans = (("idle", 0, 60), ("stress", 60, 260), ("cooldown", 260, 460))
    for p, (_, a, b) in zip(run["phases"], spans):
        p["duration"], p["started_ms"], p["ended_ms"] = f"{b - a}s", t0 + a * 1000, t0 + b * 1000
    run["label"], run["ambient_c"] = label, 21.5
    top = rise * (1 - math.exp(-200 / tau))
    lines = [header]
    for kind, a, b in spans:
        for t in range(a, b):
            temp = idle_c + (0 if kind == "idle" else rise * (1 - math.exp(-(t - 60) / tau)) if kind == "stress"
                             else top * math.exp(-(t - 260) / tau))
            r = dict(zip(cols, row.split(",")))
            r.update({"time_ms": str(t0 + t * 1000), "elapsed_s": f"{t}.000", "phase": kind,
                      "t_since_load_s": str(t - 60) if t >= 60 else "", "load": "1.0000" if kind == "stress" else "0",
                      "work_rate_per_s": "1000000.0" if kind == "stress" else "",
                      "work_unit": "ops" if kind == "stress" else ""})
            r.update({c: f"{temp:.3f}" for c in cols if c.endswith("_c")})
            lines.append(",".join(r[c] for c in cols))
    doc["samples_csv"] = "\n".join(lines) + "\n"
    return doc


def cli_compare(d, ids):
    """heatcurvectl compare's output for the runs, or a skip without the built client."""
    ctl = os.environ.get("HEATCURVECTL", "")
    if not (ctl and os.access(ctl, os.X_OK)):
        pytest.skip("HEATCURVECTL is not set to the built client (run through meson test)")
    r = subprocess.run([ctl, "--url", d.url, "compare", *map(str, ids)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def check_one_verdict(page, d, ids):
    """The page shows runs ids as given: the API's verdict above the plot, its groups in a table;
    compare.svg's subtitle and heatcurvectl compare say the same, with the same tau cool."""
    status, api = d.get(f"/api/v1/compare?runs={','.join(map(str, ids))}&points=1")
    assert status == 200, api
    labels = [run["label"] for run in api["runs"]]
    texts = [v["text"] for v in api["verdicts"]]
    assert [g["label"] for g in api["groups"]] == labels and len(texts) == 1, api
    url = page.plot("#compare-plot", rf"runs={ids[0]},{ids[1]}&")[0]
    page.wait(lambda: page.js("return [...document.querySelectorAll('#verdicts p')].map(p => p.textContent)") == texts,
              what="the API's verdict on the page")
    head = page.js("return [...document.querySelectorAll('#groups thead tr')].map(r => [...r.cells].map(c => c.textContent))")
    assert head == [["Group", *labels], ["Runs", "1", "1"]], head
    rows = page.js("return Object.fromEntries([...document.querySelectorAll('#groups tbody tr')]"
                   ".map(r => [r.cells[0].textContent, [...r.cells].slice(1).map(c => c.textContent)]))")
    # compare.svg: the same sentence under its title, the runs in the same order
    svg = fetch(d, url.split("&width")[0])[2].decode()
    subtitle = re.search(r'<text x="12.0" y="36.0"[^>]*>([^<]*)</text>', svg)
    assert subtitle and html.unescape(subtitle.group(1)) == texts[0], (subtitle, texts)
    assert svg.index(f">{labels[0]}<") < svg.index(f">{labels[1]}<")
    # heatcurvectl compare: the runs' columns in the same order, the same sentence last
    out = cli_compare(d, ids)
    assert out[-1] == texts[0], out
    assert out[0].index(labels[0]) < out[0].index(labels[1]), out[0]
    # tau cool is 12.5 s in every run: 13 everywhere, rounded half away from zero (printf said 12)
    assert [r["metrics"]["tau_cool_s"] for r in api["runs"]] == [12.5, 12.5]
    assert rows["τ cool s"] == ["13", "13"], rows
    x = re.search(r'<text x="([\d.]+)"[^>]*>τ cool</text>', svg).group(1)      # the column's cells below it
    assert re.findall(rf'<text x="{x}" y="[\d.]+" font-size="11"[^>]*>([^<]*)</text>', svg) == ["13 s", "13 s"]
    assert next(line for line in out if line.startswith("group ")) and \
        [line.split()[3:] for line in out if line.startswith("tau cool s")] == [["13", "13", "+0"], ["13", "13"]], out
    rise = api["groups"][0]["metrics"]["rise_over_ambient_c"]
    assert rows["Rise over ambient °C"][0] == f"{rise['mean']:.1f} ± {(rise['high'] - rise['low']) / 2:.1f}", rows
    return texts[0]


def test_one_verdict_on_the_page_the_plot_and_the_cli(page, start_daemon):
    d = start_daemon("--simulate", "--interval", "200ms")
    _, template = d.get(f"/api/v1/runs/{finished_run(d, 'template')}/export")
    ids = []
    for label, rise in (("case A", 20.0), ("case B", 16.0)):
        status, run = d.request("POST", "/api/v1/runs/import", synthetic_run(template, label, rise))
        assert status == 201, run
        ids.append(run["id"])
    a, b = ids
    # picked oldest first, though the list shows the newest first: compared in the order picked
    page.open(d.url, "#/compare")
    page.wait(lambda: page.js("return document.querySelectorAll('#compare-runs input').length") == 3,
              what="the runs offered")
    for run_id in (a, b):
        page.el(f'#compare-runs input[value="{run_id}"]').click()
    text = check_one_verdict(page, d, [a, b])
    assert text.startswith("case B runs 4.0 °C cooler over ambient than case A (95 %: "), text
    assert page.js("return location.hash") == f"#/compare?runs={a},{b}"
    page.shot("dashboard-compare-verdict.png")
    # the address given the other way round: the other way round everywhere
    page.open(d.url, f"#/compare?runs={b},{a}")
    text = check_one_verdict(page, d, [b, a])
    assert text.startswith("case B runs 4.0 °C cooler over ambient than case A"), text
    # one group: no verdict, no subtitle
    page.el(f'#compare-runs input[value="{a}"]').click()
    page.wait(lambda: page.js("return document.querySelectorAll('#verdicts p').length") == 0, what="no verdict")
    assert 'y="36.0"' not in fetch(d, f"/api/v1/compare.svg?runs={b}")[2].decode()
    assert page.problems() == []


def regulated_run(template):
    """synthetic_run() of a board held at 80 °C from about a minute into its load, the firmware
    clocking it down two samples in three from then on: held by throttling."""
    doc = synthetic_run(template, "no heatsink", 45.0, tau=60.0, idle_c=50.0)
    header, *lines = doc["samples_csv"].splitlines()
    cols = header.split(",")
    temp, freq, top, phase, work = cols.index("temp_c"), cols.index("freq_hz"), cols.index("max_allowed_hz"), \
        cols.index("phase"), cols.index("work_rate_per_s")
    for i, line in enumerate(lines):
        r = line.split(",")
        held = r[phase] == "stress" and float(r[temp]) >= 80.0
        r[temp] = "80.000" if held else r[temp]
        r[freq] = str(int(int(r[top]) * 2 / 3)) if held and i % 3 else r[top]
        r[work] = "666666.7" if held and i % 3 else r[work]       # the work done goes with the clock
        lines[i] = ",".join(r)
    doc["samples_csv"] = "\n".join([header, *lines]) + "\n"
    return doc


def half_up(x, d):
    """The displays' rounding: half away from zero, as the value is written, and no "-0"."""
    import decimal
    q = decimal.Decimal(1).scaleb(-d)
    return str(decimal.Decimal(repr(x)).quantize(q, rounding=decimal.ROUND_HALF_UP) + 0)


def test_a_regulated_run_says_so_instead_of_a_plateau(page, start_daemon):
    """A run held at the firmware's limit by throttling: its run page, the runs table, its plot.svg,
    heatcurvectl show and runs say "regulated at" where a plateau would be, with the same numbers."""
    d = start_daemon("--simulate", "--interval", "200ms")
    _, template = d.get(f"/api/v1/runs/{finished_run(d, 'template')}/export")
    status, run = d.request("POST", "/api/v1/runs/import", regulated_run(template))
    assert status == 201, run
    m = d.get(f"/api/v1/runs/{run['id']}")[1]["metrics"]
    # held for its last two minutes: throttled for 44 % of the load, two thirds of its last minute
    assert m["regulated_c"] == 80.0 and 0.4 < m["throttled_fraction"] < 0.5, m
    at = f"regulated at {half_up(m['regulated_c'], 1)} °C"
    work = half_up(-m["work_rate_drop_pct"], 1)
    whole = f"{at}, throttled {half_up(m['throttled_fraction'] * 100, 0)} %, work {'' if work[0] == '-' else '+'}{work} %"

    page.open(d.url, f"?live=0#/runs/{run['id']}")
    page.wait(lambda: page.text('#run-metrics tr[data-id="plateau_c"] td') != "", what="the metrics table")
    assert whole.endswith(", work -33.3 %"), whole          # the median of the last 30 s ran at 2/3 of the clock
    # with the run's quality flag after it, as every metric of the table has
    assert page.text('#run-metrics tr[data-id="plateau_c"] td').startswith(whole)
    page.open(d.url, "?live=0#/")
    page.wait(lambda: at in page.text(f'#runs tr[data-id="{run["id"]}"]'), what="the runs table says it")
    svg = fetch(d, f"/api/v1/runs/{run['id']}/plot.svg")[2].decode()
    assert f">{at}<" in svg and ">plateau " not in svg, svg
    assert f">throttled {half_up(m['throttled_fraction'] * 100, 0)} %, work " in svg
    ctl = os.environ.get("HEATCURVECTL", "")
    if ctl and os.access(ctl, os.X_OK):
        show = subprocess.run([ctl, "--url", d.url, "show", str(run["id"])], capture_output=True, text=True,
                              timeout=30)
        assert show.returncode == 0, show.stderr
        assert f"held     {whole}: its plateau is the limit, not the case's" in show.stdout, show.stdout
        [row] = [line for line in show.stdout.splitlines() if line.startswith("plateau °C ")]
        assert row.split(None, 2)[2] == whole, show.stdout
        runs = subprocess.run([ctl, "--url", d.url, "runs"], capture_output=True, text=True, timeout=30)
        assert f"  {at}  " in runs.stdout, runs.stdout                 # the short form: a column of a table
    assert page.problems() == []


def test_phone_width_and_dark_mode(page, start_daemon):
    d = start_daemon("--simulate", "--interval", "200ms")
    finished_run(d, "a run with a rather long label for a phone")
    page.d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True})
    page.d.execute_cdp_cmd("Emulation.setEmulatedMedia",
                           {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    page.open(d.url)
    page.wait(lambda: page.text('#runs tr[data-id="1"] td.state') == "finished", what="the run list")
    _, width, _ = page.plot("#chart")
    assert 320 <= width <= 390, width                   # drawn for the screen, not shrunk
    # wide tables scroll inside their box: the page itself never needs sideways scrolling
    assert page.js("return document.documentElement.scrollWidth <= window.innerWidth + 1")
    bg = page.js("return getComputedStyle(document.body).backgroundColor")
    rgb = [int(x) for x in re.findall(r"\d+", bg)[:3]]
    assert sum(rgb) < 3 * 64, bg                        # dark
    page.shot("dashboard-phone-dark.png")
    assert page.problems() == []


def test_a_disturbed_run_says_so_above_its_page(page, start_daemon, fixture_copy):
    """A run whose idle phase was busy with other programs (an imported copy of a clean run with 60 %
    load in its samples) has a banner naming the phase; the clean run (a fixture tree: no load) has none."""
    d = start_tree(start_daemon, fixture_copy("rpi4"))
    status, run = d.request("POST", "/api/v1/runs", body={"label": "clean",
                                                          "phases": [{"kind": "idle", "duration": "2s"}]})
    assert status == 201, run
    d.wait_for(lambda: run_state(d, run["id"]) == "finished", what="the run's end")
    imported = import_busy_copy(d, run["id"])

    page.open(d.url, f"?live=0#/runs/{imported['id']}")
    page.wait(lambda: page.text("#run-title") == "Run #2 busy", what="the busy run's page")
    page.wait(lambda: page.visible("#run-quality"), what="the banner")
    assert page.text("#run-quality").startswith("Disturbed: other programs loaded the board during idle (phase 1)")
    page.open(d.url, f"?live=0#/runs/{run['id']}")
    page.wait(lambda: page.text("#run-title") == "Run #1 clean", what="the clean run's page")
    assert not page.visible("#run-quality")
    assert page.problems() == []


CELLS = """return [...document.querySelectorAll(arguments[0])].map(c => { const r = c.getBoundingClientRect();
return [c.dataset.label, c.textContent, r.width > 0 && r.left >= 0 && r.right <= window.innerWidth]; })"""
NO_SIDEWAYS = "return [document.documentElement.scrollWidth, window.innerWidth]"


def svg_rows_overlap(svg):
    """Cells of compare.svg's table that run into the next one (0.6 em a character), row by row."""
    import xml.etree.ElementTree as ET
    ns = "{http://www.w3.org/2000/svg}"
    texts = [(float(t.get("x")), float(t.get("y")), t.text or "", int(t.get("font-size")))
             for t in ET.fromstring(svg).iter(ns + "text") if t.get("x")]
    head_y = next(y for x, y, text, _ in texts if text == "run")
    rows = {}
    for x, y, text, size in texts:
        if y >= head_y:
            rows.setdefault(y, []).append((x, len(text) * 0.6 * size, text))
    bad = []
    for cells in rows.values():
        cells.sort()
        bad += [(a[2], b[2]) for a, b in zip(cells, cells[1:]) if a[0] + a[1] > b[0]]
    return bad


def test_phone_at_360_px_cards_and_one_time_format(page, start_daemon):
    """At 360 px: no sideways scrolling anywhere, a run is a card whose Plateau and Rise are in sight,
    the compare table's text does not overlap; times are 24-hour UTC whatever the browser's zone and locale."""
    d = start_daemon("--simulate", "--interval", "200ms")
    a = finished_run(d, "a run with a rather long label for a phone")
    b = finished_run(d, "case B")
    page.d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 360, "height": 780, "deviceScaleFactor": 2, "mobile": True})
    page.d.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": "America/New_York"})
    page.d.execute_cdp_cmd("Emulation.setLocaleOverride", {"locale": "en-US"})
    page.open(d.url)
    page.wait(lambda: page.text(f'#runs tr[data-id="{a}"] td.state') == "finished", what="the run list")
    page.plot("#chart")
    width, inner = page.js(NO_SIDEWAYS)
    assert inner == 360 and width <= inner, (width, inner)
    assert page.js("return getComputedStyle(document.querySelector('#runs tbody tr')).display") == "block"
    cells = {label: (text, inside) for label, text, inside in page.js(CELLS, f'#runs tr[data-id="{a}"] td')}
    for label in ("Plateau", "Rise over ambient", "Started (UTC)"):
        assert label in cells and cells[label][0] and cells[label][1], (label, cells)
    created = d.get(f"/api/v1/runs/{a}")[1]["created_ms"]
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(created // 1000))
    assert cells["Started (UTC)"][0] == started, cells
    assert re.fullmatch(r"\d\d:\d\d:\d\d UTC", page.text("#updated")), page.text("#updated")
    assert not re.search(r"\b[AP]M\b", page.js("return document.body.innerText"))
    page.shot("dashboard-phone-360.png")

    page.open(d.url, f"#/runs/{a}")
    page.plot("#run-plot")
    assert page.js(NO_SIDEWAYS)[0] <= 360
    assert all(inside for _, _, inside in page.js(CELLS, "#run-phases td")), page.js(CELLS, "#run-phases td")
    assert f"started {started} UTC" in page.text("#run-state")

    page.open(d.url, f"#/compare?runs={a},{b}")
    url = page.plot("#compare-plot", rf"runs={a},{b}&")[0]
    assert page.js(NO_SIDEWAYS)[0] <= 360
    svg = fetch(d, url)[2].decode()
    assert svg_rows_overlap(svg) == [], svg_rows_overlap(svg)
    assert svg_rows_overlap(fetch(d, url.split("&width")[0])[2].decode()) == []      # wide: all the columns
    page.shot("dashboard-compare-360.png")
    assert page.problems() == []


@pytest.mark.skipif(EVENTS_MISSING, reason="GET /api/v1/events answers 404: no server-sent events in this build")
def test_live_updates_from_server_sent_events(page, start_daemon, fixture_copy, tmp_path):
    root = fixture_copy("rpi4")
    conf = tmp_path / "alert.conf"
    conf.write_text("[alert soc]\nsensor = thermal_zone0\nwarn = 60\ncrit = 80\n")
    write_in_place(os.path.join(root, ZONE), "45000\n")
    d = start_tree(start_daemon, root, "--config", str(conf))
    page.open(d.url)
    page.wait(lambda: page.text("#live") == "live", what="the stream open")
    cell = '#sensors tr[data-id="thermal_zone0"] td.temp'
    page.wait(lambda: page.text(cell) == "45.0", what="45.0 °C shown")
    assert page.text("#alerts") == "none"
    first_chart = page.js("return document.querySelector('#chart').src")

    # no reload from here on: only events change the page
    page.js("window.notReloaded = true")
    write_in_place(os.path.join(root, ZONE), "61234\n")
    page.wait(lambda: page.text(cell) == "61.2", what="the new temperature from a sample event")
    page.wait(lambda: page.text("#alerts").startswith("soc warn"), what="the alert from an alert event")
    page.wait(lambda: page.js("return document.querySelector('#chart').src") != first_chart,
              timeout=15, what="the chart drawn again")
    status, run = d.request("POST", "/api/v1/runs", body=short_run("evented"))
    assert status == 201
    row = f'#runs tr[data-id="{run["id"]}"] td.state'
    page.wait(lambda: (page.text(row) or "").startswith("running"), what="the run from a run event")
    page.wait(lambda: page.text(row) == "finished", timeout=60, what="the end from a run event")
    assert page.js("return window.notReloaded === true")
    assert page.problems() == []


def row_level(page, sensor):
    """(text, class) of a temperature row's state cell."""
    return page.js("const c = document.querySelector(arguments[0]); return c ? [c.textContent, c.className] : null;",
                   f'#sensors tr[data-id="{sensor}"] td.level')


def test_states_against_trips_and_alert_values(page, start_daemon, fixture_copy, tmp_path):
    """A zone over its hot trip reads hot, in words and class; the Alerts card shows the value now."""
    root = fixture_copy("odroid-c2-3.14")       # trips: passive 70 and 80, hot 90, critical 110 (whole degrees)
    conf = tmp_path / "alert.conf"
    conf.write_text("[alert soc]\nsensor = thermal_zone0\nwarn = 60\ncrit = 80\n")
    zone = os.path.join(root, ZONE)
    write_in_place(zone, "45\n")
    d = start_tree(start_daemon, root, "--config", str(conf))
    page.open(d.url, "?live=0" if EVENTS_MISSING else "")
    refresh = (lambda: page.el("#refresh").click()) if EVENTS_MISSING else (lambda: None)
    page.wait(lambda: row_level(page, "thermal_zone0") == ["✓ ok", "level level-ok"], what="ok at 45 °C")
    assert page.text("#alerts") == "none"

    write_in_place(zone, "95\n")
    d.wait_for(lambda: d.get("/api/v1/status")[1]["active_alerts"], timeout=10, what="the alert fires")
    fired = d.get("/api/v1/status")[1]["active_alerts"][0]
    assert fired["state"] == "crit" and fired["value_c"] == 95.0, fired
    refresh()

    def hot():
        text, cls = row_level(page, "thermal_zone0") or ("", "")
        return text.startswith("▲ hot") and "level-hot" in cls.split() and "alert soc crit" in text
    page.wait(hot, what="hot, with its alert, in the row")
    page.wait(lambda: page.text("#alerts") == "soc crit (thermal_zone0 95.0 °C)", what="the alert card")
    assert "alert-crit" in page.attr("#alerts", "class").split()
    assert page.js("return getComputedStyle(document.querySelector('#alerts')).color") != \
        page.js("return getComputedStyle(document.querySelector('#updated')).color")

    # the alert stays crit, its recorded value 95 °C; the card follows the sensor
    write_in_place(zone, "97\n")
    refresh()
    page.wait(lambda: page.text("#alerts") == "soc crit (thermal_zone0 97.0 °C)", what="the card at 97 °C")
    assert d.get("/api/v1/status")[1]["active_alerts"][0]["value_c"] == 95.0

    write_in_place(zone, "112\n")
    refresh()
    page.wait(lambda: (row_level(page, "thermal_zone0") or [""])[0].startswith("✖ critical"), what="critical")
    assert "level-critical" in row_level(page, "thermal_zone0")[1].split()
    write_in_place(zone, "72\n")
    refresh()
    page.wait(lambda: (row_level(page, "thermal_zone0") or [""])[0].startswith("▲ passive"), what="passive")
    page.shot("dashboard-states.png")
    assert page.problems() == []


def test_throttled_badge_while_a_policy_is_capped(page, start_daemon, fixture_copy):
    root = fixture_copy("rpi4")
    cap = os.path.join(root, "sys/devices/system/cpu/cpufreq/policy0/scaling_max_freq")
    d = start_tree(start_daemon, root)
    page.open(d.url, "?live=0" if EVENTS_MISSING else "")
    refresh = (lambda: page.el("#refresh").click()) if EVENTS_MISSING else (lambda: None)
    badge = '#cpufreq tr[data-id="policy0"] th .badge'
    page.wait(lambda: page.text('#cpufreq tr[data-id="policy0"] td.freq'), what="the policy row")
    assert page.text(badge) is None
    write_in_place(cap, "1000000\n")
    refresh()
    page.wait(lambda: page.text(badge) == "throttled", what="the throttled badge")
    assert page.attr(badge, "title") == "capped at 1000 of 1500 MHz"
    write_in_place(cap, "1500000\n")
    refresh()
    page.wait(lambda: page.text(badge) is None, what="no badge once the cap is lifted")
    assert page.problems() == []


def test_throttled_badge_with_the_share_of_the_last_15_min(page, start_daemon, fixture_copy):
    """Busy (the load from a growing proc/stat) at 1000 of 1500 MHz, then at 1500 again: the badge keeps
    the share of the last 15 min the history says, and says it is not throttled now."""
    root = fixture_copy("rpi4")
    policy = os.path.join(root, "sys/devices/system/cpu/cpufreq/policy0")
    stat = os.path.join(root, "proc/stat")
    lines = open(stat).read().splitlines()
    stop = threading.Event()

    def busy():         # every CPU 90 % busy: user jiffies grow nine times as fast as idle ones
        k = 0
        while not stop.is_set():
            k += 1
            out = []
            for line in lines:
                f = line.split()
                if f and f[0].startswith("cpu"):
                    f[1] = str(int(f[1]) + 90 * k)
                    f[4] = str(int(f[4]) + 10 * k)
                out.append(" ".join(f))
            write_in_place(stat, "\n".join(out) + "\n")
            time.sleep(0.05)
    thread = threading.Thread(target=busy)
    thread.start()
    try:
        write_in_place(os.path.join(policy, "scaling_cur_freq"), "1000000\n")
        d = start_tree(start_daemon, root)
        d.wait_for(lambda: (d.get("/api/v1/sensors")[1]["load"]["total"] or 0) > 0.5, what="a busy board")
        time.sleep(2)
        write_in_place(os.path.join(policy, "scaling_cur_freq"), "1500000\n")
        time.sleep(1)
        page.open(d.url, "?live=0")
        badge = '#cpufreq tr[data-id="policy0"] th .badge'
        page.wait(lambda: (page.text(badge) or "").startswith("throttled "), what="the badge with its share")
        share = int(re.fullmatch(r"throttled (\d+) % of 15 min", page.text(badge)).group(1))
        assert 10 <= share <= 95, page.text(badge)
        title = page.attr(badge, "title")
        assert title == f"not now; throttled {share} % of the last 15 min", title
        assert "past" in page.attr(badge, "class").split()
        assert page.problems() == []
    finally:
        stop.set()
        thread.join()


# The colour of a plot's pixel (x, y), read through a canvas (a blob: image is the page's own).
PIXEL = """const i = document.querySelector(arguments[0]), c = document.createElement('canvas');
c.width = i.naturalWidth; c.height = i.naturalHeight;
const g = c.getContext('2d'); g.drawImage(i, 0, 0);
return [...g.getImageData(arguments[1], arguments[2], 1, 1).data].slice(0, 3);"""


def test_plots_follow_the_dark_scheme(page, start_daemon):
    d = start_daemon("--simulate", "--interval", "200ms")
    run = finished_run(d, "dark")
    page.open(d.url)
    url = page.plot("#chart")[0]
    assert "theme" not in url and sum(page.js(PIXEL, "#chart", 2, 2)) > 3 * 200, url      # light: white
    page.d.execute_cdp_cmd("Emulation.setEmulatedMedia",
                           {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    url = page.plot("#chart", "&theme=dark$")[0]        # drawn again as the scheme changes
    assert sum(page.js(PIXEL, "#chart", 2, 2)) < 3 * 48, url
    page.open(d.url, f"#/runs/{run}")
    url = page.plot("#run-plot", "&theme=dark$")[0]
    assert sum(page.js(PIXEL, "#run-plot", 2, 2)) < 3 * 48, url
    page.open(d.url, f"#/compare?runs={run}")
    url = page.plot("#compare-plot", "&theme=dark$")[0]
    assert sum(page.js(PIXEL, "#compare-plot", 2, 2)) < 3 * 48, url
    assert b'fill="#17181b"' in fetch(d, url)[2]
    page.shot("dashboard-dark-plots.png")
    assert page.problems() == []
