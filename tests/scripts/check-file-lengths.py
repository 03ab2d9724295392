#!/usr/bin/env python3
"""check-file-lengths.py — no text file of the tree is over 1,200 lines (README.md, "Layout").

Usage: check-file-lengths.py ROOT   exits 1 naming each file over the limit.
The files are git's tracked ones when ROOT is a git checkout, else every file
under ROOT but hidden folders and build trees. Binary files (a NUL byte) are
not counted: a recording is stored as NAME.csv.gz.
"""
import os
import subprocess
import sys

MAX_LINES = 1200


def tracked(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return [f for f in out.decode().split("\0") if f]


def walked(root):
    for top, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and
                   not os.path.exists(os.path.join(top, d, "meson-private"))]
        for f in files:
            yield os.path.relpath(os.path.join(top, f), root)


def main():
    root = sys.argv[1]
    files = tracked(root)
    problems = []
    for name in files if files is not None else walked(root):
        path = os.path.join(root, name)
        if os.path.islink(path) or not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            data = f.read()
        if b"\0" in data:
            continue
        lines = data.count(b"\n") + (not data.endswith(b"\n") and len(data) > 0)
        if lines > MAX_LINES:
            problems.append(f"{name}: {lines} lines, more than {MAX_LINES}: split it by subject "
                            f"(a recording goes into tests/data as NAME.csv.gz)")
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
