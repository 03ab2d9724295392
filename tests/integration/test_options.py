"""heatcurved's command line: --once, --check-config, --version, usage and config errors."""
import json
import subprocess

import pytest

from conftest import fixture_path


def run(binary, *args, timeout=20):
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=timeout)


def test_version_and_help(heatcurved_bin):
    r = run(heatcurved_bin, "--version")
    assert r.returncode == 0 and r.stdout.startswith("heatcurved ")
    r = run(heatcurved_bin, "--help")
    assert r.returncode == 0 and "--simulate" in r.stdout and "--once" in r.stdout


def test_unknown_option_fails(heatcurved_bin):
    r = run(heatcurved_bin, "--frobnicate")
    assert r.returncode != 0 and "frobnicate" in r.stderr


@pytest.mark.parametrize("args,needle", [
    (["--interval", "5x"], "interval"),
    (["--interval", "50ms"], "interval"),
    (["--interval", "2h"], "interval"),
    (["--listen", "example.org:80"], "listen"),
    (["--listen", "localhost"], "listen"),
    (["--listen", "127.0.0.1:99999"], "listen"),
])
def test_bad_flags_are_named(heatcurved_bin, args, needle):
    r = run(heatcurved_bin, "--check-config", *args)
    assert r.returncode != 0
    assert needle in (r.stdout + r.stderr)


def test_check_config_names_file_line_key(heatcurved_bin, tmp_path):
    conf = tmp_path / "c.conf"
    conf.write_text("[daemon]\ninterval = 1s\n\n[simulate]\ntua = 60s\n")
    r = run(heatcurved_bin, "--check-config", "--config", str(conf))
    assert r.returncode != 0
    out = r.stdout + r.stderr
    assert f"{conf}:5" in out and "tua" in out
    conf.write_text("[daemon]\ninterval = 1s\n[simulate]\ntau = 60s\n")
    r = run(heatcurved_bin, "--check-config", "--config", str(conf))
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("text, where, words", [
    (b"[daemon]\ninterval = 1s\x00 the rest\n", 2, "a NUL character in the line"),
    (b"[daemon]\ninterval = 1s\n[daemon]\ninterval = 2s\n", 4, "[daemon] interval: set twice (first on line 2)"),
    (b"[alert a]\nsensor = hottest\nwarn = 70\nexec = /\n", 4, "exec: / is not an executable file"),
    (b"[alert a]\nsensor = hottest\nwarn = 70\nexec = /nonexistent/hook\n", 4, "No such file or directory"),
    (b"[alert a]\nsensor = hottest\nwarn = 70\nexec = /bin/true\nexec_timeout = 0s\n", 5, "exec_timeout"),
    (b"[alert a]\nsensor = hottest\nwarn = 70\nexec = /bin/true" + b" x" * 16 + b"\n", 4, "17 words"),
])
def test_check_config_refuses_what_it_would_drop(heatcurved_bin, tmp_path, text, where, words):
    """A config that would lose part of what it says is refused, with the file, line and key named."""
    conf = tmp_path / "c.conf"
    conf.write_bytes(text)
    r = run(heatcurved_bin, "--check-config", "--config", str(conf))
    out = r.stdout + r.stderr
    assert r.returncode != 0 and f"{conf}:{where}:" in out and words in out, out


def test_missing_config_file_is_an_error(heatcurved_bin, tmp_path):
    r = run(heatcurved_bin, "--check-config", "--config", str(tmp_path / "nope.conf"))
    assert r.returncode != 0 and "nope.conf" in (r.stdout + r.stderr)


def test_once_prints_the_sensors_document(heatcurved_bin):
    root = fixture_path("rpi4")
    r = run(heatcurved_bin, "--once", "--sysfs-root", root, "--procfs-root", root)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    for key in ("time_ms", "board", "temperatures", "cooling_devices", "cpufreq", "load"):
        assert key in doc
    assert doc["load"]["per_cpu"] and 0 <= doc["load"]["total"] <= 1


def test_once_on_a_missing_root_names_it(heatcurved_bin, tmp_path):
    r = run(heatcurved_bin, "--once", "--sysfs-root", str(tmp_path / "nowhere"))
    assert r.returncode != 0
    assert str(tmp_path / "nowhere") in r.stderr


def test_once_on_an_empty_tree_still_answers(heatcurved_bin, tmp_path):
    (tmp_path / "sys").mkdir()
    (tmp_path / "proc").mkdir()
    r = run(heatcurved_bin, "--once", "--sysfs-root", str(tmp_path), "--procfs-root", str(tmp_path))
    # no sensors at all is reported, not a crash
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["temperatures"] == [] and doc["cpufreq"] == []
    assert doc["load"]["ok"] is False
