#!/bin/bash
# test-summary.sh RESULTS - the end of tools/test.sh's output: what was not
# judged and what failed, by name, then "N passed, N failed, N skipped" as
# the last line; exit 1 if anything failed.
#
# RESULTS has one line per result, "SUITE: RESULT: TEST ...", RESULT as
# automake's TAP driver prints it (tests/Makefile.inc's LOG_DRIVER) or as
# tools/test.sh writes it for what is not a TAP test (a build, distcheck):
#   PASS                 a check that passed
#   SKIP                 not run here, and the reason ("# SKIP why"): skipped
#   XFAIL                "not ok ... # TODO": a check that failed and is not
#                        judged: skipped, and named as a TODO
#   XPASS                "ok ... # TODO": a TODO that passed is a TODO no
#                        longer true: failed
#   FAIL                 a check that failed
#   ERROR                a test that did not end well (a crash, a bail out,
#                        no plan, or an exit status its checks do not explain):
#                        one failure per test, none if the test already has a
#                        FAIL or XPASS (its exit status says the same); the
#                        other ERROR lines are shown, not counted
#   TIME                 SUITE took N seconds (printed, not counted)
# Lines of any other form are ignored.
set -u
[ $# = 1 ] && [ -r "$1" ] || { echo "usage: test-summary.sh RESULTS" >&2; exit 2; }
awk '
function test_of(rest,   t) {    # "tests/x.sh 3 - desc" -> "tests/x.sh"
        t = rest; sub(/ .*/, "", t); return t
}
{
        if (!match($0, /: (PASS|SKIP|XFAIL|XPASS|FAIL|ERROR|TIME): /))
                next
        suite = substr($0, 1, RSTART - 1)
        res = substr($0, RSTART + 2, RLENGTH - 4)
        rest = substr($0, RSTART + RLENGTH)
        key = suite SUBSEP test_of(rest)
        n++; R[n] = res; S[n] = suite; T[n] = rest; K[n] = key
        if (res == "FAIL" || res == "XPASS") failed_test[key] = 1
}
END {
        pass = fail = skip = todo = 0
        for (i = 1; i <= n; i++) {
                if (R[i] == "PASS") pass++
                else if (R[i] == "SKIP") { skip++; sk[skip] = S[i] ": " T[i] }
                else if (R[i] == "XFAIL") { todo++; td[todo] = S[i] ": " T[i] }
                else if (R[i] == "TIME") { nt++; tm[nt] = S[i] ": " T[i] }
                else if (R[i] == "ERROR" && (K[i] in failed_test)) {
                        nr++; redundant[nr] = S[i] ": " T[i]
                } else {
                        fail++; fl[fail] = S[i] ": " R[i] ": " T[i]
                        failed_test[K[i]] = 1
                }
        }
        if (nt) {
                print "time taken:"
                for (i = 1; i <= nt; i++) print "  " tm[i]
        }
        if (skip) {
                printf "skipped: %d, not run here (the reason after # SKIP):\n", skip
                for (i = 1; i <= skip; i++) print "  " sk[i]
        }
        if (todo) {
                printf "TODO: %d check(s) that failed and are not judged (counted as skipped):\n", todo
                for (i = 1; i <= todo; i++) print "  " td[i]
        }
        if (fail) {
                printf "FAILED: %d:\n", fail
                for (i = 1; i <= fail; i++) print "  " fl[i]
                for (i = 1; i <= nr; i++) print "  (and " redundant[i] ")"
        }
        printf "%d passed, %d failed, %d skipped\n", pass, fail, skip + todo
        exit fail > 0
}' "$1"
