"""Shared pieces of the integration suite: start the real heatcurved binary and talk HTTP to it."""
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import pytest

HEATCURVED = os.environ.get("HEATCURVED", "")
PORT_ATTEMPTS = 5
FIXTURES_DIR = os.environ.get(
    "FIXTURES_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "data", "boards"))
# --simulate finds its boards here when pytest runs outside meson test.
os.environ.setdefault("HEATCURVE_BOARDS_DIR", FIXTURES_DIR)


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: over about 5 s, waits out a real timeout, or drives a browser: "
                            "run by `make check-slow` (meson suite 'slow'), left out of `make check`")


_deselected = []


def pytest_deselected(items):
    _deselected.extend(items)


def pytest_sessionfinish(session, exitstatus):
    """-m 'not slow' on a file whose tests are all slow (or -m slow on one with none) leaves
    nothing to run: that is a pass, not pytest's "no tests collected"."""
    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and _deselected:
        session.exitstatus = pytest.ExitCode.OK


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fixture_path(board):
    return os.path.join(FIXTURES_DIR, board)


def write_in_place(path, text):
    """Rewrite a sensor file keeping its inode: the daemon keeps it open and preads it."""
    # New text first, then cut the old tail: a reader never sees an empty file, as with sysfs.
    with open(path, "r+") as f:
        f.write(text)
        f.truncate()


def status_kib(pid, key):
    """A kB figure of /proc/PID/status (VmRSS, RssAnon ...), 0 when absent."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def sanitized(pid):
    """Whether the daemon runs under AddressSanitizer, whose quarantine holds freed memory."""
    with open(f"/proc/{pid}/maps") as f:
        return "libasan" in f.read()


def start_tree(start_daemon, root, *extra, **kw):
    """heatcurved on a fixture tree (sys/ and proc/ under root), sampling every 100 ms."""
    return start_daemon("--sysfs-root", root, "--procfs-root", root, "--interval", "100ms", *extra, **kw)


def with_token(d_factory, tmp_path, *extra, **kw):
    """A daemon with a token_file, whose requests carry the token: command loads need one."""
    token = tmp_path / "token"
    token.write_text("t0ken-for-tests\n")
    conf = tmp_path / "token.conf"
    conf.write_text(f"[daemon]\ntoken_file = {token}\n")
    d = d_factory(*extra, "--config", str(conf), **kw)
    d.headers = {"Authorization": "Bearer t0ken-for-tests"}
    return d


class Daemon:
    """One heatcurved process on a free loopback port, with its own state dir.

    As root, heatcurved refuses runs with a load unless allowed ([runs] allow_root); the suite
    runs as root in containers, so the daemons it starts allow it (--allow-root, which holds
    across reloads of a test's own config file). allow_root=False starts one that does not."""

    def __init__(self, args, state_dir, env=None, allow_root=None):
        args = list(args)
        if allow_root is None:
            allow_root = os.geteuid() == 0
        if allow_root and "--allow-root" not in args:
            args.append("--allow-root")
        self.state_dir = state_dir
        self.headers = {}               # sent with every request (a token, for example)
        self.log_path = state_dir.rstrip("/") + ".log"     # outside: tests fill or freeze the state dir
        full_env = dict(os.environ)
        full_env.pop("JOURNAL_STREAM", None)
        full_env.pop("NOTIFY_SOCKET", None)
        full_env.update(env or {})
        if "--listen" in args:                   # the test chose the address
            host, _, port = args[args.index("--listen") + 1].rpartition(":")
            self.port = int(port)
            host = host if host not in ("", "localhost") else "127.0.0.1"  # all addresses, loopback
            self._start(host, [], args, full_env)
            return
        # A free port can be taken by another test process before the daemon binds it
        # (meson runs the test files in parallel): then another one.
        for attempt in range(PORT_ATTEMPTS):
            self.port = free_port()
            try:
                self._start("127.0.0.1", ["--listen", f"127.0.0.1:{self.port}"], args, full_env)
                return
            except RuntimeError:
                if attempt + 1 == PORT_ATTEMPTS or "Address already in use" not in self.logs():
                    raise
                self.log.close()

    def _start(self, host, listen, args, env):
        self.url = f"http://{host}:{self.port}"
        self.log = open(self.log_path, "w+")
        self.proc = subprocess.Popen(
            [HEATCURVED, *listen, "--state-dir", self.state_dir] + args,
            stdout=self.log, stderr=subprocess.STDOUT, env=env)
        self.wait_ready()

    def wait_ready(self, timeout=15):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"heatcurved exited with {self.proc.returncode}:\n{self.logs()}")
            try:
                status, _ = self.get("/api/v1/status")
                if status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"heatcurved not ready after {timeout}s:\n{self.logs()}")

    def logs(self):
        if not self.log.closed:
            self.log.flush()
        with open(self.log_path) as f:
            return f.read()

    def request(self, method, path, body=None, headers=None, timeout=10):
        data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
        headers = {**self.headers, **(headers or {})}
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                raw = resp.read()
                return resp.status, self._decode(raw, resp.headers.get("Content-Type", ""))
        except urllib.error.HTTPError as e:
            raw = e.read()
            return e.code, self._decode(raw, e.headers.get("Content-Type", ""))

    @staticmethod
    def _decode(raw, ctype):
        if "json" in ctype and raw:
            return json.loads(raw)
        return raw.decode(errors="replace")

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def wait_for(self, predicate, timeout=10, interval=0.1, what="condition"):
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            try:
                last = predicate()
            except (OSError, http.client.HTTPException) as e:
                last = e         # not answering yet counts as "not yet"
            else:
                if last:
                    return last
            time.sleep(interval)
        raise AssertionError(f"timed out waiting for {what}; last={last!r}\nlog:\n{self.logs()}")

    def signal(self, sig):
        self.proc.send_signal(sig)

    def stop(self, timeout=10):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError("heatcurved did not stop on SIGTERM within %ss" % timeout)
        self.log.close()
        return self.proc.returncode


