#!/bin/bash
# setup-arm64.sh — installs the arm64 cross toolchain, qemu-user and the arm64
# -dev libraries through dpkg multiarch (see tests/cross/README.md).
#
# Multi-Arch: same libraries must have the same version for amd64 and arm64,
# so the amd64 copies that are older than the arm64 candidates are upgraded
# in the same apt-get command. Idempotent: does nothing when all is present.
# Extra arm64 packages: ARM64_EXTRA="libfoo-dev ..." in the environment.
set -euo pipefail

NATIVE=(crossbuild-essential-arm64 qemu-user-static binfmt-support)
# shellcheck disable=SC2206 # ARM64_EXTRA is a space-separated list
ARM64=(pkgconf libjson-c-dev libmicrohttpd-dev libsystemd-dev libgpiod-dev
       libcmocka-dev libinih-dev libcurl4-openssl-dev ${ARM64_EXTRA:-})

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "setup-arm64: need root or sudo" >&2; exit 1; }
    SUDO=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive

# The mirror can be briefly out of sync: retry the index download.
apt_update() {
    local i
    for i in 1 2 3; do
        "${SUDO[@]}" apt-get update -q && return 0
        echo "apt-get update failed (try $i of 3)" >&2
        [ "$i" -eq 3 ] || sleep 10
    done
    return 1
}

is_installed() {
    local status
    status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null) || return 1
    [ "${status:0:2}" = "ii" ]
}

wanted=("${NATIVE[@]}")
for p in "${ARM64[@]}"; do wanted+=("$p:arm64"); done

missing=()
for p in "${wanted[@]}"; do is_installed "$p" || missing+=("$p"); done
if [ "${#missing[@]}" -eq 0 ]; then
    echo "setup-arm64: cross environment present"
    exit 0
fi
echo "setup-arm64: missing ${missing[*]}"

if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    "${SUDO[@]}" dpkg --add-architecture arm64
fi
apt_update

# amd64 packages that must move to the arm64 candidate's version: those in
# the arm64 dependency closure that are installed here at another version.
arm64_args=()
for p in "${ARM64[@]}"; do arm64_args+=("$p:arm64"); done
mapfile -t closure < <(apt-cache depends --recurse --no-recommends --no-suggests \
        --no-conflicts --no-breaks --no-replaces --no-enhances "${arm64_args[@]}" \
    | grep -v '^[ <]' | grep ':arm64$' | sed 's/:arm64$//' | sort -u)
upgrade=()
if [ "${#closure[@]}" -gt 0 ]; then
    mapfile -t upgrade < <(
        dpkg-query -W -f='${db:Status-Abbrev} ${Package} ${Version}\n' "${closure[@]}" 2>/dev/null \
        | awk '$1 == "ii" { print $2, $3 }' \
        | while read -r name installed; do
              cand=$(apt-cache policy "$name:amd64" | awk '/Candidate:/ { print $2; exit }')
              if [ -n "$cand" ] && [ "$cand" != "(none)" ] && [ "$cand" != "$installed" ]; then
                  echo "$name"
              fi
          done)
fi
[ "${#upgrade[@]}" -eq 0 ] || echo "setup-arm64: upgrading amd64 side too: ${upgrade[*]}"

# apt may still name packages it cannot keep consistent ("held broken
# packages"); add every package named in its unmet-dependency report, retry.
pkgs=("${wanted[@]}" "${upgrade[@]}")
for attempt in 1 2 3 4; do
    log=$(mktemp)
    if "${SUDO[@]}" apt-get install -y -q --no-install-recommends "${pkgs[@]}" 2>&1 | tee "$log"; then
        rm -f "$log"
        exit 0
    fi
    mapfile -t extra < <(
        sed -n 's/^ *\([^ ]*\) *: *\(Pre\)\?Depends: \([^ ]*\).*/\1\n\3/p; s/^ *\([^ ]*\) *: *Breaks: \([^ ]*\).*/\1\n\2/p; s/^ \{2,\}\(Depends\|Breaks\): \([^ ]*\).*/\2/p' "$log" \
        | grep -E '^[a-z0-9][a-z0-9.+-]*(:[a-z0-9]+)?$' | sort -u)
    rm -f "$log"
    new=()
    for e in "${extra[@]}"; do
        case " ${pkgs[*]} " in *" $e "*) ;; *) new+=("$e") ;; esac
    done
    if [ "${#new[@]}" -eq 0 ]; then
        echo "setup-arm64: apt-get install failed and named nothing new to add" >&2
        exit 1
    fi
    echo "setup-arm64: retrying with ${new[*]} (attempt $((attempt + 1)))"
    pkgs+=("${new[@]}")
done
echo "setup-arm64: apt-get install kept failing" >&2
exit 1
