"""heatcurvectl against hostile or broken servers on loopback, and whose token goes where."""
import http.server
import json
import os
import socket
import subprocess
import threading
import time

import pytest

from conftest import fixture_path

HEATCURVECTL = os.environ.get("HEATCURVECTL", "")


@pytest.fixture
def ctl(tmp_path):
    """ctl(url, *args, env=None) -> CompletedProcess, with a HOME of its own (no tokens file)."""
    if not HEATCURVECTL or not os.access(HEATCURVECTL, os.X_OK):
        pytest.skip("HEATCURVECTL is not set to the built client (run through meson test)")
    home = tmp_path / "home"
    home.mkdir()

    def run(url, *args, env=None, timeout=60):
        full_env = {k: v for k, v in os.environ.items()
                    if k not in ("HEATCURVE_URL", "HEATCURVE_TOKENS_FILE", "XDG_CONFIG_HOME")}
        full_env["HOME"] = str(home)
        full_env.update(env or {})
        return subprocess.run([HEATCURVECTL, "--url", url, *args], capture_output=True,
                              timeout=timeout, env=full_env)
    return run


class Hostile:
    """A loopback server whose answers are written by handler(method, path, headers) -> (status, body, delay).
    delay > 0 sends the body one byte every `delay` seconds (for at most 60 s)."""

    def __init__(self, handler):
        self.requests = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(min(length, 1 << 20))
                outer.requests.append((self.command, self.path, dict(self.headers)))
                status, body, delay = handler(self.command, self.path, self.headers)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Connection", "close")
                self.end_headers()
                try:
                    if delay <= 0:
                        self.wfile.write(body)
                        return
                    deadline = time.monotonic() + 60
                    for i in range(len(body)):
                        if time.monotonic() > deadline:
                            break
                        self.wfile.write(body[i:i + 1])
                        self.wfile.flush()
                        time.sleep(delay)
                except OSError:
                    pass

            do_GET = do_POST = do_DELETE = answer

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hostile():
    made = []

    def make(handler):
        made.append(Hostile(handler))
        return made[-1]
    yield make
    for h in made:
        h.close()


RUNS = json.dumps({"runs": [{"id": 1, "label": "x", "state": "finished"}] * 20}).encode()


@pytest.mark.slow       # waits out the client's 30 s timeout
def test_trickling_server_hits_the_overall_timeout(ctl, hostile):
    # 2 bytes/s kept the old low-speed limit (1 B/s over 30 s) happy for ever
    h = hostile(lambda m, p, hd: (200, RUNS, 0.5))
    t0 = time.monotonic()
    r = ctl(h.url, "runs", timeout=60)
    took = time.monotonic() - t0
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    assert b"--timeout" in r.stderr and took < 40, (took, r.stderr)
    t0 = time.monotonic()
    r = ctl(h.url, "--timeout", "2s", "runs", timeout=30)
    took = time.monotonic() - t0
    assert r.returncode == 1 and b"--timeout" in r.stderr and took < 10, (took, r.stderr)
    # export has its own, longer default, and --timeout also bounds it
    t0 = time.monotonic()
    r = ctl(h.url, "export", "1", "--timeout", "2s", timeout=30)
    assert r.returncode == 1 and time.monotonic() - t0 < 10, r.stderr
    assert ctl(h.url, "--timeout", "0s", "runs").returncode == 2
    assert ctl(h.url, "--timeout", "soon", "runs").returncode == 2


def test_labels_and_errors_are_escaped_and_cut(ctl, hostile):
    evil = "\x1b[2J\x1b]0;pwned\x07\rcase\nB\x9b31m" + "é"
    runs = json.dumps({"runs": [{"id": 1, "label": evil, "state": "finished\x1b[31m"}]}).encode()
    h = hostile(lambda m, p, hd: (200, runs, 0))
    r = ctl(h.url, "runs")
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    assert "\x1b" not in out and "\r" not in out and "\x9b" not in out and "\x07" not in out
    assert "\\e[2J" in out and "case\\nB" in out and "é" in out
    assert len(out.splitlines()) == 2, out

    message = "\x1b[31mboom\r\n" + "line\n" * 40000       # 200 KB, multi-line
    err = json.dumps({"error": {"code": "x", "message": message}}).encode()
    h2 = hostile(lambda m, p, hd: (400, err, 0))
    r = ctl(h2.url, "status")
    assert r.returncode == 1
    assert r.stderr.count(b"\n") == 1 and len(r.stderr) < 2000, r.stderr[:300]
    assert b"\x1b" not in r.stderr and b"\r" not in r.stderr and r.stderr.endswith(b"...\n")


def test_empty_answer_to_stop_is_an_error(ctl, hostile):
    h = hostile(lambda m, p, hd: (200, b"", 0))
    r = ctl(h.url, "stop", "3")
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert b"empty" in r.stderr and r.stdout == b""
    h2 = hostile(lambda m, p, hd: (200, b"{}", 0))
    r = ctl(h2.url, "stop", "3")
    assert r.returncode == 1 and b"state" in r.stderr, r.stderr


def test_export_of_an_empty_or_garbage_answer_is_an_error(ctl, hostile):
    """export streams what it gets, and exits 1 when that is empty or not what a daemon exports."""
    for body, fmt, words in ((b"", "csv", b"empty"), (b"<html>oops</html>", "csv", b"time_ms,"),
                             (b"", "run", b"empty"), (b"garbage", "json", b'"{"')):
        h = hostile(lambda m, p, hd: (200, body, 0))
        r = ctl(h.url, "export", "1", "--format", fmt)
        assert r.returncode == 1 and words in r.stderr, (fmt, body, r.returncode, r.stderr)
        assert r.stdout == body
    good = SAMPLES_HEADER + b"1,0,idle,40.000,,,,0,,,\n"
    h = hostile(lambda m, p, hd: (200, good, 0))
    r = ctl(h.url, "export", "1")
    assert r.returncode == 0 and r.stdout == good, r.stderr
    h = hostile(lambda m, p, hd: (200, b'{"format": "heatcurve-run"}', 0))
    assert ctl(h.url, "export", "1", "--format", "run").returncode == 0


