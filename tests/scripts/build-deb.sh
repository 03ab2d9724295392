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

# meson list of the words of dpkg-buildflags' FLAG for ARCH, hardening=+all
# as debian/rules asks.
buildflags_list() {
    local words
    read -r -a words <<< "$(cd "$work/heatcurve" &&
        DEB_HOST_ARCH=$1 DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get "$2")"
    printf ", '%s'" "${words[@]}"
}

# hardened_ini IN OUT: the cross file IN with Debian's flags for ARCH after its own.
hardened_ini() {
    local cflags ldflags
    cflags="$(buildflags_list "$ARCH" CPPFLAGS)$(buildflags_list "$ARCH" CFLAGS)"
    ldflags=$(buildflags_list "$ARCH" LDFLAGS)
    sed -e "s|^c_args = \['--sysroot=' + sysroot\]$|c_args = ['--sysroot=' + sysroot$cflags]|" \
        -e "s|^c_link_args = \['--sysroot=' + sysroot\]$|c_link_args = ['--sysroot=' + sysroot$ldflags]|" "$1" > "$2"
    grep -q -- "-fstack-protector" "$2" && grep -q -- "relro" "$2" || {
        echo "build-deb: no hardening flags could be put into $2" >&2
        exit 1
    }
}

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
        # A cross file's c_args replace the flags dpkg-buildflags gives a
        # native build: Debian's hardening and -O2 for armhf go into a copy.
        hardened_ini $armhf_env/armhf.ini "$work.ini"
        env+=("DH_MESON_CROSS_FILE=$work.ini"
              "HEATCURVE_SYSROOT_ADMINDIR=$armhf_env/dpkg"
              "HEATCURVE_SYSROOT_LIBDIRS=-l$sr/usr/lib/arm-linux-gnueabihf -l$sr/lib/arm-linux-gnueabihf") ;;
    esac
fi
(cd "$work/heatcurve" && env "${env[@]}" dpkg-buildpackage "${args[@]}") > "$work/build.log" 2>&1 || {
    tail -n 60 "$work/build.log"
    echo "build-deb: dpkg-buildpackage for $ARCH failed (log: $work/build.log)" >&2
    exit 1
}
# the debug symbols too: the .changes lists them
mv "$work"/heatcurve*_"$ARCH".*deb "$work"/heatcurve_*_"$ARCH".changes "$work"/heatcurve_*_"$ARCH".buildinfo "$OUT/"
deb=$(ls "$OUT"/heatcurve_*_"$ARCH".deb)
echo "build-deb: $deb ($(du -h "$deb" | cut -f1)) in $(( $(date +%s) - t0 )) s"
dpkg-deb --info "$deb" | sed -n 's/^ \(Depends\|Architecture\|Version\):/  \1:/p'

# lintian: no error or warning; what remains is explained in
# debian/heatcurve.lintian-overrides.
lintian --fail-on error,warning --suppress-tags-from-file /dev/null "$deb"
echo "build-deb: lintian: no errors or warnings"
# and every file the .changes names is beside it
lintian --fail-on error,warning "$(ls "$OUT"/heatcurve_*_"$ARCH".changes)"
echo "build-deb: lintian on the .changes: no errors or warnings"

# The daemon as packaged is hardened whatever the architecture: full RELRO
# with BIND_NOW, the stack protector, fortified calls.
bin=$(mktemp -d)
dpkg-deb -x "$deb" "$bin"
daemon=$bin/usr/sbin/heatcurved
dyn=$(LC_ALL=C readelf -d -W "$daemon")
syms=$(LC_ALL=C readelf --dyn-syms -W "$daemon")
chk=$(grep -c '__[a-z_]*_chk' <<< "$syms" || true)
rm -rf "$bin"
grep -q 'BIND_NOW' <<< "$dyn" && grep -q '__stack_chk_fail' <<< "$syms" && [ "$chk" -gt 1 ] || {
    echo "build-deb: heatcurved for $ARCH is not hardened (BIND_NOW, stack protector, fortify: $chk __*_chk)" >&2
    exit 1
}
echo "build-deb: heatcurved for $ARCH: BIND_NOW, stack protector, $chk fortified calls"
