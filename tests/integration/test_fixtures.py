"""Run `heatcurved --once` on every fixture tree and compare with its expected.json.

expected.json is matched as a subset: every key it gives must be present and
equal in the daemon's document; lists of objects that carry an "id" are
matched by id, other lists element by element; floats compare with 1e-6
tolerance.  The top-level keys n_temperatures, n_cooling_devices and
n_cpufreq are checked against the lengths of the daemon's lists.
"""
import json
import math
import os
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES_DIR = os.environ.get("FIXTURES_DIR", os.path.join(HERE, "..", "..", "data", "boards"))
HEATCURVED = os.environ.get("HEATCURVED")

COUNT_KEYS = {"n_temperatures": "temperatures",
              "n_cooling_devices": "cooling_devices",
              "n_cpufreq": "cpufreq"}


def fixture_boards():
    if not os.path.isdir(FIXTURES_DIR):
        return []
    return sorted(d for d in os.listdir(FIXTURES_DIR)
                  if os.path.isfile(os.path.join(FIXTURES_DIR, d, "expected.json")))


def _is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def subset_mismatches(expected, actual, path="$"):
    """Return a list of human-readable mismatches of `expected` within `actual`."""
    out = []
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return ["%s: expected an object, got %s" % (path, json.dumps(actual))]
        for k, v in expected.items():
            if k not in actual:
                out.append("%s.%s: missing (expected %s)" % (path, k, json.dumps(v)))
            else:
                out.extend(subset_mismatches(v, actual[k], "%s.%s" % (path, k)))
        return out
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return ["%s: expected a list, got %s" % (path, json.dumps(actual))]
        if expected and all(isinstance(e, dict) and "id" in e for e in expected):
            by_id = {}
            for a in actual:
                if isinstance(a, dict) and "id" in a:
                    by_id.setdefault(a["id"], a)
            for e in expected:
                p = "%s[id=%s]" % (path, e["id"])
                if e["id"] not in by_id:
                    out.append("%s: missing; ids present: %s" % (p, sorted(by_id)))
                else:
                    out.extend(subset_mismatches(e, by_id[e["id"]], p))
            return out
        if len(expected) != len(actual):
            return ["%s: expected %d elements %s, got %d %s" % (
                path, len(expected), json.dumps(expected), len(actual), json.dumps(actual))]
        for i, (e, a) in enumerate(zip(expected, actual)):
            out.extend(subset_mismatches(e, a, "%s[%d]" % (path, i)))
        return out
    if _is_num(expected) and _is_num(actual):
        if isinstance(expected, float) or isinstance(actual, float):
            if not math.isclose(expected, actual, rel_tol=0.0, abs_tol=1e-6):
                out.append("%s: expected %r, got %r" % (path, expected, actual))
        elif expected != actual:
            out.append("%s: expected %r, got %r" % (path, expected, actual))
        return out
    if expected != actual or type(expected) is not type(actual):
        out.append("%s: expected %s, got %s" % (path, json.dumps(expected), json.dumps(actual)))
    return out


def check_document(expected, doc):
    problems = []
    exp = dict(expected)
    for ck, lk in COUNT_KEYS.items():
        if ck in exp:
            n = exp.pop(ck)
            got = doc.get(lk)
            if not isinstance(got, list):
                problems.append("$.%s: missing or not a list (expected %d entries)" % (lk, n))
            elif len(got) != n:
                problems.append("$.%s: expected %d entries, got %d: %s" % (
                    lk, n, len(got), [x.get("id") if isinstance(x, dict) else x for x in got]))
    problems.extend(subset_mismatches(exp, doc))
    return problems


def test_matcher_self_check():
    """The matcher itself, on hand-made documents (needs no daemon)."""
    doc = {"board": {"model": "M", "kernel": "k", "cpus": 4, "extra": 1},
           "temperatures": [{"id": "b", "celsius": 43.0000001, "ok": True, "trips": [{"index": 0, "celsius": 70.0}]},
                            {"id": "a", "celsius": -44.0, "unit_quirk": None}],
           "cooling_devices": [], "cpufreq": [{"id": "policy0", "cpus": [0, 1], "cur_hz": 100000000}]}
    good = {"board": {"model": "M", "cpus": 4}, "n_temperatures": 2, "n_cooling_devices": 0, "n_cpufreq": 1,
            "temperatures": [{"id": "a", "celsius": -44.0, "unit_quirk": None},
                             {"id": "b", "celsius": 43.0, "trips": [{"index": 0, "celsius": 70.0}]}],
            "cpufreq": [{"id": "policy0", "cpus": [0, 1], "cur_hz": 100000000}]}
    assert check_document(good, doc) == []
    bad = {"board": {"model": "X"}, "n_temperatures": 3,
           "temperatures": [{"id": "b", "celsius": 43.1, "ok": False, "trips": [{"index": 0, "celsius": 70.0}, {}]},
                            {"id": "zz"}],
           "cpufreq": [{"id": "policy0", "cpus": [0, 1, 2]}]}
    probs = check_document(bad, doc)
    joined = "\n".join(probs)
    assert "$.temperatures: expected 3 entries, got 2" in joined
    assert "$.board.model: expected \"X\", got \"M\"" in joined
    assert "$.temperatures[id=b].celsius: expected 43.1" in joined
    assert "$.temperatures[id=b].ok: expected false, got true" in joined
    assert "$.temperatures[id=b].trips: expected 2 elements" in joined
    assert "$.temperatures[id=zz]: missing" in joined
    assert "$.cpufreq[id=policy0].cpus: expected 3 elements" in joined
    # null must not match 0, true must not match 1
    assert subset_mismatches(None, 0) and subset_mismatches(True, 1) and subset_mismatches(0, None)
    assert subset_mismatches({"k": 1}, {}) == ["$.k: missing (expected 1)"]


def test_expected_files_are_consistent():
    """Each expected.json parses and its counts agree with its own lists (needs no daemon)."""
    boards = fixture_boards()
    assert len(boards) >= 8, boards
    for b in boards:
        with open(os.path.join(FIXTURES_DIR, b, "expected.json")) as f:
            e = json.load(f)
        for ck, lk in COUNT_KEYS.items():
            assert ck in e, (b, ck)
            if lk in e:
                assert len(e[lk]) == e[ck], (b, ck)
        assert os.path.isfile(os.path.join(FIXTURES_DIR, b, "PROVENANCE.md")), b


@pytest.mark.parametrize("board", fixture_boards())
def test_once_matches_expected(board):
    if not HEATCURVED:
        pytest.skip("HEATCURVED is not set (path of the built heatcurved binary)")
    root = os.path.join(FIXTURES_DIR, board)
    with open(os.path.join(root, "expected.json")) as f:
        expected = json.load(f)
    proc = subprocess.run([HEATCURVED, "--once", "--sysfs-root", root, "--procfs-root", root],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert proc.returncode == 0, "heatcurved --once exited %d on %s\nstderr:\n%s" % (
        proc.returncode, board, proc.stderr.decode(errors="replace"))
    try:
        doc = json.loads(proc.stdout)
    except ValueError as exc:
        pytest.fail("stdout of heatcurved --once on %s is not JSON (%s):\n%s" % (
            board, exc, proc.stdout[:2000].decode(errors="replace")))
    problems = check_document(expected, doc)
    assert not problems, "%s: %d mismatch(es):\n  %s" % (board, len(problems), "\n  ".join(problems))
