"""Sensors that break under a running heatcurved: corrupted, erroring and deleted files; bad reloads;
a history file that cannot be read back."""
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import time

import pytest

from conftest import fixture_path, start_tree, write_in_place


def zone_temp(doc, zone_id):
    return next(t for t in doc["temperatures"] if t["id"] == zone_id)


def test_corrupted_sensor_is_marked_and_recovers(start_daemon, fixture_copy):
    root = fixture_copy("rpi4")
    d = start_tree(start_daemon, root)
    temp = os.path.join(root, "sys/class/thermal/thermal_zone0/temp")
    good = zone_temp(d.get("/api/v1/sensors")[1], "thermal_zone0")
    assert good["ok"] is True

    write_in_place(temp, "garbage\n")
    bad = d.wait_for(lambda: (lambda t: t if not t["ok"] else None)(
        zone_temp(d.get("/api/v1/sensors")[1], "thermal_zone0")), what="zone marked not ok")
    assert bad["error"].startswith("EBADMSG")
    assert bad["celsius"] == good["celsius"]          # last good value kept
    assert bad["last_good_ms"] >= good["last_good_ms"]
    status, st = d.get("/api/v1/status")
    assert st["sensors"]["failing"] == 1

    write_in_place(temp, "51234\n")
    back = d.wait_for(lambda: (lambda t: t if t["ok"] else None)(
        zone_temp(d.get("/api/v1/sensors")[1], "thermal_zone0")), what="zone recovered")
    assert back["celsius"] == 51.234 and back["error"] is None
    log = d.logs()
    assert log.count("thermal_zone0") >= 2 and "answers again" in log
    # one line per change of state, not one per sample
    assert log.count("reading") <= 2


def test_deleted_sensor_triggers_reprobe_and_daemon_goes_on(start_daemon, fixture_copy):
    root = fixture_copy("rk3399-rockpro64")
    d = start_tree(start_daemon, root)
    _, before = d.get("/api/v1/sensors")
    victim = "thermal_zone1"                      # gpu-thermal; zone 0 and the hwmon chips stay
    assert victim in [t["id"] for t in before["temperatures"]]
    zone_dir = os.path.realpath(os.path.join(root, "sys/class/thermal", victim))
    os.unlink(os.path.join(zone_dir, "temp"))
    d.wait_for(lambda: "re-probed" in d.logs(), what="re-probe logged")
    status, after = d.get("/api/v1/sensors")
    assert status == 200
    gone = [t for t in after["temperatures"] if t["id"] == victim]
    # either dropped from the set or kept as failing: never a stale ok value
    assert not gone or gone[0]["ok"] is False
    others = [t for t in after["temperatures"] if t["id"] != victim]
    assert len(others) == len(before["temperatures"]) - 1 and all(t["ok"] for t in others)
    # and sampling goes on
    t1 = d.get("/api/v1/status")[1]["ticks"]
    d.wait_for(lambda: d.get("/api/v1/status")[1]["ticks"] > t1 + 2, what="ticks after the re-probe")


def test_bad_reload_keeps_running_config(start_daemon, fixture_copy, tmp_path):
    root = fixture_copy("rpi4")
    conf = tmp_path / "heatcurved.conf"
    conf.write_text("[daemon]\ninterval = 100ms\n")
    d = start_daemon("--config", str(conf), "--sysfs-root", root, "--procfs-root", root)
    conf.write_text("[daemon]\nintervall = 1s\n")
    d.signal(signal.SIGHUP)
    d.wait_for(lambda: "Reload failed" in d.logs(), what="reload failure logged")
    assert 'intervall' in d.logs() and str(conf) in d.logs()
    assert d.get("/api/v1/status")[1]["interval"] == "100ms"
    conf.write_text("[daemon]\ninterval = 200ms\n")
    d.signal(signal.SIGHUP)
    d.wait_for(lambda: d.get("/api/v1/status")[1]["interval"] == "200ms", what="interval reloaded")
    assert d.proc.poll() is None
    # the sampling itself follows: at 1 s, 3 s hold a few ticks, not the 30 of 100 ms
    conf.write_text("[daemon]\ninterval = 1s\n")
    d.signal(signal.SIGHUP)
    d.wait_for(lambda: d.get("/api/v1/status")[1]["interval"] == "1s", what="interval reloaded")
    t0 = d.get("/api/v1/status")[1]["ticks"]
    time.sleep(3)
    assert 1 <= d.get("/api/v1/status")[1]["ticks"] - t0 <= 5


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_reload_of_a_fifo_or_device_config_is_refused_at_once(start_daemon, fixture_copy, tmp_path, kind):
    """A FIFO (no writer) or /dev/zero where the config was: the reload is refused, the API goes on."""
    root = fixture_copy("rpi4")
    conf = tmp_path / "heatcurved.conf"
    conf.write_text("[daemon]\ninterval = 100ms\n")
    d = start_daemon("--config", str(conf), "--sysfs-root", root, "--procfs-root", root)
    conf.unlink()
    if kind == "fifo":
        os.mkfifo(conf)
    else:
        os.symlink("/dev/zero", conf)
    d.signal(signal.SIGHUP)
    d.wait_for(lambda: "Reload failed" in d.logs(), timeout=5, what="reload failure logged")
    assert "not a regular file" in d.logs()
    t0 = time.monotonic()
    assert d.get("/api/v1/status", timeout=2)[1]["interval"] == "100ms"
    assert time.monotonic() - t0 < 1.0
    assert d.proc.poll() is None


