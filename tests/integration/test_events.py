"""GET /api/v1/events through the real heatcurved: samples each tick, run and phase events,
Last-Event-ID, the client limit and its share per address, and fifty clients of which one never reads.

Addresses used: loopback, and 198.51.100.2 and .3 on the loopback of a network namespace
this test creates (unshare --net), never one of the host's."""
import concurrent.futures
import json
import os
import selectors
import socket
import shutil
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import fixture_path, sanitized, start_tree, status_kib

FAST = ["--simulate", "--interval", "100ms"]


class Stream:
    """One server-sent events client on a raw socket, so a test can also stall it."""

    def __init__(self, d, last_event_id=None, rcvbuf=None, path="/api/v1/events"):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(10)
        self.sock.connect(("127.0.0.1", d.port))
        extra = f"Last-Event-ID: {last_event_id}\r\n" if last_event_id is not None else ""
        self.sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n{extra}\r\n".encode())
        self.buf = b""
        self.status, self.headers = None, {}
        self.retry = None
        self.comments = 0
        self.events = []            # (id, type, data) in arrival order
        self._chunk_left = None     # bytes left of the current chunk; None between chunks
        self.body = b""             # de-chunked body not yet parsed into events

    def fileno(self):
        return self.sock.fileno()

    def read_head(self):
        while b"\r\n\r\n" not in self.buf:
            data = self.sock.recv(65536)
            assert data, "connection closed before the headers"
            self.buf += data
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode().split("\r\n")
        self.status = int(lines[0].split()[1])
        self.headers = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
        return self.status

    def feed(self):
        """Reads what the socket has; False once the server closed it."""
        try:
            data = self.sock.recv(65536)
        except (BlockingIOError, socket.timeout):
            return True
        except ConnectionResetError:
            return False
        if not data:
            return False
        self.buf += data
        self._dechunk()
        self._parse()
        return True

    def _dechunk(self):
        while True:
            if self._chunk_left is None:
                if b"\r\n" not in self.buf:
                    return
                size, self.buf = self.buf.split(b"\r\n", 1)
                if size == b"":
                    continue            # the CRLF after a chunk
                self._chunk_left = int(size.split(b";")[0], 16)
            take = self.buf[:self._chunk_left]
            self.body += take
            self.buf = self.buf[len(take):]
            self._chunk_left -= len(take)
            if self._chunk_left:
                return
            self._chunk_left = None

    def _parse(self):
        while b"\n\n" in self.body:
            block, self.body = self.body.split(b"\n\n", 1)
            ev = {"id": None, "event": "message", "data": []}
            for line in block.decode().split("\n"):
                if line.startswith(":"):
                    self.comments += 1
                    continue
                field, _, value = line.partition(": ")
                if field == "retry":
                    self.retry = int(value)
                elif field == "data":
                    ev["data"].append(value)
                elif field in ("id", "event"):
                    ev[field] = value
            if ev["data"]:
                self.events.append((int(ev["id"]), ev["event"], json.loads("\n".join(ev["data"]))))

    def read_until(self, predicate, timeout=15, what="events"):
        deadline = time.monotonic() + timeout
        self.sock.settimeout(0.5)
        while time.monotonic() < deadline:
            if predicate(self.events):
                return self.events
            assert self.feed(), f"stream closed while waiting for {what}; got {self.events[-3:]}"
        raise AssertionError(f"timed out waiting for {what}; got {[(i, t) for i, t, _ in self.events[-5:]]}")

    def close(self):
        self.sock.close()


def samples(events):
    return [e for e in events if e[1] == "sample"]


def test_stream_sends_each_tick_the_sensors_document(start_daemon):
    d = start_daemon(*FAST)
    s = Stream(d)
    assert s.read_head() == 200
    assert s.headers["content-type"].startswith("text/event-stream")
    assert s.headers["cache-control"] == "no-store"
    s.read_until(lambda ev: len(samples(ev)) >= 5, what="five samples")
    assert s.retry == 2000
    got = samples(s.events)
    ids = [i for i, _, _ in got]
    assert ids == sorted(set(ids)), f"ids not increasing: {ids}"
    times = [doc["time_ms"] for _, _, doc in got]
    _, doc = d.get("/api/v1/sensors")
    # the same document as GET /api/v1/sensors: same keys, same sensors
    assert set(got[-1][2]) == set(doc), (set(got[-1][2]) ^ set(doc))
    assert [t["id"] for t in got[-1][2]["temperatures"]] == [t["id"] for t in doc["temperatures"]]
    # one sample per tick at most: consecutive samples come from different ticks
    assert times == sorted(set(times)), f"a tick sent twice: {times}"
    _, st = d.get("/api/v1/status")
    assert st["events"]["clients"] == 1 and st["events"]["last_id"] >= ids[-1]
    s.close()


