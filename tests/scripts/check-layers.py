#!/usr/bin/env python3
"""check-layers.py — the folders' #include lines must follow README.md's Layout diagram.

The diagram (the first fenced block under "## Layout") lists the layers top
to bottom, one "name/" at the start of a line, a line "↓" between two layers;
folders with no "↓" between them are one layer, side by side. A line
"name/ → a/, b/" is a program beside the layers that may use just those. A
folder may include the headers of the folders below it, never one above it,
never one beside it and never its own program's neighbours. Prints the arrows
between folders, one line each, and exits 1 on any include that goes up,
sideways or into an unknown folder, or on a header name found in two folders
(an include of it would be ambiguous).

Usage: check-layers.py [SOURCE_ROOT]
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def read_diagram(root):
    text = open(os.path.join(root, "README.md"), encoding="utf-8").read()
    section = text.split("\n## Layout", 1)
    if len(section) < 2 or "```" not in section[1]:
        sys.exit("check-layers: README.md has no fenced diagram under \"## Layout\"")
    block = section[1].split("```", 2)[1]
    layers, sides = [[]], {}
    for line in block.splitlines():
        if line.strip() == "↓":
            layers.append([])
            continue
        m = re.match(r"^([a-z]+)/(.*)$", line.strip())
        if not m:
            continue
        name, rest = m.group(1), m.group(2)
        if "→" in rest:
            sides[name] = re.findall(r"([a-z]+)/", rest.split("→", 1)[1])
        else:
            layers[-1].append(name)
    return [layer for layer in layers if layer], sides


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    layers, sides = read_diagram(root)
    allowed = {}
    for i, layer in enumerate(layers):
        below = {name for lower in layers[i + 1:] for name in lower}
        for name in layer:
            allowed[name] = below               # top to bottom: every layer listed after
    for name, uses in sides.items():
        allowed[name] = set(uses)
    folders = list(allowed)
    owner, problems = {}, []
    for d in folders:
        for f in sorted(os.listdir(os.path.join(root, d))):
            if f.endswith(".h"):
                if f in owner:
                    problems.append(f"{f} is in both {owner[f]}/ and {d}/")
                owner[f] = d
    arrows = {}
    for d in folders:
        for f in sorted(os.listdir(os.path.join(root, d))):
            if not f.endswith((".c", ".h")):
                continue
            for inc in INCLUDE.findall(open(os.path.join(root, d, f), encoding="utf-8").read()):
                target = owner.get(os.path.basename(inc))
                if target is None or target == d:
                    continue            # own folder, or generated (build-config.h)
                arrows.setdefault((d, target), []).append(f"{f}: {inc}")
                if target not in allowed[d]:
                    problems.append(f"{d}/{f} includes {target}/{inc}, which is not below {d}/")
    for (a, b), where in sorted(arrows.items()):
        print(f"{a}/ -> {b}/  ({len(where)} includes)")
    for p in problems:
        print(f"check-layers: {p}", file=sys.stderr)
    print(f"check-layers: {len(folders)} folders, {sum(map(len, arrows.values()))} includes across them, "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
