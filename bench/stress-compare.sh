#!/bin/sh
# stress-compare.sh — CPU saturation of heatcurve's cpu load versus `stress --cpu N` and `stress-ng --cpu N --cpu-method matrixprod`.
#
# Usage: bench/stress-compare.sh [BUILD_DIR [SECONDS [N]]]
#   BUILD_DIR  a configured and built meson build directory (default: build);
#              the driver bench/stress-driver.c is its meson target bench/stress-driver
#   SECONDS    per load (default 10)
#   N          workers (default: nproc)
# Needs: ninja, stress, stress-ng (Debian packages of those names).
#
# Output, one header line, then one line per load, fields separated by blanks:
#   load                  cpu0  cpu1    mean   own   rate
#   idle                   1.2   0.8     1.0     -   -
#   heatcurve-sqrt        99.8  99.9    99.9  99.5   1.2e+08 ops/s
#   stress                99.9  99.9    99.9  99.6   -
#   stress-ng-matrixprod  99.7  99.8    99.8  99.4   1150 bogo-ops/s
# cpuK and mean: busy % of that core over the run, from /proc/stat deltas
# (everything but idle and iowait, so other processes on the machine count
# too: the idle line shows that background). own: CPU time of the load's own
# processes in % of N cores over the run (getrusage of the reaped workers;
# stress-ng: its usr+sys over real time); below 100 when something else takes
# a share. rate: heatcurve's work counter per second (ops: one sqrt, or one
# multiply-add for fma and matrix); stress-ng's "bogo ops/s (real time)" from
# --metrics-brief; "-" for stress, which has no counter. Rates of different
# tools are different units: compare utilisation across tools, rates only
# within one tool (across boards, over time, against throttling).
# `stress` runs as a heatcurve command load (process group killed at the end);
# the script warns when any process of that group outlives the stop.
set -eu

BUILD=${1:-build}
SECONDS_PER=${2:-10}
N=${3:-$(nproc)}
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM

ninja -C "$BUILD" bench/stress-driver >/dev/null
DRIVER=$BUILD/bench/stress-driver

# cpuK lines of /proc/stat: "cpuK busy total" in ticks.
snap() {
        awk '/^cpu[0-9]/ { t = 0; for (i = 2; i <= 9; i++) t += $i;
                           print $1, t - $5 - $6, t }' /proc/stat
}

# Busy % per core between two snapshots, then the mean.
util() {
        awk 'NR == FNR { b[$1] = $2; t[$1] = $3; next }
             { d = $3 - t[$1]; u = d > 0 ? 100 * ($2 - b[$1]) / d : 0;
               printf " %5.1f", u; s += u; n++ }
             END { printf "   %5.1f", n ? s / n : 0 }' "$1" "$2"
}

header() {
        printf '%-22s' load
        i=0
        while [ "$i" -lt "$(grep -c '^cpu[0-9]' /proc/stat)" ]; do
                printf ' %5s' "cpu$i"
                i=$((i + 1))
        done
        printf '   %5s %5s   %s\n' mean own rate
}

# run NAME COMMAND...: runs COMMAND (which must end by itself after
# SECONDS_PER), with its stdout and stderr in $TMP/out.
run() {
        name=$1
        shift
        snap > "$TMP/before"
        "$@" > "$TMP/out" 2>&1 || true
        snap > "$TMP/after"
        printf '%-22s' "$name"
        util "$TMP/before" "$TMP/after"
}

header
run idle sleep "$SECONDS_PER"
printf ' %5s   -\n' -
for method in sqrt fma matrix; do
        run "heatcurve-$method" "$DRIVER" cpu "$method" "$N" 100 "$SECONDS_PER"
        awk '/^total=/ { split($4, r, "="); split($2, u, "="); split($6, o, "=");
                         printf " %5.1f   %.3g %s/s\n", o[2], r[2], u[2] }' "$TMP/out"
done
run "stress" "$DRIVER" command - "$N" 100 "$SECONDS_PER" stress --cpu "$N"
awk '/^total=/ { split($6, o, "="); printf " %5.1f   -\n", o[2] }
     /leftover=1/ { print "warning: processes of the stress command outlived the stop" > "/dev/stderr" }' "$TMP/out"
run "stress-ng-matrixprod" stress-ng --cpu "$N" --cpu-method matrixprod --metrics-brief -t "${SECONDS_PER}s"
# metrc line: ... cpu <bogo ops> <real s> <usr s> <sys s> <ops/s real> <ops/s usr+sys>
awk -v n="$N" '$4 == "cpu" && NF >= 10 {
                 printf " %5.1f   %s bogo-ops/s\n", 100 * ($7 + $8) / $6 / n, $9; found = 1 }
               END { if (!found) print " ?   ?" }' "$TMP/out"