def test_sysfs_bytes_that_are_not_utf8_go_out_as_valid_json(start_daemon, tmp_path):
    """A hwmon label and a board model with bytes that are not UTF-8 (0xFF) reach /api/v1/sensors
    and the sample events as U+FFFD: both parse strictly, the rest of the text kept."""
    root = tmp_path / "tree"
    shutil.copytree(fixture_path("x86-laptop-coretemp"), root, symlinks=True)
    label = root / "sys/devices/platform/coretemp.0/hwmon/hwmon1/temp1_label"
    label.write_bytes(b"Package \xff\xfe id 0\n")
    d = start_tree(start_daemon, str(root))
    _, doc = d.get("/api/v1/sensors")             # json.loads of the bytes: strict UTF-8
    labels = [t["label"] for t in doc["temperatures"] if t.get("label")]
    assert "Package \ufffd\ufffd id 0" in labels, labels
    s = Stream(d)
    assert s.read_head() == 200
    got = s.read_until(lambda ev: samples(ev), what="a sample")       # decoded strictly too
    assert "Package \ufffd\ufffd id 0" in [t.get("label") for t in samples(got)[-1][2]["temperatures"]]
    s.close()


def test_last_event_id_resumes_where_the_client_left(start_daemon):
    d = start_daemon(*FAST)
    s = Stream(d)
    s.read_head()
    s.read_until(lambda ev: len(ev) >= 3)
    seen = s.events[-1][0]
    s.close()
    time.sleep(1.0)                     # ten ticks go by while it is away
    again = Stream(d, last_event_id=seen)
    assert again.read_head() == 200
    again.read_until(lambda ev: len(ev) >= 5)
    ids = [i for i, _, _ in again.events]
    assert ids[0] == seen + 1, f"resumed at {ids[0]}, expected {seen + 1}"
    assert ids == list(range(seen + 1, seen + 1 + len(ids))), f"a gap: {ids}"
    again.close()

    # ids it cannot know (another daemon's, garbage): a fresh start at the newest sample
    for bogus in ("999999999", "abc", "-1", ""):
        fresh = Stream(d, last_event_id=bogus)
        assert fresh.read_head() == 200
        fresh.read_until(lambda ev: len(ev) >= 1)
        first = fresh.events[0]
        assert first[1] == "sample" and first[0] > seen, (bogus, first[:2])
        fresh.close()


def test_run_and_phase_events_follow_a_run(start_daemon):
    d = start_daemon(*FAST)
    s = Stream(d)
    s.read_head()
    s.read_until(lambda ev: len(ev) >= 1)
    status, run = d.request("POST", "/api/v1/runs", {
        "label": "sse", "phases": [{"kind": "idle", "duration": "1s"}, {"kind": "cooldown", "duration": "1s"}]})
    assert status == 201, run
    rid = run["id"]
    s.read_until(lambda ev: any(t == "run" and x["id"] == rid and x["state"] == "finished" for _, t, x in ev),
                 timeout=20, what="the run's end")
    told = [(t, x) for _, t, x in s.events if t in ("run", "phase")]
    assert told[0] == ("run", {"id": rid, "label": "sse", "state": "running"}), told
    phases = [x["phase"] for t, x in told if t == "phase"]
    assert phases == ["idle", "cooldown"], told
    assert all(x["run"] == rid for t, x in told if t == "phase")
    assert told[-1][0] == "run" and told[-1][1]["state"] == "finished"
    # a stop is told too, with the run's final state
    status, run = d.request("POST", "/api/v1/runs", {"phases": [{"kind": "idle", "duration": "1h"}]})
    assert status == 201, run
    assert d.request("POST", f"/api/v1/runs/{run['id']}/stop")[0] in (200, 202)
    s.read_until(lambda ev: any(t == "run" and x["id"] == run["id"] and x["state"] != "running"
                                for _, t, x in ev), what="the stopped run's end")
    end = [x for _, t, x in s.events if t == "run" and x["id"] == run["id"]][-1]
    assert end["state"] in ("aborted", "finished")
    s.close()


