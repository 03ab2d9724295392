"""Sensors that break under a running heatcurved: corrupted, erroring and deleted files; bad reloads."""
import os
import shutil
import signal
import subprocess

import pytest

from conftest import start_tree, write_in_place


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


def test_unwritable_state_dir_is_reported_not_fatal(start_daemon, fixture_copy, tmp_path):
    root = fixture_copy("rpi4")
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x")
    d = start_daemon("--sysfs-root", root, "--procfs-root", root, "--interval", "100ms",
                     "--state-dir", str(blocker / "state"))
    _, st = d.get("/api/v1/status")
    assert st["storage"]["ok"] is False and st["storage"]["error"]
    assert d.get("/api/v1/sensors")[0] == 200
