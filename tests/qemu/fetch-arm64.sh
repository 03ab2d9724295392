#!/bin/bash
# fetch-arm64.sh CACHEDIR — puts Debian's arm64 kernel (CACHEDIR/vmlinuz) and
# a static arm64 busybox (CACHEDIR/busybox) in CACHEDIR, once.
#
# Both come from apt's arm64 index (tests/cross/setup-arm64.sh adds arm64 as a
# foreign architecture) with `apt-get download`, which installs nothing.
# The kernel package is the one linux-image-arm64 depends on today; only
# /boot/vmlinuz-* is kept (an uncompressed Image, about 33 MB of the 60 MB
# package).
# Exit 0: ready; 1: could not be had (the message says why).
set -euo pipefail

CACHE=${1:?usage: fetch-arm64.sh CACHEDIR}
mkdir -p "$CACHE"
if [ -s "$CACHE/vmlinuz" ] && [ -s "$CACHE/busybox" ]; then
    exit 0
fi
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    echo "fetch-arm64: arm64 is not a dpkg architecture here (tests/cross/setup-arm64.sh adds it)" >&2
    exit 1
fi
kpkg=$(apt-cache depends linux-image-arm64:arm64 2>/dev/null \
    | sed -n 's/^ *Depends: \(linux-image-[0-9][^ :]*-arm64\)\(:arm64\)\?$/\1/p' | sed -n 1p) || true
if [ -z "$kpkg" ]; then
    echo "fetch-arm64: apt's index names no arm64 kernel (linux-image-arm64:arm64 has no linux-image-* dependency)" >&2
    exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "fetch-arm64: downloading $kpkg:arm64 and busybox-static:arm64" >&2
(cd "$tmp" && apt-get -o APT::Sandbox::User="$(id -un)" download -q "$kpkg:arm64" busybox-static:arm64 >&2)
dpkg-deb --fsys-tarfile "$tmp"/linux-image-*.deb | tar -x -C "$tmp" --wildcards './boot/vmlinuz-*'
dpkg-deb --fsys-tarfile "$tmp"/busybox-static_*.deb | tar -x -C "$tmp" ./bin/busybox
cp "$tmp"/boot/vmlinuz-* "$CACHE/vmlinuz.new" && mv "$CACHE/vmlinuz.new" "$CACHE/vmlinuz"
cp "$tmp/bin/busybox" "$CACHE/busybox.new" && mv "$CACHE/busybox.new" "$CACHE/busybox"
echo "$kpkg $(basename "$tmp"/boot/vmlinuz-*)" > "$CACHE/kernel-package"
echo "fetch-arm64: $(cat "$CACHE/kernel-package") in $CACHE" >&2