@pytest.fixture
def heatcurved_bin():
    if not HEATCURVED or not os.access(HEATCURVED, os.X_OK):
        pytest.skip("HEATCURVED is not set to the built binary (run through meson test)")
    return HEATCURVED


@pytest.fixture
def start_daemon(heatcurved_bin, tmp_path):
    """start_daemon(*args, state_dir=None, env=None, allow_root=None) -> Daemon; all stopped at
    teardown. allow_root: see Daemon."""
    started = []

    def start(*args, state_dir=None, env=None, allow_root=None):
        sd = state_dir or str(tmp_path / f"state{len(started)}")
        os.makedirs(sd, exist_ok=True)
        d = Daemon(args, sd, env, allow_root)
        started.append(d)
        return d

    yield start
    problems = []
    for d in started:
        rc = d.stop()
        log = d.logs()
        # a clean exit on SIGTERM (SIGKILL only when a test sent it), and no
        # sanitizer report: leaks and UB show up here under make check-san
        if rc not in (0, -signal.SIGKILL):
            problems.append(f"heatcurved exited with {rc}")
        for needle in ("runtime error:", "AddressSanitizer", "LeakSanitizer"):
            if needle in log:
                problems.append(f"{needle} in the log:\n{log}")
    assert not problems, "\n".join(problems)


@pytest.fixture
def fixture_copy(tmp_path):
    """A writable copy of a fixture tree (symlinks kept), for tests that change sensor files."""
    def copy(board):
        dst = tmp_path / ("tree-" + board)
        shutil.copytree(fixture_path(board), dst, symlinks=True)
        return str(dst)
    return copy


@pytest.fixture
def burner():
    """Two busy processes, like `stress --cpu 2`; killed at teardown whatever happens."""
    procs = []

    def start():
        cmd = ["stress", "--cpu", "2"] if shutil.which("stress") else \
            ["sh", "-c", "while :; do :; done & while :; do :; done"]
        procs.append(subprocess.Popen(cmd, start_new_session=True,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

    def stop():
        import os, signal
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
    start.stop = stop
    yield start
    stop()


def import_busy_copy(d, run_id, label="busy"):
    """Run run_id exported and imported again as label, its samples showing 60 % load from other
    programs throughout (a cron job, apt): a disturbed run. The imported run's document."""
    _, doc = d.get(f"/api/v1/runs/{run_id}/export")
    header, *lines = doc["samples_csv"].splitlines(keepends=True)
    col = header.rstrip("\n").split(",").index("load")
    busy = []
    for line in lines:
        cells = line.rstrip("\n").split(",")
        cells[col] = "0.6"
        busy.append(",".join(cells) + "\n")
    doc["samples_csv"], doc["run"]["label"] = header + "".join(busy), label
    status, imported = d.request("POST", "/api/v1/runs/import", doc)
    assert status == 201 and imported["quality"]["ok"] is False, imported.get("quality")
    return imported


def promtool_check_metrics(text):
    """promtool check metrics on a /metrics exposition, when promtool is installed (make deps installs it)."""
    if shutil.which("promtool"):
        r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stdout + r.stderr
