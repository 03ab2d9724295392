"""Memory of the real heatcurved over large answers: bounded while made, given back after."""
import json
import struct
import time
import urllib.request
import zlib

import pytest

from conftest import fixture_path, sanitized, status_kib

SAMPLES = 10 * 1024              # ten full blocks, 1 s apart: 2 h 50 min
COLUMNS = 20


class Bits:
    """Most significant bit first, as core/history.c writes its streams."""

    def __init__(self):
        self.value, self.n = 0, 0

    def put(self, v, n):
        self.value = (self.value << n) | (v & ((1 << n) - 1))
        self.n += n

    def explicit(self, d):
        """The '111 w[7] u[w]' symbol: u = zigzag(d) + 1 in w bits."""
        u = ((d << 1) ^ (d >> 63)) & ((1 << 64) - 1)
        u += 1
        self.put(7, 3)
        self.put(u.bit_length(), 7)
        self.put(u, u.bit_length())

    def bytes(self):
        pad = -self.n % 8
        return (self.value << pad).to_bytes((self.n + pad) // 8, "big")


def block_record(t0_ms, n, columns):
    """One record of history.bin: n samples 1 s apart, every column's values stepping by one."""
    times = Bits()
    times.explicit(1000)                    # the first delta; its delta-of-delta is 0 after
    for _ in range(n - 2):
        times.put(0, 1)
    streams = [times.bytes()]
    for c in range(columns):
        v, bits = Bits(), Bits()
        bits.put(1, 16)                     # step 1 centidegree
        prev = 0
        for i in range(n):
            value = 4000 + 100 * c + (i // 8) % 50
            if value == prev:
                bits.put(0, 1)
            else:
                bits.explicit(value - prev)
            prev = value
        streams.append(bits.bytes())
    ends, size = [], 0
    for s in streams:
        size += len(s)
        ends.append(size)
    payload = struct.pack("<IqqIIII", 0, t0_ms, t0_ms + 1000 * (n - 1), n, len(streams), size, 0)
    payload += struct.pack(f"<{len(ends)}I", *ends) + b"".join(streams)
    return struct.pack("<II", len(payload), zlib.crc32(payload)) + payload


def write_history(path, end_ms):
    head = b"HCHIST" + struct.pack("<HI", 2, COLUMNS)
    for c in range(COLUMNS):
        name = f"test:zone{c}".encode()
        head += bytes([0, len(name)]) + name           # kind 0: temperature
    out = head + struct.pack("<I", zlib.crc32(head))
    t0 = end_ms - 1000 * (SAMPLES - 1)
    for b in range(SAMPLES // 1024):
        out += block_record(t0 + 1000 * 1024 * b, 1024, COLUMNS)
    path.write_bytes(out + struct.pack("<II", 0, 0))


def test_large_history_answers_are_written_not_built(start_daemon, tmp_path):
    """Five 1000-point answers of 20 series, about 300 KB of JSON each. They are written
    as text, not built as a json-c tree (which took about 7 MB for one): while they are
    made, the daemon's peak grows by less than four times one answer's size. Afterwards
    its anonymous memory (heap, not the code pages the first answer reads in) is within
    256 KiB of what it was before them."""
    state = tmp_path / "state"
    state.mkdir()
    write_history(state / "history.bin", int(time.time() * 1000) - 1000)
    root = fixture_path("rpi4")
    d = start_daemon("--sysfs-root", root, "--procfs-root", root, "--interval", "1s", state_dir=str(state))
    pid = d.proc.pid
    if sanitized(pid):
        pytest.skip("AddressSanitizer keeps freed memory in its quarantine")
    _, st = d.get("/api/v1/status")
    assert st["history"]["samples"] >= SAMPLES, st["history"]
    query = "/api/v1/history?points=1000&from=-3h&sensors=" + ",".join(f"test:zone{c}" for c in range(COLUMNS))
    rss, anon = status_kib(pid, "VmRSS"), status_kib(pid, "RssAnon")
    for _ in range(5):
        with urllib.request.urlopen(d.url + query, timeout=10) as resp:
            raw = resp.read()
        body = json.loads(raw)
        assert len(body["t_ms"]) > 900 and len(body["series"]) == COLUMNS
    peak = status_kib(pid, "VmHWM")
    assert len(raw) > 200 * 1024, len(raw)
    assert (peak - rss) * 1024 < 4 * len(raw), (rss, peak, len(raw))
    # The heap is given back when the last answer is released, which is when the daemon
    # sees the connection closed: after the client has read it, on a busy machine later.
    for _ in range(50):
        after = status_kib(pid, "RssAnon")
        if after - anon <= 256:
            break
        time.sleep(0.1)
    assert after - anon <= 256, (anon, after, peak)
