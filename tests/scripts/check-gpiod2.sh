#!/bin/bash
# check-gpiod2.sh BUILDDIR — builds the project against libgpiod 2.x from
# bookworm-backports (unpacked by libgpiod2-prefix.sh, the system keeps its
# 1.6) and runs the unit suite with that library loaded.
#
# The meson option pkg_config_path (kept across reconfigures) points at the
# prefix's libgpiod.pc; every other package still comes from the system.
# LD_LIBRARY_PATH makes the tests load the prefix's libgpiod.so.3, and
# test-gpio checks that the library it loaded is a 2.x.
set -euo pipefail

BUILD=${1:?usage: check-gpiod2.sh BUILDDIR}
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
PREFIX=$("$HERE/libgpiod2-prefix.sh" "${GPIOD2_PREFIX:-/var/cache/heatcurve-ci/libgpiod2}")
LIBDIR=$PREFIX/usr/lib/$(gcc -print-multiarch)
t0=$(date +%s)

opts=(-Dpkg_config_path="$PREFIX/pkgconfig" -Dintegration=false -Dcli=disabled)
if [ ! -f "$BUILD/build.ninja" ]; then
    if [ -f "$BUILD/meson-private/coredata.dat" ]; then
        meson setup --reconfigure "$BUILD" "$SRC" "${opts[@]}"
    else
        meson setup "$BUILD" "$SRC" "${opts[@]}"
    fi
fi
found=$(meson introspect --dependencies "$BUILD" \
    | python3 -c 'import json, sys; print(" ".join(d["version"] for d in json.load(sys.stdin) if d["name"] == "libgpiod"))')
case $found in
2.*) echo "check-gpiod2: configured with libgpiod $found from $PREFIX" ;;
*) echo "check-gpiod2: $BUILD found libgpiod '$found', not 2.x" >&2; exit 1 ;;
esac
ninja -C "$BUILD"
LD_LIBRARY_PATH=$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
    meson test -C "$BUILD" --suite unit --print-errorlogs --no-rebuild
echo "check-gpiod2: libgpiod $found build and unit tests passed in $(( $(date +%s) - t0 )) s"
