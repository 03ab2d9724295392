#!/usr/bin/env bash
# bench/run.sh — heatcurved against prometheus-node-exporter on one fixture tree, side by side:
# resident memory, CPU per sampling tick, requests/s, 24 h history query. See bench/README.md.
#
# Usage: bench/run.sh [--quick] [--build-dir DIR] [--fixture BOARD] [--out FILE] [--keep]
#   --quick          short runs (10 s instead of 60 s / 30 s, wrk 3 s instead of 10 s)
#   --build-dir DIR  use this configured meson build dir (built with ninja, not reconfigured);
#                    default: build-bench/ in the source tree, built as debian/rules builds it
#   --fixture BOARD  a directory of data/boards (default x86-laptop-coretemp)
#   --out FILE       where the Markdown results go (default bench/results-latest.md)
#   --keep           keep the scratch directory (logs, callgrind output) and print its path
# Needs: meson ninja cc curl wrk valgrind (callgrind_annotate) prometheus-node-exporter dpkg-buildflags.
# Only 127.0.0.1 is contacted. Every load is bounded in time; every process started here
# is stopped on exit, including on Ctrl-C.
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH=run.sh
OUT=$SRC/bench/results-latest.md
NEXT_PORT=18700
# shellcheck source=bench/lib.sh
. "$SRC/bench/lib.sh"
bench_options "$@"

if [ "$QUICK" = 1 ]; then
        MEM_SECS=10 CPU_SECS=10 TICK_SECS=10 CPU_ROUNDS=5 WRK_SECS=3 CG_SECS=3 QUERY_REPS=11 HTTP_REPS=5 LAT_SECS=2
else
        MEM_SECS=60 CPU_SECS=30 TICK_SECS=60 CPU_ROUNDS=10 WRK_SECS=10 CG_SECS=5 QUERY_REPS=51 HTTP_REPS=20 LAT_SECS=5
fi
RING_SAMPLES=86400            # 24 h at 1 Hz
RING_COLUMNS=16               # the budgets' 16 sensors (bench/README.md)

bench_need meson ninja cc curl wrk valgrind callgrind_annotate prometheus-node-exporter ss timeout
bench_scratch heatcurve-bench

# ---------------------------------------------------------------- measuring
# median_range VALUE...: "median lowest highest" (of an even count, the upper median)
median_range() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int(NR / 2) + 1], a[1], a[NR] }'; }
status_field() { awk -v k="$2" '$1 == k":" { print $2 }' "/proc/$1/status"; }
pss_kib() { awk '$1 == "Pss:" { print $2 }' "/proc/$1/smaps_rollup" 2>/dev/null || echo "?"; }
# private memory (USS), kB: pages no other process maps, clean or dirty
uss_kib() { awk '$1 == "Private_Clean:" || $1 == "Private_Dirty:" { s += $2 } END { print s }' "/proc/$1/smaps_rollup" 2>/dev/null || echo "?"; }
private_dirty_kib() { awk '$1 == "Private_Dirty:" { print $2 }' "/proc/$1/smaps_rollup" 2>/dev/null || echo "?"; }
# CPU time, clock ticks: utime + stime of the whole process (exited threads too)
cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }
CLK_TCK=$(getconf CLK_TCK)
ticks_of() { curl -sf --max-time 2 "$1/api/v1/status" | grep -o '"ticks":[0-9]*' | cut -d: -f2; }
now_s() { echo "$EPOCHREALTIME"; }
mib() { calc "%.1f" "$1 / 1024"; }

# scrape_loop URL PERIOD_S SECONDS COUNTFILE: one GET every PERIOD_S, bounded by SECONDS
scrape_loop() {
        local url=$1 period=$2 end n=0
        end=$(calc "%.3f" "$EPOCHREALTIME + $3")
        while awk "BEGIN { exit !($EPOCHREALTIME < $end) }"; do
                curl -sf --max-time 2 -o /dev/null "$url" && n=$((n + 1))
                sleep "$period"
        done
        echo "$n" >"$4"
}

# ---------------------------------------------------------------- build
bench_build heatcurved bench
HFILL=$BUILD/bench/history-fill
TREADS=$BUILD/bench/tick-reads

NE_REL_ARGS=(--collector.disable-defaults --collector.thermal_zone --collector.hwmon
             --collector.cpufreq --collector.cpu --collector.stat)

# As root heatcurved starts no load unless [runs] allow_root says so; 2d runs one.
HC_ROOT_ARGS=()
[ "$(id -u)" -ne 0 ] || HC_ROOT_ARGS=(--allow-root)
hc_start() {            # NAME INTERVAL STATE_DIR [wrapper...]: sets HC_PID, HC_URL
        local name=$1 interval=$2 state=$3; shift 3
        pick_port
        mkdir -p "$state"
        start "$name" "$@" "$HEATCURVED" --sysfs-root "$FIXTURE" --procfs-root "$FIXTURE" \
                --listen "127.0.0.1:$PORT" --state-dir "$state" --interval "$interval" "${HC_ROOT_ARGS[@]}"
        HC_PID=$LAST_PID
        HC_URL=http://127.0.0.1:$PORT
}
ne_start() {            # NAME [collector flags...]: sets NE_PID, NE_URL
        local name=$1; shift
        pick_port
        start "$name" prometheus-node-exporter --path.sysfs="$FIXTURE/sys" --path.procfs="$FIXTURE/proc" \
                --web.listen-address="127.0.0.1:$PORT" "$@"
        NE_PID=$LAST_PID
        NE_URL=http://127.0.0.1:$PORT
}

