#!/bin/sh
# man-warnings.sh PAGE... — renders each man page with groff's warnings on
# (man --warnings); fails when any page gives a warning or does not render.
set -u
status=0
for page in "$@"; do
    out=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 "$page" 2>&1 >/dev/null)
    rc=$?
    if [ $rc -ne 0 ] || [ -n "$out" ]; then
        echo "$page: man exited $rc${out:+, warnings:}"
        [ -z "$out" ] || printf '%s\n' "$out"
        status=1
    else
        echo "$page: ok"
    fi
done
exit $status
