#!/bin/bash
# libgpiod2-prefix.sh [PREFIX [ARCH]] — unpacks libgpiod 2.x (libgpiod-dev,
# libgpiod3) for ARCH (default: this machine's; arm64 for the QEMU rig) from
# bookworm-backports into PREFIX (default /var/cache/heatcurve-ci/libgpiod2)
# and prints PREFIX.
#
# Debian 12 ships libgpiod 1.6; the 2.x API is in bookworm-backports, which is
# not in this machine's sources. apt runs on a private state (lists, status,
# cache, a sources file naming only bookworm-backports on the machine's own
# mirror), so the system's apt state and installed packages are untouched.
# The result is cached: a second call only checks the stamp.
# Use it with PKG_CONFIG_PATH=PREFIX/pkgconfig (a libgpiod.pc whose prefix
# points into PREFIX) and LD_LIBRARY_PATH=PREFIX/usr/lib/<multiarch>.
set -euo pipefail

PREFIX=${1:-/var/cache/heatcurve-ci/libgpiod2}
PKGS=(libgpiod-dev libgpiod3)
ARCH=${2:-$(dpkg --print-architecture)}
MULTIARCH=$(dpkg-architecture -a"$ARCH" -qDEB_HOST_MULTIARCH 2>/dev/null)
STAMP="$PREFIX/.complete"

mkdir -p "$PREFIX"
PREFIX=$(cd "$PREFIX" && pwd)
# PREFIX/usr is replaced below: never the system's own.
[ "$PREFIX" != / ] || { echo "libgpiod2-prefix: PREFIX must not be /" >&2; exit 2; }
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "${PKGS[*]} $ARCH" ]; then
    echo "$PREFIX"
    exit 0
fi

# The Debian mirror and key this machine already uses (deb822 or one-line).
mirror="" key=""
for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    read -r mirror key < <(awk '
        /^[ \t]*$/ { if (deb && uri != "" && main) { print uri, key; exit } deb = 0; main = 0; uri = ""; key = ""; next }
        /^Types:/ && / deb( |$)/ { deb = 1 }
        /^URIs:/ { uri = $2 }
        /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == "bookworm") main = 1 }
        /^Signed-By:/ { key = $2 }
        END { if (deb && uri != "" && main) print uri, key }' "$f") || true
    [ -n "$mirror" ] && break
done
if [ -z "$mirror" ]; then
    mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
        | sed -n 's/^deb \(\[[^]]*\] \)\?\([^ ]*\) bookworm .*/\2/p' | sed -n 1p) || true   # cat fails on a missing file
fi
mirror=${mirror:-http://deb.debian.org/debian}
[ -n "$key" ] && [ -f "$key" ] || key=/usr/share/keyrings/debian-archive-keyring.gpg
echo "libgpiod2-prefix: bookworm-backports from $mirror" >&2

P=$PREFIX/apt
rm -rf "$P" "${PREFIX:?}/usr" "$PREFIX/pkgconfig" "$STAMP"
mkdir -p "$P/lists/partial" "$P/cache/archives/partial" "$P/debs"
: > "$P/status"
echo "deb [arch=$ARCH signed-by=$key] $mirror bookworm-backports main" > "$P/sources.list"
APT_OPTS=(-o APT::Architecture="$ARCH" -o APT::Architectures="$ARCH"
          -o Dir::State::Lists="$P/lists" -o Dir::State::status="$P/status"
          -o Dir::Cache="$P/cache" -o Dir::Etc::SourceList="$P/sources.list"
          -o Dir::Etc::SourceParts=/dev/null -o APT::Sandbox::User="$(id -un)"
          -o Acquire::Languages=none)

for try in 1 2 3; do
    apt-get "${APT_OPTS[@]}" update -q >&2 && break
    [ "$try" -lt 3 ] || exit 1
    echo "libgpiod2-prefix: apt-get update failed (try $try of 3)" >&2
    sleep 10
done
(cd "$P/debs" && apt-get "${APT_OPTS[@]}" download -q "${PKGS[@]}" >&2)
for d in "$P"/debs/*.deb; do
    dpkg -x "$d" "$PREFIX"
done

# libgpiod.pc says prefix=/usr. PKG_CONFIG_SYSROOT_DIR would move every
# package's paths (json-c, libsystemd ...) into PREFIX too, and
# --define-prefix guesses the prefix wrongly from the multiarch path: write a
# copy whose prefix is PREFIX/usr.
pc=$PREFIX/usr/lib/$MULTIARCH/pkgconfig/libgpiod.pc
[ -f "$pc" ] || { echo "libgpiod2-prefix: no $pc in the unpacked packages" >&2; exit 1; }
mkdir -p "$PREFIX/pkgconfig"
sed "s|^prefix=.*|prefix=$PREFIX/usr|" "$pc" > "$PREFIX/pkgconfig/libgpiod.pc"
rm -rf "$P/debs" "$P/cache"
echo "${PKGS[*]} $ARCH" > "$STAMP"
echo "libgpiod2-prefix: $(PKG_CONFIG_PATH=$PREFIX/pkgconfig pkg-config --modversion libgpiod) in $PREFIX" >&2
echo "$PREFIX"
