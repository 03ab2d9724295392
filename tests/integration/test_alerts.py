"""Alert rules through the real heatcurved: transitions, the journal fields, hooks, lost sensors,
reloads, a run's load stopped at crit, the kept log, the default rule on every board."""
import json
import os
import signal
import stat
import time

import pytest

from conftest import fixture_path, start_tree, write_in_place

ZONE = "sys/class/thermal/thermal_zone0/temp"


def alerts(d):
    return d.get("/api/v1/alerts")[1]


def rule(d, name):
    return next(r for r in alerts(d)["rules"] if r["name"] == name)


def wait_rule_state(d, name, state, timeout=10):
    return d.wait_for(lambda: (lambda r: r if r["state"] == state else None)(rule(d, name)),
                      timeout=timeout, what=f"alert {name} in {state}")


def write_conf(tmp_path, text, name="alerts.conf"):
    conf = tmp_path / name
    conf.write_text(text)
    return str(conf)


def write_hook(tmp_path, body, name="hook.sh"):
    hook = tmp_path / name
    hook.write_text("#!/bin/sh\n" + body)
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    return str(hook)


def set_zone(root, celsius):
    write_in_place(os.path.join(root, ZONE), f"{int(round(celsius * 1000))}\n")


def test_transitions_log_fields_status_and_hook_environment(start_daemon, fixture_copy, tmp_path):
    root = fixture_copy("rpi4")
    out = tmp_path / "hook-out"
    out.mkdir()
    # written aside, then renamed: the test never reads a half-written file
    hook = write_hook(tmp_path, f'env | grep ^HEATCURVE_ | sort > "{out}/.$HEATCURVE_STATE"\n'
                                f'mv "{out}/.$HEATCURVE_STATE" "{out}/$HEATCURVE_STATE"\n')
    conf = write_conf(tmp_path, f"[alert soc]\nsensor = thermal_zone0\nwarn = 60\ncrit = 75\n"
                                f"hysteresis = 2\nexec = {hook}\n")
    set_zone(root, 45)
    d = start_tree(start_daemon, root, "--config", conf)
    assert rule(d, "soc")["state"] == "ok" and alerts(d)["default_rule"] is False

    set_zone(root, 62.5)
    r = wait_rule_state(d, "soc", "warn")
    assert r["value_c"] == 62.5 and r["value_sensor"] == "thermal_zone0" and r["warn_c"] == 60
    active = d.get("/api/v1/status")[1]["active_alerts"]
    assert [a["name"] for a in active] == ["soc"] and active[0]["state"] == "warn"
    metrics = d.get("/metrics")[1]
    assert 'heatcurve_alert_state{alert="soc",sensor="thermal_zone0",state="warn"} 1\n' in metrics
    assert 'heatcurve_alert_state{alert="soc",sensor="thermal_zone0",state="ok"} 0\n' in metrics
    d.wait_for(lambda: (out / "warn").exists(), what="hook ran for warn")
    env = dict(line.split("=", 1) for line in (out / "warn").read_text().split())
    assert env == {"HEATCURVE_ALERT": "soc", "HEATCURVE_SENSOR": "thermal_zone0", "HEATCURVE_STATE": "warn",
                   "HEATCURVE_PREVIOUS": "ok", "HEATCURVE_TEMP_C": "62.500", "HEATCURVE_THRESHOLD_C": "60.000"}

    set_zone(root, 80)
    wait_rule_state(d, "soc", "crit")
    set_zone(root, 40)
    wait_rule_state(d, "soc", "ok")
    d.wait_for(lambda: (out / "ok").exists(), what="hook ran for ok")
    log = d.logs()
    assert "ALERT=soc SENSOR=thermal_zone0 STATE=warn PREVIOUS=ok TEMP_C=62.500" in log
    assert "STATE=crit PREVIOUS=warn" in log and "STATE=ok PREVIOUS=crit" in log
    # only transitions act: one line each, not one per sample
    assert log.count("Alert soc: ") == 3 + log.count("Alert soc: hook")
    states = [(t["previous"], t["state"]) for t in alerts(d)["transitions"]]
    assert states == [("ok", "warn"), ("warn", "crit"), ("crit", "ok")]


