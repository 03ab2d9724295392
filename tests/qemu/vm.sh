#!/bin/bash
# vm.sh PROGRAM [ARG...] — runs an arm64 PROGRAM as the only job of a
# qemu-system-aarch64 "virt" machine booted with Debian's arm64 kernel, and
# exits with PROGRAM's exit status. The console (PROGRAM's output included)
# goes to stdout.
#
# The machine has a real kernel GPIO chip, the PL061 at /dev/gpiochip0
# (9030000.pl061, 8 lines); debugfs is mounted at /sys/kernel/debug. The
# initramfs holds a static busybox, PROGRAM and the shared libraries it needs,
# taken from the arm64 multiarch directories (ARM64_LIBDIRS).
# Software emulation (no KVM); the boot takes a few seconds.
#
# Exit 77 (skip) when qemu-system-aarch64 or the kernel cannot be had; 99
# when the machine did not report PROGRAM's exit status (crash or timeout).
# PROGRAM may also be a shell script (busybox sh runs it).
# Environment: HEATCURVE_CI_CACHE (default /var/cache/heatcurve-ci) for the
# kernel and busybox, VM_TIMEOUT in seconds (default 180), VM_PROGS more
# arm64 programs for /bin (their libraries come along), VM_FILES more files
# or trees as SRC:DST pairs (copied with their symlinks).
set -euo pipefail

PROG=${1:?usage: vm.sh PROGRAM [ARG...]}
shift
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${HEATCURVE_CI_CACHE:-/var/cache/heatcurve-ci}/qemu-arm64
LIBDIRS=${ARM64_LIBDIRS:-/lib/aarch64-linux-gnu /usr/lib/aarch64-linux-gnu}
TIMEOUT=${VM_TIMEOUT:-180}

skip() { echo "SKIP: $*"; exit 77; }

command -v qemu-system-aarch64 >/dev/null 2>&1 \
    || skip "qemu-system-aarch64 is not installed (Debian package qemu-system-arm)"
"$HERE/fetch-arm64.sh" "$CACHE" \
    || skip "Debian's arm64 kernel could not be fetched into $CACHE (see above)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
mkdir -p "$root/bin" "$root/lib" "$root/proc" "$root/sys" "$root/tmp"
cp "$CACHE/busybox" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
cp "$PROG" "$root/bin/"
for extra in ${VM_PROGS:-}; do cp "$extra" "$root/bin/"; done
for pair in ${VM_FILES:-}; do
    mkdir -p "$root$(dirname "${pair#*:}")"
    cp -a "${pair%%:*}" "$root${pair#*:}"
done
is_elf() { [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }

# The programs' interpreter and, recursively, the libraries they need, into
# /lib (a default search directory of any ld.so).
todo=()
for elf in "$PROG" ${VM_PROGS:-}; do
    is_elf "$elf" || continue
    todo+=("$elf")
    interp=$(readelf -l "$elf" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
    if [ -n "$interp" ] && [ ! -e "$root$interp" ]; then
        mkdir -p "$root$(dirname "$interp")"
        cp -L "$interp" "$root$interp"
    fi
done
while [ "${#todo[@]}" -gt 0 ]; do
    elf=${todo[0]}
    todo=("${todo[@]:1}")
    for lib in $(readelf -d "$elf" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
        [ -e "$root/lib/$lib" ] && continue
        found=
        for d in $LIBDIRS; do
            if [ -e "$d/$lib" ]; then found=$d/$lib; break; fi
        done
        [ -n "$found" ] || { echo "vm.sh: $lib (needed by $elf) is not in $LIBDIRS" >&2; exit 99; }
        cp -L "$found" "$root/lib/$lib"
        todo+=("$found")
    done
done

args=$(printf ' %q' "$@")
cat > "$root/init" <<INIT
#!/bin/sh
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sys /sys
/bin/busybox mount -t devtmpfs dev /dev
/bin/busybox mount -t debugfs debugfs /sys/kernel/debug
echo "vm: up after \$(/bin/busybox cut -d ' ' -f 1 /proc/uptime) s, kernel \$(/bin/busybox uname -r)"
$(is_elf "$PROG" || echo /bin/busybox sh) /bin/$(basename "$PROG")$args
echo "vm: exit status \$?"
/bin/busybox poweroff -f
INIT
chmod 755 "$root/init"
python3 "$HERE/mkinitramfs.py" "$tmp/initrd.gz" "$root"

t0=$(date +%s)
rc=0
timeout "$TIMEOUT" qemu-system-aarch64 -M virt -cpu cortex-a53 -smp 2 -m 1024 -nographic -no-reboot -nic none \
    -kernel "$CACHE/vmlinuz" -initrd "$tmp/initrd.gz" \
    -append "console=ttyAMA0 panic=-1 quiet rdinit=/init" </dev/null 2>&1 \
    | tr -d '\r' | tee "$tmp/console" || rc=$?
status=$(sed -n 's/^vm: exit status \([0-9]*\)$/\1/p' "$tmp/console" | tail -n 1)
echo "vm.sh: the machine ran for $(( $(date +%s) - t0 )) s"
if [ -z "$status" ]; then
    echo "vm.sh: no exit status from the machine (qemu exit $rc; timeout ${TIMEOUT}s)" >&2
    exit 99
fi
exit "$status"
