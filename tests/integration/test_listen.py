"""listen: every accepted form starts; an address that is not up yet is bound anyway (IP_FREEBIND).

Addresses used: loopback, and 198.51.100.1 on the loopback of a network
namespace this test creates (unshare --net), never one of the host's."""
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import free_port, HEATCURVED


def http_status(host, port, path="/api/v1/status", timeout=5):
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as s:
        s.settimeout(timeout)
        s.connect((host, port))
        s.sendall(f"GET {path} HTTP/1.0\r\nHost: x\r\n\r\n".encode())
        return int(s.recv(64).split()[1])


def has_ipv6_loopback():
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


def test_all_addresses_form_listens_on_ipv4_and_ipv6(start_daemon):
    port = free_port()
    d = start_daemon("--simulate", "--listen", f":{port}")
    assert http_status("127.0.0.1", port) == 200
    if has_ipv6_loopback():
        assert http_status("::1", port) == 200
    assert f"Listening on http://[::]:{port}/" in d.logs()


def test_all_addresses_in_the_config_file(start_daemon, tmp_path):
    port = free_port()
    conf = tmp_path / "all.conf"
    conf.write_text(f"[daemon]\nlisten = :{port}\n")
    assert subprocess.run([HEATCURVED, "--check-config", "--config", str(conf)]).returncode == 0
    # Daemon() needs to know the address: give it as a flag too, same value.
    start_daemon("--simulate", "--config", str(conf), "--listen", f":{port}")
    assert http_status("127.0.0.1", port) == 200


def test_localhost_means_ipv4_loopback(start_daemon):
    port = free_port()
    d = start_daemon("--simulate", "--listen", f"localhost:{port}")
    assert http_status("127.0.0.1", port) == 200
    assert f"Listening on http://127.0.0.1:{port}/" in d.logs()


# Run inside a fresh network namespace whose loopback is up but has no
# 198.51.100.1 yet (as a board before its DHCP lease); the daemon must start
# anyway and answer once the address is added. (With loopback down, a new
# namespace lets any address be bound: that would test nothing.)
FREEBIND_SCRIPT = textwrap.dedent(r"""
    import os, socket, subprocess, sys, time
    heatcurved, state, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    log = open(state + ".log", "w+")
    p = subprocess.Popen([heatcurved, "--simulate", "--state-dir", state,
                          "--listen", f"198.51.100.1:{port}"], stdout=log, stderr=subprocess.STDOUT)
    def logs():
        log.flush(); log.seek(0); return log.read()
    try:
        deadline = time.monotonic() + 15
        while "Listening on" not in logs():
            if p.poll() is not None:
                sys.exit(f"exited with {p.returncode} before the address was up:\n{logs()}")
            if time.monotonic() > deadline:
                sys.exit("no 'Listening on' within 15 s:\n" + logs())
            time.sleep(0.05)
        subprocess.run(["ip", "addr", "add", "198.51.100.1/24", "dev", "lo"], check=True)
        for attempt in range(50):
            try:
                with socket.create_connection(("198.51.100.1", port), timeout=2) as s:
                    s.sendall(b"GET /api/v1/status HTTP/1.0\r\n\r\n")
                    status = s.recv(64).split()[1]
                break
            except OSError as e:
                last = e
                time.sleep(0.1)
        else:
            sys.exit(f"no answer on 198.51.100.1:{port}: {last}\n{logs()}")
        print("status", status.decode())
    finally:
        p.terminate()
        p.wait(10)
""")


def test_address_not_up_yet_is_bound_and_answers_once_up(heatcurved_bin, tmp_path):
    unshare = shutil.which("unshare")
    if os.geteuid() != 0 or not unshare or not shutil.which("ip"):
        pytest.skip("needs root, unshare and ip to make a network namespace")
    if subprocess.run([unshare, "--net", "true"], capture_output=True).returncode != 0:
        pytest.skip("cannot create a network namespace here (unshare --net failed)")
    script = tmp_path / "freebind.py"
    script.write_text(FREEBIND_SCRIPT)
    r = subprocess.run([unshare, "--net", sys.executable, str(script), heatcurved_bin,
                        str(tmp_path / "state"), "8080"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "status 200" in r.stdout


def test_socket_activation_wins_and_says_so(heatcurved_bin, tmp_path):
    activate = shutil.which("systemd-socket-activate")
    if not activate:
        pytest.skip("systemd-socket-activate is not installed")
    sock_port, conf_port = free_port(), free_port()
    log = open(tmp_path / "log", "w+")
    env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "JOURNAL_STREAM")}
    # the activator passes on only the variables it is given (-E)
    boards = "HEATCURVE_BOARDS_DIR=" + os.environ["HEATCURVE_BOARDS_DIR"]
    p = subprocess.Popen([activate, "-l", f"127.0.0.1:{sock_port}", "-E", boards, heatcurved_bin, "--simulate",
                          "--state-dir", str(tmp_path / "s"), "--listen", f"127.0.0.1:{conf_port}"],
                         stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        # The first connection starts the daemon (systemd-socket-activate
        # execs it with the socket) and is answered. Refused only until the
        # activator has bound its socket.
        status = None
        for _ in range(100):
            try:
                status = http_status("127.0.0.1", sock_port, timeout=15)
                break
            except ConnectionRefusedError:
                assert p.poll() is None, open(tmp_path / "log").read()
                time.sleep(0.05)
        assert status == 200
        log.flush()
        text = open(tmp_path / "log").read()
        assert f"Listening on http://127.0.0.1:{sock_port}/ (socket activation" in text, text
        assert f"listen = 127.0.0.1:{conf_port} is not used" in text, text
        with pytest.raises(OSError):
            http_status("127.0.0.1", conf_port, timeout=2)
    finally:
        p.terminate()
        p.wait(10)