def test_alert_events_tell_the_active_set(start_daemon, tmp_path):
    conf = tmp_path / "alert.conf"
    conf.write_text("[simulate]\nambient = 30\nrise = 30\ntau = 1s\nquantize = no\n"
                    "[alert hot]\nsensor = hottest\nwarn = 20\ncrit = 150\nfor = 0s\n")
    d = start_daemon("--config", str(conf), *FAST)
    s = Stream(d)
    s.read_head()
    s.read_until(lambda ev: any(t == "alert" and x["active"] for _, t, x in ev), what="an active alert")
    active = [x for _, t, x in s.events if t == "alert" and x["active"]][-1]["active"]
    _, st = d.get("/api/v1/status")
    assert active == st["active_alerts"]
    s.close()


def test_method_arguments_and_head(start_daemon):
    d = start_daemon(*FAST)
    status, body = d.request("POST", "/api/v1/events", b"")
    assert status == 405 and body["error"]["code"] == "method_not_allowed"
    status, body = d.get("/api/v1/events?since=3")
    assert status == 400 and "since" in body["error"]["message"]
    status, body = d.request("HEAD", "/api/v1/events")
    assert status == 200


def test_client_limit_refuses_clearly_and_frees_slots(start_daemon, tmp_path):
    conf = tmp_path / "limit.conf"
    conf.write_text("[daemon]\nevent_clients = 2\n")
    d = start_daemon("--config", str(conf), *FAST)
    a, b = Stream(d), Stream(d)
    assert a.read_head() == 200 and b.read_head() == 200
    status, body = d.get("/api/v1/events")
    assert status == 503 and body["error"]["code"] == "too_many_clients"
    assert "event_clients" in body["error"]["message"]
    a.close()
    # the daemon notices the closed stream at its next write and frees the slot
    d.wait_for(lambda: d.get("/api/v1/status")[1]["events"]["clients"] == 1, timeout=5, what="a freed slot")
    c = Stream(d)
    assert c.read_head() == 200
    _, st = d.get("/api/v1/status")
    assert st["events"]["refused"] == 1
    b.close()
    c.close()


def test_event_clients_must_be_a_whole_number(heatcurved_bin, tmp_path):
    for value, words in (("2.5", "not a whole number"), ("101", "out of range"), ("many", "not a whole number")):
        conf = tmp_path / "bad.conf"
        conf.write_text(f"[daemon]\nevent_clients = {value}\n")
        p = subprocess.run([heatcurved_bin, "--config", str(conf), "--check-config"],
                           capture_output=True, text=True, timeout=10)
        said = p.stdout + p.stderr
        assert p.returncode != 0 and words in said and "event_clients" in said, said


def test_zero_clients_turns_the_stream_off(start_daemon, tmp_path):
    conf = tmp_path / "off.conf"
    conf.write_text("[daemon]\nevent_clients = 0\n")
    d = start_daemon("--config", str(conf), *FAST)
    status, body = d.get("/api/v1/events")
    assert status == 503


def test_streams_open_do_not_hold_up_a_clean_stop(start_daemon):
    d = start_daemon(*FAST)
    streams = [Stream(d) for _ in range(3)]
    for s in streams:
        s.read_head()
        s.read_until(lambda ev: len(ev) >= 1)
    assert d.stop() == 0
    for s in streams:
        s.sock.settimeout(5)
        while s.feed():
            pass
        s.close()


