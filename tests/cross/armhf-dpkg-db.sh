#!/bin/bash
# armhf-dpkg-db.sh ENVDIR — a dpkg database (ENVDIR/dpkg) describing the armhf
# sysroot that setup-armhf.sh unpacked (ENVDIR/sysroot from ENVDIR/apt/debs).
#
# dpkg-shlibdeps finds which package owns a library with `dpkg-query
# --search` and reads that package's symbols/shlibs file from the dpkg
# database. The sysroot was unpacked with dpkg -x, which records nothing, so
# an armhf package build would get no ${shlibs:Depends}. This writes a
# database (status, file lists with the sysroot's paths, symbols and shlibs
# files) for `dpkg-shlibdeps --admindir=ENVDIR/dpkg`. The host's dpkg
# database is not touched.
set -euo pipefail

ENV_DIR=$(cd "${1:?usage: armhf-dpkg-db.sh ENVDIR}" && pwd)
SYSROOT=$ENV_DIR/sysroot
DB=$ENV_DIR/dpkg
stamp=$(ls "$ENV_DIR"/apt/debs/*.deb | sort | md5sum | cut -d' ' -f1)
if [ -f "$DB/.complete" ] && [ "$(cat "$DB/.complete")" = "$stamp" ]; then
    echo "armhf-dpkg-db: present in $DB"
    exit 0
fi

rm -rf "$DB"
mkdir -p "$DB/info" "$DB/updates"
echo 1 > "$DB/info/format"     # multiarch layout: pkg:armhf.list for M-A: same
: > "$DB/status"
ctl=$(mktemp -d)
trap 'rm -rf "$ctl"' EXIT
for deb in "$ENV_DIR"/apt/debs/*.deb; do
    pkg=$(dpkg-deb -f "$deb" Package)
    name=$pkg
    [ "$(dpkg-deb -f "$deb" Multi-Arch)" != same ] || name=$pkg:$(dpkg-deb -f "$deb" Architecture)
    dpkg-deb -f "$deb" | awk 'NR == 1 { print; print "Status: install ok installed"; next } { print }' >> "$DB/status"
    echo >> "$DB/status"
    dpkg-deb --fsys-tarfile "$deb" | tar -t | sed -e 's:^\./:/:' -e 's:/$::' -e '/^$/d' \
        | sed "s:^:$SYSROOT:" > "$DB/info/$name.list"
    rm -rf "${ctl:?}"/*
    dpkg-deb -e "$deb" "$ctl"
    for f in symbols shlibs; do
        [ ! -f "$ctl/$f" ] || cp "$ctl/$f" "$DB/info/$name.$f"
    done
done
echo "$stamp" > "$DB/.complete"
echo "armhf-dpkg-db: $(grep -c '^Package:' "$DB/status") packages in $DB"
