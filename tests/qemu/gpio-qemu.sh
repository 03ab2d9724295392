#!/bin/bash
# gpio-qemu.sh GPIO_CHECK [API] — the meson test of suite 'qemu': runs the arm64
# gpio-check program in the QEMU virt machine (vm.sh) and passes only when it
# printed its summary with at least MIN_PASS passed checks and no FAIL line.
# A skip (exit 77: no qemu-system-aarch64, no kernel) is a failure when
# QEMU_REQUIRED=1, as in CI.
set -uo pipefail

MIN_PASS=27
HERE=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp)
trap 'rm -f "$out"' EXIT

"$HERE/vm.sh" "${1:?usage: gpio-qemu.sh GPIO_CHECK [API]}" ${2:+"$2"} | tee "$out"
rc=${PIPESTATUS[0]}
if [ "$rc" -eq 77 ]; then
    if [ "${QEMU_REQUIRED:-0}" = 1 ]; then
        echo "gpio-qemu: FAILED: the rig could not start and QEMU_REQUIRED=1"
        exit 1
    fi
    exit 77
fi
pass=$(grep -c '^PASS ' "$out")
fail=$(grep -c '^FAIL ' "$out")
summary=$(grep -E '^gpio-check: [0-9]+ passed, [0-9]+ failed$' "$out" || true)
if [ "$rc" -eq 0 ] && [ "$fail" -eq 0 ] && [ -n "$summary" ] && [ "$pass" -ge "$MIN_PASS" ]; then
    echo "gpio-qemu: $pass checks passed on the PL061 of the QEMU virt machine"
    exit 0
fi
why="exit $rc, $pass passed, $fail failed (want >= $MIN_PASS passed, 0 failed)"
[ -n "$summary" ] || why="$why, no summary line: gpio-check did not finish"
echo "gpio-qemu: FAILED: $why"
grep '^FAIL ' "$out"
exit 1
