#!/bin/bash
# live-score-sum.sh - a score from every match of a regex:
# `perf bench futex hash` prints ops/sec per thread; with
# --score-regex K=sum:REGEX the score is their sum, with K=mean:REGEX their
# mean, and the plain K=REGEX keeps its meaning (the first match on the last
# line that matches).  The
# truth is the command's own output, read again here with awk, and perf's
# own "Averaged" line.
. "${srcdir:-.}/tests/lib.sh"
fake_kernel
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"
command -v perf >/dev/null || skip_all "perf not installed"
perf bench futex hash -t 2 -r 1 >/dev/null 2>&1 || skip_all "perf bench futex hash does not run here"

score() { sql "SELECT s.value FROM run r JOIN run_score s ON s.run = r.id WHERE r.name = '$1' AND s.key = '$2'"; }
start_daemon

ctl run exec futex --tag threads=2 \
        --score-regex 'ops=sum:\[ *([0-9]+) ops/sec' \
        --score-regex 'per_thread=mean:\[ *([0-9]+) ops/sec' \
        --score-regex 'last=\[ *([0-9]+) ops/sec' \
        --score-regex 'avg=Averaged ([0-9]+) operations' \
        -- perf bench futex hash -t 2 -r 1 >"$TMP/out" 2>"$TMP/err"
ok $? "run exec futex with sum:, mean: and plain regexes"
sed 's/^/# perf: /' "$TMP/out"
want_sum=$(awk '/ops\/sec/ { gsub(/.*\[ */, ""); s += $1; n++ } END { print s }' "$TMP/out")
want_n=$(grep -c 'ops/sec' "$TMP/out")
want_last=$(awk '/ops\/sec/ { gsub(/.*\[ */, ""); l = $1 } END { print l }' "$TMP/out")
[ "$want_n" = 2 ]; ok $? "perf printed one ops/sec line per thread ($want_n)"
got=$(score futex ops)
awk -v a="$got" -v b="$want_sum" 'BEGIN { exit !(a == b && b > 0) }'; ok $? "sum: score $got = sum of the per-thread lines $want_sum"
got_mean=$(score futex per_thread)
awk -v a="$got_mean" -v b="$want_sum" -v n="$want_n" 'BEGIN { exit !(a == b / n) }'
ok $? "mean: score $got_mean = $want_sum / $want_n"
got_last=$(score futex last)
awk -v a="$got_last" -v b="$want_last" 'BEGIN { exit !(a == b) }'; ok $? "plain regex: the last match ($got_last = $want_last)"
avg=$(score futex avg)
awk -v a="$got_mean" -v b="$avg" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1) }'
ok $? "the mean agrees with perf's own Averaged line ($got_mean vs $avg)"

# several matches on one line count each; a capture that is not a number is refused
ctl run exec line --score-regex 'n=sum:([0-9]+)' --score-regex 'm=mean:([0-9]+)' -- echo '1 2 3 and 10' >/dev/null
ok $? "run exec line"
[ "$(score line n)" = 16.0 ] && [ "$(score line m)" = 4.0 ]; ok $? "every match on a line: sum $(score line n), mean $(score line m)"
ctl run exec bad --score-regex 'n=sum:^v (.*)$' -- printf 'v 1\nv x\nv 2\n' >/dev/null 2>"$TMP/err"
grep -q "^scalemonctl: score n: captured 'x', which is not a number$" "$TMP/err"; ok $? "a non-number capture is named: $(head -c 200 "$TMP/err")"
[ -z "$(score bad n)" ]; ok $? "and no score is recorded for it"
ctl run exec none --score-regex 'n=sum:nothing ([0-9]+)' -- true >/dev/null 2>"$TMP/err"
grep -q "^scalemonctl: score n: the command's output never matched its regex$" "$TMP/err"; ok $? "no match: said"
ctl run exec lit --score-regex 'n=last:sum:([0-9]+)' -- printf 'sum:5\nsum:7\n' >/dev/null
[ "$(score lit n)" = 7.0 ]; ok $? "last: takes a regex that starts with sum: literally ($(score lit n))"
ctl run exec dup --score-regex 'n=([0-9]+)' --score-regex 'n=sum:([0-9]+)' -- true >/dev/null 2>"$TMP/err"; rc=$?
[ $rc = 2 ] && grep -q "^scalemonctl: --score-regex n given twice$" "$TMP/err"; ok $? "one regex per score (exit $rc)"
stop_daemon; ok $? "the daemon stops cleanly"
finish