PLOT_RUN = json.dumps({"id": 4, "label": "case", "created_ms": 1796112000000, "sensor": "thermal_zone0",
                       "phases": [{"kind": "stress", "started_ms": 1796112000000, "ended_ms": None}],
                       "metrics": {}}).encode()
SAMPLES_HEADER = b"time_ms,elapsed_s,phase,temp_c,hottest_c,freq_hz,max_allowed_hz,cooling_active,load," \
    b"work_rate_per_s,work_unit\n"


def test_plot_of_samples_that_are_not_a_samples_csv(ctl, hostile):
    """heatcurvectl plot reads the samples as they come: an answer that is no
    samples.csv, or a line with no end, is a clear error, not an empty plot
    or a client that takes all the memory; a last line cut short is left out."""
    def server(samples):
        def handler(method, path, headers):
            if path.startswith("/api/v1/runs/4/samples"):
                return 200, samples, 0
            return 200, PLOT_RUN if path == "/api/v1/runs/4" else b"{}", 0
        return hostile(handler)

    r = ctl(server(b"<html>not here</html>\n").url, "plot", "4")
    assert r.returncode == 1 and b"not a samples.csv" in r.stderr and r.stdout == b"", r.stderr
    r = ctl(server(SAMPLES_HEADER + b"1," * (1 << 20)).url, "plot", "4")
    assert r.returncode == 1 and b"longer than 1048576 bytes" in r.stderr and r.stdout == b"", r.stderr
    rows = b"".join(b"%d,%d,stress,%d.000,,1500000000,1500000000,0,,,\n" % (k, k, 40 + k % 7) for k in range(300))
    whole, cut = ctl(server(SAMPLES_HEADER + rows).url, "plot", "4"), \
        ctl(server(SAMPLES_HEADER + rows + b"300,300,stress,99").url, "plot", "4")
    assert whole.returncode == 0 and whole.stdout.startswith(b"<?xml"), whole.stderr
    assert cut.returncode == 0 and cut.stdout == whole.stdout, cut.stderr


def board(start_daemon, token_file):
    root = fixture_path("rpi4")
    conf = token_file.parent / (token_file.name + ".conf")
    conf.write_text(f"[daemon]\ntoken_file = {token_file}\n")
    return start_daemon("--sysfs-root", root, "--procfs-root", root, "--interval", "100ms", "--config", str(conf))


class Recorder:
    """A loopback proxy in front of a daemon that keeps the Authorization header of each request."""

    def __init__(self, target):
        self.seen = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                outer.seen.append(self.headers.get("Authorization"))
                with socket.create_connection(("127.0.0.1", target.port), timeout=10) as s:
                    s.sendall(f"GET {self.path} HTTP/1.0\r\nHost: x\r\n\r\n".encode())
                    data = b""
                    while len(data) < (16 << 20):
                        c = s.recv(65536)
                        if not c:
                            break
                        data += c
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def test_compare_sends_each_server_only_its_own_token(start_daemon, ctl, tmp_path):
    ta, tb = tmp_path / "token-a", tmp_path / "token-b"
    ta.write_text("token-of-a\n")
    tb.write_text("token-of-b\n")
    a, b = board(start_daemon, ta), board(start_daemon, tb)
    for d, token in ((a, "token-of-a"), (b, "token-of-b")):
        r = ctl(d.url, "--token", token, "run", "--label", "r", "--idle", "duration=1s", "--wait", timeout=60)
        assert r.returncode == 0, r.stderr
    pa, pb = Recorder(a), Recorder(b)
    try:
        # no tokens file: the other server gets no token at all
        r = ctl(pa.url, "--token-file", str(ta), "compare", "1", f"{pb.url}/1")
        assert r.returncode == 0, r.stderr
        assert pa.seen == ["Bearer token-of-a"] and pb.seen == [None], (pa.seen, pb.seen)
        # the same server written differently is still the --url
        r = ctl(pa.url, "--token-file", str(ta), "compare", pa.url.replace("127.0.0.1", "127.0.0.1") + "/1")
        assert r.returncode == 0 and pa.seen[-1] == "Bearer token-of-a"
        # a tokens file gives each server its own
        tokens = tmp_path / "tokens"
        tokens.write_text(f"# per-server tokens\n{pb.url}/ token-of-b\n")
        tokens.chmod(0o600)
        env = {"HEATCURVE_TOKENS_FILE": str(tokens)}
        r = ctl(pa.url, "--token-file", str(ta), "compare", "1", f"{pb.url}/1", env=env)
        assert r.returncode == 0, r.stderr
        assert pa.seen[-1] == "Bearer token-of-a" and pb.seen[-1] == "Bearer token-of-b"
        # a tokens file others can read is refused, not used
        tokens.chmod(0o644)
        r = ctl(pa.url, "compare", "1", f"{pb.url}/1", env=env)
        assert r.returncode == 1 and b"chmod 600" in r.stderr, r.stderr
        # the token the file gives for the --url works for changes too
        tokens.write_text(f"{a.url} token-of-a\n")
        tokens.chmod(0o600)
        r = ctl(a.url, "delete", "1", env=env)
        assert r.returncode == 0, r.stderr
    finally:
        pa.close()
        pb.close()