# ---------------------------------------------------------------- 1. memory at 1 Hz, side by side
log "1. resident memory: heatcurved --interval 1s, node_exporter (relevant collectors, and defaults), ${MEM_SECS} s, each polled once a second"
hc_start hc-1hz 1s "$TMP/state-1hz"; HC1=$HC_PID; HC1_URL=$HC_URL
ne_start ne-rel "${NE_REL_ARGS[@]}"; NE1=$NE_PID; NE1_URL=$NE_URL
ne_start ne-def; NED=$NE_PID; NED_URL=$NE_URL
need_up "$HC1_URL/api/v1/status" "$HC1" 10 hc-1hz
need_up "$NE1_URL/metrics" "$NE1" 10 ne-rel
need_up "$NED_URL/metrics" "$NED" 10 ne-def
hc1_cpu0=$(cpu_ns "$HC1"); ne1_cpu0=$(cpu_ns "$NE1"); ned_cpu0=$(cpu_ns "$NED"); t0=$(now_s)
hc1_ticks0=$(ticks_of "$HC1_URL")
scrape_loop "$HC1_URL/api/v1/sensors" 1 "$MEM_SECS" "$TMP/n-hc1" & PIDS+=($!); L1=$!
scrape_loop "$NE1_URL/metrics" 1 "$MEM_SECS" "$TMP/n-ne1" & PIDS+=($!); L2=$!
scrape_loop "$NED_URL/metrics" 1 "$MEM_SECS" "$TMP/n-ned" & PIDS+=($!); L3=$!
wait "$L1" "$L2" "$L3"
t1=$(now_s)
hc1_ticks1=$(ticks_of "$HC1_URL")
hc1_cpu1=$(cpu_ns "$HC1"); ne1_cpu1=$(cpu_ns "$NE1"); ned_cpu1=$(cpu_ns "$NED")
for p in HC1 NE1 NED; do
        pid=${!p}
        printf -v "${p}_RSS" '%s' "$(status_field "$pid" VmRSS)"
        printf -v "${p}_HWM" '%s' "$(status_field "$pid" VmHWM)"
        printf -v "${p}_ANON" '%s' "$(status_field "$pid" RssAnon)"
        printf -v "${p}_FILE" '%s' "$(status_field "$pid" RssFile)"
        printf -v "${p}_PSS" '%s' "$(pss_kib "$pid")"
