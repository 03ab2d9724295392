"""The daemon's bearer token: how the file is read and which Authorization headers match."""
import os

import pytest

from conftest import fixture_path, free_port



def start_with_token(start_daemon, tmp_path, content):
    token = tmp_path / "token"
    token.write_bytes(content)
    conf = tmp_path / "c.conf"
    conf.write_text(f"[daemon]\ntoken_file = {token}\n")
    root = fixture_path("rpi4")
    return start_daemon("--sysfs-root", root, "--procfs-root", root, "--interval", "100ms", "--config", str(conf))


def stop_status(d, header):
    status, _ = d.request("POST", "/api/v1/runs/99/stop", headers={"Authorization": header} if header else {})
    return status        # 404 (no run 99) once authorized, 401 when not


def test_scheme_case_spaces_and_trailing_whitespace(start_daemon, tmp_path):
    d = start_with_token(start_daemon, tmp_path, b"s3cret \t\n\n")
    assert stop_status(d, "Bearer s3cret") == 404
    assert stop_status(d, "bearer s3cret") == 404
    assert stop_status(d, "BEARER   s3cret") == 404
    assert stop_status(d, "Bearer s3cret ") == 404
    assert stop_status(d, "Bearer s3cre") == 401
    assert stop_status(d, "Bearer s3cret \t") == 404
    assert stop_status(d, "Basic s3cret") == 401
    assert stop_status(d, None) == 401


def test_token_file_over_255_bytes_is_refused(heatcurved_bin, tmp_path):
    import subprocess
    token = tmp_path / "token"
    token.write_bytes(b"x" * 300 + b"\n")
    conf = tmp_path / "c.conf"
    conf.write_text(f"[daemon]\ntoken_file = {token}\n")
    root = fixture_path("rpi4")
    r = subprocess.run([heatcurved_bin, "--sysfs-root", root, "--procfs-root", root, "--config", str(conf),
                        "--state-dir", str(tmp_path / "state"), "--listen", f"127.0.0.1:{free_port()}"],
                       capture_output=True, text=True, timeout=5)
    assert r.returncode != 0 and "255" in r.stderr, r.stderr
