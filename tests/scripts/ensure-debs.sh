#!/bin/bash
# ensure-debs.sh PKG... — installs the Debian packages that are not installed yet.
#
# Checks each package with dpkg-query; if any is missing, runs apt-get update
# once and one apt-get install for the missing ones. Uses sudo when not root.
# Set APT_UPDATED=1 to skip the update (the caller already did it).
set -euo pipefail

if [ "$#" -eq 0 ]; then
    exit 0
fi

is_installed() {
    local status
    status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null) || return 1
    [ "${status:0:2}" = "ii" ]
}

missing=()
for pkg in "$@"; do
    is_installed "$pkg" || missing+=("$pkg")
done

if [ "${#missing[@]}" -eq 0 ]; then
    echo "packages: all $# present"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "packages missing and no apt-get to install them: ${missing[*]}" >&2
    exit 1
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO=(sudo)
    else
        echo "packages missing: ${missing[*]}" >&2
        echo "run as root, or install sudo, to let this install them" >&2
        exit 1
    fi
fi

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

echo "packages: installing ${missing[*]}"
if [ "${APT_UPDATED:-0}" != 1 ]; then
    apt_update
fi
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends "${missing[@]}"
