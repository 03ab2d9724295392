"""Alert webhooks through the real heatcurved and the real curl: one POST per transition in each
format, a dead receiver that does not slow the tick, no resend after a restart, the URL's token
kept out of the log and of every process's command line."""
import http.server
import json
import os
import shutil
import socket
import subprocess
import threading
import time

import pytest

from conftest import free_port, start_tree, write_in_place

ZONE = "sys/class/thermal/thermal_zone0/temp"
TOKEN = "tk_s3cret7oken"

pytestmark = pytest.mark.skipif(not shutil.which("curl"), reason="curl is not installed")


class Receiver:
    """An HTTP server on 127.0.0.1 and a random port that keeps every POST: (path, headers, body)."""

    def __init__(self):
        posts = self.posts = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                posts.append((self.path, dict(self.headers), body))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def bodies(self, path):
        return [body for p, _, body in self.posts if p == path]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


@pytest.fixture
def silent_port():
    """A port that accepts connections (the kernel's backlog) and never answers."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    yield s.getsockname()[1]
    s.close()


def set_zone(root, celsius):
    write_in_place(os.path.join(root, ZONE), f"{int(round(celsius * 1000))}\n")


def write_conf(tmp_path, text):
    conf = tmp_path / "webhook.conf"
    conf.write_text(text)
    return str(conf)


def rule(d, name):
    return next(r for r in d.get("/api/v1/alerts")[1]["rules"] if r["name"] == name)


def wait_posts(d, receiver, path, n, timeout=10):
    return d.wait_for(lambda: (lambda b: b if len(b) >= n else None)(receiver.bodies(path)),
                      timeout=timeout, what=f"{n} posts to {path}")


def cmdlines(parent=None):
    """Every process's command line as ps shows it, or those of parent's children."""
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    line = f.read().replace(b"\0", b" ").decode(errors="replace")
            except (OSError, IndexError, ValueError):
                continue
            if parent is None or ppid == parent:
                out.append(line)
    return out


def test_one_post_per_transition_in_each_format(start_daemon, fixture_copy, tmp_path, receiver):
    root = fixture_copy("rpi4")
    conf = write_conf(tmp_path,
                      f"[alert soc]\nsensor = thermal_zone0\nwarn = 60\ncrit = 75\n"
                      f"webhook = {receiver.url('/json/' + TOKEN + '?auth=' + TOKEN)}\n\n"
                      f"[alert phone]\nsensor = thermal_zone0\nwarn = 60\ncrit = 75\n"
                      f"webhook = http://user:{TOKEN}@127.0.0.1:{receiver.port}/heat\nwebhook_format = ntfy\n\n"
                      f"[alert chat]\nsensor = thermal_zone0\nwarn = 60\ncrit = 75\n"
                      f"webhook = {receiver.url('/services/T0/B0/' + TOKEN)}\nwebhook_format = slack\n")
    set_zone(root, 45)
    d = start_tree(start_daemon, root, "--config", conf)
    for c, state in ((62.5, "warn"), (80, "crit"), (40, "ok")):
        set_zone(root, c)
        d.wait_for(lambda: all(rule(d, n)["state"] == state for n in ("soc", "phone", "chat")), what=state)
        # one at a time: the receiver sees them in order
        wait_posts(d, receiver, f"/json/{TOKEN}?auth={TOKEN}", {"warn": 1, "crit": 2, "ok": 3}[state])
    time.sleep(0.5)                         # nothing more comes
    kept = d.get("/api/v1/alerts")[1]["transitions"]

    posts = [json.loads(b) for b in wait_posts(d, receiver, f"/json/{TOKEN}?auth={TOKEN}", 3)]
    assert len(posts) == 3
    assert [(p["previous"], p["state"]) for p in posts] == [("ok", "warn"), ("warn", "crit"), ("crit", "ok")]
    first = posts[0]
    assert {k: first[k] for k in ("rule", "sensor", "value_c", "threshold_c", "hostname", "board")} == {
        "rule": "soc", "sensor": "thermal_zone0", "value_c": 62.5, "threshold_c": 60,
        "hostname": "rpi4-20231109", "board": "Raspberry Pi 4 Model B Rev 1.4"}
    t = next(t for t in kept if t["rule"] == "soc" and t["state"] == "warn")
    assert first["time_ms"] == t["time_ms"]
    assert time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t["time_ms"] // 1000)) == first["time"][:19]
    assert first["text"] == "Alert soc on rpi4-20231109: warn, thermal_zone0 at 62.5 \u00b0C (level 60.0 \u00b0C), was ok"
    path, headers, _ = next(p for p in receiver.posts if p[0].startswith("/json/"))
    assert headers["Content-Type"] == "application/json"

    ntfy = [p for p in receiver.posts if p[0] == "/heat"]
    assert len(ntfy) == 3
    _, headers, body = ntfy[1]
    assert body.decode() == "thermal_zone0 at 80.0 \u00b0C (level 75.0 \u00b0C), was warn"
    assert headers["Title"] == "Alert phone on rpi4-20231109: crit"
    assert headers["Priority"] == "5" and headers["Tags"] == "rotating_light,heatcurve"
    assert headers["Content-Type"].startswith("text/plain")
    assert headers["Authorization"].startswith("Basic ")       # userinfo: basic auth, as ntfy takes a token
    assert [h["Priority"] for _, h, _ in ntfy] == ["4", "5", "3"]

    slack = receiver.bodies(f"/services/T0/B0/{TOKEN}")
    assert [json.loads(b) for b in slack] == [
        {"text": "Alert chat on rpi4-20231109: warn, thermal_zone0 at 62.5 \u00b0C (level 60.0 \u00b0C), was ok"},
        {"text": "Alert chat on rpi4-20231109: crit, thermal_zone0 at 80.0 \u00b0C (level 75.0 \u00b0C), was warn"},
        {"text": "Alert chat on rpi4-20231109: ok, thermal_zone0 at 40.0 \u00b0C (level 75.0 \u00b0C), was crit"}]

    log = d.logs()
    assert TOKEN not in log
    assert f"Alert soc: webhook http://127.0.0.1:{receiver.port} delivered (HTTP 200)" in log
    assert f"Alert phone: webhook http://127.0.0.1:{receiver.port} delivered (HTTP 200)" in log


@pytest.mark.slow
def test_a_dead_receiver_does_not_slow_the_tick(start_daemon, fixture_copy, tmp_path, silent_port):
    """One receiver accepts and never answers, another port is closed: samples keep their rate,
    the API answers at once, the token is in no command line while curl waits, and the closed
    port is tried three times, then given up."""
    root = fixture_copy("rpi4")
    closed = free_port()
    conf = write_conf(tmp_path,
                      f"[alert silent]\nsensor = thermal_zone0\nwarn = 60\n"
                      f"webhook = https://user:{TOKEN}@127.0.0.1:{silent_port}/{TOKEN}?auth={TOKEN}\n\n"
                      f"[alert closed]\nsensor = thermal_zone0\nwarn = 60\n"
                      f"webhook = http://127.0.0.1:{closed}/{TOKEN}\nwebhook_format = ntfy\n")
    set_zone(root, 45)
    d = start_tree(start_daemon, root, "--config", conf)
    set_zone(root, 65)
    d.wait_for(lambda: rule(d, "silent")["state"] == "warn", what="warn")
    # curl waits on the silent receiver (up to its 10 s): its command line has no URL
    curls = d.wait_for(lambda: [c for c in cmdlines(d.proc.pid) if c.startswith("curl")], what="curl running")
    assert all(c.strip() == "curl -q --config -" for c in curls), curls
    assert not [c for c in cmdlines() if TOKEN in c]
    t0, ticks0 = time.monotonic(), d.get("/api/v1/status")[1]["ticks"]
    slowest = 0
    for c in (45, 65, 45, 65, 45):       # more transitions queue behind the silent one
        set_zone(root, c)
        time.sleep(0.6)
        start = time.monotonic()
        status, _ = d.get("/api/v1/status", timeout=2)
        slowest = max(slowest, time.monotonic() - start)
        assert status == 200
    ticks = d.get("/api/v1/status")[1]["ticks"] - ticks0
    elapsed = time.monotonic() - t0
    assert ticks >= 0.5 * elapsed / 0.1, (ticks, elapsed)       # 100 ms interval
    assert slowest < 0.5, slowest
    d.wait_for(lambda: "given up after 3 attempts" in d.logs(), timeout=20, what="closed port given up")
    log = d.logs()
    assert f"Alert closed: webhook http://127.0.0.1:{closed} cannot connect, trying again in 2 s" in log
    assert TOKEN not in log
    d.stop()
    assert "not delivered, dropped at exit" in d.logs()      # the silent one's queue
    assert TOKEN not in d.logs()


def test_the_queue_is_bounded(start_daemon, fixture_copy, tmp_path, silent_port):
    """16 rules post to one receiver that never answers: one at a time to a URL, so they queue;
    past 32 the oldest waiting one is dropped, each with a line, and what waits at exit is dropped."""
    root = fixture_copy("rpi4")
    conf = write_conf(tmp_path, "".join(f"[alert r{i}]\nsensor = thermal_zone0\nwarn = 60\nhysteresis = 0\n"
                                        f"webhook = http://127.0.0.1:{silent_port}/{TOKEN}\n\n" for i in range(16)))
    set_zone(root, 45)
    d = start_tree(start_daemon, root, "--config", conf)
    for c, state in ((65, "warn"), (45, "ok"), (65, "warn")):      # 48 transitions
        set_zone(root, c)
        d.wait_for(lambda: rule(d, "r15")["state"] == state, what=state)
    assert [c.strip() for c in cmdlines(d.proc.pid)] == ["curl -q --config -"]     # one at a time to a URL
    d.wait_for(lambda: d.logs().count("queue full (32 transitions waiting): the oldest is dropped") == 16,
               what="16 dropped")
    assert d.get("/api/v1/status", timeout=2)[0] == 200
    d.stop()
    assert "Alert webhooks: 32 transitions not delivered, dropped at exit" in d.logs()
    assert TOKEN not in d.logs()


def test_a_restart_does_not_resend(start_daemon, fixture_copy, tmp_path, receiver):
    root = fixture_copy("rpi4")
    state = str(tmp_path / "state")
    conf = write_conf(tmp_path, f"[alert soc]\nsensor = thermal_zone0\nwarn = 60\n"
                                f"webhook = {receiver.url('/hook')}\n")
    set_zone(root, 65)
    d = start_tree(start_daemon, root, "--config", conf, state_dir=state)
    wait_posts(d, receiver, "/hook", 1)
    set_zone(root, 45)
    wait_posts(d, receiver, "/hook", 2)
    d.stop()
    d2 = start_tree(start_daemon, root, "--config", conf, state_dir=state)
    assert len(d2.get("/api/v1/alerts")[1]["transitions"]) == 2        # kept, not posted again
    time.sleep(1)
    assert len(receiver.posts) == 2
    # as for the hook: a rule starts ok, so a sensor still hot at the start is a new transition
    set_zone(root, 65)
    posts = wait_posts(d2, receiver, "/hook", 3)
    assert (json.loads(posts[2])["previous"], json.loads(posts[2])["state"]) == ("ok", "warn")
    time.sleep(0.5)
    assert len(receiver.posts) == 3


def test_curl_missing_is_said_once(start_daemon, fixture_copy, tmp_path, receiver):
    root = fixture_copy("rpi4")
    conf = write_conf(tmp_path, f"[alert a]\nsensor = thermal_zone0\nwarn = 60\nwebhook = {receiver.url('/a')}\n\n"
                                f"[alert b]\nsensor = thermal_zone0\nwarn = 60\nwebhook = {receiver.url('/b')}\n")
    set_zone(root, 45)
    d = start_tree(start_daemon, root, "--config", conf, env={"PATH": str(tmp_path / "nothing")})
    assert d.logs().count("curl, which is not installed") == 1
    set_zone(root, 65)
    d.wait_for(lambda: rule(d, "b")["state"] == "warn", what="warn")
    time.sleep(0.5)
    assert d.logs().count("curl, which is not installed") == 1 and receiver.posts == []


def test_bad_webhooks_are_refused_without_quoting_the_url(heatcurved_bin, tmp_path):
    for value, message in ((f"ftp://h/{TOKEN}", "webhook: the URL must start with http:// or https://"),
                           (f"https://{TOKEN}@/x", "webhook: the URL has no host"),
                           (f"https://h:0/{TOKEN}", "webhook: the URL has no valid port (1 to 65535)")):
        conf = write_conf(tmp_path, f"[alert a]\nsensor = x\nwarn = 60\nwebhook = {value}\n")
        r = subprocess.run([heatcurved_bin, "--check-config", "--config", conf], capture_output=True, text=True)
        assert r.returncode != 0 and f"[alert a] {message}" in r.stdout + r.stderr, r.stdout + r.stderr
        assert TOKEN not in r.stdout + r.stderr
    conf = write_conf(tmp_path, "[alert a]\nsensor = x\nwarn = 60\nwebhook = http://h\nwebhook_format = teams\n")
    r = subprocess.run([heatcurved_bin, "--check-config", "--config", conf], capture_output=True, text=True)
    assert r.returncode != 0 and '[alert a] webhook_format: "teams" is not json, ntfy or slack' in r.stdout + r.stderr