@pytest.mark.slow       # a minute of fifty clients, the soak of the event stream
def test_fifty_clients_one_stalled(start_daemon, tmp_path):
    """Every live client gets every event; the one that never reads is dropped; memory stays put."""
    conf = tmp_path / "many.conf"
    conf.write_text("[daemon]\nevent_clients = 60\n")
    d = start_daemon("--config", str(conf), *FAST)
    stalled = Stream(d, rcvbuf=4096)    # sends its request, then never reads again
    live = [Stream(d) for _ in range(49)]
    for s in live:
        s.read_head()
        s.sock.setblocking(False)
    sel = selectors.DefaultSelector()
    for s in live:
        sel.register(s, selectors.EVENT_READ)
    rss_start = None
    deadline = time.monotonic() + 60   # a minute, as a dashboard left open on fifty desks
    while time.monotonic() < deadline:
        for key, _ in sel.select(timeout=0.2):
            assert key.fileobj.feed(), "the daemon closed a client that reads"
        if rss_start is None and time.monotonic() > deadline - 50:
            rss_start = status_kib(d.proc.pid, "VmRSS")
    rss_end = status_kib(d.proc.pid, "VmRSS")
    _, st = d.get("/api/v1/status")
    assert st["events"]["dropped"] == 1, st["events"]
    assert st["events"]["clients"] == 49, st["events"]
    last = st["events"]["last_id"]
    for s in live:
        ids = [i for i, _, _ in s.events]
        assert len(ids) > 400, f"only {len(ids)} events in 60 s at 10 ticks/s"
        # every event from its first to the newest, no gap, none twice
        assert ids == list(range(ids[0], ids[0] + len(ids))), "a gap or a repeat"
        assert ids[-1] >= last - 3
    # a ring and fifty positions: no growth with the stream (a few pages of slack); under
    # AddressSanitizer freed memory sits in its quarantine, so RSS says nothing there
    if not sanitized(d.proc.pid):
        assert rss_end - rss_start < 4096, f"RSS grew from {rss_start} to {rss_end} KiB"
    stalled.close()
    for s in live:
        s.close()


def closed_within(sock, timeout):
    """True when the server closes sock within timeout s (what it sent before is read and dropped)."""
    deadline = time.monotonic() + timeout
    sock.settimeout(0.5)
    while time.monotonic() < deadline:
        try:
            if sock.recv(65536) == b"":
                return True
        except socket.timeout:
            continue
        except ConnectionResetError:
            return True
    return False


def test_clients_that_never_read_give_way(start_daemon, tmp_path):
    # Clients that connect and never read used to hold their slots until they
    # fell 64 events behind (a minute and more at the default interval), and
    # a fresh client got 503 all along. A stalled one now gives way.
    conf = tmp_path / "four.conf"
    conf.write_text("[daemon]\nevent_clients = 4\n")
    d = start_daemon("--config", str(conf), *FAST)
    stalled = [Stream(d, rcvbuf=4096) for _ in range(3)]
    reader = Stream(d)
    assert reader.read_head() == 200
    # their sockets fill within a second, then stay full for the 3 s that make them stalled
    t0 = time.monotonic()
    reader.read_until(lambda ev: time.monotonic() - t0 > 4.5, timeout=10, what="4.5 s of events")
    fresh = Stream(d)
    assert fresh.read_head() == 200
    fresh.read_until(lambda ev: len(samples(ev)) >= 2, what="samples for the newcomer")
    # the three watched side by side: one after the other, the two that stay would be watched
    # for ten seconds more, enough for a full socket to fall EVENTS_RING events behind (a close
    # for another reason) once the sample events are larger than its buffers can hold 90 of
    with concurrent.futures.ThreadPoolExecutor(len(stalled)) as pool:
        assert sum(pool.map(lambda s: closed_within(s.sock, 5), stalled)) == 1
    n = len(reader.events)
    reader.read_until(lambda ev: len(ev) > n + 2, what="events for the client that reads")
    _, st = d.get("/api/v1/status")
    assert st["events"]["dropped"] == 0 and st["events"]["clients"] == 4, st["events"]
    for s in stalled + [reader, fresh]:
        s.close()


