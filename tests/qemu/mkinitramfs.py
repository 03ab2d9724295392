#!/usr/bin/env python3
"""mkinitramfs.py OUT.cpio.gz ROOTDIR — packs ROOTDIR as a gzip'd newc cpio for the kernel.

Adds /dev/console (char 5:1) so the kernel can open the console before /init
runs; written here so no root, cpio or fakeroot is needed. Owners are 0:0.
"""
import gzip
import itertools
import os
import stat
import sys

INODES = itertools.count(1)


def entry(name, mode, data=b"", rdev=(0, 0)):
    name_b = name.encode() + b"\0"
    fields = [next(INODES), mode, 0, 0, 1, 0, len(data), 0, 0, rdev[0], rdev[1], len(name_b), 0]
    hdr = b"070701" + b"".join(b"%08X" % f for f in fields)
    out = hdr + name_b
    out += b"\0" * (-len(out) % 4)
    out += data + b"\0" * (-len(data) % 4)
    return out


def main():
    out_path, root = sys.argv[1], sys.argv[2]
    parts = [entry("dev", stat.S_IFDIR | 0o755), entry("dev/console", stat.S_IFCHR | 0o600, rdev=(5, 1))]
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        rel = os.path.relpath(dirpath, root)
        for name in sorted(dirnames) + sorted(filenames):
            path = os.path.join(dirpath, name)
            arc = os.path.normpath(os.path.join(rel, name))
            st = os.lstat(path)
            if arc == "dev":
                continue
            if stat.S_ISLNK(st.st_mode):
                parts.append(entry(arc, stat.S_IFLNK | 0o777, os.readlink(path).encode()))
            elif stat.S_ISDIR(st.st_mode):
                parts.append(entry(arc, stat.S_IFDIR | 0o755))
            else:
                with open(path, "rb") as f:
                    parts.append(entry(arc, stat.S_IFREG | (st.st_mode & 0o777), f.read()))
    parts.append(entry("TRAILER!!!", 0))
    with gzip.open(out_path, "wb", compresslevel=1) as f:
        f.write(b"".join(parts))


if __name__ == "__main__":
    main()
