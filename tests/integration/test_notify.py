"""sd_notify as systemd sees it: a datagram socket in NOTIFY_SOCKET gets READY, STATUS, RELOADING, STOPPING."""
import os
import signal
import socket
import time

import pytest

from conftest import fixture_path


@pytest.fixture
def notify_socket(tmp_path):
    path = str(tmp_path / "notify.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    s.settimeout(0.2)
    yield path, s
    s.close()


def drain(sock, until, timeout=10):
    """Messages until one containing `until` arrives."""
    got = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            got.append(sock.recv(4096).decode())
        except socket.timeout:
            continue
        if until in got[-1]:
            return got
    raise AssertionError(f"no {until!r} in {got!r}")


def test_notify_protocol(start_daemon, notify_socket):
    path, sock = notify_socket
    root = fixture_path("rpi4")
    d = start_daemon("--sysfs-root", root, "--procfs-root", root, "--interval", "100ms",
                     env={"NOTIFY_SOCKET": path})
    msgs = drain(sock, "READY=1")
    # STATUS= is sent when it changes: the first one can come before READY=1
    if not any("STATUS=" in m for m in msgs):
        msgs += drain(sock, "STATUS=")
    status = [m for m in msgs if "STATUS=" in m][-1]
    assert "STATUS=Hottest thermal_zone0 48.7 C" in status
    status, run = d.request("POST", "/api/v1/runs", body={"phases": [{"kind": "idle", "duration": "5m"}]})
    assert status == 201
    assert "; run 1: idle" in [m for m in drain(sock, "run 1: idle")][-1]
    d.signal(signal.SIGHUP)
    msgs = drain(sock, "RELOADING=1")
    drain(sock, "READY=1")
    d.signal(signal.SIGTERM)
    drain(sock, "STOPPING=1")
    assert d.proc.wait(10) == 0
