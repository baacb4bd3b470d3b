#!/bin/sh
# run-test.sh TEST [ARG...] - how `make check` runs every test (LOG_COMPILER).
# Tests speak TAP.  A test that cannot run here exits 77 after saying why on
# stderr or in a "1..0 # SKIP why" plan; this turns that into a TAP skip,
# which the TAP driver counts as skipped rather than as an error.
out=$(mktemp "${TMPDIR:-/tmp}/scalemon-test.XXXXXX") || exit 99
err=$(mktemp "${TMPDIR:-/tmp}/scalemon-test.XXXXXX") || exit 99
trap 'rm -f "$out" "$err"' EXIT
case $1 in
        *.sh) bash "$@" >"$out" 2>"$err" </dev/null ;;
        *) "$@" >"$out" 2>"$err" </dev/null ;;
esac
rc=$?
if [ $rc -eq 77 ]; then
        if grep -q '^1\.\.0' "$out"; then
                cat "$out"
        else
                why=$(grep -v '^\s*$' "$err" | tail -n 1)
                cat "$out" | sed 's/^/# /'
                echo "1..0 # SKIP ${why:-no reason given}"
        fi
        cat "$err" | sed 's/^/# /'
        exit 0
fi
cat "$out"
sed 's/^/# /' "$err"
exit $rc
