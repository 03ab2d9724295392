# bench/lib.sh — what bench/run.sh and bench/metrics.sh share: their options, the scratch
# directory and its cleanup, processes in the background, free ports on 127.0.0.1, waiting for
# an HTTP answer, the release build. Sourced, not run.
#
# The sourcing script sets SRC, BENCH (its name, for messages), OUT (its default results file)
# and NEXT_PORT (the first port it tries), then calls:
#   bench_options "$@"        --quick --build-dir --fixture --out --keep --help
#   bench_need TOOL...        exits 2 naming what is missing
#   bench_scratch PREFIX      TMP, and the traps that stop every process started here
#   bench_build TARGET...     BUILD (default build-bench/, as the package) built with ninja

QUICK=0
BUILD=
FIXTURE_NAME=x86-laptop-coretemp
KEEP=0
PIDS=()

# Usage: the script's own header comment, from its second line to the first line that is
# not a comment.
bench_usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; }

bench_options() {
        ARGS_TEXT="$*"
        while [ $# -gt 0 ]; do
                case $1 in
                --quick) QUICK=1 ;;
                --build-dir) BUILD=${2:?--build-dir needs a directory}; shift ;;
                --build-dir=*) BUILD=${1#*=} ;;
                --fixture) FIXTURE_NAME=${2:?--fixture needs a board}; shift ;;
                --fixture=*) FIXTURE_NAME=${1#*=} ;;
                --out) OUT=${2:?--out needs a file}; shift ;;
                --out=*) OUT=${1#*=} ;;
                --keep) KEEP=1 ;;
                -h|--help) bench_usage; exit 0 ;;
                *) echo "$BENCH: unknown argument $1 (see --help)" >&2; exit 2 ;;
                esac
                shift
        done
        FIXTURES=$SRC/data/boards
        FIXTURE=$FIXTURES/$FIXTURE_NAME
        [ -d "$FIXTURE/sys" ] && [ -d "$FIXTURE/proc" ] ||
                { echo "$BENCH: no fixture tree $FIXTURE (sys/ and proc/)" >&2; exit 2; }
}

bench_need() {
        local t missing=
        for t in "$@"; do
                command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
        done
        [ -z "$missing" ] && return 0
        echo "$BENCH: missing:$missing (make deps-bench installs wrk, valgrind, prometheus-node-exporter)" >&2
        exit 2
}

stop_pid() {            # TERM, up to 5 s, then KILL; also the children of a scrape loop
        local pid=$1 i
        kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
        pkill -TERM -P "$pid" 2>/dev/null || true
        kill -TERM "$pid" 2>/dev/null || true
        for i in $(seq 50); do
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.1
        done
        if kill -0 "$pid" 2>/dev/null; then
                pkill -KILL -P "$pid" 2>/dev/null || true
                kill -KILL "$pid" 2>/dev/null || true
        fi
        wait "$pid" 2>/dev/null || true
}

bench_cleanup() {
        local rc=$? pid
        trap - EXIT INT TERM
        for pid in "${PIDS[@]}"; do
                stop_pid "$pid"
        done
        if [ "$KEEP" = 1 ]; then
                echo "$BENCH: scratch files kept in $TMP" >&2
        else
                rm -rf "$TMP"
        fi
        exit "$rc"
}

bench_scratch() {
        TMP=$(mktemp -d "/tmp/$1.XXXXXX")
        trap bench_cleanup EXIT
        trap 'echo "$BENCH: interrupted" >&2; exit 130' INT TERM
        LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
}

log() { printf '== %s\n' "$*" >&2; }
calc() { awk "BEGIN { printf \"$1\", $2 }"; }

start() {               # NAME CMD...: in the background, log in $TMP/NAME.log, pid in $LAST_PID
        local name=$1; shift
        "$@" >"$TMP/$name.log" 2>&1 &
        LAST_PID=$!
        PIDS+=("$LAST_PID")
}

port_free() { [ -z "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]; }
pick_port() {           # sets PORT
        while ! port_free "$NEXT_PORT"; do NEXT_PORT=$((NEXT_PORT + 1)); done
        PORT=$NEXT_PORT
        NEXT_PORT=$((NEXT_PORT + 1))
}

wait_http() {           # URL PID SECONDS: 1 when PID ends or SECONDS pass first
        local url=$1 pid=$2 end=$((SECONDS + $3))
        while [ $SECONDS -lt $end ]; do
                kill -0 "$pid" 2>/dev/null || return 1
                curl -sf --max-time 1 -o /dev/null "$url" && return 0
                sleep 0.1
        done
        return 1
}
need_up() {             # URL PID SECONDS NAME: wait_http, or exit with NAME's log
        wait_http "$1" "$2" "$3" && return 0
        echo "$BENCH: $4 did not come up; log:" >&2
        cat "$TMP/$4.log" >&2
        exit 1
}

# CPU time, ns: sum of every thread's sum_exec_runtime (exact)
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%d\n", s }'; }

# The default build is made as Debian's package is (debian/rules): meson's
# buildtype=plain with dpkg-buildflags' CFLAGS, CPPFLAGS and LDFLAGS
# (-O2, hardening=+all), so the figures are those of the daemon users run.
bench_build() {
        if [ -z "$BUILD" ]; then
                BUILD=$SRC/build-bench
                [ -f "$BUILD/build.ninja" ] && ! grep -q -- '-D_FORTIFY_SOURCE' "$BUILD/build.ninja" && rm -rf "$BUILD"
                if [ ! -f "$BUILD/build.ninja" ]; then
                        command -v dpkg-buildflags >/dev/null ||
                                { echo "$BENCH: needs dpkg-buildflags (make deps-bench)" >&2; exit 1; }
                        log "meson setup $BUILD -Dbuildtype=plain with dpkg-buildflags (hardening=+all)"
                        (eval "$(DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --export=sh)" &&
                         meson setup "$BUILD" "$SRC" -Dbuildtype=plain -Dtests=disabled -Dcli=disabled) \
                                >"$TMP/meson.log" 2>&1 || { cat "$TMP/meson.log" >&2; exit 1; }
                fi
        fi
        log "ninja -C $BUILD $*"
        ninja -C "$BUILD" "$@" >"$TMP/ninja.log" 2>&1 || { tail -40 "$TMP/ninja.log" >&2; exit 1; }
        BUILDTYPE=$(sed -n 's/.*"name": "buildtype", "value": "\([a-z]*\)".*/\1/p' \
                "$BUILD/meson-info/intro-buildoptions.json" 2>/dev/null | head -1)
        [ -n "$BUILDTYPE" ] || BUILDTYPE=$(grep -o '"name": *"buildtype"[^}]*"value": *"[a-z]*"' \
                "$BUILD/meson-info/intro-buildoptions.json" | sed 's/.*"value": *"//; s/"//')
        if grep -q -- '-D_FORTIFY_SOURCE' "$BUILD/build.ninja"; then
                BUILDTYPE="$BUILDTYPE, dpkg-buildflags"
        elif [ "$BUILDTYPE" != release ]; then
                log "warning: $BUILD is buildtype=$BUILDTYPE, not built as the package nor release"
        fi
        HEATCURVED=$BUILD/heatcurved
}
