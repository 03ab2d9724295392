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
    src, dst = FIXTURES_DIR, installed(destdir, "share", "heatcurve", "fixtures")
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
    env = dict(os.environ, HEATCURVE_BOARDS_DIR=installed(destdir, "share", "heatcurve", "fixtures"))
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
