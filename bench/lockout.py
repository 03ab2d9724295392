#!/usr/bin/env python3
"""Slow connections from one host against everyone else's whole requests, in a network namespace.

    unshare --net bench/lockout.py HEATCURVED STATE_DIR lan|loopback

Run as root inside a network namespace of its own (unshare --net): it puts
2001:db8:1::1-8/64 (one LAN host's /64) and 2001:db8:2::1/64 (another host)
on that namespace's loopback, starts HEATCURVED there on [::]:8080 with its
state in STATE_DIR, and holds 200 slow connections (a header byte a second,
each reopened 0.5 s after it is closed) from the /64 ("lan") or from
127.0.0.1 ("loopback"). After 2 s it sends 30 whole requests from ::1 and,
for "lan", 30 from the other host, each counted as served when answered 200
within 3 s, and prints one line of JSON: the counts, the connections the
attacker holds open when the requests start, and its connects. Bounded: 40 s,
20,000 connects. tests/integration/test_http_limits.py runs it;
bench/lockout-latest.md has its figures.
"""
import json, select, socket, subprocess, sys, threading, time
if len(sys.argv) != 4 or sys.argv[3] not in ("lan", "loopback"):
    sys.exit(__doc__)
# Addresses go on the loopback of a namespace of our own, never the host's.
if [name for _, name in socket.if_nameindex()] != ["lo"]:
    sys.exit("run it in a network namespace of its own: unshare --net " + " ".join(sys.argv))
heatcurved, state, mode = sys.argv[1], sys.argv[2], sys.argv[3]
PORT, N = 8080, 200
ATTACKERS = [f"2001:db8:1::{i}" for i in range(1, 9)]      # one LAN host's /64
OTHER = "2001:db8:2::1"                                     # another host, another /64
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
for addr in ATTACKERS + [OTHER]:
    subprocess.run(["ip", "-6", "addr", "add", addr + "/64", "dev", "lo", "nodad"], check=True)
log = open(state + ".log", "w+")
p = subprocess.Popen([heatcurved, "--simulate", "--state-dir", state, "--listen", f":{PORT}"],
                     stdout=log, stderr=subprocess.STDOUT)

def connect(src, timeout):
    s = socket.socket(socket.AF_INET6 if ":" in src else socket.AF_INET)
    try:
        s.bind((src, 0))
        s.settimeout(timeout)
        s.connect((src, PORT))
    except OSError:
        s.close()
        raise
    return s

def served(src):
    # whether a whole request sent at once from src is answered 200 within 3 s
    try:
        with connect(src, 3) as s:
            s.sendall(b"GET /api/v1/status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            head = s.recv(64)
            return head.startswith(b"HTTP/1.1 200")
    except OSError:
        return False

def measure(src, out, key, deadline):
    n = 0
    for _ in range(30):
        if time.monotonic() > deadline:
            break
        n += served(src)
        time.sleep(0.1)
    out[key] = n

out = {"connects": 0}
try:
    for attempt in range(150):
        if served("::1"):
            break
        time.sleep(0.1)
    else:
        sys.exit("the daemon did not answer")
    sources = ATTACKERS if mode == "lan" else ["127.0.0.1"]
    slots, retry_at = [None] * N, [0.0] * N
    t0 = time.monotonic()
    threads, next_byte = [], t0 + 1.0
    while time.monotonic() - t0 < 40 and out["connects"] < 20000:
        now = time.monotonic()
        for i in range(N):
            if slots[i] is None and now >= retry_at[i]:
                out["connects"] += 1
                try:
                    slots[i] = connect(sources[i % len(sources)], 1)
                    slots[i].sendall(b"GET /api/v1/status HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                except OSError:
                    slots[i], retry_at[i] = None, now + 0.5
        live = [s for s in slots if s]
        ready = select.select(live, [], [], 0.1)[0] if live else []
        for i, s in enumerate(slots):
            if s and (s in ready or now >= next_byte):
                try:
                    gone = s in ready and s.recv(4096) == b""
                    if not gone and now >= next_byte:
                        s.sendall(b"a")
                except OSError:
                    gone = True
                if gone:
                    s.close()
                    slots[i], retry_at[i] = None, now + 0.5
        if now >= next_byte:
            next_byte = now + 1.0
        if not threads and now - t0 > 2.0:
            out["held"] = sum(s is not None for s in slots)
            deadline = now + 20
            threads = [threading.Thread(target=measure, args=("::1", out, "loopback", deadline))]
            if mode == "lan":
                threads.append(threading.Thread(target=measure, args=(OTHER, out, "other", deadline)))
            for t in threads:
                t.start()
        if threads and not any(t.is_alive() for t in threads):
            break
    for s in slots:
        if s:
            s.close()
finally:
    p.terminate()
    out["exit"] = p.wait(10)
    log.seek(0)
    out["sanitizer"] = [w for w in ("runtime error:", "AddressSanitizer", "LeakSanitizer") if w in log.read()]
print(json.dumps(out))
