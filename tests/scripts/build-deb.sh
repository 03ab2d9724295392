#!/bin/bash
# build-deb.sh OUTDIR [ARCH] — builds the heatcurve .deb for ARCH (default the
# host's) from a copy of this tree, puts it in OUTDIR and runs lintian on it.
#
# The copy keeps dpkg-buildpackage's output (written to the parent of the
# source folder) inside OUTDIR instead of next to the clone. Cross builds:
# arm64 through dpkg multiarch (tests/cross/setup-arm64.sh); armhf through
# the private sysroot (tests/cross/setup-armhf.sh, folder ARMHF_ENV), whose
# meson cross file is passed as DH_MESON_CROSS_FILE, with a dpkg database of
# it for dpkg-shlibdeps (tests/cross/armhf-dpkg-db.sh). The package build
# runs the unit suite and the fuzz seeds natively only: make check-cross runs
# the unit suite under qemu.
set -euo pipefail

OUT=${1:?usage: build-deb.sh OUTDIR [ARCH]}
HOST=$(dpkg --print-architecture)
ARCH=${2:-$HOST}
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
work=$OUT/work-$ARCH
t0=$(date +%s)

rm -rf "$work"
mkdir -p "$work/heatcurve"
# Tracked and new files, not build directories or other ignored files; from
# an unpacked tarball (no .git), everything but the build directories.
if git -C "$SRC" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$SRC" && git ls-files -z -co --exclude-standard | tar --null -T - -cf -) \
        | tar -xf - -C "$work/heatcurve"
else
    (cd "$SRC" && tar --exclude='./build*' --exclude=./.git -cf - .) | tar -xf - -C "$work/heatcurve"
fi

args=(-b -us -uc)
env=()
if [ "$ARCH" != "$HOST" ]; then
    # Build-dependencies are installed by the setup scripts, for a sysroot
    # dpkg does not know: skip dpkg-checkbuilddeps (-d).
    args+=(-a "$ARCH" -d -Pcross,nocheck)
    case $ARCH in
    armhf)
        armhf_env=$(cd "${ARMHF_ENV:?ARMHF_ENV: the folder of tests/cross/setup-armhf.sh}" && pwd)
        "$SRC/tests/cross/armhf-dpkg-db.sh" "$armhf_env"
        sr=$armhf_env/sysroot
        env+=("DH_MESON_CROSS_FILE=$armhf_env/armhf.ini"
              "HEATCURVE_SYSROOT_ADMINDIR=$armhf_env/dpkg"
              "HEATCURVE_SYSROOT_LIBDIRS=-l$sr/usr/lib/arm-linux-gnueabihf -l$sr/lib/arm-linux-gnueabihf") ;;
    esac
fi
(cd "$work/heatcurve" && env "${env[@]}" dpkg-buildpackage "${args[@]}") > "$work/build.log" 2>&1 || {
    tail -n 60 "$work/build.log"
    echo "build-deb: dpkg-buildpackage for $ARCH failed (log: $work/build.log)" >&2
    exit 1
}
mv "$work"/heatcurve_*_"$ARCH".deb "$work"/heatcurve_*_"$ARCH".changes "$work"/heatcurve_*_"$ARCH".buildinfo "$OUT/"
deb=$(ls "$OUT"/heatcurve_*_"$ARCH".deb)
echo "build-deb: $deb ($(du -h "$deb" | cut -f1)) in $(( $(date +%s) - t0 )) s"
dpkg-deb --info "$deb" | sed -n 's/^ \(Depends\|Architecture\|Version\):/  \1:/p'

# lintian: no error or warning; what remains is explained in
# debian/heatcurve.lintian-overrides.
lintian --fail-on error,warning --suppress-tags-from-file /dev/null "$deb"
echo "build-deb: lintian: no errors or warnings"
