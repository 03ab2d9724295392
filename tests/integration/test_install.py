"""What `meson install` really puts in DESTDIR: the simulator's boards work from there."""
import json
import os
import shutil
import subprocess

import pytest

from conftest import FIXTURES_DIR

BUILD_ROOT = os.environ.get("HEATCURVE_BUILD_ROOT", "")


@pytest.fixture(scope="module")
def destdir(tmp_path_factory):
    meson = shutil.which("meson")
    if not BUILD_ROOT or not meson:
        pytest.skip("HEATCURVE_BUILD_ROOT or meson missing (run through meson test)")
    dest = tmp_path_factory.mktemp("destdir")
    r = subprocess.run([meson, "install", "-C", BUILD_ROOT, "--no-rebuild", "--quiet",
                        "--destdir", str(dest)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return dest


def installed(dest, *parts):
    """The file meson installed for the configured prefix, under dest."""
    r = subprocess.run(["meson", "introspect", "--buildoptions", BUILD_ROOT],
                       capture_output=True, text=True, check=True)
    prefix = next(o["value"] for o in json.loads(r.stdout) if o["name"] == "prefix")
    return os.path.join(str(dest) + prefix, *parts)


def boards():
    return sorted(b for b in os.listdir(FIXTURES_DIR)
                  if os.path.isdir(os.path.join(FIXTURES_DIR, b, "sys")))


def test_installed_fixtures_keep_their_symlinks(destdir):
    src, dst = FIXTURES_DIR, installed(destdir, "share", "heatcurve", "boards")
    links = [os.path.relpath(os.path.join(d, n), src)
             for d, dirs, files in os.walk(src) for n in dirs + files
             if os.path.islink(os.path.join(d, n))]
    assert links, "the fixtures have no symlinks at all?"
    for rel in links:
        p = os.path.join(dst, rel)
        assert os.path.islink(p), f"{rel} is not a symlink once installed"
        assert os.readlink(p) == os.readlink(os.path.join(src, rel))


@pytest.mark.parametrize("board", boards())
def test_every_installed_board_has_temperatures(destdir, heatcurved_bin, board):
    env = dict(os.environ, HEATCURVE_BOARDS_DIR=installed(destdir, "share", "heatcurve", "boards"))
    r = subprocess.run([heatcurved_bin, "--once", f"--simulate={board}"],
                       capture_output=True, text=True, env=env, timeout=30)
    assert r.returncode == 0, r.stderr
    temps = json.loads(r.stdout)["temperatures"]
    assert temps and all(t["ok"] for t in temps), r.stdout


def test_readme_installed_where_the_unit_points(destdir):
    with open(installed(destdir, "lib", "systemd", "system", "heatcurved.service")) as f:
        doc = next(l for l in f if l.startswith("Documentation=file://"))
    path = doc.strip()[len("Documentation=file://"):]
    prefix_rel = os.path.relpath(path, "/usr")
    assert os.path.isfile(installed(destdir, prefix_rel)), path


def test_installed_binary_names_no_build_tree(destdir):
    """No path of the source or build tree is baked in: the boards are found by the prefix."""
    src = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))
    for prog in (installed(destdir, "sbin", "heatcurved"), installed(destdir, "bin", "heatcurvectl")):
        if not os.path.exists(prog):
            continue
        with open(prog, "rb") as f:
            data = f.read()
        for tree in (src, os.path.realpath(BUILD_ROOT)):
            assert tree.encode() not in data, f"{prog} holds {tree}"


@pytest.mark.slow
def test_fresh_prefix_runs_the_simulator(tmp_path):
    """meson setup --prefix, install, run: the installed daemon finds its boards with no variable set."""
    meson = shutil.which("meson")
    if not meson or not shutil.which("ninja"):
        pytest.skip("meson or ninja missing")
    src = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))
    build, prefix = tmp_path / "build", tmp_path / "prefix"
    for cmd in ([meson, "setup", str(build), src, f"--prefix={prefix}", "-Dtests=disabled",
                 "-Dcli=disabled", "-Dman=disabled", f"-Dsystemdunitdir={prefix}/lib/systemd/system"],
                ["ninja", "-C", str(build), "heatcurved"],
                [meson, "install", "-C", str(build), "--quiet"]):
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stdout + r.stderr
    env = {k: v for k, v in os.environ.items() if k != "HEATCURVE_BOARDS_DIR"}
    r = subprocess.run([str(prefix / "sbin" / "heatcurved"), "--once", "--simulate"],
                       capture_output=True, text=True, env=env, timeout=30, cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    temps = json.loads(r.stdout)["temperatures"]
    assert temps and all(t["ok"] for t in temps), r.stdout
    with open(prefix / "sbin" / "heatcurved", "rb") as f:
        assert src.encode() not in f.read()