def test_hooks_one_at_a_time_timeout_and_failures(start_daemon, fixture_copy, tmp_path):
    root = fixture_copy("rpi4")
    spans = tmp_path / "spans"
    slow = write_hook(tmp_path, f'echo "start $(date +%s%N) $HEATCURVE_STATE" >> "{spans}"\nsleep 0.6\n'
                                f'echo "end $(date +%s%N) $HEATCURVE_STATE" >> "{spans}"\n', "slow.sh")
    stuck = write_hook(tmp_path, "exec sleep 30\n", "stuck.sh")
    failing = write_hook(tmp_path, "exit 3\n", "failing.sh")
    gone = write_hook(tmp_path, "exit 0\n", "gone.sh")             # removed once the daemon runs
    conf = write_conf(tmp_path,
                      f"[alert slow]\nsensor = thermal_zone0\nwarn = 60\nhysteresis = 0\ndwell = 0s\nexec = {slow}\n\n"
                      f"[alert stuck]\nsensor = thermal_zone0\nwarn = 60\nexec = {stuck}\nexec_timeout = 1s\n\n"
                      f"[alert failing]\nsensor = thermal_zone0\nwarn = 60\nexec = {failing}\n\n"
                      f"[alert missing]\nsensor = thermal_zone0\nwarn = 60\nexec = {gone}\n")
    set_zone(root, 40)
    d = start_tree(start_daemon, root, "--config", conf)
    os.unlink(gone)
    # four transitions within ~0.4 s: the slow hook runs for each, never two at once
    for c in (65, 40, 65, 40):
        set_zone(root, c)
        d.wait_for(lambda: rule(d, "slow")["state"] == ("warn" if c == 65 else "ok"), what=f"slow at {c}")
    d.wait_for(lambda: "Alert stuck: hook still running after 1000 ms, killing it" in d.logs(), timeout=10,
               what="stuck hook killed")
    d.wait_for(lambda: spans.exists() and spans.read_text().count("end") >= 2 and not rule(d, "slow")["hook_running"],
               timeout=15, what="slow hooks done")
    events = [line.split() for line in spans.read_text().splitlines()]
    running = 0
    for kind, _, _ in events:
        running += 1 if kind == "start" else -1
        assert running in (0, 1), events
    assert events[-1][2] == "ok"            # the latest transition ran last
    log = d.logs()
    assert "Alert failing: hook exited with status 3" in log
    assert f"Alert missing: cannot run hook {gone}: No such file or directory" in log
    assert "hook killed by signal 9" in log