done
HC1_SAMPLES_COLS=$(curl -sf --max-time 2 "$HC1_URL/api/v1/status" | grep -o '"history":{"samples":[0-9]*,"columns":[0-9]*')
HC1_COLS=${HC1_SAMPLES_COLS##*:}
HC1_NTEMPS=$(curl -sf --max-time 2 "$HC1_URL/api/v1/status" | grep -o '"temperatures":[0-9]*' | cut -d: -f2)
wall=$(calc "%.3f" "$t1 - $t0")
HC1_PCT=$(calc "%.4f" "($hc1_cpu1 - $hc1_cpu0) / 1e9 / $wall * 100")
NE1_PCT=$(calc "%.4f" "($ne1_cpu1 - $ne1_cpu0) / 1e9 / $wall * 100")
NED_PCT=$(calc "%.4f" "($ned_cpu1 - $ned_cpu0) / 1e9 / $wall * 100")
log "   heatcurved VmRSS ${HC1_RSS} kB VmHWM ${HC1_HWM} kB; node_exporter ${NE1_RSS} kB / ${NE1_HWM} kB (defaults ${NED_RSS} / ${NED_HWM} kB)"

# ---------------------------------------------------------------- 2. CPU per tick / per scrape
log "2a. CPU per tick: heatcurved --interval 100ms, ${TICK_SECS} s, no HTTP load"
hc_start hc-10hz 100ms "$TMP/state-10hz"; HC10=$HC_PID; HC10_URL=$HC_URL
need_up "$HC10_URL/api/v1/status" "$HC10" 10 hc-10hz
sleep 1
# The physical limit, side by side in the same seconds: tick-reads does the tick's preads on
# the same tree at the same interval and nothing else (bench/tick-reads.c). CPU times on a
# shared VM jump from one second to the next, so the window is cut into CPU_ROUNDS rounds, each
# with its own tick-reads, and the ratio is the median of the rounds' ratios (range given too).
# The ticks are counted by GET /api/v1/status, which costs the daemon more CPU than a tick:
# each round's CPU window starts after its first request and ends before its second.
# The noise comes in spells of minutes on a shared VM: the more rounds, the steadier the median.
ROUND_SECS=$((TICK_SECS / CPU_ROUNDS))       # whole seconds: what tick-reads takes
RATIOS=()
BARE_SUM=0
HC_TICKS=0 HC_NS=0 HC_JIF=0 HC_SECS=0
for ((round = 1; round <= CPU_ROUNDS; round++)); do
        "$TREADS" "$FIXTURE" 100 "$ROUND_SECS" >"$TMP/tick-reads-$round.txt" & PIDS+=($!); TR=$!
        rk0=$(ticks_of "$HC10_URL"); rc0=$(cpu_ns "$HC10"); rj0=$(cpu_ticks "$HC10"); rt0=$(now_s)
        sleep "$ROUND_SECS"
        rc1=$(cpu_ns "$HC10"); rj1=$(cpu_ticks "$HC10"); rt1=$(now_s); rk1=$(ticks_of "$HC10_URL")
        wait "$TR"
        bare=$(awk -F= '$1 == "us_per_tick" { print $2 }' "$TMP/tick-reads-$round.txt")
        BARE_SUM=$(calc "%.3f" "$BARE_SUM + $bare")
        RATIOS+=("$(calc "%.3f" "($rc1 - $rc0) / 1e3 / ($rk1 - $rk0) / $bare")")
        HC_TICKS=$((HC_TICKS + rk1 - rk0)) HC_NS=$((HC_NS + rc1 - rc0)) HC_JIF=$((HC_JIF + rj1 - rj0))
        HC_SECS=$(calc "%.3f" "$HC_SECS + $rt1 - $rt0")
done
BARE_US_TICK=$(calc "%.1f" "$BARE_SUM / $CPU_ROUNDS")
BARE_FILES=$(awk -F= '$1 == "files" { print $2 }' "$TMP/tick-reads-1.txt")
read -r med lo hi <<<"$(median_range "${RATIOS[@]}")"
BARE_RATIO=$(calc "%.2f" "$med")
BARE_RANGE="$(calc "%.2f" "$lo")–$(calc "%.2f" "$hi")"

HC_US_TICK=$(calc "%.1f" "$HC_NS / 1e3 / $HC_TICKS")
MEAN_RATIO=$(calc "%.2f" "$HC_US_TICK / $BARE_US_TICK")
HC_US_TICK_JIF=$(calc "%.0f" "$HC_JIF * 1e6 / $CLK_TCK / $HC_TICKS")
HC_TICK_RATE=$(calc "%.2f" "$HC_TICKS / $HC_SECS")
HC_PCT_1HZ=$(calc "%.4f" "$HC_US_TICK / 1e6 * 100")
log "   $HC_TICKS ticks, ${HC_US_TICK} µs CPU per tick (utime+stime: ${HC_US_TICK_JIF} µs), ${HC_PCT_1HZ} % of a core at 1 Hz"
log "   tick-reads: ${BARE_US_TICK} µs per tick for its ${BARE_FILES} preads; ratio, median of ${CPU_ROUNDS} rounds: ${BARE_RATIO} (${BARE_RANGE}); of the means: ${MEAN_RATIO}"

# 2b'. System calls per tick, counted (exact, unlike times): strace -c over a few seconds.
SC_NOTE="not measured (no strace)"
if command -v strace >/dev/null 2>&1; then
        sk0=$(ticks_of "$HC10_URL")
        timeout -s INT 3 strace -f -c -o "$TMP/strace-hc.txt" -p "$HC10" >/dev/null 2>&1 || true
        sk1=$(ticks_of "$HC10_URL")
        timeout -s INT 3 strace -f -c -o "$TMP/strace-bare.txt" "$TREADS" "$FIXTURE" 100 2 >/dev/null 2>&1 || true
        sc_total() { awk '$NF == "total" { print $4 }' "$1"; }     # calls: the errors column may be empty
        sc_calls() { awk -v s="$2" '$NF == s { print $4 }' "$1"; }
        # the two curl calls to /status between sk0 and sk1 add a few calls: small against ~30 ticks
        SC_HC=$(calc "%.1f" "$(sc_total "$TMP/strace-hc.txt") / ($sk1 - $sk0)")
        # tick-reads makes one pread per file and one epoll_wait per tick by construction;
        # its strace also holds the probe's reads, so the per-tick count is taken from its files
        SC_BARE=$((BARE_FILES + 1))
        SC_NOTE="heatcurved ${SC_HC} per tick ($(grep -E ' (pread64|read|epoll_wait|timerfd_settime|newfstatat|fstat|openat)$' "$TMP/strace-hc.txt" | awk '{ printf "%s %s, ", $NF, $4 }' | sed 's/, $//')), tick-reads ${SC_BARE} per tick (its whole run, probe included: $(grep -E ' (pread64|epoll_wait)$' "$TMP/strace-bare.txt" | awk '{ printf "%s %s, ", $NF, $4 }' | sed 's/, $//'))"
        log "   system calls: $SC_NOTE"
fi

# 2d. The same daemon while a run loads one core: sampling + recording samples.csv +
# the plateau fit (at most once a second). Only the daemon's own threads are counted:
# the load's workers are other processes.
log "2d. CPU per tick during a run (cpu load on one worker, until=plateau), ${CPU_SECS} s"
curl -sf --max-time 5 -X POST "$HC10_URL/api/v1/runs" -d '{"label":"bench","phases":[{"kind":"stress","until":"plateau","max":"10m","load":{"type":"cpu","workers":1}}]}' >/dev/null ||
        { echo "run.sh: heatcurved refused the run of 2d (curl -X POST $HC10_URL/api/v1/runs says why)" >&2; exit 1; }
sleep 2
r0=$(ticks_of "$HC10_URL"); rc0=$(cpu_ns "$HC10")
sleep "$CPU_SECS"
r1=$(ticks_of "$HC10_URL"); rc1=$(cpu_ns "$HC10")
curl -sf --max-time 5 -X POST "$HC10_URL/api/v1/runs/1/stop" >/dev/null || true
HC_US_TICK_RUN=$(calc "%.1f" "($rc1 - $rc0) / 1e3 / ($r1 - $r0)")
log "   $((r1 - r0)) ticks, ${HC_US_TICK_RUN} µs CPU per tick while the run loads a core"
stop_pid "$HC10"

ne_cpu_per_scrape() {   # PID URL -> "µs_schedstat µs_utime+stime scrapes"
        local pid=$1 url=$2 c0 c1 j0 j1 n
        c0=$(cpu_ns "$pid"); j0=$(cpu_ticks "$pid")
        scrape_loop "$url/metrics" 0.1 "$CPU_SECS" "$TMP/n-scrape" & PIDS+=($!)
        wait $!
        c1=$(cpu_ns "$pid"); j1=$(cpu_ticks "$pid"); n=$(cat "$TMP/n-scrape")
        echo "$(calc "%.0f" "($c1 - $c0) / 1e3 / $n") $(calc "%.0f" "($j1 - $j0) * 1e6 / $CLK_TCK / $n") $n"
}
log "2b. CPU per scrape: node_exporter, GET /metrics every 0.1 s for ${CPU_SECS} s (relevant collectors, then defaults)"
read -r NE_US_SCRAPE NE_US_SCRAPE_JIF NE_SCRAPES <<<"$(ne_cpu_per_scrape "$NE1" "$NE1_URL")"
read -r NED_US_SCRAPE NED_US_SCRAPE_JIF NED_SCRAPES <<<"$(ne_cpu_per_scrape "$NED" "$NED_URL")"
NE_PCT_1HZ=$(calc "%.3f" "$NE_US_SCRAPE / 1e6 * 100")
NED_PCT_1HZ=$(calc "%.3f" "$NED_US_SCRAPE / 1e6 * 100")
log "   node_exporter ${NE_US_SCRAPE} µs per scrape over $NE_SCRAPES scrapes (defaults ${NED_US_SCRAPE} µs)"

log "2c. callgrind: heatcurved --interval 100ms under valgrind for ${CG_SECS} s, collecting inside daemon_loop"
CG_OUT=$TMP/callgrind.out
hc_start hc-callgrind 100ms "$TMP/state-cg" valgrind --tool=callgrind --toggle-collect=daemon_loop \
        --dump-instr=no --callgrind-out-file="$CG_OUT"
HCG=$HC_PID
need_up "$HC_URL/api/v1/status" "$HCG" 60 hc-callgrind
sleep "$CG_SECS"
stop_pid "$HCG"
# calls of tick_run made from daemon_loop, and their inclusive Ir (the first tick,
# from daemon_run before the loop, is outside the collected region: warm ticks only)
read -r CG_CALLS CG_IR <<<"$(awk '
        /^c?fn=\([0-9]+\) tick_run$/ { match($0, /\([0-9]+\)/); id = substr($0, RSTART, RLENGTH) }
        /^cfn=/ { cur = $1 }
        /^calls=/ && id != "" && cur == "cfn=" id { n += $1 == "" ? 0 : substr($1, 7); getline; ir += $2 }
        END { printf "%d %d\n", n, ir }' "$CG_OUT")"
if [ "${CG_CALLS:-0}" -gt 0 ]; then
        CG_IR_TICK=$(calc "%.0f" "$CG_IR / $CG_CALLS")
else
        CG_IR_TICK="?"
fi
callgrind_annotate --inclusive=yes "$CG_OUT" 2>/dev/null |
        sed -n '/file:function/,$p' | grep -E '^ *[0-9,]+ ' | grep -vE 'below main|libc_start|sd_event_|daemon_run|\bmain \[|\brun \[|ld-linux|libsystemd' |
        head -16 >"$TMP/cg-inclusive.txt" || true
callgrind_annotate "$CG_OUT" 2>/dev/null | sed -n '/file:function/,$p' | grep -E '^ *[0-9,]+ ' | head -12 >"$TMP/cg-self.txt" || true
log "   $CG_CALLS ticks, $CG_IR_TICK instructions per tick"

# ---------------------------------------------------------------- 3. requests/s
wrk_run() {             # URL NAME -> "req/s errors"
        local out
        out=$(timeout $((WRK_SECS + 20)) wrk -t2 -c32 -d"${WRK_SECS}s" "$1" 2>&1) || true
        echo "$out" >"$TMP/wrk-$2.txt"
        local rps err
        rps=$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' <<<"$out")
        err=$(grep -E 'Non-2xx|Socket errors' <<<"$out" | tr -s ' ' | paste -sd';' - || true)
        echo "${rps:-0} ${err:-none}"
}
log "3. wrk -t2 -c32 -d${WRK_SECS}s: heatcurved /api/v1/sensors, /api/v1/status; node_exporter /metrics"
read -r HC_RPS HC_RPS_ERR <<<"$(wrk_run "$HC1_URL/api/v1/sensors" hc-sensors)"
read -r HC_STATUS_RPS HC_STATUS_ERR <<<"$(wrk_run "$HC1_URL/api/v1/status" hc-status)"
read -r NE_RPS NE_RPS_ERR <<<"$(wrk_run "$NE1_URL/metrics" ne-rel)"
read -r NED_RPS NED_RPS_ERR <<<"$(wrk_run "$NED_URL/metrics" ne-def)"
HC_BYTES=$(curl -sf --max-time 2 "$HC1_URL/api/v1/sensors" | wc -c)
NE_BYTES=$(curl -sf --max-time 5 "$NE1_URL/metrics" | wc -c)
NED_BYTES=$(curl -sf --max-time 5 "$NED_URL/metrics" | wc -c)
HC1_HWM_LOAD=$(status_field "$HC1" VmHWM); NE1_HWM_LOAD=$(status_field "$NE1" VmHWM); NED_HWM_LOAD=$(status_field "$NED" VmHWM)
HC1_RSS_LOAD=$(status_field "$HC1" VmRSS); NE1_RSS_LOAD=$(status_field "$NE1" VmRSS); NED_RSS_LOAD=$(status_field "$NED" VmRSS)
log "   heatcurved $HC_RPS req/s; node_exporter $NE_RPS req/s (defaults $NED_RPS)"

# history over HTTP on the daemon that ran the memory phase (its few samples)
http_median_ms() {      # URL REPS -> "median max"
        local i
        for i in $(seq "$2"); do
                curl -sf --max-time 10 -o /dev/null -w '%{time_total}\n' "$1" || echo 999
        done | sort -n | awk '{ a[NR] = $1 } END { printf "%.2f %.2f\n", a[int((NR + 1) / 2)] * 1000, a[NR] * 1000 }'
}
HC1_SAMPLES=$(curl -sf --max-time 2 "$HC1_URL/api/v1/status" | grep -o '"history":{"samples":[0-9]*' | grep -o '[0-9]*$')
read -r HIST_SHORT_MED HIST_SHORT_MAX <<<"$(http_median_ms "$HC1_URL/api/v1/history?points=1000&from=-24h" "$HTTP_REPS")"

# ---------------------------------------------------------------- 4. history: full 24 h ring
log "4a. history ring in-process: ${RING_SAMPLES} samples x ${RING_COLUMNS} columns (and x ${HC1_COLS}, this fixture's column count)"
"$HFILL" ring "$RING_SAMPLES" "$RING_COLUMNS" "$QUERY_REPS" >"$TMP/ring16.txt"
"$HFILL" ring "$RING_SAMPLES" "$HC1_COLS" "$QUERY_REPS" >"$TMP/ringN.txt"
kv() { awk -F= -v k="$2" '$1 == k { print $2 }' "$1"; }
"$HFILL" boards "$SRC/data/boards" "$RING_SAMPLES" >"$TMP/boards.txt"
RING16_RATIO=$(kv "$TMP/ring16.txt" compression)
RING16_BYTES=$(kv "$TMP/ring16.txt" memory_bytes)
RING16_RES=$(kv "$TMP/ring16.txt" ring_resident_kib)
RING16_Q=$(kv "$TMP/ring16.txt" query_median_ms)
RING16_QMAX=$(kv "$TMP/ring16.txt" query_max_ms)
RINGN_BYTES=$(kv "$TMP/ringN.txt" memory_bytes)
RINGN_RES=$(kv "$TMP/ringN.txt" ring_resident_kib)
RINGN_Q=$(kv "$TMP/ringN.txt" query_median_ms)
EST_KIB=$((HC1_RSS + RING16_RES))

log "4b. heatcurved with a full 24 h history: synthetic history.bin (${RING_SAMPLES} samples, ${HC1_COLS} columns) loaded at start"
# the fixture's columns, with the ids the daemon gives them
ids=$(curl -sf --max-time 5 "$HC1_URL/api/v1/history?points=1" | grep -o '"id":"[^"]*","kind":"[a-z]*"' |
      sed 's/"id":"\(.*\)","kind":"\([a-z]*\)"/\1:\2/; s/:temperature$/:temp/; s/:frequency$/:freq/; s#\\/#/#g')
ids="$ids $(awk '/^cpu[0-9]/ { print "load:" $1 ":load" }' "$FIXTURE/proc/stat")"
mkdir -p "$TMP/state-full" "$TMP/state-cghist"
end_ms=$(( $(date +%s%3N) - 1000 ))
# shellcheck disable=SC2086
"$HFILL" write "$TMP/state-full/history.bin" "$RING_SAMPLES" "$end_ms" $ids >"$TMP/write.txt"
FILE_KIB=$(( $(stat -c %s "$TMP/state-full/history.bin") / 1024 ))
cp "$TMP/state-full/history.bin" "$TMP/state-cghist/history.bin"
hc_start hc-full 1s "$TMP/state-full"; HCF=$HC_PID; HCF_URL=$HC_URL
need_up "$HCF_URL/api/v1/status" "$HCF" 30 hc-full
HCF_HIST=$(curl -sf --max-time 2 "$HCF_URL/api/v1/status" | grep -o '"history":{"samples":[0-9]*,"columns":[0-9]*')
sleep 3
HCF_RSS=$(status_field "$HCF" VmRSS); HCF_HWM=$(status_field "$HCF" VmHWM)
HCF_ANON=$(status_field "$HCF" RssAnon); HCF_PSS=$(pss_kib "$HCF")
# the 1 Hz daemon of phase 1 still runs: the pages of the binary and libraries both map
# are shared, as they are with other processes on a board (see bench/README.md)
HCF_USS=$(uss_kib "$HCF"); HCF_PDIRTY=$(private_dirty_kib "$HCF")
cp "/proc/$HCF/smaps" "$TMP/smaps-full-ring.txt" 2>/dev/null || true
FULL_URL="$HCF_URL/api/v1/history?points=1000&from=-24h"
HIST_BYTES=$(curl -sf --max-time 10 "$FULL_URL" | wc -c)
HIST_BUCKETS=$(curl -sf --max-time 10 "$FULL_URL" | grep -o '"t_ms":\[[^]]*\]' | tr ',' '\n' | wc -l)
read -r HIST_FULL_MED HIST_FULL_MAX <<<"$(http_median_ms "$FULL_URL" "$HTTP_REPS")"
timeout $((LAT_SECS + 20)) wrk -t1 -c1 -d"${LAT_SECS}s" --latency "$FULL_URL" >"$TMP/wrk-history.txt" 2>&1 || true
HIST_WRK_P50=$(awk '$1 == "50%" { print $2 }' "$TMP/wrk-history.txt")
HIST_WRK_P99=$(awk '$1 == "99%" { print $2 }' "$TMP/wrk-history.txt")
sleep 1
HCF_RSS_AFTER=$(status_field "$HCF" VmRSS); HCF_HWM_AFTER=$(status_field "$HCF" VmHWM)
HCF_ANON_AFTER=$(status_field "$HCF" RssAnon); HCF_USS_AFTER=$(uss_kib "$HCF")
HCF_RSS_GROWTH=$((HCF_RSS_AFTER - HCF_RSS))
stop_pid "$HCF"
HCF_COLS=$(grep -o '"columns":[0-9]*' <<<"$HCF_HIST" | cut -d: -f2)
# The clean part of the USS is library pages this daemon mapped and the 1 Hz one did not: the
# kernel maps neighbouring page-cache pages at each fault, and which ones differs from start to
# start (56-168 kB for the same build). Two more starts on copies of the file; the verdict is
# on the median of the three, the range is shown.
USS_STARTS=("$HCF_USS")
DIRTY_STARTS=("$HCF_PDIRTY")
for n in 2 3; do
        mkdir -p "$TMP/state-full$n"
        cp "$TMP/state-cghist/history.bin" "$TMP/state-full$n/history.bin"
        hc_start "hc-full$n" 1s "$TMP/state-full$n"
        need_up "$HC_URL/api/v1/status" "$HC_PID" 30 "hc-full$n"
        sleep 3
        USS_STARTS+=("$(uss_kib "$HC_PID")")
        DIRTY_STARTS+=("$(private_dirty_kib "$HC_PID")")
        stop_pid "$HC_PID"
done
read -r HCF_USS_MED lo hi <<<"$(median_range "${USS_STARTS[@]}")"
HCF_USS_RANGE="$lo–$hi"
read -r _ lo hi <<<"$(median_range "${DIRTY_STARTS[@]}")"
HCF_PDIRTY_RANGE="$lo–$hi"
# where the private pages of the full-ring daemon are, by mapping (heap, stack, each library)
awk '/^[0-9a-f]+-[0-9a-f]+ / { name = $6 == "" ? "[anonymous]" : $6; sub(/.*\//, "", name) }
     $1 == "Private_Clean:" || $1 == "Private_Dirty:" { kb[name] += $2 }
     END { for (n in kb) if (kb[n] > 0) printf "%6d kB  %s\n", kb[n], n }' "$TMP/smaps-full-ring.txt" 2>/dev/null |
        sort -rn | head -14 >"$TMP/uss-by-mapping.txt" || true
COLS_NOTE=
[ "$HCF_COLS" = "$HC1_COLS" ] || COLS_NOTE=" (warning: the file's ids did not all match the daemon's $HC1_COLS columns)"

log "4c. callgrind of one GET /api/v1/history?points=1000 over the full ring (collecting inside api_get_history)"
CGH_OUT=$TMP/callgrind-history.out
hc_start hc-cg-history 1s "$TMP/state-cghist" valgrind --tool=callgrind --toggle-collect=api_get_history \
        --dump-instr=no --callgrind-out-file="$CGH_OUT"
HCGH=$HC_PID
need_up "$HC_URL/api/v1/status" "$HCGH" 120 hc-cg-history
curl -sf --max-time 120 -o /dev/null "$HC_URL/api/v1/history?points=1000&from=-24h" || true
stop_pid "$HCGH"
CGH_IR=$(awk '/^totals:/ { print $2 }' "$CGH_OUT")
callgrind_annotate --inclusive=yes "$CGH_OUT" 2>/dev/null | sed -n '/file:function/,$p' | grep -E '^ *[0-9,]+ ' |
        grep -vE 'below main|libc_start|sd_event_|daemon_run|\bmain \[|\brun \[|ld-linux|libsystemd|libmicrohttpd' |
        head -14 >"$TMP/cgh-inclusive.txt" || true
callgrind_annotate --inclusive=yes "$CGH_OUT" 2>/dev/null | grep -E ':(history_query|json_object_to_json_string_length|api_history_series) ' \
        >>"$TMP/cgh-inclusive.txt" || true
log "   full ring: VmRSS ${HCF_RSS} kB (VmHWM ${HCF_HWM} kB); /api/v1/history?points=1000 over 24 h: ${HIST_FULL_MED} ms median"

# ---------------------------------------------------------------- report
verdict_le() { awk -v v="$1" -v b="$2" 'BEGIN { if (v == "" || v == "?") print "not measured"; else print (v + 0 <= b + 0) ? "**pass**" : "**FAIL**" }'; }
verdict_ge() { awk -v v="$1" -v b="$2" 'BEGIN { if (v == "" || v == "?") print "not measured"; else print (v + 0 >= b + 0) ? "**pass**" : "**FAIL**" }'; }
hist_ms_num() { sed 's/ms$//' <<<"$1"; }
# A VmRSS in kB as a fraction of node_exporter's (its 5 collectors, after the same 60 s).
rss_frac() { calc "%.3f" "$1 / $NE1_RSS"; }

MACHINE="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores, $(uname -sr)"
COMMIT=$(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo "no commit (working tree)")
RUN_CMD="bench/run.sh${ARGS_TEXT:+ $ARGS_TEXT}"

{
echo "# heatcurve bench results"
echo
echo "- Command: \`$RUN_CMD\` ($( [ "$QUICK" = 1 ] && echo quick || echo full ) run), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "- Source: $COMMIT; build: $BUILD (buildtype=$BUILDTYPE)"
echo "- Machine: $MACHINE; load average at start $LOAD_START, at end $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine skews wrk and latency figures; instruction counts are not affected)"
echo "- Fixture: data/boards/$FIXTURE_NAME ($HC1_NTEMPS temperatures; $HC1_COLS history columns)"
echo "- node_exporter: $(prometheus-node-exporter --version 2>&1 | head -1 | sed 's/^node_exporter, //'); collectors thermal_zone, hwmon, cpufreq, cpu, stat (\"defaults\": its default set, for reference)"
echo
echo "| metric | heatcurved | node_exporter | budget (bench/README.md) | verdict |"
echo "|---|---|---|---|---|"
echo "| VmRSS after ${MEM_SECS} s at 1 Hz, polled 1/s; in brackets as a fraction of node_exporter's (5 collectors) | $(mib "$HC1_RSS") MiB (HWM $(mib "$HC1_HWM")) ($(rss_frac "$HC1_RSS")) | $(mib "$NE1_RSS") MiB (HWM $(mib "$NE1_HWM")); defaults $(mib "$NED_RSS") MiB | ≤ 1/3 of node_exporter's | $(verdict_le "$(rss_frac "$HC1_RSS")" 0.3333) |"
echo "| VmRSS with 24 h of 1 Hz history, **estimate**: RSS above + a full ${RING_SAMPLES} x ${RING_COLUMNS}-column ring (history-fill: $(mib "$RING16_RES") MiB) | $(mib "$EST_KIB") MiB ($(rss_frac "$EST_KIB")) | n/a (keeps no history) | ≤ 1/3 of node_exporter's | $(verdict_le "$(rss_frac "$EST_KIB")" 0.3333) |"
echo "| VmRSS with a full 24 h ring loaded (synthetic history.bin, ${HC1_COLS} columns; measured) | $(mib "$HCF_RSS") MiB (HWM $(mib "$HCF_HWM")) ($(rss_frac "$HCF_RSS")) | n/a | ≤ 1/3 of node_exporter's | $(verdict_le "$(rss_frac "$HCF_RSS")" 0.3333) |"
echo "| private memory (USS: Private_Clean + Private_Dirty, smaps_rollup) with a full 24 h ring loaded (${HC1_COLS} columns); median of 3 starts | $(mib "$HCF_USS_MED") MiB ($HCF_USS_MED kB, range $HCF_USS_RANGE; dirty $HCF_PDIRTY_RANGE kB) | n/a | ≤ 1.5 MiB | $(verdict_le "$HCF_USS_MED" 1536) |"
echo "| VmRSS of the full-ring daemon after the history queries below, against before them | $HCF_RSS_AFTER kB after, $HCF_RSS kB before ($(printf '%+d' "$HCF_RSS_GROWTH") kB; peak $HCF_HWM_AFTER kB) | n/a | back to steady state, within 256 KiB | $(verdict_le "$HCF_RSS_GROWTH" 256) |"
echo "| CPU per sampling tick (per scrape for node_exporter) | ${HC_US_TICK} µs | ${NE_US_SCRAPE} µs; defaults ${NED_US_SCRAPE} µs | the ratio, next row | — |"
echo "| CPU per tick as a ratio to tick-reads (the same ${BARE_FILES} preads on the same tree and nothing else: ${BARE_US_TICK} µs, measured in the same seconds; median of ${CPU_ROUNDS} rounds of ${ROUND_SECS} s, range ${BARE_RANGE}; ratio of the means ${MEAN_RATIO}) | ${BARE_RATIO}× | n/a | ≤ 1.3× | $(verdict_le "$BARE_RATIO" 1.3) |"
echo "| instructions per tick (callgrind, user space) | ${CG_IR_TICK} Ir | not measured | — | — |"
echo "| CPU per tick during a run loading one core (sampling + samples.csv + plateau fit; daemon threads only) | ${HC_US_TICK_RUN} µs | n/a | — | — |"
echo "| % of one core at 1 Hz (from the per-tick / per-scrape CPU) | ${HC_PCT_1HZ} % | ${NE_PCT_1HZ} %; defaults ${NED_PCT_1HZ} % | < 0.1 % | $(verdict_le "$HC_PCT_1HZ" 0.1) |"
echo "| % of one core during the ${MEM_SECS} s memory phase (1 Hz sampling + one GET/s, new connection each; measured) | ${HC1_PCT} % | ${NE1_PCT} %; defaults ${NED_PCT} % | (< 0.1 % is for sampling alone) | $(awk -v v="$HC1_PCT" 'BEGIN { print (v + 0 <= 0.1) ? "under 0.1 % with polling too" : "over 0.1 % once polled (informational)" }') |"
echo "| requests/s, wrk -t2 -c32: /api/v1/sensors vs /metrics | ${HC_RPS} | ${NE_RPS}; defaults ${NED_RPS} | > 10,000 | $(verdict_ge "$HC_RPS" 10000) |"
echo "| requests/s on heatcurved /metrics | see bench/metrics.sh | ${NE_RPS} | > 10,000 | bench/metrics.sh |"
echo "| history ring, ${RING_SAMPLES} x ${RING_COLUMNS} simulated temperature columns (history-fill: bytes held; resident) | $(mib "$((RING16_BYTES / 1024))") MiB; $(mib "$RING16_RES") MiB resident; ${RING16_RATIO}× smaller than the flat layout | n/a | ≤ 1 MiB | $(verdict_le "$RING16_RES" 1024) |"
echo "| history_query, 24 h x ${RING_COLUMNS} columns -> 1000 points (in-process, median of ${QUERY_REPS}) | ${RING16_Q} ms (max ${RING16_QMAX}) | n/a | < 20 ms | $(verdict_le "$RING16_Q" 20) |"
echo "| GET /api/v1/history?points=1000 over a full 24 h ring (HTTP, median of ${HTTP_REPS}) | ${HIST_FULL_MED} ms (max ${HIST_FULL_MAX}) | n/a | < 20 ms | $(verdict_le "$HIST_FULL_MED" 20) |"
echo
echo "## Details"
echo
echo "Memory (kB, /proc/PID/status and smaps_rollup) after the ${MEM_SECS} s phase, then after the wrk runs:"
echo
echo "| process | VmRSS | VmHWM | RssAnon | RssFile | Pss | VmRSS / VmHWM after wrk |"
echo "|---|---|---|---|---|---|---|"
echo "| heatcurved | $HC1_RSS | $HC1_HWM | $HC1_ANON | $HC1_FILE | $HC1_PSS | $HC1_RSS_LOAD / $HC1_HWM_LOAD |"
echo "| node_exporter (5 collectors) | $NE1_RSS | $NE1_HWM | $NE1_ANON | $NE1_FILE | $NE1_PSS | $NE1_RSS_LOAD / $NE1_HWM_LOAD |"
echo "| node_exporter (defaults) | $NED_RSS | $NED_HWM | $NED_ANON | $NED_FILE | $NED_PSS | $NED_RSS_LOAD / $NED_HWM_LOAD |"
echo "| heatcurved, full 24 h ring loaded | $HCF_RSS | $HCF_HWM | $HCF_ANON | - | $HCF_PSS | after the history queries: $HCF_RSS_AFTER / $HCF_HWM_AFTER (RssAnon $HCF_ANON_AFTER, USS $HCF_USS_AFTER) |"
echo
echo "History ring (bench/history-fill.c against libhchistory.a): ${RING_SAMPLES} x ${RING_COLUMNS} columns:"
echo "history_memory_bytes() $RING16_BYTES, resident when full $RING16_RES kB, query median $RING16_Q ms;"
echo "${RING_SAMPLES} x ${HC1_COLS} columns (what this fixture records): $RINGN_BYTES bytes, $RINGN_RES kB resident, query median $RINGN_Q ms."
echo
echo "The same simulated day through every fixture board's columns (temperatures, policies, loads; \`history-fill boards\`):"
echo
echo "| board | columns | ring bytes | flat layout bytes | ratio |"
echo "|---|---|---|---|---|"
sed 's/[a-z_]*=//g' "$TMP/boards.txt" | awk '{ printf "| %s | %s | %s | %s | %s× |\n", $1, $2, $3, $4, $5 }'
echo
echo "System calls per tick (strace -c): $SC_NOTE."
echo
echo "Private memory (USS) of the full-ring daemon by mapping, kB (Private_Clean + Private_Dirty in /proc/PID/smaps; library mappings summed):"
echo
echo '```'
cat "$TMP/uss-by-mapping.txt"
echo '```'
echo
echo "The estimate double-counts the few ring pages the ${MEM_SECS} s run had already touched (about 4 kB per column)."
echo "Full-ring daemon: status reported \`$HCF_HIST\`$COLS_NOTE; history.bin ${FILE_KIB} kB;"
echo "one /api/v1/history?points=1000 answer is $HIST_BYTES bytes, $HIST_BUCKETS buckets; wrk -t1 -c1 latency p50 ${HIST_WRK_P50:-?}, p99 ${HIST_WRK_P99:-?}."
echo "The same query on the 1 Hz daemon with its $HC1_SAMPLES samples: median $HIST_SHORT_MED ms (max $HIST_SHORT_MAX)."
echo
echo "CPU: heatcurved at 100 ms: $HC_TICKS ticks in ${HC_SECS} s ($HC_TICK_RATE/s), ${HC_US_TICK} µs per tick from schedstat"
echo "(${HC_US_TICK_JIF} µs from utime+stime at ${CLK_TCK} Hz). node_exporter: $NE_SCRAPES scrapes, ${NE_US_SCRAPE} µs each"
echo "(utime+stime: ${NE_US_SCRAPE_JIF} µs); defaults: $NED_SCRAPES scrapes, ${NED_US_SCRAPE} µs (${NED_US_SCRAPE_JIF} µs)."
echo "Answer sizes: /api/v1/sensors $HC_BYTES bytes, node_exporter /metrics $NE_BYTES bytes (defaults $NED_BYTES)."
echo "wrk on heatcurved /api/v1/status: $HC_STATUS_RPS req/s. wrk errors: heatcurved ${HC_RPS_ERR}; node_exporter ${NE_RPS_ERR}; defaults ${NED_RPS_ERR}."
echo
echo "callgrind, $CG_CALLS warm ticks, $CG_IR Ir inside tick_run (${CG_IR_TICK} per tick). Inclusive, whole run of daemon_loop:"
echo
echo '```'
cat "$TMP/cg-inclusive.txt"
echo '```'
echo
echo "Self cost, top functions:"
echo
echo '```'
cat "$TMP/cg-self.txt"
echo '```'
echo
echo "callgrind, one GET /api/v1/history?points=1000 over the full 24 h ring: $CGH_IR Ir in api_get_history. Inclusive:"
echo
echo '```'
cat "$TMP/cgh-inclusive.txt"
echo '```'
} >"$TMP/results.md"

mkdir -p "$(dirname "$OUT")"
cp "$TMP/results.md" "$OUT"
cat "$TMP/results.md"
log "results written to $OUT"