EVENTS_SHARE_SCRIPT = textwrap.dedent(r"""
    import json, select, socket, subprocess, sys, time
    heatcurved, state, conf = sys.argv[1], sys.argv[2], sys.argv[3]
    PORT, A, B = 8080, "198.51.100.2", "198.51.100.3"
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    for addr in (A, B):
        subprocess.run(["ip", "addr", "add", addr + "/32", "dev", "lo"], check=True)
    log = open(state + ".log", "w+")
    p = subprocess.Popen([heatcurved, "--simulate", "--interval", "100ms", "--state-dir", state,
                          "--config", conf, "--listen", f":{PORT}"], stdout=log, stderr=subprocess.STDOUT)

    def stream(src, rcvbuf=None):
        s = socket.socket()
        if rcvbuf:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        s.bind((src, 0))
        s.settimeout(5)
        s.connect((src, PORT))
        s.sendall(b"GET /api/v1/events HTTP/1.1\r\nHost: x\r\n\r\n")
        head = b""
        while b"\r\n\r\n" not in head:
            more = s.recv(4096)
            if not more:
                break
            head += more
        return s, int(head.split()[1]) if head.startswith(b"HTTP/") else None

    def drain(socks, seconds):
        # reads what the readers get for `seconds`; returns those the server closed
        closed, deadline = set(), time.monotonic() + seconds
        while time.monotonic() < deadline:
            ready, _, _ = select.select([s for s in socks if s not in closed], [], [], 0.1)
            for s in ready:
                try:
                    if s.recv(65536) == b"":
                        closed.add(s)
                except OSError:
                    closed.add(s)
        return closed

    def closed_within(s, seconds):
        deadline = time.monotonic() + seconds
        s.settimeout(0.5)
        while time.monotonic() < deadline:
            try:
                if s.recv(65536) == b"":
                    return True
            except socket.timeout:
                continue
            except OSError:
                return True
        return False

    out = {}
    try:
        for attempt in range(150):
            try:
                with socket.create_connection(("127.0.0.1", PORT), timeout=2) as s:
                    s.sendall(b"GET /api/v1/status HTTP/1.0\r\n\r\n")
                    if s.recv(64).split()[1] == b"200":
                        break
            except (OSError, IndexError):
                pass
            time.sleep(0.1)
        # A: one that reads, one that never does, and one more than its share
        a_reader, s1 = stream(A)
        a_stalled, s2 = stream(A, rcvbuf=4096)
        a_third, s3 = stream(A)
        out["a"] = [s1, s2, s3]
        b = [stream(B) for _ in range(2)]
        out["b"] = [st for _, st in b]
        readers = [a_reader] + [s for s, _ in b]
        out["closed_readers"] = len(drain(readers, 2.0))
        # every slot taken: loopback takes the slot of A's client that does not read
        lo, out["lo"] = stream("127.0.0.1")
        out["a_stalled_closed"] = closed_within(a_stalled, 5)
        out["closed_readers"] += len(drain(readers + [lo], 1.0))
        # B, at its share, does not take anyone's slot
        b3, out["b_third"] = stream(B)
        out["closed_readers"] += len(drain(readers + [lo], 1.0))
    finally:
        p.terminate()
        out["exit"] = p.wait(10)
        log.seek(0)
        out["sanitizer"] = [w for w in ("runtime error:", "AddressSanitizer", "LeakSanitizer") if w in log.read()]
    print(json.dumps(out))
""")


def test_one_address_cannot_hold_every_stream(heatcurved_bin, tmp_path):
    # One address could open every stream, and every other dashboard got 503.
    # Now an address holds at most half of them, and a newcomer at the limit
    # takes the slot of the client (of the address holding the most) that
    # has not drained for the longest.
    unshare = shutil.which("unshare")
    if os.geteuid() != 0 or not unshare or not shutil.which("ip"):
        pytest.skip("needs root, unshare and ip to make a network namespace")
    if subprocess.run([unshare, "--net", "true"], capture_output=True).returncode != 0:
        pytest.skip("cannot create a network namespace here (unshare --net failed)")
    conf = tmp_path / "four.conf"
    conf.write_text("[daemon]\nevent_clients = 4\n")
    script = tmp_path / "share.py"
    script.write_text(EVENTS_SHARE_SCRIPT)
    r = subprocess.run([unshare, "--net", sys.executable, str(script), heatcurved_bin, str(tmp_path / "state"),
                        str(conf)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["exit"] == 0 and not out["sanitizer"], out
    assert out["a"] == [200, 200, 503], out
    assert out["b"] == [200, 200], out
    assert out["lo"] == 200 and out["a_stalled_closed"], out
    assert out["b_third"] == 503, out
    assert out["closed_readers"] == 0, out
