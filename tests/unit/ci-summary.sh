#!/bin/bash
# ci-summary.sh - tools/test-summary.sh, the last lines of tools/test.sh,
# on what automake's own TAP driver (build-aux/tap-driver.sh, the suites'
# LOG_DRIVER) prints for small TAP scripts: passes, a failure, "not ok #
# TODO" (XFAIL) and "ok # TODO" (XPASS), a skipped check and a skipped
# test, a failing test's exit status, a test that dies without a plan.
# Every TODO and skip is counted and named; the last line is "N passed, N
# failed, N skipped"; the exit status says whether anything failed.  And
# .ci/run, in a copy of the tree whose tools/test.sh prints what a run
# might: it fails on a FAIL or ERROR line, a failed count or a last line
# that is not the counts, even when tools/test.sh says 0, and names what
# failed.  And tests/lib.sh's retry: passes on the first try that passes,
# fails when every one of its N tries fails, and tries no more than N.
# And tests/run-test.sh's bound: a test still running after TEST_TIMEOUT
# seconds is stopped, its cleanup runs, and it is an error.
# No root, no daemon.
. "${srcdir:-.}/tests/lib.sh"
DRIVER=$srcdir/build-aux/tap-driver.sh
SUM=$srcdir/tools/test-summary.sh
[ -r "$DRIVER" ] || skip_all "no build-aux/tap-driver.sh in $srcdir (run autoreconf -fi)"

t() {           # t NAME SCRIPT-TEXT: a TAP script
        printf '%s\n' "$2" >"$TMP/$1.sh"
}
t pass      'echo "ok 1 - one"; echo "ok 2 - two"; echo 1..2'
t todo      'echo "ok 1 - fine"; echo "not ok 2 - ranks first # TODO two siblings"; echo 1..2'
t xpass     'echo "ok 1 - stale # TODO was flaky"; echo 1..1'
t skipone   'echo "ok 1 - judged"; echo "ok 2 - ticks on time # SKIP the sanitizer build"; echo 1..2'
t skipall   'echo "1..0 # SKIP needs root"'
t fail      'echo "ok 1 - good"; echo "not ok 2 - late (3 late)"; echo 1..2; exit 1'
t dies      'echo "ok 1 - started"; exit 3'
drive() {       # drive SUITE NAME...: each through the TAP driver, as make check does
        local s=$1 n; shift
        for n in "$@"; do
                env AM_TAP_AWK=awk bash "$DRIVER" --test-name "tests/$n.sh" --log-file "$TMP/$n.log" \
                        --trs-file "$TMP/$n.trs" --color-tests no --enable-hard-errors yes \
                        --expect-failure no -- bash "$TMP/$n.sh" | sed "s/^/$s: /"
        done
}

summ() {        # summ RESULTS: the summary into $TMP/out, its status into rc
        bash "$SUM" "$1" >"$TMP/out"; rc=$?
}

drive "ci check-unit" pass skipone >"$TMP/green"
echo "ci check-unit: TIME: 12 s" >>"$TMP/green"
summ "$TMP/green"
[ "$rc" = 0 ]; ok $? "all passed or skipped: exit 0 ($rc)"
[ "$(tail -n 1 "$TMP/out")" = "3 passed, 0 failed, 1 skipped" ]; ok $? "last line: $(tail -n 1 "$TMP/out")"
grep -q '^  ci check-unit: tests/skipone.sh 2 - ticks on time # SKIP the sanitizer build$' "$TMP/out"
ok $? "the skipped check is named, with its suite and reason"
grep -q '^  ci check-unit: 12 s$' "$TMP/out"; ok $? "the suite's time is printed"

