#!/usr/bin/env python3
"""check-test-files.py — every tests/integration/test_*.py is one that tests/meson.build registers.

Usage: check-test-files.py DIR NAME...   exits 1 naming each file of DIR that no NAME covers
(a file left out of the list would never run) and each NAME with no file.
"""
import os
import sys


def main():
    directory, names = sys.argv[1], set(sys.argv[2:])
    files = {f[:-3] for f in os.listdir(directory) if f.startswith("test_") and f.endswith(".py")}
    problems = [f"{directory}/{f}.py: not in integration_files of tests/meson.build" for f in sorted(files - names)]
    problems += [f"{n}: in integration_files of tests/meson.build, but no {directory}/{n}.py"
                 for n in sorted(names - files)]
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
