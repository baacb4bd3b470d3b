#!/bin/sh
# run-test.sh TEST [ARG...] - how `make check` runs every test (LOG_COMPILER).
# Tests speak TAP.  A test that cannot run here exits 77 after saying why on
# stderr or in a "1..0 # SKIP why" plan; this turns that into a TAP skip,
# which the TAP driver counts as skipped rather than as an error.  The
# test's wall time ends its log, as the comment "# run-test: took N s"
# (tools/test.sh lists the slowest).  A test gets TEST_TIMEOUT seconds
# (default 420: twice the slowest, fault-load.sh and the packages' test,
# at some 3.5 minutes on a loaded 2-vCPU machine); then it is sent
# SIGTERM (its cleanup stops what it started), and it is an error.
out=$(mktemp "${TMPDIR:-/tmp}/scalemon-test.XXXXXX") || exit 99
err=$(mktemp "${TMPDIR:-/tmp}/scalemon-test.XXXXXX") || exit 99
trap 'rm -f "$out" "$err"' EXIT
limit=${TEST_TIMEOUT:-420}
t0=$(date +%s%N)
case $1 in
        *.sh) timeout -k 10 "$limit" bash "$@" >"$out" 2>"$err" </dev/null ;;
        *) timeout -k 10 "$limit" "$@" >"$out" 2>"$err" </dev/null ;;
esac
rc=$?
t1=$(date +%s%N)
took="# run-test: took $(( (t1 - t0) / 1000000000 )).$(( (t1 - t0) / 100000000 % 10 )) s"
if [ $rc -eq 77 ]; then
        if grep -q '^1\.\.0' "$out"; then
                cat "$out"
        else
                why=$(grep -v '^\s*$' "$err" | tail -n 1)
                cat "$out" | sed 's/^/# /'
                echo "1..0 # SKIP ${why:-no reason given}"
        fi
        cat "$err" | sed 's/^/# /'
        echo "$took"
        exit 0
fi
cat "$out"
sed 's/^/# /' "$err"
[ $rc -eq 124 ] && echo "Bail out! timed out: still running after ${limit} s (TEST_TIMEOUT)"
echo "$took"
exit $rc
