#!/usr/bin/env bash
# bench/metrics.sh — GET /metrics of heatcurved against prometheus-node-exporter's on the same
# fixture trees, in one run: bytes and samples per scrape (every board), CPU per scrape,
# instructions per request, requests/s. See bench/README.md.
#
# Usage: bench/metrics.sh [--quick] [--build-dir DIR] [--fixture BOARD] [--out FILE] [--keep]
#   --quick          shorter runs (wrk 3 s instead of 10 s, 100 scrapes instead of 400)
#   --build-dir DIR  use this configured meson build dir (built with ninja, not reconfigured);
#                    default: build-bench/ in the source tree, built as debian/rules builds it
#   --fixture BOARD  the board of the CPU and requests/s figures (default x86-laptop-coretemp);
#                    sizes are measured on every board of data/boards
#   --out FILE       where the Markdown results go (default bench/metrics-latest.md)
#   --keep           keep the scratch directory (logs, callgrind output) and print its path
# Needs: meson ninja curl wrk valgrind prometheus-node-exporter ss timeout.
# Only 127.0.0.1 is contacted; every load is bounded in time; every process started here is
# stopped on exit, including on Ctrl-C.
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH=metrics.sh
OUT=$SRC/bench/metrics-latest.md
NEXT_PORT=18800
# shellcheck source=bench/lib.sh
. "$SRC/bench/lib.sh"
bench_options "$@"

if [ "$QUICK" = 1 ]; then
        WRK_SECS=3 SCRAPES=100 CG_REQS=50
else
        WRK_SECS=10 SCRAPES=400 CG_REQS=200
fi

bench_need meson ninja curl wrk valgrind callgrind_annotate prometheus-node-exporter ss timeout
bench_scratch heatcurve-metrics-bench

# heatcurved with a long interval: no tick falls inside a measurement, so the CPU counted
# is the serving of /metrics alone (the snapshot is the one read at start).
hc_start() {            # NAME ROOT [wrapper...]: sets HC_PID, HC_URL
        local name=$1 root=$2; shift 2
        pick_port
        mkdir -p "$TMP/state-$name"
        start "$name" "$@" "$HEATCURVED" --sysfs-root "$root" --procfs-root "$root" \
                --listen "127.0.0.1:$PORT" --state-dir "$TMP/state-$name" --interval 1m
        HC_PID=$LAST_PID
        HC_URL=http://127.0.0.1:$PORT
}
# node_exporter with the collectors that do heatcurved's work
NE_ARGS=(--collector.disable-defaults --collector.thermal_zone --collector.hwmon
         --collector.cpufreq --collector.cpu --collector.stat)
ne_start() {            # NAME ROOT [more flags]: sets NE_PID, NE_URL
        local name=$1 root=$2; shift 2
        pick_port
        start "$name" prometheus-node-exporter --path.sysfs="$root/sys" --path.procfs="$root/proc" \
                --web.listen-address="127.0.0.1:$PORT" "$@"
        NE_PID=$LAST_PID
        NE_URL=http://127.0.0.1:$PORT
}

# ---------------------------------------------------------------- build
bench_build heatcurved

# ---------------------------------------------------------------- 1. sizes on every board
# bytes of one answer, uncompressed and as sent to a client asking for gzip (Prometheus does)
size_of() { curl -sf --max-time 5 "$1" | wc -c; }
wire_of() { curl -sf --max-time 5 -H 'Accept-Encoding: gzip' -o /dev/null -w '%{size_download}' "$1"; }
samples_of() { curl -sf --max-time 5 "$1" | grep -vc '^#' || true; }
families_of() { curl -sf --max-time 5 "$1" | grep -c '^# TYPE' || true; }

