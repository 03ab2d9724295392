#!/bin/bash
# run.sh BUILD_DIR SECONDS TARGET... — runs each libFuzzer target for SECONDS
# (or until FUZZ_RUNS executions when that is set and comes first) from its
# seeds (tests/fuzz/corpus/TARGET, only read) plus a working corpus in
# BUILD_DIR/fuzz-corpus/TARGET kept between runs: libFuzzer writes what it
# finds into the first directory given, the working one, never the tree's.
# Crashes, leaks and timeouts land in BUILD_DIR/fuzz-artifacts/ and fail the
# run, and so does a seed directory that changed. Prints one line per target:
# executions, rate, coverage.
set -euo pipefail

build=$1 seconds=$2
shift 2
src=$(cd "$(dirname "$0")" && pwd)
status=0
mkdir -p "$build/fuzz-artifacts"
for t in "$@"; do
    bin=$build/tests/fuzz/fuzz-$t
    work=$build/fuzz-corpus/$t
    log=$build/fuzz-artifacts/$t.log
    mkdir -p "$work"
    seeds=$(ls -A "$src/corpus/$t")
    echo "fuzz-$t: ${seconds}s"
    rc=0
    # -timeout: one input may take 10 s at most; -rss_limit_mb: ASan's quarantine included
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        "$bin" -max_total_time="$seconds" -runs="${FUZZ_RUNS:--1}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$build/fuzz-artifacts/$t-" "$work" "$src/corpus/$t" >"$log" 2>&1 || rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 || true)
    if [ "$rc" -ne 0 ]; then
        echo "fuzz-$t: FAILED (exit $rc); the log is $log:" >&2
        grep -E 'ERROR|SUMMARY|#[0-9]+ 0x|Test unit written|artifact' "$log" | head -n 40 >&2 || true
        status=1
    else
        echo "fuzz-$t: ${runs:-?} executions, ${rate:-?}/s, ${cov:-cov: ?}"
    fi
    if [ "$(ls -A "$src/corpus/$t")" != "$seeds" ]; then
        echo "fuzz-$t: FAILED: files came or went in $src/corpus/$t, which holds named seeds only" >&2
        status=1
    fi
done
exit $status
