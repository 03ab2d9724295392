#!/bin/bash
# check-qemu.sh BUILDDIR — cross-builds gpio-check for arm64 into BUILDDIR
# (the arm64 build of check-cross.sh when they share it) and runs the meson
# suite 'qemu': gpio-check on the PL061 GPIO chip of a qemu-system-aarch64
# virt machine. QEMU_REQUIRED=1 turns "cannot start the rig" into a failure.
set -euo pipefail

DIR=${1:?usage: check-qemu.sh BUILDDIR}
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
t0=$(date +%s)

"$SRC/tests/cross/setup-arm64.sh"
if [ ! -f "$DIR/build.ninja" ]; then
    if [ -f "$DIR/meson-private/coredata.dat" ]; then
        meson setup --reconfigure "$DIR" "$SRC" --cross-file "$SRC/tests/cross/arm64.ini"
    else
        meson setup "$DIR" "$SRC" --cross-file "$SRC/tests/cross/arm64.ini"
    fi
fi
ninja -C "$DIR" tests/gpio-check
meson test -C "$DIR" --suite qemu --no-rebuild --verbose
echo "check-qemu: done in $(( $(date +%s) - t0 )) s"