drive "ci check-live" pass todo skipall >"$TMP/todo"
summ "$TMP/todo"
[ "$rc" = 0 ] && [ "$(tail -n 1 "$TMP/out")" = "3 passed, 0 failed, 2 skipped" ]
ok $? "a failed TODO (XFAIL) is not a pass: counted as skipped ($(tail -n 1 "$TMP/out"))"
grep -q '^TODO: 1 ' "$TMP/out" && grep -q '^  ci check-live: tests/todo.sh 2 - ranks first # TODO two siblings$' "$TMP/out"
ok $? "and named as a TODO, with its reason"
grep -q '^  ci check-live: tests/skipall.sh - needs root$' "$TMP/out"; ok $? "a whole test skipped is named with its reason"

drive "asan check-live" pass xpass >"$TMP/xpass"
summ "$TMP/xpass"
[ "$rc" = 1 ] && [ "$(tail -n 1 "$TMP/out")" = "2 passed, 1 failed, 0 skipped" ]
ok $? "a TODO that passed (XPASS) fails ($(tail -n 1 "$TMP/out"), exit $rc)"

drive "ci check-faults" pass fail dies >"$TMP/red"
summ "$TMP/red"
[ "$rc" = 1 ]; ok $? "a failure: exit 1 ($rc)"
[ "$(tail -n 1 "$TMP/out")" = "4 passed, 2 failed, 0 skipped" ]
ok $? "one per failed check, one per test that died: $(tail -n 1 "$TMP/out")"
grep -q '^  ci check-faults: FAIL: tests/fail.sh 2 - late (3 late)$' "$TMP/out"; ok $? "the failed check is named"
grep -q '^  ci check-faults: ERROR: tests/dies.sh' "$TMP/out"; ok $? "so is the test that died"
grep -q '^  (and ci check-faults: tests/fail.sh - exited with status 1)$' "$TMP/out" &&
        grep -q '^  (and ci check-faults: tests/dies.sh - exited with status 3)$' "$TMP/out"
ok $? "a test's other ERROR lines (its exit status) are shown, not counted twice"

printf 'ci build: PASS: configure and make\nci distcheck: FAIL: distcheck\n' >"$TMP/nontap"
summ "$TMP/nontap"
[ "$rc" = 1 ] && [ "$(tail -n 1 "$TMP/out")" = "1 passed, 1 failed, 0 skipped" ]
ok $? "lines tools/test.sh writes itself count the same way"
: >"$TMP/empty"; summ "$TMP/empty"
[ "$(tail -n 1 "$TMP/out")" = "0 passed, 0 failed, 0 skipped" ]; ok $? "no results: 0 of each"

# .ci/run around a tools/test.sh that prints $TMP/said and exits with $1
mkdir -p "$TMP/tree/.ci" "$TMP/tree/tools"
cp "$srcdir/.ci/run" "$TMP/tree/.ci/run"
printf '#!/bin/bash\ncat "%s"\nexit "$(cat "%s")"\n' "$TMP/said" "$TMP/status" >"$TMP/tree/tools/test.sh"
ci() {          # ci STATUS LINE...: .ci/run's output into $TMP/out, its status into rc
        echo "$1" >"$TMP/status"; shift
        printf '%s\n' "$@" >"$TMP/said"
        bash "$TMP/tree/.ci/run" >"$TMP/out" 2>&1; rc=$?
}
ci 0 "=== ci: make check-live" "ci check-live: # FAIL: 0" "ci check-live: SKIP: tests/x.sh 4 - no ERROR: line # SKIP why" \
        "3 passed, 0 failed, 1 skipped"