def alive(pid):
    """The process runs (a zombie does not count)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def write_daemonising_hook(tmp_path, out):
    """A hook that ignores SIGTERM and daemonises a grandchild (setsid, then its parent exits), which
    ignores SIGTERM too; "exits" as its argument: it returns at once, leaving the grandchild."""
    grand = write_hook(tmp_path, 'trap "" TERM\necho $$ > "$1.tmp"\nmv "$1.tmp" "$1.grand"\nexec sleep 300\n',
                       "grand.sh")
    return write_hook(tmp_path, f'out="{out}/$HEATCURVE_ALERT"\ntrap "" TERM\n'
                                f'setsid sh -c "{grand} $out & exit 0" &\n'
                                f'while [ ! -e "$out.grand" ]; do sleep 0.05; done\n'
                                f'echo $$ > "$out.t"\nmv "$out.t" "$out.hook"\n'
                                f'[ "$1" = exits ] && exit 0\nexec sleep 300\n', "daemonising.sh")


def test_nothing_a_hook_started_outlives_its_timeout_its_end_or_the_daemon(start_daemon, fixture_copy, tmp_path):
    """Hooks that ignore SIGTERM and leave a setsid'd grandchild: all killed at the timeout, when the
    hook itself exits (as a oneshot unit's leftovers are), and when heatcurved is killed with -9."""
    root = fixture_copy("rpi4")
    out = tmp_path / "pids"
    out.mkdir()
    hook = write_daemonising_hook(tmp_path, out)
    conf = write_conf(tmp_path, f"[alert timeout]\nsensor = thermal_zone0\nwarn = 60\nexec = {hook}\n"
                                f"exec_timeout = 2s\n\n"
                                f"[alert exits]\nsensor = thermal_zone0\nwarn = 60\nexec = {hook} exits\n\n"
                                f"[alert orphan]\nsensor = thermal_zone0\nwarn = 60\nexec = {hook}\n"
                                f"exec_timeout = 1h\n")
    set_zone(root, 40)
    d = start_tree(start_daemon, root, "--config", conf)
    set_zone(root, 65)
    pids = {}
    try:
        d.wait_for(lambda: all((out / f"{r}.hook").exists() for r in ("timeout", "exits", "orphan")),
                   what="the hooks and their grandchildren started")
        pids = {f"{r}.{k}": int((out / f"{r}.{k}").read_text()) for r in ("timeout", "exits", "orphan")
                for k in ("hook", "grand")}
        d.wait_for(lambda: "Alert exits: hook finished" in d.logs(), what="the hook that exits")
        d.wait_for(lambda: not alive(pids["exits.grand"]), timeout=5, what="its grandchild gone with it")
        d.wait_for(lambda: "Alert timeout: hook still running after 2000 ms, killing it" in d.logs(),
                   what="the timeout")
        d.wait_for(lambda: not alive(pids["timeout.hook"]) and not alive(pids["timeout.grand"]), timeout=5,
                   what="the timed-out hook and its grandchild gone")
        assert alive(pids["orphan.hook"]) and alive(pids["orphan.grand"])
        assert rule(d, "orphan")["hook_running"] is True
        d.proc.send_signal(signal.SIGKILL)
        d.proc.wait(timeout=10)
        d.wait_for(lambda: not alive(pids["orphan.hook"]) and not alive(pids["orphan.grand"]), timeout=5,
                   what="the hook and its grandchild gone with the daemon")
    finally:
        for pid in pids.values():
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_value_at_the_level_does_not_flap_and_alerts_json_is_written_once_a_second(start_daemon, fixture_copy,
                                                                                      tmp_path):
    """hysteresis = 0 and a value across the level at every sample (every 100 ms): the rule keeps its
    state (the default dwell, 5 s without hysteresis); with dwell = 0s it flaps, as asked, and its
    transitions reach alerts.json in at most one write a second, the hook running for the latest."""
    root = fixture_copy("rpi4")
    state = tmp_path / "state"
    seen = tmp_path / "hook-seen"
    hook = write_hook(tmp_path, f'echo "$HEATCURVE_STATE" >> "{seen}"\n')
    conf = write_conf(tmp_path, "[alert hover]\nsensor = thermal_zone0\nwarn = 60\nhysteresis = 0\n\n"
                                f"[alert flap]\nsensor = thermal_zone0\nwarn = 60\nhysteresis = 0\ndwell = 0s\n"
                                f"exec = {hook}\n")
    set_zone(root, 40)
    d = start_tree(start_daemon, root, "--config", conf, state_dir=str(state))
    path = state / "alerts.json"
    writes, last, t0 = [], None, time.monotonic()
    i = 0
    while time.monotonic() - t0 < 4.0:
        if i % 10 == 0:
            set_zone(root, 61 if (i // 10) % 2 == 0 else 59)
        try:
            st = os.stat(path)
            key = (st.st_ino, st.st_mtime_ns)
        except FileNotFoundError:
            key = None
        if key and key != last:
            writes.append(key[1] / 1e9)         # when it was written, however late the test looks
            last = key
        i += 1
        time.sleep(0.01)
    set_zone(root, 40)
    logs = d.logs()
    flaps = logs.count("Alert flap: warn") + logs.count("Alert flap: ok")
    assert flaps >= 12, flaps
    assert logs.count("Alert hover: ") - logs.count("Alert hover: hook") == 1       # warn, and kept
    assert rule(d, "hover")["state"] == "warn"
    assert 2 <= len(writes) <= 6, writes
    gaps = [b - a for a, b in zip(writes, writes[1:])]
    assert min(gaps) > 0.9, gaps
    # what came last is saved, and the hook ran for it
    d.wait_for(lambda: rule(d, "flap")["state"] == "ok", what="flap ok at 40")
    time.sleep(1.5)
    kept = json.loads(path.read_text())["transitions"]
    assert kept == alerts(d)["transitions"]
    d.wait_for(lambda: seen.exists() and seen.read_text().split()[-1] == "ok" and not rule(d, "flap")["hook_running"],
               what="the hook ran for the last transition")
    assert len(seen.read_text().split()) < flaps


def test_lost_sensor_is_a_state(start_daemon, fixture_copy, tmp_path):
    root = fixture_copy("rpi4")
    conf = write_conf(tmp_path, "[alert soc]\nsensor = thermal_zone0\nwarn = 60\nlost = yes\n\n"
                                "[alert quiet]\nsensor = thermal_zone0\nwarn = 60\n")
    set_zone(root, 45)
    d = start_tree(start_daemon, root, "--config", conf)
    write_in_place(os.path.join(root, ZONE), "garbage\n")
    r = wait_rule_state(d, "soc", "lost")
    assert r["value_c"] is None
    assert rule(d, "quiet")["state"] == "ok"
    assert "Alert soc: lost, no sensor answers, was ok" in d.logs()
    set_zone(root, 61)
    wait_rule_state(d, "soc", "warn")


def test_a_vanished_sensor_that_comes_back_is_found_and_leaves_lost(start_daemon, fixture_copy, tmp_path):
    """Its file gone (ENOENT), then back: the daemon finds it again on its own, no SIGHUP."""
    root = fixture_copy("rk3399-rockpro64")
    conf = write_conf(tmp_path, "[alert gpu]\nsensor = thermal_zone1\nwarn = 90\nlost = yes\n")
    d = start_tree(start_daemon, root, "--config", conf)
    temp = os.path.join(os.path.realpath(os.path.join(root, "sys/class/thermal/thermal_zone1")), "temp")
    with open(temp) as f:
        kept = f.read()
    os.unlink(temp)
    wait_rule_state(d, "gpu", "lost")
    with open(temp, "w") as f:
        f.write(kept)
    t0 = time.monotonic()
    r = wait_rule_state(d, "gpu", "ok", timeout=8)
    assert time.monotonic() - t0 < 7
    assert r["value_c"] == int(kept) / 1000
    back = next(t for t in d.get("/api/v1/sensors")[1]["temperatures"] if t["id"] == "thermal_zone1")
    assert back["ok"] is True
    assert "A missing sensor answers again" in d.logs()


def test_reload_with_a_bad_rule_keeps_the_old_rules(start_daemon, fixture_copy, tmp_path):
    root = fixture_copy("rpi4")
    conf = tmp_path / "alerts.conf"
    conf.write_text("[alert soc]\nsensor = thermal_zone0\nwarn = 60\n")
    set_zone(root, 65)
    d = start_tree(start_daemon, root, "--config", str(conf))
    wait_rule_state(d, "soc", "warn")
    conf.write_text("[alert soc]\nsensor = thermal_zone0\nwarn = 60\n\n[alert new]\nsensor = *\nwarn = trip:balmy\n")
    d.signal(signal.SIGHUP)
    d.wait_for(lambda: "Reload failed" in d.logs(), what="reload refused")
    assert f"{conf}:7: [alert new] warn: \"trip:balmy\" is not a temperature" in d.logs()
    assert [r["name"] for r in alerts(d)["rules"]] == ["soc"] and rule(d, "soc")["state"] == "warn"
    # a good reload: the unchanged rule keeps its state and since, the new one starts
    since = rule(d, "soc")["since_ms"]
    conf.write_text("[alert soc]\nsensor = thermal_zone0\nwarn = 60\n\n[alert new]\nsensor = *\nwarn = 90\n")
    d.signal(signal.SIGHUP)
    d.wait_for(lambda: len(alerts(d)["rules"]) == 2, what="new rule loaded")
    assert rule(d, "soc")["since_ms"] == since and rule(d, "new")["state"] == "ok"


def test_crit_stops_a_running_load(start_daemon, fixture_copy, tmp_path):
    root = fixture_copy("rpi4")
    conf = write_conf(tmp_path, "[alert board]\nsensor = hottest\nwarn = 60\ncrit = 70\n")
    set_zone(root, 45)
    d = start_tree(start_daemon, root, "--config", conf)
    status, run = d.request("POST", "/api/v1/runs", body={
        "safety_limit_c": 100,
        "phases": [{"kind": "stress", "duration": "5m", "load": {"type": "cpu", "workers": 1}}]})
    assert status == 201, run
    set_zone(root, 72)
    done = d.wait_for(lambda: (lambda doc: doc if doc["state"] != "running" else None)(
        d.get(f"/api/v1/runs/{run['id']}")[1]), what="run aborted")
    assert done["state"] == "aborted"
    assert done["abort_reason"] == "alert board reached crit: thermal_zone0 at 72.0 C"


def test_transitions_survive_a_restart(start_daemon, fixture_copy, tmp_path):
    root = fixture_copy("rpi4")
    state = str(tmp_path / "state")
    conf = write_conf(tmp_path, "[alert soc]\nsensor = thermal_zone0\nwarn = 60\n")
    set_zone(root, 65)
    d = start_tree(start_daemon, root, "--config", conf, state_dir=state)
    wait_rule_state(d, "soc", "warn")
    d.stop()
    with open(os.path.join(state, "alerts.json")) as f:
        kept = json.load(f)["transitions"]
    assert kept[-1]["rule"] == "soc" and kept[-1]["state"] == "warn"
    d2 = start_tree(start_daemon, root, "--config", conf, state_dir=state)
    assert alerts(d2)["transitions"][0] == kept[0]


BOARDS = sorted(b for b in os.listdir(fixture_path("")) if os.path.isdir(fixture_path(b)))


def lowest_trip(sensor, types):
    temps = [t["celsius"] for t in sensor.get("trips", []) if t["type"] in types and t["celsius"] is not None]
    return min(temps) if temps else None


@pytest.mark.parametrize("board", BOARDS)
def test_trip_relative_thresholds_on_every_board(start_daemon, tmp_path, board):
    """The default rule and a trip-relative one resolve on each board's own trips (or limits)."""
    conf = write_conf(tmp_path, "[alert rel]\nsensor = *\nwarn = trip:passive-5\ncrit = trip:critical-10\n")
    for args in ((), ("--config", conf)):
        d = start_tree(start_daemon, fixture_path(board), *args)
        doc = alerts(d)
        sensors = {t["id"]: t for t in d.get("/api/v1/sensors")[1]["temperatures"]}
        r = doc["rules"][0]
        assert doc["default_rule"] is (not args)
        if not sensors:
            assert r["warn_c"] is None and r["crit_c"] is None
            d.stop()
            continue
        # at rest the deciding sensor is the hottest answering one
        hot = max((t for t in sensors.values() if t["ok"]), key=lambda t: t["celsius"])
        passive = lowest_trip(hot, ("passive",))
        if hot["source"] == "hwmon" and passive is None:
            passive = hot.get("max_celsius")
        if not args:
            hotcrit = lowest_trip(hot, ("hot", "critical"))
            if hotcrit is None and hot["source"] == "hwmon":
                hotcrit = hot.get("crit_celsius")
            assert r["warn_c"] == (passive if passive is not None else 75), (board, hot)
            assert r["crit_c"] == (hotcrit - 5 if hotcrit is not None else 85), (board, hot)
        else:
            critical = lowest_trip(hot, ("critical",))
            if critical is None and hot["source"] == "hwmon":
                critical = hot.get("crit_celsius")
            assert r["warn_c"] == (None if passive is None else pytest.approx(passive - 5)), (board, hot)
            assert r["crit_c"] == (None if critical is None else pytest.approx(critical - 10)), (board, hot)
        d.stop()


def test_default_rule_on_the_heated_simulator(start_daemon, tmp_path, burner):
    """The simulated ODROID-C2 (passive trip 70 C) heated by `stress --cpu 2`: the default rule warns."""
    conf = write_conf(tmp_path, "[simulate]\nambient = 25\ntau = 3s\nrise = 55\nquantize = yes\n")
    d = start_daemon("--config", conf, "--simulate", "--interval", "200ms")
    burner()
    r = d.wait_for(lambda: (lambda r: r if r["state"] in ("warn", "crit") else None)(alerts(d)["rules"][0]),
                   timeout=40, what="default rule warns")
    assert r["name"] == "default" and r["warn_c"] == 70
    assert "Alert default: warn, thermal_zone0 at" in d.logs()
    assert any(t["state"] == "warn" for t in alerts(d)["transitions"])


def test_the_example_rule_in_the_shipped_config_is_valid(heatcurved_bin, tmp_path):
    src = os.path.join(os.path.dirname(__file__), "..", "..", "systemd", "heatcurved.conf")
    lines, inside = [], False
    for line in open(src):
        inside = inside or line.startswith("#   [alert ")
        if inside and line.startswith("#   "):
            lines.append(line[4:])
    assert lines and lines[0].startswith("[alert ")
    conf = tmp_path / "example.conf"
    # the hook must exist to be accepted: the example's stands for the user's own
    hook = write_hook(tmp_path, "exit 0\n", "notify-me")
    text = "".join(lines)
    assert "exec = /usr/local/bin/notify-me" in text
    conf.write_text(text.replace("/usr/local/bin/notify-me", hook))
    import subprocess
    r = subprocess.run([heatcurved_bin, "--check-config", "--config", str(conf)], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout == "configuration ok\n", r.stdout + r.stderr


def test_fan_follows_a_heat_up_with_hysteresis_and_shows_in_runs(start_daemon, fixture_copy, tmp_path):
    root = fixture_copy("rpi4")
    conf = write_conf(tmp_path, "[fan case]\nsensor = thermal_zone0\non = 60\noff = 50\nmin_on = 1s\n"
                                "gpio = gpiochip0:1\n")
    set_zone(root, 45)
    d = start_tree(start_daemon, root, "--config", conf)
    fan = lambda: alerts(d)["fans"][0]
    assert fan()["on"] is False and fan()["name"] == "case"
    status, run = d.request("POST", "/api/v1/runs", body={"phases": [{"kind": "idle", "duration": "3s"}]})
    assert status == 201
    for c in (55, 59.5, 60.5):
        set_zone(root, c)
        time.sleep(0.3)
    d.wait_for(lambda: fan()["on"], what="fan on at 60")
    for c in (55, 50.5, 52):                 # between off and on: stays on
        set_zone(root, c)
        time.sleep(0.3)
    assert fan()["on"] is True and fan()["switches"] == 1
    set_zone(root, 49.5)
    d.wait_for(lambda: not fan()["on"], what="fan off at 50")
    assert fan()["switches"] == 2
    sensors = d.get("/api/v1/sensors")[1]
    assert sensors["daemon_fans"][0]["name"] == "case" and sensors["daemon_fans"][0]["on"] is False
    log = d.logs()
    assert "Fan case switched on: thermal_zone0 at 60.5 C [FAN=case]" in log and "Fan case switched off" in log
    # the run's samples say when cooling (the fan) was on
    done = d.wait_for(lambda: (lambda doc: doc if doc["state"] != "running" else None)(
        d.get(f"/api/v1/runs/{run['id']}")[1]), what="run ended")
    _, samples = d.get(f"/api/v1/runs/{run['id']}/samples")
    col = samples["columns"].index("cooling_active")
    assert {row[col] for row in samples["rows"]} == {0, 1}, done


def test_a_line_that_cannot_be_had_is_named_and_the_rule_works_on(start_daemon, fixture_copy, tmp_path):
    """No GPIO chip here: the rule and the fan name their line in the log and the API, and keep
    working; a reload tries the line again. (The real chip is exercised under qemu-system-aarch64.)"""
    root = fixture_copy("rpi4")
    conf = write_conf(tmp_path, "[alert led]\nsensor = thermal_zone0\nwarn = 60\ngpio = gpiochip7:17\n\n"
                                "[fan case]\nsensor = thermal_zone0\non = 60\noff = 50\ngpio = gpiochip7:18\n")
    set_zone(root, 45)
    d = start_tree(start_daemon, root, "--config", conf)
    r = rule(d, "led")
    assert r["gpio"] == "gpiochip7:17" and r["gpio_error"].startswith("gpiochip7:17"), r
    assert r["gpio_driven"] is False, r
    assert alerts(d)["fans"][0]["gpio_error"].startswith("gpiochip7:18")
    assert alerts(d)["fans"][0]["gpio_driven"] is False
    log = d.logs()
    assert "Alert led: cannot drive gpio gpiochip7:17:" in log and "the alert works on without it" in log
    assert "Fan case: cannot drive gpio gpiochip7:18:" in log
    set_zone(root, 65)
    wait_rule_state(d, "led", "warn")
    d.wait_for(lambda: alerts(d)["fans"][0]["on"], what="fan on without its line")
    assert alerts(d)["fans"][0]["gpio_driven"] is False
    assert d.logs().count("Fan case: cannot drive gpio") == 1   # once, not again at the switch
    d.signal(signal.SIGHUP)
    d.wait_for(lambda: d.logs().count("cannot drive gpio gpiochip7:17") == 2, what="the line tried again at reload")
    assert rule(d, "led")["state"] == "warn"            # unchanged rule: state kept


def test_undervoltage_is_an_alert_source_on_a_pi(start_daemon, fixture_copy):
    """The Raspberry Pi reports a low supply through the rpi_volt hwmon chip: with no rules of
    the user's, it gets its own rule beside the temperature one."""
    root = fixture_copy("rpi4")
    alarm = os.path.join(root, "sys/class/hwmon/hwmon1/in0_lcrit_alarm")
    write_in_place(alarm, "0\n")
    d = start_tree(start_daemon, root)
    assert [r["name"] for r in alerts(d)["rules"]] == ["default", "undervoltage"]
    assert d.get("/api/v1/sensors")[1]["power"] == {"undervoltage": False, "source": "rpi_volt", "error": None}
    write_in_place(alarm, "1\n")
    r = wait_rule_state(d, "undervoltage", "warn")
    assert r["value_sensor"] == "undervoltage" and r["value_c"] is None
    assert d.get("/api/v1/sensors")[1]["power"]["undervoltage"] is True
    assert "Alert undervoltage: warn, was ok [ALERT=undervoltage SENSOR=undervoltage STATE=warn PREVIOUS=ok]" in d.logs()
    write_in_place(alarm, "0\n")
    wait_rule_state(d, "undervoltage", "ok")
    # a board without a supply source: no such rule, no noise in the log
    d2 = start_tree(start_daemon, fixture_path("rk3399-rockpro64"))
    assert [r["name"] for r in alerts(d2)["rules"]] == ["default"]
    assert d2.get("/api/v1/sensors")[1]["power"] is None
    assert "matches nothing" not in d2.logs()