def test_unwritable_state_dir_is_reported_not_fatal(start_daemon, fixture_copy, tmp_path):
    root = fixture_copy("rpi4")
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x")
    d = start_daemon("--sysfs-root", root, "--procfs-root", root, "--interval", "100ms",
                     "--state-dir", str(blocker / "state"))
    _, st = d.get("/api/v1/status")
    assert st["storage"]["ok"] is False and st["storage"]["error"]
    assert d.get("/api/v1/sensors")[0] == 200


def saved_history(start_daemon, state):
    """A history.bin as the daemon writes it, with a few samples, in state."""
    d = start_tree(start_daemon, fixture_path("rpi4"), state_dir=str(state))
    d.wait_for(lambda: d.get("/api/v1/status")[1]["history"]["samples"] >= 5, what="5 samples")
    d.stop()
    return (state / "history.bin").read_bytes()


def damage(kind, path, good):
    """Turns path into a history file that cannot be read back whole."""
    if kind == "garbage":
        path.write_bytes(b"not a history file\n" * 64)
    elif kind == "other-version":
        path.write_bytes(good[:6] + b"\x09\x00" + good[8:])
    elif kind == "truncated":
        path.write_bytes(good[:len(good) // 2])
    elif kind == "truncated-header":
        path.write_bytes(good[:10])
    elif kind == "checksum":
        flipped = bytearray(good)
        flipped[len(good) - 20] ^= 0xff               # inside the last block's payload
        path.write_bytes(bytes(flipped))
    elif kind == "directory":
        path.mkdir()
        (path / "inside").write_text("kept")
    elif kind == "fifo":
        os.mkfifo(path)


def same_thing(path, kind, before):
    if kind == "directory":
        return path.is_dir() and (path / "inside").read_text() == "kept"
    if kind == "fifo":
        return stat.S_ISFIFO(os.lstat(path).st_mode)
    return path.read_bytes() == before


@pytest.mark.parametrize("kind,reason", [
    ("garbage", "not a heatcurved history file"),
    ("other-version", "written in another format version"),
    ("truncated", "1 damaged or truncated block dropped, 0 samples kept"),
    ("truncated-header", "not a heatcurved history file"),
    ("checksum", "1 damaged or truncated block dropped, 0 samples kept"),
    ("directory", "a directory, not a file"),
    ("fifo", "not a regular file"),
])
def test_unreadable_history_is_moved_aside_not_overwritten(start_daemon, tmp_path, kind, reason):
    """A history.bin that cannot be read back is renamed to history.bin.corrupt-<unix seconds>
    in the same directory, status says so, and the saves that follow leave it alone."""
    state = tmp_path / "state"
    state.mkdir()
    good = saved_history(start_daemon, state)
    (state / "history.bin").unlink()
    damage(kind, state / "history.bin", good)
    before = None if kind in ("directory", "fifo") else (state / "history.bin").read_bytes()

    d = start_tree(start_daemon, fixture_path("rpi4"), state_dir=str(state))
    _, st = d.get("/api/v1/status")
    recovered = st["storage"]["history_recovered"]
    assert recovered and reason in recovered["reason"], st["storage"]
    moved = recovered["moved_to"]
    assert re.fullmatch(re.escape(str(state / "history.bin")) + r"\.corrupt-\d{10}", moved), moved
    assert st["storage"]["ok"] is True
    assert same_thing(state / os.path.basename(moved), kind, before)
    log = d.logs()
    assert f"{state / 'history.bin'}" in log and moved in log, log
    d.stop()                                           # saves the history

    # the save wrote a new history.bin and did not touch the one moved aside
    assert stat.S_ISREG(os.lstat(state / "history.bin").st_mode)
    assert same_thing(state / os.path.basename(moved), kind, before)
    assert [p.name for p in state.iterdir() if ".corrupt-" in p.name] == [os.path.basename(moved)]
    d2 = start_tree(start_daemon, fixture_path("rpi4"), state_dir=str(state))
    _, st2 = d2.get("/api/v1/status")
    assert st2["storage"]["history_recovered"] is None
    assert st2["history"]["samples"] > st["history"]["samples"]      # the new file loads


def test_history_recovery_names_paths_to_trusted_clients_only(start_daemon, tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    (state / "history.bin").write_bytes(b"\0" * 4096)
    token = tmp_path / "token"
    token.write_text("s3cret-token\n")
    conf = tmp_path / "c.conf"
    conf.write_text(f"[daemon]\ntoken_file = {token}\n")
    d = start_tree(start_daemon, fixture_path("rpi4"), "--config", str(conf), state_dir=str(state))
    _, anon = d.get("/api/v1/status")
    assert anon["storage"]["history_recovered"]["moved_to"] is None
    assert anon["storage"]["history_recovered"]["reason"]
    assert str(state) not in json.dumps(anon)
    _, mine = d.get("/api/v1/status", headers={"Authorization": "Bearer s3cret-token"})
    assert mine["storage"]["history_recovered"]["moved_to"].startswith(str(state / "history.bin.corrupt-"))


@pytest.mark.slow
def test_history_appended_then_killed(start_daemon, tmp_path):
    """A save after the first appends the new samples to history.bin (the bytes before stay as
    they were); a kill -9 then loses at most what came after the last save, and the file loads
    back whole, not moved aside."""
    state = tmp_path / "state"
    conf = tmp_path / "save.conf"
    conf.write_text("[daemon]\nhistory_save = 10s\n")
    d = start_tree(start_daemon, fixture_path("rpi4"), "--config", str(conf), state_dir=str(state))
    saved = lambda: d.get("/api/v1/status")[1]["storage"]["history_saved_ms"]
    first = d.wait_for(saved, timeout=20, what="the first save")
    whole = (state / "history.bin").read_bytes()
    before = d.get("/api/v1/status")[1]["history"]      # all saved by the second save
    d.wait_for(lambda: saved() != first, timeout=20, what="the second save")
    appended = (state / "history.bin").read_bytes()
    assert len(appended) > len(whole) and appended.startswith(whole)
    d.signal(signal.SIGKILL)
    d.proc.wait(10)

    d2 = start_tree(start_daemon, fixture_path("rpi4"), "--config", str(conf), state_dir=str(state))
    _, st = d2.get("/api/v1/status")
    assert st["storage"]["history_recovered"] is None
    assert st["history"]["oldest_ms"] == before["oldest_ms"]
    # the ten seconds between the saves, 100 samples at 100 ms, came back too
    assert st["history"]["samples"] >= before["samples"] + 50
    assert not [p.name for p in state.iterdir() if ".corrupt-" in p.name]


def test_two_damaged_histories_in_one_second_both_kept(start_daemon, tmp_path):
    """The aside name carries the second: when that name is taken (a second damaged file
    within the same second), the file gets a name of its own, it never replaces another."""
    state = tmp_path / "state"
    state.mkdir()
    (state / "history.bin").write_bytes(b"first")
    d = start_tree(start_daemon, fixture_path("rpi4"), state_dir=str(state))
    moved = d.get("/api/v1/status")[1]["storage"]["history_recovered"]["moved_to"]
    d.stop()
    (state / "history.bin").unlink()
    (state / "history.bin").write_bytes(b"second")
    # whichever second the next start falls in (within two minutes), its name is taken already
    base = int(moved.rsplit("-", 1)[1])
    taken = [state / f"history.bin.corrupt-{s}" for s in range(base + 1, base + 120)]
    for name in taken:
        name.write_bytes(b"taken")
    d2 = start_tree(start_daemon, fixture_path("rpi4"), state_dir=str(state))
    moved2 = d2.get("/api/v1/status")[1]["storage"]["history_recovered"]["moved_to"]
    assert moved2 != moved and moved2 not in map(str, taken)
    assert open(moved2, "rb").read() == b"second"
    assert open(moved, "rb").read() == b"first"
    assert all(name.read_bytes() == b"taken" for name in taken)


def test_history_that_cannot_be_moved_aside_is_not_saved_over(start_daemon, tmp_path):
    """When the unreadable file cannot be renamed either (here: a bind mount on it, EBUSY),
    status says storage is not ok and why, and no save replaces it."""
    state = tmp_path / "state"
    state.mkdir()
    (state / "history.bin").write_bytes(b"under")
    other = tmp_path / "other"
    other.write_bytes(b"not a history file either")
    r = subprocess.run(["mount", "--bind", str(other), str(state / "history.bin")], capture_output=True)
    if r.returncode != 0:
        pytest.skip("cannot bind-mount a file here (needs root): " + r.stderr.decode().strip())
    try:
        d = start_tree(start_daemon, fixture_path("rpi4"), state_dir=str(state))
        _, st = d.get("/api/v1/status")
        assert st["storage"]["ok"] is False and st["storage"]["history_recovered"] is None
        assert "cannot be moved aside" in st["storage"]["error"], st["storage"]
        d.stop()
        assert other.read_bytes() == b"not a history file either"
        assert "cannot be moved aside" in d.logs()
        assert not [p.name for p in state.iterdir() if p.name.startswith("history.bin.")]
    finally:
        subprocess.run(["umount", str(state / "history.bin")])
    assert (state / "history.bin").read_bytes() == b"under"
