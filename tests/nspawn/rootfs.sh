#!/bin/bash
# rootfs.sh DIR — a booted-systemd test needs a Debian 12 tree: debootstrap it
# once into DIR (kept between runs, outside the clone) and reuse it after.
#
# The tree is built in DIR.new and renamed when complete, so an interrupted
# debootstrap never leaves a half tree that looks ready. The stamp file names
# the package list: changing the list rebuilds the tree.
set -euo pipefail

DIR=${1:?usage: rootfs.sh DIR}
# systemd and apt for the service; curl to ask it; the daemon's libraries so
# `apt install ./heatcurve_*.deb` needs no network.
INCLUDE=systemd,systemd-sysv,dbus,curl,procps,iproute2,libmicrohttpd12,libjson-c5,libinih1,libcurl4,libgpiod2
STAMP="minbase bookworm $INCLUDE"

if [ -f "$DIR/.heatcurve-rootfs" ] && [ "$(cat "$DIR/.heatcurve-rootfs")" = "$STAMP" ]; then
    echo "rootfs: cached in $DIR"
    exit 0
fi

mirror=$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | sed -n 1p) || true
mirror=${mirror:-http://deb.debian.org/debian}
mkdir -p "$(dirname "$DIR")"
rm -rf "$DIR.new"
t0=$(date +%s)
for try in 1 2; do
    if debootstrap --variant=minbase --include="$INCLUDE" bookworm "$DIR.new" "$mirror" \
            > "$DIR.log" 2>&1; then
        break
    fi
    tail -n 20 "$DIR.log" >&2
    rm -rf "$DIR.new"
    [ "$try" -lt 2 ] || { echo "rootfs: debootstrap failed twice" >&2; exit 1; }
    sleep 10
done
# No getty on a console nobody reads, and apt inside works without a proxy.
rm -f "$DIR.new/etc/systemd/system/getty.target.wants/"*
echo "heatcurve-test" > "$DIR.new/etc/hostname"
echo "$STAMP" > "$DIR.new/.heatcurve-rootfs"
rm -rf "$DIR"
mv "$DIR.new" "$DIR"
echo "rootfs: debootstrap took $(( $(date +%s) - t0 )) s ($(du -sh "$DIR" | cut -f1))"