[ "$rc" = 0 ] && [ "$(tail -n 1 "$TMP/out")" = "3 passed, 0 failed, 1 skipped" ]
ok $? ".ci/run: green passes (a description with ERROR: in it is no error), its last line the counts (exit $rc)"
ci 0 "ci check-live: FAIL: tests/x.sh 2 - late (3 late)" "ci check-live: ERROR: tests/x.sh - exited with status 1" "3 passed, 0 failed, 0 skipped"
[ "$rc" = 1 ]; ok $? ".ci/run: a FAIL line fails even when tools/test.sh exits 0 (exit $rc)"
grep -q "^  ci check-live: FAIL: tests/x.sh 2 - late (3 late)$" "$TMP/out" && grep -q '^  ci check-live: ERROR: tests/x.sh - exited' "$TMP/out"
ok $? ".ci/run: and names the FAIL and the ERROR"
[ "$(tail -n 1 "$TMP/out")" = "3 passed, 0 failed, 0 skipped" ]; ok $? ".ci/run: the last line is still tools/test.sh's"
ci 1 "FAILED: 1:" "  asan check-san: ERROR: tests/y.sh - missing test plan" "5 passed, 1 failed, 0 skipped"
[ "$rc" = 1 ] && grep -q '^  asan check-san: ERROR: tests/y.sh - missing test plan$' "$TMP/out"
ok $? ".ci/run: tools/test.sh's failure fails, named (exit $rc)"
ci 0 "=== asan: build FAILED"
[ "$rc" = 1 ] && grep -q 'build FAILED' "$TMP/out"; ok $? ".ci/run: no counts for a last line fails (exit $rc)"
ci 0 "1 passed, 2 failed, 0 skipped"
[ "$rc" = 1 ]; ok $? ".ci/run: a failed count fails even with exit 0 (exit $rc)"

tries=0
try() { tries=$((tries + 1)); [ "$tries" -ge "$1" ]; }     # passes from try $1 on
retry 3 try 2 >"$TMP/r"; rc=$?
[ "$rc" = 0 ] && [ "$tries" = 2 ] && grep -q '^# retry: try 1 of 3 failed (status 1): try 2$' "$TMP/r"
ok $? "retry 3: passes on try 2 of 3, saying try 1 failed (status $rc, $tries tries)"
tries=0; retry 3 try 9 >"$TMP/r"; rc=$?
[ "$rc" = 1 ] && [ "$tries" = 3 ] && [ "$(grep -c 'failed' "$TMP/r")" = 3 ]
ok $? "retry 3: fails when all 3 tries fail, after exactly 3 ($rc, $tries tries)"
tries=0; retry 1 try 1 >"$TMP/r"; rc=$?
[ "$rc" = 0 ] && [ "$tries" = 1 ] && [ ! -s "$TMP/r" ]; ok $? "retry: a first try that passes is the only one, silent"
sets() { rc=41; n=42; i=43; }
rc= n= i=; retry 2 sets >/dev/null
[ "$rc $n $i" = "41 42 43" ]; ok $? "retry: what the command sets (rc, n, i) is the caller's afterwards ($rc $n $i)"

t slow 'trap "echo \"# cleanup ran\"" EXIT; echo "ok 1 - started"; sleep 20; echo "ok 2 - never"; echo 1..2'
t0=$(date +%s)
env TEST_TIMEOUT=1 AM_TAP_AWK=awk bash "$DRIVER" --test-name tests/slow.sh --log-file "$TMP/slow.log" \
        --trs-file "$TMP/slow.trs" --color-tests no --enable-hard-errors yes --expect-failure no -- \
        sh "$srcdir/tests/run-test.sh" "$TMP/slow.sh" | sed 's/^/ci check-live: /' >"$TMP/slow"
t1=$(date +%s)
[ $((t1 - t0)) -lt 10 ] && grep -q '^ci check-live: ERROR: tests/slow.sh - Bail out! timed out: still running after 1 s' "$TMP/slow"
ok $? "run-test.sh: TEST_TIMEOUT=1 stops a test that sleeps 20 s, as an error ($((t1 - t0)) s)"
grep -q '^# cleanup ran$' "$TMP/slow.log"; ok $? "run-test.sh: and the test's cleanup ran"
summ "$TMP/slow"
[ "$rc" = 1 ] && [ "$(tail -n 1 "$TMP/out")" = "1 passed, 1 failed, 0 skipped" ]; ok $? "it is counted as failed: $(tail -n 1 "$TMP/out")"
finish
