#!/bin/bash
# check-qemu.sh BUILDDIR — cross-builds gpio-check and heatcurved for arm64
# twice and runs the meson suite 'qemu' (gpio-check, and heatcurved's alert
# rule and fan, on the PL061 GPIO chip of a qemu-system-aarch64 virt machine)
# with each:
#   BUILDDIR          against Debian 12's libgpiod 1.6 (the arm64 build of
#                     check-cross.sh when they share the directory)
#   BUILDDIR-gpiod2   against libgpiod 2.x from bookworm-backports, unpacked
#                     for arm64 by tests/scripts/libgpiod2-prefix.sh
# Only tests/gpio-check and heatcurved are built. QEMU_REQUIRED=1 turns
# "cannot start the rig" into a failure.
set -euo pipefail

DIR=${1:?usage: check-qemu.sh BUILDDIR}
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
t0=$(date +%s)

build_and_run() {
    local dir=$1
    shift
    if [ ! -f "$dir/build.ninja" ]; then
        if [ -f "$dir/meson-private/coredata.dat" ]; then
            meson setup --reconfigure "$dir" "$SRC" --cross-file "$SRC/tests/cross/arm64.ini" "$@"
        else
            meson setup "$dir" "$SRC" --cross-file "$SRC/tests/cross/arm64.ini" "$@"
        fi
    fi
    ninja -C "$dir" tests/gpio-check heatcurved
    meson test -C "$dir" --suite qemu --no-rebuild --verbose
}

"$SRC/tests/cross/setup-arm64.sh"
printf '\n----- libgpiod 1.6 (Debian 12) -----\n'
build_and_run "$DIR"
printf '\n----- libgpiod 2.x (bookworm-backports) -----\n'
prefix=$("$SRC/tests/scripts/libgpiod2-prefix.sh" "${GPIOD2_PREFIX_ARM64:-/var/cache/heatcurve-ci/libgpiod2-arm64}" arm64)
build_and_run "$DIR-gpiod2" -Dpkg_config_path="$prefix/pkgconfig" -Dintegration=false -Dcli=disabled
echo "check-qemu: both libgpiod APIs passed on the QEMU GPIO chip in $(( $(date +%s) - t0 )) s"
