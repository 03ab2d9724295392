#!/usr/bin/env python3
"""check-svg.py — every SVG given (files or directories of *.svg) is well-formed XML and an SVG 1.1 root.

Usage: check-svg.py PATH...   exits 1 naming each file that fails.
"""
import os
import sys
import xml.etree.ElementTree as ET

SVG_NS = "{http://www.w3.org/2000/svg}"


def check(path):
    root = ET.parse(path).getroot()
    if root.tag != SVG_NS + "svg":
        return f"root is {root.tag}, not svg in the SVG namespace"
    if root.get("version") != "1.1":
        return "no version=\"1.1\""
    for attr in ("width", "height"):
        if not (root.get(attr) or "").isdigit():
            return f"{attr} is not a whole number of px"
    if root.find(SVG_NS + "title") is None:
        return "no <title>"
    return None


def main():
    files = []
    for arg in sys.argv[1:]:
        if os.path.isdir(arg):
            files += sorted(os.path.join(arg, f) for f in os.listdir(arg) if f.endswith(".svg"))
        else:
            files.append(arg)
    if not files:
        sys.exit("check-svg: no SVG files given")
    bad = 0
    for f in files:
        try:
            problem = check(f)
        except ET.ParseError as e:
            problem = f"not well-formed XML: {e}"
        if problem:
            print(f"{f}: {problem}")
            bad += 1
    print(f"check-svg: {len(files) - bad} of {len(files)} SVG files valid")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
