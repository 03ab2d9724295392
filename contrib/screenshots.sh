#!/bin/sh
# screenshots.sh — retakes README's pictures (docs/*.png) from a built tree: heatcurved on the simulated board, three cases, headless Chromium.
#
#   contrib/screenshots.sh [BUILD_DIR [OUT_DIR]]      (default: build docs; or `make screenshots`)
#
# Starts heatcurved --simulate (the ODROID-C2 board, heated only by its own
# runs: load_source = own, tau 3 s) in a temporary state directory on a free
# 127.0.0.1 port; runs two cases twice each ("stock case", then after a
# restart with a smaller rise "heatsink"), a third case once, then a run
# hot enough to cross the board's passive trip and an alert's warn; while
# it runs, takes
# the dashboard (1200 px and 360 px wide), a run page, the compare page of
# the four runs, and that of one "heatsink" run against one of a third case
# barely warmer ("thin heatsink": not conclusive) with /?live=0, which
# renders once and finishes loading.
# About three minutes; everything is stopped and removed on exit, and the
# whole script is cut off after SCREENSHOTS_TIMEOUT seconds (default 480).
set -eu

if [ -z "${SCREENSHOTS_TIMED:-}" ]; then
        SCREENSHOTS_TIMED=1 exec timeout -k 10 "${SCREENSHOTS_TIMEOUT:-480}" "$0" "$@"
fi

top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
out=${2:-$top/docs}
daemon=$build/heatcurved
ctl=$build/cli/heatcurvectl
chromium=$(command -v chromium || command -v chromium-browser || true)

for f in "$daemon" "$ctl"; do
        [ -x "$f" ] || { echo "screenshots: $f is not built (ninja -C $build)" >&2; exit 1; }
done
[ -n "$chromium" ] || { echo "screenshots: chromium is not installed (Debian package chromium)" >&2; exit 1; }
mkdir -p "$out"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/heatcurve-pictures.XXXXXX")
pid=
stop_daemon() {
        if [ -n "$pid" ]; then
                kill "$pid" 2>/dev/null || true
                wait "$pid" 2>/dev/null || true
                pid=
        fi
}
cleanup() {
        status=$?
        trap - EXIT INT TERM
        stop_daemon
        [ "$status" = 0 ] || { echo "screenshots: failed; the daemon's log:" >&2; cat "$tmp/log" >&2 2>/dev/null || true; }
        rm -rf "$tmp"
        exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url=http://127.0.0.1:$port
ambient=25

# A config per case: the same board and load, a different rise at full
# load (at duty 20 % the runs rise 30 and 25 °C over ambient).
write_conf() {
        cat >"$tmp/$1.conf" <<EOF
[simulate]
board = odroid-c2-3.14
ambient = $ambient
tau = 3s
rise = $2
quantize = no
load_source = own

[runs]
allow_root = yes

[alert soc]
sensor = thermal_zone0
warn = 65
crit = 85
EOF
}

start_daemon() {
        HEATCURVE_BOARDS_DIR=${HEATCURVE_BOARDS_DIR:-$top/data/boards} "$daemon" --config "$tmp/$1.conf" \
                --simulate --interval 200ms --state-dir "$tmp/state" --listen "127.0.0.1:$port" >>"$tmp/log" 2>&1 &
        pid=$!
        for _ in $(seq 50); do
                curl -fsS -o /dev/null "$url/api/v1/status" 2>/dev/null && return 0
                kill -0 "$pid" 2>/dev/null || { pid=; echo "screenshots: heatcurved did not start" >&2; return 1; }
                sleep 0.2
        done
        echo "screenshots: heatcurved does not answer on $url" >&2
        return 1
}

runs() {        # LABEL N: N runs of a case, one after the other
        "$ctl" --url "$url" run --label "$1" --ambient "$ambient" --idle duration=4s \
                --stress cpu,duration=16s,duty=20 --cooldown until=baseline,max=20s --repeat "$2" --wait >/dev/null
}

shot() {        # NAME WIDTH HEIGHT PAGE
        "$chromium" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
                --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars \
                --user-data-dir="$tmp/profile" --force-device-scale-factor=1 --virtual-time-budget=8000 \
                --window-size="$2,$3" --screenshot="$out/$1.png" "$url/?live=0$4" >/dev/null 2>&1
        echo "screenshots: $out/$1.png"
}

mkdir -p "$tmp/state"
write_conf stock 150
write_conf heatsink 125
write_conf thin 128
start_daemon stock
runs "stock case" 2
stop_daemon
start_daemon heatsink
runs "heatsink" 2
stop_daemon
start_daemon thin       # a case barely warmer than "heatsink": one run of each cannot tell them apart
runs "thin heatsink" 1

# The dashboard while a run is hot: duty 40 % rises 50 °C, past the
# board's 70 °C passive trip and the alert's warn.
"$ctl" --url "$url" run --label "heatsink, 40 % load" --ambient "$ambient" --idle duration=4s \
        --stress cpu,duration=2m,duty=40 >/dev/null
for _ in $(seq 150); do
        hot=$(curl -fsS "$url/api/v1/status" | python3 -c 'import json, sys
print(int(json.load(sys.stdin)["sensors"]["hottest"]["celsius"] or 0))' 2>/dev/null || echo 0)
        [ "$hot" -ge 72 ] && break
        sleep 0.2
done
shot dashboard 1200 1520 ""
shot dashboard-phone 360 1400 ""
shot run 1100 900 "#/runs/4"
shot compare 1200 1150 "#/compare?runs=1,2,3,4"
shot compare-one-each 1200 1150 "#/compare?runs=3,5"
"$ctl" --url "$url" stop 6 >/dev/null
