#!/bin/bash
# alert-gpio-qemu.sh HEATCURVED — the meson test of suite 'qemu': the arm64
# heatcurved drives alert and fan lines on the PL061 GPIO chip of the QEMU
# virt machine (vm.sh runs alert-gpio.sh there with a fixture tree), and the
# lines' levels are read back from the kernel; and its ticks stay on the wall
# clock's grid when the clock is set, which only a machine of its own may do
# in a test. A skip (exit 77: no qemu-system-aarch64, no kernel) is a failure
# when QEMU_REQUIRED=1, as in CI.
set -uo pipefail

MIN_PASS=35
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
out=$(mktemp)
trap 'rm -f "$out"' EXIT

VM_PROGS="${1:?usage: alert-gpio-qemu.sh HEATCURVED}" VM_FILES="$SRC/data/boards/rpi4:/fixture" \
        "$HERE/vm.sh" "$HERE/alert-gpio.sh" | tee "$out"
rc=${PIPESTATUS[0]}
if [ "$rc" -eq 77 ]; then
        [ "${QEMU_REQUIRED:-0}" = 1 ] && { echo "alert-gpio-qemu: FAILED: the rig could not start and QEMU_REQUIRED=1"; exit 1; }
        exit 77
fi
pass=$(grep -c '^PASS ' "$out")
fail=$(grep -c '^FAIL ' "$out")
if [ "$rc" -eq 0 ] && [ "$fail" -eq 0 ] && [ "$pass" -ge "$MIN_PASS" ] &&
   grep -qE '^alert-gpio: [0-9]+ passed, 0 failed$' "$out"; then
        echo "alert-gpio-qemu: $pass checks passed: alert and fan lines on the PL061 (active high and low, warn, crit, lost), read back from the kernel; the tick's grid across a clock step"
        exit 0
fi
echo "alert-gpio-qemu: FAILED: exit $rc, $pass passed, $fail failed (want >= $MIN_PASS passed, 0 failed)"
exit 1