log "1. /metrics size on every fixture board: heatcurved and node_exporter (${NE_ARGS[*]})"
SIZES=$TMP/sizes.md
for dir in "$FIXTURES"/*/; do
        board=$(basename "$dir")
        [ -d "$dir/sys" ] || continue
        hc_start "hc-$board" "$FIXTURES/$board"; hp=$HC_PID; hu=$HC_URL
        ne_start "ne-$board" "$FIXTURES/$board"; np=$NE_PID; nu=$NE_URL
        need_up "$hu/metrics" "$hp" 10 "hc-$board"
        need_up "$nu/metrics" "$np" 10 "ne-$board"
        hcs=$(size_of "$hu/metrics"); hcw=$(wire_of "$hu/metrics")
        hcn=$(samples_of "$hu/metrics"); hcf=$(families_of "$hu/metrics")
        nes=$(size_of "$nu/metrics"); new=$(wire_of "$nu/metrics")
        nen=$(samples_of "$nu/metrics"); nef=$(families_of "$nu/metrics")
        nen_node=$(curl -sf --max-time 5 "$nu/metrics" | grep -c '^node_' || true)
        echo "| $board | $hcs | $hcw | $hcn | $hcf | $nes | $new | $nen ($nen_node node_*) | $nef |" >>"$SIZES"
        stop_pid "$hp"; stop_pid "$np"
done

# ---------------------------------------------------------------- 2. CPU per scrape
log "2. CPU per scrape on $FIXTURE_NAME: $SCRAPES sequential GET /metrics each, new connection each"
hc_start hc "$FIXTURE"; HC=$HC_PID; HC_URL0=$HC_URL
ne_start ne "$FIXTURE" "${NE_ARGS[@]}"; NE=$NE_PID; NE_URL0=$NE_URL
need_up "$HC_URL0/metrics" "$HC" 10 hc
need_up "$NE_URL0/metrics" "$NE" 10 ne

cpu_per_scrape() {      # PID URL -> µs of the server's CPU per scrape
        local c0 c1 i
        curl -sf --max-time 5 -o /dev/null "$2"          # warm
        c0=$(cpu_ns "$1")
        for i in $(seq "$SCRAPES"); do
                curl -sf --max-time 5 -o /dev/null "$2"
        done
        c1=$(cpu_ns "$1")
        calc "%.1f" "($c1 - $c0) / 1e3 / $SCRAPES"
}
HC_US=$(cpu_per_scrape "$HC" "$HC_URL0/metrics")
NE_US=$(cpu_per_scrape "$NE" "$NE_URL0/metrics")
HC_US_SENSORS=$(cpu_per_scrape "$HC" "$HC_URL0/api/v1/sensors")
log "   heatcurved ${HC_US} µs per scrape (/api/v1/sensors ${HC_US_SENSORS} µs); node_exporter ${NE_US} µs"

# ---------------------------------------------------------------- 3. requests/s
wrk_run() {             # URL NAME -> "req/s errors"
        local out rps err
        out=$(timeout $((WRK_SECS + 20)) wrk -t2 -c32 -d"${WRK_SECS}s" "$1" 2>&1) || true
        echo "$out" >"$TMP/wrk-$2.txt"
        rps=$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' <<<"$out")
        err=$(grep -E 'Non-2xx|Socket errors' <<<"$out" | tr -s ' ' | paste -sd';' - || true)
        echo "${rps:-0} ${err:-none}"
}
log "3. wrk -t2 -c32 -d${WRK_SECS}s on each /metrics"
read -r HC_RPS HC_ERR <<<"$(wrk_run "$HC_URL0/metrics" hc)"
read -r NE_RPS NE_ERR <<<"$(wrk_run "$NE_URL0/metrics" ne)"
HC_RSS=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$HC/status")
NE_RSS=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$NE/status")
log "   heatcurved $HC_RPS req/s ($HC_ERR); node_exporter $NE_RPS req/s ($NE_ERR)"
stop_pid "$HC"; stop_pid "$NE"

# ---------------------------------------------------------------- 4. instructions per request
log "4. callgrind: $CG_REQS GET /metrics, instructions inside api_get_metrics"
CG_OUT=$TMP/callgrind.out
hc_start hc-cg "$FIXTURE" valgrind --tool=callgrind --toggle-collect=api_get_metrics \
        --dump-instr=no --callgrind-out-file="$CG_OUT"
HCG=$HC_PID
need_up "$HC_URL/api/v1/status" "$HCG" 60 hc-cg
for i in $(seq "$CG_REQS"); do
        curl -sf --max-time 10 -o /dev/null "$HC_URL/metrics"
done
stop_pid "$HCG"
CG_IR=$(callgrind_annotate "$CG_OUT" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }')
CG_IR_REQ=$(calc "%.0f" "${CG_IR:-0} / $CG_REQS")
callgrind_annotate "$CG_OUT" 2>/dev/null | sed -n '/file:function/,$p' | grep -E '^ *[0-9,]+ ' |
        head -12 >"$TMP/cg-self.txt" || true
log "   $CG_IR_REQ instructions per request"

# ---------------------------------------------------------------- report
MACHINE="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores, $(uname -sr)"
COMMIT=$(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo "no commit")
{
echo "# heatcurved /metrics against node_exporter"
echo
echo "- Command: \`bench/metrics.sh${ARGS_TEXT:+ $ARGS_TEXT}\`, $(date -u '+%Y-%m-%d %H:%M UTC'); source $COMMIT; build $BUILD"
echo "- Machine: $MACHINE; load average at start $LOAD_START, at end $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- node_exporter $(prometheus-node-exporter --version 2>&1 | head -1 | sed 's/^node_exporter, //'), collectors thermal_zone, hwmon, cpufreq, cpu, stat, on the same fixture tree"
echo
echo "| $FIXTURE_NAME | heatcurved | node_exporter |"
echo "|---|---|---|"
echo "| requests/s, wrk -t2 -c32 -d${WRK_SECS}s | $HC_RPS | $NE_RPS |"
echo "| server CPU per scrape (schedstat, $SCRAPES sequential curl) | ${HC_US} µs | ${NE_US} µs |"
echo "| user-space instructions per GET /metrics (callgrind, $CG_REQS requests) | $CG_IR_REQ | not measured |"
echo "| VmRSS after wrk | $HC_RSS kB | $NE_RSS kB |"
echo
echo "heatcurved /api/v1/sensors for comparison: ${HC_US_SENSORS} µs per request. wrk errors: heatcurved $HC_ERR; node_exporter $NE_ERR."
echo
echo "Bytes per scrape on every fixture board (uncompressed; \"wire\": with Accept-Encoding: gzip, as Prometheus asks):"
echo
echo "| board | heatcurved bytes | wire | samples | families | node_exporter bytes | wire | samples | families |"
echo "|---|---|---|---|---|---|---|---|---|"
cat "$SIZES"
echo
echo "callgrind, self cost inside api_get_metrics (rendering and handing the answer to libmicrohttpd), $CG_REQS requests:"
echo
echo '```'
cat "$TMP/cg-self.txt"
echo '```'
} >"$TMP/results.md"
mkdir -p "$(dirname "$OUT")"
cp "$TMP/results.md" "$OUT"
cat "$TMP/results.md"
log "results written to $OUT"
