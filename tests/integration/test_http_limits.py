"""The HTTP transport under abuse: slow clients, large and ambiguous bodies, bytes that are not UTF-8.

Addresses used: loopback, and 2001:db8:1::1-8 and 2001:db8:2::1 on the loopback of a network
namespace this test creates (unshare --net), never one of the host's."""
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import fixture_path


def start_on(start_daemon, board="rpi4", *extra):
    root = fixture_path(board)
    return start_daemon("--sysfs-root", root, "--procfs-root", root, "--interval", "100ms", *extra)


def read_response(sock, timeout=5.0):
    """Everything the server sends until it closes or goes quiet for `timeout` s."""
    sock.settimeout(timeout)
    chunks = []
    try:
        while len(chunks) < 1000:
            c = sock.recv(65536)
            if not c:
                break
            chunks.append(c)
    except (ConnectionResetError, socket.timeout):
        pass
    return b"".join(chunks)


def status_of(resp):
    return int(resp.split(b" ", 2)[1]) if resp.startswith(b"HTTP/1.") else None


def body_of(resp):
    return resp.split(b"\r\n\r\n", 1)[1]


def closed_by_server(sock, send=b"", timeout=5.0):
    """True when the server closes the connection within timeout s (while we keep sending `send`)."""
    sock.settimeout(0.2)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if send:
                sock.sendall(send)
            if sock.recv(65536) == b"":
                return True
        except socket.timeout:
            continue
        except (BrokenPipeError, ConnectionResetError):
            return True
    return False


@pytest.mark.slow       # waits out the request deadline, 10 s
def test_slow_clients_cannot_hold_every_slot(start_daemon):
    # 128 clients each sending one header byte every 2 s (MHD's idle timeout
    # restarts on every byte) used to fill every slot for ever: fresh clients
    # got no answer at all. Each request now has a deadline for its headers.
    d = start_on(start_daemon)
    slow = []
    for _ in range(128):
        s = socket.create_connection(("127.0.0.1", d.port), timeout=5)
        s.sendall(b"G")
        slow.append(s)
    stop = threading.Event()

    def trickle():
        deadline = time.monotonic() + 60
        while not stop.wait(2.0) and time.monotonic() < deadline:
            for s in slow:
                try:
                    s.sendall(b"E")
                except OSError:
                    pass
    t = threading.Thread(target=trickle)
    t.start()
    try:
        time.sleep(1.0)
        answers = []

        def fresh():
            try:
                with socket.create_connection(("127.0.0.1", d.port), timeout=30) as s:
                    s.sendall(b"GET /api/v1/status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    answers.append(status_of(read_response(s, timeout=30)))
            except OSError as e:
                answers.append(repr(e))
        clients = [threading.Thread(target=fresh) for _ in range(12)]
        t0 = time.monotonic()
        for c in clients:
            c.start()
        for c in clients:
            c.join(40)
        elapsed = time.monotonic() - t0
        assert answers.count(200) == 12, f"answers {answers} after {elapsed:.1f}s"
    finally:
        stop.set()
        t.join()
        for s in slow:
            s.close()
    assert d.get("/api/v1/status")[0] == 200


def test_large_content_length_refused_before_continue(start_daemon):
    d = start_on(start_daemon)
    for path in (b"/api/v1/runs", b"/api/v1/status"):
        with socket.create_connection(("127.0.0.1", d.port), timeout=5) as s:
            s.sendall(b"POST " + path + b" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 2000000\r\nExpect: 100-continue\r\n\r\n")
            s.settimeout(5)
            head = s.recv(65536)
            # the answer is the 413 itself, not "100 Continue" then silence
            assert status_of(head) == 413, head[:200]
            body = json.loads(body_of(read_response_rest(s, head)))
            assert body["error"]["code"] == "body_too_large"
            assert closed_by_server(s)


def read_response_rest(sock, head):
    """head plus the rest of a response that has a Content-Length."""
    while b"\r\n\r\n" not in head:
        more = sock.recv(65536)
        if not more:
            return head
        head += more
    headers, body = head.split(b"\r\n\r\n", 1)
    length = 0
    for line in headers.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        more = sock.recv(65536)
        if not more:
            break
        body += more
    return headers + b"\r\n\r\n" + body


def test_body_that_keeps_coming_is_answered_and_closed(start_daemon):
    d = start_on(start_daemon)
    # announced as 2 MB, sent without waiting for 100 Continue: 413 at once, then closed
    with socket.create_connection(("127.0.0.1", d.port), timeout=5) as s:
        s.sendall(b"POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n" + b"x" * 65536)
        s.settimeout(5)
        head = s.recv(65536)
        assert status_of(head) == 413, head[:200]
        assert closed_by_server(s, send=b"x" * 65536)
    # chunked, no length: past the cap the server stops reading and closes
    with socket.create_connection(("127.0.0.1", d.port), timeout=5) as s:
        s.sendall(b"POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b"10000\r\n" + b"x" * 65536 + b"\r\n"
        assert closed_by_server(s, send=chunk, timeout=15)
    assert d.get("/api/v1/status")[0] == 200


def test_two_different_content_lengths_are_refused(start_daemon):
    d = start_on(start_daemon)
    with socket.create_connection(("127.0.0.1", d.port), timeout=5) as s:
        s.sendall(b"POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 40\r\n\r\n{}")
        resp = read_response(s, timeout=5)
    assert status_of(resp) == 400, resp[:300]
    assert "Content-Length" in json.loads(body_of(resp))["error"]["message"]
    # the same length twice is one length (RFC 9110 8.6): not refused for that
    with socket.create_connection(("127.0.0.1", d.port), timeout=5) as s:
        s.sendall(b"POST /api/v1/status HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n"
                  b"Connection: close\r\n\r\n{}")
        resp = read_response(s, timeout=5)
    assert status_of(resp) == 405, resp[:300]


def test_invalid_utf8_in_url_is_not_echoed_raw(start_daemon):
    d = start_on(start_daemon)
    for target in (b"/api/v1/\xff\xfe%ff%c3", b"/api/v1/%c3%28x", b"/api/v1/history?points=%ff%fe",
                   b"/api/v1/history?zz%ff=1"):
        with socket.create_connection(("127.0.0.1", d.port), timeout=5) as s:
            s.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            resp = read_response(s, timeout=5)
        assert status_of(resp) in (400, 404), resp[:300]
        body = body_of(resp)
        text = body.decode("utf-8")     # strict: raises on invalid UTF-8
        assert json.loads(text)["error"]["message"]


def test_expect_without_a_body_is_answered_at_once(start_daemon):
    # libmicrohttpd sent "100 Continue" to a bodiless request with Expect and,
    # when more bytes followed, never the answer: the slot was held for 30 s.
    d = start_on(start_daemon)
    for length in (b"", b"Content-Length: 0\r\n"):
        with socket.create_connection(("127.0.0.1", d.port), timeout=5) as s:
            s.sendall(b"POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n" + length + b"\r\n\r\n")
            resp = read_response(s, timeout=5)
        assert status_of(resp) == 400, resp[:300]
        assert json.loads(body_of(resp))["error"]["message"]


def test_client_that_closed_its_side_is_let_go(start_daemon):
    # A client that shuts down its side after sending (HTTP/1.0 tools do) was
    # often not seen to be gone: its connection stayed open until a timeout.
    d = start_on(start_daemon)
    lingering = 0
    for _ in range(100):
        with socket.create_connection(("127.0.0.1", d.port), timeout=5) as s:
            s.sendall(b"GET /api/v1/status HTTP/1.1\r\nHost: x\r\n\r\n")
            s.shutdown(socket.SHUT_WR)
            t0 = time.monotonic()
            resp = read_response(s, timeout=3)
            assert status_of(resp) == 200
            lingering += time.monotonic() - t0 > 2.5
    assert lingering == 0, f"{lingering} of 100 connections stayed open after the answer"


# 200 slow connections from one host's /64 or from loopback against 30 whole
# requests from another host and 30 from loopback (bench/lockout.py says how).
LOCKOUT = Path(__file__).resolve().parents[2] / "bench" / "lockout.py"


@pytest.mark.slow       # 200 slow connections for a few seconds, twice
@pytest.mark.parametrize("mode", ["lan", "loopback"])
def test_slow_connections_from_one_host_lock_nobody_out(heatcurved_bin, tmp_path, mode):
    # With the daemon on [::], 200 slow connections from 8 addresses of one
    # /64 took every slot but loopback's: another host was served 0 of 30.
    # From loopback they took every slot: 7 of 30. Now a /64 counts as one
    # address, and when every slot is taken the slowest half-sent request
    # gives way to the newcomer.
    unshare = shutil.which("unshare")
    if os.geteuid() != 0 or not unshare or not shutil.which("ip"):
        pytest.skip("needs root, unshare and ip to make a network namespace")
    if subprocess.run([unshare, "--net", "true"], capture_output=True).returncode != 0:
        pytest.skip("cannot create a network namespace here (unshare --net failed)")
    r = subprocess.run([unshare, "--net", sys.executable, str(LOCKOUT), heatcurved_bin, str(tmp_path / "state"), mode],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["exit"] == 0 and not out["sanitizer"], out
    assert out["loopback"] == 30, out
    if mode == "lan":
        assert out["other"] == 30, out
